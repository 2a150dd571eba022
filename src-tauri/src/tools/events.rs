//! `events`: the session's actions and page events after a seq cursor.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Tool, ToolContext};
use crate::error::Error;

/// Input of `events`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EventsInput {
    /// Return events with seq greater than this (default 0).
    #[serde(default)]
    pub after: u64,
    /// At most this many events (1-1000, default 200).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<usize>,
}

pub(super) fn tool() -> Tool {
    Tool::new(
        "events",
        "Read the session's actions and page events (navigation, load, load_failed, crash, popup_blocked, permission_denied, ...) with seq greater than `after`; pass the returned cursor as the next `after`.",
        |context: ToolContext, input: EventsInput| async move {
            let limit = input.limit.unwrap_or(200);
            if !(1..=1000).contains(&limit) {
                return Err(Error::bad_request("limit must be between 1 and 1000"));
            }
            Ok(context.session.events.after(input.after, limit))
        },
    )
}
