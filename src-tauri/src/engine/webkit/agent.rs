//! Calling the page agent (`engine/scripts/agent/`) in any frame of a tab.
//!
//! The main frame is called directly in the isolated world. A child frame is reached by
//! asking the main frame's agent to relay the operation down the frame tree; the child's
//! agent answers through the world's private script message handler, which lands in
//! [`Relay::deliver`] and wakes the waiting call.

use std::time::Duration;

use serde_json::{json, Value};

use super::tab::{Tab, TabScripts};
use crate::engine::agent::{AgentOp, AGENT_SOURCE};
use crate::error::{Error, ErrorCode, Result};

/// How long a child frame may take to answer a relayed operation.
const FRAME_TIMEOUT: Duration = Duration::from_secs(5);

/// The page-world hook's source (console lines, XHR starts), with its channel still to be
/// filled in.
const PAGE_WORLD_SOURCE: &str = include_str!("../scripts/page_world.js");

/// A new tab's scripts: the agent and the page-world hook, with a fresh relay secret and
/// channel.
pub(super) fn tab_scripts() -> TabScripts {
    let channel = format!("malo-{}", crate::secret::random_hex(8));
    let nodes = format!("malo-{}", crate::secret::random_hex(8));
    TabScripts { agent: agent_source(&crate::secret::random_hex(16), &channel, &nodes), page_world: page_world_source(&channel), nodes }
}

/// The agent source for a tab: its relay secret, its channel from the page-world hook, and
/// the type of the node events the DevTools runtime sends it.
fn agent_source(secret: &str, channel: &str, nodes: &str) -> String {
    AGENT_SOURCE.replace("__MALO_SECRET__", secret).replace("__MALO_CHANNEL__", channel).replace("__MALO_NODES__", nodes)
}

/// The page-world hook for a tab. The channel is not a secret (the page can read this
/// script): a page that forges a message only adds lines to its own console log.
fn page_world_source(channel: &str) -> String {
    PAGE_WORLD_SOURCE.replace("__MALO_CHANNEL__", channel)
}

/// What the main frame answers when its document has no agent yet.
const MISSING_AGENT: &str = "missing_agent";

/// Runs `op` with `args` in the frame at `frame` (empty = main frame).
pub(super) async fn call(tab: &Tab, frame: &[u32], op: AgentOp, args: &Value) -> Result<Value> {
    tab.ensure_open()?;
    let op = op.name();
    let answer = if frame.is_empty() {
        let call = format!("return __malo.run({}, {});", json!(op), args);
        let guarded = format!("if (!globalThis.__malo) return {};\n{call}", json!({ MISSING_AGENT: true }));
        match tab.evaluate(&guarded).await? {
            answer if answer.get(MISSING_AGENT) == Some(&Value::Bool(true)) => {
                // A document that began before the agent was installed: install it now.
                tab.evaluate(&format!("{}\n{call}", tab.agent_source)).await?
            }
            answer => answer,
        }
    } else {
        relay(tab, frame, op, args).await?
    };
    unwrap_answer(answer)
}

async fn relay(tab: &Tab, frame: &[u32], op: &str, args: &Value) -> Result<Value> {
    let (id, receiver) = tab.relay.open_call();
    let body = format!("return __malo.send({}, {}, {}, {id});", json!(frame), json!(op), args);
    let sent = match tab.evaluate(&body).await {
        Ok(sent) => sent,
        Err(error) => {
            tab.relay.cancel(id);
            return Err(error);
        }
    };
    if sent.get("ok") != Some(&Value::Bool(true)) {
        tab.relay.cancel(id);
        return Ok(sent);
    }
    tokio::select! {
        answer = receiver => answer.map_err(|_| Error::new(ErrorCode::EngineUnavailable, "the tab closed")),
        () = super::engine_time(FRAME_TIMEOUT) => {
            tab.relay.cancel(id);
            Err(Error::new(ErrorCode::Timeout, "the frame did not answer; it may be navigating or blocked"))
        }
    }
}

/// `{ok:true, result}` -> result; `{ok:false, error:{code,message,details}}` -> Error.
fn unwrap_answer(answer: Value) -> Result<Value> {
    if answer.get("ok") == Some(&Value::Bool(true)) {
        return Ok(answer.get("result").cloned().unwrap_or(Value::Null));
    }
    let error = answer.get("error").cloned().unwrap_or_default();
    let code = error.get("code").and_then(Value::as_str).and_then(ErrorCode::from_wire).unwrap_or(ErrorCode::ScriptError);
    let message = error.get("message").and_then(Value::as_str).unwrap_or("the page agent failed").to_string();
    let details = error.get("details").cloned().filter(Value::is_object).unwrap_or_else(|| json!({}));
    Err(Error::new(code, message).with_details(details))
}
