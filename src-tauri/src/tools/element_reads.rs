//! `get` and `is`: one-line reads for the command line (`malo get text h1`, `malo get attr
//! a.next href`, `malo is checked e7`), each answering one `value`. Thin forms of what
//! `extract`, `assert` and `evaluate` read, by ref or selector, in any frame a ref is in;
//! the page's title and URL come from the tab. MCP does not list them (agents there have
//! `extract`, `assert` and `evaluate`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::page_agent::agent;
use super::targeting::{locate, parse_ref, ElementTarget};
use super::{Positional, Tool, ToolContext};
use crate::engine::agent::{ElementAddress, ElementRead};
use crate::error::{Error, Result};

/// What `get` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum GetWhat {
    /// The element's rendered text.
    Text,
    /// Its inner HTML.
    Html,
    /// A form field's value (passwords are `[redacted]`).
    Value,
    /// One attribute (`name`).
    Attr,
    /// The page's title.
    Title,
    /// The page's URL.
    Url,
    /// How many elements match the selector.
    Count,
    /// The element's border box in the top page's viewport (CSS px).
    Box,
    /// Its computed styles (one property with `name`).
    Styles,
}

/// Input of `get`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetInput {
    /// What to read: text, html, value, attr, title, url, count, box or styles.
    what: GetWhat,
    /// The element: a ref from snapshot (e.g. e12).
    #[serde(default, rename = "ref")]
    element_ref: Option<String>,
    /// The element: a CSS selector (` >>> ` pierces open shadow roots).
    #[serde(default)]
    selector: Option<String>,
    /// The attribute (attr), or one CSS property (styles).
    #[serde(default)]
    name: Option<String>,
}

/// What `is` checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum IsState {
    /// Rendered with a box and not hidden (a selector that matches nothing: false).
    Visible,
    /// Not disabled (attribute, aria-disabled, a disabled fieldset).
    Enabled,
    /// A checkbox, radio or switch that is checked.
    Checked,
}

/// Input of `is`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct IsInput {
    /// What to check: visible, enabled or checked.
    state: IsState,
    /// The element: a ref from snapshot (e.g. e12).
    #[serde(default, rename = "ref")]
    element_ref: Option<String>,
    /// The element: a CSS selector (` >>> ` pierces open shadow roots).
    #[serde(default)]
    selector: Option<String>,
}

/// Output of `get` and `is`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ReadValue {
    /// What was read: a string (null when absent: an attribute the element lacks), a
    /// number, a flag, or an object (a box, styles).
    value: Value,
}

pub(super) fn tools() -> Vec<Tool> {
    vec![
        Tool::page(
            "get",
            "Read one thing as one value: an element's text, html, value, attr (name) or styles, how many match (count), its box, or the page's title or url.",
            |context: ToolContext, input: GetInput| async move { get(&context, input).await },
        )
        .positional(&[Positional::Field("what"), Positional::Target, Positional::Field("name")]),
        Tool::page(
            "is",
            "Whether an element is visible, enabled or checked, as true or false.",
            |context: ToolContext, input: IsInput| async move {
                let target = element(input.element_ref, input.selector)?;
                let what = match input.state {
                    IsState::Visible => "visible",
                    IsState::Enabled => "enabled",
                    IsState::Checked => "checked",
                };
                read_in_frame(&context, &target, what, None).await
            },
        )
        .positional(&[Positional::Field("state"), Positional::Target]),
    ]
}

async fn get(context: &ToolContext, input: GetInput) -> Result<ReadValue> {
    let GetInput { what, element_ref, selector, name } = input;
    if name.is_some() && !matches!(what, GetWhat::Attr | GetWhat::Styles) {
        return Err(refused("name", "goes with attr or styles"));
    }
    let what = match what {
        GetWhat::Title | GetWhat::Url => {
            if let Some(field) =
                [("ref", element_ref.is_some()), ("selector", selector.is_some())].iter().find_map(|(field, given)| given.then_some(*field))
            {
                return Err(refused(field, "the page's title and url need no element"));
            }
            let (url, title) = context.tab()?.status.get();
            return Ok(ReadValue { value: json!(if what == GetWhat::Url { url } else { title }) });
        }
        GetWhat::Box => {
            let located = locate(context, &element(element_ref, selector)?, false).await?;
            let (width, height) = (located.info.w, located.info.h);
            let value = json!({ "x": located.x - width / 2.0, "y": located.y - height / 2.0, "width": width, "height": height });
            return Ok(ReadValue { value });
        }
        GetWhat::Attr if name.as_deref().is_none_or(str::is_empty) => return Err(refused("name", "attr needs the attribute's name")),
        GetWhat::Text => "text",
        GetWhat::Html => "html",
        GetWhat::Value => "value",
        GetWhat::Attr => "attr",
        GetWhat::Count => "count",
        GetWhat::Styles => "styles",
    };
    read_in_frame(context, &element(element_ref, selector)?, what, name).await
}

/// The element a read is about: a ref or a selector, not both.
fn element(element_ref: Option<String>, selector: Option<String>) -> Result<ElementTarget> {
    match (&element_ref, &selector) {
        (Some(_), Some(_)) => Err(refused("selector", "give a ref or a selector, not both")),
        (None, None) => Err(refused("ref", "give the element: a ref (from snapshot) or a selector")),
        _ => Ok(ElementTarget { element_ref, selector, ..ElementTarget::default() }),
    }
}

/// Runs the read in the frame the element is in (a ref knows its frame; a selector is
/// looked for in the main frame).
async fn read_in_frame(context: &ToolContext, target: &ElementTarget, what: &'static str, name: Option<String>) -> Result<ReadValue> {
    let (frame, address) = match (&target.element_ref, &target.selector) {
        (Some(element_ref), _) => {
            let number = parse_ref(element_ref).map_err(|error| error.with_details(json!({ "field": "ref" })))?;
            let frame = context.tab()?.refs.lock().expect("ref table poisoned").frame_of.get(&number).cloned().unwrap_or_default();
            (frame, ElementAddress::by_ref(number))
        }
        (None, selector) => (Vec::new(), ElementAddress { element_ref: None, selector: selector.clone() }),
    };
    let answer = agent(context, &frame, &ElementRead { target: address, what, name }).await?;
    Ok(ReadValue { value: answer.value })
}

/// `E_BAD_REQUEST` naming the field.
fn refused(field: &str, message: &str) -> Error {
    Error::bad_request(format!("{field}: {message}")).with_details(json!({ "field": field }))
}
