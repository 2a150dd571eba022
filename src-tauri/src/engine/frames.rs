//! Frames of a live view (`crate::live`): the engine copies what a tab painted into a
//! [`FrameFeed`] on the main thread (a plain copy of its pixels, nothing more), and the
//! viewer's side takes the latest one when it is ready for it. The feed holds one frame:
//! a newer one replaces an older one not taken yet, so a slow viewer never builds a queue.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use tokio::sync::Notify;

/// What the page painted, as the engine copied it: cairo's premultiplied BGRA rows.
#[derive(Debug)]
pub struct RawFrame {
    /// Pixels across (device pixels).
    pub width: u32,
    /// Pixels down.
    pub height: u32,
    /// Bytes from one row to the next.
    pub stride: usize,
    /// `stride * height` bytes.
    pub bgra: Vec<u8>,
    /// When the engine copied it.
    pub painted_at: Instant,
}

/// One frame at a time from the engine to a viewer (latest wins).
#[derive(Debug, Default)]
pub struct FrameFeed {
    latest: Mutex<Option<RawFrame>>,
    ready: Notify,
    closed: AtomicBool,
    /// Frames the engine copied so far (taken or replaced).
    painted: AtomicU64,
}

impl FrameFeed {
    /// Offers a new frame; it replaces one not taken yet.
    pub fn put(&self, frame: RawFrame) {
        if self.is_closed() {
            return;
        }
        *self.latest.lock().expect("frame feed poisoned") = Some(frame);
        self.painted.fetch_add(1, Ordering::Relaxed);
        self.ready.notify_one();
    }

    /// The latest frame, if one came since the last take.
    pub fn take(&self) -> Option<RawFrame> {
        self.latest.lock().expect("frame feed poisoned").take()
    }

    /// Waits until a frame may be there (or the feed closed).
    pub async fn wait(&self) {
        if self.latest.lock().expect("frame feed poisoned").is_some() || self.is_closed() {
            return;
        }
        self.ready.notified().await;
    }

    /// Stops the feed: the engine offers nothing more, and a waiter wakes.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Relaxed);
        self.ready.notify_one();
    }

    /// Whether the feed was stopped.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Relaxed)
    }

    /// How many frames the engine copied so far.
    pub fn painted(&self) -> u64 {
        self.painted.load(Ordering::Relaxed)
    }
}

/// What a live view asks of a tab.
#[derive(Debug)]
pub enum LiveRequest {
    /// Copy every frame the tab paints into this feed (one at once now), replacing an
    /// earlier feed; `None` stops copying.
    Stream(Option<std::sync::Arc<FrameFeed>>),
    /// A person's input: trusted events through the agent's input path, without the
    /// wait-for-the-page bookkeeping of an agent's action.
    Input(Vec<super::InputEvent>),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(width: u32) -> RawFrame {
        RawFrame { width, height: 1, stride: width as usize * 4, bgra: vec![0; width as usize * 4], painted_at: Instant::now() }
    }

    #[tokio::test]
    async fn the_latest_frame_wins_and_a_closed_feed_takes_no_more() {
        let feed = FrameFeed::default();
        feed.put(frame(1));
        feed.put(frame(2));
        feed.wait().await;
        assert_eq!(feed.take().map(|frame| frame.width), Some(2));
        assert!(feed.take().is_none());
        assert_eq!(feed.painted(), 2);
        feed.close();
        feed.wait().await;
        feed.put(frame(3));
        assert!(feed.take().is_none());
    }
}
