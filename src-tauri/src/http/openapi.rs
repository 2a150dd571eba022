//! `GET /v1/openapi.json`: an OpenAPI 3.1 description of the broker or of a lease endpoint,
//! generated from the same types as the API (the tool registry's input schemas, the error
//! codes), so that it cannot drift from what the server does.

use serde_json::{json, Map, Value};

use crate::error::ErrorCode;
use crate::tools::ToolRegistry;

/// Which endpoint the document describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Endpoint {
    /// The broker.
    Broker,
    /// A lease endpoint.
    Lease,
}

/// The OpenAPI document of `endpoint`.
pub(super) fn document(endpoint: Endpoint, registry: &ToolRegistry) -> Value {
    let mut schemas = Map::new();
    schemas.insert("Error".into(), error_schema());
    let mut paths = Map::new();
    paths.insert(
        "/v1/health".into(),
        json!({ "get": operation("health", "Is the endpoint up", None, Vec::new(), json!({ "type": "object", "required": ["ok"], "properties": { "ok": { "type": "boolean" }, "sandbox": { "type": "boolean", "description": "Whether the daemon's web processes run sandboxed (bubblewrap)" } } }), false) }),
    );
    match endpoint {
        Endpoint::Broker => broker_paths(&mut paths, &mut schemas),
        Endpoint::Lease => lease_paths(&mut paths, &mut schemas, registry),
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": match endpoint { Endpoint::Broker => "malo-browser broker", Endpoint::Lease => "malo-browser lease endpoint" },
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Loopback only. Send Host: 127.0.0.1:<port>. Bodies are application/json, at most 1 MB. Errors are {ok:false, error:{code, message, details}} with a stable E_* code.",
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "broker": { "type": "apiKey", "in": "header", "name": "x-malo-broker-token" },
                "lease": { "type": "apiKey", "in": "header", "name": "x-malo-lease-token" },
                "session": { "type": "apiKey", "in": "header", "name": "x-malo-session-token" },
            },
        },
    })
}

fn error_schema() -> Value {
    let codes: Vec<&str> = ErrorCode::ALL.iter().map(|code| code.as_str()).collect();
    json!({
        "type": "object",
        "required": ["ok", "error"],
        "properties": {
            "ok": { "const": false },
            "error": {
                "type": "object",
                "required": ["code", "message", "details"],
                "properties": {
                    "code": { "type": "string", "enum": codes },
                    "message": { "type": "string" },
                    "details": { "type": "object" },
                },
            },
        },
    })
}

/// One operation: 200 with `success`, anything else the error body.
fn operation(id: &str, summary: &str, body: Option<Value>, parameters: Vec<Value>, success: Value, secured: bool) -> Value {
    let mut operation = json!({
        "operationId": id,
        "summary": summary,
        "responses": {
            "200": { "description": "OK", "content": { "application/json": { "schema": success } } },
            "default": { "description": "An error", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } } },
        },
    });
    if !parameters.is_empty() {
        operation["parameters"] = json!(parameters);
    }
    if let Some(body) = body {
        operation["requestBody"] = json!({ "required": true, "content": { "application/json": { "schema": body } } });
    }
    if !secured {
        operation["security"] = json!([]);
    }
    operation
}

fn secured(mut operation: Value, schemes: &[&str]) -> Value {
    let requirement: Map<String, Value> = schemes.iter().map(|scheme| (scheme.to_string(), json!([]))).collect();
    operation["security"] = json!([requirement]);
    operation
}

fn path_parameter(name: &str, description: &str) -> Value {
    json!({ "name": name, "in": "path", "required": true, "description": description, "schema": { "type": "string" } })
}

fn string_fields(fields: &[&str]) -> Value {
    let properties: Map<String, Value> = fields.iter().map(|field| (field.to_string(), json!({ "type": "string" }))).collect();
    json!({ "type": "object", "required": fields, "properties": properties })
}

fn broker_paths(paths: &mut Map<String, Value>, schemas: &mut Map<String, Value>) {
    schemas.insert("LeaseGrant".into(), string_fields(&["lease_id", "agent_id", "endpoint", "token", "expires_at"]));
    let request = json!({ "type": "object", "required": ["agent_id"], "additionalProperties": false,
        "properties": { "agent_id": { "type": "string", "pattern": "^[A-Za-z0-9._:@/-]{1,128}$" } } });
    let grant = json!({ "$ref": "#/components/schemas/LeaseGrant" });
    let list =
        json!({ "type": "object", "required": ["leases"], "properties": { "leases": { "type": "array", "items": { "type": "object" } } } });
    paths.insert("/v1/leases".into(), json!({
        "post": secured(operation("create_lease", "Take (or renew) the lease of an agent", Some(request), Vec::new(), grant, true), &["broker"]),
        "get": secured(operation("list_leases", "List leases (without tokens)", None, Vec::new(), list, true), &["broker"]),
    }));
    let id = path_parameter("id", "Lease id");
    paths.insert("/v1/leases/{id}/heartbeat".into(), json!({
        "post": secured(operation("heartbeat", "Renew a lease", None, vec![id.clone()], string_fields(&["lease_id", "agent_id", "endpoint", "expires_at"]), true), &["broker"]),
    }));
    paths.insert("/v1/leases/{id}".into(), json!({
        "delete": secured(operation("release_lease", "Release a lease; its sessions close and its port is freed", None, vec![id],
            json!({ "type": "object", "required": ["ok", "lease_id", "closed_sessions"], "properties": { "ok": { "type": "boolean" }, "lease_id": { "type": "string" }, "closed_sessions": { "type": "integer" } } }), true), &["broker"]),
    }));

    let summary = json!({ "type": "object", "properties": { "count": { "type": "integer" }, "p50_ms": { "type": "number" },
        "p99_ms": { "type": "number" }, "max_ms": { "type": "number" } } });
    let stats = json!({ "type": "object", "required": ["leases", "sessions", "main_thread", "connections"], "properties": {
        "leases": { "type": "integer" }, "sessions": { "type": "integer" },
        "main_thread": { "type": "object", "properties": { "queue_wait": summary, "stall": summary,
            "stalled_total_ms": { "type": "integer" }, "longest_holds": { "type": "array", "items": { "type": "object" } } } },
        "connections": { "type": "object", "properties": { "open": { "type": "integer" }, "budget": { "type": "integer" },
            "per_port": { "type": "integer" }, "evicted": { "type": "integer" }, "refused": { "type": "integer" } } } } });
    paths.insert("/v1/stats".into(), json!({
        "get": secured(operation("stats", "The daemon's figures: the engine's main thread (queue waits, stalls, longest holds) and connections", None, Vec::new(), stats, true), &["broker"]),
    }));
}

fn lease_paths(paths: &mut Map<String, Value>, schemas: &mut Map<String, Value>, registry: &ToolRegistry) {
    let summary_fields = ["session_id", "name", "lease_id", "url", "title", "created_at", "downloads_dir", "artifacts_dir"];
    let mut summary = string_fields(&summary_fields);
    summary["properties"]["width"] = json!({ "type": "integer" });
    summary["properties"]["height"] = json!({ "type": "integer" });
    summary["properties"]["idle_ms"] = json!({ "type": "integer" });
    summary["properties"]["profile"] = json!({ "type": ["string", "null"] });
    summary["properties"]["proxy"] = json!({ "type": ["object", "null"] });
    summary["properties"]["network_conditions"] = json!({ "type": ["object", "null"] });
    schemas.insert("SessionSummary".into(), summary.clone());
    let mut created = summary;
    created["properties"]["session_token"] = json!({ "type": "string" });
    created["required"].as_array_mut().expect("required is a list").push(json!("session_token"));
    schemas.insert("CreatedSession".into(), created);
    schemas.insert(
        "ToolResult".into(),
        json!({ "type": "object", "required": ["tool", "result"], "properties": { "tool": { "type": "string" }, "result": {} } }),
    );
    schemas.insert(
        "CallPlace".into(),
        json!({ "type": "object", "required": ["seq"], "properties": { "tab": { "type": ["string", "null"] }, "seq": { "type": "integer" } } }),
    );
    let create_input = schema_of::<crate::session::CreateSession>("create_session", schemas);
    let list = json!({ "type": "object", "required": ["lease_id", "sessions"], "properties": { "lease_id": { "type": "string" },
        "sessions": { "type": "array", "items": { "$ref": "#/components/schemas/SessionSummary" } } } });
    let catalogue = json!({ "type": "object", "required": ["tools"], "properties": { "tools": { "type": "array", "items": {
        "type": "object", "required": ["name", "description", "input_schema", "output_schema"],
        "properties": { "name": { "type": "string" }, "description": { "type": "string" }, "input_schema": { "type": "object" },
            "output_schema": { "type": ["object", "boolean"] } } } } } });
    paths.insert("/v1/tools".into(), json!({ "get": secured(operation("list_tools", "The tool catalogue with JSON Schemas", None, Vec::new(), catalogue, true), &["lease"]) }));
    paths.insert("/v1/sessions".into(), json!({
        "post": secured(operation("create_session", "Open a hidden, isolated session (its token is shown once)", Some(create_input), Vec::new(), json!({ "$ref": "#/components/schemas/CreatedSession" }), true), &["lease"]),
        "get": secured(operation("list_sessions", "List the lease's sessions", None, Vec::new(), list, true), &["lease"]),
    }));
    let profiles = json!({ "type": "object", "required": ["profiles"], "properties": { "profiles": { "type": "array", "items": {
        "type": "object", "required": ["name", "sessions", "size_bytes"],
        "properties": { "name": { "type": "string" }, "sessions": { "type": "integer" }, "size_bytes": { "type": "integer" } } } } } });
    paths.insert(
        "/v1/profiles".into(),
        json!({ "get": secured(operation("list_profiles", "List named login profiles", None, Vec::new(), profiles, true), &["lease"]) }),
    );
    paths.insert("/v1/profiles/{name}".into(), json!({
        "delete": secured(operation("delete_profile", "Delete a profile no session uses (409 E_PROFILE_LOCKED otherwise)", None, vec![path_parameter("name", "Profile name")],
            json!({ "type": "object", "required": ["ok", "name", "deleted"], "properties": { "ok": { "type": "boolean" }, "name": { "type": "string" }, "deleted": { "type": "boolean" } } }), true), &["lease"]),
    }));
    let id = path_parameter("id", "Session id");
    let session = |operation: Value| secured(operation, &["lease", "session"]);
    paths.insert("/v1/sessions/{id}".into(), json!({
        "get": session(operation("get_session", "A session's summary", None, vec![id.clone()], json!({ "$ref": "#/components/schemas/SessionSummary" }), true)),
        "delete": session(operation("close_session", "Close a session", None, vec![id.clone()],
            json!({ "type": "object", "required": ["ok", "session_id", "closed"], "properties": { "ok": { "type": "boolean" }, "session_id": { "type": "string" }, "closed": { "type": "boolean" } } }), true)),
    }));
    let tools: Map<String, Value> = registry
        .catalogue()
        .into_iter()
        .map(|tool| {
            let input = hoist_defs(tool.name, tool.input_schema, schemas);
            let output = hoist_defs(&format!("{}.result", tool.name), tool.output_schema, schemas);
            (tool.name.to_string(), json!({ "description": tool.description, "schema": input, "output": output }))
        })
        .collect();
    let input = |name: &str| tools[name]["schema"].clone();
    // The routes that answer a tool's result directly have its tab and seq beside its fields.
    let flattened = |name: &str| json!({ "allOf": [tools[name]["output"].clone(), { "$ref": "#/components/schemas/CallPlace" }] });
    paths.insert("/v1/sessions/{id}/navigate".into(), json!({
        "post": session(operation("navigate", "Open a URL and wait for load and quiet", Some(input("navigate")), vec![id.clone()], flattened("navigate"), true)),
    }));
    let query = |name: &str, schema: Value| json!({ "name": name, "in": "query", "required": false, "schema": schema });
    paths.insert("/v1/sessions/{id}/observe".into(), json!({
        "get": session(operation("observe", "Light state and text, or a screenshot", None,
            vec![id.clone(), query("mode", json!({ "type": "string", "enum": ["light", "screenshot"] })), query("max_chars", json!({ "type": "integer", "minimum": 0, "maximum": 100000 }))],
            flattened("observe"), true)),
    }));
    paths.insert("/v1/sessions/{id}/events".into(), json!({
        "get": session(operation("events", "Events after a seq cursor", None,
            vec![id.clone(), query("after", json!({ "type": "integer", "minimum": 0 })), query("limit", json!({ "type": "integer", "minimum": 1, "maximum": 1000 }))],
            flattened("events"), true)),
    }));
    let result = json!({ "$ref": "#/components/schemas/ToolResult" });
    paths.insert("/v1/sessions/{id}/actions".into(), json!({
        "post": session(operation("action", "The seed's action form: {action: {type: <tool>, ...}}", Some(json!({ "type": "object", "required": ["action"], "additionalProperties": false,
            "properties": { "action": { "type": "object", "required": ["type"], "properties": { "type": { "type": "string", "enum": tools.keys().collect::<Vec<_>>() } } } } })), vec![id.clone()], result.clone(), true)),
    }));
    for (name, tool) in &tools {
        let answer = json!({ "type": "object", "required": ["tool", "seq", "result"], "properties": {
            "tool": { "const": name }, "tab": { "type": ["string", "null"] }, "seq": { "type": "integer" }, "result": tool["output"].clone() } });
        paths.insert(format!("/v1/sessions/{{id}}/tools/{name}"), json!({
            "post": session(operation(&format!("tool_{name}"), tool["description"].as_str().unwrap_or(""), Some(tool["schema"].clone()), vec![id.clone()], answer, true)),
        }));
    }
}

fn schema_of<T: schemars::JsonSchema>(name: &str, schemas: &mut Map<String, Value>) -> Value {
    let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_else(|_| json!({}));
    hoist_defs(name, schema, schemas)
}

/// Moves a schema's `$defs` into `components/schemas` (as `<owner>.<Name>`) and points
/// its references there, since `#/$defs/...` would resolve against the whole document.
fn hoist_defs(owner: &str, mut schema: Value, schemas: &mut Map<String, Value>) -> Value {
    let defs = schema.as_object_mut().and_then(|object| {
        object.remove("$schema");
        object.remove("$defs")
    });
    if let Some(Value::Object(defs)) = defs {
        for (name, mut definition) in defs {
            rewrite_refs(owner, &mut definition);
            schemas.insert(format!("{owner}.{name}"), definition);
        }
    }
    rewrite_refs(owner, &mut schema);
    schema
}

fn rewrite_refs(owner: &str, value: &mut Value) {
    match value {
        Value::Object(object) => {
            if let Some(Value::String(reference)) = object.get_mut("$ref") {
                if let Some(name) = reference.strip_prefix("#/$defs/") {
                    *reference = format!("#/components/schemas/{owner}.{name}");
                }
            }
            for child in object.values_mut() {
                rewrite_refs(owner, child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| rewrite_refs(owner, item)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_refs(value: &Value, found: &mut Vec<String>) {
        match value {
            Value::Object(object) => {
                if let Some(Value::String(reference)) = object.get("$ref") {
                    found.push(reference.clone());
                }
                object.values().for_each(|child| all_refs(child, found));
            }
            Value::Array(items) => items.iter().for_each(|item| all_refs(item, found)),
            _ => {}
        }
    }

    #[test]
    fn every_reference_resolves_and_every_tool_has_a_path() {
        let registry = ToolRegistry::standard();
        for endpoint in [Endpoint::Broker, Endpoint::Lease] {
            let document = document(endpoint, &registry);
            let mut references = Vec::new();
            all_refs(&document, &mut references);
            for reference in references {
                let name = reference.strip_prefix("#/components/schemas/").unwrap_or_else(|| panic!("unexpected ref {reference}"));
                assert!(document["components"]["schemas"].get(name).is_some(), "dangling {reference}");
            }
        }
        let lease = document(Endpoint::Lease, &registry);
        for tool in registry.catalogue() {
            assert!(lease["paths"].get(format!("/v1/sessions/{{id}}/tools/{}", tool.name)).is_some(), "{}", tool.name);
        }
        let codes = &lease["components"]["schemas"]["Error"]["properties"]["error"]["properties"]["code"]["enum"];
        assert_eq!(codes.as_array().unwrap().len(), ErrorCode::ALL.len());
        // Each tool's answer describes its result with the tool's own output schema.
        let navigate =
            &lease["paths"]["/v1/sessions/{id}/tools/navigate"]["post"]["responses"]["200"]["content"]["application/json"]["schema"];
        let result = &navigate["properties"]["result"];
        assert_eq!(result["type"], "object", "{result}");
        assert!(result["properties"]["url"].is_object() && result["properties"]["navigation"].is_object(), "{result}");
    }
}
