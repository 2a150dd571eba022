//! Scaling a frame down to fit limits, keeping its aspect ratio (never up).

use image::imageops::FilterType;
use image::RgbaImage;

use super::Frame;

/// The resampling filter of [`fit`]: Catmull-Rom keeps text at half size visibly sharper
/// than Triangle (bilinear) for about 20 % more time, and Lanczos3 adds little over it for
/// 30 % more (figures in `imaging/mod.rs`).
pub(super) const FILTER: FilterType = FilterType::CatmullRom;

/// How large a scaled frame may be; every limit given applies, and none makes it larger.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FitLimits {
    /// At most this many pixels across.
    pub max_width: Option<u32>,
    /// At most this many pixels down.
    pub max_height: Option<u32>,
    /// At most this fraction of the frame's size (0.5: half as wide and half as high).
    pub factor: Option<f64>,
}

impl FitLimits {
    /// The scale the limits allow for a `width` x `height` frame: at most 1. A limit of 0,
    /// a factor that is not a positive number, counts as no limit.
    pub fn scale(&self, width: u32, height: u32) -> f64 {
        let mut scale: f64 = 1.0;
        if let Some(factor) = self.factor.filter(|factor| factor.is_finite() && *factor > 0.0) {
            scale = scale.min(factor);
        }
        if let Some(max_width) = self.max_width.filter(|max| *max > 0) {
            scale = scale.min(max_width as f64 / width.max(1) as f64);
        }
        if let Some(max_height) = self.max_height.filter(|max| *max > 0) {
            scale = scale.min(max_height as f64 / height.max(1) as f64);
        }
        scale
    }

    /// The size a `width` x `height` frame becomes: each side scaled and rounded, at
    /// least 1, and never past a maximum (rounding may not break a limit).
    pub fn size(&self, width: u32, height: u32) -> (u32, u32) {
        let scale = self.scale(width, height);
        if scale >= 1.0 {
            return (width, height);
        }
        let side = |length: u32, max: Option<u32>| {
            let scaled = ((length as f64 * scale).round() as u32).clamp(1, length);
            max.filter(|max| *max > 0).map_or(scaled, |max| scaled.min(max))
        };
        (side(width, self.max_width), side(height, self.max_height))
    }
}

/// The frame scaled down to fit `limits` (see [`FitLimits::size`]), with the aspect ratio
/// kept; a frame that already fits comes back as it is, and so does one whose pixels do
/// not match its size (nothing sound to scale; encoding it then fails).
pub fn fit(frame: Frame, limits: FitLimits) -> Frame {
    let (width, height) = limits.size(frame.width, frame.height);
    if (width, height) == (frame.width, frame.height) || frame.check().is_err() {
        return frame;
    }
    resize(frame, width, height, FILTER)
}

/// The frame resampled to `width` x `height` with `filter` (a frame whose pixels do not
/// match its size comes back as it is).
pub(super) fn resize(frame: Frame, width: u32, height: u32, filter: FilterType) -> Frame {
    let (source_width, source_height) = (frame.width, frame.height);
    if frame.check().is_err() {
        return frame;
    }
    match RgbaImage::from_raw(source_width, source_height, frame.rgba) {
        Some(source) => Frame { width, height, rgba: image::imageops::resize(&source, width, height, filter).into_raw() },
        // Not reached: `check` has just seen the buffer match the size.
        None => Frame { width: 0, height: 0, rgba: Vec::new() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_width: Option<u32>, max_height: Option<u32>, factor: Option<f64>) -> FitLimits {
        FitLimits { max_width, max_height, factor }
    }

    #[test]
    fn the_tightest_limit_wins_and_the_aspect_ratio_stays() {
        assert_eq!(limits(Some(640), None, None).size(1280, 720), (640, 360));
        assert_eq!(limits(None, Some(360), None).size(1280, 720), (640, 360));
        assert_eq!(limits(Some(640), Some(100), None).size(1280, 720), (178, 100));
        assert_eq!(limits(None, None, Some(0.5)).size(1280, 5000), (640, 2500));
        assert_eq!(limits(Some(1000), None, Some(0.25)).size(1280, 720), (320, 180));
        assert_eq!(limits(Some(1), Some(1), None).size(1280, 5), (1, 1), "never below one pixel");
    }

    #[test]
    fn nothing_is_ever_scaled_up_and_empty_limits_do_nothing() {
        assert_eq!(limits(Some(4000), Some(4000), Some(3.0)).size(1280, 720), (1280, 720));
        assert_eq!(FitLimits::default().size(1280, 720), (1280, 720));
        assert_eq!(limits(Some(0), None, Some(f64::NAN)).size(1280, 720), (1280, 720));
        assert_eq!(limits(None, None, Some(-1.0)).size(1280, 720), (1280, 720));
    }

    #[test]
    fn a_fitted_frame_has_the_size_and_keeps_the_picture() {
        let mut frame = Frame::filled(200, 100, [255, 255, 255, 255]);
        for y in 0..100 {
            for x in 0..100 {
                frame.set_pixel(x, y, [0, 0, 200, 255]);
            }
        }
        let fitted = fit(frame.clone(), limits(Some(100), None, None));
        assert_eq!((fitted.width, fitted.height, fitted.rgba.len()), (100, 50, 100 * 50 * 4));
        assert_eq!(fitted.pixel(10, 25), [0, 0, 200, 255], "the blue half stays blue");
        assert_eq!(fitted.pixel(90, 25), [255, 255, 255, 255], "the white half stays white");
        assert_eq!(fit(frame.clone(), FitLimits::default()), frame, "a frame that fits is unchanged");
        let broken = Frame { width: 200, height: 100, rgba: vec![0; 8] };
        assert_eq!(fit(broken.clone(), limits(Some(100), None, None)), broken, "a broken frame is left as it is");
    }
}
