//! The agent's hands: click, fill, press, hover, select, check, uncheck, focus, scroll,
//! scroll_into_view, drag, wait_for, sleep. Pointer and keyboard input are trusted
//! events; targets are scrolled into view and must be visible, enabled and uncovered.
//! Each answers what it did and what followed (navigation, dialogs, blocked popups).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::outcome;
use super::page_agent::{self, agent};
use super::targeting::{self, actionable, ElementTarget, Needs};
use super::{millis, Tool, ToolContext};
use crate::engine::agent::{Fill, Focus, Html5Drag, Locate, Probe, ScrollBy, Select, SetValue};
use crate::engine::keys::{self, Chord, ModifierKey};
use crate::engine::{EditingCommand, InputEvent, KeyStroke, Modifiers, MouseButton, TabRequest};
use crate::error::{Error, ErrorCode, Result};

/// Runs an action (the registry holds the tab's lock), adding a failure screenshot to errors.
async fn act<F, Fut>(context: ToolContext, name: &'static str, action: F) -> Result<Value>
where
    F: FnOnce(ToolContext) -> Fut,
    Fut: std::future::Future<Output = Result<Value>>,
{
    match action(context.clone()).await {
        Ok(value) => Ok(value),
        Err(error) => Err(outcome::with_failure_screenshot(&context, name, error).await),
    }
}

fn target(element_ref: &Option<String>, selector: &Option<String>) -> ElementTarget {
    ElementTarget { element_ref: element_ref.clone(), selector: selector.clone() }
}

// ---- click -----------------------------------------------------------------------------

/// Input of `click`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ClickInput {
    /// The element: a ref from snapshot (e.g. e12).
    #[serde(default, rename = "ref")]
    element_ref: Option<String>,
    /// The element: a CSS selector (` >>> ` pierces open shadow roots).
    #[serde(default)]
    selector: Option<String>,
    /// Or a point in the viewport (CSS px), with `y`.
    #[serde(default)]
    x: Option<f64>,
    /// Or a point in the viewport (CSS px), with `x`.
    #[serde(default)]
    y: Option<f64>,
    /// `left` (default), `middle` or `right`.
    #[serde(default)]
    button: MouseButton,
    /// 1 (default), 2 for a double click, 3 for a triple click.
    #[serde(default)]
    #[schemars(range(min = 1, max = 3))]
    click_count: Option<u8>,
    /// Modifier keys held during the click.
    #[serde(default)]
    modifiers: Vec<ModifierKey>,
    /// Upper bound in ms for waiting for what the click caused (default 1500).
    #[serde(default)]
    #[schemars(range(max = 30000))]
    settle_ms: Option<u64>,
    /// How long to wait for the element to be actionable (visible, stable, enabled, not
    /// covered) in ms (default 5000, max 120000).
    #[serde(default)]
    #[schemars(range(max = 120000))]
    timeout_ms: Option<u64>,
}

async fn click(context: ToolContext, input: ClickInput) -> Result<Value> {
    let count = input.click_count.unwrap_or(1);
    if !(1..=3).contains(&count) {
        return Err(Error::bad_request("click_count must be 1, 2 or 3"));
    }
    let settle = outcome::settle_budget(input.settle_ms)?;
    let timeout = actionable_timeout(input.timeout_ms)?;
    let element = target(&input.element_ref, &input.selector);
    let needs = Needs { stable: true, enabled: true, editable: false };
    let (x, y, described) = point_or_element(&context, &element, input.x, input.y, needs, timeout).await?;
    let modifiers = Modifiers::of(&input.modifiers);
    let mut events = vec![InputEvent::MouseMove { x, y, modifiers }];
    for _ in 0..count {
        events.push(InputEvent::MouseDown { x, y, button: input.button, modifiers });
        events.push(InputEvent::MouseUp { x, y, button: input.button, modifiers });
    }
    let event_mark = outcome::event_mark(&context);
    let load_mark = page_agent::input(&context, events).await?;
    outcome::finish(&context, "click", described, load_mark, event_mark, settle).await
}

/// How long an action waits for its element (`timeout_ms`, default 5000).
fn actionable_timeout(timeout_ms: Option<u64>) -> Result<std::time::Duration> {
    millis(timeout_ms, targeting::ACTIONABLE_TIMEOUT.as_millis() as u64, 120_000, "timeout_ms")
}

/// The point to act at: given coordinates, or the centre of an actionable element.
async fn point_or_element(
    context: &ToolContext,
    element: &ElementTarget,
    x: Option<f64>,
    y: Option<f64>,
    needs: Needs,
    timeout: std::time::Duration,
) -> Result<(f64, f64, Value)> {
    match (x, y, element.is_given()) {
        (Some(x), Some(y), false) => {
            let width = context.session.width as f64;
            let height = context.session.height as f64;
            if !(0.0..width).contains(&x) || !(0.0..height).contains(&y) {
                return Err(Error::bad_request(format!("the point ({x}, {y}) is outside the {width}x{height} viewport")));
            }
            Ok((x, y, json!({ "x": x, "y": y })))
        }
        (None, None, true) => {
            let located = actionable(context, element, needs, timeout).await?;
            Ok((located.x, located.y, located.summary()))
        }
        _ => Err(Error::bad_request("give either a ref, a selector, or both x and y")),
    }
}

// ---- hover -------------------------------------------------------------------------------

/// Input of `hover`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HoverInput {
    /// The element: a ref from snapshot (e.g. e12).
    #[serde(default, rename = "ref")]
    element_ref: Option<String>,
    /// The element: a CSS selector (` >>> ` pierces open shadow roots).
    #[serde(default)]
    selector: Option<String>,
    /// Or a point in the viewport (CSS px), with `y`.
    #[serde(default)]
    x: Option<f64>,
    /// Or a point in the viewport (CSS px), with `x`.
    #[serde(default)]
    y: Option<f64>,
    /// Upper bound in ms for waiting for what the hover caused (default 1500).
    #[serde(default)]
    #[schemars(range(max = 30000))]
    settle_ms: Option<u64>,
    /// How long to wait for the element to be actionable (visible, stable, enabled, not
    /// covered) in ms (default 5000, max 120000).
    #[serde(default)]
    #[schemars(range(max = 120000))]
    timeout_ms: Option<u64>,
}

async fn hover(context: ToolContext, input: HoverInput) -> Result<Value> {
    let settle = outcome::settle_budget(input.settle_ms)?;
    let timeout = actionable_timeout(input.timeout_ms)?;
    let element = target(&input.element_ref, &input.selector);
    let needs = Needs { stable: true, ..Needs::default() };
    let (x, y, described) = point_or_element(&context, &element, input.x, input.y, needs, timeout).await?;
    let event_mark = outcome::event_mark(&context);
    let load_mark = page_agent::input(&context, vec![InputEvent::MouseMove { x, y, modifiers: Modifiers::default() }]).await?;
    outcome::finish(&context, "hover", described, load_mark, event_mark, settle).await
}

// ---- fill --------------------------------------------------------------------------------

/// Input of `fill`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FillInput {
    /// The element: a ref from snapshot (e.g. e12).
    #[serde(default, rename = "ref")]
    element_ref: Option<String>,
    /// The element: a CSS selector (` >>> ` pierces open shadow roots).
    #[serde(default)]
    selector: Option<String>,
    /// The text to enter.
    text: String,
    /// Replace what is there (default true); false appends.
    #[serde(default)]
    clear: Option<bool>,
    /// Upper bound in ms for waiting for what the input caused (default 1500).
    #[serde(default)]
    #[schemars(range(max = 30000))]
    settle_ms: Option<u64>,
    /// How long to wait for the element to be actionable (visible, stable, enabled, not
    /// covered) in ms (default 5000, max 120000).
    #[serde(default)]
    #[schemars(range(max = 120000))]
    timeout_ms: Option<u64>,
}

/// Input types whose value a picker sets: `fill` sets it in the type's own format.
const PICKER_TYPES: [&str; 7] = ["date", "time", "datetime-local", "month", "week", "color", "range"];

async fn fill(context: ToolContext, input: FillInput) -> Result<Value> {
    let settle = outcome::settle_budget(input.settle_ms)?;
    let timeout = actionable_timeout(input.timeout_ms)?;
    let element = target(&input.element_ref, &input.selector);
    let located = actionable(&context, &element, Needs { enabled: true, editable: true, ..Needs::default() }, timeout).await?;
    let kind = located.info.input_type.clone().unwrap_or_default();
    let event_mark = outcome::event_mark(&context);
    let load_mark = page_agent::input(&context, Vec::new()).await?;
    if !located.info.editable {
        if kind == "file" {
            return Err(Error::new(ErrorCode::Unsupported, "file inputs take files, not text: use set_file_input {files: [paths]}")
                .with_details(json!({ "use": "set_file_input" })));
        }
        if !PICKER_TYPES.contains(&kind.as_str()) {
            return Err(Error::bad_request(format!("{} does not take typed text; use click, select or check", located.describe())));
        }
        let set = agent(&context, &located.frame, &SetValue { target: located.address(), text: input.text }).await?;
        let mut result = outcome::finish_with(&context, "fill", located.summary(), load_mark, event_mark, settle, false).await?;
        result["value"] = json!(set.value);
        return Ok(result);
    }
    let fill = Fill { target: located.address(), text: input.text, clear: input.clear.unwrap_or(true) };
    let filled = agent(&context, &located.frame, &fill).await?;
    let mut result = outcome::finish_with(&context, "fill", located.summary(), load_mark, event_mark, settle, false).await?;
    // What the field holds now (passwords stay "[redacted]").
    result["value"] = json!(filled.value);
    Ok(result)
}

// ---- press, type ----------------------------------------------------------------------------

/// Input of `press`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PressInput {
    /// A key or a combination, in Playwright's `keyboard.press` grammar on a US layout: a
    /// character (`a`, `A`, `+`), a key name (`Enter`, `Tab`, `Escape`, `ArrowDown`, `F5`,
    /// `KeyA`, `Digit1`, `Backquote`, `Numpad1`, `ShiftRight`, ...), or modifiers joined with
    /// `+` before it (`Control+A`, `Shift++`).
    #[schemars(length(min = 1))]
    key: String,
    /// Modifier keys held (also writable in `key`). Meta+A/C/V/X/Z run the editing command
    /// (select all, copy, paste, cut, undo; Meta+Shift+Z redo); other Meta combinations are
    /// not supported.
    #[serde(default)]
    modifiers: Vec<ModifierKey>,
    /// The element: a ref from snapshot (e.g. e12).
    #[serde(default, rename = "ref")]
    element_ref: Option<String>,
    /// The element: a CSS selector (` >>> ` pierces open shadow roots).
    #[serde(default)]
    selector: Option<String>,
    /// Upper bound in ms for waiting for what the key caused (default 1500).
    #[serde(default)]
    #[schemars(range(max = 30000))]
    settle_ms: Option<u64>,
    /// How long to wait for the element to be actionable (visible, stable, enabled, not
    /// covered) in ms (default 5000, max 120000).
    #[serde(default)]
    #[schemars(range(max = 120000))]
    timeout_ms: Option<u64>,
}

/// Focuses the target, if one is given, once it is actionable; answers its summary.
async fn focus_target(context: &ToolContext, element: &ElementTarget, timeout: std::time::Duration) -> Result<Value> {
    if !element.is_given() {
        return Ok(Value::Null);
    }
    let located = actionable(context, element, Needs { enabled: true, ..Needs::default() }, timeout).await?;
    agent(context, &located.frame, &Focus { target: located.address() }).await?;
    Ok(located.summary())
}

async fn press(context: ToolContext, input: PressInput) -> Result<Value> {
    let settle = outcome::settle_budget(input.settle_ms)?;
    let timeout = actionable_timeout(input.timeout_ms)?;
    let chord = keys::parse_chord(&input.key, &input.modifiers)?;
    let described = focus_target(&context, &target(&input.element_ref, &input.selector), timeout).await?;
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
    let mut result = outcome::finish(&context, "press", described, load_mark, event_mark, settle).await?;
    result["key"] = json!(input.key);
    Ok(result)
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

/// Longest text `type` takes in one call.
const MAX_TYPED_CHARS: usize = 10_000;

/// Input of `type`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TypeInput {
    /// The element to type into (focused first): a ref from snapshot. Without ref or
    /// selector, the focused element gets the keys.
    #[serde(default, rename = "ref")]
    element_ref: Option<String>,
    /// The element: a CSS selector (` >>> ` pierces open shadow roots).
    #[serde(default)]
    selector: Option<String>,
    /// The text, typed one character at a time with key events (`\n` is Enter, `\t` Tab).
    #[schemars(length(max = 10000))]
    text: String,
    /// Pause between two characters in ms (default 0, max 1000).
    #[serde(default)]
    #[schemars(range(max = 1000))]
    delay_ms: Option<u64>,
    /// Upper bound in ms for waiting for what the typing caused (default 1500).
    #[serde(default)]
    #[schemars(range(max = 30000))]
    settle_ms: Option<u64>,
    /// How long to wait for the element to be actionable (visible, stable, enabled, not
    /// covered) in ms (default 5000, max 120000).
    #[serde(default)]
    #[schemars(range(max = 120000))]
    timeout_ms: Option<u64>,
}

/// Types text key by key, as a person does on a US keyboard: each character is a keydown,
/// (keypress,) input and keyup, with Shift held for the characters that need it. For pages
/// that listen to keys rather than to `input`.
async fn type_text(context: ToolContext, input: TypeInput) -> Result<Value> {
    let settle = outcome::settle_budget(input.settle_ms)?;
    let timeout = actionable_timeout(input.timeout_ms)?;
    let delay = millis(input.delay_ms, 0, 1000, "delay_ms")?;
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
    let element = target(&input.element_ref, &input.selector);
    let described = focus_target(&context, &element, timeout).await?;
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
    let mut result = outcome::finish(&context, "type", described, load_mark, event_mark, settle).await?;
    result["typed_chars"] = json!(input.text.chars().count());
    Ok(result)
}

// ---- select, check, uncheck, focus ------------------------------------------------------

/// Input of `select`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SelectInput {
    /// The element: a ref from snapshot (e.g. e12).
    #[serde(default, rename = "ref")]
    element_ref: Option<String>,
    /// The element: a CSS selector (` >>> ` pierces open shadow roots).
    #[serde(default)]
    selector: Option<String>,
    /// The option value(s) to select.
    #[serde(default)]
    value: Option<OneOrMany>,
    /// Or the option label(s) to select.
    #[serde(default)]
    label: Option<OneOrMany>,
    /// Or the option position(s), from 0.
    #[serde(default)]
    index: Option<OneOrManyIndex>,
    /// Upper bound in ms for waiting for what the change caused (default 1500).
    #[serde(default)]
    #[schemars(range(max = 30000))]
    settle_ms: Option<u64>,
    /// How long to wait for the element to be actionable (visible, stable, enabled, not
    /// covered) in ms (default 5000, max 120000).
    #[serde(default)]
    #[schemars(range(max = 120000))]
    timeout_ms: Option<u64>,
}

/// One option position or a list of them.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum OneOrManyIndex {
    /// One.
    One(u32),
    /// Several (multiple selects).
    Many(Vec<u32>),
}

/// One string or a list of strings.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum OneOrMany {
    /// One.
    One(String),
    /// Several (multiple selects).
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(one) => vec![one],
            OneOrMany::Many(many) => many,
        }
    }
}

async fn select(context: ToolContext, input: SelectInput) -> Result<Value> {
    let settle = outcome::settle_budget(input.settle_ms)?;
    let timeout = actionable_timeout(input.timeout_ms)?;
    let (values, by) = match (input.value, input.label, input.index) {
        (Some(value), None, None) => (value.into_vec(), "value"),
        (None, Some(label), None) => (label.into_vec(), "label"),
        (None, None, Some(OneOrManyIndex::One(index))) => (vec![index.to_string()], "index"),
        (None, None, Some(OneOrManyIndex::Many(indexes))) => (indexes.iter().map(u32::to_string).collect(), "index"),
        _ => return Err(Error::bad_request("give one of value, label or index")),
    };
    let located =
        actionable(&context, &target(&input.element_ref, &input.selector), Needs { enabled: true, ..Needs::default() }, timeout).await?;
    let event_mark = outcome::event_mark(&context);
    let load_mark = page_agent::input(&context, Vec::new()).await?;
    let selected = agent(&context, &located.frame, &Select { target: located.address(), values, by }).await?;
    let mut result = outcome::finish(&context, "select", located.summary(), load_mark, event_mark, settle).await?;
    result["selected"] = selected["selected"].clone();
    Ok(result)
}

/// Input of `check` and `uncheck`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CheckInput {
    /// The element: a ref from snapshot (e.g. e12).
    #[serde(default, rename = "ref")]
    element_ref: Option<String>,
    /// The element: a CSS selector (` >>> ` pierces open shadow roots).
    #[serde(default)]
    selector: Option<String>,
    /// Upper bound in ms for waiting for what the click caused (default 1500).
    #[serde(default)]
    #[schemars(range(max = 30000))]
    settle_ms: Option<u64>,
    /// How long to wait for the element to be actionable (visible, stable, enabled, not
    /// covered) in ms (default 5000, max 120000).
    #[serde(default)]
    #[schemars(range(max = 120000))]
    timeout_ms: Option<u64>,
}

async fn set_checked(context: ToolContext, input: CheckInput, wanted: bool) -> Result<Value> {
    let name = if wanted { "check" } else { "uncheck" };
    let settle = outcome::settle_budget(input.settle_ms)?;
    let timeout = actionable_timeout(input.timeout_ms)?;
    page_agent::input(&context, Vec::new()).await?;
    let element = target(&input.element_ref, &input.selector);
    let located = targeting::locate(&context, &element, true).await?;
    let Some(checked) = located.info.checked else {
        return Err(Error::bad_request(format!("{name} works on checkboxes, radios and switches")));
    };
    if checked == wanted {
        return Ok(json!({ "action": name, "ok": true, "target": located.summary(), "changed": false, "checked": checked }));
    }
    let located = actionable(&context, &element, Needs { stable: true, enabled: true, editable: false }, timeout).await?;
    let (x, y) = (located.x, located.y);
    let modifiers = Modifiers::default();
    let events = vec![
        InputEvent::MouseMove { x, y, modifiers },
        InputEvent::MouseDown { x, y, button: MouseButton::Left, modifiers },
        InputEvent::MouseUp { x, y, button: MouseButton::Left, modifiers },
    ];
    let event_mark = outcome::event_mark(&context);
    let load_mark = page_agent::input(&context, events).await?;
    let mut result = outcome::finish(&context, name, located.summary(), load_mark, event_mark, settle).await?;
    let after = agent(&context, &located.frame, &Locate { target: located.address(), scroll: false, stable: false }).await?;
    let now = after.checked.unwrap_or(checked);
    if now != wanted {
        return Err(Error::new(ErrorCode::ScriptError, format!("the click did not {name} the element (the page kept it as it was)")));
    }
    result["changed"] = json!(true);
    result["checked"] = json!(now);
    Ok(result)
}

async fn focus(context: ToolContext, input: ElementTarget) -> Result<Value> {
    let located = targeting::locate(&context, &input, true).await?;
    let focused = agent(&context, &located.frame, &Focus { target: located.address() }).await?;
    Ok(json!({ "action": "focus", "ok": true, "target": located.summary(), "focused": focused.focused }))
}

async fn scroll_into_view(context: ToolContext, input: ElementTarget) -> Result<Value> {
    let located = targeting::locate(&context, &input, true).await?;
    let (width, height) = (located.info.w, located.info.h);
    Ok(json!({ "action": "scroll_into_view", "ok": true, "target": located.summary(),
        "box": { "x": located.x - width / 2.0, "y": located.y - height / 2.0, "w": width, "h": height },
        "in_viewport": located.info.in_viewport }))
}

// ---- scroll, drag ----------------------------------------------------------------------------

/// Input of `scroll`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScrollInput {
    /// Pixels to the right (negative: left).
    #[serde(default)]
    dx: f64,
    /// Pixels down (negative: up).
    #[serde(default)]
    dy: f64,
}

async fn scroll(context: ToolContext, input: ScrollInput) -> Result<Value> {
    let position = agent(&context, &[], &ScrollBy { dx: input.dx, dy: input.dy }).await?;
    Ok(json!({ "action": "scroll", "ok": true, "scroll_x": position.scroll_x, "scroll_y": position.scroll_y }))
}

/// One end of a drag.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DragEnd {
    /// The element: a ref from snapshot (e.g. e12).
    #[serde(default, rename = "ref")]
    element_ref: Option<String>,
    /// The element: a CSS selector (` >>> ` pierces open shadow roots).
    #[serde(default)]
    selector: Option<String>,
    /// Or a point (CSS px), with `y`.
    #[serde(default)]
    x: Option<f64>,
    /// Or a point (CSS px), with `x`.
    #[serde(default)]
    y: Option<f64>,
}

/// Input of `drag`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DragInput {
    /// Where the button goes down.
    from: DragEnd,
    /// Where it comes up.
    to: DragEnd,
    /// Upper bound in ms for waiting for what the drag caused (default 1500).
    #[serde(default)]
    #[schemars(range(max = 30000))]
    settle_ms: Option<u64>,
    /// How long to wait for the elements to be actionable (visible, stable, enabled, not
    /// covered) in ms (default 5000, max 120000).
    #[serde(default)]
    #[schemars(range(max = 120000))]
    timeout_ms: Option<u64>,
}

async fn drag(context: ToolContext, input: DragInput) -> Result<Value> {
    let settle = outcome::settle_budget(input.settle_ms)?;
    let timeout = actionable_timeout(input.timeout_ms)?;
    let from_target = target(&input.from.element_ref, &input.from.selector);
    let needs = Needs { stable: true, enabled: true, editable: false };
    let (from_x, from_y, from) = point_or_element(&context, &from_target, input.from.x, input.from.y, needs, timeout).await?;
    let to_target = target(&input.to.element_ref, &input.to.selector);
    let needs = Needs { stable: true, ..Needs::default() };
    let (to_x, to_y, to) = point_or_element(&context, &to_target, input.to.x, input.to.y, needs, timeout).await?;
    let event_mark = outcome::event_mark(&context);
    const STEPS: u32 = 8;
    // A draggable element (draggable="true", links, images) is an HTML5 drag: played in
    // the page, since WebKit would hand it to the native drag of the real screen.
    let html5 = agent(&context, &[], &Html5Drag { from_x, from_y, to_x, to_y, steps: STEPS }).await?;
    if html5["html5"] == true {
        let load_mark = page_agent::input(&context, Vec::new()).await?;
        let mut result = outcome::finish(&context, "drag", json!({ "from": from, "to": to }), load_mark, event_mark, settle).await?;
        for field in ["html5", "selection", "started", "dropped", "drop_target", "reason"] {
            if !html5[field].is_null() {
                result[field] = html5[field].clone();
            }
        }
        return Ok(result);
    }
    let modifiers = Modifiers::default();
    // Three batches with a pause between, as a hand moves: WebKit handles the press before
    // the moves that drag, and the moves before the release.
    let press = vec![
        InputEvent::MouseMove { x: from_x, y: from_y, modifiers },
        InputEvent::MouseDown { x: from_x, y: from_y, button: MouseButton::Left, modifiers },
    ];
    let moves: Vec<InputEvent> = (1..=STEPS)
        .map(|step| {
            let fraction = step as f64 / STEPS as f64;
            InputEvent::MouseMove { x: from_x + (to_x - from_x) * fraction, y: from_y + (to_y - from_y) * fraction, modifiers }
        })
        .collect();
    let release = vec![InputEvent::MouseUp { x: to_x, y: to_y, button: MouseButton::Left, modifiers }];
    let load_mark = page_agent::input(&context, press).await?;
    for batch in [moves, release] {
        tokio::time::sleep(std::time::Duration::from_millis(30)).await;
        page_agent::input(&context, batch).await?;
    }
    outcome::finish(&context, "drag", json!({ "from": from, "to": to }), load_mark, event_mark, settle).await
}

// ---- wait_for, sleep ---------------------------------------------------------------------------

/// What `wait_for` waits for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum WaitState {
    /// Present and visible (default).
    #[default]
    Visible,
    /// Absent or not visible.
    Hidden,
    /// Present in the DOM.
    Attached,
    /// Absent from the DOM.
    Detached,
}

/// Input of `wait_for`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WaitForInput {
    /// A CSS selector to wait for.
    #[serde(default)]
    selector: Option<String>,
    /// Or text to wait for in the page (inside `selector` when both are given).
    #[serde(default)]
    text: Option<String>,
    /// `visible` (default), `hidden`, `attached` or `detached`.
    #[serde(default)]
    state: WaitState,
    /// How long to wait in ms (default 5000, max 120000).
    #[serde(default)]
    #[schemars(range(max = 120000))]
    timeout_ms: Option<u64>,
}

async fn wait_for(context: ToolContext, input: WaitForInput) -> Result<Value> {
    if input.selector.is_none() && input.text.is_none() {
        return Err(Error::bad_request("give a selector or a text"));
    }
    let timeout = millis(input.timeout_ms, 5000, 120_000, "timeout_ms")?;
    let begun = std::time::Instant::now();
    let probe_request = Probe { selector: input.selector.clone(), text: input.text.clone() };
    let state = input.state;
    let found = page_agent::poll(timeout, || {
        let context = context.clone();
        let probe_request = probe_request.clone();
        async move {
            let probe = match agent(&context, &[], &probe_request).await {
                Ok(probe) => probe,
                // The page may be between documents: try again.
                Err(error) if matches!(error.code, ErrorCode::ScriptError | ErrorCode::EngineUnavailable) => return Ok(None),
                Err(error) => return Err(error),
            };
            let text_ok = probe.text_found.unwrap_or(true);
            let present = probe.exists.unwrap_or(true);
            let visible = probe.visible.unwrap_or(true);
            let done = match state {
                WaitState::Visible => present && visible && text_ok,
                WaitState::Attached => present && text_ok,
                WaitState::Hidden => !(present && visible && text_ok),
                WaitState::Detached => !(present && text_ok),
            };
            Ok(done.then_some(probe))
        }
    })
    .await?;
    match found {
        Some(_) => Ok(json!({ "action": "wait_for", "ok": true, "waited_ms": begun.elapsed().as_millis() as u64 })),
        None => Err(Error::new(ErrorCode::Timeout, format!("waited {} ms and the condition did not hold", timeout.as_millis()))
            .with_details(json!({ "selector": input.selector, "text": input.text, "state": format!("{state:?}").to_lowercase() }))),
    }
}

/// Input of `sleep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SleepInput {
    /// Milliseconds to wait (max 60000).
    #[schemars(range(max = 60000))]
    ms: u64,
}

async fn sleep(_context: ToolContext, input: SleepInput) -> Result<Value> {
    let duration = millis(Some(input.ms), 0, 60_000, "ms")?;
    tokio::time::sleep(duration).await;
    Ok(json!({ "action": "sleep", "ok": true, "slept_ms": input.ms }))
}

pub(super) fn tools() -> Vec<Tool> {
    vec![
        Tool::page("click", "Click an element (ref or selector) or a point with trusted mouse events, after scrolling it into view and checking it is visible, enabled and not covered. Reports navigation, dialogs and blocked popups it caused.",
            |context, input: ClickInput| act(context, "click", move |context| click(context, input))),
        Tool::page("fill", "Type text into an input (any text-like type), textarea or editable element (replacing its content unless clear=false), with trusted input events; on date, time, datetime-local, month, week, color and range inputs, set the value in the type's format (YYYY-MM-DD, HH:MM, ...) as a picker would.",
            |context, input: FillInput| act(context, "fill", move |context| fill(context, input))),
        Tool::page("press", "Press a key or combination (Enter, Tab, Escape, ArrowDown, Control+A, ...) on the focused element, or on the given element after focusing it.",
            |context, input: PressInput| act(context, "press", move |context| press(context, input))),
        Tool::page("type", "Type text into the given element (focused first) or the focused one, one character at a time with real key events (keydown, keypress, input, keyup; Shift for capitals and symbols), optionally delay_ms apart. For pages that react to keys; fill is faster for plain fields.",
            |context, input: TypeInput| act(context, "type", move |context| type_text(context, input))),
        Tool::page("hover", "Move the mouse over an element (ref or selector) or a point.",
            |context, input: HoverInput| act(context, "hover", move |context| hover(context, input))),
        Tool::page("select", "Choose option(s) of a <select> by value, label or index (from 0).",
            |context, input: SelectInput| act(context, "select", move |context| select(context, input))),
        Tool::page("check", "Check a checkbox, radio or switch (a click, only if it is not checked yet).",
            |context, input: CheckInput| act(context, "check", move |context| set_checked(context, input, true))),
        Tool::page("uncheck", "Uncheck a checkbox or switch (a click, only if it is checked).",
            |context, input: CheckInput| act(context, "uncheck", move |context| set_checked(context, input, false))),
        Tool::page("focus", "Give an element keyboard focus.",
            |context, input: ElementTarget| act(context, "focus", move |context| focus(context, input))),
        Tool::page("scroll", "Scroll the page by dx, dy pixels.",
            |context, input: ScrollInput| act(context, "scroll", move |context| scroll(context, input))),
        Tool::page("scroll_into_view", "Scroll until an element is in the middle of the viewport.",
            |context, input: ElementTarget| act(context, "scroll_into_view", move |context| scroll_into_view(context, input))),
        Tool::page("drag", "Drag from `from` to `to`: press the mouse, move in steps, release (trusted mouse events). When `from` is something the browser drags itself (a draggable=true element, a link, an image, selected text), plays the HTML5 drag-and-drop events in the page instead (text dropped on a field goes in) and answers `html5: true` with `dropped` and `drop_target`.",
            |context, input: DragInput| act(context, "drag", move |context| drag(context, input))),
        // Waiting only looks at the page: other calls on the tab go on meanwhile.
        Tool::tab("wait_for", "Wait until a selector or a text is visible (or hidden, attached, detached), up to timeout_ms. Does not hold up other calls on the tab.", |context, input: WaitForInput| act(context, "wait_for", move |context| wait_for(context, input))),
        Tool::session("sleep", "Wait a number of milliseconds.", |context, input: SleepInput| sleep(context, input)),
    ]
}
