//! A small HTTP client for the daemon's own API, used by `malo mcp` and the CLI. It keeps
//! connections alive, sends the right tokens, and turns error bodies back into [`Error`]s
//! with their `E_*` codes.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::broker::instance::{read_broker_file, BrokerInfo};
use crate::error::{Error, ErrorCode, Result};

/// The largest answer read (a full-page screenshot of 16,384 px at device scale, in
/// base64, is well below it).
const ANSWER_MAX_BYTES: u64 = 1 << 30;

/// A client of one endpoint (the broker or a lease).
#[derive(Clone)]
pub struct ApiClient {
    agent: ureq::Agent,
    base: String,
    headers: Vec<(&'static str, String)>,
}

impl std::fmt::Debug for ApiClient {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("ApiClient").field("base", &self.base).finish_non_exhaustive()
    }
}

impl ApiClient {
    /// A client of `base` (`http://127.0.0.1:<port>`) sending `headers` with every request.
    pub fn new(base: &str, headers: Vec<(&'static str, String)>) -> ApiClient {
        ApiClient::with_timeout(base, headers, Duration::from_secs(180))
    }

    /// [`ApiClient::new`] whose every request gives up after `timeout`.
    pub fn with_timeout(base: &str, headers: Vec<(&'static str, String)>, timeout: Duration) -> ApiClient {
        let config = ureq::Agent::config_builder().http_status_as_error(false).timeout_global(Some(timeout)).build();
        ApiClient { agent: config.into(), base: base.trim_end_matches('/').to_string(), headers }
    }

    /// The same endpoint with one more header.
    pub fn with_header(&self, name: &'static str, value: String) -> ApiClient {
        let mut copy = self.clone();
        copy.headers.push((name, value));
        copy
    }

    /// A blocking request; `body` is sent as JSON.
    pub fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value> {
        let url = format!("{}{path}", self.base);
        let unreachable = |error: ureq::Error| {
            // Refused before anything was sent: nothing happened, the call may go elsewhere.
            let refused = matches!(&error, ureq::Error::ConnectionFailed)
                || matches!(&error, ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused);
            let error = Error::new(ErrorCode::EngineUnavailable, format!("cannot reach the malo daemon at {}: {error}", self.base));
            if refused {
                error.with_details(serde_json::json!({ "refused": true }))
            } else {
                error
            }
        };
        let mut response = match (method, body) {
            ("GET", _) => self.with_headers(self.agent.get(&url)).call().map_err(unreachable)?,
            ("DELETE", _) => self.with_headers(self.agent.delete(&url)).call().map_err(unreachable)?,
            (_, Some(body)) => self.with_headers(self.agent.post(&url)).send_json(body).map_err(unreachable)?,
            (_, None) => self.with_headers(self.agent.post(&url)).send_empty().map_err(unreachable)?,
        };
        let status = response.status().as_u16();
        // Read whole, then parsed: ureq's `read_json` parses bodies above a third of its
        // 10 MB limit a byte at a time and refuses those above it (a tall screenshot).
        let body = response.body_mut().with_config().limit(ANSWER_MAX_BYTES).read_to_vec();
        let value: Option<Value> = body.ok().and_then(|bytes| serde_json::from_slice(&bytes).ok());
        if (200..300).contains(&status) {
            return value.ok_or_else(|| Error::internal(format!("the malo daemon's answer to {path} is not JSON")));
        }
        let value = value.unwrap_or(Value::Null);
        let error = &value["error"];
        let code = error["code"].as_str().and_then(ErrorCode::from_wire).unwrap_or(ErrorCode::Internal);
        let message = error["message"].as_str().unwrap_or("the daemon answered with an error");
        let message = message.strip_prefix(&format!("{}: ", code.as_str())).unwrap_or(message).to_string();
        Err(Error::new(code, message).with_details(error["details"].clone()))
    }

    fn with_headers<B>(&self, mut request: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        for (name, value) in &self.headers {
            request = request.header(*name, value.as_str());
        }
        request
    }

    /// [`ApiClient::call`] on a blocking thread, for async callers.
    pub async fn call_async(&self, method: &'static str, path: String, body: Option<Value>) -> Result<Value> {
        let client = self.clone();
        tokio::task::spawn_blocking(move || client.call(method, &path, body.as_ref()))
            .await
            .map_err(|error| Error::internal(format!("client task failed: {error}")))?
    }
}

/// Options of the sessions a client opens by itself (the default session of an MCP
/// connection or of the CLI); also `malo mcp`'s flags for them.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SessionOptions {
    /// Use this named login profile for the sessions it opens.
    #[arg(long)]
    pub profile: Option<String>,
    /// Viewport width of the sessions it opens.
    #[arg(long)]
    pub width: Option<u32>,
    /// Viewport height of the sessions it opens.
    #[arg(long)]
    pub height: Option<u32>,
}

impl SessionOptions {
    /// `POST /v1/sessions`' body for a default session named `name`.
    pub fn spec(&self, name: &str) -> Value {
        let mut spec = serde_json::json!({ "name": name });
        if let Some(width) = self.width {
            spec["width"] = serde_json::json!(width);
        }
        if let Some(height) = self.height {
            spec["height"] = serde_json::json!(height);
        }
        if let Some(profile) = &self.profile {
            spec["profile"] = serde_json::json!(profile);
        }
        spec
    }
}

/// A lease taken through the HTTP API, with the tokens of the sessions it opened: the one
/// bookkeeping of session tokens the CLI and `malo mcp` share. Cheap to clone; clones
/// share the token book.
#[derive(Clone)]
pub struct LeaseClient {
    /// The lease.
    pub lease_id: String,
    /// Its endpoint.
    pub endpoint: String,
    /// When the daemon said it expires (RFC 3339), to pace heartbeats.
    pub expires_at: String,
    token: String,
    api: ApiClient,
    // A std mutex: a short list, copied in and out, never held across a request.
    sessions: Arc<Mutex<Vec<(String, String)>>>,
}

impl std::fmt::Debug for LeaseClient {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("LeaseClient").field("lease_id", &self.lease_id).field("endpoint", &self.endpoint).finish_non_exhaustive()
    }
}

/// What the CLI keeps of its lease between runs (`cli.json`, mode 0600).
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct SavedLease {
    /// The lease.
    pub lease_id: Option<String>,
    /// Its endpoint.
    pub endpoint: Option<String>,
    /// Its token.
    pub token: Option<String>,
    /// Session id and session token of each session it opened, oldest first.
    pub sessions: Vec<(String, String)>,
    /// The pid of the daemon that granted the lease (its `broker.json`'s).
    #[serde(default)]
    pub broker_pid: Option<u32>,
}

impl LeaseClient {
    /// Takes (or renews) the lease of `agent_id` from the broker.
    pub fn take(broker: &ApiClient, agent_id: &str) -> Result<LeaseClient> {
        let grant = broker.call("POST", "/v1/leases", Some(&serde_json::json!({ "agent_id": agent_id })))?;
        let text = |field: &str| grant[field].as_str().unwrap_or_default().to_string();
        let token = text("token");
        Ok(LeaseClient {
            lease_id: text("lease_id"),
            endpoint: text("endpoint"),
            expires_at: text("expires_at"),
            api: ApiClient::new(&text("endpoint"), vec![("x-malo-lease-token", token.clone())]),
            token,
            sessions: Arc::default(),
        })
    }

    /// The lease a previous run saved, used without asking the broker (a tool call renews
    /// a lease as a heartbeat does): `None` when nothing complete was saved.
    pub fn resume(saved: &SavedLease) -> Option<LeaseClient> {
        let (lease_id, endpoint, token) = (saved.lease_id.clone()?, saved.endpoint.clone()?, saved.token.clone()?);
        Some(LeaseClient {
            lease_id,
            api: ApiClient::new(&endpoint, vec![("x-malo-lease-token", token.clone())]),
            endpoint,
            expires_at: String::new(),
            token,
            sessions: Arc::new(Mutex::new(saved.sessions.clone())),
        })
    }

    /// The sessions a previous run of the same lease opened (when the lease is the same).
    pub fn adopt(&self, saved: &SavedLease) {
        if saved.lease_id.as_deref() == Some(self.lease_id.as_str()) {
            *self.book() = saved.sessions.clone();
        }
    }

    /// What to save for a later run.
    pub fn saved(&self) -> SavedLease {
        SavedLease {
            lease_id: Some(self.lease_id.clone()),
            endpoint: Some(self.endpoint.clone()),
            token: Some(self.token.clone()),
            sessions: self.book().clone(),
            broker_pid: None,
        }
    }

    fn book(&self) -> std::sync::MutexGuard<'_, Vec<(String, String)>> {
        self.sessions.lock().expect("session tokens poisoned")
    }

    /// The lease endpoint's client (lease token only).
    pub fn api(&self) -> &ApiClient {
        &self.api
    }

    /// Opens a session (`spec` is `POST /v1/sessions`' body) and keeps its token; answers
    /// the session's summary without the token.
    pub fn open_session(&self, spec: &Value) -> Result<Value> {
        let mut created = self.api.call("POST", "/v1/sessions", Some(spec))?;
        let id = created["session_id"].as_str().unwrap_or_default().to_string();
        let token = created["session_token"].as_str().unwrap_or_default().to_string();
        self.book().push((id, token));
        if let Some(object) = created.as_object_mut() {
            object.remove("session_token");
        }
        Ok(created)
    }

    /// The ids of the sessions it opened, oldest first.
    pub fn session_ids(&self) -> Vec<String> {
        self.book().iter().map(|(id, _)| id.clone()).collect()
    }

    /// A client of session `wanted` (default: the newest it opened).
    pub fn session(&self, wanted: Option<&str>) -> Result<(String, ApiClient)> {
        let book = self.book();
        let found = match wanted {
            Some(id) => book.iter().find(|(known, _)| known == id),
            None => book.last(),
        };
        let (id, token) = found.cloned().ok_or_else(|| {
            Error::new(
                ErrorCode::SessionNotFound,
                match wanted {
                    Some(id) => format!("session {id} was not opened here; open one with session new"),
                    None => "no session yet; open one with session new".to_string(),
                },
            )
        })?;
        Ok((id, self.api.with_header("x-malo-session-token", token)))
    }

    /// The session a call that names none uses: the newest it opened, else (when `open`) a
    /// new one opened with `spec`. Answers its id and whether it was opened now.
    pub fn default_session(&self, spec: &Value, open: bool) -> Result<(String, bool)> {
        if let Some((id, _)) = self.book().last() {
            return Ok((id.clone(), false));
        }
        if !open {
            return Err(Error::new(ErrorCode::SessionNotFound, "no session is open"));
        }
        let created = self.open_session(spec)?;
        Ok((created["session_id"].as_str().unwrap_or_default().to_string(), true))
    }

    /// Forgets a session the daemon no longer has (closed when idle, or the daemon restarted).
    pub fn forget_session(&self, session: &str) {
        self.forget(session);
    }

    /// Calls a tool on a session it opened; forgets the session when the tool closed it.
    pub fn call_tool(&self, session: &str, tool: &str, input: &Value) -> Result<crate::tools::ToolOutput> {
        let (id, client) = self.session(Some(session))?;
        let answer = client.call("POST", &format!("/v1/sessions/{id}/tools/{tool}"), Some(input))?;
        if tool == "close" {
            self.forget(&id);
        }
        serde_json::from_value(answer).map_err(|error| Error::internal(format!("the daemon's answer is unreadable: {error}")))
    }

    /// Closes a session it opened.
    pub fn close_session(&self, session: &str) -> Result<Value> {
        let (id, client) = self.session(Some(session))?;
        let closed = client.call("DELETE", &format!("/v1/sessions/{id}"), None);
        self.forget(&id);
        closed
    }

    /// The lease's sessions, as the daemon lists them.
    pub fn list_sessions(&self) -> Result<Value> {
        self.api.call("GET", "/v1/sessions", None)
    }

    fn forget(&self, session: &str) {
        self.book().retain(|(known, _)| known != session);
    }
}

/// The broker of `data_dir`, if a healthy daemon runs there.
pub fn running_broker(data_dir: &Path) -> Option<(BrokerInfo, ApiClient)> {
    let info = read_broker_file(&data_dir.join("broker.json"))?;
    let client = ApiClient::new(&info.endpoint, vec![("x-malo-broker-token", info.token.clone())]);
    client.call("GET", "/v1/health", None).ok()?;
    Some((info, client))
}

/// The broker of `data_dir`, starting a daemon in the background when none runs, and
/// waiting (up to 60 s) until it answers. A daemon for another data directory than the
/// default one takes any free broker port, so several installations run side by side. If
/// the daemon cannot start, its own one-line reason is the error, word for word.
pub fn ensure_broker(data_dir: &Path) -> Result<(BrokerInfo, ApiClient)> {
    if let Some(found) = running_broker(data_dir) {
        return Ok(found);
    }
    let log = data_dir.join("daemon-start.log");
    std::fs::create_dir_all(data_dir).map_err(|error| Error::internal(format!("cannot create {}: {error}", data_dir.display())))?;
    let output = std::fs::File::create(&log).map_err(|error| Error::internal(format!("cannot write {}: {error}", log.display())))?;
    let daemon = crate::daemon_binary::daemon_binary().map_err(|error| Error::new(ErrorCode::EngineUnavailable, error))?;
    let mut command = std::process::Command::new(daemon);
    command.arg("daemon").arg(format!("--data-dir={}", data_dir.display()));
    let default_dir = crate::config::expand_home(crate::config::DEFAULT_DATA_DIR).ok();
    if default_dir.as_deref() != Some(data_dir) {
        command.args(["--daemon-port", "0"]);
    }
    command
        .stdin(std::process::Stdio::null())
        .stdout(output.try_clone().map_err(|error| Error::internal(error.to_string()))?)
        .stderr(output);
    detach(&mut command);
    let mut daemon = command.spawn().map_err(|error| Error::internal(format!("cannot start the daemon: {error}")))?;
    let begun = std::time::Instant::now();
    while begun.elapsed() < Duration::from_secs(60) {
        if let Some(found) = running_broker(data_dir) {
            return Ok(found);
        }
        if let Ok(Some(status)) = daemon.try_wait() {
            // Another client's daemon may have won the data directory meanwhile.
            std::thread::sleep(Duration::from_millis(200));
            if let Some(found) = running_broker(data_dir) {
                return Ok(found);
            }
            // Its last line says why (another daemon holds the data directory, no display...).
            let said = std::fs::read_to_string(&log).unwrap_or_default();
            let reason =
                said.lines().rev().find(|line| line.starts_with("malo: ")).map(|line| line.trim_start_matches("malo: ").to_string());
            return Err(Error::new(
                ErrorCode::EngineUnavailable,
                reason.unwrap_or_else(|| format!("the daemon exited ({status}) before it was ready; see {}", log.display())),
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Err(Error::new(ErrorCode::EngineUnavailable, format!("the daemon did not start within 60 s; see {}", log.display())))
}

/// Runs the daemon in its own session, so it outlives the client that started it.
fn detach(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;

    /// Serves one HTTP answer with `body` on a free loopback port; answers its base URL.
    fn serve_once(status: &'static str, body: String) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        let base = format!("http://{}", listener.local_addr().expect("an address"));
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().expect("a connection");
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let head = format!("HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n", body.len());
            let _ = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(body.as_bytes()));
        });
        base
    }

    #[test]
    fn answers_larger_than_ten_megabytes_are_read_whole() {
        let data = "A".repeat(12 * 1024 * 1024);
        let base = serve_once("200 OK", format!("{{\"data\":\"{data}\"}}"));
        let answer = ApiClient::new(&base, Vec::new()).call("GET", "/", None).expect("the answer reads");
        assert_eq!(answer["data"].as_str().map(str::len), Some(data.len()));
    }

    #[test]
    fn an_answer_that_is_not_json_is_an_error_and_error_bodies_keep_their_code() {
        let base = serve_once("200 OK", "not json".into());
        let error = ApiClient::new(&base, Vec::new()).call("GET", "/x", None).expect_err("not JSON");
        assert_eq!(error.code, ErrorCode::Internal);
        let refused = r#"{"ok":false,"error":{"code":"E_BAD_REQUEST","message":"E_BAD_REQUEST: url: missing","details":{}}}"#;
        let base = serve_once("400 Bad Request", refused.into());
        let error = ApiClient::new(&base, Vec::new()).call("POST", "/x", Some(&serde_json::json!({}))).expect_err("refused");
        assert_eq!((error.code, error.message.as_str()), (ErrorCode::BadRequest, "url: missing"));
    }
}
