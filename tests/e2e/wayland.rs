//! Wayland desktops, played by a private weston (headless backend). With XWayland there
//! (as on GNOME, KDE or sway), malo draws through it: everything works as on X11. On
//! Wayland alone, pages load, render and answer, the takeover window shows, and input
//! tools say plainly that the compositor offers no input seat instead of failing oddly.
//! Under sway (wlroots), which offers a seat, input works on Wayland alone too; the
//! takeover window's focus is the compositor's decision there, and malo says so.

use std::process::Command;

use serde_json::{json, Value};

use crate::harness::*;

/// The visible X windows titled `title` on weston's XWayland display.
fn xwayland_windows(title: &str) -> Vec<String> {
    let output = Command::new("xdotool")
        .args(["search", "--onlyvisible", "--name", title])
        .env("DISPLAY", &weston().2)
        .output()
        .expect("xdotool is needed");
    String::from_utf8_lossy(&output.stdout).lines().map(str::to_string).collect()
}

/// sway's windows, as (title, focused).
fn sway_windows() -> Vec<(String, bool)> {
    let output = Command::new("swaymsg").args(["-r", "-t", "get_tree"]).env("SWAYSOCK", &sway().2).output().expect("swaymsg is needed");
    let tree: Value = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
    let mut windows = Vec::new();
    let mut stack = vec![&tree];
    while let Some(node) = stack.pop() {
        if node["pid"].is_u64() {
            windows.push((node["name"].as_str().unwrap_or("").to_string(), node["focused"] == true));
        }
        for key in ["nodes", "floating_nodes"] {
            stack.extend(node[key].as_array().into_iter().flatten());
        }
    }
    windows
}

#[test]
fn on_a_wayland_desktop_with_xwayland_everything_works_through_it() {
    let fixtures = Fixtures::start();
    let daemon = Daemon::start_with(DaemonOptions { backend: Some("wayland"), ..DaemonOptions::default() });
    assert!(daemon.stderr().contains("through XWayland"), "{}", daemon.stderr());
    let session = daemon.lease("agent-a").session_sized(640, 480);
    session.navigate(&fixtures.url("/f/actions.html"));
    session.ok("click", json!({ "selector": "#save" }));
    session.ok("fill", json!({ "selector": "#user", "text": "on wayland" }));
    assert_eq!(session.page_value("document.querySelector('#status').textContent"), "Saved trusted 1");
    assert_eq!(session.page_value("document.querySelector('#user').value"), "on wayland");
    let shot = session.get("/observe?mode=screenshot");
    assert_eq!((shot.body["screenshot"]["width"].as_u64(), shot.body["screenshot"]["height"].as_u64()), (Some(640), Some(480)));
    // Hidden sessions map nothing; the takeover window appears on the desktop and goes.
    assert!(xwayland_windows("malo-browser").is_empty());
    assert_eq!(session.tool("watch", json!({ "show": true })).status, 200);
    assert!(eventually(std::time::Duration::from_secs(5), || xwayland_windows("malo-browser").len() == 1), "no takeover window");
    assert_eq!(session.tool("watch", json!({ "show": false })).status, 200);
    assert!(eventually(std::time::Duration::from_secs(5), || xwayland_windows("malo-browser").is_empty()), "the window stayed");
}

#[test]
fn on_wayland_alone_pages_work_and_input_says_the_compositor_has_no_seat() {
    let fixtures = Fixtures::start();
    let daemon = Daemon::start_with(DaemonOptions { backend: Some("wayland-native"), ..DaemonOptions::default() });
    assert!(daemon.stderr().contains("Wayland display"), "{}", daemon.stderr());
    let session = daemon.lease("agent-a").session_sized(640, 480);
    let navigated = session.navigate(&fixtures.url("/f/actions.html"));
    assert_eq!(navigated["navigation"]["http_status"], 200);
    let snapshot = session.ok("snapshot", json!({ "format": "text" }));
    assert!(snapshot.to_string().contains("button \\\"Save\\\""), "{snapshot}");
    assert_eq!(session.page_value("document.querySelectorAll('button').length").as_u64().map(|count| count > 3), Some(true));
    let shot = session.get("/observe?mode=screenshot");
    assert_eq!(shot.status, 200);
    assert!(shot.body["screenshot"]["bytes"].as_u64().unwrap() > 1000);
    // weston's headless backend offers no input seat: input tools say so, nothing else breaks.
    let error = session.fails("click", json!({ "selector": "#save" }), 422, "E_UNSUPPORTED");
    assert!(error["message"].as_str().unwrap().contains("input seat"), "{error}");
    assert_eq!(session.page_value("document.querySelector('#status').textContent"), "");
    assert_eq!(session.tool("watch", json!({ "show": true })).status, 200, "the takeover window can be shown");
    assert_eq!(session.tool("watch", json!({ "show": false })).status, 200);
    session.navigate(&fixtures.url("/f/hello.html"));
    assert_eq!(session.title(), "Hello fixture");
}

#[test]
fn on_wayland_with_a_seat_input_works_and_the_window_says_its_focus_is_the_compositors() {
    let fixtures = Fixtures::start();
    let daemon = Daemon::start_with(DaemonOptions { backend: Some("sway"), ..DaemonOptions::default() });
    assert!(daemon.stderr().contains("Wayland display"), "{}", daemon.stderr());
    let session = daemon.lease("agent-a").session_sized(640, 480);
    session.navigate(&fixtures.url("/f/actions.html"));
    session.ok("click", json!({ "selector": "#save" }));
    session.ok("fill", json!({ "selector": "#user", "text": "on sway" }));
    session.ok("type", json!({ "selector": "#user", "text": "!" }));
    assert_eq!(session.page_value("document.querySelector('#status').textContent"), "Saved trusted 1");
    assert_eq!(session.page_value("document.querySelector('#user').value"), "on sway!");
    let shot = session.get("/observe?mode=screenshot");
    assert_eq!((shot.body["screenshot"]["width"].as_u64(), shot.body["screenshot"]["height"].as_u64()), (Some(640), Some(480)));
    // Hidden sessions map nothing. A window asked not to take focus says that only the
    // compositor decides (sway gives new windows focus unless a rule says otherwise).
    assert!(sway_windows().is_empty(), "{:?}", sway_windows());
    let shown = session.ok("watch", json!({ "show": true }));
    assert!(shown["note"].as_str().unwrap_or("").contains("compositor decides"), "{shown}");
    assert!(eventually(std::time::Duration::from_secs(5), || sway_windows().iter().any(|(title, _)| title.starts_with("malo-browser"))));
    session.ok("watch", json!({ "show": false }));
    assert!(eventually(std::time::Duration::from_secs(5), || sway_windows().is_empty()), "the window stayed: {:?}", sway_windows());
    let asked = session.ok("watch", json!({ "show": true, "focus": true }));
    assert!(asked.get("note").is_none(), "{asked}");
    let focused = || sway_windows().iter().any(|(title, focused)| title.starts_with("malo-browser") && *focused);
    assert!(eventually(std::time::Duration::from_secs(5), focused), "{:?}", sway_windows());
    session.ok("watch", json!({ "show": false }));
    session.close();
}
