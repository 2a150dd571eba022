//! The web-process sandbox: every web process runs in bubblewrap (its own mount namespace,
//! no home directory), while navigation, downloads, uploads and malo's web-process
//! extension still work; without a usable bwrap the daemon says why and runs without one,
//! or, with `--require-sandbox`, refuses to start in one line.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::harness::*;

/// A directory outside /tmp (the sandbox gives web processes a /tmp of their own, which
/// would hide anything there whatever else it does).
struct OutsideTmp(PathBuf);

impl OutsideTmp {
    fn new(label: &str) -> OutsideTmp {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("sandbox-{label}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        OutsideTmp(dir)
    }
}

impl Drop for OutsideTmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn mount_namespace(pid: u32) -> PathBuf {
    std::fs::read_link(format!("/proc/{pid}/ns/mnt")).unwrap()
}

/// `path` as process `pid` sees it.
fn seen_by(pid: u32, path: &Path) -> PathBuf {
    PathBuf::from(format!("/proc/{pid}/root")).join(path.strip_prefix("/").unwrap())
}

fn status_field(pid: u32, field: &str) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status.lines().find_map(|line| line.strip_prefix(field)).unwrap_or("").trim().to_string()
}

fn health(daemon: &Daemon) -> Value {
    let health = request(daemon.port, "GET", "/v1/health", &[], None);
    assert_eq!(health.status, 200);
    health.body
}

/// The session's web processes, once there is one.
fn web_processes_of(daemon: &Daemon) -> Vec<u32> {
    let mut found = Vec::new();
    assert!(eventually(Duration::from_secs(5), || {
        found = web_processes(daemon.pid);
        !found.is_empty()
    }));
    found
}

#[test]
fn web_processes_run_in_a_mount_namespace_of_their_own_without_home_and_pages_still_work() {
    let home = OutsideTmp::new("home");
    let marker = home.0.join("marker.txt");
    std::fs::write(&marker, "the daemon's home").unwrap();
    let outside = OutsideTmp::new("uploads");
    let (upload, upload_bytes) = (outside.0.join("letter.txt"), b"sent from outside the session".to_vec());
    std::fs::write(&upload, &upload_bytes).unwrap();
    // --require-sandbox: the machine can sandbox, so the daemon starts.
    let daemon = Daemon::start_with(DaemonOptions {
        home: Some(home.0.clone()),
        extra_args: vec!["--require-sandbox".into()],
        ..DaemonOptions::default()
    });
    assert_eq!(health(&daemon)["sandbox"], true);
    assert!(daemon.stderr().contains("web processes run sandboxed"), "one line says so: {}", daemon.stderr());
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/hello.html"));

    let webs = web_processes_of(&daemon);
    let data_marker = daemon.data_dir.join("marker.txt");
    std::fs::write(&data_marker, "the daemon's data").unwrap();
    assert!(seen_by(daemon.pid, &marker).exists(), "the daemon sees its home through /proc");
    for &web in &webs {
        assert_ne!(mount_namespace(web), mount_namespace(daemon.pid), "web process {web} shares the daemon's mounts");
        assert!(!seen_by(web, &marker).exists(), "web process {web} sees the daemon's home");
        let in_home: Vec<String> = std::fs::read_dir(seen_by(web, &home.0))
            .map(|dir| dir.flatten().map(|entry| entry.file_name().to_string_lossy().to_string()).collect())
            .unwrap_or_default();
        // At most the empty XDG_RUNTIME_DIR that WebKit makes in it (GLib falls back to
        // ~/.cache when the variable is unset).
        assert!(in_home.iter().all(|name| name == ".cache"), "web process {web} sees the daemon's home: {in_home:?}");
        assert!(!seen_by(web, &data_marker).exists(), "web process {web} sees the daemon's data directory");
        assert!(!seen_by(web, &upload).exists(), "web process {web} sees a file outside the session");
        // What it needs is there: malo's extension, read-only.
        assert!(seen_by(web, &daemon.data_dir.join("web-process/libmalo_web_process.so")).exists());
        assert_eq!(status_field(web, "Seccomp:"), "2", "web process {web} runs under a seccomp filter");
        assert_eq!(status_field(web, "NoNewPrivs:"), "1");
    }

    // The extension is loaded: WebKit's own refusal of a local file reaches the console.
    session.navigate(&fixtures.url("/f/refresh.html"));
    let mut console = Value::Null;
    let refused = eventually(Duration::from_secs(5), || {
        console = session.ok("console", json!({}));
        console["entries"].as_array().unwrap().iter().any(|entry| entry["engine"] == "security")
    });
    assert!(refused, "the web-process extension did not report the refusal: {console}");

    // A download lands in the session (written outside the sandbox, by the network process).
    session.navigate(&fixtures.url("/f/files.html"));
    let clicked = session.ok("click", json!({ "selector": "#attachment" }));
    let download_id = clicked["downloads"][0]["download_id"].as_str().unwrap().to_string();
    let mut record = Value::Null;
    assert!(eventually(Duration::from_secs(15), || {
        let listed = session.ok("list_downloads", json!({}));
        record =
            listed["downloads"].as_array().unwrap().iter().find(|record| record["download_id"] == download_id).cloned().unwrap_or_default();
        record["status"] == "completed"
    }));
    let saved = PathBuf::from(record["saved_path"].as_str().unwrap());
    assert_eq!(saved.parent().unwrap(), Path::new(session.summary["downloads_dir"].as_str().unwrap()));
    assert_eq!(std::fs::read(&saved).unwrap(), download_bytes(3000));

    // A file from outside the session uploads, and the page itself can read it.
    let set = session.ok("set_file_input", json!({ "selector": "#one", "files": [upload] }));
    assert_eq!(set["files"], json!([{ "name": "letter.txt", "size": upload_bytes.len() }]));
    let read = session.ok("evaluate", json!({ "expression": "document.getElementById('one').files[0].text()" }));
    assert_eq!(read["value"], String::from_utf8(upload_bytes.clone()).unwrap(), "{read}");
    session.ok("click", json!({ "selector": "#send" }));
    assert!(eventually(Duration::from_secs(10), || fixtures.uploads().len() == 1), "no form post arrived");
    let uploads = fixtures.uploads();
    let part = uploads[0].iter().find(|part| part.field == "one").unwrap();
    assert_eq!(part.bytes, upload_bytes, "the server got the file's bytes");
}

#[test]
fn without_bwrap_the_daemon_says_why_and_runs_unsandboxed() {
    let daemon =
        Daemon::start_with(DaemonOptions { env: vec![("MALO_BWRAP".into(), "/nonexistent/bwrap".into())], ..DaemonOptions::default() });
    assert_eq!(health(&daemon)["sandbox"], false);
    let stderr = daemon.stderr();
    let said: Vec<&str> = stderr.lines().filter(|line| line.contains("sandbox")).collect();
    assert_eq!(said.len(), 1, "one line: {stderr}");
    assert!(said[0].contains("WITHOUT a sandbox: /nonexistent/bwrap is missing (install bubblewrap)"), "{stderr}");

    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/hello.html"));
    assert_eq!(session.title(), "Hello fixture");
    for web in web_processes_of(&daemon) {
        assert_eq!(mount_namespace(web), mount_namespace(daemon.pid), "web process {web} is not sandboxed");
    }
}

#[test]
fn require_sandbox_refuses_to_start_without_one_in_one_line() {
    /// Flags and environment of a daemon that must refuse.
    type Case = (&'static [&'static str], &'static [(&'static str, &'static str)]);
    let cases: [Case; 2] = [
        (&["--require-sandbox"], &[("MALO_BWRAP", "/nonexistent/bwrap")]),
        (&[], &[("MALO_BWRAP", "/nonexistent/bwrap"), ("MALO_REQUIRE_SANDBOX", "1")]),
    ];
    for (args, env) in cases {
        let dir = TempDir::new("require");
        let options = DaemonOptions {
            extra_args: args.iter().map(|arg| arg.to_string()).collect(),
            env: env.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect(),
            ..DaemonOptions::default()
        };
        let begun = Instant::now();
        let Err((status, stderr)) = Daemon::spawn_in(&dir.0.join("data"), &options) else {
            panic!("{args:?} {env:?}: the daemon started without a sandbox")
        };
        assert_ne!(status, 0, "{stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
        assert!(stderr.contains("--require-sandbox") && stderr.contains("/nonexistent/bwrap is missing"), "{stderr}");
        assert!(begun.elapsed() < Duration::from_secs(10));
        assert!(!dir.0.join("data/broker.json").exists(), "no broker.json from a daemon that refused");
    }
}
