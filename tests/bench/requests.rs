//! `bench requests`: what listing the requests of page (c), a document and 50 `fetch()`
//! calls, costs an agent in o200k tokens after the workload's rep has loaded pages (a) and
//! (b) before it: malo's `browser_requests` as MCP answers it by default (a line per request
//! of the current page, and one that says how many came before), beside the JSON records
//! HTTP answers (the whole log), and Playwright MCP's `browser_network_requests` (1,422
//! tokens, `../shared/bench/README.md`).

use std::time::Duration;

use serde_json::json;

use crate::harness::*;

/// Playwright MCP's `browser_network_requests` on page (c), in o200k tokens.
const PLAYWRIGHT_MCP_TOKENS: usize = 1422;
/// The requests of page (c): its document and its 50 fetches.
const FETCH50_REQUESTS: usize = 51;

/// Loads page (c) over MCP, waits until its 50 fetches are done and logged, and prints
/// the bytes and tokens of its request list over MCP (the default, and `detail`) and over
/// HTTP (records, and records with `detail`), with whether the MCP default meets the goal.
pub(crate) fn request_list(daemon: &Daemon, fixtures: &Fixtures) {
    let tokenizer = tiktoken_rs::o200k_base().expect("o200k tokenizer");
    let tokens = |text: &str| tokenizer.encode_with_special_tokens(text).len();
    let mut agent = McpProcess::start(daemon, "bench-requests");
    // As in the workload's rep: the form page and the large page, then page (c).
    for page in ["/b/form.html", "/b/large.html", "/b/fetch50.html"] {
        let (failed, text) = agent.call("browser_navigate", json!({ "url": fixtures.url(page) }));
        assert!(!failed, "{text}");
    }
    let (failed, text) = agent.call("browser_wait_for", json!({ "text": "all done", "timeout_ms": 10000 }));
    assert!(!failed, "{text}");
    // Done in the page, every record ended in the log: a status and a duration each.
    let mut listed = String::new();
    let logged = eventually(Duration::from_secs(10), || {
        listed = agent.call("browser_requests", json!({})).1;
        let lines: Vec<&str> = listed.lines().filter(|line| line.starts_with("req-")).collect();
        lines.len() == FETCH50_REQUESTS && lines.iter().all(|line| line.split(' ').nth(2) == Some("200") && line.contains("ms "))
    });
    assert!(logged, "page (c) did not log its {FETCH50_REQUESTS} requests (and only those):\n{listed}");
    assert!(!listed.contains("/b/form.html") && !listed.contains("/b/large.html"), "none of the earlier pages:\n{listed}");
    let detailed = agent.call("browser_requests", json!({ "detail": true })).1;
    let whole_log = agent.call("browser_requests", json!({ "since": "all" })).1;
    let records = agent.call("browser_requests", json!({ "format": "json", "since": "all" })).1;
    let whole_records = agent.call("browser_requests", json!({ "format": "json", "detail": true, "since": "all" })).1;
    println!();
    println!("{:<44} {:>9} {:>9}", "request list of (c), 51 requests", "bytes", "tokens");
    for (label, answer) in [
        ("MCP browser_requests (default: text)", &listed),
        ("MCP browser_requests detail: true", &detailed),
        ("MCP browser_requests since: all", &whole_log),
        ("requests as JSON records (HTTP's default)", &records),
        ("requests as JSON records, detail: true", &whole_records),
    ] {
        println!("{label:<44} {:>9} {:>9}", answer.len(), tokens(answer));
    }
    let met = tokens(&listed) <= PLAYWRIGHT_MCP_TOKENS;
    println!(
        "MCP default: {} tokens against Playwright MCP's {PLAYWRIGHT_MCP_TOKENS} (browser_network_requests); goal met: {}",
        tokens(&listed),
        if met { "yes" } else { "no" }
    );
}
