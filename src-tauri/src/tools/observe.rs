//! `observe`: a light look at the page (url, title, readyState, viewport, counts, text
//! summary), or the same plus a viewport screenshot as base64 PNG.

use base64::Engine as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::limits::OBSERVE_MAX_CHARS;
use super::{Attachment, Presentation, Tool, ToolContext};
use crate::engine::TabRequest;
use crate::error::{Error, ErrorCode, Result};
use crate::imaging::Format;

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

/// Output of `observe`: what `observe_light.js` reads of the page, and the screenshot.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub(crate) struct ObserveOutput {
    /// The page's URL.
    url: String,
    /// Its title.
    title: String,
    /// `document.readyState`: `loading`, `interactive` or `complete`.
    ready_state: String,
    /// `document.visibilityState`.
    visibility_state: String,
    /// The viewport and the document's size and scroll.
    viewport: ObservedViewport,
    /// Elements in the document.
    element_count: u64,
    /// Interactive elements (links, buttons, fields, ...), visible or not.
    interactive_count: u64,
    /// The visible text, whitespace-collapsed, at most `max_chars`.
    text: String,
    /// Characters of the whole visible text.
    text_length: u64,
    /// Whether `text` was cut at `max_chars`.
    truncated: bool,
    /// With mode `screenshot`: a PNG of exactly the viewport.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    screenshot: Option<ViewportScreenshot>,
}

/// The viewport as `observe` reports it (CSS px).
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub(crate) struct ObservedViewport {
    /// `innerWidth`.
    width: i64,
    /// `innerHeight`.
    height: i64,
    /// `devicePixelRatio`, as the page gives it (1, 1.25, ...).
    device_pixel_ratio: serde_json::Number,
    /// Horizontal scroll (rounded).
    scroll_x: i64,
    /// Vertical scroll (rounded).
    scroll_y: i64,
    /// The document's scroll width.
    document_width: i64,
    /// The document's scroll height.
    document_height: i64,
}

/// A screenshot of the viewport.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub(crate) struct ViewportScreenshot {
    /// `image/png`.
    mime_type: String,
    /// Pixels across.
    width: u32,
    /// Pixels down.
    height: u32,
    /// Size of the PNG.
    bytes: usize,
    /// The PNG, base64.
    data: String,
}

pub(super) fn tool() -> Tool {
    Tool::page(
        "observe",
        "Look at the page cheaply: url, title, counts and a text summary. Also readyState, viewport and scroll, element and interactive counts, and a visible-text summary of max_chars. mode=screenshot adds a base64 PNG of exactly the viewport.",
        |context: ToolContext, input: ObserveInput| async move {
            let max_chars = OBSERVE_MAX_CHARS.read(input.max_chars, "max_chars")?;
            let mut observation = light(&context, max_chars).await?;
            if let ObserveMode::Screenshot = input.mode {
                observation.screenshot = Some(screenshot(&context).await?);
            }
            Ok(observation)
        },
    )
    .presented(Presentation { attachment: Some(Attachment::Field("screenshot")), ..Presentation::default() })
}

async fn light(context: &ToolContext, max_chars: usize) -> Result<ObserveOutput> {
    let body = format!("const args = {};\n{OBSERVE_LIGHT}", json!({ "max_chars": max_chars }));
    let observed: serde_json::Value = context.ask(TabRequest::Evaluate { body }).await?;
    serde_json::from_value(observed)
        .map_err(|error| Error::new(ErrorCode::ScriptError, format!("the page's observation is unreadable: {error}")))
}

async fn screenshot(context: &ToolContext) -> Result<ViewportScreenshot> {
    let (png, width, height) = super::screenshot::viewport_png(context).await?;
    Ok(ViewportScreenshot {
        mime_type: Format::Png.mime_type().into(),
        width,
        height,
        bytes: png.len(),
        data: base64::engine::general_purpose::STANDARD.encode(&png),
    })
}
