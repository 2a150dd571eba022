//! A refused value names its field (issue 44): the OpenAPI documents the broker and a lease
//! endpoint serve are walked, and for every place of a request body (or a query) that
//! allows only listed values one value outside the list is sent, over the real routers and
//! the fake engine. The answer is `E_BAD_REQUEST` (`E_UNKNOWN_TOOL` for the action route's
//! `action.type`), its `details.field` is the place's JSON path and its message starts
//! with that path. Every tool is reached this way, and MCP and the CLI call the same
//! registry.

use axum::http::StatusCode;
use axum::Router;
use serde_json::{json, Map, Value};

use super::broker_router;
use super::tests::{call, code, Wire, BROKER_PORT};

/// The value no list allows.
const BAD: &str = "no-such-value";

/// A step of a JSON path: a field of an object (with the object's other required fields
/// and the values each may take: every value of a list, else one plausible value) or the
/// first item of an array.
#[derive(Debug, Clone)]
enum Step {
    Field(String, Vec<(String, Vec<Value>)>),
    Item,
}

/// Most bodies tried for one place (choices of the required fields around it).
const MOST_TRIES: usize = 16;

/// The path as the API writes it: `permissions[0].name`.
fn written(steps: &[Step]) -> String {
    let mut path = String::new();
    for step in steps {
        match step {
            Step::Field(name, _) if path.is_empty() => path.push_str(name),
            Step::Field(name, _) => path.push_str(&format!(".{name}")),
            Step::Item => path.push_str("[0]"),
        }
    }
    path
}

/// Bodies that hold [`BAD`] at `steps`, one per choice of the required fields around it
/// (a tool reads some fields only for some `action`s), at most [`MOST_TRIES`].
fn bodies_with_bad_value(steps: &[Step]) -> Vec<Value> {
    let slots: Vec<&Vec<Value>> = steps
        .iter()
        .flat_map(|step| match step {
            Step::Field(_, siblings) => siblings.iter().map(|(_, choices)| choices).collect(),
            Step::Item => Vec::new(),
        })
        .collect();
    let mut bodies = Vec::new();
    let mut chosen = vec![0; slots.len()];
    loop {
        let mut picks = chosen.iter().zip(&slots).map(|(index, choices)| choices[*index].clone());
        let frames: Vec<Option<(String, Map<String, Value>)>> = steps
            .iter()
            .map(|step| match step {
                Step::Field(name, siblings) => {
                    Some((name.clone(), siblings.iter().map(|(sibling, _)| (sibling.clone(), picks.next().unwrap())).collect()))
                }
                Step::Item => None,
            })
            .collect();
        bodies.push(frames.into_iter().rev().fold(json!(BAD), |inner, frame| match frame {
            Some((name, mut object)) => {
                object.insert(name, inner);
                Value::Object(object)
            }
            None => json!([inner]),
        }));
        // The next choice, as an odometer turns.
        let Some(slot) = (0..slots.len()).rev().find(|slot| chosen[*slot] + 1 < slots[*slot].len()) else { break };
        chosen[slot] += 1;
        chosen[slot + 1..].iter_mut().for_each(|index| *index = 0);
        if bodies.len() == MOST_TRIES {
            break;
        }
    }
    bodies
}

fn resolve<'a>(document: &'a Value, mut schema: &'a Value) -> &'a Value {
    while let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.strip_prefix("#/components/schemas/").unwrap_or_else(|| panic!("a non-local reference {reference}"));
        schema = &document["components"]["schemas"][name];
    }
    schema
}

fn alternatives<'a>(document: &'a Value, schema: &'a Value) -> Vec<&'a Value> {
    ["anyOf", "oneOf"]
        .iter()
        .filter_map(|key| schema.get(*key).and_then(Value::as_array))
        .flatten()
        .map(|alternative| resolve(document, alternative))
        .collect()
}

fn is_null(schema: &Value) -> bool {
    schema["type"] == "null" || schema.get("const") == Some(&Value::Null)
}

/// Whether a schema allows only listed values (`enum`, `const`, or alternatives of those).
fn is_listed(document: &Value, schema: &Value) -> bool {
    if schema.get("enum").is_some() || schema.get("const").is_some_and(|value| !value.is_null()) {
        return true;
    }
    let alternatives = alternatives(document, schema);
    !alternatives.is_empty()
        && alternatives.iter().any(|alternative| !is_null(alternative))
        && alternatives.iter().all(|alternative| is_null(alternative) || is_listed(document, alternative))
}

/// Whether a schema takes any string (so that [`BAD`] is no refusal).
fn takes_any_string(schema: &Value) -> bool {
    let string = schema["type"] == "string" || schema["type"].as_array().is_some_and(|types| types.contains(&json!("string")));
    string && ["enum", "const", "pattern"].iter().all(|key| schema.get(*key).is_none())
}

/// A plausible value of a schema, for the required fields beside the one tested.
fn sample(document: &Value, schema: &Value, depth: usize) -> Value {
    let schema = resolve(document, schema);
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    if let Some(first) = schema.get("enum").and_then(Value::as_array).and_then(|values| values.iter().find(|value| !value.is_null())) {
        return first.clone();
    }
    if let Some(first) = alternatives(document, schema).into_iter().find(|alternative| !is_null(alternative)) {
        return sample(document, first, depth + 1);
    }
    let kind = match &schema["type"] {
        Value::Array(types) => types.iter().find(|kind| *kind != "null").cloned().unwrap_or(Value::Null),
        kind => kind.clone(),
    };
    match kind.as_str() {
        Some("integer") | Some("number") => schema.get("minimum").cloned().unwrap_or(json!(1)),
        Some("boolean") => json!(false),
        Some("array") => json!([]),
        Some("object") if depth < 8 => Value::Object(required_samples(document, schema, depth + 1)),
        Some("string") => json!("x"),
        _ => json!({}),
    }
}

/// The required fields of an object schema, with plausible values.
fn required_samples(document: &Value, schema: &Value, depth: usize) -> Map<String, Value> {
    required(schema).map(|name| (name.to_string(), sample(document, &schema["properties"][name], depth))).collect()
}

fn required(schema: &Value) -> impl Iterator<Item = &str> {
    schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str)
}

/// The values a required field may take around the one tested: each of a list's, else one.
fn choices(document: &Value, schema: &Value) -> Vec<Value> {
    let schema = resolve(document, schema);
    let mut listed: Vec<Value> = schema.get("enum").and_then(Value::as_array).cloned().unwrap_or_default();
    listed.extend(schema.get("const").cloned());
    for alternative in alternatives(document, schema) {
        listed.extend(alternative.get("enum").and_then(Value::as_array).cloned().unwrap_or_default());
        listed.extend(alternative.get("const").cloned());
    }
    listed.retain(|value| !value.is_null());
    if listed.is_empty() {
        vec![sample(document, schema, 0)]
    } else {
        listed
    }
}

/// Every place under `schema` (at `steps`) that allows only listed values.
fn listed_places(document: &Value, schema: &Value, steps: Vec<Step>, places: &mut Vec<Vec<Step>>) {
    if steps.len() > 12 {
        return;
    }
    let schema = resolve(document, schema);
    if is_listed(document, schema) {
        places.push(steps);
        return;
    }
    let alternatives = alternatives(document, schema);
    let open = alternatives.iter().any(|alternative| takes_any_string(alternative));
    for alternative in alternatives {
        if !(open && is_listed(document, alternative)) {
            listed_places(document, alternative, steps.clone(), places);
        }
    }
    for part in schema.get("allOf").and_then(Value::as_array).into_iter().flatten() {
        listed_places(document, part, steps.clone(), places);
    }
    for (name, property) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
        let mut inner = steps.clone();
        let around = required(schema)
            .filter(|other| *other != name)
            .map(|other| (other.to_string(), choices(document, &schema["properties"][other])));
        inner.push(Step::Field(name.clone(), around.collect()));
        listed_places(document, property, inner, places);
    }
    if let Some(items) = schema.get("items").filter(|items| items.is_object()) {
        let mut inner = steps.clone();
        inner.push(Step::Item);
        listed_places(document, items, inner, places);
    }
}

/// One bad value sent: where, and the answer.
struct Sent {
    route: String,
    field: String,
    status: StatusCode,
    answer: Value,
}

impl Sent {
    /// What is wrong with the answer, if anything.
    fn fault(&self) -> Option<String> {
        let wanted = if self.field == "action.type" { "E_UNKNOWN_TOOL" } else { "E_BAD_REQUEST" };
        let error = &self.answer["error"];
        // The wire's message is `<code>: <message>`; the message starts with the path.
        let message = error["message"].as_str().unwrap_or("").strip_prefix(&format!("{wanted}: ")).unwrap_or("");
        let named = error["details"]["field"] == self.field.as_str() && message.starts_with(&format!("{}: ", self.field));
        let refused = code(&self.answer) == wanted && self.status.is_client_error();
        (!(named && refused)).then(|| format!("{} {}: {} {}", self.route, self.field, self.status, self.answer))
    }
}

async fn document(router: &Router, port: u16) -> Value {
    let (status, document) = call("GET", "/v1/openapi.json", port).send(router).await;
    assert_eq!(status, StatusCode::OK, "{document}");
    document
}

/// Sends a bad value to every listed place of every request body and query of `document`.
async fn send_bad_values(router: &Router, port: u16, document: &Value, headers: &[(&'static str, String)], id: &str) -> Vec<Sent> {
    let mut sent = Vec::new();
    for (template, operations) in document["paths"].as_object().expect("paths") {
        let route = template.replace("{id}", id);
        for (method, operation) in operations.as_object().expect("operations") {
            let method = match method.as_str() {
                "get" => "GET",
                "post" => "POST",
                "delete" => "DELETE",
                other => panic!("method {other}"),
            };
            let with_headers = |mut request: super::tests::Call| {
                for (name, value) in headers {
                    request = request.header(name, value);
                }
                request
            };
            let body = &operation["requestBody"]["content"]["application/json"]["schema"];
            let mut places = Vec::new();
            if !body.is_null() {
                listed_places(document, body, Vec::new(), &mut places);
            }
            for steps in places {
                // The first body refused as it should be, else the last one's answer.
                let mut tried = None;
                for body in bodies_with_bad_value(&steps) {
                    let (status, answer) = with_headers(call(method, &route, port).json(body)).send(router).await;
                    let outcome = Sent { route: format!("{method} {template}"), field: written(&steps), status, answer };
                    let done = outcome.fault().is_none();
                    tried = Some(outcome);
                    if done {
                        break;
                    }
                }
                sent.extend(tried);
            }
            for parameter in operation["parameters"].as_array().into_iter().flatten().filter(|parameter| parameter["in"] == "query") {
                if is_listed(document, resolve(document, &parameter["schema"])) {
                    let field = parameter["name"].as_str().expect("a name").to_string();
                    let (status, answer) = with_headers(call(method, &format!("{route}?{field}={BAD}"), port)).send(router).await;
                    sent.push(Sent { route: format!("{method} {template}"), field, status, answer });
                }
            }
        }
    }
    sent
}

#[tokio::test]
async fn every_listed_field_of_every_request_refuses_another_value_by_its_path() {
    let wire = Wire::new();
    let broker = broker_router(wire.broker.clone(), BROKER_PORT);
    let broker_document = document(&broker, BROKER_PORT).await;
    let broker_headers = [("x-malo-broker-token", wire.broker_token())];
    let mut sent = send_bad_values(&broker, BROKER_PORT, &broker_document, &broker_headers, "").await;

    let (lease, lease_token, port) = wire.lease("agent-a");
    let (status, session) =
        call("POST", "/v1/sessions", port).header("x-malo-lease-token", &lease_token).json(json!({})).send(&lease).await;
    assert_eq!(status, StatusCode::OK, "{session}");
    let id = session["session_id"].as_str().unwrap();
    let headers =
        [("x-malo-lease-token", lease_token.clone()), ("x-malo-session-token", session["session_token"].as_str().unwrap().into())];
    let lease_document = document(&lease, port).await;
    sent.extend(send_bad_values(&lease, port, &lease_document, &headers, id).await);

    let faults: Vec<String> = sent.iter().filter_map(Sent::fault).collect();
    assert!(faults.is_empty(), "{} of {} bad values were not refused naming their field:\n{}", faults.len(), sent.len(), faults.join("\n"));
    // The walk reached what it must: the two fields, nested ones, tools, the query.
    let reached = |route: &str, field: &str| sent.iter().any(|sent| sent.route == route && sent.field == field);
    for (route, field) in [
        ("POST /v1/sessions", "color_scheme"),
        ("POST /v1/sessions", "permissions[0]"),
        ("POST /v1/sessions", "permissions[0].name"),
        ("POST /v1/sessions", "popups"),
        ("POST /v1/sessions/{id}/tools/click", "modifiers[0]"),
        ("POST /v1/sessions/{id}/tools/storage_state", "state.cookies[0].sameSite"),
        ("POST /v1/sessions/{id}/tools/grant_permissions", "permissions[0]"),
        ("POST /v1/sessions/{id}/actions", "action.type"),
        ("GET /v1/sessions/{id}/observe", "mode"),
    ] {
        assert!(reached(route, field), "the walk did not reach {route} {field}");
    }
    let tools =
        sent.iter().filter(|sent| sent.route.contains("/tools/")).map(|sent| &sent.route).collect::<std::collections::BTreeSet<_>>();
    assert!(tools.len() >= 20 && sent.len() >= 35, "{} tools, {} values", tools.len(), sent.len());
    // No refused body opened a session: the one session is still alone.
    let (_, listed) = call("GET", "/v1/sessions", port).header("x-malo-lease-token", &lease_token).send(&lease).await;
    assert_eq!(listed["sessions"].as_array().map(Vec::len), Some(1), "{listed}");
}

#[tokio::test]
async fn the_action_route_names_a_tools_field_under_action() {
    let wire = Wire::new();
    let (lease, lease_token, port) = wire.lease("agent-a");
    let (_, session) = call("POST", "/v1/sessions", port).header("x-malo-lease-token", &lease_token).json(json!({})).send(&lease).await;
    let id = session["session_id"].as_str().unwrap();
    let token = session["session_token"].as_str().unwrap();
    let action = |body: Value| {
        call("POST", &format!("/v1/sessions/{id}/actions"), port)
            .header("x-malo-lease-token", &lease_token)
            .header("x-malo-session-token", token)
            .json(json!({ "action": body }))
    };
    for (body, field) in [
        (json!({ "type": "screenshot", "format": "gif" }), "action.format"),
        (json!({ "type": "navigate", "url": "http://127.0.0.1/", "wait_until": "load" }), "action.wait_until"),
        (json!({ "type": "grant_permissions", "permissions": ["teleport"] }), "action.permissions[0]"),
        (json!({ "type": 7 }), "action.type"),
    ] {
        let (status, answer) = action(body.clone()).send(&lease).await;
        assert_eq!((status, code(&answer)), (StatusCode::BAD_REQUEST, "E_BAD_REQUEST"), "{body}: {answer}");
        assert_eq!(answer["error"]["details"]["field"], field, "{answer}");
        assert!(answer["error"]["message"].as_str().unwrap().starts_with(&format!("E_BAD_REQUEST: {field}: ")), "{answer}");
    }
    let (status, answer) = action(json!({ "type": "teleport" })).send(&lease).await;
    assert_eq!((status, code(&answer)), (StatusCode::NOT_FOUND, "E_UNKNOWN_TOOL"), "{answer}");
    assert_eq!(answer["error"]["details"]["field"], "action.type", "{answer}");
}
