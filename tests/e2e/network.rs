//! What the page says on the wire, through the session's proxy: response capture (seed
//! 003), the request log (seed 002) as records and as one line per request, interception
//! rules (seed 000), console and page errors, HTTPS through the proxy's own CA with
//! upstream verification, WebSockets, and the daemon's own ports out of a page's reach.

use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::*;

/// Runs `probe(url, options)` (network.html) in the page: `{status, text, type}` or `{failed}`.
fn probe(session: &Session, url: &str, options: Value) -> Value {
    session.page_value(&format!("probe({}, {options})", json!(url)))
}

/// Polls `responses` until a record for `url` has left `pending`; answers it.
fn response_for(session: &Session, url: &str) -> Value {
    let mut found = Value::Null;
    let done = eventually(Duration::from_secs(10), || {
        let answer = session.ok("responses", json!({ "url_prefix": url, "limit": 200 }));
        found = answer["responses"].as_array().unwrap().iter().rev().find(|record| record["url"] == url).cloned().unwrap_or_default();
        !found.is_null() && found["body_error"] != "pending"
    });
    assert!(done, "no finished response for {url}: {found}");
    found
}

#[test]
fn response_capture_follows_the_seed_contract() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let lease = daemon.lease("agent-a");
    let session = lease.session();
    let api = fixtures.url("/api/");

    // Omitted: only a report. Then subscribe, navigate, act, poll (the documented order).
    assert_eq!(session.ok("network_capture", json!({}))["url_prefixes"], json!([]));
    let subscribed = session.ok("network_capture", json!({ "url_prefixes": [api] }));
    assert_eq!((subscribed["url_prefixes"].clone(), subscribed["captured"].clone()), (json!([api]), json!(0)));
    session.navigate(&fixtures.url("/f/network.html"));
    session.ok("click", json!({ "selector": "#load" }));
    let items = response_for(&session, &fixtures.url("/api/items.json"));
    assert_eq!(items["body"], r#"{"items":[1,2,3],"name":"items"}"#, "byte-exact: {items}");
    assert_eq!((items["status"].clone(), items["mime_type"].clone()), (json!(200), json!("application/json")));
    assert_eq!(items["resource_type"], "Fetch");
    assert_eq!((items["body_truncated"].clone(), items["body_error"].clone()), (json!(false), Value::Null));
    session.ok("click", json!({ "selector": "#xhr" }));
    let xhr = response_for(&session, &fixtures.url("/api/xhr.json"));
    assert_eq!((xhr["resource_type"].clone(), xhr["body"].clone()), (json!("XHR"), json!(r#"{"via":"xhr"}"#)));

    // 204, over 1 MiB, binary, gzip (decoded for the agent), an error status.
    session.ok("click", json!({ "selector": "#more" }));
    assert!(eventually(Duration::from_secs(10), || session.page_value("document.getElementById('more-result').textContent")
        == "204,200,200,200,500"));
    assert_eq!(response_for(&session, &fixtures.url("/api/empty"))["body_error"], "no_body");
    let big = response_for(&session, &fixtures.url("/api/big"));
    assert_eq!(big["body_truncated"], true);
    assert_eq!(big["body"].as_str().unwrap().len(), 1024 * 1024, "the first MiB");
    assert!(api_big_body().starts_with(big["body"].as_str().unwrap()));
    assert_eq!(response_for(&session, &fixtures.url("/api/binary"))["body_error"], "binary");
    assert_eq!(response_for(&session, &fixtures.url("/api/gzip.json"))["body"], r#"{"compressed":true}"#);
    assert_eq!(response_for(&session, &fixtures.url("/api/status/500"))["body"], "status 500");
    // Not subscribed: metadata only (the page and its image).
    let page = session.ok("responses", json!({ "url_prefix": fixtures.url("/f/network.html") }))["responses"][0].clone();
    assert_eq!(
        (page["body_error"].clone(), page["body"].clone(), page["resource_type"].clone()),
        (json!("not_subscribed"), Value::Null, json!("Document"))
    );
    let pixel = session.ok("responses", json!({ "url_prefix": fixtures.url("/api/pixel.png") }))["responses"][0].clone();
    assert_eq!(pixel["resource_type"], "Image", "{pixel}");

    // Cursor and paging from the oldest.
    let first = session.ok("responses", json!({ "after": 0, "limit": 1 }));
    assert_eq!(first["has_more"], true);
    let cursor = first["responses"][0]["seq"].as_u64().unwrap();
    let rest = session.ok("responses", json!({ "after": cursor, "limit": 200 }));
    assert!(rest["responses"].as_array().unwrap().iter().all(|record| record["seq"].as_u64().unwrap() > cursor));
    session.fails("responses", json!({ "limit": 0 }), 400, "E_BAD_REQUEST");
    session.fails("responses", json!({ "limit": 201 }), 400, "E_BAD_REQUEST");

    // The 201st body evicts the oldest.
    session.page_value("(async () => { for (let n = 0; n < 201; n++) await fetch('/api/count/' + n, { cache: 'no-store' }).then((r) => r.text()); return true; })()");
    let oldest = response_for(&session, &fixtures.url("/api/items.json"));
    assert_eq!(oldest["body_error"], "evicted", "{oldest}");
    assert_eq!(response_for(&session, &fixtures.url("/api/count/200"))["body"], r#"{"n":"200"}"#);
    assert_eq!(session.ok("network_capture", json!({}))["captured"], 200);

    // Capture is private to the session.
    let other = lease.session();
    assert_eq!(other.ok("network_capture", json!({}))["url_prefixes"], json!([]));
    assert_eq!(other.ok("responses", json!({}))["responses"], json!([]));

    // [] clears and drops the bodies; the records stay.
    let cleared = session.ok("network_capture", json!({ "url_prefixes": [] }));
    assert_eq!((cleared["url_prefixes"].clone(), cleared["captured"].clone()), (json!([]), json!(0)));
    let after_clear = response_for(&session, &fixtures.url("/api/count/200"));
    assert_eq!(
        (after_clear["body"].clone(), after_clear["body_error"].clone(), after_clear["status"].clone()),
        (Value::Null, json!("evicted"), json!(200))
    );
    // run_steps never carries capture.
    session.fails("run_steps", json!({ "steps": [{ "type": "responses" }] }), 400, "E_BAD_REQUEST");
}

#[test]
fn each_tab_logs_its_requests_with_statuses_and_failures() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/network.html"));
    let tab = session.summary["tab"].as_str().unwrap().to_string();
    // A closed port, a name that does not resolve, the daemon's own broker.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    for url in [
        format!("http://127.0.0.1:{closed}/nothing"),
        "http://no-such-host.invalid/x".to_string(),
        format!("http://127.0.0.1:{}/v1/health", daemon.port),
    ] {
        assert!(probe(&session, &url, json!({}))["failed"].is_string(), "{url} should fail in the page");
    }
    probe(&session, &fixtures.url("/api/status/404"), json!({}));
    probe(&session, &fixtures.url("/api/echo"), json!({ "method": "POST", "body": "12345" }));

    let all = session.ok("requests", json!({ "limit": 500 }));
    let requests = all["requests"].as_array().unwrap();
    assert!(requests.iter().all(|record| record["tab"] == tab));
    let document = requests.iter().find(|record| record["url"] == fixtures.url("/f/network.html")).unwrap();
    assert_eq!(
        (document["resource_type"].clone(), document["status"].clone(), document["method"].clone()),
        (json!("Document"), json!(200), json!("GET"))
    );
    assert!(document["duration_ms"].is_u64() && document["response_body_size"].as_u64().unwrap() > 100);
    let failure = |part: &str| requests.iter().find(|record| record["url"].as_str().unwrap().contains(part)).unwrap()["failure"].clone();
    assert_eq!(failure(&format!(":{closed}/")), "connection_refused");
    assert!(failure("no-such-host.invalid").as_str().unwrap().starts_with("name_not_resolved"));
    assert_eq!(failure("/v1/health"), "blocked: the daemon's own port", "a page never reaches the broker");
    let post = requests.iter().find(|record| record["url"] == fixtures.url("/api/echo")).unwrap();
    assert_eq!((post["method"].clone(), post["request_body_size"].clone(), post["status"].clone()), (json!("POST"), json!(5), json!(200)));

    // Filters.
    let only = |input: Value| -> Vec<Value> { session.ok("requests", input)["requests"].as_array().unwrap().clone() };
    assert_eq!(only(json!({ "method": "post" })).len(), 1);
    assert!(only(json!({ "status": "4xx" })).iter().all(|record| record["status"].as_u64().unwrap() / 100 == 4));
    assert!(only(json!({ "status": "404" })).iter().any(|record| record["url"] == fixtures.url("/api/status/404")));
    assert_eq!(only(json!({ "failed_only": true })).len(), 3, "network failures, not HTTP errors");
    assert!(only(json!({ "resource_type": "Image" })).iter().all(|record| record["url"] == fixtures.url("/api/pixel.png")));
    assert!(only(json!({ "url_includes": "/api/echo" }))[0]["request_headers"].is_null(), "headers only when asked");
    let with_headers = session.ok("requests", json!({ "url_includes": "/f/network.html", "headers": true }))["requests"][0].clone();
    assert!(with_headers["request_headers"].as_array().unwrap().iter().any(|header| header["name"] == "user-agent"));
    let agent =
        with_headers["request_headers"].as_array().unwrap().iter().find(|header| header["name"] == "user-agent").unwrap()["value"].clone();
    assert!(!agent.as_str().unwrap().contains("malo/"), "the tab token never leaves the machine: {agent}");
    assert!(fixtures.seen("/f/network.html")[0].user_agent.as_deref().is_some_and(|agent| !agent.contains("malo/")));
    // Cursor, paging from the oldest.
    let page = session.ok("requests", json!({ "after": 0, "limit": 2 }));
    assert_eq!(page["has_more"], true);
    let next = session.ok("requests", json!({ "after": page["cursor"], "limit": 500 }));
    assert_eq!(next["requests"].as_array().unwrap().len(), requests.len() - 2);
    for bad in [json!({ "status": "4x" }), json!({ "limit": 0 }), json!({ "resource_type": "Video" })] {
        session.fails("requests", bad, 400, "E_BAD_REQUEST");
    }
    // Another tab has its own log.
    let other = session.ok("tab_new", json!({ "url": fixtures.url("/f/hello.html") }))["tab"].as_str().unwrap().to_string();
    let theirs = session.ok("requests", json!({ "tab": other }))["requests"].as_array().unwrap().clone();
    assert!(!theirs.is_empty() && theirs.iter().all(|record| record["tab"] == other && record["url"] != fixtures.url("/f/network.html")));
    // A HAR file of the first tab.
    let har = session.ok("export_har", json!({ "tab": tab }));
    let file: Value = serde_json::from_slice(&std::fs::read(har["path"].as_str().unwrap()).unwrap()).unwrap();
    assert_eq!(file["log"]["version"], "1.2");
    assert_eq!(file["log"]["entries"].as_array().unwrap().len(), har["entries"].as_u64().unwrap() as usize);
    assert!(har["path"].as_str().unwrap().contains("/artifacts/"));
}

#[test]
fn interception_rules_match_fail_and_fulfill_per_tab() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/network.html"));
    let add = |input: Value| session.ok("add_intercept_rule", input);

    // Fulfill answers a fetch without the server seeing it; fail is a network error.
    let fulfilled =
        add(json!({ "url_includes": "/api/items.json", "action": "fulfill", "status_code": 201, "content_type": "application/json",
        "response_headers": { "x-from": "malo" }, "body": "{\"items\":[9]}" }));
    let rule_id = fulfilled["rule_id"].as_str().unwrap().to_string();
    let answer = probe(&session, &fixtures.url("/api/items.json"), json!({}));
    assert_eq!(
        (answer["status"].clone(), answer["text"].clone(), answer["type"].clone()),
        (json!(201), json!("{\"items\":[9]}"), json!("application/json"))
    );
    assert!(fixtures.seen("/api/items.json").is_empty(), "the server saw nothing");
    add(json!({ "urlPattern": "*/api/status/5??", "action": "fail" }));
    assert!(probe(&session, &fixtures.url("/api/status/503"), json!({}))["failed"].is_string());
    assert!(fixtures.seen("/api/status/503").is_empty());
    assert_eq!(probe(&session, &fixtures.url("/api/status/404"), json!({}))["status"], 404, "a miss continues");
    let logged = session.ok("requests", json!({ "url_includes": "/api/status/503" }))["requests"][0].clone();
    assert_eq!((logged["action"].clone(), logged["matched_by"].clone()), (json!("fail"), json!(["url_pattern"])));
    assert!(logged["failure"].as_str().unwrap().starts_with("blocked_by_rule"), "{logged}");
    assert_eq!(session.ok("requests", json!({ "url_includes": "/api/items.json" }))["requests"][0]["matched_rule_id"], rule_id);

    // Regex, method, resource type, headers; priority, then creation order.
    add(json!({ "url_regex": "/api/count/\\d+$", "method": "POST", "action": "fulfill", "body": "post" }));
    add(json!({ "url_regex": "/api/count/\\d+$", "action": "fulfill", "body": "any" }));
    add(json!({ "url_regex": "/api/count/\\d+$", "action": "fulfill", "body": "first of equals", "priority": 1 }));
    add(json!({ "url_regex": "/api/count/\\d+$", "action": "fulfill", "body": "second of equals", "priority": 1 }));
    add(
        json!({ "url_includes": "/api/count/", "header_matchers": [{ "name": "X-Test", "value_regex": "^yes$" }], "action": "fulfill", "body": "header", "priority": 9 }),
    );
    assert_eq!(probe(&session, &fixtures.url("/api/count/1"), json!({}))["text"], "first of equals");
    assert_eq!(
        probe(&session, &fixtures.url("/api/count/1"), json!({ "method": "POST" }))["text"],
        "first of equals",
        "priority beats age"
    );
    assert_eq!(probe(&session, &fixtures.url("/api/count/1"), json!({ "headers": { "x-test": "yes" } }))["text"], "header");
    assert_eq!(probe(&session, &fixtures.url("/api/count/1"), json!({ "headers": { "x-test": "no" } }))["text"], "first of equals");
    add(json!({ "resource_type": "Image", "action": "fulfill", "content_type": "image/png", "body": "not really a png" }));
    session.navigate(&fixtures.url("/f/network.html"));
    assert!(fixtures.seen("/api/pixel.png").len() == 1, "the image was fulfilled on the second load");
    let listed = session.ok("list_intercept_rules", json!({}))["rules"].as_array().unwrap().clone();
    assert_eq!(listed.len(), 8);
    assert_eq!(listed[0]["priority"], 9, "in the order they are tried");
    assert_eq!(listed[0]["header_matchers"], 1);

    // A document fulfilled; a rule of one tab never touches another.
    add(
        json!({ "url_includes": "/f/hello.html", "action": "fulfill", "content_type": "text/html", "body": "<title>made up</title>made up" }),
    );
    assert_eq!(session.navigate(&fixtures.url("/f/hello.html"))["title"], "made up");
    assert!(fixtures.seen("/f/hello.html").is_empty());
    session.ok("tab_new", json!({ "url": fixtures.url("/f/hello.html") }));
    assert_eq!(session.observe()["title"], "Hello fixture", "the new tab has no rules");
    assert_eq!(session.ok("list_intercept_rules", json!({}))["rules"], json!([]));

    // Remove; unknown ids; every validation error of the seed.
    assert_eq!(session.ok("remove_intercept_rule", json!({ "rule_id": rule_id }))["removed"], true);
    session.fails("remove_intercept_rule", json!({ "rule_id": rule_id }), 404, "E_NOT_FOUND");
    for (input, reason) in [
        (json!({ "action": "fail" }), Some("no_condition")),
        (json!({ "action": "fail", "url_pattern": "*", "url_regex": ".*" }), Some("pattern_and_regex")),
        (json!({ "action": "fail", "url_regex": "" }), Some("empty_regex")),
        (json!({ "action": "fail", "url_regex": "([" }), Some("invalid_regex")),
        (json!({ "action": "fail", "header_matchers": [{ "value_includes": "x" }] }), None),
        (json!({ "action": "fail", "header_matchers": [{ "name": "a" }] }), Some("matcher_without_value")),
        (json!({ "action": "fail", "header_matchers": { "name": "a" } }), None),
        (json!({ "action": "fail", "url_includes": "x", "priority": 1.5 }), None),
        (json!({ "action": "explode", "url_includes": "x" }), None),
        (json!({ "action": "fail", "url_includes": "x", "tab": "zzzz" }), None),
    ] {
        let status = if input["tab"] == "zzzz" { 404 } else { 400 };
        let code = if status == 404 { "E_TAB_NOT_FOUND" } else { "E_BAD_REQUEST" };
        let error = session.fails("add_intercept_rule", input.clone(), status, code);
        if let Some(reason) = reason {
            assert_eq!(error["details"]["reason"], reason, "{input}: {error}");
        }
    }
}

#[test]
fn console_lines_and_page_errors_from_every_frame() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/network.html"));
    let lines = session.ok("console", json!({}));
    let texts: Vec<(String, String)> = lines["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| (entry["level"].as_str().unwrap().to_string(), entry["text"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(texts[0], ("log".to_string(), "hello from the page {\"answer\":42}".to_string()), "{lines}");
    assert_eq!(texts.iter().map(|(level, _)| level.as_str()).collect::<Vec<_>>(), ["log", "info", "warn", "error", "debug"]);
    assert!(texts[3].1.starts_with("something broke: ") && texts[3].1.contains("boom"));
    let first = &lines["entries"][0];
    assert_eq!(first["frame_url"], fixtures.url("/f/network.html"));
    assert!(first["line"].as_u64().is_some_and(|line| line > 0), "source line: {first}");
    assert!(first["seq"].as_u64().unwrap() > 0 && lines["cursor"].is_u64());
    assert_eq!(session.ok("console", json!({ "level": "warn" }))["entries"].as_array().unwrap().len(), 1);
    assert_eq!(session.ok("console", json!({ "text_includes": "debug" }))["entries"][0]["level"], "debug");
    let cursor = lines["cursor"].clone();

    // An uncaught exception and an unhandled rejection, with stacks.
    session.ok("click", json!({ "selector": "#throw" }));
    session.ok("click", json!({ "selector": "#reject" }));
    assert!(eventually(Duration::from_secs(5), || session.ok("page_errors", json!({}))["entries"].as_array().unwrap().len() == 2));
    let errors = session.ok("page_errors", json!({}))["entries"].as_array().unwrap().clone();
    assert_eq!((errors[0]["kind"].clone(), errors[1]["kind"].clone()), (json!("exception"), json!("unhandled_rejection")));
    assert!(errors[0]["message"].as_str().unwrap().contains("thrown on purpose"));
    assert!(errors[0]["stack"].as_str().is_some_and(|stack| !stack.is_empty()), "{}", errors[0]);
    assert!(errors[1]["message"].as_str().unwrap().contains("rejected on purpose") && errors[1]["stack"].is_string());
    assert_eq!(session.ok("console", json!({ "after": cursor }))["entries"], json!([]), "nothing new in the console");

    // A cross-origin frame's console and errors land in the same tab.
    let frame_url = format!("http://localhost:{}/f/console-frame.html", fixtures.port);
    session
        .page_value(&format!("document.body.insertAdjacentHTML('beforeend', {})", json!(format!("<iframe src='{frame_url}'></iframe>"))));
    assert!(eventually(Duration::from_secs(5), || {
        session.ok("console", json!({ "text_includes": "from the frame" }))["entries"].as_array().unwrap().len() == 1
    }));
    let framed = session.ok("console", json!({ "text_includes": "from the frame" }))["entries"][0].clone();
    assert_eq!((framed["level"].clone(), framed["frame_url"].clone()), (json!("warn"), json!(frame_url)));
    assert!(eventually(Duration::from_secs(5), || session.ok("page_errors", json!({}))["entries"].as_array().unwrap().len() == 3));
    let frame_error = session.ok("page_errors", json!({ "after": errors[1]["seq"] }))["entries"][0].clone();
    assert!(frame_error["message"].as_str().unwrap().contains("the frame threw") && frame_error["frame_url"] == frame_url);
}

#[test]
fn a_page_that_hijacks_its_console_cannot_break_capture() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/hijack.html"));
    assert!(eventually(Duration::from_secs(5), || session.title() == "hijack done"));
    let texts: Vec<String> = session.ok("console", json!({}))["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(texts, ["before the swap", "warn still works"], "its own hidden line stays hidden, the rest is captured");
    let errors: Vec<String> = session.ok("page_errors", json!({}))["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["message"].as_str().unwrap().to_string())
        .collect();
    assert!(errors.iter().any(|message| message.contains("uncaught after the swap")), "{errors:?}");
    // And the agent still works.
    assert_eq!(session.ok("snapshot", json!({}))["title"], "hijack done");
}

#[test]
fn https_goes_through_the_proxy_and_bad_certificates_still_fail() {
    let ca = TestCa::new();
    let daemon = Daemon::start_with(ca.trusted_by_daemon());
    let fixtures = Fixtures::start();
    let trusted = fixtures.start_tls(Some(&ca));
    let untrusted = fixtures.start_tls(None);
    let session = daemon.lease("agent-a").session();
    let url = format!("https://127.0.0.1:{trusted}/f/hello.html");
    session.ok("network_capture", json!({ "url_prefixes": [format!("https://127.0.0.1:{trusted}/")] }));
    let loaded = session.navigate(&url);
    assert_eq!((loaded["navigation"]["http_status"].clone(), loaded["title"].clone()), (json!(200), json!("Hello fixture")));
    let captured = response_for(&session, &url);
    assert!(captured["body"].as_str().unwrap().contains("Hello from the fixture server"), "{captured}");
    // A certificate nobody trusts fails the navigation, as without the proxy.
    let failed = session.post("/navigate", json!({ "url": format!("https://127.0.0.1:{untrusted}/f/hello.html") }));
    assert_eq!((failed.status, failed.code()), (502, "E_NAVIGATION_FAILED"), "{}", failed.body);
    assert_eq!(failed.body["error"]["details"]["navigation"]["net_error"], "tls_error", "{}", failed.body);
    // Rules and the request log work inside TLS too.
    session.ok("add_intercept_rule", json!({ "url_includes": "/api/items.json", "action": "fulfill", "body": "from the rule" }));
    session.navigate(&format!("https://127.0.0.1:{trusted}/f/network.html"));
    assert_eq!(probe(&session, &format!("https://127.0.0.1:{trusted}/api/items.json"), json!({}))["text"], "from the rule");
    assert!(fixtures.seen("/api/items.json").is_empty());
}

#[test]
fn websockets_work_through_the_session() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let echo = websocket_echo();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/network.html"));
    let echoed = session.page_value(&format!(
        "new Promise((resolve) => {{ const socket = new WebSocket('ws://127.0.0.1:{echo}/'); \
         socket.onopen = () => socket.send('ping through malo'); socket.onmessage = (event) => {{ resolve(event.data); socket.close(); }}; \
         socket.onerror = () => resolve('error'); setTimeout(() => resolve('timeout'), 5000); }})"
    ));
    assert_eq!(echoed, "ping through malo");
    let logged = session.ok("requests", json!({ "resource_type": "WebSocket" }))["requests"][0].clone();
    assert_eq!((logged["status"].clone(), logged["url"].clone()), (json!(101), json!(format!("http://127.0.0.1:{echo}/"))));
}

#[test]
fn pages_cannot_reach_the_daemon_in_any_way() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let lease = daemon.lease("agent-a");
    let session = lease.session();
    session.navigate(&fixtures.url("/f/network.html"));
    for url in [
        format!("http://127.0.0.1:{}/v1/health", daemon.port),
        format!("http://localhost:{}/v1/health", daemon.port),
        format!("http://127.0.0.1:{}/v1/openapi.json", lease.port),
        format!("http://[::1]:{}/v1/health", daemon.port),
        format!("http://0.0.0.0:{}/v1/health", lease.port),
    ] {
        let answer = probe(&session, &url, json!({}));
        assert!(answer["failed"].is_string(), "{url} answered {answer}");
    }
    let navigated = session.post("/navigate", json!({ "url": format!("http://127.0.0.1:{}/v1/openapi.json", lease.port) }));
    assert_eq!(navigated.code(), "E_NAVIGATION_FAILED", "{}", navigated.body);
    assert_eq!(navigated.body["error"]["details"]["navigation"]["net_error"], "blocked");
}

#[test]
fn requests_take_a_status_as_a_number_a_string_of_digits_or_a_class() {
    // Regression: `requests {"status": 200}` was refused ("expected a string").
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/network.html"));
    session.ok("click", json!({ "selector": "#more" }));
    assert!(eventually(Duration::from_secs(10), || session.page_value("document.getElementById('more-result').textContent")
        == "204,200,200,200,500"));
    let statuses = |status: Value| -> Vec<u64> {
        let answer = session.ok("requests", json!({ "status": status, "after": 0, "limit": 500 }));
        answer["requests"].as_array().unwrap().iter().map(|record| record["status"].as_u64().unwrap()).collect()
    };
    let ok = statuses(json!(200));
    assert!(ok.len() >= 4 && ok.iter().all(|status| *status == 200), "{ok:?}");
    assert_eq!(statuses(json!("200")), ok);
    assert_eq!(statuses(json!("5xx")), [500]);
    let successes = statuses(json!("2XX"));
    assert!(successes.contains(&204) && successes.contains(&200) && !successes.contains(&500), "{successes:?}");
    assert_eq!(statuses(json!(404)), Vec::<u64>::new());
    // Cursors and limits as strings of digits too, on every list tool.
    assert_eq!(session.ok("requests", json!({ "after": "0", "limit": "2" }))["requests"].as_array().unwrap().len(), 2);
    assert_eq!(session.ok("console", json!({ "after": "0", "limit": "1" }))["entries"].as_array().unwrap().len(), 1);
    assert_eq!(session.ok("events", json!({ "limit": "1" }))["events"].as_array().unwrap().len(), 1);
    assert_eq!(session.ok("responses", json!({ "limit": "1" }))["responses"].as_array().unwrap().len(), 1);
    for bad in
        [json!({ "status": 42 }), json!({ "status": "4x" }), json!({ "status": true }), json!({ "limit": "-1" }), json!({ "after": "x" })]
    {
        let error = session.fails("requests", bad.clone(), 400, "E_BAD_REQUEST");
        assert!(error["message"].as_str().unwrap().contains("invalid input for requests"), "{bad}: {error}");
    }
}

#[test]
fn pages_keep_native_fetch_xhr_and_websocket_while_the_log_tells_them_apart() {
    // Regression: XMLHttpRequest.prototype.open was wrapped in every page and frame, which
    // a page could read (its source was not "[native code]").
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/natives.html"));
    let natives = session.page_value("natives()");
    for name in ["open", "send", "fetch", "WebSocket", "setRequestHeader"] {
        assert!(natives[name].as_str().unwrap().contains("[native code]"), "{name} is not the browser's own: {natives}");
    }
    assert_eq!(session.page_value("both()"), "done");
    // A cross-origin frame (localhost against 127.0.0.1) checks its own and makes its own.
    let frame_url = format!("http://localhost:{}/f/natives-frame.html", fixtures.port);
    session
        .page_value(&format!("document.body.insertAdjacentHTML('beforeend', {})", json!(format!("<iframe src='{frame_url}'></iframe>"))));
    assert!(eventually(Duration::from_secs(10), || session.page_value("Boolean(window.frameReport && window.frameReport.done)") == true));
    let report = session.page_value("window.frameReport.natives");
    for name in ["open", "send", "fetch", "WebSocket"] {
        assert!(report[name].as_str().unwrap().contains("[native code]"), "{name} in the frame: {report}");
    }
    // The request log still labels documents, images, fetches and XHRs, in both frames.
    let expected = [
        ("/f/natives.html", "Document"),
        ("/api/pixel.png", "Image"),
        ("/api/count/page-fetch", "Fetch"),
        ("/api/count/page-xhr", "XHR"),
        ("/f/natives-frame.html", "Document"),
        ("/api/count/frame-fetch", "Fetch"),
        ("/api/count/frame-xhr", "XHR"),
    ];
    let mut seen = Vec::new();
    let labelled = eventually(Duration::from_secs(5), || {
        let log = session.ok("requests", json!({ "after": 0, "limit": 500 }));
        seen = expected
            .iter()
            .map(|(path, _)| {
                let record = log["requests"].as_array().unwrap().iter().find(|record| record["url"].as_str().unwrap().ends_with(path));
                record.map(|record| record["resource_type"].as_str().unwrap().to_string()).unwrap_or_default()
            })
            .collect();
        seen.iter().zip(expected.iter()).all(|(kind, (_, wanted))| kind == wanted)
    });
    assert!(labelled, "expected {expected:?}, the log says {seen:?}");
}

#[test]
fn reads_without_a_cursor_answer_the_newest_entries() {
    // Regression: after 250 console lines, `console {}` answered the oldest 50 kept.
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/hello.html"));
    session.page_value("(() => { for (let i = 1; i <= 250; i++) console.log('line ' + i); return true; })()");
    let texts = |answer: &Value| -> Vec<String> {
        answer["entries"].as_array().unwrap().iter().map(|entry| entry["text"].as_str().unwrap().to_string()).collect()
    };
    let mut newest = Value::Null;
    assert!(
        eventually(Duration::from_secs(5), || {
            newest = session.ok("console", json!({}));
            texts(&newest).last().is_some_and(|text| text == "line 250")
        }),
        "{newest}"
    );
    let lines = texts(&newest);
    assert_eq!((lines.len(), lines[0].as_str()), (50, "line 201"), "the newest 50, oldest first");
    assert_eq!((newest["older_omitted"].clone(), newest["has_more"].clone()), (json!(150), json!(false)), "200 kept");
    assert_eq!(newest["cursor"], newest["entries"][49]["seq"]);
    // With a cursor, paging forward is as before: from the oldest kept.
    let oldest = session.ok("console", json!({ "after": 0 }));
    assert_eq!((texts(&oldest)[0].as_str(), oldest["has_more"].clone()), ("line 51", json!(true)));
    assert!(oldest.get("older_omitted").is_none(), "{oldest}");
    assert_eq!(session.ok("console", json!({ "after": newest["cursor"] }))["entries"], json!([]));

    // The same for the request log and the event log.
    session.page_value(
        "Promise.all(Array.from({ length: 10 }, (_, i) => fetch('/api/count/' + i, { cache: 'no-store' }).then((r) => r.text())))",
    );
    let recent = session.ok("requests", json!({ "limit": 3 }));
    let urls: Vec<&str> = recent["requests"].as_array().unwrap().iter().map(|record| record["url"].as_str().unwrap()).collect();
    assert!(urls.iter().all(|url| url.contains("/api/count/")) && urls.len() == 3, "{recent}");
    assert!(recent["older_omitted"].as_u64().unwrap() >= 8, "{recent}");
    let events = session.ok("events", json!({ "limit": 1 }));
    let last_event = &events["events"][0];
    assert_eq!((last_event["type"].clone(), last_event["tool"].clone()), (json!("action"), json!("requests")), "{events}");
    assert!(events["older_omitted"].as_u64().unwrap() > 0);
}

/// The requests fetches.html makes: the document and 13 fetches.
const FETCHES_PAGE_REQUESTS: usize = 14;

/// The lines of a compact request list that stand for a request.
fn request_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|line| line.starts_with("req-")).collect()
}

/// Whether `text` lists fetches.html's requests, all done: one line each, with its id,
/// method, status, type, size, duration and URL (a path on the page's origin).
fn lists_fetches_done(text: &str) -> bool {
    let line = regex::Regex::new(r"^req-\d+ GET 200 (Document|Fetch) \d+(\.\d)?(B|KiB) \d+ms /\S+$").unwrap();
    let lines = request_lines(text);
    lines.len() == FETCHES_PAGE_REQUESTS && lines.iter().all(|each| line.is_match(each))
}

/// Checks a compact list of fetches.html's requests beyond its lines' shape: the paging
/// line, the origin line, the long URL cut in the middle; answers the id of /api/count/3.
fn check_fetches_list(text: &str, fixtures: &Fixtures) -> String {
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with(&format!("{FETCHES_PAGE_REQUESTS} requests (oldest first) · cursor ")), "{text}");
    assert!(lines[0].ends_with(" · has_more false · older_omitted 0"), "{text}");
    assert_eq!(lines[1], format!("URLs starting with / are on {} (the tab's page)", fixtures.url("")));
    let long = request_lines(text).into_iter().find(|line| line.contains("/api/count/long?pad=")).unwrap();
    let url = long.rsplit(' ').next().unwrap();
    assert_eq!(url.chars().count(), 200, "{long}");
    let (head, tail) = url.split_once('…').unwrap();
    assert!(head.starts_with("/api/count/long?pad=xxx") && tail.ends_with("xxx&end=tail-marker"), "{long}");
    let third = request_lines(text).into_iter().find(|line| line.ends_with(" /api/count/3")).unwrap();
    third.split(' ').next().unwrap().to_string()
}

/// Checks the whole record of /api/count/3 as text: its line with the whole URL, then its
/// start, headers sent and received, and body.
fn check_whole_record(text: &str, fixtures: &Fixtures) {
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("1 request (oldest first) · cursor "), "{text}");
    assert!(lines[1].starts_with("req-") && lines[1].ends_with(&format!(" {}", fixtures.url("/api/count/3"))), "{text}");
    assert!(lines[2].starts_with("  started ") && lines[2].contains(" · mime application/json · sent 0B"), "{text}");
    assert!(lines.iter().any(|line| line.starts_with("  > accept: ")), "{text}");
    assert!(lines.contains(&"  < content-type: application/json"), "{text}");
    assert!(lines.contains(&"  body: none (not_subscribed)"), "{text}");
}

#[test]
fn request_lists_over_mcp_are_a_line_per_request_and_an_id_gives_the_whole_record() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let mut agent = McpProcess::start(&daemon, "agent-lines");
    let (failed, text) = agent.call("browser_navigate", json!({ "url": fixtures.url("/f/fetches.html") }));
    assert!(!failed, "{text}");
    let mut listed = String::new();
    let done = eventually(Duration::from_secs(10), || {
        listed = agent.call("browser_requests", json!({})).1;
        lists_fetches_done(&listed)
    });
    assert!(done, "{listed}");
    let id = check_fetches_list(&listed, &fixtures);
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), FETCHES_PAGE_REQUESTS + 3, "the paging and origin lines, a line per request, MCP's tab and seq: {listed}");
    assert!(lines[lines.len() - 1].starts_with("[tab "), "{listed}");

    // An id gives the whole record; so does `detail`, for every request listed.
    let (failed, whole) = agent.call("browser_requests", json!({ "id": id }));
    assert!(!failed, "{whole}");
    check_whole_record(&whole, &fixtures);
    let (_, detailed) = agent.call("browser_requests", json!({ "detail": true, "url_includes": "/api/count/1" }));
    assert_eq!(request_lines(&detailed).len(), 3, "/api/count/1, 10 and 11: {detailed}");
    assert_eq!(detailed.lines().filter(|line| *line == "  < content-type: application/json").count(), 3, "{detailed}");
    // JSON when asked for; an id not in the log, or with filters, is refused.
    let (_, records) = agent.call("browser_requests", json!({ "format": "json" }));
    let records: Value = serde_json::from_str(&records).unwrap();
    assert_eq!(records["requests"].as_array().unwrap().len(), FETCHES_PAGE_REQUESTS, "{records}");
    assert!(records["requests"][0].get("request_headers").is_none(), "{records}");
    let (failed, text) = agent.call("browser_requests", json!({ "id": "req-999999" }));
    assert!(failed && text.starts_with("E_NOT_FOUND"), "{text}");
    let (failed, text) = agent.call("browser_requests", json!({ "id": id, "url_includes": "/api" }));
    assert!(failed && text.starts_with("E_BAD_REQUEST"), "{text}");
}

#[test]
fn request_lists_over_http_stay_records_unless_asked_for_text() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/fetches.html"));
    let mut text = Value::Null;
    let done = eventually(Duration::from_secs(10), || {
        text = session.ok("requests", json!({ "format": "text" }));
        lists_fetches_done(text["text"].as_str().unwrap())
    });
    assert!(done, "{text}");
    assert_eq!((text["format"].clone(), text["count"].clone(), text["has_more"].clone()), (json!("text"), json!(14), json!(false)));
    let id = check_fetches_list(text["text"].as_str().unwrap(), &fixtures);
    // The default answer is the records, as before: no headers, no body.
    let records = session.ok("requests", json!({}));
    let fields: Vec<&str> = records.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(fields, ["cursor", "has_more", "older_omitted", "requests"], "{records}");
    let first = records["requests"][0].as_object().unwrap();
    assert!(["request_headers", "response_headers", "body", "body_error"].iter().all(|field| !first.contains_key(*field)), "{records}");
    // `detail` (or its former name, `headers`) and `id` give whole records.
    for input in [
        json!({ "detail": true, "url_includes": "/api/count/3" }),
        json!({ "headers": true, "url_includes": "/api/count/3" }),
        json!({ "id": id }),
    ] {
        let whole = session.ok("requests", input.clone())["requests"][0].clone();
        assert_eq!(whole["id"], id, "{input}: {whole}");
        assert!(whole["request_headers"].as_array().unwrap().iter().any(|header| header["name"] == "accept"), "{whole}");
        assert_eq!((whole["body"].clone(), whole["body_error"].clone()), (Value::Null, json!("not_subscribed")), "{whole}");
    }
    check_whole_record(session.ok("requests", json!({ "id": id, "format": "text" }))["text"].as_str().unwrap(), &fixtures);
    session.fails("requests", json!({ "id": "req-999999" }), 404, "E_NOT_FOUND");
    session.fails("requests", json!({ "id": id, "limit": 5 }), 400, "E_BAD_REQUEST");
}

#[test]
fn the_cli_lists_requests_a_line_each() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let out = TempDir::new("requests-cli");
    let cli = |args: &[&str]| daemon.cli_text_in(&out.0, args);
    cli(&["session", "new"]);
    cli(&["navigate", "--url", &fixtures.url("/f/fetches.html")]);
    let mut listed = String::new();
    assert!(
        eventually(Duration::from_secs(10), || {
            listed = cli(&["requests"]);
            lists_fetches_done(&listed)
        }),
        "{listed}"
    );
    let id = check_fetches_list(&listed, &fixtures);
    assert_eq!(listed.lines().count(), FETCHES_PAGE_REQUESTS + 2, "{listed}");
    check_whole_record(&cli(&["requests", "--id", &id, "--format", "text"]), &fixtures);
    let records: Value = serde_json::from_str(&cli(&["requests", "--json"])).unwrap();
    assert_eq!(records["requests"].as_array().unwrap().len(), FETCHES_PAGE_REQUESTS, "{records}");
}
