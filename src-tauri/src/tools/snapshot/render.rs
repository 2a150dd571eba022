//! The text of a snapshot as people and models read it: a line per item of content (page
//! text, `e12 button "Save"` for an element, `table (3 rows x 2 cols):` where a structure
//! starts), headings marked `#`, `##`, ...; and the lines of `changes`.

use std::fmt::Write as _;

use serde_json::Value;

use super::capture::{Capture, Item, Outline};
use super::{Covered, SnapshotChanges};

/// The first lines of a snapshot as text: the page, its viewport, the scope, and what
/// `max_items` and `max_chars` left out.
pub(super) fn header(captured: &Capture, covered: &Covered) -> String {
    let mut out = String::new();
    let viewport = &captured.viewport;
    let _ = writeln!(out, "page: {} <{}>", captured.title, captured.url);
    let _ = writeln!(
        out,
        "viewport {}x{} scroll {},{} of {}x{}",
        viewport["width"],
        viewport["height"],
        viewport["scroll_x"],
        viewport["scroll_y"],
        viewport["document_width"],
        viewport["document_height"]
    );
    if let Some(scope) = &captured.scope {
        let name = scope["name"].as_str().map(|name| format!(" {name:?}")).unwrap_or_default();
        let frame = scope["frame"].as_str().map(|frame| format!(" @{frame}")).unwrap_or_default();
        let _ =
            writeln!(out, "scope: {} {}{name}{frame}", scope["ref"].as_str().unwrap_or("?"), scope["role"].as_str().unwrap_or("element"));
    }
    if !covered.omitted.is_empty() {
        let cut: Vec<String> = covered
            .omitted
            .iter()
            .map(|(list, total)| format!("{} (of {total})", if list == "nodes" { "elements" } else { list }))
            .collect();
        let _ = writeln!(out, "lists cut at max_items: {}", cut.join(", "));
    }
    if covered.text_truncated {
        let _ = writeln!(out, "text cut at max_chars (of {} characters)", covered.text_length);
    }
    out
}

/// The line of an item, if it has one (a heading's mark has none: the heading's first line
/// carries its level).
pub(super) fn item_line(item: &Item, nodes: &[Value]) -> Option<String> {
    let level = |heading: &Option<u8>| heading.map(|level| format!("{} ", "#".repeat(level as usize))).unwrap_or_default();
    match item {
        Item::Text { text, heading } => Some(format!("{}{text}", level(heading))),
        Item::Element { node, heading } => Some(format!("{}{}", level(heading), node_line(&nodes[*node]))),
        Item::Mark { list, entry } => mark_line(*list, entry),
    }
}

/// The line where a structure starts: `navigation "Main":`, `form "login" post /login:`.
fn mark_line(list: Outline, entry: &Value) -> Option<String> {
    let text = |key: &str| entry[key].as_str().filter(|text| !text.is_empty());
    let quoted = |key: &str| text(key).map(|text| format!(" {text:?}")).unwrap_or_default();
    let frame = text("frame").filter(|_| list != Outline::Frames).map(|frame| format!(" @{frame}")).unwrap_or_default();
    let element = text("ref").map(|element| format!("{element} ")).unwrap_or_default();
    Some(
        element
            + &match list {
                Outline::Headings => return None,
                Outline::Landmarks => format!("{}{}{frame}:", text("role").unwrap_or("region"), quoted("name")),
                Outline::Forms => {
                    let action = text("action").map(|action| format!(" {action}")).unwrap_or_default();
                    format!("form{} {}{action}{frame}:", quoted("name"), text("method").unwrap_or("get"))
                }
                Outline::Tables => format!("table{} ({} rows x {} cols){frame}:", quoted("caption"), entry["rows"], entry["columns"]),
                Outline::Dialogs => {
                    let modal = if entry["modal"] == Value::Bool(true) { " (modal)" } else { "" };
                    format!("{}{}{modal}{frame}:", text("role").unwrap_or("dialog"), quoted("name"))
                }
                Outline::Live => format!("{}{frame}:", text("role").unwrap_or("live")),
                Outline::Frames => {
                    let state = match (text("error"), entry["skipped"] == Value::Bool(true)) {
                        (Some(error), _) => format!(" ({error})"),
                        (None, true) => " (not entered: too many or too deep)".to_string(),
                        (None, false) => String::new(),
                    };
                    let name = text("title").or(text("name")).unwrap_or("");
                    let url = text("url").or(text("src")).unwrap_or("");
                    format!("frame {} {name:?} <{url}>{state}:", text("frame").unwrap_or(""))
                }
            },
    )
}

/// One line for an element: `e12 button "Save" [disabled]`.
pub(super) fn node_line(node: &Value) -> String {
    let mut line = format!("{} {}", node["ref"].as_str().unwrap_or("?"), node["role"].as_str().unwrap_or("element"));
    if let Some(name) = node["name"].as_str().filter(|name| !name.is_empty()) {
        let _ = write!(line, " {name:?}");
    }
    let flag = |line: &mut String, key: &str, label: &str| {
        if node[key] == Value::Bool(true) {
            line.push_str(" [");
            line.push_str(label);
            line.push(']');
        }
    };
    match node["checked"] {
        Value::Bool(true) => line.push_str(" [checked]"),
        Value::Bool(false) => line.push_str(" [unchecked]"),
        _ => {}
    }
    flag(&mut line, "disabled", "disabled");
    flag(&mut line, "required", "required");
    flag(&mut line, "selected", "selected");
    flag(&mut line, "focused", "focused");
    match node["expanded"] {
        Value::Bool(true) => line.push_str(" [expanded]"),
        Value::Bool(false) => line.push_str(" [collapsed]"),
        _ => {}
    }
    if let Some(value) = node["value"].as_str() {
        if node["sensitive"] == Value::Bool(true) {
            line.push_str(" value=[redacted] (sensitive)");
        } else if !value.is_empty() || matches!(node["role"].as_str(), Some("textbox" | "searchbox")) {
            let _ = write!(line, " value={value:?}");
        }
    }
    if let Some(placeholder) = node["placeholder"].as_str() {
        let _ = write!(line, " placeholder={placeholder:?}");
    }
    if let Some(options) = node["options"].as_array() {
        let labels: Vec<&str> = options.iter().take(8).filter_map(|option| option["label"].as_str()).collect();
        let more = if options.len() > 8 { format!("|…{} more", options.len() - 8) } else { String::new() };
        let _ = write!(line, " options={}{more}", labels.join("|"));
    }
    if let Some(href) = node["href"].as_str().filter(|href| !href.is_empty()) {
        let _ = write!(line, " -> {href}");
    }
    if let Some(frame) = node["frame"].as_str() {
        let _ = write!(line, " @{frame}");
    }
    line
}

/// The lines of `changes`: `+` added, `~` changed, `-` removed elements, then the text.
pub(super) fn changes_text(diff: &SnapshotChanges) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "changes since the previous snapshot: <{}>", diff.url);
    if diff.url_changed {
        out.push_str("url changed\n");
    }
    if diff.title_changed {
        let _ = writeln!(out, "title: {:?}", diff.title);
    }
    for node in &diff.added {
        let _ = writeln!(out, "+ {}", node_line(node));
    }
    for node in &diff.changed {
        let _ = writeln!(out, "~ {}", node_line(node));
    }
    for removed in &diff.removed {
        let _ = writeln!(out, "- {removed}");
    }
    if let Some(text) = &diff.text {
        let _ = writeln!(out, "text now:\n{text}");
    }
    if out.lines().count() == 1 {
        out.push_str("no changes\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn lines_are_compact_and_redact_secrets() {
        let password =
            json!({"ref": "e3", "role": "textbox", "name": "Password", "value": "[redacted]", "sensitive": true, "required": true});
        assert_eq!(node_line(&password), "e3 textbox \"Password\" [required] value=[redacted] (sensitive)");
        let link = json!({"ref": "e1", "role": "link", "name": "Home", "href": "/"});
        assert_eq!(node_line(&link), "e1 link \"Home\" -> /");
        let check = json!({"ref": "e2", "role": "checkbox", "name": "Agree", "checked": false, "frame": "f1"});
        assert_eq!(node_line(&check), "e2 checkbox \"Agree\" [unchecked] @f1");
    }

    #[test]
    fn items_read_as_lines_with_headings_and_structures_marked() {
        let nodes = [json!({"ref": "e4", "role": "link", "name": "Docs", "href": "/docs"})];
        let line = |item: Item| item_line(&item, &nodes);
        assert_eq!(line(Item::Text { text: "Welcome".into(), heading: Some(2) }).as_deref(), Some("## Welcome"));
        assert_eq!(line(Item::Element { node: 0, heading: Some(1) }).as_deref(), Some("# e4 link \"Docs\" -> /docs"));
        assert_eq!(line(Item::Mark { list: Outline::Headings, entry: json!({"level": 2, "text": "Welcome"}) }), None);
        let mark = |list, entry| line(Item::Mark { list, entry }).unwrap();
        assert_eq!(mark(Outline::Landmarks, json!({"role": "navigation", "name": "Main"})), "navigation \"Main\":");
        assert_eq!(
            mark(Outline::Forms, json!({"name": "login", "method": "post", "action": "/login", "fields": ["e1"]})),
            "form \"login\" post /login:"
        );
        assert_eq!(
            mark(Outline::Tables, json!({"caption": "Prices", "rows": 3, "columns": 2, "frame": "f1"})),
            "table \"Prices\" (3 rows x 2 cols) @f1:"
        );
        assert_eq!(mark(Outline::Dialogs, json!({"role": "dialog", "name": "Confirm", "modal": true})), "dialog \"Confirm\" (modal):");
        assert_eq!(mark(Outline::Live, json!({"role": "status", "text": "idle"})), "status:");
        assert_eq!(
            mark(Outline::Frames, json!({"frame": "f1.3", "name": "cvc", "src": "/cvc", "url": "https://pay.example/cvc", "title": "CVC"})),
            "frame f1.3 \"CVC\" <https://pay.example/cvc>:"
        );
        assert_eq!(
            mark(Outline::Frames, json!({"frame": "f2", "name": "ads", "src": "/ads", "error": "E_TIMEOUT"})),
            "frame f2 \"ads\" </ads> (E_TIMEOUT):"
        );
    }
}
