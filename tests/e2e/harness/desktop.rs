//! A person's desktop on a private D-Bus (`tests/desktop/host.py`): the tray host and the
//! notification server, asked and answered in JSON lines.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{json, Value};

use super::{private_bus, python, repo_file, watchdog};

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

    /// A person presses the button `action` (its key) of notification `id`.
    pub fn press(&mut self, id: u64, action: &str) {
        let answer = self.ask(json!({ "do": "invoke", "id": id, "action": action }));
        assert_eq!(answer["invoked"], id, "{answer}");
    }

    /// A person dismisses notification `id` (closes it without pressing a button).
    pub fn dismiss(&mut self, id: u64) {
        let answer = self.ask(json!({ "do": "dismiss", "id": id }));
        assert_eq!(answer["dismissed"], id, "{answer}");
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
