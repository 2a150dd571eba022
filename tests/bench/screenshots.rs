//! `bench screenshots`: malo's `browser_screenshot` against Playwright MCP's
//! `browser_take_screenshot` (0.0.83, Debian's headless Chromium), side by side in one run
//! of `tests/clients/bench-screenshots.mjs`: the time of the whole MCP tool call and the
//! image's bytes for a viewport PNG, a viewport JPEG, a full page and an element, on the
//! shared bench pages, with the goals.

use serde_json::{json, Value};

use crate::harness::*;
use crate::median_p95;

/// Runs the client script with `malo mcp` on `daemon`'s data directory (so it uses that
/// daemon) and prints one table row a figure: medians, sizes and the goals met.
pub(crate) fn screenshots(daemon: &Daemon, fixtures: &Fixtures) {
    let binary = malo_binary().display().to_string();
    let data_dir = daemon.data_dir.display().to_string();
    let run = run_client("bench-screenshots.mjs", &[&binary, &data_dir, &fixtures.url("/b"), "15"]);
    let (lines, figures) = run.figures();
    let figures: Vec<String> = figures.into_iter().filter(|name| name != "error").collect();
    println!("{:<24} {:>9} {:>9} {:>10} {:>10}  goals", "screenshot (MCP call)", "malo ms", "malo KiB", "PW MCP ms", "PW MCP KiB");
    for name in figures {
        let of = |target: &str| {
            lines.iter().find(|line| line["figure"] == name.as_str() && line["target"] == target).cloned().unwrap_or(Value::Null)
        };
        let (malo, playwright) = (of("malo"), of("playwright-mcp"));
        let ms = |value: &Value| value["median_ms"].as_f64().map(|ms| format!("{ms:.1}")).unwrap_or_else(|| "-".into());
        let kib = |value: &Value| value["bytes"].as_f64().map(|bytes| format!("{:.1}", bytes / 1024.0)).unwrap_or_else(|| "-".into());
        let yes_no = |met: Option<bool>| met.map_or("-", |met| if met { "yes" } else { "no" });
        let smaller = malo["bytes"].as_f64().zip(playwright["bytes"].as_f64()).map(|(malo, playwright)| malo <= playwright);
        let faster = malo["median_ms"].as_f64().zip(playwright["median_ms"].as_f64()).map(|(malo, playwright)| malo <= 0.5 * playwright);
        let mut goals = String::new();
        if name.starts_with("viewport PNG") {
            goals.push_str(&format!("bytes ≤ PW: {}, ", yes_no(smaller)));
        }
        goals.push_str(&format!("time ≤ 0.5×PW: {}", yes_no(faster)));
        println!("{name:<24} {:>9} {:>9} {:>10} {:>10}  {goals}", ms(&malo), kib(&malo), ms(&playwright), kib(&playwright));
    }
    for error in lines.iter().filter(|line| line["figure"] == "error") {
        println!("error ({}): {}", error["target"].as_str().unwrap_or("?"), error["error"].as_str().unwrap_or("?"));
    }
    println!(
        "(both 1280x720, full-size images (malo's MCP cap lifted with max_width); JPEG at quality 90 on both sides, since \
         Playwright MCP 0.0.83 has no quality field; elements: the checkout form and the inventory table)"
    );
    if !run.success {
        println!("(the client failed: {})", run.output.lines().last().unwrap_or(""));
    }
    over_http(daemon, fixtures);
}

/// The same screenshots over the HTTP API, without MCP, and a light observe for the cost
/// of a round trip through the engine: where an MCP call's time goes.
fn over_http(daemon: &Daemon, fixtures: &Fixtures) {
    let session = daemon.lease("bench-http").session_sized(1280, 720);
    println!();
    println!("{:<44} {:>9} {:>9} {:>6}", "over HTTP (no MCP)", "median ms", "p95 ms", "n");
    for page in ["form", "large"] {
        session.navigate(&fixtures.url(&format!("/b/{page}.html")));
        let rows = [
            ("observe light (one engine round trip)", "observe", json!({ "max_chars": 0 })),
            ("screenshot viewport PNG", "screenshot", json!({})),
            ("screenshot viewport PNG to a file", "screenshot", json!({ "path": "bench.png" })),
            ("screenshot viewport JPEG q90", "screenshot", json!({ "format": "jpeg", "quality": 90 })),
        ];
        for (label, tool, input) in rows {
            let mut samples = Vec::new();
            for rep in 0..17 {
                let begun = std::time::Instant::now();
                session.ok(tool, input.clone());
                if rep >= 2 {
                    samples.push(begun.elapsed());
                }
            }
            let (median, p95) = median_p95(&samples);
            println!("{:<44} {median:>9.1} {p95:>9.1} {:>6}", format!("{label} ({page})"), samples.len());
        }
    }
    session.close();
}
