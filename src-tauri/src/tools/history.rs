//! `history`: back, forward or reload, waiting like a navigation.

use schemars::JsonSchema;
use serde::Deserialize;

use super::limits::{LOAD_TIMEOUT_MS, NAVIGATION_SETTLE_MS};
use super::{navigate, Tool, ToolContext};
use crate::engine::{HistoryAction, TabRequest};

/// Input of `history`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HistoryInput {
    /// `back`, `forward` or `reload`.
    pub action: HistoryAction,
    /// Upper bound in ms for waiting until the page is quiet (default 3000, max 60000).
    #[serde(default)]
    #[schemars(range(max = NAVIGATION_SETTLE_MS.max))]
    pub settle_ms: Option<u64>,
    /// Upper bound in ms for the load itself (default 30000, max 120000).
    #[serde(default)]
    #[schemars(range(max = LOAD_TIMEOUT_MS.max))]
    pub timeout_ms: Option<u64>,
}

pub(super) fn tool() -> Tool {
    Tool::page(
        "history",
        "Go back, go forward or reload the page, then wait for load and quiet like navigate.",
        |context: ToolContext, input: HistoryInput| async move {
            let (timeout, settle) = navigate::load_waits(input.timeout_ms, input.settle_ms)?;
            let navigation = context.ask(TabRequest::History { action: input.action, timeout, settle }).await?;
            navigate::output(&context, navigation)
        },
    )
}
