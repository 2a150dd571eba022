//! One attached page: a tab seen through the protocol. Commands are dispatched here to
//! the domain that serves them (`runtime`: Runtime and DOM over the engine's DevTools
//! runtime; `navigation`: Page and Emulation; `input`: Input, in order; `accessibility`);
//! `events` follows the tab's signals and network log and speaks them as protocol events.

mod accessibility;
mod events;
mod input;
mod navigation;
mod network;
mod runtime;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::methods::{self, Handling, Level};
use super::wire::{Command, ProtocolError, Reply};
use super::Shared;
use crate::engine::devtools::World;
use crate::state::TabState;

/// An execution context: a world of the current document.
#[derive(Debug, Clone)]
pub(super) struct Context {
    id: i64,
    world: World,
}

/// What a page session knows and has been asked to report.
#[derive(Debug, Default)]
pub(super) struct PageState {
    page_events: bool,
    lifecycle: bool,
    runtime: bool,
    network: bool,
    /// The current document's loader id.
    loader: String,
    /// The loader id of a load asked for (or seen starting) and not yet committed.
    pending_loader: Option<String>,
    dom_content_loaded: bool,
    loaded: bool,
    /// Named worlds the client created; each document has a context in each.
    worlds: Vec<String>,
    /// The current document's contexts, the page's own world first.
    contexts: Vec<Context>,
    /// Scripts for new documents, by the identifier the client got.
    scripts: HashMap<String, u64>,
    /// Bindings the client added, with the world each lives in.
    bindings: Vec<(String, World)>,
    network_log: network::Seen,
}

/// A page session: one client's view of one tab.
#[derive(Debug)]
pub(crate) struct PageSession {
    shared: Arc<Shared>,
    tab: Arc<TabState>,
    /// The protocol session id.
    id: String,
    /// The page's target id, also its main frame's id.
    frame_id: String,
    state: Mutex<PageState>,
    ordered: mpsc::UnboundedSender<Command>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl PageSession {
    /// Attaches to `tab`: the page starts following its signals.
    pub(crate) fn start(shared: Arc<Shared>, tab: Arc<TabState>, id: String, frame_id: String) -> Arc<PageSession> {
        let (ordered, queue) = mpsc::unbounded_channel();
        let mut state = PageState { loader: shared.fresh_id(), ..PageState::default() };
        state.contexts.push(Context { id: shared.context_id(), world: World::Page });
        let (url, _) = tab.status.get();
        state.dom_content_loaded = !url.is_empty();
        state.loaded = !url.is_empty();
        let page = Arc::new(PageSession { shared, tab, id, frame_id, state: Mutex::new(state), ordered, tasks: Mutex::default() });
        let signals = page.tab.signals.subscribe();
        let follower = tokio::spawn(events::follow(page.clone(), signals));
        let worker = tokio::spawn(input::in_order(page.clone(), queue));
        page.tasks.lock().expect("tasks poisoned").extend([follower, worker]);
        page
    }

    /// Stops following the tab (the session detached, the tab or the connection closed).
    pub(crate) fn stop(&self) {
        for task in self.tasks.lock().expect("tasks poisoned").drain(..) {
            task.abort();
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, PageState> {
        self.state.lock().expect("page state poisoned")
    }

    /// Sends an event on this page's session.
    fn event(&self, method: &str, params: Value) {
        self.shared.out.event(Some(&self.id), method, params);
    }

    /// Answers a command: unknown ones at once, input in arrival order, the rest as they
    /// finish.
    pub(crate) fn route(self: &Arc<Self>, command: Command) {
        let Some(method) = methods::lookup(&command.method, Level::Page) else {
            return self.shared.out.answer(command.id, Some(&self.id), Err(ProtocolError::not_found(&command.method)));
        };
        match method.handling {
            Handling::Acknowledged => self.shared.out.answer(command.id, Some(&self.id), Ok(json!({}))),
            Handling::Refused => self.shared.out.answer(command.id, Some(&self.id), Err(ProtocolError::server(method.note))),
            Handling::Served if command.method.starts_with("Input.") => {
                if let Err(refused) = self.ordered.send(command) {
                    let command = refused.0;
                    self.shared.out.answer(command.id, Some(&self.id), Err(ProtocolError::server("the page session has ended")));
                }
            }
            Handling::Served => {
                let page = self.clone();
                tokio::spawn(async move {
                    let _in_use = page.shared.session.in_use();
                    let _served = page.serve(&command.method);
                    let reply = page.handle(&command).await;
                    page.shared.out.answer(command.id, Some(&page.id), reply);
                });
            }
        }
    }

    /// Marks the tab served while a client waits on `method`, as the registry does for an
    /// interactive tool (`engine::cpu_share`); loading a page is not interactive.
    fn serve(&self, method: &str) -> Option<crate::engine::cpu_share::Served> {
        let loads = matches!(method, "Page.navigate" | "Page.reload" | "Page.navigateToHistoryEntry");
        (!loads).then(|| self.shared.session.engine.serve(self.shared.session.address(&self.tab)))
    }

    /// The served page-level methods (methods.rs lists the same names; a test holds them).
    async fn handle(self: &Arc<Self>, command: &Command) -> Reply {
        let params = &command.params;
        match command.method.as_str() {
            "Page.enable" => self.enable(|state| state.page_events = true),
            "Page.disable" => self.enable(|state| state.page_events = false),
            "Page.getFrameTree" => Ok(json!({ "frameTree": { "frame": self.frame() } })),
            "Page.getResourceTree" => Ok(json!({ "frameTree": { "frame": self.frame(), "resources": [] } })),
            "Page.setLifecycleEventsEnabled" => Ok(self.set_lifecycle(params["enabled"].as_bool().unwrap_or(false))),
            "Page.navigate" => self.navigate(params).await,
            "Page.reload" => self.reload().await,
            "Page.getNavigationHistory" => self.history().await,
            "Page.navigateToHistoryEntry" => self.go_to_entry(params).await,
            "Page.captureScreenshot" => self.screenshot(params).await,
            "Page.addScriptToEvaluateOnNewDocument" => self.add_script(params).await,
            "Page.removeScriptToEvaluateOnNewDocument" => self.remove_script(params).await,
            "Page.createIsolatedWorld" => self.create_world(params),
            "Page.handleJavaScriptDialog" => Ok(json!({})),
            "Page.bringToFront" => self.bring_to_front().await,
            "Page.getLayoutMetrics" => self.layout_metrics().await,
            "Emulation.setDeviceMetricsOverride" => self.set_viewport(params).await,
            "Emulation.clearDeviceMetricsOverride" => self.clear_viewport().await,
            "Runtime.enable" => Ok(self.enable_runtime()),
            "Runtime.disable" => self.enable(|state| state.runtime = false),
            "Runtime.evaluate" => self.evaluate(params).await,
            "Runtime.callFunctionOn" => self.call_function_on(params).await,
            "Runtime.getProperties" => self.get_properties(params).await,
            "Runtime.releaseObject" => self.release_object(params).await,
            "Runtime.releaseObjectGroup" => self.release_group(params).await,
            "Runtime.getIsolateId" => Ok(json!({ "id": self.frame_id })),
            "Runtime.addBinding" => self.add_binding(params).await,
            "Runtime.removeBinding" => self.remove_binding(params),
            "DOM.enable" | "DOM.disable" => Ok(json!({})),
            "DOM.getDocument" => self.get_document(params).await,
            "DOM.describeNode" => self.describe_node(params).await,
            "DOM.resolveNode" => self.resolve_node(params).await,
            "DOM.querySelector" => self.query_selector(params).await,
            "DOM.getBoxModel" => self.node_geometry(params, runtime::Geometry::BoxModel).await,
            "DOM.getContentQuads" => self.node_geometry(params, runtime::Geometry::ContentQuads).await,
            "DOM.scrollIntoViewIfNeeded" => self.node_geometry(params, runtime::Geometry::ScrollIntoView).await,
            "DOM.setFileInputFiles" => self.set_file_input_files(params).await,
            "Network.enable" => self.enable_network(),
            "Network.disable" => self.enable(|state| state.network = false),
            "Network.getResponseBody" => self.response_body(params),
            "Network.setExtraHTTPHeaders" => self.set_extra_headers(params),
            "Accessibility.getFullAXTree" => self.full_ax_tree(params).await,
            "Accessibility.queryAXTree" => self.query_ax_tree(params).await,
            method => Err(ProtocolError::not_found(method)),
        }
    }

    fn enable(&self, change: impl FnOnce(&mut PageState)) -> Reply {
        change(&mut self.state());
        Ok(json!({}))
    }

    /// The main frame as `getFrameTree` and `frameNavigated` show it.
    fn frame(&self) -> Value {
        let (url, _) = self.tab.status.get();
        let url = super::targets::shown_url(&url);
        let origin = origin_of(&url);
        json!({
            "id": self.frame_id,
            "loaderId": self.state().loader,
            "url": url,
            "domainAndRegistry": "",
            "securityOrigin": origin,
            "mimeType": "text/html",
            "secureContextType": if url.starts_with("https:") || origin.contains("://127.0.0.1") || origin.contains("://localhost") { "Secure" } else { "InsecureScheme" },
            "crossOriginIsolatedContextType": "NotIsolated",
            "gatedAPIFeatures": [],
        })
    }
}

/// The origin of a URL (`://null` for what has none).
fn origin_of(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(parsed) if parsed.scheme() == "http" || parsed.scheme() == "https" => parsed.origin().ascii_serialization(),
        _ => "://".into(),
    }
}
