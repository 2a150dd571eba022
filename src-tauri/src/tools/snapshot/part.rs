//! One answer of a snapshot: the part of a capture that fits the token budget, from
//! where the call asked to start, shaped as JSON or text, with what to call for the rest.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::budget::{cut, fingerprint, resume, Cursor};
use super::capture::{Capture, Item, Outline};
use super::render::{self, item_line};
use super::tokens::estimate;
use super::{page_text, Covered, SnapshotFormat, SnapshotInput, SnapshotOutput, SnapshotText, Truncated};

/// The arguments that go with `next` in the call that continues.
#[derive(Debug, Default)]
pub(super) struct Continuation(serde_json::Map<String, Value>);

impl Continuation {
    /// What a call gave besides `next` and `format`: the next part is asked the same way.
    pub(super) fn of(input: &SnapshotInput) -> Continuation {
        let mut arguments = serde_json::Map::new();
        let mut given = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                arguments.insert(key.to_string(), value);
            }
        };
        given("scope", input.scope.clone().map(Value::from));
        given("frame_selector", input.frame_selector.clone().map(Value::from));
        given("max_tokens", input.max_tokens.map(Value::from));
        given("max_chars", input.max_chars.map(Value::from));
        given("max_items", input.max_items.map(Value::from));
        Continuation(arguments)
    }

    /// The call that goes on from `next`: `snapshot {"next": "540.1a2b3c4d", "scope": "main"}`.
    fn call(&self, next: &str) -> String {
        let mut arguments = serde_json::Map::new();
        arguments.insert("next".into(), json!(next));
        arguments.extend(self.0.clone());
        format!("snapshot {}", Value::Object(arguments))
    }
}

/// Shapes the part of the page that fits, in the format asked for.
pub(super) fn present(
    captured: &Capture,
    covered: &Covered,
    format: SnapshotFormat,
    budget: usize,
    cursor: Option<Cursor>,
    continuation: &Continuation,
) -> SnapshotOutput {
    let items = &captured.items;
    let fingerprints: Vec<u32> = items.iter().map(|item| item_fingerprint(item, &captured.nodes)).collect();
    let (from, page_changed) = match cursor {
        Some(cursor) => resume(&fingerprints, cursor),
        None => (0, false),
    };
    let lines: Vec<Option<String>> = items.iter().map(|item| item_line(item, &captured.nodes)).collect();
    let costs: Vec<usize> = match format {
        SnapshotFormat::Text => lines.iter().map(|line| line.as_deref().map_or(0, |line| estimate(line) + 1)).collect(),
        SnapshotFormat::Json => items
            .iter()
            .map(|item| match item {
                Item::Text { text, .. } => estimate(&Value::from(text.as_str()).to_string()) + 1,
                Item::Element { node, .. } => estimate(&captured.nodes[*node].to_string()) + 1,
                Item::Mark { entry, .. } => estimate(&entry.to_string()) + 1,
            })
            .collect(),
    };
    let opens = |index: usize| match &items[index] {
        Item::Mark { .. } => true,
        Item::Text { heading, .. } | Item::Element { heading, .. } => heading.is_some(),
    };
    let part = |to: usize| Part { captured, covered, lines: &lines, fingerprints: &fingerprints, from, to, page_changed, continuation };
    // The frame of the answer (header, counts, the line that says how to go on) is priced
    // on an empty part, with room to spare for longer numbers; then items are taken while
    // they fit, and the whole is estimated again in case the items priced alone add up to
    // less than their text does.
    let empty = part(from).render(format);
    let frame = estimate(&output_text(&empty)) + FRAME_SLACK;
    let mut to = cut(&costs, from, budget.saturating_sub(frame), opens);
    loop {
        let output = part(to).render(format);
        let spent = estimate(&output_text(&output));
        if to <= from + 1 || spent <= budget {
            return output;
        }
        let over = spent - budget;
        let mut dropped = 0;
        while to > from + 1 && dropped < over {
            to -= 1;
            dropped += costs[to];
        }
    }
}

/// Tokens kept free beyond what an empty part's frame costs.
const FRAME_SLACK: usize = 40;

/// What the budget is measured on: the text of a text answer, the whole of a JSON one.
fn output_text(output: &SnapshotOutput) -> String {
    match output {
        SnapshotOutput::Text(text) => text.text.clone(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// An item's fingerprint for cursors: its text, its element's ref, or its entry.
fn item_fingerprint(item: &Item, nodes: &[Value]) -> u32 {
    match item {
        Item::Text { text, .. } => fingerprint(format!("t{text}").as_bytes()),
        Item::Element { node, .. } => fingerprint(format!("e{}", nodes[*node]["ref"]).as_bytes()),
        Item::Mark { list, entry } => fingerprint(format!("m{}{entry}", list.key()).as_bytes()),
    }
}

/// Items `from..to` of a capture, and how to say so.
struct Part<'page> {
    /// The whole page (or scope).
    captured: &'page Capture,
    /// What the limits left out of it.
    covered: &'page Covered,
    /// The text line of each of its items.
    lines: &'page [Option<String>],
    /// The fingerprint of each of its items.
    fingerprints: &'page [u32],
    /// The first item of the part.
    from: usize,
    /// The item after the last of the part.
    to: usize,
    /// The cursor's last item was not found again.
    page_changed: bool,
    /// How the call was made, to say how to go on.
    continuation: &'page Continuation,
}

impl Part<'_> {
    /// Its items.
    fn items(&self) -> &[Item] {
        &self.captured.items[self.from..self.to]
    }

    /// Where it stopped and how to go on, when the page goes on after it.
    fn truncated(&self) -> Option<Truncated> {
        let total = self.captured.items.len();
        (self.to < total).then(|| Truncated {
            from: self.from,
            shown: self.to - self.from,
            total,
            // (`to` is 0 only in the empty part that prices the frame of an answer.)
            next: Cursor { index: self.to, anchor: self.to.checked_sub(1).map_or(0, |last| self.fingerprints[last]) }.encode(),
        })
    }

    /// The answer, in `format`.
    fn render(&self, format: SnapshotFormat) -> SnapshotOutput {
        match format {
            SnapshotFormat::Text => SnapshotOutput::Text(self.text()),
            SnapshotFormat::Json => SnapshotOutput::Page(self.json()),
        }
    }

    /// Elements in the part.
    fn interactive_count(&self) -> usize {
        self.items().iter().filter(|item| matches!(item, Item::Element { .. })).count()
    }

    /// The part as text: the header, a line per item, and how to go on.
    fn text(&self) -> SnapshotText {
        let captured = self.captured;
        let mut out = render::header(captured, self.covered);
        let total = captured.items.len();
        if self.from > 0 {
            out.push_str(&format!("continued from item {} of {total}", self.from));
            if self.page_changed {
                out.push_str(" (the page changed where the previous part ended: items may repeat or be missing)");
            }
            out.push('\n');
        }
        for line in self.lines[self.from..self.to].iter().flatten() {
            out.push_str(line);
            out.push('\n');
        }
        let truncated = self.truncated();
        if let Some(truncated) = &truncated {
            out.push_str(&format!(
                "(cut at the token budget: items {}-{} of {total} not shown yet; {} goes on)\n",
                self.to,
                total - 1,
                self.continuation.call(&truncated.next)
            ));
        }
        SnapshotText {
            format: "text",
            url: captured.url.clone(),
            title: captured.title.clone(),
            interactive_count: self.interactive_count(),
            items_truncated: !self.covered.omitted.is_empty(),
            omitted: self.covered.omitted.clone(),
            text_truncated: self.covered.text_truncated,
            from: (self.from > 0).then_some(self.from),
            page_changed: self.page_changed,
            truncated,
            text: out,
        }
    }

    /// The part as JSON: each list with the part's entries.
    fn json(&self) -> Value {
        let captured = self.captured;
        let mut page = json!({
            "url": captured.url, "title": captured.title, "viewport": captured.viewport,
            "element_count": captured.element_count,
        });
        if let Some(scope) = &captured.scope {
            page["scope"] = scope.clone();
        }
        let mut nodes = Vec::new();
        let mut lists: BTreeMap<&str, Vec<Value>> = Outline::ALL.iter().map(|list| (list.key(), Vec::new())).collect();
        for item in self.items() {
            match item {
                Item::Element { node, .. } => nodes.push(captured.nodes[*node].clone()),
                Item::Mark { list, entry } => lists.entry(list.key()).or_default().push(entry.clone()),
                Item::Text { .. } => {}
            }
        }
        page["nodes"] = json!(nodes);
        for (key, entries) in lists {
            page[key] = json!(entries);
        }
        page["text"] = json!(page_text(self.items()));
        page["text_length"] = json!(self.covered.text_length);
        page["text_truncated"] = json!(self.covered.text_truncated);
        page["items_truncated"] = json!(!self.covered.omitted.is_empty());
        if !self.covered.omitted.is_empty() {
            page["omitted"] = json!(self.covered.omitted);
        }
        page["interactive_count"] = json!(self.interactive_count());
        if self.from > 0 {
            page["from"] = json!(self.from);
        }
        if self.page_changed {
            page["page_changed"] = json!(true);
        }
        if let Some(truncated) = self.truncated() {
            page["truncated"] = json!(truncated);
        }
        page
    }
}
