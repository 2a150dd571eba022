//! Two pictures compared pixel by pixel (off the main thread): how many pixels changed, and
//! a picture of where: the new picture faded, changed pixels red.

use crate::error::{Error, Result};
use crate::imaging::{self, Format, Frame};

/// What differs between two pictures.
#[derive(Debug)]
pub(crate) struct PixelDiff {
    /// Pixels that differ (a pixel only one picture has counts).
    pub(crate) changed: u64,
    /// Pixels compared: the larger width by the larger height.
    pub(crate) total: u64,
    /// The new picture's size.
    pub(crate) width: u32,
    pub(crate) height: u32,
    /// Whether the two sizes differ.
    pub(crate) size_changed: bool,
    /// The picture of the changes, as PNG.
    pub(crate) png: Vec<u8>,
}

/// How far a channel of a lossy picture (JPEG, WebP) may move before its pixel counts as
/// changed: their compression moves pixels of unchanged content.
const LOSSY_TOLERANCE: u8 = 48;

/// Compares `new` with `old` (both encoded pictures); an unreadable `old` is refused
/// naming `field`.
pub(crate) fn compare(old: &[u8], new: &[u8], field: &str) -> Result<PixelDiff> {
    let decode = |bytes: &[u8]| image::load_from_memory(bytes).map(|picture| picture.to_rgba8());
    let before = decode(old).map_err(|error| {
        Error::bad_request(format!("{field}: not a picture this daemon reads (PNG, JPEG or WebP): {error}"))
            .with_details(serde_json::json!({ "field": field }))
    })?;
    let after = decode(new).map_err(|error| Error::internal(format!("the new picture does not decode: {error}")))?;
    let lossless = |bytes: &[u8]| image::guess_format(bytes).is_ok_and(|format| format == image::ImageFormat::Png);
    let tolerance = if lossless(old) && lossless(new) { 0 } else { LOSSY_TOLERANCE };
    let before = Frame { width: before.width(), height: before.height(), rgba: before.into_raw() };
    let after = Frame { width: after.width(), height: after.height(), rgba: after.into_raw() };
    let (changed, marked) = changes(&before, &after, tolerance);
    let png = imaging::encode(&marked, Format::Png, 0)?;
    Ok(PixelDiff {
        changed,
        total: u64::from(marked.width) * u64::from(marked.height),
        width: after.width,
        height: after.height,
        size_changed: (before.width, before.height) != (after.width, after.height),
        png,
    })
}

/// The changed pixels' count, and the picture of them.
fn changes(before: &Frame, after: &Frame, tolerance: u8) -> (u64, Frame) {
    let (width, height) = (before.width.max(after.width), before.height.max(after.height));
    let mut marked = Frame::filled(width, height, RED);
    let mut changed = 0;
    let pixel = |frame: &Frame, x: u32, y: u32| -> Option<[u8; 4]> {
        (x < frame.width && y < frame.height).then(|| {
            let at = (y as usize * frame.width as usize + x as usize) * 4;
            [frame.rgba[at], frame.rgba[at + 1], frame.rgba[at + 2], frame.rgba[at + 3]]
        })
    };
    for y in 0..height {
        for x in 0..width {
            let at = (y as usize * width as usize + x as usize) * 4;
            let same = match (pixel(before, x, y), pixel(after, x, y)) {
                (Some(old), Some(new)) if old.iter().zip(new).all(|(a, b)| a.abs_diff(b) <= tolerance) => Some(new),
                _ => None,
            };
            match same {
                Some([red, green, blue, _]) => {
                    // Grey, faded to a third towards white.
                    let grey = (u32::from(red) * 299 + u32::from(green) * 587 + u32::from(blue) * 114) / 1000;
                    let faded = (255 - (255 - grey) / 3) as u8;
                    marked.rgba[at..at + 4].copy_from_slice(&[faded, faded, faded, 255]);
                }
                None => changed += 1,
            }
        }
    }
    (changed, marked)
}

const RED: [u8; 4] = [230, 0, 0, 255];

#[cfg(test)]
mod tests {
    use super::*;

    fn png(frame: &Frame) -> Vec<u8> {
        imaging::encode(frame, Format::Png, 0).unwrap()
    }

    #[test]
    fn changed_pixels_are_counted_and_drawn_red() {
        let before = Frame::filled(10, 10, [255, 255, 255, 255]);
        let mut after = before.clone();
        after.rgba[0..4].copy_from_slice(&[0, 0, 0, 255]);
        let result = compare(&png(&before), &png(&after), "baseline").unwrap();
        assert_eq!((result.changed, result.total, result.size_changed), (1, 100, false));
        let picture = image::load_from_memory(&result.png).unwrap().to_rgba8();
        assert_eq!(picture.get_pixel(0, 0).0, RED);
        assert_eq!(picture.get_pixel(5, 5).0, [255, 255, 255, 255]);
    }

    #[test]
    fn pixels_only_one_picture_has_count_as_changed() {
        let result =
            compare(&png(&Frame::filled(10, 10, [9, 9, 9, 255])), &png(&Frame::filled(10, 5, [9, 9, 9, 255])), "baseline").unwrap();
        assert_eq!((result.changed, result.total, result.size_changed, result.height), (50, 100, true, 5));
    }

    #[test]
    fn an_unreadable_baseline_is_refused_naming_the_field() {
        let error = compare(b"not a picture", &png(&Frame::filled(1, 1, [0, 0, 0, 255])), "baseline").unwrap_err();
        assert_eq!(error.details["field"], "baseline");
        assert!(error.message.starts_with("baseline: "), "{}", error.message);
    }
}
