//! What a session's pages hold, shared by the engine (which writes it from the GTK main
//! thread) and the tools (which read it and wait on it): the tabs with their ids, url,
//! title, refs and call locks; the downloads with their policy and records; the console
//! lines and page errors. Nothing here touches GTK or WebKit: `engine/` is the handle and
//! the actor, this is the state both sides see.

pub mod console;
pub mod downloads;
pub mod init_scripts;
pub mod signals;
pub mod tabs;

pub use console::{ConsoleEntry, ConsoleLevel, PageError, PageErrorKind, ScriptPlace, CONSOLE_ENTRIES, ERROR_ENTRIES};
pub use downloads::Downloads;
pub use signals::{TabSignal, TabsChange};
pub use tabs::{DialogPolicy, LastScreenshot, PageStart, PopupPolicy, PreviousSnapshot, RefTable, TabState, TabStatus, Tabs};
