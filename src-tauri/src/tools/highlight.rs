//! `highlight`: shows a person which element the agent means. The element is scrolled into
//! view and the engine draws an outline around it over the page (see
//! `crate::engine::highlight`), seen in the takeover window and in a live view, never by the
//! page, and left out of screenshots unless one asks for it (`screenshot {highlight:
//! true}`, drawn by [`draw_on`]). It stays until `clear`, another highlight, or its
//! `duration_ms`.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::screenshot::CssRect;
use super::targeting::{locate, ElementTarget, TargetSummary};
use super::{Positional, Tool, ToolContext};
use crate::engine::highlight::{HighlightBox, HighlightRequest, HIGHLIGHT_RGB, HIGHLIGHT_WIDTH};
use crate::engine::{Frame, TabRequest};
use crate::error::{Error, ErrorCode, Result};

/// The longest `duration_ms`: ten minutes.
const HIGHLIGHT_MAX_MS: u64 = 600_000;

/// Input of `highlight`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HighlightInput {
    /// The element: a ref from snapshot (e.g. e12).
    #[serde(default, rename = "ref")]
    element_ref: Option<String>,
    /// The element: a CSS selector (` >>> ` pierces open shadow roots).
    #[serde(default)]
    selector: Option<String>,
    /// Remove the outline instead.
    #[serde(default)]
    clear: bool,
    /// Remove it after this many ms (default: stays; max 600000).
    #[serde(default)]
    #[schemars(range(min = 1, max = HIGHLIGHT_MAX_MS))]
    duration_ms: Option<u64>,
}

/// Output of `highlight`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct HighlightOutput {
    /// The element outlined (absent with `clear`).
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<TargetSummary>,
    /// Its box in the viewport (CSS px), where the outline stays.
    #[serde(rename = "box", skip_serializing_if = "Option::is_none")]
    area: Option<HighlightBox>,
    /// With `clear`: whether an outline was shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    cleared: Option<bool>,
}

pub(super) fn tool() -> Tool {
    Tool::page(
        "highlight",
        "Outline an element for a person watching (takeover window, live view); the page never sees it and screenshots leave it out unless highlight=true. clear removes it.",
        |context: ToolContext, input: HighlightInput| async move { highlight(&context, input).await },
    )
    .positional(&[Positional::Target])
}

async fn highlight(context: &ToolContext, input: HighlightInput) -> Result<HighlightOutput> {
    let target = ElementTarget { element_ref: input.element_ref, selector: input.selector, ..ElementTarget::default() };
    if input.clear {
        if let Some(field) =
            [("ref", target.element_ref.is_some()), ("selector", target.selector.is_some()), ("duration_ms", input.duration_ms.is_some())]
                .into_iter()
                .find_map(|(field, given)| given.then_some(field))
        {
            return Err(refused(field, "clear takes nothing else"));
        }
        let cleared: bool = context.ask(TabRequest::Highlight(HighlightRequest::Clear)).await?;
        return Ok(HighlightOutput { target: None, area: None, cleared: Some(cleared) });
    }
    let duration = match input.duration_ms {
        Some(0) => return Err(refused("duration_ms", "must be at least 1")),
        Some(ms) if ms > HIGHLIGHT_MAX_MS => return Err(refused("duration_ms", &format!("must be at most {HIGHLIGHT_MAX_MS}"))),
        other => other.map(Duration::from_millis),
    };
    match (&target.element_ref, &target.selector) {
        (Some(_), Some(_)) => return Err(refused("selector", "give a ref or a selector, not both")),
        (None, None) => return Err(refused("ref", "give the element (a ref or a selector), or clear")),
        _ => {}
    }
    let located = locate(context, &target, true).await?;
    let (width, height) = (located.info.w, located.info.h);
    if !located.info.visible || width < 1.0 || height < 1.0 {
        let message = format!("the element {} has no box to outline", located.describe());
        return Err(Error::new(ErrorCode::NotVisible, message).with_details(json!({ "target": located.summary() })));
    }
    let area = HighlightBox { x: located.x - width / 2.0, y: located.y - height / 2.0, width, height };
    let _: () = context.ask(TabRequest::Highlight(HighlightRequest::Show { area, duration })).await?;
    Ok(HighlightOutput { target: Some(located.summary()), area: Some(area), cleared: None })
}

/// The outline shown on the tab now, as a rectangle of the document (CSS px) with the page
/// scrolled to `scroll`: where a person sees it.
pub(super) async fn current(context: &ToolContext, scroll: (f64, f64)) -> Result<Option<CssRect>> {
    let shown: serde_json::Value = context.ask(TabRequest::Highlight(HighlightRequest::Current)).await?;
    let area: Option<HighlightBox> = serde_json::from_value(shown).map_err(|error| Error::internal(error.to_string()))?;
    Ok(area.map(|area| CssRect { x: area.x + scroll.0, y: area.y + scroll.1, width: area.width, height: area.height }))
}

/// Draws the outline of `area` (document CSS px) on a picture of `region` at `scale` image
/// pixels per CSS pixel, as the engine draws it for a person.
pub(super) fn draw_on(picture: &mut Frame, area: CssRect, region: CssRect, scale: f64) {
    let line = (HIGHLIGHT_WIDTH * scale).round().max(1.0);
    let left = ((area.x - region.x) * scale).round() - line;
    let top = ((area.y - region.y) * scale).round() - line;
    let right = ((area.x + area.width - region.x) * scale).round() + line;
    let bottom = ((area.y + area.height - region.y) * scale).round() + line;
    let [red, green, blue] = HIGHLIGHT_RGB;
    let (width, height) = (picture.width as f64, picture.height as f64);
    let mut paint = |x: f64, y: f64| {
        if x >= 0.0 && y >= 0.0 && x < width && y < height {
            picture.set_pixel(x as u32, y as u32, [red, green, blue, 255]);
        }
    };
    let mut y = top.max(0.0);
    while y < bottom.min(height) {
        let mut x = left.max(0.0);
        while x < right.min(width) {
            let inside = x >= left + line && x < right - line && y >= top + line && y < bottom - line;
            if !inside {
                paint(x, y);
            }
            x += 1.0;
        }
        y += 1.0;
    }
}

/// `E_BAD_REQUEST` naming the field.
fn refused(field: &str, message: &str) -> Error {
    Error::bad_request(format!("{field}: {message}")).with_details(json!({ "field": field }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outline_is_drawn_around_the_box_and_clipped_to_the_picture() {
        let mut picture = Frame::filled(100, 100, [255, 255, 255, 255]);
        let region = CssRect { x: 0.0, y: 50.0, width: 50.0, height: 50.0 };
        draw_on(&mut picture, CssRect { x: 10.0, y: 60.0, width: 20.0, height: 20.0 }, region, 2.0);
        let magenta = [HIGHLIGHT_RGB[0], HIGHLIGHT_RGB[1], HIGHLIGHT_RGB[2], 255];
        assert_eq!(picture.pixel(15, 15), magenta, "the line, outside the box");
        assert_eq!(picture.pixel(20, 20), [255, 255, 255, 255], "the box itself stays");
        assert_eq!(picture.pixel(40, 40), [255, 255, 255, 255]);
        assert_eq!(picture.pixel(5, 5), [255, 255, 255, 255], "nothing outside the line");
        draw_on(&mut picture, CssRect { x: -10.0, y: 0.0, width: 500.0, height: 500.0 }, region, 2.0);
    }
}
