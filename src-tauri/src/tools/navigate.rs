//! `navigate`: load an http/https URL and wait for load plus DOM/network quiet.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{millis, Tool, ToolContext};
use crate::engine::{NavigationReport, PageRequest};

/// Input of `navigate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NavigateInput {
    /// An http or https URL without embedded credentials.
    pub url: String,
    /// Upper bound in ms for waiting, after load, until the DOM and network are quiet (default 3000, max 60000).
    #[serde(default)]
    #[schemars(range(max = 60000))]
    pub settle_ms: Option<u64>,
    /// Upper bound in ms for the load itself (default 30000, max 120000).
    #[serde(default)]
    #[schemars(range(max = 120000))]
    pub timeout_ms: Option<u64>,
}

/// Output of `navigate` and `history`.
#[derive(Debug, Serialize)]
pub(crate) struct NavigateOutput {
    /// Where the page ended up.
    pub url: String,
    /// Its title.
    pub title: String,
    /// How the load and settle went.
    pub navigation: NavigationReport,
}

pub(super) fn tool() -> Tool {
    Tool::new(
        "navigate",
        "Open an http(s) URL in the session and wait until it has loaded and the DOM and network are quiet (up to settle_ms). Reports http_status, net_error and settle details.",
        |context: ToolContext, input: NavigateInput| async move {
            let url = crate::urls::check_navigation_url(&input.url)?;
            let timeout = millis(input.timeout_ms, 30_000, 120_000, "timeout_ms")?;
            let settle = millis(input.settle_ms, 3_000, 60_000, "settle_ms")?;
            let navigation = context.page(PageRequest::Navigate { url: url.to_string(), timeout, settle }).await?;
            output(&context, navigation)
        },
    )
}

/// The output for a finished navigation.
pub(super) fn output(context: &ToolContext, navigation: NavigationReport) -> crate::error::Result<NavigateOutput> {
    let (_, title) = context.tab()?.page.get();
    Ok(NavigateOutput { url: navigation.url.clone(), title, navigation })
}
