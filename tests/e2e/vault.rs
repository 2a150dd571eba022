//! The credential vault against a real Secret Service (gnome-keyring on a private D-Bus):
//! a password stored once by a person logs an agent in on its own origin only, and is
//! never written to the data directory, the logs, the events or a response.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::harness::*;

const PASSWORD: &str = "s3cret-pass";

fn credentials(data_dir: &std::path::Path, args: &[&str], stdin: &str) -> (bool, String, String) {
    let mut child = Command::new(malo_binary())
        .arg("credentials")
        .args(args)
        .arg("--data-dir")
        .arg(data_dir)
        .env("DBUS_SESSION_BUS_ADDRESS", secret_service())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    (output.status.success(), String::from_utf8_lossy(&output.stdout).to_string(), String::from_utf8_lossy(&output.stderr).to_string())
}

#[test]
fn a_vault_credential_logs_in_on_its_origin_only_and_never_shows_its_password() {
    let fixtures = Fixtures::start();
    let dir = TempDir::new("vault");
    let data_dir = dir.0.join("data");
    std::fs::create_dir_all(&data_dir).unwrap();
    let origin = format!("http://127.0.0.1:{}", fixtures.port);
    let (ok, out, err) =
        credentials(&data_dir, &["add", "site", "--origin", &origin, "--username", "demo", "--password-stdin"], &format!("{PASSWORD}\n"));
    assert!(ok, "{err}");
    assert!(!out.contains(PASSWORD));
    let (ok, out, _) = credentials(&data_dir, &["list"], "");
    assert!(ok);
    let listed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed["credentials"], json!([{ "name": "site", "origin": origin, "username": "demo" }]));

    let options = DaemonOptions { dbus: Some(secret_service().to_string()), ..DaemonOptions::default() };
    let mut daemon = Daemon::spawn_in(&data_dir, &options).unwrap();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/login.html"));
    let login = session.tool("login", json!({ "mode": "password", "credential": "site" }));
    assert_eq!(login.status, 200, "{}", login.body);
    assert_eq!(login.body["result"]["reason"], "success", "{}", login.body);
    assert_eq!(session.observe()["title"], "Welcome");

    // Another origin (same server, other host name) is refused before anything is typed.
    session.navigate(&format!("http://localhost:{}/f/login.html", fixtures.port));
    let elsewhere = session.tool("login", json!({ "mode": "password", "credential": "site" }));
    assert_eq!((elsewhere.status, elsewhere.code()), (403, "E_CREDENTIAL_ORIGIN"), "{}", elsewhere.body);
    let typed = session.tool("evaluate", json!({ "expression": "document.getElementById('p').value" }));
    assert_eq!(typed.body["result"]["value"], "", "nothing was filled on the wrong origin");
    let unknown = session.tool("login", json!({ "mode": "password", "credential": "nope" }));
    assert_eq!((unknown.status, unknown.code()), (404, "E_CREDENTIAL_NOT_FOUND"));
    let both = session.tool("login", json!({ "mode": "password", "credential": "site", "password": "x" }));
    assert_eq!((both.status, both.code()), (400, "E_BAD_REQUEST"));
    for response in [&login, &elsewhere, &unknown] {
        assert!(!response.text.contains(PASSWORD));
    }
    assert!(!session.events(0).to_string().contains(PASSWORD));
    daemon.stop();
    assert!(!daemon.stderr().contains(PASSWORD));
    let index = std::fs::read_to_string(data_dir.join("credentials.json")).unwrap();
    assert!(index.contains("\"site\"") && !index.contains(PASSWORD));
    let mut stack = vec![data_dir.clone()];
    while let Some(path) = stack.pop() {
        for entry in std::fs::read_dir(&path).into_iter().flatten().flatten() {
            if entry.path().is_dir() {
                stack.push(entry.path());
            } else {
                let bytes = std::fs::read(entry.path()).unwrap_or_default();
                assert!(!String::from_utf8_lossy(&bytes).contains(PASSWORD), "the password is in {}", entry.path().display());
            }
        }
    }

    let (ok, _, err) = credentials(&data_dir, &["remove", "site"], "");
    assert!(ok, "{err}");
    let (_, out, _) = credentials(&data_dir, &["list"], "");
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["credentials"], json!([]));
    let (ok, _, err) = credentials(&data_dir, &["remove", "site"], "");
    assert!(!ok && err.starts_with("E_CREDENTIAL_NOT_FOUND"), "{err}");
}
