//! Runtime and DOM: execution contexts (the page's world and each named world of the
//! current document), and every handle operation, run by the engine's DevTools runtime in
//! the context's world. Object ids are `<context>.<n>`, so an id names its world and dies
//! with its document; node ids are the agent's refs, the same from every world.

use std::time::Duration;

use serde_json::{json, Value};

use super::{Context, PageSession};
use crate::cdp::wire::{ProtocolError, Reply};
use crate::engine::devtools::{DevtoolsRequest, RuntimeOp, World};
use crate::engine::TabRequest;

/// How long a call that awaits a promise may run (a client's own wait, such as
/// Puppeteer's waitForSelector, is one such call).
const AWAIT_LIMIT: Duration = Duration::from_secs(180);
/// How long any other call may run.
const CALL_LIMIT: Duration = Duration::from_secs(30);

/// What a DOM geometry command asks.
#[derive(Debug, Clone, Copy)]
pub(super) enum Geometry {
    BoxModel,
    ContentQuads,
    ScrollIntoView,
}

impl PageSession {
    /// The context of an id (none: the page's own world's).
    pub(super) fn context(&self, id: Option<i64>) -> Result<Context, ProtocolError> {
        let state = self.state();
        match id {
            None => Ok(state.contexts[0].clone()),
            Some(id) => state
                .contexts
                .iter()
                .find(|context| context.id == id)
                .cloned()
                .ok_or_else(|| ProtocolError::server("Cannot find context with specified id")),
        }
    }

    /// The context an object id belongs to.
    fn context_of_object(&self, object_id: &str) -> Result<Context, ProtocolError> {
        let id = object_id.split('.').next().and_then(|context| context.parse::<i64>().ok());
        match id {
            Some(id) => self.context(Some(id)).map_err(|_| ProtocolError::server("Could not find object with given id")),
            None => Err(ProtocolError::server("Invalid remote object id")),
        }
    }

    /// `executionContextCreated`'s description of a context.
    pub(super) fn describe_context(&self, context: &Context) -> Value {
        let (url, _) = self.tab.status.get();
        let (name, is_default, kind) = match &context.world {
            World::Page => (String::new(), true, "default"),
            World::Named(name) => (name.clone(), false, "isolated"),
        };
        json!({ "context": {
            "id": context.id,
            "origin": super::origin_of(&crate::cdp::targets::shown_url(&url)),
            "name": name,
            "uniqueId": format!("{}.{}", self.frame_id, context.id),
            "auxData": { "isDefault": is_default, "type": kind, "frameId": self.frame_id },
        } })
    }

    pub(super) fn enable_runtime(&self) -> Value {
        let contexts = {
            let mut state = self.state();
            state.runtime = true;
            state.contexts.clone()
        };
        for context in &contexts {
            self.event("Runtime.executionContextCreated", self.describe_context(context));
        }
        json!({})
    }

    pub(super) fn create_world(&self, params: &Value) -> Reply {
        let name = params["worldName"].as_str().unwrap_or("").to_string();
        if name.is_empty() {
            return Err(ProtocolError::invalid("worldName is required"));
        }
        let (context, runtime) = {
            let mut state = self.state();
            if !state.worlds.contains(&name) {
                state.worlds.push(name.clone());
            }
            let context = Context { id: self.shared.context_id(), world: World::Named(name) };
            state.contexts.push(context.clone());
            (context, state.runtime)
        };
        if runtime {
            self.event("Runtime.executionContextCreated", self.describe_context(&context));
        }
        Ok(json!({ "executionContextId": context.id }))
    }

    /// Runs a runtime operation in `context`'s world; the runtime's `{error}` answers
    /// become protocol errors.
    async fn run(&self, context: &Context, op: RuntimeOp, code: Option<String>, mut request: Value, limit: Duration) -> Reply {
        request["context"] = json!(context.id);
        let asked = DevtoolsRequest::Runtime { world: context.world.clone(), op, code, request, limit };
        let target = self.shared.session.address(&self.tab);
        let answer: Value = self.shared.session.engine.tab(target, TabRequest::Devtools(asked)).await.map_err(|error| {
            if error.code == crate::error::ErrorCode::ScriptError && matches!(op, RuntimeOp::Call | RuntimeOp::Evaluate) {
                // The client's code did not compile: an exception, as Chrome reports it.
                ProtocolError { code: 0, message: error.message }
            } else {
                ProtocolError::from(error)
            }
        })?;
        match answer.get("error").and_then(Value::as_str) {
            Some(message) => Err(ProtocolError::server(message)),
            None => Ok(answer),
        }
    }

    pub(super) async fn evaluate(&self, params: &Value) -> Reply {
        let expression = params["expression"].as_str().ok_or_else(|| ProtocolError::invalid("expression is required"))?;
        // `(() => { … })();` is an expression statement: without its `;` it is an expression.
        let expression = expression.trim_end().trim_end_matches(';').to_string();
        let context = self.context(params["contextId"].as_i64())?;
        let limit = if params["awaitPromise"].as_bool() == Some(true) { AWAIT_LIMIT } else { CALL_LIMIT };
        let request = json!({
            "returnByValue": params["returnByValue"].as_bool().unwrap_or(false),
            "awaitPromise": params["awaitPromise"].as_bool().unwrap_or(false),
            "objectGroup": params["objectGroup"],
        });
        exception_as_result(self.run(&context, RuntimeOp::Evaluate, Some(expression), request, limit).await)
    }

    pub(super) async fn call_function_on(&self, params: &Value) -> Reply {
        let declaration =
            params["functionDeclaration"].as_str().ok_or_else(|| ProtocolError::invalid("functionDeclaration is required"))?;
        let context = match params["objectId"].as_str() {
            Some(object) => self.context_of_object(object)?,
            None => match params["executionContextId"].as_i64() {
                Some(id) => self.context(Some(id))?,
                None => return Err(ProtocolError::server("Either ObjectId or executionContextId must be specified")),
            },
        };
        let limit = if params["awaitPromise"].as_bool() == Some(true) { AWAIT_LIMIT } else { CALL_LIMIT };
        let request = json!({
            "objectId": params["objectId"],
            "arguments": params.get("arguments").cloned().unwrap_or_else(|| json!([])),
            "returnByValue": params["returnByValue"].as_bool().unwrap_or(false),
            "awaitPromise": params["awaitPromise"].as_bool().unwrap_or(false),
            "objectGroup": params["objectGroup"],
        });
        exception_as_result(self.run(&context, RuntimeOp::Call, Some(method_as_function(declaration)), request, limit).await)
    }

    pub(super) async fn get_properties(&self, params: &Value) -> Reply {
        let object = params["objectId"].as_str().ok_or_else(|| ProtocolError::invalid("objectId is required"))?;
        let context = self.context_of_object(object)?;
        let request = json!({
            "objectId": object,
            "ownProperties": params["ownProperties"].as_bool().unwrap_or(false),
            "accessorPropertiesOnly": params["accessorPropertiesOnly"].as_bool().unwrap_or(false),
        });
        self.run(&context, RuntimeOp::GetProperties, None, request, CALL_LIMIT).await
    }

    pub(super) async fn release_object(&self, params: &Value) -> Reply {
        if let Some(object) = params["objectId"].as_str() {
            if let Ok(context) = self.context_of_object(object) {
                // Never fails: a handle of a gone document is gone already.
                let _ = self.run(&context, RuntimeOp::Release, None, json!({ "objectId": object }), CALL_LIMIT).await;
            }
        }
        Ok(json!({}))
    }

    pub(super) async fn release_group(&self, params: &Value) -> Reply {
        let contexts = self.state().contexts.clone();
        for context in contexts {
            let _ = self.run(&context, RuntimeOp::ReleaseGroup, None, json!({ "objectGroup": params["objectGroup"] }), CALL_LIMIT).await;
        }
        Ok(json!({}))
    }

    /// The context a node command runs in: its object's, else the page's own world's.
    fn node_context(&self, params: &Value) -> Result<Context, ProtocolError> {
        match params["objectId"].as_str() {
            Some(object) => self.context_of_object(object),
            None => self.context(None),
        }
    }

    pub(super) async fn get_document(&self, params: &Value) -> Reply {
        let context = self.context(None)?;
        self.run(&context, RuntimeOp::GetDocument, None, json!({ "depth": params["depth"] }), CALL_LIMIT).await
    }

    pub(super) async fn describe_node(&self, params: &Value) -> Reply {
        let context = self.node_context(params)?;
        let request = json!({ "objectId": params["objectId"], "backendNodeId": node_id(params), "depth": params["depth"] });
        let mut answer = self.run(&context, RuntimeOp::DescribeNode, None, request, CALL_LIMIT).await?;
        if answer["node"]["nodeName"] == "IFRAME" {
            answer["node"]["frameId"] = Value::Null;
        }
        Ok(answer)
    }

    pub(super) async fn resolve_node(&self, params: &Value) -> Reply {
        let context = self.context(params["executionContextId"].as_i64())?;
        let request = json!({ "backendNodeId": node_id(params), "objectGroup": params["objectGroup"] });
        self.run(&context, RuntimeOp::ResolveNode, None, request, CALL_LIMIT).await
    }

    pub(super) async fn query_selector(&self, params: &Value) -> Reply {
        let context = self.context(None)?;
        let request = json!({ "backendNodeId": node_id(params), "selector": params["selector"] });
        self.run(&context, RuntimeOp::QuerySelector, None, request, CALL_LIMIT).await
    }

    pub(super) async fn node_geometry(&self, params: &Value, geometry: Geometry) -> Reply {
        let context = self.node_context(params)?;
        let op = match geometry {
            Geometry::BoxModel => RuntimeOp::BoxModel,
            Geometry::ContentQuads => RuntimeOp::ContentQuads,
            Geometry::ScrollIntoView => RuntimeOp::ScrollIntoView,
        };
        let request = json!({ "objectId": params["objectId"], "backendNodeId": node_id(params) });
        self.run(&context, op, None, request, CALL_LIMIT).await
    }

    /// The node id (agent ref) a node command names, by object or by id.
    pub(super) async fn node_of(&self, params: &Value) -> Result<u64, ProtocolError> {
        if let Some(id) = node_id(params).as_u64() {
            return Ok(id);
        }
        let object = params["objectId"].as_str().ok_or_else(|| ProtocolError::invalid("objectId or backendNodeId is required"))?;
        let context = self.context_of_object(object)?;
        let answer = self.run(&context, RuntimeOp::NodeId, None, json!({ "objectId": object }), CALL_LIMIT).await?;
        answer["backendNodeId"].as_u64().ok_or_else(|| ProtocolError::server("Node is detached from document"))
    }

    /// `Runtime.addBinding`: in the named context's world, or the page's own.
    pub(super) async fn add_binding(&self, params: &Value) -> Reply {
        let name =
            params["name"].as_str().filter(|name| !name.is_empty()).ok_or_else(|| ProtocolError::invalid("name is required"))?.to_string();
        let world = match (params["executionContextName"].as_str(), params["executionContextId"].as_i64()) {
            (Some(world), _) if !world.is_empty() => World::Named(world.to_string()),
            (_, Some(id)) => self.context(Some(id))?.world,
            _ => World::Page,
        };
        {
            let mut state = self.state();
            if !state.bindings.iter().any(|(known, in_world)| known == &name && in_world == &world) {
                state.bindings.push((name.clone(), world.clone()));
            }
        }
        self.install_binding(&name, &world).await
    }

    /// Installs a binding in the current document.
    pub(super) async fn install_binding(&self, name: &str, world: &World) -> Reply {
        let context = Context { id: 0, world: world.clone() };
        let request = json!({ "name": name, "world": world.webkit_name() });
        self.run(&context, RuntimeOp::AddBinding, None, request, CALL_LIMIT).await.map(|_| json!({}))
    }

    pub(super) fn remove_binding(&self, params: &Value) -> Reply {
        let name = params["name"].as_str().unwrap_or("");
        self.state().bindings.retain(|(known, _)| known != name);
        Ok(json!({}))
    }

    /// Files into a file input, through the session's upload path (`set_file_input`).
    pub(super) async fn set_file_input_files(&self, params: &Value) -> Reply {
        let node = self.node_of(params).await?;
        let files = params["files"].clone();
        self.shared.tool("set_file_input", json!({ "tab": self.tab.id, "ref": format!("e{node}"), "files": files })).await?;
        Ok(json!({}))
    }
}

/// The node id a command gives (`backendNodeId`, or `nodeId`, which is the same here).
fn node_id(params: &Value) -> Value {
    params.get("backendNodeId").filter(|id| !id.is_null()).or_else(|| params.get("nodeId")).cloned().unwrap_or(Value::Null)
}

/// A method shorthand (`name(a) { … }`, as clients send an object's method) is not an
/// expression: it becomes a function expression.
fn method_as_function(declaration: &str) -> String {
    // A trailing `;` ends a statement, not an expression.
    let declaration = declaration.trim_end().trim_end_matches(';');
    let trimmed = declaration.trim_start();
    let is_expression = ["function", "async", "(", "class"].iter().any(|start| trimmed.starts_with(start))
        || trimmed.split("=>").next().is_some_and(|head| !head.contains('{') && trimmed.contains("=>"));
    if is_expression {
        declaration.to_string()
    } else {
        format!("function {trimmed}")
    }
}

/// A client's code that did not compile is an exception in the answer, not an error.
fn exception_as_result(reply: Reply) -> Reply {
    match reply {
        Err(ProtocolError { code: 0, message }) => {
            let exception = json!({ "type": "object", "subtype": "error", "className": "SyntaxError", "description": message });
            Ok(json!({
                "result": exception,
                "exceptionDetails": { "exceptionId": 1, "text": message, "lineNumber": 0, "columnNumber": 0, "exception": exception },
            }))
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_shorthands_become_functions_and_expressions_stay() {
        assert_eq!(method_as_function("evaluate(a) { return a; }"), "function evaluate(a) { return a; }");
        assert_eq!(method_as_function("async fetchIt() { }"), "async fetchIt() { }", "async functions stay (async methods are rare)");
        for expression in ["function (a) { return a; }", "(a) => a", "a => a + 1", "async (x) => x", "class {}"] {
            assert_eq!(method_as_function(expression), expression);
        }
        assert_eq!(method_as_function("function () { return 1; };\n"), "function () { return 1; }");
    }

    #[test]
    fn code_that_does_not_compile_is_an_exception_and_other_errors_stay_errors() {
        let answer = exception_as_result(Err(ProtocolError { code: 0, message: "SyntaxError: Unexpected token '}'".into() })).unwrap();
        assert_eq!(answer["exceptionDetails"]["exception"]["className"], "SyntaxError");
        assert!(exception_as_result(Err(ProtocolError::server("Cannot find context with specified id"))).is_err());
    }
}
