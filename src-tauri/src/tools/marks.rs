//! Set-of-marks for `screenshot {marks: true}`: every visible interactive element of the
//! snapshot (all frames), its ref drawn over it on the captured picture. The elements and
//! their refs come from a snapshot taken at that moment (so `click {ref}` with a ref read
//! off the picture hits that element); the drawing happens on the image, in Rust, so the
//! page never sees or disturbs it.

use schemars::JsonSchema;
use serde::Serialize;

use super::screenshot::CssRect;
use super::targeting::TargetSummary;
use super::ToolContext;
use crate::engine::Frame;
use crate::error::Result;
use crate::imaging::{self, Mark};

/// A marked element as `screenshot` lists it (`{ref, role, name}`), its box in image
/// pixels (the part of its box the picture shows).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct MarkOutput {
    /// The element.
    #[serde(flatten)]
    pub(crate) element: TargetSummary,
    /// Image px from the left.
    pub(crate) x: u32,
    /// Image px from the top.
    pub(crate) y: u32,
    /// Image px across.
    pub(crate) width: u32,
    /// Image px down.
    pub(crate) height: u32,
}

/// An element to mark, its box in document CSS px.
#[derive(Debug, Clone)]
pub(crate) struct Marked {
    element: TargetSummary,
    area: CssRect,
}

/// Where the page is scrolled to, in CSS px.
pub(crate) type Scroll = (f64, f64);

/// The visible interactive elements of every frame, from a snapshot taken now (which also
/// gives them their refs), with their boxes in document CSS px.
pub(crate) async fn elements(context: &ToolContext, scroll: Scroll) -> Result<Vec<Marked>> {
    let nodes = super::snapshot::interactive_elements(context).await?;
    Ok(nodes
        .iter()
        .filter_map(|node| {
            let number = |key: &str| node[key].as_f64();
            let element = TargetSummary {
                element_ref: node["ref"].as_str()?.to_string(),
                role: node["role"].as_str().unwrap_or_default().to_string(),
                name: node["name"].as_str().unwrap_or_default().to_string(),
            };
            Some(Marked {
                element,
                area: CssRect { x: number("x")? + scroll.0, y: number("y")? + scroll.1, width: number("w")?, height: number("h")? },
            })
        })
        .collect())
}

/// The smallest part of an element's box (image px, each way) worth a mark.
const MIN_MARKED_PX: u32 = 4;

/// Draws the marks of the elements the picture shows: `region` is the document rectangle
/// it shows and `scale` its image pixels per CSS pixel. Answers the marked elements, their
/// boxes in image pixels, in document order.
pub(crate) fn draw(picture: &mut Frame, marked: &[Marked], region: CssRect, scale: f64) -> Vec<MarkOutput> {
    let mut shown = Vec::new();
    let mut marks = Vec::new();
    for element in marked {
        let Some((x, y, width, height)) = image_box(element.area, region, scale, picture.width, picture.height) else { continue };
        let label = element.element.element_ref.clone();
        marks.push(Mark { label, x: x as f64, y: y as f64, width: width as f64, height: height as f64 });
        shown.push(MarkOutput { element: element.element.clone(), x, y, width, height });
    }
    imaging::draw_marks(picture, &marks);
    shown
}

/// The part of `area` (document CSS px) a picture of `region` at `scale` shows, in image
/// pixels; `None` when too little of it shows.
fn image_box(area: CssRect, region: CssRect, scale: f64, width: u32, height: u32) -> Option<(u32, u32, u32, u32)> {
    let left = ((area.x - region.x) * scale).round().max(0.0);
    let top = ((area.y - region.y) * scale).round().max(0.0);
    let right = ((area.x + area.width - region.x) * scale).round().min(width as f64);
    let bottom = ((area.y + area.height - region.y) * scale).round().min(height as f64);
    let (box_width, box_height) = (right - left, bottom - top);
    if box_width < MIN_MARKED_PX as f64 || box_height < MIN_MARKED_PX as f64 {
        return None;
    }
    Some((left as u32, top as u32, box_width as u32, box_height as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_map_to_image_pixels_and_clip_to_the_picture() {
        let region = CssRect { x: 100.0, y: 1000.0, width: 400.0, height: 300.0 };
        let inside = CssRect { x: 110.0, y: 1010.0, width: 50.0, height: 20.0 };
        assert_eq!(image_box(inside, region, 2.0, 800, 600), Some((20, 20, 100, 40)));
        let across_the_edge = CssRect { x: 480.0, y: 1290.0, width: 100.0, height: 100.0 };
        assert_eq!(image_box(across_the_edge, region, 1.0, 400, 300), Some((380, 290, 20, 10)));
        let outside = CssRect { x: 0.0, y: 0.0, width: 50.0, height: 50.0 };
        assert_eq!(image_box(outside, region, 1.0, 400, 300), None);
    }
}
