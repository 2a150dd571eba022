//! Input: mouse and key events as trusted input through the engine's own input path, and
//! text insertion. They run one at a time in arrival order (a click's press and release
//! must not cross), each answered once the page has seen it, each taking the tab's turn.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::json;
use tokio::sync::mpsc;

use super::PageSession;
use crate::cdp::wire::{params, Command, ProtocolError, Reply};
use crate::engine::devtools::DevtoolsRequest;
use crate::engine::keys;
use crate::engine::{InputEvent, KeyStroke, Modifiers, MouseButton, TabRequest};

/// Runs the page's input commands in arrival order.
pub(super) async fn in_order(page: Arc<PageSession>, mut queue: mpsc::UnboundedReceiver<Command>) {
    while let Some(command) = queue.recv().await {
        let reply = {
            let _in_use = page.shared.session.in_use();
            let _turn = page.tab.lock.lock().await;
            let _served = page.serve(&command.method);
            page.input(&command).await
        };
        page.shared.out.answer(command.id, Some(&page.id), reply);
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct MouseParams {
    #[serde(rename = "type")]
    kind: String,
    x: f64,
    y: f64,
    #[serde(default)]
    button: Option<String>,
    #[serde(default)]
    modifiers: u32,
    #[serde(default)]
    delta_x: f64,
    #[serde(default)]
    delta_y: f64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct KeyParams {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    key: Option<String>,
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    modifiers: u32,
}

/// The protocol's modifier bits: Alt 1, Control 2, Meta 4, Shift 8.
fn modifiers(bits: u32) -> Modifiers {
    Modifiers { alt: bits & 1 != 0, control: bits & 2 != 0, meta: bits & 4 != 0, shift: bits & 8 != 0 }
}

fn button(name: Option<&str>) -> MouseButton {
    match name {
        Some("right") => MouseButton::Right,
        Some("middle") => MouseButton::Middle,
        _ => MouseButton::Left,
    }
}

/// The mouse event a `dispatchMouseEvent` asks for (none: a button of none pressed).
fn mouse_event(mouse: &MouseParams) -> Result<Option<InputEvent>, ProtocolError> {
    let held = modifiers(mouse.modifiers);
    let (x, y) = (mouse.x, mouse.y);
    Ok(match mouse.kind.as_str() {
        "mouseMoved" => Some(InputEvent::MouseMove { x, y, modifiers: held }),
        "mousePressed" | "mouseReleased" if mouse.button.as_deref() == Some("none") => None,
        "mousePressed" => Some(InputEvent::MouseDown { x, y, button: button(mouse.button.as_deref()), modifiers: held }),
        "mouseReleased" => Some(InputEvent::MouseUp { x, y, button: button(mouse.button.as_deref()), modifiers: held }),
        "mouseWheel" => Some(InputEvent::Wheel { x, y, dx: mouse.delta_x, dy: mouse.delta_y }),
        other => return Err(ProtocolError::invalid(format!("unknown mouse event type {other:?}"))),
    })
}

/// What a `dispatchKeyEvent` becomes: a key event of a key the platform knows, or text
/// to insert (a character no key types, or a `char` event).
#[derive(Debug, PartialEq)]
enum KeyAction {
    Event(InputEvent),
    Insert(String),
    Nothing,
}

fn key_action(key: &KeyParams) -> KeyAction {
    let held = modifiers(key.modifiers);
    let down = match key.kind.as_str() {
        "keyDown" | "rawKeyDown" => true,
        "keyUp" => false,
        "char" => return key.text.clone().filter(|text| !text.is_empty()).map(KeyAction::Insert).unwrap_or(KeyAction::Nothing),
        _ => return KeyAction::Nothing,
    };
    let named = key.key.as_deref().filter(|name| !name.is_empty()).or(key.code.as_deref());
    let resolved = named.and_then(|name| keys::resolve(name, held.shift)).and_then(|resolved| crate::engine::keyval(&resolved));
    match resolved {
        Some(keyval) => {
            let stroke = KeyStroke { keyval, modifiers: held };
            KeyAction::Event(if down { InputEvent::KeyDown(stroke) } else { InputEvent::KeyUp(stroke) })
        }
        None => match (&key.text, down) {
            (Some(text), true) if !text.is_empty() => KeyAction::Insert(text.clone()),
            _ => KeyAction::Nothing,
        },
    }
}

impl PageSession {
    async fn input(&self, command: &Command) -> Reply {
        match command.method.as_str() {
            "Input.dispatchMouseEvent" => {
                let mouse: MouseParams = params(&command.params)?;
                if let Some(event) = mouse_event(&mouse)? {
                    self.deliver(vec![event]).await?;
                }
                Ok(json!({}))
            }
            "Input.dispatchKeyEvent" => {
                let key: KeyParams = params(&command.params)?;
                match key_action(&key) {
                    KeyAction::Event(event) => self.deliver(vec![event]).await?,
                    KeyAction::Insert(text) => self.insert(text).await?,
                    KeyAction::Nothing => {}
                }
                Ok(json!({}))
            }
            "Input.insertText" => {
                let text = command.params["text"].as_str().unwrap_or("").to_string();
                self.insert(text).await?;
                Ok(json!({}))
            }
            method => Err(ProtocolError::not_found(method)),
        }
    }

    async fn deliver(&self, events: Vec<InputEvent>) -> Result<(), ProtocolError> {
        self.ask::<()>(TabRequest::Devtools(DevtoolsRequest::Input { events })).await
    }

    async fn insert(&self, text: String) -> Result<(), ProtocolError> {
        if text.is_empty() {
            return Ok(());
        }
        self.ask::<()>(TabRequest::Devtools(DevtoolsRequest::InsertText { text })).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(kind: &str, name: &str, text: Option<&str>, bits: u32) -> KeyParams {
        KeyParams { kind: kind.into(), key: Some(name.into()), code: None, text: text.map(str::to_string), modifiers: bits }
    }

    #[test]
    fn mouse_events_map_to_trusted_input_with_their_modifiers() {
        let press = MouseParams {
            kind: "mousePressed".into(),
            x: 5.0,
            y: 6.0,
            button: Some("left".into()),
            modifiers: 2 | 8,
            delta_x: 0.0,
            delta_y: 0.0,
        };
        match mouse_event(&press).unwrap() {
            Some(InputEvent::MouseDown { button: MouseButton::Left, modifiers, .. }) => {
                assert!(modifiers.control && modifiers.shift && !modifiers.alt)
            }
            other => panic!("{other:?}"),
        }
        let bad = MouseParams { kind: "mouseFlung".into(), x: 0.0, y: 0.0, button: None, modifiers: 0, delta_x: 0.0, delta_y: 0.0 };
        assert!(mouse_event(&bad).is_err());
    }

    #[test]
    fn char_events_and_untypable_text_are_inserted() {
        assert_eq!(key_action(&key("char", "é", Some("é"), 0)), KeyAction::Insert("é".into()));
        assert_eq!(key_action(&key("keyUp", "NoSuchKeyName", None, 0)), KeyAction::Nothing);
    }
}
