//! The key grammar agents write (`Enter`, `a`, `Control+Shift+KeyA`, `Numpad1`, `+`), on
//! a US keyboard layout: the names Playwright's `keyboard.press` accepts, resolved to what a
//! page sees (`key`, `code`, `location`). The engine turns a [`Key`] into its platform
//! event; this module knows nothing of any platform.

use crate::error::{Error, Result};

/// A modifier key (also as tools take it: `modifiers: ["Shift", "Ctrl"]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize, schemars::JsonSchema)]
#[schemars(rename = "Modifier")]
pub enum ModifierKey {
    /// Shift.
    Shift,
    /// Control.
    #[serde(alias = "Ctrl")]
    Control,
    /// Alt / Option.
    #[serde(alias = "Option")]
    Alt,
    /// Meta / Command / Super.
    #[serde(alias = "Cmd", alias = "Command", alias = "Super")]
    Meta,
}

impl ModifierKey {
    /// Its key name (`Shift`), which is also its `KeyboardEvent.key`.
    pub fn name(self) -> &'static str {
        match self {
            ModifierKey::Shift => "Shift",
            ModifierKey::Control => "Control",
            ModifierKey::Alt => "Alt",
            ModifierKey::Meta => "Meta",
        }
    }
}

/// Where a key sits on the keyboard (`KeyboardEvent.location`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Location {
    /// The main block.
    #[default]
    Standard,
    /// The left one of a pair (Shift, Control, Alt, Meta).
    Left,
    /// The right one of a pair.
    Right,
    /// The numeric keypad.
    Numpad,
}

/// One key as the page sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// `KeyboardEvent.key`: the character it types (`a`, `A`, `!`), or its name (`Enter`).
    pub key: String,
    /// `KeyboardEvent.code`: the physical key (`KeyA`, `Digit1`, `Numpad1`); empty for a
    /// character that is not on the layout.
    pub code: String,
    /// Where it is.
    pub location: Location,
    /// The modifier it is, if it is one.
    pub modifier: Option<ModifierKey>,
}

impl Key {
    /// The character the key types, if it types one.
    pub fn character(&self) -> Option<char> {
        let mut characters = self.key.chars();
        match (characters.next(), characters.next()) {
            (Some(character), None) => Some(character),
            _ => None,
        }
    }
}

/// A key pressed with modifiers held (`Control+Shift+A`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chord {
    /// Modifiers, in the order they go down.
    pub modifiers: Vec<ModifierKey>,
    /// The key, resolved with those modifiers held (Shift+a is `A`).
    pub key: Key,
}

/// The printable keys of the US layout: code, character, character with Shift.
const PRINTABLE: &[(&str, char, char)] = &[
    ("Backquote", '`', '~'),
    ("Digit1", '1', '!'),
    ("Digit2", '2', '@'),
    ("Digit3", '3', '#'),
    ("Digit4", '4', '$'),
    ("Digit5", '5', '%'),
    ("Digit6", '6', '^'),
    ("Digit7", '7', '&'),
    ("Digit8", '8', '*'),
    ("Digit9", '9', '('),
    ("Digit0", '0', ')'),
    ("Minus", '-', '_'),
    ("Equal", '=', '+'),
    ("BracketLeft", '[', '{'),
    ("BracketRight", ']', '}'),
    ("Backslash", '\\', '|'),
    ("Semicolon", ';', ':'),
    ("Quote", '\'', '"'),
    ("Comma", ',', '<'),
    ("Period", '.', '>'),
    ("Slash", '/', '?'),
    ("Space", ' ', ' '),
];

/// Keys that type nothing, by name (their `code` is the same name).
const NAMED: &[&str] = &[
    "Enter",
    "Tab",
    "Escape",
    "Backspace",
    "Delete",
    "Insert",
    "Home",
    "End",
    "PageUp",
    "PageDown",
    "ArrowLeft",
    "ArrowRight",
    "ArrowUp",
    "ArrowDown",
    "CapsLock",
    "NumLock",
    "ScrollLock",
    "Pause",
    "PrintScreen",
    "ContextMenu",
];

/// The keypad with NumLock off: code, key.
const NUMPAD: &[(&str, &str)] = &[
    ("Numpad0", "Insert"),
    ("Numpad1", "End"),
    ("Numpad2", "ArrowDown"),
    ("Numpad3", "PageDown"),
    ("Numpad4", "ArrowLeft"),
    ("Numpad5", "Clear"),
    ("Numpad6", "ArrowRight"),
    ("Numpad7", "Home"),
    ("Numpad8", "ArrowUp"),
    ("Numpad9", "PageUp"),
    ("NumpadDecimal", "Delete"),
    ("NumpadEnter", "Enter"),
    ("NumpadAdd", "+"),
    ("NumpadSubtract", "-"),
    ("NumpadMultiply", "*"),
    ("NumpadDivide", "/"),
];

/// Parses `Control+Shift+A`: modifiers joined by `+`, then one key (which may be `+`
/// itself: `+`, `Shift++`). Modifier names: Shift, Control (Ctrl), Alt (Option), Meta
/// (Cmd, Command, Super), ControlOrMeta, each also as a key with a Left/Right side.
pub fn parse_chord(text: &str, extra: &[ModifierKey]) -> Result<Chord> {
    let (prefix, key_name) = if text == "+" {
        (None, "+")
    } else if let Some(prefix) = text.strip_suffix("++") {
        (Some(prefix), "+")
    } else {
        match text.rsplit_once('+') {
            Some((prefix, key)) => (Some(prefix), key),
            None => (None, text),
        }
    };
    if key_name.is_empty() {
        return Err(Error::bad_request(format!("{text:?} names no key after its modifiers")));
    }
    let mut modifiers: Vec<ModifierKey> = extra.to_vec();
    if let Some(prefix) = prefix {
        for part in prefix.split('+') {
            let modifier = modifier_named(part.trim())
                .ok_or_else(|| Error::bad_request(format!("{part:?} in {text:?} is not a modifier (Shift, Control, Alt, Meta)")))?;
            if !modifiers.contains(&modifier) {
                modifiers.push(modifier);
            }
        }
    }
    let key = resolve(key_name, modifiers.contains(&ModifierKey::Shift)).ok_or_else(|| {
        Error::bad_request(format!(
            "unknown key {key_name:?}: use a character, or a name such as Enter, Tab, Escape, ArrowDown, F5, KeyA, Digit1, Numpad1, ShiftRight"
        ))
    })?;
    // A modifier pressed as the key is not also held before it.
    if let Some(own) = key.modifier {
        modifiers.retain(|held| *held != own);
    }
    Ok(Chord { modifiers, key })
}

/// The modifier a combination's prefix names.
fn modifier_named(name: &str) -> Option<ModifierKey> {
    Some(match name.to_ascii_lowercase().as_str() {
        "shift" | "shiftleft" | "shiftright" => ModifierKey::Shift,
        // Linux has no Command key: ControlOrMeta is Control there.
        "control" | "ctrl" | "controlleft" | "controlright" | "controlormeta" => ModifierKey::Control,
        "alt" | "option" | "altleft" | "altright" => ModifierKey::Alt,
        "meta" | "cmd" | "command" | "super" | "metaleft" | "metaright" => ModifierKey::Meta,
        _ => return None,
    })
}

/// The key named `name`, as typed with Shift held or not.
pub fn resolve(name: &str, shift: bool) -> Option<Key> {
    let key = |key: &str, code: &str, location: Location| Key { key: key.into(), code: code.into(), location, modifier: None };
    // A single character: itself, with the code of the layout key that types it.
    let mut characters = name.chars();
    if let (Some(character), None) = (characters.next(), characters.next()) {
        return Some(typed(character, shift));
    }
    if let Some((modifier, location)) = modifier_key(name) {
        let key_name = modifier.name();
        let side = if location == Location::Right { "Right" } else { "Left" };
        return Some(Key { modifier: Some(modifier), ..key(key_name, &format!("{key_name}{side}"), location) });
    }
    if let Some(letter) = name.strip_prefix("Key").filter(|rest| rest.len() == 1 && rest.chars().all(|c| c.is_ascii_uppercase())) {
        let letter = letter.chars().next()?;
        let typed = if shift { letter } else { letter.to_ascii_lowercase() };
        return Some(key(&typed.to_string(), name, Location::Standard));
    }
    if let Some((code, plain, shifted)) = PRINTABLE.iter().find(|(code, ..)| *code == name) {
        return Some(key(&(if shift { *shifted } else { *plain }).to_string(), code, Location::Standard));
    }
    if let Some((code, meaning)) = NUMPAD.iter().find(|(code, _)| *code == name) {
        return Some(key(meaning, code, Location::Numpad));
    }
    if let Some(named) = NAMED.iter().find(|named| **named == name) {
        return Some(key(named, named, Location::Standard));
    }
    if name.len() <= 3 && name.starts_with('F') && name[1..].parse::<u8>().is_ok_and(|number| (1..=24).contains(&number)) {
        return Some(key(name, name, Location::Standard));
    }
    match name {
        "Esc" => resolve("Escape", shift),
        "Space" => Some(key(" ", "Space", Location::Standard)),
        _ => None,
    }
}

/// A modifier key by its name (`Shift`, `ShiftRight`, ...).
fn modifier_key(name: &str) -> Option<(ModifierKey, Location)> {
    let (modifier, side) = match name {
        "Shift" | "ShiftLeft" => (ModifierKey::Shift, Location::Left),
        "ShiftRight" => (ModifierKey::Shift, Location::Right),
        "Control" | "ControlLeft" | "ControlOrMeta" => (ModifierKey::Control, Location::Left),
        "ControlRight" => (ModifierKey::Control, Location::Right),
        "Alt" | "AltLeft" => (ModifierKey::Alt, Location::Left),
        "AltRight" => (ModifierKey::Alt, Location::Right),
        "Meta" | "MetaLeft" => (ModifierKey::Meta, Location::Left),
        "MetaRight" => (ModifierKey::Meta, Location::Right),
        _ => return None,
    };
    Some((modifier, side))
}

/// The key that types `character` on the US layout (Shift held turns `a` into `A`).
pub fn typed(character: char, shift: bool) -> Key {
    let key = |typed: char, code: String| Key { key: typed.to_string(), code, location: Location::Standard, modifier: None };
    if character.is_ascii_alphabetic() {
        let typed = if shift { character.to_ascii_uppercase() } else { character };
        return key(typed, format!("Key{}", character.to_ascii_uppercase()));
    }
    if let Some((code, _, shifted)) = PRINTABLE.iter().find(|(_, plain, shifted)| *plain == character || *shifted == character) {
        let typed = if shift { *shifted } else { character };
        return key(typed, code.to_string());
    }
    match character {
        '\n' | '\r' => Key { key: "Enter".into(), code: "Enter".into(), location: Location::Standard, modifier: None },
        '\t' => Key { key: "Tab".into(), code: "Tab".into(), location: Location::Standard, modifier: None },
        other => key(other, String::new()),
    }
}

/// Whether the US layout needs Shift to type `character` (`A`, `!`, `~`).
pub fn needs_shift(character: char) -> bool {
    character.is_ascii_uppercase()
        || PRINTABLE.iter().any(|(code, plain, shifted)| *shifted == character && plain != shifted && *code != "Space")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chord(text: &str) -> (Vec<ModifierKey>, String, String, Location) {
        let chord = parse_chord(text, &[]).unwrap_or_else(|error| panic!("{text}: {}", error.message));
        (chord.modifiers, chord.key.key, chord.key.code, chord.key.location)
    }

    #[test]
    fn plus_is_a_key_and_a_separator() {
        assert_eq!(chord("+"), (vec![], "+".into(), "Equal".into(), Location::Standard));
        assert_eq!(chord("Shift++"), (vec![ModifierKey::Shift], "+".into(), "Equal".into(), Location::Standard));
        assert_eq!(chord("Control++").0, vec![ModifierKey::Control]);
        assert_eq!(chord("Control+Shift+A").0, vec![ModifierKey::Control, ModifierKey::Shift]);
        assert!(parse_chord("Control+", &[]).is_err(), "no key after the modifier");
        assert!(parse_chord("Hyper+a", &[]).is_err());
        assert!(parse_chord("+a", &[]).is_err(), "an empty modifier");
        assert!(parse_chord("Control+Nope", &[]).is_err());
    }

    #[test]
    fn names_resolve_as_on_a_us_layout() {
        assert_eq!(chord("KeyA"), (vec![], "a".into(), "KeyA".into(), Location::Standard));
        assert_eq!(chord("Shift+KeyA").1, "A");
        assert_eq!(chord("Shift+a").1, "A");
        assert_eq!(chord("Digit1").1, "1");
        assert_eq!(chord("Shift+Digit1").1, "!");
        assert_eq!(chord("Backquote").1, "`");
        assert_eq!(chord("Shift+~"), (vec![ModifierKey::Shift], "~".into(), "Backquote".into(), Location::Standard));
        assert_eq!(chord("Numpad1"), (vec![], "End".into(), "Numpad1".into(), Location::Numpad));
        assert_eq!(chord("NumpadAdd").1, "+");
        assert_eq!(chord("ShiftRight"), (vec![], "Shift".into(), "ShiftRight".into(), Location::Right));
        assert_eq!(chord("Shift"), (vec![], "Shift".into(), "ShiftLeft".into(), Location::Left));
        assert_eq!(chord("F12").2, "F12");
        assert_eq!(chord("Enter").2, "Enter");
        assert_eq!(chord(" ").2, "Space");
        assert_eq!(chord("é"), (vec![], "é".into(), String::new(), Location::Standard));
        assert!(parse_chord("F25", &[]).is_err());
        assert!(parse_chord("Keya", &[]).is_err());
    }

    #[test]
    fn shifted_characters_are_known() {
        assert!(needs_shift('A') && needs_shift('!') && needs_shift('~') && needs_shift('+'));
        assert!(!needs_shift('a') && !needs_shift('1') && !needs_shift(' ') && !needs_shift('é'));
    }
}
