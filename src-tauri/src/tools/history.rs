//! `history`: back, forward or reload, waiting like a navigation.

use super::navigate::load_input;
use super::{navigate, Tool, ToolContext};
use crate::engine::{HistoryAction, TabRequest};

load_input! {
    /// Input of `history`.
    HistoryInput {
        /// `back`, `forward` or `reload`.
        action: HistoryAction,
    }
}

pub(super) fn tool() -> Tool {
    Tool::page(
        "history",
        "Go back, go forward or reload the page, then wait for load and quiet like navigate.",
        |context: ToolContext, input: HistoryInput| async move {
            let (timeout, settle) = input.load_waits()?;
            let navigation = context.ask(TabRequest::History { action: input.action, timeout, settle }).await?;
            navigate::output(&context, navigation)
        },
    )
    .long()
    .presented(super::Presentation { mcp_lean: Some(super::Lean::Navigation), ..super::Presentation::default() })
}
