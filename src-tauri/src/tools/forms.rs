//! Form controls: `fill` (text, or a picker's value), `select` (options of a `<select>`),
//! `check` and `uncheck` (a click, only when it changes the state) and `focus`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::action_input::action_input;
use super::outcome::{self, act};
use super::page_agent::{self, agent};
use super::targeting::{actionable, locate, ElementTarget, Needs};
use super::{Tool, ToolContext};
use crate::engine::agent::{Fill, Focus, Locate, Select, SetValue};
use crate::engine::{InputEvent, Modifiers, MouseButton};
use crate::error::{Error, ErrorCode, Result};

action_input! {
    /// Input of `fill`.
    FillInput aimed_at_element {
        /// The text to enter.
        text: String,
        /// Replace what is there (default true); false appends.
        #[serde(default)]
        clear: Option<bool>,
    }
}

/// `fill`.
pub(super) fn fill_tool() -> Tool {
    Tool::page(
        "fill",
        "Type text into an input (any text-like type), textarea or editable element (replacing its content unless clear=false), with trusted input events; on date, time, datetime-local, month, week, color and range inputs, set the value in the type's format (YYYY-MM-DD, HH:MM, ...) as a picker would.",
        |context, input: FillInput| act(context, "fill", move |context| fill(context, input)),
    )
}

/// Input types whose value a picker sets: `fill` sets it in the type's own format.
const PICKER_TYPES: [&str; 7] = ["date", "time", "datetime-local", "month", "week", "color", "range"];

async fn fill(context: ToolContext, input: FillInput) -> Result<Value> {
    let waits = input.waits()?;
    let element = input.element();
    let located = actionable(&context, &element, Needs { enabled: true, editable: true, ..Needs::default() }, waits.actionable).await?;
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
        let mut result = outcome::finish_with(&context, "fill", located.summary(), load_mark, event_mark, waits.settle, false).await?;
        result["value"] = json!(set.value);
        return Ok(result);
    }
    let fill = Fill { target: located.address(), text: input.text, clear: input.clear.unwrap_or(true) };
    let filled = agent(&context, &located.frame, &fill).await?;
    let mut result = outcome::finish_with(&context, "fill", located.summary(), load_mark, event_mark, waits.settle, false).await?;
    // What the field holds now (passwords stay "[redacted]").
    result["value"] = json!(filled.value);
    Ok(result)
}

action_input! {
    /// Input of `select`: one of `value`, `label` or `index`.
    SelectInput aimed_at_element {
        /// The option value(s) to select.
        #[serde(default)]
        value: Option<OneOrMany>,
        /// Or the option label(s) to select.
        #[serde(default)]
        label: Option<OneOrMany>,
        /// Or the option position(s), from 0.
        #[serde(default)]
        index: Option<OneOrManyIndex>,
    }
}

/// `select`.
pub(super) fn select_tool() -> Tool {
    Tool::page("select", "Choose option(s) of a <select> by value, label or index (from 0).", |context, input: SelectInput| {
        act(context, "select", move |context| select(context, input))
    })
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
    let waits = input.waits()?;
    let element = input.element();
    let (values, by) = match (input.value, input.label, input.index) {
        (Some(value), None, None) => (value.into_vec(), "value"),
        (None, Some(label), None) => (label.into_vec(), "label"),
        (None, None, Some(OneOrManyIndex::One(index))) => (vec![index.to_string()], "index"),
        (None, None, Some(OneOrManyIndex::Many(indexes))) => (indexes.iter().map(u32::to_string).collect(), "index"),
        _ => return Err(Error::bad_request("give one of value, label or index")),
    };
    let located = actionable(&context, &element, Needs { enabled: true, ..Needs::default() }, waits.actionable).await?;
    let event_mark = outcome::event_mark(&context);
    let load_mark = page_agent::input(&context, Vec::new()).await?;
    let selected = agent(&context, &located.frame, &Select { target: located.address(), values, by }).await?;
    let mut result = outcome::finish(&context, "select", located.summary(), load_mark, event_mark, waits.settle).await?;
    result["selected"] = selected["selected"].clone();
    Ok(result)
}

action_input! {
    /// Input of `check` and `uncheck`.
    CheckInput aimed_at_element {}
}

/// `check`.
pub(super) fn check_tool() -> Tool {
    Tool::page("check", "Check a checkbox, radio or switch (a click, only if it is not checked yet).", |context, input: CheckInput| {
        act(context, "check", move |context| set_checked(context, input, true))
    })
}

/// `uncheck`.
pub(super) fn uncheck_tool() -> Tool {
    Tool::page("uncheck", "Uncheck a checkbox or switch (a click, only if it is checked).", |context, input: CheckInput| {
        act(context, "uncheck", move |context| set_checked(context, input, false))
    })
}

async fn set_checked(context: ToolContext, input: CheckInput, wanted: bool) -> Result<Value> {
    let name = if wanted { "check" } else { "uncheck" };
    let waits = input.waits()?;
    page_agent::input(&context, Vec::new()).await?;
    let element = input.element();
    let located = locate(&context, &element, true).await?;
    let Some(checked) = located.info.checked else {
        return Err(Error::bad_request(format!("{name} works on checkboxes, radios and switches")));
    };
    if checked == wanted {
        return Ok(json!({ "action": name, "ok": true, "target": located.summary(), "changed": false, "checked": checked }));
    }
    let located = actionable(&context, &element, Needs { stable: true, enabled: true, editable: false }, waits.actionable).await?;
    let (x, y) = (located.x, located.y);
    let modifiers = Modifiers::default();
    let events = vec![
        InputEvent::MouseMove { x, y, modifiers },
        InputEvent::MouseDown { x, y, button: MouseButton::Left, modifiers },
        InputEvent::MouseUp { x, y, button: MouseButton::Left, modifiers },
    ];
    let event_mark = outcome::event_mark(&context);
    let load_mark = page_agent::input(&context, events).await?;
    let mut result = outcome::finish(&context, name, located.summary(), load_mark, event_mark, waits.settle).await?;
    let after = agent(&context, &located.frame, &Locate { target: located.address(), scroll: false, stable: false }).await?;
    let now = after.checked.unwrap_or(checked);
    if now != wanted {
        return Err(Error::new(ErrorCode::ScriptError, format!("the click did not {name} the element (the page kept it as it was)")));
    }
    result["changed"] = json!(true);
    result["checked"] = json!(now);
    Ok(result)
}

/// `focus`.
pub(super) fn focus_tool() -> Tool {
    Tool::page("focus", "Give an element keyboard focus.", |context, input: ElementTarget| {
        act(context, "focus", move |context| focus(context, input))
    })
}

async fn focus(context: ToolContext, input: ElementTarget) -> Result<Value> {
    let located = locate(&context, &input, true).await?;
    let focused = agent(&context, &located.frame, &Focus { target: located.address() }).await?;
    Ok(json!({ "action": "focus", "ok": true, "target": located.summary(), "focused": focused.focused }))
}
