//! What the CLI prints. On a terminal and on a pipe alike (a coding agent's shell tool
//! reads a pipe) it prints compact text: a snapshot's or a request list's text form, `ok`
//! for an action (and a line for each thing it caused), a short line per field or listed
//! item. `--json` prints the daemon's JSON, for scripts.

use std::path::Path;

use base64::Engine as _;
use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::tools::{Attachment, ToolDescription};

/// What the CLI prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reader {
    /// Compact text, with the CLI's defaults (text forms), for people and models.
    Text,
    /// JSON (`--json`), with the schema's own defaults: even a text form the call asked for
    /// comes as JSON.
    Json,
}

impl Reader {
    /// `--json` or not; where stdout goes makes no difference.
    pub(crate) fn of(json_flag: bool) -> Reader {
        if json_flag {
            Reader::Json
        } else {
            Reader::Text
        }
    }

    /// Prints a daemon answer that is not a tool's result (a session, a list).
    pub(crate) fn answer(self, answer: &Value) -> String {
        match self {
            Reader::Text => human(answer),
            Reader::Json => pretty(answer),
        }
    }

    /// Prints a tool's result (with `tab` and `seq` beside its fields), writing the file it
    /// holds to `output` when one was given.
    pub(crate) fn tool_result(self, tool: &ToolDescription, mut result: Value, output: Option<&Path>) -> Result<String> {
        // Only a tool whose result holds a file has `-o`.
        let mut written = None;
        if let (Some(attachment), Some(file)) = (tool.presentation.attachment, output) {
            written = Some(save_attachment(attachment, &mut result, file)?);
        }
        let text_form = tool.presentation.text_field.filter(|_| result["format"] == "text");
        if let Some(field) = text_form.filter(|_| self == Reader::Text) {
            return Ok(result[field].as_str().unwrap_or("").trim_end().to_string());
        }
        if result.get("ok") == Some(&Value::Bool(false)) {
            let tool = tool.name;
            return Err(Error::new(crate::error::ErrorCode::AssertionFailed, format!("{tool} did not pass:\n{}", pretty(&result))));
        }
        if self == Reader::Json {
            return Ok(pretty(&result));
        }
        // A result that is a file written with -o (a screenshot, a PDF): where it is, and
        // the picture's size.
        if let (Some(written), Some(Attachment::Result)) = (written, tool.presentation.attachment) {
            let size = match (&result["width"], &result["height"]) {
                (Value::Number(width), Value::Number(height)) => format!(" ({width}x{height})"),
                _ => String::new(),
            };
            return Ok(format!("{written}{size}"));
        }
        let mut note = None;
        if let Some(holder) = tool.presentation.attachment.and_then(|attachment| attachment.holder(&mut result)) {
            if holder.as_object_mut().and_then(|object| object.remove("data")).is_some() {
                note = Some("(not shown: -o FILE writes it, --json prints it as base64)");
            }
        }
        Ok(human(&result) + note.map(|note| format!("\n{note}")).as_deref().unwrap_or(""))
    }
}

/// JSON as the CLI has always printed it.
pub(crate) fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// Writes the file a result holds to `file`: its base64 `data`, or a copy of the file its
/// `path` names. The result then names `file` (absolute) as `output` instead of holding the
/// bytes. Answers that name.
fn save_attachment(attachment: Attachment, result: &mut Value, file: &Path) -> Result<String> {
    let cannot = |error: std::io::Error| Error::bad_request(format!("cannot write {}: {error}", file.display()));
    let Some(holder) = attachment.holder(result) else {
        return Err(Error::internal(format!("the answer holds no file to write to {}", file.display())));
    };
    match (holder.get("data").and_then(Value::as_str), holder.get("path").and_then(Value::as_str)) {
        (Some(data), _) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data)
                .map_err(|error| Error::internal(format!("the answer's data is not base64: {error}")))?;
            std::fs::write(file, bytes).map_err(cannot)?;
        }
        (None, Some(path)) => {
            std::fs::copy(path, file).map_err(cannot)?;
        }
        (None, None) => return Err(Error::internal(format!("the answer holds no file to write to {}", file.display()))),
    }
    let written = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf()).display().to_string();
    if let Some(object) = holder.as_object_mut() {
        object.remove("data");
        object.insert("output".into(), json!(written));
    }
    Ok(written)
}

/// Fields a person does not need to see: where the call stood in the log, how the page
/// settled.
const QUIET_FIELDS: [&str; 5] = ["tool", "seq", "settle", "cursor", "older_omitted"];

/// Whether a field holds the value that says nothing happened out of the ordinary (a read
/// that was not cut, one element matched, a page that did change, a list with no more):
/// then it is left out.
fn unremarkable(key: &str, value: &Value) -> bool {
    matches!((key, value), ("truncated", Value::Bool(false)) | ("navigated", Value::Bool(true)) | ("has_more", Value::Bool(false)))
        || (key == "matches" && value == 1)
}

/// A result as a person reads it.
fn human(result: &Value) -> String {
    let Some(object) = result.as_object() else { return scalar(result) };
    // An action: `ok`, then what it caused.
    if object.get("ok") == Some(&Value::Bool(true)) && object.contains_key("action") {
        let mut lines = vec!["ok".to_string()];
        caused(result, &mut lines);
        return lines.join("\n");
    }
    // A page loaded (navigate, history): its title, then `200 <url>`, then anything else.
    let loaded = object.get("navigation").is_some_and(Value::is_object) && object.get("title").is_some_and(Value::is_string);
    let mut lines = Vec::new();
    if loaded {
        lines.push(scalar(&object["title"]));
        lines.push(navigation_line(&object["navigation"]));
    }
    let shown: Vec<(&String, &Value)> = object
        .iter()
        .filter(|(key, value)| !QUIET_FIELDS.contains(&key.as_str()) && !value.is_null() && key.as_str() != "tab")
        .filter(|(key, value)| !unremarkable(key, value))
        .filter(|(key, _)| !loaded || !matches!(key.as_str(), "title" | "navigation" | "url"))
        .collect();
    if loaded {
        return lines
            .into_iter()
            .chain(shown.iter().map(|(key, value)| format!("{key}: {}", scalar(value))))
            .collect::<Vec<_>>()
            .join("\n");
    }
    // A result of one field (evaluate's value): the value alone.
    if let [(_, value)] = shown.as_slice() {
        if !value.is_array() {
            return scalar(value);
        }
    }
    for (key, value) in shown {
        match value {
            Value::Array(items) if items.is_empty() => lines.push(format!("{key}: none")),
            Value::Array(items) if items.iter().any(Value::is_object) => {
                lines.push(format!("{key}: {}", items.len()));
                lines.extend(items.iter().map(|item| format!("  {}", item_line(item))));
            }
            Value::Array(items) => lines.push(format!("{key}: {}", items.iter().map(scalar).collect::<Vec<_>>().join(", "))),
            Value::Object(_) if key == "navigation" => lines.push(format!("navigation: {}", navigation_line(value))),
            Value::Object(_) if key == "target" => lines.push(format!("target: {}", item_line(value))),
            _ => lines.push(format!("{key}: {}", scalar(value))),
        }
    }
    lines.join("\n")
}

/// What an action caused, a line each: a navigation, downloads, popups, dialogs.
fn caused(result: &Value, lines: &mut Vec<String>) {
    if result["navigated"] == true {
        lines.push(format!("navigated: {}", navigation_line(&result["navigation"])));
    }
    for download in result["downloads"].as_array().into_iter().flatten() {
        lines.push(format!("download: {} ({})", scalar(&download["suggested_filename"]), scalar(&download["download_id"])));
    }
    for popup in result["popups"].as_array().into_iter().flatten() {
        lines.push(format!("popup: tab {} {}", scalar(&popup["tab"]), scalar(&popup["url"])));
    }
    for dialog in result["dialogs"].as_array().into_iter().flatten() {
        lines.push(format!("dialog: {} {} ({})", scalar(&dialog["dialog_type"]), dialog["message"], scalar(&dialog["action"])));
    }
}

/// `200 https://example.com/`, or the network error that ended it.
fn navigation_line(navigation: &Value) -> String {
    let url = scalar(&navigation["url"]);
    match (&navigation["http_status"], &navigation["net_error"]) {
        (_, Value::String(error)) => format!("{url} failed: {error}"),
        (Value::Number(status), _) => format!("{status} {url}"),
        _ => url,
    }
}

/// The fields that name a listed item and say what it is, in the order a line shows them:
/// an item that has some shows only these (a session's directories and clocks stay out).
const ITEM_FIELDS: [&str; 18] = [
    "tab",
    "session_id",
    "download_id",
    "rule_id",
    "id",
    "ref",
    "role",
    "name",
    "type",
    "level",
    "status",
    "title",
    "text",
    "suggested_filename",
    "saved_path",
    "url",
    "selected",
    "error",
];

/// One listed item on one line: its naming values (a flag by its name when set).
fn item_line(item: &Value) -> String {
    let Some(object) = item.as_object() else { return scalar(item) };
    let naming: Vec<(&String, &Value)> = ITEM_FIELDS.iter().filter_map(|field| object.get_key_value(*field)).collect();
    let fields: Vec<(&String, &Value)> = if naming.is_empty() { object.iter().collect() } else { naming };
    let mut words = Vec::new();
    for (key, value) in fields {
        match value {
            Value::Bool(true) => words.push(key.clone()),
            Value::String(text) if !text.is_empty() => words.push(if text.contains(' ') { format!("{text:?}") } else { text.clone() }),
            Value::Number(number) => words.push(format!("{key}={number}")),
            _ => {}
        }
    }
    words.join("  ")
}

/// A value on one line: strings as they are, anything else as compact JSON.
fn scalar(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_action_is_ok_and_what_it_caused() {
        let clicked = json!({
            "action": "click", "ok": true, "navigated": true, "tab": "t1", "seq": 4,
            "navigation": { "http_status": 200, "net_error": null, "url": "http://x.test/next" },
            "downloads": [{ "suggested_filename": "a.txt", "download_id": "dl-1" }],
            "target": { "ref": "e2", "role": "link", "name": "Next" }
        });
        assert_eq!(human(&clicked), "ok\nnavigated: 200 http://x.test/next\ndownload: a.txt (dl-1)");
        assert_eq!(human(&json!({ "action": "fill", "ok": true, "navigated": false })), "ok");
    }

    #[test]
    fn other_results_are_a_line_per_field_or_item() {
        assert_eq!(human(&json!({ "value": "actions", "tab": "t1", "seq": 3 })), "actions");
        assert_eq!(human(&json!({ "value": { "a": 1 }, "tab": "t1", "seq": 3 })), "{\"a\":1}");
        let tabs = json!({ "selected": "t1", "tabs": [{ "tab": "t1", "title": "Hello page", "url": "http://x.test/", "selected": true, "opener": null }] });
        assert_eq!(human(&tabs), "selected: t1\ntabs: 1\n  t1  \"Hello page\"  http://x.test/  selected");
    }

    #[test]
    fn a_page_load_is_its_title_and_status_and_a_plain_read_its_value() {
        let loaded = json!({
            "url": "http://x.test/a", "title": "Checkout", "navigated": true, "tab": "t1", "seq": 2,
            "navigation": { "requested_url": "http://x.test/a", "url": "http://x.test/a", "http_status": 200, "net_error": null, "settle": {} }
        });
        assert_eq!(human(&loaded), "Checkout\n200 http://x.test/a");
        assert_eq!(human(&json!({ "matches": 1, "truncated": false, "value": "Checkout", "tab": "t1" })), "Checkout");
        assert_eq!(human(&json!({ "matches": 3, "truncated": true, "value": "Checkout" })), "matches: 3\ntruncated: true\nvalue: Checkout");
        assert_eq!(human(&json!({ "entries": [], "has_more": false, "tab": "t1" })), "entries: none");
    }
}
