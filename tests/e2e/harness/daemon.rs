//! The real `malo` daemon under test: its options, its command line and environment, and
//! the running process (its JSON line, stderr, leases, stop and kill).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use super::{backend, display, malo_binary, request, signal, sway, wait_exit, watchdog, weston, Lease, TempDir};

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
    /// Runs the CLI on this daemon's data directory, from `dir`, with `--json`, and
    /// answers the JSON it printed (asserting it succeeded).
    pub fn cli_in(&self, dir: &Path, args: &[&str]) -> Value {
        let json: Vec<&str> = args.iter().copied().chain(["--json"]).collect();
        serde_json::from_str::<Value>(&self.cli_text_in(dir, &json)).unwrap()
    }

    /// Runs the CLI on this daemon's data directory, from `dir`, with stdout on a pipe:
    /// whatever it did.
    pub fn cli_output_in(&self, dir: &Path, args: &[&str]) -> std::process::Output {
        Command::new(malo_binary())
            .args(args)
            .arg("--data-dir")
            .arg(&self.data_dir)
            .current_dir(dir)
            .env("DISPLAY", display())
            .output()
            .unwrap()
    }

    /// Runs the CLI on this daemon's data directory, from `dir`, and answers what it
    /// printed (asserting it succeeded).
    pub fn cli_text_in(&self, dir: &Path, args: &[&str]) -> String {
        let output = self.cli_output_in(dir, args);
        assert!(output.status.success(), "malo {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    }

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
