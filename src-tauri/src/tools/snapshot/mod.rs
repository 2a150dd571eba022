//! `snapshot`: the agent's main way to see a page. The whole page by default, read in
//! document order (frames, cross-origin ones too, and open shadow roots in their place):
//! visible text, every visible interactive element with a ref (`e12`), role, name, state,
//! a stable CSS selector and its box, and where headings, landmarks, forms, tables,
//! frames, dialogs and live regions start. One answer holds what fits a budget of
//! estimated tokens; a longer page is answered in parts (`truncated.next` goes on).
//! Optionally one element's subtree (`scope`), or only the changes since the previous
//! snapshot. As JSON, or as compact text (a line per item) for model context.

pub(super) mod budget;
mod capture;
mod changes;
mod part;
mod render;
pub(super) mod tokens;

use std::collections::{BTreeMap, HashMap};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use self::budget::Cursor;
use self::capture::{capture, Capture, CaptureRequest, Item};
use self::part::{present, Continuation};
use self::render::node_line;
#[cfg(test)]
pub(super) use self::tokens::estimate as estimate_tokens;
use super::limits::{SNAPSHOT_MAX_CHARS, SNAPSHOT_MAX_ITEMS, SNAPSHOT_MAX_TOKENS, SNAPSHOT_MIN_TOKENS};
use super::targeting::ElementTarget;
use super::{Presentation, Tool, ToolContext};
use crate::error::{Error, Result};
use crate::state::PreviousSnapshot;

/// Output format.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SnapshotFormat {
    /// Structured JSON (boxes, selectors, every field).
    #[default]
    Json,
    /// Compact text for model context: a line per item.
    Text,
}

/// Input of `snapshot`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SnapshotInput {
    /// `json` (default) or `text`.
    #[serde(default)]
    pub(crate) format: SnapshotFormat,
    /// Only this part of the page: a ref from a snapshot (e.g. e12) or a CSS selector
    /// (` >>> ` pierces open shadow roots); its subtree, frames in it included.
    #[serde(default)]
    pub(crate) scope: Option<String>,
    /// With a selector `scope`: the iframe (a selector in the main frame) to look in.
    #[serde(default)]
    pub(crate) frame_selector: Option<String>,
    /// Go on where a truncated answer stopped: its `truncated.next` (with the same scope
    /// and limits).
    #[serde(default)]
    pub(crate) next: Option<String>,
    /// Estimated o200k tokens of one answer (default 12000, 500-200000); a longer page is
    /// answered in parts.
    #[serde(default)]
    #[schemars(range(min = SNAPSHOT_MIN_TOKENS, max = SNAPSHOT_MAX_TOKENS.max))]
    pub(crate) max_tokens: Option<usize>,
    /// Characters of page text at most (default all, max 200000; 0 = none).
    #[serde(default)]
    #[schemars(range(max = SNAPSHOT_MAX_CHARS))]
    pub(crate) max_chars: Option<usize>,
    /// Entries of each list at most: elements, headings, forms, ... (default all, max 5000).
    #[serde(default)]
    #[schemars(range(min = 1, max = SNAPSHOT_MAX_ITEMS))]
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
    /// JSON: the page, or the part of it that fits (url, title, viewport, scope, nodes,
    /// headings, landmarks, forms, tables, frames, dialogs, live, text, counts, truncated;
    /// see docs/API.md).
    Page(Value),
    /// Text: the page as lines, one per item.
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
    /// Interactive elements in this answer.
    interactive_count: usize,
    /// Whether any list was cut at `max_items`.
    items_truncated: bool,
    /// Each list that was cut at `max_items`, with the number of entries it had.
    omitted: BTreeMap<String, usize>,
    /// Whether the page text was cut at `max_chars`.
    text_truncated: bool,
    /// Where this answer starts, when it goes on from an earlier one.
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<usize>,
    /// The last item `next` named was not found again: the page changed there.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    page_changed: bool,
    /// Present when the page goes on past this answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    truncated: Option<Truncated>,
    /// The page as people and models read it.
    text: String,
}

/// Where an answer stopped, when the page goes on.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct Truncated {
    /// The first item shown (0 on the first part).
    from: usize,
    /// Items shown.
    shown: usize,
    /// Items of the whole page (or scope).
    total: usize,
    /// Give this as `next` (with the same scope and limits) for the rest.
    next: String,
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
        "See the page: its text and a ref (e.g. e12) for every interactive element, to act on. In document order, with headings, landmarks, forms, tables, frames, dialogs and live regions marked. The whole page when it fits max_tokens; else truncated.next continues. scope (a ref or selector) reads one part. format=text gives a line per item; changes=true returns only what changed since the previous snapshot.",
        |context: ToolContext, input: SnapshotInput| async move {
            let limits = Limits::read(&input)?;
            if input.changes && (input.scope.is_some() || input.next.is_some()) {
                return Err(Error::bad_request("changes covers the whole page: give no scope or next"));
            }
            if input.frame_selector.is_some() && input.scope.as_deref().is_none_or(is_ref) {
                return Err(Error::bad_request("frame_selector goes with a selector scope (a ref already knows its frame)"));
            }
            let cursor = input.next.as_deref().map(Cursor::decode).transpose()?;
            let scope = input.scope.as_deref().map(|scope| {
                let target = if is_ref(scope) {
                    ElementTarget { element_ref: Some(scope.to_string()), ..ElementTarget::default() }
                } else {
                    ElementTarget { selector: Some(scope.to_string()), ..ElementTarget::default() }
                };
                (target, input.frame_selector.clone())
            });
            let request = CaptureRequest { max_chars: limits.chars, max_items: limits.items, scope };
            let mut captured = capture(&context, &request).await?;
            let covered = Covered::limit(&mut captured, limits);
            let remembered = remember(&context, &captured, request.scope.is_none())?;
            if input.changes {
                return Ok(changes::changes(remembered, &captured, input.format, limits.tokens));
            }
            let continuation = Continuation::of(&input);
            Ok(present(&captured, &covered, input.format, limits.tokens, cursor, &continuation))
        },
    )
    .presented(Presentation {
        mcp_defaults: &[("format", "text")],
        cli_defaults: &[("format", "text")],
        text_field: Some("text"),
        ..Presentation::default()
    })
}

/// Every visible interactive element of the page, over every frame, as the `nodes` of a
/// JSON snapshot (refs, boxes in top-page coordinates); their refs work in actions.
pub(super) async fn interactive_elements(context: &ToolContext) -> Result<Vec<Value>> {
    let captured = capture(context, &CaptureRequest { max_chars: Some(0), ..CaptureRequest::default() }).await?;
    context.tab()?.refs.lock().expect("ref table poisoned").frame_of.extend(captured.frame_of);
    Ok(captured.nodes)
}

/// The whole page as the lines of a text snapshot (without its header), remembered as the
/// tab's last snapshot like any snapshot; answers the snapshot it replaced with them (for
/// `diff`).
pub(super) async fn page_lines(context: &ToolContext) -> Result<(PreviousSnapshot, Option<PreviousSnapshot>)> {
    let captured = capture(context, &CaptureRequest::default()).await?;
    let previous = remember(context, &captured, true)?;
    let current = context.tab()?.refs.lock().expect("ref table poisoned").previous.clone().unwrap_or_default();
    Ok((current, previous))
}

/// Whether a scope names a ref (`e12`) rather than a selector.
fn is_ref(scope: &str) -> bool {
    scope.strip_prefix('e').is_some_and(|number| !number.is_empty() && number.bytes().all(|byte| byte.is_ascii_digit()))
}

/// The limits of one call.
#[derive(Debug, Clone, Copy)]
struct Limits {
    /// Estimated tokens of the answer.
    tokens: usize,
    /// Characters of page text, if capped.
    chars: Option<usize>,
    /// Entries of each list, if capped.
    items: Option<usize>,
}

impl Limits {
    fn read(input: &SnapshotInput) -> Result<Limits> {
        let tokens = SNAPSHOT_MAX_TOKENS.read(input.max_tokens, "max_tokens")?;
        if tokens < SNAPSHOT_MIN_TOKENS {
            return Err(Error::bad_request(format!("max_tokens must be at least {SNAPSHOT_MIN_TOKENS}")));
        }
        if input.max_chars.is_some_and(|chars| chars > SNAPSHOT_MAX_CHARS) {
            return Err(Error::bad_request(format!("max_chars must be at most {SNAPSHOT_MAX_CHARS}")));
        }
        if input.max_items.is_some_and(|items| !(1..=SNAPSHOT_MAX_ITEMS).contains(&items)) {
            return Err(Error::bad_request(format!("max_items must be between 1 and {SNAPSHOT_MAX_ITEMS}")));
        }
        Ok(Limits { tokens, chars: input.max_chars, items: input.max_items })
    }
}

/// What `max_chars` and `max_items` left out of a capture.
#[derive(Debug, Default)]
struct Covered {
    /// Characters of page text, before `max_chars`.
    text_length: usize,
    /// Whether `max_chars` cut the text.
    text_truncated: bool,
    /// Each list cut at `max_items`, with the entries it had.
    omitted: BTreeMap<String, usize>,
}

impl Covered {
    /// Keeps the first `max_chars` characters of text and the first `max_items` entries of
    /// each list, in document order over every frame.
    fn limit(captured: &mut Capture, limits: Limits) -> Covered {
        let mut covered = Covered::default();
        let mut chars_left = limits.chars.unwrap_or(usize::MAX);
        let most = limits.items.unwrap_or(usize::MAX);
        let mut counts: HashMap<&'static str, usize> = HashMap::new();
        let mut kept = Vec::with_capacity(captured.items.len());
        for mut item in std::mem::take(&mut captured.items) {
            let list = match &mut item {
                Item::Text { text, .. } => {
                    // A line costs its characters and the newline before it (but the first).
                    let newline = usize::from(covered.text_length > 0);
                    let length = text.chars().count();
                    covered.text_length += newline + length;
                    if newline + length > chars_left {
                        covered.text_truncated = true;
                        *text = text.chars().take(chars_left.saturating_sub(newline)).collect();
                    }
                    if text.is_empty() {
                        chars_left = 0;
                        continue;
                    }
                    chars_left -= newline + text.chars().count();
                    kept.push(item);
                    continue;
                }
                Item::Element { .. } => "nodes",
                Item::Mark { list, .. } => list.key(),
            };
            let count = counts.entry(list).or_default();
            *count += 1;
            if *count <= most {
                kept.push(item);
            }
        }
        captured.items = kept;
        *counts.entry("nodes").or_default() += captured.omitted_nodes;
        for (list, count) in counts {
            if count > most {
                covered.omitted.insert(list.to_string(), count);
            }
        }
        covered
    }
}

/// Records the capture in the tab: each element's frame, and (for a whole page) what
/// `changes` compares with next time. Answers the snapshot it replaced.
fn remember(context: &ToolContext, captured: &Capture, whole_page: bool) -> Result<Option<PreviousSnapshot>> {
    let mut refs = context.tab()?.refs.lock().expect("ref table poisoned");
    // A whole page replaces the table (refs of elements gone from it are stale anyway);
    // a part adds to it.
    if whole_page && captured.omitted_nodes == 0 {
        refs.frame_of = captured.frame_of.clone();
    } else {
        refs.frame_of.extend(captured.frame_of.iter().map(|(number, path)| (*number, path.clone())));
    }
    if !whole_page {
        return Ok(None);
    }
    let current = PreviousSnapshot {
        url: captured.url.clone(),
        title: captured.title.clone(),
        text: page_text(&captured.items),
        lines: element_lines(captured, &captured.items),
        page: captured.items.iter().filter_map(|item| render::item_line(item, &captured.nodes)).collect(),
    };
    Ok(refs.previous.replace(current))
}

/// The page text of some items: their text lines.
fn page_text(items: &[Item]) -> String {
    let lines: Vec<&str> = items
        .iter()
        .filter_map(|item| match item {
            Item::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    lines.join("\n")
}

/// The elements of some items, by ref number, with their lines.
fn element_lines(captured: &Capture, items: &[Item]) -> Vec<(u64, String)> {
    items
        .iter()
        .filter_map(|item| match item {
            Item::Element { node, .. } => {
                let node = &captured.nodes[*node];
                Some((node["ref"].as_str()?.trim_start_matches('e').parse().ok()?, node_line(node)))
            }
            _ => None,
        })
        .collect()
}
