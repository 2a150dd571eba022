//! The takeover window: when a person must step in, the session's own webview (the same
//! page, state and scripts: not a copy) moves from its offscreen host into a small window
//! with a native title bar and a toolbar (`ui/toolbar.html`: back, forward, reload, an
//! address bar for http/https, Done). Hiding moves it back, unchanged. With `focus: false`
//! the window maps without taking keyboard focus or rising over the person's window.

use std::rc::Rc;

use gtk::prelude::*;
use serde_json::{json, Value};
use webkit2gtk::WebViewExt;

use super::tab::Tab;
use super::window::Takeover;
use crate::error::Result;
use crate::events::EventKind;

/// Height of the toolbar above the page.
pub(super) const TOOLBAR_HEIGHT: i32 = 40;
const TOOLBAR_HTML: &str = include_str!("../../../../ui/toolbar.html");

/// Shows the takeover window for `tab` (creating it, or raising it when `focus`).
pub(super) fn show(tab: &Rc<Tab>, title: &str, focus: bool, keep_visible: Option<bool>) -> Result<Value> {
    let state = tab.takeover.clone();
    let shown = state.window.borrow().is_some();
    if let Some(keep_visible) = keep_visible.or((!shown).then_some(false)) {
        state.keep_visible.set(keep_visible);
    }
    if let Some(takeover) = state.window.borrow().as_ref() {
        takeover.window.set_title(title);
        if focus {
            takeover.window.present();
        }
        return Ok(json!({ "shown": true, "focus": focus, "title": title }));
    }
    let (width, height) = tab.size.get();
    let window = gtk::Window::new(gtk::WindowType::Toplevel);
    window.set_title(title);
    window.set_default_size(width, height + TOOLBAR_HEIGHT);
    window.set_focus_on_map(focus);
    let layout = gtk::Fixed::new();
    window.add(&layout);

    let toolbar_box = gtk::Box::new(gtk::Orientation::Vertical, 0);
    toolbar_box.set_size_request(width, TOOLBAR_HEIGHT);
    layout.put(&toolbar_box, 0, 0);
    let weak_tab = Rc::downgrade(tab);
    let initial_url = tab.view.uri().map(|uri| uri.to_string()).unwrap_or_default();
    let toolbar = super::toolbar::build(TOOLBAR_HTML, &initial_url, move |body| {
        if let Some(tab) = weak_tab.upgrade() {
            handle_toolbar(&tab, body);
        }
    });
    toolbar.set_size_request(width, TOOLBAR_HEIGHT);
    toolbar_box.pack_start(&toolbar, true, true, 0);

    // The page leaves its offscreen host for the window, as it is.
    tab.host.remove(&tab.view);
    tab.view.set_size_request(width, height);
    layout.put(&tab.view, 0, TOOLBAR_HEIGHT);
    tab.set_seen(true);
    tab.view.show();

    let toolbar_view = toolbar.clone();
    let uri_handler = tab
        .view
        .connect_uri_notify(move |view| super::toolbar::set_url(&toolbar_view, &view.uri().map(|uri| uri.to_string()).unwrap_or_default()));

    let weak_tab = Rc::downgrade(tab);
    window.connect_delete_event(move |_, _| {
        // Closing the window is Done: the session goes back to the agent.
        if let Some(tab) = weak_tab.upgrade() {
            let _ = hand_back(&tab);
        }
        glib::Propagation::Stop
    });
    window.show_all();
    tab.view.queue_draw();
    if focus {
        window.present();
    }
    let wayland = on_wayland(&window);
    *state.window.borrow_mut() = Some(Takeover { window, layout, toolbar: Some(toolbar), uri_handler: Some(uri_handler) });
    // A live view of the tab goes on showing it, from the window now.
    super::frames::rehost(tab);
    tab.state.status.set_shown(true);
    tab.events.push(Some(&tab.id), EventKind::Watch { shown: true, focus: Some(focus) });
    let mut answer = json!({ "shown": true, "focus": focus, "title": title });
    if !focus && wayland {
        answer["note"] = json!(WAYLAND_FOCUS);
    }
    Ok(answer)
}

/// Said with `focus: false` on Wayland, where no protocol lets a window map without focus.
const WAYLAND_FOCUS: &str =
    "on Wayland the compositor decides whether a new window takes keyboard focus: malo cannot keep it in the background (on sway, a no_focus rule for the title \"malo-browser\" does)";

/// Whether the window is a Wayland surface (not X11 or XWayland).
fn on_wayland(window: &gtk::Window) -> bool {
    window.display().type_().name() == "GdkWaylandDisplay"
}

/// A person hands the session back (Done, closing the window, the tray's Hide): counts a
/// Done, which a waiting `login {mode: "watch"}` takes as the person being finished.
pub(super) fn hand_back(tab: &Rc<Tab>) -> Result<Value> {
    count_done(tab);
    hide(tab)
}

fn count_done(tab: &Tab) {
    tab.state.status.set_takeover_requested(false);
    tab.takeover.done.set(tab.takeover.done.get() + 1);
    tab.events.push(Some(&tab.id), EventKind::WatchDone {});
}

/// Hides the window and puts the page back in its offscreen host.
pub(super) fn hide(tab: &Rc<Tab>) -> Result<Value> {
    let answer = hide_window(tab);
    super::frames::rehost(tab);
    answer
}

/// Hides the window, the page back in its offscreen host (a live view not told).
pub(super) fn hide_window(tab: &Tab) -> Result<Value> {
    let Some(mut takeover) = tab.takeover.window.borrow_mut().take() else {
        return Ok(json!({ "shown": false }));
    };
    takeover.window.hide();
    if let Some(handler) = takeover.uri_handler.take() {
        tab.view.disconnect(handler);
    }
    takeover.layout.remove(&tab.view);
    tab.host.add(&tab.view);
    tab.set_seen(tab.live.borrow().is_some());
    let (width, height) = tab.size.get();
    tab.view.set_size_request(width, height);
    tab.view.show();
    drop(takeover.toolbar.take());
    #[allow(unsafe_code)]
    // SAFETY: the window is ours alone and holds nothing after the page left it.
    unsafe {
        takeover.window.destroy();
    }
    tab.state.status.set_shown(false);
    tab.state.status.set_takeover_requested(false);
    tab.events.push(Some(&tab.id), EventKind::Watch { shown: false, focus: None });
    Ok(json!({ "shown": false }))
}

fn handle_toolbar(tab: &Rc<Tab>, body: &str) {
    let Ok(message) = serde_json::from_str::<Value>(body) else { return };
    match message["command"].as_str() {
        Some("back") => tab.view.go_back(),
        Some("forward") => tab.view.go_forward(),
        Some("reload") => tab.view.reload(),
        Some("navigate") => {
            if let Ok(url) = crate::urls::check_navigation_url(message["url"].as_str().unwrap_or("")) {
                tab.view.load_uri(url.as_str());
            }
        }
        Some("done") => {
            if tab.takeover.keep_visible.get() {
                count_done(tab);
            } else {
                let _ = hand_back(tab);
            }
        }
        _ => {}
    }
}
