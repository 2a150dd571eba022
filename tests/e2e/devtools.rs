//! The DevTools endpoint, driven by unmodified third-party clients installed from the npm
//! registry at pinned versions (tests/clients/), on real WebKit pages of the fixture
//! server; and what the endpoint must refuse.

use serde_json::{json, Value};

use crate::harness::*;

/// The session's endpoint: (ws_url, http_url, the Authorization header).
fn endpoint(session: &Session) -> (String, String, String) {
    let answer = session.ok("cdp_endpoint", json!({}));
    let text = |key: &str| answer[key].as_str().unwrap_or_else(|| panic!("cdp_endpoint has no {key}: {answer}")).to_string();
    (text("ws_url"), text("http_url"), answer["headers"]["Authorization"].as_str().unwrap().to_string())
}

/// The path part of an http URL.
fn path_of(url: &str) -> String {
    let rest = url.split_once("://").unwrap().1;
    format!("/{}", rest.split_once('/').unwrap().1)
}

#[test]
fn puppeteer_drives_a_hidden_session_unmodified() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-cdp").session_sized(1024, 700);
    let (ws_url, http_url, authorization) = endpoint(&session);
    session.ok("set_popup_policy", json!({ "policy": "tab" }));
    let base = fixtures.url("").trim_end_matches('/').to_string();
    // A person's window holds the focus the whole time; the client runs beside a watch.
    let _screen = shared_screen();
    let holder = window_manager_with_focused_window();
    let uploads = TempDir::new("cdp-upload");
    let upload = uploads.0.join("notes.txt");
    std::fs::write(&upload, "hello, page").unwrap();
    let upload = upload.display().to_string();
    let client = std::thread::spawn(move || run_client("puppeteer.mjs", &[&ws_url, &http_url, &authorization, &base, &upload]));
    let mut looks = 0;
    while !client.is_finished() {
        assert_eq!(mapped_windows_of(daemon.pid), Vec::<String>::new(), "a window was mapped during the client's run");
        assert_eq!(xdotool(&["getactivewindow"]), holder, "the focus was taken during the client's run");
        looks += 1;
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(looks > 5, "the screen was watched while the client ran ({looks} looks)");
    let run = client.join().unwrap();
    if !run.success {
        eprintln!("daemon log:\n{}", daemon.stderr());
    }
    run.assert_passed(&[
        "connect by ws url",
        "version",
        "pages",
        "setViewport changes innerWidth",
        "goto answers 200",
        "title",
        "$eval",
        "waitForSelector visible",
        "type",
        "keyboard.press Enter is trusted",
        "click runs the handler, trusted",
        "uploadFile goes through the upload path",
        "screenshot is a PNG of the viewport",
        "accessibility snapshot has the button",
        "request listener saw the document and the XHR",
        "response listener saw them answered",
        "console listener saw the log",
        "exposeFunction (a binding) answers the page",
        "an unknown method is refused at once",
        "a popup is a new target",
        "page.close",
        "connect by header",
        "connect by browserURL and goto",
    ]);
    // What the page did went through the session's own proxy and logs.
    assert!(!fixtures.seen("/api/xhr.json").is_empty(), "the fixture server saw the page's XHR");
    let document = fixtures.seen("/f/devtools.html");
    assert!(
        document.iter().any(|seen| seen.headers.iter().any(|(name, value)| name == "x-malo-extra" && value == "from-puppeteer")),
        "the server saw setExtraHTTPHeaders' header: {document:?}"
    );
    let requests = session.ok("requests", json!({ "url_includes": "xhr.json" }));
    assert!(!requests["requests"].as_array().unwrap().is_empty(), "the session's request log has it: {requests}");
    // The session's own tools work after the client has gone.
    let snapshot = session.ok("snapshot", json!({}));
    assert_eq!(snapshot["title"], "Devtools fixture", "the first tab is on the page the client loaded");
    let summary = session.get("");
    assert_eq!(summary.body["window_shown"], Value::Bool(false), "no window was shown: {}", summary.text);
}

#[test]
fn the_endpoint_refuses_pages_wrong_capabilities_other_hosts_and_closed_sessions() {
    let daemon = Daemon::start();
    let session = daemon.lease("agent-cdp").session();
    let (ws_url, http_url, authorization) = endpoint(&session);
    let port = session.lease.port;
    let version = format!("{}/json/version", path_of(&http_url));

    let good = request(port, "GET", &version, &[], None);
    assert_eq!(good.status, 200, "{}", good.text);
    assert_eq!(good.body["webSocketDebuggerUrl"], ws_url.as_str());
    assert!(good.body["Browser"].as_str().unwrap().contains('/'));
    assert!(request(port, "GET", &format!("{version}/"), &[], None).status == 200, "the trailing slash Playwright sends");

    let wrong = request(port, "GET", &format!("/devtools/{}/json/version", "0".repeat(64)), &[], None);
    assert_eq!((wrong.status, wrong.code()), (401, "E_UNAUTHORIZED"));
    let bare = request(port, "GET", &format!("/devtools/{}/json/version", session.id), &[], None);
    assert_eq!((bare.status, bare.code()), (401, "E_UNAUTHORIZED"), "the session id alone opens nothing");
    let with_bearer =
        request(port, "GET", &format!("/devtools/{}/json/version", session.id), &[("Authorization", authorization.clone())], None);
    assert_eq!(with_bearer.status, 200, "the session id and the key as a Bearer token: {}", with_bearer.text);

    let from_page = request(port, "GET", &version, &[("Origin", "http://evil.example".to_string())], None);
    assert_eq!((from_page.status, from_page.code()), (403, "E_FORBIDDEN_ORIGIN"));
    let upgrade = |origin: Option<&str>| {
        let mut headers = vec![
            ("Host".to_string(), format!("127.0.0.1:{port}")),
            ("Upgrade".to_string(), "websocket".to_string()),
            ("Connection".to_string(), "Upgrade".to_string()),
            ("Sec-WebSocket-Version".to_string(), "13".to_string()),
            ("Sec-WebSocket-Key".to_string(), "dGhlIHNhbXBsZSBub25jZQ==".to_string()),
        ];
        if let Some(origin) = origin {
            headers.push(("Origin".to_string(), origin.to_string()));
        }
        raw_request(port, "GET", &path_of(&ws_url), &headers, None)
    };
    assert_eq!(upgrade(Some("http://127.0.0.1:9")).status, 403, "a WebSocket handshake with a page's Origin is refused");
    let foreign = raw_request(port, "GET", &version, &[("Host".to_string(), format!("evil.example:{port}"))], None);
    assert_eq!((foreign.status, foreign.code()), (403, "E_FORBIDDEN_HOST"));

    assert_eq!(session.close().status, 200);
    let after = request(port, "GET", &version, &[], None);
    assert_eq!((after.status, after.code()), (401, "E_UNAUTHORIZED"), "the capability died with its session");
}

#[test]
fn playwright_connects_over_cdp_and_drives_the_first_page() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-cdp").session();
    let (_, http_url, _) = endpoint(&session);
    let base = fixtures.url("");
    let run = run_client("playwright.mjs", &[&http_url, base.trim_end_matches('/')]);
    if !run.success {
        eprintln!("daemon log:\n{}", daemon.stderr());
    }
    run.assert_passed(&["connectOverCDP", "first page", "goto", "evaluate", "fill", "click", "screenshot"]);
    // Playwright's browser.close() on a connected browser only disconnects: the session stays.
    assert_eq!(session.ok("snapshot", json!({}))["title"], "Devtools fixture");
}

#[test]
fn chrome_devtools_mcp_drives_a_session_through_an_mcp_client() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-cdp").session();
    let (ws_url, _, _) = endpoint(&session);
    let base = fixtures.url("");
    let run = run_client("devtools-mcp.mjs", &["--wsEndpoint", &ws_url, base.trim_end_matches('/')]);
    if !run.success {
        eprintln!("daemon log:\n{}", daemon.stderr());
    }
    run.assert_passed(&[
        "list_pages",
        "navigate_page url",
        "take_snapshot with uids",
        "fill by uid",
        "click by uid",
        "evaluate_script sees the fill and the trusted click",
        "press_key Enter, trusted",
        "type_text with a submit key",
        "wait_for a text",
        "navigate_page back",
        "navigate_page reload",
        "list_network_requests has the XHR",
        "get_network_request has its body",
        "list_console_messages has the log",
        "take_screenshot",
        "new_page",
        "select_page",
        "close_page",
    ]);
}

#[test]
fn two_clients_share_a_session_beside_the_tools_and_a_dropped_one_changes_nothing() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-cdp").session();
    let (ws_url, _, _) = endpoint(&session);
    let base = fixtures.url("");
    let clients = {
        let base = base.trim_end_matches('/').to_string();
        std::thread::spawn(move || run_client("two-clients.mjs", &["main", &ws_url, &base]))
    };
    // The agent's own tools run meanwhile, on the same tab.
    let mut snapshots = 0;
    while !clients.is_finished() {
        let response = session.tool("snapshot", json!({}));
        assert_eq!(response.status, 200, "the tools work beside two clients: {}", response.body);
        snapshots += 1;
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let run = clients.join().unwrap();
    run.assert_passed(&[
        "evaluates beside another client",
        "the other client worked, then was killed",
        "the session kept its page",
        "this client goes on",
    ]);
    assert!(snapshots > 3, "the tools ran while the clients did ({snapshots} snapshots)");
    let tabs = session.ok("tab_list", json!({}));
    assert_eq!(tabs["tabs"].as_array().unwrap().len(), 1, "the session has its one tab: {tabs}");
    assert_eq!(session.page_value("document.getElementById('name').value"), "still here");
}
