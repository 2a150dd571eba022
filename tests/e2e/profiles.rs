//! Named login profiles: shared by sessions of the same name, kept across session close,
//! daemon restart and SIGKILL; never inherited by anonymous sessions.

use std::time::Duration;

use serde_json::json;

use crate::harness::*;

fn profile_session(lease: &Lease, profile: &str) -> Session {
    let response = lease.try_session(json!({ "name": profile, "profile": profile }));
    assert_eq!(response.status, 200, "{}", response.body);
    assert_eq!(response.body["profile"], profile);
    Session {
        id: response.body["session_id"].as_str().unwrap().to_string(),
        token: response.body["session_token"].as_str().unwrap().to_string(),
        lease: lease.clone(),
        summary: response.body,
    }
}

fn cookie_seen(fixtures: &Fixtures, session: &Session) -> Option<String> {
    session.navigate(&fixtures.url("/echo"));
    fixtures.seen("/echo").last().unwrap().cookie.clone()
}

#[test]
fn a_profile_login_survives_close_restart_and_sigkill() {
    let dir = TempDir::new("profile");
    let data_dir = dir.0.join("data");
    let fixtures = Fixtures::start();
    let options = DaemonOptions::default();

    let mut daemon = Daemon::spawn_in(&data_dir, &options).unwrap();
    let lease = daemon.lease("agent-a");
    let login = profile_session(&lease, "work");
    login.navigate(&fixtures.url("/set-cookie?value=kept"));
    login.navigate(&fixtures.url("/f/storage.html?set=kept"));
    assert_eq!(login.close().status, 200);
    let again = profile_session(&lease, "work");
    assert_eq!(cookie_seen(&fixtures, &again).as_deref(), Some("marker=kept; jsmarker=kept"));
    again.navigate(&fixtures.url("/f/storage.html"));
    assert!(again.title().starts_with("ls=kept;"), "localStorage kept: {}", again.title());
    let anonymous = lease.session();
    assert_eq!(cookie_seen(&fixtures, &anonymous), None, "an anonymous session inherits nothing");
    assert_eq!(again.summary["profile"], "work");
    assert_eq!(anonymous.summary["profile"], serde_json::Value::Null);

    // A clean restart.
    assert_eq!(daemon.stop(), 0);
    let mut daemon = Daemon::spawn_in(&data_dir, &options).unwrap();
    let lease = daemon.lease("agent-a");
    let after_restart = profile_session(&lease, "work");
    assert_eq!(cookie_seen(&fixtures, &after_restart).as_deref(), Some("marker=kept; jsmarker=kept"));

    // A login completed just before the daemon is killed is not lost.
    after_restart.navigate(&fixtures.url("/set-cookie?value=before-kill"));
    daemon.kill();
    let daemon = Daemon::spawn_in(&data_dir, &options).unwrap();
    let lease = daemon.lease("agent-a");
    let after_kill = profile_session(&lease, "work");
    let cookie = cookie_seen(&fixtures, &after_kill).unwrap_or_default();
    assert!(cookie.contains("marker=before-kill"), "{cookie}");
}

#[test]
fn sessions_of_one_profile_share_it_and_a_used_profile_cannot_be_deleted() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let lease_a = daemon.lease("agent-a");
    let lease_b = daemon.lease("agent-b");
    let one = profile_session(&lease_a, "agent-a.shared");
    let two = profile_session(&lease_b, "agent-a.shared");
    one.navigate(&fixtures.url("/set-cookie?value=both"));
    assert_eq!(cookie_seen(&fixtures, &two).as_deref(), Some("marker=both"));

    let listed = request(lease_a.port, "GET", "/v1/profiles", &lease_a.headers(), None);
    assert_eq!(listed.body["profiles"][0]["name"], "agent-a.shared");
    assert_eq!(listed.body["profiles"][0]["sessions"], 2);
    let locked = request(lease_a.port, "DELETE", "/v1/profiles/agent-a.shared", &lease_a.headers(), None);
    assert_eq!((locked.status, locked.code()), (409, "E_PROFILE_LOCKED"));
    let tool = one.tool("profiles", json!({ "action": "clear", "name": "agent-a.shared" }));
    assert_eq!((tool.status, tool.code()), (409, "E_PROFILE_LOCKED"));
    let list_tool = one.tool("profiles", json!({ "action": "list" }));
    assert_eq!(list_tool.body["result"]["profiles"][0]["sessions"], 2);

    one.close();
    two.close();
    let deleted = request(lease_a.port, "DELETE", "/v1/profiles/agent-a.shared", &lease_a.headers(), None);
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    assert!(!daemon.data_dir.join("profiles").join("agent-a.shared").exists());
    let fresh = profile_session(&lease_a, "agent-a.shared");
    assert_eq!(cookie_seen(&fixtures, &fresh), None, "a cleared profile starts empty");
    let missing = request(lease_a.port, "DELETE", "/v1/profiles/nothing", &lease_a.headers(), None);
    assert_eq!((missing.status, missing.code()), (404, "E_PROFILE_NOT_FOUND"));
    for bad in ["Work", "a b", "../escape", ""] {
        let response = lease_a.try_session(json!({ "profile": bad }));
        assert_eq!((response.status, response.code()), (400, "E_BAD_REQUEST"), "{bad:?}");
    }
}

#[test]
fn anonymous_sessions_leave_no_directory_and_no_profile() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let lease = daemon.lease("agent-a");
    let session = lease.session();
    session.navigate(&fixtures.url("/set-cookie?value=gone"));
    let session_dir = daemon.data_dir.join("leases").join(&lease.id).join("sessions").join(&session.id);
    assert!(session_dir.join("webdata").exists());
    session.close();
    assert!(eventually(Duration::from_secs(4), || !session_dir.exists()));
    let profiles = request(lease.port, "GET", "/v1/profiles", &lease.headers(), None);
    assert_eq!(profiles.body["profiles"], json!([]));
}
