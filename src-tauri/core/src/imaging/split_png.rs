//! PNG from rows filtered here, compressed one of two ways:
//! - zlib-rs on both cores: the rows are cut in parts, each filtered and compressed by
//!   whichever core is free (each part primed with the 32 KiB of filtered rows before it as
//!   its dictionary, so matches across a seam are still found), and the raw DEFLATE streams
//!   joined into one zlib stream, as pigz does. The first pass of a tall document (about
//!   90 ms of CPU for 1280x12000) then takes half the wall time.
//! - libdeflate in one piece: the thorough pass of a plain page (a form page: 4 ms where
//!   zlib-rs level 9 took 19 ms of CPU).
//!
//! The output is an ordinary PNG.

use std::borrow::Cow;

use flate2::{Compress, Compression, FlushCompress, Status};

use super::Frame;
use crate::error::{Error, Result};

/// DEFLATE's window: the dictionary each part after the first starts from.
const WINDOW: usize = 32 * 1024;
/// Below this many filtered bytes one thread does it all (threads cost more than they
/// save).
const SPLIT_FROM_BYTES: usize = 256 * 1024;
/// The parts a larger image's rows are cut in (more parts than cores, so that a page whose
/// content sits in one half still keeps both busy).
const PARTS: usize = 8;
/// The Adler-32 modulus.
const MODULUS: u64 = 65_521;

/// How a PNG of our own rows is written.
#[derive(Debug, Clone, Copy)]
pub(super) struct SplitSettings {
    /// What compresses the filtered rows.
    pub(super) deflater: Deflater,
    /// Whether an opaque frame is written as RGB (else RGBA).
    pub(super) rgb: bool,
}

/// A DEFLATE compressor and its level.
#[derive(Debug, Clone, Copy)]
pub(super) enum Deflater {
    /// zlib-rs, in parts on both cores for a large image.
    ZlibRs(u32),
    /// libdeflate, in one piece (it takes no dictionary, so parts would lose their seams).
    Libdeflate(i32),
}

/// The thorough pass: RGB, libdeflate level 7 (see `png_writer::encode`).
pub(super) const THOROUGH: SplitSettings = SplitSettings { deflater: Deflater::Libdeflate(7), rgb: true };
/// The first pass of a large frame: RGBA, zlib-rs level 2 on both cores (see
/// `png_writer::FAST`).
pub(super) const FAST: SplitSettings = SplitSettings { deflater: Deflater::ZlibRs(2), rgb: false };

/// The frame as PNG: 8-bit RGB when `settings` say so and it is opaque, else RGBA; rows
/// filtered adaptively (each row the filter whose output has the smallest sum of
/// magnitudes); compressed as the settings say.
pub(super) fn encode(frame: &Frame, settings: SplitSettings) -> Result<Vec<u8>> {
    frame.check()?;
    let rgb = settings.rgb && frame.is_opaque();
    let pixels: Cow<[u8]> = if rgb {
        frame.rgba.chunks_exact(4).flat_map(|pixel| [pixel[0], pixel[1], pixel[2]]).collect::<Vec<u8>>().into()
    } else {
        frame.rgba.as_slice().into()
    };
    let bytes_per_pixel = if rgb { 3 } else { 4 };
    let image = Rows { pixels: &pixels, stride: frame.width as usize * bytes_per_pixel, bytes_per_pixel };
    let compressed = match settings.deflater {
        Deflater::ZlibRs(level) => zlib(&image, level)?,
        Deflater::Libdeflate(level) => libdeflate(&image.filtered(0, image.count()), level)?,
    };
    let mut png = Vec::with_capacity(compressed.len() + 64);
    png.extend_from_slice(b"\x89PNG\r\n\x1a\n");
    let mut header = Vec::with_capacity(13);
    header.extend_from_slice(&frame.width.to_be_bytes());
    header.extend_from_slice(&frame.height.to_be_bytes());
    // Depth 8; colour type 2 (RGB) or 6 (RGBA); deflate; adaptive filtering; no interlace.
    header.extend_from_slice(&[8, if rgb { 2 } else { 6 }, 0, 0, 0]);
    chunk(&mut png, b"IHDR", &header);
    chunk(&mut png, b"IDAT", &compressed);
    chunk(&mut png, b"IEND", &[]);
    Ok(png)
}

/// Appends a PNG chunk: length, type, data, CRC-32 of type and data.
fn chunk(png: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    png.extend_from_slice(&(data.len() as u32).to_be_bytes());
    png.extend_from_slice(kind);
    png.extend_from_slice(data);
    let mut crc = flate2::Crc::new();
    crc.update(kind);
    crc.update(data);
    png.extend_from_slice(&crc.sum().to_be_bytes());
}

/// An image's unfiltered rows.
struct Rows<'a> {
    pixels: &'a [u8],
    /// Bytes per row.
    stride: usize,
    bytes_per_pixel: usize,
}

impl Rows<'_> {
    fn count(&self) -> usize {
        self.pixels.len() / self.stride.max(1)
    }

    /// Rows `from..to`, each prefixed by its filter type and filtered by it.
    fn filtered(&self, from: usize, to: usize) -> Vec<u8> {
        let stride = self.stride;
        let mut filtered = Vec::with_capacity((to - from) * (stride + 1));
        let zeros = vec![0u8; stride];
        let mut candidates: [Vec<u8>; 5] = std::array::from_fn(|_| vec![0u8; stride]);
        for row in from..to {
            let current = &self.pixels[row * stride..(row + 1) * stride];
            let above = if row == 0 { &zeros[..] } else { &self.pixels[(row - 1) * stride..row * stride] };
            // A row equal to the one above costs nothing as `up`: no need to weigh the others.
            if row > 0 && current == above {
                filtered.push(2);
                filtered.extend(std::iter::repeat_n(0u8, stride));
                continue;
            }
            // Up, sub, average and Paeth are weighed (as the png crate does), and a tie goes to
            // the later one. No filter is never chosen: a pale row's raw bytes weigh little
            // (255 is -1) and compress badly (6 % larger on a tall real page).
            let cost = |output: &[u8]| output.iter().map(|&byte| (byte as i8).unsigned_abs() as u32).sum::<u32>();
            let mut best = (u32::MAX, 2);
            for kind in [2u8, 1, 3, 4] {
                let output = &mut candidates[kind as usize];
                apply(kind, current, above, self.bytes_per_pixel, output);
                let weight = cost(output);
                if weight <= best.0 {
                    best = (weight, kind);
                }
            }
            filtered.push(best.1);
            filtered.extend_from_slice(&candidates[best.1 as usize]);
        }
        filtered
    }
}

/// PNG filter `kind` (0 none, 1 sub, 2 up, 3 average, 4 Paeth) of one row. Each filter is
/// its own loop over the bytes after the first pixel (which have a left neighbour), so
/// that the compiler can vectorise it.
fn apply(kind: u8, current: &[u8], above: &[u8], bytes_per_pixel: usize, output: &mut [u8]) {
    let first = bytes_per_pixel.min(current.len());
    // The first pixel has no left neighbour (nor an upper-left one): both count as 0.
    for index in 0..first {
        let predicted = match kind {
            0 | 1 => 0,
            3 => above[index] / 2,
            _ => above[index],
        };
        output[index] = current[index].wrapping_sub(predicted);
    }
    let (current_rest, left) = (&current[first..], &current[..current.len() - first]);
    let (above_rest, up_left) = (&above[first..], &above[..above.len() - first]);
    let output = &mut output[first..];
    match kind {
        0 => output.copy_from_slice(current_rest),
        1 => output.iter_mut().zip(current_rest.iter().zip(left)).for_each(|(out, (&byte, &left))| *out = byte.wrapping_sub(left)),
        2 => output.iter_mut().zip(current_rest.iter().zip(above_rest)).for_each(|(out, (&byte, &up))| *out = byte.wrapping_sub(up)),
        3 => output
            .iter_mut()
            .zip(current_rest.iter().zip(left.iter().zip(above_rest)))
            .for_each(|(out, (&byte, (&left, &up)))| *out = byte.wrapping_sub(((left as u16 + up as u16) / 2) as u8)),
        _ => output
            .iter_mut()
            .zip(current_rest.iter().zip(left.iter().zip(above_rest.iter().zip(up_left))))
            .for_each(|(out, (&byte, (&left, (&up, &up_left))))| *out = byte.wrapping_sub(paeth(left, up, up_left))),
    }
}

/// The Paeth predictor: of left, up and up-left, the one nearest to left + up - up-left.
fn paeth(left: u8, up: u8, up_left: u8) -> u8 {
    let estimate = left as i16 + up as i16 - up_left as i16;
    let (to_left, to_up, to_up_left) = ((estimate - left as i16).abs(), (estimate - up as i16).abs(), (estimate - up_left as i16).abs());
    if to_left <= to_up && to_left <= to_up_left {
        left
    } else if to_up <= to_up_left {
        up
    } else {
        up_left
    }
}

/// The filtered rows as one zlib stream at `level`: cut in [`PARTS`] parts of rows that the
/// machine's cores (two here) take in turn, each filtering its rows and compressing them.
fn zlib(image: &Rows, level: u32) -> Result<Vec<u8>> {
    let rows = image.count();
    let parts = if rows * (image.stride + 1) < SPLIT_FROM_BYTES { 1 } else { PARTS.min(rows) };
    let size = rows.div_ceil(parts.max(1)).max(1);
    let starts: Vec<usize> = (0..parts).map(|part| part * size).filter(|start| *start < rows.max(1)).collect();
    // The rows before a part whose filtered bytes fill its dictionary.
    let context_rows = WINDOW.div_ceil(image.stride + 1);
    let workers = std::thread::available_parallelism().map_or(1, |cores| cores.get()).min(starts.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    type Part = Result<(Vec<u8>, u32, usize)>;
    let done: std::sync::Mutex<Vec<Option<Part>>> = std::sync::Mutex::new(starts.iter().map(|_| None).collect());
    let work = || loop {
        let part = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let Some(&start) = starts.get(part) else { break };
        let end = (start + size).min(rows);
        let from = start.saturating_sub(context_rows);
        let filtered = image.filtered(from, end);
        let (before, data) = filtered.split_at((start - from) * (image.stride + 1));
        let dictionary = (start > 0).then(|| &before[before.len().saturating_sub(WINDOW)..]);
        let flush = if end == rows { FlushCompress::Finish } else { FlushCompress::Sync };
        let compressed = deflate(data, dictionary, level, flush).map(|bytes| (bytes, adler32(data), data.len()));
        done.lock().expect("parts poisoned")[part] = Some(compressed);
    };
    std::thread::scope(|scope| {
        for _ in 1..workers {
            scope.spawn(work);
        }
        work();
    });
    let mut stream = vec![0x78, if level >= 7 { 0xDA } else { 0x5E }];
    let mut checksum = 1;
    for part in done.into_inner().expect("parts poisoned") {
        let (compressed, part_checksum, length) = part.ok_or_else(|| Error::internal("a PNG compression thread stopped"))??;
        stream.extend(compressed);
        checksum = adler32_combine(checksum, part_checksum, length);
    }
    stream.extend_from_slice(&checksum.to_be_bytes());
    Ok(stream)
}

/// `data` as one zlib stream, by libdeflate at `level` (1 to 12).
fn libdeflate(data: &[u8], level: i32) -> Result<Vec<u8>> {
    let level = libdeflater::CompressionLvl::new(level).map_err(|_| Error::internal(format!("no libdeflate level {level}")))?;
    let mut compressor = libdeflater::Compressor::new(level);
    let mut stream = vec![0u8; compressor.zlib_compress_bound(data.len())];
    let length =
        compressor.zlib_compress(data, &mut stream).map_err(|error| Error::internal(format!("PNG compression failed: {error:?}")))?;
    stream.truncate(length);
    Ok(stream)
}

/// Raw DEFLATE of `data` at `level` (no zlib header), starting from `dictionary`; ends with
/// `flush`: `Sync` leaves the stream open at a byte boundary for another part to follow.
fn deflate(data: &[u8], dictionary: Option<&[u8]>, level: u32, flush: FlushCompress) -> Result<Vec<u8>> {
    let failed = |error: flate2::CompressError| Error::internal(format!("PNG compression failed: {error}"));
    let mut compressor = Compress::new(Compression::new(level), false);
    if let Some(dictionary) = dictionary {
        compressor.set_dictionary(dictionary).map_err(failed)?;
    }
    let mut output = Vec::with_capacity(data.len() / 4 + 1024);
    loop {
        let consumed = compressor.total_in() as usize;
        let status = compressor.compress_vec(&data[consumed..], &mut output, flush).map_err(failed)?;
        let done = compressor.total_in() as usize == data.len();
        match status {
            Status::StreamEnd => break,
            _ if done && flush != FlushCompress::Finish && output.len() < output.capacity() => break,
            _ => output.reserve(output.capacity().max(4096)),
        }
    }
    Ok(output)
}

/// The Adler-32 checksum zlib ends a stream with.
fn adler32(data: &[u8]) -> u32 {
    // 5552 bytes is the most that can be summed before the sums must be reduced.
    let (mut low, mut high) = (1u32, 0u32);
    for block in data.chunks(5552) {
        for &byte in block {
            low += byte as u32;
            high += low;
        }
        low %= MODULUS as u32;
        high %= MODULUS as u32;
    }
    (high << 16) | low
}

/// The Adler-32 of `a` followed by `b`, from each one's (`b` being `length` bytes long).
fn adler32_combine(first: u32, second: u32, length: usize) -> u32 {
    let (first_low, first_high) = ((first & 0xFFFF) as u64, (first >> 16) as u64);
    let (second_low, second_high) = ((second & 0xFFFF) as u64, (second >> 16) as u64);
    let length = length as u64 % MODULUS;
    // Each byte of `b` adds `a`'s sum (less its starting 1) once more to the high sum.
    let low = (first_low + second_low + MODULUS - 1) % MODULUS;
    let high = (first_high + second_high + length * first_low + MODULUS - length) % MODULUS;
    ((high << 16) | low) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(png: &[u8]) -> Vec<u8> {
        image::load_from_memory(png).expect("a PNG image can read").to_rgba8().into_raw()
    }

    #[test]
    fn split_pngs_read_back_exactly_and_compress_like_one_stream() {
        // Large enough to be split, opaque and translucent.
        let page = super::super::samples::page(640, 400);
        let split = encode(&page, FAST).unwrap();
        assert_eq!(decoded(&split), page.rgba);
        let one_stream = super::super::png_writer::encode_with(&page, super::super::png_writer::FAST).unwrap();
        assert!(split.len() as f64 <= one_stream.len() as f64 * 1.03, "split {} B against one stream {} B", split.len(), one_stream.len());
        let mut translucent = super::super::samples::photo(400, 300);
        translucent.set_pixel(7, 7, [1, 2, 3, 4]);
        for settings in [FAST, THOROUGH] {
            assert_eq!(decoded(&encode(&translucent, settings).unwrap()), translucent.rgba, "{settings:?}");
        }
        let small = super::super::samples::photo(20, 10);
        assert_eq!(decoded(&encode(&small, FAST).unwrap()), small.rgba, "one stream below the split size");
    }

    #[test]
    fn the_thorough_settings_read_back_exactly_as_rgb() {
        let page = super::super::samples::page(640, 400);
        let thorough = encode(&page, THOROUGH).unwrap();
        assert_eq!(thorough[25], 2, "an opaque frame is RGB");
        assert_eq!(decoded(&thorough), page.rgba);
    }

    #[test]
    fn adler32_is_zlibs() {
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        assert_eq!(adler32(&[]), 1);
        let long = vec![255u8; 100_000];
        let mut expected = (1u32, 0u32);
        for &byte in &long {
            expected.0 = (expected.0 + byte as u32) % 65_521;
            expected.1 = (expected.1 + expected.0) % 65_521;
        }
        assert_eq!(adler32(&long), (expected.1 << 16) | expected.0);
        for cut in [0, 1, 5552, 77_777, 100_000] {
            let (first, second) = long.split_at(cut);
            assert_eq!(adler32_combine(adler32(first), adler32(second), second.len()), adler32(&long), "cut at {cut}");
        }
        let mixed: Vec<u8> = (0..70_000u32).map(|index| (index * 31 % 251) as u8).collect();
        let (first, second) = mixed.split_at(12_345);
        assert_eq!(adler32_combine(adler32(first), adler32(second), second.len()), adler32(&mixed));
    }
}
