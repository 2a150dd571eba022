//! Page capture: WebKit renders the viewport or the whole document into a cairo surface
//! (BGRA, premultiplied), which becomes straight RGBA on a worker thread; cropping, scaling
//! and encoding happen off the main thread too (see `imaging`).

use webkit2gtk::{SnapshotOptions, SnapshotRegion, WebViewExt};

use super::tab::Tab;
use crate::engine::{Capture, Frame};
use crate::error::{Error, Result};

/// Captures what `what` asks: exactly the viewport (width x height x device pixel ratio),
/// or the whole document (WebKit refuses sides over 32,767 device pixels).
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
    image.flush();
    let (width, height, stride) = (image.width() as usize, image.height() as usize, image.stride() as usize);
    // One copy of the pixels here (a memcpy); their conversion runs on a worker thread so
    // that a tall document does not hold up every session's main thread.
    let mut pixels = Vec::new();
    image.with_data(|data| pixels = data.to_vec()).map_err(|error| Error::internal(format!("screenshot pixels unreadable: {error}")))?;
    let rgba = gtk::gio::spawn_blocking(move || straight_rgba(&pixels, width, height, stride))
        .await
        .map_err(|_| Error::internal("the screenshot's pixel conversion stopped"))?;
    Ok(Frame { width: width as u32, height: height as u32, rgba })
}

/// Cairo's premultiplied BGRA rows (`stride` bytes apart) as straight RGBA.
fn straight_rgba(data: &[u8], width: usize, height: usize, stride: usize) -> Vec<u8> {
    let mut rgba = Vec::with_capacity(width * height * 4);
    for row in data.chunks(stride).take(height) {
        for pixel in row[..width * 4].chunks_exact(4) {
            let (blue, green, red, alpha) = (pixel[0], pixel[1], pixel[2], pixel[3]);
            rgba.extend_from_slice(&unpremultiply(red, green, blue, alpha));
        }
    }
    rgba
}

fn unpremultiply(red: u8, green: u8, blue: u8, alpha: u8) -> [u8; 4] {
    match alpha {
        255 => [red, green, blue, 255],
        0 => [0, 0, 0, 0],
        _ => {
            let scale = |channel: u8| ((channel as u32 * 255 + alpha as u32 / 2) / alpha as u32).min(255) as u8;
            [scale(red), scale(green), scale(blue), alpha]
        }
    }
}
