//! What a tab's page does as it happens, for the surfaces that follow pages live (the
//! DevTools endpoint): load progress, console lines with their arguments, uncaught errors,
//! dialogs, bindings the page calls, and a session's tabs opening and closing. The engine
//! sends them from the GTK main thread; a receiver that lags loses the oldest (the agent's
//! tools never depend on these: they read the logs in `state/` and `events/`).

use serde_json::Value;
use tokio::sync::broadcast;

use super::console::{ConsoleLevel, ScriptPlace};

/// How many signals a slow receiver may fall behind before it loses the oldest.
pub const SIGNAL_BACKLOG: usize = 1024;

/// One thing a tab's page did.
#[derive(Debug, Clone, PartialEq)]
pub enum TabSignal {
    /// A main-frame load began (a navigation, a reload, a history step).
    LoadStarted {
        /// The URL asked for.
        url: String,
    },
    /// The main frame committed a new document.
    Committed {
        /// Its URL.
        url: String,
        /// Its HTTP status, when fetched over HTTP.
        http_status: Option<u16>,
    },
    /// The main document's `DOMContentLoaded` fired.
    DomContentLoaded,
    /// The main frame finished loading.
    Loaded {
        /// Its URL.
        url: String,
    },
    /// The main frame's load failed.
    LoadFailed {
        /// The URL that failed.
        url: String,
        /// The error's short name.
        net_error: String,
    },
    /// The main frame's URL changed without a new document (history API, fragment).
    SameDocument {
        /// The new URL.
        url: String,
    },
    /// The page's title changed.
    Title {
        /// The new title.
        title: String,
    },
    /// A frame wrote to the console.
    Console {
        /// Its level.
        level: ConsoleLevel,
        /// The arguments: JSON values, or `{description}` for what JSON cannot carry.
        args: Vec<Value>,
        /// Where it was written.
        place: ScriptPlace,
    },
    /// A frame did not catch an exception or a rejection.
    PageError {
        /// Its message.
        message: String,
        /// Its stack, when there is one.
        stack: Option<String>,
        /// The frame's URL.
        frame_url: String,
    },
    /// The main frame called a binding a client installed (`Runtime.addBinding`).
    Binding {
        /// The binding's name.
        name: String,
        /// What the page passed.
        payload: String,
        /// The world it was called in (`None`: the page's own).
        world: Option<String>,
    },
    /// A JavaScript dialog opened and was answered at once by the tab's policy.
    Dialog {
        /// `alert`, `confirm`, `prompt` or `beforeunload`.
        dialog_type: &'static str,
        /// Its message.
        message: String,
        /// Whether it was accepted.
        accepted: bool,
        /// What a prompt was answered with.
        prompt_text: Option<String>,
        /// A prompt's default text.
        default_prompt: Option<String>,
    },
    /// The tab's web process died.
    Crashed,
    /// The viewport changed size (CSS px).
    Resized {
        /// Width.
        width: u32,
        /// Height.
        height: u32,
    },
    /// The tab closed.
    Closed,
}

/// A session's tabs opening and closing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TabsChange {
    /// A tab opened (by the agent, a client, or the page as a popup).
    Opened {
        /// Its id.
        tab: String,
        /// The tab that opened it, for a popup.
        opener: Option<String>,
    },
    /// A tab closed.
    Closed {
        /// Its id.
        tab: String,
    },
}

/// A new sender of `T` signals.
pub fn channel<T: Clone>() -> broadcast::Sender<T> {
    broadcast::channel(SIGNAL_BACKLOG).0
}
