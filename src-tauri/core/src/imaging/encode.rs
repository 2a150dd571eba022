//! Encoding a frame as PNG (lossless, see `png_writer.rs`), JPEG or lossy WebP.

use super::{png_writer, Frame};
use crate::error::{Error, Result};

/// An image format a frame can be encoded in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Lossless; the smallest layout the frame allows.
    #[default]
    Png,
    /// Lossy, at a quality; no alpha.
    Jpeg,
    /// Lossy WebP (libwebp), at a quality; alpha kept when the frame has any.
    Webp,
}

impl Format {
    /// Its MIME type (`image/png`, ...).
    pub fn mime_type(self) -> &'static str {
        match self {
            Format::Png => "image/png",
            Format::Jpeg => "image/jpeg",
            Format::Webp => "image/webp",
        }
    }

    /// Its usual file name extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Png => "png",
            Format::Jpeg => "jpg",
            Format::Webp => "webp",
        }
    }
}

/// The frame encoded in `format`. `quality` (1 to 100, clamped into that range) applies
/// to JPEG and WebP; PNG is always lossless.
pub fn encode(frame: &Frame, format: Format, quality: u8) -> Result<Vec<u8>> {
    frame.check()?;
    let quality = quality.clamp(1, 100);
    match format {
        Format::Png => png_writer::encode(frame),
        Format::Jpeg => jpeg(frame, quality),
        Format::Webp => webp(frame, quality),
    }
}

/// JPEG of the frame's colours (alpha left out), with the colour planes at half resolution
/// each way (4:2:0), as browsers and cameras write them, and Huffman tables made for the
/// picture (the standard tables waste bytes on flat page backgrounds).
fn jpeg(frame: &Frame, quality: u8) -> Result<Vec<u8>> {
    let too_large = || Error::bad_request(format!("a JPEG is at most 65535 px each way, not {}x{}", frame.width, frame.height));
    let width = u16::try_from(frame.width).map_err(|_| too_large())?;
    let height = u16::try_from(frame.height).map_err(|_| too_large())?;
    let mut bytes = Vec::with_capacity(frame.rgba.len() / 16);
    let mut encoder = jpeg_encoder::Encoder::new(&mut bytes, quality);
    encoder.set_sampling_factor(jpeg_encoder::SamplingFactor::R_4_2_0);
    encoder.set_optimized_huffman_tables(true);
    encoder
        .encode(&frame.rgba, width, height, jpeg_encoder::ColorType::Rgba)
        .map_err(|error| Error::internal(format!("JPEG encoding failed: {error}")))?;
    Ok(bytes)
}

/// Lossy WebP through libwebp's simple encoder: RGB when the frame is opaque (no alpha
/// plane to code), else RGBA.
fn webp(frame: &Frame, quality: u8) -> Result<Vec<u8>> {
    let failed = |_| Error::internal(format!("WebP encoding of a {}x{} frame failed", frame.width, frame.height));
    let encoded = if frame.is_opaque() {
        libwebp::WebPEncodeRGB(&rgb(frame), frame.width, frame.height, frame.width * 3, quality as f32).map_err(failed)?
    } else {
        libwebp::WebPEncodeRGBA(&frame.rgba, frame.width, frame.height, frame.width * 4, quality as f32).map_err(failed)?
    };
    Ok(encoded.to_vec())
}

/// The frame's pixels without alpha.
fn rgb(frame: &Frame) -> Vec<u8> {
    frame.rgba.chunks_exact(4).flat_map(|pixel| [pixel[0], pixel[1], pixel[2]]).collect()
}

#[cfg(test)]
mod tests {
    use super::super::samples;
    use super::*;

    fn decoded(bytes: &[u8]) -> image::RgbaImage {
        image::load_from_memory(bytes).expect("a readable image").to_rgba8()
    }

    #[test]
    fn png_is_lossless() {
        for frame in [samples::page(320, 200), samples::photo(64, 48)] {
            let png = encode(&frame, Format::Png, 1).unwrap();
            assert_eq!(decoded(&png).into_raw(), frame.rgba);
        }
    }

    #[test]
    fn jpeg_and_webp_decode_at_the_frame_size() {
        let frame = samples::photo(160, 90);
        let mut translucent = frame.clone();
        translucent.set_pixel(0, 0, [10, 10, 10, 100]);
        for (format, frame, magic) in
            [(Format::Jpeg, &frame, &b"\xFF\xD8"[..]), (Format::Webp, &frame, b"RIFF"), (Format::Webp, &translucent, b"RIFF")]
        {
            let bytes = encode(frame, format, 60).unwrap();
            assert!(bytes.starts_with(magic), "{format:?}");
            assert_eq!(decoded(&bytes).dimensions(), (160, 90), "{format:?}");
        }
    }

    #[test]
    fn lossy_formats_honour_quality_and_beat_png_on_a_photo() {
        let frame = samples::photo(320, 240);
        let png = encode(&frame, Format::Png, 100).unwrap().len();
        let jpeg_50 = encode(&frame, Format::Jpeg, 50).unwrap().len();
        let jpeg_95 = encode(&frame, Format::Jpeg, 95).unwrap().len();
        let webp_20 = encode(&frame, Format::Webp, 20).unwrap().len();
        let webp_90 = encode(&frame, Format::Webp, 90).unwrap().len();
        assert!(jpeg_50 < png, "JPEG q50 {jpeg_50} B, PNG {png} B");
        assert!(jpeg_50 < jpeg_95, "JPEG q50 {jpeg_50} B, q95 {jpeg_95} B");
        assert!(webp_20 < webp_90, "WebP q20 {webp_20} B, q90 {webp_90} B: lossy, so quality counts");
        assert!(webp_90 < png, "WebP q90 {webp_90} B, PNG {png} B");
    }

    #[test]
    fn jpeg_colour_is_sampled_at_half_resolution() {
        let jpeg = encode(&samples::photo(64, 48), Format::Jpeg, 80).unwrap();
        // The baseline frame header (SOF0): length, precision, height, width, components,
        // then per component its id and sampling factors (luma 2x2, chroma 1x1: 4:2:0).
        let at = jpeg.windows(2).position(|marker| marker == [0xFF, 0xC0]).expect("a baseline frame header");
        let header = &jpeg[at + 2..];
        assert_eq!(header[7], 3, "three components");
        assert_eq!((header[9], header[12], header[15]), (0x22, 0x11, 0x11));
    }

    #[test]
    fn formats_name_their_mime_types_and_a_bad_frame_is_refused() {
        assert_eq!(Format::Png.mime_type(), "image/png");
        assert_eq!(Format::Jpeg.mime_type(), "image/jpeg");
        assert_eq!(Format::Webp.mime_type(), "image/webp");
        assert_eq!(serde_json::from_str::<Format>("\"webp\"").unwrap(), Format::Webp);
        let short = Frame { width: 4, height: 4, rgba: vec![0; 10] };
        assert!(encode(&short, Format::Png, 80).is_err());
    }
}
