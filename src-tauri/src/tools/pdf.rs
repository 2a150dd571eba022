//! `pdf`: the page as printed, through WebKit's own printing (no dialog, no window), to a
//! PDF file under the session's `artifacts/`, or answered as base64 when no `path` is
//! asked. The engine prints into a file of its own in the session's directory; this tool
//! counts its pages, then moves it under `artifacts/` or reads and deletes it.

use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::limits::{PDF_CONTENT_MIN_MM, PDF_INLINE_BYTES, PDF_MAX_PAGE, PDF_PAGE_RANGES_CHARS, PDF_PAPER_MM};
use super::pdf_pages::page_count;
use super::{Attachment, Presentation, Tool, ToolContext};
use crate::engine::print::{MarginsMm, PageSize, PageSpan, PrintJob};
use crate::engine::TabRequest;
use crate::error::{Error, ErrorCode, Result};

/// Input of `pdf`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PdfInput {
    /// A .pdf path under the session's artifacts/, else base64 `data`. Relative, e.g.
    /// "page.pdf" or "reports/q3.pdf"; a file there is replaced, and the answer holds its
    /// absolute `path`. Without it the answer holds the PDF as base64 `data`, up to 10 MiB.
    #[serde(default)]
    path: Option<String>,
    /// Landscape instead of portrait (default false).
    #[serde(default)]
    landscape: bool,
    /// "A4" (default), "Letter", "Legal", "A3", "A5" or {width_mm, height_mm}. Sizes are
    /// 10-5000 each, given in portrait.
    #[serde(default)]
    page_size: Option<PageSize>,
    /// Margins in mm, each side optional. A side not given keeps GTK's default for the
    /// paper (6.35 mm; 14.2 mm at the bottom of A4, Letter and Legal).
    #[serde(default)]
    margins_mm: Option<MarginsMm>,
    /// Print background colours and images (default true).
    #[serde(default)]
    print_background: Option<bool>,
    /// Which pages, counted from 1, like "1-3, 5" ("4-": from 4 to the end; "-2": 1 and
    /// 2); default every page. Each page prints once, in document order; pages past the
    /// end are left out, and selecting none is E_BAD_REQUEST.
    #[serde(default)]
    page_ranges: Option<String>,
}

/// Output of `pdf`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct PdfOutput {
    /// The PDF's absolute path, under the session's artifacts/ (when `path` was given).
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    /// The PDF, base64 (when no `path` was given).
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<String>,
    /// Pages in the PDF.
    pages: u32,
    /// Size of the PDF in bytes.
    bytes: u64,
}

pub(super) fn tool() -> Tool {
    Tool::page(
        "pdf",
        "Print the page to PDF, with no dialog or window. As the browser prints it (print CSS, page breaks): landscape, page_size (A4 default, Letter, Legal, A3, A5 or {width_mm, height_mm}), margins_mm, print_background (default true), page_ranges like \"1-3, 5\". With path (a relative .pdf name) it is written under the session's artifacts/ and answers {path, pages, bytes}; without, it answers the PDF as base64 data (up to 10 MiB).",
        |context: ToolContext, input: PdfInput| async move { pdf(context, input).await },
    )
    .presented(Presentation { attachment: Some(Attachment::Result), ..Presentation::default() })
}

async fn pdf(context: ToolContext, input: PdfInput) -> Result<PdfOutput> {
    let page_size = input.page_size.unwrap_or_default();
    check_page_size(&page_size)?;
    if let Some(margins) = &input.margins_mm {
        check_margins(margins, &page_size, input.landscape)?;
    }
    let page_ranges = match &input.page_ranges {
        Some(text) => parse_page_ranges(text)?,
        None => Vec::new(),
    };
    let destination = match &input.path {
        Some(path) => Some(artifact_path(&context.session.dirs.artifacts, path)?),
        None => None,
    };
    let tab = context.tab()?;
    // The engine prints into a file of its own beside artifacts/: nothing half-written
    // ever shows there, and the session's directory (and so any leftover) goes with it.
    static PRINTS: AtomicU64 = AtomicU64::new(0);
    let output = context.session.dirs.root.join(format!(".print-{}-{}.pdf", tab.id, PRINTS.fetch_add(1, Ordering::Relaxed)));
    let job = PrintJob {
        output: output.clone(),
        page_size,
        landscape: input.landscape,
        margins_mm: input.margins_mm,
        print_background: input.print_background.unwrap_or(true),
        page_ranges,
    };
    let printed = context.ask::<()>(TabRequest::Print(job)).await;
    let kept = match printed {
        Ok(()) => {
            let output = output.clone();
            tokio::task::spawn_blocking(move || keep(&output, destination.as_deref()))
                .await
                .map_err(|error| Error::internal(format!("reading the PDF stopped: {error}")))
                .and_then(|kept| kept)
        }
        Err(error) => Err(error),
    };
    // Gone in every case: moved under artifacts/, read, or never to be read.
    let _ = tokio::fs::remove_file(&output).await;
    kept
}

/// Counts the printed file's pages, then moves it to `destination`, or (none) answers its
/// bytes as base64 when they are few enough.
fn keep(output: &Path, destination: Option<&Path>) -> Result<PdfOutput> {
    let unreadable = |error: std::io::Error| Error::internal(format!("cannot read the printed PDF: {error}"));
    let bytes = std::fs::metadata(output).map_err(unreadable)?.len();
    if destination.is_none() && bytes > PDF_INLINE_BYTES {
        return Err(Error::new(
            ErrorCode::PayloadTooLarge,
            format!(
                "the PDF has {bytes} bytes, more than the {PDF_INLINE_BYTES} answered as data; pass `path` to write it under artifacts/"
            ),
        )
        .with_details(json!({ "bytes": bytes, "max_bytes": PDF_INLINE_BYTES })));
    }
    let pdf = std::fs::read(output).map_err(unreadable)?;
    let pages = page_count(&pdf).ok_or_else(|| Error::internal("the printed file is not a PDF whose pages can be counted"))?;
    let Some(destination) = destination else {
        let data = base64::engine::general_purpose::STANDARD.encode(&pdf);
        return Ok(PdfOutput { path: None, data: Some(data), pages, bytes });
    };
    if let Some(parent) = destination.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|error| Error::bad_request(format!("path: cannot create {} under artifacts/: {error}", parent.display())))?;
    }
    std::fs::rename(output, destination)
        .map_err(|error| Error::bad_request(format!("path: cannot write {}: {error}", destination.display())))?;
    Ok(PdfOutput { path: Some(destination.display().to_string()), data: None, pages, bytes })
}

/// A custom paper's sides must be within [`PDF_PAPER_MM`].
fn check_page_size(page_size: &PageSize) -> Result<()> {
    let PageSize::Custom(custom) = page_size else { return Ok(()) };
    let (least, most) = PDF_PAPER_MM;
    for (field, value) in [("width_mm", custom.width_mm), ("height_mm", custom.height_mm)] {
        if !(least..=most).contains(&value) {
            return Err(Error::bad_request(format!("page_size.{field} must be between {least} and {most} (millimetres), not {value}")));
        }
    }
    Ok(())
}

/// Margins are 0 or more and leave [`PDF_CONTENT_MIN_MM`] of the oriented page each way
/// (a side not given counts as 0: GTK's defaults are small).
fn check_margins(margins: &MarginsMm, page_size: &PageSize, landscape: bool) -> Result<()> {
    let sides = [("top", margins.top), ("right", margins.right), ("bottom", margins.bottom), ("left", margins.left)];
    for (side, margin) in sides {
        if margin.is_some_and(|margin| margin < 0.0) {
            return Err(Error::bad_request(format!("margins_mm.{side} must be 0 or more (millimetres)")));
        }
    }
    let (width, height) = match page_size.size_mm() {
        (width, height) if landscape => (height, width),
        portrait => portrait,
    };
    let across = margins.left.unwrap_or(0.0) + margins.right.unwrap_or(0.0);
    let down = margins.top.unwrap_or(0.0) + margins.bottom.unwrap_or(0.0);
    if across > width - PDF_CONTENT_MIN_MM || down > height - PDF_CONTENT_MIN_MM {
        return Err(Error::bad_request(format!(
            "margins_mm leave no room on a {width} x {height} mm page: left + right and top + bottom must each leave at least {PDF_CONTENT_MIN_MM} mm"
        )));
    }
    Ok(())
}

/// Reads `page_ranges` ("1-3, 5", "4-", "-2"; empty: every page) into spans in document
/// order, overlaps and neighbours merged.
fn parse_page_ranges(text: &str) -> Result<Vec<PageSpan>> {
    let refuse =
        |why: String| Error::bad_request(format!("page_ranges: {why}; write pages from 1 like \"1-3, 5\" (\"4-\": from 4 to the end)"));
    if text.chars().count() > PDF_PAGE_RANGES_CHARS {
        return Err(refuse(format!("longer than {PDF_PAGE_RANGES_CHARS} characters")));
    }
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let page = |number: &str, part: &str| -> Result<u32> {
        let number = number.trim();
        if number.is_empty() || !number.bytes().all(|byte| byte.is_ascii_digit()) {
            return Err(refuse(format!("{part:?} is not a page or a range of pages")));
        }
        match number.parse::<u32>() {
            Ok(page) if (1..=PDF_MAX_PAGE).contains(&page) => Ok(page),
            _ => Err(refuse(format!("{part:?} names a page outside 1-{PDF_MAX_PAGE}"))),
        }
    };
    let mut spans = Vec::new();
    for part in text.split(',').map(str::trim) {
        let span = match part.split_once('-') {
            None => {
                let single = page(part, part)?;
                PageSpan { first: single, last: Some(single) }
            }
            Some((first, last)) if first.trim().is_empty() && last.trim().is_empty() => {
                return Err(refuse(format!("{part:?} is not a page or a range of pages")));
            }
            Some((first, last)) => {
                let first = if first.trim().is_empty() { 1 } else { page(first, part)? };
                let last = if last.trim().is_empty() { None } else { Some(page(last, part)?) };
                if last.is_some_and(|last| last < first) {
                    return Err(refuse(format!("{part:?} ends before it starts")));
                }
                PageSpan { first, last }
            }
        };
        spans.push(span);
    }
    spans.sort_by_key(|span| span.first);
    let mut merged: Vec<PageSpan> = Vec::with_capacity(spans.len());
    for span in spans {
        match merged.last_mut() {
            Some(previous) if previous.last.is_none_or(|last| span.first <= last + 1) => {
                previous.last = match (previous.last, span.last) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    _ => None,
                };
            }
            _ => merged.push(span),
        }
    }
    Ok(merged)
}

/// `path` under `artifacts`: relative, plain names only (no `..`, no `.`), ending in `.pdf`.
fn artifact_path(artifacts: &Path, path: &str) -> Result<PathBuf> {
    let refuse = |why: &str| {
        Error::bad_request(format!(
            "path {why}: give a relative file name ending in .pdf, written under the session's artifacts/ (e.g. \"page.pdf\")"
        ))
    };
    let relative = Path::new(path);
    if path.is_empty() || path.ends_with('/') {
        return Err(refuse("names no file"));
    }
    if relative.is_absolute() {
        return Err(refuse("is absolute"));
    }
    if !relative.components().all(|component| matches!(component, Component::Normal(_))) {
        return Err(refuse("may not hold \"..\" or \".\""));
    }
    if !relative.extension().is_some_and(|extension| extension.eq_ignore_ascii_case("pdf")) {
        return Err(refuse("does not end in .pdf"));
    }
    Ok(artifacts.join(relative))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(first: u32, last: Option<u32>) -> PageSpan {
        PageSpan { first, last }
    }

    #[test]
    fn page_ranges_read_like_chromes_and_come_out_in_document_order() {
        assert_eq!(parse_page_ranges("1-3, 5").unwrap(), vec![span(1, Some(3)), span(5, Some(5))]);
        assert_eq!(parse_page_ranges("2").unwrap(), vec![span(2, Some(2))]);
        assert_eq!(parse_page_ranges(" 4- ").unwrap(), vec![span(4, None)]);
        assert_eq!(parse_page_ranges("-2").unwrap(), vec![span(1, Some(2))]);
        assert_eq!(parse_page_ranges("7, 1-2, 2-4, 5").unwrap(), vec![span(1, Some(5)), span(7, Some(7))]);
        assert_eq!(parse_page_ranges("3-, 5-9").unwrap(), vec![span(3, None)]);
        assert_eq!(parse_page_ranges("").unwrap(), vec![]);
    }

    #[test]
    fn bad_page_ranges_name_the_field() {
        for bad in ["0", "3-1", "a", "1,,2", "-", "1-2-3", "1.5", "100001", "+1"] {
            let error = parse_page_ranges(bad).unwrap_err();
            assert_eq!(error.code, ErrorCode::BadRequest, "{bad}");
            assert!(error.message.starts_with("page_ranges: "), "{bad}: {}", error.message);
        }
        assert!(parse_page_ranges(&"1,".repeat(600)).unwrap_err().message.contains("longer than"));
    }

    #[test]
    fn paths_stay_under_artifacts_and_end_in_pdf() {
        let artifacts = Path::new("/data/sessions/s/artifacts");
        assert_eq!(artifact_path(artifacts, "page.pdf").unwrap(), artifacts.join("page.pdf"));
        assert_eq!(artifact_path(artifacts, "reports/q3.PDF").unwrap(), artifacts.join("reports/q3.PDF"));
        for bad in ["/tmp/x.pdf", "../x.pdf", "a/../../x.pdf", "./x.pdf", "x.png", "x", "", "dir/", "x.pdf/"] {
            let error = artifact_path(artifacts, bad).unwrap_err();
            assert_eq!(error.code, ErrorCode::BadRequest, "{bad}");
            assert!(error.message.starts_with("path "), "{bad}: {}", error.message);
        }
    }

    #[test]
    fn papers_and_margins_are_checked_against_the_oriented_page() {
        use crate::engine::print::CustomPaper;
        let custom = |width_mm, height_mm| PageSize::Custom(CustomPaper { width_mm, height_mm });
        assert!(check_page_size(&custom(100.0, 150.0)).is_ok());
        assert!(check_page_size(&custom(5.0, 150.0)).unwrap_err().message.starts_with("page_size.width_mm "));
        assert!(check_page_size(&custom(100.0, 6000.0)).unwrap_err().message.starts_with("page_size.height_mm "));
        let margins = |top, left| MarginsMm { top: Some(top), left: Some(left), ..MarginsMm::default() };
        assert!(check_margins(&margins(0.0, 0.0), &PageSize::default(), false).is_ok());
        assert!(check_margins(&margins(-1.0, 0.0), &PageSize::default(), false).unwrap_err().message.starts_with("margins_mm.top "));
        // 250 mm fits down an A4 page in portrait (297 mm), not in landscape (210 mm).
        assert!(check_margins(&margins(250.0, 0.0), &PageSize::default(), false).is_ok());
        assert!(check_margins(&margins(250.0, 0.0), &PageSize::default(), true).unwrap_err().message.starts_with("margins_mm "));
    }

    #[test]
    fn an_unknown_paper_is_refused_by_name() {
        let error = crate::tools::parse_strict::<PdfInput>(json!({ "page_size": "B5" }), "invalid input for pdf").unwrap_err();
        assert!(error.message.starts_with("page_size: must be \"A4\", "), "{}", error.message);
        assert_eq!(error.details["field"], "page_size");
        let input: PdfInput = serde_json::from_value(json!({ "page_size": { "width_mm": 100, "height_mm": 150 } })).unwrap();
        assert_eq!(input.page_size.unwrap().size_mm(), (100.0, 150.0));
        let input: PdfInput = serde_json::from_value(json!({ "page_size": "letter" })).unwrap();
        assert_eq!(input.page_size.unwrap().size_mm(), (215.9, 279.4));
    }
}
