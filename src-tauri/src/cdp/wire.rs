//! The protocol's messages: a command as a client sends it, the error shapes Chrome
//! answers with (clients match on their text), and the outbox every answer and event of
//! a connection goes through, in order.

use serde::Deserialize;
use serde_json::{json, Map, Value};
use tokio::sync::mpsc;

/// One command from a client.
#[derive(Debug, Deserialize)]
pub struct Command {
    /// The client's id for it (answers carry it back).
    pub id: u64,
    /// `Domain.method`.
    pub method: String,
    /// Its parameters (`{}` when absent).
    #[serde(default)]
    pub params: Value,
    /// The attached session it addresses; none: the browser.
    #[serde(rename = "sessionId", default)]
    pub session_id: Option<String>,
}

/// An error as the protocol answers it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProtocolError {
    /// JSON-RPC code: -32601 unknown method, -32602 bad parameters, -32000 anything else.
    pub code: i64,
    /// Chrome's text where clients match on it.
    pub message: String,
}

impl ProtocolError {
    /// A method this endpoint does not serve, in Chrome's words (clients skip these).
    pub fn not_found(method: &str) -> ProtocolError {
        ProtocolError { code: -32601, message: format!("'{method}' wasn't found") }
    }

    /// Parameters that do not fit the method.
    pub fn invalid(message: impl Into<String>) -> ProtocolError {
        ProtocolError { code: -32602, message: message.into() }
    }

    /// Anything else that failed.
    pub fn server(message: impl Into<String>) -> ProtocolError {
        ProtocolError { code: -32000, message: message.into() }
    }
}

impl From<crate::error::Error> for ProtocolError {
    fn from(error: crate::error::Error) -> ProtocolError {
        ProtocolError::server(format!("{}: {}", error.code.as_str(), error.message))
    }
}

/// What a handler answers.
pub type Reply = Result<Value, ProtocolError>;

/// Reads parameters into `T`, or answers -32602 saying why.
pub fn params<T: serde::de::DeserializeOwned>(params: &Value) -> Result<T, ProtocolError> {
    let params = if params.is_null() { json!({}) } else { params.clone() };
    serde_json::from_value(params).map_err(|error| ProtocolError::invalid(format!("Invalid parameters: {error}")))
}

/// Where a connection's answers and events go, in the order they are put.
#[derive(Debug, Clone)]
pub struct Outbox {
    sender: mpsc::UnboundedSender<String>,
}

impl Outbox {
    /// An outbox and the receiving end the socket writer drains.
    pub fn new() -> (Outbox, mpsc::UnboundedReceiver<String>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (Outbox { sender }, receiver)
    }

    /// Answers command `id` (of `session`, if any).
    pub fn answer(&self, id: u64, session: Option<&str>, reply: Reply) {
        let mut message = Map::new();
        message.insert("id".into(), json!(id));
        match reply {
            Ok(result) => message.insert("result".into(), if result.is_null() { json!({}) } else { result }),
            Err(error) => message.insert("error".into(), json!({ "code": error.code, "message": error.message })),
        };
        if let Some(session) = session {
            message.insert("sessionId".into(), json!(session));
        }
        self.put(Value::Object(message));
    }

    /// Sends event `method` (on `session`, if any).
    pub fn event(&self, session: Option<&str>, method: &str, params: Value) {
        let mut message = Map::new();
        message.insert("method".into(), json!(method));
        message.insert("params".into(), params);
        if let Some(session) = session {
            message.insert("sessionId".into(), json!(session));
        }
        self.put(Value::Object(message));
    }

    /// Whether the connection is gone.
    pub fn is_closed(&self) -> bool {
        self.sender.is_closed()
    }

    fn put(&self, message: Value) {
        // A closed connection drops what is left to say.
        let _ = self.sender.send(message.to_string());
    }
}

/// Seconds since the epoch, as the protocol's timestamps and wall times are.
pub fn now_seconds() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|elapsed| elapsed.as_secs_f64()).unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_and_events_carry_the_session_and_chromes_error_text() {
        let (outbox, mut written) = Outbox::new();
        outbox.answer(3, Some("S1"), Err(ProtocolError::not_found("Nope.never")));
        outbox.answer(4, None, Ok(Value::Null));
        outbox.event(Some("S1"), "Page.loadEventFired", json!({ "timestamp": 1.0 }));
        let first: Value = serde_json::from_str(&written.try_recv().unwrap()).unwrap();
        assert_eq!(first, json!({ "id": 3, "sessionId": "S1", "error": { "code": -32601, "message": "'Nope.never' wasn't found" } }));
        let second: Value = serde_json::from_str(&written.try_recv().unwrap()).unwrap();
        assert_eq!(second, json!({ "id": 4, "result": {} }), "an empty result is {{}}, never null");
        let third: Value = serde_json::from_str(&written.try_recv().unwrap()).unwrap();
        assert_eq!(third["sessionId"], "S1");
    }

    #[test]
    fn a_command_without_params_or_session_reads() {
        let command: Command = serde_json::from_str(r#"{"id":1,"method":"Browser.getVersion"}"#).unwrap();
        assert_eq!((command.id, command.method.as_str(), command.session_id), (1, "Browser.getVersion", None));
        assert!(params::<Value>(&command.params).is_ok());
    }
}
