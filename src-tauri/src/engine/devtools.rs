//! What the DevTools protocol endpoint (`cdp/`) asks of a tab beyond what the tools ask:
//! scripts in the page's own world and in named worlds a client creates, scripts for every
//! new document, loads that answer at commit (the client follows the rest through events),
//! the history list, the viewport's size, text insertion and captures of the whole
//! document. Each is one [`DevtoolsRequest`], carried by `TabRequest::Devtools`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A script world of the main frame: the page's own, or one a client named.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum World {
    /// The page's own world (what its scripts see).
    Page,
    /// A named isolated world (it sees the DOM, not the page's globals).
    Named(String),
}

impl World {
    /// WebKit's name of the world (`None`: the page's own).
    pub fn webkit_name(&self) -> Option<&str> {
        match self {
            World::Page => None,
            World::Named(name) => Some(name),
        }
    }
}

/// Where a load goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadTarget {
    /// A URL (already checked by the caller).
    Url(String),
    /// The current document again.
    Reload,
    /// The history entry this many steps away (-1 back, 1 forward).
    HistoryStep(i32),
}

/// How a load began: committed a document, failed, or became a download.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LoadBegun {
    /// Whether a new document was committed.
    pub committed: bool,
    /// The document's URL (after redirects) when committed.
    pub url: String,
    /// Its HTTP status, when fetched over HTTP.
    pub http_status: Option<u16>,
    /// The network error's short name, when it failed.
    pub net_error: Option<String>,
    /// Whether the response became a download instead of a document.
    pub is_download: bool,
}

/// One entry of the tab's history.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// Its place relative to the current entry (0 = current, -1 = back one).
    pub offset: i32,
    /// URL.
    pub url: String,
    /// Title.
    pub title: String,
}

/// The DevTools runtime's entry points (each a function of `scripts/devtools_runtime.js`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuntimeOp {
    /// `Runtime.callFunctionOn`: the code is a function declaration.
    Call,
    /// `Runtime.evaluate`: the code is an expression (or, failing that, a script).
    Evaluate,
    /// `Runtime.getProperties`.
    GetProperties,
    /// `Runtime.releaseObject`.
    Release,
    /// `Runtime.releaseObjectGroup`.
    ReleaseGroup,
    /// `DOM.describeNode`.
    DescribeNode,
    /// `DOM.resolveNode`.
    ResolveNode,
    /// `DOM.getDocument`.
    GetDocument,
    /// `DOM.querySelector`.
    QuerySelector,
    /// `DOM.getContentQuads`.
    ContentQuads,
    /// `DOM.getBoxModel`.
    BoxModel,
    /// `DOM.scrollIntoViewIfNeeded`.
    ScrollIntoView,
    /// A node's id (its agent ref), from an object id.
    NodeId,
    /// `Runtime.addBinding`.
    AddBinding,
}

impl RuntimeOp {
    /// Every operation (a test holds this list to the runtime's exports).
    pub const ALL: [RuntimeOp; 14] = [
        RuntimeOp::Call,
        RuntimeOp::Evaluate,
        RuntimeOp::GetProperties,
        RuntimeOp::Release,
        RuntimeOp::ReleaseGroup,
        RuntimeOp::DescribeNode,
        RuntimeOp::ResolveNode,
        RuntimeOp::GetDocument,
        RuntimeOp::QuerySelector,
        RuntimeOp::ContentQuads,
        RuntimeOp::BoxModel,
        RuntimeOp::ScrollIntoView,
        RuntimeOp::NodeId,
        RuntimeOp::AddBinding,
    ];

    /// The runtime's name for it.
    pub fn name(self) -> &'static str {
        match self {
            RuntimeOp::Call => "call",
            RuntimeOp::Evaluate => "evaluate",
            RuntimeOp::GetProperties => "getProperties",
            RuntimeOp::Release => "release",
            RuntimeOp::ReleaseGroup => "releaseGroup",
            RuntimeOp::DescribeNode => "describeNode",
            RuntimeOp::ResolveNode => "resolveNode",
            RuntimeOp::GetDocument => "getDocument",
            RuntimeOp::QuerySelector => "querySelector",
            RuntimeOp::ContentQuads => "contentQuads",
            RuntimeOp::BoxModel => "boxModel",
            RuntimeOp::ScrollIntoView => "scrollIntoViewIfNeeded",
            RuntimeOp::NodeId => "nodeId",
            RuntimeOp::AddBinding => "addBinding",
        }
    }
}

/// The runtime's source, with its name (`__MALO_RUNTIME__`) and the agent's node event
/// type (`__MALO_NODES__`) still to be filled in.
pub const RUNTIME_SOURCE: &str = include_str!("scripts/devtools_runtime.js");

/// What the DevTools endpoint asks of a tab.
#[derive(Debug)]
pub enum DevtoolsRequest {
    /// Runs an operation of the DevTools runtime (`scripts/devtools_runtime.js`) in a
    /// world of the main frame, installing the runtime there first if the document has
    /// none; answers the runtime's JSON answer. `code` is the client's function
    /// declaration (`Call`) or expression (`Evaluate`), compiled into the calling script.
    Runtime { world: World, op: RuntimeOp, code: Option<String>, request: serde_json::Value, limit: Duration },
    /// Adds a script every new document runs at its start, in every frame or the main
    /// frame only; answers its id.
    AddDocumentScript { world: World, source: String, all_frames: bool },
    /// Removes a script added with `AddDocumentScript`.
    RemoveDocumentScript { id: u64 },
    /// Makes the tab's init scripts (in the page's world, every frame) these, the ones its
    /// session lists now (`state::init_scripts`, the `init_script` tool): adds the new,
    /// removes the others; the next document runs them.
    SyncInitScripts { scripts: Vec<crate::state::init_scripts::InitScript> },
    /// Starts a load and answers when it committed, failed or became a download (the load
    /// itself goes on).
    Load { target: LoadTarget, timeout: Duration },
    /// The history list around the current entry.
    History,
    /// Resizes the tab's viewport (CSS px).
    SetViewport { width: u32, height: u32 },
    /// Inserts text at the focus, as typing it would but without key events.
    InsertText { text: String },
    /// Delivers trusted input events and answers once the page has seen them (bounded).
    Input { events: Vec<super::InputEvent> },
}

impl DevtoolsRequest {
    /// The request's name in the main thread's figures.
    pub fn kind(&self) -> &'static str {
        match self {
            DevtoolsRequest::Runtime { .. } => "devtools_runtime",
            DevtoolsRequest::AddDocumentScript { .. } => "devtools_add_script",
            DevtoolsRequest::RemoveDocumentScript { .. } => "devtools_remove_script",
            DevtoolsRequest::SyncInitScripts { .. } => "init_scripts",
            DevtoolsRequest::Load { .. } => "devtools_load",
            DevtoolsRequest::History => "devtools_history",
            DevtoolsRequest::SetViewport { .. } => "devtools_viewport",
            DevtoolsRequest::InsertText { .. } => "devtools_insert_text",
            DevtoolsRequest::Input { .. } => "devtools_input",
        }
    }

    /// How long the handle waits beyond the engine's own limits.
    pub fn time_limit(&self, margin: Duration, default: Duration) -> Duration {
        match self {
            DevtoolsRequest::Runtime { limit, .. } => *limit + margin,
            DevtoolsRequest::Load { timeout, .. } => *timeout + margin,
            _ => default,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_runtime_op_is_exported_by_the_runtime() {
        let start = RUNTIME_SOURCE.find("return Object.freeze({ __proto__: null,").expect("the runtime exports its entry points");
        let exports = &RUNTIME_SOURCE[start..];
        let exports = &exports[..exports.find("});").expect("the export ends")];
        let names: Vec<&str> = exports
            .trim_start_matches("return Object.freeze({ __proto__: null,")
            .split(',')
            .map(|entry| entry.split(':').next().unwrap_or("").trim())
            .filter(|name| !name.is_empty())
            .collect();
        // evaluateText is the engine's own fallback of Evaluate (statements, not an expression).
        let mut ops: Vec<&str> = RuntimeOp::ALL.iter().map(|op| op.name()).chain(["evaluateText"]).collect();
        let mut exported = names.clone();
        ops.sort();
        exported.sort();
        assert_eq!(ops, exported, "RuntimeOp::ALL and the runtime's exports name the same functions");
    }
}
