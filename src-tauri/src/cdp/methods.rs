//! Every method the endpoint answers, in one table: who serves it (the browser, meaning
//! the session, or a page, meaning a tab) and how (served by the engine, answered from
//! the endpoint's own state, or acknowledged without effect). A method missing here is
//! answered at once with Chrome's -32601 "'X' wasn't found"; docs/CDP.md's method table
//! is generated from this one, and a test holds the page dispatcher to it.

/// Who a method is addressed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// The browser (no session id): the malo session.
    Browser,
    /// An attached page (a session id): a tab.
    Page,
    /// Either.
    Any,
}

/// How a method is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handling {
    /// Served for real.
    Served,
    /// Acknowledged with `{}` and no effect (clients need the answer, not the effect).
    Acknowledged,
    /// Refused with an error that says why.
    Refused,
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Method {
    /// `Domain.method`.
    pub name: &'static str,
    /// Who it addresses.
    pub level: Level,
    /// How it is answered.
    pub handling: Handling,
    /// What it does here, and what differs from Chrome.
    pub note: &'static str,
}

const fn served(name: &'static str, level: Level, note: &'static str) -> Method {
    Method { name, level, handling: Handling::Served, note }
}

const fn acknowledged(name: &'static str, note: &'static str) -> Method {
    Method { name, level: Level::Page, handling: Handling::Acknowledged, note }
}

use Level::{Any, Browser, Page};

/// The table.
pub const METHODS: &[Method] = &[
    served("Browser.getVersion", Browser, "product, revision and the engine's user agent"),
    served(
        "Browser.setDownloadBehavior",
        Browser,
        "the session's download policy (deny, or accept into the session's downloads folder; a downloadPath elsewhere is not used)",
    ),
    served("Target.getBrowserContexts", Browser, "the session is the one context"),
    Method {
        name: "Target.createBrowserContext",
        level: Browser,
        handling: Handling::Refused,
        note: "refused: one connection drives one session; open another session for another context",
    },
    served("Target.setDiscoverTargets", Browser, "targetCreated for each tab and page"),
    served("Target.setAutoAttach", Any, "tabs then pages with the filter {type: page, exclude: true}, else pages directly"),
    served("Target.getTargets", Browser, "the session's tabs and pages"),
    served("Target.getTargetInfo", Browser, "a target, or the browser"),
    served("Target.createTarget", Browser, "tab_new (the page's target id is the answer)"),
    served("Target.closeTarget", Browser, "tab_close"),
    served("Target.activateTarget", Browser, "tab_select"),
    served("Target.attachToTarget", Browser, "another session on a tab or page (flat mode only)"),
    served("Target.detachFromTarget", Browser, "ends an attached session; the tab stays"),
    served("Target.getDevToolsTarget", Browser, "no DevTools window is ever open"),
    served("Runtime.runIfWaitingForDebugger", Any, "pages never wait"),
    served("Page.enable", Page, "page events"),
    served("Page.disable", Page, "no more page events"),
    served("Page.getFrameTree", Page, "the main frame (its id is the page's target id); child frames are not reported"),
    served("Page.getResourceTree", Page, "the main frame, no resources"),
    served("Page.setLifecycleEventsEnabled", Page, "replays the current document's lifecycle"),
    served("Page.navigate", Page, "answers at commit; http, https and about:blank only, never the daemon's ports"),
    served("Page.reload", Page, "a new document"),
    served("Page.getNavigationHistory", Page, "the tab's history"),
    served("Page.navigateToHistoryEntry", Page, "a history step, as a new document"),
    served("Page.captureScreenshot", Page, "png, jpeg or webp (quality), clip, captureBeyondViewport for the whole document"),
    served("Page.addScriptToEvaluateOnNewDocument", Page, "in the page's world or a named one, every frame"),
    served("Page.removeScriptToEvaluateOnNewDocument", Page, "by identifier"),
    served("Page.createIsolatedWorld", Page, "a named world of the main frame"),
    served("Page.handleJavaScriptDialog", Page, "dialogs are answered by the tab's dialog policy as they open; this acknowledges"),
    served("Page.bringToFront", Page, "tab_select (nothing is shown)"),
    served("Page.getLayoutMetrics", Page, "viewport, scroll position and content size"),
    served("Runtime.enable", Page, "executionContextCreated for the page's world and each named world"),
    served("Runtime.disable", Page, "no more runtime events"),
    served("Runtime.evaluate", Page, "expressions (and scripts) in a context; objects by handle or by value, promises awaited"),
    served("Runtime.callFunctionOn", Page, "on a handle or in a context; arguments by value, handle or unserializable value"),
    served("Runtime.getProperties", Page, "own or inherited properties of a handle"),
    served("Runtime.releaseObject", Page, "never fails"),
    served("Runtime.releaseObjectGroup", Page, "never fails"),
    served("Runtime.getIsolateId", Page, "one isolate per page"),
    served(
        "Runtime.addBinding",
        Page,
        "a global function in the page's world or a named one, on every new document; calls come as bindingCalled",
    ),
    served("Runtime.removeBinding", Page, "new documents no longer get it"),
    served("DOM.enable", Page, "no DOM events are sent"),
    served("DOM.disable", Page, "nothing to stop"),
    served("DOM.getDocument", Page, "the document node and its children"),
    served("DOM.describeNode", Page, "backendNodeId is the agent's ref of the node (snapshot refs and node ids agree)"),
    served("DOM.resolveNode", Page, "a node by backendNodeId, in any context"),
    served("DOM.querySelector", Page, "nodeId is a backendNodeId"),
    served("DOM.getBoxModel", Page, "content, padding, border and margin quads"),
    served("DOM.getContentQuads", Page, "the node's client rects, viewport CSS px"),
    served("DOM.scrollIntoViewIfNeeded", Page, "centres the node"),
    served("DOM.setFileInputFiles", Page, "set_file_input: the session's upload path"),
    served("Input.dispatchMouseEvent", Page, "trusted pointer events, in order"),
    served("Input.dispatchKeyEvent", Page, "trusted key events, in order; text without a key is inserted"),
    served("Input.insertText", Page, "text at the focus, no key events"),
    served("Network.enable", Page, "request events from the session proxy's log; turns on the session's body capture"),
    served("Network.disable", Page, "no more network events"),
    served("Network.setExtraHTTPHeaders", Page, "every request of the tab carries them, added by the session proxy (and logged)"),
    served("Network.getResponseBody", Page, "from the session's capture (text bodies up to 1 MiB)"),
    served("Emulation.setDeviceMetricsOverride", Page, "resizes the hidden view (width, height; scale factor 1)"),
    served("Emulation.clearDeviceMetricsOverride", Page, "the session's size again"),
    served(
        "Accessibility.getFullAXTree",
        Page,
        "roles and names as the snapshot computes them, Chrome's role names; backendDOMNodeId resolvable",
    ),
    served("Accessibility.queryAXTree", Page, "nodes of a subtree by accessible name and role"),
    acknowledged("Accessibility.enable", "no accessibility events"),
    acknowledged("Log.enable", "Log.entryAdded is not sent; console calls come as Runtime.consoleAPICalled"),
    acknowledged("Log.disable", "nothing to stop"),
    acknowledged("Audits.enable", "no issues are reported"),
    acknowledged("Performance.enable", "no metrics"),
    acknowledged("Inspector.enable", "Inspector.detached is sent when a tab closes"),
    acknowledged("WebMCP.enable", "nothing to report"),
    acknowledged("Page.setFontFamilies", "the engine's fonts stay"),
    acknowledged("Page.setInterceptFileChooserDialog", "file choosers follow the session's upload path"),
    acknowledged("Emulation.setFocusEmulationEnabled", "hidden pages always act focused"),
    acknowledged("Emulation.setEmulatedMedia", "media features stay the engine's"),
    acknowledged("Emulation.setTouchEmulationEnabled", "no touch"),
    acknowledged("Network.setAttachDebugStack", "no initiator stacks"),
];

/// The row of `name`, if the endpoint answers it at `level`.
pub fn lookup(name: &str, level: Level) -> Option<&'static Method> {
    METHODS.iter().find(|method| method.name == name && (method.level == level || method.level == Level::Any))
}

/// The table as Markdown, for docs/CDP.md.
pub fn markdown() -> String {
    let mut text = String::from("| method | addressed to | how | what it does here |\n|---|---|---|---|\n");
    for method in METHODS {
        let level = match method.level {
            Level::Browser => "browser",
            Level::Page => "page",
            Level::Any => "browser or page",
        };
        let handling = match method.handling {
            Handling::Served => "served",
            Handling::Acknowledged => "acknowledged",
            Handling::Refused => "refused",
        };
        text.push_str(&format!("| `{}` | {level} | {handling} | {} |\n", method.name, method.note));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `"Domain.method" =>` arms of the page dispatcher's sources.
    fn dispatched() -> Vec<String> {
        let sources = [include_str!("page/mod.rs"), include_str!("page/input.rs")];
        let mut names = Vec::new();
        for source in sources {
            for line in source.lines() {
                let line = line.trim();
                if !line.starts_with('"') || !line.contains("=>") {
                    continue;
                }
                let arms = line.split("=>").next().unwrap_or("");
                for arm in arms.split('|') {
                    let arm = arm.trim().trim_matches('"');
                    if arm.contains('.') && !arm.contains([' ', '"']) && arm.starts_with(char::is_uppercase) {
                        names.push(arm.to_string());
                    }
                }
            }
        }
        names
    }

    #[test]
    fn every_served_page_method_has_a_handler_and_every_handler_a_row() {
        let handled = dispatched();
        for method in METHODS.iter().filter(|method| method.level != Level::Browser && method.handling == Handling::Served) {
            if method.name.starts_with("Target.") || method.name == "Runtime.runIfWaitingForDebugger" {
                continue;
            }
            assert!(
                handled.iter().any(|name| name == method.name),
                "{} is in the table but the page dispatcher has no arm for it",
                method.name
            );
        }
        for name in &handled {
            assert!(lookup(name, Level::Page).is_some(), "the page dispatcher handles {name}, which the table does not list");
        }
    }

    #[test]
    fn names_are_unique_and_the_docs_table_is_the_generated_one() {
        let mut names: Vec<&str> = METHODS.iter().map(|method| method.name).collect();
        names.sort();
        let count = names.len();
        names.dedup();
        assert_eq!(names.len(), count, "a method is listed twice");
        let docs = include_str!("../../../docs/CDP.md");
        assert!(
            docs.contains(&markdown()),
            "docs/CDP.md's method table is not the generated one: run `cargo test --lib cdp::methods -- --ignored print_table` and paste it"
        );
    }

    #[test]
    #[ignore = "prints the table for docs/CDP.md"]
    fn print_table() {
        println!("{}", markdown());
    }
}
