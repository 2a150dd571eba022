//! The tool registry: every tool is defined once (name, description, input type whose
//! JSON Schema is generated from the Rust type, handler). The HTTP API serves it; the
//! MCP server and the CLI are generated from it, so nothing about a tool may live only
//! in an HTTP handler.
//!
//! Handlers are plain async Rust: they know sessions and the engine, not HTTP.

mod actions;
mod assert;
mod close;
mod dialog;
mod events;
mod history;
mod login;
mod navigate;
mod observe;
pub(crate) mod page;
mod profiles;
mod read;
mod run_steps;
mod snapshot;
mod watch;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use crate::error::{Error, ErrorCode, Result};
use crate::session::{Session, SessionTable};

/// What a tool call runs against.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The session the call addresses.
    pub session: Arc<Session>,
    /// The lease's sessions (for `close`).
    pub sessions: Arc<SessionTable>,
    /// The registry itself (for `run_steps`).
    pub registry: Arc<ToolRegistry>,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type Handler = Arc<dyn Fn(ToolContext, Value) -> BoxFuture<Result<Value>> + Send + Sync>;

/// One tool.
#[derive(Clone)]
pub struct Tool {
    /// Stable name, e.g. `navigate`.
    pub name: &'static str,
    /// What it does, for models and people.
    pub description: &'static str,
    /// JSON Schema of its input.
    pub input_schema: Value,
    handler: Handler,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Tool").field("name", &self.name).finish_non_exhaustive()
    }
}

impl Tool {
    /// A tool whose input is `Input`, parsed (strictly) from the call's JSON.
    pub fn new<Input, Output, Handle, Fut>(name: &'static str, description: &'static str, handle: Handle) -> Tool
    where
        Input: DeserializeOwned + JsonSchema + Send + 'static,
        Output: Serialize,
        Handle: Fn(ToolContext, Input) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Output>> + Send + 'static,
    {
        let handle = Arc::new(handle);
        let handler: Handler = Arc::new(move |context, raw| {
            let handle = handle.clone();
            Box::pin(async move {
                let mut raw = if raw.is_null() { json!({}) } else { raw };
                whole_floats_to_integers(&mut raw);
                if has_nul(&raw) {
                    // Strings reach C APIs (GLib, WebKit) that end them at NUL.
                    return Err(Error::bad_request(format!("invalid input for {name}: strings may not contain NUL characters")));
                }
                let input: Input = serde_json::from_value(raw).map_err(|error| {
                    Error::bad_request(format!("invalid input for {name}: {error}"))
                })?;
                let output = handle(context, input).await?;
                serde_json::to_value(output).map_err(|error| Error::internal(error.to_string()))
            })
        });
        Tool { name, description, input_schema: input_schema::<Input>(), handler }
    }
}

/// The JSON Schema of a tool input, without the meta-schema line.
fn input_schema<Input: JsonSchema>() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(Input)).unwrap_or_else(|_| json!({}));
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
    }
    schema
}

/// A tool as the catalogue lists it.
#[derive(Debug, Clone, Serialize)]
pub struct ToolDescription {
    /// Name.
    pub name: &'static str,
    /// Description.
    pub description: &'static str,
    /// JSON Schema of the input.
    pub input_schema: Value,
}

/// All tools, in catalogue order.
#[derive(Debug)]
pub struct ToolRegistry {
    tools: Vec<Tool>,
}

impl ToolRegistry {
    /// The product's tools.
    pub fn standard() -> ToolRegistry {
        let mut tools = vec![navigate::tool(), history::tool(), snapshot::tool(), observe::tool()];
        tools.extend(read::tools());
        tools.extend(actions::tools());
        tools.extend([dialog::tool(), assert::tool(), run_steps::tool(), login::tool(), watch::tool(), profiles::tool(), events::tool(), close::tool()]);
        ToolRegistry { tools }
    }

    /// The catalogue.
    pub fn catalogue(&self) -> Vec<ToolDescription> {
        self.tools
            .iter()
            .map(|tool| ToolDescription {
                name: tool.name,
                description: tool.description,
                input_schema: tool.input_schema.clone(),
            })
            .collect()
    }

    /// A tool by name.
    pub fn get(&self, name: &str) -> Result<&Tool> {
        self.tools.iter().find(|tool| tool.name == name).ok_or_else(|| {
            Error::new(ErrorCode::UnknownTool, format!("there is no tool named {name:?}; GET /v1/tools lists them"))
        })
    }

    /// Calls a tool and records the call in the session's events (name, outcome,
    /// duration; never the input, which may hold secrets).
    pub async fn call(&self, name: &str, context: ToolContext, input: Value) -> Result<Value> {
        let tool = self.get(name)?;
        let session = context.session.clone();
        let in_use = session.in_use();
        let begun = Instant::now();
        let result = (tool.handler)(context, input).await;
        let duration_ms = begun.elapsed().as_millis() as u64;
        // Reading the log is not an action: recording it would flood the log it reads.
        if !matches!(tool.name, "close" | "events") {
            let outcome = match &result {
                Ok(_) => json!({ "tool": tool.name, "ok": true, "duration_ms": duration_ms }),
                Err(error) => json!({ "tool": tool.name, "ok": false, "duration_ms": duration_ms, "error": error.code.as_str() }),
            };
            session.events.push("action", None, outcome);
        }
        drop(in_use);
        result
    }
}

/// Whether any string (or key) in the value holds a NUL character.
fn has_nul(value: &Value) -> bool {
    match value {
        Value::String(text) => text.contains('\0'),
        Value::Array(items) => items.iter().any(has_nul),
        Value::Object(object) => object.iter().any(|(key, value)| key.contains('\0') || has_nul(value)),
        _ => false,
    }
}

/// `5.0` -> `5`: JSON does not tell the two apart, and clients (and models) send either.
pub(crate) fn whole_floats_to_integers(value: &mut Value) {
    match value {
        Value::Number(number) if number.is_f64() => {
            if let Some(float) = number.as_f64() {
                if float.fract() == 0.0 && float.abs() < 9.0e15 {
                    *value = if float < 0.0 { json!(float as i64) } else { json!(float as u64) };
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_floats_to_integers),
        Value::Object(object) => object.values_mut().for_each(whole_floats_to_integers),
        _ => {}
    }
}

/// Clamps an optional millisecond value to `[0, max]`, with a default.
pub(crate) fn millis(value: Option<u64>, default: u64, max: u64, field: &str) -> Result<std::time::Duration> {
    at_most(value, default, max, field).map(std::time::Duration::from_millis)
}

/// An optional input with its default, refused above `max`.
pub(crate) fn at_most<T: PartialOrd + Copy + std::fmt::Display>(value: Option<T>, default: T, max: T, field: &str) -> Result<T> {
    let value = value.unwrap_or(default);
    if value > max {
        return Err(Error::bad_request(format!("{field} must be at most {max}")));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_has_schemas_and_unique_names() {
        let registry = ToolRegistry::standard();
        let catalogue = registry.catalogue();
        let mut names: Vec<_> = catalogue.iter().map(|tool| tool.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), catalogue.len());
        for tool in &catalogue {
            assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
            assert!(!tool.description.is_empty());
        }
        let navigate = registry.get("navigate").unwrap();
        assert_eq!(navigate.input_schema["required"], json!(["url"]));
        assert!(registry.get("nope").is_err());
    }
}
