//! Calls into the page: the page agent of a frame (with the session's ref bookkeeping),
//! trusted input, and polling the page until something holds.

use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::ToolContext;
use crate::engine::agent::{AgentOp, AgentRequest};
use crate::engine::{InputEvent, TabRequest};
use crate::error::{Error, ErrorCode, Result};

/// Calls the page agent in a frame of the call's tab, passing the session's ref base and
/// recording the next free ref it reports; the answer is read as the request's output type.
pub(crate) async fn agent<R: AgentRequest>(context: &ToolContext, frame: &[u32], request: &R) -> Result<R::Output> {
    let tabs = &context.session.tabs;
    let mut args = serde_json::to_value(request).map_err(|error| Error::internal(error.to_string()))?;
    args["base"] = json!(tabs.next_ref());
    let result: Value = context.ask(TabRequest::Agent { frame: frame.to_vec(), op: R::OP, args }).await?;
    if let Some(next) = result.get("next_ref").and_then(Value::as_u64) {
        tabs.refs_taken_below(next);
    }
    read_agent_answer(R::OP, result)
}

/// Reads an answer of the page agent (one the contract leaves open, or the whole of one) as
/// the type a tool works with; an answer of another shape is `E_SCRIPT_ERROR`.
pub(crate) fn read_agent_answer<T: DeserializeOwned>(op: AgentOp, answer: Value) -> Result<T> {
    serde_json::from_value(answer)
        .map_err(|error| Error::new(ErrorCode::ScriptError, format!("the page agent's answer to {} is unreadable: {error}", op.name())))
}

/// Delivers trusted input to the call's tab; answers the load mark for [`finish`].
pub(crate) async fn input(context: &ToolContext, events: Vec<InputEvent>) -> Result<u64> {
    context.ask(TabRequest::Input { events }).await
}

/// Polls `probe` every 50 ms until it answers `Some`, or `timeout` passes.
pub(crate) async fn poll<T, F, Fut>(timeout: Duration, mut probe: F) -> Result<Option<T>>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>>>,
{
    let begun = Instant::now();
    loop {
        if let Some(found) = probe().await? {
            return Ok(Some(found));
        }
        if begun.elapsed() >= timeout {
            return Ok(None);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
