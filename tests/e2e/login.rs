//! `login` with a password: success, login_error, and credentials that never reach a file,
//! a log line, an event or a response.

use serde_json::json;

use crate::harness::*;

const PASSWORD: &str = "s3cret-pass";

#[test]
fn password_login_succeeds_fails_cleanly_and_leaves_no_trace_of_the_password() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let lease = daemon.lease("agent-a");
    let response = lease.try_session(json!({ "profile": "login-test" }));
    let session = Session {
        id: response.body["session_id"].as_str().unwrap().to_string(),
        token: response.body["session_token"].as_str().unwrap().to_string(),
        lease: lease.clone(),
        summary: response.body,
    };

    session.navigate(&fixtures.url("/f/login.html"));
    let failed = session.tool("login", json!({ "mode": "password", "username": "demo", "password": "wrong-password" }));
    assert_eq!(failed.status, 200, "{}", failed.body);
    let result = &failed.body["result"];
    assert_eq!((result["ok"].clone(), result["reason"].clone()), (json!(false), json!("login_error")), "{result}");
    assert!(result["error_text"].as_str().unwrap().to_lowercase().contains("invalid username or password"));

    session.navigate(&fixtures.url("/f/login.html"));
    let passed = session.tool("login", json!({ "mode": "password", "username": "demo", "password": PASSWORD }));
    let result = &passed.body["result"];
    assert_eq!((result["ok"].clone(), result["reason"].clone()), (json!(true), json!("success")), "{result}");
    assert_eq!(result["signal"], "password_field_gone");
    assert_eq!(result["profile"], "login-test");
    assert_eq!(result["url"], fixtures.url("/f/welcome.html"));
    assert_eq!(session.observe()["title"], "Welcome");

    // With explicit signals and selectors.
    session.navigate(&fixtures.url("/f/login.html"));
    let explicit = session.tool(
        "login",
        json!({ "mode": "password", "username": "demo", "password": PASSWORD,
        "username_selector": "#u", "password_selector": "#p", "submit_selector": "button", "success_selector": "#welcome" }),
    );
    assert_eq!(explicit.body["result"]["signal"], "success_selector", "{}", explicit.body);
    session.navigate(&fixtures.url("/f/hello.html"));
    let no_form = session.tool("login", json!({ "mode": "password", "password": PASSWORD }));
    assert_eq!((no_form.status, no_form.code()), (404, "E_NOT_FOUND"));
    let unsupported = session.tool("login", json!({ "mode": "carrier-pigeon", "password": PASSWORD }));
    assert_eq!((unsupported.status, unsupported.code()), (400, "E_BAD_REQUEST"));
    assert!(!unsupported.text.contains(PASSWORD), "the password is not echoed in errors");

    // The password is nowhere: not in responses, events, logs or any file of the data dir.
    for response in [&failed, &passed, &explicit, &no_form] {
        assert!(!response.text.contains(PASSWORD) && !response.text.contains("wrong-password"));
    }
    assert!(!session.events(0).to_string().contains(PASSWORD));
    let snapshot = session.tool("snapshot", json!({})).text;
    assert!(!snapshot.contains(PASSWORD));
    session.close();
    drop(daemon_stop_and_keep_dir(daemon, |data_dir| {
        for path in files_under(data_dir) {
            let bytes = std::fs::read(&path).unwrap_or_default();
            let text = String::from_utf8_lossy(&bytes);
            assert!(!text.contains(PASSWORD), "the password is in {}", path.display());
            assert!(!text.contains("wrong-password"), "a password is in {}", path.display());
        }
    }));
}

fn daemon_stop_and_keep_dir(mut daemon: Daemon, check: impl FnOnce(&std::path::Path)) -> Daemon {
    daemon.stop();
    assert!(!daemon.stderr().contains(PASSWORD), "the password is in the daemon's stderr");
    check(&daemon.data_dir);
    daemon
}

fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}
