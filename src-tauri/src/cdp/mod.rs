//! The DevTools endpoint: a session spoken to in the Chrome DevTools Protocol, so that
//! unmodified clients (Puppeteer, chrome-devtools-mcp, Playwright) drive its hidden tabs.
//! A session is the browser, its tabs are the targets; page-level commands are served by
//! this product's engine through the same requests, locks, URL rules, proxy, logs and
//! upload path as the tools.
//!
//! Rooms: `wire` (messages, errors, the outbox), `methods` (the table of what is served),
//! `targets` (the browser level: targets, attachments, auto-attach), `page/` (one attached
//! page: its domains and the events that follow its tab). `http/devtools.rs` carries the
//! socket and the discovery routes; this module never sees HTTP types.

pub mod methods;
mod page;
mod targets;
pub mod wire;

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::mpsc;

use self::wire::{Command, Outbox, ProtocolError};
use crate::session::{Session, SessionTable};
use crate::tools::{ToolContext, ToolRegistry};

/// The protocol version announced.
pub const PROTOCOL_VERSION: &str = "1.3";

/// The Chrome major version whose protocol the endpoint follows (clients read a version
/// from `product`).
const MODELLED_ON: &str = "140.0.0.0";

/// What a connection's parts share: the session, the tools, the outbox and its counters.
#[derive(Debug)]
pub(crate) struct Shared {
    session: Arc<Session>,
    sessions: Arc<SessionTable>,
    registry: Arc<ToolRegistry>,
    out: Outbox,
    next_context: AtomicI64,
    next_id: AtomicU64,
}

impl Shared {
    /// Runs a tool on the session, as an agent's call would.
    async fn tool(&self, name: &str, input: Value) -> Result<Value, ProtocolError> {
        let context = ToolContext::new(self.session.clone(), self.sessions.clone(), self.registry.clone());
        let output = self.registry.call(name, context, input).await?;
        Ok(output.result)
    }

    /// A fresh execution context id.
    fn context_id(&self) -> i64 {
        self.next_context.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// A fresh id (loader ids, session ids), as 32 hex characters.
    fn fresh_id(&self) -> String {
        let serial = self.next_id.fetch_add(1, Ordering::SeqCst) + 1;
        format!("{:08X}{}", serial, crate::secret::random_hex(12).to_uppercase())
    }
}

/// `GET /json/version`: what clients read before they connect.
pub fn version(session: &Session, ws_url: &str) -> Value {
    json!({
        "Browser": browser_product(),
        "Protocol-Version": PROTOCOL_VERSION,
        "User-Agent": user_agent(),
        "V8-Version": "",
        "WebKit-Version": engine_version(),
        "webSocketDebuggerUrl": ws_url,
        "malo-session": session.id,
    })
}

/// `GET /json/list`: the session's pages.
pub fn list(session: &Session) -> Value {
    let pages: Vec<Value> = session
        .tabs
        .list()
        .iter()
        .map(|tab| {
            let (url, title) = tab.status.get();
            json!({ "id": targets::page_target_id(&tab.id), "type": "page", "title": title, "url": targets::shown_url(&url), "description": "" })
        })
        .collect();
    Value::Array(pages)
}

fn browser_product() -> String {
    format!("Chrome/{MODELLED_ON} (malo-browser {}; WebKitGTK {})", env!("CARGO_PKG_VERSION"), engine_version())
}

fn engine_version() -> &'static str {
    "4.1"
}

fn user_agent() -> String {
    format!("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) malo-browser/{}", env!("CARGO_PKG_VERSION"))
}

/// Serves one client connection until it closes, the session closes, or `incoming` ends.
/// The session is left as it was: attached pages stop following their tabs, nothing else.
pub async fn serve(
    session: Arc<Session>,
    sessions: Arc<SessionTable>,
    registry: Arc<ToolRegistry>,
    mut incoming: mpsc::Receiver<String>,
    out: Outbox,
) {
    let shared = Arc::new(Shared {
        session: session.clone(),
        sessions: sessions.clone(),
        registry,
        out,
        next_context: AtomicI64::new(0),
        next_id: AtomicU64::new(0),
    });
    let browser = Arc::new(targets::Browser::new(shared.clone()));
    let mut changes = session.tabs.changes.subscribe();
    let mut alive = tokio::time::interval(Duration::from_millis(500));
    tracing::info!(session = %session.id, "devtools client connected");
    loop {
        tokio::select! {
            message = incoming.recv() => match message {
                Some(text) => receive(&browser, &text),
                None => break,
            },
            change = changes.recv() => match change {
                Ok(change) => browser.tabs_changed(change),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => browser.resync(),
                Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
            },
            _ = alive.tick() => {
                if sessions.get(&session.id).is_err() || shared.out.is_closed() {
                    break;
                }
            }
        }
    }
    browser.close();
    tracing::info!(session = %session.id, "devtools client disconnected");
}

/// One message from the client: parsed, then routed to the browser or an attached page.
fn receive(browser: &Arc<targets::Browser>, text: &str) {
    let command: Command = match serde_json::from_str(text) {
        Ok(command) => command,
        Err(error) => {
            // Without an id there is nobody to answer; Chrome answers id 0.
            let id = serde_json::from_str::<Value>(text).ok().and_then(|value| value["id"].as_u64()).unwrap_or(0);
            browser.shared.out.answer(
                id,
                None,
                Err(ProtocolError { code: -32700, message: format!("Message must be a valid JSON-RPC command: {error}") }),
            );
            return;
        }
    };
    browser.shared.session.touch();
    browser.route(command);
}
