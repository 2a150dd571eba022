//! `cdp_endpoint`: where a DevTools protocol client (Puppeteer, chrome-devtools-mcp,
//! Playwright) connects to drive this session (see `cdp/` and docs/CDP.md).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Tool, ToolContext};

/// Input of `cdp_endpoint`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CdpEndpointInput {}

/// Output of `cdp_endpoint`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct CdpEndpointOutput {
    /// The browser WebSocket (Puppeteer's browserWSEndpoint, chrome-devtools-mcp's
    /// --wsEndpoint). It carries the capability: treat it as a secret.
    ws_url: String,
    /// The HTTP base (Puppeteer's browserURL, chrome-devtools-mcp's --browserUrl,
    /// Playwright's connectOverCDP): `/json/version` is under it.
    http_url: String,
    /// The same capability as a header, for clients that send headers.
    headers: BTreeMap<String, String>,
}

pub(super) fn tools() -> Vec<Tool> {
    vec![Tool::session(
        "cdp_endpoint",
        "Where a Chrome DevTools Protocol client drives this session: ws_url (Puppeteer browserWSEndpoint, chrome-devtools-mcp --wsEndpoint), http_url (browserURL, --browserUrl, Playwright connectOverCDP) and headers. The URLs carry a capability: whoever holds them drives the session. Loopback only; it dies with the session.",
        |context: ToolContext, _input: CdpEndpointInput| async move {
            let session = &context.session;
            let port = context.sessions.port();
            let key = session.devtools_key.expose();
            let mut headers = BTreeMap::new();
            headers.insert("Authorization".to_string(), format!("Bearer {key}"));
            Ok(CdpEndpointOutput {
                ws_url: format!("ws://127.0.0.1:{port}/devtools/{key}/devtools/browser/{}", session.id),
                http_url: format!("http://127.0.0.1:{port}/devtools/{key}"),
                headers,
            })
        },
    )]
}
