//! `events`: the session's actions and page events after a seq cursor, optionally only
//! one tab's or one type's.

use schemars::JsonSchema;
use serde::Deserialize;

use super::limits::EVENTS_LIMIT;
use super::numbers::Lenient;
use super::{Tool, ToolContext};
use crate::error::Error;

/// Input of `events`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EventsInput {
    /// Return events with seq greater than this, oldest first; without it, the newest.
    #[serde(default, with = "Lenient")]
    pub after: Option<u64>,
    /// At most this many events (1-1000, default 200).
    #[serde(default, with = "Lenient")]
    pub limit: Option<usize>,
    /// Only this open tab's events (an unknown tab is E_TAB_NOT_FOUND).
    #[serde(default)]
    pub tab: Option<String>,
    /// Only events of this type (e.g. `download_finished`, `popup`, `dialog`).
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
}

pub(super) fn tool() -> Tool {
    Tool::session(
        "events",
        "The session's actions and page events after the `after` cursor. Types: navigation, load, load_failed, crash, popup, popup_blocked, download_started, download_finished, file_chooser, dialog, tab_closed, permission_denied, ...; those with seq greater than `after`, optionally only one tab's (`tab`) or one type's (`type`); pass the returned cursor as the next `after`. Without `after`: the newest `limit` events (oldest first) and older_omitted, how many older ones matched.",
        |context: ToolContext, input: EventsInput| async move {
            let limit = input.limit.unwrap_or(EVENTS_LIMIT.default);
            if !(1..=EVENTS_LIMIT.max).contains(&limit) {
                return Err(Error::bad_request(format!("limit must be between 1 and {}", EVENTS_LIMIT.max)));
            }
            context.check_tab_filter(input.tab.as_deref())?;
            Ok(context.session.events.after_matching(input.after, limit, input.tab.as_deref(), input.kind.as_deref()))
        },
    )
}
