//! Start-up: the JSON line, broker.json, one daemon per data directory, stale files.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use crate::harness::*;

#[test]
fn start_prints_one_json_line_and_writes_a_private_broker_file() {
    let daemon = Daemon::start();
    assert!(daemon.endpoint.starts_with("http://127.0.0.1:"));
    assert_eq!(daemon.token.len(), 64);
    let broker_file = daemon.data_dir.join("broker.json");
    let mode = std::fs::metadata(&broker_file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "broker.json must be private");
    let written: serde_json::Value = serde_json::from_slice(&std::fs::read(&broker_file).unwrap()).unwrap();
    assert_eq!(written["endpoint"], daemon.endpoint.as_str());
    assert_eq!(written["token"], daemon.token.as_str());
    assert_eq!(written["pid"], daemon.pid);

    let health = request(daemon.port, "GET", "/v1/health", &[], None);
    assert_eq!(health.status, 200);
    assert_eq!(health.body["ok"], true);

    // Logs go to <data-dir>/logs/, and never contain the broker token.
    assert!(eventually(Duration::from_secs(5), || std::fs::read_dir(daemon.data_dir.join("logs"))
        .map(|dir| dir.count() > 0)
        .unwrap_or(false)));
    for entry in std::fs::read_dir(daemon.data_dir.join("logs")).unwrap().flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap();
        assert!(!text.contains(&daemon.token));
    }
    assert!(!daemon.stderr().contains(&daemon.token));
}

#[test]
fn a_second_daemon_on_the_same_data_dir_is_refused_and_touches_nothing() {
    let daemon = Daemon::start();
    let broker_file = daemon.data_dir.join("broker.json");
    let before = std::fs::read(&broker_file).unwrap();
    let modified = std::fs::metadata(&broker_file).unwrap().modified().unwrap();

    let refused = Daemon::spawn_in(&daemon.data_dir, &DaemonOptions::default());
    let (status, stderr) = match refused {
        Ok(_) => panic!("a second daemon started on the same data dir"),
        Err(failure) => failure,
    };
    assert_ne!(status, 0);
    assert!(stderr.contains("already running"), "stderr: {stderr}");
    assert!(stderr.contains(&daemon.pid.to_string()), "names the running daemon: {stderr}");
    assert_eq!(std::fs::read(&broker_file).unwrap(), before);
    assert_eq!(std::fs::metadata(&broker_file).unwrap().modified().unwrap(), modified);
    // The first daemon still answers.
    assert_eq!(request(daemon.port, "GET", "/v1/health", &[], None).status, 200);
}

#[test]
fn a_stale_broker_file_from_a_killed_daemon_is_replaced() {
    let dir = TempDir::new("stale");
    let data_dir = dir.0.join("data");
    let mut first = Daemon::spawn_in(&data_dir, &DaemonOptions::default()).unwrap();
    let lease = first.lease("agent-a");
    let _session = lease.session();
    first.kill();
    let stale: serde_json::Value = serde_json::from_slice(&std::fs::read(data_dir.join("broker.json")).unwrap()).unwrap();
    assert_eq!(stale["pid"], first.pid, "SIGKILL leaves broker.json behind");

    let second = Daemon::spawn_in(&data_dir, &DaemonOptions::default()).expect("a stale broker.json must not block start-up");
    let fresh: serde_json::Value = serde_json::from_slice(&std::fs::read(data_dir.join("broker.json")).unwrap()).unwrap();
    assert_eq!(fresh["pid"], second.pid);
    assert_ne!(fresh["token"], stale["token"]);
    assert!(second.stderr().contains("replacing the broker.json"), "{}", second.stderr());
    // The dead daemon's sessions left nothing behind.
    assert!(!data_dir.join("leases").join(&lease.id).exists());
}

#[test]
fn sigterm_stops_the_daemon_cleanly() {
    let mut daemon = Daemon::start();
    let lease = daemon.lease("agent-a");
    let session = lease.session();
    let broker_file = daemon.data_dir.join("broker.json");
    let fixtures = Fixtures::start();
    session.navigate(&fixtures.url("/f/hello.html"));
    let children = webkit_children(daemon.pid);
    assert!(!children.is_empty());
    let code = daemon.stop();
    assert_eq!(code, 0, "stderr: {}", daemon.stderr());
    assert!(!broker_file.exists(), "broker.json is removed on a clean stop");
    assert!(!port_open(lease.port));
    assert!(!daemon.data_dir.join("leases").join(&lease.id).exists());
    assert!(eventually(Duration::from_secs(5), || children.iter().all(|pid| !process_alive(*pid))), "WebKit processes outlived the daemon");
}
