//! `malo batch` (issue 49, point 6): many commands in one CLI process over one connection,
//! as arguments or on stdin, a JSON line each; `--bail` stops at the first failure.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::harness::*;

fn lines(text: &str) -> Vec<Value> {
    text.lines().map(|line| serde_json::from_str(line).unwrap_or_else(|error| panic!("not a JSON line ({error}): {line}"))).collect()
}

/// The sockets a process holds open (its fds that are sockets).
fn sockets_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|entries| {
            entries
                .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
                .filter(|target| target.to_string_lossy().starts_with("socket:"))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn batch_runs_ten_commands_from_stdin_in_one_process_over_one_connection() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let dir = TempDir::new("cli-batch");
    let url = fixtures.url("/f/counter.html");
    let commands = [
        format!("navigate {url}"),
        "click '#more'".to_string(),
        "click '#more'".to_string(),
        "malo click '#more'".to_string(),
        "# a comment, skipped".to_string(),
        "find role button --name More click".to_string(),
        "sleep 1500".to_string(),
        "fill '#note' \"it's \\\"quoted\\\"\"".to_string(),
        String::new(),
        "click '#more'".to_string(),
        "press Tab".to_string(),
        "eval \"document.getElementById('count').textContent + ' ' + document.getElementById('note').value\"".to_string(),
    ];
    let mut child = Command::new(malo_binary())
        .args(["batch", "--data-dir"])
        .arg(&daemon.data_dir)
        .current_dir(&dir.0)
        .env("DISPLAY", display())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all((commands.join("\n") + "\n").as_bytes()).unwrap();
    drop(stdin);
    // While the sleep runs (the sixth command: five lines are out), the one process holds
    // one connection.
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut printed = String::new();
    for _ in 0..5 {
        stdout.read_line(&mut printed).unwrap();
    }
    let held = sockets_of(child.id());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "{stderr}");
    assert_eq!(held, 1, "one connection to the daemon serves every command");
    let answers = lines(&(printed + &rest));
    assert_eq!(answers.len(), 10, "a line per command, comments and blank lines aside: {answers:?}");
    assert!(answers.iter().all(|answer| answer["ok"] == true), "{answers:?}");
    assert_eq!(answers[4]["command"], "find role button --name More click");
    // The page saw five clicks and the quoted text, in this one process's session.
    assert_eq!(answers[9]["result"]["value"], "5 it's \"quoted\"", "{:?}", answers[9]);
    assert_eq!(fixtures.seen("/f/counter.html").len(), 1);
    daemon.cli_text_in(&dir.0, &["close"]);
}

#[test]
fn batch_with_bail_stops_at_the_first_failure_and_without_it_goes_on() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let dir = TempDir::new("cli-batch-bail");
    let url = fixtures.url("/f/counter.html");
    let navigate = format!("navigate {url}");
    let args = |bail: bool| {
        let mut args = vec!["batch"];
        if bail {
            args.push("--bail");
        }
        args.extend([navigate.as_str(), "click '#more'", "click '#missing' --timeout-ms 200", "click '#more'"]);
        args
    };
    let output = daemon.cli_output_in(&dir.0, &args(true));
    assert!(!output.status.success(), "a failure fails the batch");
    let answers = lines(&String::from_utf8_lossy(&output.stdout));
    assert_eq!(answers.len(), 3, "--bail stops after the failed command: {answers:?}");
    assert_eq!(answers[2]["ok"], false);
    assert_eq!(answers[2]["error"]["code"], "E_NOT_FOUND", "{:?}", answers[2]);
    assert!(String::from_utf8_lossy(&output.stderr).contains("--bail"));
    let count = daemon.cli_in(&dir.0, &["eval", "window.count"]);
    assert_eq!(count["value"], 1, "the click after the failure never ran");

    let output = daemon.cli_output_in(&dir.0, &args(false));
    assert!(!output.status.success());
    let answers = lines(&String::from_utf8_lossy(&output.stdout));
    assert_eq!(answers.iter().map(|answer| answer["ok"] == true).collect::<Vec<_>>(), [true, true, false, true]);
    assert_eq!(daemon.cli_in(&dir.0, &["eval", "window.count"])["value"], 2, "without --bail the batch goes on");
    // A line that is not a command is that line's error.
    let output = daemon.cli_output_in(&dir.0, &["batch", "frobnicate now", "eval 'open"]);
    let answers = lines(&String::from_utf8_lossy(&output.stdout));
    assert_eq!(answers.iter().map(|answer| answer["error"]["code"].as_str().unwrap()).collect::<Vec<_>>(), ["E_BAD_REQUEST"; 2]);
    daemon.cli_text_in(&dir.0, &["close"]);
}
