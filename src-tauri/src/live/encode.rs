//! A painted frame as the viewer receives it: cairo's BGRA turned into RGBA, scaled down
//! to the viewer's window (device pixels; never up) and encoded as JPEG. Runs on a
//! blocking worker thread, never on the GTK main thread.

use malo_core::imaging::{self, FitLimits, Format};

use crate::engine::frames::RawFrame;
use crate::error::{Error, Result};

/// JPEG quality: text stays readable, a 1280x800 page is tens of kilobytes.
const QUALITY: u8 = 70;

/// `frame` fitted into `max_width` x `max_height` (0: no limit), as JPEG.
pub(super) fn jpeg(frame: &RawFrame, max_width: u32, max_height: u32) -> Result<Vec<u8>> {
    let (width, height) = (frame.width as usize, frame.height as usize);
    if frame.stride < width * 4 || frame.bgra.len() < frame.stride * height {
        return Err(Error::internal("live frame: fewer pixels than its size"));
    }
    let mut rgba = vec![0u8; width * height * 4];
    for (row, target) in rgba.chunks_exact_mut(width * 4).enumerate() {
        let source = &frame.bgra[row * frame.stride..row * frame.stride + width * 4];
        for (from, to) in source.chunks_exact(4).zip(target.chunks_exact_mut(4)) {
            // Pages are opaque: premultiplied or not, the colour is the same.
            to.copy_from_slice(&[from[2], from[1], from[0], 255]);
        }
    }
    let picture = imaging::Frame { width: frame.width, height: frame.height, rgba };
    let limits = FitLimits { max_width: Some(max_width), max_height: Some(max_height), factor: None };
    let picture = imaging::fit(picture, limits);
    imaging::encode(&picture, Format::Jpeg, QUALITY).map_err(|error| Error::internal(format!("live frame: {error}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_is_fitted_to_the_viewer_and_keeps_its_colours() {
        let (width, height, stride) = (40u32, 20u32, 176usize);
        let mut bgra = vec![0u8; stride * height as usize];
        for row in bgra.chunks_exact_mut(stride) {
            for pixel in row[..width as usize * 4].chunks_exact_mut(4) {
                pixel.copy_from_slice(&[200, 10, 20, 255]);
            }
        }
        let frame = RawFrame { width, height, stride, bgra, painted_at: std::time::Instant::now() };
        let bytes = jpeg(&frame, 20, 0).unwrap();
        let decoded = image::load_from_memory(&bytes).unwrap().to_rgb8();
        assert_eq!(decoded.dimensions(), (20, 10));
        let [red, green, blue] = decoded.get_pixel(5, 5).0;
        assert!(red < 40 && green < 40 && blue > 160, "{red} {green} {blue}");
        assert_eq!(image::load_from_memory(&jpeg(&frame, 0, 0).unwrap()).unwrap().width(), 40);
    }
}
