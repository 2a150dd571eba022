//! The outcome of an action: waiting for what it caused (navigation, downloads, popups,
//! dialogs) and building the result every action answers, and the screenshot a failed
//! action leaves in `artifacts/`.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::ToolContext;
use crate::engine::{ActionSettle, TabRequest};
use crate::error::{Error, ErrorCode, Result};

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
    let frame: crate::engine::Frame = context.ask(TabRequest::Screenshot).await?;
    let png = tokio::task::spawn_blocking(move || crate::engine::png::encode(&frame))
        .await
        .map_err(|error| Error::internal(error.to_string()))??;
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

/// Waits for the action's consequences and builds its result.
pub(crate) async fn finish(
    context: &ToolContext,
    action: &str,
    target: Value,
    load_mark: u64,
    event_mark: ActionMark,
    settle: Duration,
) -> Result<Value> {
    finish_with(context, action, target, load_mark, event_mark, settle, true).await
}

/// [`finish`], saying whether to wait a frame first (not needed after in-page edits,
/// whose handlers have already run when the call returns).
pub(crate) async fn finish_with(
    context: &ToolContext,
    action: &str,
    target: Value,
    load_mark: u64,
    event_mark: ActionMark,
    settle: Duration,
    wait_frame: bool,
) -> Result<Value> {
    let session = &context.session;
    let settled: ActionSettle = context.ask(TabRequest::AfterAction { mark: load_mark, budget: settle, wait_frame }).await?;
    let mut result = json!({ "action": action, "ok": true });
    if !target.is_null() {
        result["target"] = target;
    }
    let tab = context.tab()?;
    let downloads = downloads_since(context, event_mark, &settled.navigation).await;
    // A navigation that turned into a download did not navigate.
    let became_download = !downloads.is_empty() && settled.navigation.as_ref().is_some_and(is_download_interruption);
    result["navigated"] = json!(settled.navigated && !became_download);
    if let Some(navigation) = settled.navigation.filter(|_| !became_download) {
        result["navigation"] = serde_json::to_value(navigation).unwrap_or_default();
    }
    if !downloads.is_empty() {
        result["downloads"] = json!(downloads);
    }
    let happened = session.events.after(event_mark.seq, 100).events;
    let popups = super::tabs::popups_of(&happened, &tab.id);
    if !popups.is_empty() {
        result["popups"] = json!(popups);
    }
    // The event's own fields, without its seq, time, type and tab.
    let of_kind = |kind: &str| -> Vec<Value> {
        happened
            .iter()
            .filter(|event| event.kind.name() == kind)
            .map(|event| {
                let mut fields = serde_json::to_value(&event.kind).unwrap_or_default();
                if let Some(object) = fields.as_object_mut() {
                    object.remove("type");
                }
                fields
            })
            .collect()
    };
    for (kind, field) in [("dialog", "dialogs"), ("popup_blocked", "popups_blocked")] {
        let found = of_kind(kind);
        if !found.is_empty() {
            result[field] = json!(found);
        }
    }
    result["settle"] = serde_json::to_value(settled.settle).unwrap_or_default();
    Ok(result)
}

/// Whether a navigation ended because its response became a download.
pub(crate) fn is_download_interruption(navigation: &crate::engine::NavigationReport) -> bool {
    navigation.net_error.as_deref() == Some("frame_load_interrupted")
}

/// The downloads the call's tab began since `mark`, as actions report them. A navigation
/// interrupted by a download is followed by that download a moment later: the answer waits
/// for it while the engine says one is on its way (or, if it said nothing, a second), and
/// for its name (up to 2 s).
pub(crate) async fn downloads_since(
    context: &ToolContext,
    mark: ActionMark,
    navigation: &Option<crate::engine::NavigationReport>,
) -> Vec<Value> {
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
                .iter()
                .map(|record| json!({ "download_id": record.download_id, "url": record.url, "suggested_filename": record.suggested_filename }))
                .collect();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
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
