//! Benchmark of the foundation: prints medians and p95s of daemon start to first lease,
//! session create to ready, navigate, observe light, screenshot, and the resident
//! memory (PSS, counting shared pages once per process share) of each extra session.
//!
//! Run with `scripts/bench.sh`. It drives the real daemon over HTTP like an agent, on
//! the shared benchmark pages (`../shared/bench`) when present, else on the test fixtures.

mod busy;
mod catalogue;
mod cli;
mod coldstart;
#[path = "../e2e/harness/mod.rs"]
mod harness;
mod live;
mod main_thread;
mod memory;
mod requests;
mod sandbox;
mod screenshots;
mod side_by_side;
mod workload;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use harness::*;
use serde_json::{json, Value};

fn main() {
    let pages_dir = std::env::var_os("MALO_BENCH_PAGES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/bench"));
    let shared = pages_dir.join("form.html").exists();
    let fixtures = Fixtures::start_serving(shared.then(|| pages_dir.clone()));
    let (page_a, page_b) = if shared {
        (fixtures.url("/b/form.html"), fixtures.url("/b/large.html"))
    } else {
        (fixtures.url("/f/hello.html"), fixtures.url("/f/grow.html"))
    };
    println!("malo-browser foundation benchmark ({} build)", if cfg!(debug_assertions) { "dev" } else { "release" });
    println!("pages: {}", if shared { pages_dir.display().to_string() } else { "test fixtures".into() });
    let size = std::fs::metadata(malo_binary()).map(|metadata| metadata.len()).unwrap_or(0);
    println!("binary: {} ({:.1} MiB)", malo_binary().display(), size as f64 / 1024.0 / 1024.0);
    println!();
    // `bench proxy`: only what the session proxy costs.
    if std::env::args().nth(1).as_deref() == Some("proxy") && shared {
        proxy_cost(&fixtures, &page_b, &fixtures.url("/b/fetch50.html"));
        return;
    }
    // `bench memory`: only the memory figures.
    if std::env::args().nth(1).as_deref() == Some("memory") {
        let daemon = Daemon::start();
        memory::per_session(&daemon, &daemon.lease("bench"), &page_b);
        return;
    }
    // `bench cdp`: the same Puppeteer script against a session and against Chromium.
    if std::env::args().nth(1).as_deref() == Some("cdp") {
        let daemon = Daemon::start();
        cdp(&daemon.lease("bench"), &fixtures);
        return;
    }
    // `bench screenshots`: the screenshot tool against Playwright MCP's, on the shared pages.
    if std::env::args().nth(1).as_deref() == Some("screenshots") {
        if !shared {
            println!("(the screenshot comparison needs the shared benchmark pages)");
            return;
        }
        let daemon = Daemon::start();
        screenshots::screenshots(&daemon, &fixtures);
        return;
    }
    // `bench catalogue`: the MCP tool list's tokens against Playwright MCP's.
    if std::env::args().nth(1).as_deref() == Some("catalogue") {
        catalogue::catalogue(&Daemon::start());
        return;
    }
    // `bench requests`: the tokens of page (c)'s request list against Playwright MCP's.
    if std::env::args().nth(1).as_deref() == Some("requests") {
        if !shared {
            println!("(the request list figures need the shared benchmark pages)");
            return;
        }
        requests::request_list(&Daemon::start(), &fixtures);
        return;
    }
    // `bench coldstart`: `malo mcp` from spawn to its first navigate against Playwright MCP's.
    if std::env::args().nth(1).as_deref() == Some("coldstart") {
        if !shared {
            println!("(the cold start comparison needs the shared benchmark pages)");
            return;
        }
        coldstart::cold_start(&fixtures);
        return;
    }
    // `bench sandbox`: what the web-process sandbox costs.
    if std::env::args().nth(1).as_deref() == Some("sandbox") {
        sandbox::sandbox_cost(&fixtures);
        return;
    }
    // `bench workload`: the whole agent workload over MCP against Playwright MCP's.
    if std::env::args().nth(1).as_deref() == Some("workload") {
        if !shared {
            println!("(the workload comparison needs the shared benchmark pages)");
            return;
        }
        workload::workload(&fixtures);
        return;
    }
    // `bench busy`: a session's latency while 16 others reload the large page.
    if std::env::args().nth(1).as_deref() == Some("busy") {
        if !shared {
            println!("(the busy figures need the shared benchmark pages)");
            return;
        }
        busy::many_sessions(&Daemon::start(), &fixtures);
        return;
    }
    // `bench cli`: the CLI on a pipe against agent-browser's.
    if std::env::args().nth(1).as_deref() == Some("cli") {
        if !shared {
            println!("(the CLI comparison needs the shared benchmark pages)");
            return;
        }
        cli::cli_side_by_side(&fixtures);
        return;
    }
    // `bench live`: the live view (latency, frames per second, bytes, CPU while still).
    if std::env::args().nth(1).as_deref() == Some("live") {
        live::live_view(&fixtures);
        return;
    }
    // `bench tools`: only the page tools (snapshot, click, fill).
    if std::env::args().nth(1).as_deref() == Some("tools") {
        let daemon = Daemon::start();
        page_tools(&daemon.lease("bench"), &fixtures, shared);
        return;
    }
    // `bench startup`: start-up, observe, the page tools and MCP, not the proxy or memory
    // (what a build setting can change: scripts/release-variants.sh).
    let full = std::env::args().nth(1).as_deref() != Some("startup");
    println!("{:<44} {:>9} {:>9} {:>6}", "operation", "median ms", "p95 ms", "n");

    // Daemon start to first lease, each time a new daemon on a new data dir.
    let mut start_to_lease = Vec::new();
    for _ in 0..5 {
        let begun = Instant::now();
        let daemon = Daemon::start();
        daemon.lease("bench");
        start_to_lease.push(begun.elapsed());
    }
    report("daemon start -> first lease", &start_to_lease);

    let daemon = Daemon::start();
    let lease = daemon.lease("bench");

    let mut create = Vec::new();
    for _ in 0..8 {
        let begun = Instant::now();
        let session = lease.session_sized(1280, 720);
        create.push(begun.elapsed());
        session.close();
    }
    report("session create -> ready (1280x720)", &create);

    let session = lease.session_sized(1280, 720);
    for (label, url) in [("navigate (a) form page", &page_a), ("navigate (b) large page", &page_b)] {
        let mut samples = Vec::new();
        for _ in 0..15 {
            let begun = Instant::now();
            session.navigate(url);
            samples.push(begun.elapsed());
        }
        report(label, &samples);
    }
    for (label, url) in [("(a)", &page_a), ("(b)", &page_b)] {
        session.navigate(url);
        let mut light = Vec::new();
        for _ in 0..40 {
            let begun = Instant::now();
            let response = session.get("/observe?mode=light&max_chars=2000");
            assert_eq!(response.status, 200);
            light.push(begun.elapsed());
        }
        report(&format!("observe light {label}"), &light);
        let mut shots = Vec::new();
        let mut bytes = 0;
        for _ in 0..15 {
            let begun = Instant::now();
            let response = session.get("/observe?mode=screenshot&max_chars=200");
            assert_eq!(response.status, 200);
            shots.push(begun.elapsed());
            bytes = response.body["screenshot"]["bytes"].as_u64().unwrap_or(0);
        }
        report(&format!("observe screenshot {label}, {} KiB PNG", bytes / 1024), &shots);
    }
    // A hidden session renders like a visible one: timers and animation frames per second.
    session.navigate(&fixtures.url("/f/rates.html"));
    std::thread::sleep(Duration::from_millis(1300));
    println!("hidden session page rates: {}", session.observe()["title"].as_str().unwrap_or("?"));
    session.close();

    page_tools(&lease, &fixtures, shared);
    if shared {
        requests::request_list(&daemon, &fixtures);
    }
    if shared && full {
        proxy_cost(&fixtures, &page_b, &fixtures.url("/b/fetch50.html"));
    }
    mcp(&daemon, &lease, &fixtures);
    println!();
    catalogue::catalogue(&daemon);
    if shared && full {
        println!();
        coldstart::cold_start(&fixtures);
        println!();
        workload::workload(&fixtures);
        // A daemon of its own: its 17 sessions take five leases, and their ports would
        // still be closing when the memory figures below take theirs.
        busy::many_sessions(&Daemon::start(), &fixtures);
    }

    if full {
        memory::per_session(&daemon, &lease, &page_b);
    }
}

/// What the session proxy costs: page loads of the large page and of the 50-fetch page with
/// the proxy and capture on, the proxy alone, and no proxy at all (`MALO_PROXY=off`); and
/// the memory of two sessions with and without it.
fn proxy_cost(fixtures: &Fixtures, large: &str, fetch50: &str) {
    println!();
    println!("{:<44} {:>9} {:>9} {:>6}", "session proxy (page load, incl. settle)", "median ms", "p95 ms", "n");
    let mut memory = Vec::new();
    for (label, proxy_off, capture) in [("no proxy", true, false), ("proxy, capture off", false, false), ("proxy, capture on", false, true)]
    {
        let options = DaemonOptions {
            env: if proxy_off { vec![("MALO_PROXY".into(), "off".into())] } else { Vec::new() },
            ..DaemonOptions::default()
        };
        let daemon = Daemon::start_with(options);
        let lease = daemon.lease("bench-proxy");
        let session = lease.session_sized(1280, 720);
        if capture {
            session.ok("network_capture", json!({ "url_prefixes": [fixtures.url("/b/")] }));
        }
        for (page, url) in [("(b) large", large), ("(c) fetch50", fetch50)] {
            session.navigate(url);
            let (mut samples, mut on_the_wire) = (Vec::new(), Vec::new());
            for _ in 0..25 {
                let begun = Instant::now();
                session.navigate(url);
                samples.push(begun.elapsed());
                on_the_wire.push(network_done(&session));
            }
            report(&format!("navigate {page}: {label}"), &samples);
            report(&format!("  network done: {label}"), &on_the_wire);
        }
        let second = lease.session_sized(1280, 720);
        second.navigate(large);
        session.navigate(large);
        std::thread::sleep(Duration::from_millis(800));
        memory.push((label, pss_kib(daemon.pid)));
    }
    for (label, pss) in memory {
        println!("memory, 2 sessions on (b), {label}: {:.1} MiB PSS", pss as f64 / 1024.0);
    }
}

/// When the page's last response (document or sub-resource) had fully arrived, from the
/// start of its navigation, as the page's own Resource Timing says. The navigate call adds
/// settle sampling (40 ms steps) to this, which rounds a few milliseconds up to a step.
fn network_done(session: &Session) -> Duration {
    let expression = "Math.max(performance.getEntriesByType('navigation')[0].responseEnd, \
        ...performance.getEntriesByType('resource').map((entry) => entry.responseEnd))";
    let done = session.tool("evaluate", json!({ "expression": expression })).body["result"]["value"].as_f64().unwrap_or(0.0);
    Duration::from_secs_f64(done / 1000.0)
}

/// Snapshot size, tokens and latency per page; click and fill latency, as an agent sees them.
fn page_tools(lease: &Lease, fixtures: &Fixtures, shared: bool) {
    if !shared {
        println!("(page-tool figures need the shared benchmark pages)");
        return;
    }
    let tokenizer = tiktoken_rs::o200k_base().expect("o200k tokenizer");
    let tokens = |text: &str| tokenizer.encode_with_special_tokens(text).len();
    let session = lease.session_sized(1280, 720);
    println!();
    println!(
        "{:<14} {:>6} {:>10} {:>9} {:>10} {:>9} {:>12} {:>12}",
        "snapshot", "format", "median ms", "p95 ms", "bytes", "tokens", "interactive", "in DOM"
    );
    for (label, path) in [("(a) form", "/b/form.html"), ("(b) large", "/b/large.html"), ("(c) fetch50", "/b/fetch50.html")] {
        session.navigate(&fixtures.url(path));
        let in_dom = session
            .tool(
                "evaluate",
                json!({ "expression": "document.querySelectorAll('a[href],button,input:not([type=hidden]),select,textarea').length" }),
            )
            .body["result"]["value"]
            .as_u64()
            .unwrap_or(0);
        for format in ["json", "text"] {
            let mut samples = Vec::new();
            let mut last = Value::Null;
            for _ in 0..20 {
                let begun = Instant::now();
                let response = session.tool("snapshot", json!({ "format": format }));
                samples.push(begun.elapsed());
                assert_eq!(response.status, 200, "{}", response.body);
                last = response.body["result"].clone();
            }
            let (payload, interactive) = if format == "text" {
                (last["text"].as_str().unwrap_or("").to_string(), last["interactive_count"].as_u64().unwrap_or(0))
            } else {
                (last.to_string(), last["nodes"].as_array().map_or(0, Vec::len) as u64)
            };
            // MALO_BENCH_DUMP=DIR keeps each page's last answer, to read what was counted.
            if let Some(dir) = std::env::var_os("MALO_BENCH_DUMP") {
                let name = format!("{}.{format}", path.trim_start_matches("/b/").trim_end_matches(".html"));
                std::fs::write(PathBuf::from(dir).join(name), &payload).expect("the dump directory takes files");
            }
            let (median, p95) = median_p95(&samples);
            println!(
                "{label:<14} {format:>6} {median:>10.1} {p95:>9.1} {:>10} {:>9} {interactive:>12} {in_dom:>12}",
                payload.len(),
                tokens(&payload)
            );
        }
    }
    println!("(Playwright MCP on the same pages: (a) 1,038 B / 361 tokens in 11.3 ms; (b) 129,606 B / 35,899 tokens in 129 ms)");

    session.navigate(&fixtures.url("/b/form.html"));
    let snapshot = session.tool("snapshot", json!({})).body["result"].clone();
    let find = |name: &str| {
        snapshot["nodes"].as_array().unwrap().iter().find(|node| node["name"] == name).unwrap()["ref"].as_str().unwrap().to_string()
    };
    let (apply, name) = (find("Apply coupon"), find("Full name"));
    let mut clicks = Vec::new();
    let mut fills = Vec::new();
    for _ in 0..30 {
        let begun = Instant::now();
        let response = session.tool("click", json!({ "ref": apply }));
        clicks.push(begun.elapsed());
        assert_eq!(response.status, 200, "{}", response.body);
    }
    for index in 0..30 {
        let begun = Instant::now();
        let response = session.tool("fill", json!({ "ref": name, "text": format!("Jane Doe {index}") }));
        fills.push(begun.elapsed());
        assert_eq!(response.status, 200, "{}", response.body);
    }
    println!();
    report("click a button by ref, incl. settle (a)", &clicks);
    report("fill an input by ref, incl. settle (a)", &fills);
    println!("(Playwright MCP: click 71 ms, type 25 ms)");
    session.close();
}

/// MCP: the overhead of a trivial tool call over stdio against the same call over HTTP,
/// and the time from `malo mcp` start to a first successful navigate.
fn mcp(daemon: &Daemon, lease: &Lease, fixtures: &Fixtures) {
    println!();
    let session = lease.session();
    let mut agent = McpProcess::start_with_caps(daemon, "bench-mcp", "devtools");
    agent.call("browser_navigate", json!({ "url": fixtures.url("/f/hello.html") }));
    let (mut over_http, mut over_mcp) = (Vec::new(), Vec::new());
    for _ in 0..200 {
        let begun = Instant::now();
        assert_eq!(session.tool("events", json!({ "limit": 1 })).status, 200);
        over_http.push(begun.elapsed());
        let begun = Instant::now();
        let (failed, _) = agent.call("browser_events", json!({ "limit": 1 }));
        assert!(!failed);
        over_mcp.push(begun.elapsed());
    }
    report("trivial tool call over HTTP (events)", &over_http);
    report("the same call over MCP stdio", &over_mcp);
    println!("MCP stdio overhead (median difference): {:.2} ms", median_p95(&over_mcp).0 - median_p95(&over_http).0);
    drop(agent);
    session.close();

    let mut warm = Vec::new();
    for index in 0..5 {
        let begun = Instant::now();
        let mut agent = McpProcess::start(daemon, &format!("bench-start-{index}"));
        let (failed, text) = agent.call("browser_navigate", json!({ "url": fixtures.url("/f/hello.html") }));
        assert!(!failed, "{text}");
        warm.push(begun.elapsed());
    }
    report("malo mcp start -> first navigate (daemon up)", &warm);
    let mut cold = Vec::new();
    for _ in 0..3 {
        let dir = TempDir::new("bench-cold");
        let begun = Instant::now();
        let mut agent = McpProcess::start_in(&dir.0, "bench-cold");
        let (failed, text) = agent.call("browser_navigate", json!({ "url": fixtures.url("/f/hello.html") }));
        assert!(!failed, "{text}");
        cold.push(begun.elapsed());
        drop(agent);
        if let Some(pid) = serde_json::from_slice::<Value>(&std::fs::read(dir.0.join("broker.json")).unwrap_or_default())
            .ok()
            .and_then(|info| info["pid"].as_u64())
        {
            signal(pid as u32, "TERM");
            std::thread::sleep(Duration::from_millis(500));
        }
    }
    report("malo mcp start -> first navigate (no daemon)", &cold);
    println!("(Playwright MCP cold start to first navigate: 1,251 ms)");
}

/// The DevTools endpoint: the same Puppeteer script (goto, click, type, evaluate,
/// screenshot) against a malo session and against Debian's Chromium (headless, launched
/// by Puppeteer), side by side, and the `Runtime.evaluate` round trip.
fn cdp(lease: &Lease, fixtures: &Fixtures) {
    let session = lease.session_sized(1280, 800);
    let endpoint = session.ok("cdp_endpoint", json!({}));
    let ws_url = endpoint["ws_url"].as_str().unwrap().to_string();
    let base = fixtures.url("");
    let run = run_client("bench-cdp.mjs", &[&ws_url, base.trim_end_matches('/'), "20"]);
    let (lines, figures) = run.figures();
    println!("{:<32} {:>14} {:>14} {:>14} {:>14}", "puppeteer-core 25.16.0", "malo median", "malo p95", "chromium med.", "chromium p95");
    for name in figures {
        let of = |target: &str| {
            lines.iter().find(|line| line["figure"] == name.as_str() && line["target"] == target).cloned().unwrap_or(Value::Null)
        };
        let (malo, chromium) = (of("malo"), of("chromium"));
        if name == "error" {
            println!("error: {}", malo["error"].as_str().or(chromium["error"].as_str()).unwrap_or("?"));
            continue;
        }
        let ms = |value: &Value| value.as_f64().map(|ms| format!("{ms:.1}")).unwrap_or_else(|| "-".into());
        println!(
            "{name:<32} {:>14} {:>14} {:>14} {:>14}",
            ms(&malo["median_ms"]),
            ms(&malo["p95_ms"]),
            ms(&chromium["median_ms"]),
            ms(&chromium["p95_ms"])
        );
    }
    println!("(chromium's connect is puppeteer.launch of Debian's headless Chromium; the malo session was already open)");
    if !run.success {
        println!("(the client failed: {})", run.output.lines().last().unwrap_or(""));
    }
}

fn median_p95(samples: &[Duration]) -> (f64, f64) {
    let mut millis: Vec<f64> = samples.iter().map(|sample| sample.as_secs_f64() * 1000.0).collect();
    millis.sort_by(f64::total_cmp);
    (millis[millis.len() / 2], millis[((millis.len() as f64 * 0.95).ceil() as usize).min(millis.len()) - 1])
}

fn report(label: &str, samples: &[Duration]) {
    let (median, p95) = median_p95(samples);
    println!("{label:<44} {median:>9.1} {p95:>9.1} {:>6}", samples.len());
}
