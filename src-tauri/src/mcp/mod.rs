//! MCP: every registry tool as `browser_<tool>`, with the same JSON Schema and description,
//! plus `browser_session_new` / `_list` / `_close`. Two transports share one handler:
//! stdio (`malo mcp`, which talks to the daemon over HTTP) and Streamable HTTP at `/mcp`
//! on each lease endpoint (which calls the registry in-process). Snapshots come back as
//! text, screenshots as image content, failures as tool errors carrying the `E_*` code.

mod backend;
pub mod caps;
mod schema;
mod stdio;

pub use backend::{Backend, HttpBackend, LocalBackend};
pub use caps::{Caps, Group};
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
    /// Every tool as MCP shows it with the `sessions` group and without it, made on first
    /// use; a listing keeps those of the enabled groups.
    listed: Arc<std::sync::OnceLock<[Vec<Tool>; 2]>>,
    /// The groups this connection lists beyond the core set.
    caps: Arc<std::sync::Mutex<Caps>>,
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
            caps: self.caps.clone(),
        }
    }
}

impl<B: Backend> McpServer<B> {
    /// A server over `backend`, exposing `catalogue`: the core set until groups are
    /// enabled ([`McpServer::with_caps`], `browser_enable_caps`).
    pub fn new(backend: Arc<B>, catalogue: Vec<ToolDescription>, options: SessionOptions) -> McpServer<B> {
        McpServer {
            backend,
            catalogue: Arc::new(catalogue),
            options,
            default_session: Arc::default(),
            default_used: Arc::default(),
            listed: Arc::default(),
            caps: Arc::default(),
        }
    }

    /// The server listing these groups beyond the core set from the start.
    pub fn with_caps(self, caps: Caps) -> McpServer<B> {
        *self.caps.lock().expect("caps poisoned") = caps;
        self
    }

    /// The groups enabled now.
    fn caps(&self) -> Caps {
        self.caps.lock().expect("caps poisoned").clone()
    }

    /// The tools listed now: the core set and those of the enabled groups.
    fn tools(&self) -> Vec<Tool> {
        let caps = self.caps();
        let every = self.listed.get_or_init(|| [self.list_tools_once(false), self.list_tools_once(true)]);
        every[usize::from(caps.has(Group::Sessions))].iter().filter(|tool| caps.lists(&tool.name)).cloned().collect()
    }

    /// Every tool as MCP lists it; with `sessions`, page tools take `session` too.
    fn list_tools_once(&self, sessions: bool) -> Vec<Tool> {
        let mut tools: Vec<Tool> = self
            .catalogue
            .iter()
            .map(|tool| {
                let mut schema = schema::compact(&tool.input_schema);
                let properties = &mut schema["properties"];
                shared_fields(&tool.input_schema["properties"], properties);
                if sessions {
                    properties["session"] = json!({ "type": "string" });
                }
                for (field, value) in tool.presentation.mcp_defaults {
                    properties[*field]["default"] = crate::tools::default_value(value);
                }
                if tool.presentation.current_page {
                    let (field, value) = crate::tools::CURRENT_PAGE_DEFAULT;
                    properties[field]["default"] = json!(value);
                }
                let schema = schema.as_object().cloned().unwrap_or_default();
                Tool::new(format!("{PREFIX}{}", tool.name), schema::tool_description(tool.description), Arc::new(schema))
            })
            .collect();
        let object = |value: Value| Arc::new(value.as_object().cloned().unwrap_or_default());
        tools.push(Tool::new("browser_enable_caps", ENABLE_CAPS_DESCRIPTION, object(enable_caps_schema())));
        tools.push(Tool::new(
            "browser_session_new",
            "Open an isolated session; pass its id as `session` to other tools. It has its own cookies, storage and files; tools without `session` use this connection's default session.",
            object(schema::compact(&crate::tools::schema_of::<crate::session::CreateSession>())),
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

    /// Enables groups for this connection and tells the client its tool list changed.
    async fn enable_caps(&self, arguments: Map<String, Value>, peer: &rmcp::service::Peer<RoleServer>) -> Result<CallToolResult> {
        let groups = match arguments.get("groups") {
            Some(Value::Array(groups)) if groups.iter().all(Value::is_string) && arguments.len() == 1 => {
                groups.iter().filter_map(Value::as_str).map(str::to_string).collect::<Vec<_>>()
            }
            _ => return Err(Error::bad_request("invalid input for enable_caps: give only `groups`, a list of group names")),
        };
        let before: Vec<String> = self.tools().into_iter().map(|tool| tool.name.to_string()).collect();
        let added = self.caps.lock().expect("caps poisoned").enable(groups.iter().map(String::as_str))?;
        let tools: Vec<String> = self.tools().into_iter().map(|tool| tool.name.to_string()).filter(|name| !before.contains(name)).collect();
        if !added.is_empty() {
            // Before the answer, so a client lists again before its next turn; bounded, as a
            // Streamable HTTP client without a stream open may never take it. A client that
            // does not follow the list still has the answer's names.
            let _ = tokio::time::timeout(std::time::Duration::from_secs(1), peer.notify_tool_list_changed()).await;
        }
        let caps = self.caps();
        let enabled: Vec<&str> = Group::ALL.into_iter().filter(|group| caps.has(*group)).map(Group::name).collect();
        Ok(json_result(&json!({ "enabled": enabled, "added_tools": tools })))
    }

    /// The error for a call to a tool this connection does not list: the group to enable,
    /// when the tool is in one.
    fn not_listed(&self, name: &str) -> Error {
        let exists = self.catalogue.iter().any(|tool| name.strip_prefix(PREFIX) == Some(tool.name) && !caps::CLI_ONLY.contains(&tool.name))
            || matches!(name, "browser_session_new" | "browser_session_list" | "browser_session_close");
        let message = match caps::group_of(name).filter(|_| exists) {
            Some(group) => format!(
                "{name} is in the tool group `{0}`, not enabled on this connection: call browser_enable_caps {{\"groups\": [\"{0}\"]}} (or start malo mcp --caps {0})",
                group.name()
            ),
            None => format!("there is no tool named {name:?}"),
        };
        Error::new(crate::error::ErrorCode::UnknownTool, message)
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
                crate::tools::apply_current_page(&presentation, &mut arguments);
                let session = self.session_for(named).await?;
                let input = presentation.mcp_lean.map(|_| arguments.clone()).unwrap_or_default();
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
                Ok(shape(&presentation, result, &input))
            }
        }
    }
}

/// Text for results that have a text form (a snapshot), an image for those that hold one
/// (a screenshot), compact JSON for the rest, as the tool's presentation says, in its lean
/// form when it has one (`tools/lean.rs`; `input` is the call's). A result that reports
/// `ok: false` (a failed assertion, a failed run) is a tool error.
fn shape(presentation: &crate::tools::Presentation, mut result: Value, input: &Map<String, Value>) -> CallToolResult {
    let failed = result.get("ok") == Some(&Value::Bool(false));
    let lean = |result: &mut Value| {
        if let Some(lean) = presentation.mcp_lean.filter(|_| !failed) {
            lean.apply(result, input);
        }
    };
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
        lean(&mut result);
        content.push(ContentBlock::text(result.to_string()));
    } else {
        lean(&mut result);
        content.push(ContentBlock::text(result.to_string()));
    }
    if failed {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}

/// The fields many tools share, said once (the server's instructions say what they mean):
/// an action's target (`ref`, `selector`, `x`, `y`); and an action's waits (`settle_ms`,
/// `timeout_ms`: the instructions give their defaults), a page tool's `tab` and an action's
/// `locator`, which MCP leaves out (`browser_tab_select` chooses the tab page tools act on;
/// `browser_find`'s description says actions take a locator; any given is still taken). Each only where the registry's field is
/// the shared one, as its description tells.
const SHARED_FIELDS: [(&str, &str, Option<&str>); 8] = [
    ("ref", "The element: a ref", Some("Ref from browser_snapshot.")),
    ("selector", "The element: a CSS selector", Some("Or a CSS selector.")),
    ("x", "Or a point in the viewport", None),
    ("y", "Or a point in the viewport", None),
    ("settle_ms", "Upper bound in ms for waiting for what the action caused", None),
    ("timeout_ms", "How long to wait for the element to be actionable", None),
    ("tab", "The tab to act on", None),
    ("locator", "The element: a locator", None),
];

fn shared_fields(registry: &Value, listed: &mut Value) {
    for (field, said, short) in SHARED_FIELDS {
        let shared = registry[field]["description"].as_str().is_some_and(|description| description.starts_with(said));
        let Some(listed_field) = listed.get_mut(field).filter(|_| shared) else { continue };
        match (field, short) {
            ("tab" | "locator" | "settle_ms" | "timeout_ms", _) => {
                listed.as_object_mut().map(|fields| fields.remove(field));
            }
            (_, Some(short)) => listed_field["description"] = json!(short),
            (_, None) => {
                listed_field.as_object_mut().map(|object| object.remove("description"));
            }
        }
    }
}

/// What `browser_enable_caps` says of itself: the groups and what they hold, once.
const ENABLE_CAPS_DESCRIPTION: &str = "Add tool groups to this connection; the tool list then grows. network (response bodies, \
     interception, HAR, headers, throttling), files (upload, downloads), state (cookies, storage, profiles, identity), vision \
     (mouse at x,y, drag, observe, viewport), pdf, devtools (evaluate, extract, assert, run_steps, events, hover, check, scroll, \
     focus, a11y, vitals, init scripts), person (a person logs in, watch, highlight), sessions (more sessions), content (read, diff, \
     find), emulation (media, devices, HTTP auth, clipboard), all.";

fn enable_caps_schema() -> Value {
    let mut names: Vec<&str> = Group::ALL.into_iter().map(Group::name).collect();
    names.push("all");
    json!({
        "type": "object",
        "properties": { "groups": { "type": "array", "items": { "enum": names } } },
        "required": ["groups"]
    })
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
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build()).with_instructions(
            "malo-browser: hidden, isolated browser sessions. Start with browser_navigate, then browser_snapshot \
             (text, refs like e12) and act with browser_click / browser_fill / browser_press using those refs \
             (or a CSS `selector`). Every action also takes `timeout_ms` (default 5000), how long it waits for its \
             element to be actionable, and `settle_ms` (default 1500, max 30000), how long it waits for what it \
             caused (navigation, dialogs, quiet DOM). Page tools act on the selected tab \
             (browser_tab_select). More tools come in groups: browser_enable_caps adds them.",
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
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let listed = self.tools().iter().any(|tool| tool.name == name);
        if !listed {
            return Ok(error_result(&self.not_listed(&name)).into());
        }
        let arguments = request.arguments.unwrap_or_default();
        if name == "browser_enable_caps" {
            return Ok(match self.enable_caps(arguments, &context.peer).await {
                Ok(result) => result,
                Err(error) => error_result(&error),
            }
            .into());
        }
        Ok(match self.dispatch(&name, arguments).await {
            Ok(result) => result,
            Err(error) => error_result(&error),
        }
        .into())
    }
}

#[cfg(test)]
mod tests;
