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

/// What the DevTools endpoint asks of a tab.
#[derive(Debug)]
pub enum DevtoolsRequest {
    /// Runs a function body in a world of the main frame (it may `await`); answers its
    /// JSON value. A body's syntax error is an error, not a fallback.
    Call { world: World, body: String, limit: Duration },
    /// Runs a script (global code: its top-level `const`s stay) in a world of the main
    /// frame; answers its completion value as JSON (null when it is not serializable).
    Run { world: World, source: String },
    /// Adds a script every new document runs at its start, in every frame or the main
    /// frame only; answers its id.
    AddDocumentScript { world: World, source: String, all_frames: bool },
    /// Removes a script added with `AddDocumentScript`.
    RemoveDocumentScript { id: u64 },
    /// Starts a load and answers when it committed, failed or became a download (the load
    /// itself goes on).
    Load { target: LoadTarget, timeout: Duration },
    /// The history list around the current entry.
    History,
    /// Resizes the tab's viewport (CSS px).
    SetViewport { width: u32, height: u32 },
    /// Inserts text at the focus, as typing it would but without key events.
    InsertText { text: String },
    /// Captures the whole document (not only the viewport).
    CaptureDocument,
}

impl DevtoolsRequest {
    /// The request's name in the main thread's figures.
    pub fn kind(&self) -> &'static str {
        match self {
            DevtoolsRequest::Call { .. } => "devtools_call",
            DevtoolsRequest::Run { .. } => "devtools_run",
            DevtoolsRequest::AddDocumentScript { .. } => "devtools_add_script",
            DevtoolsRequest::RemoveDocumentScript { .. } => "devtools_remove_script",
            DevtoolsRequest::Load { .. } => "devtools_load",
            DevtoolsRequest::History => "devtools_history",
            DevtoolsRequest::SetViewport { .. } => "devtools_viewport",
            DevtoolsRequest::InsertText { .. } => "devtools_insert_text",
            DevtoolsRequest::CaptureDocument => "devtools_capture_document",
        }
    }

    /// How long the handle waits beyond the engine's own limits.
    pub fn time_limit(&self, margin: Duration, default: Duration) -> Duration {
        match self {
            DevtoolsRequest::Call { limit, .. } => *limit + margin,
            DevtoolsRequest::Load { timeout, .. } => *timeout + margin,
            _ => default,
        }
    }
}
