//! Interactive calls first: while an agent waits on a click or a snapshot, other sessions'
//! web processes keep off one CPU, and get it back when no such call is left
//! (`engine::cpu_share`, the web-process extension's `cpu.rs`). Read from the kernel's own
//! account of each thread's CPUs.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::json;

use crate::harness::*;

/// The CPUs a thread may run on, from its `Cpus_allowed_list` (like `0-1,3`).
fn allowed(list: &str) -> BTreeSet<u32> {
    let mut cpus = BTreeSet::new();
    for part in list.trim().split(',').filter(|part| !part.is_empty()) {
        let (first, last) = part.split_once('-').unwrap_or((part, part));
        cpus.extend(first.parse::<u32>().unwrap()..=last.parse::<u32>().unwrap());
    }
    cpus
}

/// Each live thread's CPUs, for every thread of `pid`.
fn thread_cpus(pid: u32) -> Vec<BTreeSet<u32>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten() {
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else { continue };
        if let Some(list) = status.lines().find_map(|line| line.strip_prefix("Cpus_allowed_list:")) {
            found.push(allowed(list));
        }
    }
    found
}

/// The web processes a session started: those that appear while `open` runs.
fn opened_with(daemon: &Daemon, open: impl FnOnce() -> Session) -> (Session, Vec<u32>) {
    let before = web_processes(daemon.pid);
    let session = open();
    let mut started = Vec::new();
    assert!(eventually(Duration::from_secs(5), || {
        started = web_processes(daemon.pid).into_iter().filter(|pid| !before.contains(pid)).collect();
        !started.is_empty()
    }));
    (session, started)
}

#[test]
fn other_sessions_pages_keep_off_one_cpu_while_an_agent_waits_on_a_click_and_get_it_back_after() {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let all = allowed(status.lines().find_map(|line| line.strip_prefix("Cpus_allowed_list:")).unwrap());
    if all.len() < 2 {
        eprintln!("one CPU: nothing to keep free, nothing to test");
        return;
    }
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let lease = daemon.lease("agent-a");
    let (waiting, waiting_processes) = opened_with(&daemon, || lease.session());
    let (other, other_processes) = opened_with(&daemon, || daemon.lease("agent-b").session());
    waiting.navigate(&fixtures.url("/f/fidelity.html"));
    other.navigate(&fixtures.url("/f/hello.html"));
    let first = *all.iter().next().unwrap();
    let without_first: BTreeSet<u32> = all.iter().copied().filter(|cpu| *cpu != first).collect();
    let every_thread = |pids: &[u32], cpus: &BTreeSet<u32>| {
        let threads: Vec<_> = pids.iter().flat_map(|pid| thread_cpus(*pid)).collect();
        !threads.is_empty() && threads.iter().all(|thread| thread == cpus)
    };
    assert!(every_thread(&other_processes, &all), "before any call, pages have every CPU");

    // A click on an element that never stops moving: the agent waits 3 s.
    let clicking = std::thread::spawn(move || {
        waiting.fails("click", json!({ "selector": "#spinner", "timeout_ms": 3000 }), 504, "E_TIMEOUT");
        waiting
    });
    assert!(
        eventually(Duration::from_millis(2000), || every_thread(&other_processes, &without_first)),
        "while the click waits, every thread of the other session's web process keeps off CPU {first}: {:?}",
        other_processes.iter().map(|pid| thread_cpus(*pid)).collect::<Vec<_>>()
    );
    assert!(every_thread(&waiting_processes, &all), "the page the click is about keeps every CPU");
    // Meanwhile the other session still works (its own calls are served at full speed).
    assert!(other.ok("snapshot", json!({ "format": "text" }))["text"].as_str().is_some());
    let waiting = clicking.join().unwrap();
    assert!(
        eventually(Duration::from_secs(2), || every_thread(&other_processes, &all)),
        "once no call waits, the pages get every CPU back: {:?}",
        other_processes.iter().map(|pid| thread_cpus(*pid)).collect::<Vec<_>>()
    );
    waiting.close();
    other.close();
}

#[test]
fn every_thread_of_a_web_process_runs_ten_nice_steps_behind_the_daemon() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/hello.html"));
    let daemon_nice = nice_of(daemon.pid);
    let behind = (daemon_nice + 10).min(19);
    let web = web_processes(daemon.pid);
    assert!(!web.is_empty());
    for pid in &web {
        // WebKit starts several threads before the extension loads: those too.
        assert!(
            eventually(Duration::from_secs(5), || {
                let nices = thread_nices(*pid);
                nices.len() > 1 && nices.iter().all(|nice| *nice == behind)
            }),
            "every thread of web process {pid} at nice {behind}: {:?}",
            thread_nices(*pid)
        );
    }
    assert_eq!(nice_of(daemon.pid), daemon_nice, "the daemon keeps its own");
    session.close();
}
