//! Scrolling: `scroll` (the page, by pixels) and `scroll_into_view` (an element, to the
//! middle of the viewport).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::outcome::act;
use super::page_agent::agent;
use super::targeting::{locate, ElementTarget};
use super::{Tool, ToolContext};
use crate::engine::agent::ScrollBy;
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

async fn scroll(context: ToolContext, input: ScrollInput) -> Result<Value> {
    let position = agent(&context, &[], &ScrollBy { dx: input.dx, dy: input.dy }).await?;
    Ok(json!({ "action": "scroll", "ok": true, "scroll_x": position.scroll_x, "scroll_y": position.scroll_y }))
}

/// `scroll`.
pub(super) fn scroll_tool() -> Tool {
    Tool::page("scroll", "Scroll the page by dx, dy pixels.", |context, input: ScrollInput| {
        act(context, "scroll", move |context| scroll(context, input))
    })
}

/// `scroll_into_view`.
pub(super) fn scroll_into_view_tool() -> Tool {
    Tool::page("scroll_into_view", "Scroll until an element is in the middle of the viewport.", |context, input: ElementTarget| {
        act(context, "scroll_into_view", move |context| scroll_into_view(context, input))
    })
}

async fn scroll_into_view(context: ToolContext, input: ElementTarget) -> Result<Value> {
    let located = locate(&context, &input, true).await?;
    let (width, height) = (located.info.w, located.info.h);
    Ok(json!({ "action": "scroll_into_view", "ok": true, "target": located.summary(),
        "box": { "x": located.x - width / 2.0, "y": located.y - height / 2.0, "w": width, "h": height },
        "in_viewport": located.info.in_viewport }))
}
