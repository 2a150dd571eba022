//! Desktop notifications through the freedesktop notification service
//! (`org.freedesktop.Notifications` on the session D-Bus), which every Linux desktop runs.
//! Calls block for at most [`CALL_TIMEOUT_MS`]; callers run them off the async threads.
//! Clicking a notification (its default action) is reported through [`Notifier::on_click`];
//! a question's buttons and its closing through [`Notifier::on_answer`].

use std::collections::HashMap;

use gtk::gio;
use gtk::glib::{ToVariant, Variant};

const SERVICE: &str = "org.freedesktop.Notifications";
const PATH: &str = "/org/freedesktop/Notifications";
const CALL_TIMEOUT_MS: i32 = 2_000;
const APP_NAME: &str = "malo-browser";
const DEFAULT_ACTION: &str = "default";
/// The spec's urgency levels: 0 low, 1 normal, 2 critical.
const URGENCY_CRITICAL: u8 = 2;

/// A connection to the session bus's notification service.
#[derive(Debug, Clone)]
pub struct Notifier {
    bus: gio::DBusConnection,
}

impl Notifier {
    /// Connects to the session bus named by `DBUS_SESSION_BUS_ADDRESS` (or the user's
    /// `$XDG_RUNTIME_DIR/bus`). Never starts a bus of its own: without one there are no
    /// notifications, and the reason is returned.
    pub fn connect() -> Result<Notifier, String> {
        let address = session_bus_address().ok_or("no session D-Bus (DBUS_SESSION_BUS_ADDRESS is not set)")?;
        let flags = gio::DBusConnectionFlags::AUTHENTICATION_CLIENT | gio::DBusConnectionFlags::MESSAGE_BUS_CONNECTION;
        let bus = gio::DBusConnection::for_address_sync(&address, flags, None, None::<&gio::Cancellable>)
            .map_err(|error| format!("cannot connect to the session D-Bus: {error}"))?;
        Ok(Notifier { bus })
    }

    /// Shows a notification that stays until closed; answers its id. `body` is plain
    /// text (escaped here, since servers may read it as markup).
    pub fn show(&self, summary: &str, body: &str) -> Result<u32, String> {
        // Critical: it stays until the wait ends (we withdraw it), not just a few seconds.
        let hints: HashMap<String, Variant> = HashMap::from([("urgency".to_string(), URGENCY_CRITICAL.to_variant())]);
        // "default" is clicking the notification itself; the label is for servers that show buttons.
        let actions: Vec<String> = vec![DEFAULT_ACTION.into(), "Show the window".into()];
        let never_expire = 0i32;
        let arguments = (APP_NAME, 0u32, "", summary, escape_markup(body), actions, hints, never_expire).to_variant();
        let reply = self.call("Notify", &arguments)?;
        reply.get::<(u32,)>().map(|(id,)| id).ok_or_else(|| format!("unexpected Notify reply {reply}"))
    }

    /// Sends the id of every notification a person clicks to `clicked`. Must be called
    /// from a thread with no GLib main context of its own: the signal is then dispatched
    /// by the default main context, which the GTK main loop runs.
    pub fn on_click(&self, clicked: tokio::sync::mpsc::UnboundedSender<u32>) {
        self.subscribe("ActionInvoked", move |parameters| {
            if let Some((id, action)) = parameters.get::<(u32, String)>() {
                if action == DEFAULT_ACTION {
                    let _ = clicked.send(id);
                }
            }
        });
    }

    /// Shows a question with a button per `(key, label)` action, which stays until answered
    /// or withdrawn; answers its id. `body` is plain text.
    pub fn ask(&self, summary: &str, body: &str, actions: &[(&str, &str)]) -> Result<u32, String> {
        let hints: HashMap<String, Variant> = HashMap::from([("urgency".to_string(), URGENCY_CRITICAL.to_variant())]);
        let actions: Vec<String> = actions.iter().flat_map(|(key, label)| [key.to_string(), label.to_string()]).collect();
        let never_expire = 0i32;
        let arguments = (APP_NAME, 0u32, "", summary, escape_markup(body), actions, hints, never_expire).to_variant();
        let reply = self.call("Notify", &arguments)?;
        reply.get::<(u32,)>().map(|(id,)| id).ok_or_else(|| format!("unexpected Notify reply {reply}"))
    }

    /// Sends every action a person invokes on any notification (`(id, Some(action key))`)
    /// and every notification closed (`(id, None)` when the person dismissed it) to
    /// `answers`. The same main-context rule as [`Notifier::on_click`] holds.
    pub fn on_answer(&self, answers: tokio::sync::mpsc::UnboundedSender<(u32, NotificationAnswer)>) {
        let invoked = answers.clone();
        self.subscribe("ActionInvoked", move |parameters| {
            if let Some((id, action)) = parameters.get::<(u32, String)>() {
                let _ = invoked.send((id, NotificationAnswer::Action(action)));
            }
        });
        self.subscribe("NotificationClosed", move |parameters| {
            if let Some((id, reason)) = parameters.get::<(u32, u32)>() {
                // The spec's reasons: 1 expired, 2 dismissed by the user, 3 closed by a call.
                let _ = answers.send((id, NotificationAnswer::Closed { by_person: reason == 2 }));
            }
        });
    }

    /// Calls `handler` with the parameters of every `signal` the notification server
    /// sends (only the server's own name can send it).
    fn subscribe(&self, signal: &str, handler: impl Fn(&Variant) + 'static) {
        self.bus.signal_subscribe(
            Some(SERVICE),
            Some(SERVICE),
            Some(signal),
            Some(PATH),
            None,
            gio::DBusSignalFlags::NONE,
            move |_bus, _sender, _path, _interface, _signal, parameters| handler(parameters),
        );
    }

    /// Withdraws notification `id`.
    pub fn close(&self, id: u32) -> Result<(), String> {
        self.call("CloseNotification", &(id,).to_variant()).map(drop)
    }

    fn call(&self, method: &str, arguments: &Variant) -> Result<Variant, String> {
        self.bus
            .call_sync(
                Some(SERVICE),
                PATH,
                SERVICE,
                method,
                Some(arguments),
                None,
                gio::DBusCallFlags::NONE,
                CALL_TIMEOUT_MS,
                None::<&gio::Cancellable>,
            )
            .map_err(|error| format!("{method}: {error}"))
    }
}

/// What happened to a notification, as its server reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotificationAnswer {
    /// A person invoked this action.
    Action(String),
    /// It was closed; `by_person`: a person dismissed it.
    Closed {
        /// Whether a person dismissed it.
        by_person: bool,
    },
}

fn session_bus_address() -> Option<String> {
    if let Some(address) = std::env::var("DBUS_SESSION_BUS_ADDRESS").ok().filter(|address| !address.is_empty()) {
        return Some(address);
    }
    let socket = std::path::Path::new(&std::env::var_os("XDG_RUNTIME_DIR")?).join("bus");
    socket.exists().then(|| format!("unix:path={}", socket.display()))
}

/// Escapes the characters the notification spec's body markup gives meaning to.
fn escape_markup(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            other => escaped.push(other),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::escape_markup;

    #[test]
    fn body_markup_is_escaped() {
        assert_eq!(escape_markup("agent <b>x</b> & co"), "agent &lt;b&gt;x&lt;/b&gt; &amp; co");
    }
}
