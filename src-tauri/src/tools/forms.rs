//! Form controls: `fill` (text, or a picker's value), `select` (options of a `<select>`),
//! `check` and `uncheck` (a click, only when it changes the state) and `focus`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::action_input::action_input;
use super::outcome::{self, action_tool, ActionOutcome, ActionTarget};
use super::page_agent::{self, agent, read_agent_answer};
use super::targeting::{actionable, locate, ElementTarget, Needs, TargetSummary};
use super::{Positional, Tool, ToolContext};
use crate::engine::agent::{AgentOp, Fill, Focus, Locate, Select, SetValue};
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
    action_tool("fill", "Fill an input, textarea or editable element with text. It replaces the content unless clear=false, with trusted input events (any text-like type); on date, time, datetime-local, month, week, color and range inputs, set the value in the type's format (YYYY-MM-DD, HH:MM, ...) as a picker would.", fill).positional(&[Positional::Target, Positional::Field("text")])
}

/// Input types whose value a picker sets: `fill` sets it in the type's own format.
const PICKER_TYPES: [&str; 7] = ["date", "time", "datetime-local", "month", "week", "color", "range"];

/// Output of `fill`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct FillOutput {
    /// What the input caused.
    #[serde(flatten)]
    outcome: ActionOutcome,
    /// What the field holds now (passwords stay `[redacted]`).
    value: Option<String>,
}

async fn fill(context: ToolContext, input: FillInput) -> Result<FillOutput> {
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
        let target = Some(ActionTarget::element(located.summary()));
        let outcome = outcome::finish(&context, "fill", target, load_mark, event_mark, waits.settle, false).await?;
        return Ok(FillOutput { outcome, value: set.value });
    }
    let fill = Fill { target: located.address(), text: input.text, clear: input.clear.unwrap_or(true) };
    let filled = agent(&context, &located.frame, &fill).await?;
    let target = Some(ActionTarget::element(located.summary()));
    let outcome = outcome::finish(&context, "fill", target, load_mark, event_mark, waits.settle, false).await?;
    Ok(FillOutput { outcome, value: filled.value })
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
    action_tool("select", "Choose option(s) of a <select> by value, label or index (from 0).", select)
        .positional(&[Positional::Target, Positional::Field("value")])
}

/// One option position or a list of them.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged, expecting = "expected an option's index (from 0) or a list of them")]
pub(crate) enum OneOrManyIndex {
    /// One.
    One(u32),
    /// Several (multiple selects).
    Many(Vec<u32>),
}

/// One string or a list of strings.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged, expecting = "expected a string or a list of strings")]
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

/// Output of `select`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct SelectOutput {
    /// What the change caused.
    #[serde(flatten)]
    outcome: ActionOutcome,
    /// The options selected now.
    selected: Vec<SelectedOption>,
}

/// The page agent's answer to `select`.
#[derive(Debug, Deserialize)]
struct SelectAnswer {
    selected: Vec<SelectedOption>,
}

/// An option of a `<select>`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub(crate) struct SelectedOption {
    /// Its value.
    value: String,
    /// Its label.
    label: String,
}

async fn select(context: ToolContext, input: SelectInput) -> Result<SelectOutput> {
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
    let answer = agent(&context, &located.frame, &Select { target: located.address(), values, by }).await?;
    let SelectAnswer { selected } = read_agent_answer(AgentOp::Select, answer)?;
    let target = Some(ActionTarget::element(located.summary()));
    let outcome = outcome::finish(&context, "select", target, load_mark, event_mark, waits.settle, true).await?;
    Ok(SelectOutput { outcome, selected })
}

action_input! {
    /// Input of `check` and `uncheck`.
    CheckInput aimed_at_element {}
}

/// `check`.
pub(super) fn check_tool() -> Tool {
    action_tool("check", "Check a checkbox, radio or switch (a click, only if it is not checked yet).", |context, input: CheckInput| {
        set_checked(context, input, true)
    })
    .positional(&[Positional::Target])
}

/// `uncheck`.
pub(super) fn uncheck_tool() -> Tool {
    action_tool("uncheck", "Uncheck a checkbox or switch (a click, only if it is checked).", |context, input: CheckInput| {
        set_checked(context, input, false)
    })
    .positional(&[Positional::Target])
}

/// Output of `check` and `uncheck`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum CheckOutput {
    /// The element was clicked and changed.
    Clicked(Box<CheckClicked>),
    /// The element already was as wanted: nothing was done.
    AlreadyThere(CheckUnchanged),
}

/// `check` or `uncheck` that clicked.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct CheckClicked {
    /// What the click caused.
    #[serde(flatten)]
    outcome: ActionOutcome,
    /// true: the state changed.
    changed: bool,
    /// Whether the element is checked now.
    checked: bool,
}

/// `check` or `uncheck` of an element already in the wanted state.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct CheckUnchanged {
    /// `check` or `uncheck`.
    action: &'static str,
    /// Always true.
    ok: bool,
    /// The element.
    target: TargetSummary,
    /// false: nothing changed.
    changed: bool,
    /// Whether the element is checked (as it was).
    checked: bool,
}

async fn set_checked(context: ToolContext, input: CheckInput, wanted: bool) -> Result<CheckOutput> {
    let name = if wanted { "check" } else { "uncheck" };
    let waits = input.waits()?;
    page_agent::input(&context, Vec::new()).await?;
    let element = input.element();
    let located = locate(&context, &element, true).await?;
    let Some(checked) = located.info.checked else {
        return Err(Error::bad_request(format!("{name} works on checkboxes, radios and switches")));
    };
    if checked == wanted {
        let unchanged = CheckUnchanged { action: name, ok: true, target: located.summary(), changed: false, checked };
        return Ok(CheckOutput::AlreadyThere(unchanged));
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
    let target = Some(ActionTarget::element(located.summary()));
    let outcome = outcome::finish(&context, name, target, load_mark, event_mark, waits.settle, true).await?;
    let after = agent(&context, &located.frame, &Locate { target: located.address(), scroll: false, stable: false }).await?;
    let now = after.checked.unwrap_or(checked);
    if now != wanted {
        return Err(Error::new(ErrorCode::ScriptError, format!("the click did not {name} the element (the page kept it as it was)")));
    }
    Ok(CheckOutput::Clicked(Box::new(CheckClicked { outcome, changed: true, checked: now })))
}

/// `focus`.
pub(super) fn focus_tool() -> Tool {
    action_tool("focus", "Give an element keyboard focus.", focus).positional(&[Positional::Target])
}

/// Output of `focus`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct FocusOutput {
    /// `focus`.
    action: &'static str,
    /// Always true.
    ok: bool,
    /// The element.
    target: TargetSummary,
    /// Whether the element (or something in it) has focus now.
    focused: bool,
}

async fn focus(context: ToolContext, input: ElementTarget) -> Result<FocusOutput> {
    let located = locate(&context, &input, true).await?;
    let focused = agent(&context, &located.frame, &Focus { target: located.address() }).await?;
    Ok(FocusOutput { action: "focus", ok: true, target: located.summary(), focused: focused.focused })
}
