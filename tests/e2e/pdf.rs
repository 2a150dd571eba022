//! `pdf`: the page as WebKit prints it, read back with poppler's `pdfinfo`, `pdftotext`
//! and `pdftoppm`: its pages and their words, paper and orientation, page ranges,
//! backgrounds, base64 answers, refused inputs, no window mapped while printing, a daemon
//! whose GTK speaks German, and the CLI's `malo pdf -o`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};

use crate::harness::*;

/// The words of each page of `print3.html`.
const PAGE_WORDS: [&str; 3] = ["marmalade lighthouse", "accordion glacier", "cinnamon telescope"];

/// `pdfinfo`'s page count and page size ("595 x 842 pts (A4)") of a PDF.
fn pdfinfo(path: &Path) -> (u32, String) {
    let output = Command::new("pdfinfo").arg(path).output().expect("pdfinfo (poppler-utils) is needed");
    assert!(output.status.success(), "pdfinfo {}: {}", path.display(), String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8_lossy(&output.stdout).to_string();
    let field = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(name))
            .map(|value| value.trim().to_string())
            .unwrap_or_else(|| panic!("{name} in {text}"))
    };
    (field("Pages:").parse().unwrap(), field("Page size:"))
}

/// The text of each page, whitespace collapsed.
fn page_texts(path: &Path) -> Vec<String> {
    let output = Command::new("pdftotext").arg(path).arg("-").output().expect("pdftotext (poppler-utils) is needed");
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout).to_string();
    text.split('\x0c').map(|page| page.split_whitespace().collect::<Vec<_>>().join(" ")).filter(|page| !page.is_empty()).collect()
}

/// The colour at the middle of the first page, rendered small (inside any margin).
fn middle_colour(path: &Path, scratch: &Path) -> [u8; 3] {
    let prefix = scratch.join("middle");
    let status = Command::new("pdftoppm")
        .args(["-r", "10", "-f", "1", "-l", "1", "-singlefile"])
        .arg(path)
        .arg(&prefix)
        .status()
        .expect("pdftoppm (poppler-utils) is needed");
    assert!(status.success());
    let ppm = std::fs::read(prefix.with_extension("ppm")).unwrap();
    // "P6", width, height, maximum, one white-space character, then RGB rows.
    let mut header = Vec::new();
    let mut at = 0;
    while header.len() < 4 {
        let start = at + ppm[at..].iter().position(|byte| !byte.is_ascii_whitespace()).unwrap();
        let end = start + ppm[start..].iter().position(|byte| byte.is_ascii_whitespace()).unwrap();
        header.push(String::from_utf8_lossy(&ppm[start..end]).to_string());
        at = end;
    }
    let (width, height): (usize, usize) = (header[1].parse().unwrap(), header[2].parse().unwrap());
    let pixel = at + 1 + ((height / 2) * width + width / 2) * 3;
    [ppm[pixel], ppm[pixel + 1], ppm[pixel + 2]]
}

/// Records every window the daemon maps while it runs, until dropped.
struct WindowWatch {
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Vec<String>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl WindowWatch {
    fn start(pid: u32) -> WindowWatch {
        let (stop, seen) = (Arc::new(AtomicBool::new(false)), Arc::new(Mutex::new(Vec::new())));
        let (stopping, seeing) = (stop.clone(), seen.clone());
        let thread = std::thread::spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                seeing.lock().unwrap().extend(mapped_windows_of(pid));
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        WindowWatch { stop, seen, thread: Some(thread) }
    }

    /// The windows seen mapped so far (and stops looking).
    fn finish(mut self) -> Vec<String> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
        self.seen.lock().unwrap().clone()
    }
}

/// Calls `pdf` and answers its result with the time it took.
fn timed_pdf(session: &Session, input: Value) -> (Value, Duration) {
    let begun = Instant::now();
    let result = session.ok("pdf", input);
    (result, begun.elapsed())
}

fn artifacts_dir(session: &Session) -> PathBuf {
    PathBuf::from(session.summary["artifacts_dir"].as_str().unwrap())
}

#[test]
fn pdf_prints_the_page_as_the_browser_prints_it_without_a_window() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-pdf").session();
    session.navigate(&fixtures.url("/f/print3.html"));
    let scratch = TempDir::new("pdf");
    let watch = WindowWatch::start(daemon.pid);
    let mut timings = Vec::new();

    // Every page, on A4, with each page's words.
    let (printed, took) = timed_pdf(&session, json!({ "path": "print3.pdf" }));
    timings.push(("A4, 3 pages", took));
    let path = PathBuf::from(printed["path"].as_str().unwrap());
    assert_eq!(path, artifacts_dir(&session).join("print3.pdf"), "{printed}");
    assert_eq!(printed["pages"], 3, "{printed}");
    assert_eq!(printed["bytes"], std::fs::metadata(&path).unwrap().len());
    assert!(printed.get("data").is_none(), "{printed}");
    let (pages, size) = pdfinfo(&path);
    assert_eq!((pages, size.as_str()), (3, "595 x 842 pts (A4)"));
    let texts = page_texts(&path);
    assert_eq!(texts.len(), 3, "{texts:?}");
    for (text, words) in texts.iter().zip(PAGE_WORDS) {
        assert!(text.contains(words), "{words:?} not on its page: {texts:?}");
    }
    // Backgrounds print by default; without them the paper stays white.
    assert_eq!(middle_colour(&path, &scratch.0), [255, 200, 0], "the page's background");

    // Landscape turns the paper.
    let (turned, took) = timed_pdf(&session, json!({ "path": "landscape.pdf", "landscape": true }));
    timings.push(("A4 landscape", took));
    assert!(pdfinfo(Path::new(turned["path"].as_str().unwrap())).1.starts_with("842 x 595 pts"), "{turned}");

    // One page of three.
    let (second, took) = timed_pdf(&session, json!({ "path": "second.pdf", "page_ranges": "2" }));
    timings.push(("page_ranges 2", took));
    assert_eq!(second["pages"], 1, "{second}");
    let texts = page_texts(Path::new(second["path"].as_str().unwrap()));
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert!(texts[0].contains(PAGE_WORDS[1]) && !texts[0].contains(PAGE_WORDS[0]) && !texts[0].contains(PAGE_WORDS[2]), "{texts:?}");
    let last_two = session.ok("pdf", json!({ "path": "from-two.pdf", "page_ranges": "2-" }));
    assert_eq!(last_two["pages"], 2, "{last_two}");

    // A paper of its own, no margins, no backgrounds.
    let (custom, took) = timed_pdf(
        &session,
        json!({ "path": "plain/custom.pdf", "page_size": { "width_mm": 100, "height_mm": 150 }, "margins_mm": { "top": 0, "right": 0, "bottom": 0, "left": 0 }, "print_background": false }),
    );
    timings.push(("100 x 150 mm, no margins, no backgrounds", took));
    let custom_path = PathBuf::from(custom["path"].as_str().unwrap());
    assert_eq!(custom_path, artifacts_dir(&session).join("plain/custom.pdf"));
    assert!(pdfinfo(&custom_path).1.starts_with("283 x 425 pts"));
    assert_eq!(middle_colour(&custom_path, &scratch.0), [255, 255, 255], "backgrounds left out");
    let letter = session.ok("pdf", json!({ "path": "letter.pdf", "page_size": "Letter" }));
    assert!(pdfinfo(Path::new(letter["path"].as_str().unwrap())).1.starts_with("612 x 792 pts"));
    // The page's own setting is given back: backgrounds print again by default.
    let again = session.ok("pdf", json!({ "path": "again.pdf" }));
    assert_eq!(middle_colour(Path::new(again["path"].as_str().unwrap()), &scratch.0), [255, 200, 0]);

    // Without a path: base64, and no file stays anywhere in the session.
    let (inline, took) = timed_pdf(&session, json!({}));
    timings.push(("A4 as data", took));
    let bytes = base64::engine::general_purpose::STANDARD.decode(inline["data"].as_str().unwrap()).unwrap();
    assert_eq!(inline["bytes"], bytes.len());
    assert!(bytes.starts_with(b"%PDF-"), "not a PDF");
    let copy = scratch.0.join("inline.pdf");
    std::fs::write(&copy, &bytes).unwrap();
    assert_eq!(pdfinfo(&copy).0, 3);
    assert!(inline.get("path").is_none(), "{inline}");
    let session_dir = artifacts_dir(&session).parent().unwrap().to_path_buf();
    let stray: Vec<_> = files_below(&session_dir)
        .into_iter()
        .filter(|file| file.extension().is_some_and(|extension| extension == "pdf") && !file.starts_with("artifacts"))
        .collect();
    assert_eq!(stray, Vec::<PathBuf>::new(), "printed files left outside artifacts/");

    // Two prints asked at once of one tab both arrive whole.
    std::thread::scope(|scope| {
        let calls: Vec<_> = ["twin-a.pdf", "twin-b.pdf"]
            .into_iter()
            .map(|name| {
                let session = session.clone();
                scope.spawn(move || session.ok("pdf", json!({ "path": name })))
            })
            .collect();
        for call in calls {
            let result = call.join().unwrap();
            assert_eq!(pdfinfo(Path::new(result["path"].as_str().unwrap())).0, 3, "{result}");
        }
    });

    // Refused inputs name their field; nothing is written for them.
    for (input, field) in [
        (json!({ "path": "/tmp/escape.pdf" }), "path"),
        (json!({ "path": "../escape.pdf" }), "path"),
        (json!({ "path": "page.html" }), "path"),
        (json!({ "page_ranges": "3-1" }), "page_ranges"),
        (json!({ "page_ranges": "two" }), "page_ranges"),
        (json!({ "page_ranges": "7" }), "page_ranges"),
        (json!({ "page_size": "B5" }), "page_size"),
        (json!({ "page_size": { "width_mm": 100 } }), "page_size"),
        (json!({ "margins_mm": { "left": -3 } }), "margins_mm"),
        // GTK's default margins leave a 10 mm paper no room: WebKit prints no page at all.
        (json!({ "page_size": { "width_mm": 10, "height_mm": 10 } }), "margins_mm"),
    ] {
        let error = session.fails("pdf", input.clone(), 400, "E_BAD_REQUEST");
        assert!(error["message"].as_str().unwrap().contains(field), "{input}: {error}");
    }
    assert!(!Path::new("/tmp/escape.pdf").exists() && !artifacts_dir(&session).parent().unwrap().join("escape.pdf").exists());

    let mapped = watch.finish();
    assert_eq!(mapped, Vec::<String>::new(), "a window was mapped while printing");
    for (what, took) in timings {
        eprintln!("pdf {what}: {} ms", took.as_millis());
    }
}

#[test]
fn pdf_finds_the_file_printer_when_gtk_speaks_german() {
    // GTK's file printer is named in the daemon's language ("In Datei drucken"); a print
    // that asked for "Print to File" failed with "Drucker nicht gefunden".
    let options =
        DaemonOptions { env: vec![("LANGUAGE".into(), "de".into()), ("LC_ALL".into(), "C.UTF-8".into())], ..DaemonOptions::default() };
    let daemon = Daemon::start_with(options);
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-pdf").session();
    session.navigate(&fixtures.url("/f/print3.html"));
    let printed = session.ok("pdf", json!({ "path": "deutsch.pdf" }));
    assert_eq!(printed["pages"], 3, "{printed}");
    assert_eq!(pdfinfo(Path::new(printed["path"].as_str().unwrap())).0, 3);
}

#[test]
fn the_cli_writes_the_pdf_where_it_is_told() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let out = TempDir::new("pdf-cli");
    let cli = |args: &[&str]| daemon.cli_in(&out.0, args);
    cli(&["session", "new"]);
    cli(&["navigate", "--url", &fixtures.url("/f/print3.html")]);
    let answer = cli(&["pdf", "-o", "page.pdf", "--page-ranges", "1-2"]);
    let written = out.0.join("page.pdf");
    assert_eq!(answer["output"], written.display().to_string(), "{answer}");
    assert!(answer.get("data").is_none(), "the bytes go to the file, not the terminal");
    assert_eq!(pdfinfo(&written), (2, "595 x 842 pts (A4)".to_string()));
    // With a path too, the file under artifacts/ is copied.
    let answer = cli(&["pdf", "-o", "landscape.pdf", "--path", "kept.pdf", "--landscape", "--page-size", "A5"]);
    assert!(answer["path"].as_str().unwrap().ends_with("/artifacts/kept.pdf"), "{answer}");
    let (pages, size) = pdfinfo(&out.0.join("landscape.pdf"));
    assert!(pages == 3 && size.starts_with("595 x 420 pts"), "{pages} pages of {size}");
}
