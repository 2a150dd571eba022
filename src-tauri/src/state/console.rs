//! What a tab keeps of what its pages said: console lines and the errors they did not catch
//! (seed 002: 200 and 100 kept per tab), in every frame.

use serde::Serialize;

/// Console lines a tab keeps (seed 002).
pub const CONSOLE_ENTRIES: usize = 200;
/// Page errors a tab keeps (seed 002).
pub const ERROR_ENTRIES: usize = 100;

/// A console line's level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConsoleLevel {
    /// console.log
    Log,
    /// console.info
    Info,
    /// console.warn
    Warn,
    /// console.error
    Error,
    /// console.debug
    Debug,
}

impl ConsoleLevel {
    /// The level named `name` (a page's `console` method), if it is one.
    pub fn named(name: &str) -> Option<ConsoleLevel> {
        Some(match name {
            "log" => ConsoleLevel::Log,
            "info" => ConsoleLevel::Info,
            "warn" => ConsoleLevel::Warn,
            "error" => ConsoleLevel::Error,
            "debug" => ConsoleLevel::Debug,
            _ => return None,
        })
    }
}

/// What a page did not catch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PageErrorKind {
    /// An uncaught exception.
    Exception,
    /// A promise rejected with no handler.
    UnhandledRejection,
}

/// Where in a page a console line was written or an error thrown: the script, line and
/// column when the engine knows them, and the frame's document (flattened into
/// [`ConsoleEntry`] and [`PageError`], and carried by the console's tab signal).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ScriptPlace {
    /// The script's URL, when known.
    pub source: Option<String>,
    /// Line (1-based), when known.
    pub line: Option<u64>,
    /// Column (1-based), when known.
    pub column: Option<u64>,
    /// The URL of the frame's document.
    pub frame_url: String,
}

/// One console line of a page (any frame).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ConsoleEntry {
    /// Its level.
    pub level: ConsoleLevel,
    /// The arguments, as text (bounded).
    pub text: String,
    /// Where it was written.
    #[serde(flatten)]
    pub place: ScriptPlace,
    /// For a message WebKit itself wrote rather than the page's `console` calls: `security`
    /// (a refused load, frame or content), `network` (a failed resource) or `other`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub engine: Option<String>,
    /// When.
    pub time: String,
}

/// An uncaught exception or unhandled promise rejection of a page (any frame).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PageError {
    /// An exception or an unhandled rejection.
    pub kind: PageErrorKind,
    /// The message.
    pub message: String,
    /// The stack, when there is one.
    pub stack: Option<String>,
    /// Where it was thrown.
    #[serde(flatten)]
    pub place: ScriptPlace,
    /// When.
    pub time: String,
}
