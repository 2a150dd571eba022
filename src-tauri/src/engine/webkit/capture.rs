//! Page capture: WebKit renders the viewport or the whole document into a cairo surface
//! (BGRA, premultiplied), which becomes straight RGBA on a worker thread; cropping, scaling
//! and encoding happen off the main thread too (see `imaging`).

use malo_core::imaging::PixelRect;
use webkit2gtk::{SnapshotOptions, SnapshotRegion, WebViewExt};

use super::tab::Tab;
use crate::engine::{Capture, Frame};
use crate::error::{Error, Result};

/// Below this many pixels one thread converts them all (a viewport); above, both cores
/// take half the rows each (a tall document is tens of millions of pixels).
const SPLIT_FROM_PIXELS: usize = 2_000_000;

/// Captures what `what` asks: exactly the viewport (width x height x device pixel ratio),
/// or the whole document (WebKit refuses sides over 32,767 device pixels), or only a part
/// of either.
pub(super) async fn capture(tab: &Tab, what: Capture) -> Result<Frame> {
    tab.ensure_open()?;
    let region = if what.whole_document { SnapshotRegion::FullDocument } else { SnapshotRegion::Visible };
    let options = if what.transparent { SnapshotOptions::TRANSPARENT_BACKGROUND } else { SnapshotOptions::NONE };
    let surface = tab
        .view
        .snapshot_future(region, options)
        .await
        .map_err(|error| Error::internal(format!("screenshot failed: {}", error.message())))?;
    let image = cairo::ImageSurface::try_from(surface).map_err(|_| Error::internal("screenshot is not an image surface"))?;
    let whole = PixelRect { x: 0, y: 0, width: image.width().max(0) as u32, height: image.height().max(0) as u32 };
    let part = what.part.map_or(whole, |part| whole.intersection(&part));
    if part.is_empty() {
        return Err(Error::internal("the part of the screenshot asked for lies outside the picture"));
    }
    let stride = image.stride() as usize;
    // The pixels go to a worker thread as they are (no copy on the main thread, which every
    // session shares), are converted there, and come back to be released here: the surface
    // is WebKit's, and this is the thread that lets go of it.
    let pixels = Pixels::of(image)?;
    let (pixels, rgba) = gtk::gio::spawn_blocking(move || {
        let rgba = straight_rgba(pixels.bytes(), stride, part);
        (pixels, rgba)
    })
    .await
    .map_err(|_| Error::internal("the screenshot's pixel conversion stopped"))?;
    drop(pixels);
    Ok(Frame { width: part.width, height: part.height, rgba })
}

/// A surface's pixels, movable to a worker thread: the surface itself when this is its only
/// reference (WebKit's snapshot is), else a copy.
enum Pixels {
    Owned(cairo::ImageSurfaceDataOwned),
    Copied(Vec<u8>),
}

impl Pixels {
    fn of(mut image: cairo::ImageSurface) -> Result<Pixels> {
        let unreadable = |error: cairo::BorrowError| Error::internal(format!("screenshot pixels unreadable: {error}"));
        // `data` borrows only a surface nobody else holds: the probe for taking it whole.
        if image.data().is_ok() {
            return image.take_data().map(Pixels::Owned).map_err(unreadable);
        }
        let mut copy = Vec::new();
        image.with_data(|data| copy = data.to_vec()).map_err(unreadable)?;
        Ok(Pixels::Copied(copy))
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Pixels::Owned(owned) => owned.as_ref(),
            Pixels::Copied(bytes) => bytes,
        }
    }
}

/// The `part` of cairo's premultiplied BGRA rows (`stride` bytes apart) as straight RGBA.
fn straight_rgba(data: &[u8], stride: usize, part: PixelRect) -> Vec<u8> {
    let (left, width) = (part.x as usize * 4, part.width as usize * 4);
    let rows = &data[part.y as usize * stride..];
    let mut rgba = vec![0u8; width * part.height as usize];
    let convert = |rows: &[u8], out: &mut [u8]| {
        for (row, out_row) in rows.chunks(stride).zip(out.chunks_exact_mut(width)) {
            convert_row(&row[left..left + width], out_row);
        }
    };
    let half = part.height as usize / 2;
    if (part.width as usize * part.height as usize) < SPLIT_FROM_PIXELS || half == 0 {
        convert(rows, &mut rgba);
        return rgba;
    }
    let (top_out, bottom_out) = rgba.split_at_mut(half * width);
    let (top, bottom) = rows.split_at(half * stride);
    std::thread::scope(|scope| {
        scope.spawn(|| convert(top, top_out));
        convert(bottom, bottom_out);
    });
    rgba
}

/// One row: opaque pixels (nearly all) swap blue and red as one 32-bit word; the others
/// are unpremultiplied as well.
fn convert_row(bgra: &[u8], rgba: &mut [u8]) {
    for (pixel, out) in bgra.chunks_exact(4).zip(rgba.chunks_exact_mut(4)) {
        let word = u32::from_le_bytes([pixel[0], pixel[1], pixel[2], pixel[3]]);
        let converted = if word >> 24 == 0xFF {
            (word & 0xFF00_FF00) | ((word >> 16) & 0xFF) | ((word & 0xFF) << 16)
        } else {
            u32::from_le_bytes(unpremultiply(pixel[2], pixel[1], pixel[0], pixel[3]))
        };
        out.copy_from_slice(&converted.to_le_bytes());
    }
}

fn unpremultiply(red: u8, green: u8, blue: u8, alpha: u8) -> [u8; 4] {
    match alpha {
        0 => [0, 0, 0, 0],
        _ => {
            let scale = |channel: u8| ((channel as u32 * 255 + alpha as u32 / 2) / alpha as u32).min(255) as u8;
            [scale(red), scale(green), scale(blue), alpha]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 3x2 surface's bytes (stride 16: 4 bytes of padding per row), BGRA premultiplied.
    fn surface() -> Vec<u8> {
        let mut data = Vec::new();
        for row in 0..2u8 {
            for column in 0..3u8 {
                data.extend_from_slice(&[10 * column, 20 + row, 200, 255]);
            }
            data.extend_from_slice(&[9, 9, 9, 9]);
        }
        data[4..8].copy_from_slice(&[0, 64, 128, 128]);
        data
    }

    #[test]
    fn opaque_pixels_swap_blue_and_red_and_translucent_ones_are_unpremultiplied() {
        let rgba = straight_rgba(&surface(), 16, PixelRect { x: 0, y: 0, width: 3, height: 2 });
        assert_eq!(&rgba[0..4], &[200, 20, 0, 255]);
        assert_eq!(&rgba[4..8], &[255, 128, 0, 128]);
        assert_eq!(&rgba[20..24], &[200, 21, 20, 255]);
        assert_eq!(rgba.len(), 3 * 2 * 4, "the padding at the end of each row is left out");
    }

    #[test]
    fn a_part_converts_exactly_its_pixels() {
        let whole = straight_rgba(&surface(), 16, PixelRect { x: 0, y: 0, width: 3, height: 2 });
        let part = straight_rgba(&surface(), 16, PixelRect { x: 1, y: 1, width: 2, height: 1 });
        assert_eq!(part, whole[16..24].to_vec());
    }

    #[test]
    fn both_halves_of_a_large_picture_are_converted() {
        let (width, height) = (2000usize, 1200usize);
        let mut data = vec![0u8; width * height * 4];
        for (index, pixel) in data.chunks_exact_mut(4).enumerate() {
            pixel.copy_from_slice(&[index as u8, (index >> 8) as u8, 7, 255]);
        }
        let rgba = straight_rgba(&data, width * 4, PixelRect { x: 0, y: 0, width: width as u32, height: height as u32 });
        for index in [0, width * height / 2 - 1, width * height / 2, width * height - 1] {
            assert_eq!(&rgba[index * 4..index * 4 + 4], &[7, (index >> 8) as u8, index as u8, 255], "pixel {index}");
        }
    }
}
