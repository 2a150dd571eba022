//! The checks on the session D-Bus: the bus itself, a Secret Service keyring (the vault)
//! and a StatusNotifier host (the tray). They connect to the bus the environment names and
//! ask who owns a name; they never start a bus or activate a service.

use gtk::gio;
use gtk::glib;
use gtk::glib::ToVariant;

use super::Check;

/// Where the vault's passwords live.
const SECRET_SERVICE: &str = "org.freedesktop.secrets";
/// What the tray registers its icon with.
const STATUS_NOTIFIER_WATCHER: &str = "org.kde.StatusNotifierWatcher";

/// The bus, the keyring and the tray host; `has_display` says whether the daemon would
/// show a tray at all (on its private Xvfb it does not).
pub(super) fn checks(has_display: bool) -> Vec<Check> {
    let Some(address) = session_bus_address() else {
        let fix = "run malo in a desktop session, or start one bus for it: dbus-run-session -- malo daemon";
        return vec![
            Check::warn("dbus", "no session D-Bus (DBUS_SESSION_BUS_ADDRESS is unset and there is no $XDG_RUNTIME_DIR/bus)", fix),
            Check::warn("keyring", "no session D-Bus, so no Secret Service: `malo credentials` and password logins will fail", fix),
            tray_without_bus(has_display),
        ];
    };
    let flags = gio::DBusConnectionFlags::AUTHENTICATION_CLIENT | gio::DBusConnectionFlags::MESSAGE_BUS_CONNECTION;
    let bus = match gio::DBusConnection::for_address_sync(&address, flags, None, None::<&gio::Cancellable>) {
        Ok(bus) => bus,
        Err(error) => {
            let fix = "check DBUS_SESSION_BUS_ADDRESS, or start a bus: dbus-run-session -- malo daemon";
            return vec![
                Check::warn("dbus", format!("cannot connect to the session D-Bus at {address}: {error}"), fix),
                Check::warn("keyring", "no session D-Bus, so no Secret Service for the vault", fix),
                tray_without_bus(has_display),
            ];
        }
    };
    vec![Check::ok("dbus", format!("session bus at {address}")), keyring(&bus), tray(&bus, has_display)]
}

fn keyring(bus: &gio::DBusConnection) -> Check {
    if owned(bus, SECRET_SERVICE) {
        return Check::ok("keyring", format!("a Secret Service keyring runs ({SECRET_SERVICE})"));
    }
    let fix =
        "start a keyring: gnome-keyring-daemon --start --components=secrets (apt install gnome-keyring), or log in to a desktop session";
    let detail = if activatable(bus, SECRET_SERVICE) {
        "no Secret Service keyring is running (D-Bus could start one on first use, which may ask to unlock it): the vault (`malo credentials`, password logins) needs it"
    } else {
        "no Secret Service keyring is running: the vault (`malo credentials`, password logins) needs one"
    };
    Check::warn("keyring", detail, fix)
}

fn tray(bus: &gio::DBusConnection, has_display: bool) -> Check {
    if !has_display {
        return Check::ok("tray", "no display: the daemon runs without a tray icon (nothing to check)");
    }
    if owned(bus, STATUS_NOTIFIER_WATCHER) {
        return Check::ok("tray", format!("a tray host runs ({STATUS_NOTIFIER_WATCHER})"));
    }
    Check::warn(
        "tray",
        "no StatusNotifier tray host: the daemon runs, but without its tray icon (people cannot see sessions or quit from it)",
        "use a panel with StatusNotifier support (KDE, XFCE, waybar); on GNOME, the AppIndicator extension",
    )
}

fn tray_without_bus(has_display: bool) -> Check {
    if has_display {
        Check::warn("tray", "no session D-Bus, so no tray icon", "run the daemon inside a desktop session")
    } else {
        Check::ok("tray", "no display: the daemon runs without a tray icon (nothing to check)")
    }
}

/// Whether a name has an owner on the bus (a bus that does not answer: no).
fn owned(bus: &gio::DBusConnection, name: &str) -> bool {
    ask_bus(bus, "NameHasOwner", Some((name.to_string(),).to_variant()), "(b)")
        .and_then(|reply| reply.get::<(bool,)>())
        .is_some_and(|(owned,)| owned)
}

/// Whether the bus would start a service for this name.
fn activatable(bus: &gio::DBusConnection, name: &str) -> bool {
    ask_bus(bus, "ListActivatableNames", None, "(as)")
        .and_then(|reply| reply.get::<(Vec<String>,)>())
        .is_some_and(|(names,)| names.iter().any(|known| known == name))
}

fn ask_bus(bus: &gio::DBusConnection, method: &str, parameters: Option<glib::Variant>, reply: &str) -> Option<glib::Variant> {
    bus.call_sync(
        Some("org.freedesktop.DBus"),
        "/org/freedesktop/DBus",
        "org.freedesktop.DBus",
        method,
        parameters.as_ref(),
        glib::VariantTy::new(reply).ok(),
        gio::DBusCallFlags::NO_AUTO_START,
        2000,
        None::<&gio::Cancellable>,
    )
    .ok()
}

/// The session bus the environment names, as the daemon's notifications find it.
fn session_bus_address() -> Option<String> {
    if let Some(address) = std::env::var("DBUS_SESSION_BUS_ADDRESS").ok().filter(|address| !address.is_empty()) {
        return Some(address);
    }
    let socket = std::path::Path::new(&std::env::var_os("XDG_RUNTIME_DIR")?).join("bus");
    socket.exists().then(|| format!("unix:path={}", socket.display()))
}
