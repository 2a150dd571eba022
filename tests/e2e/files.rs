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

#[test]
fn a_file_chooser_reports_the_accept_list_as_the_page_wrote_it() {
    // Regression: only WebKit's MIME types were reported, so `.txt` was lost.
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/files.html"));
    let choosers = || -> Vec<Value> {
        session.events(0)["events"].as_array().unwrap().iter().filter(|event| event["type"] == "file_chooser").cloned().collect()
    };
    // The page opens the chooser of a hidden input itself.
    session.ok("click", json!({ "selector": "#choose-text" }));
    assert!(eventually(Duration::from_secs(5), || choosers().len() == 1), "no file_chooser event");
    let event = choosers()[0].clone();
    assert_eq!(event["accept"], json!([".txt", "text/plain", "image/*"]), "{event}");
    assert_eq!(event["mime_types"], json!(["text/plain", "image/*"]), "{event}");
    // An input clicked directly.
    session.ok("click", json!({ "selector": "#many" }));
    assert!(eventually(Duration::from_secs(5), || choosers().len() == 2), "no second file_chooser event");
    assert_eq!(choosers()[1]["accept"], json!([".txt", "text/plain"]));
}

/// SHA-256 of bytes, as lowercase hex.
fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Waits until the download reaches a final status; answers its record.
fn finished(session: &Session, download_id: &str) -> Value {
    let mut record = Value::Null;
    let done = eventually(Duration::from_secs(15), || {
        let listed = session.ok("list_downloads", json!({ "limit": 100 }));
        record =
            listed["downloads"].as_array().unwrap().iter().find(|record| record["download_id"] == download_id).cloned().unwrap_or_default();
        !matches!(record["status"].as_str(), Some("started") | Some("in_progress") | None)
    });
    assert!(done, "download {download_id} never ended: {record}");
    record
}

#[test]
fn downloads_are_reported_listed_and_hashed() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/files.html"));

    // An action that starts a download says so.
    let clicked = session.ok("click", json!({ "selector": "#attachment" }));
    let started = &clicked["downloads"][0];
    assert_eq!(started["suggested_filename"], "data.bin", "{clicked}");
    assert_eq!(clicked["navigated"], false, "a download is not a navigation: {clicked}");
    let record = finished(&session, started["download_id"].as_str().unwrap());
    let bytes = download_bytes(3000);
    assert_eq!(record["status"], "completed", "{record}");
    assert_eq!(record["received_bytes"], 3000);
    assert_eq!(record["total_bytes"], 3000);
    assert_eq!(record["mime_type"], "application/octet-stream");
    assert_eq!(record["sha256"], sha256(&bytes));
    assert!(record["tab"].is_string() && record["finished_at"].is_string());
    let saved = PathBuf::from(record["saved_path"].as_str().unwrap());
    assert_eq!(saved.parent().unwrap(), downloads_dir(&session));
    assert_eq!(std::fs::read(&saved).unwrap(), bytes);

    // A navigation to an attachment is not an error: the page stays, the download is named.
    let navigated = session.post("/navigate", json!({ "url": fixtures.url("/download/direct.bin?size=5000") }));
    assert_eq!(navigated.status, 200, "{}", navigated.body);
    assert_eq!(navigated.body["navigated"], false);
    assert_eq!(navigated.body["downloads"][0]["suggested_filename"], "direct.bin");
    assert_eq!(navigated.body["url"], fixtures.url("/f/files.html"), "the page stayed");
    let direct = finished(&session, navigated.body["downloads"][0]["download_id"].as_str().unwrap());
    assert_eq!(direct["sha256"], sha256(&download_bytes(5000)));

    // wait_for_event sees the next download while another call clicks.
    let waiter = {
        let session = session.clone();
        std::thread::spawn(move || session.tool("wait_for_event", json!({ "kind": "download", "timeout_ms": 10000 })))
    };
    std::thread::sleep(Duration::from_millis(300));
    session.ok("click", json!({ "selector": "#report" }));
    let waited = waiter.join().unwrap();
    assert_eq!(waited.status, 200, "{}", waited.body);
    assert_eq!(waited.body["result"]["event"]["type"], "download_started");
    assert_eq!(waited.body["result"]["event"]["suggested_filename"], "report.txt");
    session.fails("wait_for_event", json!({ "kind": "download", "timeout_ms": 300 }), 504, "E_TIMEOUT");
    session.fails("wait_for_event", json!({ "kind": "sound" }), 400, "E_BAD_REQUEST");

    // The list: newest first, bounded, by tab.
    let listed = session.ok("list_downloads", json!({}));
    let names: Vec<&str> =
        listed["downloads"].as_array().unwrap().iter().map(|record| record["suggested_filename"].as_str().unwrap()).collect();
    assert_eq!(names, ["report.txt", "direct.bin", "data.bin"]);
    assert_eq!(session.ok("list_downloads", json!({ "limit": 1 }))["downloads"].as_array().unwrap().len(), 1);
    session.fails("list_downloads", json!({ "limit": 0 }), 400, "E_BAD_REQUEST");
    session.fails("list_downloads", json!({ "limit": 101 }), 400, "E_BAD_REQUEST");
    session.fails("list_downloads", json!({ "tab": "nope" }), 404, "E_TAB_NOT_FOUND");
    let tab = listed["downloads"][0]["tab"].as_str().unwrap();
    assert_eq!(session.ok("list_downloads", json!({ "tab": tab }))["downloads"].as_array().unwrap().len(), 3);
}

#[test]
fn deny_accept_elsewhere_and_a_quiet_log() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/files.html"));
    let dir = downloads_dir(&session);

    let denied = session.ok("set_download_behavior", json!({ "behavior": "deny" }));
    assert_eq!(
        (denied["scope"].clone(), denied["behavior"].clone(), denied["download_path"].clone(), denied["events_enabled"].clone()),
        (json!("session"), json!("deny"), json!(dir.display().to_string()), json!(true))
    );
    let clicked = session.ok("click", json!({ "selector": "#report" }));
    let record = finished(&session, clicked["downloads"][0]["download_id"].as_str().unwrap());
    assert_eq!(record["status"], "denied");
    std::thread::sleep(Duration::from_millis(300));
    assert!(files_below(&dir).is_empty(), "a denied download left {:?}", files_below(&dir));

    // Bad policies are refused with a reason, and change nothing.
    let elsewhere = TempDir::new("elsewhere");
    let file = elsewhere.0.join("a-file");
    std::fs::write(&file, "x").unwrap();
    for (input, reason) in [
        (json!({ "behavior": "deny", "download_path": elsewhere.0 }), None),
        (json!({ "behavior": "accept", "download_path": "relative/dir" }), Some("is not an absolute path")),
        (json!({ "behavior": "accept", "download_path": "/no/such/dir" }), Some("does not exist")),
        (json!({ "behavior": "accept", "download_path": file }), Some("is not a directory")),
        (json!({ "behavior": "maybe" }), None),
    ] {
        let error = session.fails("set_download_behavior", input.clone(), 400, "E_BAD_REQUEST");
        if let Some(reason) = reason {
            assert_eq!(error["details"]["reason"], reason, "{input}: {error}");
        }
    }

    // Accept into a directory of the agent's choosing, with downloads kept out of events.
    let chosen =
        session.ok("set_download_behavior", json!({ "behavior": "accept", "download_path": elsewhere.0, "events_enabled": false }));
    assert_eq!(chosen["download_path"], elsewhere.0.display().to_string());
    let mark = session.events(0)["cursor"].as_u64().unwrap();
    let clicked = session.ok("click", json!({ "selector": "#report" }));
    let record = finished(&session, clicked["downloads"][0]["download_id"].as_str().unwrap());
    assert_eq!(std::fs::read(elsewhere.0.join("report.txt")).unwrap(), download_bytes(1000), "{record}");
    let later = session.events(mark);
    assert!(!later["events"].as_array().unwrap().iter().any(|event| event["type"].as_str().unwrap().starts_with("download")), "{later}");
    assert!(files_below(&dir).is_empty());
}

#[test]
fn cancelling_a_slow_download_leaves_no_partial_file() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/files.html"));
    let clicked = session.ok("click", json!({ "selector": "#slow" }));
    let id = clicked["downloads"][0]["download_id"].as_str().unwrap().to_string();
    let mut saved = String::new();
    let arriving = eventually(Duration::from_secs(10), || {
        let record = &session.ok("list_downloads", json!({}))["downloads"][0];
        saved = record["saved_path"].as_str().unwrap_or("").to_string();
        record["status"] == "in_progress" && record["received_bytes"].as_u64().unwrap_or(0) > 0 && std::path::Path::new(&saved).exists()
    });
    assert!(arriving, "the slow download never got going");
    let canceled = session.ok("cancel_download", json!({ "download_id": id }));
    assert_eq!(canceled["canceled"], true, "{canceled}");
    assert_eq!(canceled["status"], "canceled");
    let record = finished(&session, &id);
    assert_eq!(record["status"], "canceled");
    std::thread::sleep(Duration::from_millis(500));
    assert!(!std::path::Path::new(&saved).exists(), "a partial file stayed at {saved}");
    assert!(files_below(&downloads_dir(&session)).is_empty());
    // Cancelling what has ended changes nothing and is not an error.
    let again = session.ok("cancel_download", json!({ "download_id": id }));
    assert_eq!((again["canceled"].clone(), again["status"].clone()), (json!(false), json!("canceled")));
    session.fails("cancel_download", json!({ "download_id": "dl-nope" }), 404, "E_NOT_FOUND");
    session.fails("cancel_download", json!({}), 400, "E_BAD_REQUEST");
}

#[test]
fn sessions_keep_their_downloads_apart_and_the_quota_holds() {
    let daemon = Daemon::start_with(DaemonOptions { extra_args: vec!["--max-download-bytes=150000".into()], ..DaemonOptions::default() });
    let fixtures = Fixtures::start();
    let lease = daemon.lease("agent-a");
    let (first, second) = (lease.session(), lease.session());
    for session in [&first, &second] {
        session.navigate(&fixtures.url("/f/files.html"));
        session.ok("click", json!({ "selector": "#report" }));
        // (Under load the download may start after the click's answer: read it from the list.)
        let mut id = String::new();
        assert!(eventually(Duration::from_secs(15), || {
            let listed = session.ok("list_downloads", json!({}));
            id = listed["downloads"][0]["download_id"].as_str().unwrap_or_default().to_string();
            !id.is_empty()
        }));
        finished(session, &id);
    }
    for session in [&first, &second] {
        assert_eq!(files_below(&downloads_dir(session)), [PathBuf::from("report.txt")], "each session has its own file");
        assert_eq!(session.ok("list_downloads", json!({}))["downloads"].as_array().unwrap().len(), 1, "and its own list");
    }
    // Over the budget: failed with quota, nothing left behind.
    let navigated = first.post("/navigate", json!({ "url": fixtures.url("/download/big.bin?size=400000") }));
    assert_eq!(navigated.status, 200, "{}", navigated.body);
    let record = finished(&first, navigated.body["downloads"][0]["download_id"].as_str().unwrap());
    assert_eq!((record["status"].clone(), record["error"].clone()), (json!("failed"), json!("quota")), "{record}");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(files_below(&downloads_dir(&first)), [PathBuf::from("report.txt")]);
}

/// A file of `size` bytes with known content, in `dir`.
fn upload_file(dir: &Path, name: &str, size: usize) -> (PathBuf, Vec<u8>) {
    let bytes: Vec<u8> = (0..size).map(|index| (index * 31 + 7) as u8).collect();
    let path = dir.join(name);
    std::fs::write(&path, &bytes).unwrap();
    (path, bytes)
}

#[test]
fn set_file_input_uploads_files_without_a_window() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/files.html"));
    let dir = TempDir::new("uploads");
    let (cv, cv_bytes) = upload_file(&dir.0, "cv.pdf", 20_000);
    let (a, a_bytes) = upload_file(&dir.0, "a.txt", 10);
    let (b, b_bytes) = upload_file(&dir.0, "b.txt", 70_000);

    let one = session.ok("set_file_input", json!({ "selector": "#one", "files": [cv] }));
    assert_eq!(one["file_count"], 1, "{one}");
    assert_eq!(one["files"], json!([{ "name": "cv.pdf", "size": 20000 }]));
    assert_eq!(one["tab"].as_str(), session.summary["tab"].as_str());
    let many = session.ok("set_file_input", json!({ "selector": "#many", "files": [a, b] }));
    assert_eq!(many["file_count"], 2);
    assert_eq!(session.page_value("document.getElementById('picked').textContent"), "many: a.txt/10, b.txt/70000", "the page saw change");
    assert_eq!(mapped_windows_of(daemon.pid), Vec::<String>::new());

    let sent = session.ok("click", json!({ "selector": "#send" }));
    assert!(eventually(Duration::from_secs(10), || fixtures.uploads().len() == 1), "no form post arrived: {sent}");
    let uploads = fixtures.uploads();
    let part = |field: &str| uploads[0].iter().filter(|part| part.field == field).cloned().collect::<Vec<_>>();
    assert_eq!(part("one")[0].filename.as_deref(), Some("cv.pdf"));
    assert_eq!(part("one")[0].bytes, cv_bytes, "the server got the exact bytes");
    let many = part("many");
    assert_eq!(many.iter().map(|part| part.filename.clone().unwrap()).collect::<Vec<_>>(), ["a.txt", "b.txt"]);
    assert_eq!((many[0].bytes.clone(), many[1].bytes.clone()), (a_bytes, b_bytes));
    assert_eq!(part("note")[0].bytes, b"from malo");
}

#[test]
fn set_file_input_reaches_frames_shadow_roots_and_detached_inputs_and_refuses_what_it_cannot_do() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/files.html"));
    let dir = TempDir::new("uploads");
    let (a, _) = upload_file(&dir.0, "a.txt", 10);
    let (b, _) = upload_file(&dir.0, "b.txt", 20);

    // In a frame, in a shadow root, by ref from a snapshot.
    session.ok("set_file_input", json!({ "frame_selector": "#uploads-frame", "selector": "#framed", "files": [a] }));
    let framed = session.ok("extract", json!({ "selector": "#uploads-frame", "mode": "attribute", "attribute": "id" }));
    assert_eq!(framed["value"], "uploads-frame");
    let snapshot = session.ok("snapshot", json!({}));
    let text = snapshot["text"].as_str().unwrap();
    assert!(text.contains("a.txt"), "the frame saw the file (its text is in the page's, in its place): {text}");
    session.ok("set_file_input", json!({ "selector": "input.shadowed", "pierce_shadow": true, "files": [b] }));
    assert_eq!(session.page_value("document.getElementById('picked').textContent"), "shadowed: b.txt");
    let many_ref = snapshot["nodes"].as_array().unwrap().iter().find(|node| node["selector"] == "#many").unwrap()["ref"].clone();
    assert_eq!(session.ok("set_file_input", json!({ "ref": many_ref, "files": [a, b] }))["file_count"], 2);
    // nth counts from 0 among the matches.
    session.ok("set_file_input", json!({ "selector": "input[type=file]", "nth": 1, "files": [a, b] }));
    assert_eq!(session.page_value("document.getElementById('picked').textContent"), "many: a.txt/10, b.txt/20");

    // A file input that is not in the document: answer the next chooser the page opens.
    let armed = session.ok("set_file_input", json!({ "files": [b], "next_chooser": true }));
    assert_eq!(armed["armed"], true);
    session.ok("click", json!({ "selector": "#picker" }));
    assert!(
        eventually(Duration::from_secs(5), || session.page_value("document.getElementById('picked').textContent") == "detached: b.txt/20")
    );
    let chooser =
        session.events(0)["events"].as_array().unwrap().iter().rev().find(|event| event["type"] == "file_chooser").cloned().unwrap();
    assert_eq!(chooser["answered"], true, "{chooser}");

    // Every refusal says why, and sets nothing.
    let directory = dir.0.display().to_string();
    for (input, status, code, reason) in [
        (json!({ "selector": "#one", "files": [] }), 400, "E_BAD_REQUEST", None),
        (json!({ "selector": "#one", "files": ["/no/such/file"] }), 400, "E_BAD_REQUEST", Some("not_found")),
        (json!({ "selector": "#one", "files": ["relative.txt"] }), 400, "E_BAD_REQUEST", Some("not_absolute")),
        (json!({ "selector": "#one", "files": [directory] }), 400, "E_BAD_REQUEST", Some("not_a_file")),
        (json!({ "selector": "#note", "files": [a] }), 400, "E_BAD_REQUEST", Some("not_a_file_input")),
        (json!({ "selector": "#one", "files": [a, b] }), 400, "E_BAD_REQUEST", Some("not_multiple")),
        (json!({ "selector": "#nothing-here", "files": [a] }), 404, "E_NOT_FOUND", None),
        (json!({ "selector": "input[type=file]", "nth": 9, "files": [a] }), 404, "E_NOT_FOUND", None),
        (json!({ "files": [a] }), 400, "E_BAD_REQUEST", None),
        (json!({ "selector": "#one", "files": [a], "next_chooser": true }), 400, "E_BAD_REQUEST", None),
        (json!({ "frame_selector": "#no-frame", "selector": "#framed", "files": [a] }), 404, "E_NOT_FOUND", None),
    ] {
        let error = session.fails("set_file_input", input.clone(), status, code);
        if let Some(reason) = reason {
            assert_eq!(error["details"]["reason"], reason, "{input}: {error}");
        }
    }
    assert_eq!(session.page_value("document.getElementById('one').files.length"), 0, "nothing was set by a refused call");
    // fill points to set_file_input.
    let error = session.fails("fill", json!({ "selector": "#one", "text": "cv.pdf" }), 422, "E_UNSUPPORTED");
    assert!(error["message"].as_str().unwrap().contains("set_file_input"), "{error}");
}
