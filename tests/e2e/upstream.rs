//! A session's way out (issue #28): an upstream proxy (HTTP CONNECT or SOCKS5, with a
//! username and password, written in the harness) chained behind the session's own proxy,
//! so the request log keeps working; `bypass` hosts going direct; a refused login failing
//! the navigation with `proxy_failed`; the password in no answer, event, log line or file;
//! and network conditions (throughput, latency, offline) switched on and off live.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::harness::*;

const PASSWORD: &str = "pr0xy-s3cret-w0rd";

/// The session a creation answered.
fn session_of(lease: &Lease, created: &Response) -> Session {
    assert_eq!(created.status, 200, "create session: {}", created.body);
    Session {
        id: created.body["session_id"].as_str().unwrap().to_string(),
        token: created.body["session_token"].as_str().unwrap().to_string(),
        lease: lease.clone(),
        summary: created.body.clone(),
    }
}

/// A navigation that must fail: its `details.navigation`.
fn failed_navigation(session: &Session, url: &str) -> (Value, String) {
    let response = session.post("/navigate", json!({ "url": url }));
    assert_eq!((response.status, response.code()), (502, "E_NAVIGATION_FAILED"), "{url}: {}", response.body);
    (response.body["error"]["details"]["navigation"].clone(), response.text)
}

/// The URLs of the session's request log.
fn logged_urls(session: &Session) -> Vec<String> {
    let log = session.ok("requests", json!({ "limit": 500 }));
    log["requests"].as_array().unwrap().iter().map(|record| record["url"].as_str().unwrap().to_string()).collect()
}

#[test]
fn sessions_go_through_http_and_socks5_proxies_and_never_show_the_password() {
    let ca = TestCa::new();
    let mut daemon = Daemon::start_with(ca.trusted_by_daemon());
    let fixtures = Fixtures::start();
    let tls_port = fixtures.start_tls(Some(&ca));
    let lease = daemon.lease("agent-a");
    let mut answers: Vec<String> = Vec::new();
    let mut events: Vec<String> = Vec::new();

    for proxy in [TestProxy::http("agent", PASSWORD), TestProxy::socks5("agent", PASSWORD)] {
        let kind = format!("{:?}", proxy.kind).to_lowercase();
        let created = lease.try_session(json!({ "proxy": { "server": proxy.url(), "username": "agent", "password": PASSWORD } }));
        answers.push(created.text.clone());
        let session = session_of(&lease, &created);
        let shown = json!({ "server": proxy.url(), "username": "agent", "credential": null, "bypass": [] });
        assert_eq!(created.body["proxy"], shown, "{}", created.body);
        assert_eq!(session.get("").body["proxy"], shown);

        // Plain http and https (TLS terminated by the session proxy, then opened again
        // inside the tunnel and verified): the proxy relays both, the log lists both.
        let plain = fixtures.url(&format!("/f/hello.html?via={kind}"));
        answers.push(session.navigate(&plain).to_string());
        assert_eq!(session.title(), "Hello fixture");
        assert!(fixtures.seen("/f/hello.html").iter().any(|seen| seen.query == format!("via={kind}")));
        let secure = format!("https://127.0.0.1:{tls_port}/f/hello.html?via={kind}-tls");
        answers.push(session.navigate(&secure).to_string());
        assert!(fixtures.seen("/f/hello.html").iter().any(|seen| seen.query == format!("via={kind}-tls")));
        let relayed = proxy.relayed();
        assert!(relayed.contains(&format!("127.0.0.1:{}", fixtures.port)), "{kind} relayed {relayed:?}");
        assert!(relayed.contains(&format!("127.0.0.1:{tls_port}")), "{kind} relayed {relayed:?}");
        let logged = logged_urls(&session);
        assert!(logged.contains(&plain) && logged.contains(&secure), "{logged:?}");
        assert_eq!(proxy.refused(), 0);

        // A wrong password: the navigation fails, naming the proxy.
        let wrong = lease.try_session(json!({ "proxy": { "server": proxy.url(), "username": "agent", "password": "not-the-password" } }));
        let refused_session = session_of(&lease, &wrong);
        let (navigation, text) = failed_navigation(&refused_session, &fixtures.url(&format!("/f/hello.html?refused={kind}")));
        answers.push(text);
        assert_eq!(navigation["net_error"], "proxy_failed", "{navigation}");
        assert!(navigation["net_error_description"].as_str().unwrap().contains("username or password"), "{navigation}");
        assert!(proxy.refused() >= 1);
        assert!(fixtures.seen("/f/hello.html").iter().all(|seen| seen.query != format!("refused={kind}")), "nothing went direct");

        // Bypass: the fixture host goes direct, the proxy sees nothing more.
        let bypassing = lease.try_session(json!({
            "proxy": { "server": proxy.url(), "username": "agent", "password": PASSWORD, "bypass": ["127.0.0.1"] }
        }));
        answers.push(bypassing.text.clone());
        let direct = session_of(&lease, &bypassing);
        let before = proxy.relayed().len();
        answers.push(direct.navigate(&fixtures.url(&format!("/f/hello.html?direct={kind}"))).to_string());
        assert!(fixtures.seen("/f/hello.html").iter().any(|seen| seen.query == format!("direct={kind}")));
        assert_eq!(proxy.relayed().len(), before, "a bypassed host goes direct");

        for session in [&session, &refused_session, &direct] {
            events.push(session.events(0).to_string());
            events.push(session.ok("events", json!({})).to_string());
            answers.push(session.get("").text);
            assert_eq!(session.close().status, 200);
        }
    }

    // A proxy that is not there.
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let nowhere = session_of(&lease, &lease.try_session(json!({ "proxy": { "server": format!("127.0.0.1:{closed_port}") } })));
    let (navigation, _) = failed_navigation(&nowhere, &fixtures.url("/f/hello.html?nowhere"));
    assert_eq!(navigation["net_error"], "proxy_failed", "{navigation}");
    assert!(navigation["net_error_description"].as_str().unwrap().contains("refused the connection"), "{navigation}");
    // The daemon's own ports are no proxy.
    let own = session_of(&lease, &lease.try_session(json!({ "proxy": { "server": format!("http://127.0.0.1:{}", daemon.port) } })));
    let (navigation, _) = failed_navigation(&own, &fixtures.url("/f/hello.html?own"));
    assert_eq!(navigation["net_error"], "proxy_failed", "{navigation}");
    assert!(navigation["net_error_description"].as_str().unwrap().contains("daemon's own"), "{navigation}");

    // Wrong input is refused before anything opens, naming the field (and never echoing a
    // password).
    for (proxy, field) in [
        (json!({ "server": "ftp://127.0.0.1:21" }), "proxy.server"),
        (json!({ "server": "http://" }), "proxy.server"),
        (json!({ "server": format!("http://agent:{PASSWORD}@127.0.0.1:3128") }), "proxy.server"),
        (json!({ "server": "http://127.0.0.1:3128", "password": PASSWORD }), "proxy.password"),
        (json!({ "server": "http://127.0.0.1:3128", "username": "agent" }), "proxy.username"),
        (json!({ "server": "http://127.0.0.1:3128", "credential": "corp", "username": "a", "password": PASSWORD }), "proxy.credential"),
        (json!({ "server": "http://127.0.0.1:3128", "bypass": ["not a host"] }), "proxy.bypass"),
    ] {
        let refused = lease.try_session(json!({ "proxy": proxy }));
        assert_eq!((refused.status, refused.code()), (400, "E_BAD_REQUEST"), "{proxy}: {}", refused.body);
        assert_eq!(refused.body["error"]["details"]["field"], field, "{}", refused.body);
        answers.push(refused.text);
    }
    let unknown = lease.try_session(json!({ "proxy": { "server": "http://127.0.0.1:3128", "credential": "nope" } }));
    assert_eq!((unknown.status, unknown.code()), (404, "E_CREDENTIAL_NOT_FOUND"), "{}", unknown.body);

    // A profile remembers the proxy, never its password: its next session must give it again.
    let proxy = TestProxy::http("agent", PASSWORD);
    let first =
        lease.try_session(json!({ "profile": "proxied", "proxy": { "server": proxy.url(), "username": "agent", "password": PASSWORD } }));
    let first = session_of(&lease, &first);
    first.close();
    let again = lease.try_session(json!({ "profile": "proxied" }));
    assert_eq!((again.status, again.code()), (400, "E_BAD_REQUEST"), "{}", again.body);
    assert_eq!(again.body["error"]["details"]["field"], "proxy");
    answers.push(again.text);
    let given = session_of(
        &lease,
        &lease.try_session(json!({ "profile": "proxied", "proxy": { "server": proxy.url(), "username": "agent", "password": PASSWORD } })),
    );
    given.navigate(&fixtures.url("/f/hello.html?profile"));
    assert!(proxy.relayed().contains(&format!("127.0.0.1:{}", fixtures.port)));
    given.close();

    for text in answers.iter().chain(&events) {
        assert!(!text.contains(PASSWORD), "the password in an answer: {text}");
    }
    daemon.stop();
    assert!(!daemon.stderr().contains(PASSWORD), "the password in the daemon's log");
    for file in files_below(&daemon.data_dir) {
        let bytes = std::fs::read(&file).unwrap_or_default();
        assert!(!String::from_utf8_lossy(&bytes).contains(PASSWORD), "the password in {}", file.display());
    }
}

/// The records of `session`'s requests to `origin`, once `crossing.html` (loaded with
/// `?other=<origin>`) says its image and fetch failed.
fn crossing_records(session: &Session, origin: &str) -> Vec<Value> {
    let ended = eventually(Duration::from_secs(10), || {
        let text = session.ok("extract", json!({ "selector": "#status" })).to_string();
        text.contains("\\\"image\\\":\\\"failed\\\"") && text.contains("\\\"fetch\\\":\\\"failed\\\"")
    });
    assert!(ended, "{}", session.ok("extract", json!({ "selector": "#status" })));
    let requests = session.ok("requests", json!({ "limit": 500 }))["requests"].as_array().unwrap().clone();
    requests.into_iter().filter(|record| record["url"].as_str().unwrap().starts_with(origin)).collect()
}

#[test]
fn proxy_failures_name_their_kind_for_pages_and_sub_resources_on_any_host() {
    // Issue 44: on a host that is not loopback (WebKit sends it no Sec-Fetch-Dest) and over
    // https, the upstream proxy's failures were `partial_input`, a truncated answer.
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let lease = daemon.lease("agent-a");
    let (http, socks) = (TestProxy::http("agent", PASSWORD), TestProxy::socks5("agent", PASSWORD));
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    for (server, password, kind) in [
        (http.url(), Some("not-the-password"), "proxy_auth_failed"),
        (socks.url(), Some("not-the-password"), "proxy_auth_failed"),
        (format!("http://127.0.0.1:{closed_port}"), None, "proxy_unreachable"),
        (format!("socks5://127.0.0.1:{closed_port}"), None, "proxy_unreachable"),
    ] {
        // The fixture server goes direct, so its page loads and what it asks of another host
        // goes through the proxy.
        let mut proxy = json!({ "server": server, "bypass": ["127.0.0.1"] });
        if let Some(password) = password {
            proxy["username"] = json!("agent");
            proxy["password"] = json!(password);
        }
        let session = session_of(&lease, &lease.try_session(json!({ "proxy": proxy })));
        for url in ["http://site.example.test/page?plain", "https://site.example.test/page?secure"] {
            let (navigation, _) = failed_navigation(&session, url);
            assert_eq!(
                (navigation["net_error"].as_str(), navigation["proxy_error"].as_str()),
                (Some("proxy_failed"), Some(kind)),
                "{server} {url}: {navigation}"
            );
            let description = navigation["net_error_description"].as_str().unwrap();
            assert!(description.starts_with(&format!("proxy_failed: {kind}: ")), "{description}");
            let failed = session.ok("events", json!({ "type": "load_failed" }))["events"].as_array().unwrap().clone();
            assert!(failed.iter().any(|event| event["url"] == url && event["net_error"] == "proxy_failed"), "{failed:?}");
        }
        // Sub-resources: the frame, the image and the fetch name the proxy's failure.
        session.navigate(&format!("{}?other=http://cdn.example.test", fixtures.url("/f/crossing.html")));
        let records = crossing_records(&session, "http://cdn.example.test/");
        for (path, resource_type) in [("/f/hello.html", Some("Document")), ("/api/image", Some("Image")), ("/api/items.json", None)] {
            let url = format!("http://cdn.example.test{path}");
            let record =
                records.iter().find(|record| record["url"] == url).unwrap_or_else(|| panic!("{server}: no record of {url}: {records:?}"));
            assert!(record["failure"].as_str().unwrap().starts_with(&format!("proxy_failed: {kind}: ")), "{server}: {record}");
            if let Some(resource_type) = resource_type {
                assert_eq!(record["resource_type"], resource_type, "{record}");
            }
        }
        session.close();
    }
    assert!(http.refused() >= 1 && socks.refused() >= 1);
}

/// Navigates with a short settle; answers how long it took and the answer.
fn timed_navigation(session: &Session, url: &str) -> (Duration, Response) {
    let begun = Instant::now();
    let response = session.post("/navigate", json!({ "url": url, "settle_ms": 200 }));
    (begun.elapsed(), response)
}

#[test]
fn network_conditions_throttle_delay_and_cut_a_session_and_switch_off() {
    let pages = TempDir::new("throttled-pages");
    let filler = "<p>".to_string() + &"throttled bytes ".repeat(6250) + "</p>";
    let big = format!("<!doctype html><title>big</title>{filler}");
    assert!(big.len() >= 100_000 && big.len() < 101_000);
    std::fs::write(pages.0.join("big.html"), &big).unwrap();
    let fixtures = Fixtures::start_serving(Some(pages.0.clone()));
    let daemon = Daemon::start();
    let lease = daemon.lease("agent-a");

    // 100 kB at 100 kbps: about 8 s.
    let created = lease.try_session(json!({ "network_conditions": { "download_kbps": 100 } }));
    let session = session_of(&lease, &created);
    assert_eq!(created.body["network_conditions"]["download_kbps"], 100, "{}", created.body);
    let (took, answer) = timed_navigation(&session, &fixtures.url("/b/big.html?slow"));
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(took >= Duration::from_secs(6) && took <= Duration::from_secs(12), "100 kB at 100 kbps took {took:?}");
    assert_eq!(session.title(), "big");
    eprintln!("100 kB at 100 kbps: {took:?}");

    // Off: the same page at once.
    assert_eq!(session.ok("set_network_conditions", json!({}))["network_conditions"], Value::Null);
    assert_eq!(session.get("").body["network_conditions"], Value::Null);
    let (took, answer) = timed_navigation(&session, &fixtures.url("/b/big.html?fast"));
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(took < Duration::from_secs(3), "unthrottled took {took:?}");

    // Upload: 50 kB at 100 kbps, about 4 s, timed by the page.
    session.ok("set_network_conditions", json!({ "upload_kbps": 100 }));
    let upload = "(async () => { const begun = performance.now(); await fetch('/api/echo', { method: 'POST', body: 'u'.repeat(50000) }); return performance.now() - begun; })()";
    let upload_ms = session.page_value(upload).as_f64().unwrap();
    assert!((3000.0..=7000.0).contains(&upload_ms), "50 kB up at 100 kbps took {upload_ms} ms");
    eprintln!("50 kB up at 100 kbps: {upload_ms} ms");

    // Latency: added before the request (and any new connection).
    let set = session.ok("set_network_conditions", json!({ "latency_ms": 1500, "upload_kbps": null }));
    assert_eq!(set["network_conditions"]["latency_ms"], 1500, "{set}");
    let (took, answer) = timed_navigation(&session, &fixtures.url("/f/hello.html?late"));
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(took >= Duration::from_millis(1500), "a 1500 ms latency took {took:?}");

    // Offline: every request fails at once, as a network error.
    session.ok("set_network_conditions", json!({ "offline": true }));
    let (took, answer) = timed_navigation(&session, &fixtures.url("/f/hello.html?offline"));
    assert_eq!((answer.status, answer.code()), (502, "E_NAVIGATION_FAILED"), "{}", answer.body);
    assert_eq!(answer.body["error"]["details"]["navigation"]["net_error"], "internet_disconnected", "{}", answer.body);
    assert!(took < Duration::from_secs(3), "offline took {took:?}");
    assert!(fixtures.seen("/f/hello.html").iter().all(|seen| seen.query != "offline"));

    // All null: back online, fast.
    session.ok("set_network_conditions", json!({ "offline": null, "latency_ms": null, "download_kbps": null, "upload_kbps": null }));
    let (took, answer) = timed_navigation(&session, &fixtures.url("/f/hello.html?online"));
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(took < Duration::from_secs(3), "back online took {took:?}");

    // Out of range: refused, naming the field, the conditions unchanged.
    let refused = session.fails("set_network_conditions", json!({ "download_kbps": 0 }), 400, "E_BAD_REQUEST");
    assert_eq!(refused["details"]["field"], "network_conditions.download_kbps");
    let refused = lease.try_session(json!({ "network_conditions": { "latency_ms": 600_000 } }));
    assert_eq!((refused.status, refused.code()), (400, "E_BAD_REQUEST"), "{}", refused.body);
    assert_eq!(session.get("").body["network_conditions"], Value::Null);
}
