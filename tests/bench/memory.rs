//! `bench memory`: what each session costs in memory, and where it goes.

use std::time::Duration;

use serde_json::json;

use crate::harness::*;

/// Unique memory of the daemon's whole tree and of the X server it draws on (PSS summed:
/// a page shared inside the tree counts once; a hidden page's surfaces may live in the X
/// server, which is the daemon's own child when it started one): idle, with 1 to 5
/// sessions on the large page, after they close, and one session with 5 tabs; and the
/// WebKit processes behind them.
pub(crate) fn per_session(daemon: &Daemon, lease: &Lease, page: &str) {
    println!();
    let settle = || std::thread::sleep(Duration::from_millis(1500));
    // Let the processes of sessions closed before exit first.
    assert!(eventually(Duration::from_secs(10), || webkit_children(daemon.pid).is_empty()));
    settle();
    let base = unique_kib(daemon);
    println!("memory (unique, daemon and its processes), idle: {:.1} MiB", base as f64 / 1024.0);
    let mut sessions = Vec::new();
    let mut totals = vec![base];
    // What opening a session costs before it loads a page (it shows about:blank).
    let mut before_page = 0;
    // A lease holds at most 4 sessions: the fifth is another agent's.
    let other = daemon.lease("bench-other");
    for count in 1..=5 {
        let session = if count < 5 { lease.session_sized(1280, 720) } else { other.session_sized(1280, 720) };
        if count > 1 {
            settle();
            before_page += unique_kib(daemon).saturating_sub(totals[count - 1]);
        }
        session.navigate(page);
        settle();
        totals.push(unique_kib(daemon));
        println!(
            "  {count} session(s) on (b): {:>7.1} MiB (+{:.1})",
            totals[count] as f64 / 1024.0,
            totals[count].saturating_sub(totals[count - 1]) as f64 / 1024.0
        );
        sessions.push(session);
        if count == 1 || count == 5 {
            breakdown(daemon, count);
        }
    }
    let per_extra = (totals[5] - totals[1]) as f64 / 4.0 / 1024.0;
    println!(
        "first session +{:.1} MiB; each extra session +{per_extra:.1} MiB (Playwright MCP: +144 MiB per context; goal: at most +40: {})",
        (totals[1] - base) as f64 / 1024.0,
        if per_extra <= 40.0 { "met" } else { "not met" }
    );
    println!("  of it, before the session loads a page (about:blank): +{:.1} MiB", before_page as f64 / 4.0 / 1024.0);
    // What no setting moves: the pages each WebKit process writes into its libraries as
    // they load (relocations, constructors), against its heaps.
    let network = webkit_children(daemon.pid).into_iter().find(|pid| command_of(*pid).starts_with("WebKitNetwork"));
    for (kind, pid) in [("web process", web_processes(daemon.pid).first().copied()), ("network process", network)] {
        if let Some(pid) = pid {
            own_pages(kind, pid);
        }
    }
    for session in sessions {
        session.close();
    }
    assert!(eventually(Duration::from_secs(10), || webkit_children(daemon.pid).is_empty()));
    settle();
    let after = unique_kib(daemon);
    println!(
        "after the 5 sessions closed: {:.1} MiB ({:+.1} MiB against idle)",
        after as f64 / 1024.0,
        (after as f64 - base as f64) / 1024.0
    );

    let session = lease.session_sized(1280, 720);
    session.navigate(page);
    settle();
    let one_tab = unique_kib(daemon);
    for _ in 2..=5 {
        let opened = session.tool("tab_new", json!({ "url": page }));
        assert_eq!(opened.status, 200, "{}", opened.body);
    }
    settle();
    let five_tabs = unique_kib(daemon);
    println!(
        "1 session with 5 tabs on (b): {:.1} MiB; each extra tab +{:.1} MiB",
        five_tabs as f64 / 1024.0,
        (five_tabs.saturating_sub(one_tab)) as f64 / 4.0 / 1024.0
    );
    session.close();
}

/// Where the memory is, by kind of process (process names are cut at 15 characters).
fn breakdown(daemon: &Daemon, sessions: usize) {
    let kinds = |prefix: &str| {
        let found: Vec<u32> = webkit_children(daemon.pid).into_iter().filter(|pid| command_of(*pid).starts_with(prefix)).collect();
        (found.len(), found.iter().map(|pid| pss_kib(*pid)).sum::<u64>() as f64 / 1024.0)
    };
    let (web, web_mib) = kinds("WebKitWeb");
    let (network, network_mib) = kinds("WebKitNetwork");
    let x_server = x_server_kib() as f64 / 1024.0;
    let own = unique_kib(daemon) as f64 / 1024.0 - web_mib - network_mib - x_server;
    println!(
        "    with {sessions}: {web} web processes {web_mib:.1} MiB, {network} network processes {network_mib:.1} MiB, the X server {x_server:.1} MiB, the daemon {own:.1} MiB"
    );
}

/// PSS of the daemon's tree plus the test X server's.
fn unique_kib(daemon: &Daemon) -> u64 {
    pss_kib(daemon.pid) + x_server_kib()
}

/// PSS of the X server the harness started for this process (the daemons draw on it).
fn x_server_kib() -> u64 {
    children(std::process::id()).into_iter().filter(|(_, name)| name.starts_with("Xvfb")).map(|(pid, _)| pss_kib(pid)).sum()
}

/// One process's own pages (private and written: counted once per process), split into
/// its heaps and stacks and what it wrote into the libraries it loaded, largest first.
fn own_pages(kind: &str, pid: u32) {
    let (heaps, libraries) = private_dirty_kib(pid);
    let written: u64 = libraries.iter().map(|(_, kib)| kib).sum();
    let mib = |kib: u64| kib as f64 / 1024.0;
    // Flite (speech synthesis) comes as a dozen libraries, its voices among them.
    let flite: u64 = libraries.iter().filter(|(name, _)| name.starts_with("libflite")).map(|(_, kib)| kib).sum();
    let largest: Vec<String> = libraries
        .iter()
        .filter(|(name, _)| !name.starts_with("libflite"))
        .take(4)
        .map(|(name, kib)| format!("{name} {:.1}", mib(*kib)))
        .collect();
    println!(
        "    a {kind}'s own pages: {:.1} MiB: heaps and stacks {:.1}, written into {} libraries as they load {:.1} ({}, flite {:.1})",
        mib(heaps + written),
        mib(heaps),
        libraries.len(),
        mib(written),
        largest.join(", "),
        mib(flite)
    );
}
