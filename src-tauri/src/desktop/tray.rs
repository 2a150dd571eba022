//! The tray: the daemon's only visible presence. Its menu lists live leases and their
//! sessions (agent id, session name, URL, a mark on a session that waits for a person),
//! a Watch or Hide item per session, and Quit. Where no tray host exists the daemon logs
//! a warning and runs on.

use std::sync::Arc;

use tauri::image::Image;
use tauri::menu::{Menu, MenuEvent, MenuItem, PredefinedMenuItem};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Wry};

use crate::broker::{Broker, LeaseView};

const QUIT_ID: &str = "quit";
const URL_CHARS: usize = 60;
const TOOLTIP: &str = "malo-browser";

/// What a menu item does when chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MenuAction {
    /// Show the session's takeover window, in front, with focus (a person asked for it).
    Watch(String),
    /// Hand the session back: hide its window, as the window's Done button does.
    Hide(String),
}

impl MenuAction {
    fn id(&self) -> String {
        match self {
            MenuAction::Watch(session) => format!("watch:{session}"),
            MenuAction::Hide(session) => format!("hide:{session}"),
        }
    }

    fn parse(id: &str) -> Option<MenuAction> {
        let (verb, session) = id.split_once(':')?;
        match verb {
            "watch" => Some(MenuAction::Watch(session.to_string())),
            "hide" => Some(MenuAction::Hide(session.to_string())),
            _ => None,
        }
    }
}

/// One line of the menu's live part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MenuLine {
    /// The text shown.
    pub text: String,
    /// What choosing it does; `None` for a line that only informs (shown disabled).
    pub action: Option<MenuAction>,
}

impl MenuLine {
    fn info(text: String) -> MenuLine {
        MenuLine { text, action: None }
    }
}

/// The lines describing leases and sessions, as the menu shows them.
pub fn menu_lines(leases: &[LeaseView]) -> Vec<MenuLine> {
    if leases.is_empty() {
        return vec![MenuLine::info("No agents connected".into())];
    }
    let mut lines = Vec::new();
    for lease in leases {
        let port = lease.endpoint.rsplit(':').next().unwrap_or("");
        let count = lease.sessions.len();
        let plural = if count == 1 { "" } else { "s" };
        lines.push(MenuLine::info(format!("{} — port {port} — {count} session{plural}", lease.agent_id)));
        for session in &lease.sessions {
            let mut text = format!("    {}: {}", session.name, shorten(&session.url, URL_CHARS));
            if let Some(what) = &session.waiting_for_person {
                text = format!("    ⚠ {}: {} — waiting for you to {what}", session.name, shorten(&session.url, URL_CHARS));
            }
            lines.push(MenuLine::info(text));
            let (label, action) = if session.window_shown {
                ("Hide", MenuAction::Hide(session.session_id.clone()))
            } else {
                ("Watch", MenuAction::Watch(session.session_id.clone()))
            };
            lines.push(MenuLine { text: format!("        {label}"), action: Some(action) });
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

fn waiting_count(leases: &[LeaseView]) -> usize {
    leases.iter().flat_map(|lease| &lease.sessions).filter(|session| session.waiting_for_person.is_some()).count()
}

fn tooltip(leases: &[LeaseView]) -> String {
    match waiting_count(leases) {
        0 => TOOLTIP.to_string(),
        1 => format!("{TOOLTIP}: a session is waiting for you"),
        waiting => format!("{TOOLTIP}: {waiting} sessions are waiting for you"),
    }
}

/// The attention mark: a red dot with a white rim in the icon's top-right corner.
const DOT: [u8; 4] = [0xe0, 0x1b, 0x24, 0xff];
const RIM: [u8; 4] = [0xff, 0xff, 0xff, 0xff];

/// The icon with the attention mark drawn over it (RGBA, `width` x `height`).
pub(super) fn with_attention_mark(rgba: &[u8], width: u32, height: u32) -> Vec<u8> {
    let mut marked = rgba.to_vec();
    let radius = width.min(height) as f64 * 0.26;
    let (centre_x, centre_y) = (width as f64 - radius - 0.5, radius + 0.5);
    for y in 0..height {
        for x in 0..width {
            let distance = ((x as f64 + 0.5 - centre_x).powi(2) + (y as f64 + 0.5 - centre_y).powi(2)).sqrt();
            let colour = if distance <= radius - 1.0 {
                DOT
            } else if distance <= radius {
                RIM
            } else {
                continue;
            };
            let at = ((y * width + x) * 4) as usize;
            marked[at..at + 4].copy_from_slice(&colour);
        }
    }
    marked
}

/// The installed tray icon and what it shows.
pub(super) struct Tray {
    app: AppHandle,
    icon: TrayIcon,
    shown: Vec<MenuLine>,
    plain: Image<'static>,
    marked: Image<'static>,
    /// Whether the icon carries the attention mark.
    attention: bool,
}

impl Tray {
    /// Installs the icon with the current menu. `quit` runs when Quit is chosen.
    pub(super) fn create(app: &AppHandle, broker: Arc<Broker>, quit: Arc<dyn Fn() + Send + Sync>) -> tauri::Result<Tray> {
        let lines = menu_lines(&broker.list());
        let plain = Image::from_bytes(include_bytes!("../../../icons/tray.png"))?.to_owned();
        let marked = Image::new_owned(with_attention_mark(plain.rgba(), plain.width(), plain.height()), plain.width(), plain.height());
        // The icon's PNG goes in this daemon's own directory: in the shared default
        // (`$XDG_RUNTIME_DIR/tray-icon/tray-icon-malo-0.png`) another daemon's exit would
        // delete it and its changes would overwrite this one's.
        let icon = TrayIconBuilder::with_id("malo")
            .temp_dir_path(broker.data_dir().join("tray"))
            .icon(plain.clone())
            .tooltip(TOOLTIP)
            .menu(&build_menu(app, &lines)?)
            .on_menu_event(move |_app, event| on_menu_event(&broker, &quit, &event))
            .build(app)?;
        Ok(Tray { app: app.clone(), icon, shown: lines, plain, marked, attention: false })
    }

    /// Rebuilds the menu when its lines differ from what it shows.
    pub(super) fn show(&mut self, leases: &[LeaseView]) {
        let lines = menu_lines(leases);
        if lines == self.shown {
            return;
        }
        let result = build_menu(&self.app, &lines).and_then(|menu| self.icon.set_menu(Some(menu)));
        match result {
            Ok(()) => self.shown = lines,
            Err(error) => tracing::warn!(%error, "could not update the tray menu"),
        }
        if let Err(error) = self.icon.set_tooltip(Some(tooltip(leases))) {
            tracing::warn!(%error, "could not update the tray tooltip");
        }
        let attention = waiting_count(leases) > 0;
        if attention != self.attention {
            let image = if attention { self.marked.clone() } else { self.plain.clone() };
            match self.icon.set_icon(Some(image)) {
                Ok(()) => self.attention = attention,
                Err(error) => tracing::warn!(%error, "could not change the tray icon"),
            }
        }
    }
}

fn build_menu(app: &AppHandle, lines: &[MenuLine]) -> tauri::Result<Menu<Wry>> {
    let menu = Menu::new(app)?;
    for (index, line) in lines.iter().enumerate() {
        let item = match &line.action {
            Some(action) => MenuItem::with_id(app, action.id(), &line.text, true, None::<&str>)?,
            None => MenuItem::with_id(app, format!("line-{index}"), &line.text, false, None::<&str>)?,
        };
        menu.append(&item)?;
    }
    menu.append(&PredefinedMenuItem::separator(app)?)?;
    menu.append(&MenuItem::with_id(app, QUIT_ID, "Quit malo-browser", true, None::<&str>)?)?;
    Ok(menu)
}

/// Runs on the main thread: the work goes to the async runtime.
fn on_menu_event(broker: &Arc<Broker>, quit: &Arc<dyn Fn() + Send + Sync>, event: &MenuEvent) {
    let id = event.id().as_ref();
    if id == QUIT_ID {
        quit();
        return;
    }
    let Some(action) = MenuAction::parse(id) else { return };
    tauri::async_runtime::spawn(super::carry_out(broker.clone(), action));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::desktop::tests::{lease, session};

    #[test]
    fn lists_agents_sessions_urls_and_a_watch_or_hide_per_session() {
        let long_url = format!("http://127.0.0.1/{}", "x".repeat(100));
        let mut shown = session("shown", "http://127.0.0.1:9/b", None);
        shown.window_shown = true;
        let leases =
            vec![lease("agent-a", vec![session("research", "http://127.0.0.1:9/a", None), session("long", &long_url, None), shown])];
        let lines = menu_lines(&leases);
        let texts: Vec<&str> = lines.iter().map(|line| line.text.as_str()).collect();
        assert_eq!(texts[0], "agent-a — port 7411 — 3 sessions");
        assert_eq!(texts[1], "    research: http://127.0.0.1:9/a");
        assert_eq!((texts[2], &lines[2].action), ("        Watch", &Some(MenuAction::Watch("sess-research".into()))));
        assert!(texts[3].ends_with('…') && texts[3].chars().count() == 4 + "long: ".len() + URL_CHARS);
        assert_eq!((texts[6], &lines[6].action), ("        Hide", &Some(MenuAction::Hide("sess-shown".into()))));
        assert!(lines.iter().filter(|line| line.action.is_none()).count() == 4);
        assert_eq!(menu_lines(&[])[0].text, "No agents connected");
    }

    #[test]
    fn marks_a_session_waiting_for_a_person() {
        let leases = vec![lease("agent-a", vec![session("mail", "https://mail.example.com/login", Some("log in"))])];
        let lines = menu_lines(&leases);
        assert_eq!(lines[1].text, "    ⚠ mail: https://mail.example.com/login — waiting for you to log in");
        assert_eq!(tooltip(&leases), "malo-browser: a session is waiting for you");
    }

    #[test]
    fn the_attention_mark_is_a_rimmed_dot_in_the_top_right_corner() {
        let (width, height) = (22, 22);
        let plain = vec![0x40; (width * height * 4) as usize];
        let marked = with_attention_mark(&plain, width, height);
        let pixel = |x: u32, y: u32| &marked[((y * width + x) * 4) as usize..][..4];
        assert_eq!(pixel(16, 5), DOT);
        assert_eq!(pixel(16, 1), RIM);
        assert_eq!(pixel(4, 17), [0x40; 4], "the rest of the icon is untouched");
        assert_eq!(pixel(0, 0), [0x40; 4]);
    }

    #[test]
    fn menu_ids_round_trip() {
        for action in [MenuAction::Watch("sess-1".into()), MenuAction::Hide("sess-1".into())] {
            assert_eq!(MenuAction::parse(&action.id()), Some(action));
        }
        assert_eq!(MenuAction::parse(QUIT_ID), None);
        assert_eq!(MenuAction::parse("line-3"), None);
    }
}
