//! Waiting: `wait_for` (a selector or a text reaching a state; it holds no lock, so other
//! calls on the tab go on) and `sleep`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::limits::{SLEEP_MS, WAIT_FOR_TIMEOUT_MS};
use super::outcome::act;
use super::page_agent::{agent, poll};
use super::{Positional, Tool, ToolContext};
use crate::engine::agent::Probe;
use crate::error::{Error, ErrorCode, Result};

/// What `wait_for` waits for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum WaitState {
    /// Present and visible (default).
    #[default]
    Visible,
    /// Absent or not visible.
    Hidden,
    /// Present in the DOM.
    Attached,
    /// Absent from the DOM.
    Detached,
}

/// Input of `wait_for`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WaitForInput {
    /// A CSS selector to wait for.
    #[serde(default)]
    selector: Option<String>,
    /// Or text to wait for in the page (inside `selector` when both are given).
    #[serde(default)]
    text: Option<String>,
    /// `visible` (default), `hidden`, `attached` or `detached`.
    #[serde(default)]
    state: WaitState,
    /// How long to wait in ms (default 5000, max 120000).
    #[serde(default)]
    #[schemars(range(max = WAIT_FOR_TIMEOUT_MS.max))]
    timeout_ms: Option<u64>,
}

/// Output of `wait_for`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct WaitForOutput {
    /// `wait_for`.
    action: &'static str,
    /// Always true: a condition that did not hold in time is `E_TIMEOUT`.
    ok: bool,
    /// How long the wait took.
    waited_ms: u64,
}

async fn wait_for(context: ToolContext, input: WaitForInput) -> Result<WaitForOutput> {
    if input.selector.is_none() && input.text.is_none() {
        return Err(Error::bad_request("give a selector or a text"));
    }
    let timeout = WAIT_FOR_TIMEOUT_MS.millis(input.timeout_ms, "timeout_ms")?;
    let begun = std::time::Instant::now();
    let probe_request = Probe { selector: input.selector.clone(), text: input.text.clone() };
    let state = input.state;
    let found = poll(timeout, || {
        let context = context.clone();
        let probe_request = probe_request.clone();
        async move {
            let probe = match agent(&context, &[], &probe_request).await {
                Ok(probe) => probe,
                // The page may be between documents: try again.
                Err(error) if matches!(error.code, ErrorCode::ScriptError | ErrorCode::EngineUnavailable) => return Ok(None),
                Err(error) => return Err(error),
            };
            let text_ok = probe.text_found.unwrap_or(true);
            let present = probe.exists.unwrap_or(true);
            let visible = probe.visible.unwrap_or(true);
            let done = match state {
                WaitState::Visible => present && visible && text_ok,
                WaitState::Attached => present && text_ok,
                WaitState::Hidden => !(present && visible && text_ok),
                WaitState::Detached => !(present && text_ok),
            };
            Ok(done.then_some(probe))
        }
    })
    .await?;
    match found {
        Some(_) => Ok(WaitForOutput { action: "wait_for", ok: true, waited_ms: begun.elapsed().as_millis() as u64 }),
        None => Err(Error::new(ErrorCode::Timeout, format!("waited {} ms and the condition did not hold", timeout.as_millis()))
            .with_details(json!({ "selector": input.selector, "text": input.text, "state": format!("{state:?}").to_lowercase() }))),
    }
}

/// `wait_for`. Waiting only looks at the page: other calls on the tab go on meanwhile.
pub(super) fn wait_for_tool() -> Tool {
    Tool::tab(
        "wait_for",
        "Wait until a selector or a text is visible (or hidden, attached, detached), up to timeout_ms. Does not hold up other calls on the tab.",
        |context: ToolContext, input: WaitForInput| act(context, "wait_for", move |context| wait_for(context, input)),
    )
    .positional(&[Positional::Field("text")])
}

/// Input of `sleep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SleepInput {
    /// Milliseconds to wait (max 60000).
    #[schemars(range(max = SLEEP_MS.max))]
    ms: u64,
}

/// Output of `sleep`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct SleepOutput {
    /// `sleep`.
    action: &'static str,
    /// Always true.
    ok: bool,
    /// How long it slept, as asked.
    slept_ms: u64,
}

async fn sleep(_context: ToolContext, input: SleepInput) -> Result<SleepOutput> {
    let duration = SLEEP_MS.millis(Some(input.ms), "ms")?;
    tokio::time::sleep(duration).await;
    Ok(SleepOutput { action: "sleep", ok: true, slept_ms: input.ms })
}

/// `sleep`.
pub(super) fn sleep_tool() -> Tool {
    Tool::session("sleep", "Wait a number of milliseconds.", sleep).positional(&[Positional::Field("ms")])
}
