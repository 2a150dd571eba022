//! Every security rule of the contract, each rejected with its documented status and code.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::harness::*;

fn with_host(port: u16, host: &str, token_header: (&str, &str)) -> Response {
    raw_request(port, "GET", "/v1/leases", &[("Host".into(), host.into()), (token_header.0.into(), token_header.1.into())], None)
}

#[test]
fn host_header_must_be_loopback_with_the_right_port() {
    let daemon = Daemon::start();
    let port = daemon.port;
    let token = ("x-malo-broker-token", daemon.token.as_str());
    assert_eq!(with_host(port, &format!("127.0.0.1:{port}"), token).status, 200);
    assert_eq!(with_host(port, &format!("localhost:{port}"), token).status, 200);
    for bad in [
        "evil.example.com".to_string(),
        format!("evil.example.com:{port}"),
        "127.0.0.1".into(),
        format!("127.0.0.1:{}", port + 1),
        format!("0.0.0.0:{port}"),
        String::new(),
    ] {
        let response = with_host(port, &bad, token);
        assert_eq!((response.status, response.code()), (403, "E_FORBIDDEN_HOST"), "Host {bad:?}");
    }
    // The same on a lease endpoint, before any token check.
    let lease = daemon.lease("agent-a");
    let response = raw_request(
        lease.port,
        "GET",
        "/v1/tools",
        &[("Host".into(), "rebind.example:80".into()), ("x-malo-lease-token".into(), lease.token.clone())],
        None,
    );
    assert_eq!((response.status, response.code()), (403, "E_FORBIDDEN_HOST"));
}

#[test]
fn requests_two_parsers_could_read_differently_get_400() {
    let daemon = Daemon::start();
    let port = daemon.port;
    let host = ("Host".to_string(), format!("127.0.0.1:{port}"));
    let token = ("x-malo-broker-token".to_string(), daemon.token.clone());
    let cases: Vec<(&str, Vec<(String, String)>)> = vec![
        ("/v1/leases", vec![host.clone(), host.clone(), token.clone()]),
        ("/v1/leases", vec![host.clone(), ("Host".into(), "evil.example".into()), token.clone()]),
        ("http://evil.example/v1/leases", vec![host.clone(), token.clone()]),
    ];
    for (target, headers) in cases {
        let response = raw_request(port, "GET", target, &headers, None);
        assert_eq!((response.status, response.code()), (400, "E_BAD_REQUEST"), "{target} {headers:?}: {}", response.text);
    }
    // Two different Content-Length values: 400. (Two equal ones are one length, as RFC 9110
    // section 8.6 allows: hyper keeps one before any handler sees them.)
    let send = |extra: &str| {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let body = r#"{"agent_id":"a"}"#;
        let head = format!(
            "POST /v1/leases HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nx-malo-broker-token: {}\r\nContent-Type: application/json\r\n{extra}\r\n{body}",
            daemon.token
        );
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        stream.write_all(head.as_bytes()).unwrap();
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        String::from_utf8_lossy(&answer).to_string()
    };
    let answer = send("Content-Length: 16\r\nContent-Length: 17\r\n");
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert_eq!(request(port, "GET", "/v1/leases", &daemon.broker_headers(), None).body["leases"], json!([]), "no lease was taken");
    // Content-Length with Transfer-Encoding: the chunked body counts, and the connection
    // closes after the answer (RFC 9112 section 6.1), so nothing can hide behind it.
    let answer = send("Content-Length: 3\r\nTransfer-Encoding: chunked\r\n");
    assert!(answer.to_ascii_lowercase().contains("connection: close"), "{answer}");
}

#[test]
fn a_request_body_that_trickles_in_is_cut() {
    let daemon = Daemon::start();
    let port = daemon.port;
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let head = format!(
        "POST /v1/leases HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nx-malo-broker-token: {}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n",
        daemon.token
    );
    stream.write_all(head.as_bytes()).unwrap();
    let begun = Instant::now();
    let writer = {
        let mut stream = stream.try_clone().unwrap();
        std::thread::spawn(move || {
            for _ in 0..60 {
                if stream.write_all(b" ").is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        })
    };
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let waited = begun.elapsed();
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("did not arrive within"), "{answer}");
    assert!(waited < Duration::from_secs(30), "cut after {waited:?}");
    let _ = stream.shutdown(std::net::Shutdown::Both);
    writer.join().unwrap();
}

#[test]
fn servers_listen_on_loopback_only() {
    let daemon = Daemon::start();
    let lease = daemon.lease("agent-a");
    let listening = std::fs::read_to_string("/proc/net/tcp").unwrap() + &std::fs::read_to_string("/proc/net/tcp6").unwrap_or_default();
    for port in [daemon.port, lease.port] {
        let hex = format!(":{port:04X} ");
        let lines: Vec<&str> = listening
            .lines()
            .filter(|line| {
                line.split_whitespace().nth(1).is_some_and(|local| format!("{local} ").ends_with(&hex))
                    && line.split_whitespace().nth(3) == Some("0A")
            })
            .collect();
        assert!(!lines.is_empty(), "port {port} is not listening");
        for line in lines {
            let local = line.split_whitespace().nth(1).unwrap();
            assert!(local.starts_with("0100007F:"), "port {port} listens on {local}, not 127.0.0.1");
        }
    }
}

#[test]
fn the_three_tokens_are_separate() {
    let daemon = Daemon::start();
    let lease_a = daemon.lease("agent-a");
    let lease_b = daemon.lease("agent-b");
    let session_a = lease_a.session();
    let session_a2 = lease_a.session();
    let session_b = lease_b.session();

    let unauthorized = |response: Response, what: &str| {
        assert_eq!((response.status, response.code()), (401, "E_UNAUTHORIZED"), "{what}: {}", response.body);
        assert!(!response.text.contains(&daemon.token) && !response.text.contains(&lease_a.token), "{what} echoed a token");
    };
    let lease_body = Some(json!({ "agent_id": "x" }));
    unauthorized(request(daemon.port, "POST", "/v1/leases", &[], lease_body.clone()), "no broker token");
    unauthorized(
        request(daemon.port, "POST", "/v1/leases", &[("x-malo-broker-token", "0".repeat(64))], lease_body.clone()),
        "wrong broker token",
    );
    unauthorized(
        request(daemon.port, "POST", "/v1/leases", &[("x-malo-broker-token", lease_a.token.clone())], lease_body.clone()),
        "lease token on the broker",
    );
    unauthorized(
        request(lease_a.port, "GET", "/v1/sessions", &[("x-malo-lease-token", daemon.token.clone())], None),
        "broker token on a lease",
    );
    unauthorized(
        request(lease_a.port, "GET", "/v1/sessions", &[("x-malo-lease-token", lease_b.token.clone())], None),
        "lease B's token on lease A",
    );
    unauthorized(request(lease_a.port, "GET", "/v1/sessions", &[], None), "no lease token");

    let observe = |session: &Session, headers: Vec<(&'static str, String)>| {
        request(session.lease.port, "GET", &format!("/v1/sessions/{}/observe", session.id), &headers, None)
    };
    unauthorized(observe(&session_a, vec![("x-malo-lease-token", lease_a.token.clone())]), "no session token");
    unauthorized(
        observe(&session_a, vec![("x-malo-lease-token", lease_a.token.clone()), ("x-malo-session-token", session_a2.token.clone())]),
        "session A2's token on A",
    );
    unauthorized(
        observe(&session_a, vec![("x-malo-lease-token", lease_a.token.clone()), ("x-malo-session-token", session_b.token.clone())]),
        "session B's token on A",
    );
    unauthorized(
        observe(&session_a, vec![("x-malo-lease-token", lease_b.token.clone()), ("x-malo-session-token", session_a.token.clone())]),
        "right session token, wrong lease token",
    );
    assert_eq!(observe(&session_a, session_a.headers()).status, 200);

    // Session B does not exist on lease A's endpoint at all.
    let elsewhere = request(
        lease_a.port,
        "GET",
        &format!("/v1/sessions/{}/observe", session_b.id),
        &[("x-malo-lease-token", lease_a.token.clone()), ("x-malo-session-token", session_b.token.clone())],
        None,
    );
    assert_eq!((elsewhere.status, elsewhere.code()), (404, "E_SESSION_NOT_FOUND"));

    // Legacy x-pagehand-* headers are accepted for all three tokens.
    let legacy_lease = request(
        daemon.port,
        "POST",
        "/v1/leases",
        &[("x-pagehand-broker-token", daemon.token.clone())],
        Some(json!({ "agent_id": "legacy" })),
    );
    assert_eq!(legacy_lease.status, 200);
    let legacy =
        observe(&session_a, vec![("x-pagehand-lease-token", lease_a.token.clone()), ("x-pagehand-session-token", session_a.token.clone())]);
    assert_eq!(legacy.status, 200, "{}", legacy.body);
}

#[test]
fn bodies_must_be_json_and_at_most_one_megabyte() {
    let daemon = Daemon::start();
    let lease = daemon.lease("agent-a");
    let session = lease.session();
    let port = lease.port;
    let base = |content_type: &str| -> Vec<(String, String)> {
        vec![
            ("Host".into(), format!("127.0.0.1:{port}")),
            ("x-malo-lease-token".into(), lease.token.clone()),
            ("x-malo-session-token".into(), session.token.clone()),
            ("Content-Type".into(), content_type.into()),
        ]
    };
    let path = format!("/v1/sessions/{}/tools/observe", session.id);

    let text = raw_request(port, "POST", &path, &base("text/plain"), Some(b"{}"));
    assert_eq!((text.status, text.code()), (415, "E_UNSUPPORTED_MEDIA_TYPE"));
    let form = raw_request(port, "POST", "/v1/sessions", &base("application/x-www-form-urlencoded"), Some(b"name=x"));
    assert_eq!((form.status, form.code()), (415, "E_UNSUPPORTED_MEDIA_TYPE"));
    let charset = raw_request(port, "POST", &path, &base("application/json; charset=utf-8"), Some(b"{}"));
    assert_eq!(charset.status, 200, "{}", charset.body);

    let big = format!("{{\"max_chars\": 10, \"pad\": \"{}\"}}", "x".repeat(1024 * 1024));
    let too_large = raw_request(port, "POST", &path, &base("application/json"), Some(big.as_bytes()));
    assert_eq!((too_large.status, too_large.code()), (413, "E_PAYLOAD_TOO_LARGE"));

    let broken = raw_request(port, "POST", &path, &base("application/json"), Some(b"{not json"));
    assert_eq!((broken.status, broken.code()), (400, "E_BAD_REQUEST"));
    let unknown_field = session.tool("observe", json!({ "mode": "light", "colour": "red" }));
    assert_eq!((unknown_field.status, unknown_field.code()), (400, "E_BAD_REQUEST"));
    assert!(unknown_field.body["error"]["message"].as_str().unwrap().contains("colour"));
    let wrong_type = session.tool("observe", json!({ "max_chars": "many" }));
    assert_eq!((wrong_type.status, wrong_type.code()), (400, "E_BAD_REQUEST"));
    let bad_mode = session.get("/observe?mode=video");
    assert_eq!((bad_mode.status, bad_mode.code()), (400, "E_BAD_REQUEST"));
    let unknown_tool = session.tool("teleport", json!({}));
    assert_eq!((unknown_tool.status, unknown_tool.code()), (404, "E_UNKNOWN_TOOL"));
    let no_route = request(port, "GET", "/v1/nothing", &lease.headers(), None);
    assert_eq!((no_route.status, no_route.code()), (404, "E_NO_ROUTE"));
    let wrong_method = request(port, "PUT", "/v1/sessions", &lease.headers(), Some(json!({})));
    assert_eq!((wrong_method.status, wrong_method.code()), (405, "E_METHOD_NOT_ALLOWED"));
    let bad_viewport = lease.try_session(json!({ "width": 5, "height": 5 }));
    assert_eq!((bad_viewport.status, bad_viewport.code()), (400, "E_BAD_REQUEST"));
    let bad_agent = request(daemon.port, "POST", "/v1/leases", &daemon.broker_headers(), Some(json!({ "agent_id": "no spaces" })));
    assert_eq!((bad_agent.status, bad_agent.code()), (400, "E_BAD_REQUEST"));
    // Every error has the documented shape.
    for response in [&text, &too_large, &broken, &unknown_tool] {
        assert_eq!(response.body["ok"], false);
        assert!(response.body["error"]["message"].is_string());
        assert!(response.body["error"]["details"].is_object());
    }
    // Nothing was lost: the session still works.
    assert_eq!(session.get("/observe").status, 200);
}

#[test]
fn only_http_and_https_without_credentials_can_be_opened() {
    let daemon = Daemon::start();
    let session = daemon.lease("agent-a").session();
    for (url, reason) in [
        ("file:///etc/passwd", "scheme"),
        ("javascript:alert(1)", "scheme"),
        ("data:text/html,hi", "scheme"),
        ("about:blank", "scheme"),
        ("http://user:secret@127.0.0.1/", "credentials"),
        ("not a url", "unparsable"),
    ] {
        let response = session.post("/navigate", json!({ "url": url }));
        assert_eq!((response.status, response.code()), (400, "E_INVALID_URL"), "{url}");
        assert_eq!(response.body["error"]["details"]["reason"], reason, "{url}");
        assert!(!response.text.contains("secret"), "credentials echoed");
    }
    let missing = session.post("/navigate", json!({}));
    assert_eq!((missing.status, missing.code()), (400, "E_BAD_REQUEST"));
    assert_eq!(session.observe()["url"], "about:blank", "nothing was loaded");
}

#[test]
fn popups_permissions_and_non_web_schemes_are_denied_inside_pages() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/policies.html"));
    let settled = eventually(Duration::from_secs(5), || {
        let title = session.title();
        title.starts_with('{') && !title.contains("pending")
    });
    let title = session.title();
    assert!(settled, "{title}");
    let result: Value = serde_json::from_str(&title).unwrap();
    assert_eq!(result["popup"], "null", "window.open must return null");
    assert_eq!(result["notification"], "denied");
    assert!(result["geolocation"].as_str().unwrap().starts_with("denied"), "{result}");
    assert_eq!(fixtures.seen("/f/hello.html").len(), 0, "the popup's page was never requested");

    assert!(
        eventually(Duration::from_secs(3), || {
            let events = session.events(0);
            let kinds: Vec<String> =
                events["events"].as_array().unwrap().iter().map(|event| event["type"].as_str().unwrap().to_string()).collect();
            kinds.contains(&"popup_blocked".to_string())
                && kinds.contains(&"permission_denied".to_string())
                && kinds.contains(&"navigation_blocked".to_string())
        }),
        "events: {}",
        session.events(0)
    );
    assert_eq!(session.observe()["url"], fixtures.url("/f/policies.html"), "the page did not leave for a non-web scheme");
}

#[test]
fn more_sessions_than_the_limit_get_429() {
    let daemon = Daemon::start_with(DaemonOptions { max_sessions: 2, ..DaemonOptions::default() });
    let lease = daemon.lease("agent-a");
    let first = lease.session();
    let _second = lease.session();
    let third = lease.try_session(json!({ "name": "third" }));
    assert_eq!((third.status, third.code()), (429, "E_TOO_MANY_SESSIONS"), "{}", third.body);
    assert_eq!(third.body["error"]["details"]["max_sessions"], 2);
    // Another lease has its own budget; closing one frees a slot.
    let other = daemon.lease("agent-b");
    other.session();
    assert_eq!(first.close().status, 200);
    assert_eq!(lease.try_session(json!({ "name": "third" })).status, 200);
}
