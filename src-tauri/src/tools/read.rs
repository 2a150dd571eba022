//! `extract` (targeted reads of text, HTML, attributes, values) and `evaluate` (a
//! JavaScript expression in the page's own world).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::limits::EXTRACT_MAX_CHARS;
use super::page_agent::{agent, read_agent_answer};
use super::{Positional, Tool, ToolContext};
use crate::engine::agent::{AgentOp, Extract};
use crate::engine::TabRequest;
use crate::error::Error;

/// What `extract` reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ExtractMode {
    /// Rendered text (default).
    #[default]
    Text,
    /// Outer HTML.
    Html,
    /// One attribute (`attribute`).
    Attribute,
    /// A form field's value (passwords are `[redacted]`).
    Value,
}

/// Input of `extract`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExtractInput {
    /// CSS selector (` >>> ` pierces open shadow roots).
    selector: String,
    /// `text` (default), `html`, `attribute` or `value`.
    #[serde(default)]
    mode: ExtractMode,
    /// The attribute name, for mode `attribute`.
    #[serde(default)]
    attribute: Option<String>,
    /// Characters per value at most (default 4000, max 200000).
    #[serde(default)]
    #[schemars(range(max = EXTRACT_MAX_CHARS.max))]
    max_chars: Option<usize>,
    /// Every match (up to 200) instead of the first.
    #[serde(default)]
    all: bool,
}

/// Input of `evaluate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EvaluateInput {
    /// A JavaScript expression (or a function body with `return`), run in the page's own
    /// world; promises are awaited. Its value must be JSON-representable.
    #[schemars(length(min = 1))]
    expression: String,
}

/// Output of `extract`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub(crate) struct ExtractOutput {
    /// How many elements match the selector.
    matches: u64,
    /// Whether a value was cut at `max_chars`.
    truncated: bool,
    /// The first match's value (without `all`); absent when it has none (an attribute it
    /// lacks, a value of an element that takes none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value: Option<String>,
    /// With `all`: every match's value (up to 200), null where a match has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    values: Option<Vec<Option<String>>>,
}

/// Output of `evaluate`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct EvaluateOutput {
    /// The expression's value, as JSON (whatever the page's script returns).
    value: Value,
}

pub(super) fn tools() -> Vec<Tool> {
    vec![
        Tool::page(
            "extract",
            "Read the text, HTML, an attribute or the value of the element(s) matching a selector.",
            |context: ToolContext, input: ExtractInput| async move {
                let max_chars = EXTRACT_MAX_CHARS.read(input.max_chars, "max_chars")?;
                if input.mode == ExtractMode::Attribute && input.attribute.is_none() {
                    return Err(Error::bad_request("mode attribute needs `attribute`"));
                }
                let mode = match input.mode {
                    ExtractMode::Text => "text",
                    ExtractMode::Html => "html",
                    ExtractMode::Attribute => "attribute",
                    ExtractMode::Value => "value",
                };
                let request = Extract { selector: input.selector, mode, attribute: input.attribute, max_chars, all: input.all };
                let answer = agent(&context, &[], &request).await?;
                read_agent_answer::<ExtractOutput>(AgentOp::Extract, answer)
            },
        )
        .positional(&[Positional::Field("selector")]),
        Tool::page(
            "evaluate",
            "Evaluate a JavaScript expression in the page's own world and return its JSON value (promises are awaited).",
            |context: ToolContext, input: EvaluateInput| async move {
                if input.expression.trim().is_empty() {
                    return Err(Error::bad_request("expression is empty"));
                }
                let value: Value = context.ask(TabRequest::EvaluatePage { expression: input.expression }).await?;
                Ok(EvaluateOutput { value })
            },
        )
        .positional(&[Positional::Field("expression")])
        .cli_alias("eval"),
    ]
}
