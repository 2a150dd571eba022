//! `wait_for_event`: wait for the next download, popup, file chooser or dialog of the
//! session after the call began. It holds no lock: an agent waits in one call and clicks
//! in another.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::limits::WAIT_FOR_EVENT_TIMEOUT_MS;
use super::{Tool, ToolContext};
use crate::error::{Error, ErrorCode};

/// What to wait for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum EventKind {
    /// A download starts (event `download_started`).
    Download,
    /// A popup opens as a tab (event `popup`; a denied one is `popup_blocked`).
    Popup,
    /// The page opens a file chooser (event `file_chooser`).
    FileChooser,
    /// A JavaScript dialog is answered (event `dialog`).
    Dialog,
    /// A person hands the session back: Done in the takeover window or the live view
    /// (event `watch_done`).
    WatchDone,
}

impl EventKind {
    /// The event type it waits for.
    fn event_type(self) -> &'static str {
        match self {
            EventKind::Download => "download_started",
            EventKind::Popup => "popup",
            EventKind::FileChooser => "file_chooser",
            EventKind::Dialog => "dialog",
            EventKind::WatchDone => "watch_done",
        }
    }
}

/// Input of `wait_for_event`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WaitForEventInput {
    /// `download`, `popup`, `file_chooser`, `dialog` or `watch_done`.
    kind: EventKind,
    /// How long to wait in ms (default 30000, max 300000).
    #[serde(default)]
    #[schemars(range(max = WAIT_FOR_EVENT_TIMEOUT_MS.max))]
    timeout_ms: Option<u64>,
    /// Only an event of this open tab (default: any tab of the session).
    #[serde(default)]
    tab: Option<String>,
}

/// Output of `wait_for_event`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct WaitForEventOutput {
    /// What was waited for.
    kind: EventKind,
    /// The event.
    event: WaitedEvent,
    /// How long the wait took.
    waited_ms: u64,
}

/// The event a wait ended with.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum WaitedEvent {
    /// An event of the session's log.
    Logged(crate::events::Event),
    /// A download's record, when download events are off (not in the log).
    DownloadRecord(DownloadStarted),
}

/// A download that began, from its record (download events are off).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct DownloadStarted {
    /// `download_started`.
    #[serde(rename = "type")]
    event_type: &'static str,
    /// The tab that started it, when known.
    tab: Option<String>,
    /// Its id.
    download_id: String,
    /// What is downloaded.
    url: String,
    /// The name the server (or the page) suggested, once known.
    suggested_filename: Option<String>,
}

pub(super) fn tool() -> Tool {
    Tool::session(
        "wait_for_event",
        "Wait for the next download, popup, file_chooser, dialog or watch_done (a person handed the session back) of the session (after this call began), up to timeout_ms (E_TIMEOUT). Holds no lock: wait here and act in another call.",
        |context: ToolContext, input: WaitForEventInput| async move {
            let timeout = WAIT_FOR_EVENT_TIMEOUT_MS.millis(input.timeout_ms, "timeout_ms")?;
            context.check_tab_filter(input.tab.as_deref())?;
            let session = &context.session;
            let begun = std::time::Instant::now();
            let deadline = tokio::time::Instant::now() + timeout;
            let kind = input.kind.event_type();
            if input.kind == EventKind::Download && !session.downloads.policy().events_enabled {
                // Download events are off: watch the records instead.
                let mark = session.downloads.begun();
                loop {
                    if let Some(record) = session.downloads.begun_since(mark, input.tab.as_deref()).into_iter().next() {
                        let event = WaitedEvent::DownloadRecord(DownloadStarted {
                            event_type: kind,
                            tab: record.tab,
                            download_id: record.download_id,
                            url: record.url,
                            suggested_filename: record.suggested_filename,
                        });
                        return Ok(WaitForEventOutput { kind: input.kind, event, waited_ms: begun.elapsed().as_millis() as u64 });
                    }
                    if tokio::time::Instant::now() >= deadline {
                        break;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            } else if let Some(event) = session.events.wait_for(session.events.newest_seq(), kind, input.tab.as_deref(), deadline).await {
                let event = WaitedEvent::Logged(event);
                return Ok(WaitForEventOutput { kind: input.kind, event, waited_ms: begun.elapsed().as_millis() as u64 });
            }
            Err(Error::new(ErrorCode::Timeout, format!("no {kind} event within {} ms", timeout.as_millis()))
                .with_details(json!({ "kind": input.kind })))
        },
    )
}
