//! `navigate`: load an http/https URL and wait for load plus DOM/network quiet.

use schemars::JsonSchema;
use serde::Serialize;

use super::{outcome, Lean, Positional, Presentation, Tool, ToolContext};
use crate::engine::{NavigationReport, TabRequest};
use crate::error::{Error, Result};

/// Defines the input of a tool that loads a document and waits like a navigation
/// (`navigate`, `history`): its own fields, then `settle_ms` and `timeout_ms`, strictly
/// parsed; the struct gets `load_waits()`. Made as [`action_input!`] makes the actions'
/// inputs, with a navigation's waits instead of an action's.
///
/// [`action_input!`]: super::action_input::action_input
macro_rules! load_input {
    ($(#[$meta:meta])* $name:ident { $($own:tt)* }) => {
        $crate::tools::action_input::input_with_waits! {
            $(#[$meta])*
            $name { $($own)* }
            /// Upper bound in ms for waiting, after load, until the DOM and network are quiet (default 3000, max 60000).
            settle_ms: NAVIGATION_SETTLE_MS,
            /// Upper bound in ms for the load itself (default 30000, max 120000).
            timeout_ms: LOAD_TIMEOUT_MS,
        }

        impl $name {
            /// How long the tool waits: for the load (`timeout_ms`), then for quiet after it
            /// (`settle_ms`); read in this order, so the first refused is the error.
            fn load_waits(&self) -> $crate::error::Result<(std::time::Duration, std::time::Duration)> {
                let timeout = $crate::tools::limits::LOAD_TIMEOUT_MS.millis(self.timeout_ms, "timeout_ms")?;
                let settle = $crate::tools::limits::NAVIGATION_SETTLE_MS.millis(self.settle_ms, "settle_ms")?;
                Ok((timeout, settle))
            }
        }
    };
}

pub(crate) use load_input;

load_input! {
    /// Input of `navigate`.
    NavigateInput {
        /// An http or https URL without embedded credentials.
        url: String,
    }
}

/// Output of `navigate` and `history`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct NavigateOutput {
    /// Where the page ended up.
    pub url: String,
    /// Its title.
    pub title: String,
    /// Whether the page changed: false when the URL turned out to be a download.
    pub navigated: bool,
    /// How the load and settle went.
    pub navigation: NavigationReport,
    /// The downloads the URL started instead of a page, when it was one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub downloads: Vec<outcome::DownloadBegun>,
}

pub(super) fn tool() -> Tool {
    Tool::page(
        "navigate",
        "Open an http(s) URL in the session and wait until it has loaded and the DOM and network are quiet (up to settle_ms). Reports http_status, net_error and settle details.",
        |context: ToolContext, input: NavigateInput| async move {
            let url = crate::urls::check_navigation_url(&input.url)?;
            let (timeout, settle) = input.load_waits()?;
            let mark = outcome::event_mark(&context);
            match context.ask(TabRequest::Navigate { url: url.to_string(), timeout, settle }).await {
                Ok(navigation) => output(&context, navigation),
                Err(error) => became_download(&context, mark, error).await,
            }
        },
    )
    .long()
    .presented(Presentation { mcp_lean: Some(Lean::Navigation), ..Presentation::default() })
    .positional(&[Positional::Field("url")])
}

/// The output for a finished navigation.
pub(super) fn output(context: &ToolContext, navigation: NavigationReport) -> Result<NavigateOutput> {
    let (_, title) = context.tab()?.status.get();
    Ok(NavigateOutput { url: navigation.url.clone(), title, navigated: true, navigation, downloads: Vec::new() })
}

/// A load that failed because its response became a download is not an error: the page
/// stays, and the answer names the download. Any other failure stays the error it is.
async fn became_download(context: &ToolContext, mark: outcome::ActionMark, error: Error) -> Result<NavigateOutput> {
    let report: Option<NavigationReport> = serde_json::from_value(error.details["navigation"].clone()).ok();
    let Some(report) = report.filter(outcome::is_download_interruption) else { return Err(error) };
    let downloads = outcome::downloads_since(context, mark, &Some(report.clone())).await;
    if downloads.is_empty() {
        return Err(error);
    }
    let (url, title) = context.tab()?.status.get();
    Ok(NavigateOutput { url, title, navigated: false, navigation: report, downloads })
}
