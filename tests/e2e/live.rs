//! The live view: a person in their own browser (Debian's Chromium, through playwright-core)
//! sees a hidden session of a daemon without a display and takes it over through a
//! one-time link, while the agent waits; the link refuses everyone and everything else.

use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};

use crate::harness::*;

fn headless(env: &[(&str, &str)]) -> DaemonOptions {
    DaemonOptions {
        headless: true,
        env: env.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect(),
        ..DaemonOptions::default()
    }
}

/// The `live_url` of the session's first `login_waiting` event, once it is there.
fn waiting_link(session: &Session) -> String {
    let mut link = String::new();
    assert!(
        eventually(Duration::from_secs(20), || {
            let events = session.events(0);
            let found = events["events"].as_array().into_iter().flatten().find(|event| event["type"] == "login_waiting").cloned();
            link = found.map(|event| event["live_url"].as_str().unwrap_or("").to_string()).unwrap_or_default();
            !link.is_empty()
        }),
        "no login_waiting event with a live_url"
    );
    link
}

/// The link's port and path.
fn port_and_path(link: &str) -> (u16, String) {
    let rest = link.strip_prefix("http://127.0.0.1:").expect("a loopback link");
    let (port, path) = rest.split_once('/').unwrap();
    (port.parse().unwrap(), format!("/{path}"))
}

/// A GET of the link's server with exactly these headers (Host first).
fn get(link: &str, path: &str, host: Option<&str>, extra: &[(&str, &str)]) -> Response {
    let (port, _) = port_and_path(link);
    let mut headers = vec![("Host".to_string(), host.map_or(format!("127.0.0.1:{port}"), str::to_string))];
    headers.extend(extra.iter().map(|(name, value)| (name.to_string(), value.to_string())));
    raw_request(port, "GET", path, &headers, None)
}

/// A picture as 32 x 24 grey levels, for a close comparison of two renderings.
fn thumbnail(bytes: &[u8]) -> Vec<u8> {
    image::load_from_memory(bytes).unwrap().resize_exact(32, 24, image::imageops::FilterType::Triangle).to_luma8().into_raw()
}

fn check<'a>(run: &'a ClientRun, name: &str) -> &'a Value {
    let (_, ok, seen) = run.checks.iter().find(|(check, ..)| check == name).unwrap_or_else(|| panic!("no check {name}: {}", run.output));
    assert!(ok, "{name}: {seen}\n{}", run.output);
    seen
}

#[test]
fn a_person_signs_in_with_a_second_step_through_the_live_view_in_chromium() {
    let fixtures = Fixtures::start();
    let daemon = Daemon::start_with(headless(&[]));
    let session = daemon.lease("agent-a").session_sized(800, 600);
    session.navigate(&fixtures.url("/f/login-2fa.html"));
    let own = session.ok("screenshot", json!({}));
    let own = base64::engine::general_purpose::STANDARD.decode(own["data"].as_str().unwrap()).unwrap();
    let waiting = {
        let session = session.clone();
        std::thread::spawn(move || {
            session.tool("login", json!({ "mode": "watch", "success_url_contains": "/f/welcome.html", "timeout_ms": 90000 }))
        })
    };
    let link = waiting_link(&session);
    assert_eq!(session.get("").body["live_url"], link, "the session's summary carries the link while the agent waits");
    let points = json!({ "username": [160, 96], "password": [160, 156], "signin": [100, 216], "code": [160, 96], "verify": [100, 156] });
    let run = run_client("live-view.mjs", &[&link, "login", &points.to_string()]);
    if !run.success {
        let seen = session.page_value("[location.href, document.querySelector('#u') && document.querySelector('#u').value, document.activeElement && document.activeElement.id]");
        panic!("the page saw {seen}\n{}", run.output);
    }
    assert_eq!(check(&run, "status"), 200);

    // The first frame shows the login page as the session's own screenshot does.
    let frame = check(&run, "first frame").as_str().unwrap().trim_start_matches("data:image/png;base64,").to_string();
    let frame = base64::engine::general_purpose::STANDARD.decode(frame).unwrap();
    let (seen, expected) = (thumbnail(&frame), thumbnail(&own));
    let difference = seen.iter().zip(&expected).map(|(a, b)| a.abs_diff(*b) as u64).sum::<u64>() / seen.len() as u64;
    assert!(difference <= 6, "the frame differs from the page by {difference} grey levels on average");
    assert!(check(&run, "second step shown").as_str().unwrap().contains("login-2fa-code"));

    let answer = waiting.join().unwrap();
    assert_eq!(answer.status, 200, "{}", answer.body);
    let result = &answer.body["result"];
    assert_eq!((result["ok"].clone(), result["reason"].clone()), (json!(true), json!("success")), "{result}");
    assert_eq!(result["url"], fixtures.url("/f/welcome.html"));
    assert_eq!(session.title(), "Welcome");
    assert!(check(&run, "ended").as_str().unwrap().contains("no longer waits"), "the person was told the view ended");

    // The wait is over: the link is gone, from the summary and from the server.
    let summary = session.get("").body;
    assert!(summary["live_url"].is_null() && summary["waiting_for_person"].is_null(), "{summary}");
    let (_, path) = port_and_path(&link);
    assert_eq!(get(&link, &path, None, &[]).status, 410);
    let capability = path.rsplit('/').next().unwrap();
    assert!(!daemon.stderr().contains(capability), "the capability reached the daemon's log");
    assert!(!answer.text.contains("s3cret-pass"));
}

#[test]
fn done_in_the_live_view_hands_the_session_back_to_the_waiting_agent() {
    let fixtures = Fixtures::start();
    let daemon = Daemon::start_with(headless(&[]));
    let session = daemon.lease("agent-a").session_sized(640, 480);
    session.navigate(&fixtures.url("/f/login.html"));
    let waiting = {
        let session = session.clone();
        std::thread::spawn(move || session.tool("login", json!({ "mode": "watch", "timeout_ms": 60000 })))
    };
    let link = waiting_link(&session);
    assert_eq!(session.get("").body["waiting_for_person"], "log in");
    let watcher = {
        let session = session.clone();
        std::thread::spawn(move || session.tool("wait_for_event", json!({ "kind": "watch_done", "timeout_ms": 60000 })))
    };
    let run = run_client("live-view.mjs", &[&link, "done"]);
    assert!(run.success, "{}", run.output);
    assert!(check(&run, "ended").as_str().unwrap().contains("handed back"), "{}", run.output);
    let answer = waiting.join().unwrap();
    let result = &answer.body["result"];
    assert_eq!(
        (result["ok"].clone(), result["reason"].clone(), result["signal"].clone()),
        (json!(true), json!("done"), json!("done_button")),
        "{result}"
    );
    let seen = watcher.join().unwrap();
    assert_eq!(seen.status, 200, "wait_for_event saw the Done: {}", seen.body);
    assert!(session.get("").body["waiting_for_person"].is_null());
    assert_eq!(get(&link, &port_and_path(&link).1, None, &[]).status, 410, "the link ended with the takeover");
}

#[test]
fn refused_links_show_a_clear_page_and_hand_nothing_over() {
    let fixtures = Fixtures::start();
    let daemon = Daemon::start_with(headless(&[("MALO_LIVE_EXPIRY_MS", "6000")]));
    let session = daemon.lease("agent-a").session_sized(640, 480);
    session.navigate(&fixtures.url("/f/hello.html"));

    // Expired unused.
    let first = session.ok("watch", json!({ "mode": "live" }));
    let expired = first["live_url"].as_str().unwrap().to_string();
    assert!(first["expires_at"].is_string(), "{first}");
    std::thread::sleep(Duration::from_millis(6500));
    let page = get(&expired, &port_and_path(&expired).1, None, &[]);
    assert_eq!(page.status, 410, "{}", page.text);
    assert!(page.text.contains("expired"), "{}", page.text);

    // A new link; forged, shortened and wrong-host requests get nothing.
    let link = session.ok("watch", json!({ "mode": "live" }))["live_url"].as_str().unwrap().to_string();
    let path = port_and_path(&link).1;
    let mut forged = path.clone();
    let last = forged.pop().unwrap();
    forged.push(if last == 'A' { 'B' } else { 'A' });
    assert_eq!(get(&link, &forged, None, &[]).status, 404);
    assert_eq!(get(&link, &path[..path.len() - 1], None, &[]).status, 404);
    assert_eq!(get(&link, &path, Some("evil.example"), &[]).status, 421, "a name that resolves here is not enough");

    // A WebSocket from a page of another origin (or of none) is refused before the link is even looked at.
    let upgrade = [
        ("Connection", "Upgrade"),
        ("Upgrade", "websocket"),
        ("Sec-WebSocket-Version", "13"),
        ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
    ];
    let ws = format!("{path}/ws");
    let mut hostile = upgrade.to_vec();
    hostile.push(("Origin", "http://evil.example"));
    assert_eq!(get(&link, &ws, None, &hostile).status, 403);
    assert_eq!(get(&link, &ws, None, &upgrade).status, 403, "no Origin at all");

    // The first browser claims the link; a second browser gets a clear page.
    let run = run_client("live-view.mjs", &[&link, "second"]);
    assert!(run.success, "{}", run.output);
    check(&run, "first frame");
    assert!(check(&run, "second page").as_str().unwrap().contains("another browser"), "{}", run.output);
    // The link's own origin without the claiming browser's cookie opens nothing either.
    let (port, _) = port_and_path(&link);
    let mut same_origin = upgrade.to_vec();
    let origin = format!("http://127.0.0.1:{port}");
    same_origin.push(("Origin", &origin));
    assert_eq!(get(&link, &ws, None, &same_origin).status, 409);

    // After the session closes, the link is over.
    assert_eq!(session.close().status, 200);
    let page = get(&link, &path, None, &[]);
    assert_eq!(page.status, 410, "{}", page.text);
    assert!(page.text.contains("closed"), "{}", page.text);
}

#[test]
fn a_watch_only_view_shows_frames_takes_no_input_and_maps_no_window() {
    let fixtures = Fixtures::start();
    // The run's screen: the private X server, or Wayland in the Wayland tier.
    let daemon = Daemon::start();
    let session = daemon.lease("agent-a").session_sized(640, 480);
    session.navigate(&fixtures.url("/f/actions.html"));
    let spot = session.page_value(
        "(() => { const box = document.querySelector('#user').getBoundingClientRect(); return [box.x + 10, box.y + box.height / 2]; })()",
    );
    let link = session.ok("watch", json!({ "mode": "live", "control": false }))["live_url"].as_str().unwrap().to_string();
    assert!(session.get("").body["waiting_for_person"].is_null(), "watch-only asks nothing of the person");
    let run = run_client("live-view.mjs", &[&link, "watch-only", &json!({ "field": spot }).to_string()]);
    assert!(run.success, "{}", run.output);
    check(&run, "first frame");
    check(&run, "done disabled");
    assert_eq!(session.page_value("document.querySelector('#user').value"), "", "the viewer's typing reached the page");
    assert_ne!(session.page_value("document.activeElement && document.activeElement.id"), "user", "the viewer's click reached the page");
    assert_eq!(mapped_windows_of(daemon.pid), Vec::<String>::new(), "the live view mapped a window");
}

#[test]
fn a_viewer_gone_for_the_grace_period_hands_the_session_back() {
    let fixtures = Fixtures::start();
    let daemon = Daemon::start_with(headless(&[("MALO_LIVE_GRACE_MS", "1500")]));
    let session = daemon.lease("agent-a").session_sized(640, 480);
    session.navigate(&fixtures.url("/f/login.html"));
    let waiting = {
        let session = session.clone();
        std::thread::spawn(move || session.tool("login", json!({ "mode": "watch", "timeout_ms": 60000 })))
    };
    let link = waiting_link(&session);
    // The person opens the view, sees the page, and closes the browser without Done.
    let run = run_client("live-view.mjs", &[&link, "leave"]);
    assert!(run.success, "{}", run.output);
    check(&run, "first frame");
    let answer = waiting.join().unwrap();
    let result = &answer.body["result"];
    assert_eq!((result["reason"].clone(), result["signal"].clone()), (json!("done"), json!("done_button")), "{result}");
    assert!(session.events(0).to_string().contains("watch_done"));
}

#[test]
fn a_session_in_the_takeover_window_shows_in_a_live_view_too() {
    let _screen = shared_screen();
    let fixtures = Fixtures::start();
    let daemon = Daemon::start();
    let session = daemon.lease("agent-a").session_sized(640, 480);
    session.navigate(&fixtures.url("/f/login.html"));
    assert_eq!(session.ok("watch", json!({ "show": true }))["shown"], true);
    visible_window("malo-browser");
    let link = session.ok("watch", json!({ "mode": "live" }))["live_url"].as_str().unwrap().to_string();
    let run = run_client("live-view.mjs", &[&link, "done"]);
    assert!(run.success, "{}", run.output);
    let frame = check(&run, "first frame").as_str().unwrap().trim_start_matches("data:image/png;base64,").to_string();
    let frame = base64::engine::general_purpose::STANDARD.decode(frame).unwrap();
    let own = session.ok("screenshot", json!({}));
    let own = base64::engine::general_purpose::STANDARD.decode(own["data"].as_str().unwrap()).unwrap();
    let (seen, expected) = (thumbnail(&frame), thumbnail(&own));
    let difference = seen.iter().zip(&expected).map(|(a, b)| a.abs_diff(*b) as u64).sum::<u64>() / seen.len() as u64;
    assert!(difference <= 6, "the frame from the window differs from the page by {difference} grey levels on average");
    // Done in the live view is the window's Done: it goes.
    assert!(
        eventually(Duration::from_secs(5), || xdotool(&["search", "--onlyvisible", "--name", "malo-browser"]).is_empty()),
        "the window stayed after Done in the live view"
    );
}
