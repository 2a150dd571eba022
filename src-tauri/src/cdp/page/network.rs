//! The tab's requests as Network events, read from the session proxy's log: each record
//! is reported once per stage (sent, answered, finished or failed), in that order. The
//! main document's request carries the loader id of its navigation, as Chrome's does,
//! so clients know which response is the navigation's.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::PageSession;
use crate::cdp::wire::{now_seconds, ProtocolError, Reply};
use crate::network::{BodyState, RequestRecord, ResourceType};

/// How far each record has been reported.
#[derive(Debug, Default)]
pub(super) struct Seen {
    /// Records at or below this seq were there before Network.enable.
    floor: u64,
    stages: HashMap<u64, Stage>,
    /// The request id given to each record.
    ids: HashMap<u64, String>,
    /// Reads since an ended fetch-looking request was first seen unnamed.
    unnamed: HashMap<u64, u32>,
}

/// Reads an ended request waits for the page to say whether it was an XHR or a fetch()
/// (the page says so once it is done) before it is reported: 500 ms at the network tick.
const NAMING_READS: u32 = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    Sent,
    Answered,
    Ended,
}

fn stage_of(record: &RequestRecord) -> Stage {
    if record.duration_ms.is_some() || record.failure.is_some() {
        Stage::Ended
    } else if record.status.is_some() {
        Stage::Answered
    } else {
        Stage::Sent
    }
}

/// The protocol's name of a resource type.
fn protocol_type(kind: ResourceType) -> &'static str {
    match kind {
        ResourceType::Document => "Document",
        ResourceType::Xhr => "XHR",
        ResourceType::Fetch => "Fetch",
        ResourceType::Script => "Script",
        ResourceType::Stylesheet => "Stylesheet",
        ResourceType::Image => "Image",
        ResourceType::Font => "Font",
        ResourceType::Media => "Media",
        ResourceType::WebSocket => "WebSocket",
        ResourceType::Other => "Other",
    }
}

fn headers(pairs: &[(String, String)]) -> Value {
    let mut headers = Map::new();
    for (name, value) in pairs {
        headers.insert(name.clone(), Value::from(value.clone()));
    }
    Value::Object(headers)
}

impl PageSession {
    /// `Network.enable`: requests from now on are reported; the session's capture keeps
    /// bodies (for `getResponseBody`) if it kept none.
    pub(super) fn enable_network(&self) -> Reply {
        let newest = self.tab.traffic.all().iter().map(|entry| entry.lock().expect("record poisoned").seq).max().unwrap_or(0);
        {
            let mut state = self.state();
            if !state.network {
                state.network = true;
                state.network_log.floor = state.network_log.floor.max(newest);
            }
        }
        let capture = self.shared.session.tabs.capture();
        if capture.subscription().0.is_empty() {
            capture.subscribe(vec!["http://".into(), "https://".into()]);
        }
        Ok(json!({}))
    }

    /// Reports what changed in the log since the last read.
    pub(super) fn scan_network(&self) {
        if !self.state().network {
            return;
        }
        // Every 100 ms per attached page: only records with something new to report are
        // copied (one already reported as ended is passed over under its lock).
        let (floor, ended): (u64, std::collections::HashSet<u64>) = {
            let state = self.state();
            let ended = state.network_log.stages.iter().filter(|(_, stage)| **stage == Stage::Ended).map(|(seq, _)| *seq).collect();
            (state.network_log.floor, ended)
        };
        let records: Vec<RequestRecord> = self
            .tab
            .traffic
            .all()
            .iter()
            .filter_map(|entry| {
                let record = entry.lock().expect("record poisoned");
                (record.seq > floor && !ended.contains(&record.seq)).then(|| record.clone())
            })
            .collect();
        for record in records {
            let (events, request_id) = {
                let mut state = self.state();
                if record.seq <= state.network_log.floor {
                    continue;
                }
                let now = stage_of(&record);
                let before = state.network_log.stages.get(&record.seq).copied();
                if before.is_none() && record.resource_type == ResourceType::Fetch && !record.initiator_known() {
                    // Reported as XHR or Fetch, as the page made it: wait until it is known.
                    if now != Stage::Ended {
                        continue;
                    }
                    let reads = state.network_log.unnamed.entry(record.seq).or_insert(0);
                    *reads += 1;
                    if *reads < NAMING_READS {
                        continue;
                    }
                }
                if before.is_some_and(|before| before >= now) {
                    continue;
                }
                let request_id = match state.network_log.ids.get(&record.seq) {
                    Some(id) => id.clone(),
                    None => {
                        let id = match (record.resource_type, &state.pending_loader) {
                            (ResourceType::Document, Some(loader)) if !state.network_log.ids.values().any(|id| id == loader) => {
                                loader.clone()
                            }
                            _ => format!("malo.{}", record.seq),
                        };
                        state.network_log.ids.insert(record.seq, id.clone());
                        id
                    }
                };
                state.network_log.stages.insert(record.seq, now);
                let loader = state.pending_loader.clone().unwrap_or_else(|| state.loader.clone());
                ((before, now, loader), request_id)
            };
            let (before, now, loader) = events;
            if before.is_none() {
                self.request_sent(&record, &request_id, &loader);
            }
            if before < Some(Stage::Answered) && now >= Stage::Answered && record.status.is_some() {
                self.response_received(&record, &request_id, &loader);
            }
            if now == Stage::Ended {
                self.request_ended(&record, &request_id);
            }
        }
    }

    fn request_sent(&self, record: &RequestRecord, request_id: &str, loader: &str) {
        let (url, _) = self.tab.status.get();
        self.event("Network.requestWillBeSent", json!({
            "requestId": request_id, "loaderId": loader, "documentURL": if record.resource_type == ResourceType::Document { record.url.clone() } else { url },
            "request": { "url": record.url, "method": record.method, "headers": headers(&record.request_headers),
                "initialPriority": "High", "referrerPolicy": "strict-origin-when-cross-origin", "hasPostData": record.request_body_size > 0 },
            "timestamp": now_seconds(), "wallTime": now_seconds(), "initiator": { "type": "other" },
            "redirectHasExtraInfo": false, "type": protocol_type(record.resource_type), "frameId": self.frame_id, "hasUserGesture": false,
        }));
    }

    fn response_received(&self, record: &RequestRecord, request_id: &str, loader: &str) {
        self.event(
            "Network.responseReceived",
            json!({
                "requestId": request_id, "loaderId": loader, "timestamp": now_seconds(), "type": protocol_type(record.resource_type),
                "response": {
                    "url": record.url, "status": record.status, "statusText": "", "headers": headers(&record.response_headers),
                    "mimeType": record.mime_type.clone().unwrap_or_default(), "connectionReused": false, "connectionId": 0,
                    "remoteIPAddress": "", "remotePort": 0, "fromDiskCache": false, "fromServiceWorker": false, "fromPrefetchCache": false,
                    "encodedDataLength": record.response_body_size, "responseTime": now_seconds() * 1000.0, "protocol": "http/1.1",
                    "securityState": if record.url.starts_with("https:") { "secure" } else { "insecure" },
                },
                "hasExtraInfo": false, "frameId": self.frame_id,
            }),
        );
    }

    fn request_ended(&self, record: &RequestRecord, request_id: &str) {
        match &record.failure {
            Some(failure) => self.event("Network.loadingFailed", json!({
                "requestId": request_id, "timestamp": now_seconds(), "type": protocol_type(record.resource_type),
                "errorText": format!("net::ERR_{}", failure.to_uppercase().replace([' ', '-'], "_")), "canceled": failure.contains("cancel"),
            })),
            None => self.event("Network.loadingFinished", json!({
                "requestId": request_id, "timestamp": now_seconds(), "encodedDataLength": record.response_body_size,
            })),
        }
    }

    /// `Network.setExtraHTTPHeaders`: the session proxy adds them to the tab's requests.
    pub(super) fn set_extra_headers(&self, params: &Value) -> Reply {
        let given = params["headers"].as_object().ok_or_else(|| ProtocolError::invalid("headers must be an object"))?;
        let mut headers = Vec::new();
        for (name, value) in given {
            let value = value.as_str().ok_or_else(|| ProtocolError::invalid(format!("header {name}: its value must be a string")))?;
            let token = !name.is_empty() && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte));
            if !token || value.bytes().any(|byte| byte == b'\r' || byte == b'\n' || byte == 0) {
                return Err(ProtocolError::invalid(format!("Invalid header: {name}")));
            }
            headers.push((name.clone(), value.to_string()));
        }
        self.tab.traffic.set_extra_headers(headers);
        Ok(json!({}))
    }

    /// `Network.getResponseBody`, from the session's capture.
    pub(super) fn response_body(&self, params: &Value) -> Reply {
        let request_id = params["requestId"].as_str().unwrap_or("");
        let seq = self.state().network_log.ids.iter().find(|(_, id)| id.as_str() == request_id).map(|(seq, _)| *seq);
        let seq = seq.ok_or_else(|| ProtocolError::server("No resource with given identifier found"))?;
        let body = self.tab.traffic.all().into_iter().find_map(|entry| {
            let record = entry.lock().expect("record poisoned");
            (record.seq == seq).then(|| record.body.clone())
        });
        match body {
            Some(BodyState::Kept { text, .. }) => Ok(json!({ "body": text.to_string(), "base64Encoded": false })),
            Some(BodyState::Binary) => Err(ProtocolError::server("the body is binary: the session's capture keeps text bodies only")),
            Some(BodyState::NoBody) => Ok(json!({ "body": "", "base64Encoded": false })),
            _ => Err(ProtocolError::server("No data found for resource with given identifier")),
        }
    }
}
