//! A tab: one wry webview hosted in its own `gtk::OffscreenWindow`, plus the trackers its
//! WebKit signals feed (load progress, pending requests) and the page policies it
//! enforces (no popups, no permissions, no navigation to non-web schemes).
//!
//! The offscreen host is what makes a hidden page behave as visible: timers and
//! requestAnimationFrame run at full rate and `visibilityState` is "visible", while
//! nothing is mapped on screen and no focus moves.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use gtk::prelude::*;
use serde_json::{json, Value};
use tokio::sync::Notify;
use webkit2gtk::{
    FileChooserRequestExt, LoadEvent, NavigationPolicyDecision, NavigationPolicyDecisionExt, PermissionRequestExt, PolicyDecisionExt,
    PolicyDecisionType, ResponsePolicyDecision, ResponsePolicyDecisionExt, ScriptDialogType, SettingsExt, URIRequestExt, URIResponseExt,
    UserContentInjectedFrames, UserContentManagerExt, UserScript, UserScriptInjectionTime, WebResourceExt, WebViewExt,
};

use super::agent::{self, Relay};
use super::SCRIPT_WORLD;
use crate::engine::{EditingCommand, InputEvent, SessionSpec};
use crate::error::{Error, ErrorCode, Result};
use crate::events::{BlockReason, EventKind, EventLog};
use crate::state::{ConsoleEntry, ConsoleLevel, PageError, PageErrorKind};
use crate::state::{DialogPolicy, TabState};

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
    pub(super) size: (i32, i32),
    /// The takeover window, while shown.
    pub(super) takeover: Rc<super::takeover::TakeoverState>,
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
        context: &webkit2gtk::WebContext,
        spec: &SessionSpec,
        state: Arc<TabState>,
        opener: Option<&webkit2gtk::WebView>,
    ) -> Result<Tab> {
        let id = state.id.clone();
        let host = gtk::OffscreenWindow::new();
        host.set_default_size(spec.width as i32, spec.height as i32);

        // Settings of its own: a popup would otherwise share its opener's (and its token).
        let builder = webkit2gtk::WebView::builder()
            .user_content_manager(&webkit2gtk::UserContentManager::new())
            .settings(&webkit2gtk::Settings::new());
        let view = match opener {
            Some(opener) => builder.related_view(opener).build(),
            None => builder.web_context(context).build(),
        };
        if let Some(settings) = WebViewExt::settings(&view) {
            // The tab's requests name it to the session proxy (which removes the token).
            let agent = settings.user_agent().map(|agent| agent.to_string()).unwrap_or_default();
            let agent = match agent.find(crate::network::TAB_MARKER) {
                Some(index) => agent[..index].to_string(),
                None => agent,
            };
            settings.set_user_agent(Some(&format!("{agent}{}{}", crate::network::TAB_MARKER, state.traffic.token)));
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
        let channel = format!("malo-{}", crate::secret::random_hex(8));
        let agent_source = agent::agent_source(&crate::secret::random_hex(16), &channel);
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
                &agent::page_world_source(&channel),
                UserContentInjectedFrames::AllFrames,
                UserScriptInjectionTime::Start,
                &[],
                &[],
            ));
            content.register_script_message_handler_in_world(agent::HANDLER, SCRIPT_WORLD);
            let (relay, state, clicked, downloads) = (relay.clone(), state.clone(), file_input_clicked.clone(), spec.downloads.clone());
            content.connect_script_message_received(Some(agent::HANDLER), move |_content, message| {
                use javascriptcore::ValueExt;
                if let Some(text) = message.js_value().map(|value| value.to_str()) {
                    receive(&text, &relay, &state, &clicked, &downloads);
                }
            });
        }

        let tab = Tab {
            id,
            host,
            size: (spec.width as i32, spec.height as i32),
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
        };
        tab.connect_signals();
        Ok(tab)
    }

    fn connect_signals(&self) {
        let page = &self.state;
        let view = &self.view;

        // A native drag (of a selection, say) works on the real screen's pointer and would
        // grab the person's mouse: never from a hidden page. (The drag tool plays HTML5
        // drags in the page instead.) A person in the takeover window drags as usual.
        let (takeover, events, tab_id) = (self.takeover.clone(), self.events.clone(), self.id.clone());
        view.connect_drag_begin(move |_, context| {
            if takeover.window.borrow().is_none() {
                // Once WebKit has set the drag icon, so that cancelling also takes it down.
                let context = context.clone();
                glib::idle_add_local_once(move || context.drag_cancel());
                events.push(Some(&tab_id), EventKind::NativeDragCancelled {});
            }
        });

        // A file chooser would map a GTK dialog on the person's screen: never from a hidden
        // page. It is cancelled and recorded, so the agent can set the files itself.
        let (events, tab_id, chooser, changed) = (self.events.clone(), self.id.clone(), self.chooser.clone(), self.load_changed.clone());
        let clicked = self.file_input_clicked.clone();
        view.connect_run_file_chooser(move |_view, request| {
            // WebKit hands over only the MIME types of the accept list (extensions such as
            // `.txt` are dropped): the page's own list comes from the input just clicked.
            let mime_types: Vec<String> = request.mime_types().iter().map(|mime| mime.to_string()).collect();
            let written = clicked.borrow_mut().take().filter(|input| input.when.elapsed() < FileInputClicked::FRESH);
            let accept = written.map(|input| input.accept).unwrap_or_else(|| mime_types.clone());
            let file_count = match chooser.borrow_mut().take() {
                Some(files) => {
                    let paths: Vec<&str> = files.iter().map(String::as_str).collect();
                    request.select_files(&paths);
                    Some(files.len())
                }
                None => {
                    request.cancel();
                    None
                }
            };
            let event = EventKind::FileChooser {
                multiple: request.selects_multiple(),
                accept,
                mime_types,
                answered: file_count.is_some(),
                file_count,
            };
            events.push(Some(&tab_id), event);
            changed.notify_waiters();
            true
        });

        // Load progress: counters, http status, events, page state.
        let (load, changed, events, tab_id, page_state) =
            (self.load.clone(), self.load_changed.clone(), self.events.clone(), self.id.clone(), page.clone());
        view.connect_load_changed(move |view, event| {
            let url = view.uri().map(|uri| uri.to_string()).unwrap_or_default();
            match event {
                LoadEvent::Started => {
                    let mut state = load.borrow_mut();
                    // A new load runs in a new web process: the tab has recovered.
                    state.crashed = false;
                    state.started += 1;
                    state.started_uri = url;
                    state.failure = None;
                    state.http_status = None;
                }
                LoadEvent::Committed => {
                    let status = view
                        .main_resource()
                        .and_then(|resource| resource.response())
                        .map(|response| response.status_code())
                        .filter(|status| *status > 0)
                        .map(|status| status as u16);
                    load.borrow_mut().http_status = status;
                    page_state.status.set_url(&url);
                    events.push(Some(&tab_id), EventKind::Navigation { url, http_status: status });
                }
                LoadEvent::Finished => {
                    let mut state = load.borrow_mut();
                    state.finished = state.started;
                    let failed = state.failure.is_some();
                    drop(state);
                    if !failed {
                        let title = view.title().map(|title| title.to_string()).unwrap_or_default();
                        events.push(Some(&tab_id), EventKind::Load { url, title });
                    }
                }
                _ => {}
            }
            changed.notify_waiters();
        });

        let (load, changed, events, tab_id) = (self.load.clone(), self.load_changed.clone(), self.events.clone(), self.id.clone());
        view.connect_load_failed(move |_view, _event, failing_uri, error| {
            let (name, description) = describe_load_error(error);
            load.borrow_mut().failure = Some((name.clone(), description.clone()));
            let failed = EventKind::LoadFailed { url: failing_uri.to_string(), net_error: name, net_error_description: description };
            events.push(Some(&tab_id), failed);
            changed.notify_waiters();
            // true: no WebKit error page; the agent gets the error in the API instead.
            true
        });

        let page_state = page.clone();
        view.connect_uri_notify(move |view| {
            if let Some(uri) = view.uri() {
                page_state.status.set_url(&uri);
            }
        });
        let page_state = page.clone();
        view.connect_title_notify(move |view| {
            page_state.status.set_title(view.title().as_deref().unwrap_or(""));
        });

        // Requests in flight, for the network half of "settled".
        let pending = self.pending_requests.clone();
        view.connect_resource_load_started(move |_view, resource, _request| {
            pending.set(pending.get() + 1);
            let pending = pending.clone();
            resource.connect_finished(move |_resource| pending.set(pending.get() - 1));
        });

        let (load, changed, events, tab_id) = (self.load.clone(), self.load_changed.clone(), self.events.clone(), self.id.clone());
        view.connect_web_process_terminated(move |_view, reason| {
            let mut state = load.borrow_mut();
            state.crashed = true;
            state.crashes += 1;
            // The load that was under way will never finish.
            state.finished = state.started;
            drop(state);
            events.push(Some(&tab_id), EventKind::Crash { reason: format!("{reason:?}").to_lowercase() });
            changed.notify_waiters();
        });

        // What WebKit itself tells the page's console, from malo's web-process extension:
        // kept with the console, and a refused local URL is a blocked navigation (WebKit
        // leaves no other trace of it).
        let (state, tab_id) = (self.state.clone(), self.id.clone());
        view.connect_user_message_received(move |view, message| {
            let Some(message) = super::web_process::EngineMessage::from_user_message(message) else { return false };
            if let Some(url) = message.refused_url() {
                let blocked = EventKind::NavigationBlocked {
                    url: crate::urls::redact_credentials(url),
                    reason: BlockReason::LocalResource,
                    from: None,
                };
                state.traffic.events.push(Some(&tab_id), blocked);
            }
            state.console.push(ConsoleEntry {
                level: message.level,
                text: message.text.chars().take(4000).collect(),
                source: message.source,
                line: message.line,
                column: None,
                frame_url: view.uri().map(|uri| uri.to_string()).unwrap_or_default(),
                engine: Some(message.category.to_string()),
                time: crate::clock::now(),
            });
            true
        });

        // Permission requests (geolocation, notifications, media, ...) are denied.
        let (events, tab_id) = (self.events.clone(), self.id.clone());
        view.connect_permission_request(move |_view, request| {
            request.deny();
            let kind = permission_kind(request.type_().name());
            events.push(Some(&tab_id), EventKind::PermissionDenied { permission: kind });
            true
        });

        // JavaScript dialogs never block: answered at once by the policy, and recorded.
        let (events, tab_id, state) = (self.events.clone(), self.id.clone(), self.state.clone());
        view.connect_script_dialog(move |_view, dialog| {
            let current = {
                let mut policy = state.dialog_policy.lock().expect("dialog policy poisoned");
                let current = policy.clone();
                if !current.persist {
                    *policy = DialogPolicy::default();
                }
                current
            };
            let kind = dialog.dialog_type();
            let accept = current.accept.unwrap_or(matches!(kind, ScriptDialogType::Alert | ScriptDialogType::BeforeUnloadConfirm));
            let prompt_text = match kind {
                ScriptDialogType::Confirm | ScriptDialogType::BeforeUnloadConfirm => {
                    dialog.confirm_set_confirmed(accept);
                    None
                }
                ScriptDialogType::Prompt if accept => {
                    let text =
                        current.prompt_text.or_else(|| dialog.prompt_get_default_text().map(|text| text.to_string())).unwrap_or_default();
                    dialog.prompt_set_text(&text);
                    Some(text)
                }
                _ => None,
            };
            let answered = EventKind::Dialog {
                dialog_type: match kind {
                    ScriptDialogType::Alert => "alert",
                    ScriptDialogType::Confirm => "confirm",
                    ScriptDialogType::Prompt => "prompt",
                    ScriptDialogType::BeforeUnloadConfirm => "beforeunload",
                    _ => "unknown",
                },
                message: dialog.message().map(|message| message.to_string()).unwrap_or_default(),
                action: if accept { "accept" } else { "dismiss" },
                policy: if current.accept.is_some() { "set" } else { "default" },
                prompt_text,
            };
            events.push(Some(&tab_id), answered);
            true
        });

        // Frames may only navigate to web and inert document schemes.
        let (events, tab_id, downloads) = (self.events.clone(), self.id.clone(), self.downloads.clone());
        view.connect_decide_policy(move |_view, decision, decision_type| {
            if decision_type == PolicyDecisionType::Response {
                // An attachment, or what a browser cannot show (WebKit would ignore it), is
                // downloaded; the call that loaded it waits for that download to begin.
                let Some(response) = decision.downcast_ref::<ResponsePolicyDecision>() else { return false };
                if response.is_mime_type_supported() && !is_attachment(response) {
                    return false;
                }
                downloads.announce(&tab_id, crate::state::downloads::DECIDED_DOWNLOAD);
                decision.download();
                return true;
            }
            if !matches!(decision_type, PolicyDecisionType::NavigationAction | PolicyDecisionType::NewWindowAction) {
                return false;
            }
            let Some(navigation) = decision.downcast_ref::<NavigationPolicyDecision>() else {
                return false;
            };
            let uri = navigation
                .navigation_action()
                .and_then(|action| action.request())
                .and_then(|request| request.uri())
                .map(|uri| uri.to_string())
                .unwrap_or_default();
            if crate::urls::allowed_in_page(&uri) {
                return false;
            }
            decision.ignore();
            let blocked =
                EventKind::NavigationBlocked { url: crate::urls::redact_credentials(&uri), reason: BlockReason::Scheme, from: None };
            events.push(Some(&tab_id), blocked);
            true
        });
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
        let call = self.view.call_async_javascript_function_future(body, None, Some(SCRIPT_WORLD), None);
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
        if value.is_undefined() || value.is_null() {
            return Ok(Value::Null);
        }
        let json = value.to_json(0).ok_or_else(|| Error::new(ErrorCode::ScriptError, "the script returned a value that is not JSON"))?;
        serde_json::from_str(&json).map_err(|error| Error::new(ErrorCode::ScriptError, format!("unreadable script result: {error}")))
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

    /// Destroys the webview and its host. Waiters wake and see `closed`.
    pub(super) fn close(&self) {
        let _ = super::takeover::hide(self);
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

/// A message from the agent of one of the tab's frames: what the page said (console, an
/// uncaught error), which of its requests were XHRs, a file input clicked, or the answer
/// of a relayed call.
fn receive(
    text: &str,
    relay: &Relay,
    state: &TabState,
    file_input_clicked: &RefCell<Option<FileInputClicked>>,
    downloads: &crate::state::downloads::Downloads,
) {
    let Ok(message) = serde_json::from_str::<Value>(text) else { return };
    let field = |name: &str| message.get(name).and_then(Value::as_str).map(str::to_string);
    let number = |name: &str| message.get(name).and_then(Value::as_u64);
    match message.get("kind").and_then(Value::as_str) {
        Some("console") => {
            let level = field("level").and_then(|level| ConsoleLevel::named(&level));
            state.console.push(ConsoleEntry {
                level: level.unwrap_or(ConsoleLevel::Log),
                text: field("text").unwrap_or_default(),
                source: field("source"),
                line: number("line"),
                column: number("column"),
                frame_url: field("frame_url").unwrap_or_default(),
                engine: None,
                time: crate::clock::now(),
            });
        }
        Some("page_error") => {
            state.errors.push(PageError {
                kind: if field("error_kind").as_deref() == Some("unhandled_rejection") {
                    PageErrorKind::UnhandledRejection
                } else {
                    PageErrorKind::Exception
                },
                message: field("message").unwrap_or_default(),
                stack: field("stack"),
                source: field("source"),
                line: number("line"),
                column: number("column"),
                frame_url: field("frame_url").unwrap_or_default(),
                time: crate::clock::now(),
            });
        }
        Some("initiators") => {
            let finished: Vec<(String, crate::network::Initiator)> = message
                .get("entries")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|entry| {
                    let url = entry.get(0)?.as_str()?.to_string();
                    let initiator = match entry.get(1)?.as_str()? {
                        "xmlhttprequest" => crate::network::Initiator::XmlHttpRequest,
                        "fetch" => crate::network::Initiator::Fetch,
                        _ => return None,
                    };
                    Some((url, initiator))
                })
                .collect();
            state.traffic.name_initiators(&finished);
        }
        Some("download_link") => downloads.announce(&state.id, crate::state::downloads::LINK_DOWNLOAD),
        Some("file_input") => {
            let accept = field("accept").unwrap_or_default();
            let accept = accept.split(',').map(str::trim).filter(|part| !part.is_empty()).map(str::to_string).collect();
            *file_input_clicked.borrow_mut() = Some(FileInputClicked { accept, when: std::time::Instant::now() });
        }
        _ => relay.deliver(&message),
    }
}

/// Whether a response asks to be saved rather than shown (`Content-Disposition: attachment`).
fn is_attachment(decision: &ResponsePolicyDecision) -> bool {
    let disposition =
        decision.response().and_then(|response| response.http_headers()).and_then(|headers| headers.one("Content-Disposition"));
    disposition.is_some_and(|value| value.trim_start().get(..10).is_some_and(|word| word.eq_ignore_ascii_case("attachment")))
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

/// A short, stable name and a description for a load error.
fn describe_load_error(error: &glib::Error) -> (String, String) {
    use webkit2gtk::gio::{IOErrorEnum, ResolverError, TlsError};
    use webkit2gtk::{NetworkError, PolicyError};
    let name = if let Some(kind) = error.kind::<IOErrorEnum>() {
        snake_case(&format!("{kind:?}"))
    } else if error.kind::<ResolverError>().is_some() {
        "name_not_resolved".to_string()
    } else if error.kind::<TlsError>().is_some() {
        "tls_error".to_string()
    } else if let Some(kind) = error.kind::<NetworkError>() {
        match kind {
            NetworkError::Cancelled => "cancelled".to_string(),
            NetworkError::UnknownProtocol => "unknown_protocol".to_string(),
            NetworkError::FileDoesNotExist => "file_does_not_exist".to_string(),
            NetworkError::Transport => "transport".to_string(),
            _ => "network_failed".to_string(),
        }
    } else if let Some(kind) = error.kind::<PolicyError>() {
        match kind {
            // The response became a download (or was otherwise not shown).
            PolicyError::FrameLoadInterruptedByPolicyChange => "frame_load_interrupted".to_string(),
            PolicyError::CannotUseRestrictedPort => "restricted_port".to_string(),
            _ => "blocked_by_policy".to_string(),
        }
    } else {
        error.domain().as_str().replace('-', "_").to_lowercase()
    };
    (name, error.message().to_string())
}

fn snake_case(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for (index, character) in camel.chars().enumerate() {
        if character.is_uppercase() && index > 0 {
            out.push('_');
        }
        out.extend(character.to_lowercase());
    }
    out
}

/// `WebKitGeolocationPermissionRequest` -> `geolocation`.
fn permission_kind(type_name: &str) -> String {
    let trimmed = type_name.trim_start_matches("WebKit").trim_end_matches("PermissionRequest");
    snake_case(trimmed)
}
