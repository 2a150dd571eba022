//! Viewport capture: WebKit renders the visible region into a cairo surface (BGRA,
//! premultiplied), which becomes straight RGBA here; encoding happens off the main
//! thread (see `imaging`).

use webkit2gtk::{SnapshotOptions, SnapshotRegion, WebViewExt};

use super::tab::Tab;
use crate::engine::Frame;
use crate::error::{Error, Result};

/// Captures exactly the viewport (width x height x device pixel ratio).
pub(super) async fn viewport(tab: &Tab) -> Result<Frame> {
    capture(tab, SnapshotRegion::Visible).await
}

/// Captures the whole document, below and right of the viewport too.
pub(super) async fn document(tab: &Tab) -> Result<Frame> {
    capture(tab, SnapshotRegion::FullDocument).await
}

async fn capture(tab: &Tab, region: SnapshotRegion) -> Result<Frame> {
    tab.ensure_open()?;
    let surface = tab
        .view
        .snapshot_future(region, SnapshotOptions::NONE)
        .await
        .map_err(|error| Error::internal(format!("screenshot failed: {}", error.message())))?;
    let image = cairo::ImageSurface::try_from(surface).map_err(|_| Error::internal("screenshot is not an image surface"))?;
    image.flush();
    let (width, height, stride) = (image.width() as usize, image.height() as usize, image.stride() as usize);
    let mut rgba = Vec::with_capacity(width * height * 4);
    image
        .with_data(|data| {
            for row in data.chunks(stride).take(height) {
                for pixel in row[..width * 4].chunks_exact(4) {
                    let (blue, green, red, alpha) = (pixel[0], pixel[1], pixel[2], pixel[3]);
                    rgba.extend_from_slice(&unpremultiply(red, green, blue, alpha));
                }
            }
        })
        .map_err(|error| Error::internal(format!("screenshot pixels unreadable: {error}")))?;
    Ok(Frame { width: width as u32, height: height as u32, rgba })
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
