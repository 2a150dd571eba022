//! The outline `highlight` draws over a tab's page (see `crate::engine::highlight`): a
//! handler of the view's `draw` signal, connected after WebKit's own, strokes it over what
//! WebKit painted. The takeover window and the live view show the view's drawing, so a
//! person sees it; WebKit's snapshots are rendered by the web process, so screenshots never
//! hold it, and the page never sees it. A duration ends it with a GLib timeout.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use glib::prelude::*;
use gtk::prelude::*;

use super::tab::Tab;
use crate::engine::highlight::{HighlightBox, HighlightRequest, HIGHLIGHT_RGB, HIGHLIGHT_WIDTH};
use crate::engine::Answer;
use crate::error::Result;

/// A tab's outline, while shown.
#[derive(Default)]
pub(in crate::engine::webkit) struct Shown {
    /// The box and the draw handler that strokes it.
    current: RefCell<Option<(HighlightBox, glib::SignalHandlerId)>>,
    /// Counts outlines shown, so that a duration ends only its own outline.
    generation: Cell<u64>,
}

/// Carries out a `highlight` request on `tab`.
pub(super) fn handle(tab: &Rc<Tab>, request: HighlightRequest) -> Result<Answer> {
    match request {
        HighlightRequest::Show { area, duration } => {
            tab.ensure_open()?;
            clear(tab);
            let handler = tab.view.connect_local("draw", true, move |values| {
                if let Some(Ok(context)) = values.get(1).map(|value| value.get::<cairo::Context>()) {
                    stroke(&context, area);
                }
                Some(false.to_value())
            });
            *tab.highlight.current.borrow_mut() = Some((area, handler));
            let generation = tab.highlight.generation.get() + 1;
            tab.highlight.generation.set(generation);
            tab.view.queue_draw();
            if let Some(duration) = duration {
                let weak = Rc::downgrade(tab);
                glib::timeout_add_local_once(duration, move || {
                    if let Some(tab) = weak.upgrade().filter(|tab| tab.highlight.generation.get() == generation) {
                        clear(&tab);
                    }
                });
            }
            Ok(Answer::Done)
        }
        HighlightRequest::Clear => Ok(Answer::Flag(clear(tab))),
        HighlightRequest::Current => {
            let current = tab.highlight.current.borrow().as_ref().map(|(area, _)| *area);
            Ok(Answer::Value(serde_json::to_value(current).unwrap_or_default()))
        }
    }
}

/// Removes the tab's outline; answers whether it had one.
fn clear(tab: &Tab) -> bool {
    let Some((_, handler)) = tab.highlight.current.borrow_mut().take() else { return false };
    tab.view.disconnect(handler);
    tab.view.queue_draw();
    true
}

/// Strokes the outline around `area` (view coordinates are the viewport's CSS px).
fn stroke(context: &cairo::Context, area: HighlightBox) {
    let [red, green, blue] = HIGHLIGHT_RGB.map(|channel| f64::from(channel) / 255.0);
    let half = HIGHLIGHT_WIDTH / 2.0;
    context.save().ok();
    context.set_source_rgb(red, green, blue);
    context.set_line_width(HIGHLIGHT_WIDTH);
    context.rectangle(area.x - half, area.y - half, area.width + HIGHLIGHT_WIDTH, area.height + HIGHLIGHT_WIDTH);
    let _ = context.stroke();
    context.restore().ok();
}
