//! Probes of processes through /proc, for the leak checks: children, WebKit helpers,
//! memory (PSS, RSS, anonymous, by kind of mapping) and whether a process is alive.

/// WebKit helper processes of `pid`: its children, and those that bwrap (the web-process
/// sandbox: bwrap -> bwrap -> WebKitWebProcess) started for it.
pub fn webkit_children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for (child, command) in children(pid) {
        if command.contains("WebKit") {
            found.push(child);
        } else if command == "bwrap" {
            found.extend(webkit_children(child));
        }
    }
    found
}

/// The web processes of `pid` (sandboxed or not).
pub fn web_processes(pid: u32) -> Vec<u32> {
    webkit_children(pid).into_iter().filter(|child| command_of(*child).starts_with("WebKitWebProc")).collect()
}

/// The command name of `pid` (at most 15 characters, as the kernel keeps it).
pub fn command_of(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default().trim().to_string()
}

/// The processes whose parent is `pid`, with their command names.
pub fn children(pid: u32) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else { continue };
        let Some((head, rest)) = stat.rsplit_once(") ") else { continue };
        let command = head.split_once('(').map(|(_, command)| command).unwrap_or("");
        if rest.split(' ').nth(1).and_then(|value| value.parse::<u32>().ok()) == Some(pid) {
            found.push((child, command.to_string()));
        }
    }
    found
}

/// PSS in KiB of `pid` and every descendant.
pub fn pss_kib(pid: u32) -> u64 {
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
        stack.extend(children(current).into_iter().map(|(child, _)| child));
    }
    total
}

/// Resident memory of one process (not its children), in KiB.
pub fn rss_kib(pid: u32) -> u64 {
    proc_field_kib(&format!("/proc/{pid}/status"), "VmRSS:")
}

/// Resident anonymous memory of one process (its heaps, not its mapped files), in KiB.
pub fn anonymous_kib(pid: u32) -> u64 {
    proc_field_kib(&format!("/proc/{pid}/smaps_rollup"), "Anonymous:")
}

/// Resident memory of one process by kind of mapping, largest first, in KiB: the heaps
/// (`[heap]` and anonymous maps), System V shared memory (X images), memfd buffers,
/// `/dev/shm`, files, the stacks.
pub fn rss_by_mapping_kib(pid: u32) -> Vec<(String, u64)> {
    let mut kinds: std::collections::BTreeMap<String, u64> = Default::default();
    for (name, kib) in smaps_field_kib(pid, "Rss:") {
        let kind = match name.as_str() {
            "" => "anonymous".into(),
            _ if name.starts_with("/SYSV") => "System V shm".into(),
            _ if name.starts_with("/memfd:") => format!("memfd {}", &name[7..]),
            _ if name.starts_with("/dev/shm") => "/dev/shm".into(),
            _ if name.starts_with('/') => "files".into(),
            other => other.to_string(),
        };
        *kinds.entry(kind).or_default() += kib;
    }
    largest_first(kinds, 1024)
}

/// Private written memory of one process in KiB: in its heaps and stacks (anonymous
/// maps), and by library file (pages it wrote into a mapped file: relocations, data),
/// largest first.
pub fn private_dirty_kib(pid: u32) -> (u64, Vec<(String, u64)>) {
    let mut heaps = 0;
    let mut files: std::collections::BTreeMap<String, u64> = Default::default();
    for (name, kib) in smaps_field_kib(pid, "Private_Dirty:") {
        match name.rsplit_once('/') {
            Some((_, file)) => *files.entry(file.to_string()).or_default() += kib,
            None => heaps += kib,
        }
    }
    (heaps, largest_first(files, 1))
}

/// Each mapping of `pid` as its name (a path, `[heap]`, `[stack]`, or empty when
/// anonymous) and the value of one of its `smaps` fields (`Rss:`, `Private_Dirty:`) in KiB.
fn smaps_field_kib(pid: u32, field: &str) -> Vec<(String, u64)> {
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap_or_default();
    let mut mappings = Vec::new();
    let mut name = "";
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or("");
        if first.contains('-') && !first.ends_with(':') {
            name = fields.nth(4).unwrap_or("");
        } else if first == field {
            mappings.push((name.to_string(), fields.next().and_then(|value| value.parse().ok()).unwrap_or(0)));
        }
    }
    mappings
}

/// The entries of at least `min_kib`, largest first.
fn largest_first(entries: std::collections::BTreeMap<String, u64>, min_kib: u64) -> Vec<(String, u64)> {
    let mut sorted: Vec<(String, u64)> = entries.into_iter().filter(|(_, kib)| *kib >= min_kib).collect();
    sorted.sort_by_key(|entry| std::cmp::Reverse(entry.1));
    sorted
}

fn proc_field_kib(file: &str, field: &str) -> u64 {
    std::fs::read_to_string(file)
        .ok()
        .and_then(|text| text.lines().find(|line| line.starts_with(field))?.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// CPU time (user and system, all threads) `pid` has used, in milliseconds.
pub fn cpu_ms(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().collect()).unwrap_or_default();
    let ticks = |index: usize| fields.get(index).and_then(|value| value.parse::<u64>().ok()).unwrap_or(0);
    // The kernel counts in USER_HZ, 100 a second on Linux.
    (ticks(11) + ticks(12)) * 10
}

/// The nice value of `pid`'s main thread.
pub fn nice_of(pid: u32) -> i64 {
    stat_nice(&std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default()).unwrap_or(0)
}

/// The nice value of every live thread of `pid` (a thread's own on Linux).
pub fn thread_nices(pid: u32) -> Vec<i64> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|task| stat_nice(&std::fs::read_to_string(task.path().join("stat")).ok()?))
        .collect()
}

/// Field 19 of a `stat` line (the fields after the command, which may hold spaces and
/// parentheses, start at field 3).
fn stat_nice(stat: &str) -> Option<i64> {
    stat.rsplit_once(") ")?.1.split_whitespace().nth(16)?.parse().ok()
}

/// Times the threads of `pid` were switched out so far (voluntarily or not): how often it
/// woke up, which an idle process does seldom.
pub fn context_switches(pid: u32) -> u64 {
    let mut total = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten() {
        let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
        total += status
            .lines()
            .filter(|line| line.starts_with("voluntary_ctxt_switches:") || line.starts_with("nonvoluntary_ctxt_switches:"))
            .filter_map(|line| line.split_whitespace().nth(1)?.parse::<u64>().ok())
            .sum::<u64>();
    }
    total
}

pub fn process_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| !stat.split(") ").nth(1).unwrap_or("").starts_with('Z'))
        .unwrap_or(false)
}
