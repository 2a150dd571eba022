//! `bench sandbox`: what the web-process sandbox costs. A session's web process memory,
//! the whole daemon tree's PSS (bwrap and xdg-dbus-proxy included) and spawn -> first
//! navigate done, medians of 3 daemons each way (with the sandbox, and with it turned off
//! through `MALO_BWRAP` pointing nowhere).

use std::time::{Duration, Instant};

use crate::harness::*;

/// One daemon's figures: spawn -> first navigate done, and memory once the page settled.
struct Figures {
    first_navigate_ms: u64,
    web_pss_kib: u64,
    web_rss_kib: u64,
    tree_pss_kib: u64,
}

fn measure(sandboxed: bool, fixtures: &Fixtures) -> Figures {
    let env = if sandboxed { Vec::new() } else { vec![("MALO_BWRAP".to_string(), "/nonexistent/bwrap".to_string())] };
    let begun = Instant::now();
    let daemon = Daemon::start_with(DaemonOptions { env, ..DaemonOptions::default() });
    let session = daemon.lease("bench-sandbox").session();
    session.navigate(&fixtures.url("/f/hello.html"));
    let first_navigate_ms = begun.elapsed().as_millis() as u64;
    let health = request(daemon.port, "GET", "/v1/health", &[], None).body;
    assert_eq!(health["sandbox"], sandboxed, "{health}");
    std::thread::sleep(Duration::from_secs(3));
    let webs = web_processes(daemon.pid);
    Figures {
        first_navigate_ms,
        web_pss_kib: webs.iter().map(|web| pss_kib(*web)).sum(),
        web_rss_kib: webs.iter().map(|web| rss_kib(*web)).sum(),
        tree_pss_kib: pss_kib(daemon.pid),
    }
}

/// Prints one row with the sandbox and one without.
pub(crate) fn sandbox_cost(fixtures: &Fixtures) {
    let median = |mut values: Vec<u64>| {
        values.sort_unstable();
        values[values.len() / 2]
    };
    for sandboxed in [true, false] {
        let runs: Vec<Figures> = (0..3).map(|_| measure(sandboxed, fixtures)).collect();
        let figure = |pick: fn(&Figures) -> u64| median(runs.iter().map(pick).collect());
        println!(
            "sandbox {:<3}  spawn -> first navigate {:>5} ms  web process PSS {:>6} KiB  RSS {:>6} KiB  daemon tree PSS {:>7} KiB",
            if sandboxed { "on" } else { "off" },
            figure(|run| run.first_navigate_ms),
            figure(|run| run.web_pss_kib),
            figure(|run| run.web_rss_kib),
            figure(|run| run.tree_pss_kib),
        );
    }
}
