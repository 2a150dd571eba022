//! `pdf` over the fake engine: what the tool asks the engine to print (paper, pages,
//! backgrounds, a file of its own in the session's directory), where the PDF ends up (under
//! artifacts/, or answered as base64 and deleted), and that bad inputs never reach it.

use base64::Engine as _;
use serde_json::json;

use super::Bench;
use crate::engine::fake::Asked;
use crate::engine::print::{MarginsMm, PageSize, PageSpan, PaperName, PrintJob};
use crate::error::ErrorCode;

/// A small PDF of `pages` pages, padded with a comment of `padding` bytes.
fn pdf(pages: u32, padding: usize) -> Vec<u8> {
    let mut pdf = b"%PDF-1.4\n".to_vec();
    for page in 0..pages {
        pdf.extend_from_slice(format!("{} 0 obj\n<</Type /Page /Parent 1 0 R>>\nendobj\n", page + 2).as_bytes());
    }
    pdf.extend_from_slice(format!("1 0 obj\n<</Type /Pages /Count {pages}>>\nendobj\n%").as_bytes());
    pdf.extend(std::iter::repeat_n(b'x', padding));
    pdf.extend_from_slice(b"\n%%EOF\n");
    pdf
}

/// The print jobs the page was asked for.
fn jobs(bench: &Bench) -> Vec<PrintJob> {
    bench.page.asked().into_iter().filter_map(|asked| if let Asked::Print(job) = asked { Some(job) } else { None }).collect()
}

fn files_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|entry| entry.file_name().to_string_lossy().to_string()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

#[tokio::test]
async fn without_a_path_the_pdf_is_answered_as_base64_and_no_file_stays() {
    let bench = Bench::new().await;
    let printed = pdf(2, 0);
    bench.page.prints(printed.clone());
    let result = bench.call("pdf", json!({})).await.unwrap();
    assert_eq!(result["pages"], 2, "{result}");
    assert_eq!(result["bytes"], printed.len());
    assert!(result.get("path").is_none(), "{result}");
    let data = base64::engine::general_purpose::STANDARD.decode(result["data"].as_str().unwrap()).unwrap();
    assert_eq!(data, printed);

    let [job] = jobs(&bench).try_into().unwrap();
    let dirs = &bench.session.dirs;
    assert_eq!(job.output.parent(), Some(dirs.root.as_path()), "the engine prints into the session's directory");
    assert_eq!(
        (job.page_size, job.landscape, job.margins_mm, job.print_background, job.page_ranges.clone()),
        (PageSize::Named(PaperName::A4), false, None, true, vec![]),
        "the defaults"
    );
    assert!(!job.output.exists(), "the printed file is deleted once read");
    assert_eq!(files_in(&dirs.artifacts), Vec::<String>::new());
}

#[tokio::test]
async fn with_a_path_the_pdf_lands_under_artifacts() {
    let bench = Bench::new().await;
    bench.page.prints(pdf(3, 0));
    let input = json!({
        "path": "reports/page.pdf", "landscape": true, "page_size": "Letter", "margins_mm": { "top": 0, "left": 12.5 },
        "print_background": false, "page_ranges": "3, 1-2, 5-",
    });
    let result = bench.call("pdf", input).await.unwrap();
    let artifacts = &bench.session.dirs.artifacts;
    let written = artifacts.join("reports/page.pdf");
    assert_eq!(result["path"], written.display().to_string(), "{result}");
    assert!(result.get("data").is_none(), "{result}");
    assert_eq!(result["pages"], 3);
    assert_eq!(std::fs::read(&written).unwrap(), pdf(3, 0));

    let [job] = jobs(&bench).try_into().unwrap();
    assert!(!job.output.exists(), "moved, not copied");
    assert_eq!(job.page_size, PageSize::Named(PaperName::Letter));
    assert!(job.landscape && !job.print_background);
    assert_eq!(job.margins_mm, Some(MarginsMm { top: Some(0.0), left: Some(12.5), ..MarginsMm::default() }));
    assert_eq!(job.page_ranges, vec![PageSpan { first: 1, last: Some(3) }, PageSpan { first: 5, last: None }]);

    // The same path again replaces the file.
    bench.page.prints(pdf(1, 0));
    let again = bench.call("pdf", json!({ "path": "reports/page.pdf" })).await.unwrap();
    assert_eq!(again["pages"], 1);
    assert_eq!(std::fs::read(&written).unwrap(), pdf(1, 0));
}

#[tokio::test]
async fn bad_inputs_are_refused_naming_the_field_before_anything_is_printed() {
    let bench = Bench::new().await;
    bench.page.prints(pdf(1, 0));
    let refused = [
        (json!({ "path": "/tmp/out.pdf" }), "path "),
        (json!({ "path": "../out.pdf" }), "path "),
        (json!({ "path": "out.png" }), "path "),
        (json!({ "page_ranges": "3-1" }), "page_ranges: "),
        (json!({ "page_ranges": "0" }), "page_ranges: "),
        (json!({ "page_size": "B5" }), "page_size: must be "),
        (json!({ "page_size": { "width_mm": 1, "height_mm": 100 } }), "page_size.width_mm "),
        (json!({ "margins_mm": { "left": -1 } }), "margins_mm.left "),
        (json!({ "margins_mm": { "top": 200, "bottom": 200 } }), "margins_mm "),
        (json!({ "scale": 2 }), "scale: unknown field `scale`"),
    ];
    for (input, named) in refused {
        let error = bench.call("pdf", input.clone()).await.unwrap_err();
        assert_eq!(error.code, ErrorCode::BadRequest, "{input}: {}", error.message);
        assert!(error.message.starts_with(named), "{input}: {}", error.message);
    }
    assert_eq!(jobs(&bench), vec![], "nothing was printed");
}

#[tokio::test]
async fn a_pdf_too_large_to_answer_inline_asks_for_a_path_and_leaves_no_file() {
    let bench = Bench::new().await;
    let large = pdf(1, 10 << 20);
    bench.page.prints(large.clone());
    let error = bench.call("pdf", json!({})).await.unwrap_err();
    assert_eq!(error.code, ErrorCode::PayloadTooLarge, "{}", error.message);
    assert!(error.message.contains("pass `path`"), "{}", error.message);
    assert_eq!(error.details["bytes"], large.len());
    let [job] = jobs(&bench).try_into().unwrap();
    assert!(!job.output.exists());
    // With a path it is written.
    let result = bench.call("pdf", json!({ "path": "large.pdf" })).await.unwrap();
    assert_eq!((result["pages"].as_u64(), result["bytes"].as_u64()), (Some(1), Some(large.len() as u64)));
}
