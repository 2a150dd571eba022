//! What the page tools share: targets (ref, selector or point), calls to the page agent
//! with ref bookkeeping across frames, actionability checks, failure screenshots, and
//! the small result every action answers with.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::ToolContext;
use crate::engine::agent::{AgentRequest, ElementAddress, ElementInfo, FrameBox, FrameHit, Locate};
use crate::engine::{ActionSettle, InputEvent, TabRequest};
use crate::error::{Error, ErrorCode, Result};

/// The element an action is aimed at: a ref from a snapshot, or a CSS selector (` >>> `
/// pierces open shadow roots).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub(crate) struct ElementTarget {
    /// A ref from `snapshot`, e.g. `e12`; works in every frame.
    #[serde(default, rename = "ref")]
    pub(crate) element_ref: Option<String>,
    /// A CSS selector, in the main frame (open shadow roots included; `host >>> inner`).
    #[serde(default)]
    pub(crate) selector: Option<String>,
}

impl ElementTarget {
    /// Whether anything was given.
    pub(crate) fn is_given(&self) -> bool {
        self.element_ref.is_some() || self.selector.is_some()
    }
}

/// `e12` (or `12`) -> 12.
pub(crate) fn parse_ref(text: &str) -> Result<u64> {
    text.trim()
        .trim_start_matches('e')
        .parse::<u64>()
        .ok()
        .filter(|number| *number > 0)
        .ok_or_else(|| Error::bad_request(format!("{text:?} is not a ref; refs look like e12")))
}

/// Calls the page agent in a frame of the call's tab, passing the session's ref base and
/// recording the next free ref it reports; the answer is read as the request's output type.
pub(crate) async fn agent<R: AgentRequest>(context: &ToolContext, frame: &[u32], request: &R) -> Result<R::Output> {
    let tabs = &context.session.tabs;
    let mut args = serde_json::to_value(request).map_err(|error| Error::internal(error.to_string()))?;
    args["base"] = json!(tabs.next_ref());
    let result: Value = context.ask(TabRequest::Agent { frame: frame.to_vec(), op: R::OP, args }).await?;
    if let Some(next) = result.get("next_ref").and_then(Value::as_u64) {
        tabs.refs_taken_below(next);
    }
    serde_json::from_value(result)
        .map_err(|error| Error::new(ErrorCode::ScriptError, format!("the page agent's answer to {} is unreadable: {error}", R::OP.name())))
}

/// Where an element is, in viewport coordinates of the top page.
#[derive(Debug, Clone)]
pub(crate) struct Located {
    /// Frame path of the element.
    pub(crate) frame: Vec<u32>,
    /// What the agent says of it (ref, role, name, visible, disabled, editable, ...).
    pub(crate) info: ElementInfo,
    /// Centre, in the top page's viewport.
    pub(crate) x: f64,
    /// Centre, in the top page's viewport.
    pub(crate) y: f64,
}

impl Located {
    /// `{ref, role, name}` for results.
    pub(crate) fn summary(&self) -> Value {
        json!({ "ref": format!("e{}", self.info.element_ref), "role": self.info.role, "name": self.info.name })
    }

    /// The target that addresses this element again.
    pub(crate) fn address(&self) -> ElementAddress {
        ElementAddress::by_ref(self.info.element_ref)
    }

    /// A short description for messages: `e12 (button "Save")`.
    pub(crate) fn describe(&self) -> String {
        let info = &self.info;
        if info.name.is_empty() {
            format!("e{} ({})", info.element_ref, info.role)
        } else {
            format!("e{} ({} {:?})", info.element_ref, info.role, info.name)
        }
    }
}

/// Finds the target (scrolling it, and the frames holding it, into view) and returns its
/// centre in top-page coordinates.
pub(crate) async fn locate(context: &ToolContext, target: &ElementTarget, scroll: bool) -> Result<Located> {
    locate_as(context, target, scroll, false).await
}

/// [`locate`], optionally measuring the element over an animation frame (`info.moving`).
async fn locate_as(context: &ToolContext, target: &ElementTarget, scroll: bool, stable: bool) -> Result<Located> {
    let (frame, address) = match (&target.element_ref, &target.selector) {
        (Some(element_ref), _) => {
            let number = parse_ref(element_ref)?;
            let frame = context.tab()?.refs.lock().expect("ref table poisoned").frame_of.get(&number).cloned().unwrap_or_default();
            (frame, ElementAddress::by_ref(number))
        }
        (None, Some(selector)) => (Vec::new(), ElementAddress { element_ref: None, selector: Some(selector.clone()) }),
        (None, None) => return Err(Error::bad_request("give a ref (from snapshot) or a selector")),
    };
    // Where each frame's content starts, in its parent's viewport.
    let mut offsets = Vec::with_capacity(frame.len());
    for depth in 0..frame.len() {
        let content = agent(context, &frame[..depth], &FrameBox { frame: frame[depth], scroll }).await?;
        offsets.push((content.x, content.y));
    }
    let mut info = agent(context, &frame, &Locate { target: address, scroll, stable }).await?;
    let (mut x, mut y) = (info.x, info.y);
    // Up the frame tree: the point, in each parent's viewport, must reach the frame itself,
    // not something drawn over it there.
    for depth in (0..frame.len()).rev() {
        x += offsets[depth].0;
        y += offsets[depth].1;
        if info.covered_by.is_none() && info.visible {
            let hit = agent(context, &frame[..depth], &FrameHit { frame: frame[depth], x, y }).await?;
            info.covered_by = hit.covered_by;
        }
    }
    Ok(Located { frame, info, x, y })
}

/// What an action needs of its element before it acts (the actionability rules of
/// docs/API.md, checked in this order).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Needs {
    /// The same box over two animation frames (clicks, hovers, drags).
    pub(crate) stable: bool,
    /// Not disabled.
    pub(crate) enabled: bool,
    /// Not read-only (fill, type).
    pub(crate) editable: bool,
}

/// How long actions wait for their element to become actionable, unless told.
pub(crate) const ACTIONABLE_TIMEOUT: Duration = Duration::from_millis(5000);

/// Finds the element and waits, up to `timeout`, until it is actionable: visible, stable,
/// enabled, editable (as `needs` says), reached by a click at its centre, in the viewport.
/// A ref that went stale or a selector that matches nothing fails at once; anything else
/// is retried (after 0, 20, 100, 100, then every 500 ms), and the last refusal is the error.
pub(crate) async fn actionable(context: &ToolContext, target: &ElementTarget, needs: Needs, timeout: Duration) -> Result<Located> {
    let begun = Instant::now();
    let mut pauses = [0u64, 20, 100, 100].into_iter();
    loop {
        // Focus settles first (see the engine's Input), then the element is measured.
        input(context, Vec::new()).await?;
        let located = locate_as(context, target, true, needs.stable).await?;
        let refusal = match refusal(&located, needs) {
            None => return Ok(located),
            Some(refusal) => refusal,
        };
        if begun.elapsed() >= timeout {
            return Err(refusal);
        }
        let pause = Duration::from_millis(pauses.next().unwrap_or(500));
        tokio::time::sleep(pause.min(timeout.saturating_sub(begun.elapsed()))).await;
    }
}

/// Refuses an element a person could not act on: hidden, disabled, or under another element.
pub(crate) fn check_actionable(located: &Located, need_enabled: bool) -> Result<()> {
    match refusal(located, Needs { enabled: need_enabled, ..Needs::default() }) {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

/// Why the element is not actionable now, if it is not.
fn refusal(located: &Located, needs: Needs) -> Option<Error> {
    let info = &located.info;
    let target = json!({ "target": located.summary() });
    if !info.visible {
        let error = Error::new(ErrorCode::NotVisible, format!("the element {} is not visible", located.describe()));
        return Some(error.with_details(target));
    }
    if needs.stable && info.moving == Some(true) {
        let error = Error::new(
            ErrorCode::Timeout,
            format!("the element {} never stopped moving (its box changed between animation frames)", located.describe()),
        );
        return Some(error.with_details(json!({ "target": located.summary(), "reason": "not_stable" })));
    }
    if needs.enabled && info.disabled {
        return Some(Error::new(ErrorCode::Disabled, format!("the element {} is disabled", located.describe())).with_details(target));
    }
    if needs.editable && info.readonly == Some(true) {
        let error = Error::new(ErrorCode::Disabled, format!("the element {} is read-only", located.describe()));
        return Some(error.with_details(json!({ "target": located.summary(), "reason": "readonly" })));
    }
    if let Some(cover) = &info.covered_by {
        return Some(
            Error::new(ErrorCode::Covered, format!("the element {} is covered by {cover}; a click would land there", located.describe()))
                .with_details(json!({ "target": located.summary(), "covered_by": cover })),
        );
    }
    if !info.in_viewport {
        return Some(
            Error::new(ErrorCode::NotVisible, format!("the element {} is outside the viewport", located.describe())).with_details(target),
        );
    }
    None
}

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

/// Delivers trusted input to the call's tab; answers the load mark for [`finish`].
pub(crate) async fn input(context: &ToolContext, events: Vec<InputEvent>) -> Result<u64> {
    context.ask(TabRequest::Input { events }).await
}

/// Polls `probe` every 50 ms until it answers `Some`, or `timeout` passes.
pub(crate) async fn poll<T, F, Fut>(timeout: Duration, mut probe: F) -> Result<Option<T>>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>>>,
{
    let begun = Instant::now();
    loop {
        if let Some(found) = probe().await? {
            return Ok(Some(found));
        }
        if begun.elapsed() >= timeout {
            return Ok(None);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Settle budget after actions (ms): default and maximum.
pub(crate) fn settle_budget(value: Option<u64>) -> Result<Duration> {
    super::millis(value, 1500, 30_000, "settle_ms")
}
