//! Set-of-marks: each element's box outlined and tagged with its ref (`e12`), so that a
//! vision model can name what it sees. A tag lies inside its element's box (a corner,
//! the first of top-left, top-right, bottom-left, bottom-right that no earlier tag
//! covers), in the saturated colour farthest from the colours under the box, its text
//! white or black, whichever contrasts more.

use super::font::{draw_text, text_height, text_width};
use super::{Frame, PixelRect};

/// One element to mark, in image pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    /// What the tag says: the element's ref, like `e12`.
    pub label: String,
    /// Left edge of the element's box.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width of the box.
    pub width: f64,
    /// Height of the box.
    pub height: f64,
}

/// Thickness of a box's outline, in pixels (drawn just inside the box).
const OUTLINE: u32 = 2;
/// The font's scale in tags: 5 x 7 glyphs drawn as 10 x 14, legible to a vision model.
const LABEL_SCALE: u32 = 2;
/// Pixels between a tag's edge and its text.
const LABEL_PADDING: u32 = 2;
/// Points sampled across a box, per side, for its average colour (a bound on the cost).
const SAMPLES_PER_SIDE: u32 = 24;
/// The colours of outlines and tags: saturated, far apart from each other.
const PALETTE: [[u8; 3]; 8] =
    [[230, 25, 75], [0, 90, 255], [0, 170, 60], [255, 130, 0], [200, 0, 200], [0, 190, 210], [255, 215, 0], [120, 40, 220]];

/// Outlines each mark's box and draws its tag; answers, per mark, the tag's rectangle
/// (`None` for a mark whose box has no whole pixel inside the frame, which is not drawn).
/// Colours are chosen from the frame as it was before any mark was drawn, and every
/// outline is drawn before the tags, so no outline crosses a tag.
/// A frame whose pixels do not match its size gets no mark at all.
pub fn draw_marks(frame: &mut Frame, marks: &[Mark]) -> Vec<Option<PixelRect>> {
    if frame.check().is_err() {
        return vec![None; marks.len()];
    }
    let boxes: Vec<Option<PixelRect>> = marks.iter().map(|mark| element_box(mark, frame)).collect();
    let colours: Vec<[u8; 3]> = boxes.iter().map(|element| element.map_or(PALETTE[0], |element| contrasting(frame, element))).collect();
    let mut tags: Vec<Option<PixelRect>> = Vec::with_capacity(marks.len());
    for (mark, element) in marks.iter().zip(&boxes) {
        let placed: Vec<PixelRect> = tags.iter().flatten().copied().collect();
        tags.push(element.map(|element| place_tag(&mark.label, element, &placed)));
    }
    for (element, colour) in boxes.iter().zip(&colours) {
        if let Some(element) = element {
            outline(frame, *element, *colour);
        }
    }
    for ((mark, tag), colour) in marks.iter().zip(&tags).zip(&colours) {
        if let Some(tag) = tag {
            fill(frame, *tag, opaque(*colour));
            let ink = if prefers_black_text(*colour) { [0, 0, 0, 255] } else { [255, 255, 255, 255] };
            draw_text(frame, &mark.label, tag.x + LABEL_PADDING, tag.y + LABEL_PADDING, LABEL_SCALE, ink, *tag);
        }
    }
    tags
}

/// The whole pixels of the mark's box inside the frame (rounded inwards, so that what is
/// drawn never leaves the element), or `None` when there are none.
fn element_box(mark: &Mark, frame: &Frame) -> Option<PixelRect> {
    if ![mark.x, mark.y, mark.width, mark.height].iter().all(|value| value.is_finite()) {
        return None;
    }
    // A hair of tolerance: layout coordinates like 7.999999 mean 8.
    let inward_start = |start: f64, limit: u32| (start - 1e-6).ceil().clamp(0.0, limit as f64) as u32;
    let inward_end = |end: f64, limit: u32| (end + 1e-6).floor().clamp(0.0, limit as f64) as u32;
    let (left, top) = (inward_start(mark.x, frame.width), inward_start(mark.y, frame.height));
    let right = inward_end(mark.x + mark.width, frame.width);
    let bottom = inward_end(mark.y + mark.height, frame.height);
    let element = PixelRect { x: left, y: top, width: right.saturating_sub(left), height: bottom.saturating_sub(top) };
    (!element.is_empty()).then_some(element)
}

/// Where the tag of `label` goes in `element`: the first corner whose tag meets none of
/// the `placed` tags, else the corner where it covers the fewest of their pixels. A tag
/// larger than its element is cut to the element.
fn place_tag(label: &str, element: PixelRect, placed: &[PixelRect]) -> PixelRect {
    let width = (text_width(label, LABEL_SCALE) + 2 * LABEL_PADDING).min(element.width);
    let height = (text_height(LABEL_SCALE) + 2 * LABEL_PADDING).min(element.height);
    let (left, top) = (element.x, element.y);
    let (right, bottom) = (element.right() - width, element.bottom() - height);
    let corners = [(left, top), (right, top), (left, bottom), (right, bottom)];
    let candidates = corners.map(|(x, y)| PixelRect { x, y, width, height });
    let covered = |tag: &PixelRect| placed.iter().map(|other| tag.overlap_area(other)).sum::<u64>();
    // `min_by_key` keeps the first of equals: the top-left corner unless another is freer.
    candidates.into_iter().min_by_key(covered).unwrap_or(candidates[0])
}

/// The palette's colour farthest from the average colour under `element`.
fn contrasting(frame: &Frame, element: PixelRect) -> [u8; 3] {
    let average = average_colour(frame, element);
    PALETTE.into_iter().max_by_key(|colour| colour_distance(*colour, average)).unwrap_or(PALETTE[0])
}

/// The mean colour of a grid of points across `element` (at most
/// `SAMPLES_PER_SIDE` squared of them).
fn average_colour(frame: &Frame, element: PixelRect) -> [u8; 3] {
    let steps = |length: u32| length.min(SAMPLES_PER_SIDE);
    let (columns, rows) = (steps(element.width), steps(element.height));
    let mut sums = [0u64; 3];
    for row in 0..rows {
        let y = element.y + (row * 2 + 1) * element.height / (rows * 2);
        for column in 0..columns {
            let x = element.x + (column * 2 + 1) * element.width / (columns * 2);
            let pixel = frame.pixel(x, y);
            for channel in 0..3 {
                sums[channel] += pixel[channel] as u64;
            }
        }
    }
    let count = (columns * rows) as u64;
    sums.map(|sum| (sum / count) as u8)
}

/// How different two colours look: the "redmean" weighted distance (squared, times 256),
/// which weighs red and blue by how red the pair is, as the eye does.
fn colour_distance(a: [u8; 3], b: [u8; 3]) -> u64 {
    let mean_red = (a[0] as i64 + b[0] as i64) / 2;
    let [dr, dg, db] = [0, 1, 2].map(|channel| a[channel] as i64 - b[channel] as i64);
    ((512 + mean_red) * dr * dr + 1024 * dg * dg + (767 - mean_red) * db * db) as u64
}

/// Whether black text contrasts more with `background` than white text does (WCAG's
/// contrast ratio of relative luminances).
fn prefers_black_text(background: [u8; 3]) -> bool {
    let linear = |channel: u8| {
        let value = channel as f64 / 255.0;
        if value <= 0.04045 {
            value / 12.92
        } else {
            ((value + 0.055) / 1.055).powf(2.4)
        }
    };
    let luminance = 0.2126 * linear(background[0]) + 0.7152 * linear(background[1]) + 0.0722 * linear(background[2]);
    (luminance + 0.05) / 0.05 > 1.05 / (luminance + 0.05)
}

/// Draws the outline of `element`, `OUTLINE` pixels thick, just inside its edges.
fn outline(frame: &mut Frame, element: PixelRect, colour: [u8; 3]) {
    let thickness = OUTLINE.min(element.width).min(element.height);
    let PixelRect { x, y, width, height } = element;
    let colour = opaque(colour);
    fill(frame, PixelRect { x, y, width, height: thickness }, colour);
    fill(frame, PixelRect { x, y: element.bottom() - thickness, width, height: thickness }, colour);
    fill(frame, PixelRect { x, y, width: thickness, height }, colour);
    fill(frame, PixelRect { x: element.right() - thickness, y, width: thickness, height }, colour);
}

/// Paints `rect` (which lies inside the frame) in `colour`.
fn fill(frame: &mut Frame, rect: PixelRect, colour: [u8; 4]) {
    for y in rect.y..rect.bottom() {
        for x in rect.x..rect.right() {
            frame.set_pixel(x, y, colour);
        }
    }
}

/// An opaque pixel of a colour.
fn opaque(colour: [u8; 3]) -> [u8; 4] {
    [colour[0], colour[1], colour[2], 255]
}

#[cfg(test)]
mod tests {
    use super::*;

    const WHITE: [u8; 4] = [255, 255, 255, 255];

    fn mark(label: &str, x: f64, y: f64, width: f64, height: f64) -> Mark {
        Mark { label: label.to_string(), x, y, width, height }
    }

    /// Whether `tag` lies inside the mark's box (in the mark's own fractional pixels).
    fn inside(tag: &PixelRect, mark: &Mark) -> bool {
        tag.x as f64 >= mark.x
            && tag.y as f64 >= mark.y
            && tag.right() as f64 <= mark.x + mark.width
            && tag.bottom() as f64 <= mark.y + mark.height
    }

    #[test]
    fn every_tag_lies_inside_its_element_and_the_frame() {
        let mut frame = Frame::filled(300, 200, WHITE);
        let marks = [
            mark("e1", 10.0, 10.0, 120.0, 40.0),
            mark("e22", 140.5, 10.25, 100.7, 30.9),
            mark("e333", 20.0, 80.0, 12.0, 9.0),
            mark("e4", 250.0, 150.0, 200.0, 200.0),
            mark("e5", -30.0, 120.0, 90.0, 50.0),
        ];
        let tags = draw_marks(&mut frame, &marks);
        let whole = PixelRect { x: 0, y: 0, width: 300, height: 200 };
        for (mark, tag) in marks.iter().zip(&tags) {
            let tag = tag.unwrap_or_else(|| panic!("{} is drawn", mark.label));
            assert!(inside(&tag, mark), "{}: tag {tag:?} leaves its box", mark.label);
            assert!(whole.contains(&tag), "{}: tag {tag:?} leaves the frame", mark.label);
            assert!(!tag.is_empty());
        }
        let full = tags[0].unwrap();
        assert_eq!((full.width, full.height), (2 * 10 + 2 + 2 * LABEL_PADDING, 14 + 2 * LABEL_PADDING), "e1 at scale 2");
        assert_eq!(tags[2].map(|tag| (tag.width, tag.height)), Some((12, 9)), "a tag is cut to a small box");
    }

    #[test]
    fn tags_take_another_corner_rather_than_cover_an_earlier_tag() {
        let mut frame = Frame::filled(400, 300, WHITE);
        let marks: Vec<Mark> = (0..4).map(|index| mark(&format!("e{index}"), 20.0, 20.0, 200.0, 120.0)).collect();
        let tags: Vec<PixelRect> = draw_marks(&mut frame, &marks).into_iter().map(Option::unwrap).collect();
        for (index, tag) in tags.iter().enumerate() {
            for other in &tags[index + 1..] {
                assert_eq!(tag.overlap_area(other), 0, "{tag:?} and {other:?} overlap");
            }
        }
        assert_eq!((tags[0].x, tags[0].y), (20, 20), "the first takes the top-left corner");
        assert_eq!(tags[1].right(), 220, "the second the top-right one");
        // A fifth has no free corner left: it still lies inside its box.
        let mut crowded = marks.clone();
        crowded.push(mark("e9", 20.0, 20.0, 200.0, 120.0));
        let fifth = draw_marks(&mut Frame::filled(400, 300, WHITE), &crowded)[4].unwrap();
        assert!(inside(&fifth, &crowded[4]));
    }

    #[test]
    fn colours_contrast_with_what_is_under_the_box() {
        let mut frame = Frame::filled(200, 100, WHITE);
        for y in 0..100 {
            for x in 100..200 {
                frame.set_pixel(x, y, [0, 90, 255, 255]);
            }
        }
        let before = frame.clone();
        let tags = draw_marks(&mut frame, &[mark("e1", 0.0, 0.0, 100.0, 100.0), mark("e2", 100.0, 0.0, 100.0, 100.0)]);
        let on_white = frame.pixel(0, 50);
        let on_blue = frame.pixel(100, 50);
        assert_eq!(on_white, frame.pixel(99, 99), "one outline colour per mark");
        assert!(colour_distance([on_white[0], on_white[1], on_white[2]], [255, 255, 255]) > 50_000_000, "{on_white:?} on white");
        assert!(colour_distance([on_blue[0], on_blue[1], on_blue[2]], [0, 90, 255]) > 50_000_000, "{on_blue:?} on blue");
        assert_ne!(on_white, on_blue);
        assert_eq!(frame.pixel(50, 50), before.pixel(50, 50), "inside the outline the page shows");
        // The tags hold their colour and text of the other luminance.
        for (tag, colour) in tags.iter().zip([on_white, on_blue]) {
            let tag = tag.unwrap();
            let pixels: Vec<[u8; 4]> =
                (tag.y..tag.bottom()).flat_map(|y| (tag.x..tag.right()).map(move |x| (x, y))).map(|(x, y)| frame.pixel(x, y)).collect();
            let text = if prefers_black_text([colour[0], colour[1], colour[2]]) { [0, 0, 0, 255] } else { WHITE };
            assert!(pixels.contains(&colour) && pixels.contains(&text), "tag {tag:?} in {colour:?} with {text:?} text");
        }
    }

    #[test]
    fn text_colour_follows_the_tag_luminance() {
        assert!(prefers_black_text([255, 215, 0]), "black on yellow");
        assert!(prefers_black_text([0, 190, 210]), "black on cyan");
        assert!(!prefers_black_text([0, 90, 255]), "white on blue");
        assert!(!prefers_black_text([120, 40, 220]), "white on purple");
    }

    #[test]
    fn a_mark_outside_the_frame_is_not_drawn() {
        let mut frame = Frame::filled(50, 50, WHITE);
        let tags = draw_marks(
            &mut frame,
            &[mark("e1", 60.0, 10.0, 20.0, 20.0), mark("e2", 10.0, 10.0, 0.4, 30.0), mark("e3", f64::NAN, 0.0, 5.0, 5.0)],
        );
        assert_eq!(tags, vec![None, None, None]);
        assert_eq!(frame, Frame::filled(50, 50, WHITE));
        let mut broken = Frame { width: 50, height: 50, rgba: vec![0; 12] };
        assert_eq!(draw_marks(&mut broken, &[mark("e1", 0.0, 0.0, 20.0, 20.0)]), vec![None], "a broken frame");
    }
}
