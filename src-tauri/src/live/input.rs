//! What a viewer sends (JSON text messages) and the trusted input events it becomes.
//! Pointer positions are in the page's CSS pixels (the page scales them), clamped to the
//! viewport; keys come as the browser names them (`key`, `code`), so text in any layout
//! arrives as the characters the person's keyboard typed.

use serde::Deserialize;

use crate::engine::keys::{self, Key, Location};
use crate::engine::{InputEvent, KeyStroke, Modifiers, MouseButton};

/// The longest text a paste (or a composed input) may type.
pub(super) const MAX_TEXT: usize = 10_000;

/// One message of a viewer.
#[derive(Debug, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub(super) enum Message {
    /// The viewer's picture area in device pixels.
    Size { w: u32, h: u32 },
    /// The pointer moved.
    Move {
        x: f64,
        y: f64,
        #[serde(default)]
        m: u8,
    },
    /// A button went down (`b`: 0 left, 1 middle, 2 right).
    Down {
        x: f64,
        y: f64,
        #[serde(default)]
        b: u8,
        #[serde(default)]
        m: u8,
    },
    /// A button went up.
    Up {
        x: f64,
        y: f64,
        #[serde(default)]
        b: u8,
        #[serde(default)]
        m: u8,
    },
    /// The wheel turned (CSS pixels).
    Wheel { x: f64, y: f64, dx: f64, dy: f64 },
    /// A key went down (`d`) or up.
    Key {
        d: bool,
        key: String,
        #[serde(default)]
        code: String,
        #[serde(default)]
        loc: u8,
        #[serde(default)]
        m: u8,
    },
    /// Text to type (a paste, or what an input method composed).
    Text { s: String },
    /// back, forward or reload.
    Nav { a: String },
    /// Open this address (http or https).
    Go { url: String },
    /// Show this tab of the session.
    Tab { id: String },
    /// The person hands the session back.
    Done,
}

fn modifiers(bits: u8) -> Modifiers {
    Modifiers { shift: bits & 1 != 0, control: bits & 2 != 0, alt: bits & 4 != 0, meta: bits & 8 != 0 }
}

fn button(number: u8) -> MouseButton {
    match number {
        1 => MouseButton::Middle,
        2 => MouseButton::Right,
        _ => MouseButton::Left,
    }
}

/// The trusted events of an input message in a `width` x `height` viewport (none for a
/// message that is not input, or a key this platform cannot type).
pub(super) fn events(message: &Message, width: u32, height: u32) -> Vec<InputEvent> {
    let clamp = |x: f64, y: f64| {
        let x = if x.is_finite() { x.clamp(0.0, width.saturating_sub(1) as f64) } else { 0.0 };
        let y = if y.is_finite() { y.clamp(0.0, height.saturating_sub(1) as f64) } else { 0.0 };
        (x, y)
    };
    match message {
        Message::Move { x, y, m } => {
            let (x, y) = clamp(*x, *y);
            vec![InputEvent::MouseMove { x, y, modifiers: modifiers(*m) }]
        }
        Message::Down { x, y, b, m } => {
            let (x, y) = clamp(*x, *y);
            vec![InputEvent::MouseDown { x, y, button: button(*b), modifiers: modifiers(*m) }]
        }
        Message::Up { x, y, b, m } => {
            let (x, y) = clamp(*x, *y);
            vec![InputEvent::MouseUp { x, y, button: button(*b), modifiers: modifiers(*m) }]
        }
        Message::Wheel { x, y, dx, dy } => {
            let (x, y) = clamp(*x, *y);
            let limit = |delta: f64| if delta.is_finite() { delta.clamp(-10_000.0, 10_000.0) } else { 0.0 };
            vec![InputEvent::Wheel { x, y, dx: limit(*dx), dy: limit(*dy) }]
        }
        Message::Key { d, key, code, loc, m } => {
            let Some(keyval) = key_of(key, code, *loc).and_then(|key| crate::engine::keyval(&key)) else { return Vec::new() };
            let stroke = KeyStroke { keyval, modifiers: modifiers(*m) };
            vec![if *d { InputEvent::KeyDown(stroke) } else { InputEvent::KeyUp(stroke) }]
        }
        Message::Text { s } => text(s),
        _ => Vec::new(),
    }
}

/// The key a browser's `key`, `code` and `location` name.
fn key_of(key: &str, code: &str, location: u8) -> Option<Key> {
    if key.is_empty() || key.len() > 32 {
        return None;
    }
    // The keypad and the sided modifiers by their place; the rest by what they type.
    if location == 3 || matches!(key, "Shift" | "Control" | "Alt" | "Meta") {
        if let Some(found) = keys::resolve(code, false) {
            return Some(Key { key: found.key.clone(), ..found });
        }
    }
    let mut characters = key.chars();
    if let (Some(character), None) = (characters.next(), characters.next()) {
        return Some(Key { key: character.to_string(), code: code.to_string(), location: Location::Standard, modifier: None });
    }
    keys::resolve(key, false)
}

/// Each character of `text` as a key press and release (Enter for a line break).
fn text(text: &str) -> Vec<InputEvent> {
    let mut events = Vec::new();
    for character in text.chars().take(MAX_TEXT) {
        let key = match character {
            '\r' => continue,
            '\n' => keys::resolve("Enter", false),
            '\t' => keys::resolve("Tab", false),
            other if other.is_control() => continue,
            other => Some(Key { key: other.to_string(), code: String::new(), location: Location::Standard, modifier: None }),
        };
        if let Some(keyval) = key.and_then(|key| crate::engine::keyval(&key)) {
            let stroke = KeyStroke { keyval, modifiers: Modifiers::default() };
            events.push(InputEvent::KeyDown(stroke));
            events.push(InputEvent::KeyUp(stroke));
        }
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Message {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn pointer_messages_are_clamped_to_the_viewport() {
        let events = events(&read(r#"{"t":"down","x":5000,"y":-3,"b":2,"m":3}"#), 800, 600);
        let expected = Modifiers { shift: true, control: true, ..Modifiers::default() };
        assert_eq!(events, vec![InputEvent::MouseDown { x: 799.0, y: 0.0, button: MouseButton::Right, modifiers: expected }]);
        assert!(self::events(&read(r#"{"t":"done"}"#), 800, 600).is_empty());
        assert!(serde_json::from_str::<Message>(r#"{"t":"eval","js":"1"}"#).is_err());
    }

    #[test]
    fn keys_are_read_by_what_they_type_or_where_they_are() {
        assert_eq!(key_of("é", "Digit2", 0).map(|key| key.key), Some("é".to_string()));
        assert_eq!(key_of("Enter", "Enter", 0).map(|key| key.key), Some("Enter".to_string()));
        let right_shift = key_of("Shift", "ShiftRight", 2).unwrap();
        assert_eq!(right_shift.location, Location::Right);
        assert_eq!(key_of("1", "Numpad1", 3).map(|key| key.location), Some(Location::Numpad));
        assert!(key_of("", "", 0).is_none());
    }
}
