//! Capturing a snapshot: the page agent of the main frame (or of the frame that holds the
//! scope) and of every frame below it, merged into one [`Capture`]: content items in
//! document order with each frame's items in its frame's place, elements with refs as the
//! API spells them (`e12`) and boxes in top-page coordinates.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;

use serde_json::{json, Value};

use super::super::page_agent::agent;
use super::super::targeting::{parse_ref, ElementTarget};
use super::super::ToolContext;
use crate::engine::agent::{ElementAddress, FrameBox, FrameOf, Snapshot};
use crate::error::Result;

/// Frames nested deeper than this are listed but not entered.
const MAX_FRAME_DEPTH: usize = 3;
/// At most this many frames are entered.
const MAX_FRAMES: usize = 20;

/// The outline lists of a snapshot, each entry marking where its structure starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outline {
    /// Headings (`{level, text}`).
    Headings,
    /// Landmarks (`{role, name?}`).
    Landmarks,
    /// Forms (`{name?, action?, method, fields}`).
    Forms,
    /// Tables (`{caption?, rows, columns, headers, first_row?}`).
    Tables,
    /// Child frames (`{frame, name, src, x, y, w, h, url?, title?, error?, skipped?}`).
    Frames,
    /// Open dialogs (`{role, name?, modal}`).
    Dialogs,
    /// Live regions (`{role, text}`).
    Live,
}

impl Outline {
    /// Every list, in the order answers show them.
    pub(super) const ALL: [Outline; 7] =
        [Outline::Headings, Outline::Landmarks, Outline::Forms, Outline::Tables, Outline::Frames, Outline::Dialogs, Outline::Live];

    /// Its key in answers.
    pub(super) fn key(self) -> &'static str {
        match self {
            Outline::Headings => "headings",
            Outline::Landmarks => "landmarks",
            Outline::Forms => "forms",
            Outline::Tables => "tables",
            Outline::Frames => "frames",
            Outline::Dialogs => "dialogs",
            Outline::Live => "live",
        }
    }

    /// The list the agent's mark names (`heading`, `table`, ...).
    fn of_mark(mark: &str) -> Option<Outline> {
        Some(match mark {
            "heading" => Outline::Headings,
            "landmark" => Outline::Landmarks,
            "form" => Outline::Forms,
            "table" => Outline::Tables,
            "dialog" => Outline::Dialogs,
            "live" => Outline::Live,
            _ => return None,
        })
    }
}

/// One piece of a snapshot's content, in document order.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Item {
    /// A line of visible text; `heading` is the level of the heading it begins.
    Text { text: String, heading: Option<u8> },
    /// An interactive element, `nodes[node]`; `heading` as for text.
    Element { node: usize, heading: Option<u8> },
    /// Where a structure starts: its entry in an outline list.
    Mark { list: Outline, entry: Value },
}

/// What a snapshot saw: the page (or scope) as items, and the elements they name.
#[derive(Debug, Default)]
pub(super) struct Capture {
    /// The URL of the document read (the main frame's, or the scope's frame's).
    pub(super) url: String,
    /// Its title.
    pub(super) title: String,
    /// Its viewport and scroll (`width`, `height`, `scroll_x`, `scroll_y`,
    /// `document_width`, `document_height`).
    pub(super) viewport: Value,
    /// Rendered elements read, over every frame.
    pub(super) element_count: u64,
    /// The element the snapshot was scoped to (`{ref, role, name?, frame?}`), if any.
    pub(super) scope: Option<Value>,
    /// The content in document order.
    pub(super) items: Vec<Item>,
    /// The interactive elements, as the agent describes them (refs as `e12`, boxes in
    /// top-page coordinates, `frame` when in one).
    pub(super) nodes: Vec<Value>,
    /// Elements the agents did not describe because of `max_items`.
    pub(super) omitted_nodes: usize,
    /// Frame path of each element in a child frame, by ref number.
    pub(super) frame_of: HashMap<u64, Vec<u32>>,
}

/// What to capture.
#[derive(Debug, Clone, Default)]
pub(super) struct CaptureRequest {
    /// `Some(0)`: no text (elements and structure only).
    pub(super) max_chars: Option<usize>,
    /// Elements each frame describes at most.
    pub(super) max_items: Option<usize>,
    /// Only this element's subtree: a ref, or a selector (in the iframe `frame_selector`
    /// names in the main frame, when given).
    pub(super) scope: Option<(ElementTarget, Option<String>)>,
}

/// Captures the page (or the scope) and every frame in it.
pub(super) async fn capture(context: &ToolContext, request: &CaptureRequest) -> Result<Capture> {
    let (path, address) = match &request.scope {
        None => (Vec::new(), ElementAddress::default()),
        Some((target, frame_selector)) => scope_address(context, target, frame_selector.as_deref()).await?,
    };
    // Where the scope's frame starts in the top page.
    let (mut offset_x, mut offset_y) = (0.0, 0.0);
    for depth in 0..path.len() {
        let content = agent(context, &path[..depth], &FrameBox { frame: path[depth], scroll: false }).await?;
        offset_x += content.x;
        offset_y += content.y;
    }
    let ask = Snapshot { max_chars: request.max_chars.filter(|chars| *chars == 0), max_items: request.max_items, scope: address };
    let answer = agent(context, &path, &ask).await?;
    let mut capture = Capture {
        url: answer["url"].as_str().unwrap_or_default().to_string(),
        title: answer["title"].as_str().unwrap_or_default().to_string(),
        viewport: answer["viewport"].clone(),
        ..Capture::default()
    };
    if let Some(scope) = answer.get("scope").filter(|scope| scope.is_object()) {
        let mut scope = scope.clone();
        scope["ref"] = json!(format!("e{}", scope["ref"].as_u64().unwrap_or(0)));
        if !path.is_empty() {
            scope["frame"] = json!(frame_label(&path));
        }
        capture.scope = Some(scope);
    }
    let mut reader = FrameReader { context, ask: Snapshot { scope: ElementAddress::default(), ..ask }, entered: 0 };
    reader.read(&mut capture, path, (offset_x, offset_y), answer).await;
    Ok(capture)
}

/// The frame path and the address within it of a scope.
async fn scope_address(context: &ToolContext, target: &ElementTarget, frame_selector: Option<&str>) -> Result<(Vec<u32>, ElementAddress)> {
    match (&target.element_ref, &target.selector) {
        (Some(element_ref), _) => {
            let number = parse_ref(element_ref)?;
            let frame = context.tab()?.refs.lock().expect("ref table poisoned").frame_of.get(&number).cloned().unwrap_or_default();
            Ok((frame, ElementAddress::by_ref(number)))
        }
        (None, Some(selector)) => {
            let frame = match frame_selector {
                Some(frame_selector) => vec![agent(context, &[], &FrameOf { selector: frame_selector.to_string() }).await?.frame],
                None => Vec::new(),
            };
            Ok((frame, ElementAddress { element_ref: None, selector: Some(selector.clone()) }))
        }
        (None, None) => Ok((Vec::new(), ElementAddress::default())),
    }
}

/// Reads frames' answers into a capture, entering child frames where they are.
struct FrameReader<'context> {
    context: &'context ToolContext,
    /// What each child frame is asked.
    ask: Snapshot,
    /// Frames entered so far.
    entered: usize,
}

impl FrameReader<'_> {
    /// Adds a frame's answer (its elements, then its items, a child frame's in its place);
    /// `offset` is where the frame's content starts in the top page.
    fn read<'call>(
        &'call mut self,
        capture: &'call mut Capture,
        path: Vec<u32>,
        offset: (f64, f64),
        answer: Value,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'call>> {
        Box::pin(async move {
            let label = (!path.is_empty()).then(|| frame_label(&path));
            let first_node = capture.nodes.len();
            for mut node in answer["nodes"].as_array().cloned().unwrap_or_default() {
                if let Some(number) = node["ref"].as_u64() {
                    if !path.is_empty() {
                        capture.frame_of.insert(number, path.clone());
                    }
                    node["ref"] = json!(format!("e{number}"));
                }
                if offset != (0.0, 0.0) {
                    node["x"] = json!(node["x"].as_f64().unwrap_or(0.0) + offset.0);
                    node["y"] = json!(node["y"].as_f64().unwrap_or(0.0) + offset.1);
                }
                if let Some(label) = &label {
                    node["frame"] = json!(label);
                }
                capture.nodes.push(node);
            }
            capture.omitted_nodes += answer["omitted_nodes"].as_u64().unwrap_or(0) as usize;
            capture.element_count += answer["element_count"].as_u64().unwrap_or(0);
            let heading = |item: &Value| item["h"].as_u64().map(|level| level.clamp(1, 6) as u8);
            for item in answer["items"].as_array().into_iter().flatten() {
                if let Some(text) = item["text"].as_str() {
                    capture.items.push(Item::Text { text: text.to_string(), heading: heading(item) });
                } else if let Some(node) = item["node"].as_u64() {
                    capture.items.push(Item::Element { node: first_node + node as usize, heading: heading(item) });
                } else if let Some(list) = item["mark"].as_str().and_then(Outline::of_mark) {
                    let mut entry = item["entry"].clone();
                    spell_ref(&mut entry, &path, &mut capture.frame_of);
                    if let Some(fields) = entry.get_mut("fields").and_then(Value::as_array_mut) {
                        for field in fields {
                            *field = json!(format!("e{}", field.as_u64().unwrap_or(0)));
                        }
                    }
                    if let Some(label) = &label {
                        entry["frame"] = json!(label);
                    }
                    capture.items.push(Item::Mark { list, entry });
                } else if let Some(index) = item["frame"].as_u64() {
                    let mut frame = answer["frames"][index as usize].clone();
                    spell_ref(&mut frame, &path, &mut capture.frame_of);
                    let mut child_path = path.clone();
                    child_path.push(frame["frame"].as_u64().unwrap_or(0) as u32);
                    self.enter(capture, child_path, offset, &frame).await;
                }
            }
        })
    }

    /// Lists a child frame where it is and, within the limits, reads it there.
    async fn enter(&mut self, capture: &mut Capture, path: Vec<u32>, parent_offset: (f64, f64), frame: &Value) {
        let offset = (parent_offset.0 + frame["x"].as_f64().unwrap_or(0.0), parent_offset.1 + frame["y"].as_f64().unwrap_or(0.0));
        let mut entry = json!({ "frame": frame_label(&path), "ref": frame["ref"], "name": frame["name"], "src": frame["src"],
            "x": offset.0, "y": offset.1, "w": frame["w"], "h": frame["h"] });
        if self.entered >= MAX_FRAMES || path.len() > MAX_FRAME_DEPTH {
            entry["skipped"] = json!(true);
            capture.items.push(Item::Mark { list: Outline::Frames, entry });
            return;
        }
        self.entered += 1;
        match agent(self.context, &path, &self.ask).await {
            Ok(child) => {
                entry["url"] = child["url"].clone();
                entry["title"] = child["title"].clone();
                capture.items.push(Item::Mark { list: Outline::Frames, entry });
                self.read(capture, path, offset, child).await;
            }
            Err(error) => {
                entry["error"] = json!(error.code.as_str());
                capture.items.push(Item::Mark { list: Outline::Frames, entry });
            }
        }
    }
}

/// Spells the ref of an outline entry as the API does (`e12`), noting its frame.
fn spell_ref(entry: &mut Value, path: &[u32], frame_of: &mut HashMap<u64, Vec<u32>>) {
    if let Some(number) = entry["ref"].as_u64() {
        if !path.is_empty() {
            frame_of.insert(number, path.to_vec());
        }
        entry["ref"] = json!(format!("e{number}"));
    }
}

/// `[3, 1]` -> `f3.1`.
pub(super) fn frame_label(path: &[u32]) -> String {
    let parts: Vec<String> = path.iter().map(u32::to_string).collect();
    format!("f{}", parts.join("."))
}
