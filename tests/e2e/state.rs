//! Cookies and storage in and out (issue #28): Playwright's storageState loads a session,
//! a profile and Playwright itself; cookies round-trip with every attribute, as the server
//! receives them; bad input is refused whole, naming its field, and changes nothing;
//! httpOnly values stay out of logs and events; set_viewport keeps to the daemon's scale.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::harness::*;

/// The session's value of an httpOnly cookie the fixture state carries.
const PW_SID: &str = "pw-session-7f3a9c";

/// `tests/fixtures/storage-state.json` (written as Playwright writes a storageState) with
/// its origin on `fixtures`' port.
fn playwright_state(fixtures: &Fixtures) -> Value {
    let text = std::fs::read_to_string(repo_file("tests/fixtures/storage-state.json")).unwrap();
    serde_json::from_str(&text.replace("__PORT__", &fixtures.port.to_string())).unwrap()
}

/// Opens a session with `body` (a profile, a storage_state), asserting it opened.
fn open_session(lease: &Lease, body: Value) -> Session {
    let response = lease.try_session(body.clone());
    assert_eq!(response.status, 200, "create {body}: {}", response.body);
    Session {
        id: response.body["session_id"].as_str().unwrap().to_string(),
        token: response.body["session_token"].as_str().unwrap().to_string(),
        lease: lease.clone(),
        summary: response.body,
    }
}

/// Loads the account page; answers the Cookie header the server received and the page's
/// title (`greeting=<localStorage>;cookie=<document.cookie>`).
fn account(session: &Session, fixtures: &Fixtures) -> (String, String) {
    session.navigate(&fixtures.url("/f/account.html"));
    let cookie = fixtures.seen("/f/account.html").last().unwrap().cookie.clone().unwrap_or_default();
    (cookie, session.title())
}

/// The session's artifacts/ folder (where storage_state files live), from an export.
fn artifacts_of(session: &Session) -> PathBuf {
    let exported = session.ok("storage_state", json!({ "action": "export", "path": "probe.json" }));
    let path = PathBuf::from(exported["path"].as_str().unwrap());
    std::fs::remove_file(&path).unwrap();
    path.parent().unwrap().to_path_buf()
}

fn cookie_names(cookies: &Value) -> Vec<String> {
    let mut names: Vec<String> = cookies.as_array().unwrap().iter().map(|cookie| cookie["name"].as_str().unwrap().to_string()).collect();
    names.sort();
    names
}

#[test]
fn a_playwright_storage_state_logs_sessions_in_at_creation_and_from_a_file() {
    let daemon = Daemon::start_with(DaemonOptions { env: vec![("MALO_LOG".into(), "debug".into())], ..DaemonOptions::default() });
    let fixtures = Fixtures::start();
    let lease = daemon.lease("agent-a");
    let state = playwright_state(&fixtures);

    // At creation.
    let created = open_session(&lease, json!({ "name": "pw", "storage_state": state }));
    let (cookie, title) = account(&created, &fixtures);
    assert!(cookie.contains(&format!("sid={PW_SID}")) && cookie.contains("theme=dark"), "the server saw {cookie:?}");
    assert_eq!(title, "greeting=hello from playwright;cookie=theme=dark", "the page reads localStorage, not the httpOnly cookie");

    // From a file in the session's artifacts/, into a live session.
    let live = lease.session();
    let (cookie, _) = account(&live, &fixtures);
    assert_eq!(cookie, "", "a fresh session has no cookies");
    std::fs::write(artifacts_of(&live).join("playwright.json"), serde_json::to_vec_pretty(&state).unwrap()).unwrap();
    let imported = live.ok("storage_state", json!({ "action": "import", "path": "playwright.json" }));
    assert_eq!((imported["cookies"].as_u64(), imported["origins"].as_u64()), (Some(2), Some(1)), "{imported}");
    let open_page = live.page_value("localStorage.getItem('greeting')");
    let (cookie, title) = account(&live, &fixtures);
    assert!(cookie.contains(&format!("sid={PW_SID}")), "the server saw {cookie:?}");
    assert_eq!(title, "greeting=hello from playwright;cookie=theme=dark", "the page open during the import read {open_page}");

    // The export gives back what came in, httpOnly included, to the caller only.
    let exported = live.ok("storage_state", json!({ "action": "export" }));
    let sid = exported["state"]["cookies"].as_array().unwrap().iter().find(|cookie| cookie["name"] == "sid").cloned().unwrap();
    assert_eq!(sid, state["cookies"][0], "{exported}");
    let origin = fixtures.url("");
    let origins = exported["state"]["origins"].as_array().unwrap();
    assert!(origins.iter().any(|entry| entry["origin"] == origin.as_str() && entry["localStorage"] == state["origins"][0]["localStorage"]));
    live.ok("storage_state", json!({ "action": "export", "path": "saved.json" }));

    // The httpOnly value is in no log line and no event.
    for session in [&created, &live] {
        let events = session.events(0);
        assert!(!events.to_string().contains(PW_SID), "an event holds the httpOnly value: {events}");
    }
    assert!(!daemon.stderr().contains(PW_SID), "the daemon's log holds the httpOnly value");
    for file in files_below(&daemon.data_dir) {
        let shown = file.display().to_string();
        if shown.contains("/artifacts/") || shown.contains("/webdata/") || shown.contains("/profiles/") {
            continue;
        }
        let bytes = std::fs::read(&file).unwrap_or_default();
        assert!(!String::from_utf8_lossy(&bytes).contains(PW_SID), "{shown} holds the httpOnly value");
    }
}

#[test]
fn a_state_file_imports_from_where_it_is_by_absolute_path_and_from_the_clis_directory() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let beside_the_code = TempDir::new("state-elsewhere");
    let file = beside_the_code.0.join("state.json");
    std::fs::write(&file, serde_json::to_vec_pretty(&playwright_state(&fixtures)).unwrap()).unwrap();
    let shown = file.display().to_string();

    // Over the API, by its absolute path, outside the session's artifacts/.
    let lease = daemon.lease("agent-a");
    let session = lease.session();
    let imported = session.ok("storage_state", json!({ "action": "import", "path": shown }));
    assert_eq!((imported["cookies"].as_u64(), imported["origins"].as_u64()), (Some(2), Some(1)), "{imported}");
    assert_eq!(imported["path"], shown.as_str());
    let (cookie, title) = account(&session, &fixtures);
    assert!(cookie.contains(&format!("sid={PW_SID}")) && cookie.contains("theme=dark"), "the server saw {cookie:?}");
    assert_eq!(title, "greeting=hello from playwright;cookie=theme=dark");

    // From the CLI, relative to the shell's directory, into the CLI's own session.
    let imported = daemon.cli_in(&beside_the_code.0, &["storage-state", "import", "./state.json"]);
    assert_eq!((imported["cookies"].as_u64(), imported["path"].as_str()), (Some(2), Some(shown.as_str())), "{imported}");
    let loaded = daemon.cli_in(&beside_the_code.0, &["navigate", &fixtures.url("/f/account.html")]);
    let cookie = fixtures.seen("/f/account.html").last().unwrap().cookie.clone().unwrap_or_default();
    assert!(cookie.contains(&format!("sid={PW_SID}")) && cookie.contains("theme=dark"), "the server saw {cookie:?}");
    assert_eq!(loaded["title"], "greeting=hello from playwright;cookie=theme=dark", "{loaded}");

    // Refused, saying why: a relative path over the API (the daemon has no shell's
    // directory), a missing file, and another session's artifacts (in the data directory).
    let other = daemon.lease("agent-b").session();
    let theirs = artifacts_of(&other).join("theirs.json");
    std::fs::copy(&file, &theirs).unwrap();
    let before = session.ok("cookies", json!({ "action": "clear" }));
    assert_eq!(before["cleared"], 2, "{before}");
    for (path, reason) in [
        ("./state.json".to_string(), "not_absolute"),
        (beside_the_code.0.join("missing.json").display().to_string(), "not_found"),
        (theirs.display().to_string(), "inside_data_dir"),
    ] {
        let error = session.fails("storage_state", json!({ "action": "import", "path": path }), 400, "E_BAD_REQUEST");
        assert_eq!(
            (error["details"]["field"].as_str(), error["details"]["reason"].as_str()),
            (Some("path"), Some(reason)),
            "{path}: {error}"
        );
    }
    assert_eq!(session.ok("cookies", json!({ "action": "get" }))["cookies"], json!([]), "nothing was imported");
    // Export still writes a plain name in artifacts/ only.
    let error = session.fails("storage_state", json!({ "action": "export", "path": shown }), 400, "E_BAD_REQUEST");
    assert_eq!(error["details"]["field"], "path", "{error}");
}

#[test]
fn an_export_loads_in_another_session_and_in_a_profile_that_survives_a_restart() {
    let dir = TempDir::new("state-profile");
    let data_dir = dir.0.join("data");
    let fixtures = Fixtures::start();
    let options = DaemonOptions::default();
    let mut daemon = Daemon::spawn_in(&data_dir, &options).unwrap();
    let lease = daemon.lease("agent-a");

    // Signed in by the site itself: two httpOnly cookies and a localStorage greeting.
    let site = lease.session();
    site.navigate(&fixtures.url("/state/login"));
    let (cookie, title) = account(&site, &fixtures);
    assert!(cookie.contains("sid=site-session-51d2") && cookie.contains("remember=site-remember-8e07"), "{cookie}");
    assert_eq!(title, "greeting=welcome;cookie=");
    let state = site.ok("storage_state", json!({ "action": "export" }))["state"].clone();
    assert_eq!(cookie_names(&state["cookies"]), ["remember", "sid"], "{state}");
    assert!(state["cookies"].as_array().unwrap().iter().all(|cookie| cookie["httpOnly"] == true), "{state}");
    let sid = state["cookies"].as_array().unwrap().iter().find(|cookie| cookie["name"] == "sid").unwrap();
    assert_eq!(sid["expires"], -1, "a session cookie: {sid}");

    // Into a second session.
    let second = open_session(&lease, json!({ "storage_state": state }));
    let (cookie, title) = account(&second, &fixtures);
    assert!(cookie.contains("sid=site-session-51d2") && cookie.contains("remember=site-remember-8e07"), "{cookie}");
    assert_eq!(title, "greeting=welcome;cookie=");

    // Into a new profile, kept across a daemon restart (the session cookie ends with the
    // browser, as in every browser; the persistent one and localStorage stay).
    let saved = open_session(&lease, json!({ "profile": "saved", "storage_state": state }));
    let (cookie, _) = account(&saved, &fixtures);
    assert!(cookie.contains("remember=site-remember-8e07"), "{cookie}");
    let locked = saved.fails("profile_clone", json!({ "from": "saved", "to": "copy" }), 409, "E_PROFILE_LOCKED");
    assert_eq!(locked["details"]["field"], "from", "{locked}");
    assert_eq!(saved.close().status, 200);
    assert_eq!(daemon.stop(), 0);

    let daemon = Daemon::spawn_in(&data_dir, &options).unwrap();
    let lease = daemon.lease("agent-a");
    let restored = open_session(&lease, json!({ "profile": "saved" }));
    let (cookie, title) = account(&restored, &fixtures);
    assert_eq!(cookie, "remember=site-remember-8e07", "after the restart");
    assert_eq!(title, "greeting=welcome;cookie=", "localStorage after the restart");
    assert_eq!(restored.close().status, 200);

    // A clone is logged in too; cloning onto an existing profile is refused.
    let anonymous = lease.session();
    let cloned = anonymous.ok("profile_clone", json!({ "from": "saved", "to": "saved-copy" }));
    assert_eq!(cloned["cloned"], true);
    let exists = anonymous.fails("profile_clone", json!({ "from": "saved", "to": "saved-copy" }), 400, "E_BAD_REQUEST");
    assert_eq!(exists["details"]["field"], "to");
    anonymous.fails("profile_clone", json!({ "from": "nothing", "to": "other" }), 404, "E_PROFILE_NOT_FOUND");
    let copy = open_session(&lease, json!({ "profile": "saved-copy" }));
    let (cookie, title) = account(&copy, &fixtures);
    assert_eq!((cookie.as_str(), title.as_str()), ("remember=site-remember-8e07", "greeting=welcome;cookie="));
}

#[test]
fn bad_input_is_refused_whole_naming_the_field_and_changes_nothing() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let lease = daemon.lease("agent-a");
    let session = lease.session();
    session.ok("cookies", json!({ "action": "set", "cookies": [{ "name": "keep", "value": "1", "domain": "127.0.0.1", "path": "/" }] }));
    let before = session.ok("cookies", json!({ "action": "get" }));
    let artifacts = artifacts_of(&session);
    std::fs::write(artifacts.join("garbage.json"), "this is not JSON").unwrap();
    let good = playwright_state(&fixtures);
    let with_cookie = |key: &str, value: Value| {
        let mut state = good.clone();
        match value {
            Value::Null => drop(state["cookies"][1].as_object_mut().unwrap().remove(key)),
            value => state["cookies"][1][key] = value,
        }
        state
    };
    let cases = [
        (json!({ "action": "import", "state": with_cookie("colour", json!("red")) }), "state.cookies[1].colour"),
        (json!({ "action": "import", "state": with_cookie("domain", Value::Null) }), "state.cookies[1].domain"),
        (json!({ "action": "import", "state": with_cookie("expires", json!("2033-05-18T03:33:20Z")) }), "state.cookies[1].expires"),
        (json!({ "action": "import", "path": "garbage.json" }), "path"),
        (json!({ "action": "import", "path": "../../../../etc/passwd.json" }), "path"),
        (json!({ "action": "import", "path": "/etc/hosts.json" }), "path"),
        (json!({ "action": "import", "path": "missing.json" }), "path"),
    ];
    for (input, field) in cases {
        let error = session.fails("storage_state", input.clone(), 400, "E_BAD_REQUEST");
        assert_eq!(error["details"]["field"], field, "{input}: {error}");
        assert_eq!(session.ok("cookies", json!({ "action": "get" })), before, "{input} changed the cookies");
    }
    let error = session.fails(
        "cookies",
        json!({ "action": "set", "cookies": [
        { "name": "fine", "value": "1", "domain": "127.0.0.1" },
        { "name": "bad", "value": "1", "path": "/" }
    ] }),
        400,
        "E_BAD_REQUEST",
    );
    assert_eq!(error["details"]["field"], "cookies[1].domain", "{error}");
    let error = session.fails("cookies", json!({ "action": "get", "urls": ["file:///etc/passwd"] }), 400, "E_BAD_REQUEST");
    assert_eq!(error["details"]["field"], "urls[0]");
    let error = session.fails("storage_state", json!({ "action": "import", "stat": {} }), 400, "E_BAD_REQUEST");
    assert!(error["message"].as_str().unwrap().contains("stat"), "{error}");
    assert_eq!(session.ok("cookies", json!({ "action": "get" })), before, "nothing changed");
    let (_, title) = account(&session, &fixtures);
    assert_eq!(title, "greeting=;cookie=keep=1", "no localStorage was written");

    // At creation: refused, naming the field, and no session opens.
    let response = lease.try_session(json!({ "storage_state": with_cookie("expires", json!("soon")) }));
    assert_eq!((response.status, response.code()), (400, "E_BAD_REQUEST"), "{}", response.body);
    assert_eq!(response.body["error"]["details"]["field"], "storage_state.cookies[1].expires", "{}", response.body);
    let listed = request(lease.port, "GET", "/v1/sessions", &lease.headers(), None);
    assert_eq!(listed.body["sessions"].as_array().map(Vec::len), Some(1), "{}", listed.body);
}

#[test]
fn cookies_round_trip_with_every_attribute_as_the_server_receives_them() {
    let ca = TestCa::new();
    let daemon = Daemon::start_with(ca.trusted_by_daemon());
    let fixtures = Fixtures::start();
    let tls = fixtures.start_tls(Some(&ca));
    let lease = daemon.lease("agent-a");
    let session = lease.session();
    let cookies = json!([
        { "name": "plain", "value": "p1", "domain": "127.0.0.1", "path": "/", "expires": -1, "httpOnly": false, "secure": false, "sameSite": "Lax" },
        { "name": "scoped", "value": "s1", "domain": "127.0.0.1", "path": "/api", "expires": 2000000000, "httpOnly": true, "secure": false, "sameSite": "Strict" },
        { "name": "locked", "value": "l1", "domain": "127.0.0.1", "path": "/", "expires": 2000000000, "httpOnly": true, "secure": true, "sameSite": "None" }
    ]);
    assert_eq!(session.ok("cookies", json!({ "action": "set", "cookies": cookies }))["set"], 3);
    let got = session.ok("cookies", json!({ "action": "get" }))["cookies"].clone();
    for cookie in cookies.as_array().unwrap() {
        let found = got.as_array().unwrap().iter().find(|seen| seen["name"] == cookie["name"]);
        assert_eq!(found, Some(cookie), "every attribute round-trips: {got}");
    }

    let sent = |url: String, path: &str| {
        session.navigate(&url);
        fixtures.seen(path).last().unwrap().cookie.clone().unwrap_or_default()
    };
    assert_eq!(sent(fixtures.url("/echo"), "/echo"), "plain=p1", "no path-scoped cookie outside /api, no secure one over http");
    assert_eq!(sent(fixtures.url("/api/items.json"), "/api/items.json"), "scoped=s1; plain=p1");
    let over_tls = sent(format!("https://127.0.0.1:{tls}/echo"), "/echo");
    assert!(over_tls.contains("locked=l1") && over_tls.contains("plain=p1") && !over_tls.contains("scoped"), "{over_tls}");
    assert_eq!(session.page_value("document.cookie"), "plain=p1", "httpOnly cookies stay hidden from the page");

    // get and clear by URL.
    let for_api = session.ok("cookies", json!({ "action": "get", "urls": [fixtures.url("/api/x")] }))["cookies"].clone();
    assert_eq!(cookie_names(&for_api), ["plain", "scoped"]);
    let cleared = session.ok("cookies", json!({ "action": "clear", "urls": [format!("https://127.0.0.1:{tls}/")] }));
    assert_eq!(cleared["cleared"], 2, "plain and locked go: {cleared}");
    assert_eq!(cookie_names(&session.ok("cookies", json!({ "action": "get" }))["cookies"]), ["scoped"]);
    assert_eq!(session.ok("cookies", json!({ "action": "clear" }))["cleared"], 1);
    assert_eq!(session.ok("cookies", json!({ "action": "get" }))["cookies"], json!([]));
    assert_eq!(sent(fixtures.url("/api/items.json"), "/api/items.json"), "", "the server receives none");
}

#[test]
fn an_export_loads_in_playwright() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let lease = daemon.lease("agent-a");
    let site = lease.session();
    site.navigate(&fixtures.url("/state/login"));
    let exported = site.ok("storage_state", json!({ "action": "export", "path": "for-playwright.json" }));
    let path = exported["path"].as_str().unwrap().to_string();
    assert!(Path::new(&path).is_file());
    let run = run_client("storage-state.mjs", &[&path, &fixtures.url("")]);
    run.assert_passed(&["launch", "greeting", "cookies"]);
    let cookie = fixtures.seen("/f/account.html").last().unwrap().cookie.clone().unwrap_or_default();
    assert!(cookie.contains("sid=site-session-51d2") && cookie.contains("remember=site-remember-8e07"), "Chromium sent {cookie:?}");
}

#[test]
fn set_viewport_resizes_and_keeps_the_daemons_scale() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let lease = daemon.lease("agent-a");
    let session = lease.session();
    session.navigate(&fixtures.url("/f/account.html"));
    let resized = session.ok("set_viewport", json!({ "width": 700, "height": 500, "device_scale_factor": 1 }));
    assert_eq!(resized, json!({ "width": 700, "height": 500, "device_scale_factor": 1.0 }));
    assert_eq!(session.page_value("[innerWidth, innerHeight, devicePixelRatio]"), json!([700, 500, 1]));
    let error = session.fails("set_viewport", json!({ "width": 900, "height": 600, "device_scale_factor": 2 }), 422, "E_UNSUPPORTED");
    assert_eq!(error["details"]["field"], "device_scale_factor");
    assert_eq!(session.page_value("[innerWidth, innerHeight, devicePixelRatio]"), json!([700, 500, 1]), "nothing changed");
    let error = session.fails("set_viewport", json!({ "width": 50, "height": 600 }), 400, "E_BAD_REQUEST");
    assert_eq!(error["details"]["field"], "width");
}
