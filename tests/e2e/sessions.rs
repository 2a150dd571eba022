//! Hidden isolated sessions: navigation and settle, observe, screenshots, events,
//! history, isolation between sessions, and a page that behaves as visible.

use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::*;

#[test]
fn navigate_reports_status_and_settle_and_observe_sees_the_page() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session_sized(900, 700);
    assert_eq!(session.summary["profile"], Value::Null);
    assert_eq!(session.summary["width"], 900);
    assert!(session.summary["session_token"].as_str().unwrap().len() == 64);

    let result = session.navigate(&fixtures.url("/f/hello.html"));
    let navigation = &result["navigation"];
    assert_eq!(navigation["http_status"], 200);
    assert_eq!(navigation["net_error"], Value::Null);
    assert_eq!(result["title"], "Hello fixture");
    assert!(navigation["settle"]["stable_samples"].as_u64().unwrap() >= 2);
    assert_eq!(navigation["settle"]["timed_out"], false);
    assert_eq!(fixtures.seen("/f/hello.html").len(), 1, "the server saw the page load");

    let observed = session.observe();
    assert_eq!(observed["url"], fixtures.url("/f/hello.html"));
    assert_eq!(observed["title"], "Hello fixture");
    assert_eq!(observed["ready_state"], "complete");
    assert_eq!(observed["viewport"]["width"], 900);
    assert_eq!(observed["viewport"]["height"], 700);
    assert_eq!(observed["interactive_count"], 3, "link, button, input");
    assert!(observed["element_count"].as_u64().unwrap() >= 9);
    assert!(observed["text"].as_str().unwrap().contains("Hello from the fixture server"));

    let short = session.get("/observe?mode=light&max_chars=5");
    assert_eq!(short.body["text"], "Hello");
    assert_eq!(short.body["truncated"], true);

    // A 404 is a page like any other: reported, not an error.
    let missing = session.post("/navigate", json!({ "url": fixtures.url("/status/404") }));
    assert_eq!(missing.status, 200, "{}", missing.body);
    assert_eq!(missing.body["navigation"]["http_status"], 404);
}

#[test]
fn settle_waits_for_dom_and_network_quiet() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    let result = session.navigate(&fixtures.url("/f/grow.html"));
    let settle = &result["navigation"]["settle"];
    // The page grows for 600 ms after load and fetches a 300 ms resource.
    assert!(settle["waited_ms"].as_u64().unwrap() >= 550, "{settle}");
    assert_eq!(settle["network_idle"], true);
    assert_eq!(result["title"], "grown", "settle returned before the page stopped growing");
    assert_eq!(fixtures.seen("/slow").len(), 1);
    let grown = settle["dom_elements"].as_u64().unwrap();
    assert_eq!(session.observe()["element_count"].as_u64().unwrap(), grown);

    // settle_ms bounds the wait.
    let bounded = session.post("/navigate", json!({ "url": fixtures.url("/f/grow.html"), "settle_ms": 100 }));
    assert_eq!(bounded.status, 200);
    assert_eq!(bounded.body["navigation"]["settle"]["timed_out"], true);
    assert!(bounded.body["navigation"]["settle"]["waited_ms"].as_u64().unwrap() < 550);
}

#[test]
fn settle_waits_for_a_request_that_a_timer_starts_after_load() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    // The load itself is done before the fetch begins: only the window after it sees it.
    let result = session.navigate(&fixtures.url("/f/late-fetch.html"));
    let settle = &result["navigation"]["settle"];
    assert_eq!(fixtures.seen("/slow").len(), 1, "{result}");
    assert_eq!(settle["network_idle"], true, "{settle}");
    assert!(settle["waited_ms"].as_u64().unwrap() >= 250, "{settle}");
    assert_eq!(result["title"], "answered", "navigate returned before the fetch answered");
}

#[test]
fn a_failed_navigation_is_an_error_with_navigation_details() {
    let daemon = Daemon::start();
    let session = daemon.lease("agent-a").session();
    let closed_port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let failed = session.post("/navigate", json!({ "url": format!("http://127.0.0.1:{closed_port}/") }));
    assert_eq!((failed.status, failed.code()), (502, "E_NAVIGATION_FAILED"), "{}", failed.body);
    let navigation = &failed.body["error"]["details"]["navigation"];
    assert_eq!(navigation["net_error"], "connection_refused", "{navigation}");
    assert!(navigation["net_error_description"].as_str().unwrap().len() > 3);
    assert!(navigation["settle"]["waited_ms"].is_u64());
    let events = session.events(0);
    assert!(events["events"].as_array().unwrap().iter().any(|event| event["type"] == "load_failed"));
    // The session is still usable.
    assert_eq!(session.get("/observe").status, 200);
}

#[test]
fn screenshot_is_exactly_the_viewport_and_shows_the_page() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session_sized(640, 480);
    session.navigate(&fixtures.url("/f/colors.html"));
    let response = session.get("/observe?mode=screenshot&max_chars=200");
    assert_eq!(response.status, 200, "{}", response.text.chars().take(300).collect::<String>());
    let screenshot = &response.body["screenshot"];
    assert_eq!(screenshot["mime_type"], "image/png");
    use base64::Engine as _;
    let png = base64::engine::general_purpose::STANDARD.decode(screenshot["data"].as_str().unwrap()).unwrap();
    let image = image::load_from_memory(&png).unwrap().to_rgba8();
    assert_eq!(image.dimensions(), (640, 480));
    assert_eq!((screenshot["width"].as_u64(), screenshot["height"].as_u64()), (Some(640), Some(480)));
    let near = |pixel: &image::Rgba<u8>, want: [u8; 3]| pixel.0[..3].iter().zip(want).all(|(got, want)| got.abs_diff(want) < 8);
    assert!(near(image.get_pixel(10, 10), [255, 0, 0]), "top is red: {:?}", image.get_pixel(10, 10));
    assert!(near(image.get_pixel(630, 230), [255, 0, 0]));
    assert!(near(image.get_pixel(10, 470), [0, 0, 255]), "bottom is blue: {:?}", image.get_pixel(10, 470));
    assert!(near(image.get_pixel(630, 250), [0, 0, 255]));
    assert_eq!(response.body["title"], "colors", "the light fields come along");
}

#[test]
fn a_hidden_session_runs_timers_and_animation_frames_at_full_rate() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session_sized(800, 600);
    session.navigate(&fixtures.url("/f/rates.html"));
    assert!(eventually(Duration::from_secs(5), || session.title().starts_with('{')));
    let rates: Value = serde_json::from_str(&session.title()).unwrap();
    assert_eq!(rates["visibility"], "visible", "{rates}");
    assert_eq!(rates["hidden"], false);
    assert_eq!((rates["width"].as_u64(), rates["height"].as_u64()), (Some(800), Some(600)));
    // Unloaded, this page measures ~60 frames/s and ~95 timers/s (see the benchmark); a
    // visible(false) window gives ~0 and ~1. The bounds leave room for a machine whose two
    // cores run several other browsers' tests at once, and still tell the two apart.
    assert!(rates["frames_per_second"].as_u64().unwrap() >= 10, "{rates}");
    assert!(rates["timers_per_second"].as_u64().unwrap() >= 20, "{rates}");
    // And nothing is shown on screen.
    assert_eq!(mapped_windows_of(daemon.pid), Vec::<String>::new(), "a window is mapped on screen");
}

#[test]
fn sessions_do_not_share_cookies_storage_caches_or_service_workers() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let lease_a = daemon.lease("agent-a");
    let lease_b = daemon.lease("agent-b");
    let first = lease_a.session();
    let sibling = lease_a.session();
    let other_agent = lease_b.session();

    first.navigate(&fixtures.url("/set-cookie?value=first"));
    first.navigate(&fixtures.url("/f/storage.html?set=first"));
    assert_eq!(first.title(), "ls=first;cookie=marker=first; jsmarker=first");
    first.navigate(&fixtures.url("/echo"));
    let seen = fixtures.seen("/echo");
    assert_eq!(seen.last().unwrap().cookie.as_deref(), Some("marker=first; jsmarker=first"));

    for session in [&sibling, &other_agent] {
        session.navigate(&fixtures.url("/f/storage.html"));
        assert_eq!(session.title(), "ls=;cookie=", "storage leaked into {}", session.id);
        session.navigate(&fixtures.url("/echo"));
        assert_eq!(fixtures.seen("/echo").last().unwrap().cookie, None, "cookie leaked into {}", session.id);
    }

    // Nor caches (Cache Storage, the HTTP cache) or service workers: the first session
    // fills them and sees them, the others see none.
    let isolation = |session: &Session, query: &str| {
        session.navigate(&fixtures.url(&format!("/f/isolation.html{query}")));
        let mut title = String::new();
        assert!(
            eventually(Duration::from_secs(10), || {
                title = session.title();
                title.contains("http=") || title.contains("error=")
            }),
            "{title}"
        );
        title
    };
    assert_eq!(isolation(&first, "?set=first"), "cache=first;sw=1;http=1");
    assert_eq!(isolation(&first, ""), "cache=first;sw=1;http=1", "the first session's own caches serve it");
    assert_eq!(isolation(&sibling, ""), "cache=;sw=0;http=2", "caches leaked into the sibling");
    assert_eq!(isolation(&other_agent, ""), "cache=;sw=0;http=3", "caches leaked into another agent's session");

    // A new session after the first closes inherits nothing either.
    first.close();
    let later = lease_a.session();
    later.navigate(&fixtures.url("/f/storage.html"));
    assert_eq!(later.title(), "ls=;cookie=");
    assert_eq!(isolation(&later, ""), "cache=;sw=0;http=4");
}

#[test]
fn events_carry_actions_and_page_events_with_a_global_increasing_seq() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let lease = daemon.lease("agent-a");
    let one = lease.session();
    let two = lease.session();
    one.navigate(&fixtures.url("/f/hello.html"));
    two.navigate(&fixtures.url("/f/hello.html"));
    one.observe();

    let all = one.events(0);
    let events = all["events"].as_array().unwrap();
    let seqs: Vec<u64> = events.iter().map(|event| event["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|pair| pair[0] < pair[1]), "{seqs:?}");
    assert_eq!(all["cursor"], *seqs.last().unwrap());
    let kinds: Vec<&str> = events.iter().map(|event| event["type"].as_str().unwrap()).collect();
    for kind in ["session_created", "navigation", "load", "action"] {
        assert!(kinds.contains(&kind), "{kinds:?}");
    }
    let actions: Vec<&Value> = events.iter().filter(|event| event["type"] == "action").collect();
    assert_eq!(actions.iter().map(|event| event["tool"].as_str().unwrap()).collect::<Vec<_>>(), ["navigate", "observe"]);
    // The other session's events are its own, numbered from the same global counter.
    let other = two.events(0);
    let other_seqs: Vec<u64> = other["events"].as_array().unwrap().iter().map(|event| event["seq"].as_u64().unwrap()).collect();
    assert!(other_seqs.iter().all(|seq| !seqs.contains(seq)));
    // The cursor returns only what is new.
    let cursor = all["cursor"].as_u64().unwrap();
    assert!(one.events(cursor)["events"].as_array().unwrap().iter().all(|event| event["seq"].as_u64().unwrap() > cursor));
    one.get("/observe");
    let newer = one.events(cursor);
    assert_eq!(newer["events"].as_array().unwrap().len(), 1);
    let limited = one.get("/events?after=0&limit=2");
    assert_eq!(limited.body["events"].as_array().unwrap().len(), 2);
    assert_eq!(limited.body["has_more"], true);
}

#[test]
fn tools_catalogue_and_tool_calls_match_the_dedicated_routes() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let lease = daemon.lease("agent-a");
    let catalogue = request(lease.port, "GET", "/v1/tools", &lease.headers(), None);
    assert_eq!(catalogue.status, 200);
    let tools = catalogue.body["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    for name in ["navigate", "history", "observe", "events", "close"] {
        assert!(names.contains(&name), "{names:?}");
    }
    let navigate = tools.iter().find(|tool| tool["name"] == "navigate").unwrap();
    assert_eq!(navigate["input_schema"]["properties"]["url"]["type"], "string");

    let session = lease.session();
    let via_tool = session.tool("navigate", json!({ "url": fixtures.url("/f/hello.html") }));
    assert_eq!(via_tool.status, 200);
    assert_eq!(via_tool.body["tool"], "navigate");
    assert_eq!(via_tool.body["result"]["navigation"]["http_status"], 200);
    session.tool("navigate", json!({ "url": fixtures.url("/f/storage.html") }));

    let back = session.tool("history", json!({ "action": "back" }));
    assert_eq!(back.status, 200, "{}", back.body);
    assert_eq!(back.body["result"]["url"], fixtures.url("/f/hello.html"));
    let forward = session.tool("history", json!({ "action": "forward" }));
    assert_eq!(forward.body["result"]["url"], fixtures.url("/f/storage.html"));
    let reload = session.tool("history", json!({ "action": "reload" }));
    assert_eq!(reload.status, 200);
    assert_eq!(fixtures.seen("/f/storage.html").len(), 2, "reload fetched the page again");

    let observed = session.tool("observe", json!({ "max_chars": 10 }));
    assert_eq!(observed.body["result"]["url"], fixtures.url("/f/storage.html"));
    let events = session.tool("events", json!({ "after": 0, "limit": 1 }));
    assert_eq!(events.body["result"]["events"].as_array().unwrap().len(), 1);

    let closed = session.tool("close", json!({}));
    assert_eq!(closed.status, 200, "{}", closed.body);
    assert_eq!(closed.body["result"]["closed"], true);
    assert_eq!(session.get("/observe").code(), "E_SESSION_NOT_FOUND");
}

#[test]
fn pages_run_behind_the_daemon_in_the_cpu_queue() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/hello.html"));
    let web = web_processes(daemon.pid);
    assert_eq!(web.len(), 1, "one web process for one session");
    assert_eq!(nice_of(daemon.pid), nice_of(std::process::id()), "the daemon keeps the priority it was started with");
    assert_eq!(nice_of(web[0]), (nice_of(daemon.pid) + 10).min(19), "the page's web process runs at a lower priority");
}
