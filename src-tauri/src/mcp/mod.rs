//! MCP: every registry tool as `browser_<tool>`, with the same JSON Schema and description,
//! plus `browser_session_new` / `_list` / `_close`. Two transports share one handler:
//! stdio (`malo mcp`, which talks to the daemon over HTTP) and Streamable HTTP at `/mcp`
//! on each lease endpoint (which calls the registry in-process). Snapshots come back as
//! text, screenshots as image content, failures as tool errors carrying the `E_*` code.

mod backend;
mod stdio;

pub use backend::{Backend, HttpBackend, LocalBackend};
pub use stdio::{run, McpArgs};

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{json, Map, Value};
use tokio::sync::Mutex;

use crate::error::{Error, Result};
use crate::tools::ToolDescription;

/// Prefix of every tool name over MCP.
const PREFIX: &str = "browser_";

/// How long a default session opened ahead of use waits for its first call before it
/// closes again: a host that starts its MCP servers with every conversation keeps no
/// browser for one that never browses.
const PREPARED_UNUSED_FOR: std::time::Duration = std::time::Duration::from_secs(60);

/// Options of the sessions an MCP connection creates (also `malo mcp`'s flags for them).
pub use crate::client::SessionOptions;

/// The MCP server for one client connection.
pub struct McpServer<B: Backend> {
    backend: Arc<B>,
    catalogue: Arc<Vec<ToolDescription>>,
    options: SessionOptions,
    /// The session tools use when the call names none; opened when the client has
    /// initialised, or on first use.
    default_session: Arc<Mutex<Option<String>>>,
    /// Whether a call has used the default session.
    default_used: Arc<std::sync::atomic::AtomicBool>,
    /// The tool list as MCP shows it, made on first use (every call checks its name).
    listed: Arc<std::sync::OnceLock<Vec<Tool>>>,
}

impl<B: Backend> Clone for McpServer<B> {
    fn clone(&self) -> Self {
        McpServer {
            backend: self.backend.clone(),
            catalogue: self.catalogue.clone(),
            options: self.options.clone(),
            default_session: self.default_session.clone(),
            default_used: self.default_used.clone(),
            listed: self.listed.clone(),
        }
    }
}

impl<B: Backend> McpServer<B> {
    /// A server over `backend`, exposing `catalogue`.
    pub fn new(backend: Arc<B>, catalogue: Vec<ToolDescription>, options: SessionOptions) -> McpServer<B> {
        McpServer {
            backend,
            catalogue: Arc::new(catalogue),
            options,
            default_session: Arc::default(),
            default_used: Arc::default(),
            listed: Arc::default(),
        }
    }

    fn tools(&self) -> &[Tool] {
        self.listed.get_or_init(|| self.list_tools_once())
    }

    fn list_tools_once(&self) -> Vec<Tool> {
        let mut tools: Vec<Tool> = self
            .catalogue
            .iter()
            .map(|tool| {
                let mut schema = tool.input_schema.as_object().cloned().unwrap_or_default();
                let properties = schema.entry("properties").or_insert_with(|| json!({}));
                properties["session"] = json!({
                    "type": "string",
                    "description": "The session to use (from browser_session_new); omitted: this connection's default session (opened when the client initialises)."
                });
                crate::tools::declare_defaults(properties, tool.presentation.mcp_defaults, "Over MCP");
                Tool::new(format!("{PREFIX}{}", tool.name), tool.description, Arc::new(schema))
            })
            .collect();
        let object = |value: Value| Arc::new(value.as_object().cloned().unwrap_or_default());
        tools.push(Tool::new(
            "browser_session_new",
            "Open a new isolated browsing session (its own cookies, storage and files). Returns its id; pass it as `session` to other tools.",
            object(crate::tools::schema_of::<crate::session::CreateSession>()),
        ));
        tools.push(Tool::new(
            "browser_session_list",
            "List this agent's open sessions.",
            object(json!({ "type": "object", "properties": {}, "additionalProperties": false })),
        ));
        tools.push(Tool::new(
            "browser_session_close",
            "Close a session (default: this connection's default session).",
            object(json!({ "type": "object", "properties": { "session": { "type": "string" } }, "additionalProperties": false })),
        ));
        tools
    }

    async fn session_for(&self, named: Option<String>) -> Result<String> {
        if let Some(session) = named {
            return Ok(session);
        }
        self.default_used.store(true, std::sync::atomic::Ordering::Release);
        self.default_session().await
    }

    /// Opens the default session while the client is still getting ready (its first page
    /// call then finds it open: on a cold start, the web process starts meanwhile), and
    /// closes it again if no call uses it within [`PREPARED_UNUSED_FOR`]. A failure here is
    /// left for the first call to meet and report.
    fn prepare_default_session(&self) {
        let server = self.clone();
        tokio::spawn(async move {
            let Ok(prepared) = server.default_session().await else { return };
            tokio::time::sleep(PREPARED_UNUSED_FOR).await;
            let mut default = server.default_session.lock().await;
            if default.as_deref() == Some(prepared.as_str()) && !server.default_used.load(std::sync::atomic::Ordering::Acquire) {
                *default = None;
                drop(default);
                let _ = server.backend.session_close(&prepared).await;
            }
        });
    }

    /// Closes the default session if it was opened ahead of use and no call has used it:
    /// a client that opens its own sessions gets the lease's every slot.
    async fn give_back_prepared_session(&self) {
        let mut default = self.default_session.lock().await;
        if self.default_used.load(std::sync::atomic::Ordering::Acquire) {
            return;
        }
        let prepared = default.take();
        drop(default);
        if let Some(prepared) = prepared {
            let _ = self.backend.session_close(&prepared).await;
        }
    }

    /// The default session, opened now if there is none.
    async fn default_session(&self) -> Result<String> {
        let mut default = self.default_session.lock().await;
        if let Some(session) = default.as_ref() {
            return Ok(session.clone());
        }
        let created = self.backend.session_new(self.options.spec("mcp")).await?;
        let id = created["session_id"].as_str().unwrap_or_default().to_string();
        *default = Some(id.clone());
        Ok(id)
    }

    /// The connection's default session is `session` no more (closed, or gone).
    async fn forget_default(&self, session: &str) {
        let mut default = self.default_session.lock().await;
        if default.as_deref() == Some(session) {
            *default = None;
        }
    }

    async fn dispatch(&self, name: &str, mut arguments: Map<String, Value>) -> Result<CallToolResult> {
        let named = match arguments.remove("session") {
            Some(Value::String(session)) => Some(session),
            Some(Value::Null) | None => None,
            Some(_) => return Err(Error::bad_request("session must be a string")),
        };
        match name {
            "browser_session_new" => {
                self.give_back_prepared_session().await;
                Ok(json_result(&self.backend.session_new(Value::Object(arguments)).await?))
            }
            "browser_session_list" => Ok(json_result(&self.backend.session_list().await?)),
            "browser_session_close" => {
                let session = match named {
                    Some(session) => session,
                    None => self.default_session.lock().await.clone().ok_or_else(|| Error::bad_request("no session to close"))?,
                };
                self.forget_default(&session).await;
                Ok(json_result(&self.backend.session_close(&session).await?))
            }
            _ => {
                let tool = name.strip_prefix(PREFIX).unwrap_or(name);
                let presentation =
                    self.catalogue.iter().find(|listed| listed.name == tool).map(|listed| listed.presentation).unwrap_or_default();
                crate::tools::apply_defaults(presentation.mcp_defaults, &mut arguments);
                let session = self.session_for(named).await?;
                let result = match self.backend.call(&session, tool, Value::Object(arguments)).await {
                    Err(error) if error.code == crate::error::ErrorCode::SessionNotFound => {
                        self.forget_default(&session).await;
                        return Err(error);
                    }
                    other => other?,
                };
                if presentation.ends_session {
                    self.forget_default(&session).await;
                }
                Ok(shape(&presentation, result))
            }
        }
    }
}

/// Text for results that have a text form (a snapshot), an image for those that hold one
/// (a screenshot), compact JSON for the rest, as the tool's presentation says. A result
/// that reports `ok: false` (a failed assertion, a failed run) is a tool error.
fn shape(presentation: &crate::tools::Presentation, mut result: Value) -> CallToolResult {
    let failed = result.get("ok") == Some(&Value::Bool(false));
    let mut content = Vec::new();
    let text = presentation.text_field.filter(|_| result.get("format") == Some(&json!("text")));
    let image = presentation.attachment.filter(|attachment| {
        attachment
            .holder(&mut result)
            .is_some_and(|holder| holder["data"].is_string() && holder["mime_type"].as_str().is_some_and(|mime| mime.starts_with("image/")))
    });
    if let Some(field) = text {
        // The text as the model reads it, and where it came from (seed 002: tab and seq).
        let text = format!(
            "{}\n[tab {} \u{b7} seq {}]",
            result[field].as_str().unwrap_or("").trim_end(),
            result["tab"].as_str().unwrap_or("-"),
            result["seq"]
        );
        content.push(ContentBlock::text(text));
    } else if let Some(holder) = image.and_then(|attachment| attachment.holder(&mut result)) {
        // The picture as image content; the rest of the result (sizes, scale, marks) as text.
        let data = holder.as_object_mut().and_then(|object| object.remove("data"));
        let mime_type = holder["mime_type"].as_str().unwrap_or("image/png").to_string();
        content.push(ContentBlock::image(data.and_then(|data| data.as_str().map(str::to_string)).unwrap_or_default(), mime_type));
        content.push(ContentBlock::text(result.to_string()));
    } else {
        content.push(ContentBlock::text(result.to_string()));
    }
    if failed {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}

fn json_result(value: &Value) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(value.to_string())])
}

fn error_result(error: &Error) -> CallToolResult {
    let mut text = error.to_string();
    if error.details.as_object().is_some_and(|details| !details.is_empty()) {
        text.push_str(&format!("\ndetails: {}", error.details));
    }
    CallToolResult::error(vec![ContentBlock::text(text)])
}

impl<B: Backend> ServerHandler for McpServer<B> {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_instructions(
            "malo-browser: hidden, isolated browser sessions. Start with browser_navigate, then browser_snapshot \
             (text, refs like e12) and act with browser_click / browser_fill / browser_press using those refs. \
             Tools use this connection's default session unless you pass `session` (see browser_session_new).",
        )
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        if let Some(info) = context.peer.peer_info() {
            self.backend.set_client_name(&info.client_info.name);
        }
        self.prepare_default_session();
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools().to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let known = self.tools().iter().any(|tool| tool.name == name);
        if !known {
            return Ok(error_result(&Error::new(crate::error::ErrorCode::UnknownTool, format!("there is no tool named {name:?}"))).into());
        }
        let arguments = request.arguments.unwrap_or_default();
        Ok(match self.dispatch(&name, arguments).await {
            Ok(result) => result,
            Err(error) => error_result(&error),
        }
        .into())
    }
}
