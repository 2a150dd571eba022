//! How a tool shows on the surfaces other than HTTP (MCP and the CLI): its defaults there,
//! positional arguments, attachments, local paths and lean answers, so that neither needs
//! a special case per tool name.

use serde_json::{json, Value};

use super::Lean;

/// How the surfaces other than HTTP show a tool, so that MCP and the CLI need no special
/// case per tool name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Presentation {
    /// Over MCP these input fields default to these values (JSON text, or a plain string)
    /// when the call gives none of them, and the schema says so: snapshot's `format` =
    /// `text`, which models read best; screenshot's size cap.
    pub mcp_defaults: &'static [(&'static str, &'static str)],
    /// The same for the CLI's text output (on a terminal or a pipe): snapshot's and
    /// requests' `format` = `text`, which people and models read best. With `--json` the
    /// CLI sends the schema's own defaults, as scripts expect.
    pub cli_defaults: &'static [(&'static str, &'static str)],
    /// The command line's positional arguments, in order (`malo fill e3 hello`): the CLI
    /// parses them, its help and completions name them and `malo skill` shows them. Each
    /// is a flag too (`--ref`, `--text`).
    pub positional: &'static [Positional],
    /// A shorter name of the CLI's subcommand (`eval` for `evaluate`), beside the tool's
    /// own name written with hyphens (`wait-for`).
    pub cli_alias: Option<&'static str>,
    /// When the result's `format` is `text`, this field is the answer as people and models
    /// read it: MCP and the CLI show it as is.
    pub text_field: Option<&'static str>,
    /// Where the result holds a file, as base64 `data` (with `mime_type`) or as the `path`
    /// it was written to: MCP answers an image as image content, with the rest of the
    /// result as text; the CLI's `-o FILE` writes (or copies) it to FILE.
    pub attachment: Option<Attachment>,
    /// The call ends the session it addresses: MCP forgets it as its default session.
    pub ends_session: bool,
    /// Input fields naming files the daemon reads where the caller is: the CLI makes a
    /// relative one absolute against the shell's directory before sending it.
    pub local_paths: &'static [LocalPath],
    /// A list of a tab's log: over MCP and the CLI it answers the tab's current page
    /// (`since` = `navigation`, see `since.rs`) when the call gives none of `since`, `after`
    /// and `id`; over HTTP the whole log, as seed 003 says.
    pub current_page: bool,
    /// The lean form MCP shows of the tool's answers (see `lean.rs`), if it has one.
    pub mcp_lean: Option<Lean>,
}

/// An input field holding a path (or an array of paths) of a file the tool reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalPath {
    /// The field.
    pub field: &'static str,
    /// Only when this other field has this value (`storage_state` reads `path` on
    /// `import`; on `export` it is a file name in the session's artifacts/).
    pub when: Option<(&'static str, &'static str)>,
}

/// A positional argument of a tool on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Positional {
    /// The input field of this name; an array field takes every remaining word.
    Field(&'static str),
    /// The element an action is aimed at: a ref (`e12` or `@e12`) sets `ref`, anything
    /// else is a CSS `selector`.
    Target,
}

/// Where a result holds a file (`mime_type`, base64 `data` or a `path`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attachment {
    /// In this field of the result (observe's `screenshot`).
    Field(&'static str),
    /// In the result itself (screenshot, pdf).
    Result,
}

impl Attachment {
    /// The object of `result` that holds the file (`mime_type`, `data` or `path`), if any.
    pub fn holder<'result>(&self, result: &'result mut Value) -> Option<&'result mut Value> {
        let holder = match self {
            Attachment::Field(field) => result.get_mut(*field)?,
            Attachment::Result => result,
        };
        holder.is_object().then_some(holder)
    }
}

/// An MCP or CLI default as a JSON value: JSON text (`1568`) or else the plain string (`text`).
pub fn default_value(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| json!(text))
}

/// Writes a surface's defaults into a tool's input-schema `properties`: each field's
/// `default`, and its description ends saying so (`Over MCP the default is `text`.`).
pub fn declare_defaults(properties: &mut Value, defaults: &[(&str, &str)], surface: &str) {
    for (field, value) in defaults {
        let said = properties[*field]["description"].as_str().unwrap_or("").to_string();
        properties[*field]["default"] = default_value(value);
        properties[*field]["description"] = json!(format!("{said} {surface} the default is `{value}`."));
    }
}

/// Gives a call's `input` a surface's defaults (`mcp_defaults`, `cli_defaults`) when it
/// sets none of their fields: a call that sets one chose for itself.
pub fn apply_defaults(defaults: &[(&str, &str)], input: &mut serde_json::Map<String, Value>) {
    if defaults.iter().any(|(field, _)| input.contains_key(*field)) {
        return;
    }
    for (field, value) in defaults {
        input.insert(field.to_string(), default_value(value));
    }
}

/// The default of a list of the current page over MCP and the CLI (see
/// [`Presentation::current_page`]), for the schema and the call.
pub const CURRENT_PAGE_DEFAULT: (&str, &str) = ("since", "navigation");

/// Gives a call of a list of the current page `since: "navigation"` when it gives none of
/// `since`, `after` and `id` (a cursor, or a record, names its own part of the log).
pub fn apply_current_page(presentation: &Presentation, input: &mut serde_json::Map<String, Value>) {
    if presentation.current_page && !["since", "after", "id"].iter().any(|field| input.contains_key(*field)) {
        input.insert(CURRENT_PAGE_DEFAULT.0.to_string(), json!(CURRENT_PAGE_DEFAULT.1));
    }
}
