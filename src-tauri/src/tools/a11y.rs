//! `a11y`: an accessibility audit of the page with axe-core's rules (WCAG and best
//! practices). axe runs in the isolated world, where the page agent lives: the page's own
//! scripts never see it (no `window.axe` there) and cannot change what it reads. The
//! version `src-tauri/axe/package.json` pins is installed by scripts/setup.sh and bundled
//! at build time (`build.rs`); a build without it answers `E_UNSUPPORTED`. The main
//! frame is audited (frames are not entered).

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::page_agent::{agent, poll};
use super::{Positional, Tool, ToolContext};
use crate::engine::agent::{ElementAddress, Locate};
use crate::engine::TabRequest;
use crate::error::{Error, ErrorCode, Result};

/// axe-core's `axe.min.js`, or nothing when the build found none.
const AXE: &str = include_str!(concat!(env!("OUT_DIR"), "/axe.min.js"));

/// How long an audit may run.
const AUDIT_TIMEOUT: Duration = Duration::from_secs(60);

/// Nodes listed per violation (the rest are counted).
const NODES_PER_RULE: usize = 10;

/// Nodes given a ref at most, over all violations.
const REFS_AT_MOST: usize = 50;

/// Input of `a11y`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct A11yInput {
    /// Only this part of the page: a CSS selector (default: the whole document).
    #[serde(default)]
    selector: Option<String>,
    /// Only rules with these axe tags: wcag2a, wcag2aa, best-practice, ... (default: axe's
    /// default rules).
    #[serde(default)]
    tags: Vec<String>,
}

/// Output of `a11y`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct A11yOutput {
    /// The page audited.
    url: String,
    /// The rules' engine and version (`axe-core 4.14.1`).
    engine: String,
    /// Each rule the page breaks, most severe first.
    violations: Vec<Violation>,
    /// Rules the page passes.
    passes: u64,
    /// Rules axe could not decide (a person should check).
    incomplete: u64,
}

/// One rule the page breaks.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub(crate) struct Violation {
    /// axe's rule id (e.g. `image-alt`).
    id: String,
    /// `critical`, `serious`, `moderate` or `minor`.
    impact: Option<String>,
    /// What the rule asks.
    help: String,
    /// Elements that break it.
    count: usize,
    /// The first of them (up to 10).
    nodes: Vec<ViolationNode>,
}

/// An element that breaks a rule.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub(crate) struct ViolationNode {
    /// A CSS selector of it (` >>> ` steps into a shadow root).
    selector: String,
    /// Its ref, for actions and snapshot's scope.
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    element_ref: Option<String>,
    /// Its start tag (cut at 80 characters).
    html: String,
}

/// What the page's audit answered.
#[derive(Debug, Deserialize)]
struct Audit {
    url: String,
    violations: Vec<Violation>,
    passes: u64,
    incomplete: u64,
}

/// Where the isolated world keeps the audit under way.
const STATE: &str = "globalThis.__maloAudit";

pub(super) fn tool() -> Tool {
    Tool::page(
        "a11y",
        "Accessibility audit with axe-core (WCAG rules): violations with rule id, impact, help and elements (selector, ref).",
        |context: ToolContext, input: A11yInput| async move { audit(&context, input).await },
    )
    .positional(&[Positional::Field("selector")])
}

async fn audit(context: &ToolContext, input: A11yInput) -> Result<A11yOutput> {
    if AXE.is_empty() {
        return Err(Error::new(
            ErrorCode::Unsupported,
            "a11y needs axe-core, which this build does not bundle: run scripts/setup.sh (it installs the pinned version) and build again",
        ));
    }
    if input.tags.iter().any(|tag| tag.trim().is_empty()) {
        return Err(Error::bad_request("tags: a tag is empty").with_details(json!({ "field": "tags" })));
    }
    let version = load(context).await?;
    let args = json!({ "selector": input.selector, "tags": input.tags });
    let started: Value = context.ask(TabRequest::Evaluate { body: start_body(&args) }).await?;
    if started == json!("missing") {
        let selector = input.selector.unwrap_or_default();
        return Err(Error::new(ErrorCode::NotFound, format!("selector: no element matches {selector:?}"))
            .with_details(json!({ "field": "selector", "selector": selector })));
    }
    let read = format!("const state = {STATE}; return state && state.done ? {{ result: state.result, error: state.error }} : null;");
    let finished = poll(AUDIT_TIMEOUT, || async {
        let state: Value = context.ask(TabRequest::Evaluate { body: read.clone() }).await?;
        Ok((!state.is_null()).then_some(state))
    })
    .await?
    .ok_or_else(|| Error::new(ErrorCode::Timeout, format!("the audit did not finish within {} s", AUDIT_TIMEOUT.as_secs())))?;
    if let Some(error) = finished["error"].as_str() {
        if !input.tags.is_empty() && error.contains("tag") {
            return Err(Error::bad_request(format!("tags: {error}")).with_details(json!({ "field": "tags" })));
        }
        return Err(Error::new(ErrorCode::ScriptError, format!("axe failed: {error}")));
    }
    let mut audit: Audit = serde_json::from_value(finished["result"].clone())
        .map_err(|error| Error::new(ErrorCode::ScriptError, format!("the audit's answer is unreadable: {error}")))?;
    give_refs(context, &mut audit.violations).await;
    Ok(A11yOutput {
        url: audit.url,
        engine: format!("axe-core {version}"),
        violations: audit.violations,
        passes: audit.passes,
        incomplete: audit.incomplete,
    })
}

/// Loads axe into the isolated world of the page, unless it is there; answers its version.
async fn load(context: &ToolContext) -> Result<String> {
    const VERSION: &str = "return typeof axe === 'object' && typeof axe.run === 'function' ? axe.version : null;";
    let present: Value = context.ask(TabRequest::Evaluate { body: VERSION.into() }).await?;
    if let Some(version) = present.as_str() {
        return Ok(version.to_string());
    }
    let loaded: Value = context.ask(TabRequest::Evaluate { body: format!("{AXE}\n;{VERSION}") }).await?;
    loaded.as_str().map(str::to_string).ok_or_else(|| Error::new(ErrorCode::ScriptError, "axe-core did not load in the page"))
}

/// Starts an audit (after one still under way): `missing` when the selector matches
/// nothing.
fn start_body(args: &Value) -> String {
    format!(
        r#"const args = {args};
const previous = {STATE};
if (previous && !previous.done) await Promise.race([previous.promise, new Promise((done) => setTimeout(done, 8000))]);
if (args.selector && !document.querySelector(args.selector)) return 'missing';
const selectorOf = (target) => target.map((part) => Array.isArray(part) ? part.join(' >>> ') : String(part)).join(' >>> ');
const startTag = (html) => {{ const tag = String(html).split('>')[0] + '>'; return tag.length > 80 ? tag.slice(0, 79) + '…' : tag; }};
const order = {{ critical: 0, serious: 1, moderate: 2, minor: 3 }};
const options = {{ iframes: false, resultTypes: ['violations'] }};
if (args.tags.length) options.runOnly = {{ type: 'tag', values: args.tags }};
const state = {{ done: false }};
state.promise = axe.run(args.selector ? {{ include: [args.selector] }} : document, options).then((results) => {{
  state.result = {{
    url: results.url,
    violations: results.violations
      .map((rule) => ({{ id: rule.id, impact: rule.impact || null, help: rule.help, count: rule.nodes.length,
        nodes: rule.nodes.slice(0, {NODES_PER_RULE}).map((node) => ({{ selector: selectorOf(node.target), html: startTag(node.html) }})) }}))
      .sort((a, b) => (order[a.impact] ?? 4) - (order[b.impact] ?? 4)),
    passes: results.passes.length,
    incomplete: results.incomplete.length,
  }};
  state.done = true;
}}, (error) => {{ state.error = String((error && error.message) || error); state.done = true; }});
{STATE} = state;
return 'started';"#
    )
}

/// Gives the first listed elements their refs (the page agent's, as snapshot's), where the
/// selector still finds one.
async fn give_refs(context: &ToolContext, violations: &mut [Violation]) {
    let nodes = violations.iter_mut().flat_map(|violation| violation.nodes.iter_mut()).take(REFS_AT_MOST);
    for node in nodes {
        let request =
            Locate { target: ElementAddress { element_ref: None, selector: Some(node.selector.clone()) }, scroll: false, stable: false };
        if let Ok(info) = agent(context, &[], &request).await {
            node.element_ref = Some(format!("e{}", info.element_ref));
        }
    }
}
