//! A live view's side of a tab (see `crate::live`): every time the tab's offscreen host
//! reports damage (the page painted; nothing while it is still), one copy of its pixels is
//! taken in an idle callback (coalescing a burst of damage into one copy) and handed to the
//! viewer's [`FrameFeed`]. Scaling and encoding happen on the viewer's side, off this
//! thread. A person's input goes through the same trusted-event path as the agent's.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use gtk::prelude::*;

use super::tab::Tab;
use crate::engine::frames::{FrameFeed, LiveRequest, RawFrame};
use crate::engine::Answer;
use crate::error::{Error, Result};

/// A tab's frames going to a viewer.
pub(in crate::engine::webkit) struct Stream {
    feed: Arc<FrameFeed>,
    /// The signal that says the page painted: the offscreen host's damage, or the takeover
    /// window's draw while a person also has the session in the window.
    handler: Option<(gtk::Widget, glib::SignalHandlerId)>,
}

/// Carries out a live view's request on `tab`.
pub(super) fn handle(tab: &Rc<Tab>, request: LiveRequest) -> Result<Answer> {
    match request {
        LiveRequest::Stream(Some(feed)) => {
            tab.ensure_alive()?;
            start(tab, feed);
        }
        LiveRequest::Stream(None) => stop(tab),
        LiveRequest::Input(events) => {
            tab.ensure_open()?;
            if !tab.view.is_focus() {
                tab.view.grab_focus();
            }
            super::input::deliver(&tab.view, &tab.buttons_held, &events)?;
        }
    }
    Ok(Answer::Done)
}

fn start(tab: &Rc<Tab>, feed: Arc<FrameFeed>) {
    stop(tab);
    let pending = Rc::new(Cell::new(false));
    let weak = Rc::downgrade(tab);
    let feed_for_paint = feed.clone();
    let painted = move || {
        if !pending.replace(true) {
            let (weak, feed, pending) = (weak.clone(), feed_for_paint.clone(), pending.clone());
            // After this round of painting: one copy for a burst of damage.
            glib::idle_add_local_once(move || {
                pending.set(false);
                if let Some(tab) = weak.upgrade() {
                    if let Err(error) = copy_into(&tab, &feed) {
                        tracing::debug!(%error, "live view: a frame could not be copied");
                    }
                }
            });
        }
    };
    let window = tab.takeover.window.borrow().as_ref().map(|takeover| takeover.window.clone());
    let handler = match window {
        Some(window) => {
            let handler = window.connect_draw(move |_, _| {
                painted();
                glib::Propagation::Proceed
            });
            (window.upcast::<gtk::Widget>(), handler)
        }
        None => {
            let handler = tab.host.connect_damage_event(move |_, _| {
                painted();
                false
            });
            (tab.host.clone().upcast::<gtk::Widget>(), handler)
        }
    };
    // The page as it is now, still or not.
    if let Err(error) = copy_into(tab, &feed) {
        tracing::debug!(%error, "live view: the first frame could not be copied");
    }
    *tab.live.borrow_mut() = Some(Stream { feed, handler: Some(handler) });
    tab.set_seen(true);
}

/// Stops copying frames of `tab` (its viewer's feed closes).
pub(super) fn stop(tab: &Tab) {
    if let Some(stream) = disconnect(tab) {
        stream.feed.close();
        tab.set_seen(tab.takeover.window.borrow().is_some());
    }
}

fn disconnect(tab: &Tab) -> Option<Stream> {
    let mut stream = tab.live.borrow_mut().take()?;
    if let Some((widget, handler)) = stream.handler.take() {
        widget.disconnect(handler);
    }
    Some(stream)
}

/// The page moved between its offscreen host and the takeover window: its frames go on
/// from where it is now, to the same viewer.
pub(super) fn rehost(tab: &Rc<Tab>) {
    if let Some(stream) = disconnect(tab) {
        start(tab, stream.feed);
    }
}

/// Copies what the host shows (device pixels) into the feed.
fn copy_into(tab: &Tab, feed: &FrameFeed) -> Result<()> {
    if feed.is_closed() {
        return Ok(());
    }
    let failed = |what: &str| Error::internal(format!("live frame: {what}"));
    let in_window = tab.takeover.window.borrow().is_some();
    let scale = tab.view.scale_factor().max(1);
    let (width, height) = tab.size.get();
    let (width, height) = (width.max(1) * scale, height.max(1) * scale);
    let image = cairo::ImageSurface::create(cairo::Format::ARgb32, width, height).map_err(|_| failed("no image surface"))?;
    {
        let context = cairo::Context::new(&image).map_err(|_| failed("no cairo context"))?;
        if in_window {
            // In the takeover window the view paints itself into the picture (its own
            // backing store; the window's draw signal is not emitted by this).
            context.scale(scale as f64, scale as f64);
            tab.view.draw(&context);
        } else {
            let surface = tab.host.surface().ok_or_else(|| failed("the host has no surface"))?;
            context.set_source_surface(&surface, 0.0, 0.0).map_err(|_| failed("no source"))?;
            context.paint().map_err(|_| failed("paint failed"))?;
        }
    }
    image.flush();
    let stride = image.stride() as usize;
    let mut bgra = Vec::new();
    image.with_data(|data| bgra = data.to_vec()).map_err(|_| failed("pixels unreadable"))?;
    feed.put(RawFrame { width: width as u32, height: height as u32, stride, bgra, painted_at: Instant::now() });
    Ok(())
}
