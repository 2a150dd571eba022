//! Windows on the test display: an openbox window manager with a person's window holding
//! focus, the shared screen tests take turns on, and xdotool to find and activate windows.

use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use super::{display, eventually, watchdog};

/// An openbox window manager on our display (started once), and a small window holding
/// keyboard focus, as a person's would; answers that window's id.
pub fn window_manager_with_focused_window() -> String {
    static FOCUS: OnceLock<String> = OnceLock::new();
    FOCUS
        .get_or_init(|| {
            let openbox = Command::new("openbox")
                .env("DISPLAY", display())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("openbox is needed");
            watchdog(openbox.id());
            std::mem::forget(openbox);
            std::thread::sleep(Duration::from_millis(500));
            let holder = Command::new("xmessage")
                .args(["-geometry", "+20+20", "-title", "focus-holder", "a person's window"])
                .env("DISPLAY", display())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("xmessage (x11-utils) is needed");
            watchdog(holder.id());
            std::mem::forget(holder);
            let mut id = String::new();
            assert!(eventually(Duration::from_secs(10), || {
                id = xdotool(&["search", "--onlyvisible", "--name", "focus-holder"]).lines().next().unwrap_or("").to_string();
                !id.is_empty()
            }));
            activate(&id);
            id
        })
        .clone()
}

/// The screen is shared: tests that show windows take turns, each starting with the
/// person's window focused.
pub fn shared_screen() -> std::sync::MutexGuard<'static, ()> {
    static SCREEN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let guard = SCREEN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let holder = window_manager_with_focused_window();
    activate(&holder);
    guard
}

/// Waits (up to 10 s) for a visible window whose title matches `title` (a regex); answers its id.
pub fn visible_window(title: &str) -> String {
    let mut window = String::new();
    let appeared = eventually(Duration::from_secs(10), || {
        window = xdotool(&["search", "--onlyvisible", "--name", title]).lines().next().unwrap_or("").to_string();
        !window.is_empty()
    });
    assert!(appeared, "no visible window titled {title:?} appeared");
    window
}

/// Activates a window and waits (bounded) until it is the active one.
pub fn activate(window: &str) {
    xdotool(&["windowactivate", window]);
    eventually(Duration::from_secs(5), || xdotool(&["getactivewindow"]) == window);
}

/// Runs xdotool on our display (never for more than 10 s); answers its output.
pub fn xdotool(args: &[&str]) -> String {
    let output = Command::new("timeout").arg("10").arg("xdotool").args(args).env("DISPLAY", display()).output().expect("xdotool is needed");
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// Ids of the windows a process has mapped (viewable) on our display.
pub fn mapped_windows_of(pid: u32) -> Vec<String> {
    xdotool(&["search", "--all", "--onlyvisible", "--pid", &pid.to_string(), "--name", ""]).lines().map(str::to_string).collect()
}
