//! `assert`: an AND of checks (visible, hidden, text, value, url, count) retried until all
//! hold or `timeout_ms` passes. A failed assertion is a verdict, not a fault: HTTP 200
//! with `result.ok = false`, the checks, and a screenshot in `artifacts/`.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::limits::ASSERT_TIMEOUT_MS;
use super::outcome::failure_screenshot;
use super::page_agent::agent;
use super::{Tool, ToolContext};
use crate::engine::agent::{Probe, ProbeState};
use crate::error::{Error, ErrorCode, Result};

/// Input of `assert`. Every given check must hold.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AssertInput {
    /// A selector that must be visible.
    #[serde(default)]
    visible: Option<String>,
    /// A selector that must be hidden or absent.
    #[serde(default)]
    hidden: Option<String>,
    /// Text the page (or `selector`) must contain.
    #[serde(default)]
    text: Option<String>,
    /// The value `selector` must have.
    #[serde(default)]
    value: Option<String>,
    /// A substring of the page URL.
    #[serde(default)]
    url: Option<String>,
    /// How many elements match `selector`.
    #[serde(default)]
    count: Option<u64>,
    /// Scope of `text`, target of `value` and `count`.
    #[serde(default)]
    selector: Option<String>,
    /// Retry until this many ms have passed (default 5000, max 60000).
    #[serde(default)]
    #[schemars(range(max = ASSERT_TIMEOUT_MS.max))]
    timeout_ms: Option<u64>,
}

pub(super) fn tool() -> Tool {
    Tool::page(
        "assert",
        "Check the page: visible/hidden selectors, text (in the page or in selector), a selector's value, URL substring, count of selector matches; all must hold, retried up to timeout_ms. A failed assertion answers 200 with result.ok=false, the checks and a screenshot path.",
        |context: ToolContext, input: AssertInput| async move {
            if (input.value.is_some() || input.count.is_some()) && input.selector.is_none() {
                return Err(Error::bad_request("value and count need a selector"));
            }
            if [input.visible.is_some(), input.hidden.is_some(), input.text.is_some(), input.value.is_some(), input.url.is_some(), input.count.is_some()]
                .iter()
                .all(|given| !given)
            {
                return Err(Error::bad_request("give at least one check: visible, hidden, text, value, url or count"));
            }
            let timeout = ASSERT_TIMEOUT_MS.millis(input.timeout_ms, "timeout_ms")?;
            run(&context, &input, timeout).await
        },
    )
}

async fn run(context: &ToolContext, input: &AssertInput, timeout: Duration) -> Result<Value> {
    let begun = Instant::now();
    loop {
        let (checks, url) = evaluate(context, input).await?;
        let passed = checks.iter().all(|check| check["ok"] == Value::Bool(true));
        let waited_ms = begun.elapsed().as_millis() as u64;
        if passed {
            return Ok(json!({ "ok": true, "passed": true, "checks": checks, "url": url, "waited_ms": waited_ms }));
        }
        if begun.elapsed() >= timeout {
            let screenshot = failure_screenshot(context, "assert").await.ok();
            let failed: Vec<String> = checks
                .iter()
                .filter(|check| check["ok"] != Value::Bool(true))
                .map(|check| format!("{} expected {}, got {}", check["kind"].as_str().unwrap_or(""), check["expected"], check["actual"]))
                .collect();
            let message = format!("{}: assertion failed: {}", ErrorCode::AssertionFailed.as_str(), failed.join("; "));
            return Ok(json!({
                "ok": false, "passed": false, "checks": checks, "url": url, "waited_ms": waited_ms, "screenshot": screenshot,
                "error": { "code": ErrorCode::AssertionFailed.as_str(), "message": message,
                    "details": { "checks": checks, "waited_ms": waited_ms, "screenshotPath": screenshot } },
            }));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn probe(context: &ToolContext, selector: Option<&str>, text: Option<&str>) -> Result<ProbeState> {
    let request = Probe { selector: selector.map(str::to_string), text: text.map(str::to_string) };
    match agent(context, &[], &request).await {
        // Between documents the agent may be missing for a moment: count as "not yet".
        Err(error) if error.code == ErrorCode::ScriptError => Ok(ProbeState::default()),
        other => other,
    }
}

async fn evaluate(context: &ToolContext, input: &AssertInput) -> Result<(Vec<Value>, String)> {
    let mut checks = Vec::new();
    let mut url = String::new();
    if let Some(selector) = &input.visible {
        let found = probe(context, Some(selector), None).await?;
        let actual = found.visible == Some(true);
        checks.push(json!({ "kind": "visible", "selector": selector, "expected": true, "actual": actual, "ok": actual }));
    }
    if let Some(selector) = &input.hidden {
        let found = probe(context, Some(selector), None).await?;
        let actual = found.visible != Some(true);
        checks.push(json!({ "kind": "hidden", "selector": selector, "expected": true, "actual": actual, "ok": actual }));
    }
    let scoped = input.selector.as_deref();
    if let Some(text) = &input.text {
        let found = probe(context, scoped, Some(text)).await?;
        let ok = found.text_found == Some(true) && (scoped.is_none() || found.exists == Some(true));
        let actual = if ok { json!(text) } else { json!(found.text) };
        checks.push(json!({ "kind": "text", "expected": text, "actual": actual, "ok": ok }));
    }
    if let (Some(value), Some(selector)) = (&input.value, scoped) {
        let found = probe(context, Some(selector), None).await?;
        let actual = json!(found.value);
        let expected = if actual == json!("[redacted]") { json!("[redacted]") } else { json!(value) };
        let ok = actual.as_str() == Some(value.as_str());
        checks.push(json!({ "kind": "value", "selector": selector, "expected": expected, "actual": actual, "ok": ok }));
    }
    if let (Some(count), Some(selector)) = (input.count, scoped) {
        let found = probe(context, Some(selector), None).await?;
        let actual = found.count.unwrap_or(0);
        checks.push(json!({ "kind": "count", "selector": selector, "expected": count, "actual": actual, "ok": actual == count }));
    }
    let located = probe(context, None, None).await?;
    if !located.url.is_empty() {
        url = located.url;
    }
    if let Some(expected) = &input.url {
        let ok = url.contains(expected.as_str());
        checks.push(json!({ "kind": "url", "expected": expected, "actual": url, "ok": ok }));
    }
    Ok((checks, url))
}
