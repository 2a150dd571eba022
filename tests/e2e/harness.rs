//! Shared helpers of the end-to-end tests: a private Xvfb display, the real `malo`
//! daemon in a fresh data directory, a fixture web server on port 0 that records what it
//! saw, a minimal HTTP/1.1 client (so tests control every header, including `Host`),
//! and process/port probes for the leak checks.

#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

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

/// Kills `pid` once this test process is gone, so nothing outlives a crashed test run.
/// It stops watching when `pid` ends first: a number the system has handed to another
/// process since (a compiler, say) is never killed.
pub fn watchdog(pid: u32) {
    let me = std::process::id();
    // Field 22 of /proc/<pid>/stat, the start time, tells the process from a later one.
    let started = format!("$(sed 's/.*) //' /proc/{pid}/stat 2>/dev/null | cut -d' ' -f20)");
    let script = format!(
        "start={started}; [ -n \"$start\" ] || exit 0; \
         while kill -0 {me} 2>/dev/null && [ \"{started}\" = \"$start\" ]; do sleep 0.5; done; \
         [ \"{started}\" = \"$start\" ] || exit 0; kill {pid} 2>/dev/null; sleep 2; \
         [ \"{started}\" = \"$start\" ] && kill -9 {pid} 2>/dev/null"
    );
    let _ = Command::new("sh").args(["-c", &script]).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn();
}

/// A fresh temporary directory, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(label: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("malo-e2e-{label}-{}-{}", std::process::id(), unique()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn unique() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::SeqCst)
}

/// A block of lease ports no other daemon of this run uses.
fn port_block(size: u16) -> (u16, u16) {
    // Below Linux's ephemeral range (32768 and up), where connections of the tests
    // themselves (thousands in the flood test) would take pool ports at random.
    const FIRST: u16 = 20000;
    const SPAN: u16 = 12000;
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let offset = ((std::process::id() % 120) as u16 * 100 + NEXT.fetch_add(size, Ordering::SeqCst)) % (SPAN - size);
    (FIRST + offset, FIRST + offset + size - 1)
}

/// Options of a daemon under test.
#[derive(Clone)]
pub struct DaemonOptions {
    /// A D-Bus session bus to give the daemon (for the keychain); none by default.
    pub dbus: Option<String>,
    pub lease_ttl_seconds: u64,
    pub session_idle_seconds: u64,
    pub max_sessions: usize,
    pub pool_size: u16,
    /// The daemon's working directory (default: the test's).
    pub cwd: Option<PathBuf>,
    /// The daemon's HOME (default: the test's).
    pub home: Option<PathBuf>,
    /// More flags for `malo daemon`.
    pub extra_args: Vec<String>,
    /// More environment for `malo daemon`.
    pub env: Vec<(String, String)>,
    /// Run under `ulimit -n` this (soft and hard).
    pub open_files: Option<u64>,
    /// Start with no display at all (the daemon then starts its own X server).
    pub headless: bool,
    /// The screen, instead of the run's [`backend`]: `x11`, `wayland`, `wayland-native` or
    /// `sway` (Wayland alone, with a seat).
    pub backend: Option<&'static str>,
}

impl Default for DaemonOptions {
    fn default() -> Self {
        DaemonOptions {
            dbus: None,
            lease_ttl_seconds: 300,
            session_idle_seconds: 300,
            max_sessions: 4,
            pool_size: 6,
            cwd: None,
            home: None,
            extra_args: Vec::new(),
            env: Vec::new(),
            open_files: None,
            headless: false,
            backend: None,
        }
    }
}

/// The real daemon binary, running.
pub struct Daemon {
    pub child: Option<Child>,
    pub pid: u32,
    pub endpoint: String,
    pub port: u16,
    pub token: String,
    pub data_dir: PathBuf,
    pub port_range: (u16, u16),
    pub stderr: Arc<Mutex<String>>,
    _dir: Option<TempDir>,
}

impl Daemon {
    pub fn start() -> Daemon {
        Daemon::start_with(DaemonOptions::default())
    }

    pub fn start_with(options: DaemonOptions) -> Daemon {
        let dir = TempDir::new("daemon");
        let data_dir = dir.0.join("data");
        let mut daemon = Daemon::spawn_in(&data_dir, &options).expect("the daemon did not start");
        daemon._dir = Some(dir);
        daemon
    }

    /// Starts a daemon on `data_dir`; `Err` carries the exit status and stderr when it
    /// exits instead of printing its JSON line.
    pub fn spawn_in(data_dir: &Path, options: &DaemonOptions) -> Result<Daemon, (i32, String)> {
        let port_range = port_block(options.pool_size);
        let mut child = daemon_command(data_dir, options, port_range).spawn().expect("cannot run malo");
        watchdog(child.id());
        let stderr = Arc::new(Mutex::new(String::new()));
        let stderr_pipe = child.stderr.take().unwrap();
        let collected = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr_pipe).lines().map_while(Result::ok) {
                let mut text = collected.lock().unwrap();
                text.push_str(&line);
                text.push('\n');
            }
        });
        let stdout = child.stdout.take().unwrap();
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            let _ = sender.send(line);
            // Keep draining so the daemon never blocks on a full pipe.
            let _ = std::io::copy(&mut reader, &mut std::io::sink());
        });
        let line = receiver.recv_timeout(Duration::from_secs(60)).unwrap_or_default();
        if line.trim().is_empty() {
            let status = wait_exit(&mut child, Duration::from_secs(10)).unwrap_or(-1);
            std::thread::sleep(Duration::from_millis(100));
            return Err((status, stderr.lock().unwrap().clone()));
        }
        let info: Value = serde_json::from_str(line.trim()).expect("first stdout line is JSON");
        let endpoint = info["endpoint"].as_str().unwrap().to_string();
        let port = endpoint.rsplit(':').next().unwrap().parse().unwrap();
        Ok(Daemon {
            pid: info["pid"].as_u64().unwrap() as u32,
            token: info["token"].as_str().unwrap().to_string(),
            endpoint,
            port,
            child: Some(child),
            data_dir: data_dir.to_path_buf(),
            port_range,
            stderr,
            _dir: None,
        })
    }

    pub fn broker_headers(&self) -> Vec<(&'static str, String)> {
        vec![("x-malo-broker-token", self.token.clone())]
    }

    /// Takes a lease for `agent_id`.
    pub fn lease(&self, agent_id: &str) -> Lease {
        let response = request(self.port, "POST", "/v1/leases", &self.broker_headers(), Some(json!({ "agent_id": agent_id })));
        assert_eq!(response.status, 200, "lease: {}", response.body);
        Lease::from_grant(&response.body)
    }

    /// Stops the daemon with SIGTERM and returns its exit code.
    pub fn stop(&mut self) -> i32 {
        let Some(mut child) = self.child.take() else { return -1 };
        signal(child.id(), "TERM");
        wait_exit(&mut child, Duration::from_secs(20)).unwrap_or_else(|| {
            let _ = child.kill();
            let _ = child.wait();
            -1
        })
    }

    /// Kills the daemon with SIGKILL.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.stop();
    }
}

pub fn daemon_command(data_dir: &Path, options: &DaemonOptions, port_range: (u16, u16)) -> Command {
    let mut command = match options.open_files {
        Some(limit) => {
            let mut shell = Command::new("sh");
            shell.arg("-c").arg(format!("ulimit -n {limit} && exec \"$0\" \"$@\"")).arg(malo_binary());
            shell
        }
        None => Command::new(malo_binary()),
    };
    command
        .arg("daemon")
        .arg(format!("--data-dir={}", data_dir.display()))
        .args(["--daemon-port", "0"])
        .arg(format!("--port-min={}", port_range.0))
        .arg(format!("--port-max={}", port_range.1))
        .arg(format!("--lease-ttl-seconds={}", options.lease_ttl_seconds))
        .arg(format!("--session-idle-seconds={}", options.session_idle_seconds))
        .arg(format!("--max-sessions={}", options.max_sessions))
        .env("NO_AT_BRIDGE", "1")
        .env("MALO_LOG", "info")
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("GDK_BACKEND")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let backend = options.backend.unwrap_or(backend());
    if options.headless {
        command.env_remove("DISPLAY");
    } else if backend == "sway" {
        let (runtime, socket, _) = sway();
        command.env("XDG_RUNTIME_DIR", runtime).env("WAYLAND_DISPLAY", socket).env_remove("DISPLAY");
    } else if backend.starts_with("wayland") {
        let (runtime, socket, x_display) = weston();
        command.env("XDG_RUNTIME_DIR", runtime).env("WAYLAND_DISPLAY", socket);
        if backend == "wayland-native" {
            command.env_remove("DISPLAY");
        } else {
            command.env("DISPLAY", x_display);
        }
    } else {
        command.env("DISPLAY", display());
    }
    if let Some(bus) = &options.dbus {
        command.env("DBUS_SESSION_BUS_ADDRESS", bus);
    }
    if let Some(cwd) = &options.cwd {
        command.current_dir(cwd);
    }
    if let Some(home) = &options.home {
        command.env("HOME", home).env_remove("XDG_DOWNLOAD_DIR").env_remove("XDG_CONFIG_HOME");
    }
    command.args(&options.extra_args);
    command.envs(options.env.iter().map(|(name, value)| (name, value)));
    command
}

/// Every file below `dir` (recursively), as paths relative to it.
pub fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path.strip_prefix(dir).unwrap_or(&path).to_path_buf());
            }
        }
    }
    found.sort();
    found
}

/// The `malo` binary: cargo's path for tests, else the one beside this executable's
/// directory (`target/<profile>/examples/bench` -> `target/<profile>/malo`).
pub fn malo_binary() -> PathBuf {
    if let Some(path) = option_env!("CARGO_BIN_EXE_malo") {
        return PathBuf::from(path);
    }
    let me = std::env::current_exe().unwrap();
    me.parent().and_then(Path::parent).unwrap().join("malo")
}

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

/// The Python with the test tools (the MCP SDK, schemathesis, dbus-next).
pub fn python() -> String {
    std::env::var("MALO_PYTHON").unwrap_or_else(|_| format!("{}/.cache/malo-browser/venv/bin/python", std::env::var("HOME").unwrap()))
}

/// A file of the repository, by its path from the top.
pub fn repo_file(path: &str) -> String {
    format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"))
}

/// Starts a private D-Bus session bus; answers the process and its address.
pub fn private_bus() -> (Child, String) {
    let mut bus = Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--print-address=1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("dbus-daemon is needed (scripts/setup.sh)");
    watchdog(bus.id());
    let mut address = String::new();
    BufReader::new(bus.stdout.take().unwrap()).read_line(&mut address).unwrap();
    (bus, address.trim().to_string())
}

/// A person's desktop on a private D-Bus (tests/desktop/host.py): the tray host a panel
/// runs (StatusNotifierWatcher, reading and clicking menus over dbusmenu) and a
/// notification server that records what it is asked to show.
pub struct DesktopHost {
    /// The bus address to give the daemon.
    pub address: String,
    bus: Child,
    host: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

/// One entry of the tray menu, as the tray host reads it.
#[derive(Debug, Clone)]
pub struct MenuEntry {
    pub id: u64,
    pub label: String,
    pub enabled: bool,
}

impl DesktopHost {
    pub fn start() -> DesktopHost {
        let (bus, address) = private_bus();
        let mut host = Command::new(python())
            .arg(repo_file("tests/desktop/host.py"))
            .env("DBUS_SESSION_BUS_ADDRESS", &address)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the test Python is needed (scripts/setup.sh)");
        watchdog(host.id());
        let stdin = host.stdin.take().unwrap();
        let mut stdout = BufReader::new(host.stdout.take().unwrap());
        let mut ready = String::new();
        stdout.read_line(&mut ready).unwrap();
        assert!(ready.contains("ready"), "the desktop host did not start: {ready:?}");
        DesktopHost { address, bus, host, stdin, stdout }
    }

    fn ask(&mut self, request: Value) -> Value {
        writeln!(self.stdin, "{request}").unwrap();
        self.stdin.flush().unwrap();
        let mut line = String::new();
        assert!(self.stdout.read_line(&mut line).unwrap() > 0, "the desktop host exited");
        serde_json::from_str(&line).unwrap()
    }

    /// Tray items registered with the host.
    pub fn items(&mut self) -> usize {
        self.ask(json!({ "do": "items" }))["items"].as_array().map_or(0, Vec::len)
    }

    /// The tray menu, flattened (separators left out).
    pub fn menu(&mut self) -> Vec<MenuEntry> {
        let answer = self.ask(json!({ "do": "menu" }));
        let entries = answer["menu"].as_array().unwrap_or_else(|| panic!("no menu: {answer}"));
        entries
            .iter()
            .map(|entry| MenuEntry {
                id: entry["id"].as_u64().unwrap(),
                label: entry["label"].as_str().unwrap().to_string(),
                enabled: entry["enabled"].as_bool().unwrap(),
            })
            .collect()
    }

    /// The tray icon as the host would draw it (libayatana-appindicator hands a PNG path).
    pub fn icon(&mut self) -> Option<image::RgbaImage> {
        let answer = self.ask(json!({ "do": "icon" }));
        image::open(answer["icon"].as_str()?).ok().map(|icon| icon.to_rgba8())
    }

    /// Clicks a menu entry, as a person choosing it.
    pub fn click(&mut self, entry: &MenuEntry) {
        let answer = self.ask(json!({ "do": "click", "id": entry.id }));
        assert_eq!(answer["clicked"], entry.id, "{answer}");
    }

    /// A person clicks notification `id` (its default action).
    pub fn click_notification(&mut self, id: u64) {
        let answer = self.ask(json!({ "do": "invoke", "id": id }));
        assert_eq!(answer["invoked"], id, "{answer}");
    }

    /// Every notification shown so far (`closed` once withdrawn).
    pub fn notifications(&mut self) -> Vec<Value> {
        self.ask(json!({ "do": "notifications" }))["notifications"].as_array().unwrap().clone()
    }
}

impl Drop for DesktopHost {
    fn drop(&mut self) {
        for child in [&mut self.host, &mut self.bus] {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A private D-Bus session bus with an unlocked gnome-keyring Secret Service on it
/// (started once per test run); answers the bus address.
pub fn secret_service() -> &'static str {
    static BUS: OnceLock<String> = OnceLock::new();
    BUS.get_or_init(|| {
        let home = std::env::temp_dir().join(format!("malo-e2e-keyring-{}", std::process::id()));
        let runtime = home.join("run");
        std::fs::create_dir_all(&runtime).unwrap();
        std::fs::set_permissions(&runtime, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        let (bus, address) = private_bus();
        std::mem::forget(bus);
        let mut keyring = Command::new("gnome-keyring-daemon")
            .args(["--unlock", "--components=secrets", "--foreground"])
            .env("DBUS_SESSION_BUS_ADDRESS", &address)
            .env("HOME", &home)
            .env("XDG_DATA_HOME", home.join("data"))
            .env("XDG_RUNTIME_DIR", &runtime)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("gnome-keyring-daemon is needed (scripts/setup.sh)");
        watchdog(keyring.id());
        keyring.stdin.take().unwrap().write_all(b"malo-test-keyring").unwrap();
        std::mem::forget(keyring);
        // First wait for our unlocked keyring to own the Secret Service name: a client
        // asking before that makes the bus start a second, locked keyring, and the store
        // below then fails until the deadline (seen once under load).
        let owned = eventually(Duration::from_secs(15), || {
            Command::new("dbus-send")
                .args(["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus"])
                .args(["org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets"])
                .env("DBUS_SESSION_BUS_ADDRESS", &address)
                .output()
                .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).contains("boolean true"))
        });
        assert!(owned, "the keyring never took the Secret Service name");
        // Ready when an item can be stored (the default collection exists and is unlocked).
        let ready = eventually(Duration::from_secs(15), || {
            let Ok(mut probe) = Command::new("secret-tool")
                .args(["store", "--label", "malo probe", "malo-probe", "1"])
                .env("DBUS_SESSION_BUS_ADDRESS", &address)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
            else {
                return false;
            };
            let _ = probe.stdin.take().map(|mut stdin| stdin.write_all(b"probe"));
            probe.wait().map(|status| status.success()).unwrap_or(false)
        });
        assert!(ready, "the Secret Service did not come up");
        address
    })
}

pub fn signal(pid: u32, name: &str) {
    let _ = Command::new("kill").arg(format!("-{name}")).arg(pid.to_string()).status();
}

pub fn wait_exit(child: &mut Child, limit: Duration) -> Option<i32> {
    let begun = Instant::now();
    while begun.elapsed() < limit {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status.code().unwrap_or(-1));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

/// A granted lease.
#[derive(Clone, Debug)]
pub struct Lease {
    pub id: String,
    pub endpoint: String,
    pub port: u16,
    pub token: String,
    pub expires_at: String,
}

impl Lease {
    pub fn from_grant(grant: &Value) -> Lease {
        let endpoint = grant["endpoint"].as_str().unwrap().to_string();
        Lease {
            id: grant["lease_id"].as_str().unwrap().to_string(),
            port: endpoint.rsplit(':').next().unwrap().parse().unwrap(),
            endpoint,
            token: grant["token"].as_str().unwrap().to_string(),
            expires_at: grant["expires_at"].as_str().unwrap().to_string(),
        }
    }

    pub fn headers(&self) -> Vec<(&'static str, String)> {
        vec![("x-malo-lease-token", self.token.clone())]
    }

    pub fn try_session(&self, body: Value) -> Response {
        request(self.port, "POST", "/v1/sessions", &self.headers(), Some(body))
    }

    /// Opens a session of the given viewport.
    pub fn session_sized(&self, width: u32, height: u32) -> Session {
        let response = self.try_session(json!({ "name": "test", "width": width, "height": height }));
        assert_eq!(response.status, 200, "create session: {}", response.body);
        Session {
            id: response.body["session_id"].as_str().unwrap().to_string(),
            token: response.body["session_token"].as_str().unwrap().to_string(),
            lease: self.clone(),
            summary: response.body,
        }
    }

    pub fn session(&self) -> Session {
        self.session_sized(1024, 768)
    }
}

/// An open session.
#[derive(Clone, Debug)]
pub struct Session {
    pub id: String,
    pub token: String,
    pub lease: Lease,
    pub summary: Value,
}

impl Session {
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        vec![("x-malo-lease-token", self.lease.token.clone()), ("x-malo-session-token", self.token.clone())]
    }

    pub fn get(&self, path_and_query: &str) -> Response {
        request(self.lease.port, "GET", &format!("/v1/sessions/{}{path_and_query}", self.id), &self.headers(), None)
    }

    pub fn post(&self, path: &str, body: Value) -> Response {
        request(self.lease.port, "POST", &format!("/v1/sessions/{}{path}", self.id), &self.headers(), Some(body))
    }

    /// Calls a registry tool; returns the raw response.
    pub fn tool(&self, name: &str, body: Value) -> Response {
        self.post(&format!("/tools/{name}"), body)
    }

    /// Calls a tool that must succeed; returns its result.
    pub fn ok(&self, tool: &str, input: Value) -> Value {
        let response = self.tool(tool, input.clone());
        assert_eq!(response.status, 200, "{tool} {input}: {}", response.body);
        response.body["result"].clone()
    }

    /// Calls a tool that must fail with `code` (and HTTP `status`); returns the error.
    pub fn fails(&self, tool: &str, input: Value, status: u16, code: &str) -> Value {
        let response = self.tool(tool, input.clone());
        assert_eq!((response.status, response.code()), (status, code), "{tool} {input}: {}", response.body);
        response.body["error"].clone()
    }

    /// The value of an expression in the page's own world (of `tab`, default selected).
    pub fn page_value(&self, expression: &str) -> Value {
        self.ok("evaluate", json!({ "expression": expression }))["value"].clone()
    }

    /// Navigates and asserts success.
    pub fn navigate(&self, url: &str) -> Value {
        let response = self.post("/navigate", json!({ "url": url }));
        assert_eq!(response.status, 200, "navigate {url}: {}", response.body);
        response.body
    }

    pub fn observe(&self) -> Value {
        let response = self.get("/observe?mode=light&max_chars=4000");
        assert_eq!(response.status, 200, "observe: {}", response.body);
        response.body
    }

    /// Evaluates nothing: reads the page title through observe (tests read page state
    /// the way an agent would).
    pub fn title(&self) -> String {
        self.observe()["title"].as_str().unwrap_or_default().to_string()
    }

    pub fn events(&self, after: u64) -> Value {
        let response = self.get(&format!("/events?after={after}"));
        assert_eq!(response.status, 200, "events: {}", response.body);
        response.body
    }

    pub fn close(&self) -> Response {
        request(self.lease.port, "DELETE", &format!("/v1/sessions/{}", self.id), &self.headers(), None)
    }
}

/// A response: status and JSON body (`Value::Null` when not JSON).
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub body: Value,
    pub text: String,
}

impl Response {
    pub fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }
}

/// A JSON request to 127.0.0.1:`port` with the right `Host`.
pub fn request(port: u16, method: &str, path: &str, headers: &[(&str, String)], body: Option<Value>) -> Response {
    let body = body.map(|value| value.to_string());
    let mut all: Vec<(String, String)> = vec![("Host".into(), format!("127.0.0.1:{port}"))];
    if body.is_some() {
        all.push(("Content-Type".into(), "application/json".into()));
    }
    all.extend(headers.iter().map(|(name, value)| (name.to_string(), value.clone())));
    raw_request(port, method, path, &all, body.as_deref().map(str::as_bytes))
}

/// A request with exactly these headers (plus Content-Length and Connection: close).
pub fn raw_request(port: u16, method: &str, path: &str, headers: &[(String, String)], body: Option<&[u8]>) -> Response {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap_or_else(|error| panic!("connect {port}: {error}"));
    stream.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\nConnection: close\r\n\r\n", body.map_or(0, <[u8]>::len)));
    stream.write_all(head.as_bytes()).unwrap();
    if let Some(body) = body {
        // The server may answer (413) and close before reading a large body: ignore EPIPE.
        let _ = stream.write_all(body);
    }
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).to_string();
    let status = text.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
    let (head, payload) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let payload = if head.to_ascii_lowercase().contains("transfer-encoding: chunked") { dechunk(payload) } else { payload.to_string() };
    Response { status, body: serde_json::from_str(&payload).unwrap_or(Value::Null), text: payload }
}

fn dechunk(mut payload: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = payload.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else { break };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        payload = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// Ids of the windows a process has mapped (viewable) on our display.
pub fn mapped_windows_of(pid: u32) -> Vec<String> {
    xdotool(&["search", "--all", "--onlyvisible", "--pid", &pid.to_string(), "--name", ""]).lines().map(str::to_string).collect()
}

/// Whether something accepts connections on 127.0.0.1:`port`.
pub fn port_open(port: u16) -> bool {
    TcpStream::connect_timeout(&SocketAddr::from(([127, 0, 0, 1], port)), Duration::from_millis(300)).is_ok()
}

/// WebKit helper processes whose parent is `pid`.
pub fn webkit_children(pid: u32) -> Vec<u32> {
    children(pid).into_iter().filter(|(_, command)| command.contains("WebKit")).map(|(child, _)| child).collect()
}

/// The processes whose parent is `pid`, with their command names.
pub fn children(pid: u32) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else { continue };
        let Some((head, rest)) = stat.rsplit_once(") ") else { continue };
        let command = head.split_once('(').map(|(_, command)| command).unwrap_or("");
        if rest.split(' ').nth(1).and_then(|value| value.parse::<u32>().ok()) == Some(pid) {
            found.push((child, command.to_string()));
        }
    }
    found
}

/// PSS in KiB of `pid` and every descendant.
pub fn pss_kib(pid: u32) -> u64 {
    let mut total = 0;
    let mut stack = vec![pid];
    while let Some(current) = stack.pop() {
        if let Ok(rollup) = std::fs::read_to_string(format!("/proc/{current}/smaps_rollup")) {
            total += rollup
                .lines()
                .find(|line| line.starts_with("Pss:"))
                .and_then(|line| line.split_whitespace().nth(1)?.parse::<u64>().ok())
                .unwrap_or(0);
        }
        stack.extend(children(current).into_iter().map(|(child, _)| child));
    }
    total
}

/// Resident memory of one process (not its children), in KiB.
pub fn rss_kib(pid: u32) -> u64 {
    proc_field_kib(&format!("/proc/{pid}/status"), "VmRSS:")
}

/// Resident anonymous memory of one process (its heaps, not its mapped files), in KiB.
pub fn anonymous_kib(pid: u32) -> u64 {
    proc_field_kib(&format!("/proc/{pid}/smaps_rollup"), "Anonymous:")
}

/// Resident memory of one process by kind of mapping, largest first, in KiB: the heaps
/// (`[heap]` and anonymous maps), System V shared memory (X images), memfd buffers,
/// `/dev/shm`, files, the stacks.
pub fn rss_by_mapping_kib(pid: u32) -> Vec<(String, u64)> {
    let mut kinds: std::collections::BTreeMap<String, u64> = Default::default();
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap_or_default();
    let mut kind = String::new();
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or("");
        if first.contains('-') && !first.ends_with(':') {
            let name = fields.nth(4).unwrap_or("");
            kind = match name {
                "" => "anonymous".into(),
                _ if name.starts_with("/SYSV") => "System V shm".into(),
                _ if name.starts_with("/memfd:") => format!("memfd {}", &name[7..]),
                _ if name.starts_with("/dev/shm") => "/dev/shm".into(),
                _ if name.starts_with('/') => "files".into(),
                other => other.to_string(),
            };
        } else if first == "Rss:" {
            *kinds.entry(kind.clone()).or_default() += fields.next().and_then(|value| value.parse().ok()).unwrap_or(0);
        }
    }
    let mut sorted: Vec<(String, u64)> = kinds.into_iter().filter(|(_, kib)| *kib >= 1024).collect();
    sorted.sort_by_key(|kind| std::cmp::Reverse(kind.1));
    sorted
}

fn proc_field_kib(file: &str, field: &str) -> u64 {
    std::fs::read_to_string(file)
        .ok()
        .and_then(|text| text.lines().find(|line| line.starts_with(field))?.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

pub fn process_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| !stat.split(") ").nth(1).unwrap_or("").starts_with('Z'))
        .unwrap_or(false)
}

/// Polls `check` until it holds or `limit` passes; returns whether it held.
pub fn eventually(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let begun = Instant::now();
    loop {
        if check() {
            return true;
        }
        if begun.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// What the fixture server saw of one request.
#[derive(Clone, Debug)]
pub struct Seen {
    pub path: String,
    pub query: String,
    pub cookie: Option<String>,
    pub user_agent: Option<String>,
}

/// One part of a multipart form the fixture server received.
#[derive(Clone, Debug)]
pub struct UploadedPart {
    pub field: String,
    pub filename: Option<String>,
    pub bytes: Vec<u8>,
}

/// What the fixture server keeps of what it saw.
#[derive(Clone, Default)]
struct FixtureLog {
    seen: Arc<Mutex<Vec<Seen>>>,
    uploads: Arc<Mutex<Vec<Vec<UploadedPart>>>>,
}

/// The bytes `/download/<name>?size=N` serves: a pattern no two offsets share nearby, so
/// a file cut short or shifted never matches.
pub fn download_bytes(size: usize) -> Vec<u8> {
    (0..size).map(|index| (index * 7 + index / 251 + 13) as u8).collect()
}

/// A local web server of fixture pages, on a port chosen by the OS.
pub struct Fixtures {
    pub port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    uploads: Arc<Mutex<Vec<Vec<UploadedPart>>>>,
}

impl Fixtures {
    pub fn start() -> Fixtures {
        Fixtures::start_serving(None)
    }

    /// Also serves the files of `dir` under `/b/`.
    pub fn start_serving(dir: Option<PathBuf>) -> Fixtures {
        static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
        let runtime = RUNTIME.get_or_init(|| tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap());
        let log = FixtureLog::default();
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let router = fixture_router(log.clone(), dir);
        runtime.spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Fixtures { port, seen: log.seen, uploads: log.uploads }
    }

    /// The multipart forms posted to `/upload`, in order.
    pub fn uploads(&self) -> Vec<Vec<UploadedPart>> {
        self.uploads.lock().unwrap().clone()
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Requests seen whose path is `path`.
    pub fn seen(&self, path: &str) -> Vec<Seen> {
        self.seen.lock().unwrap().iter().filter(|seen| seen.path == path).cloned().collect()
    }
}

fn fixture_router(log: FixtureLog, static_dir: Option<PathBuf>) -> axum::Router {
    use axum::extract::{Path, Query, Request, State};
    use axum::http::{header, StatusCode};
    use axum::response::{Html, IntoResponse, Response};
    use axum::routing::get;

    async fn page(Path(name): Path<String>) -> Response {
        match fixture(&name) {
            Some(html) => Html(html).into_response(),
            None => (StatusCode::NOT_FOUND, Html("<title>missing</title>no such fixture")).into_response(),
        }
    }
    async fn set_cookie(Query(query): Query<HashMap<String, String>>) -> Response {
        let value = query.get("value").cloned().unwrap_or_else(|| "1".into());
        ([(header::SET_COOKIE, format!("marker={value}; Path=/; Max-Age=3600"))], Html(format!("<title>cookie set {value}</title>set")))
            .into_response()
    }
    async fn status(Path(code): Path<u16>) -> Response {
        let code = StatusCode::from_u16(code).unwrap_or(StatusCode::IM_A_TEAPOT);
        (code, Html(format!("<title>status {}</title>status page", code.as_u16()))).into_response()
    }
    async fn slow(Query(query): Query<HashMap<String, String>>) -> Response {
        let ms: u64 = query.get("ms").and_then(|ms| ms.parse().ok()).unwrap_or(500);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Html(format!("<title>slow {ms}</title>slow")).into_response()
    }
    async fn login(axum::Form(form): axum::Form<HashMap<String, String>>) -> Response {
        if form.get("user").map(String::as_str) == Some("demo") && form.get("pass").map(String::as_str) == Some("s3cret-pass") {
            (
                StatusCode::SEE_OTHER,
                [(header::LOCATION, "/f/welcome.html"), (header::SET_COOKIE, "session=signed-in; Path=/; Max-Age=3600")],
                "",
            )
                .into_response()
        } else {
            let page = fixture("login.html").unwrap().replace("<form", "<p class=\"error\">Invalid username or password.</p><form");
            Html(page).into_response()
        }
    }
    /// Small API answers for the network tests.
    async fn api(Path(path): Path<String>, method: axum::http::Method, body: axum::body::Bytes) -> Response {
        let json = |text: String| ([(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "no-store")], text).into_response();
        match path.as_str() {
            "items.json" => json(r#"{"items":[1,2,3],"name":"items"}"#.to_string()),
            "xhr.json" => json(r#"{"via":"xhr"}"#.to_string()),
            "empty" => StatusCode::NO_CONTENT.into_response(),
            "big" => ([(header::CONTENT_TYPE, "text/plain")], api_big_body()).into_response(),
            "binary" => ([(header::CONTENT_TYPE, "application/octet-stream")], vec![0xffu8, 0xfe, 0x00, 0x81, 0x9c, 0xd3]).into_response(),
            "gzip.json" => {
                use std::io::Write;
                let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                encoder.write_all(br#"{"compressed":true}"#).unwrap();
                ([(header::CONTENT_TYPE, "application/json"), (header::CONTENT_ENCODING, "gzip")], encoder.finish().unwrap())
                    .into_response()
            }
            "pixel.png" => ([(header::CONTENT_TYPE, "image/png")], PIXEL_PNG.to_vec()).into_response(),
            "echo" => json(format!(r#"{{"method":"{method}","bytes":{}}}"#, body.len())),
            other if other.starts_with("status/") => {
                let code = other
                    .trim_start_matches("status/")
                    .parse()
                    .ok()
                    .and_then(|code| StatusCode::from_u16(code).ok())
                    .unwrap_or(StatusCode::IM_A_TEAPOT);
                (code, format!("status {}", code.as_u16())).into_response()
            }
            other if other.starts_with("count/") => json(format!(r#"{{"n":"{}"}}"#, other.trim_start_matches("count/"))),
            _ => (StatusCode::NOT_FOUND, "no such api").into_response(),
        }
    }
    /// A fixture page served after `ms` milliseconds.
    async fn delayed(Path(name): Path<String>, Query(query): Query<HashMap<String, String>>) -> Response {
        let ms: u64 = query.get("ms").and_then(|ms| ms.parse().ok()).unwrap_or(1000);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        page(Path(name)).await
    }
    async fn download(Path(name): Path<String>, Query(query): Query<HashMap<String, String>>) -> Response {
        let size: usize = query.get("size").and_then(|size| size.parse().ok()).unwrap_or(1000);
        let disposition = format!("attachment; filename=\"{name}\"");
        ([(header::CONTENT_TYPE, "application/octet-stream".to_string()), (header::CONTENT_DISPOSITION, disposition)], download_bytes(size))
            .into_response()
    }
    /// A download that trickles in: `size` bytes in `chunk`s every `delay_ms`.
    async fn trickle(Query(query): Query<HashMap<String, String>>) -> Response {
        let number = |key: &str, default: usize| query.get(key).and_then(|value| value.parse().ok()).unwrap_or(default);
        let (size, chunk, delay) = (number("size", 100_000), number("chunk", 1000).max(1), number("delay_ms", 50) as u64);
        let bytes = download_bytes(size);
        let stream = chunked(bytes, chunk, Duration::from_millis(delay));
        (
            [
                (header::CONTENT_TYPE, "application/octet-stream".to_string()),
                (header::CONTENT_DISPOSITION, "attachment; filename=\"slow.bin\"".to_string()),
                (header::CONTENT_LENGTH, size.to_string()),
            ],
            axum::body::Body::from_stream(stream),
        )
            .into_response()
    }
    async fn upload(State(log): State<FixtureLog>, headers: axum::http::HeaderMap, body: axum::body::Bytes) -> Response {
        let content_type = headers.get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok()).unwrap_or("");
        let parts = parse_multipart(content_type, &body);
        let summary: Vec<String> =
            parts.iter().map(|part| format!("{}={}:{}", part.field, part.filename.clone().unwrap_or_default(), part.bytes.len())).collect();
        log.uploads.lock().unwrap().push(parts);
        Html(format!("<title>uploaded</title><p id=result>{}</p>", summary.join(" "))).into_response()
    }
    async fn record(State(log): State<FixtureLog>, request: Request, next: axum::middleware::Next) -> Response {
        let seen = log.seen;
        let seen_now = {
            let header_text =
                |name: header::HeaderName| request.headers().get(name).and_then(|value| value.to_str().ok()).map(str::to_string);
            Seen {
                path: request.uri().path().to_string(),
                query: request.uri().query().unwrap_or("").to_string(),
                cookie: header_text(header::COOKIE),
                user_agent: header_text(header::USER_AGENT),
            }
        };
        seen.lock().unwrap().push(seen_now);
        next.run(request).await
    }
    let static_files = move |Path(path): Path<String>| {
        let dir = static_dir.clone();
        async move {
            let Some(dir) = dir else { return StatusCode::NOT_FOUND.into_response() };
            if path.split('/').any(|part| part == ".." || part.is_empty()) {
                return StatusCode::FORBIDDEN.into_response();
            }
            match tokio::fs::read(dir.join(&path)).await {
                Ok(bytes) => {
                    let kind = if path.ends_with(".json") { "application/json" } else { "text/html; charset=utf-8" };
                    ([(header::CONTENT_TYPE, kind), (header::CACHE_CONTROL, "no-store")], bytes).into_response()
                }
                Err(_) => StatusCode::NOT_FOUND.into_response(),
            }
        }
    };
    axum::Router::new()
        .route("/f/{name}", get(page))
        .route("/b/{*path}", get(static_files))
        .route("/set-cookie", get(set_cookie))
        .route("/echo", get(|| async { Html("<title>echo</title>echo") }))
        .route("/status/{code}", get(status))
        .route("/slow", get(slow))
        .route("/login", axum::routing::post(login))
        .route("/download/{name}", get(download))
        .route("/delayed/{name}", get(delayed))
        .route("/api/{*path}", axum::routing::any(api))
        .route("/redirect-to-file", get(|| async { (StatusCode::FOUND, [(header::LOCATION, "file:///etc/passwd")], "").into_response() }))
        .route("/trickle", get(trickle))
        .route("/upload", axum::routing::post(upload))
        .layer(axum::middleware::from_fn_with_state(log.clone(), record))
        .with_state(log)
}

/// `/api/big`: 1.5 MiB of text, each line numbered.
pub fn api_big_body() -> String {
    let mut body = String::new();
    let mut line = 0;
    while body.len() < 1_572_864 {
        body.push_str(&format!("line {line:08}\n"));
        line += 1;
    }
    body
}

/// A 1x1 PNG.
const PIXEL_PNG: [u8; 67] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
    0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63,
    0x00, 0x01, 0x00, 0x00, 0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60,
    0x82,
];

/// A certificate authority made for a test, and leaves it signs for 127.0.0.1 and localhost.
pub struct TestCa {
    pub dir: TempDir,
    /// The CA certificate (PEM), for `MALO_TEST_EXTRA_CA`.
    pub ca_path: PathBuf,
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
}

impl TestCa {
    pub fn new() -> TestCa {
        let dir = TempDir::new("test-ca");
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::default();
        params.distinguished_name.push(rcgen::DnType::CommonName, "malo test CA");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.key_usages = vec![rcgen::KeyUsagePurpose::KeyCertSign, rcgen::KeyUsagePurpose::DigitalSignature];
        let certificate = params.self_signed(&key).unwrap();
        let ca_path = dir.0.join("test-ca.pem");
        std::fs::write(&ca_path, certificate.pem()).unwrap();
        TestCa { dir, ca_path, issuer: rcgen::Issuer::new(params, key) }
    }

    /// A leaf for 127.0.0.1 and localhost, signed by this CA: `(certificate chain, key)`.
    fn leaf(&self) -> (Vec<rustls::pki_types::CertificateDer<'static>>, rustls::pki_types::PrivateKeyDer<'static>) {
        let key = rcgen::KeyPair::generate().unwrap();
        let params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
        let certificate = params.signed_by(&key, &self.issuer).unwrap();
        (vec![certificate.der().clone()], rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()))
    }
}

/// A leaf for 127.0.0.1 signed by nobody anyone trusts (self-signed).
fn untrusted_leaf() -> (Vec<rustls::pki_types::CertificateDer<'static>>, rustls::pki_types::PrivateKeyDer<'static>) {
    let key = rcgen::KeyPair::generate().unwrap();
    let certificate = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap().self_signed(&key).unwrap();
    (vec![certificate.der().clone()], rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()))
}

impl Fixtures {
    /// The fixture routes over HTTPS, with a leaf of `ca` (or an untrusted one); answers the port.
    pub fn start_tls(&self, ca: Option<&TestCa>) -> u16 {
        static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
        let runtime = RUNTIME.get_or_init(|| tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap());
        let (chain, key) = match ca {
            Some(ca) => ca.leaf(),
            None => untrusted_leaf(),
        };
        let mut config = rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let router = fixture_router(FixtureLog { seen: self.seen.clone(), uploads: self.uploads.clone() }, None);
        runtime.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let (acceptor, router) = (acceptor.clone(), router.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(stream).await else { return };
                    let service = hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                        let router = router.clone();
                        async move { tower::ServiceExt::oneshot(router, request.map(axum::body::Body::new)).await }
                    });
                    let _ = hyper::server::conn::http1::Builder::new().serve_connection(hyper_util::rt::TokioIo::new(tls), service).await;
                });
            }
        });
        port
    }
}

/// A WebSocket echo server on 127.0.0.1 (text frames come back as they went); answers its port.
pub fn websocket_echo() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || echo_websocket(stream));
        }
    });
    port
}

fn echo_websocket(mut stream: TcpStream) {
    use base64::Engine as _;
    use sha1::Digest;
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut key = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("sec-websocket-key:") {
            key = line[line.len() - value.len()..].trim().to_string();
        }
        if line == "\r\n" {
            break;
        }
    }
    let accept = base64::engine::general_purpose::STANDARD
        .encode(sha1::Sha1::digest(format!("{key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11").as_bytes()));
    let _ = write!(
        stream,
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
    );
    loop {
        let mut head = [0u8; 2];
        if reader.read_exact(&mut head).is_err() {
            return;
        }
        let opcode = head[0] & 0x0f;
        let mut length = (head[1] & 0x7f) as u64;
        if length == 126 {
            let mut extended = [0u8; 2];
            reader.read_exact(&mut extended).unwrap();
            length = u16::from_be_bytes(extended) as u64;
        } else if length == 127 {
            let mut extended = [0u8; 8];
            reader.read_exact(&mut extended).unwrap();
            length = u64::from_be_bytes(extended);
        }
        let mut mask = [0u8; 4];
        if head[1] & 0x80 != 0 {
            reader.read_exact(&mut mask).unwrap();
        }
        let mut payload = vec![0u8; length as usize];
        reader.read_exact(&mut payload).unwrap();
        if head[1] & 0x80 != 0 {
            for (index, byte) in payload.iter_mut().enumerate() {
                *byte ^= mask[index % 4];
            }
        }
        if opcode == 8 {
            return;
        }
        let mut frame = vec![0x80 | opcode];
        if payload.len() < 126 {
            frame.push(payload.len() as u8);
        } else {
            frame.push(126);
            frame.extend_from_slice(&(payload.len() as u16).to_be_bytes());
        }
        frame.extend_from_slice(&payload);
        if stream.write_all(&frame).is_err() {
            return;
        }
    }
}

/// `bytes` as a stream of `chunk`-sized pieces, one every `delay`.
fn chunked(bytes: Vec<u8>, chunk: usize, delay: Duration) -> impl futures_util::Stream<Item = Result<Vec<u8>, std::io::Error>> + Send {
    futures_util::stream::unfold((bytes, 0usize), move |(bytes, offset)| async move {
        if offset >= bytes.len() {
            return None;
        }
        if offset > 0 {
            tokio::time::sleep(delay).await;
        }
        let end = (offset + chunk).min(bytes.len());
        Some((Ok(bytes[offset..end].to_vec()), (bytes, end)))
    })
}

/// The parts of a `multipart/form-data` body.
pub fn parse_multipart(content_type: &str, body: &[u8]) -> Vec<UploadedPart> {
    let Some(boundary) = content_type.split("boundary=").nth(1).map(|boundary| boundary.trim_matches('"')) else { return Vec::new() };
    let delimiter = format!("--{boundary}");
    let mut parts = Vec::new();
    let mut rest = body;
    while let Some(start) = find(rest, delimiter.as_bytes()) {
        rest = &rest[start + delimiter.len()..];
        if rest.starts_with(b"--") {
            break;
        }
        let Some(head_end) = find(rest, b"\r\n\r\n") else { break };
        let head = String::from_utf8_lossy(&rest[..head_end]).to_string();
        let content = &rest[head_end + 4..];
        let Some(end) = find(content, format!("\r\n{delimiter}").as_bytes()) else { break };
        let disposition = head.lines().find(|line| line.to_ascii_lowercase().starts_with("content-disposition")).unwrap_or("");
        let attribute = |name: &str| {
            disposition
                .split(';')
                .map(str::trim)
                .find_map(|item| item.strip_prefix(&format!("{name}=\"")).map(|value| value.trim_end_matches('"').to_string()))
        };
        parts.push(UploadedPart {
            field: attribute("name").unwrap_or_default(),
            filename: attribute("filename"),
            bytes: content[..end].to_vec(),
        });
        rest = &content[end + 2..];
    }
    parts
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

/// A fixture page of `tests/fixtures/`, read from disk (a new page needs no registration).
fn fixture(name: &str) -> Option<String> {
    let plain = !name.is_empty() && !name.starts_with('.') && name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if !plain {
        return None;
    }
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(name)).ok()
}

/// A `malo mcp` process spoken to in newline-delimited JSON-RPC.
pub struct McpProcess {
    pub child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Drop for McpProcess {
    /// Goes away as a client would (stdin closed), so the lease is released; kills it if
    /// it does not exit.
    fn drop(&mut self) {
        self.close_input();
        if wait_exit(&mut self.child, Duration::from_secs(10)).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl McpProcess {
    pub fn start(daemon: &Daemon, agent_id: &str) -> McpProcess {
        McpProcess::start_in(&daemon.data_dir, agent_id)
    }

    /// `malo mcp` on a data directory (it starts a daemon there when none runs).
    pub fn start_in(data_dir: &Path, agent_id: &str) -> McpProcess {
        let mut child = Command::new(malo_binary())
            .args(["mcp", "--data-dir"])
            .arg(data_dir)
            .args(["--agent-id", agent_id])
            .env("DISPLAY", display())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        watchdog(child.id());
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut process = McpProcess { child, stdin: Some(stdin), stdout, next_id: 0 };
        let initialized = process.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": agent_id, "version": "1" }
            }),
        );
        assert!(initialized["serverInfo"].is_object(), "{initialized}");
        process.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        process
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Closes the server's stdin, as a client that goes away.
    pub fn close_input(&mut self) {
        self.stdin.take();
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "malo mcp closed stdout");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message["result"].clone();
            }
        }
    }

    /// Calls a tool; returns (is_error, first text content).
    pub fn call(&mut self, tool: &str, arguments: Value) -> (bool, String) {
        let result = self.request("tools/call", json!({ "name": tool, "arguments": arguments }));
        let text = result["content"].as_array().into_iter().flatten().find(|block| block["type"] == "text");
        (result["isError"] == true, text.and_then(|block| block["text"].as_str()).unwrap_or("").to_string())
    }
}
