//! The screens the daemons under test show on: a private Xvfb by default, or a private
//! weston (with or without XWayland) or sway, as `MALO_TEST_BACKEND` or a daemon's options ask.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::{eventually, watchdog};

/// Which screen the run's daemons get: `MALO_TEST_BACKEND=wayland` runs them in a private
/// weston (headless) as on a Wayland desktop with XWayland, `wayland-native` on Wayland
/// alone; anything else on a private Xvfb.
pub fn backend() -> &'static str {
    static BACKEND: OnceLock<String> = OnceLock::new();
    BACKEND.get_or_init(|| std::env::var("MALO_TEST_BACKEND").unwrap_or_else(|_| "x11".into()))
}

/// A fresh private `XDG_RUNTIME_DIR` (mode 0700) for a compositor of this test run.
fn runtime_dir(compositor: &str) -> PathBuf {
    let runtime = std::env::temp_dir().join(format!("malo-{compositor}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&runtime);
    std::fs::create_dir_all(&runtime).unwrap();
    std::fs::set_permissions(&runtime, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    runtime
}

/// A private weston (headless backend, with XWayland), started once: (runtime dir, Wayland
/// socket name, XWayland's X display).
pub fn weston() -> &'static (PathBuf, String, String) {
    static WESTON: OnceLock<(PathBuf, String, String)> = OnceLock::new();
    WESTON.get_or_init(|| {
        let runtime = runtime_dir("weston");
        let socket = "wayland-malo".to_string();
        let log = runtime.join("weston.log");
        let child = Command::new("weston")
            .args(["--backend=headless-backend.so", "--width=1920", "--height=1080", "--idle-time=0", "--xwayland"])
            .arg(format!("--socket={socket}"))
            .arg(format!("--log={}", log.display()))
            .env("XDG_RUNTIME_DIR", &runtime)
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("weston is not installed; run scripts/setup.sh");
        watchdog(child.id());
        std::mem::forget(child);
        let mut x_display = String::new();
        assert!(
            eventually(Duration::from_secs(10), || {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                x_display =
                    text.lines().find_map(|line| line.split("xserver listening on display ").nth(1)).unwrap_or("").trim().to_string();
                !x_display.is_empty() && runtime.join(&socket).exists()
            }),
            "weston did not start: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        (runtime, socket, x_display)
    })
}

/// A private sway (wlroots, headless backend, Wayland only), started once: unlike weston's
/// headless backend it offers an input seat (without devices), as a desktop does. sway
/// refuses to run as root, so a root test run starts it as `nobody`. Answers (runtime dir,
/// Wayland socket name, sway's IPC socket).
pub fn sway() -> &'static (PathBuf, String, PathBuf) {
    static SWAY: OnceLock<(PathBuf, String, PathBuf)> = OnceLock::new();
    SWAY.get_or_init(|| {
        let runtime = runtime_dir("sway");
        let config = runtime.join("config");
        std::fs::write(&config, "xwayland disable\n").unwrap();
        let log_path = runtime.join("sway.log");
        let log = std::fs::File::create(&log_path).unwrap();
        // /proc/self belongs to the process's effective user.
        let root = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap()) == 0;
        let mut command = if root {
            Command::new("chown").arg("nobody").args([&runtime, &config]).status().unwrap();
            let mut command = Command::new("setpriv");
            command.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "sway"]);
            command
        } else {
            Command::new("sway")
        };
        let child = command
            .arg("-c")
            .arg(&config)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("WLR_BACKENDS", "headless")
            .env("WLR_LIBINPUT_NO_DEVICES", "1")
            .env("WLR_RENDERER", "pixman")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("sway is not installed; run scripts/setup.sh");
        watchdog(child.id());
        std::mem::forget(child);
        let mut found = None;
        let started = eventually(Duration::from_secs(10), || {
            let names: Vec<String> = std::fs::read_dir(&runtime)
                .into_iter()
                .flatten()
                .flatten()
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect();
            let socket = names.iter().find(|name| name.starts_with("wayland-") && !name.ends_with(".lock"));
            let ipc = names.iter().find(|name| name.starts_with("sway-ipc."));
            found = socket.zip(ipc).map(|(socket, ipc)| (socket.clone(), runtime.join(ipc)));
            found.is_some()
        });
        assert!(started, "sway did not start: {}", std::fs::read_to_string(&log_path).unwrap_or_default());
        let (socket, ipc) = found.unwrap();
        (runtime, socket, ipc)
    })
}

/// The X display every daemon of this test run uses (a private Xvfb, started once; under
/// `MALO_TEST_BACKEND=wayland`, weston's XWayland).
pub fn display() -> &'static str {
    static DISPLAY: OnceLock<String> = OnceLock::new();
    DISPLAY.get_or_init(|| {
        if backend().starts_with("wayland") {
            return weston().2.clone();
        }
        for number in 90..140 {
            if Path::new(&format!("/tmp/.X{number}-lock")).exists() {
                continue;
            }
            let name = format!(":{number}");
            let Ok(child) = Command::new("Xvfb")
                .args([name.as_str(), "-screen", "0", "1920x1080x24", "-nolisten", "tcp"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
            else {
                panic!("Xvfb is not installed; run scripts/setup.sh");
            };
            let socket = PathBuf::from(format!("/tmp/.X11-unix/X{number}"));
            let begun = Instant::now();
            while begun.elapsed() < Duration::from_secs(10) {
                if socket.exists() {
                    watchdog(child.id());
                    std::mem::forget(child);
                    return name;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        panic!("could not start Xvfb on any display from :90 to :139");
    })
}
