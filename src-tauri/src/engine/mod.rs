//! The browsing engine, seen from the async side: a cheap, cloneable [`EngineHandle`]
//! that sends a [`Command`] to the main thread and awaits a oneshot reply.
//!
//! WebKit and GTK objects are not `Send` and must live on the main thread (the GTK main
//! loop Tauri runs). The actor in [`webkit`] owns them all; nothing else touches them.
//! A dropped reply becomes `E_ENGINE_UNAVAILABLE` and every wait has a time limit, so a
//! stuck page can never hang an HTTP request forever.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::error::{Error, ErrorCode, Result};
use crate::events::EventLog;
use crate::state::{Downloads, Tabs};

#[cfg(target_os = "linux")]
pub mod webkit;

/// The WebKitGTK library this process runs with: `(major, minor, micro)`.
#[cfg(target_os = "linux")]
pub fn webkit_version() -> (u32, u32, u32) {
    webkit::runtime_version()
}

/// How keys become platform key values, installed by the engine as it starts: `malo`
/// (the CLI, the MCP server) holds the tools but never runs one, and GDK, which knows the
/// key values, would cost every CLI call its libraries' load time.
static KEYVALS: std::sync::OnceLock<fn(&keys::Key) -> Option<u32>> = std::sync::OnceLock::new();

/// The platform key value of a key (see [`keys`]), if the platform has one; `None` in a
/// process whose engine has not started.
pub fn keyval(key: &keys::Key) -> Option<u32> {
    #[cfg(all(test, target_os = "linux"))]
    let _ = KEYVALS.set(webkit::keyval);
    KEYVALS.get().and_then(|resolve| resolve(key))
}

/// Installs the engine's key values (the engine's start does).
#[cfg(target_os = "linux")]
fn install_keyvals() {
    let _ = KEYVALS.set(webkit::keyval);
}

pub mod agent;
pub mod cpu_share;
pub mod devtools;
pub mod emulation;
#[cfg(test)]
pub(crate) mod fake;
pub mod frames;
pub mod highlight;
pub mod identity;
pub use malo_core::keys;
pub mod main_thread;
pub mod print;
pub mod sandbox;
pub mod storage;
pub mod storage_check;

use main_thread::{MainThread, Ticket};

/// How long a command that does not load pages may take on the main thread.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a command may wait for the main thread to start it before the caller gets
/// `E_BUSY` (and the command is dropped unstarted).
pub const QUEUE_LIMIT: Duration = Duration::from_secs(10);
/// How much longer than its own limits (load and settle, or a print's) a navigation or a
/// print may take before the handle gives up on the engine (the engine answers a timeout
/// itself before that).
const NAVIGATION_MARGIN: Duration = Duration::from_secs(5);
/// How much longer than its settle budget the wait after an action may take: a navigation
/// the action started gets up to 30 s to load, plus the same margin.
const AFTER_ACTION_MARGIN: Duration = Duration::from_secs(35);

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
    /// The session's tabs: the engine registers each tab it opens and keeps its url,
    /// title and window state current.
    pub tabs: Arc<Tabs>,
    /// The session's download policy and records.
    pub downloads: Arc<Downloads>,
    /// The proxy every request of the session goes through (`http://127.0.0.1:<port>`).
    pub proxy: Option<String>,
    /// What the session shows pages about itself (checked already).
    pub identity: identity::Identity,
}

/// Which tab a page request is for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TabAddress {
    /// The session.
    pub session_id: String,
    /// The tab's short id.
    pub tab: String,
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

/// The result of a navigation.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
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
    /// With `net_error: "proxy_failed"`: what went wrong with the upstream proxy
    /// (`proxy_unreachable`, `proxy_auth_failed`, `proxy_tunnel_failed`,
    /// `proxy_protocol_error`, `proxy_blocked`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_error: Option<String>,
    /// With `net_error: "blocked_by_policy"`: the person's rule that refused the site.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_rule: Option<String>,
    /// How the wait for a quiet page went.
    pub settle: SettleReport,
}

/// How the wait for DOM and network quiet after `load` went.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, schemars::JsonSchema)]
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

/// A captured picture of the page, as straight (non-premultiplied) RGBA (the core's picture type).
pub use malo_core::imaging::Frame;

/// What a screenshot captures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Capture {
    /// The whole document (below and right of the viewport too; fixed elements drawn once,
    /// at their place with the document scrolled to the top), else exactly the viewport.
    pub whole_document: bool,
    /// Leave what the page does not paint transparent (else the view's white background).
    pub transparent: bool,
    /// Only this part of the picture, in its device pixels (clamped to it): what lies
    /// outside is never converted or copied (an element of a tall document).
    pub part: Option<malo_core::imaging::PixelRect>,
}

impl Capture {
    /// Exactly the viewport, on the view's background.
    pub const VIEWPORT: Capture = Capture { whole_document: false, transparent: false, part: None };
    /// The whole document, on the view's background.
    pub const DOCUMENT: Capture = Capture { whole_document: true, transparent: false, part: None };
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

impl Modifiers {
    /// The state with each of `held` down.
    pub fn of(held: &[keys::ModifierKey]) -> Modifiers {
        let mut modifiers = Modifiers::default();
        for modifier in held {
            modifiers.set(*modifier, true);
        }
        modifiers
    }

    /// Sets whether `modifier` is held.
    pub fn set(&mut self, modifier: keys::ModifierKey, held: bool) {
        match modifier {
            keys::ModifierKey::Shift => self.shift = held,
            keys::ModifierKey::Control => self.control = held,
            keys::ModifierKey::Alt => self.alt = held,
            keys::ModifierKey::Meta => self.meta = held,
        }
    }
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

/// An editing command run on the focused element (what Meta+A/C/V/X/Z do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditingCommand {
    /// Select everything.
    SelectAll,
    /// Copy the selection.
    Copy,
    /// Paste.
    Paste,
    /// Cut the selection.
    Cut,
    /// Undo.
    Undo,
    /// Redo.
    Redo,
}

impl EditingCommand {
    /// WebKit's name for it.
    pub fn name(self) -> &'static str {
        match self {
            EditingCommand::SelectAll => "SelectAll",
            EditingCommand::Copy => "Copy",
            EditingCommand::Paste => "Paste",
            EditingCommand::Cut => "Cut",
            EditingCommand::Undo => "Undo",
            EditingCommand::Redo => "Redo",
        }
    }
}

/// What can be asked of one tab.
#[derive(Debug)]
pub enum TabRequest {
    /// Load a URL and wait for load plus quiet.
    Navigate { url: String, timeout: Duration, settle: Duration },
    /// Go back, forward or reload and wait like a navigation.
    History { action: HistoryAction, timeout: Duration, settle: Duration },
    /// Run a function body in the isolated world of the main frame; it may `await` and
    /// its return value comes back as JSON.
    Evaluate { body: String },
    /// Evaluate an expression (or function body) in the page's own world.
    EvaluatePage { expression: String },
    /// Capture the viewport or the whole document (straight RGBA, device pixels).
    Screenshot(Capture),
    /// Run a page agent operation in a frame: `frame` is the path of frame ids from the
    /// main frame (empty = main frame).
    Agent { frame: Vec<u32>, op: agent::AgentOp, args: Value },
    /// Deliver trusted input events; answers the load counter before them (a mark for
    /// `AfterAction`).
    Input { events: Vec<InputEvent> },
    /// Run an editing command on the focused element; answers the load mark.
    Editing { command: EditingCommand },
    /// After an action: wait for a navigation it started (load + settle), or else for
    /// DOM and network quiet, up to `budget`. `wait_frame`: first let the page run one
    /// animation frame (for input delivered as events, whose handlers run asynchronously).
    AfterAction { mark: u64, budget: Duration, wait_frame: bool },
    /// Show the tab in the takeover window, hide it back offscreen, or only report.
    Watch(WatchChange),
    /// Answer the tab's next file chooser with these files (absolute paths) instead of
    /// cancelling it.
    ArmFileChooser { files: Vec<String> },
    /// Wait until the armed files were taken by a chooser (answers true), or `timeout`
    /// passes (answers false, and the files are disarmed).
    AwaitFileChooser { timeout: Duration },
    /// What the DevTools endpoint asks (see [`devtools`]).
    Devtools(devtools::DevtoolsRequest),
    /// Print the page to a PDF file (see [`print`]); answers once the file is complete.
    Print(print::PrintJob),
    /// What a live view in a person's browser asks (see [`frames`]).
    Live(frames::LiveRequest),
    /// Show, clear or report the outline drawn for a person (see [`highlight`]).
    Highlight(highlight::HighlightRequest),
}

impl TabRequest {
    /// The request's name in the main thread's figures.
    fn kind(&self) -> &'static str {
        match self {
            TabRequest::Navigate { .. } => "navigate",
            TabRequest::History { .. } => "history",
            TabRequest::Evaluate { .. } => "evaluate",
            TabRequest::EvaluatePage { .. } => "evaluate_page",
            TabRequest::Screenshot(_) => "screenshot",
            TabRequest::Agent { op, .. } => op.name(),
            TabRequest::Input { .. } => "input",
            TabRequest::Editing { .. } => "editing",
            TabRequest::AfterAction { .. } => "after_action",
            TabRequest::Watch(_) => "watch",
            TabRequest::ArmFileChooser { .. } => "arm_file_chooser",
            TabRequest::AwaitFileChooser { .. } => "await_file_chooser",
            TabRequest::Devtools(request) => request.kind(),
            TabRequest::Print(_) => "print",
            TabRequest::Live(frames::LiveRequest::Stream(_)) => "live_stream",
            TabRequest::Live(frames::LiveRequest::Input(_)) => "live_input",
            TabRequest::Highlight(_) => "highlight",
        }
    }

    /// How long the handle waits for the engine's answer.
    fn time_limit(&self) -> Duration {
        match self {
            TabRequest::Navigate { timeout, settle, .. } | TabRequest::History { timeout, settle, .. } => {
                *timeout + *settle + NAVIGATION_MARGIN
            }
            TabRequest::AfterAction { budget, .. } => *budget + AFTER_ACTION_MARGIN,
            TabRequest::AwaitFileChooser { timeout } => *timeout + COMMAND_TIMEOUT,
            TabRequest::Devtools(request) => request.time_limit(NAVIGATION_MARGIN, COMMAND_TIMEOUT),
            TabRequest::Print(_) => print::PRINT_TIMEOUT + NAVIGATION_MARGIN,
            _ => COMMAND_TIMEOUT,
        }
    }
}

/// What can be asked of a session as a whole.
#[derive(Debug)]
pub enum SessionRequest {
    /// Open a tab on about:blank (it becomes the selected tab); answers its id.
    NewTab,
    /// Close a tab; its webview and what it holds go.
    CloseTab { tab: String },
    /// Cancel a running download; answers whether one was running.
    CancelDownload { download_id: String },
    /// The position the session's pages read from now on (`E_UNSUPPORTED` when its
    /// context is a profile's that another open session shares).
    SetGeolocation(identity::Geolocation),
    /// Permissions granted from now on, besides the session's earlier grants.
    GrantPermissions(Vec<(identity::Permission, Option<Vec<String>>)>),
    /// Something of the session's cookies or localStorage (see [`storage`]).
    Storage(storage::StorageRequest),
    /// The scale factor every page's `devicePixelRatio` follows (the daemon's screen's);
    /// answers a JSON number.
    ScreenScale,
    /// Something of what the session emulates (see [`emulation`]).
    Emulation(emulation::EmulationRequest),
}

/// What the engine answers.
#[derive(Debug)]
pub enum Answer {
    /// Nothing to say.
    Done,
    /// A JSON value (script results, agent results, window reports).
    Value(Value),
    /// A navigation's report.
    Navigation(NavigationReport),
    /// A captured viewport.
    Frame(Frame),
    /// A load mark (see `TabRequest::Input`).
    Mark(u64),
    /// How the page settled after an action.
    Settle(ActionSettle),
    /// A tab id.
    Tab(String),
    /// Yes or no.
    Flag(bool),
    /// A number (an id, a count).
    Count(u64),
}

/// A type an [`Answer`] can be read as.
pub trait FromAnswer: Sized {
    /// `None` when the answer is of another kind.
    fn from_answer(answer: Answer) -> Option<Self>;
}

macro_rules! from_answer {
    ($($variant:ident($type:ty)),* $(,)?) => {
        $(impl FromAnswer for $type {
            fn from_answer(answer: Answer) -> Option<Self> {
                match answer {
                    Answer::$variant(value) => Some(value),
                    _ => None,
                }
            }
        })*
    };
}
from_answer!(Value(Value), Navigation(NavigationReport), Frame(Frame), Mark(u64), Settle(ActionSettle), Tab(String), Flag(bool));

/// An id or a count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count(pub u64);

impl FromAnswer for Count {
    fn from_answer(answer: Answer) -> Option<Self> {
        match answer {
            Answer::Count(count) => Some(Count(count)),
            _ => None,
        }
    }
}

impl FromAnswer for () {
    fn from_answer(answer: Answer) -> Option<Self> {
        matches!(answer, Answer::Done).then_some(())
    }
}

/// The reply channel of a command.
pub type Reply<T> = oneshot::Sender<Result<T>>;

/// Requests to the main-thread actor. Each carries its reply channel.
#[derive(Debug)]
pub enum Command {
    /// Create a session's context and first tab.
    Open { spec: SessionSpec, reply: Reply<()> },
    /// Drop the session's tabs and context (its WebKit processes exit).
    Close { session_id: String, reply: Reply<()> },
    /// Something of a session as a whole.
    Session { session_id: String, request: SessionRequest, reply: Reply<Answer> },
    /// Something of one tab.
    Page { target: TabAddress, request: TabRequest, reply: Reply<Answer> },
    /// Close every session (daemon shutdown).
    CloseAll { reply: oneshot::Sender<()> },
    /// Tell every page whether it yields a CPU: the tabs in `served` are served, every
    /// other yields; none served, all share (`cpu_share`). No reply.
    ShareCpus { served: Vec<TabAddress> },
}

impl Command {
    /// The command's name in the main thread's figures.
    pub fn kind(&self) -> &'static str {
        match self {
            Command::Open { .. } => "open",
            Command::Close { .. } => "close",
            Command::Session { request: SessionRequest::NewTab, .. } => "tab_new",
            Command::Session { request: SessionRequest::CloseTab { .. }, .. } => "tab_close",
            Command::Session { request: SessionRequest::CancelDownload { .. }, .. } => "cancel_download",
            Command::Session { request: SessionRequest::SetGeolocation(_), .. } => "set_geolocation",
            Command::Session { request: SessionRequest::GrantPermissions(_), .. } => "grant_permissions",
            Command::Session { request: SessionRequest::Storage(request), .. } => request.kind(),
            Command::Session { request: SessionRequest::ScreenScale, .. } => "screen_scale",
            Command::Session { request: SessionRequest::Emulation(request), .. } => request.kind(),
            Command::Page { request, .. } => request.kind(),
            Command::CloseAll { .. } => "close_all",
            Command::ShareCpus { .. } => "share_cpus",
        }
    }
}

/// A command in the queue to the main thread.
#[derive(Debug)]
pub struct Queued {
    /// What to do.
    pub command: Command,
    /// When it was sent.
    pub sent: Instant,
    /// Started, or given up by its caller.
    pub ticket: Arc<Ticket>,
}

/// The actor's end of the queue, and the figures it keeps.
#[derive(Debug)]
pub struct EngineQueue {
    /// The commands, in order.
    pub receiver: mpsc::UnboundedReceiver<Queued>,
    /// Where the main thread records how it is doing.
    pub main_thread: Arc<MainThread>,
}

/// The async side's handle to the engine actor.
#[derive(Debug, Clone)]
pub struct EngineHandle {
    commands: mpsc::UnboundedSender<Queued>,
    main_thread: Arc<MainThread>,
    cpu_share: Arc<cpu_share::CpuShare>,
}

impl EngineHandle {
    /// A handle and the queue the actor (or a test double) consumes.
    pub fn channel() -> (EngineHandle, EngineQueue) {
        let (commands, receiver) = mpsc::unbounded_channel();
        let main_thread = Arc::new(MainThread::default());
        let sender = commands.clone();
        let cpu_share = cpu_share::CpuShare::new(Box::new(move |served| {
            let queued = Queued { command: Command::ShareCpus { served }, sent: Instant::now(), ticket: Arc::default() };
            let _ = sender.send(queued);
        }));
        (EngineHandle { commands, main_thread: main_thread.clone(), cpu_share }, EngineQueue { receiver, main_thread })
    }

    /// Marks `tab` as served by an interactive call until the guard drops: meanwhile other
    /// tabs' pages keep off one CPU (`cpu_share`).
    pub fn serve(&self, tab: TabAddress) -> cpu_share::Served {
        self.cpu_share.serve(tab)
    }

    /// How the main thread is doing.
    pub fn main_thread(&self) -> &MainThread {
        &self.main_thread
    }

    /// Sends a command and waits for its answer: `E_BUSY` if the main thread has not
    /// started it within [`QUEUE_LIMIT`] (it is then dropped), or if it ran out of `limit`
    /// while the main thread was stalled; `E_TIMEOUT` if it ran out of `limit` on its own.
    async fn request<T>(&self, limit: Duration, command: impl FnOnce(Reply<T>) -> Command) -> Result<T> {
        let (reply, mut answer) = oneshot::channel();
        let ticket = Arc::new(Ticket::default());
        let queued = Queued { command: command(reply), sent: Instant::now(), ticket: ticket.clone() };
        self.commands.send(queued).map_err(|_| engine_lost())?;
        let mark = self.main_thread.mark();
        let begun = Instant::now();
        let queue_limit = QUEUE_LIMIT.min(limit);
        let mut started_in_time = false;
        loop {
            let waited = begun.elapsed();
            let next_check = if started_in_time { limit.saturating_sub(waited) } else { queue_limit.saturating_sub(waited) };
            match tokio::time::timeout(next_check, &mut answer).await {
                Ok(Ok(result)) => return result,
                Ok(Err(_)) => return Err(engine_lost()),
                Err(_) if !started_in_time => {
                    if ticket.abandon() {
                        return Err(busy(begun.elapsed(), false, &self.main_thread));
                    }
                    started_in_time = true;
                }
                Err(_) => {
                    let available = self.main_thread.available_since(&mark);
                    if available < limit / 2 {
                        return Err(busy(begun.elapsed(), true, &self.main_thread));
                    }
                    return Err(Error::new(ErrorCode::Timeout, format!("the engine did not answer within {} ms", limit.as_millis())));
                }
            }
        }
    }

    /// Opens a session's context and first tab.
    pub async fn open(&self, spec: SessionSpec) -> Result<()> {
        self.request(COMMAND_TIMEOUT, |reply| Command::Open { spec, reply }).await
    }

    /// Closes a session; its WebKit processes exit.
    pub async fn close(&self, session_id: &str) -> Result<()> {
        let session_id = session_id.to_string();
        self.request(COMMAND_TIMEOUT, |reply| Command::Close { session_id, reply }).await
    }

    /// Asks something of a session; the answer is read as `T`.
    pub async fn session<T: FromAnswer>(&self, session_id: &str, request: SessionRequest) -> Result<T> {
        let session_id = session_id.to_string();
        let answer = self.request(COMMAND_TIMEOUT, |reply| Command::Session { session_id, request, reply }).await?;
        T::from_answer(answer).ok_or_else(wrong_answer)
    }

    /// Asks something of a tab; the answer is read as `T`.
    pub async fn tab<T: FromAnswer>(&self, target: TabAddress, request: TabRequest) -> Result<T> {
        let limit = request.time_limit();
        let answer = self.request(limit, |reply| Command::Page { target, request, reply }).await?;
        T::from_answer(answer).ok_or_else(wrong_answer)
    }

    /// Closes every session; returns when done (or when the engine is gone).
    pub async fn close_all(&self) {
        let (reply, answer) = oneshot::channel();
        let queued = Queued { command: Command::CloseAll { reply }, sent: Instant::now(), ticket: Arc::default() };
        if self.commands.send(queued).is_ok() {
            let _ = tokio::time::timeout(COMMAND_TIMEOUT, answer).await;
        }
    }
}

fn wrong_answer() -> Error {
    Error::internal("the engine answered with another kind of value than asked for")
}

/// The main thread could not get to a call in time (`started`: it had begun the call, so
/// some of it may have been done).
fn busy(waited: Duration, started: bool, main_thread: &MainThread) -> Error {
    let report = main_thread.report();
    Error::new(
        ErrorCode::Busy,
        format!("the browser engine was busy and did not get to this call within {} ms; retry it", waited.as_millis()),
    )
    .with_details(serde_json::json!({
        "waited_ms": waited.as_millis() as u64,
        "started": started,
        "main_thread": { "stall_max_ms": report.stall.max_ms, "queue_wait_p99_ms": report.queue_wait.p99_ms },
    }))
}

fn engine_lost() -> Error {
    Error::new(ErrorCode::EngineUnavailable, "the browsing engine is not running")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_call_the_main_thread_never_starts_is_busy_and_dropped() {
        let (handle, mut queue) = EngineHandle::channel();
        let error =
            handle.request::<()>(Duration::from_millis(150), |reply| Command::Close { session_id: "s".into(), reply }).await.unwrap_err();
        assert_eq!(error.code, ErrorCode::Busy);
        assert_eq!(error.details["started"], false);
        // The command is still queued, but the main thread skips it.
        let queued = queue.receiver.recv().await.unwrap();
        assert!(!queued.ticket.start());
    }

    #[tokio::test]
    async fn a_started_call_is_busy_if_the_thread_stalled_and_a_timeout_if_not() {
        let (handle, mut queue) = EngineHandle::channel();
        let thread = queue.main_thread.clone();
        thread.beat(Duration::ZERO);
        // The thread starts each command, then never answers; it stalls (no heartbeat).
        let runner = tokio::spawn(async move {
            let mut kept = Vec::new();
            while let Some(queued) = queue.receiver.recv().await {
                assert!(queued.ticket.start());
                kept.push(queued);
            }
        });
        let error =
            handle.request::<()>(Duration::from_millis(300), |reply| Command::Close { session_id: "s".into(), reply }).await.unwrap_err();
        assert_eq!((error.code, &error.details["started"]), (ErrorCode::Busy, &serde_json::json!(true)), "{}", error.message);

        // Now the thread beats on time: running out of time is the call's own doing.
        let beating = thread.clone();
        let heart = tokio::spawn(async move {
            loop {
                beating.beat(Duration::ZERO);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        let error =
            handle.request::<()>(Duration::from_millis(300), |reply| Command::Close { session_id: "s".into(), reply }).await.unwrap_err();
        assert_eq!(error.code, ErrorCode::Timeout, "{}", error.message);
        heart.abort();
        runner.abort();
    }
}
