//! PNG writing: lossless, with a palette when the frame has at most 256 colours, else
//! RGBA (first) or RGB (second try), compressed as the module's figures chose (see
//! `imaging/mod.rs`).

use png::{BitDepth, ColorType, DeflateCompression, Filter};

use super::{split_png, Frame};
use crate::error::{Error, Result};

/// How a frame is written as PNG: the layout rule, the compression and the row filters.
#[derive(Debug, Clone, Copy)]
pub(super) struct PngSettings {
    /// Whether a frame of at most 256 colours is written with a palette.
    pub(super) palette: bool,
    /// Whether an opaque frame is written as RGB (else RGBA, its alpha all 255).
    pub(super) rgb: bool,
    /// The DEFLATE compression of the pixel rows.
    pub(super) deflate: DeflateCompression,
    /// The row filter of RGB and RGBA images.
    pub(super) filter: Filter,
    /// The row filter of palette images (their indices do not predict each other's values).
    pub(super) palette_filter: Filter,
}

/// The first try: fast, and already smaller than Chromium's PNG on busy pages. RGBA
/// although the frame is opaque: zlib-rs's fast levels find matches of four bytes, which
/// RGBA pixels line up with and RGB ones do not (RGBA comes out 10 % smaller).
pub(super) const FAST: PngSettings = PngSettings {
    palette: true,
    rgb: false,
    deflate: DeflateCompression::Level(2),
    filter: Filter::Adaptive,
    palette_filter: Filter::NoFilter,
};
/// The second try of a palette frame (small work): level 9. Other frames take
/// `split_png::THOROUGH` (RGB, libdeflate level 7), which finds three-byte matches (one RGB
/// pixel) at any level: about 10 % smaller than the first try.
pub(super) const THOROUGH: PngSettings = PngSettings { rgb: true, deflate: DeflateCompression::Level(9), ..FAST };
/// Below this size the first try is redone thoroughly. The thorough pass costs about
/// 0.2 ms of CPU per KiB of the first try's output (4.3 ms for a form page's 20 KiB), so
/// this bounds it near 7 ms; busier pages keep the first try, already smaller than
/// Chromium's.
pub(super) const THOROUGH_BELOW_BYTES: usize = 32 * 1024;

/// From this many pixels (a document or element taller than a viewport) the first try
/// runs on both cores: the same size as the png crate's single stream to 0.1 %, in about
/// half the wall time (a 1280x11978 page: 2,863,567 B against 2,863,579). Below, threads
/// cost what they save.
const SPLIT_FAST_FROM_PIXELS: usize = 2_000_000;

/// A frame as PNG, as the module's figures chose: [`FAST`] (on two cores for a large frame
/// without a palette, see `split_png.rs`), then a thorough try when the first is below
/// [`THOROUGH_BELOW_BYTES`] (libdeflate, or [`THOROUGH`] for a palette frame), whichever is
/// smaller.
pub(super) fn encode(frame: &Frame) -> Result<Vec<u8>> {
    // A large frame of many colours (a tall document) is written on both cores.
    let large = frame.rgba.len() / 4 >= SPLIT_FAST_FROM_PIXELS;
    let first = if large && Palette::of(frame).is_none() { split_png::encode(frame, split_png::FAST)? } else { encode_with(frame, FAST)? };
    if first.len() >= THOROUGH_BELOW_BYTES {
        return Ok(first);
    }
    // A palette image (colour type 3 in IHDR) is small work for zlib-rs; RGB and RGBA go to
    // libdeflate.
    let second = if first.get(25) == Some(&3) { encode_with(frame, THOROUGH)? } else { split_png::encode(frame, split_png::THOROUGH)? };
    Ok(if second.len() < first.len() { second } else { first })
}

/// A frame as PNG, written with `settings`.
pub(super) fn encode_with(frame: &Frame, settings: PngSettings) -> Result<Vec<u8>> {
    let failed = |error: png::EncodingError| Error::internal(format!("PNG encoding failed: {error}"));
    let mut bytes = Vec::with_capacity(frame.rgba.len() / 8);
    let palette = if settings.palette { Palette::of(frame) } else { None };
    let mut encoder = png::Encoder::new(&mut bytes, frame.width, frame.height);
    encoder.set_depth(BitDepth::Eight);
    encoder.set_deflate_compression(settings.deflate);
    let pixels: std::borrow::Cow<[u8]> = match &palette {
        Some(palette) => {
            encoder.set_color(ColorType::Indexed);
            encoder.set_palette(palette.rgb());
            if let Some(alphas) = palette.alphas() {
                encoder.set_trns(alphas);
            }
            encoder.set_filter(settings.palette_filter);
            palette.indices.as_slice().into()
        }
        None if settings.rgb && frame.is_opaque() => {
            encoder.set_color(ColorType::Rgb);
            encoder.set_filter(settings.filter);
            frame.rgba.chunks_exact(4).flat_map(|pixel| [pixel[0], pixel[1], pixel[2]]).collect::<Vec<u8>>().into()
        }
        None => {
            encoder.set_color(ColorType::Rgba);
            encoder.set_filter(settings.filter);
            frame.rgba.as_slice().into()
        }
    };
    let mut writer = encoder.write_header().map_err(failed)?;
    writer.write_image_data(&pixels).map_err(failed)?;
    writer.finish().map_err(failed)?;
    Ok(bytes)
}

/// A frame of at most 256 colours as a palette and one palette index per pixel.
pub(super) struct Palette {
    /// The colours, RGBA, in order of first appearance.
    colours: Vec<[u8; 4]>,
    /// Each pixel's colour, as its place in `colours`.
    indices: Vec<u8>,
}

/// Slots of the colour table [`Palette::of`] fills: a power of two, four times the
/// colours a palette may hold, so that probes stay short.
const TABLE_SLOTS: usize = 1024;
/// A slot of the colour table that holds no colour.
const EMPTY_SLOT: u16 = u16::MAX;

impl Palette {
    /// The frame's palette, or `None` when it has more than 256 colours. Costs one pass
    /// over the pixels at most, and stops at the 257th colour.
    pub(super) fn of(frame: &Frame) -> Option<Palette> {
        let mut keys = [0u32; TABLE_SLOTS];
        let mut places = [EMPTY_SLOT; TABLE_SLOTS];
        let mut colours: Vec<[u8; 4]> = Vec::with_capacity(256);
        let mut indices = Vec::with_capacity(frame.rgba.len() / 4);
        // Pages are mostly runs of one colour: the run's index is reused without a look-up.
        let mut last: Option<(u32, u8)> = None;
        for pixel in frame.rgba.chunks_exact(4) {
            let colour = u32::from_le_bytes([pixel[0], pixel[1], pixel[2], pixel[3]]);
            if let Some((last_colour, last_index)) = last {
                if last_colour == colour {
                    indices.push(last_index);
                    continue;
                }
            }
            let mut slot = (colour.wrapping_mul(0x9E37_79B1) >> 22) as usize;
            let index = loop {
                if places[slot] == EMPTY_SLOT {
                    if colours.len() == 256 {
                        return None;
                    }
                    keys[slot] = colour;
                    places[slot] = colours.len() as u16;
                    colours.push([pixel[0], pixel[1], pixel[2], pixel[3]]);
                    break places[slot] as u8;
                }
                if keys[slot] == colour {
                    break places[slot] as u8;
                }
                slot = (slot + 1) % TABLE_SLOTS;
            };
            last = Some((colour, index));
            indices.push(index);
        }
        Some(Palette { colours, indices })
    }

    /// How many colours it has.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.colours.len()
    }

    /// The PLTE chunk: each colour's red, green, blue.
    fn rgb(&self) -> Vec<u8> {
        self.colours.iter().flat_map(|colour| [colour[0], colour[1], colour[2]]).collect()
    }

    /// The tRNS chunk (each colour's alpha, up to the last that is not opaque), or `None`
    /// when every colour is opaque.
    fn alphas(&self) -> Option<Vec<u8>> {
        let last_translucent = self.colours.iter().rposition(|colour| colour[3] != 255)?;
        Some(self.colours[..=last_translucent].iter().map(|colour| colour[3]).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(png: &[u8]) -> image::RgbaImage {
        image::load_from_memory(png).expect("a PNG image can read").to_rgba8()
    }

    fn colour_type(png: &[u8]) -> u8 {
        // IHDR follows the 8-byte signature, a length and a type; the colour type is its 10th byte.
        png[8 + 8 + 9]
    }

    #[test]
    fn every_layout_round_trips_exactly() {
        let mut few_colours = Frame::filled(30, 20, [255, 255, 255, 255]);
        few_colours.set_pixel(3, 4, [10, 20, 30, 255]);
        few_colours.set_pixel(29, 19, [200, 0, 0, 255]);
        let mut translucent = few_colours.clone();
        translucent.set_pixel(0, 0, [1, 2, 3, 128]);
        let mut many_colours = Frame::filled(30, 20, [0, 0, 0, 255]);
        for y in 0..20 {
            for x in 0..30 {
                many_colours.set_pixel(x, y, [x as u8 * 8, y as u8 * 12, (x * y) as u8, 255]);
            }
        }
        let mut many_translucent = many_colours.clone();
        many_translucent.set_pixel(5, 5, [9, 9, 9, 0]);
        for (name, frame, colour_types) in [
            ("palette", &few_colours, &[3][..]),
            ("palette with alpha", &translucent, &[3]),
            ("opaque", &many_colours, &[2, 6]),
            ("RGBA", &many_translucent, &[6]),
        ] {
            let png = encode(frame).unwrap();
            assert!(colour_types.contains(&colour_type(&png)), "{name}: colour type {}", colour_type(&png));
            assert_eq!(decoded(&png).into_raw(), frame.rgba, "{name}");
        }
    }

    #[test]
    fn the_thorough_try_is_kept_only_when_smaller() {
        let frame = super::super::samples::page(400, 300);
        let chosen = encode(&frame).unwrap();
        let fast = encode_with(&frame, FAST).unwrap();
        let thorough = super::super::split_png::encode(&frame, super::super::split_png::THOROUGH).unwrap();
        assert!(fast.len() < THOROUGH_BELOW_BYTES, "a small page gets the second try");
        assert_eq!(chosen.len(), fast.len().min(thorough.len()));
        assert_eq!(decoded(&chosen).into_raw(), frame.rgba);
    }

    #[test]
    fn a_palette_holds_at_most_256_colours() {
        let mut frame = Frame::filled(64, 8, [0, 0, 0, 255]);
        for index in 0..256u32 {
            frame.set_pixel(index % 64, index / 64, [index as u8, 0, 0, 255]);
        }
        assert_eq!(Palette::of(&frame).map(|palette| palette.len()), Some(256));
        frame.set_pixel(0, 7, [0, 1, 0, 255]);
        assert!(Palette::of(&frame).is_none(), "257 colours");
    }
}
