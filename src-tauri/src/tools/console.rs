//! `console` and `page_errors` (seed 002: 200 and 100 kept per tab): what the page wrote
//! to its console and the exceptions and rejections it did not catch, in every frame,
//! after a seq cursor. Capture starts before the page's own scripts run.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::limits::{CONSOLE_LIMIT, PAGE_ERRORS_LIMIT};
use super::numbers::Lenient;
use super::since::{Earlier, Since};
use super::{Presentation, Tool, ToolContext};
use crate::events::{RingPage, SeqRing};
use crate::state::{ConsoleEntry, ConsoleLevel, PageError};

/// Input of `console`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConsoleInput {
    /// Only entries after this seq, oldest first. Without it, the newest.
    #[serde(default, with = "Lenient")]
    after: Option<u64>,
    /// `navigation`: only the tab's current page's (since its last main-frame navigation);
    /// `all`: every line kept (the default over HTTP).
    #[serde(default)]
    since: Since,
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
    /// Only entries after this seq, oldest first. Without it, the newest.
    #[serde(default, with = "Lenient")]
    after: Option<u64>,
    /// `navigation`: only the tab's current page's (since its last main-frame navigation);
    /// `all`: every error kept (the default over HTTP).
    #[serde(default)]
    since: Since,
    /// At most this many (1-100, default 50).
    #[serde(default, with = "Lenient")]
    limit: Option<usize>,
}

/// A page of a tab's log, and with `since: "navigation"` what it left out.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct PageList<T> {
    /// The entries, each with its seq, and where to continue.
    #[serde(flatten)]
    page: RingPage<T>,
    /// With `since: "navigation"`: the earlier entries it left out, when there are.
    #[serde(flatten)]
    earlier: Option<Earlier>,
}

/// Output of `console`: the lines, each with its seq, and where to continue.
type ConsoleOutput = PageList<ConsoleEntry>;

/// Output of `page_errors`: the errors, each with its seq, and where to continue.
type PageErrorsOutput = PageList<PageError>;

/// Lists of the current page over MCP and the CLI.
fn current_page() -> Presentation {
    Presentation { current_page: true, ..Presentation::default() }
}

pub(super) fn tools() -> Vec<Tool> {
    vec![
        Tool::tab(
            "console",
            "The tab's console lines (every frame; 200 kept): level, text, source/line/column, frame_url, time. Without `after`, the newest `limit` lines (oldest first) and older_omitted, how many older ones matched; with `after`, the lines after that seq cursor, paging forward (has_more). since=navigation: only the current page's (over MCP and the CLI the default without after). Filters: level, text_includes. Answers {entries, cursor, has_more}.",
            |context: ToolContext, input: ConsoleInput| async move {
                let limit = CONSOLE_LIMIT.count(input.limit, "limit")?;
                let tab = context.tab()?;
                let keep = |entry: &ConsoleEntry| {
                    input.level.is_none_or(|level| entry.level == level)
                        && input.text_includes.as_deref().is_none_or(|part| entry.text.contains(part))
                };
                let floor = input.since.page_floor(tab);
                let output: ConsoleOutput = list(&tab.console, input.after, floor, limit, keep, ("line", "lines"));
                Ok(output)
            },
        )
        .presented(current_page()),
        Tool::tab(
            "page_errors",
            "The tab's uncaught exceptions and unhandled promise rejections. Every frame; 100 kept: kind, message, stack, source/line/column, frame_url, time. Without `after`, the newest `limit` (oldest first) and older_omitted; with `after`, those after that seq cursor, paging forward. since=navigation: only the current page's (over MCP and the CLI the default without after). Answers {entries, cursor, has_more}.",
            |context: ToolContext, input: PageErrorsInput| async move {
                let limit = PAGE_ERRORS_LIMIT.count(input.limit, "limit")?;
                let tab = context.tab()?;
                let floor = input.since.page_floor(tab);
                let output: PageErrorsOutput = list(&tab.errors, input.after, floor, limit, |_| true, ("error", "errors"));
                Ok(output)
            },
        )
        .presented(current_page()),
    ]
}

/// A page of `ring` after `after` that `keep` admits; with `since` (a list of the current
/// page), only entries after it, and what it left out, named `nouns`.
fn list<T: Clone>(
    ring: &SeqRing<T>,
    after: Option<u64>,
    since: Option<u64>,
    limit: usize,
    keep: impl Fn(&T) -> bool,
    nouns: (&str, &str),
) -> PageList<T> {
    let (page, earlier) = ring.after_since(after, since.unwrap_or(0), limit, keep);
    PageList { page, earlier: since.and_then(|_| Earlier::of(earlier, nouns.0, nouns.1)) }
}
