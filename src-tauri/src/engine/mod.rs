//! The browsing engine, seen from the async side: a cheap, cloneable [`EngineHandle`]
//! that sends a [`Command`] to the main thread and awaits a oneshot reply.
//!
//! WebKit and GTK objects are not `Send` and must live on the main thread (the GTK main
//! loop Tauri runs). The actor in [`webkit`] owns them all; nothing else touches them.
//! A dropped reply becomes `E_ENGINE_UNAVAILABLE` and every wait has a time limit, so a
//! stuck page can never hang an HTTP request forever.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, Notify};

use crate::error::{Error, ErrorCode, Result};
use crate::events::EventLog;

#[cfg(target_os = "linux")]
pub mod webkit;

/// The platform key value of a DOM key name (`Enter`, `a`, `F5`, ...), if it exists.
#[cfg(target_os = "linux")]
pub fn keyval(key: &str) -> Option<u32> {
    webkit::keyval(key)
}

/// The platform key value of a DOM key name; no engine on this platform.
#[cfg(not(target_os = "linux"))]
pub fn keyval(_key: &str) -> Option<u32> {
    None
}

pub mod downloads;
pub mod png;

/// How long a command that does not load pages may take on the main thread.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// What the engine needs to open a session.
#[derive(Debug, Clone)]
pub struct SessionSpec {
    /// The session id (the engine's key).
    pub session_id: String,
    /// Viewport width in CSS pixels.
    pub width: u32,
    /// Viewport height in CSS pixels.
    pub height: u32,
    /// The session's own WebKit data directory (cookies, storage, cache).
    pub web_data_dir: PathBuf,
    /// Where page events go.
    pub events: Arc<EventLog>,
    /// Where the engine keeps the page's url and title current.
    pub page: Arc<PageState>,
    /// The session's download policy and records.
    pub downloads: Arc<downloads::Downloads>,
}

/// What a `watch` command does to the takeover window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchChange {
    /// Only report `{shown, done_count}`.
    Report,
    /// Show the window titled `title`; `focus` brings it forward with keyboard focus;
    /// `keep_visible` keeps it up when the person presses Done (control still goes back);
    /// `None` leaves it as the window has it (false for a new window).
    Show { title: String, focus: bool, keep_visible: Option<bool> },
    /// Hide the window; the page goes back offscreen.
    Hide,
    /// A person hands the session back (the Done button, closing the window, the tray's
    /// Hide): hide the window and count a Done.
    HandBack,
}

/// The page's current url and title, and whether a person has it on screen, kept current
/// by the engine so that listing sessions (and the tray) never needs a round trip to the
/// main thread. A change of the window notifies `changed` (the tray's wake-up).
#[derive(Debug)]
pub struct PageState {
    // A std mutex: held only to copy two short strings.
    inner: Mutex<(String, String)>,
    shown: AtomicBool,
    /// The agent showed the window for a person to take over (until Done or hidden).
    takeover_requested: AtomicBool,
    changed: Arc<Notify>,
}

impl PageState {
    /// A blank page; `changed` is notified when the window is shown or hidden.
    pub fn new(changed: Arc<Notify>) -> PageState {
        PageState {
            inner: Mutex::new(("about:blank".into(), String::new())),
            shown: AtomicBool::new(false),
            takeover_requested: AtomicBool::new(false),
            changed,
        }
    }

    /// Records the current url.
    pub fn set_url(&self, url: &str) {
        self.inner.lock().expect("page state poisoned").0 = url.to_string();
    }

    /// Records the current title.
    pub fn set_title(&self, title: &str) {
        self.inner.lock().expect("page state poisoned").1 = title.to_string();
    }

    /// `(url, title)`.
    pub fn get(&self) -> (String, String) {
        self.inner.lock().expect("page state poisoned").clone()
    }

    /// Records whether the takeover window is on screen.
    pub fn set_shown(&self, shown: bool) {
        if self.shown.swap(shown, Ordering::Relaxed) != shown {
            self.changed.notify_one();
        }
    }

    /// Whether the takeover window is on screen.
    pub fn is_shown(&self) -> bool {
        self.shown.load(Ordering::Relaxed)
    }

    /// Records that the agent asks a person to take over (true), or that the person handed
    /// the session back or the window went away (false).
    pub fn set_takeover_requested(&self, requested: bool) {
        if self.takeover_requested.swap(requested, Ordering::Relaxed) != requested {
            self.changed.notify_one();
        }
    }

    /// Whether the window is up because the agent asked a person to take over, and the
    /// person has not handed the session back yet.
    pub fn awaits_takeover(&self) -> bool {
        self.takeover_requested.load(Ordering::Relaxed) && self.is_shown()
    }
}

/// The result of a navigation.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct NavigationReport {
    /// The URL that was asked for.
    pub requested_url: String,
    /// The document's URL after redirects.
    pub url: String,
    /// HTTP status of the main document, when it was fetched over HTTP.
    pub http_status: Option<u16>,
    /// A short name of the network error, when the load failed.
    pub net_error: Option<String>,
    /// What the network error means.
    pub net_error_description: Option<String>,
    /// How the wait for a quiet page went.
    pub settle: SettleReport,
}

/// How the wait for DOM and network quiet after `load` went.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct SettleReport {
    /// Milliseconds from the navigate call to the end of the wait.
    pub waited_ms: u64,
    /// DOM element count at the end.
    pub dom_elements: u64,
    /// Consecutive samples in which the DOM count did not change and no request was pending.
    pub stable_samples: u32,
    /// Whether no request was pending at the end.
    pub network_idle: bool,
    /// Whether `settle_ms` ran out before the page was quiet.
    pub timed_out: bool,
}

/// A captured viewport, as straight (non-premultiplied) RGBA.
#[derive(Debug, Clone)]
pub struct Frame {
    /// Pixels across.
    pub width: u32,
    /// Pixels down.
    pub height: u32,
    /// `width * height * 4` bytes.
    pub rgba: Vec<u8>,
}

/// Directions of the session history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HistoryAction {
    /// One entry back.
    Back,
    /// One entry forward.
    Forward,
    /// Reload the current entry.
    Reload,
}

/// Keyboard modifiers held during an input event.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Modifiers {
    /// Shift.
    pub shift: bool,
    /// Control.
    pub control: bool,
    /// Alt (Option).
    pub alt: bool,
    /// Meta (Command, Super).
    pub meta: bool,
}

/// A mouse button.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MouseButton {
    /// The primary button.
    #[default]
    Left,
    /// The wheel button.
    Middle,
    /// The secondary button.
    Right,
}

/// One key press or release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyStroke {
    /// The platform key value (GDK keyval on Linux).
    pub keyval: u32,
    /// Modifiers held.
    pub modifiers: Modifiers,
}

/// One trusted input event, in viewport CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum InputEvent {
    /// Pointer moves to (x, y).
    MouseMove { x: f64, y: f64, modifiers: Modifiers },
    /// A button goes down at (x, y).
    MouseDown { x: f64, y: f64, button: MouseButton, modifiers: Modifiers },
    /// A button goes up at (x, y).
    MouseUp { x: f64, y: f64, button: MouseButton, modifiers: Modifiers },
    /// The wheel turns by (dx, dy) CSS pixels at (x, y).
    Wheel { x: f64, y: f64, dx: f64, dy: f64 },
    /// A key goes down.
    KeyDown(KeyStroke),
    /// A key goes up.
    KeyUp(KeyStroke),
}

/// What to do with JavaScript dialogs (alert, confirm, prompt, beforeunload).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DialogPolicy {
    /// `Some(true)` accept, `Some(false)` dismiss, `None` the default for the dialog type
    /// (alert and beforeunload accepted, confirm and prompt dismissed).
    pub accept: Option<bool>,
    /// Text a prompt answers with when accepted (default: its default text).
    pub prompt_text: Option<String>,
    /// Keep the policy for every later dialog, not only the next one.
    pub persist: bool,
}

/// How the page settled after an input action.
#[derive(Debug, Clone, Serialize)]
pub struct ActionSettle {
    /// Whether the action started a navigation of the main frame.
    pub navigated: bool,
    /// The navigation report, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub navigation: Option<NavigationReport>,
    /// The wait for quiet.
    pub settle: SettleReport,
}

/// Requests to the main-thread actor. Each carries its reply channel.
#[derive(Debug)]
pub enum Command {
    /// Create the offscreen host, context and first tab of a session.
    Open { spec: SessionSpec, reply: oneshot::Sender<Result<()>> },
    /// Drop the session's tabs, host and context (its WebKit processes exit).
    Close { session_id: String, reply: oneshot::Sender<Result<()>> },
    /// Load a URL and wait for load plus quiet.
    Navigate {
        session_id: String,
        url: String,
        timeout: Duration,
        settle: Duration,
        reply: oneshot::Sender<Result<NavigationReport>>,
    },
    /// Go back, forward or reload and wait like a navigation.
    History {
        session_id: String,
        action: HistoryAction,
        timeout: Duration,
        settle: Duration,
        reply: oneshot::Sender<Result<NavigationReport>>,
    },
    /// Run a function body in the isolated world of the main frame; it may `await`
    /// and its return value comes back as JSON.
    Evaluate { session_id: String, body: String, reply: oneshot::Sender<Result<Value>> },
    /// Capture the viewport.
    Screenshot { session_id: String, reply: oneshot::Sender<Result<Frame>> },
    /// Run an agent operation (see `engine/scripts/agent.js`) in a frame: `frame` is the
    /// path of frame ids from the main frame (empty = main frame).
    Agent { session_id: String, frame: Vec<u32>, op: &'static str, args: Value, reply: oneshot::Sender<Result<Value>> },
    /// Deliver trusted input events; answers the load counter before them (a mark for
    /// `AfterAction`).
    Input { session_id: String, events: Vec<InputEvent>, reply: oneshot::Sender<Result<u64>> },
    /// Run an editing command (`SelectAll`, `Copy`, `Paste`, `Cut`, `Undo`, `Redo`,
    /// `InsertText` with an argument) on the focused element.
    Editing { session_id: String, command: &'static str, argument: Option<String>, reply: oneshot::Sender<Result<u64>> },
    /// After an action: wait for a navigation it started (load + settle), or else for
    /// DOM and network quiet, up to `budget`.
    /// `wait_frame`: first let the page run one animation frame (for input delivered as
    /// events, whose handlers run asynchronously).
    AfterAction { session_id: String, mark: u64, budget: Duration, wait_frame: bool, reply: oneshot::Sender<Result<ActionSettle>> },
    /// Evaluate an expression (or function body) in the page's own world.
    EvaluatePage { session_id: String, expression: String, reply: oneshot::Sender<Result<Value>> },
    /// Set how the next (or every) JavaScript dialog is answered.
    SetDialogPolicy { session_id: String, policy: DialogPolicy, reply: oneshot::Sender<Result<()>> },
    /// Show the session in the takeover window, hide it back offscreen, or only report.
    Watch { session_id: String, change: WatchChange, reply: oneshot::Sender<Result<Value>> },
    /// Close every session (daemon shutdown).
    CloseAll { reply: oneshot::Sender<()> },
}

/// The async side's handle to the engine actor.
#[derive(Debug, Clone)]
pub struct EngineHandle {
    commands: mpsc::UnboundedSender<Command>,
}

impl EngineHandle {
    /// A handle and the receiver the actor (or a test double) consumes.
    pub fn channel() -> (EngineHandle, mpsc::UnboundedReceiver<Command>) {
        let (commands, receiver) = mpsc::unbounded_channel();
        (EngineHandle { commands }, receiver)
    }

    async fn request<T>(
        &self,
        limit: Duration,
        command: impl FnOnce(oneshot::Sender<Result<T>>) -> Command,
    ) -> Result<T> {
        let (reply, answer) = oneshot::channel();
        self.commands.send(command(reply)).map_err(|_| engine_lost())?;
        match tokio::time::timeout(limit, answer).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(engine_lost()),
            Err(_) => Err(Error::new(
                ErrorCode::Timeout,
                format!("the engine did not answer within {} ms", limit.as_millis()),
            )),
        }
    }

    /// Opens a session's host, context and first tab.
    pub async fn open(&self, spec: SessionSpec) -> Result<()> {
        self.request(COMMAND_TIMEOUT, |reply| Command::Open { spec, reply }).await
    }

    /// Closes a session; its WebKit processes exit.
    pub async fn close(&self, session_id: &str) -> Result<()> {
        let session_id = session_id.to_string();
        self.request(COMMAND_TIMEOUT, |reply| Command::Close { session_id, reply }).await
    }

    /// Navigates and waits for load, then for quiet up to `settle`.
    pub async fn navigate(
        &self,
        session_id: &str,
        url: &str,
        timeout: Duration,
        settle: Duration,
    ) -> Result<NavigationReport> {
        let (session_id, url) = (session_id.to_string(), url.to_string());
        let limit = timeout + settle + Duration::from_secs(5);
        self.request(limit, |reply| Command::Navigate { session_id, url, timeout, settle, reply })
            .await
    }

    /// Back, forward or reload, waiting like a navigation.
    pub async fn history(
        &self,
        session_id: &str,
        action: HistoryAction,
        timeout: Duration,
        settle: Duration,
    ) -> Result<NavigationReport> {
        let session_id = session_id.to_string();
        let limit = timeout + settle + Duration::from_secs(5);
        self.request(limit, |reply| Command::History { session_id, action, timeout, settle, reply })
            .await
    }

    /// Runs `body` (a function body that may `await`) in the isolated world.
    pub async fn evaluate(&self, session_id: &str, body: String) -> Result<Value> {
        let session_id = session_id.to_string();
        self.request(COMMAND_TIMEOUT, |reply| Command::Evaluate { session_id, body, reply }).await
    }

    /// Captures the viewport.
    pub async fn screenshot(&self, session_id: &str) -> Result<Frame> {
        let session_id = session_id.to_string();
        self.request(COMMAND_TIMEOUT, |reply| Command::Screenshot { session_id, reply }).await
    }

    /// Runs an agent operation in a frame of the session's active tab.
    pub async fn agent(&self, session_id: &str, frame: Vec<u32>, op: &'static str, args: Value) -> Result<Value> {
        let session_id = session_id.to_string();
        self.request(COMMAND_TIMEOUT, |reply| Command::Agent { session_id, frame, op, args, reply }).await
    }

    /// Delivers trusted input; returns the load mark for [`EngineHandle::after_action`].
    pub async fn input(&self, session_id: &str, events: Vec<InputEvent>) -> Result<u64> {
        let session_id = session_id.to_string();
        self.request(COMMAND_TIMEOUT, |reply| Command::Input { session_id, events, reply }).await
    }

    /// Runs an editing command on the focused element; returns the load mark.
    pub async fn editing(&self, session_id: &str, command: &'static str, argument: Option<String>) -> Result<u64> {
        let session_id = session_id.to_string();
        self.request(COMMAND_TIMEOUT, |reply| Command::Editing { session_id, command, argument, reply }).await
    }

    /// Waits for the consequences of an action (navigation, DOM and network activity).
    pub async fn after_action(&self, session_id: &str, mark: u64, budget: Duration, wait_frame: bool) -> Result<ActionSettle> {
        let session_id = session_id.to_string();
        let limit = budget + Duration::from_secs(35);
        self.request(limit, |reply| Command::AfterAction { session_id, mark, budget, wait_frame, reply }).await
    }

    /// Evaluates in the page's world.
    pub async fn evaluate_page(&self, session_id: &str, expression: String) -> Result<Value> {
        let session_id = session_id.to_string();
        self.request(COMMAND_TIMEOUT, |reply| Command::EvaluatePage { session_id, expression, reply }).await
    }

    /// Sets the dialog policy.
    pub async fn set_dialog_policy(&self, session_id: &str, policy: DialogPolicy) -> Result<()> {
        let session_id = session_id.to_string();
        self.request(COMMAND_TIMEOUT, |reply| Command::SetDialogPolicy { session_id, policy, reply }).await
    }

    /// Shows or hides the takeover window; answers `{shown, done_count}` (and `focus`,
    /// `title` when shown).
    pub async fn watch(&self, session_id: &str, change: WatchChange) -> Result<Value> {
        let session_id = session_id.to_string();
        self.request(COMMAND_TIMEOUT, |reply| Command::Watch { session_id, change, reply }).await
    }

    /// Closes every session; returns when done (or when the engine is gone).
    pub async fn close_all(&self) {
        let (reply, answer) = oneshot::channel();
        if self.commands.send(Command::CloseAll { reply }).is_ok() {
            let _ = tokio::time::timeout(COMMAND_TIMEOUT, answer).await;
        }
    }
}

fn engine_lost() -> Error {
    Error::new(ErrorCode::EngineUnavailable, "the browsing engine is not running")
}
