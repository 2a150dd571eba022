//! Benchmark of the foundation: prints medians and p95s of daemon start to first lease,
//! session create to ready, navigate, observe light, screenshot, and the resident
//! memory (PSS, counting shared pages once per process share) of each extra session.
//!
//! Run with `scripts/bench.sh`. It drives the real daemon over HTTP like an agent, on
//! the shared benchmark pages (`../shared/bench`) when present, else on the test fixtures.

#[path = "../e2e/harness.rs"]
mod harness;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use harness::*;

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
    println!();
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
    session.close();

    // Memory: PSS of the daemon and all its WebKit processes, per extra session.
    println!();
    // Let the processes of the sessions closed above exit first.
    assert!(eventually(Duration::from_secs(10), || webkit_children(daemon.pid).is_empty()));
    std::thread::sleep(Duration::from_millis(500));
    let base = pss_kib(daemon.pid);
    let mut sessions = Vec::new();
    let mut previous = base;
    let mut extras = Vec::new();
    for count in 1..=4 {
        let session = lease.session_sized(1280, 720);
        session.navigate(&page_a);
        std::thread::sleep(Duration::from_millis(800));
        let total = pss_kib(daemon.pid);
        extras.push(total.saturating_sub(previous));
        println!("memory with {count} session(s) on (a): {:>7.1} MiB PSS (+{:.1} MiB)", total as f64 / 1024.0, (total - previous.min(total)) as f64 / 1024.0);
        previous = total;
        sessions.push(session);
    }
    let beyond_first = &extras[1..];
    let per_session = beyond_first.iter().sum::<u64>() as f64 / beyond_first.len() as f64 / 1024.0;
    println!(
        "daemon without sessions: {:.1} MiB PSS; first session +{:.1} MiB; each extra session +{per_session:.1} MiB",
        base as f64 / 1024.0,
        extras[0] as f64 / 1024.0
    );
    for session in sessions {
        session.close();
    }
}

fn report(label: &str, samples: &[Duration]) {
    let mut millis: Vec<f64> = samples.iter().map(|sample| sample.as_secs_f64() * 1000.0).collect();
    millis.sort_by(f64::total_cmp);
    let median = millis[millis.len() / 2];
    let p95 = millis[((millis.len() as f64 * 0.95).ceil() as usize).min(millis.len()) - 1];
    println!("{label:<44} {median:>9.1} {p95:>9.1} {:>6}", millis.len());
}

/// PSS in KiB of `pid` and every descendant.
fn pss_kib(pid: u32) -> u64 {
    let mut total = 0;
    let mut stack = vec![pid];
    while let Some(current) = stack.pop() {
        if let Ok(rollup) = std::fs::read_to_string(format!("/proc/{current}/smaps_rollup")) {
            total += rollup
                .lines()
                .find(|line| line.starts_with("Pss:"))
                .and_then(|line| line.split_whitespace().nth(1)?.parse::<u64>().ok())
                .unwrap_or(0);
        }
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else { continue };
            let parent = stat.split(") ").nth(1).and_then(|rest| rest.split(' ').nth(1)?.parse::<u32>().ok());
            if parent == Some(current) {
                stack.push(child);
            }
        }
    }
    total
}
