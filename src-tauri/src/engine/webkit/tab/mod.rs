//! A tab: one WebKit view (built by the engine, not wry) hosted in its own
//! `gtk::OffscreenWindow`, with what its signals feed: load progress and requests in flight
//! (`load.rs`), the policies a hidden page is held to (`policy.rs`), dialogs answered by
//! the tab's policy (`dialogs.rs`), and what the page side tells it (`messages.rs`). This
//! file builds the view and carries out what the engine asks of it: scripts, input,
//! editing commands, file choosers, closing.
//!
//! The offscreen host is what makes a hidden page behave as visible: timers and
//! requestAnimationFrame run at full rate and `visibilityState` is "visible", while
//! nothing is mapped on screen and no focus moves.

mod dialogs;
mod load;
mod messages;
mod policy;

pub(super) use messages::{Relay, HANDLER};

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use gtk::prelude::*;
use serde_json::{json, Value};
use tokio::sync::Notify;
use webkit2gtk::{
    SettingsExt, UserContentInjectedFrames, UserContentManagerExt, UserScript, UserScriptInjectionTime, UserStyleLevel, UserStyleSheet,
    WebViewExt,
};

use super::window::TakeoverState;
use super::SCRIPT_WORLD;
use crate::engine::{EditingCommand, InputEvent, SessionSpec};
use crate::error::{Error, ErrorCode, Result};
use crate::events::EventLog;
use crate::state::TabState;

/// The scripts a tab's frames run: the page agent (isolated world) and the page-world
/// hook, each with the tab's own secret and channel.
pub(super) struct TabScripts {
    /// The agent's source.
    pub(super) agent: String,
    /// The page-world hook's source.
    pub(super) page_world: String,
    /// The type of the node events the agent answers (for the DevTools runtime).
    pub(super) nodes: String,
}

/// Scrollbars of a hidden page: none, as in a headless Chromium. WebKit's overlay
/// scrollbars take no room, and neither does a scrollbar of no size, so the page lays out
/// the same; but an overlay scrollbar fades in and out after every load and scroll, and
/// that fade repainted a hidden page at 60 Hz for about 3 s (measured on the large
/// benchmark page: 120-340 wakeups a second in its web process and as many on the main
/// thread, against none). A user sheet: a page's own scrollbar styles still win.
const HIDDEN_SCROLLBARS: &str = "::-webkit-scrollbar { width: 0; height: 0; }";

/// How long a script in the page may take before the call gives up.
const SCRIPT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// What the load signals have said so far. Counters rather than flags, so a waiter can
/// tell "a load that started after I asked" from an earlier one.
#[derive(Debug, Default)]
pub(super) struct LoadState {
    /// Loads started.
    pub(super) started: u64,
    /// Loads finished (successfully or not); equals `started` when idle.
    pub(super) finished: u64,
    /// Documents committed.
    pub(in crate::engine::webkit) committed: u64,
    /// The URI being loaded when the latest load started (the request, before redirects).
    pub(super) started_uri: String,
    /// HTTP status of the latest committed main document.
    pub(super) http_status: Option<u16>,
    /// `(name, description)` of the latest load failure, cleared when a load starts.
    pub(super) failure: Option<(String, String)>,
    /// Whether the web process died and no load has started since (a load starts a new one).
    pub(super) crashed: bool,
    /// Times the web process died.
    pub(super) crashes: u64,
}

/// One hosted webview.
pub(super) struct Tab {
    pub(super) id: String,
    /// The offscreen window the page lives in while no person watches it.
    pub(super) host: gtk::OffscreenWindow,
    /// Viewport size (CSS px).
    pub(in crate::engine::webkit) size: Cell<(i32, i32)>,
    /// The takeover window, while shown.
    pub(super) takeover: Rc<TakeoverState>,
    pub(super) view: webkit2gtk::WebView,
    pub(super) load: Rc<RefCell<LoadState>>,
    /// Woken on every load signal, crash and close.
    pub(super) load_changed: Rc<Notify>,
    /// Subresource and document requests in flight.
    pub(super) pending_requests: Rc<Cell<i64>>,
    pub(super) closed: Cell<bool>,
    pub(super) events: Arc<EventLog>,
    /// The session's url, title and window state, as listings read them.
    pub(super) state: Arc<TabState>,
    /// The page agent's source for this session (with its secret), for documents that
    /// began before it was installed.
    pub(super) agent_source: String,
    /// Answers of relayed agent calls.
    pub(super) relay: Rc<Relay>,
    /// The page's count of trusted input events before the latest input was delivered
    /// (-1: unknown), so that the wait after an action can tell when the page has seen it.
    pub(super) input_mark: Cell<i64>,
    /// How many of the latest input's events the page must count before it has seen it all.
    pub(super) input_expected: Cell<i64>,
    /// Mouse buttons held down by earlier input (a drag in progress), for the state of moves.
    pub(super) buttons_held: Cell<gtk::gdk::ModifierType>,
    /// The session's downloads (a download this tab starts is recorded there).
    pub(super) downloads: Arc<crate::state::downloads::Downloads>,
    /// Files the next file chooser of this tab is answered with (`set_file_input`); a
    /// chooser with none armed is cancelled.
    pub(super) chooser: Rc<RefCell<Option<Vec<String>>>>,
    /// The file input a page's agent saw clicked last, for the chooser it opens.
    pub(super) file_input_clicked: Rc<RefCell<Option<FileInputClicked>>>,
    /// Scripts a DevTools client added for every new document.
    pub(in crate::engine::webkit) document_scripts: DocumentScripts,
    /// The DevTools runtime's name, source and worlds.
    pub(in crate::engine::webkit) devtools: super::devtools::Runtime,
    /// Held by a print from its start until WebKit says it finished: prints of one view
    /// take turns (started back to back, one could lose its file).
    pub(super) print_turn: Arc<tokio::sync::Mutex<()>>,
    /// What the session shows pages (the permissions it grants, for `policy.rs`).
    pub(super) identity: Rc<RefCell<crate::engine::identity::Identity>>,
    /// The live view's frame copying, while a person's browser shows the tab.
    pub(super) live: RefCell<Option<super::frames::Stream>>,
    /// The outline `highlight` draws over the page, while shown.
    pub(in crate::engine::webkit) highlight: super::highlight::Shown,
}

/// Scripts added for every new document, by id (so they can be removed).
#[derive(Default)]
pub(in crate::engine::webkit) struct DocumentScripts {
    pub(in crate::engine::webkit) next_id: Cell<u64>,
    pub(in crate::engine::webkit) scripts: RefCell<Vec<(u64, webkit2gtk::UserScript)>>,
    /// The session's init scripts installed in this tab, by their session id.
    pub(in crate::engine::webkit) init: RefCell<Vec<(u64, webkit2gtk::UserScript)>>,
}

/// A file input just clicked (by a person, a label or the page's own `input.click()`), as
/// its frame's agent saw it: the chooser that follows is for it.
#[derive(Debug, Clone)]
pub(super) struct FileInputClicked {
    /// The `accept` attribute as the page wrote it, split on commas.
    accept: Vec<String>,
    when: std::time::Instant,
}

impl FileInputClicked {
    /// How long after the click a chooser is taken to be that input's.
    const FRESH: std::time::Duration = std::time::Duration::from_secs(2);
}

impl Tab {
    /// Builds the host, the webview (in `context`) and connects the signal handlers.
    /// `opener`: for a popup, the view that opened it (the new view is related to it:
    /// same context, `window.opener` kept); the page then loads the popup's URL itself.
    pub(super) fn open(
        context: &super::context::Context,
        spec: &SessionSpec,
        identity: &Rc<RefCell<crate::engine::identity::Identity>>,
        state: Arc<TabState>,
        opener: Option<&webkit2gtk::WebView>,
        scripts: TabScripts,
    ) -> Result<Tab> {
        let id = state.id.clone();
        let host = gtk::OffscreenWindow::new();
        host.set_default_size(spec.width as i32, spec.height as i32);

        // Settings of its own: a popup would otherwise share its opener's.
        let builder = webkit2gtk::WebView::builder()
            .user_content_manager(&webkit2gtk::UserContentManager::new())
            .settings(&webkit2gtk::Settings::new());
        let view = match opener {
            Some(opener) => builder.related_view(opener).build(),
            None => builder.web_context(&context.web).build(),
        };
        // The tab's requests name it to the session proxy by its page id (the web-process
        // extension adds it to their User-Agent header; the proxy removes it): registered
        // before the view loads anything, a popup's first request included.
        spec.tabs.attach_page(&state, view.page_id(), &context.secret);
        if let Some(settings) = WebViewExt::settings(&view) {
            if let Some(user_agent) = &identity.borrow().user_agent {
                settings.set_user_agent(Some(user_agent));
            }
            // Let every popup reach the `create` handler, so it is decided *and* recorded.
            settings.set_javascript_can_open_windows_automatically(true);
            settings.set_enable_developer_extras(false);
            settings.set_javascript_can_access_clipboard(false);
            settings.set_enable_back_forward_navigation_gestures(false);
            // No accelerated compositing: without a GPU it is Mesa's software GL in every web
            // process, which more than doubled a hidden page's memory (measured: 118 against
            // 53 MiB per web process on the large benchmark page), and a page moved into the
            // takeover window paints only without it.
            settings.set_hardware_acceleration_policy(webkit2gtk::HardwareAccelerationPolicy::Never);
        }
        view.set_size_request(spec.width as i32, spec.height as i32);
        host.add(&view);
        host.show_all();
        if opener.is_none() {
            view.load_uri("about:blank");
        }
        // Keyboard focus inside the offscreen host (never on the desktop): given once now,
        // so that the first trusted click does not move focus and scroll the page.
        view.grab_focus();

        // The page agent, in every frame, in our isolated world, before any page script.
        let TabScripts { agent: agent_source, page_world, nodes } = scripts;
        let relay = Rc::new(Relay::default());
        let file_input_clicked: Rc<RefCell<Option<FileInputClicked>>> = Rc::default();
        if let Some(content) = view.user_content_manager() {
            content.add_script(&UserScript::for_world(
                &agent_source,
                UserContentInjectedFrames::AllFrames,
                UserScriptInjectionTime::Start,
                SCRIPT_WORLD,
                &[],
                &[],
            ));
            // The page-world hook, after the agent so that the agent listens first.
            content.add_script(&UserScript::new(
                &page_world,
                UserContentInjectedFrames::AllFrames,
                UserScriptInjectionTime::Start,
                &[],
                &[],
            ));
            content.add_style_sheet(&hidden_scrollbars());
            content.register_script_message_handler_in_world(HANDLER, SCRIPT_WORLD);
            let (relay, state, clicked, downloads) = (relay.clone(), state.clone(), file_input_clicked.clone(), spec.downloads.clone());
            content.connect_script_message_received(Some(HANDLER), move |_content, message| {
                use javascriptcore::ValueExt;
                if let Some(text) = message.js_value().map(|value| value.to_str()) {
                    messages::receive(&text, &relay, &state, &clicked, &downloads);
                }
            });
        }

        let tab = Tab {
            id,
            host,
            size: Cell::new((spec.width as i32, spec.height as i32)),
            takeover: Rc::default(),
            view,
            load: Rc::default(),
            load_changed: Rc::default(),
            pending_requests: Rc::default(),
            closed: Cell::new(false),
            events: spec.events.clone(),
            state,
            agent_source,
            relay,
            input_mark: Cell::new(-1),
            input_expected: Cell::new(0),
            buttons_held: Cell::new(gtk::gdk::ModifierType::empty()),
            downloads: spec.downloads.clone(),
            chooser: Rc::default(),
            file_input_clicked,
            document_scripts: DocumentScripts::default(),
            devtools: super::devtools::Runtime::new(&nodes),
            print_turn: Arc::default(),
            identity: identity.clone(),
            live: RefCell::default(),
            highlight: super::highlight::Shown::default(),
        };
        // The session's init scripts, before the tab's first document (a popup's too).
        super::devtools::sync_init_scripts(&tab, spec.tabs.init_scripts().list());
        load::connect(&tab);
        policy::connect(&tab);
        dialogs::connect(&tab);
        messages::connect_engine_console(&tab);
        Ok(tab)
    }

    /// A person sees the page now (the takeover window, a live view), or nobody does: the
    /// page's scrollbars show while seen, and its process does not yield a CPU to other
    /// sessions' calls (`cpu_share`) while seen.
    pub(super) fn set_seen(&self, seen: bool) {
        if let Some(content) = self.view.user_content_manager() {
            content.remove_all_style_sheets();
            if !seen {
                content.add_style_sheet(&hidden_scrollbars());
            }
        }
        if seen {
            self.tell_cpu_part(super::web_process::CpuPart::Served);
        }
    }

    /// Tells the page its part in sharing CPUs (`cpu_share`), unless its web process has
    /// crashed: WebKit keeps a message for a page without a process, and a reload after
    /// the crash then never finished loading (measured).
    pub(super) fn tell_cpu_part(&self, part: super::web_process::CpuPart) {
        if !self.load.borrow().crashed {
            super::web_process::tell_cpu_part(&self.view, part);
        }
    }

    /// Whether a person sees the page (see [`Tab::set_seen`]).
    pub(super) fn is_seen(&self) -> bool {
        self.takeover.window.borrow().is_some() || self.live.borrow().is_some()
    }

    /// Runs a function body in the isolated world of the main frame and returns its
    /// (awaited) value as JSON. A document that goes away mid-call never answers, so the
    /// call is bounded.
    pub(super) async fn evaluate(&self, body: &str) -> Result<Value> {
        self.evaluate_within(body, SCRIPT_TIMEOUT).await
    }

    /// [`Tab::evaluate`] with an explicit bound.
    pub(super) async fn evaluate_within(&self, body: &str, limit: std::time::Duration) -> Result<Value> {
        self.ensure_open()?;
        // The page turns its answer into JSON text itself (in its web process, in our
        // world, whose `JSON` no page script can reach): the main thread then receives one
        // string instead of building the value again in its own JavaScript heap.
        let body = format!("const answer = await (async () => {{\n{body}\n}})();\nreturn JSON.stringify(answer);");
        let call = self.view.call_async_javascript_function_future(&body, None, Some(SCRIPT_WORLD), None);
        let value = tokio::select! {
            value = call => value,
            () = super::engine_time(limit) => {
                return Err(Error::new(ErrorCode::Timeout, format!("the page did not answer within {} ms", limit.as_millis())));
            }
        };
        let value = match value {
            Ok(value) => value,
            Err(error) => return Err(self.script_failure(format!("script failed: {}", error.message())).await),
        };
        use javascriptcore::ValueExt;
        // `JSON.stringify` answers undefined for undefined (and for what JSON cannot hold).
        if !value.is_string() {
            return Ok(Value::Null);
        }
        serde_json::from_str(&value.to_str())
            .map_err(|error| Error::new(ErrorCode::ScriptError, format!("unreadable script result: {error}")))
    }

    /// Evaluates an expression (or, failing that, a function body) in the page's own world.
    pub(super) async fn evaluate_page(&self, expression: &str) -> Result<Value> {
        self.ensure_open()?;
        let as_expression = format!("return (\n{expression}\n);");
        let attempt = async {
            match self.view.call_async_javascript_function_future(&as_expression, None, None, None).await {
                Err(error) if error.message().contains("SyntaxError") => {
                    self.view.call_async_javascript_function_future(expression, None, None, None).await
                }
                other => other,
            }
        };
        let result = tokio::select! {
            result = attempt => result,
            () = super::engine_time(SCRIPT_TIMEOUT) => {
                return Err(Error::new(ErrorCode::Timeout, "the expression did not finish within 10 s"));
            }
        };
        let value = match result {
            Ok(value) => value,
            Err(error) => return Err(self.script_failure(format!("the expression threw: {}", error.message())).await),
        };
        use javascriptcore::ValueExt;
        if value.is_undefined() || value.is_null() {
            return Ok(Value::Null);
        }
        let json =
            value.to_json(0).ok_or_else(|| Error::new(ErrorCode::ScriptError, "the expression's value cannot be represented as JSON"))?;
        serde_json::from_str(&json).map_err(|error| Error::new(ErrorCode::ScriptError, format!("unreadable value: {error}")))
    }

    /// The page's count of trusted input events (-1 when the agent is not there).
    pub(super) async fn input_count(&self) -> i64 {
        self.evaluate_within("return globalThis.__malo ? __malo.inputCount() : -1;", std::time::Duration::from_millis(500))
            .await
            .ok()
            .and_then(|value| value.as_i64())
            .unwrap_or(-1)
    }

    /// Waits until at least one load has finished and none is under way.
    pub(super) async fn wait_until_idle(&self, limit: std::time::Duration) -> Result<()> {
        let deadline = super::Deadline::after(limit);
        loop {
            self.ensure_open()?;
            {
                let state = self.load.borrow();
                if state.finished > 0 && state.finished == state.started {
                    return Ok(());
                }
            }
            if deadline.passed() {
                return Err(Error::new(ErrorCode::Timeout, "the new tab did not finish loading about:blank"));
            }
            let notified = self.load_changed.notified();
            tokio::select! {
                _ = notified => {}
                _ = glib::timeout_future(std::time::Duration::from_millis(50)) => {}
            }
        }
    }

    /// Delivers trusted input; answers the load counter before it (a mark for the wait
    /// after the action).
    pub(super) async fn deliver_input(&self, events: &[InputEvent]) -> Result<u64> {
        self.ensure_open()?;
        let mark = self.load.borrow().started;
        // The webview must hold focus inside its host before input arrives: a button press
        // would otherwise take it, and WebKit would scroll the page to reveal the focused
        // element between our locate and the click.
        if !self.view.is_focus() {
            self.view.grab_focus();
        }
        if !events.is_empty() {
            // The page counts every trusted key, button, wheel and move event; moves may be
            // coalesced, so only the others are waited for (at least one).
            let expected = events.iter().filter(|event| !matches!(event, InputEvent::MouseMove { .. })).count().max(1);
            self.input_mark.set(self.input_count().await);
            self.input_expected.set(expected as i64);
        }
        super::input::deliver(&self.view, &self.buttons_held, events)?;
        Ok(mark)
    }

    /// Runs an editing command on the focused element; answers the load mark.
    pub(super) fn edit(&self, command: EditingCommand) -> Result<u64> {
        self.ensure_open()?;
        let mark = self.load.borrow().started;
        self.view.execute_editing_command(command.name());
        Ok(mark)
    }

    /// Waits until a file chooser took the armed files (true), or `limit` passes (false:
    /// the files are disarmed, so a later chooser is not answered with them).
    pub(super) async fn await_file_chooser(&self, limit: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + limit;
        loop {
            if self.chooser.borrow().is_none() {
                return true;
            }
            if std::time::Instant::now() >= deadline || self.closed.get() {
                self.chooser.borrow_mut().take();
                return false;
            }
            let changed = self.load_changed.notified();
            tokio::select! {
                _ = changed => {}
                _ = glib::timeout_future(std::time::Duration::from_millis(20)) => {}
            }
        }
    }

    /// An error when the tab was closed or its web process died (navigate recovers it).
    pub(super) fn ensure_open(&self) -> Result<()> {
        self.ensure_alive()?;
        if self.load.borrow().crashed {
            return Err(crashed_error());
        }
        Ok(())
    }

    /// An error when the tab was closed (a crashed tab may still navigate).
    pub(super) fn ensure_alive(&self) -> Result<()> {
        if self.closed.get() {
            return Err(Error::new(ErrorCode::TabNotFound, format!("tab {} was closed", self.id)));
        }
        Ok(())
    }

    /// A script error, or `E_PAGE_CRASHED` when the web process died meanwhile. A call
    /// whose reply never came (WebKit: "Unsupported result type") may beat the news of
    /// the crash by a moment: that news is awaited briefly.
    async fn script_failure(&self, message: String) -> Error {
        if !self.load.borrow().crashed && message.contains("Unsupported result type") {
            tokio::select! {
                _ = self.load_changed.notified() => {}
                _ = glib::timeout_future(std::time::Duration::from_millis(500)) => {}
            }
        }
        if self.load.borrow().crashed {
            return crashed_error();
        }
        Error::new(ErrorCode::ScriptError, message)
    }

    /// Destroys the webview and its host (hide its takeover window first). Waiters wake and
    /// see `closed`.
    pub(super) fn close(&self) {
        self.closed.set(true);
        self.load_changed.notify_waiters();
        // Destroying the host destroys the view in it.
        destroy_host(&self.host);
    }
}

/// Drops one reference to `view` that Rust code does not own: the one the `create`
/// signal's binding handed to WebKit, which WebKit never releases.
pub(super) fn release_reference(view: &webkit2gtk::WebView) {
    use glib::translate::ToGlibPtr;
    let pointer: *mut webkit2gtk::ffi::WebKitWebView = view.to_glib_none().0;
    #[allow(unsafe_code)]
    // SAFETY: the create trampoline took a full reference (to_glib_full) that nothing
    // will release; this gives exactly that one back, while `view` still holds its own.
    unsafe {
        glib::gobject_ffi::g_object_unref(pointer.cast());
    }
}

/// What a call on a tab whose web process died answers until a navigation recovers it.
pub(super) fn crashed_error() -> Error {
    Error::new(ErrorCode::PageCrashed, "the page's web process crashed; navigate (or history reload) to recover")
        .with_details(json!({ "recover": "navigate" }))
}

fn destroy_host(host: &gtk::OffscreenWindow) {
    #[allow(unsafe_code)]
    // SAFETY: gtk-rs marks `destroy` unsafe because other references may still use the
    // widget; the host is referenced only by this tab, which is closing.
    unsafe {
        host.destroy();
    }
}

fn hidden_scrollbars() -> UserStyleSheet {
    UserStyleSheet::new(HIDDEN_SCROLLBARS, UserContentInjectedFrames::AllFrames, UserStyleLevel::User, &[], &[])
}
