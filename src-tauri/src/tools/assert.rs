//! `assert`: an AND of checks (visible, hidden, text, value, url, count) retried until all
//! hold or `timeout_ms` passes. A failed assertion is a verdict, not a fault: HTTP 200
//! with `result.ok = false`, the checks, and a screenshot in `artifacts/`.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
        "Check the page's selectors, text, values, URL and counts, retried up to timeout_ms. Visible/hidden selectors, text (in the page or in selector), a selector's value, URL substring, count of selector matches; all must hold. A failed assertion answers 200 with result.ok=false, the checks and a screenshot path.",
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

/// Output of `assert`: the verdict and every check.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct AssertOutput {
    /// Whether every check held (a failed assertion is an answer, not an error).
    ok: bool,
    /// The same as `ok`.
    passed: bool,
    /// Each check, as last evaluated.
    checks: Vec<AssertCheck>,
    /// The page's URL.
    url: String,
    /// How long the checks were retried.
    waited_ms: u64,
    /// When a check failed: the screenshot and the error.
    #[serde(flatten)]
    failure: Option<AssertFailure>,
}

/// What a failed assertion adds to its answer.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct AssertFailure {
    /// A screenshot of the moment in `artifacts/` (null if it could not be taken).
    screenshot: Option<String>,
    /// The failure as an error body (`E_ASSERTION_FAILED`).
    error: AssertError,
}

/// A failed assertion, in the shape of an error body.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct AssertError {
    /// `E_ASSERTION_FAILED`.
    code: &'static str,
    /// Which checks failed, expected and got.
    message: String,
    /// The checks, the wait and the screenshot.
    details: AssertErrorDetails,
}

/// The details of a failed assertion.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct AssertErrorDetails {
    /// Each check, as last evaluated.
    checks: Vec<AssertCheck>,
    /// How long the checks were retried.
    waited_ms: u64,
    /// The screenshot (null if it could not be taken).
    #[serde(rename = "screenshotPath")]
    screenshot_path: Option<String>,
}

/// What a check looks at.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CheckKind {
    /// A selector is visible.
    Visible,
    /// A selector is hidden or absent.
    Hidden,
    /// The page (or `selector`) contains a text.
    Text,
    /// A selector's value.
    Value,
    /// How many elements match a selector.
    Count,
    /// A substring of the URL.
    Url,
}

/// One check of an assertion.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct AssertCheck {
    /// What it looks at.
    kind: CheckKind,
    /// The selector it looks at (visible, hidden, value, count).
    #[serde(skip_serializing_if = "Option::is_none")]
    selector: Option<String>,
    /// What was expected.
    expected: CheckValue,
    /// What the page had (the text found, or the element's text when it was not).
    actual: CheckValue,
    /// Whether it held.
    ok: bool,
}

/// A check's expected or actual value.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum CheckValue {
    /// visible, hidden.
    Flag(bool),
    /// count.
    Count(u64),
    /// text, value, url (null: nothing there).
    Text(Option<String>),
}

impl std::fmt::Display for CheckValue {
    /// As JSON, the way the failure message shows it.
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&serde_json::to_string(self).unwrap_or_default())
    }
}

async fn run(context: &ToolContext, input: &AssertInput, timeout: Duration) -> Result<AssertOutput> {
    let begun = Instant::now();
    loop {
        let (checks, url) = evaluate(context, input).await?;
        let passed = checks.iter().all(|check| check.ok);
        let waited_ms = begun.elapsed().as_millis() as u64;
        if passed {
            return Ok(AssertOutput { ok: true, passed: true, checks, url, waited_ms, failure: None });
        }
        if begun.elapsed() >= timeout {
            let screenshot = failure_screenshot(context, "assert").await.ok();
            let failed: Vec<String> = checks
                .iter()
                .filter(|check| !check.ok)
                .map(|check| format!("{} expected {}, got {}", check.kind.name(), check.expected, check.actual))
                .collect();
            let message = format!("{}: assertion failed: {}", ErrorCode::AssertionFailed.as_str(), failed.join("; "));
            let details = AssertErrorDetails { checks: checks.clone(), waited_ms, screenshot_path: screenshot.clone() };
            let error = AssertError { code: ErrorCode::AssertionFailed.as_str(), message, details };
            let failure = Some(AssertFailure { screenshot, error });
            return Ok(AssertOutput { ok: false, passed: false, checks, url, waited_ms, failure });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

impl CheckKind {
    /// Its name in answers.
    fn name(self) -> &'static str {
        match self {
            CheckKind::Visible => "visible",
            CheckKind::Hidden => "hidden",
            CheckKind::Text => "text",
            CheckKind::Value => "value",
            CheckKind::Count => "count",
            CheckKind::Url => "url",
        }
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

async fn evaluate(context: &ToolContext, input: &AssertInput) -> Result<(Vec<AssertCheck>, String)> {
    let mut checks = Vec::new();
    let mut url = String::new();
    let check =
        |kind, selector: Option<&String>, expected, actual, ok| AssertCheck { kind, selector: selector.cloned(), expected, actual, ok };
    if let Some(selector) = &input.visible {
        let found = probe(context, Some(selector), None).await?;
        let actual = found.visible == Some(true);
        checks.push(check(CheckKind::Visible, Some(selector), CheckValue::Flag(true), CheckValue::Flag(actual), actual));
    }
    if let Some(selector) = &input.hidden {
        let found = probe(context, Some(selector), None).await?;
        let actual = found.visible != Some(true);
        checks.push(check(CheckKind::Hidden, Some(selector), CheckValue::Flag(true), CheckValue::Flag(actual), actual));
    }
    let scoped = input.selector.as_deref();
    if let Some(text) = &input.text {
        let found = probe(context, scoped, Some(text)).await?;
        let ok = found.text_found == Some(true) && (scoped.is_none() || found.exists == Some(true));
        let actual = if ok { Some(text.clone()) } else { found.text };
        checks.push(check(CheckKind::Text, None, CheckValue::Text(Some(text.clone())), CheckValue::Text(actual), ok));
    }
    if let (Some(value), Some(selector)) = (&input.value, &input.selector) {
        let found = probe(context, Some(selector), None).await?;
        let redacted = found.value.as_deref() == Some("[redacted]");
        let expected = if redacted { "[redacted]".to_string() } else { value.clone() };
        let ok = found.value.as_deref() == Some(value.as_str());
        checks.push(check(CheckKind::Value, Some(selector), CheckValue::Text(Some(expected)), CheckValue::Text(found.value), ok));
    }
    if let (Some(count), Some(selector)) = (input.count, &input.selector) {
        let found = probe(context, Some(selector), None).await?;
        let actual = found.count.unwrap_or(0);
        checks.push(check(CheckKind::Count, Some(selector), CheckValue::Count(count), CheckValue::Count(actual), actual == count));
    }
    let located = probe(context, None, None).await?;
    if !located.url.is_empty() {
        url = located.url;
    }
    if let Some(expected) = &input.url {
        let ok = url.contains(expected.as_str());
        let (expected, actual) = (CheckValue::Text(Some(expected.clone())), CheckValue::Text(Some(url.clone())));
        checks.push(check(CheckKind::Url, None, expected, actual, ok));
    }
    Ok((checks, url))
}
