//! Cropping a frame to a rectangle of whole pixels.

use super::Frame;
use crate::error::{Error, Result};

/// A rectangle of whole pixels in a frame: `x`, `y` its top-left corner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PixelRect {
    /// Left edge.
    pub x: u32,
    /// Top edge.
    pub y: u32,
    /// Pixels across.
    pub width: u32,
    /// Pixels down.
    pub height: u32,
}

impl PixelRect {
    /// The first column right of the rectangle.
    pub fn right(&self) -> u32 {
        self.x.saturating_add(self.width)
    }

    /// The first row below the rectangle.
    pub fn bottom(&self) -> u32 {
        self.y.saturating_add(self.height)
    }

    /// Whether it has no pixel.
    pub fn is_empty(&self) -> bool {
        self.width == 0 || self.height == 0
    }

    /// The pixels both rectangles cover (empty when they do not meet).
    pub fn intersection(&self, other: &PixelRect) -> PixelRect {
        let (x, y) = (self.x.max(other.x), self.y.max(other.y));
        let (right, bottom) = (self.right().min(other.right()), self.bottom().min(other.bottom()));
        PixelRect { x, y, width: right.saturating_sub(x), height: bottom.saturating_sub(y) }
    }

    /// Whether `other` lies wholly inside this rectangle.
    pub fn contains(&self, other: &PixelRect) -> bool {
        other.x >= self.x && other.y >= self.y && other.right() <= self.right() && other.bottom() <= self.bottom()
    }

    /// How many pixels both rectangles cover.
    pub fn overlap_area(&self, other: &PixelRect) -> u64 {
        let common = self.intersection(other);
        common.width as u64 * common.height as u64
    }
}

/// The part of `frame` inside `rect`. A rectangle reaching past the frame's edges is
/// clamped to them; one with no pixel inside the frame (or an empty one) is
/// `E_BAD_REQUEST`, since a caller asked for a region that shows nothing; a frame whose
/// pixels do not match its size is `E_INTERNAL`.
pub fn crop(frame: &Frame, rect: PixelRect) -> Result<Frame> {
    frame.check()?;
    let whole = PixelRect { x: 0, y: 0, width: frame.width, height: frame.height };
    let kept = whole.intersection(&rect);
    if kept.is_empty() {
        return Err(Error::bad_request(format!(
            "the rectangle {}x{} at ({}, {}) has no pixel inside the {}x{} frame",
            rect.width, rect.height, rect.x, rect.y, frame.width, frame.height
        )));
    }
    if kept == whole {
        return Ok(frame.clone());
    }
    let row_bytes = kept.width as usize * 4;
    let mut rgba = Vec::with_capacity(row_bytes * kept.height as usize);
    for row in kept.y..kept.bottom() {
        let start = frame.offset(kept.x, row);
        rgba.extend_from_slice(&frame.rgba[start..start + row_bytes]);
    }
    Ok(Frame { width: kept.width, height: kept.height, rgba })
}

/// Copies `tile` into `canvas` with its top-left corner at (x, y); what falls outside the
/// canvas is left out. Tiled captures of a document too large for one are put together so.
pub fn paste(canvas: &mut Frame, tile: &Frame, x: u32, y: u32) {
    let whole = PixelRect { x: 0, y: 0, width: canvas.width, height: canvas.height };
    let kept = whole.intersection(&PixelRect { x, y, width: tile.width, height: tile.height });
    if kept.is_empty() || tile.check().is_err() || canvas.check().is_err() {
        return;
    }
    let row_bytes = kept.width as usize * 4;
    for row in kept.y..kept.bottom() {
        let from = tile.offset(kept.x - x, row - y);
        let to = canvas.offset(kept.x, row);
        canvas.rgba[to..to + row_bytes].copy_from_slice(&tile.rgba[from..from + row_bytes]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame whose every pixel tells where it is: red = x, green = y.
    fn coordinates(width: u32, height: u32) -> Frame {
        let mut frame = Frame::filled(width, height, [0, 0, 0, 255]);
        for y in 0..height {
            for x in 0..width {
                frame.set_pixel(x, y, [x as u8, y as u8, 7, 255]);
            }
        }
        frame
    }

    #[test]
    fn pasted_tiles_rebuild_the_frame_and_what_overhangs_is_left_out() {
        let frame = coordinates(40, 30);
        let mut canvas = Frame::filled(40, 30, [0, 0, 0, 0]);
        for (x, y) in [(0, 0), (16, 0), (32, 0), (0, 16), (16, 16), (32, 16)] {
            let tile = crop(&frame, PixelRect { x, y, width: 16, height: 16 }).unwrap();
            paste(&mut canvas, &tile, x, y);
        }
        assert_eq!(canvas, frame);
        let mut small = Frame::filled(10, 10, [0, 0, 0, 0]);
        paste(&mut small, &frame, 5, 5);
        assert_eq!((small.pixel(5, 5), small.pixel(9, 9), small.pixel(4, 4)), ([0, 0, 7, 255], [4, 4, 7, 255], [0, 0, 0, 0]));
    }

    #[test]
    fn a_crop_keeps_exactly_the_pixels_of_its_rectangle() {
        let frame = coordinates(40, 30);
        let cropped = crop(&frame, PixelRect { x: 5, y: 7, width: 10, height: 4 }).unwrap();
        assert_eq!((cropped.width, cropped.height), (10, 4));
        assert_eq!(cropped.rgba.len(), 10 * 4 * 4);
        assert_eq!(cropped.pixel(0, 0), [5, 7, 7, 255], "top left");
        assert_eq!(cropped.pixel(9, 0), [14, 7, 7, 255], "top right");
        assert_eq!(cropped.pixel(0, 3), [5, 10, 7, 255], "bottom left");
        assert_eq!(cropped.pixel(9, 3), [14, 10, 7, 255], "bottom right");
    }

    #[test]
    fn a_rectangle_past_the_edges_is_clamped_and_one_outside_is_refused() {
        let frame = coordinates(40, 30);
        let cropped = crop(&frame, PixelRect { x: 35, y: 25, width: 100, height: 100 }).unwrap();
        assert_eq!((cropped.width, cropped.height), (5, 5));
        assert_eq!(cropped.pixel(4, 4), [39, 29, 7, 255]);
        assert_eq!(crop(&frame, PixelRect { x: 0, y: 0, width: 40, height: 30 }).unwrap(), frame);
        let outside = crop(&frame, PixelRect { x: 40, y: 0, width: 5, height: 5 }).unwrap_err();
        assert_eq!(outside.code, crate::error::ErrorCode::BadRequest);
        assert!(crop(&frame, PixelRect { x: 3, y: 3, width: 0, height: 5 }).is_err(), "an empty rectangle");
        let broken = Frame { width: 40, height: 30, rgba: vec![0; 40] };
        assert_eq!(crop(&broken, PixelRect { x: 0, y: 0, width: 5, height: 5 }).unwrap_err().code, crate::error::ErrorCode::Internal);
    }
}
