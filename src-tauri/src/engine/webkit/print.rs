//! Printing a tab to a PDF file through WebKit's own print operation: no dialog, no
//! window, nothing mapped or focused; GTK's file printer writes the PDF. What it relies on,
//! measured on WebKitGTK 2.50 (docs/ARCHITECTURE.md, "Engine facts"):
//! - `print()` works on a view in an offscreen host; `finished` fires once the file is
//!   complete, and fires after `failed` too.
//! - The file printer's name is GTK's `_("Print to File")` in its `gtk30` gettext domain,
//!   so it follows the daemon's locale ("In Datei drucken" under German): it is looked up
//!   through the translation GTK itself uses, never written in English.
//! - Only the `pdf` output format: with `ps`, `finished` fires with no file written and the
//!   view's next print crashes the process.
//! - Two prints started back to back on one view can lose the first file while `finished`
//!   still fires: a tab's prints take turns, and the file is checked after `finished`.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use gtk::prelude::GtkSettingsExt;
use tokio::sync::Notify;
use webkit2gtk::{PrintOperationExt, SettingsExt, WebViewExt};

use super::tab::Tab;
use super::Deadline;
use crate::engine::print::{PageSize, PaperName, PrintJob, PRINT_TIMEOUT};
use crate::error::{Error, ErrorCode, Result};

/// The gettext domain GTK 3 translates its own strings in.
const GTK_DOMAIN: &str = "gtk30";
/// The file printer's name as GTK writes it before translation.
const FILE_PRINTER: &str = "Print to File";
/// The name GTK wants for a custom paper (it shows nowhere).
const CUSTOM_PAPER: &str = "malo-custom";
/// The last page (0-based) of a range that runs to the end of the document: WebKit leaves
/// out pages past the end, and a far smaller number than `i32::MAX` leaves no room for
/// arithmetic on it to overflow.
const END_OF_DOCUMENT: i32 = 999_999;
/// How often the wait for the end of a print looks whether the tab was closed (or its web
/// process died) meanwhile.
const CLOSED_CHECK: Duration = Duration::from_millis(100);

/// How a print ended, as its signals said.
#[derive(Default)]
struct Outcome {
    /// `finished` fired (after `failed` too).
    finished: bool,
    /// What `failed` said, if it fired.
    failure: Option<glib::Error>,
}

/// What a running print holds until it ends: the tab's turn, the operation itself (kept
/// alive until WebKit is done with it), and the page's own print-backgrounds setting,
/// given back when this is dropped.
struct Running {
    /// The tab's print turn.
    _turn: tokio::sync::OwnedMutexGuard<()>,
    /// The operation.
    _operation: webkit2gtk::PrintOperation,
    /// The view's settings and their print-backgrounds value before the print.
    backgrounds: Option<(webkit2gtk::Settings, bool)>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some((settings, before)) = &self.backgrounds {
            settings.set_print_backgrounds(*before);
        }
    }
}

/// Prints the tab's page to `job.output` and returns once the file is complete.
pub(super) async fn print(tab: &Tab, job: PrintJob) -> Result<()> {
    tab.ensure_open()?;
    let deadline = Deadline::after(PRINT_TIMEOUT);
    let turn = tokio::select! {
        turn = tab.print_turn.clone().lock_owned() => turn,
        () = deadline.reached() => return Err(timed_out("an earlier print of this tab did not end")),
    };
    tab.ensure_open()?;
    // A file left at the path must not pass for this print's.
    let _ = std::fs::remove_file(&job.output);
    let operation = webkit2gtk::PrintOperation::new(&tab.view);
    operation.set_print_settings(&print_settings(&job)?);
    operation.set_page_setup(&page_setup(&job));
    use_only_the_file_backend();
    let backgrounds = WebViewExt::settings(&tab.view).map(|settings| {
        let before = settings.is_print_backgrounds();
        settings.set_print_backgrounds(job.print_background);
        (settings, before)
    });
    let running = Rc::new(RefCell::new(Some(Running { _turn: turn, _operation: operation.clone(), backgrounds })));
    let outcome: Rc<RefCell<Outcome>> = Rc::default();
    let ended = Rc::new(Notify::new());
    {
        let outcome = outcome.clone();
        operation.connect_failed(move |_, error| {
            outcome.borrow_mut().failure.get_or_insert_with(|| error.clone());
        });
    }
    {
        let (outcome, running, ended) = (outcome.clone(), running.clone(), ended.clone());
        operation.connect_finished(move |_| {
            outcome.borrow_mut().finished = true;
            running.borrow_mut().take();
            ended.notify_one();
        });
    }
    let begun = Instant::now();
    operation.print();
    while !outcome.borrow().finished {
        let crashed = tab.load.borrow().crashed;
        if tab.closed.get() || crashed || deadline.passed() {
            // The print may still end by itself; if it never does, its turn is given back
            // after another full time limit, so later prints of the tab are not stuck.
            glib::timeout_add_local_once(PRINT_TIMEOUT, move || drop(running.borrow_mut().take()));
            tab.ensure_open()?;
            return Err(timed_out("the print did not finish"));
        }
        tokio::select! {
            _ = ended.notified() => {}
            _ = glib::timeout_future(CLOSED_CHECK) => {}
        }
    }
    tracing::debug!(tab = %tab.id, ms = begun.elapsed().as_millis() as u64, "printed to PDF");
    if let Some(failure) = outcome.borrow_mut().failure.take() {
        return Err(print_failure(&failure, &job));
    }
    match std::fs::metadata(&job.output) {
        Ok(metadata) if metadata.len() > 0 => Ok(()),
        _ => Err(Error::internal("WebKit reported the print finished but wrote no PDF")),
    }
}

/// The settings of a print to a PDF file: GTK's file printer under its translated name,
/// the output file, the pages.
fn print_settings(job: &PrintJob) -> Result<gtk::PrintSettings> {
    let settings = gtk::PrintSettings::new();
    settings.set_printer(&glib::dgettext(Some(GTK_DOMAIN), FILE_PRINTER));
    let uri = glib::filename_to_uri(&job.output, None)
        .map_err(|error| Error::internal(format!("the PDF's path {} is not a file URI: {error}", job.output.display())))?;
    settings.set(gtk::PRINT_SETTINGS_OUTPUT_URI.as_str(), Some(uri.as_str()));
    settings.set(gtk::PRINT_SETTINGS_OUTPUT_FILE_FORMAT.as_str(), Some("pdf"));
    if !job.page_ranges.is_empty() {
        // GTK counts pages from 0.
        let ranges: Vec<gtk::PageRange> = job
            .page_ranges
            .iter()
            .map(|span| {
                let last = span.last.map_or(END_OF_DOCUMENT, |last| (last as i32 - 1).min(END_OF_DOCUMENT));
                gtk::PageRange::new((span.first as i32 - 1).min(END_OF_DOCUMENT), last)
            })
            .collect();
        settings.set_print_pages(gtk::PrintPages::Ranges);
        settings.set_page_ranges(&ranges);
    }
    Ok(settings)
}

/// The paper, its orientation and margins: GTK's default margins for the paper, then the
/// sides the job gives.
fn page_setup(job: &PrintJob) -> gtk::PageSetup {
    let setup = gtk::PageSetup::new();
    let paper = match job.page_size {
        PageSize::Named(name) => gtk::PaperSize::new(Some(gtk_paper_name(name))),
        PageSize::Custom(custom) => {
            gtk::PaperSize::new_custom(CUSTOM_PAPER, CUSTOM_PAPER, custom.width_mm, custom.height_mm, gtk::Unit::Mm)
        }
    };
    setup.set_paper_size_and_default_margins(&paper);
    setup.set_orientation(if job.landscape { gtk::PageOrientation::Landscape } else { gtk::PageOrientation::Portrait });
    let margins = job.margins_mm.unwrap_or_default();
    if let Some(top) = margins.top {
        setup.set_top_margin(top, gtk::Unit::Mm);
    }
    if let Some(right) = margins.right {
        setup.set_right_margin(right, gtk::Unit::Mm);
    }
    if let Some(bottom) = margins.bottom {
        setup.set_bottom_margin(bottom, gtk::Unit::Mm);
    }
    if let Some(left) = margins.left {
        setup.set_left_margin(left, gtk::Unit::Mm);
    }
    setup
}

/// GTK's (PWG) name of a paper.
fn gtk_paper_name(name: PaperName) -> &'static str {
    match name {
        PaperName::A4 => "iso_a4",
        PaperName::Letter => "na_letter",
        PaperName::Legal => "na_legal",
        PaperName::A3 => "iso_a3",
        PaperName::A5 => "iso_a5",
    }
}

/// GTK enumerates printers before each print and waits until every print backend has
/// answered; on a desktop, the CUPS backend asks a print server (and may wait for it) on
/// the main thread. malo only ever prints to files, so GTK loads its file backend alone.
fn use_only_the_file_backend() {
    if let Some(settings) = gtk::Settings::default() {
        if settings.gtk_print_backends().as_deref() != Some("file") {
            settings.set_gtk_print_backends(Some("file"));
        }
    }
}

/// What a `failed` signal means for the caller. Its messages are translated too, so the
/// error's code decides.
fn print_failure(failure: &glib::Error, job: &PrintJob) -> Error {
    match failure.kind::<webkit2gtk::PrintError>() {
        // No page to print: the ranges start past the end, or (measured) the margins leave
        // the paper no room, so that the page has no pages at all.
        Some(webkit2gtk::PrintError::InvalidPageRange) if !job.page_ranges.is_empty() => {
            Error::bad_request("page_ranges selects no page of the document (pages past its end are left out)")
        }
        Some(webkit2gtk::PrintError::InvalidPageRange) => Error::bad_request(
            "page_size and margins_mm leave no room to print on (GTK's default margins are 6.35 mm, 14.2 mm at the bottom of A4, Letter and Legal)",
        ),
        Some(webkit2gtk::PrintError::PrinterNotFound) => Error::internal(format!(
            "GTK's file printer was not found ({}); is GTK's print backend for files installed?",
            failure.message()
        )),
        _ => Error::internal(format!("printing failed: {}", failure.message())),
    }
}

fn timed_out(what: &str) -> Error {
    Error::new(ErrorCode::Timeout, format!("{what} within {} s", PRINT_TIMEOUT.as_secs()))
}
