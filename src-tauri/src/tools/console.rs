//! `console` and `page_errors` (seed 002: 200 and 100 kept per tab): what the page wrote
//! to its console and the exceptions and rejections it did not catch, in every frame,
//! after a seq cursor. Capture starts before the page's own scripts run.

use schemars::JsonSchema;
use serde::Deserialize;

use super::limits::{CONSOLE_LIMIT, PAGE_ERRORS_LIMIT};
use super::numbers::Lenient;
use super::{Tool, ToolContext};
use crate::events::RingPage;
use crate::state::{ConsoleEntry, ConsoleLevel, PageError};

/// Input of `console`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConsoleInput {
    /// Only entries with seq greater than this, oldest first; without it, the newest.
    #[serde(default, with = "Lenient")]
    after: Option<u64>,
    /// Only this level.
    #[serde(default)]
    level: Option<ConsoleLevel>,
    /// Only lines containing this.
    #[serde(default)]
    text_includes: Option<String>,
    /// At most this many (1-200, default 50).
    #[serde(default, with = "Lenient")]
    limit: Option<usize>,
}

/// Input of `page_errors`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PageErrorsInput {
    /// Only entries with seq greater than this, oldest first; without it, the newest.
    #[serde(default, with = "Lenient")]
    after: Option<u64>,
    /// At most this many (1-100, default 50).
    #[serde(default, with = "Lenient")]
    limit: Option<usize>,
}

/// Output of `console`: the lines, each with its seq, and where to continue.
type ConsoleOutput = RingPage<ConsoleEntry>;

/// Output of `page_errors`: the errors, each with its seq, and where to continue.
type PageErrorsOutput = RingPage<PageError>;

pub(super) fn tools() -> Vec<Tool> {
    vec![
        Tool::tab(
            "console",
            "The tab's console lines (every frame; 200 kept): level, text, source/line/column, frame_url, time. Without `after`, the newest `limit` lines (oldest first) and older_omitted, how many older ones matched; with `after`, the lines after that seq cursor, paging forward (has_more). Filters: level, text_includes. Answers {entries, cursor, has_more}.",
            |context: ToolContext, input: ConsoleInput| async move {
                let limit = CONSOLE_LIMIT.count(input.limit, "limit")?;
                let page: ConsoleOutput = context.tab()?.console.after(input.after, limit, |entry| {
                    input.level.is_none_or(|level| entry.level == level)
                        && input.text_includes.as_deref().is_none_or(|part| entry.text.contains(part))
                });
                Ok(page)
            },
        ),
        Tool::tab(
            "page_errors",
            "The tab's uncaught exceptions and unhandled promise rejections (every frame; 100 kept): kind, message, stack, source/line/column, frame_url, time. Without `after`, the newest `limit` (oldest first) and older_omitted; with `after`, those after that seq cursor, paging forward. Answers {entries, cursor, has_more}.",
            |context: ToolContext, input: PageErrorsInput| async move {
                let limit = PAGE_ERRORS_LIMIT.count(input.limit, "limit")?;
                let page: PageErrorsOutput = context.tab()?.errors.after(input.after, limit, |_| true);
                Ok(page)
            },
        ),
    ]
}
