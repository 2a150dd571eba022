//! The checks on the machine itself: WebKitGTK, a screen (or Xvfb), bubblewrap, the data
//! directory, a running daemon and the ports the daemon would take.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Check, DoctorArgs};
use crate::broker::instance::{read_broker_file, BrokerInfo};
use crate::client::ApiClient;

/// The oldest WebKitGTK the engine is built for (the `v2_40` API of the bindings).
const WEBKIT_MINIMUM: (u32, u32) = (2, 40);

pub(super) fn webkit() -> Check {
    let (major, minor, micro) = crate::engine::webkit_version();
    if (major, minor) < WEBKIT_MINIMUM {
        return Check::fail(
            "webkitgtk",
            format!("WebKitGTK {major}.{minor}.{micro} is older than {}.{}", WEBKIT_MINIMUM.0, WEBKIT_MINIMUM.1),
            "upgrade libwebkit2gtk-4.1-0 (Debian 12 or Ubuntu 24.04 and later carry a newer one)",
        );
    }
    Check::ok("webkitgtk", format!("WebKitGTK {major}.{minor}.{micro} (4.1 API)"))
}

/// Whether the environment names a screen (the daemon then uses it, not a private Xvfb).
pub(super) fn display_named() -> bool {
    env("DISPLAY").is_some() || env("WAYLAND_DISPLAY").is_some()
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

pub(super) fn display() -> Check {
    if let Some(wayland) = env("WAYLAND_DISPLAY") {
        let socket = match env("XDG_RUNTIME_DIR") {
            _ if wayland.starts_with('/') => PathBuf::from(&wayland),
            Some(runtime) => Path::new(&runtime).join(&wayland),
            None => {
                return Check::fail(
                    "display",
                    format!("WAYLAND_DISPLAY={wayland} but XDG_RUNTIME_DIR is unset, so GTK cannot find the compositor"),
                    "set XDG_RUNTIME_DIR (or unset WAYLAND_DISPLAY to use DISPLAY or a private Xvfb)",
                )
            }
        };
        if socket.exists() {
            return Check::ok("display", format!("Wayland display {wayland}"));
        }
        return Check::fail(
            "display",
            format!("WAYLAND_DISPLAY={wayland} names no compositor ({} is missing)", socket.display()),
            "start the compositor, or unset WAYLAND_DISPLAY",
        );
    }
    if let Some(display) = env("DISPLAY") {
        // A local display `:N` (or `:N.S`) has its socket in /tmp/.X11-unix; a remote one
        // (`host:N`, SSH forwarding) is taken on trust.
        let local = display.strip_prefix(':').and_then(|rest| rest.split('.').next()).filter(|number| number.parse::<u32>().is_ok());
        return match local {
            Some(number) if !Path::new(&format!("/tmp/.X11-unix/X{number}")).exists() => Check::fail(
                "display",
                format!("DISPLAY={display} but no X server listens there (/tmp/.X11-unix/X{number} is missing)"),
                "start the X server, or unset DISPLAY so that the daemon starts a private Xvfb",
            ),
            _ => Check::ok("display", format!("X display {display}")),
        };
    }
    match find_program("Xvfb") {
        Some(path) => Check::ok("display", format!("no display set: the daemon starts a private Xvfb ({})", path.display())),
        None => Check::fail(
            "display",
            "no display (DISPLAY and WAYLAND_DISPLAY are unset) and Xvfb is not installed (not on PATH)",
            "sudo apt install xvfb (the daemon then starts a private one), or run under a desktop session",
        ),
    }
}

pub(super) fn bubblewrap() -> Check {
    // The daemon's own probe: bwrap run the way WebKit will run it.
    use crate::engine::sandbox::{Probe, Verdict};
    match Probe::start().finish().0 {
        Verdict::On => Check::ok("bubblewrap", "the sandbox will be on: web processes run in bubblewrap + seccomp"),
        Verdict::Off(reason) => Check::warn(
            "bubblewrap",
            format!("the sandbox will be off: {reason}"),
            "sudo apt install bubblewrap xdg-dbus-proxy, and allow unprivileged user namespaces; `malo daemon --require-sandbox` refuses to run without it",
        ),
    }
}

/// An executable on PATH.
fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| std::fs::metadata(candidate).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0))
}

/// The user this process runs as (`/proc/self` belongs to it).
fn my_uid() -> Option<u32> {
    std::fs::metadata("/proc/self").ok().map(|meta| meta.uid())
}

pub(super) fn data_dir(dir: &Path) -> Check {
    let shown = dir.display();
    let Ok(meta) = std::fs::metadata(dir) else {
        let parent = dir.parent().filter(|parent| parent.exists());
        return match parent.and_then(|parent| std::fs::metadata(parent).ok()) {
            Some(parent_meta) if Some(parent_meta.uid()) == my_uid() || parent_meta.permissions().mode() & 0o002 != 0 => {
                Check::ok("data-dir", format!("{shown} does not exist yet; the daemon creates it (mode 0700)"))
            }
            _ => Check::fail(
                "data-dir",
                format!("{shown} does not exist and its parent is not yours to write"),
                "create it: mkdir -m 700 DIR, or pick another with --data-dir",
            ),
        };
    };
    if !meta.is_dir() {
        return Check::fail("data-dir", format!("{shown} is not a directory"), "move it away, or pick another with --data-dir");
    }
    let mode = meta.permissions().mode() & 0o777;
    if Some(meta.uid()) != my_uid() || mode & 0o200 == 0 {
        return Check::fail(
            "data-dir",
            format!("{shown} is not yours to write (owner uid {}, mode {mode:o})", meta.uid()),
            format!("sudo chown -R $USER {shown} && chmod 700 {shown}"),
        );
    }
    // The files that hold tokens must stay private.
    let exposed: Vec<String> = ["broker.json", "cli.json", "credentials.json"]
        .iter()
        .filter(|name| std::fs::metadata(dir.join(name)).is_ok_and(|file| file.permissions().mode() & 0o077 != 0))
        .map(|name| name.to_string())
        .collect();
    if !exposed.is_empty() {
        return Check::fail(
            "data-dir",
            format!("{} in {shown} can be read by others", exposed.join(", ")),
            format!("chmod 600 {shown}/*.json"),
        );
    }
    if mode & 0o077 != 0 {
        return Check::warn(
            "data-dir",
            format!("{shown} is open to others (mode {mode:o}; the daemon makes it 0700)"),
            format!("chmod 700 {shown}"),
        );
    }
    Check::ok("data-dir", format!("{shown} (mode {mode:o}, yours)"))
}

/// What `broker.json` names, and whether that daemon answers (with its version).
pub(super) struct RunningDaemon {
    info: Option<BrokerInfo>,
    version: Option<String>,
}

impl RunningDaemon {
    /// The broker port of a daemon that answers.
    fn port(&self) -> Option<u16> {
        self.version.as_ref()?;
        self.info.as_ref()?.endpoint.rsplit(':').next()?.parse().ok()
    }
}

pub(super) fn running_daemon(data_dir: &Path) -> RunningDaemon {
    let info = read_broker_file(&data_dir.join("broker.json"));
    let version = info.as_ref().and_then(|info| {
        let client = ApiClient::with_timeout(&info.endpoint, Vec::new(), Duration::from_secs(3));
        let health = client.call("GET", "/v1/health", None).ok()?;
        Some(health["version"].as_str().unwrap_or("unknown").to_string())
    });
    RunningDaemon { info, version }
}

pub(super) fn daemon(daemon: &RunningDaemon) -> Check {
    let ours = env!("CARGO_PKG_VERSION");
    match (&daemon.info, &daemon.version) {
        (None, _) => Check::ok("daemon", "not running (the CLI and `malo mcp` start one when needed)"),
        (Some(info), None) => Check::warn(
            "daemon",
            format!("broker.json names a daemon (pid {}, {}) that does not answer", info.pid, info.endpoint),
            "if it is gone, the next start replaces the file; if it hangs: kill it, then start again",
        ),
        (Some(info), Some(version)) if version != ours => Check::warn(
            "daemon",
            format!("running: pid {}, {}, version {version}, but this malo is {ours}", info.pid, info.endpoint),
            format!("restart it to run this version: Quit in its tray menu, or kill {}", info.pid),
        ),
        (Some(info), Some(version)) => Check::ok("daemon", format!("running: pid {}, {}, version {version}", info.pid, info.endpoint)),
    }
}

/// Whether a loopback port can be bound now (bound and let go at once).
fn free(port: u16) -> bool {
    std::net::TcpListener::bind(("127.0.0.1", port)).is_ok()
}

/// `default_dir`: whether the data directory is the default one, whose daemon takes the
/// broker port; the CLI and `malo mcp` start another directory's on any free port.
pub(super) fn ports(args: &DoctorArgs, daemon: &RunningDaemon, default_dir: bool) -> Vec<Check> {
    let broker = if daemon.port() == Some(args.ports.daemon_port) {
        Check::ok("broker-port", format!("{} is the running daemon's", args.ports.daemon_port))
    } else if !default_dir {
        Check::ok("broker-port", "not the default data directory: its daemon takes any free port (--daemon-port 0)")
    } else if free(args.ports.daemon_port) {
        Check::ok("broker-port", format!("{} is free", args.ports.daemon_port))
    } else {
        Check::fail(
            "broker-port",
            format!("{} is taken by another program", args.ports.daemon_port),
            format!(
                "stop that program (ss -ltnp 'sport = :{}' names it), or give the daemon another: --daemon-port",
                args.ports.daemon_port
            ),
        )
    };
    let (low, high) = (args.ports.port_min, args.ports.port_max);
    if low > high || low == 0 {
        return vec![broker, Check::fail("lease-ports", format!("{low}-{high} is not a range"), "give --port-min <= --port-max")];
    }
    let total = usize::from(high - low) + 1;
    let open = (low..=high).filter(|port| free(*port)).count();
    // A running daemon holds one port per lease; the rest must be free for new leases.
    let leases = match open {
        0 => Check::fail(
            "lease-ports",
            format!("none of {low}-{high} is free: no agent could get a lease"),
            "free some, or give the daemon another range: --port-min/--port-max",
        ),
        _ => Check::ok("lease-ports", format!("{open} of {total} free in {low}-{high}")),
    };
    vec![broker, leases]
}
