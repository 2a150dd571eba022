//! Where an MCP server's tool calls go: over HTTP to the daemon (`malo mcp`), or straight
//! into the registry of a lease (the `/mcp` endpoint).

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::broker::Lease;
use crate::client::{ApiClient, LeaseClient};
use crate::error::{Error, Result};
use crate::session::CreateSession;
use crate::tools::{ToolContext, ToolRegistry};

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

/// Calls the daemon's HTTP API: finds (or starts) the daemon in the background, takes a
/// lease (lazily, named after the MCP client) and keeps the tokens of the sessions it
/// creates (in the [`LeaseClient`] the CLI uses too).
#[derive(Debug)]
pub struct HttpBackend {
    data_dir: PathBuf,
    /// The search for the daemon, started with the backend; taken by the first caller.
    finding: std::sync::Mutex<Option<tokio::task::JoinHandle<Result<ApiClient>>>>,
    broker: tokio::sync::OnceCell<Result<ApiClient>>,
    agent_id: std::sync::Mutex<Option<String>>,
    lease: tokio::sync::OnceCell<LeaseClient>,
}

impl HttpBackend {
    /// A backend on the daemon of `data_dir`, which it starts finding (or starting) now, so
    /// that the MCP handshake never waits for a daemon; `agent_id` overrides the name
    /// derived from the client. Needs a tokio runtime.
    pub fn starting(data_dir: PathBuf, agent_id: Option<String>) -> HttpBackend {
        let finding = tokio::task::spawn_blocking({
            let data_dir = data_dir.clone();
            move || crate::client::ensure_broker(&data_dir).map(|(_, broker)| broker)
        });
        HttpBackend {
            data_dir,
            finding: std::sync::Mutex::new(Some(finding)),
            broker: tokio::sync::OnceCell::new(),
            agent_id: std::sync::Mutex::new(agent_id),
            lease: tokio::sync::OnceCell::new(),
        }
    }

    /// The daemon's broker, once found; the same answer (or error) to every caller.
    pub async fn broker(&self) -> Result<ApiClient> {
        self.broker
            .get_or_init(|| async {
                let finding = self.finding.lock().expect("finding poisoned").take();
                match finding {
                    Some(finding) => {
                        finding.await.unwrap_or_else(|error| Err(Error::internal(format!("the daemon search failed: {error}"))))
                    }
                    // A first caller gave up waiting: look again.
                    None => {
                        let data_dir = self.data_dir.clone();
                        blocking(move || crate::client::ensure_broker(&data_dir).map(|(_, broker)| broker)).await
                    }
                }
            })
            .await
            .clone()
    }

    /// The lease, taken on first use.
    pub async fn lease(&self) -> Result<&LeaseClient> {
        self.lease
            .get_or_try_init(|| async {
                let agent_id = self
                    .agent_id
                    .lock()
                    .expect("agent id poisoned")
                    .clone()
                    .unwrap_or_else(|| format!("mcp-{}", crate::secret::random_hex(3)));
                let broker = self.broker().await?;
                blocking(move || LeaseClient::take(&broker, &agent_id)).await
            })
            .await
    }

    /// The lease, if one was taken.
    pub fn held_lease(&self) -> Option<&LeaseClient> {
        self.lease.get()
    }

    /// Runs `call` with the lease on a blocking thread (the client is synchronous).
    async fn with_lease<T: Send + 'static>(&self, call: impl FnOnce(LeaseClient) -> Result<T> + Send + 'static) -> Result<T> {
        let lease = self.lease().await?.clone();
        blocking(move || call(lease)).await
    }

    /// Closes every session this connection opened (on shutdown).
    pub async fn close_all(&self) {
        let Some(lease) = self.held_lease() else { return };
        for id in lease.session_ids() {
            let _ = self.session_close(&id).await;
        }
    }
}

async fn blocking<T: Send + 'static>(call: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(call).await.map_err(|error| Error::internal(format!("client task failed: {error}")))?
}

impl Backend for HttpBackend {
    async fn session_new(&self, spec: Value) -> Result<Value> {
        self.with_lease(move |lease| lease.open_session(&spec)).await
    }

    async fn session_list(&self) -> Result<Value> {
        self.with_lease(|lease| lease.list_sessions()).await
    }

    async fn session_close(&self, session: &str) -> Result<Value> {
        let session = session.to_string();
        self.with_lease(move |lease| lease.close_session(&session)).await
    }

    async fn call(&self, session: &str, tool: &str, input: Value) -> Result<Value> {
        let (session, tool) = (session.to_string(), tool.to_string());
        self.with_lease(move |lease| Ok(lease.call_tool(&session, &tool, &input)?.flattened())).await
    }

    fn set_client_name(&self, name: &str) {
        let mut agent_id = self.agent_id.lock().expect("agent id poisoned");
        if agent_id.is_none() {
            let cleaned: String =
                name.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '-' }).take(40).collect();
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
