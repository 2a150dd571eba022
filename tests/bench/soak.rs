//! Soak: N agents, each with its own lease and M sessions, call tools on local fixture
//! pages for T minutes the way agents do (navigate, snapshot, fill, click, evaluate,
//! screenshots, request and console logs, tabs). Prints the calls, errors by code, p50/p99
//! per tool, memory (PSS of the daemon and its WebKit processes) at the start, middle, end
//! and after every lease is released, the main thread's figures from `GET /v1/stats`, and
//! what was left behind (processes, ports, files, descriptors). The daemon's RSS must be
//! back within 50 MiB of its idle size 30 s after every lease is released.
//!
//! `scripts/soak.sh [agents] [sessions] [minutes]` (default 8 4 8). Exits non-zero on any
//! error or leftover, or when memory does not come back.

#[path = "../e2e/harness/mod.rs"]
mod harness;
mod main_thread;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use harness::*;
use serde_json::{json, Value};

/// How far above its idle size the daemon's RSS may stay 30 s after every lease is
/// released.
const RETURN_GOAL_MIB: f64 = 50.0;

#[derive(Default)]
struct Tally {
    /// Latencies per tool.
    latencies: BTreeMap<String, Vec<Duration>>,
    /// Failed calls per tool and code.
    errors: BTreeMap<String, u64>,
    /// The first few failures, in full.
    examples: Vec<String>,
}

impl Tally {
    fn record(&mut self, tool: &str, took: Duration, response: &Response) {
        self.latencies.entry(tool.to_string()).or_default().push(took);
        if response.status != 200 {
            let code = if response.code().is_empty() { format!("HTTP {}", response.status) } else { response.code().to_string() };
            *self.errors.entry(format!("{tool} {code}")).or_default() += 1;
            if self.examples.len() < 10 {
                self.examples.push(format!("{tool}: {} {}", response.status, response.text.chars().take(300).collect::<String>()));
            }
        }
    }
}

fn main() {
    let number = |index: usize, default: u64| std::env::args().nth(index).and_then(|arg| arg.parse().ok()).unwrap_or(default);
    let (agents, sessions, minutes) = (number(1, 8) as usize, number(2, 4) as usize, number(3, 8));
    let fixtures = Fixtures::start();
    let daemon = Daemon::start_with(DaemonOptions {
        max_sessions: sessions.max(1),
        pool_size: agents as u16 + 2,
        lease_ttl_seconds: 120,
        session_idle_seconds: 600,
        ..DaemonOptions::default()
    });
    println!("malo-browser soak ({} build): {agents} agents x {sessions} sessions for {minutes} min", build());
    // The daemon's start-up probe session goes first.
    eventually(Duration::from_secs(10), || webkit_children(daemon.pid).is_empty());
    std::thread::sleep(Duration::from_millis(500));
    let measure = || (pss_kib(daemon.pid), rss_kib(daemon.pid), anonymous_kib(daemon.pid));
    let base = measure();
    probe("idle", daemon.pid);
    let mut by_mapping = vec![("at start", rss_by_mapping_kib(daemon.pid))];
    let leases: Vec<Lease> = (0..agents).map(|index| daemon.lease(&format!("soak-{index}"))).collect();
    let lease_ports: Vec<u16> = leases.iter().map(|lease| lease.port).collect();

    let tally = Arc::new(Mutex::new(Tally::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let begun = Instant::now();
    let workers: Vec<_> = leases
        .iter()
        .cloned()
        .enumerate()
        .map(|(agent, lease)| {
            let (tally, stop, fixtures_url) = (tally.clone(), stop.clone(), fixtures.url(""));
            std::thread::spawn(move || agent_loop(agent, lease, sessions, &fixtures_url, &tally, &stop))
        })
        .collect();

    // Keep the leases alive, and measure memory once every session is open and busy.
    let duration = Duration::from_secs(minutes * 60);
    let mut memory = vec![("start (empty daemon)", base)];
    let mut measured_start = false;
    let mut measured_middle = false;
    while begun.elapsed() < duration {
        std::thread::sleep(Duration::from_secs(5));
        for lease in &leases {
            let renewed = request(daemon.port, "POST", &format!("/v1/leases/{}/heartbeat", lease.id), &daemon.broker_headers(), None);
            record(&tally, "heartbeat", Duration::ZERO, &renewed);
        }
        if !measured_start && begun.elapsed() > Duration::from_secs(20).min(duration / 4) {
            memory.push(("start (all sessions busy)", measure()));
            measured_start = true;
        }
        if !measured_middle && begun.elapsed() > duration / 2 {
            memory.push(("middle", measure()));
            measured_middle = true;
        }
    }
    memory.push(("end", measure()));
    by_mapping.push(("at the end", rss_by_mapping_kib(daemon.pid)));
    stop.store(true, Ordering::Relaxed);
    let mut calls = 0;
    for worker in workers {
        calls += worker.join().expect("an agent thread panicked");
    }
    let stats = request(daemon.port, "GET", "/v1/stats", &daemon.broker_headers(), None).body;

    // Release everything; then nothing may be left.
    let released_at = Instant::now();
    for lease in &leases {
        let released = request(daemon.port, "DELETE", &format!("/v1/leases/{}", lease.id), &daemon.broker_headers(), None);
        record(&tally, "release_lease", Duration::ZERO, &released);
    }
    let settled = eventually(Duration::from_secs(20), || webkit_children(daemon.pid).is_empty());
    std::thread::sleep(Duration::from_secs(2));
    memory.push(("after release", measure()));
    std::thread::sleep(Duration::from_secs(30).saturating_sub(released_at.elapsed()));
    memory.push(("30 s after release", measure()));
    probe("30 s after release", daemon.pid);
    by_mapping.push(("30 s after release", rss_by_mapping_kib(daemon.pid)));

    let tally = tally.lock().unwrap();
    println!();
    println!("calls: {calls} in {:.1} min ({:.1}/s)", begun.elapsed().as_secs_f64() / 60.0, calls as f64 / begun.elapsed().as_secs_f64());
    println!("{:<22} {:>7} {:>9} {:>9} {:>9}", "tool", "calls", "p50 ms", "p99 ms", "max ms");
    for (tool, samples) in &tally.latencies {
        if samples.iter().all(Duration::is_zero) {
            continue;
        }
        let (p50, p99, max) = percentiles(samples);
        println!("{tool:<22} {:>7} {p50:>9.1} {p99:>9.1} {max:>9.1}", samples.len());
    }
    let errors: u64 = tally.errors.values().sum();
    println!("errors: {errors}");
    for (what, count) in &tally.errors {
        println!("  {what}: {count}");
    }
    for example in &tally.examples {
        println!("  e.g. {example}");
    }
    println!("memory (MiB)           PSS, daemon and WebKit   RSS, daemon   of which anonymous");
    let mib = |kib: &u64| *kib as f64 / 1024.0;
    for (when, (pss, rss, anonymous)) in &memory {
        println!("  {when:<26} {:>12.1} {:>13.1} {:>20.1}", mib(pss), mib(rss), mib(anonymous));
    }
    for (when, kinds) in &by_mapping {
        let kinds: Vec<String> = kinds.iter().map(|(kind, kib)| format!("{kind} {:.1}", mib(kib))).collect();
        println!("  the daemon's RSS {when}, by mapping: {}", kinds.join(", "));
    }
    // The goal: 30 s after every lease is released, the daemon is back within 50 MiB of
    // its idle size before the run.
    let (_, idle_rss, _) = base;
    let (_, released_rss, _) = memory.last().expect("measured after release").1;
    let returned = released_rss.saturating_sub(idle_rss) as f64 / 1024.0 <= RETURN_GOAL_MIB;
    println!(
        "daemon RSS idle before the run {:.1} MiB, 30 s after release {:.1} MiB: {:+.1} MiB (goal: within {RETURN_GOAL_MIB:.0} MiB of idle: {})",
        mib(&idle_rss),
        mib(&released_rss),
        (released_rss as f64 - idle_rss as f64) / 1024.0,
        if returned { "met" } else { "NOT met" }
    );
    let main_thread = &stats["main_thread"];
    let summary = |figures: &Value| {
        format!("n {} p50 {} ms p99 {} ms max {} ms", figures["count"], figures["p50_ms"], figures["p99_ms"], figures["max_ms"])
    };
    println!("main thread: queue wait {}", summary(&main_thread["queue_wait"]));
    println!(
        "main thread: stalls (heartbeat lateness) {}; unavailable {} ms in all",
        summary(&main_thread["stall"]),
        main_thread["stalled_total_ms"]
    );
    crate::main_thread::print_longest_holds(&stats, 6);
    println!("connections: {}", stats["connections"]);

    let processes = webkit_children(daemon.pid);
    let ports: Vec<u16> = lease_ports.iter().copied().filter(|port| port_open(*port)).collect();
    let files = files_below(&daemon.data_dir.join("leases"));
    let descriptors = std::fs::read_dir(format!("/proc/{}/fd", daemon.pid)).map(|dir| dir.count()).unwrap_or(0);
    println!(
        "leftovers: {} WebKit processes, {} lease ports open, {} files under leases/, {descriptors} descriptors held by the daemon",
        processes.len(),
        ports.len(),
        files.len()
    );
    if errors > 0 || !settled || !processes.is_empty() || !ports.is_empty() || !files.is_empty() || !returned {
        println!("SOAK FAILED");
        std::process::exit(1);
    }
    println!("soak passed: 0 errors, 0 leftovers, memory back within {RETURN_GOAL_MIB:.0} MiB of idle");
}

/// Runs `$MALO_SOAK_PROBE <moment> <daemon pid>` when set: a way to look inside the daemon
/// (its smaps, gdb's `malloc_info`) at the moments the soak compares.
fn probe(moment: &str, pid: u32) {
    if let Ok(command) = std::env::var("MALO_SOAK_PROBE") {
        let _ = std::process::Command::new(command).arg(moment).arg(pid.to_string()).status();
    }
}

fn build() -> &'static str {
    if cfg!(debug_assertions) {
        "dev"
    } else {
        "release"
    }
}

fn record(tally: &Mutex<Tally>, tool: &str, took: Duration, response: &Response) {
    tally.lock().unwrap().record(tool, took, response);
}

/// One agent: opens its sessions, then works through them round-robin until told to stop;
/// returns how many calls it made.
fn agent_loop(agent: usize, lease: Lease, sessions: usize, fixtures: &str, tally: &Mutex<Tally>, stop: &AtomicBool) -> u64 {
    let mut calls = 0;
    let mut open = Vec::new();
    for _ in 0..sessions {
        let begun = Instant::now();
        let response = lease.try_session(json!({ "name": format!("soak-{agent}"), "width": 1024, "height": 768 }));
        record(tally, "create_session", begun.elapsed(), &response);
        calls += 1;
        if response.status == 200 {
            open.push(Session {
                id: response.body["session_id"].as_str().unwrap().to_string(),
                token: response.body["session_token"].as_str().unwrap().to_string(),
                lease: lease.clone(),
                summary: response.body,
            });
        }
    }
    let mut round = 0u64;
    while !stop.load(Ordering::Relaxed) && !open.is_empty() {
        let session = &open[round as usize % open.len()];
        let mut call = |tool: &str, input: Value| {
            let begun = Instant::now();
            let response = session.tool(tool, input);
            record(tally, tool, begun.elapsed(), &response);
            calls += 1;
            response
        };
        call("navigate", json!({ "url": format!("{fixtures}/f/actions.html?agent={agent}&round={round}") }));
        call("snapshot", json!({}));
        call("fill", json!({ "selector": "#user", "text": format!("agent {agent} round {round}") }));
        call("click", json!({ "selector": "#save" }));
        call("evaluate", json!({ "expression": "document.querySelector('#user').value" }));
        call("requests", json!({}));
        call("console", json!({}));
        if round.is_multiple_of(4) {
            call("observe", json!({ "mode": "screenshot" }));
        }
        if round.is_multiple_of(8) {
            call("navigate", json!({ "url": format!("{fixtures}/f/network.html?round={round}") }));
            let opened = call("tab_new", json!({ "url": format!("{fixtures}/f/hello.html") }));
            if let Some(tab) = opened.body["result"]["tab"].as_str() {
                call("tab_close", json!({ "tab": tab }));
            }
        }
        round += 1;
    }
    for session in &open {
        let begun = Instant::now();
        let closed = session.close();
        record(tally, "close_session", begun.elapsed(), &closed);
        calls += 1;
    }
    calls
}

fn percentiles(samples: &[Duration]) -> (f64, f64, f64) {
    let mut millis: Vec<f64> = samples.iter().map(|sample| sample.as_secs_f64() * 1000.0).collect();
    millis.sort_by(f64::total_cmp);
    let at = |quantile: f64| millis[((millis.len() as f64 * quantile).ceil() as usize).clamp(1, millis.len()) - 1];
    (at(0.5), at(0.99), millis[millis.len() - 1])
}
