//! PNG encoding of captured frames, off the main thread.

use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::{ExtendedColorType, ImageEncoder};

use super::Frame;
use crate::error::{Error, Result};

/// Encodes a frame as PNG, favouring speed over size (screenshots are transient).
pub fn encode(frame: &Frame) -> Result<Vec<u8>> {
    let mut png = Vec::with_capacity(frame.rgba.len() / 4);
    PngEncoder::new_with_quality(&mut png, CompressionType::Fast, FilterType::Adaptive)
        .write_image(&frame.rgba, frame.width, frame.height, ExtendedColorType::Rgba8)
        .map_err(|error| Error::internal(format!("PNG encoding failed: {error}")))?;
    Ok(png)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_size_and_pixels() {
        let frame = Frame { width: 3, height: 2, rgba: (0..24).map(|value| value as u8 * 10).collect() };
        let png = encode(&frame).unwrap();
        let decoded = image::load_from_memory(&png).unwrap().to_rgba8();
        assert_eq!(decoded.dimensions(), (3, 2));
        assert_eq!(decoded.into_raw(), frame.rgba);
    }
}
