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
    handler: Option<glib::SignalHandlerId>,
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
    let (feed_for_damage, pending_for_damage) = (feed.clone(), pending.clone());
    let handler = tab.host.connect_damage_event(move |_, _| {
        if !pending_for_damage.replace(true) {
            let (weak, feed, pending) = (weak.clone(), feed_for_damage.clone(), pending_for_damage.clone());
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
        false
    });
    // The page as it is now, still or not.
    if let Err(error) = copy_into(tab, &feed) {
        tracing::debug!(%error, "live view: the first frame could not be copied");
    }
    *tab.live.borrow_mut() = Some(Stream { feed, handler: Some(handler) });
}

/// Stops copying frames of `tab` (its viewer's feed closes).
pub(super) fn stop(tab: &Tab) {
    if let Some(mut stream) = tab.live.borrow_mut().take() {
        if let Some(handler) = stream.handler.take() {
            tab.host.disconnect(handler);
        }
        stream.feed.close();
    }
}

/// Copies what the host shows (device pixels) into the feed.
fn copy_into(tab: &Tab, feed: &FrameFeed) -> Result<()> {
    if feed.is_closed() {
        return Ok(());
    }
    let failed = |what: &str| Error::internal(format!("live frame: {what}"));
    let surface = tab.host.surface().ok_or_else(|| failed("the host has no surface"))?;
    let scale = tab.host.scale_factor().max(1);
    let (width, height) = tab.size.get();
    let (width, height) = (width.max(1) * scale, height.max(1) * scale);
    let image = cairo::ImageSurface::create(cairo::Format::ARgb32, width, height).map_err(|_| failed("no image surface"))?;
    {
        let context = cairo::Context::new(&image).map_err(|_| failed("no cairo context"))?;
        context.scale(1.0, 1.0);
        context.set_source_surface(&surface, 0.0, 0.0).map_err(|_| failed("no source"))?;
        context.paint().map_err(|_| failed("paint failed"))?;
    }
    image.flush();
    let stride = image.stride() as usize;
    let mut bgra = Vec::new();
    image.with_data(|data| bgra = data.to_vec()).map_err(|_| failed("pixels unreadable"))?;
    feed.put(RawFrame { width: width as u32, height: height as u32, stride, bgra, painted_at: Instant::now() });
    Ok(())
}
