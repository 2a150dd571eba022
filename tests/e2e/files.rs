//! Files: downloads land in their session's `downloads/` and nowhere else; a page's file
//! chooser never maps a window.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::*;

/// A daemon whose working directory and HOME are fresh, empty folders we can watch.
struct Watched {
    daemon: Daemon,
    cwd: TempDir,
    home: TempDir,
}

fn watched_daemon(extra_args: &[&str]) -> Watched {
    let cwd = TempDir::new("cwd");
    let home = TempDir::new("home");
    let options = DaemonOptions {
        cwd: Some(cwd.0.clone()),
        home: Some(home.0.clone()),
        extra_args: extra_args.iter().map(|arg| arg.to_string()).collect(),
        ..DaemonOptions::default()
    };
    Watched { daemon: Daemon::start_with(options), cwd, home }
}

impl Watched {
    /// No download ever reached the working directory or HOME.
    fn assert_nothing_outside(&self, names: &[&str]) {
        assert!(files_below(&self.cwd.0).is_empty(), "files in the daemon's working directory: {:?}", files_below(&self.cwd.0));
        let in_home = files_below(&self.home.0);
        for name in names {
            assert!(
                !in_home.iter().any(|path| path.file_name().is_some_and(|file| file.to_string_lossy().contains(name))),
                "{name} reached HOME: {in_home:?}"
            );
        }
    }
}

fn downloads_dir(session: &Session) -> PathBuf {
    PathBuf::from(session.summary["downloads_dir"].as_str().unwrap())
}

/// Waits until `dir/name` holds `expected`.
fn wait_for_file(session: &Session, dir: &Path, name: &str, expected: &[u8]) {
    let path = dir.join(name);
    let arrived = eventually(Duration::from_secs(10), || std::fs::read(&path).is_ok_and(|bytes| bytes == expected));
    assert!(
        arrived,
        "{} never held the expected {} bytes (files: {:?}); events: {}",
        path.display(),
        expected.len(),
        files_below(dir),
        session.events(0)
    );
}

#[test]
fn a_page_never_writes_files_outside_its_session() {
    let watched = watched_daemon(&[]);
    let fixtures = Fixtures::start();
    let lease = watched.daemon.lease("agent-a");
    let session = lease.session();
    let dir = downloads_dir(&session);

    // A click on <a download>.
    session.navigate(&fixtures.url("/f/files.html"));
    let clicked = session.tool("click", json!({ "selector": "#report" }));
    assert_eq!(clicked.status, 200, "{}", clicked.body);
    wait_for_file(&session, &dir, "report.txt", &download_bytes(1000));

    // The same name again: a second file beside the first, never over it.
    session.tool("click", json!({ "selector": "#report" }));
    wait_for_file(&session, &dir, "report (1).txt", &download_bytes(1000));

    // A page script that downloads by itself, with no click.
    session.navigate(&fixtures.url("/f/files.html?auto"));
    wait_for_file(&session, &dir, "script.txt", b"made by script\n");

    // Navigating to an attachment.
    let _ = session.post("/navigate", json!({ "url": fixtures.url("/download/direct.bin?size=5000") }));
    wait_for_file(&session, &dir, "direct.bin", &download_bytes(5000));

    watched.assert_nothing_outside(&["report", "script", "direct"]);
    let events = session.events(0);
    let started: Vec<&Value> = events["events"].as_array().unwrap().iter().filter(|event| event["type"] == "download_started").collect();
    assert_eq!(started.len(), 4, "{events}");
    assert!(started.iter().all(|event| event["tab"].is_string()));

    // Anonymous sessions keep nothing: the downloads go with the session.
    assert_eq!(session.close().status, 200);
    assert!(eventually(Duration::from_secs(5), || !dir.exists()), "the downloads outlived the session");
    watched.assert_nothing_outside(&["report", "script", "direct"]);
}

#[test]
fn a_file_chooser_never_maps_a_window() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/files.html"));
    let clicked = session.tool("click", json!({ "selector": "#many" }));
    assert_eq!(clicked.status, 200, "{}", clicked.body);
    let chooser = eventually(Duration::from_secs(5), || {
        session.events(0)["events"].as_array().unwrap().iter().any(|event| event["type"] == "file_chooser")
    });
    assert!(chooser, "no file_chooser event: {}", session.events(0));
    let event = session.events(0)["events"].as_array().unwrap().iter().find(|event| event["type"] == "file_chooser").cloned().unwrap();
    assert_eq!(event["multiple"], true, "{event}");
    // Give a dialog every chance to appear, then look at the screen.
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(mapped_windows_of(daemon.pid), Vec::<String>::new(), "the daemon mapped a window");
    // The page is still usable.
    assert_eq!(session.tool("fill", json!({ "selector": "#note", "text": "still here" })).status, 200);
}
