//! `snapshot`: the agent's main way to see a page. Visible text, title, viewport and
//! scroll; headings, landmarks, forms, tables, frames, dialogs, live regions; every
//! visible interactive element with a ref (`e12`), role, name, state, a stable CSS
//! selector and its box. Frames (cross-origin too) and open shadow roots are included.
//! As JSON, or as compact text (one line per element) for model context; optionally only
//! the changes since the previous snapshot.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::limits::{SNAPSHOT_MAX_CHARS, SNAPSHOT_MAX_ITEMS};
use super::page_agent::agent;
use super::{Presentation, Tool, ToolContext};
use crate::engine::agent::Snapshot;
use crate::error::{Error, Result};
use crate::state::PreviousSnapshot;

/// Frames nested deeper than this are listed but not entered.
const MAX_FRAME_DEPTH: usize = 3;
/// At most this many frames are entered.
const MAX_FRAMES: usize = 20;

/// Output format.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SnapshotFormat {
    /// Structured JSON (boxes, selectors, every field).
    #[default]
    Json,
    /// Compact text for model context: one line per element.
    Text,
}

/// Input of `snapshot`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SnapshotInput {
    /// `json` (default) or `text`.
    #[serde(default)]
    pub(crate) format: SnapshotFormat,
    /// Characters of visible page text to include (default 4000, max 200000; 0 = none).
    #[serde(default)]
    #[schemars(range(max = SNAPSHOT_MAX_CHARS.max))]
    pub(crate) max_chars: Option<usize>,
    /// Interactive elements to include at most (default 500, max 5000).
    #[serde(default)]
    #[schemars(range(min = 1, max = SNAPSHOT_MAX_ITEMS.max))]
    pub(crate) max_items: Option<usize>,
    /// Only what changed since this session's previous snapshot (added, removed and
    /// changed elements; text and title when they changed).
    #[serde(default)]
    pub(crate) changes: bool,
}

/// Output of `snapshot`, one shape per `format` and `changes`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum SnapshotOutput {
    /// JSON: the page description the page agent builds over every frame (url, title,
    /// viewport, nodes, headings, landmarks, forms, tables, frames, dialogs, live, text,
    /// counts; see docs/API.md), with `interactive_count`.
    Page(Value),
    /// Text: the page as lines, one per interactive element.
    Text(SnapshotText),
    /// JSON, `changes`: what changed since the previous snapshot.
    Changes(SnapshotChanges),
    /// Text, `changes`: the changes as lines.
    ChangesText(SnapshotChangesText),
}

/// A snapshot as text.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct SnapshotText {
    /// `text`.
    format: &'static str,
    /// The page's URL.
    url: String,
    /// Its title.
    title: String,
    /// Interactive elements listed.
    interactive_count: usize,
    /// Whether any list was cut at `max_items`.
    items_truncated: bool,
    /// Each list that was cut, with the number of entries it had.
    omitted: BTreeMap<String, u64>,
    /// Whether the page text was cut at `max_chars`.
    text_truncated: bool,
    /// The page as people and models read it.
    text: String,
}

/// What changed since the previous snapshot of the tab.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct SnapshotChanges {
    /// Always true.
    changes: bool,
    /// The page's URL.
    url: String,
    /// Its title.
    title: String,
    /// Whether the URL changed.
    url_changed: bool,
    /// Whether the title changed.
    title_changed: bool,
    /// Elements that are new (as the page agent describes elements).
    added: Vec<Value>,
    /// Elements whose line changed (state, name, value, ...).
    changed: Vec<Value>,
    /// Refs of elements that are gone.
    removed: Vec<String>,
    /// Whether the visible text changed.
    text_changed: bool,
    /// The visible text, when it changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
}

/// The changes since the previous snapshot, as text.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct SnapshotChangesText {
    /// `text`.
    format: &'static str,
    /// The page's URL.
    url: String,
    /// Its title.
    title: String,
    /// The changes as lines (`+` added, `~` changed, `-` removed).
    text: String,
}

pub(super) fn tool() -> Tool {
    Tool::page(
        "snapshot",
        "See the page: title, URL, viewport, headings, landmarks, forms, tables, frames, dialogs, live regions, visible text, and every visible interactive element with a ref (e.g. e12) usable by all actions. format=text gives one compact line per element; changes=true returns only what changed since the previous snapshot.",
        |context: ToolContext, input: SnapshotInput| async move {
            let max_chars = input.max_chars.unwrap_or(SNAPSHOT_MAX_CHARS.default);
            let max_items = input.max_items.unwrap_or(SNAPSHOT_MAX_ITEMS.default);
            if max_chars > SNAPSHOT_MAX_CHARS.max || !(1..=SNAPSHOT_MAX_ITEMS.max).contains(&max_items) {
                return Err(Error::bad_request(format!(
                    "max_chars must be at most {} and max_items between 1 and {}",
                    SNAPSHOT_MAX_CHARS.max, SNAPSHOT_MAX_ITEMS.max
                )));
            }
            let page = capture(&context, max_chars, max_items).await?;
            present(&context, page, input.format, input.changes)
        },
    )
    .presented(Presentation { mcp_defaults: &[("format", "text")], text_field: Some("text"), ..Presentation::default() })
}

/// Snapshots the main frame and every frame below it, into one page description with
/// frame-relative boxes turned into top-page coordinates.
pub(super) async fn capture(context: &ToolContext, max_chars: usize, max_items: usize) -> Result<Value> {
    let mut page = agent(context, &[], &Snapshot { max_chars, max_items }).await?;
    let mut totals = Totals::default();
    totals.add(&page["totals"]);
    // Frames share what is left of the text budget (each at most 2000 characters).
    let mut text_budget = max_chars.saturating_sub(page["text"].as_str().map_or(0, |text| text.chars().count()));
    let mut frame_of = HashMap::new();
    for node in page["nodes"].as_array().into_iter().flatten() {
        if let Some(number) = node["ref"].as_u64() {
            frame_of.insert(number, Vec::new());
        }
    }
    // Breadth-first over frames: (path, offset of its content box in the top page).
    let mut queue: Vec<(Vec<u32>, f64, f64, Value)> = Vec::new();
    let mut frames_out = Vec::new();
    for frame in page["frames"].as_array().cloned().unwrap_or_default() {
        queue.push((vec![frame["frame"].as_u64().unwrap_or(0) as u32], 0.0, 0.0, frame));
    }
    let mut entered = 0;
    while let Some((path, parent_x, parent_y, frame)) = (!queue.is_empty()).then(|| queue.remove(0)) {
        let offset_x = parent_x + frame["x"].as_f64().unwrap_or(0.0);
        let offset_y = parent_y + frame["y"].as_f64().unwrap_or(0.0);
        let id = frame_label(&path);
        let mut description = json!({ "frame": id, "name": frame["name"], "src": frame["src"],
            "x": offset_x, "y": offset_y, "w": frame["w"], "h": frame["h"] });
        if entered >= MAX_FRAMES || path.len() > MAX_FRAME_DEPTH {
            description["skipped"] = json!(true);
            frames_out.push(description);
            continue;
        }
        entered += 1;
        let child_request = Snapshot { max_chars: text_budget.min(2000), max_items };
        match agent(context, &path, &child_request).await {
            Ok(child) => {
                totals.add(&child["totals"]);
                text_budget = text_budget.saturating_sub(child["text"].as_str().map_or(0, |text| text.chars().count()));
                description["url"] = child["url"].clone();
                description["title"] = child["title"].clone();
                description["text"] = child["text"].clone();
                for mut node in child["nodes"].as_array().cloned().unwrap_or_default() {
                    if let Some(number) = node["ref"].as_u64() {
                        frame_of.insert(number, path.clone());
                    }
                    node["x"] = json!(node["x"].as_f64().unwrap_or(0.0) + offset_x);
                    node["y"] = json!(node["y"].as_f64().unwrap_or(0.0) + offset_y);
                    node["frame"] = json!(id);
                    push(&mut page["nodes"], node);
                }
                for key in ["headings", "forms", "tables", "dialogs", "live"] {
                    for mut item in child[key].as_array().cloned().unwrap_or_default() {
                        item["frame"] = json!(id);
                        push(&mut page[key], item);
                    }
                }
                for grandchild in child["frames"].as_array().cloned().unwrap_or_default() {
                    let mut child_path = path.clone();
                    child_path.push(grandchild["frame"].as_u64().unwrap_or(0) as u32);
                    queue.push((child_path, offset_x, offset_y, grandchild));
                }
            }
            Err(error) => description["error"] = json!(error.code.as_str()),
        }
        frames_out.push(description);
    }
    page["frames"] = json!(frames_out);
    // One limit for every list, all frames together; `omitted` names each list that was cut
    // with the number of entries it had.
    let mut omitted = serde_json::Map::new();
    for key in LISTS {
        let shown = page[key].as_array().map_or(0, Vec::len);
        if let Some(list) = page[key].as_array_mut() {
            list.truncate(max_items);
        }
        let total = totals.of(key).max(shown);
        if total > page[key].as_array().map_or(0, Vec::len) {
            omitted.insert(key.to_string(), json!(total));
        }
    }
    page["items_truncated"] = json!(!omitted.is_empty());
    if !omitted.is_empty() {
        page["omitted"] = Value::Object(omitted);
    }
    // Refs as the API spells them.
    for node in page["nodes"].as_array_mut().into_iter().flatten() {
        if let Some(number) = node["ref"].as_u64() {
            node["ref"] = json!(format!("e{number}"));
        }
    }
    for form in page["forms"].as_array_mut().into_iter().flatten() {
        if let Some(fields) = form["fields"].as_array_mut() {
            for field in fields {
                if let Some(number) = field.as_u64() {
                    *field = json!(format!("e{number}"));
                }
            }
        }
    }
    if let Some(object) = page.as_object_mut() {
        object.remove("next_ref");
        object.remove("totals");
    }
    context.tab()?.refs.lock().expect("ref table poisoned").frame_of = frame_of;
    Ok(page)
}

/// The top-level lists of a snapshot, each capped at `max_items`.
const LISTS: [&str; 8] = ["nodes", "headings", "landmarks", "forms", "tables", "frames", "dialogs", "live"];

/// Entries each list had, over every frame (the agent counts what it did not keep).
#[derive(Default)]
struct Totals(HashMap<String, usize>);

impl Totals {
    fn add(&mut self, totals: &Value) {
        for (key, count) in totals.as_object().into_iter().flatten() {
            *self.0.entry(key.clone()).or_default() += count.as_u64().unwrap_or(0) as usize;
        }
    }

    fn of(&self, key: &str) -> usize {
        self.0.get(key).copied().unwrap_or(0)
    }
}

fn push(list: &mut Value, item: Value) {
    if let Some(items) = list.as_array_mut() {
        items.push(item);
    } else {
        *list = json!([item]);
    }
}

/// `[3, 1]` -> `f3.1`.
fn frame_label(path: &[u32]) -> String {
    let parts: Vec<String> = path.iter().map(u32::to_string).collect();
    format!("f{}", parts.join("."))
}

/// Shapes the output (JSON or text, whole or changes) and remembers this snapshot.
fn present(context: &ToolContext, mut page: Value, format: SnapshotFormat, changes: bool) -> Result<SnapshotOutput> {
    let nodes = page["nodes"].as_array().cloned().unwrap_or_default();
    let lines: Vec<(u64, String)> =
        nodes.iter().filter_map(|node| Some((node["ref"].as_str()?.trim_start_matches('e').parse().ok()?, node_line(node)))).collect();
    let current = PreviousSnapshot {
        url: page["url"].as_str().unwrap_or("").to_string(),
        title: page["title"].as_str().unwrap_or("").to_string(),
        text: page["text"].as_str().unwrap_or("").to_string(),
        lines: lines.clone(),
    };
    let previous = context.tab()?.refs.lock().expect("ref table poisoned").previous.replace(current.clone());
    let interactive_count = nodes.len();
    if changes {
        let previous = previous.unwrap_or_default();
        let diff = diff(&previous, &current, &nodes);
        return Ok(match format {
            SnapshotFormat::Json => SnapshotOutput::Changes(diff),
            SnapshotFormat::Text => {
                let text = render_changes(&diff);
                SnapshotOutput::ChangesText(SnapshotChangesText { format: "text", url: current.url, title: current.title, text })
            }
        });
    }
    Ok(match format {
        SnapshotFormat::Json => {
            page["interactive_count"] = json!(interactive_count);
            SnapshotOutput::Page(page)
        }
        SnapshotFormat::Text => SnapshotOutput::Text(SnapshotText {
            format: "text",
            url: current.url,
            title: current.title,
            interactive_count,
            items_truncated: page["items_truncated"].as_bool().unwrap_or(false),
            omitted: page.get("omitted").cloned().and_then(|omitted| serde_json::from_value(omitted).ok()).unwrap_or_default(),
            text_truncated: page["text_truncated"].as_bool().unwrap_or(false),
            text: render_page(&page, &lines),
        }),
    })
}

fn diff(previous: &PreviousSnapshot, current: &PreviousSnapshot, nodes: &[Value]) -> SnapshotChanges {
    let before: HashMap<u64, &String> = previous.lines.iter().map(|(number, line)| (*number, line)).collect();
    let now: HashMap<u64, &String> = current.lines.iter().map(|(number, line)| (*number, line)).collect();
    let by_ref: HashMap<u64, &Value> =
        nodes.iter().filter_map(|node| Some((node["ref"].as_str()?.trim_start_matches('e').parse().ok()?, node))).collect();
    let mut added = Vec::new();
    let mut changed = Vec::new();
    for (number, line) in &current.lines {
        match before.get(number) {
            None => added.push(by_ref[number].clone()),
            Some(old) if *old != line => changed.push(by_ref[number].clone()),
            _ => {}
        }
    }
    let removed: Vec<String> =
        previous.lines.iter().filter(|(number, _)| !now.contains_key(number)).map(|(number, _)| format!("e{number}")).collect();
    SnapshotChanges {
        changes: true,
        url: current.url.clone(),
        title: current.title.clone(),
        url_changed: previous.url != current.url,
        title_changed: previous.title != current.title,
        added,
        changed,
        removed,
        text_changed: previous.text != current.text,
        text: (previous.text != current.text).then(|| current.text.clone()),
    }
}

/// One line for an element: `e12 button "Save" [disabled]`.
fn node_line(node: &Value) -> String {
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

fn render_page(page: &Value, lines: &[(u64, String)]) -> String {
    let mut out = String::new();
    let viewport = &page["viewport"];
    let _ = writeln!(out, "page: {} <{}>", page["title"].as_str().unwrap_or(""), page["url"].as_str().unwrap_or(""));
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
    let list = |key: &str| page[key].as_array().cloned().unwrap_or_default();
    let headings = list("headings");
    if !headings.is_empty() {
        let parts: Vec<String> =
            headings.iter().map(|heading| format!("h{} {:?}", heading["level"], heading["text"].as_str().unwrap_or(""))).collect();
        let _ = writeln!(out, "headings: {}", parts.join("; "));
    }
    let landmarks = list("landmarks");
    if !landmarks.is_empty() {
        let parts: Vec<String> = landmarks
            .iter()
            .map(|landmark| match landmark["name"].as_str() {
                Some(name) => format!("{} {name:?}", landmark["role"].as_str().unwrap_or("")),
                None => landmark["role"].as_str().unwrap_or("").to_string(),
            })
            .collect();
        let _ = writeln!(out, "landmarks: {}", parts.join("; "));
    }
    for (index, form) in list("forms").iter().enumerate() {
        let fields: Vec<&str> = form["fields"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        let _ = writeln!(
            out,
            "form{index}{} {} {}: {}",
            form["name"].as_str().map(|name| format!(" {name:?}")).unwrap_or_default(),
            form["method"].as_str().unwrap_or("get"),
            form["action"].as_str().unwrap_or(""),
            fields.join(" ")
        );
    }
    for table in list("tables") {
        let headers: Vec<&str> = table["headers"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        let _ = writeln!(
            out,
            "table{} {} rows x {} cols: {}",
            table["caption"].as_str().map(|caption| format!(" {caption:?}")).unwrap_or_default(),
            table["rows"],
            table["columns"],
            headers.join(" | ")
        );
    }
    for frame in list("frames") {
        let _ = writeln!(
            out,
            "frame {} {:?} <{}>{}",
            frame["frame"].as_str().unwrap_or(""),
            frame["title"].as_str().or(frame["name"].as_str()).unwrap_or(""),
            frame["url"].as_str().or(frame["src"].as_str()).unwrap_or(""),
            frame["error"].as_str().map(|error| format!(" ({error})")).unwrap_or_default()
        );
    }
    for dialog in list("dialogs") {
        let _ = writeln!(out, "{} {:?} open", dialog["role"].as_str().unwrap_or("dialog"), dialog["name"].as_str().unwrap_or(""));
    }
    for live in list("live") {
        let _ = writeln!(out, "{}: {:?}", live["role"].as_str().unwrap_or("live"), live["text"].as_str().unwrap_or(""));
    }
    let cut: Vec<String> = page["omitted"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(key, _)| key.as_str() != "nodes")
        .map(|(key, total)| format!("{key} (of {total})"))
        .collect();
    if !cut.is_empty() {
        let _ = writeln!(out, "lists cut at max_items: {}", cut.join(", "));
    }
    let truncated = match page["omitted"]["nodes"].as_u64() {
        Some(total) => format!(" of {total}; raise max_items to see more"),
        None => String::new(),
    };
    let _ = writeln!(out, "interactive ({}{truncated}):", lines.len());
    for (_, line) in lines {
        out.push_str(line);
        out.push('\n');
    }
    let text = page["text"].as_str().unwrap_or("");
    if !text.is_empty() {
        let length = page["text_length"].as_u64().unwrap_or(text.len() as u64);
        let cut = if page["text_truncated"] == Value::Bool(true) { format!(", first {}", text.chars().count()) } else { String::new() };
        let _ = writeln!(out, "text ({length} chars{cut}):");
        out.push_str(text);
        out.push('\n');
    }
    out
}

fn render_changes(diff: &SnapshotChanges) -> String {
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
    fn diff_reports_added_changed_removed() {
        let before = PreviousSnapshot { lines: vec![(1, "e1 a".into()), (2, "e2 b".into())], ..Default::default() };
        let nodes = vec![json!({"ref": "e2", "role": "x"}), json!({"ref": "e3", "role": "y"})];
        let now = PreviousSnapshot { lines: vec![(2, "e2 changed".into()), (3, "e3 new".into())], ..Default::default() };
        let result = diff(&before, &now, &nodes);
        assert_eq!(result.added[0]["ref"], "e3");
        assert_eq!(result.changed[0]["ref"], "e2");
        assert_eq!(result.removed, vec!["e1".to_string()]);
    }
}
