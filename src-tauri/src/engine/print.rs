//! Printing a tab to PDF, seen from the async side: the [`PrintJob`] a tool hands the
//! engine (paper, orientation, margins, backgrounds, which pages, where the file goes).
//! The engine prints through WebKit's own print operation (`webkit/print.rs`); the paper
//! and margin types are also what the `pdf` tool's input reads.

use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

/// How long a print may take on the engine's side (in time the main thread was available).
pub const PRINT_TIMEOUT: Duration = Duration::from_secs(60);

/// A paper: a named size, or one given in millimetres. Always read in portrait; the job's
/// `landscape` turns it.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged, expecting = "must be \"A4\", \"Letter\", \"Legal\", \"A3\", \"A5\" or {\"width_mm\": .., \"height_mm\": ..}")]
pub enum PageSize {
    /// A paper by name.
    Named(PaperName),
    /// A paper of this size.
    Custom(CustomPaper),
}

impl Default for PageSize {
    fn default() -> Self {
        PageSize::Named(PaperName::A4)
    }
}

impl PageSize {
    /// Width and height in millimetres, in portrait.
    pub fn size_mm(&self) -> (f64, f64) {
        match self {
            PageSize::Named(PaperName::A4) => (210.0, 297.0),
            PageSize::Named(PaperName::Letter) => (215.9, 279.4),
            PageSize::Named(PaperName::Legal) => (215.9, 355.6),
            PageSize::Named(PaperName::A3) => (297.0, 420.0),
            PageSize::Named(PaperName::A5) => (148.0, 210.0),
            PageSize::Custom(custom) => (custom.width_mm, custom.height_mm),
        }
    }
}

/// The named papers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum PaperName {
    /// ISO A4, 210 x 297 mm.
    #[serde(alias = "a4")]
    A4,
    /// US Letter, 8.5 x 11 in.
    #[serde(alias = "letter")]
    Letter,
    /// US Legal, 8.5 x 14 in.
    #[serde(alias = "legal")]
    Legal,
    /// ISO A3, 297 x 420 mm.
    #[serde(alias = "a3")]
    A3,
    /// ISO A5, 148 x 210 mm.
    #[serde(alias = "a5")]
    A5,
}

/// A paper given by its size, in portrait.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CustomPaper {
    /// Width in millimetres (10-5000).
    pub width_mm: f64,
    /// Height in millimetres (10-5000).
    pub height_mm: f64,
}

/// Margins in millimetres, of the page as it is oriented; a side not given (serde reads a
/// missing `Option` as `None`) keeps GTK's default for the paper.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MarginsMm {
    /// Top margin (0 or more).
    pub top: Option<f64>,
    /// Right margin (0 or more).
    pub right: Option<f64>,
    /// Bottom margin (0 or more).
    pub bottom: Option<f64>,
    /// Left margin (0 or more).
    pub left: Option<f64>,
}

/// Pages `first` to `last` (1-based, inclusive); `last` `None`: to the end of the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageSpan {
    /// The first page, from 1.
    pub first: u32,
    /// The last page, or the document's end.
    pub last: Option<u32>,
}

/// One print of a tab to a PDF file.
#[derive(Debug, Clone, PartialEq)]
pub struct PrintJob {
    /// Where the PDF goes: an absolute path in an existing directory (a file there is replaced).
    pub output: PathBuf,
    /// The paper.
    pub page_size: PageSize,
    /// Landscape instead of portrait.
    pub landscape: bool,
    /// Margins; `None`: GTK's defaults for the paper.
    pub margins_mm: Option<MarginsMm>,
    /// Whether background colours and images are printed.
    pub print_background: bool,
    /// The pages to print, in document order, not overlapping; empty: every page.
    pub page_ranges: Vec<PageSpan>,
}
