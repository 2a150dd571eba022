//! Scrolling: `scroll` (the page, by pixels) and `scroll_into_view` (an element, to the
//! middle of the viewport).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::outcome::action_tool;
use super::page_agent::agent;
use super::targeting::{locate, ElementTarget, TargetSummary};
use super::{Positional, Tool, ToolContext};
use crate::engine::agent::{Rect, ScrollBy, ScrollPosition};
use crate::error::Result;

/// Input of `scroll`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScrollInput {
    /// Pixels to the right (negative: left).
    #[serde(default)]
    dx: f64,
    /// Pixels down (negative: up).
    #[serde(default)]
    dy: f64,
}

/// Output of `scroll`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ScrollOutput {
    /// `scroll`.
    action: &'static str,
    /// Always true.
    ok: bool,
    /// Where the page is scrolled to now.
    #[serde(flatten)]
    position: ScrollPosition,
}

async fn scroll(context: ToolContext, input: ScrollInput) -> Result<ScrollOutput> {
    let position = agent(&context, &[], &ScrollBy { dx: input.dx, dy: input.dy }).await?;
    Ok(ScrollOutput { action: "scroll", ok: true, position })
}

/// `scroll`.
pub(super) fn scroll_tool() -> Tool {
    action_tool("scroll", "Scroll the page by dx, dy pixels.", scroll)
}

/// `scroll_into_view`.
pub(super) fn scroll_into_view_tool() -> Tool {
    action_tool("scroll_into_view", "Scroll until an element is in the middle of the viewport.", scroll_into_view)
        .positional(&[Positional::Target])
}

/// Output of `scroll_into_view`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ScrollIntoViewOutput {
    /// `scroll_into_view`.
    action: &'static str,
    /// Always true.
    ok: bool,
    /// The element.
    target: TargetSummary,
    /// Its box now, in the viewport (CSS px).
    #[serde(rename = "box")]
    element_box: Rect,
    /// Whether its centre is in the viewport.
    in_viewport: bool,
}

async fn scroll_into_view(context: ToolContext, input: ElementTarget) -> Result<ScrollIntoViewOutput> {
    let located = locate(&context, &input, true).await?;
    let (w, h) = (located.info.w, located.info.h);
    Ok(ScrollIntoViewOutput {
        action: "scroll_into_view",
        ok: true,
        target: located.summary(),
        element_box: Rect { x: located.x - w / 2.0, y: located.y - h / 2.0, w, h },
        in_viewport: located.info.in_viewport,
    })
}
