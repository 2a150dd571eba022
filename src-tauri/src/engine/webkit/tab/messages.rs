//! What the page side tells a tab: the page agent's messages from every frame (console
//! lines, uncaught errors, which requests were XHRs, a file input clicked, a download link
//! clicked, answers of relayed calls) through the isolated world's script message handler,
//! and what WebKit itself writes to the page's console, from malo's web-process extension.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use serde_json::Value;
use tokio::sync::oneshot;
use webkit2gtk::WebViewExt;

use super::{FileInputClicked, Tab};
use crate::events::{BlockReason, EventKind};
use crate::state::{ConsoleEntry, ConsoleLevel, PageError, PageErrorKind, ScriptPlace, TabSignal, TabState};

/// The name of the script message handler the agents post to.
pub(in crate::engine::webkit) const HANDLER: &str = "malo";

/// Relayed calls waiting for their frame's answer.
#[derive(Default)]
pub(in crate::engine::webkit) struct Relay {
    next_id: Cell<u64>,
    waiting: RefCell<HashMap<u64, oneshot::Sender<Value>>>,
}

impl Relay {
    /// A new call's id and where its answer will arrive.
    pub(in crate::engine::webkit) fn open_call(&self) -> (u64, oneshot::Receiver<Value>) {
        let id = self.next_id.get() + 1;
        self.next_id.set(id);
        let (sender, receiver) = oneshot::channel();
        self.waiting.borrow_mut().insert(id, sender);
        (id, receiver)
    }

    /// Gives up waiting for call `id`.
    pub(in crate::engine::webkit) fn cancel(&self, id: u64) {
        self.waiting.borrow_mut().remove(&id);
    }

    /// Hands a frame's answer to the call waiting for it.
    fn deliver(&self, answer: &Value) {
        let Some(id) = answer.get("id").and_then(Value::as_u64) else { return };
        if let Some(waiter) = self.waiting.borrow_mut().remove(&id) {
            let _ = waiter.send(answer.clone());
        }
    }
}

/// Connects what WebKit writes to the page's console (from the web-process extension).
pub(super) fn connect_engine_console(tab: &Tab) {
    let view = &tab.view;
    // What WebKit itself tells the page's console, from malo's web-process extension:
    // kept with the console, and a refused local URL is a blocked navigation (WebKit
    // leaves no other trace of it).
    let (state, tab_id) = (tab.state.clone(), tab.id.clone());
    view.connect_user_message_received(move |view, message| {
        let Some(message) = crate::engine::webkit::web_process::EngineMessage::from_user_message(message) else { return false };
        if let Some(url) = message.refused_url() {
            let blocked = EventKind::NavigationBlocked {
                url: crate::urls::redact_credentials(url),
                reason: BlockReason::LocalResource,
                from: None,
                rule: None,
            };
            state.traffic.events.push(Some(&tab_id), blocked);
        }
        state.console.push(ConsoleEntry {
            level: message.level,
            text: message.text.chars().take(4000).collect(),
            place: ScriptPlace {
                source: message.source,
                line: message.line,
                column: None,
                frame_url: view.uri().map(|uri| uri.to_string()).unwrap_or_default(),
            },
            engine: Some(message.category.to_string()),
            time: crate::clock::now(),
        });
        true
    });
}

/// A message from the agent of one of the tab's frames: what the page said (console, an
/// uncaught error), which of its requests were XHRs, a file input clicked, or the answer
/// of a relayed call.
pub(super) fn receive(
    text: &str,
    relay: &Relay,
    state: &TabState,
    file_input_clicked: &RefCell<Option<FileInputClicked>>,
    downloads: &crate::state::downloads::Downloads,
) {
    let Ok(message) = serde_json::from_str::<Value>(text) else { return };
    let field = |name: &str| message.get(name).and_then(Value::as_str).map(str::to_string);
    let number = |name: &str| message.get(name).and_then(Value::as_u64);
    let place = || ScriptPlace {
        source: field("source"),
        line: number("line"),
        column: number("column"),
        frame_url: field("frame_url").unwrap_or_default(),
    };
    match message.get("kind").and_then(Value::as_str) {
        Some("console") => {
            let level = field("level").and_then(|level| ConsoleLevel::named(&level)).unwrap_or(ConsoleLevel::Log);
            let args = message.get("args").and_then(Value::as_array).cloned().unwrap_or_else(|| vec![Value::from(field("text"))]);
            state.signal(TabSignal::Console { level, args, place: place() });
            state.console.push(ConsoleEntry {
                level,
                text: field("text").unwrap_or_default(),
                place: place(),
                engine: None,
                time: crate::clock::now(),
            });
        }
        Some("page_error") => {
            let (message_text, stack) = (field("message").unwrap_or_default(), field("stack"));
            state.signal(TabSignal::PageError { message: message_text, stack, frame_url: field("frame_url").unwrap_or_default() });
            state.errors.push(PageError {
                kind: if field("error_kind").as_deref() == Some("unhandled_rejection") {
                    PageErrorKind::UnhandledRejection
                } else {
                    PageErrorKind::Exception
                },
                message: field("message").unwrap_or_default(),
                stack: field("stack"),
                place: place(),
                time: crate::clock::now(),
            });
        }
        Some("initiators") => {
            let finished: Vec<(String, crate::network::Initiator)> = message
                .get("entries")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|entry| {
                    let url = entry.get(0)?.as_str()?.to_string();
                    let initiator = match entry.get(1)?.as_str()? {
                        "xmlhttprequest" => crate::network::Initiator::XmlHttpRequest,
                        "fetch" => crate::network::Initiator::Fetch,
                        _ => return None,
                    };
                    Some((url, initiator))
                })
                .collect();
            state.traffic.name_initiators(&finished);
        }
        Some("download_link") => downloads.announce(&state.id, crate::state::downloads::LINK_DOWNLOAD),
        Some("dom_content_loaded") => state.signal(TabSignal::DomContentLoaded),
        Some("binding") => {
            if let (Some(name), Some(payload)) = (field("name"), field("payload")) {
                state.signal(TabSignal::Binding { name, payload, world: field("world") });
            }
        }
        Some("file_input") => {
            let accept = field("accept").unwrap_or_default();
            let accept = accept.split(',').map(str::trim).filter(|part| !part.is_empty()).map(str::to_string).collect();
            *file_input_clicked.borrow_mut() = Some(FileInputClicked { accept, when: std::time::Instant::now() });
        }
        _ => relay.deliver(&message),
    }
}
