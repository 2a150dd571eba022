//! Trusted input: hand-built GDK events delivered to the webview widget, so the page sees
//! `isTrusted === true` mouse, wheel and keyboard events, exactly as from a person, while
//! the window stays offscreen and no focus moves on the desktop.
//!
//! This is the crate's one FFI module: gtk-rs offers no setters for the fields of a GDK
//! event, so they are written through gdk-sys on an event we own. Every `unsafe` block
//! writes fields of the event variant that `gdk_event_new` allocated for that type.
#![allow(unsafe_code)]

use gtk::gdk;
use gtk::gdk::ffi as gdk_ffi;
use gtk::glib;
use gtk::glib::translate::{IntoGlib, ToGlibPtr, ToGlibPtrMut};
use gtk::prelude::*;

use crate::engine::keys::{Key, Location};
use crate::engine::{InputEvent, KeyStroke, MouseButton};
use crate::error::{Error, ErrorCode, Result};

/// Delivers `events` in order to the webview widget.
/// `held` carries the buttons still down between calls, so that the moves of a drag report
/// them as a hand's would (`buttons` in the page, and WebKit's own drag detection).
pub(super) fn deliver(view: &webkit2gtk::WebView, held: &std::cell::Cell<gdk::ModifierType>, events: &[InputEvent]) -> Result<()> {
    let window = view.window().ok_or_else(|| Error::new(ErrorCode::EngineUnavailable, "the webview has no window to receive input"))?;
    let display = window.display();
    let seat = display.default_seat().ok_or_else(|| {
        Error::new(ErrorCode::Unsupported, "the display has no input seat (this Wayland compositor offers none): input tools need one")
    })?;
    let pointer = seat.pointer();
    let keyboard = seat.keyboard();
    for event in events {
        let mut built = match *event {
            InputEvent::MouseMove { x, y, modifiers } => {
                let state = gdk::ModifierType::from(modifiers) | held.get();
                pointer_event(gdk::EventType::MotionNotify, &window, x, y, state, 0)
            }
            InputEvent::MouseDown { x, y, button, modifiers } => {
                // A press reports the buttons held before it; later moves include it.
                let state = gdk::ModifierType::from(modifiers) | held.get();
                held.set(held.get() | button_mask(button));
                pointer_event(gdk::EventType::ButtonPress, &window, x, y, state, button_number(button))
            }
            InputEvent::MouseUp { x, y, button, modifiers } => {
                let state = gdk::ModifierType::from(modifiers) | held.get() | button_mask(button);
                held.set(held.get() - button_mask(button));
                pointer_event(gdk::EventType::ButtonRelease, &window, x, y, state, button_number(button))
            }
            InputEvent::Wheel { x, y, dx, dy } => {
                let (width, height) = (view.allocated_width() as f64, view.allocated_height() as f64);
                scroll_event(&window, x, y, dx / scroll_step(width), dy / scroll_step(height))
            }
            InputEvent::KeyDown(stroke) => key_event(gdk::EventType::KeyPress, &window, &display, stroke),
            InputEvent::KeyUp(stroke) => key_event(gdk::EventType::KeyRelease, &window, &display, stroke),
        };
        let device = if matches!(event, InputEvent::KeyDown(_) | InputEvent::KeyUp(_)) { keyboard.as_ref() } else { pointer.as_ref() };
        built.set_device(device);
        built.set_screen(Some(&display.default_screen()));
        view.event(&built);
    }
    Ok(())
}

fn now() -> u32 {
    (glib::monotonic_time() / 1000) as u32
}

fn button_number(button: MouseButton) -> u32 {
    match button {
        MouseButton::Left => 1,
        MouseButton::Middle => 2,
        MouseButton::Right => 3,
    }
}

fn button_mask(button: MouseButton) -> gdk::ModifierType {
    match button {
        MouseButton::Left => gdk::ModifierType::BUTTON1_MASK,
        MouseButton::Middle => gdk::ModifierType::BUTTON2_MASK,
        MouseButton::Right => gdk::ModifierType::BUTTON3_MASK,
    }
}

/// Writes the fields every pointer event fills alike (GDK's motion, button and scroll
/// structs are separate types that share them): the window it is for, not sent by a
/// client, the time now, and (x, y), which is also written as its root position.
macro_rules! place_pointer_event {
    ($event:ident, $window:expr, $x:expr, $y:expr) => {
        $event.window = $window;
        $event.send_event = 0;
        $event.time = now();
        $event.x = $x;
        $event.y = $y;
        $event.x_root = $x;
        $event.y_root = $y;
    };
}

fn pointer_event(kind: gdk::EventType, window: &gdk::Window, x: f64, y: f64, state: gdk::ModifierType, button: u32) -> gdk::Event {
    let mut event = gdk::Event::new(kind);
    let raw: *mut gdk_ffi::GdkEvent = event.to_glib_none_mut().0;
    let window_ptr: *mut gdk_ffi::GdkWindow = window.to_glib_full();
    // SAFETY: `event` was allocated by gdk_event_new for `kind`, so the union holds the
    // motion or button variant written below; the window reference is owned by the event
    // and released by gdk_event_free.
    unsafe {
        if kind == gdk::EventType::MotionNotify {
            let motion = &mut (*raw).motion;
            place_pointer_event!(motion, window_ptr, x, y);
            motion.state = state.into_glib();
            motion.is_hint = 0;
        } else {
            let press = &mut (*raw).button;
            place_pointer_event!(press, window_ptr, x, y);
            press.state = state.into_glib();
            press.button = button;
        }
    }
    event
}

/// CSS pixels WebKitGTK scrolls for one smooth-scroll step of a view `extent` pixels high
/// (or wide, across): extent^(2/3), whole pixels, as measured (71 px for 600, 44 for 300).
fn scroll_step(extent: f64) -> f64 {
    extent.max(1.0).powf(2.0 / 3.0).floor()
}

/// A smooth-scroll event of (`steps_x`, `steps_y`) steps at (x, y).
fn scroll_event(window: &gdk::Window, x: f64, y: f64, steps_x: f64, steps_y: f64) -> gdk::Event {
    let mut event = gdk::Event::new(gdk::EventType::Scroll);
    let raw: *mut gdk_ffi::GdkEvent = event.to_glib_none_mut().0;
    let window_ptr: *mut gdk_ffi::GdkWindow = window.to_glib_full();
    // SAFETY: as in `pointer_event`, for the scroll variant. Deltas are in scroll steps
    // of the smooth-scrolling direction (see `scroll_step`).
    unsafe {
        let scroll = &mut (*raw).scroll;
        place_pointer_event!(scroll, window_ptr, x, y);
        scroll.direction = gdk_ffi::GDK_SCROLL_SMOOTH;
        scroll.delta_x = steps_x;
        scroll.delta_y = steps_y;
        scroll.is_stop = 0;
    }
    event
}

fn key_event(kind: gdk::EventType, window: &gdk::Window, display: &gdk::Display, stroke: KeyStroke) -> gdk::Event {
    let mut event = gdk::Event::new(kind);
    let keycode = hardware_keycode(display, stroke.keyval);
    let key = gdk::keys::Key::from(stroke.keyval);
    let text = key
        .to_unicode()
        .filter(|character| !character.is_control() && !stroke.modifiers.control && !stroke.modifiers.alt)
        .map(String::from)
        .unwrap_or_default();
    let state: gdk::ModifierType = stroke.modifiers.into();
    use gdk::keys::constants as keys;
    let is_modifier =
        [keys::Shift_L, keys::Shift_R, keys::Control_L, keys::Control_R, keys::Alt_L, keys::Alt_R, keys::Meta_L, keys::Meta_R]
            .contains(&key);
    let raw: *mut gdk_ffi::GdkEvent = event.to_glib_none_mut().0;
    let window_ptr: *mut gdk_ffi::GdkWindow = window.to_glib_full();
    let string: *mut std::os::raw::c_char = text.as_str().to_glib_full();
    // SAFETY: the union holds the key variant for KeyPress/KeyRelease; the window reference
    // and the g_strdup'ed string are owned by the event and freed by gdk_event_free.
    unsafe {
        let key = &mut (*raw).key;
        key.window = window_ptr;
        key.send_event = 0;
        key.time = now();
        key.state = state.into_glib();
        key.keyval = stroke.keyval;
        key.length = text.len() as i32;
        key.string = string;
        key.hardware_keycode = keycode;
        key.group = 0;
        key.is_modifier = is_modifier as u32;
    }
    event
}

impl From<crate::engine::Modifiers> for gdk::ModifierType {
    fn from(modifiers: crate::engine::Modifiers) -> Self {
        let mut state = gdk::ModifierType::empty();
        if modifiers.shift {
            state |= gdk::ModifierType::SHIFT_MASK;
        }
        if modifiers.control {
            state |= gdk::ModifierType::CONTROL_MASK;
        }
        if modifiers.alt {
            state |= gdk::ModifierType::MOD1_MASK;
        }
        if modifiers.meta {
            state |= gdk::ModifierType::META_MASK | gdk::ModifierType::SUPER_MASK;
        }
        state
    }
}

/// The GDK keyval of a key (see `engine::keys`): the keypad's own keyvals on the numpad,
/// the right-hand modifiers on the right, named keys by their X names, characters by their
/// Unicode keyval. WebKit derives `key`, `code`, `location` and `keyCode` from it (and
/// from the hardware keycode [`key_event`] looks up).
pub(super) fn keyval(key: &Key) -> Option<u32> {
    let sided;
    let name = match (key.location, key.key.as_str()) {
        (Location::Numpad, _) => match key.code.as_str() {
            "Numpad0" => "KP_Insert",
            "Numpad1" => "KP_End",
            "Numpad2" => "KP_Down",
            "Numpad3" => "KP_Page_Down",
            "Numpad4" => "KP_Left",
            "Numpad5" => "KP_Begin",
            "Numpad6" => "KP_Right",
            "Numpad7" => "KP_Home",
            "Numpad8" => "KP_Up",
            "Numpad9" => "KP_Page_Up",
            "NumpadDecimal" => "KP_Delete",
            "NumpadEnter" => "KP_Enter",
            "NumpadAdd" => "KP_Add",
            "NumpadSubtract" => "KP_Subtract",
            "NumpadMultiply" => "KP_Multiply",
            "NumpadDivide" => "KP_Divide",
            _ => return None,
        },
        // Shift_L, Control_R, Alt_L, Meta_R, ...
        (_, modifier @ ("Shift" | "Control" | "Alt" | "Meta")) => {
            sided = format!("{modifier}_{}", if key.location == Location::Right { "R" } else { "L" });
            sided.as_str()
        }
        (_, "Enter") => "Return",
        (_, "Backspace") => "BackSpace",
        (_, "ArrowLeft") => "Left",
        (_, "ArrowRight") => "Right",
        (_, "ArrowUp") => "Up",
        (_, "ArrowDown") => "Down",
        (_, "PageUp") => "Page_Up",
        (_, "PageDown") => "Page_Down",
        (_, "CapsLock") => "Caps_Lock",
        (_, "NumLock") => "Num_Lock",
        (_, "ScrollLock") => "Scroll_Lock",
        (_, "PrintScreen") => "Print",
        (_, "ContextMenu") => "Menu",
        (_, " ") => "space",
        (_, named) if named.chars().count() > 1 => named,
        _ => "",
    };
    if !name.is_empty() {
        return named(name);
    }
    let character = key.character()?;
    let keyval = *gdk::keys::Key::from_unicode(character);
    (keyval != 0 && keyval != 0x00ff_ffff).then_some(keyval)
}

/// The hardware keycode of a keyval on this keymap: for a keyval that is not the keypad's,
/// a key of the main block (`+` is Shift+Equal, not the keypad's plus), at the lowest level.
fn hardware_keycode(display: &gdk::Display, keyval: u32) -> u16 {
    let Some(keymap) = gdk::Keymap::for_display(display) else { return 0 };
    let keypad = |keyval: u32| gdk::keys::Key::from(keyval).name().is_some_and(|name| name.starts_with("KP_"));
    let on_keypad = |keycode: u32| keymap.entries_for_keycode(keycode).iter().any(|(_, keyval)| keypad(*keyval));
    let mut entries = keymap.entries_for_keyval(keyval);
    let wants_keypad = keypad(keyval);
    entries.sort_by_key(|entry| (on_keypad(entry.keycode()) != wants_keypad, entry.level(), entry.group(), entry.keycode()));
    entries.first().map_or(0, |entry| entry.keycode() as u16)
}

fn named(name: &str) -> Option<u32> {
    let keyval = *gdk::keys::Key::from_name(name);
    (keyval != 0 && keyval != 0x00ff_ffff).then_some(keyval)
}
