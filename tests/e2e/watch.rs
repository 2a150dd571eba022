//! A person steps in: the takeover window shows the session's own page under a toolbar,
//! without taking focus unless asked; its address bar drives the session; Done hands it
//! back offscreen, unchanged. Under a real window manager (openbox) on Xvfb.

use std::process::Command;
use std::time::Duration;

use serde_json::json;

use crate::harness::*;

/// The RGB of a pixel of an X window, via ImageMagick.
fn pixel(window: &str, x: u32, y: u32) -> [u8; 3] {
    let dir = TempDir::new("shot");
    let path = dir.0.join("window.png");
    let status = Command::new("import")
        .args(["-window", window])
        .arg(&path)
        .env("DISPLAY", display())
        .status()
        .expect("ImageMagick import is needed");
    assert!(status.success());
    let image = image::open(&path).unwrap().to_rgb8();
    image.get_pixel(x, y).0
}

fn near(got: [u8; 3], want: [u8; 3]) -> bool {
    got.iter().zip(want).all(|(got, want)| got.abs_diff(want) < 16)
}

#[test]
fn a_person_takes_over_without_losing_focus_and_hands_the_session_back() {
    let _screen = shared_screen();
    let holder = window_manager_with_focused_window();
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session_sized(640, 480);
    session.navigate(&fixtures.url("/f/colors.html"));
    assert_eq!(xdotool(&["getactivewindow"]), holder);

    let shown = session.tool("watch", json!({ "show": true }));
    assert_eq!(shown.status, 200, "{}", shown.body);
    let window = visible_window("malo-browser");
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(xdotool(&["getactivewindow"]), holder, "focus:false must not take the person's focus");
    // Toolbar on top (its grey), the session's own page below (red, then blue).
    assert!(eventually(Duration::from_secs(5), || near(pixel(&window, 20, 100), [255, 0, 0])), "page top: {:?}", pixel(&window, 20, 100));
    assert!(near(pixel(&window, 300, 3), [0xe8, 0xea, 0xed]), "toolbar: {:?}", pixel(&window, 300, 3));
    assert!(near(pixel(&window, 20, 500), [0, 0, 255]), "page bottom: {:?}", pixel(&window, 20, 500));
    // The agent still works, and its screenshots never include the toolbar.
    let shot = session.get("/observe?mode=screenshot");
    assert_eq!(shot.body["screenshot"]["height"], 480);

    // focus:true brings it forward.
    session.tool("watch", json!({ "show": true, "focus": true }));
    assert!(eventually(Duration::from_secs(5), || xdotool(&["getactivewindow"]) == window), "focus:true did not activate the window");

    // The person types an address: the session goes there, and the agent sees it.
    xdotool(&["mousemove", "--window", &window, "300", "20", "click", "1"]);
    xdotool(&["key", "ctrl+a"]);
    xdotool(&["type", "--delay", "5", &fixtures.url("/f/hello.html")]);
    xdotool(&["key", "Return"]);
    assert!(
        eventually(Duration::from_secs(10), || session.observe()["url"] == fixtures.url("/f/hello.html")),
        "the address bar did not navigate: {}",
        session.observe()["url"]
    );

    // Done hands the session back: the window goes, the page stays as it was.
    xdotool(&["mousemove", "--window", &window, "600", "20", "click", "1"]);
    assert!(
        eventually(Duration::from_secs(5), || xdotool(&["search", "--onlyvisible", "--name", "malo-browser"]).is_empty()),
        "Done did not hide the window"
    );
    let snapshot = session.tool("snapshot", json!({ "format": "text" }));
    assert!(snapshot.body["result"]["text"].as_str().unwrap().starts_with("page: Hello fixture"), "{}", snapshot.body);
    let events = session.events(0).to_string();
    assert!(events.contains("watch_done"));
    // Nothing stays mapped, and the page still renders for the agent.
    let shot = session.get("/observe?mode=screenshot");
    assert_eq!(shot.body["screenshot"]["width"], 640);
    let hidden = session.tool("watch", json!({ "show": false }));
    assert_eq!(hidden.body["result"]["shown"], false);
    assert_eq!(mapped_windows_of(daemon.pid), Vec::<String>::new());
}

#[test]
fn a_person_logs_in_through_the_window_while_the_agent_waits() {
    let _screen = shared_screen();
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session_sized(640, 480);
    session.navigate(&fixtures.url("/f/login.html"));
    let waiting = {
        let session = session.clone();
        std::thread::spawn(move || session.tool("login", json!({ "mode": "watch", "focus": true, "timeout_ms": 30000 })))
    };
    let window = visible_window("log in for");
    assert!(eventually(Duration::from_secs(5), || xdotool(&["getactivewindow"]) == window));
    // The person: click the page, Tab to the username, type, Tab, type the password, Enter.
    xdotool(&["mousemove", "--window", &window, "320", "400", "click", "1"]);
    xdotool(&["key", "Tab"]);
    xdotool(&["type", "--delay", "5", "demo"]);
    xdotool(&["key", "Tab"]);
    xdotool(&["type", "--delay", "5", "s3cret-pass"]);
    xdotool(&["key", "Return"]);
    let answer = waiting.join().unwrap();
    assert_eq!(answer.status, 200, "{}", answer.body);
    let result = &answer.body["result"];
    assert_eq!((result["ok"].clone(), result["reason"].clone()), (json!(true), json!("success")), "{result}");
    assert_eq!(result["url"], fixtures.url("/f/welcome.html"));
    assert!(
        eventually(Duration::from_secs(5), || xdotool(&["search", "--onlyvisible", "--name", "log in for"]).is_empty()),
        "the window stayed after success"
    );
    assert_eq!(session.observe()["title"], "Welcome");
    assert!(!answer.text.contains("s3cret-pass"));
}

#[test]
fn with_keep_visible_done_hands_control_back_and_the_window_stays() {
    let _screen = shared_screen();
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session_sized(640, 480);
    session.navigate(&fixtures.url("/f/hello.html"));
    let shown = session.tool("watch", json!({ "show": true, "keep_visible": true }));
    assert_eq!(shown.status, 200, "{}", shown.body);
    let window = visible_window("malo-browser");
    std::thread::sleep(Duration::from_millis(500));
    // Done: control goes back (watch_done, which an agent's wait_for_event sees), the
    // window stays for the person.
    let waiting = {
        let session = session.clone();
        std::thread::spawn(move || session.tool("wait_for_event", json!({ "kind": "watch_done", "timeout_ms": 20000 })))
    };
    std::thread::sleep(Duration::from_millis(300));
    xdotool(&["mousemove", "--window", &window, "600", "20", "click", "1"]);
    assert!(eventually(Duration::from_secs(5), || session.events(0).to_string().contains("watch_done")), "Done was not recorded");
    let seen = waiting.join().unwrap();
    assert_eq!((seen.status, seen.body["result"]["event"]["type"].as_str()), (200, Some("watch_done")), "{}", seen.body);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(xdotool(&["search", "--onlyvisible", "--name", "malo-browser"]), window, "keep_visible: Done must not hide the window");
    let snapshot = session.tool("snapshot", json!({ "format": "text" }));
    assert!(snapshot.body["result"]["text"].as_str().unwrap().starts_with("page: Hello fixture"), "{}", snapshot.body);
    // watch {show: false} puts it away.
    assert_eq!(session.tool("watch", json!({ "show": false })).body["result"]["shown"], false);
    assert!(eventually(Duration::from_secs(5), || xdotool(&["search", "--onlyvisible", "--name", "malo-browser"]).is_empty()));
}

#[test]
fn a_session_on_a_persons_screen_is_never_reclaimed_as_idle() {
    let _screen = shared_screen();
    let daemon = Daemon::start_with(DaemonOptions { session_idle_seconds: 2, ..DaemonOptions::default() });
    let lease = daemon.lease("agent-a");
    let session = lease.session_sized(640, 480);
    // Listing is lease-level: it does not use the session.
    let open = || request(lease.port, "GET", "/v1/sessions", &lease.headers(), None).body["sessions"].as_array().unwrap().len() == 1;
    assert_eq!(session.tool("watch", json!({ "show": true })).status, 200);
    visible_window("malo-browser");
    // The person reads, types, thinks: longer than the idle limit, with no call from the agent.
    std::thread::sleep(Duration::from_millis(3500));
    assert!(open(), "the session was reclaimed under the person");
    assert_eq!(session.tool("watch", json!({ "show": false })).body["result"]["shown"], false);
    // Back offscreen and unused, it is idle again.
    assert!(eventually(Duration::from_secs(6), || !open()), "the idle session stayed");
}
