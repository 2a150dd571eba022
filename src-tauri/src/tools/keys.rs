//! The keyboard: `press` (a key or a combination) and `type` (text, key by key), as
//! trusted key events on a US layout, on the focused element or on a target focused first.

use schemars::JsonSchema;
use serde::Serialize;

use super::action_input::action_input;
use super::limits::{MAX_TYPED_CHARS, TYPE_DELAY_MS};
use super::outcome::{self, action_tool, ActionOutcome, ActionTarget};
use super::page_agent::{self, agent};
use super::targeting::{actionable, ElementTarget, Needs};
use super::{Positional, Tool, ToolContext};
use crate::engine::agent::Focus;
use crate::engine::keys::{self, Chord, ModifierKey};
use crate::engine::{EditingCommand, InputEvent, KeyStroke, Modifiers, TabRequest};
use crate::error::{Error, ErrorCode, Result};

action_input! {
    /// Input of `press`: without ref or selector, the focused element gets the key.
    PressInput aimed_at_element {
        /// A key or combination, e.g. `Enter`, `a`, `Control+A`. Playwright's `keyboard.press`
        /// grammar on a US layout: a character (`a`, `A`, `+`), a key name (`Enter`, `Tab`, `Escape`, `ArrowDown`, `F5`,
        /// `KeyA`, `Digit1`, `Backquote`, `Numpad1`, `ShiftRight`, ...), or modifiers joined with
        /// `+` before it (`Control+A`, `Shift++`).
        #[schemars(length(min = 1))]
        key: String,
        /// Modifier keys held (also writable in `key`). Meta+A/C/V/X/Z run the editing command
        /// (select all, copy, paste, cut, undo; Meta+Shift+Z redo); other Meta combinations are
        /// not supported.
        #[serde(default)]
        modifiers: Vec<ModifierKey>,
    }
}

/// `press`.
pub(super) fn press_tool() -> Tool {
    action_tool("press", "Press a key or combination (Enter, Tab, Escape, ArrowDown, Control+A, ...) on the focused element, or on the given element after focusing it.", press).positional(&[Positional::Field("key")])
}

/// Output of `press`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct PressOutput {
    /// What the key caused.
    #[serde(flatten)]
    outcome: ActionOutcome,
    /// The key or combination pressed, as given.
    key: String,
}

/// Focuses the target, if one is given, once it is actionable; answers what the keys were
/// aimed at (nothing: the focused element).
async fn focus_target(context: &ToolContext, element: &ElementTarget, timeout: std::time::Duration) -> Result<Option<ActionTarget>> {
    if !element.is_given() {
        return Ok(None);
    }
    let located = actionable(context, element, Needs { enabled: true, ..Needs::default() }, timeout).await?;
    agent(context, &located.frame, &Focus { target: located.address() }).await?;
    Ok(Some(ActionTarget::element(located.summary())))
}

async fn press(context: ToolContext, input: PressInput) -> Result<PressOutput> {
    let waits = input.waits()?;
    let chord = keys::parse_chord(&input.key, &input.modifiers)?;
    let described = focus_target(&context, &input.element(), waits.actionable).await?;
    let event_mark = outcome::event_mark(&context);
    let load_mark = if chord.modifiers.contains(&ModifierKey::Meta) {
        let shift = chord.modifiers.contains(&ModifierKey::Shift);
        let command = match (chord.key.key.to_ascii_lowercase().as_str(), shift) {
            ("a", false) => EditingCommand::SelectAll,
            ("c", false) => EditingCommand::Copy,
            ("v", false) => EditingCommand::Paste,
            ("x", false) => EditingCommand::Cut,
            ("z", false) => EditingCommand::Undo,
            ("z", true) => EditingCommand::Redo,
            _ => {
                return Err(Error::new(
                    ErrorCode::Unsupported,
                    format!("Meta+{} is not supported; Meta works with A, C, V, X and Z (editing commands)", chord.key.key),
                ))
            }
        };
        context.ask(TabRequest::Editing { command }).await?
    } else {
        page_agent::input(&context, chord_events(&chord)?).await?
    };
    let outcome = outcome::finish(&context, "press", described, load_mark, event_mark, waits.settle, true).await?;
    Ok(PressOutput { outcome, key: input.key })
}

/// The key events of a chord: each modifier goes down (holding the ones before it), the
/// key goes down and up, the modifiers come up in reverse order. Each event carries the
/// modifiers held while it happens, as a page sees them: a modifier's own keydown has its
/// flag, its keyup does not (the key is no longer held).
fn chord_events(chord: &Chord) -> Result<Vec<InputEvent>> {
    let keyval_of = |key: &keys::Key| {
        crate::engine::keyval(key).ok_or_else(|| Error::bad_request(format!("the key {:?} cannot be typed on this platform", key.key)))
    };
    let mut events = Vec::new();
    let mut held = Modifiers::default();
    for modifier in &chord.modifiers {
        held.set(*modifier, true);
        let key = keys::resolve(modifier.name(), false).expect("modifier names resolve");
        events.push(InputEvent::KeyDown(KeyStroke { keyval: keyval_of(&key)?, modifiers: held }));
    }
    let keyval = keyval_of(&chord.key)?;
    let mut own = held;
    if let Some(modifier) = chord.key.modifier {
        own.set(modifier, true);
    }
    events.push(InputEvent::KeyDown(KeyStroke { keyval, modifiers: own }));
    events.push(InputEvent::KeyUp(KeyStroke { keyval, modifiers: held }));
    for modifier in chord.modifiers.iter().rev() {
        held.set(*modifier, false);
        let key = keys::resolve(modifier.name(), false).expect("modifier names resolve");
        events.push(InputEvent::KeyUp(KeyStroke { keyval: keyval_of(&key)?, modifiers: held }));
    }
    Ok(events)
}

action_input! {
    /// Input of `type`: the element to type into is focused first; without ref or selector,
    /// the focused element gets the keys.
    TypeInput aimed_at_element {
        /// The text, typed one character at a time with key events (`\n` is Enter, `\t` Tab).
        #[schemars(length(max = MAX_TYPED_CHARS))]
        text: String,
        /// Pause between two characters in ms (default 0, max 1000).
        #[serde(default)]
        #[schemars(range(max = TYPE_DELAY_MS.max))]
        delay_ms: Option<u64>,
    }
}

/// Output of `type`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct TypeOutput {
    /// What the typing caused.
    #[serde(flatten)]
    outcome: ActionOutcome,
    /// How many characters were typed.
    typed_chars: usize,
}

/// `type`.
pub(super) fn type_tool() -> Tool {
    action_tool("type", "Type text key by key into an element or the focused one. One character at a time with real key events (keydown, keypress, input, keyup; Shift for capitals and symbols), optionally delay_ms apart. For pages that react to keys; fill is faster for plain fields.", type_text).positional(&[Positional::Field("text")])
}

/// Types text key by key, as a person does on a US keyboard: each character is a keydown,
/// (keypress,) input and keyup, with Shift held for the characters that need it. For pages
/// that listen to keys rather than to `input`.
async fn type_text(context: ToolContext, input: TypeInput) -> Result<TypeOutput> {
    let waits = input.waits()?;
    let delay = TYPE_DELAY_MS.millis(input.delay_ms, "delay_ms")?;
    if input.text.chars().count() > MAX_TYPED_CHARS {
        return Err(Error::bad_request(format!("text is longer than {MAX_TYPED_CHARS} characters; use fill for long text")));
    }
    let mut strokes = Vec::new();
    for character in input.text.chars() {
        let shift = keys::needs_shift(character);
        let modifiers = if shift { vec![ModifierKey::Shift] } else { Vec::new() };
        let key = keys::typed(character, shift);
        if key.key.chars().any(char::is_control) {
            return Err(Error::bad_request(format!("the character {character:?} cannot be typed")));
        }
        strokes.push(chord_events(&Chord { modifiers, key })?);
    }
    let described = focus_target(&context, &input.element(), waits.actionable).await?;
    let event_mark = outcome::event_mark(&context);
    let load_mark = if delay.is_zero() {
        page_agent::input(&context, strokes.into_iter().flatten().collect()).await?
    } else {
        let mut mark = None;
        for (index, events) in strokes.into_iter().enumerate() {
            if index > 0 {
                tokio::time::sleep(delay).await;
            }
            let sent = page_agent::input(&context, events).await?;
            mark.get_or_insert(sent);
        }
        match mark {
            Some(mark) => mark,
            None => page_agent::input(&context, Vec::new()).await?,
        }
    };
    let outcome = outcome::finish(&context, "type", described, load_mark, event_mark, waits.settle, true).await?;
    Ok(TypeOutput { outcome, typed_chars: input.text.chars().count() })
}
