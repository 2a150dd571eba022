//! What a person sees of the daemon, through the protocols a Linux panel and notification
//! daemon speak on D-Bus (tests/desktop/host.py plays both): the tray menu lists leases
//! and sessions; Watch brings a session's window forward and Hide hands it back; a session
//! waiting for a person is marked and announced by a notification naming the agent and
//! the site, withdrawn when the wait ends; Quit stops the daemon.

use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::*;

fn daemon_on(desktop: &mut DesktopHost) -> Daemon {
    let daemon = Daemon::start_with(DaemonOptions { dbus: Some(desktop.address.clone()), ..Default::default() });
    assert!(eventually(Duration::from_secs(10), || desktop.items() == 1), "the tray icon never registered with the tray host");
    daemon
}

/// The first menu line starting with `line` and the entry after it, once the menu shows
/// such a line followed by `next` (when given): the menu follows changes asynchronously.
fn entry_after(desktop: &mut DesktopHost, line: &str, next: Option<&str>) -> (MenuEntry, MenuEntry) {
    let mut found = None;
    let appeared = eventually(Duration::from_secs(10), || {
        let menu = desktop.menu();
        found = menu
            .iter()
            .position(|entry| entry.label.starts_with(line))
            .map(|at| (menu[at].clone(), menu[at + 1].clone()))
            .filter(|(_, after)| next.is_none_or(|next| after.label == next));
        found.is_some()
    });
    assert!(appeared, "no menu line {line:?} followed by {next:?} in {:?}", desktop.menu());
    found.unwrap()
}

/// Whether the tray icon carries the red attention dot in its top-right corner.
fn icon_marked(desktop: &mut DesktopHost) -> bool {
    desktop.icon().is_some_and(|icon| {
        let [red, green, blue, _] = icon.get_pixel(16, 5).0;
        red > 0xc0 && green < 0x40 && blue < 0x60
    })
}

fn summary(session: &Session) -> Value {
    let response = session.get("");
    assert_eq!(response.status, 200, "{}", response.body);
    response.body
}

const TAKEOVER_TITLE: &str = "^malo-browser: ";

fn takeover_windows() -> String {
    xdotool(&["search", "--onlyvisible", "--name", TAKEOVER_TITLE])
}

#[test]
fn the_tray_lists_sessions_and_its_watch_and_hide_drive_the_takeover_window() {
    let _screen = shared_screen();
    let holder = window_manager_with_focused_window();
    let mut desktop = DesktopHost::start();
    let mut daemon = daemon_on(&mut desktop);
    let fixtures = Fixtures::start();
    let labels: Vec<String> = desktop.menu().into_iter().map(|entry| entry.label).collect();
    assert_eq!(labels, ["No agents connected", "Quit malo-browser"]);

    let lease = daemon.lease("agent-tray");
    let session = lease.session_sized(640, 480);
    session.navigate(&fixtures.url("/f/hello.html"));
    let (line, watch) = entry_after(&mut desktop, &format!("    test: {}", fixtures.url("/f/hello.html")), None);
    let (agent, _) = entry_after(&mut desktop, "agent-tray", None);
    assert_eq!(agent.label, format!("agent-tray — port {} — 1 session", lease.port));
    assert!(!line.enabled);
    assert_eq!((watch.label.as_str(), watch.enabled), ("        Watch", true));
    assert_eq!(xdotool(&["getactivewindow"]), holder);

    // Watch: the person asked, so the window comes forward with focus.
    desktop.click(&watch);
    let window = visible_window(TAKEOVER_TITLE);
    assert!(eventually(Duration::from_secs(5), || xdotool(&["getactivewindow"]) == window), "the window Watch showed is not in front");
    assert_eq!(xdotool(&["getwindowname", &window]), "malo-browser: agent-tray — test", "the title names the agent and the session");
    assert_eq!(summary(&session)["window_shown"], true);
    // The person asked for it: nothing waits for them, nothing is announced.
    assert_eq!(summary(&session)["waiting_for_person"], Value::Null);
    assert!(desktop.notifications().is_empty());
    let (_, hide) = entry_after(&mut desktop, "    test: ", Some("        Hide"));

    // Hide hands the session back, as Done does; the agent goes on where the person left it.
    desktop.click(&hide);
    assert!(eventually(Duration::from_secs(5), || takeover_windows().is_empty()), "Hide left the window up");
    assert_eq!(summary(&session)["window_shown"], false);
    assert!(session.events(0).to_string().contains("watch_done"));
    assert_eq!(session.observe()["title"], "Hello fixture");
    entry_after(&mut desktop, "    test: ", Some("        Watch"));

    // Quit stops the daemon cleanly: sessions closed, ports returned, and what it announced
    // withdrawn.
    session.tool("watch", json!({ "show": true }));
    assert!(eventually(Duration::from_secs(5), || desktop.notifications().len() == 1));
    let quit = desktop.menu().into_iter().find(|entry| entry.label == "Quit malo-browser").unwrap();
    desktop.click(&quit);
    let mut child = daemon.child.take().unwrap();
    assert_eq!(wait_exit(&mut child, Duration::from_secs(20)), Some(0), "Quit did not stop the daemon");
    assert!(!port_open(lease.port) && !port_open(daemon.port));
    assert!(!daemon.data_dir.join("leases").exists());
    assert_eq!(desktop.notifications()[0]["closed"], true, "a notification outlived the daemon");
}

#[test]
fn a_session_waiting_for_a_person_is_marked_and_announced_until_the_wait_ends() {
    let _screen = shared_screen();
    let holder = window_manager_with_focused_window();
    let mut desktop = DesktopHost::start();
    let daemon = daemon_on(&mut desktop);
    let fixtures = Fixtures::start();
    let lease = daemon.lease("agent-tray");
    let session = lease.session_sized(640, 480);
    let login_url = fixtures.url("/f/login.html");
    session.navigate(&login_url);
    assert!(desktop.notifications().is_empty());
    // (Read until the host has it: under load its first read may come before the icon.)
    assert!(
        eventually(Duration::from_secs(5), || desktop.icon().is_some() && !icon_marked(&mut desktop)),
        "an unmarked icon at first: {:?}",
        desktop.icon().map(|icon| icon.get_pixel(16, 5).0)
    );

    let waiting = {
        let session = session.clone();
        std::thread::spawn(move || session.tool("login", json!({ "mode": "watch", "timeout_ms": 30000 })))
    };
    // Marked in the tray, with a Hide for its open window.
    let (line, hide) = entry_after(&mut desktop, "    ⚠ test: ", Some("        Hide"));
    assert_eq!(line.label, format!("    ⚠ test: {login_url} — waiting for you to log in"));
    assert_eq!(hide.label, "        Hide");
    assert_eq!(summary(&session)["waiting_for_person"], "log in");
    assert!(eventually(Duration::from_secs(5), || icon_marked(&mut desktop)), "the tray icon carries no attention mark");
    // Announced once, naming the agent and the site; nothing secret in it.
    let site = login_url.trim_start_matches("http://").split('/').next().unwrap().to_string();
    assert!(eventually(Duration::from_secs(5), || desktop.notifications().len() == 1));
    let notification = desktop.notifications()[0].clone();
    assert_eq!(notification["app_name"], "malo-browser");
    assert_eq!(notification["hints"]["urgency"], 2, "it stays until the wait ends");
    assert_eq!(notification["summary"], format!("agent-tray needs you to log in at {site}"));
    assert!(notification["body"].as_str().unwrap().contains("agent agent-tray"), "{notification}");
    assert_eq!(notification["closed"], false);
    let text = notification.to_string();
    assert!(!text.contains(&lease.token) && !text.contains(&session.token) && !text.contains(&daemon.token));
    // The window appeared without taking the person's focus (login's default); clicking
    // the notification brings it forward.
    let window = visible_window(TAKEOVER_TITLE);
    assert_eq!(xdotool(&["getactivewindow"]), holder);
    assert_eq!(notification["actions"][0], "default");
    desktop.click_notification(notification["id"].as_u64().unwrap());
    assert!(
        eventually(Duration::from_secs(5), || xdotool(&["getactivewindow"]) == window),
        "clicking the notification did not bring the window forward"
    );

    // The person chooses Hide in the tray: the agent's wait ends as with Done.
    desktop.click(&hide);
    let answer = waiting.join().unwrap();
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!((answer.body["result"]["ok"].clone(), answer.body["result"]["reason"].clone()), (json!(true), json!("done")));
    assert!(eventually(Duration::from_secs(5), || desktop.notifications()[0]["closed"] == true), "the notification was not withdrawn");
    assert_eq!(desktop.notifications().len(), 1);
    let (line, _) = entry_after(&mut desktop, "    test: ", None);
    assert_eq!(line.label, format!("    test: {login_url}"));
    assert_eq!(summary(&session)["waiting_for_person"], Value::Null);
    assert!(takeover_windows().is_empty());
    assert!(eventually(Duration::from_secs(5), || !icon_marked(&mut desktop)), "the attention mark stayed");

    // The agent shows the window for a person (a QR code, a check) and keeps it up after
    // Done: marked and announced until the person hands the session back.
    session.tool("watch", json!({ "show": true, "keep_visible": true }));
    let (line, _) = entry_after(&mut desktop, "    ⚠ test: ", Some("        Hide"));
    assert!(line.label.ends_with("— waiting for you to take over"), "{}", line.label);
    assert_eq!(summary(&session)["waiting_for_person"], "take over");
    assert!(eventually(Duration::from_secs(5), || desktop.notifications().len() == 2));
    let notification = desktop.notifications()[1].clone();
    assert_eq!(notification["summary"], format!("agent-tray needs you to take over at {site}"));
    // The person clicks the notification, then Done in the toolbar: the agent has control
    // back, the announcement goes, and the window stays up as the agent asked.
    desktop.click_notification(notification["id"].as_u64().unwrap());
    let window = visible_window(TAKEOVER_TITLE);
    assert!(eventually(Duration::from_secs(5), || xdotool(&["getactivewindow"]) == window));
    // As in watch.rs: the toolbar's own (sandboxed) web process may still be starting; a
    // person reads the window before pressing Done.
    std::thread::sleep(Duration::from_millis(500));
    xdotool(&["mousemove", "--window", &window, "600", "20", "click", "1"]);
    assert!(eventually(Duration::from_secs(5), || desktop.notifications()[1]["closed"] == true), "the notification was not withdrawn");
    assert_eq!(summary(&session)["waiting_for_person"], Value::Null);
    assert!(session.events(0).to_string().contains("watch_done"));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(takeover_windows(), window, "keep_visible: Done must leave the window up");
    // Hide in the tray puts it away.
    let (_, hide) = entry_after(&mut desktop, "    test: ", Some("        Hide"));
    desktop.click(&hide);
    assert!(eventually(Duration::from_secs(5), || takeover_windows().is_empty()));
}
