//! WebKit's network processes do page work too (each session's loads, cache and cookies),
//! and WebKit starts them as the daemon's own children, at the daemon's priority. On a
//! machine whose cores are taken by many loading pages they then compete on equal terms
//! with the daemon's main thread, and ten steps ahead of the page an agent waits on (the
//! web-process extension puts web processes 10 nice steps behind the daemon). A thread
//! here puts every thread of each network process the same 10 steps behind: `bench busy`
//! (16 sessions reloading a large page, a 17th's text snapshot) measured p95 8.0-8.5 ms
//! against 7.0-15 without, and the main thread unavailable 0.1-0.3 % of the time against
//! 0.4-0.7.
//!
//! A process may always lower the priority of its own user's processes; only raising it
//! back needs a privilege. WebKit gives no network process id, so the thread looks at the
//! daemon's children once a second (one `stat` each) and lowers every thread of a new
//! network process, and again whenever its number of threads changed in its first seconds
//! (while it starts its threads; later ones inherit their starter's nice value).

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How many nice steps behind the daemon a network process runs (as web processes do).
const BEHIND: i32 = 10;
/// How often the daemon's children are looked at.
const LOOK_EVERY: Duration = Duration::from_secs(1);
/// How long after it is first seen a network process's threads are still checked.
const WATCH_FOR: Duration = Duration::from_secs(10);
/// The start of a network process's command name (the kernel keeps 15 characters).
const COMMAND: &str = "WebKitNetworkPr";

/// Starts the thread (once per daemon).
pub(super) fn keep_behind() {
    let started = std::thread::Builder::new().name("malo-net-nice".into()).spawn(|| {
        let target = (own_nice() + BEHIND).min(19);
        // Each network process: when it was first seen, and how many threads it had when
        // they were last lowered.
        let mut known: HashMap<u32, (Instant, u64)> = HashMap::new();
        loop {
            std::thread::sleep(LOOK_EVERY);
            let now = Instant::now();
            let network: Vec<(u32, u64)> = children()
                .into_iter()
                .filter_map(|pid| {
                    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                    let (command, threads) = command_and_threads(&stat)?;
                    command.starts_with(COMMAND).then_some((pid, threads))
                })
                .collect();
            known.retain(|pid, _| network.iter().any(|(alive, _)| alive == pid));
            for (pid, threads) in network {
                let (first_seen, lowered) = known.entry(pid).or_insert((now, 0));
                if *lowered != threads && now.duration_since(*first_seen) <= WATCH_FOR {
                    put_behind(pid, target);
                    *lowered = threads;
                }
            }
        }
    });
    if let Err(error) = started {
        tracing::warn!(%error, "network processes keep the daemon's priority: no thread to lower it");
    }
}

/// Lowers every thread of `pid` to `target` (a thread's nice value is its own on Linux).
#[allow(unsafe_code)]
fn put_behind(pid: u32, target: i32) {
    for entry in std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten() {
        let Some(thread) = entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()) else { continue };
        if nice_of(pid, thread).is_some_and(|nice| nice < target) {
            // SAFETY: a plain system call about another thread of this user; a thread that
            // has ended since makes it fail, which changes nothing.
            let _ = unsafe { libc::setpriority(libc::PRIO_PROCESS, thread, target) };
        }
    }
}

/// The daemon's own nice value.
fn own_nice() -> i32 {
    let pid = std::process::id();
    nice_of(pid, pid).unwrap_or(0)
}

/// A thread's nice value, from its `stat` (field 19; the fields after the command, which
/// may hold spaces and parentheses, start at field 3).
fn nice_of(pid: u32, thread: u32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{thread}/stat")).ok()?;
    parse_nice(&stat)
}

fn parse_nice(stat: &str) -> Option<i32> {
    stat.rsplit_once(')')?.1.split_whitespace().nth(16)?.parse().ok()
}

/// A process's command name (field 2) and number of threads (field 20) from its `stat`.
fn command_and_threads(stat: &str) -> Option<(&str, u64)> {
    let (head, rest) = stat.rsplit_once(')')?;
    let command = head.split_once('(')?.1;
    Some((command, rest.split_whitespace().nth(17)?.parse().ok()?))
}

/// The daemon's child processes (each thread's own list: WebKit may start a process from
/// any of them).
fn children() -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc/self/task").into_iter().flatten().flatten() {
        if let Ok(list) = std::fs::read_to_string(entry.path().join("children")) {
            found.extend(list.split_whitespace().filter_map(|pid| pid.parse::<u32>().ok()));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_values_and_thread_counts_are_read_after_a_command_that_holds_spaces_and_parentheses() {
        let stat = "4242 (Web (Net) 1) S 1 4242 4242 0 -1 4194560 900 0 0 0 12 3 0 0 30 10 14 0 123 456 789";
        assert_eq!(parse_nice(stat), Some(10));
        assert_eq!(command_and_threads(stat), Some(("Web (Net) 1", 14)));
        assert_eq!(parse_nice("4242 (cut"), None);
    }
}
