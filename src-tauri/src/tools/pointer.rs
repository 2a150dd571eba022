//! The pointer: `click`, `hover` and `drag`, with trusted mouse events at an element's
//! centre (scrolled into view, visible, stable, enabled and uncovered first) or at a point.
//! A drag of something the browser drags itself plays HTML5 drag and drop in the page.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::action_input::action_input;
use super::limits::CLICK_COUNT;
use super::outcome::{self, action_tool, ActionOutcome, ActionTarget, DragEnds};
use super::page_agent::{self, agent, read_agent_answer};
use super::targeting::{point_or_element, ElementTarget, Needs};
use super::{Positional, Tool, ToolContext};
use crate::engine::agent::{AgentOp, Html5Drag};
use crate::engine::keys::ModifierKey;
use crate::engine::{InputEvent, Modifiers, MouseButton};
use crate::error::{Error, Result};

action_input! {
    /// Input of `click`.
    ClickInput aimed_at_element_or_point {
        /// `left` (default), `middle` or `right`.
        #[serde(default)]
        button: MouseButton,
        /// 1 (default), 2 for a double click, 3 for a triple click.
        #[serde(default)]
        #[schemars(range(min = 1, max = CLICK_COUNT.max))]
        click_count: Option<u8>,
        /// Modifier keys held during the click.
        #[serde(default)]
        modifiers: Vec<ModifierKey>,
    }
}

/// `click`.
pub(super) fn click_tool() -> Tool {
    action_tool("click", "Click an element (ref or selector) or a point with trusted mouse events, after scrolling it into view and checking it is visible, enabled and not covered. Reports navigation, dialogs and blocked popups it caused.", click).positional(&[Positional::Target])
}

async fn click(context: ToolContext, input: ClickInput) -> Result<ActionOutcome> {
    let count = input.click_count.unwrap_or(CLICK_COUNT.default);
    if !(1..=CLICK_COUNT.max).contains(&count) {
        return Err(Error::bad_request("click_count must be 1, 2 or 3"));
    }
    let waits = input.waits()?;
    let needs = Needs { stable: true, enabled: true, editable: false };
    let (x, y, described) = point_or_element(&context, &input.element(), input.point(), needs, waits.actionable).await?;
    let modifiers = Modifiers::of(&input.modifiers);
    let mut events = vec![InputEvent::MouseMove { x, y, modifiers }];
    for _ in 0..count {
        events.push(InputEvent::MouseDown { x, y, button: input.button, modifiers });
        events.push(InputEvent::MouseUp { x, y, button: input.button, modifiers });
    }
    let event_mark = outcome::event_mark(&context);
    let load_mark = page_agent::input(&context, events).await?;
    outcome::finish(&context, "click", Some(ActionTarget::One(described)), load_mark, event_mark, waits.settle, true).await
}

action_input! {
    /// Input of `hover`.
    HoverInput aimed_at_element_or_point {}
}

/// `hover`.
pub(super) fn hover_tool() -> Tool {
    action_tool("hover", "Move the mouse over an element (ref or selector) or a point.", hover).positional(&[Positional::Target])
}

async fn hover(context: ToolContext, input: HoverInput) -> Result<ActionOutcome> {
    let waits = input.waits()?;
    let needs = Needs { stable: true, ..Needs::default() };
    let (x, y, described) = point_or_element(&context, &input.element(), input.point(), needs, waits.actionable).await?;
    let event_mark = outcome::event_mark(&context);
    let load_mark = page_agent::input(&context, vec![InputEvent::MouseMove { x, y, modifiers: Modifiers::default() }]).await?;
    outcome::finish(&context, "hover", Some(ActionTarget::One(described)), load_mark, event_mark, waits.settle, true).await
}

/// One end of a drag.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DragEnd {
    /// The element: a ref from snapshot (e.g. e12).
    #[serde(default, rename = "ref")]
    element_ref: Option<String>,
    /// The element: a CSS selector (` >>> ` pierces open shadow roots).
    #[serde(default)]
    selector: Option<String>,
    /// The element: a locator, as `find` takes it.
    #[serde(default)]
    locator: Option<super::find::Locator>,
    /// Or a point (CSS px), with `y`.
    #[serde(default)]
    x: Option<f64>,
    /// Or a point (CSS px), with `x`.
    #[serde(default)]
    y: Option<f64>,
}

impl DragEnd {
    /// The element this end names, if any.
    fn element(&self) -> ElementTarget {
        ElementTarget {
            element_ref: self.element_ref.clone(),
            selector: self.selector.clone(),
            locator: self.locator.clone().map(Box::new),
        }
    }
}

action_input! {
    /// Input of `drag` (`timeout_ms` applies to each end's element).
    DragInput {
        /// Where the button goes down.
        from: DragEnd,
        /// Where it comes up.
        to: DragEnd,
    }
}

/// `drag`.
pub(super) fn drag_tool() -> Tool {
    action_tool("drag", "Drag from `from` to `to`: press the mouse, move in steps, release (trusted mouse events). When `from` is something the browser drags itself (a draggable=true element, a link, an image, selected text), plays the HTML5 drag-and-drop events in the page instead (text dropped on a field goes in) and answers `html5: true` with `dropped` and `drop_target`.", drag)
}

/// Mouse moves between a drag's press and release.
const DRAG_STEPS: u32 = 8;

/// Output of `drag`: the action's outcome, and how an HTML5 drag went when it was one.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct DragOutput {
    /// What the drag caused.
    #[serde(flatten)]
    outcome: ActionOutcome,
    /// The HTML5 drag played in the page, when `from` was something the browser drags.
    #[serde(flatten)]
    html5: Html5DragReport,
}

/// How an HTML5 drag played in the page went (nothing for a plain mouse drag).
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
pub(crate) struct Html5DragReport {
    /// true: the drag was played as HTML5 drag and drop events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    html5: Option<bool>,
    /// true: what was dragged was the selected text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    selection: Option<bool>,
    /// Whether the drag started (the page may cancel mousedown or dragstart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    started: Option<bool>,
    /// Whether the element under the end accepted the drop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dropped: Option<bool>,
    /// The element under the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    drop_target: Option<String>,
    /// Why the drag did not start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

async fn drag(context: ToolContext, input: DragInput) -> Result<DragOutput> {
    let waits = input.waits()?;
    let needs = Needs { stable: true, enabled: true, editable: false };
    let from_point = (input.from.x, input.from.y);
    let (from_x, from_y, from) = point_or_element(&context, &input.from.element(), from_point, needs, waits.actionable).await?;
    let needs = Needs { stable: true, ..Needs::default() };
    let (to_x, to_y, to) = point_or_element(&context, &input.to.element(), (input.to.x, input.to.y), needs, waits.actionable).await?;
    let event_mark = outcome::event_mark(&context);
    // A draggable element (draggable="true", links, images) is an HTML5 drag: played in
    // the page, since WebKit would hand it to the native drag of the real screen.
    let html5 = agent(&context, &[], &Html5Drag { from_x, from_y, to_x, to_y, steps: DRAG_STEPS }).await?;
    let target = Some(ActionTarget::Drag(DragEnds { from, to }));
    if html5["html5"] == true {
        let html5: Html5DragReport = read_agent_answer(AgentOp::Html5Drag, html5)?;
        let load_mark = page_agent::input(&context, Vec::new()).await?;
        let outcome = outcome::finish(&context, "drag", target, load_mark, event_mark, waits.settle, true).await?;
        return Ok(DragOutput { outcome, html5 });
    }
    let modifiers = Modifiers::default();
    // Three batches with a pause between, as a hand moves: WebKit handles the press before
    // the moves that drag, and the moves before the release.
    let press = vec![
        InputEvent::MouseMove { x: from_x, y: from_y, modifiers },
        InputEvent::MouseDown { x: from_x, y: from_y, button: MouseButton::Left, modifiers },
    ];
    let moves: Vec<InputEvent> = (1..=DRAG_STEPS)
        .map(|step| {
            let fraction = step as f64 / DRAG_STEPS as f64;
            InputEvent::MouseMove { x: from_x + (to_x - from_x) * fraction, y: from_y + (to_y - from_y) * fraction, modifiers }
        })
        .collect();
    let release = vec![InputEvent::MouseUp { x: to_x, y: to_y, button: MouseButton::Left, modifiers }];
    let load_mark = page_agent::input(&context, press).await?;
    for batch in [moves, release] {
        tokio::time::sleep(std::time::Duration::from_millis(30)).await;
        page_agent::input(&context, batch).await?;
    }
    let outcome = outcome::finish(&context, "drag", target, load_mark, event_mark, waits.settle, true).await?;
    Ok(DragOutput { outcome, html5: Html5DragReport::default() })
}
