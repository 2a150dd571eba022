//! Private D-Bus session buses, and one with an unlocked gnome-keyring Secret Service (the
//! vault's keychain).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use super::{eventually, watchdog};

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
