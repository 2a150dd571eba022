//! Looking after the processes a test starts: a watchdog that ends them with the test run,
//! signals, waiting for an exit, and polling until a condition holds.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Kills `pid` once this test process is gone, so nothing outlives a crashed test run.
/// It stops watching when `pid` ends first: a number the system has handed to another
/// process since (a compiler, say) is never killed.
pub fn watchdog(pid: u32) {
    let me = std::process::id();
    // Field 22 of /proc/<pid>/stat, the start time, tells the process from a later one.
    let started = format!("$(sed 's/.*) //' /proc/{pid}/stat 2>/dev/null | cut -d' ' -f20)");
    let script = format!(
        "start={started}; [ -n \"$start\" ] || exit 0; \
         while kill -0 {me} 2>/dev/null && [ \"{started}\" = \"$start\" ]; do sleep 0.5; done; \
         [ \"{started}\" = \"$start\" ] || exit 0; kill {pid} 2>/dev/null; sleep 2; \
         [ \"{started}\" = \"$start\" ] && kill -9 {pid} 2>/dev/null"
    );
    let _ = Command::new("sh").args(["-c", &script]).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn();
}

pub fn signal(pid: u32, name: &str) {
    let _ = Command::new("kill").arg(format!("-{name}")).arg(pid.to_string()).status();
}

pub fn wait_exit(child: &mut Child, limit: Duration) -> Option<i32> {
    let begun = Instant::now();
    while begun.elapsed() < limit {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status.code().unwrap_or(-1));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

/// Polls `check` until it holds or `limit` passes; returns whether it held.
pub fn eventually(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let begun = Instant::now();
    loop {
        if check() {
            return true;
        }
        if begun.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
