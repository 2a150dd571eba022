//! A session's response capture (seed 003): the URL prefixes whose bodies are kept, the
//! records of every request (500 visible), the bodies within their budget, and the
//! `responses` view of them.
//!
//! Invariant: response bodies live only here, in memory, and leave only through the
//! `responses` answer and a HAR file the agent asks for.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;

use super::records::{BodyState, Entry, NewRequest, RequestRecord, ResourceType, TabTraffic};
use crate::events::{window, SeqCounter, Window};

/// Response records a session's `responses` view keeps (seed 003).
pub const SESSION_RESPONSES: usize = 500;
/// Bodies a session keeps at most (seed 003).
pub const MAX_BODIES: usize = 200;
/// Bytes of bodies a session keeps at most (seed 003); the oldest body goes first.
pub const MAX_BODY_BUDGET: usize = 16 * 1024 * 1024;
/// Bytes kept of one body; the rest is cut (`body_truncated`).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// of every request (500 visible), and the bodies (200, 16 MiB, oldest dropped first).
#[derive(Debug, Default)]
pub struct Capture {
    // A std mutex: list operations only.
    state: Mutex<CaptureState>,
    next_request: AtomicU64,
}

#[derive(Debug, Default)]
struct CaptureState {
    prefixes: Vec<String>,
    responses: VecDeque<Entry>,
    /// Entries holding a body, oldest first, with the body's size.
    bodies: VecDeque<(Entry, usize)>,
    body_bytes: usize,
}

impl Capture {
    /// The subscribed prefixes and how many bodies are kept.
    pub fn subscription(&self) -> (Vec<String>, usize) {
        let state = self.state.lock().expect("capture poisoned");
        (state.prefixes.clone(), state.bodies.len())
    }

    /// Replaces the subscription; `[]` also drops every kept body (the records stay).
    pub fn subscribe(&self, prefixes: Vec<String>) {
        let mut state = self.state.lock().expect("capture poisoned");
        if prefixes.is_empty() {
            for (entry, _) in state.bodies.drain(..) {
                entry.lock().expect("record poisoned").body = BodyState::Evicted;
            }
            state.body_bytes = 0;
        }
        state.prefixes = prefixes;
    }

    /// Whether `url`'s body is kept.
    pub fn wants(&self, url: &str) -> bool {
        self.state.lock().expect("capture poisoned").prefixes.iter().any(|prefix| url.starts_with(prefix.as_str()))
    }

    /// Records a new request of `tab` (when known); answers its shared record.
    pub fn begin(&self, traffic: Option<&TabTraffic>, seq: &SeqCounter, request: NewRequest) -> Entry {
        let body = if self.wants(&request.url) { BodyState::Pending } else { BodyState::NotSubscribed };
        let id = format!("req-{}", self.next_request.fetch_add(1, Ordering::Relaxed) + 1);
        let record = RequestRecord::begin(seq.next(), traffic.map(|traffic| traffic.tab.clone()), id, request, body);
        let entry = Arc::new(Mutex::new(record));
        if let Some(traffic) = traffic {
            traffic.push(entry.clone());
        }
        let mut state = self.state.lock().expect("capture poisoned");
        if state.responses.len() == SESSION_RESPONSES {
            state.responses.pop_front();
        }
        state.responses.push_back(entry.clone());
        entry
    }

    /// Keeps a finished body (or says why not), evicting the oldest bodies to stay within
    /// the count and byte budgets.
    pub fn keep_body(&self, entry: &Entry, bytes: &[u8], truncated: bool) {
        let (state_now, size) = {
            let record = entry.lock().expect("record poisoned");
            if record.body != BodyState::Pending {
                return;
            }
            if bytes.is_empty() {
                (BodyState::NoBody, 0)
            } else {
                match std::str::from_utf8(bytes) {
                    Ok(text) => (BodyState::Kept { text: Arc::new(text.to_string()), truncated }, bytes.len()),
                    // A cut in the middle of a character is still text.
                    Err(error) if truncated && error.error_len().is_none() => {
                        let text = String::from_utf8_lossy(&bytes[..error.valid_up_to()]).to_string();
                        (BodyState::Kept { text: Arc::new(text), truncated }, bytes.len())
                    }
                    Err(_) => (BodyState::Binary, 0),
                }
            }
        };
        let kept = matches!(state_now, BodyState::Kept { .. });
        entry.lock().expect("record poisoned").body = state_now;
        if !kept {
            return;
        }
        let mut state = self.state.lock().expect("capture poisoned");
        state.bodies.push_back((entry.clone(), size));
        state.body_bytes += size;
        while state.bodies.len() > MAX_BODIES || state.body_bytes > MAX_BODY_BUDGET {
            let Some((evicted, size)) = state.bodies.pop_front() else { break };
            state.body_bytes -= size;
            evicted.lock().expect("record poisoned").body = BodyState::Evicted;
        }
    }

    /// The `responses` answer: records after `after` (without it, the newest; optionally
    /// under `url_prefix`), oldest first, at most `limit`; with `page`, only those after
    /// that seq, and how many matching records it left out (0 without it).
    pub fn responses(
        &self,
        url_prefix: Option<&str>,
        after: Option<u64>,
        page: Option<u64>,
        limit: usize,
    ) -> (Window<ResponseRecord>, usize) {
        let entries: Vec<Entry> = self.state.lock().expect("capture poisoned").responses.iter().cloned().collect();
        let floor = after.unwrap_or(0);
        let page = page.unwrap_or(0);
        let matching: Vec<RequestRecord> = entries
            .iter()
            .map(|entry| entry.lock().expect("record poisoned").clone())
            .filter(|record| record.seq > floor && url_prefix.is_none_or(|prefix| record.url.starts_with(prefix)))
            .collect();
        let earlier = matching.iter().filter(|record| record.seq <= page).count();
        let current = matching.iter().filter(|record| record.seq > page).map(ResponseRecord::of).collect();
        (window(current, after, limit), earlier)
    }
}

/// A record as `responses` shows it (seed 003's shape): every field present, null when
/// unknown.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ResponseRecord {
    /// Its place in the daemon-wide sequence (a cursor for `after`).
    pub seq: u64,
    /// Full URL.
    pub url: String,
    /// HTTP status (null when it failed before one, or is still waiting).
    pub status: Option<u16>,
    /// The response's MIME type.
    pub mime_type: Option<String>,
    /// Its type.
    pub resource_type: ResourceType,
    /// The body, or why there is none.
    #[serde(flatten)]
    pub body: ResponseBody,
    /// The tab that made it (null for a worker of no tab).
    pub tab: Option<String>,
}

impl ResponseRecord {
    fn of(record: &RequestRecord) -> ResponseRecord {
        ResponseRecord {
            seq: record.seq,
            url: record.url.clone(),
            status: record.status,
            mime_type: record.mime_type.clone(),
            resource_type: record.resource_type,
            body: ResponseBody::of(record),
            tab: record.tab.clone(),
        }
    }
}

/// A response's body as the capture holds it (seed 003's three fields): the text, or why
/// there is none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ResponseBody {
    /// The body as text (at most 1 MiB), when the capture kept it.
    pub body: Option<String>,
    /// Whether the body was cut at 1 MiB.
    pub body_truncated: bool,
    /// Why there is no body: not_subscribed, pending, no_body, binary, evicted or
    /// `body_failed: <reason>`; null when there is one.
    pub body_error: Option<String>,
}

impl ResponseBody {
    /// Where `record`'s body stands, as `responses` says it.
    pub fn of(record: &RequestRecord) -> ResponseBody {
        let missing = |error: String| ResponseBody { body: None, body_truncated: false, body_error: Some(error) };
        match &record.body {
            BodyState::Kept { text, truncated } => {
                ResponseBody { body: Some(text.to_string()), body_truncated: *truncated, body_error: None }
            }
            BodyState::NotSubscribed => missing("not_subscribed".into()),
            BodyState::Pending if record.failed() => missing(format!("body_failed: {}", record.failure.clone().unwrap_or_default())),
            BodyState::Pending => missing("pending".into()),
            BodyState::NoBody => missing("no_body".into()),
            BodyState::Binary => missing("binary".into()),
            BodyState::Evicted => missing("evicted".into()),
            BodyState::Failed(reason) => missing(format!("body_failed: {reason}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(url: &str) -> NewRequest {
        NewRequest { method: "GET".into(), url: url.into(), resource_type: ResourceType::Fetch, headers: Vec::new(), body_size: 0 }
    }

    #[test]
    fn bodies_are_kept_for_subscribed_prefixes_and_evicted_oldest_first() {
        let seq = SeqCounter::default();
        let capture = Capture::default();
        capture.subscribe(vec!["http://a/api/".into()]);
        let other = capture.begin(None, &seq, request("http://a/page"));
        assert_eq!(other.lock().unwrap().body, BodyState::NotSubscribed);
        let entries: Vec<Entry> =
            (0..=MAX_BODIES).map(|index| capture.begin(None, &seq, request(&format!("http://a/api/{index}")))).collect();
        for entry in &entries {
            capture.keep_body(entry, b"{\"ok\":true}", false);
        }
        assert_eq!(entries[0].lock().unwrap().body, BodyState::Evicted, "the 201st body evicts the oldest");
        assert!(matches!(entries[1].lock().unwrap().body, BodyState::Kept { .. }));
        assert_eq!(capture.subscription().1, MAX_BODIES);
        let (first, _) = capture.responses(Some("http://a/api/0"), Some(0), None, 10);
        assert_eq!(first.items[0].body.body_error.as_deref(), Some("evicted"));
        capture.subscribe(Vec::new());
        assert_eq!(capture.subscription(), (Vec::new(), 0));
        let (all, _) = capture.responses(None, Some(0), None, 200);
        assert!(all.has_more, "metadata stays");
        assert!(all.items.iter().skip(1).all(|record| record.body.body_error.as_deref() == Some("evicted")));
    }

    #[test]
    fn bodies_say_what_they_are() {
        let seq = SeqCounter::default();
        let capture = Capture::default();
        capture.subscribe(vec!["http://a/".into()]);
        let cases: [(&[u8], bool, &str); 3] =
            [(b"", false, "no_body"), (&[0xff, 0xfe, 0x00], false, "binary"), ("é".as_bytes(), false, "")];
        for (bytes, truncated, error) in cases {
            let entry = capture.begin(None, &seq, request("http://a/x"));
            capture.keep_body(&entry, bytes, truncated);
            let shown = serde_json::to_value(ResponseRecord::of(&entry.lock().unwrap())).unwrap();
            if error.is_empty() {
                assert_eq!((&shown["body"], &shown["body_error"]), (&serde_json::json!("é"), &serde_json::Value::Null));
            } else {
                assert_eq!((&shown["body"], &shown["body_error"]), (&serde_json::Value::Null, &serde_json::json!(error)));
            }
        }
        let big = capture.begin(None, &seq, request("http://a/big"));
        capture.keep_body(&big, &[b'a'; MAX_BODY_BUDGET / 2], false);
        let big_two = capture.begin(None, &seq, request("http://a/big2"));
        capture.keep_body(&big_two, &[b'b'; MAX_BODY_BUDGET / 2 + 1], false);
        assert_eq!(big.lock().unwrap().body, BodyState::Evicted, "over 16 MiB the oldest body goes");
    }
}
