//! The wire: axum routers for the broker and for each lease endpoint, the guards, the
//! token extractors, and the error body. Invariant: only this module knows HTTP types;
//! handlers here parse, authorise and delegate to the broker, sessions and tools.

mod auth;
mod devtools;
#[cfg(test)]
mod enum_tests;
pub(crate) mod error;
mod guard;
mod openapi;
mod server;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::routing::{delete, get, post, MethodRouter};
use axum::{middleware, Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use self::auth::{BrokerAuth, LeaseAuth, SessionAuth};
use self::error::ApiResult as Result;
use self::guard::ApiJson;
pub use self::guard::MAX_BODY_BYTES;
pub use self::server::serve;
use crate::broker::{Broker, Lease};
use crate::session::CreateSession;
use crate::tools::{ToolContext, ToolRegistry};

/// State of the broker router.
#[derive(Debug, Clone)]
pub struct BrokerState {
    /// The broker.
    pub broker: Arc<Broker>,
}

/// State of a lease router.
#[derive(Debug, Clone)]
pub struct LeaseState {
    /// The lease it serves.
    pub lease: Arc<Lease>,
    /// The tools.
    pub registry: Arc<ToolRegistry>,
}

/// The broker's routes, for a listener on `port`.
pub fn broker_router(broker: Arc<Broker>, port: u16) -> Router {
    let router = Router::new()
        .route("/v1/health", get(health))
        .route("/v1/openapi.json", get(|| async { Json(openapi::document(openapi::Endpoint::Broker, &ToolRegistry::standard())) }))
        .route("/v1/leases", post(create_lease).get(list_leases))
        .route("/v1/leases/{id}/heartbeat", post(heartbeat))
        .route("/v1/leases/{id}", delete(release_lease))
        .route("/v1/stats", get(stats))
        .with_state(BrokerState { broker });
    finish(router, port)
}

/// A lease endpoint's routes.
pub fn lease_router(lease: Arc<Lease>, registry: Arc<ToolRegistry>) -> Router {
    let port = lease.port;
    let router = Router::new()
        .route("/v1/health", get(health))
        .route("/v1/tools", get(list_tools))
        .route(
            "/v1/openapi.json",
            get(|State(state): State<LeaseState>| async move { Json(openapi::document(openapi::Endpoint::Lease, &state.registry)) }),
        )
        .route("/v1/sessions", post(create_session).get(list_sessions))
        .route("/v1/profiles", get(list_profiles))
        .route("/v1/profiles/{name}", delete(delete_profile))
        .route("/v1/sessions/{id}", get(get_session).delete(close_session))
        .route("/v1/sessions/{id}/navigate", post(navigate))
        .route("/v1/sessions/{id}/observe", read_shortcut("observe"))
        .route("/v1/sessions/{id}/events", read_shortcut("events"))
        .route("/v1/sessions/{id}/tools/{tool}", post(call_tool))
        .route("/v1/sessions/{id}/actions", post(call_action))
        .nest_service("/mcp", mcp_service(lease.clone(), registry.clone()))
        .merge(devtools::routes())
        .with_state(LeaseState { lease, registry });
    finish(router, port)
}

/// Streamable HTTP MCP for this lease, behind the lease token.
fn mcp_service(lease: Arc<Lease>, registry: Arc<ToolRegistry>) -> Router {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
    let catalogue = registry.catalogue();
    let state = LeaseState { lease: lease.clone(), registry: registry.clone() };
    let backend = Arc::new(crate::mcp::LocalBackend::new(lease, registry));
    let service = StreamableHttpService::new(
        move || Ok(crate::mcp::McpServer::new(backend.clone(), catalogue.clone(), crate::mcp::SessionOptions::default())),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    Router::new().fallback_service(service).layer(middleware::from_fn_with_state(state, auth::require_lease_token))
}

/// Guards and fallbacks every router shares.
fn finish(router: Router, port: u16) -> Router {
    router
        .fallback(error::not_found)
        .method_not_allowed_fallback(error::method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn_with_state(port, guard::guard))
}

async fn health() -> Json<Value> {
    Json(
        json!({ "ok": true, "service": "malo-browser", "version": env!("CARGO_PKG_VERSION"), "sandbox": crate::engine::sandbox::enabled() }),
    )
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LeaseRequest {
    agent_id: String,
}

async fn create_lease(State(state): State<BrokerState>, _auth: BrokerAuth, ApiJson(request): ApiJson<LeaseRequest>) -> Result<Json<Value>> {
    let grant = state.broker.acquire(&request.agent_id)?;
    Ok(Json(serde_json::to_value(grant).map_err(|error| crate::error::Error::internal(error.to_string()))?))
}

async fn list_leases(State(state): State<BrokerState>, _auth: BrokerAuth) -> Json<Value> {
    Json(json!({ "leases": state.broker.list() }))
}

async fn stats(State(state): State<BrokerState>, _auth: BrokerAuth) -> Json<Value> {
    Json(state.broker.stats())
}

async fn heartbeat(State(state): State<BrokerState>, _auth: BrokerAuth, Path(id): Path<String>) -> Result<Json<Value>> {
    let lease = state.broker.heartbeat(&id)?;
    Ok(Json(json!({
        "lease_id": lease.lease_id,
        "agent_id": lease.agent_id,
        "endpoint": lease.endpoint,
        "expires_at": lease.expires_at,
    })))
}

async fn release_lease(State(state): State<BrokerState>, _auth: BrokerAuth, Path(id): Path<String>) -> Result<Json<Value>> {
    let closed = state.broker.release(&id, "released").await?;
    Ok(Json(json!({ "ok": true, "lease_id": id, "released": true, "closed_sessions": closed })))
}

async fn list_tools(State(state): State<LeaseState>, _auth: LeaseAuth) -> Json<Value> {
    Json(json!({ "tools": state.registry.catalogue() }))
}

async fn create_session(
    State(state): State<LeaseState>,
    _auth: LeaseAuth,
    ApiJson(request): ApiJson<CreateSession>,
) -> Result<Json<Value>> {
    let session = state.lease.sessions.create(request).await?;
    let mut body = serde_json::to_value(session.summary()).map_err(|error| crate::error::Error::internal(error.to_string()))?;
    // The one time the session token is shown.
    body["session_token"] = Value::String(session.token.expose().to_string());
    Ok(Json(body))
}

async fn list_profiles(State(state): State<LeaseState>, _auth: LeaseAuth) -> Json<Value> {
    Json(json!({ "profiles": state.lease.sessions.profiles().list() }))
}

async fn delete_profile(State(state): State<LeaseState>, _auth: LeaseAuth, Path(name): Path<String>) -> Result<Json<Value>> {
    state.lease.sessions.profiles().delete(&name)?;
    Ok(Json(json!({ "ok": true, "name": name, "deleted": true })))
}

async fn list_sessions(State(state): State<LeaseState>, _auth: LeaseAuth) -> Json<Value> {
    let sessions: Vec<_> = state.lease.sessions.list().iter().map(|session| session.summary()).collect();
    Json(json!({ "lease_id": state.lease.id, "sessions": sessions }))
}

async fn get_session(SessionAuth(session): SessionAuth) -> Json<Value> {
    Json(serde_json::to_value(session.summary()).unwrap_or_default())
}

async fn close_session(State(state): State<LeaseState>, SessionAuth(session): SessionAuth) -> Result<Json<Value>> {
    state.lease.sessions.close(&session.id, "requested").await?;
    Ok(Json(json!({ "ok": true, "session_id": session.id, "closed": true })))
}

fn context(state: &LeaseState, session: Arc<crate::session::Session>) -> ToolContext {
    ToolContext::new(session, state.lease.sessions.clone(), state.registry.clone())
}

async fn navigate(
    State(state): State<LeaseState>,
    SessionAuth(session): SessionAuth,
    ApiJson(input): ApiJson<Value>,
) -> Result<Json<Value>> {
    Ok(Json(state.registry.call("navigate", context(&state, session), input).await?.flattened()))
}

/// The seed's shortcut for a tool that reads (`observe`, `events`): `GET` with the tool's
/// input as query parameters, answered with its result flattened.
fn read_shortcut(tool: &'static str) -> MethodRouter<LeaseState> {
    get(
        move |State(state): State<LeaseState>, SessionAuth(session): SessionAuth, Query(query): Query<HashMap<String, String>>| async move {
            let output = state.registry.call(tool, context(&state, session), query_to_json(query)).await?;
            Ok::<_, error::ApiError>(Json(output.flattened()))
        },
    )
}

async fn call_tool(
    State(state): State<LeaseState>,
    SessionAuth(session): SessionAuth,
    Path(params): Path<HashMap<String, String>>,
    ApiJson(input): ApiJson<Value>,
) -> Result<Json<Value>> {
    let name = params.get("tool").cloned().unwrap_or_default();
    let output = state.registry.call(&name, context(&state, session), input).await?;
    Ok(Json(json!(output)))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ActionRequest {
    action: serde_json::Map<String, Value>,
}

/// The seed's action form: `{"action": {"type": "click", ...}}` runs the tool `type`.
async fn call_action(
    State(state): State<LeaseState>,
    SessionAuth(session): SessionAuth,
    ApiJson(request): ApiJson<ActionRequest>,
) -> Result<Json<Value>> {
    let mut input = request.action;
    let named = |error: crate::error::Error| {
        let message = format!("action.type: {}", error.message);
        crate::error::Error::new(error.code, message).with_details(json!({ "field": "action.type" }))
    };
    let name = match input.remove("type") {
        Some(Value::String(name)) => name,
        _ => return Err(named(crate::error::Error::bad_request("must name a tool, e.g. \"click\"")).into()),
    };
    state.registry.get(&name).map_err(named)?;
    // The tool's input is the rest of `action`: a refused field is named where it was sent.
    let output = state.registry.call(&name, context(&state, session), Value::Object(input)).await;
    Ok(Json(json!(output.map_err(|error| crate::tools::nested_error(error, "action"))?)))
}

/// Query strings carry text; numbers and booleans become JSON numbers and booleans so the
/// tool's own (strict) input type validates them like a JSON body.
fn query_to_json(query: HashMap<String, String>) -> Value {
    let object = query
        .into_iter()
        .map(|(key, text)| {
            // A tab id is text even when its hex digits happen to be all decimal.
            let value = if key == "tab" {
                json!(text)
            } else if let Ok(number) = text.parse::<u64>() {
                json!(number)
            } else if let Ok(flag) = text.parse::<bool>() {
                json!(flag)
            } else {
                json!(text)
            };
            (key, value)
        })
        .collect();
    Value::Object(object)
}
