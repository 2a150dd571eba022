//! `mouse`: the pointer at viewport coordinates, one step at a time, for agents that look
//! at pixels (computer-use models): move, press, release, click, double click and turn the
//! wheel with trusted events, reporting what followed as `click` does. A button pressed by
//! `down` stays down across calls until `up`, so `down`, `move`, `up` is a drag.

use schemars::JsonSchema;
use serde::Deserialize;

use super::limits::ACTION_SETTLE_MS;
use super::outcome::{self, action_tool, ActionOutcome, ActionTarget};
use super::page_agent;
use super::targeting::{AimedAt, ViewportPoint};
use super::{Tool, ToolContext};
use crate::engine::keys::ModifierKey;
use crate::engine::{InputEvent, Modifiers, MouseButton};
use crate::error::{Error, Result};

/// What the pointer does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MouseAction {
    /// Move to (x, y) (buttons pressed by `down` stay pressed: a drag).
    Move,
    /// Move to (x, y) and press the button.
    Down,
    /// Move to (x, y) and release the button.
    Up,
    /// Move to (x, y), press and release.
    Click,
    /// Move to (x, y) and click twice (a `dblclick`).
    DoubleClick,
    /// Turn the wheel at (x, y) by `delta_x`, `delta_y` CSS px.
    Wheel,
}

/// Input of `mouse`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MouseInput {
    /// `move`, `down`, `up`, `click`, `double_click` or `wheel`.
    action: MouseAction,
    /// CSS px from the viewport's left edge (an image pixel of a screenshot divided by its
    /// `scale`, plus the screenshot's `clip.x` less the page's scroll for a full-page one).
    x: f64,
    /// CSS px from the viewport's top edge.
    y: f64,
    /// `left` (default), `middle` or `right`. For down, up, click and double_click.
    #[serde(default)]
    button: Option<MouseButton>,
    /// Wheel only: CSS px to scroll right (negative: left).
    #[serde(default)]
    delta_x: Option<f64>,
    /// Wheel only: CSS px to scroll down (negative: up).
    #[serde(default)]
    delta_y: Option<f64>,
    /// Modifier keys held during the action (not with wheel).
    #[serde(default)]
    modifiers: Vec<ModifierKey>,
    /// Upper bound in ms for waiting for what the action caused (navigation, dialogs,
    /// popups, DOM quiet) (default 1500, max 30000).
    #[serde(default)]
    #[schemars(range(max = ACTION_SETTLE_MS.max))]
    settle_ms: Option<u64>,
}

/// `mouse`.
pub(super) fn tool() -> Tool {
    action_tool(
        "mouse",
        "Move, press, click or wheel the pointer at a viewport point (CSS px). For agents that work from screenshots: action move, down, up, click, double_click or wheel (delta_x, delta_y), with trusted events. A button pressed by down stays pressed until up (down, move, up drags). Reports navigation, dialogs and popups it caused, as click does.",
        mouse,
    )
}

async fn mouse(context: ToolContext, input: MouseInput) -> Result<ActionOutcome> {
    let settle = ACTION_SETTLE_MS.millis(input.settle_ms, "settle_ms")?;
    let (x, y) = (input.x, input.y);
    let events = events(&input, context.session.width as f64, context.session.height as f64)?;
    let event_mark = outcome::event_mark(&context);
    let load_mark = page_agent::input(&context, events).await?;
    let target = ActionTarget::One(AimedAt::Point(ViewportPoint { x, y }));
    outcome::finish(&context, "mouse", Some(target), load_mark, event_mark, settle, true).await
}

/// The trusted events an input asks for, checked against a viewport of `width` x `height`.
fn events(input: &MouseInput, width: f64, height: f64) -> Result<Vec<InputEvent>> {
    let (x, y) = (input.x, input.y);
    if !((0.0..width).contains(&x) && (0.0..height).contains(&y)) {
        return Err(Error::bad_request(format!("x, y: the point ({x}, {y}) is outside the {width}x{height} viewport")));
    }
    let wheel = input.action == MouseAction::Wheel;
    if !wheel && (input.delta_x.is_some() || input.delta_y.is_some()) {
        return Err(Error::bad_request("delta_x and delta_y go with action wheel"));
    }
    if matches!(input.action, MouseAction::Wheel | MouseAction::Move) && input.button.is_some() {
        return Err(Error::bad_request("button goes with down, up, click and double_click"));
    }
    if wheel && !input.modifiers.is_empty() {
        return Err(Error::bad_request("modifiers do not go with action wheel"));
    }
    let button = input.button.unwrap_or_default();
    let modifiers = Modifiers::of(&input.modifiers);
    let moved = InputEvent::MouseMove { x, y, modifiers };
    let down = InputEvent::MouseDown { x, y, button, modifiers };
    let up = InputEvent::MouseUp { x, y, button, modifiers };
    Ok(match input.action {
        MouseAction::Move => vec![moved],
        MouseAction::Down => vec![moved, down],
        MouseAction::Up => vec![moved, up],
        MouseAction::Click => vec![moved, down, up],
        MouseAction::DoubleClick => vec![moved, down, up, down, up],
        MouseAction::Wheel => {
            let (dx, dy) = (input.delta_x.unwrap_or(0.0), input.delta_y.unwrap_or(0.0));
            if !(dx.is_finite() && dy.is_finite()) || (dx == 0.0 && dy == 0.0) {
                return Err(Error::bad_request("delta_x, delta_y: a wheel turn needs a finite, non-zero delta"));
            }
            vec![moved, InputEvent::Wheel { x, y, dx, dy }]
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The events of an input in an 800x600 viewport.
    fn events_of(json: serde_json::Value) -> Result<Vec<InputEvent>> {
        events(&serde_json::from_value(json).unwrap(), 800.0, 600.0)
    }

    #[test]
    fn actions_become_the_events_a_hand_makes() {
        let click = events_of(serde_json::json!({"action": "double_click", "x": 10, "y": 20})).unwrap();
        assert_eq!(click.len(), 5);
        assert!(matches!(click[0], InputEvent::MouseMove { x, y, .. } if x == 10.0 && y == 20.0));
        assert!(matches!(click[3], InputEvent::MouseDown { button: MouseButton::Left, .. }));
        let wheel = events_of(serde_json::json!({"action": "wheel", "x": 1, "y": 1, "delta_y": 300})).unwrap();
        assert!(matches!(wheel[1], InputEvent::Wheel { dx, dy, .. } if dx == 0.0 && dy == 300.0));
        let down = events_of(serde_json::json!({"action": "down", "x": 1, "y": 1, "button": "right"})).unwrap();
        assert!(matches!(down[..], [InputEvent::MouseMove { .. }, InputEvent::MouseDown { button: MouseButton::Right, .. }]));
    }

    #[test]
    fn bad_combinations_name_their_field() {
        let refused = |json: serde_json::Value| events_of(json).unwrap_err().message;
        assert!(refused(serde_json::json!({"action": "click", "x": 800, "y": 1})).starts_with("x, y:"));
        assert!(refused(serde_json::json!({"action": "click", "x": -1, "y": 1})).starts_with("x, y:"));
        assert!(refused(serde_json::json!({"action": "click", "x": 1, "y": 1, "delta_y": 5})).contains("delta_x"));
        assert!(refused(serde_json::json!({"action": "move", "x": 1, "y": 1, "button": "left"})).contains("button"));
        assert!(refused(serde_json::json!({"action": "wheel", "x": 1, "y": 1})).contains("delta"));
        assert!(refused(serde_json::json!({"action": "wheel", "x": 1, "y": 1, "delta_x": 2, "modifiers": ["Shift"]})).contains("modifiers"));
    }
}
