//! `screenshot`: a picture of exactly what the agent asks for (the viewport, the whole
//! document, an element or a rectangle), at a size its model accepts, as PNG, JPEG or WebP,
//! optionally with every interactive element's ref drawn over it (set-of-marks). WebKit
//! captures on the main thread; cropping, scaling, marks and encoding run off it.

use base64::Engine as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::artifacts::artifact_path;
use super::limits::{SCREENSHOT_MAX_SIDE, SCREENSHOT_QUALITY};
use super::marks::{self, MarkOutput};
use super::targeting::{locate_in, ElementTarget};
use super::{Attachment, Lean, Presentation, Tool, ToolContext};
use crate::engine::{Capture, Frame, TabRequest};
use crate::error::{Error, ErrorCode, Result};
use crate::imaging::{self, FitLimits, Format, PixelRect};

/// The file name endings a picture of `format` may be saved under.
fn extensions(format: Format) -> &'static [&'static str] {
    match format {
        Format::Png => &["png"],
        Format::Jpeg => &["jpg", "jpeg"],
        Format::Webp => &["webp"],
    }
}

/// How many image pixels a CSS pixel becomes (before `max_width`/`max_height`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ScreenshotScale {
    /// The screen's device pixels (default): devicePixelRatio image pixels per CSS pixel.
    #[default]
    Device,
    /// One image pixel per CSS pixel.
    Css,
}

/// A rectangle in CSS pixels of the document (0, 0 is the document's top-left corner,
/// whatever the scroll).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CssRect {
    /// From the document's left edge.
    pub(crate) x: f64,
    /// From the document's top edge.
    pub(crate) y: f64,
    /// Width (at least 1).
    pub(crate) width: f64,
    /// Height (at least 1).
    pub(crate) height: f64,
}

/// Input of `screenshot`.
#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScreenshotInput {
    /// The whole document. Below and right of the viewport too (fixed elements drawn once;
    /// the scroll position does not change). At most 16384 CSS px each way (`truncated`).
    #[serde(default)]
    pub(crate) full_page: bool,
    /// Only this element, by ref. Its border box (scrolled into view first when needed): a
    /// ref from snapshot (e.g. e12), in any frame.
    #[serde(default, rename = "ref")]
    pub(crate) element_ref: Option<String>,
    /// Only this element, by CSS selector. Its border box (` >>> ` pierces open shadow
    /// roots).
    #[serde(default)]
    pub(crate) selector: Option<String>,
    /// With `selector`: the iframe (a selector in the main frame) to look for it in.
    #[serde(default)]
    pub(crate) frame_selector: Option<String>,
    /// Only this rectangle of the document (CSS px).
    #[serde(default)]
    pub(crate) clip: Option<CssRect>,
    /// `png` (default), `jpeg` or `webp`.
    #[serde(default)]
    pub(crate) format: Format,
    /// JPEG and WebP quality, 1-100 (default 80).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub(crate) quality: Option<u8>,
    /// Most pixels across. Downscaled keeping the aspect ratio.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub(crate) max_width: Option<u32>,
    /// Most pixels down. Downscaled keeping the aspect ratio.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub(crate) max_height: Option<u32>,
    /// `device` (default: device pixels) or `css` (one image pixel per CSS pixel).
    #[serde(default)]
    pub(crate) scale: ScreenshotScale,
    /// Transparent, not white, where the page paints nothing. PNG and WebP only.
    #[serde(default)]
    pub(crate) omit_background: bool,
    /// Save to this name in artifacts/ and answer the path. The bytes are then not in the
    /// answer.
    #[serde(default)]
    pub(crate) path: Option<String>,
    /// Draw interactive elements' refs on it, listed in `marks`. Set-of-marks: every
    /// visible interactive element.
    #[serde(default)]
    pub(crate) marks: bool,
    /// Show `highlight`'s outline. It is left out otherwise.
    #[serde(default)]
    pub(crate) highlight: bool,
}

/// Output of `screenshot`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ScreenshotOutput {
    /// `image/png`, `image/jpeg` or `image/webp`.
    pub(crate) mime_type: String,
    /// Image pixels across.
    pub(crate) width: u32,
    /// Image pixels down.
    pub(crate) height: u32,
    /// Size of the encoded picture.
    pub(crate) bytes: usize,
    /// The picture, base64 (when no `path` was asked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) data: Option<String>,
    /// Where the picture was written (when `path` was asked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) path: Option<String>,
    /// Image pixels per CSS pixel: a point (px, py) of the image is the document's
    /// (clip.x + px / scale, clip.y + py / scale).
    pub(crate) scale: f64,
    /// The rectangle of the document shown, in CSS px.
    pub(crate) clip: CssRect,
    /// Whether the document was larger than a picture may be (16384 CSS px each way) and
    /// the picture stops there.
    pub(crate) truncated: bool,
    /// With `marks`: each marked element, its ref, role and name, and its box in image px.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) marks: Option<Vec<MarkOutput>>,
}

/// The long edge of a screenshot over MCP unless the agent gives `max_width` or
/// `max_height`: above it, current vision models downscale the picture anyway.
const MCP_LONG_EDGE: &str = "1568";

pub(super) fn tool() -> Tool {
    Tool::page(
        "screenshot",
        "A picture of the viewport, whole page, an element or a clip, optionally with refs drawn on. The viewport by default, the whole document with full_page, an element by ref or selector, as png, jpeg or webp, downscaled to max_width/max_height; marks=true draws each interactive element's ref (the refs work with click). Answers the size, the scale (image px per CSS px) and the clip shown. Over MCP the long edge is capped at 1568 px unless max_width or max_height is given.",
        |context: ToolContext, input: ScreenshotInput| async move { screenshot(&context, input).await },
    )
    .presented(Presentation {
        mcp_defaults: &[("max_width", MCP_LONG_EDGE), ("max_height", MCP_LONG_EDGE)],
        attachment: Some(Attachment::Result),
        mcp_lean: Some(Lean::Picture),
        ..Presentation::default()
    })
}

/// Where the page stands: what a capture of the viewport or of the document shows.
#[derive(Debug, Clone, Copy, Deserialize)]
struct Geometry {
    width: f64,
    height: f64,
    device_pixel_ratio: f64,
    scroll_x: f64,
    scroll_y: f64,
    document_width: f64,
    document_height: f64,
}

impl Geometry {
    /// The viewport, in document CSS px.
    fn viewport(&self) -> CssRect {
        CssRect { x: self.scroll_x, y: self.scroll_y, width: self.width, height: self.height }
    }

    /// The whole document, in CSS px.
    fn document(&self) -> CssRect {
        CssRect { x: 0.0, y: 0.0, width: self.document_width.max(self.width), height: self.document_height.max(self.height) }
    }

    /// Whether WebKit captures the whole document in one snapshot (at most 32,767 device px
    /// each way).
    fn document_fits_one_snapshot(&self) -> bool {
        let document = self.document();
        document.width * self.device_pixel_ratio <= WEBKIT_SNAPSHOT_MAX_PX
            && document.height * self.device_pixel_ratio <= WEBKIT_SNAPSHOT_MAX_PX
    }
}

/// The largest side of a WebKit snapshot, in device px (measured: 32,768 fails).
const WEBKIT_SNAPSHOT_MAX_PX: f64 = 32_767.0;

/// Measures the viewport, its scroll and the document (in the isolated world: page scripts
/// cannot lie).
async fn geometry(context: &ToolContext) -> Result<Geometry> {
    let body = "const root = document.documentElement; return { width: innerWidth, height: innerHeight, device_pixel_ratio: devicePixelRatio || 1, scroll_x: scrollX, scroll_y: scrollY, document_width: root ? root.scrollWidth : 0, document_height: root ? root.scrollHeight : 0 };";
    let measured: serde_json::Value = context.ask(TabRequest::Evaluate { body: body.into() }).await?;
    serde_json::from_value(measured)
        .map_err(|error| Error::new(ErrorCode::ScriptError, format!("the page's geometry is unreadable: {error}")))
}

/// What the input asks to show, checked.
#[derive(Debug, Clone, PartialEq)]
enum Subject {
    Viewport,
    FullPage,
    Element(ElementTarget, Option<String>),
    Clip(CssRect),
}

/// Checks the input's combinations (each refusal names its field) and says what to show.
fn subject(input: &ScreenshotInput) -> Result<Subject> {
    let element = ElementTarget { element_ref: input.element_ref.clone(), selector: input.selector.clone(), locator: None };
    if input.element_ref.is_some() && input.selector.is_some() {
        return Err(Error::bad_request("ref, selector: give one of them, not both"));
    }
    if input.frame_selector.is_some() && input.selector.is_none() {
        return Err(Error::bad_request("frame_selector goes with selector (a ref already knows its frame)"));
    }
    if input.quality.is_some() && input.format == Format::Png {
        return Err(Error::bad_request("quality goes with format jpeg or webp (png is lossless)"));
    }
    if let Some(quality) = input.quality {
        SCREENSHOT_QUALITY.check(quality, "quality")?;
    }
    for (field, size) in [("max_width", input.max_width), ("max_height", input.max_height)] {
        if size == Some(0) {
            return Err(Error::bad_request(format!("{field} must be at least 1")));
        }
    }
    if input.omit_background && input.format == Format::Jpeg {
        return Err(Error::bad_request("omit_background goes with png or webp (jpeg has no transparency)"));
    }
    match (input.full_page, element.is_given(), input.clip) {
        (false, false, None) => Ok(Subject::Viewport),
        (true, false, None) => Ok(Subject::FullPage),
        (false, true, None) => Ok(Subject::Element(element, input.frame_selector.clone())),
        (false, false, Some(clip)) => {
            let finite = [clip.x, clip.y, clip.width, clip.height].iter().all(|value| value.is_finite());
            if !finite || clip.width < 1.0 || clip.height < 1.0 {
                return Err(Error::bad_request("clip: width and height must be at least 1 CSS px (and every number finite)"));
            }
            Ok(Subject::Clip(clip))
        }
        (true, _, _) => Err(Error::bad_request("full_page: give it alone, not with ref, selector or clip")),
        (false, true, Some(_)) => Err(Error::bad_request("clip: give a clip or an element (ref, selector), not both")),
    }
}

/// A frame showing `region` (document CSS px), and where its pixel (0, 0) lies in the
/// document: the viewport when it holds the region; else the whole document when WebKit
/// captures it in one snapshot; else the region in tiles, scrolling the page to each and
/// back (`position: fixed` elements then show in every tile).
async fn capture_region(context: &ToolContext, region: CssRect, at: &Geometry, transparent: bool) -> Result<(Frame, (f64, f64))> {
    let viewport = at.viewport();
    let inside = region.x >= viewport.x - 0.5
        && region.y >= viewport.y - 0.5
        && region.x + region.width <= viewport.x + viewport.width + 0.5
        && region.y + region.height <= viewport.y + viewport.height + 0.5;
    if inside || at.document_fits_one_snapshot() {
        // Only the region's pixels are converted (a tall document's element is a small
        // part of it); the frame then starts at the region's corner.
        let captured = if inside { viewport } else { at.document() };
        let ratio = at.device_pixel_ratio;
        let device = |css: f64| (css * ratio).round().max(0.0) as u32;
        let part = PixelRect {
            x: device(region.x - captured.x),
            y: device(region.y - captured.y),
            width: device(region.width).max(1),
            height: device(region.height).max(1),
        };
        let frame: Frame = context.ask(TabRequest::Screenshot(Capture { whole_document: !inside, transparent, part: Some(part) })).await?;
        let origin = (captured.x + part.x as f64 / ratio, captured.y + part.y as f64 / ratio);
        return Ok((frame, origin));
    }
    Ok((tiles(context, region, at, transparent).await?, (region.x, region.y)))
}

/// `region` put together from captures of the viewport scrolled over it; the scroll
/// position is restored afterwards.
async fn tiles(context: &ToolContext, region: CssRect, at: &Geometry, transparent: bool) -> Result<Frame> {
    let ratio = at.device_pixel_ratio;
    let pixels = |css: f64| (css * ratio).round().max(1.0) as u32;
    let background = if transparent { [0, 0, 0, 0] } else { [255, 255, 255, 255] };
    let mut canvas = Frame::filled(pixels(region.width), pixels(region.height), background);
    let mut top = region.y;
    while top < region.y + region.height {
        let mut left = region.x;
        while left < region.x + region.width {
            let (scroll_x, scroll_y) = scroll_to(context, left, top).await?;
            let tile: Frame = context.ask(TabRequest::Screenshot(Capture { whole_document: false, transparent, part: None })).await?;
            let shown = CssRect { x: scroll_x, y: scroll_y, width: tile.width as f64 / ratio, height: tile.height as f64 / ratio };
            if let Some(part) = intersect(shown, region) {
                let (x, y) = (((part.x - scroll_x) * ratio).round() as u32, ((part.y - scroll_y) * ratio).round() as u32);
                let piece = imaging::crop(&tile, PixelRect { x, y, width: pixels(part.width), height: pixels(part.height) })?;
                let (at_x, at_y) = (((part.x - region.x) * ratio).round() as u32, ((part.y - region.y) * ratio).round() as u32);
                imaging::paste(&mut canvas, &piece, at_x, at_y);
            }
            left += at.width.max(1.0);
        }
        top += at.height.max(1.0);
    }
    scroll_to(context, at.scroll_x, at.scroll_y).await?;
    Ok(canvas)
}

/// Scrolls the page to (x, y) and waits until it has painted there; answers where it is
/// (the page clamps a scroll past its end).
async fn scroll_to(context: &ToolContext, x: f64, y: f64) -> Result<(f64, f64)> {
    let body = format!(
        "scrollTo({x}, {y}); await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))); return [scrollX, scrollY];"
    );
    let (scroll_x, scroll_y): (f64, f64) = serde_json::from_value(context.ask(TabRequest::Evaluate { body }).await?)
        .map_err(|error| Error::new(ErrorCode::ScriptError, format!("the page's scroll position is unreadable: {error}")))?;
    Ok((scroll_x, scroll_y))
}

async fn screenshot(context: &ToolContext, input: ScreenshotInput) -> Result<ScreenshotOutput> {
    let extensions = extensions(input.format);
    let path = match &input.path {
        Some(asked) => Some(artifact_path(context, Some(asked), "path", "screenshot", extensions)?),
        None => None,
    };
    let (picture, region, truncated) = shoot(context, &input).await?;
    remember(context, &picture.bytes, input.clone())?;
    let bytes = picture.bytes.len();
    let (data, path) = match path {
        Some(path) => {
            tokio::fs::write(&path, &picture.bytes)
                .await
                .map_err(|error| Error::internal(format!("cannot write the screenshot: {error}")))?;
            (None, Some(path.display().to_string()))
        }
        None => (Some(base64::engine::general_purpose::STANDARD.encode(&picture.bytes)), None),
    };
    Ok(ScreenshotOutput {
        mime_type: input.format.mime_type().into(),
        width: picture.width,
        height: picture.height,
        bytes,
        data,
        path,
        scale: picture.scale,
        clip: region,
        truncated,
        marks: picture.marks,
    })
}

/// Keeps a picture as the tab's last screenshot (`diff screenshot` compares with it), with
/// the input that takes it again.
pub(crate) fn remember(context: &ToolContext, picture: &[u8], mut input: ScreenshotInput) -> Result<()> {
    input.path = None;
    let input = serde_json::to_value(input).map_err(|error| Error::internal(error.to_string()))?;
    let last = crate::state::LastScreenshot { picture: picture.to_vec(), input };
    context.tab()?.refs.lock().expect("ref table poisoned").screenshot = Some(last);
    Ok(())
}

/// The encoded picture `input` asks for (its `path` aside), with the region it shows and
/// whether the document was cut: the work of `screenshot`, and of `diff` taking a picture
/// again.
pub(crate) async fn picture(context: &ToolContext, input: &ScreenshotInput) -> Result<Vec<u8>> {
    Ok(shoot(context, input).await?.0.bytes)
}

async fn shoot(context: &ToolContext, input: &ScreenshotInput) -> Result<(Picture, CssRect, bool)> {
    let started = std::time::Instant::now();
    let subject = subject(input)?;
    // The element first: finding it may scroll it (and the frames holding it) into view.
    let element_box = match &subject {
        Subject::Element(target, frame_selector) => {
            let located = locate_in(context, target, frame_selector.as_deref()).await?;
            let (width, height) = (located.info.w, located.info.h);
            if !located.info.visible || width < 1.0 || height < 1.0 {
                let message = format!("the element {} has no box to show", located.describe());
                return Err(Error::new(ErrorCode::NotVisible, message).with_details(json!({ "target": located.summary() })));
            }
            Some((located.x - width / 2.0, located.y - height / 2.0, width, height))
        }
        _ => None,
    };
    let transparent = input.omit_background;
    // The viewport and the whole document need no measuring first: their capture and the
    // page's geometry are asked at once (they overlap on the engine's side).
    let whole_document = match subject {
        Subject::Viewport => Some(false),
        Subject::FullPage => Some(true),
        Subject::Element(..) | Subject::Clip(_) => None,
    };
    let (at, early_frame) = match whole_document {
        Some(whole_document) => {
            let capture = context.ask::<Frame>(TabRequest::Screenshot(Capture { whole_document, transparent, part: None }));
            let (at, frame) = tokio::join!(geometry(context), capture);
            let at = at?;
            match frame {
                Ok(frame) => (at, Some(frame)),
                // A document over WebKit's limit is refused; it is captured in tiles below.
                Err(_) if whole_document && !at.document_fits_one_snapshot() => (at, None),
                Err(error) => return Err(error),
            }
        }
        None => (geometry(context).await?, None),
    };
    let max = SCREENSHOT_MAX_SIDE as f64;
    let region = match (&subject, element_box) {
        (Subject::Viewport, _) => at.viewport(),
        (Subject::FullPage, _) => at.document(),
        (_, Some((x, y, width, height))) => {
            let element = CssRect { x: x + at.scroll_x, y: y + at.scroll_y, width, height };
            intersect(element, at.document()).unwrap_or(element)
        }
        (Subject::Clip(clip), None) => intersect(*clip, at.document()).ok_or_else(|| {
            let document = at.document();
            Error::bad_request(format!(
                "clip: the rectangle lies outside the document ({:.0}x{:.0} CSS px)",
                document.width, document.height
            ))
        })?,
        (Subject::Element(..), None) => return Err(Error::internal("the element's box went missing")),
    };
    let truncated = region.width > max || region.height > max;
    let region = CssRect { width: region.width.min(max), height: region.height.min(max), ..region };
    let (frame, origin) = match early_frame {
        Some(frame) if subject == Subject::FullPage => (frame, (0.0, 0.0)),
        Some(frame) => (frame, (at.scroll_x, at.scroll_y)),
        None => capture_region(context, region, &at, transparent).await?,
    };
    let marked = if input.marks { Some(marks::elements(context, (at.scroll_x, at.scroll_y)).await?) } else { None };
    let highlight = if input.highlight { super::highlight::current(context, (at.scroll_x, at.scroll_y)).await? } else { None };
    let plan = Plan {
        region,
        origin,
        device_pixel_ratio: at.device_pixel_ratio,
        format: input.format,
        quality: input.quality.unwrap_or(SCREENSHOT_QUALITY.default),
        limits: FitLimits {
            max_width: input.max_width,
            max_height: input.max_height,
            factor: (input.scale == ScreenshotScale::Css).then(|| 1.0 / at.device_pixel_ratio),
        },
        marks: marked,
        highlight,
    };
    let captured = started.elapsed();
    let picture = tokio::task::spawn_blocking(move || render(frame, plan))
        .await
        .map_err(|error| Error::internal(format!("the picture's encoder stopped: {error}")))??;
    tracing::debug!(?subject, ?captured, rendered = ?started.elapsed() - captured, bytes = picture.bytes.len(), "screenshot");
    Ok((picture, region, truncated))
}

/// The overlap of two rectangles, if they overlap by at least a CSS pixel each way.
fn intersect(a: CssRect, b: CssRect) -> Option<CssRect> {
    let (left, top) = (a.x.max(b.x), a.y.max(b.y));
    let (right, bottom) = ((a.x + a.width).min(b.x + b.width), (a.y + a.height).min(b.y + b.height));
    (right - left >= 1.0 && bottom - top >= 1.0).then_some(CssRect { x: left, y: top, width: right - left, height: bottom - top })
}

/// What becomes of a captured frame, off the main thread.
struct Plan {
    /// The document rectangle to show (CSS px).
    region: CssRect,
    /// Where the frame's pixel (0, 0) lies in the document (CSS px).
    origin: (f64, f64),
    device_pixel_ratio: f64,
    format: Format,
    quality: u8,
    limits: FitLimits,
    /// Elements to mark, with their boxes in document CSS px.
    marks: Option<Vec<marks::Marked>>,
    /// The outline `highlight` shows, in document CSS px, when asked.
    highlight: Option<CssRect>,
}

/// An encoded picture.
struct Picture {
    bytes: Vec<u8>,
    width: u32,
    height: u32,
    scale: f64,
    marks: Option<Vec<MarkOutput>>,
}

/// Crops the frame to the plan's region, scales it, draws the marks and encodes it.
fn render(frame: Frame, plan: Plan) -> Result<Picture> {
    let ratio = plan.device_pixel_ratio;
    let region = plan.region;
    let left = ((region.x - plan.origin.0) * ratio).round().max(0.0) as u32;
    let top = ((region.y - plan.origin.1) * ratio).round().max(0.0) as u32;
    let width = ((region.width * ratio).round() as u32).clamp(1, frame.width.saturating_sub(left).max(1));
    let height = ((region.height * ratio).round() as u32).clamp(1, frame.height.saturating_sub(top).max(1));
    let whole = left == 0 && top == 0 && width == frame.width && height == frame.height;
    let cropped = if whole { frame } else { imaging::crop(&frame, PixelRect { x: left, y: top, width, height })? };
    let mut picture = imaging::fit(cropped, plan.limits);
    let scale = picture.width as f64 / region.width;
    if let Some(area) = plan.highlight {
        super::highlight::draw_on(&mut picture, area, region, scale);
    }
    let marks = plan.marks.map(|marked| marks::draw(&mut picture, &marked, region, scale));
    let bytes = imaging::encode(&picture, plan.format, plan.quality)?;
    Ok(Picture { bytes, width: picture.width, height: picture.height, scale, marks })
}

/// A PNG of exactly the viewport, as `observe {mode: "screenshot"}` and failed actions
/// take it: the same capture and encoder as `screenshot`.
pub(crate) async fn viewport_png(context: &ToolContext) -> Result<(Vec<u8>, u32, u32)> {
    let frame: Frame = context.ask(TabRequest::Screenshot(Capture::VIEWPORT)).await?;
    tokio::task::spawn_blocking(move || {
        let png = imaging::encode(&frame, Format::Png, 0)?;
        Ok((png, frame.width, frame.height))
    })
    .await
    .map_err(|error| Error::internal(format!("the PNG encoder stopped: {error}")))?
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(value: serde_json::Value) -> ScreenshotInput {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn bad_combinations_are_refused_naming_the_field() {
        let refused = |value: serde_json::Value| subject(&input(value)).unwrap_err().message;
        assert!(refused(json!({"ref": "e1", "clip": {"x": 0, "y": 0, "width": 5, "height": 5}})).starts_with("clip:"));
        assert!(refused(json!({"quality": 50})).starts_with("quality"));
        assert!(refused(json!({"format": "jpeg", "quality": 0})).contains("quality"));
        assert!(refused(json!({"clip": {"x": 0, "y": 0, "width": 0.5, "height": 5}})).starts_with("clip:"));
        assert!(refused(json!({"max_width": 0})).starts_with("max_width"));
        assert!(refused(json!({"full_page": true, "selector": "p"})).starts_with("full_page"));
        assert!(refused(json!({"frame_selector": "iframe"})).starts_with("frame_selector"));
        assert!(refused(json!({"format": "jpeg", "omit_background": true})).starts_with("omit_background"));
        assert_eq!(subject(&input(json!({}))).unwrap(), Subject::Viewport);
        assert_eq!(subject(&input(json!({"format": "webp", "quality": 50, "full_page": true}))).unwrap(), Subject::FullPage);
    }

    #[test]
    fn the_document_fits_one_snapshot_up_to_webkits_limit() {
        let at = |height: f64, ratio: f64| Geometry {
            width: 800.0,
            height: 600.0,
            device_pixel_ratio: ratio,
            scroll_x: 0.0,
            scroll_y: 1000.0,
            document_width: 800.0,
            document_height: height,
        };
        assert!(at(32_767.0, 1.0).document_fits_one_snapshot());
        assert!(!at(32_768.0, 1.0).document_fits_one_snapshot());
        assert!(!at(20_000.0, 2.0).document_fits_one_snapshot(), "device pixels count");
        assert_eq!(at(100.0, 1.0).document(), CssRect { x: 0.0, y: 0.0, width: 800.0, height: 600.0 }, "at least the viewport");
        assert_eq!(at(5000.0, 1.0).viewport(), CssRect { x: 0.0, y: 1000.0, width: 800.0, height: 600.0 });
    }

    #[test]
    fn rendering_crops_scales_and_reports_the_scale() {
        // A 200x100 frame at ratio 2 of the document's (50, 0)-(150, 50) region: red left
        // half, blue right half.
        let mut rgba = Vec::new();
        for _ in 0..100 {
            for x in 0..200 {
                rgba.extend_from_slice(if x < 100 { &[255, 0, 0, 255] } else { &[0, 0, 255, 255] });
            }
        }
        let frame = Frame { width: 200, height: 100, rgba };
        let plan = |region: CssRect, max_width: Option<u32>| Plan {
            region,
            origin: (50.0, 0.0),
            device_pixel_ratio: 2.0,
            format: Format::Png,
            quality: 80,
            limits: FitLimits { max_width, max_height: None, factor: None },
            marks: None,
            highlight: None,
        };
        let right = render(frame.clone(), plan(CssRect { x: 100.0, y: 0.0, width: 50.0, height: 50.0 }, None)).unwrap();
        assert_eq!((right.width, right.height, right.scale), (100, 100, 2.0));
        let decoded = image::load_from_memory(&right.bytes).unwrap().to_rgba8();
        assert_eq!(decoded.get_pixel(0, 0).0, [0, 0, 255, 255], "the crop starts at the blue half");
        let small = render(frame, plan(CssRect { x: 50.0, y: 0.0, width: 100.0, height: 50.0 }, Some(50))).unwrap();
        assert_eq!((small.width, small.height, small.scale), (50, 25, 0.5));
    }
}
