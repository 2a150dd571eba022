//! What a tab holds of its takeover window (`takeover.rs` shows, hides and hands it back):
//! the window while it is up, and what the person did with it.

use std::cell::RefCell;

/// A shown takeover window.
pub(super) struct Takeover {
    pub(super) window: gtk::Window,
    pub(super) layout: gtk::Fixed,
    pub(super) toolbar: Option<webkit2gtk::WebView>,
    pub(super) uri_handler: Option<glib::SignalHandlerId>,
}

/// What the window reports back to the engine.
#[derive(Default)]
pub(super) struct TakeoverState {
    pub(super) window: RefCell<Option<Takeover>>,
    /// Times the person handed the session back (Done, closing the window, the tray's Hide).
    pub(super) done: std::cell::Cell<u64>,
    /// Whether Done leaves the window up (`keep_visible`).
    pub(super) keep_visible: std::cell::Cell<bool>,
}
