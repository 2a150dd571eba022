//! A small HTTP client for the daemon's own API, used by `malo mcp` and the CLI. It keeps
//! connections alive, sends the right tokens, and turns error bodies back into [`Error`]s
//! with their `E_*` codes.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::broker::instance::{read_broker_file, BrokerInfo};
use crate::error::{Error, ErrorCode, Result};

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
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(180)))
            .build();
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
            Error::new(ErrorCode::EngineUnavailable, format!("cannot reach the malo daemon at {}: {error}", self.base))
        };
        let mut response = match (method, body) {
            ("GET", _) => self.with_headers(self.agent.get(&url)).call().map_err(unreachable)?,
            ("DELETE", _) => self.with_headers(self.agent.delete(&url)).call().map_err(unreachable)?,
            (_, Some(body)) => self.with_headers(self.agent.post(&url)).send_json(body).map_err(unreachable)?,
            (_, None) => self.with_headers(self.agent.post(&url)).send_empty().map_err(unreachable)?,
        };
        let status = response.status().as_u16();
        let value: Value = response.body_mut().read_json().unwrap_or(Value::Null);
        if (200..300).contains(&status) {
            return Ok(value);
        }
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

/// The broker of `data_dir`, if a healthy daemon runs there.
pub fn running_broker(data_dir: &Path) -> Option<(BrokerInfo, ApiClient)> {
    let info = read_broker_file(&data_dir.join("broker.json"))?;
    let client = ApiClient::new(&info.endpoint, vec![("x-malo-broker-token", info.token.clone())]);
    client.call("GET", "/v1/health", None).ok()?;
    Some((info, client))
}

/// The broker of `data_dir`, starting a daemon in the background when none runs, and
/// waiting (up to 60 s) until it answers.
pub fn ensure_broker(data_dir: &Path) -> Result<(BrokerInfo, ApiClient)> {
    if let Some(found) = running_broker(data_dir) {
        return Ok(found);
    }
    let log = data_dir.join("daemon-start.log");
    std::fs::create_dir_all(data_dir).map_err(|error| Error::internal(format!("cannot create {}: {error}", data_dir.display())))?;
    let output = std::fs::File::create(&log).map_err(|error| Error::internal(format!("cannot write {}: {error}", log.display())))?;
    let me = std::env::current_exe().map_err(|error| Error::internal(error.to_string()))?;
    let mut command = std::process::Command::new(me);
    command
        .arg("daemon")
        .arg(format!("--data-dir={}", data_dir.display()))
        .stdin(std::process::Stdio::null())
        .stdout(output.try_clone().map_err(|error| Error::internal(error.to_string()))?)
        .stderr(output);
    detach(&mut command);
    command.spawn().map_err(|error| Error::internal(format!("cannot start the daemon: {error}")))?;
    let begun = std::time::Instant::now();
    while begun.elapsed() < Duration::from_secs(60) {
        if let Some(found) = running_broker(data_dir) {
            return Ok(found);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(Error::new(
        ErrorCode::EngineUnavailable,
        format!("the daemon did not start within 60 s; see {}", log.display()),
    ))
}

/// Runs the daemon in its own session, so it outlives the client that started it.
fn detach(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
}
