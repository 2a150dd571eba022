//! `observe`: a light look at the page (url, title, readyState, viewport, counts, text
//! summary), or the same plus a viewport screenshot as base64 PNG.

use base64::Engine as _;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::limits::OBSERVE_MAX_CHARS;
use super::{Presentation, Tool, ToolContext};
use crate::engine::{Frame, TabRequest};
use crate::error::{Error, Result};

const OBSERVE_LIGHT: &str = include_str!("../engine/scripts/observe_light.js");

/// What to observe.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ObserveMode {
    /// State and text summary, no image.
    #[default]
    Light,
    /// The light state plus a PNG of the viewport.
    Screenshot,
}

/// Input of `observe`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ObserveInput {
    /// `light` (default) or `screenshot`.
    #[serde(default)]
    pub mode: ObserveMode,
    /// Characters of visible text in the summary (0-100000, default 2000).
    #[serde(default)]
    #[schemars(range(max = OBSERVE_MAX_CHARS.max))]
    pub max_chars: Option<usize>,
}

pub(super) fn tool() -> Tool {
    Tool::page(
        "observe",
        "Look at the page cheaply: url, title, readyState, viewport and scroll, element and interactive counts, and a visible-text summary of max_chars. mode=screenshot adds a base64 PNG of exactly the viewport.",
        |context: ToolContext, input: ObserveInput| async move {
            let max_chars = OBSERVE_MAX_CHARS.read(input.max_chars, "max_chars")?;
            let mut observation = light(&context, max_chars).await?;
            if let ObserveMode::Screenshot = input.mode {
                observation["screenshot"] = screenshot(&context).await?;
            }
            Ok(observation)
        },
    )
    .presented(Presentation { image_field: Some("screenshot"), ..Presentation::default() })
}

async fn light(context: &ToolContext, max_chars: usize) -> Result<Value> {
    let body = format!("const args = {};\n{OBSERVE_LIGHT}", json!({ "max_chars": max_chars }));
    context.ask(TabRequest::Evaluate { body }).await
}

async fn screenshot(context: &ToolContext) -> Result<Value> {
    let frame: Frame = context.ask(TabRequest::Screenshot).await?;
    let (width, height) = (frame.width, frame.height);
    let png = tokio::task::spawn_blocking(move || crate::engine::png::encode(&frame))
        .await
        .map_err(|error| Error::internal(format!("PNG encoder stopped: {error}")))??;
    Ok(json!({
        "mime_type": "image/png",
        "width": width,
        "height": height,
        "bytes": png.len(),
        "data": base64::engine::general_purpose::STANDARD.encode(&png),
    }))
}
