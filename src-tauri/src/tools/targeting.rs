//! Targeting: the element an action is aimed at (a ref or a selector), finding it across
//! frames in top-page coordinates, and the actionability rules of docs/API.md (visible,
//! stable, enabled, editable, uncovered, in the viewport) waited for before acting.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::time::Instant;

use super::page_agent::{agent, input};
use super::ToolContext;
use crate::engine::agent::{ElementAddress, ElementInfo, FrameBox, FrameHit, FrameOf, Locate};
use crate::error::{Error, ErrorCode, Result};

/// The element an action is aimed at: a ref from a snapshot (works in every frame), or a
/// CSS selector in the main frame. Also the whole input of `focus` and `scroll_into_view`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ElementTarget {
    /// The element: a ref from snapshot (e.g. e12).
    #[serde(default, rename = "ref")]
    pub(crate) element_ref: Option<String>,
    /// The element: a CSS selector (` >>> ` pierces open shadow roots).
    #[serde(default)]
    pub(crate) selector: Option<String>,
    /// The element: a locator, as `find` takes it (`{"role": "button", "name": "Save"}`).
    #[serde(default)]
    pub(crate) locator: Option<Box<super::find::Locator>>,
}

impl ElementTarget {
    /// Whether anything was given.
    pub(crate) fn is_given(&self) -> bool {
        self.element_ref.is_some() || self.selector.is_some() || self.locator.is_some()
    }
}

/// `e12` (or `@e12`, as some tools print refs, or `12`) -> 12.
pub(crate) fn parse_ref(text: &str) -> Result<u64> {
    text.trim()
        .trim_start_matches('@')
        .trim_start_matches('e')
        .parse::<u64>()
        .ok()
        .filter(|number| *number > 0)
        .ok_or_else(|| Error::bad_request(format!("{text:?} is not a ref; refs look like e12")))
}

/// An element an action was aimed at, as results and errors name it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct TargetSummary {
    /// Its ref (e.g. `e12`), usable by every action.
    #[serde(rename = "ref")]
    pub(crate) element_ref: String,
    /// Its ARIA role (or tag name).
    pub(crate) role: String,
    /// Its accessible name (may be empty).
    pub(crate) name: String,
}

/// A point in the viewport an action was aimed at instead of an element.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
pub(crate) struct ViewportPoint {
    /// CSS pixels from the left.
    pub(crate) x: f64,
    /// CSS pixels from the top.
    pub(crate) y: f64,
}

/// What a pointer action was aimed at: an element or a point.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum AimedAt {
    /// An element (by ref or selector).
    Element(TargetSummary),
    /// A point in the viewport.
    Point(ViewportPoint),
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
    pub(crate) fn summary(&self) -> TargetSummary {
        TargetSummary { element_ref: format!("e{}", self.info.element_ref), role: self.info.role.clone(), name: self.info.name.clone() }
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

/// [`locate`] (scrolling it into view) with the selector looked for in the iframe that
/// `frame_selector` names in the main frame, when it names one.
pub(crate) async fn locate_in(context: &ToolContext, target: &ElementTarget, frame_selector: Option<&str>) -> Result<Located> {
    let frame = match frame_selector {
        Some(selector) => Some(vec![agent(context, &[], &FrameOf { selector: selector.to_string() }).await?.frame]),
        None => None,
    };
    locate_at(context, target, frame, true, false).await
}

/// [`locate`], optionally measuring the element over an animation frame (`info.moving`).
async fn locate_as(context: &ToolContext, target: &ElementTarget, scroll: bool, stable: bool) -> Result<Located> {
    locate_at(context, target, None, scroll, stable).await
}

/// [`locate_as`], with a selector looked for in the frame at `selector_frame` (default: the
/// main frame); a ref knows its frame.
async fn locate_at(
    context: &ToolContext,
    target: &ElementTarget,
    selector_frame: Option<Vec<u32>>,
    scroll: bool,
    stable: bool,
) -> Result<Located> {
    if target.locator.is_some() && (target.element_ref.is_some() || target.selector.is_some()) {
        let field = if target.element_ref.is_some() { "ref" } else { "selector" };
        return Err(Error::bad_request(format!("{field}: give a ref, a selector or a locator, one of them"))
            .with_details(json!({ "field": field })));
    }
    let (frame, address) = match (&target.element_ref, &target.selector) {
        _ if target.locator.is_some() => {
            let locator = target.locator.as_ref().expect("a locator");
            let (frame, number) = super::find::one(context, locator).await?;
            (frame, ElementAddress::by_ref(number))
        }
        (Some(element_ref), _) => {
            let number = parse_ref(element_ref)?;
            let frame = context.tab()?.refs.lock().expect("ref table poisoned").frame_of.get(&number).cloned().unwrap_or_default();
            (frame, ElementAddress::by_ref(number))
        }
        (None, Some(selector)) => {
            (selector_frame.unwrap_or_default(), ElementAddress { element_ref: None, selector: Some(selector.clone()) })
        }
        (None, None) => return Err(Error::bad_request("give a ref (from snapshot), a selector or a locator")),
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

/// Finds the element and waits, up to `timeout`, until it is actionable: visible, stable,
/// enabled, editable (as `needs` says), reached by a click at its centre, in the viewport.
/// A ref that went stale or a selector that matches nothing fails at once; anything else
/// is retried (after 0, 20, 100, 100, then every 500 ms), and the last refusal is the error.
/// The waits read tokio's clock, so tests on a paused clock run them in no time.
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

/// The point an action acts at: given coordinates (in the viewport), or the centre of an
/// actionable element; answers the point and what the action was aimed at.
pub(crate) async fn point_or_element(
    context: &ToolContext,
    element: &ElementTarget,
    point: (Option<f64>, Option<f64>),
    needs: Needs,
    timeout: Duration,
) -> Result<(f64, f64, AimedAt)> {
    match (point, element.is_given()) {
        ((Some(x), Some(y)), false) => {
            let width = context.session.width as f64;
            let height = context.session.height as f64;
            if !(0.0..width).contains(&x) || !(0.0..height).contains(&y) {
                return Err(Error::bad_request(format!("the point ({x}, {y}) is outside the {width}x{height} viewport")));
            }
            Ok((x, y, AimedAt::Point(ViewportPoint { x, y })))
        }
        ((None, None), true) => {
            let located = actionable(context, element, needs, timeout).await?;
            Ok((located.x, located.y, AimedAt::Element(located.summary())))
        }
        _ => Err(Error::bad_request("give either a ref, a selector, a locator, or both x and y")),
    }
}
