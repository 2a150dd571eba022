//! The picture pipeline of screenshots, with no GTK below it: a captured [`Frame`] is
//! cropped ([`crop`]), scaled down to fit limits ([`fit`]), marked with the refs of its
//! elements ([`draw_marks`]) and encoded as PNG, JPEG or WebP ([`encode`]).
//!
//! Choices, by measurement (`figures.rs`; release build, CPU time of one thread, the
//! fastest of 5 runs, on a shared 2-core machine). Frames: malo's own 1280x720 captures of
//! the benchmark's form page and large page (a 200-row table), a 1280x4000 capture of the
//! large page, and made-up pages (`samples.rs`). Chromium's PNGs of the same two pages
//! (headless `--screenshot`, 1280x720) are 19,073 B and 246,760 B.
//!
//! | PNG, bytes (ms CPU)            | form 720      | large 720      | large 4000        |
//! |--------------------------------|---------------|----------------|-------------------|
//! | before: RGBA, fdeflate         | 43,494 (0.7)  | 500,142 (4.3)  | 2,921,529 (16)    |
//! | RGB, fdeflate                  | 37,761 (1.5)  | 470,100 (5.0)  | 2,749,629 (24)    |
//! | RGB, zlib-rs 2                 | 20,836 (2.1)  | 224,845 (7.8)  | 1,203,521 (29)    |
//! | RGBA, zlib-rs 2                | 20,883 (1.9)  | 201,183 (7.5)  | 1,041,745 (29)    |
//! | RGBA, zlib-rs 6                | 20,205 (3.2)  | 192,780 (16)   | 994,241 (89)      |
//! | RGB, zlib-rs 9                 | 17,748 (19)   | 180,537 (114)  | 934,502 (518)     |
//! | RGB, miniz_oxide 4 (ms wall)   | 19,457 (8.7)  | 193,404 (22)   | 1,003,727 (112)   |
//! | RGB, miniz_oxide 6 (ms wall)   | 19,401 (14)   | 191,351 (36)   | 991,356 (203)     |
//! | RGB, libdeflate 7              | 18,896 (4.3)  | 189,919 (7.8)  |                   |
//! | **chosen**                     | 18,953 (7.5)  | 201,183 (5.5)  | 1,041,745 (42)    |
//!
//! - PNG: RGBA at zlib-rs level 2 (adaptive filters) first; when that is under 32 KiB (a
//!   plain page), RGB through libdeflate as well, keeping the smaller. Both pages then come
//!   out below Chromium's (form 18,953 B, large 201,183 B) in at most about 8 ms of CPU.
//!   No single zlib setting did: levels 2 to 8 of either backend leave the form page 2 to 9 % above
//!   Chromium's, and level 9 costs 114 ms on the large page. zlib-rs replaced miniz_oxide
//!   as flate2's backend: 1.5 to 3.5 times faster at the same level (its sizes differ), and
//!   only its level 9 gets the form page below Chromium's. Filters at level 2 on the large
//!   page: adaptive 201,183 B, min-entropy 201,314, paeth 217,376, up 218,473, sub 220,803.
//!   A palette (lossless, at most 256 colours) is used when it fits, but antialiased text
//!   breaks it on real pages (424 and 647 colours); counting costs 0.1 to 0.5 ms.
//! - The thorough try is libdeflate level 7 on RGB rows filtered as the png crate does:
//!   18,953 B in 5.6 ms of CPU on the form page, where zlib-rs level 9 gave 17,748 B in
//!   19 ms (on two cores 17,637 B, but 10 to 30 ms of wall time on a busy machine). Its
//!   levels on the form page: 5: 19,029 B (4.1 ms), 7: 18,896 (4.3), 9: 18,815 (6.9),
//!   10: 17,798 (44), 12: 16,931 (186). No level up to 9 beats zlib-rs level 2 RGBA on the
//!   large page (189,919 B at best), which keeps the first try.
//! - Large frames (from 2 million pixels: documents, tall elements) are written on both
//!   cores at the first try's settings, each core filtering and compressing its own rows;
//!   a 1280x11978 capture: 2,863,567 B in about half the wall time of one stream.
//! - Scaling to half size, ms CPU (720 form, 720 large, 4000 large): Triangle 16, 12, 105;
//!   CatmullRom 15, 14, 90; Lanczos3 20, 19, 153. CatmullRom: text visibly sharper than
//!   Triangle's, as legible as Lanczos3's, for less.
//! - Lossy, on the large page 720: JPEG q80 281,702 B (34 ms), WebP q80 157,740 B (78 ms);
//!   on the form page WebP q80 is 10,140 B (36 ms). 150 marks draw in about 1 ms.
//!
//! **Invariant:** every function here is plain computation on pixels in memory: no I/O,
//! no engine, no clock, so the tools call it on a blocking thread and tests call it directly.

mod crop;
mod encode;
mod fit;
mod font;
mod marks;
mod png_writer;
mod split_png;

#[cfg(test)]
mod figures;
#[cfg(test)]
mod samples;

pub use crop::{crop, paste, PixelRect};
pub use encode::{encode, Format};
pub use fit::{fit, FitLimits};
pub use marks::{draw_marks, Mark};

use crate::error::{Error, Result};

/// A captured picture, as straight (non-premultiplied) RGBA, rows top to bottom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Pixels across.
    pub width: u32,
    /// Pixels down.
    pub height: u32,
    /// `width * height * 4` bytes.
    pub rgba: Vec<u8>,
}

impl Frame {
    /// A frame of one colour.
    pub fn filled(width: u32, height: u32, rgba: [u8; 4]) -> Frame {
        Frame { width, height, rgba: rgba.repeat(width as usize * height as usize) }
    }

    /// The pixel at (x, y), which must be inside the frame.
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        let at = self.offset(x, y);
        [self.rgba[at], self.rgba[at + 1], self.rgba[at + 2], self.rgba[at + 3]]
    }

    /// Paints the pixel at (x, y), which must be inside the frame.
    pub fn set_pixel(&mut self, x: u32, y: u32, rgba: [u8; 4]) {
        let at = self.offset(x, y);
        self.rgba[at..at + 4].copy_from_slice(&rgba);
    }

    /// Whether every pixel is fully opaque (then encoders may leave alpha out).
    pub fn is_opaque(&self) -> bool {
        self.rgba.chunks_exact(4).all(|pixel| pixel[3] == 255)
    }

    /// An error unless `rgba` holds exactly `width * height` pixels and the frame is not empty.
    pub fn check(&self) -> Result<()> {
        let expected = self.width as usize * self.height as usize * 4;
        if self.width == 0 || self.height == 0 || self.rgba.len() != expected {
            return Err(Error::internal(format!(
                "a {}x{} frame holds {} bytes of pixels (expected {expected}, and no empty side)",
                self.width,
                self.height,
                self.rgba.len()
            )));
        }
        Ok(())
    }

    /// Where the pixel at (x, y) starts in `rgba`.
    fn offset(&self, x: u32, y: u32) -> usize {
        (y as usize * self.width as usize + x as usize) * 4
    }
}
