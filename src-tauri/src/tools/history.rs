//! `history`: back, forward or reload, waiting like a navigation.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{millis, navigate, Tool, ToolContext};
use crate::engine::{HistoryAction, TabRequest};

/// Input of `history`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HistoryInput {
    /// `back`, `forward` or `reload`.
    pub action: HistoryAction,
    /// Upper bound in ms for waiting until the page is quiet (default 3000, max 60000).
    #[serde(default)]
    #[schemars(range(max = 60000))]
    pub settle_ms: Option<u64>,
    /// Upper bound in ms for the load itself (default 30000, max 120000).
    #[serde(default)]
    #[schemars(range(max = 120000))]
    pub timeout_ms: Option<u64>,
}

pub(super) fn tool() -> Tool {
    Tool::page(
        "history",
        "Go back, go forward or reload the page, then wait for load and quiet like navigate.",
        |context: ToolContext, input: HistoryInput| async move {
            let timeout = millis(input.timeout_ms, 30_000, 120_000, "timeout_ms")?;
            let settle = millis(input.settle_ms, 3_000, 60_000, "settle_ms")?;
            let navigation = context.ask(TabRequest::History { action: input.action, timeout, settle }).await?;
            navigate::output(&context, navigation)
        },
    )
}
