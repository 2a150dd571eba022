//! The outcome of an action: waiting for what it caused (navigation, downloads, popups,
//! dialogs) and building the result every action answers, and the screenshot a failed
//! action leaves in `artifacts/`.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;

use super::targeting::{AimedAt, TargetSummary};
use super::{Handler, Tool, ToolAnswer, ToolContext, ToolInput};
use crate::engine::{ActionSettle, NavigationReport, SettleReport, TabRequest};
use crate::error::{Error, ErrorCode, Result};
use crate::events::EventKind;

/// Adds a screenshot of the moment to a failed action's error (`details.screenshot_path`).
pub(crate) async fn with_failure_screenshot(context: &ToolContext, tool: &str, error: Error) -> Error {
    if !matches!(
        error.code,
        ErrorCode::NotFound
            | ErrorCode::StaleRef
            | ErrorCode::NotVisible
            | ErrorCode::Disabled
            | ErrorCode::Covered
            | ErrorCode::Timeout
            | ErrorCode::ScriptError
            | ErrorCode::Unsupported
    ) {
        return error;
    }
    match failure_screenshot(context, tool).await {
        Ok(path) => {
            let mut error = error;
            if !error.details.is_object() {
                error.details = json!({});
            }
            error.details["screenshot_path"] = json!(path);
            error
        }
        Err(_) => error,
    }
}

/// Saves a screenshot in the session's `artifacts/` and returns its path.
pub(crate) async fn failure_screenshot(context: &ToolContext, label: &str) -> Result<String> {
    let session = &context.session;
    let (png, _, _) = super::screenshot::viewport_png(context).await?;
    let millis = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_millis();
    let path = session.dirs.artifacts.join(format!("failure-{millis}-{label}.png"));
    tokio::fs::write(&path, png).await.map_err(|error| Error::internal(format!("cannot save the screenshot: {error}")))?;
    Ok(path.display().to_string())
}

/// Where the session stood before an action: what happened after it is the action's doing.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ActionMark {
    /// The last seq of the session's log.
    seq: u64,
    /// Downloads begun so far.
    downloads: u64,
}

/// A mark for "what happened during this action".
pub(crate) fn event_mark(context: &ToolContext) -> ActionMark {
    ActionMark { seq: context.session.events.newest_seq(), downloads: context.session.downloads.begun() }
}

/// What an action was aimed at, as its result says.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum ActionTarget {
    /// An element or a point.
    One(AimedAt),
    /// Both ends of a drag.
    Drag(DragEnds),
}

impl ActionTarget {
    /// An element, as an action's target.
    pub(crate) fn element(summary: TargetSummary) -> ActionTarget {
        ActionTarget::One(AimedAt::Element(summary))
    }
}

/// The two ends of a drag.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct DragEnds {
    /// Where the button went down.
    pub(crate) from: AimedAt,
    /// Where it came up.
    pub(crate) to: AimedAt,
}

/// The result every action that waits for its consequences answers (extended by some
/// actions with fields of their own).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct ActionOutcome {
    /// The tool that acted.
    pub(crate) action: &'static str,
    /// Always true: an action that fails answers an error instead.
    pub(crate) ok: bool,
    /// What it was aimed at; absent for keys sent to the focused element.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) target: Option<ActionTarget>,
    /// Whether it started a navigation of the main frame (one that turned into a download
    /// did not navigate).
    pub(crate) navigated: bool,
    /// How that navigation went, when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) navigation: Option<NavigationReport>,
    /// The downloads it began.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) downloads: Vec<DownloadBegun>,
    /// The popups it opened as tabs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) popups: Vec<PopupOpened>,
    /// The JavaScript dialogs it caused, as they were answered.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) dialogs: Vec<DialogAnswered>,
    /// The popups the popup policy refused.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) popups_blocked: Vec<PopupRefused>,
    /// How the wait for quiet after it went.
    pub(crate) settle: SettleReport,
}

/// A download an action (or a navigation) began.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct DownloadBegun {
    /// Its id, for `list_downloads` and `cancel_download`.
    pub(crate) download_id: String,
    /// What is downloaded.
    pub(crate) url: String,
    /// The name the server (or the page) suggested, once known.
    pub(crate) suggested_filename: Option<String>,
    /// Why it was refused, when it already was (`blocked_by_policy`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
    /// With `error: "blocked_by_policy"`, the person's rule that refused it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) policy_rule: Option<String>,
}

/// A popup an action opened as a new tab.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct PopupOpened {
    /// The new tab's short id.
    pub(crate) tab: Option<String>,
    /// What it opened.
    pub(crate) url: String,
}

/// A JavaScript dialog an action caused, as it was answered (event `dialog`'s fields).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct DialogAnswered {
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    pub(crate) dialog_type: &'static str,
    /// Its message.
    pub(crate) message: String,
    /// `accept` or `dismiss`.
    pub(crate) action: &'static str,
    /// Whether the agent's policy (`set`) or the default decided.
    pub(crate) policy: &'static str,
    /// What an accepted prompt answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) prompt_text: Option<String>,
}

/// A popup the policy refused (event `popup_blocked`'s fields).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct PopupRefused {
    /// What the page tried to open.
    pub(crate) url: String,
}

/// Waits for the action's consequences and builds its result. `wait_frame`: wait an
/// animation frame first (not needed after in-page edits, whose handlers have already run
/// when the call returns).
pub(crate) async fn finish(
    context: &ToolContext,
    action: &'static str,
    target: Option<ActionTarget>,
    load_mark: u64,
    event_mark: ActionMark,
    settle: Duration,
    wait_frame: bool,
) -> Result<ActionOutcome> {
    let session = &context.session;
    let settled: ActionSettle = context.ask(TabRequest::AfterAction { mark: load_mark, budget: settle, wait_frame }).await?;
    let tab = context.tab()?;
    let downloads = downloads_since(context, event_mark, &settled.navigation).await;
    // A navigation that turned into a download did not navigate.
    let became_download = !downloads.is_empty() && settled.navigation.as_ref().is_some_and(is_download_interruption);
    let mut outcome = ActionOutcome {
        action,
        ok: true,
        target,
        navigated: settled.navigated && !became_download,
        navigation: settled.navigation.filter(|_| !became_download),
        downloads,
        popups: Vec::new(),
        dialogs: Vec::new(),
        popups_blocked: Vec::new(),
        settle: settled.settle,
    };
    for event in session.events.after(event_mark.seq, 100).events {
        match event.kind {
            EventKind::Popup { opener, url } if opener == tab.id => outcome.popups.push(PopupOpened { tab: event.tab, url }),
            EventKind::Dialog { dialog_type, message, action, policy, prompt_text } => {
                outcome.dialogs.push(DialogAnswered { dialog_type, message, action, policy, prompt_text })
            }
            EventKind::PopupBlocked { url } => outcome.popups_blocked.push(PopupRefused { url }),
            _ => {}
        }
    }
    Ok(outcome)
}

/// Whether a navigation ended because its response became a download.
pub(crate) fn is_download_interruption(navigation: &NavigationReport) -> bool {
    navigation.net_error.as_deref() == Some("frame_load_interrupted")
}

/// The downloads the call's tab began since `mark`, as actions report them. A navigation
/// interrupted by a download is followed by that download a moment later: the answer waits
/// for it while the engine says one is on its way (or, if it said nothing, a second), and
/// for its name (up to 2 s).
pub(crate) async fn downloads_since(context: &ToolContext, mark: ActionMark, navigation: &Option<NavigationReport>) -> Vec<DownloadBegun> {
    let Ok(tab) = context.tab() else { return Vec::new() };
    let downloads = &context.session.downloads;
    // A navigation that became a download, or a click on a `download` link.
    let expecting = navigation.as_ref().is_some_and(is_download_interruption) || downloads.awaiting(&tab.id);
    let begun_at = Instant::now();
    let grace = begun_at + if expecting { Duration::from_millis(1000) } else { Duration::ZERO };
    loop {
        let begun = downloads.begun_since(mark.downloads, Some(&tab.id));
        let on_its_way = expecting && downloads.awaiting(&tab.id);
        // A download is named once WebKit asks where it goes (a moment after it begins).
        let unnamed = begun.iter().any(|record| record.suggested_filename.is_none() && !record.status.is_final());
        let naming = unnamed && begun_at.elapsed() < Duration::from_secs(2);
        if (!begun.is_empty() && !naming) || (begun.is_empty() && Instant::now() >= grace && !on_its_way) {
            return begun
                .into_iter()
                .map(|record| DownloadBegun {
                    download_id: record.download_id,
                    url: record.url,
                    suggested_filename: record.suggested_filename,
                    error: record.error,
                    policy_rule: record.policy_rule,
                })
                .collect();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A page tool that is an action: its errors carry a screenshot of the moment.
pub(crate) fn action_tool<I: ToolInput, O: ToolAnswer + Send + 'static>(
    name: &'static str,
    description: &'static str,
    handle: impl Handler<I, O> + Copy,
) -> Tool {
    let tool =
        Tool::page(name, description, move |context: ToolContext, input: I| act(context, name, move |context| handle.run(context, input)));
    tool.presented(super::Presentation { mcp_lean: Some(super::Lean::Action), ..super::Presentation::default() })
}

/// Runs an action (the registry holds the tab's lock), adding a failure screenshot to its error.
pub(crate) async fn act<Output, Action, Fut>(context: ToolContext, tool: &'static str, action: Action) -> Result<Output>
where
    Action: FnOnce(ToolContext) -> Fut,
    Fut: std::future::Future<Output = Result<Output>>,
{
    match action(context.clone()).await {
        Ok(output) => Ok(output),
        Err(error) => Err(with_failure_screenshot(&context, tool, error).await),
    }
}
