//! The tray: the daemon's only visible presence. Its menu lists live leases and their
//! sessions (agent id, session name, URL) and has Quit; it is rebuilt whenever leases
//! or sessions change. Where no tray host exists the daemon logs a warning and runs on.

use std::sync::Arc;
use std::time::Duration;

use tauri::image::Image;
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Wry};

use crate::broker::{Broker, LeaseView};

const QUIT_ID: &str = "quit";
const URL_CHARS: usize = 60;

/// One line of the menu's live part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MenuLine {
    /// The text shown.
    pub text: String,
}

/// The lines describing leases and sessions, as the menu shows them.
pub fn menu_lines(leases: &[LeaseView]) -> Vec<MenuLine> {
    if leases.is_empty() {
        return vec![MenuLine { text: "No agents connected".into() }];
    }
    let mut lines = Vec::new();
    for lease in leases {
        let port = lease.endpoint.rsplit(':').next().unwrap_or("");
        let count = lease.sessions.len();
        let plural = if count == 1 { "" } else { "s" };
        lines.push(MenuLine { text: format!("{} — port {port} — {count} session{plural}", lease.agent_id) });
        for session in &lease.sessions {
            lines.push(MenuLine { text: format!("    {}: {}", session.name, shorten(&session.url, URL_CHARS)) });
        }
    }
    lines
}

fn shorten(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        text.to_string()
    } else {
        let mut short: String = text.chars().take(limit - 1).collect();
        short.push('…');
        short
    }
}

fn build_menu(app: &AppHandle, leases: &[LeaseView]) -> tauri::Result<Menu<Wry>> {
    let menu = Menu::new(app)?;
    for (index, line) in menu_lines(leases).into_iter().enumerate() {
        menu.append(&MenuItem::with_id(app, format!("line-{index}"), line.text, false, None::<&str>)?)?;
    }
    menu.append(&PredefinedMenuItem::separator(app)?)?;
    menu.append(&MenuItem::with_id(app, QUIT_ID, "Quit malo-browser", true, None::<&str>)?)?;
    Ok(menu)
}

/// Installs the tray icon and keeps its menu current. `quit` runs when Quit is chosen.
pub fn install(app: &AppHandle, broker: Arc<Broker>, quit: Arc<dyn Fn() + Send + Sync>) {
    let tray = match create(app, &broker, quit) {
        Ok(tray) => tray,
        Err(error) => {
            tracing::warn!(%error, "no tray icon (is there a tray host?); running without one");
            return;
        }
    };
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let mut shown = menu_lines(&broker.list());
        // Leases and sessions notify on change; page URLs change without notice, so also
        // look every few seconds, and rebuild only when the lines differ.
        let mut ticker = tokio::time::interval(Duration::from_secs(3));
        loop {
            tokio::select! {
                _ = broker.changes.notified() => {}
                _ = ticker.tick() => {}
            }
            if broker.is_shutting_down() {
                return;
            }
            let leases = broker.list();
            let lines = menu_lines(&leases);
            if lines == shown {
                continue;
            }
            match build_menu(&app, &leases) {
                Ok(menu) => match tray.set_menu(Some(menu)) {
                    Ok(()) => shown = lines,
                    Err(error) => tracing::warn!(%error, "could not update the tray menu"),
                },
                Err(error) => tracing::warn!(%error, "could not build the tray menu"),
            }
        }
    });
}

fn create(app: &AppHandle, broker: &Broker, quit: Arc<dyn Fn() + Send + Sync>) -> tauri::Result<TrayIcon> {
    let icon = Image::from_bytes(include_bytes!("../../icons/tray.png"))?;
    TrayIconBuilder::with_id("malo")
        .icon(icon)
        .tooltip("malo-browser")
        .menu(&build_menu(app, &broker.list())?)
        .on_menu_event(move |_app, event| {
            if event.id().as_ref() == QUIT_ID {
                quit();
            }
        })
        .build(app)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::SessionSummary;

    fn session(name: &str, url: &str) -> SessionSummary {
        SessionSummary {
            session_id: "sess-1".into(),
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
        }
    }

    #[test]
    fn lists_agents_sessions_and_urls() {
        let long_url = format!("http://127.0.0.1/{}", "x".repeat(100));
        let leases = vec![LeaseView {
            lease_id: "lease-1".into(),
            agent_id: "agent-a".into(),
            endpoint: "http://127.0.0.1:7411".into(),
            expires_at: String::new(),
            sessions: vec![session("research", "http://127.0.0.1:9/a"), session("long", &long_url)],
        }];
        let lines: Vec<String> = menu_lines(&leases).into_iter().map(|line| line.text).collect();
        assert_eq!(lines[0], "agent-a — port 7411 — 2 sessions");
        assert_eq!(lines[1], "    research: http://127.0.0.1:9/a");
        assert!(lines[2].ends_with('…') && lines[2].chars().count() == 4 + "long: ".len() + URL_CHARS);
        assert_eq!(menu_lines(&[])[0].text, "No agents connected");
    }
}
