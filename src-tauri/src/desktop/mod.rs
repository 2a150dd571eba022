//! What a person sees of the daemon: the tray icon with its menu (leases, sessions, Watch
//! and Hide, Quit), a desktop notification when a session waits for them, and the
//! policy's questions (`approvals.rs`). One task
//! follows the broker for both: it wakes on every change of leases, sessions, takeover
//! windows and waits for a person, and every few seconds for page URLs.

mod approvals;
pub mod autostart;
#[cfg(target_os = "linux")]
mod notify;
#[cfg(not(target_os = "linux"))]
#[path = "notify_unsupported.rs"]
mod notify;
mod tray;

pub use notify::Notifier;
pub use tray::{menu_lines, MenuAction, MenuLine};

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tauri::AppHandle;

use crate::broker::{Broker, LeaseView};
use crate::engine::WatchChange;

/// Installs the tray icon and starts following the broker. `quit` runs when Quit is chosen;
/// `stopped` is notified once the broker shuts down and every notification is withdrawn.
pub fn install(app: &AppHandle, broker: Arc<Broker>, quit: Arc<dyn Fn() + Send + Sync>, stopped: Arc<tokio::sync::Notify>) {
    // The policy's questions go to the person as notifications with buttons.
    broker.approvals().set_person(Arc::new(approvals::DesktopPerson::default()));
    let mut tray = match tray::Tray::create(app, broker.clone(), quit) {
        Ok(tray) => Some(tray),
        Err(error) => {
            tracing::warn!(%error, "no tray icon (is there a tray host?); running without one");
            None
        }
    };
    tauri::async_runtime::spawn(async move {
        let (clicks, mut clicked) = tokio::sync::mpsc::unbounded_channel();
        let mut announcer = Announcer { clicks: Some(clicks), ..Announcer::default() };
        // Page URLs change without notice: also look every few seconds.
        let mut ticker = tokio::time::interval(Duration::from_secs(3));
        loop {
            tokio::select! {
                _ = broker.changes.notified() => {}
                _ = ticker.tick() => {}
                Some(id) = clicked.recv() => {
                    // A person clicked the notification: bring that session's window forward.
                    if let Some(session_id) = announcer.session_of(id) {
                        carry_out(broker.clone(), MenuAction::Watch(session_id)).await;
                    }
                    continue;
                }
            }
            if broker.is_shutting_down() {
                announcer.withdraw_all().await;
                stopped.notify_one();
                return;
            }
            let leases = broker.list();
            if let Some(tray) = tray.as_mut() {
                tray.show(&leases);
            }
            announcer.update(&leases).await;
        }
    });
}

/// Does what a person asked for from the tray or a notification.
async fn carry_out(broker: Arc<Broker>, action: MenuAction) {
    let (MenuAction::Watch(session_id) | MenuAction::Hide(session_id)) = &action;
    let Some(session) = broker.find_session(session_id) else { return };
    let change = match action {
        // A person asked to see it: in front, with focus.
        MenuAction::Watch(_) => WatchChange::Show { title: session.window_title(), focus: true, keep_visible: None },
        MenuAction::Hide(_) => WatchChange::HandBack,
    };
    session.touch();
    // The tab a person has on screen, else the selected one.
    let shown = session.tabs.list().into_iter().find(|tab| tab.status.is_shown());
    let Some(tab) = shown.or_else(|| session.tabs.get(None).ok()) else { return };
    let request = crate::engine::TabRequest::Watch(change);
    if let Err(error) = session.engine.tab::<serde_json::Value>(session.address(&tab), request).await {
        tracing::warn!(session = %session.id, %error, "could not change the session's window for a person");
    }
}

/// A session that waits for a person, as the notification tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announcement {
    /// The waiting session.
    pub session_id: String,
    /// The notification's title: who needs the person, and where.
    pub summary: String,
    /// What to do.
    pub body: String,
}

/// One announcement per session that waits for a person.
pub fn announcements(leases: &[LeaseView]) -> Vec<Announcement> {
    let mut found = Vec::new();
    for lease in leases {
        for session in &lease.sessions {
            let Some(what) = &session.waiting_for_person else { continue };
            let site = site_of(&session.url);
            found.push(Announcement {
                session_id: session.session_id.clone(),
                summary: format!("{} needs you to {what} at {site}", lease.agent_id),
                body: format!(
                    "Session \u{201c}{}\u{201d} of agent {} is waiting in a malo-browser window. When you are done, press Done; the agent then goes on.",
                    session.name, lease.agent_id
                ),
            });
        }
    }
    found
}

/// The host (and port, when not the scheme's default) of a URL; the URL itself otherwise.
fn site_of(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(parsed) => match (parsed.host_str(), parsed.port()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_string(),
            _ => url.to_string(),
        },
        Err(_) => url.to_string(),
    }
}

/// Shows a notification when a session starts waiting for a person and withdraws it when
/// the wait ends. Without a notification service it logs once and carries on.
#[derive(Default)]
struct Announcer {
    notifier: Option<Result<Notifier, ()>>,
    /// Where clicks on notifications go, until the notifier is connected.
    clicks: Option<tokio::sync::mpsc::UnboundedSender<u32>>,
    /// Waiting sessions, with their notification's id when one was shown.
    shown: HashMap<String, Option<u32>>,
}

impl Announcer {
    async fn update(&mut self, leases: &[LeaseView]) {
        let now = announcements(leases);
        let ended: Vec<(String, Option<u32>)> = self
            .shown
            .iter()
            .filter(|(session, _)| !now.iter().any(|announcement| &announcement.session_id == *session))
            .map(|(session, id)| (session.clone(), *id))
            .collect();
        for (session, id) in ended {
            self.shown.remove(&session);
            if let Some(id) = id {
                self.close(id).await;
            }
        }
        for announcement in now {
            if self.shown.contains_key(&announcement.session_id) {
                continue;
            }
            let id = self.show(&announcement).await;
            self.shown.insert(announcement.session_id, id);
        }
    }

    async fn withdraw_all(&mut self) {
        for (_, id) in std::mem::take(&mut self.shown) {
            if let Some(id) = id {
                self.close(id).await;
            }
        }
    }

    /// The session whose notification is `id`.
    fn session_of(&self, id: u32) -> Option<String> {
        self.shown.iter().find(|(_, shown)| **shown == Some(id)).map(|(session, _)| session.clone())
    }

    async fn notifier(&mut self) -> Option<Notifier> {
        if self.notifier.is_none() {
            let clicks = self.clicks.take();
            let connect = move || {
                let notifier = Notifier::connect()?;
                if let Some(clicks) = clicks {
                    notifier.on_click(clicks);
                }
                Ok(notifier)
            };
            let connected = tokio::task::spawn_blocking(connect).await.unwrap_or_else(|error| Err(error.to_string()));
            self.notifier = Some(connected.map_err(|error| tracing::warn!(%error, "desktop notifications are off")));
        }
        self.notifier.clone().and_then(Result::ok)
    }

    async fn show(&mut self, announcement: &Announcement) -> Option<u32> {
        let notifier = self.notifier().await?;
        let (summary, body) = (announcement.summary.clone(), announcement.body.clone());
        match tokio::task::spawn_blocking(move || notifier.show(&summary, &body)).await {
            Ok(Ok(id)) => {
                tracing::info!(session = %announcement.session_id, notification = id, "announced a session waiting for a person");
                Some(id)
            }
            Ok(Err(error)) => {
                tracing::warn!(%error, "could not show a desktop notification");
                None
            }
            Err(_) => None,
        }
    }

    async fn close(&mut self, id: u32) {
        let Some(notifier) = self.notifier().await else { return };
        if let Ok(Err(error)) = tokio::task::spawn_blocking(move || notifier.close(id)).await {
            tracing::warn!(%error, "could not withdraw a desktop notification");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::SessionSummary;

    pub(super) fn session(name: &str, url: &str, waiting: Option<&str>) -> SessionSummary {
        SessionSummary {
            session_id: format!("sess-{name}"),
            name: name.into(),
            lease_id: "lease-1".into(),
            width: 1280,
            height: 800,
            profile: None,
            url: url.into(),
            title: String::new(),
            created_at: String::new(),
            idle_ms: 0,
            downloads_dir: String::new(),
            artifacts_dir: String::new(),
            window_shown: false,
            waiting_for_person: waiting.map(str::to_string),
            tab: Some("ab12".into()),
            tab_count: 1,
            proxy: None,
            network_conditions: None,
            policy: crate::policy::Policy::default().rules_for(None).summary(),
            live_url: None,
        }
    }

    pub(super) fn lease(agent: &str, sessions: Vec<SessionSummary>) -> LeaseView {
        LeaseView {
            lease_id: "lease-1".into(),
            agent_id: agent.into(),
            endpoint: "http://127.0.0.1:7411".into(),
            expires_at: String::new(),
            sessions,
        }
    }

    #[test]
    fn announces_only_waiting_sessions_naming_agent_and_site() {
        let leases = vec![lease(
            "agent-a",
            vec![
                session("quiet", "https://example.com/", None),
                session("mail", "https://mail.example.com:8443/login?next=/inbox", Some("log in")),
            ],
        )];
        let found = announcements(&leases);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].session_id, "sess-mail");
        assert_eq!(found[0].summary, "agent-a needs you to log in at mail.example.com:8443");
        assert!(found[0].body.contains("\u{201c}mail\u{201d}") && found[0].body.contains("agent-a"));
        assert_eq!(site_of("about:blank"), "about:blank");
        assert_eq!(site_of("https://example.com/a"), "example.com");
    }
}
