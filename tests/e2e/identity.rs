//! What a page and a server can tell about the browser (issue #28): no malo marker or tab
//! token in the page's user agent or in any header a server receives, while the session
//! proxy still knows each request's tab (two tabs, a popup, a cross-site navigation, HTTPS,
//! a WebSocket).

use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::*;

/// The URLs of `tab`'s logged requests.
fn logged_urls(session: &Session, tab: &str) -> Vec<String> {
    let logged = session.ok("requests", json!({ "tab": tab, "limit": 200 }));
    logged["requests"].as_array().unwrap().iter().map(|record| record["url"].as_str().unwrap().to_string()).collect()
}

/// Waits until `tab`'s log holds `url`.
fn logs(session: &Session, tab: &str, url: &str) -> bool {
    eventually(Duration::from_secs(10), || logged_urls(session, tab).iter().any(|logged| logged == url))
}

/// What the page of `tab` reads about the browser (`identity()` of identity.html).
fn identity_of(session: &Session, tab: &str) -> Value {
    session.ok("evaluate", json!({ "tab": tab, "expression": "identity()" }))["value"].clone()
}

#[test]
fn no_page_or_server_sees_a_marker_while_every_request_keeps_its_tab() {
    let ca = TestCa::new();
    let daemon = Daemon::start_with(ca.trusted_by_daemon());
    let fixtures = Fixtures::start();
    let tls = fixtures.start_tls(Some(&ca));
    let lease = daemon.lease("agent-a");
    let session = lease.session();
    session.ok("set_popup_policy", json!({ "policy": "tab" }));

    // Tab one, a second tab, and a popup of tab one: each page fetches and loads a picture.
    session.navigate(&fixtures.url("/f/identity.html?who=one"));
    let one = session.summary["tab"].as_str().unwrap().to_string();
    let two = session.ok("tab_new", json!({ "url": fixtures.url("/f/identity.html?who=two") }))["tab"].as_str().unwrap().to_string();
    let clicked = session.ok("click", json!({ "tab": one, "selector": "#popup" }));
    let popup = clicked["popups"][0]["tab"].as_str().unwrap_or_else(|| panic!("no popup in {clicked}")).to_string();
    for (tab, who) in [(&one, "one"), (&two, "two"), (&popup, "popup")] {
        for path in ["/f/identity.html", "/api/items.json", "/api/pixel.png"] {
            let url = fixtures.url(&format!("{path}?who={who}"));
            assert!(logs(&session, tab, &url), "{url} not in tab {tab}'s log: {:?}", logged_urls(&session, tab));
        }
        let others: Vec<String> = logged_urls(&session, tab).into_iter().filter(|url| url.contains("who=") && !url.contains(who)).collect();
        assert!(others.is_empty(), "tab {tab} logged another tab's requests: {others:?}");
    }

    // A cross-site navigation (another web process, maybe) and HTTPS keep the tab too.
    let localhost = format!("http://localhost:{}", fixtures.port);
    session.ok("navigate", json!({ "tab": two, "url": format!("{localhost}/f/identity.html?who=cross") }));
    assert!(logs(&session, &two, &format!("{localhost}/api/items.json?who=cross")));
    let secure = format!("https://127.0.0.1:{tls}");
    session.ok("navigate", json!({ "tab": one, "url": format!("{secure}/f/identity.html?who=secure") }));
    assert!(logs(&session, &one, &format!("{secure}/api/items.json?who=secure")));

    // A WebSocket carries no token (WebKit opens it outside the page's loader): it goes to
    // the tab that last spoke from its origin.
    let echo = websocket_echo();
    let echoed = session.ok(
        "evaluate",
        json!({ "tab": two, "expression": format!(
            "new Promise((resolve) => {{ const socket = new WebSocket('ws://127.0.0.1:{echo}/'); \
             socket.onopen = () => socket.send('hi'); socket.onmessage = (event) => resolve(event.data); \
             socket.onerror = () => resolve('failed'); }})"
        ) }),
    );
    assert_eq!(echoed["value"], "hi");
    assert!(logs(&session, &two, &format!("http://127.0.0.1:{echo}/")), "{:?}", logged_urls(&session, &two));

    // A page that writes a token of its own into a request's User-Agent names nothing.
    session.ok(
        "evaluate",
        json!({ "tab": popup, "expression": format!(
            "fetch('/api/items.json?who=forged', {{ headers: {{ 'User-Agent': 'forged malo/1.{}' }} }}).then((r) => r.status)",
            "f".repeat(64)
        ) }),
    );
    assert!(logs(&session, &popup, &fixtures.url("/api/items.json?who=forged")));

    // What pages read: WebKit's own user agent, nothing of malo, no webdriver flag.
    for tab in [&one, &two, &popup] {
        let identity = identity_of(&session, tab);
        let agent = identity["userAgent"].as_str().unwrap();
        assert!(agent.starts_with("Mozilla/5.0 ") && agent.ends_with("Safari/605.1.15"), "{identity}");
        assert!(!identity.to_string().to_lowercase().contains("malo"), "{identity}");
        assert_eq!(identity["webdriver"], false, "{identity}");
    }
    // What the server received: no malo, no token, in any header (the forged request's own
    // User-Agent aside, which the page wrote).
    let seen = fixtures.seen_all();
    assert!(seen.len() >= 12, "{} requests", seen.len());
    for request in seen.iter().filter(|request| !request.query.contains("forged")) {
        for (name, value) in &request.headers {
            assert!(!name.contains("malo") && !value.to_lowercase().contains("malo"), "{}: {name}: {value}", request.path);
        }
    }
}

#[test]
fn a_session_shows_pages_the_identity_it_asked_for_and_nothing_it_did_not_grant() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let lease = daemon.lease("agent-a");
    let agent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) TestAgent/1.0";
    let created = lease.try_session(json!({
        "user_agent": agent,
        "locale": "de-DE",
        "timezone": "Asia/Tokyo",
        "color_scheme": "dark",
        "geolocation": { "latitude": 48.8584, "longitude": 2.2945, "accuracy": 12.5 },
        "device_scale_factor": 1,
        "extra_http_headers": { "X-Test-Run": "identity" },
        "permissions": ["geolocation"],
    }));
    assert_eq!(created.status, 200, "{}", created.body);
    let session = Session {
        id: created.body["session_id"].as_str().unwrap().to_string(),
        token: created.body["session_token"].as_str().unwrap().to_string(),
        lease: lease.clone(),
        summary: created.body.clone(),
    };
    session.navigate(&fixtures.url("/f/identity.html?who=asked"));
    let tab = session.summary["tab"].as_str().unwrap().to_string();
    let identity = identity_of(&session, &tab);
    assert_eq!(identity["userAgent"], agent, "{identity}");
    assert!(identity["appVersion"].as_str().unwrap().contains("TestAgent/1.0"), "{identity}");
    assert_eq!((identity["language"].clone(), identity["languages"][0].clone()), (json!("de-DE"), json!("de-DE")), "{identity}");
    assert_eq!(identity["intlLocale"], "de-DE", "{identity}");
    assert_eq!((identity["timeZone"].clone(), identity["januaryOffset"].clone()), (json!("Asia/Tokyo"), json!(-540)), "{identity}");
    assert_eq!((identity["colorScheme"].clone(), identity["colorSchemeCss"].clone()), (json!("dark"), json!("dark")), "{identity}");
    assert_eq!(identity["devicePixelRatio"], 1, "{identity}");
    let position = session.ok("evaluate", json!({ "tab": tab, "expression": "where()" }))["value"].clone();
    assert_eq!(position, json!({ "latitude": 48.8584, "longitude": 2.2945, "accuracy": 12.5 }));
    let seen = fixtures.seen("/f/identity.html").pop().unwrap();
    let header = |name: &str| seen.headers.iter().find(|(seen_name, _)| seen_name == name).map(|(_, value)| value.clone());
    assert_eq!(header("user-agent").as_deref(), Some(agent));
    assert_eq!(header("accept-language").as_deref(), Some("de-DE,de;q=0.9"));
    assert_eq!(header("x-test-run").as_deref(), Some("identity"));
    assert_eq!(fixtures.seen("/api/items.json").pop().unwrap().headers.iter().filter(|(name, _)| name == "x-test-run").count(), 1);

    // Another session grants nothing: its geolocation is denied, and that is an event.
    let other = lease.session();
    other.navigate(&fixtures.url("/f/identity.html?who=plain"));
    let plain = other.summary["tab"].as_str().unwrap().to_string();
    assert_eq!(other.ok("evaluate", json!({ "tab": plain, "expression": "where()" }))["value"]["error"], 1);
    let denied = other.ok("events", json!({ "type": "permission_denied" }))["events"].clone();
    assert_eq!(denied[0]["permission"], "geolocation", "{denied}");
    assert!(identity_of(&other, &plain)["userAgent"].as_str().unwrap().ends_with("Safari/605.1.15"));

    // What WebKitGTK keeps per daemon cannot differ between live sessions (the color
    // scheme is emulated per session: tests/e2e/emulation.rs).
    for (body, field) in [(json!({ "locale": "fr-FR" }), "locale"), (json!({ "device_scale_factor": 2 }), "device_scale_factor")] {
        let refused = lease.try_session(body.clone());
        assert_eq!((refused.status, refused.code()), (422, "E_UNSUPPORTED"), "{body}: {}", refused.body);
        assert_eq!(refused.body["error"]["details"]["field"], field, "{}", refused.body);
    }
    // Wrong values are refused before anything opens, naming the field.
    for (body, field) in [
        (json!({ "timezone": "Mars/Olympus_Mons" }), "timezone"),
        (json!({ "user_agent": "two\nlines" }), "user_agent"),
        (json!({ "locale": "german" }), "locale"),
        (json!({ "geolocation": { "latitude": 100, "longitude": 0 } }), "geolocation"),
        (json!({ "extra_http_headers": { "Host": "example.com" } }), "extra_http_headers"),
        (json!({ "permissions": [{ "name": "notifications", "origins": ["https://example.com/path"] }] }), "permissions"),
    ] {
        let refused = lease.try_session(body.clone());
        assert_eq!((refused.status, refused.code()), (400, "E_BAD_REQUEST"), "{body}: {}", refused.body);
        assert_eq!(refused.body["error"]["details"]["field"], field, "{}", refused.body);
    }
    let unknown = lease.try_session(json!({ "permissions": ["camera"] }));
    assert_eq!((unknown.status, unknown.code()), (400, "E_BAD_REQUEST"), "{}", unknown.body);

    // Later, on the live sessions: a new position, other headers, another grant.
    session.ok("set_geolocation", json!({ "latitude": -33.8568, "longitude": 151.2153 }));
    let moved = session.ok("evaluate", json!({ "tab": tab, "expression": "where()" }))["value"].clone();
    assert_eq!(moved, json!({ "latitude": -33.8568, "longitude": 151.2153, "accuracy": 0 }));
    session.fails("set_geolocation", json!({ "latitude": 0, "longitude": 200 }), 400, "E_BAD_REQUEST");
    let headers = session.ok("set_extra_http_headers", json!({ "headers": { "X-Later": "2" } }))["headers"].clone();
    assert_eq!(headers, json!({ "x-later": "2", "accept-language": "de-DE,de;q=0.9" }));
    session.navigate(&fixtures.url("/f/identity.html?who=later"));
    let later = fixtures.seen("/f/identity.html").pop().unwrap();
    assert!(later.headers.iter().any(|(name, value)| name == "x-later" && value == "2"), "{:?}", later.headers);
    assert!(!later.headers.iter().any(|(name, _)| name == "x-test-run"), "{:?}", later.headers);
    let asked = "Notification.requestPermission()";
    assert_eq!(other.ok("evaluate", json!({ "tab": plain, "expression": asked }))["value"], "denied");
    assert_eq!(other.ok("grant_permissions", json!({ "permissions": ["notifications"] }))["grants"], 1);
    assert_eq!(other.ok("evaluate", json!({ "tab": plain, "expression": asked }))["value"], "granted");
    other.fails("grant_permissions", json!({ "permissions": ["camera"] }), 400, "E_BAD_REQUEST");

    // Once the session that named a locale closes, another may name another.
    assert_eq!(session.close().status, 200);
    let after = lease.try_session(json!({ "locale": "fr-FR", "color_scheme": "light" }));
    assert_eq!(after.status, 200, "{}", after.body);
}

#[test]
fn a_profile_remembers_what_its_first_session_asked_for() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let lease = daemon.lease("agent-a");
    let first = lease.try_session(json!({ "profile": "tokyo", "timezone": "Asia/Tokyo", "user_agent": "Remembered/1.0" }));
    assert_eq!(first.status, 200, "{}", first.body);
    let first_token = first.body["session_token"].as_str().unwrap().to_string();
    let first = Session {
        id: first.body["session_id"].as_str().unwrap().to_string(),
        token: first_token,
        lease: lease.clone(),
        summary: first.body,
    };
    assert_eq!(first.close().status, 200);
    // A later session of the profile naming nothing shows the same; one naming a field
    // shows its own.
    let later = lease.try_session(json!({ "profile": "tokyo" }));
    assert_eq!(later.status, 200, "{}", later.body);
    let later = Session {
        id: later.body["session_id"].as_str().unwrap().to_string(),
        token: later.body["session_token"].as_str().unwrap().to_string(),
        lease: lease.clone(),
        summary: later.body,
    };
    later.navigate(&fixtures.url("/f/identity.html?who=later"));
    let tab = later.summary["tab"].as_str().unwrap().to_string();
    let identity = identity_of(&later, &tab);
    assert_eq!((identity["timeZone"].clone(), identity["userAgent"].clone()), (json!("Asia/Tokyo"), json!("Remembered/1.0")), "{identity}");
    assert_eq!(later.close().status, 200);
    let own = lease.try_session(json!({ "profile": "tokyo", "user_agent": "Own/2.0" }));
    assert_eq!(own.status, 200, "{}", own.body);
    let own = Session {
        id: own.body["session_id"].as_str().unwrap().to_string(),
        token: own.body["session_token"].as_str().unwrap().to_string(),
        lease: lease.clone(),
        summary: own.body,
    };
    own.navigate(&fixtures.url("/f/identity.html?who=own"));
    let tab = own.summary["tab"].as_str().unwrap().to_string();
    let identity = identity_of(&own, &tab);
    assert_eq!((identity["timeZone"].clone(), identity["userAgent"].clone()), (json!("Asia/Tokyo"), json!("Own/2.0")), "{identity}");
}

#[test]
fn a_refused_listed_value_names_its_field_and_what_is_allowed() {
    let daemon = Daemon::start();
    let lease = daemon.lease("agent-a");
    // The document the daemon serves lists the values of both fields.
    let document = request(lease.port, "GET", "/v1/openapi.json", &[], None).body;
    let schemas = document["components"]["schemas"].to_string();
    assert!(schemas.contains("\"dark\"") && schemas.contains("\"clipboard-write\""), "{schemas}");
    let permissions = "expected one of `geolocation`, `notifications`, `clipboard-read`, `clipboard-write`";
    for (body, field, allowed) in [
        (json!({ "color_scheme": "purple" }), "color_scheme", "unknown variant `purple`, expected `light` or `dark`"),
        (json!({ "permissions": ["teleport"] }), "permissions[0]", permissions),
        (
            json!({ "permissions": ["geolocation", { "name": "teleport", "origins": ["https://example.com"] }] }),
            "permissions[1].name",
            permissions,
        ),
        (json!({ "width": 800, "popups": "sometimes" }), "popups", "expected `deny` or `tab`"),
    ] {
        let refused = lease.try_session(body.clone());
        assert_eq!((refused.status, refused.code()), (400, "E_BAD_REQUEST"), "{body}: {}", refused.body);
        let error = &refused.body["error"];
        assert_eq!(error["details"]["field"], field, "{body}: {error}");
        let message = error["message"].as_str().unwrap();
        // The wire's message is `<code>: <message>`.
        assert!(message.starts_with(&format!("E_BAD_REQUEST: {field}: ")) && message.contains(allowed), "{body}: {message}");
    }
    // Refused whole: nothing opened.
    let listed = request(lease.port, "GET", "/v1/sessions", &lease.headers(), None);
    assert_eq!(listed.body["sessions"], json!([]), "{}", listed.body);

    // A tool over MCP refuses the same way (one registry parses every surface's input).
    let mut agent = McpProcess::start(&daemon, "agent-m");
    let (failed, text) = agent.call("browser_enable_caps", json!({ "groups": ["state"] }));
    assert!(!failed, "{text}");
    let (failed, text) = agent.call("browser_grant_permissions", json!({ "permissions": ["teleport"] }));
    assert!(failed && text.starts_with("E_BAD_REQUEST: permissions[0]: unknown variant `teleport`, "), "{text}");
    assert!(text.contains(permissions) && text.contains(r#""field":"permissions[0]""#), "{text}");
}
