//! The contract with the page agent (`engine/scripts/agent/`): its source, assembled from
//! its sections; every operation the agent offers as a variant of [`AgentOp`] (serialised
//! to the agent's name for it); and for each operation a request type that names it and
//! the type its result is read into. A unit test checks that this enum and the assembled
//! agent's `operations` table list the same names.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Assembles the agent from its section files, listed once: [`AGENT_SECTIONS`] names them
/// (for the test that none is left out) and [`AGENT_SOURCE`] is their text, concatenated
/// at compile time.
macro_rules! agent_sections {
    ($($section:literal),+ $(,)?) => {
        /// The page agent's section files in `engine/scripts/agent/`, in the order they make
        /// one script: `prelude.js` opens the one scope they all share, `export.js` closes it.
        #[cfg(test)]
        const AGENT_SECTIONS: &[&str] = &[$($section),+];

        /// The page agent as the engine installs it (one script, one function scope), with
        /// its placeholders (`__MALO_SECRET__`, `__MALO_CHANNEL__`) still to be filled in.
        pub(crate) const AGENT_SOURCE: &str = concat!($(include_str!(concat!("scripts/agent/", $section))),+);
    };
}

agent_sections!(
    "prelude.js",
    "refs-and-queries.js",
    "roles-and-names.js",
    "selectors-and-geometry.js",
    "snapshot-content.js",
    "snapshot.js",
    "locate-and-actionability.js",
    "actions-and-reads.js",
    "file-inputs.js",
    "login.js",
    "drag.js",
    "devtools.js",
    "reader.js",
    "element-reads.js",
    "find.js",
    "operations-and-relay.js",
    "page-signals.js",
    "export.js",
);

/// Declares the page agent's operations in one table, a line each: what it does, the
/// agent's name for it, and the type its result is read into; its request type is the
/// struct of the same name. Makes [`AgentOp`] (serialised to the agent's names),
/// [`AgentOp::ALL`], [`AgentOp::name`] and each request's [`AgentRequest`] impl.
macro_rules! agent_ops {
    ($($(#[$doc:meta])* $op:ident = $name:literal -> $output:ty,)+) => {
        /// The page agent's operations, by the names the agent knows them.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
        pub enum AgentOp {
            $($(#[$doc])* #[serde(rename = $name)] $op,)+
        }

        impl AgentOp {
            /// Every operation.
            pub const ALL: &[AgentOp] = &[$(AgentOp::$op),+];

            /// The agent's name for it.
            pub fn name(self) -> &'static str {
                match self {
                    $(AgentOp::$op => $name,)+
                }
            }
        }

        $(impl AgentRequest for $op {
            const OP: AgentOp = AgentOp::$op;
            type Output = $output;
        })+
    };
}

agent_ops! {
    /// Describe the document: text, structure, interactive elements with refs.
    Snapshot = "snapshot" -> Value,
    /// Find a target, scroll it into view, say where it is and whether it is actionable.
    Locate = "locate" -> ElementInfo,
    /// Where a child frame's content box is.
    FrameBox = "frame_box" -> Rect,
    /// What a click at a point of this document reaches, when it should reach a frame.
    FrameHit = "frame_hit" -> Covered,
    /// Give an element focus.
    Focus = "focus" -> Focused,
    /// Type text into a field as one trusted insertion.
    Fill = "fill" -> FieldValue,
    /// Set the value of a field that takes no typing (date, colour, range).
    SetValue = "set_value" -> FieldValue,
    /// Choose options of a `<select>`.
    Select = "select" -> Value,
    /// Scroll the document.
    ScrollBy = "scroll_by" -> ScrollPosition,
    /// Read text, HTML, an attribute or a value.
    Extract = "extract" -> Value,
    /// The main content as Markdown blocks (`read`).
    ReadPage = "read_page" -> ReadAnswer,
    /// One read or state of one element (`get`, `is`).
    ElementRead = "element_read" -> ElementReadAnswer,
    /// The state of a selector or a text (wait_for, assert).
    Probe = "probe" -> ProbeState,
    /// Play an HTML5 drag and drop in the page.
    Html5Drag = "html5_drag" -> Value,
    /// Find a login form's fields.
    LoginForm = "login_form" -> LoginFields,
    /// Where a login attempt stands.
    LoginState = "login_state" -> LoginProgress,
    /// Find a file input and check it takes a number of files.
    FileInput = "file_input" -> FileInputInfo,
    /// Open a file input's chooser (the engine answers it).
    OpenFileChooser = "open_file_chooser" -> Value,
    /// The files a file input holds.
    FileInputState = "file_input_state" -> FileList,
    /// A child frame by a selector of its iframe.
    FrameOf = "frame_of" -> FrameId,
    /// The accessibility tree in Chrome's shape (for the DevTools endpoint).
    AxTree = "ax_tree" -> AxTreeAnswer,
    /// Elements by role and name, text, label, placeholder, alt, title or test id.
    Find = "find" -> Found,
}

/// A request to the page agent: its operation, its arguments (this value, serialised)
/// and the type of its result.
pub trait AgentRequest: Serialize {
    /// The operation.
    const OP: AgentOp;
    /// What it answers.
    type Output: for<'de> Deserialize<'de>;
}

/// An element, by ref or selector.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ElementAddress {
    /// A ref number.
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub element_ref: Option<u64>,
    /// A CSS selector (` >>> ` pierces open shadow roots).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
}

impl ElementAddress {
    /// The element with this ref.
    pub fn by_ref(element_ref: u64) -> ElementAddress {
        ElementAddress { element_ref: Some(element_ref), selector: None }
    }
}

/// `snapshot`: the document's content in document order (passed through to the tool as
/// JSON: `items`, `nodes`, `frames`, `url`, `title`, `viewport`, `scope`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Snapshot {
    /// `Some(0)`: no text, only elements and structure (any other cap is the tool's).
    pub max_chars: Option<usize>,
    /// Interactive elements described at most (the rest are counted in `omitted_nodes`).
    pub max_items: Option<usize>,
    /// Only this element's subtree (none: the whole document).
    #[serde(flatten)]
    pub scope: ElementAddress,
}

/// `locate`: find a target and describe it.
#[derive(Debug, Clone, Serialize)]
pub struct Locate {
    /// The element.
    #[serde(flatten)]
    pub target: ElementAddress,
    /// Scroll it into view first.
    pub scroll: bool,
    /// Measure its box again at the next animation frame (`moving` if it changed).
    pub stable: bool,
}

/// What the agent knows of a located element.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ElementInfo {
    /// Its ref.
    #[serde(rename = "ref")]
    pub element_ref: u64,
    /// ARIA role (or tag name).
    pub role: String,
    /// Accessible name.
    #[serde(default)]
    pub name: String,
    /// Tag name.
    #[serde(default)]
    pub tag: String,
    /// An input's effective type (`input.type`: an unknown type attribute is `text`).
    #[serde(rename = "type", default)]
    pub input_type: Option<String>,
    /// Centre, in this document's viewport.
    pub x: f64,
    /// Centre, in this document's viewport.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
    /// Rendered and not hidden.
    pub visible: bool,
    /// Disabled (attribute, aria, fieldset).
    #[serde(default)]
    pub disabled: bool,
    /// Takes typed text.
    #[serde(default)]
    pub editable: bool,
    /// Read-only (`readonly`, `aria-readonly`).
    #[serde(default)]
    pub readonly: Option<bool>,
    /// Its box changed between two animation frames (asked with `stable`).
    #[serde(default)]
    pub moving: Option<bool>,
    /// The visible label acted on for a control that is not drawn itself.
    #[serde(default)]
    pub via_label: Option<String>,
    /// Checked state of a checkbox, radio or switch.
    #[serde(default)]
    pub checked: Option<bool>,
    /// Its value (passwords redacted).
    #[serde(default)]
    pub value: Option<String>,
    /// What a click at its centre would reach instead, if anything.
    #[serde(default)]
    pub covered_by: Option<String>,
    /// Whether its centre is in the viewport.
    pub in_viewport: bool,
    /// A password or other secret field.
    #[serde(default)]
    pub sensitive: Option<bool>,
}

/// `frame_box`: where a child frame's content is.
#[derive(Debug, Clone, Serialize)]
pub struct FrameBox {
    /// The frame's id in this document.
    pub frame: u32,
    /// Scroll it into view first.
    pub scroll: bool,
}

/// A box in a document's viewport.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, schemars::JsonSchema)]
pub struct Rect {
    /// Left.
    pub x: f64,
    /// Top.
    pub y: f64,
    /// Width.
    #[serde(default)]
    pub w: f64,
    /// Height.
    #[serde(default)]
    pub h: f64,
}

/// `frame_hit`: what a click at (x, y) reaches, when it should reach frame `frame`.
#[derive(Debug, Clone, Serialize)]
pub struct FrameHit {
    /// The frame's id in this document.
    pub frame: u32,
    /// Point, in this document's viewport.
    pub x: f64,
    /// Point, in this document's viewport.
    pub y: f64,
}

/// What covers a point, if anything.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Covered {
    /// A description of the covering element; `None` when the point reaches its target.
    #[serde(default)]
    pub covered_by: Option<String>,
}

/// `focus`.
#[derive(Debug, Clone, Serialize)]
pub struct Focus {
    /// The element.
    #[serde(flatten)]
    pub target: ElementAddress,
}

/// Whether focus landed.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Focused {
    /// The element (or something in it) has focus.
    pub focused: bool,
}

/// `fill`: focus, optionally select all, insert the text.
#[derive(Debug, Clone, Serialize)]
pub struct Fill {
    /// The element.
    #[serde(flatten)]
    pub target: ElementAddress,
    /// The text.
    pub text: String,
    /// Replace what is there.
    pub clear: bool,
}

/// `set_value`: set a value that takes no typing, firing input and change.
#[derive(Debug, Clone, Serialize)]
pub struct SetValue {
    /// The element.
    #[serde(flatten)]
    pub target: ElementAddress,
    /// The value.
    pub text: String,
}

/// A field's value after an edit.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct FieldValue {
    /// The value now (passwords `[redacted]`).
    #[serde(default)]
    pub value: Option<String>,
}

/// `select`: choose options by value or label.
#[derive(Debug, Clone, Serialize)]
pub struct Select {
    /// The element.
    #[serde(flatten)]
    pub target: ElementAddress,
    /// The values or labels.
    pub values: Vec<String>,
    /// `value` or `label`.
    pub by: &'static str,
}

/// `scroll_by`.
#[derive(Debug, Clone, Serialize)]
pub struct ScrollBy {
    /// Pixels right.
    pub dx: f64,
    /// Pixels down.
    pub dy: f64,
}

/// Where the document is scrolled to.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
pub struct ScrollPosition {
    /// Horizontal scroll (whole CSS pixels).
    pub scroll_x: i64,
    /// Vertical scroll (whole CSS pixels).
    pub scroll_y: i64,
}

/// `extract` (the answer goes to the agent as JSON).
#[derive(Debug, Clone, Serialize)]
pub struct Extract {
    /// Selector.
    pub selector: String,
    /// `text`, `html`, `attribute` or `value`.
    pub mode: &'static str,
    /// The attribute, for mode `attribute`.
    pub attribute: Option<String>,
    /// Characters per value.
    pub max_chars: usize,
    /// Every match.
    pub all: bool,
}

/// `read_page`: the main content of the document, as Markdown blocks.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReadPage {}

/// One block of what `read_page` read: a heading, a paragraph, a list item, a table row.
#[derive(Debug, Clone, Deserialize)]
pub struct ReadBlock {
    /// Its Markdown.
    pub md: String,
    /// It follows the block before it on the next line (a list item, a table row), not
    /// after a blank line.
    #[serde(default)]
    pub tight: bool,
    /// It opens what follows (a heading, a table's head): an answer does not end on it.
    #[serde(default)]
    pub opens: bool,
    /// A table row's head block (its index), repeated when an answer starts at the row.
    #[serde(default)]
    pub head: Option<usize>,
}

/// What `read_page` answers.
#[derive(Debug, Clone, Deserialize)]
pub struct ReadAnswer {
    /// The document's URL.
    pub url: String,
    /// Its title.
    pub title: String,
    /// The content, in document order.
    pub blocks: Vec<ReadBlock>,
    /// Whether the agent stopped at its own cap of characters.
    #[serde(default)]
    pub cut: bool,
}

/// `element_read`: one read (`text`, `html`, `value`, `attr`, `styles`, `count`) or state
/// (`visible`, `enabled`, `checked`) of an element.
#[derive(Debug, Clone, Serialize)]
pub struct ElementRead {
    /// The element (for `count`, the selector whose matches are counted).
    #[serde(flatten)]
    pub target: ElementAddress,
    /// What is read.
    pub what: &'static str,
    /// The attribute (`attr`) or the style property (`styles`).
    pub name: Option<String>,
}

/// What `element_read` answers.
#[derive(Debug, Clone, Deserialize)]
pub struct ElementReadAnswer {
    /// The value read (a string, a number, a flag, an object of styles, or null).
    #[serde(default)]
    pub value: Value,
}

/// `probe`: the state of a selector or a text.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Probe {
    /// A selector.
    pub selector: Option<String>,
    /// A text to find (inside `selector` when both are given).
    pub text: Option<String>,
}

/// What `probe` saw.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct ProbeState {
    /// Matches of the selector.
    #[serde(default)]
    pub count: Option<u64>,
    /// The selector matched.
    #[serde(default)]
    pub exists: Option<bool>,
    /// Its first match is visible.
    #[serde(default)]
    pub visible: Option<bool>,
    /// Its first match is enabled.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Its first match's text.
    #[serde(default)]
    pub text: Option<String>,
    /// Its first match's value (passwords redacted).
    #[serde(default)]
    pub value: Option<String>,
    /// The text was found.
    #[serde(default)]
    pub text_found: Option<bool>,
    /// The document's URL.
    #[serde(default)]
    pub url: String,
}

/// `html5_drag`: play a drag from one point to another, if the browser would drag there.
#[derive(Debug, Clone, Serialize)]
pub struct Html5Drag {
    /// Start.
    pub from_x: f64,
    /// Start.
    pub from_y: f64,
    /// End.
    pub to_x: f64,
    /// End.
    pub to_y: f64,
    /// Moves along the way.
    pub steps: u32,
}

/// `login_form`: find the username, password and submit controls.
#[derive(Debug, Clone, Serialize)]
pub struct LoginForm {
    /// Username field, when detection is not enough.
    pub username_selector: Option<String>,
    /// Password field, when detection is not enough.
    pub password_selector: Option<String>,
    /// Submit control, when detection is not enough.
    pub submit_selector: Option<String>,
}

/// A login form's controls, by ref.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct LoginFields {
    /// The password field.
    pub password: u64,
    /// The username field.
    #[serde(default)]
    pub username: Option<u64>,
    /// The submit control.
    #[serde(default)]
    pub submit: Option<u64>,
    /// Length of the page's text now.
    #[serde(default)]
    pub text_length: u64,
    /// The page's URL.
    #[serde(default)]
    pub url: String,
}

/// `login_state`: where a login attempt stands.
#[derive(Debug, Clone, Serialize)]
pub struct LoginState {
    /// The password field's ref, when there is one.
    pub password: Option<u64>,
    /// Failure when this is visible.
    pub error_selector: Option<String>,
    /// Success when this is visible.
    pub success_selector: Option<String>,
    /// Error texts already on the page before the attempt (not this attempt's).
    pub errors_before: Vec<String>,
}

/// What a login page shows now.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct LoginProgress {
    /// URL.
    #[serde(default)]
    pub url: String,
    /// The password field is still there and visible.
    #[serde(default)]
    pub password_present: bool,
    /// `success_selector` is visible.
    #[serde(default)]
    pub success_selector: bool,
    /// Length of the page's text.
    #[serde(default)]
    pub text_length: u64,
    /// An error message shown, if any.
    #[serde(default)]
    pub error: Option<String>,
    /// Every error text on the page now (lowercase).
    #[serde(default)]
    pub errors_now: Vec<String>,
}

/// `file_input`: find a file input that takes `count` files.
#[derive(Debug, Clone, Serialize)]
pub struct FileInput {
    /// The element (a ref, or a selector with `nth` and `pierce`).
    #[serde(flatten)]
    pub target: ElementAddress,
    /// Which match of the selector, from 0.
    pub nth: usize,
    /// Search every open shadow root too.
    pub pierce: bool,
    /// How many files will be set.
    pub count: usize,
}

/// A file input found.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct FileInputInfo {
    /// Its ref.
    #[serde(rename = "ref")]
    pub element_ref: u64,
    /// It takes several files.
    pub multiple: bool,
    /// Its accept attribute.
    #[serde(default)]
    pub accept: String,
    /// A selector that finds it again.
    #[serde(default)]
    pub selector: String,
}

/// `open_file_chooser`.
#[derive(Debug, Clone, Serialize)]
pub struct OpenFileChooser {
    /// The file input.
    #[serde(flatten)]
    pub target: ElementAddress,
}

/// `file_input_state`.
#[derive(Debug, Clone, Serialize)]
pub struct FileInputState {
    /// The file input.
    #[serde(flatten)]
    pub target: ElementAddress,
}

/// The files an input holds.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct FileList {
    /// How many.
    pub count: usize,
    /// Their names and sizes.
    pub files: Vec<Value>,
}

/// `frame_of`: a child frame by a selector of its iframe.
#[derive(Debug, Clone, Serialize)]
pub struct FrameOf {
    /// A selector of the iframe.
    pub selector: String,
}

/// A child frame's id in its parent document.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct FrameId {
    /// The id.
    pub frame: u32,
}

/// `ax_tree`: the accessibility tree of the document, or of a node's subtree.
#[derive(Debug, Clone, Serialize)]
pub struct AxTree {
    /// The node to start from (its ref, which is its DevTools node id); none: the document.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<u64>,
    /// At most this many nodes.
    pub max_nodes: usize,
}

/// The accessibility tree: Chrome's `AXNode`s, the root first, as the agent built them.
#[derive(Debug, Clone, Deserialize)]
pub struct AxTreeAnswer {
    /// The nodes.
    pub nodes: Vec<Value>,
    /// Whether `max_nodes` cut it short.
    #[serde(default)]
    pub truncated: bool,
}

/// `find`: the elements of a document a locator matches, and its child frames.
#[derive(Debug, Clone, Serialize)]
pub struct Find {
    /// `role`, `text`, `label`, `placeholder`, `alt`, `title` or `testid`.
    pub by: &'static str,
    /// The role, text, label, ... looked for.
    pub value: String,
    /// With `role`: the accessible name looked for.
    pub name: Option<String>,
    /// Whole text, case-sensitive (else a part of it, in any case).
    pub exact: bool,
    /// Matches described at most (the rest are counted).
    pub limit: usize,
}

/// What `find` saw in one document.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Found {
    /// Matches and child frames, in document order.
    #[serde(default)]
    pub items: Vec<FoundItem>,
    /// Matches in this document (beyond `limit` too).
    #[serde(default)]
    pub count: usize,
}

/// A match (`ref`, `role`, `name`, `visible`) or a child frame (`frame`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct FoundItem {
    /// A match's ref.
    #[serde(rename = "ref", default)]
    pub element_ref: Option<u64>,
    /// Its role (or tag name).
    #[serde(default)]
    pub role: String,
    /// Its accessible name.
    #[serde(default)]
    pub name: String,
    /// Whether it is visible.
    #[serde(default)]
    pub visible: bool,
    /// It matched the whole text (in any case), not only a part of it.
    #[serde(default)]
    pub whole: bool,
    /// A child frame's id in this document.
    #[serde(default)]
    pub frame: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names in the assembled agent's `const operations = { ... }` table.
    fn agent_operation_names() -> Vec<String> {
        let source = AGENT_SOURCE;
        let start = source.find("const operations = {").expect("the agent has an operations table");
        let body = &source[start + "const operations = {".len()..];
        let body = &body[..body.find("};").expect("the table ends")];
        let mut names: Vec<String> = body
            .split(',')
            .filter_map(|entry| {
                let entry = entry.trim();
                let name = entry.split(':').next()?.trim();
                (!name.is_empty()).then(|| name.to_string())
            })
            .collect();
        names.sort();
        names
    }

    #[test]
    fn the_enum_and_the_agent_list_the_same_operations() {
        let mut ours: Vec<String> = AgentOp::ALL.iter().map(|op| op.name().to_string()).collect();
        ours.sort();
        assert_eq!(ours, agent_operation_names());
        for op in AgentOp::ALL {
            assert_eq!(serde_json::to_value(op).unwrap(), op.name(), "serde and name() agree");
        }
    }

    #[test]
    fn every_section_file_is_assembled_into_the_agent() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/engine/scripts/agent");
        let mut files: Vec<String> = std::fs::read_dir(&folder)
            .expect("the agent's folder reads")
            .map(|entry| entry.expect("an entry reads").file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        let mut listed: Vec<String> = AGENT_SECTIONS.iter().map(|section| section.to_string()).collect();
        listed.sort();
        assert_eq!(files, listed, "AGENT_SECTIONS lists every file of {} once", folder.display());
        for section in AGENT_SECTIONS {
            let text = std::fs::read_to_string(folder.join(section)).expect("a section reads");
            assert!(text.starts_with("// "), "{section} starts with a comment saying what it holds");
            assert!(text.ends_with('\n'), "{section} ends its last line, so the next section starts a line");
        }
        assert!(AGENT_SOURCE.contains("\n(() => {\n") && AGENT_SOURCE.ends_with("\n})();\n"), "the agent is one function scope");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn agent_scripts_parse() {
        use javascriptcore::{ContextExt, ExceptionExt};
        let context = javascriptcore::Context::new();
        for (name, source) in [("the assembled agent", AGENT_SOURCE), ("observe_light.js", include_str!("scripts/observe_light.js"))] {
            // Compiled inside a function expression that never runs: a syntax check.
            let wrapped = format!("(async function () {{\n{source}\n}});");
            context.evaluate(&wrapped);
            let exception = context.exception().map(|exception| exception.to_str().to_string());
            context.clear_exception();
            assert_eq!(exception, None, "{name} does not parse");
        }
    }
}
