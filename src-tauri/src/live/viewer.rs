//! One connected viewer. Two halves: this task reads the viewer's messages (input, the
//! toolbar, Done) and keeps an eye on the link and the session; a sender task writes to
//! the viewer, the toolbar's state first, then the newest painted frame whenever there is
//! one (encoded on a blocking worker; a frame painted meanwhile replaces the one waiting,
//! so a slow viewer sees the latest picture, never a queue).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message as WsMessage, WebSocket};
use futures_util::{SinkExt, StreamExt};
use serde_json::json;
use tokio::sync::{mpsc, watch, Notify};

use super::input::{self, Message};
use super::{Ended, Link};
use crate::engine::frames::{FrameFeed, LiveRequest, RawFrame};
use crate::engine::{HistoryAction, InputEvent, TabAddress, TabRequest, WatchChange};
use crate::session::Session;

/// How often the link, the session and its tabs are looked at.
const TICK: Duration = Duration::from_millis(250);
/// How long a toolbar navigation may take.
const NAVIGATION: Duration = Duration::from_secs(30);

/// WebKit sends a page key events and mouse buttons on separate queues: a click right after
/// typing could reach the page before the last keys did (and move the focus under them),
/// and keys right after a click before the click did (and land in the field focused
/// before it). So when a person's input switches between keys and buttons, it waits until
/// the page has counted what went before (at most 2 s).
#[derive(Default)]
struct InputInFlight {
    /// What was sent last: keys (true) or buttons (false).
    keys: Option<bool>,
    /// The page's trusted-input count before the first of them.
    baseline: Option<i64>,
    /// How many key or button events went since.
    sent: i64,
}

/// The page's count of trusted input events (-1: unknown).
async fn input_count(session: &Session, target: &TabAddress) -> i64 {
    let body = "return globalThis.__malo ? __malo.inputCount() : -1;".to_string();
    session
        .engine
        .tab::<serde_json::Value>(target.clone(), TabRequest::Evaluate { body })
        .await
        .ok()
        .and_then(|value| value.as_i64())
        .unwrap_or(-1)
}

/// The viewer's picture area (device pixels), as it last said.
#[derive(Default)]
struct ViewerSize {
    width: AtomicU32,
    height: AtomicU32,
    changed: Notify,
}

/// Runs a viewer's connection until it closes, the link ends or a newer connection of the
/// same browser replaces it.
pub(super) async fn run(socket: WebSocket, link: Arc<Link>, session: Arc<Session>, connection: u64) {
    let (sink, mut incoming) = socket.split();
    let (texts, text_queue) = mpsc::unbounded_channel::<String>();
    let size = Arc::new(ViewerSize::default());
    let first_feed = Arc::new(FrameFeed::default());
    let (feeds, feed_watch) = watch::channel(first_feed.clone());
    let sender = tokio::spawn(send(sink, text_queue, feed_watch, size.clone()));

    let mut tab = session.tabs.selected_id().unwrap_or_else(|| link.tab_id.clone());
    stream(&session, &tab, Some(first_feed)).await;
    let mut shown_state = String::new();
    let mut in_flight = InputInFlight::default();
    let mut tick = tokio::time::interval(TICK);
    let ended = loop {
        let state = state_of(&session, &link, &tab);
        if state != shown_state {
            let _ = texts.send(state.clone());
            shown_state = state;
        }
        let replaced = link.changed.notified();
        tokio::select! {
            message = incoming.next() => match message {
                Some(Ok(WsMessage::Text(text))) => {
                    if let Some(ended) = receive(&link, &session, &tab, &size, &mut in_flight, text.as_str()).await {
                        break Some(ended);
                    }
                }
                Some(Ok(WsMessage::Binary(_) | WsMessage::Ping(_) | WsMessage::Pong(_))) => {}
                Some(Ok(WsMessage::Close(_)) | Err(_)) | None => break None,
            },
            () = replaced => {}
            _ = tick.tick() => {}
        }
        if link.state().connection != connection {
            break None;
        }
        if let Err(why) = link.live_session() {
            break Some(why);
        }
        // The view follows the session's selected tab.
        if let Some(selected) = session.tabs.selected_id().filter(|selected| *selected != tab) {
            let feed = Arc::new(FrameFeed::default());
            tab = selected;
            stream(&session, &tab, Some(feed.clone())).await;
            let _ = feeds.send(feed);
        }
    };
    if let Some(why) = ended {
        let _ = texts.send(json!({ "t": "ended", "says": why.says() }).to_string());
    }
    drop(texts);
    let _ = tokio::time::timeout(Duration::from_secs(2), sender).await;
    let mine = {
        let mut state = link.state();
        let mine = state.connection == connection;
        if mine {
            state.connection = 0;
        }
        mine
    };
    if mine {
        stream(&session, &tab, None).await;
        if ended.is_none() && link.control {
            tokio::spawn(grace(link));
        }
    }
}

/// A viewer gone (closed, lost) with the session still taken over: after the grace period
/// without a viewer back, the session goes back to its agent as with Done.
async fn grace(link: Arc<Link>) {
    tokio::time::sleep(super::grace()).await;
    if link.state().connection != 0 {
        return;
    }
    if let Ok((session, _)) = link.live_session() {
        tracing::info!(session = %session.id, "live view: the viewer left; the session goes back to its agent");
        hand_back(&link, &session).await;
    }
}

async fn hand_back(link: &Link, session: &Session) {
    let tab =
        if session.tabs.get(Some(&link.tab_id)).is_ok() { link.tab_id.clone() } else { session.tabs.selected_id().unwrap_or_default() };
    let target = TabAddress { session_id: session.id.clone(), tab };
    let _ = session.engine.tab::<serde_json::Value>(target, TabRequest::Watch(WatchChange::HandBack)).await;
    link.end(Ended::Done);
}

/// Starts (or stops) the copying of `tab`'s frames.
async fn stream(session: &Session, tab: &str, feed: Option<Arc<FrameFeed>>) {
    let target = TabAddress { session_id: session.id.clone(), tab: tab.to_string() };
    if let Err(error) = session.engine.tab::<()>(target, TabRequest::Live(LiveRequest::Stream(feed))).await {
        tracing::debug!(session = %session.id, %error, "live view: no frames from the tab");
    }
}

/// What the toolbar shows: the tab's address, the session's tabs, what the viewer may do.
fn state_of(session: &Session, link: &Link, tab: &str) -> String {
    let (width, height) = session.tabs.get(Some(tab)).map(|state| state.viewport()).unwrap_or((session.width, session.height));
    json!({
        "t": "state",
        "control": link.control,
        "session": session.name,
        "tab": tab,
        "tabs": session.tabs.summaries(),
        "width": width,
        "height": height,
    })
    .to_string()
}

/// Carries out one message; `Some` when it ends the view.
async fn receive(link: &Link, session: &Session, tab: &str, size: &ViewerSize, in_flight: &mut InputInFlight, text: &str) -> Option<Ended> {
    let Ok(message) = serde_json::from_str::<Message>(text) else { return None };
    if let Message::Size { w, h } = message {
        size.width.store(w.min(16_384), Ordering::Relaxed);
        size.height.store(h.min(16_384), Ordering::Relaxed);
        size.changed.notify_one();
        return None;
    }
    // Watch-only: the server takes nothing else, whatever the page sends.
    if !link.control {
        return None;
    }
    session.touch();
    let target = TabAddress { session_id: session.id.clone(), tab: tab.to_string() };
    match message {
        Message::Done => {
            hand_back(link, session).await;
            return Some(Ended::Done);
        }
        Message::Nav { a } => {
            let action = match a.as_str() {
                "back" => HistoryAction::Back,
                "forward" => HistoryAction::Forward,
                "reload" => HistoryAction::Reload,
                _ => return None,
            };
            let engine = session.engine.clone();
            let request = TabRequest::History { action, timeout: NAVIGATION, settle: Duration::ZERO };
            tokio::spawn(async move { engine.tab::<crate::engine::NavigationReport>(target, request).await });
        }
        Message::Go { url } => {
            let Ok(url) = crate::urls::check_navigation_url(&url) else { return None };
            if !matches!(url.scheme(), "http" | "https") {
                return None;
            }
            let engine = session.engine.clone();
            let request = TabRequest::Navigate { url: url.to_string(), timeout: NAVIGATION, settle: Duration::ZERO };
            tokio::spawn(async move { engine.tab::<crate::engine::NavigationReport>(target, request).await });
        }
        Message::Tab { id } => {
            let _ = session.tabs.select(&id);
        }
        other => {
            let (width, height) = session.tabs.get(Some(tab)).map(|state| state.viewport()).unwrap_or((session.width, session.height));
            let events = input::events(&other, width, height);
            let keys = match other {
                Message::Key { .. } | Message::Text { .. } => Some(true),
                Message::Down { .. } | Message::Up { .. } => Some(false),
                _ => None,
            };
            if let Some(keys) = keys {
                if in_flight.keys != Some(keys) {
                    if let Some(baseline) = in_flight.baseline.take().filter(|baseline| *baseline >= 0) {
                        let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
                        while input_count(session, &target).await < baseline + in_flight.sent && tokio::time::Instant::now() < deadline {
                            tokio::time::sleep(Duration::from_millis(5)).await;
                        }
                    }
                    *in_flight = InputInFlight { keys: Some(keys), baseline: None, sent: 0 };
                }
                if in_flight.baseline.is_none() {
                    in_flight.baseline = Some(input_count(session, &target).await);
                }
                // The page counts keys and buttons; moves may be coalesced, so they are not waited for.
                in_flight.sent += events.iter().filter(|event| !matches!(event, InputEvent::MouseMove { .. })).count() as i64;
            }
            if !events.is_empty() {
                if let Err(error) = session.engine.tab::<()>(target, TabRequest::Live(LiveRequest::Input(events))).await {
                    tracing::debug!(session = %session.id, %error, "live view: input not delivered");
                }
            }
        }
    }
    None
}

/// The sender half: toolbar states first, then the newest frame when there is one.
async fn send(
    mut sink: futures_util::stream::SplitSink<WebSocket, WsMessage>,
    mut texts: mpsc::UnboundedReceiver<String>,
    mut feeds: watch::Receiver<Arc<FrameFeed>>,
    size: Arc<ViewerSize>,
) {
    let mut last: Option<Arc<RawFrame>> = None;
    loop {
        let feed = feeds.borrow_and_update().clone();
        let next_frame = async {
            if feed.is_closed() {
                std::future::pending::<()>().await;
            }
            feed.wait().await;
        };
        let frame = tokio::select! {
            biased;
            text = texts.recv() => match text {
                Some(text) => {
                    if sink.send(WsMessage::Text(text.into())).await.is_err() {
                        return;
                    }
                    continue;
                }
                None => break,
            },
            changed = feeds.changed() => {
                if changed.is_err() {
                    break;
                }
                continue;
            }
            () = size.changed.notified() => last.clone(),
            () = next_frame => feed.take().map(Arc::new),
        };
        let Some(frame) = frame else { continue };
        last = Some(frame.clone());
        let (width, height) = (size.width.load(Ordering::Relaxed), size.height.load(Ordering::Relaxed));
        let encoded = tokio::task::spawn_blocking(move || super::encode::jpeg(&frame, width, height)).await;
        match encoded {
            Ok(Ok(jpeg)) => {
                if sink.send(WsMessage::Binary(jpeg.into())).await.is_err() {
                    return;
                }
            }
            Ok(Err(error)) => tracing::debug!(%error, "live view: a frame could not be encoded"),
            Err(_) => return,
        }
    }
    let _ = sink.close().await;
}
