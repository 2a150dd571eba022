//! Where most agents run: no display at all. The daemon starts a private X server, owns
//! it (gone with the daemon, however the daemon goes), skips what a person would see, and
//! says so; a daemon whose engine cannot start says why in one line and never claims to
//! be ready.

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::*;

/// The processes whose parent is `pid` and whose command name is `name`.
fn children_named(pid: u32, name: &str) -> Vec<u32> {
    children(pid).into_iter().filter(|(_, command)| command == name).map(|(child, _)| child).collect()
}

fn headless() -> DaemonOptions {
    DaemonOptions { headless: true, ..DaemonOptions::default() }
}

#[test]
fn malo_mcp_on_a_machine_without_a_display_works_and_leaves_nothing_behind() {
    let fixtures = Fixtures::start();
    let dir = TempDir::new("headless-mcp");
    let data_dir = dir.0.join("data");
    // Another installation's daemon holds the default broker port: this data directory's
    // daemon must not need it.
    let _default_port_taken = std::net::TcpListener::bind("127.0.0.1:7410");
    // Exactly as on a server: no display variables at all.
    let output = Command::new(python())
        .arg(repo_file("tests/mcp/client.py"))
        .args(["stdio", &fixtures.url("/f/actions.html"), "--"])
        .arg(malo_binary())
        .args(["mcp", "--data-dir"])
        .arg(&data_dir)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env("HOME", &dir.0)
        .output()
        .expect("the Python MCP SDK is set up by scripts/setup.sh");
    let broker: Value = serde_json::from_slice(&std::fs::read(data_dir.join("broker.json")).unwrap_or_default()).unwrap_or(Value::Null);
    let daemon_pid = broker["pid"].as_u64().map(|pid| pid as u32);
    if let Some(pid) = daemon_pid {
        watchdog(pid);
    }
    let log = std::fs::read_to_string(data_dir.join("daemon-start.log")).unwrap_or_default();
    assert!(output.status.success(), "{}\ndaemon: {log}", String::from_utf8_lossy(&output.stderr));
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(seen["navigate"]["http_status"], 200, "{seen}");
    assert!(seen["snapshot_text"].as_str().unwrap().contains("button \"Save\""));
    assert_eq!(seen["click"]["target"]["name"], "Save", "{seen}");
    assert_eq!(seen["assert_ok"], true, "the click landed: {seen}");
    assert_eq!(seen["image_mime"], "image/png");
    assert!(log.contains("private X server"), "the log says which screen it uses: {log}");
    assert_ne!(broker["endpoint"], "http://127.0.0.1:7410", "a second data directory's daemon takes a free port");

    // The daemon stays for the next agent, on its private screen; stopping it stops
    // everything it started.
    let pid = daemon_pid.expect("the daemon wrote broker.json");
    let xvfb = children_named(pid, "Xvfb");
    assert_eq!(xvfb.len(), 1, "one private X server, the daemon's child");
    signal(pid, "TERM");
    assert!(eventually(Duration::from_secs(20), || !process_alive(pid)), "the daemon did not stop");
    assert!(eventually(Duration::from_secs(5), || !process_alive(xvfb[0])), "the X server outlived the daemon");
    assert!(eventually(Duration::from_secs(5), || webkit_children(pid).is_empty()));
    assert!(!data_dir.join("broker.json").exists());
}

#[test]
fn a_headless_daemon_browses_refuses_a_window_and_its_x_server_dies_with_it() {
    let fixtures = Fixtures::start();
    let mut daemon = Daemon::start_with(headless());
    assert!(daemon.stderr().contains("private X server"), "{}", daemon.stderr());
    assert!(daemon.stderr().contains("no tray"), "{}", daemon.stderr());
    let xvfb = children_named(daemon.pid, "Xvfb");
    assert_eq!(xvfb.len(), 1);
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/actions.html"));
    session.ok("click", json!({ "selector": "#save" }));
    assert_eq!(session.page_value("document.querySelector('#status').textContent"), "Saved trusted 1", "a trusted click");
    // No person can see a private screen: a takeover says so instead of showing nothing.
    let error = session.fails("watch", json!({ "show": true }), 503, "E_NO_DISPLAY");
    assert!(error["message"].as_str().unwrap().contains("display"), "{error}");
    assert!(error["message"].as_str().unwrap().contains("mode: \"live\""), "the error names the way that works: {error}");
    // `login {mode: "watch"}` comes through the live view instead (tests/e2e/live.rs).
    assert_eq!(session.tool("watch", json!({ "show": false })).status, 200, "hiding (nothing) still works");

    // Killed outright, the daemon still takes its X server with it.
    daemon.kill();
    assert!(eventually(Duration::from_secs(5), || !process_alive(xvfb[0])), "the X server outlived a killed daemon");
}

#[test]
fn a_daemon_whose_engine_cannot_start_says_why_in_one_line_and_never_claims_ready() {
    let dir = TempDir::new("broken-display");
    let data_dir = dir.0.join("data");
    // A display that does not exist: GTK cannot open it.
    let options = DaemonOptions { env: vec![("DISPLAY".into(), ":7391".into()), ("MALO_LOG".into(), "warn".into())], ..Default::default() };
    let Err((status, stderr)) = Daemon::spawn_in(&data_dir, &options) else {
        panic!("the daemon claimed to be ready without an engine");
    };
    assert_ne!(status, 0);
    let lines: Vec<&str> = stderr.lines().filter(|line| !line.trim().is_empty()).collect();
    let last = lines.last().copied().unwrap_or("");
    assert!(last.starts_with("malo: ") && last.contains(":7391"), "{stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("backtrace"), "{stderr}");
    assert_eq!(lines.iter().filter(|line| line.starts_with("malo: ")).count(), 1, "{stderr}");
    assert!(!data_dir.join("broker.json").exists(), "broker.json written by a daemon that never was ready");

    // The CLI, which starts a daemon when none runs, passes that line on verbatim.
    let output = Command::new(malo_binary())
        .args(["lease", "--data-dir"])
        .arg(&data_dir)
        .env("DISPLAY", ":7391")
        .env("HOME", &dir.0)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains(last.trim_start_matches("malo: ")), "the CLI said {said:?}, the daemon {last:?}");
}
