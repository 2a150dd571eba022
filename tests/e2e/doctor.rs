//! `malo doctor` (issue #31): passes on the test machine, and names a missing Xvfb (with
//! no display) and a stopped keyring, each with its fix.

use std::process::Command;

use serde_json::Value;

use crate::harness::*;

fn doctor(command: &mut Command) -> (i32, String) {
    let output = command.output().unwrap();
    let shown = String::from_utf8_lossy(&output.stdout).to_string() + &String::from_utf8_lossy(&output.stderr);
    (output.status.code().unwrap_or(-1), shown)
}

/// The check of this name in a `--json` report.
fn check<'report>(report: &'report Value, name: &str) -> &'report Value {
    report["checks"].as_array().unwrap().iter().find(|check| check["name"] == name).unwrap_or_else(|| panic!("no check {name}: {report}"))
}

#[test]
fn doctor_passes_on_the_test_machine_and_sees_the_running_daemon() {
    let daemon = Daemon::start();
    let run = |json: bool| {
        let mut command = Command::new(malo_binary());
        command.args(["doctor", "--data-dir"]).arg(&daemon.data_dir).env("DISPLAY", display());
        if json {
            command.arg("--json");
        }
        doctor(&mut command)
    };
    let begun = std::time::Instant::now();
    let (code, shown) = run(false);
    assert!(begun.elapsed().as_secs() < 10, "doctor is quick: {:?}", begun.elapsed());
    assert_eq!(code, 0, "{shown}");
    assert!(!shown.contains("FAIL"), "{shown}");
    let webkit = shown.lines().find(|line| line.split_whitespace().nth(1) == Some("webkitgtk")).unwrap_or_else(|| panic!("{shown}"));
    assert!(webkit.starts_with("ok ") && webkit.contains("WebKitGTK 2."), "{webkit}");
    let (code, shown) = run(true);
    assert_eq!(code, 0, "{shown}");
    let report: Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(report["ok"], true, "{report}");
    for name in ["webkitgtk", "display", "bubblewrap", "dbus", "keyring", "tray", "data-dir", "daemon", "broker-port", "lease-ports"] {
        assert!(["ok", "warn"].contains(&check(&report, name)["status"].as_str().unwrap()), "{name}: {report}");
    }
    let running = &check(&report, "daemon")["detail"];
    assert!(running.as_str().unwrap().contains(&format!("pid {}", daemon.pid)), "{running}");
    assert!(running.as_str().unwrap().contains(&format!("version {}", env!("CARGO_PKG_VERSION"))), "{running}");
    assert_eq!(check(&report, "data-dir")["status"], "ok", "{report}");
}

#[test]
fn doctor_names_a_missing_xvfb_when_there_is_no_display() {
    let data = TempDir::new("doctor-no-xvfb");
    let empty_path = TempDir::new("doctor-empty-path");
    let (code, shown) = doctor(
        Command::new(malo_binary())
            .args(["doctor", "--data-dir"])
            .arg(data.0.join("data"))
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env("PATH", &empty_path.0),
    );
    assert_eq!(code, 1, "{shown}");
    let line = shown.lines().find(|line| line.starts_with("FAIL  display")).unwrap_or_else(|| panic!("{shown}"));
    assert!(line.contains("Xvfb is not installed"), "{line}");
    assert!(shown.contains("fix: sudo apt install xvfb"), "{shown}");
    // Only the screen failed.
    assert_eq!(shown.matches("FAIL").count(), 1, "{shown}");
}

#[test]
fn doctor_names_a_stopped_keyring_and_a_running_one() {
    let data = TempDir::new("doctor-keyring");
    let run = |address: &str| {
        let mut command = Command::new(malo_binary());
        command
            .args(["doctor", "--json", "--data-dir"])
            .arg(data.0.join("data"))
            .env("DISPLAY", display())
            .env("DBUS_SESSION_BUS_ADDRESS", address);
        let (code, shown) = doctor(&mut command);
        assert_eq!(code, 0, "a keyring is not needed to browse: {shown}");
        serde_json::from_str::<Value>(&shown).unwrap()
    };
    let (mut bus, address) = private_bus();
    let report = run(&address);
    assert_eq!(check(&report, "dbus")["status"], "ok", "{report}");
    let keyring = check(&report, "keyring");
    assert_eq!(keyring["status"], "warn", "{report}");
    assert!(keyring["detail"].as_str().unwrap().contains("no Secret Service keyring is running"), "{keyring}");
    assert!(keyring["fix"].as_str().unwrap().contains("gnome-keyring-daemon"), "{keyring}");
    let _ = bus.kill();
    let _ = bus.wait();

    let report = run(secret_service());
    assert_eq!(check(&report, "keyring")["status"], "ok", "{report}");
}
