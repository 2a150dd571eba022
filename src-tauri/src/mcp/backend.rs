//! Where an MCP server's tool calls go: over HTTP to the daemon (`malo mcp`), or straight
//! into the registry of a lease (the `/mcp` endpoint).

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use serde_json::{json, Value};
use tokio::sync::Mutex;

use crate::broker::Lease;
use crate::client::ApiClient;
use crate::error::{Error, ErrorCode, Result};
use crate::session::CreateSession;
use crate::tools::{ToolContext, ToolOutput, ToolRegistry};

/// What an MCP server needs from the browser.
pub trait Backend: Send + Sync + 'static {
    /// Opens a session; answers its summary (`session_id`, …).
    fn session_new(&self, spec: Value) -> impl Future<Output = Result<Value>> + Send;
    /// Lists the sessions.
    fn session_list(&self) -> impl Future<Output = Result<Value>> + Send;
    /// Closes a session.
    fn session_close(&self, session: &str) -> impl Future<Output = Result<Value>> + Send;
    /// Calls a registry tool on a session.
    fn call(&self, session: &str, tool: &str, input: Value) -> impl Future<Output = Result<Value>> + Send;
    /// The MCP client's name, once it has said it (used to name the agent).
    fn set_client_name(&self, _name: &str) {}
}

/// A lease held by an MCP connection.
#[derive(Debug, Clone)]
pub struct HeldLease {
    /// Lease id.
    pub lease_id: String,
    /// Client of the lease endpoint (with the lease token).
    pub client: ApiClient,
    /// When the daemon said it expires (RFC 3339), to pace heartbeats.
    pub expires_at: String,
}

/// Calls the daemon's HTTP API: takes a lease (lazily, named after the MCP client) and
/// keeps the tokens of the sessions it creates.
#[derive(Debug)]
pub struct HttpBackend {
    broker: ApiClient,
    agent_id: std::sync::Mutex<Option<String>>,
    lease: tokio::sync::OnceCell<HeldLease>,
    session_tokens: Mutex<HashMap<String, String>>,
}

impl HttpBackend {
    /// A backend on the broker; `agent_id` overrides the name derived from the client.
    pub fn new(broker: ApiClient, agent_id: Option<String>) -> HttpBackend {
        HttpBackend {
            broker,
            agent_id: std::sync::Mutex::new(agent_id),
            lease: tokio::sync::OnceCell::new(),
            session_tokens: Mutex::default(),
        }
    }

    /// The lease, taken on first use.
    pub async fn lease(&self) -> Result<&HeldLease> {
        self.lease
            .get_or_try_init(|| async {
                let agent_id = self
                    .agent_id
                    .lock()
                    .expect("agent id poisoned")
                    .clone()
                    .unwrap_or_else(|| format!("mcp-{}", crate::secret::random_hex(3)));
                let grant = self.broker.call_async("POST", "/v1/leases".into(), Some(json!({ "agent_id": agent_id }))).await?;
                let client = ApiClient::new(
                    grant["endpoint"].as_str().unwrap_or_default(),
                    vec![("x-malo-lease-token", grant["token"].as_str().unwrap_or_default().to_string())],
                );
                Ok(HeldLease {
                    lease_id: grant["lease_id"].as_str().unwrap_or_default().to_string(),
                    client,
                    expires_at: grant["expires_at"].as_str().unwrap_or_default().to_string(),
                })
            })
            .await
    }

    /// The lease, if one was taken.
    pub fn held_lease(&self) -> Option<&HeldLease> {
        self.lease.get()
    }

    async fn session_client(&self, session: &str) -> Result<ApiClient> {
        let lease = self.lease().await?;
        let tokens = self.session_tokens.lock().await;
        let token = tokens.get(session).ok_or_else(|| {
            Error::new(ErrorCode::SessionNotFound, format!("no session {session} was opened by this MCP connection"))
        })?;
        Ok(lease.client.with_header("x-malo-session-token", token.clone()))
    }

    /// Closes every session this connection opened (on shutdown).
    pub async fn close_all(&self) {
        let ids: Vec<String> = self.session_tokens.lock().await.keys().cloned().collect();
        for id in ids {
            let _ = self.session_close(&id).await;
        }
    }
}

impl Backend for HttpBackend {
    async fn session_new(&self, spec: Value) -> Result<Value> {
        let lease = self.lease().await?;
        let mut created = lease.client.call_async("POST", "/v1/sessions".into(), Some(spec)).await?;
        let id = created["session_id"].as_str().unwrap_or_default().to_string();
        let token = created["session_token"].as_str().unwrap_or_default().to_string();
        self.session_tokens.lock().await.insert(id, token);
        if let Some(object) = created.as_object_mut() {
            object.remove("session_token");
        }
        Ok(created)
    }

    async fn session_list(&self) -> Result<Value> {
        self.lease().await?.client.call_async("GET", "/v1/sessions".into(), None).await
    }

    async fn session_close(&self, session: &str) -> Result<Value> {
        let client = self.session_client(session).await?;
        let closed = client.call_async("DELETE", format!("/v1/sessions/{session}"), None).await;
        self.session_tokens.lock().await.remove(session);
        closed
    }

    async fn call(&self, session: &str, tool: &str, input: Value) -> Result<Value> {
        let client = self.session_client(session).await?;
        let answer = client.call_async("POST", format!("/v1/sessions/{session}/tools/{tool}"), Some(input)).await?;
        if tool == "close" {
            self.session_tokens.lock().await.remove(session);
        }
        let output: ToolOutput = serde_json::from_value(answer)
            .map_err(|error| Error::internal(format!("the daemon's answer is unreadable: {error}")))?;
        Ok(output.flattened())
    }

    fn set_client_name(&self, name: &str) {
        let mut agent_id = self.agent_id.lock().expect("agent id poisoned");
        if agent_id.is_none() {
            let cleaned: String = name
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '-' })
                .take(40)
                .collect();
            *agent_id = Some(format!("{}-{}", if cleaned.is_empty() { "mcp" } else { &cleaned }, crate::secret::random_hex(3)));
        }
    }
}

/// Calls a lease's registry in-process (the `/mcp` endpoint, authorised by the lease token).
#[derive(Debug, Clone)]
pub struct LocalBackend {
    lease: Arc<Lease>,
    registry: Arc<ToolRegistry>,
}

impl LocalBackend {
    /// A backend on `lease`.
    pub fn new(lease: Arc<Lease>, registry: Arc<ToolRegistry>) -> LocalBackend {
        LocalBackend { lease, registry }
    }
}

impl Backend for LocalBackend {
    async fn session_new(&self, spec: Value) -> Result<Value> {
        let request: CreateSession =
            serde_json::from_value(spec).map_err(|error| Error::bad_request(format!("invalid session: {error}")))?;
        let session = self.lease.sessions.create(request).await?;
        serde_json::to_value(session.summary()).map_err(|error| Error::internal(error.to_string()))
    }

    async fn session_list(&self) -> Result<Value> {
        let sessions: Vec<_> = self.lease.sessions.list().iter().map(|session| session.summary()).collect();
        Ok(json!({ "lease_id": self.lease.id, "sessions": sessions }))
    }

    async fn session_close(&self, session: &str) -> Result<Value> {
        self.lease.sessions.close(session, "requested").await?;
        Ok(json!({ "ok": true, "session_id": session, "closed": true }))
    }

    async fn call(&self, session: &str, tool: &str, input: Value) -> Result<Value> {
        let session = self.lease.sessions.get(session)?;
        session.touch();
        let context = ToolContext::new(session, self.lease.sessions.clone(), self.registry.clone());
        Ok(self.registry.call(tool, context, input).await?.flattened())
    }
}
