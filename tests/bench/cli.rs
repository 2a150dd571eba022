//! `bench cli`: the CLI as a coding agent's shell tool runs it (one process per command,
//! stdout on a pipe), `malo` against vercel's agent-browser 0.41 (the npm package
//! `tests/clients/package.json` pins, its own Linux binary driving Debian's Chromium), on
//! the shared benchmark pages, interleaved reps: each command's median time and the o200k
//! tokens it printed, the whole sequence, the large page's snapshot, and what a small
//! command costs the CLI itself, each with its goal (issue #43) and whether it is met.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::*;

/// Interleaved reps of the sequence.
const REPS: usize = 6;

/// The commands of one rep, as the rows name them.
const STEPS: [&str; 6] = ["open form", "snapshot form", "fill", "click", "read text", "screenshot"];

/// The whole sequence's goal: at most this factor of agent-browser's time.
const SEQUENCE_GOAL: f64 = 0.6;

/// A small command's own cost (process start, finding the daemon and session, one
/// request) at most, in ms.
const OVERHEAD_GOAL_MS: f64 = 5.0;

/// The text of the large page's last table row.
const LAST_ROW: &str = "SKU-10199";

/// One of the two CLIs: how to run it and where its session keeps state.
struct Cli {
    name: &'static str,
    program: PathBuf,
    /// Words after the command's own (`--data-dir` for malo).
    tail: Vec<String>,
    env: Vec<(String, String)>,
}

impl Cli {
    /// Runs one command with stdout on a pipe: its wall time and what it printed.
    fn run(&self, words: &[&str]) -> (Duration, String) {
        let mut command = Command::new(&self.program);
        command.args(words).args(&self.tail).envs(self.env.iter().map(|(key, value)| (key, value)));
        let begun = Instant::now();
        let output = command.output().expect("the CLI runs");
        let took = begun.elapsed();
        let printed = String::from_utf8_lossy(&output.stdout).to_string();
        assert!(output.status.success(), "{} {words:?}: {}\n{printed}", self.name, String::from_utf8_lossy(&output.stderr));
        (took, printed)
    }

    /// The ref of the snapshot line that holds `needle`: malo's lines start with it
    /// (`e12 textbox "Full name"`), agent-browser's end with it (`[ref=e6]`).
    fn ref_in(&self, snapshot: &str, needle: &str) -> String {
        let line =
            snapshot.lines().find(|line| line.contains(needle)).unwrap_or_else(|| panic!("{}: no {needle:?} in\n{snapshot}", self.name));
        let word = line
            .split(|character: char| !(character.is_ascii_alphanumeric()))
            .find(|word| word.len() > 1 && word.starts_with('e') && word[1..].bytes().all(|byte| byte.is_ascii_digit()));
        format!("@{}", word.unwrap_or_else(|| panic!("{}: no ref in {line:?}", self.name)))
    }
}

/// agent-browser's Linux binary from the pinned npm package (made executable: the clients
/// are installed without their install scripts), with Chromium and a home of its own.
fn agent_browser(home: &Path) -> Cli {
    let program = clients_dir().join("node_modules/agent-browser/bin/agent-browser-linux-x64");
    let mut permissions = std::fs::metadata(&program).expect("agent-browser is installed").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&program, permissions).expect("agent-browser made executable");
    let env = [
        ("AGENT_BROWSER_EXECUTABLE_PATH", "/usr/bin/chromium".to_string()),
        ("AGENT_BROWSER_SESSION", "malo-bench".to_string()),
        ("HOME", home.display().to_string()),
    ];
    Cli { name: "agent-browser", program, tail: Vec::new(), env: env.into_iter().map(|(key, value)| (key.to_string(), value)).collect() }
}

fn malo(daemon: &Daemon) -> Cli {
    Cli {
        name: "malo",
        program: malo_binary(),
        tail: vec!["--data-dir".into(), daemon.data_dir.display().to_string()],
        env: vec![("DISPLAY".into(), display().to_string())],
    }
}

/// The words of each step for one CLI, in order; refs come from the rep's own snapshot.
fn rep(cli: &Cli, form: &str, shot: &Path, times: &mut [Vec<Duration>], tokens: &mut [Vec<usize>], count: &dyn Fn(&str) -> usize) {
    let mut record = |step: usize, (took, printed): (Duration, String)| {
        times[step].push(took);
        tokens[step].push(count(&printed));
        printed
    };
    let shot = shot.display().to_string();
    record(0, cli.run(&[if cli.name == "malo" { "navigate" } else { "open" }, form]));
    let snapshot = record(1, cli.run(&["snapshot"]));
    let (name, apply) = (cli.ref_in(&snapshot, "textbox \"Full name\""), cli.ref_in(&snapshot, "button \"Apply coupon\""));
    record(2, cli.run(&["fill", &name, "Ada Lovelace"]));
    record(3, cli.run(&["click", &apply]));
    let read: Vec<&str> = if cli.name == "malo" { vec!["extract", "h1"] } else { vec!["get", "text", "h1"] };
    record(4, cli.run(&read));
    let screenshot: Vec<&str> = if cli.name == "malo" { vec!["screenshot", "-o", &shot] } else { vec!["screenshot", &shot] };
    record(5, cli.run(&screenshot));
}

fn median_ms(samples: &[Duration]) -> f64 {
    let mut millis: Vec<f64> = samples.iter().map(|sample| sample.as_secs_f64() * 1000.0).collect();
    millis.sort_by(f64::total_cmp);
    millis.get(millis.len() / 2).copied().unwrap_or(f64::NAN)
}

fn median_of(counts: &[usize]) -> usize {
    let mut sorted = counts.to_vec();
    sorted.sort_unstable();
    sorted.get(sorted.len() / 2).copied().unwrap_or(0)
}

fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "not met"
    }
}

/// Runs both CLIs on the shared pages served by `fixtures` and prints the rows.
pub(crate) fn cli_side_by_side(fixtures: &Fixtures) {
    let tokenizer = tiktoken_rs::o200k_base().expect("o200k tokenizer");
    let count = |text: &str| tokenizer.encode_with_special_tokens(text).len();
    let daemon = Daemon::start();
    let home = TempDir::new("bench-agent-browser");
    let shots = TempDir::new("bench-cli-shots");
    let clis = [agent_browser(&home.0), malo(&daemon)];
    let (form, large) = (fixtures.url("/b/form.html"), fixtures.url("/b/large.html"));
    // Warm: each starts its browser (and malo its session) before anything is timed.
    for cli in &clis {
        cli.run(&[if cli.name == "malo" { "navigate" } else { "open" }, &form]);
    }
    let mut times = [vec![vec![]; STEPS.len()], vec![vec![]; STEPS.len()]];
    let mut tokens = [vec![vec![]; STEPS.len()], vec![vec![]; STEPS.len()]];
    let mut sequences = [vec![], vec![]];
    for index in 0..REPS {
        // Each goes first in turn.
        for which in [index % 2, 1 - index % 2] {
            let shot = shots.0.join(format!("{}-{index}.png", clis[which].name));
            let begun = Instant::now();
            rep(&clis[which], &form, &shot, &mut times[which], &mut tokens[which], &count);
            sequences[which].push(begun.elapsed());
        }
    }
    println!("CLI side by side, stdout piped, one process per command ({REPS} interleaved reps, medians; o200k tokens printed)");
    println!(
        "{:<16} {:>9} {:>7} {:>9} {:>7}  goal: malo at most agent-browser's time and tokens",
        "command", "a-b ms", "tokens", "malo ms", "tokens"
    );
    for (step, name) in STEPS.iter().enumerate() {
        let (peer_ms, malo_ms) = (median_ms(&times[0][step]), median_ms(&times[1][step]));
        let (peer_tokens, malo_tokens) = (median_of(&tokens[0][step]), median_of(&tokens[1][step]));
        println!(
            "{name:<16} {peer_ms:>9.1} {peer_tokens:>7} {malo_ms:>9.1} {malo_tokens:>7}  time: {}, tokens: {}",
            verdict(malo_ms <= peer_ms),
            verdict(malo_tokens <= peer_tokens)
        );
    }
    let (peer, mine) = (median_ms(&sequences[0]), median_ms(&sequences[1]));
    println!(
        "{:<16} {peer:>9.1} {:>7} {mine:>9.1} {:>7}  ≤ {SEQUENCE_GOAL}x: {} ({:.2}x)",
        "whole sequence",
        "",
        "",
        verdict(mine <= SEQUENCE_GOAL * peer),
        mine / peer
    );

    // The large page's snapshot, as each prints it on a pipe.
    for cli in &clis {
        cli.run(&[if cli.name == "malo" { "navigate" } else { "open" }, &large]);
        let (took, printed) = cli.run(&["snapshot"]);
        let reached = printed.contains(LAST_ROW);
        println!(
            "large page snapshot, {:<13} {:>7.1} ms {:>7} tokens; reaches the last table row ({LAST_ROW}): {}",
            cli.name,
            took.as_secs_f64() * 1000.0,
            count(&printed),
            if reached { "yes" } else { "no" }
        );
    }
    let (_, printed) = clis[1].run(&["snapshot"]);
    println!("goal: malo's large snapshot on a pipe reaches the last table row: {}", verdict(printed.contains(LAST_ROW)));

    overhead(&daemon, &clis[1]);
    let skill = String::from_utf8_lossy(&Command::new(malo_binary()).arg("skill").output().expect("malo skill runs").stdout).to_string();
    println!("malo skill: {} o200k tokens; goal ≤ 1000: {}", count(&skill), verdict(count(&skill) <= 1000));
    let _ = clis[0].run(&["close"]);
}

/// What a small command costs the CLI itself: `malo tab-list` end to end, minus the same
/// request sent straight to the session's endpoint (a new connection each, as the CLI's).
fn overhead(daemon: &Daemon, cli: &Cli) {
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(daemon.data_dir.join("cli.json")).expect("cli.json")).expect("cli.json is JSON");
    let port: u16 =
        saved["endpoint"].as_str().and_then(|endpoint| endpoint.rsplit(':').next()).and_then(|port| port.parse().ok()).expect("a port");
    let session = &saved["sessions"][saved["sessions"].as_array().map_or(0, Vec::len).saturating_sub(1)];
    let (id, token) = (session[0].as_str().expect("a session"), session[1].as_str().expect("its token"));
    let headers = [("x-malo-lease-token", saved["token"].as_str().unwrap_or("").to_string()), ("x-malo-session-token", token.to_string())];
    let (mut whole, mut direct, mut started) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..20 {
        whole.push(cli.run(&["tab-list"]).0);
        let begun = Instant::now();
        let answer = request(port, "POST", &format!("/v1/sessions/{id}/tools/tab_list"), &headers, Some(json!({})));
        direct.push(begun.elapsed());
        assert_eq!(answer.status, 200, "{}", answer.body);
        let begun = Instant::now();
        Command::new(&cli.program).arg("--version").output().expect("malo --version runs");
        started.push(begun.elapsed());
    }
    let own = median_ms(&whole) - median_ms(&direct);
    println!(
        "malo tab-list {:.1} ms, the same request alone {:.1} ms, malo --version {:.1} ms: the CLI's own {own:.1} ms; goal ≤ {OVERHEAD_GOAL_MS} ms: {}",
        median_ms(&whole),
        median_ms(&direct),
        median_ms(&started),
        verdict(own <= OVERHEAD_GOAL_MS)
    );
}
