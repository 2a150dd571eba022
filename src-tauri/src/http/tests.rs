//! The wire's rules, fast: the real routers over a fake engine (sessions open and close,
//! nothing renders). Browser behaviour is proven by the end-to-end tests, not here.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

use super::{broker_router, lease_router};
use crate::broker::testing::test_broker;
use crate::broker::Broker;
use crate::testing::TempDir;
use crate::tools::ToolRegistry;

pub(super) const BROKER_PORT: u16 = 7410;

pub(super) struct Wire {
    pub(super) broker: Arc<Broker>,
    _dir: TempDir,
}

impl Wire {
    pub(super) fn new() -> Wire {
        let (broker, dir) = test_broker(|settings| settings.daemon_port = BROKER_PORT);
        Wire { broker, _dir: dir }
    }

    pub(super) fn broker_token(&self) -> String {
        self.broker.token.expose().to_string()
    }

    /// A lease's router and its token.
    pub(super) fn lease(&self, agent: &str) -> (Router, String, u16) {
        let grant = self.broker.acquire(agent).unwrap();
        let lease = self.broker.lease(&grant.lease_id).unwrap();
        let port = lease.port;
        (lease_router(lease, Arc::new(ToolRegistry::standard())), grant.token, port)
    }
}

pub(super) struct Call {
    method: &'static str,
    path: String,
    host: String,
    headers: Vec<(&'static str, String)>,
    body: Option<(String, String)>,
}

pub(super) fn call(method: &'static str, path: &str, port: u16) -> Call {
    Call { method, path: path.to_string(), host: format!("127.0.0.1:{port}"), headers: Vec::new(), body: None }
}

impl Call {
    pub(super) fn header(mut self, name: &'static str, value: &str) -> Call {
        self.headers.push((name, value.to_string()));
        self
    }
    fn host(mut self, host: &str) -> Call {
        self.host = host.to_string();
        self
    }
    pub(super) fn json(mut self, body: Value) -> Call {
        self.body = Some(("application/json".into(), body.to_string()));
        self
    }
    fn raw(mut self, content_type: &str, body: impl Into<String>) -> Call {
        self.body = Some((content_type.into(), body.into()));
        self
    }

    pub(super) async fn send(self, router: &Router) -> (StatusCode, Value) {
        let mut request = Request::builder().method(self.method).uri(&self.path).header("host", &self.host);
        for (name, value) in &self.headers {
            request = request.header(*name, value);
        }
        let request = match self.body {
            Some((content_type, body)) => {
                request.header("content-type", content_type).header("content-length", body.len()).body(Body::from(body))
            }
            None => request.body(Body::empty()),
        }
        .unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }
}

pub(super) fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or("")
}

#[tokio::test]
async fn the_host_must_be_loopback_with_the_port() {
    let wire = Wire::new();
    let router = broker_router(wire.broker.clone(), BROKER_PORT);
    for host in ["evil.example:7410", "127.0.0.1:7411", "127.0.0.1", "[::1]:7410", ""] {
        let (status, body) = call("GET", "/v1/health", BROKER_PORT).host(host).send(&router).await;
        assert_eq!((status, code(&body)), (StatusCode::FORBIDDEN, "E_FORBIDDEN_HOST"), "Host {host:?}");
    }
    for host in ["127.0.0.1:7410", "localhost:7410"] {
        let (status, _) = call("GET", "/v1/health", BROKER_PORT).host(host).send(&router).await;
        assert_eq!(status, StatusCode::OK, "Host {host:?}");
    }
}

#[tokio::test]
async fn requests_two_parsers_could_read_differently_are_refused() {
    let wire = Wire::new();
    let router = broker_router(wire.broker.clone(), BROKER_PORT);
    let token = wire.broker_token();
    let ambiguous = [
        call("GET", "/v1/leases", BROKER_PORT).header("host", "evil.example:7410"),
        call("GET", "/v1/leases", BROKER_PORT).header("host", "127.0.0.1:7410"),
        call("POST", "/v1/leases", BROKER_PORT).json(json!({ "agent_id": "a" })).header("content-length", "17"),
        call("POST", "/v1/leases", BROKER_PORT).json(json!({ "agent_id": "a" })).header("transfer-encoding", "chunked"),
        call("GET", "http://evil.example/v1/leases", BROKER_PORT),
        call("GET", "http://127.0.0.1:7411/v1/leases", BROKER_PORT),
    ];
    for request in ambiguous {
        let described = format!("{} {} {:?}", request.method, request.path, request.headers);
        let (status, body) = request.header("x-malo-broker-token", &token).send(&router).await;
        assert_eq!((status, code(&body)), (StatusCode::BAD_REQUEST, "E_BAD_REQUEST"), "{described}: {body}");
    }
    // An absolute-form target naming the right host is fine.
    let (status, _) = call("GET", "http://127.0.0.1:7410/v1/leases", BROKER_PORT).header("x-malo-broker-token", &token).send(&router).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn stats_count_leases_and_sessions_for_the_broker_only() {
    let wire = Wire::new();
    let router = broker_router(wire.broker.clone(), BROKER_PORT);
    let (status, _) = call("GET", "/v1/stats", BROKER_PORT).send(&router).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (_lease, _token, _port) = wire.lease("agent-a");
    let (status, stats) = call("GET", "/v1/stats", BROKER_PORT).header("x-malo-broker-token", &wire.broker_token()).send(&router).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!((stats["leases"].as_u64(), stats["sessions"].as_u64()), (Some(1), Some(0)), "{stats}");
    assert!(stats["main_thread"]["queue_wait"]["p99_ms"].is_number(), "{stats}");
    assert_eq!(stats["connections"]["per_port"], 256);
}

#[tokio::test]
async fn each_layer_takes_only_its_own_token() {
    let wire = Wire::new();
    let broker = broker_router(wire.broker.clone(), BROKER_PORT);
    let (status, body) = call("GET", "/v1/leases", BROKER_PORT).send(&broker).await;
    assert_eq!((status, code(&body)), (StatusCode::UNAUTHORIZED, "E_UNAUTHORIZED"));
    // The right token but for its last character.
    let token = wire.broker_token();
    let last = if token.ends_with('0') { '1' } else { '0' };
    let almost = format!("{}{last}", &token[..token.len() - 1]);
    let (status, _) = call("GET", "/v1/leases", BROKER_PORT).header("x-malo-broker-token", &almost).send(&broker).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    let (lease, lease_token, port) = wire.lease("agent-a");
    // The lease token does not open the broker, nor the broker token a lease.
    let (status, _) = call("GET", "/v1/leases", BROKER_PORT).header("x-malo-broker-token", &lease_token).send(&broker).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = call("GET", "/v1/sessions", port).header("x-malo-lease-token", &wire.broker_token()).send(&lease).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // The legacy header name is accepted.
    let (status, _) = call("GET", "/v1/sessions", port).header("x-pagehand-lease-token", &lease_token).send(&lease).await;
    assert_eq!(status, StatusCode::OK);
    // /mcp, a service rather than handlers, takes the same lease token (LeaseAuth as middleware).
    let mcp = |token: Option<&str>| {
        let request = call("POST", "/mcp", port).json(json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" }));
        match token {
            Some(token) => request.header("x-malo-lease-token", token),
            None => request,
        }
    };
    let (status, body) = mcp(None).send(&lease).await;
    assert_eq!((status, code(&body)), (StatusCode::UNAUTHORIZED, "E_UNAUTHORIZED"), "{body}");
    let (status, _) = mcp(Some(&wire.broker_token())).send(&lease).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, body) = mcp(Some(&lease_token)).send(&lease).await;
    assert_ne!(status, StatusCode::UNAUTHORIZED, "{body}");

    // A session's token opens that session only, and only with its lease's token.
    let create = || call("POST", "/v1/sessions", port).header("x-malo-lease-token", &lease_token).json(json!({ "name": "s" }));
    let (status, first) = create().send(&lease).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    let (_, second) = create().send(&lease).await;
    let path = format!("/v1/sessions/{}", first["session_id"].as_str().unwrap());
    let first_token = first["session_token"].as_str().unwrap();
    let second_token = second["session_token"].as_str().unwrap();
    let (status, body) =
        call("GET", &path, port).header("x-malo-lease-token", &lease_token).header("x-malo-session-token", first_token).send(&lease).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.get("session_token").is_none(), "a summary never repeats the token");
    let (status, _) =
        call("GET", &path, port).header("x-malo-lease-token", &lease_token).header("x-malo-session-token", second_token).send(&lease).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = call("GET", &path, port).header("x-malo-session-token", first_token).send(&lease).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // Over the limit (2 here): 429 with the limit named.
    let (status, body) = create().send(&lease).await;
    assert_eq!((status, code(&body)), (StatusCode::TOO_MANY_REQUESTS, "E_TOO_MANY_SESSIONS"));
    assert_eq!(body["error"]["details"]["max_sessions"], 2);
}

#[tokio::test]
async fn bodies_are_small_json_and_strictly_typed() {
    let wire = Wire::new();
    let broker = broker_router(wire.broker.clone(), BROKER_PORT);
    let token = wire.broker_token();
    let lease = |body: Call| body.header("x-malo-broker-token", &token);
    let (status, body) = lease(call("POST", "/v1/leases", BROKER_PORT).raw("text/plain", "{}")).send(&broker).await;
    assert_eq!((status, code(&body)), (StatusCode::UNSUPPORTED_MEDIA_TYPE, "E_UNSUPPORTED_MEDIA_TYPE"));
    let huge = format!("{{\"agent_id\":\"{}\"}}", "a".repeat(super::MAX_BODY_BYTES));
    let (status, body) = lease(call("POST", "/v1/leases", BROKER_PORT).raw("application/json", huge)).send(&broker).await;
    assert_eq!((status, code(&body)), (StatusCode::PAYLOAD_TOO_LARGE, "E_PAYLOAD_TOO_LARGE"));
    for bad in ["{", "[]", "{\"agent_id\": 7}", "{\"agent_id\": \"a\", \"extra\": 1}"] {
        let (status, body) = lease(call("POST", "/v1/leases", BROKER_PORT).raw("application/json", bad)).send(&broker).await;
        assert_eq!((status, code(&body)), (StatusCode::BAD_REQUEST, "E_BAD_REQUEST"), "body {bad}: {body}");
        assert_eq!(body["ok"], false);
        assert!(body["error"]["message"].as_str().is_some_and(|message| !message.is_empty()));
    }
    let (status, grant) = lease(call("POST", "/v1/leases", BROKER_PORT).json(json!({ "agent_id": "agent-a" }))).send(&broker).await;
    assert_eq!(status, StatusCode::OK, "{grant}");

    // Tool inputs: unknown fields, wrong types and NUL characters are refused before the engine.
    let (router, lease_token, port) = wire.lease("agent-a");
    let (_, session) = call("POST", "/v1/sessions", port).header("x-malo-lease-token", &lease_token).json(json!({})).send(&router).await;
    let id = session["session_id"].as_str().unwrap();
    let session_token = session["session_token"].as_str().unwrap();
    let tool = |name: &str, input: Value| {
        call("POST", &format!("/v1/sessions/{id}/tools/{name}"), port)
            .header("x-malo-lease-token", &lease_token)
            .header("x-malo-session-token", session_token)
            .json(input)
    };
    for (name, input) in [
        ("click", json!({ "ref": "e1", "bogus": true })),
        ("click", json!({ "ref": 12 })),
        ("evaluate", json!({ "expression": "1\u{0}" })),
        ("navigate", json!({ "url": "file:///etc/passwd" })),
    ] {
        let (status, body) = tool(name, input.clone()).send(&router).await;
        assert!(status == StatusCode::BAD_REQUEST, "{name} {input}: {status} {body}");
        assert!(["E_BAD_REQUEST", "E_INVALID_URL"].contains(&code(&body)), "{name} {input}: {body}");
    }
    let (status, body) = tool("teleport", json!({})).send(&router).await;
    assert_eq!((status, code(&body)), (StatusCode::NOT_FOUND, "E_UNKNOWN_TOOL"));
}

#[tokio::test]
async fn the_read_shortcuts_take_their_input_from_the_query_and_answer_flattened() {
    let wire = Wire::new();
    let (router, lease_token, port) = wire.lease("agent-a");
    let (_, session) = call("POST", "/v1/sessions", port).header("x-malo-lease-token", &lease_token).json(json!({})).send(&router).await;
    let id = session["session_id"].as_str().unwrap();
    let session_token = session["session_token"].as_str().unwrap();
    let read = |path: &str| {
        call("GET", &format!("/v1/sessions/{id}/{path}"), port)
            .header("x-malo-lease-token", &lease_token)
            .header("x-malo-session-token", session_token)
    };
    let (status, body) = read("events?limit=5").send(&router).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["events"].is_array() && body["cursor"].is_u64() && body.get("seq").is_some(), "{body}");
    let (status, body) = read("events?limit=0").send(&router).await;
    assert_eq!((status, code(&body)), (StatusCode::BAD_REQUEST, "E_BAD_REQUEST"), "{body}");
    let (status, body) = read("observe?bogus=1").send(&router).await;
    assert_eq!((status, code(&body)), (StatusCode::BAD_REQUEST, "E_BAD_REQUEST"), "{body}");
    let (status, _) =
        call("GET", &format!("/v1/sessions/{id}/events"), port).header("x-malo-lease-token", &lease_token).send(&router).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "the session's token is required");
}
