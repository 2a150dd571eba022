//! What a session's pages say on the wire, as the proxy records it: one record per request
//! (method, url, type, status, sizes, timing, failure, the rule that decided it), kept per
//! tab (the `requests` log, seed 002) and per session (the `responses` view, seed 003, with
//! bodies for subscribed URL prefixes), and the tabs' interception rules (seed 000).
//!
//! Invariant: response bodies live only here, in memory, and leave only through the
//! `responses` answer and a HAR file the agent asks for; never a log line, an event, or a
//! run report.

pub mod rules;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use self::rules::{InterceptRule, RuleAction, RuleMatch};
use crate::events::{window, SeqCounter, Window};

/// The marker a tab's User-Agent ends with, before its token: the session proxy reads the
/// token to know the tab, and removes both before a request leaves the machine.
pub const TAB_MARKER: &str = " malo/";

/// Requests a tab's log keeps (seed 002's network buffer).
pub const TAB_REQUESTS: usize = 500;
/// Response records a session's `responses` view keeps (seed 003).
pub const SESSION_RESPONSES: usize = 500;
/// Bodies a session keeps at most (seed 003).
pub const MAX_BODIES: usize = 200;
/// Bytes of bodies a session keeps at most (seed 003); the oldest body goes first.
pub const MAX_BODY_BUDGET: usize = 16 * 1024 * 1024;
/// Bytes kept of one body; the rest is cut (`body_truncated`).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;
/// Characters of a header value kept in a record.
const HEADER_VALUE_CHARS: usize = 1000;
/// Headers whose values a record never shows.
const SECRET_HEADERS: [&str; 4] = ["cookie", "set-cookie", "authorization", "proxy-authorization"];

/// What kind of resource a request fetches (seed 003's names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub enum ResourceType {
    /// A page or a frame's document.
    Document,
    /// `XMLHttpRequest`.
    #[serde(rename = "XHR", alias = "Xhr", alias = "xhr")]
    Xhr,
    /// `fetch()` (and beacons).
    Fetch,
    /// Scripts and workers.
    Script,
    /// Style sheets.
    Stylesheet,
    /// Images.
    Image,
    /// Fonts.
    Font,
    /// Audio, video, text tracks.
    Media,
    /// A WebSocket.
    WebSocket,
    /// Anything else.
    Other,
}

impl ResourceType {
    /// Whether a request seen as `seen` when it starts may turn out to be of this type: XHR
    /// and fetch() send the same headers, so either may be the other until the page's
    /// Resource Timing says which it was.
    pub fn could_be(self, seen: ResourceType) -> bool {
        let fetch_like = |kind| matches!(kind, ResourceType::Fetch | ResourceType::Xhr);
        self == seen || (fetch_like(self) && fetch_like(seen))
    }

    /// From the request's `Sec-Fetch-Dest` (and Upgrade) headers.
    pub fn from_request(fetch_dest: Option<&str>, websocket: bool) -> ResourceType {
        if websocket {
            return ResourceType::WebSocket;
        }
        match fetch_dest.unwrap_or("") {
            "document" | "iframe" | "frame" | "embed" | "object" => ResourceType::Document,
            "script" | "worker" | "sharedworker" | "serviceworker" | "audioworklet" | "paintworklet" => ResourceType::Script,
            "style" => ResourceType::Stylesheet,
            "image" => ResourceType::Image,
            "font" => ResourceType::Font,
            "audio" | "video" | "track" => ResourceType::Media,
            "empty" => ResourceType::Fetch,
            _ => ResourceType::Other,
        }
    }
}

/// What started a fetch-like request, as the page's Resource Timing names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Initiator {
    /// `fetch()` (`initiatorType` "fetch").
    Fetch,
    /// `XMLHttpRequest` (`initiatorType` "xmlhttprequest").
    XmlHttpRequest,
}

/// Where a response body stands in the capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyState {
    /// No subscription matched: metadata only.
    NotSubscribed,
    /// Still arriving.
    Pending,
    /// Kept.
    Kept { text: Arc<String>, truncated: bool },
    /// 204, 304 or empty.
    NoBody,
    /// Not valid UTF-8 text.
    Binary,
    /// Dropped to stay within the count or byte budget.
    Evicted,
    /// Could not be read.
    Failed(String),
}

/// One request as the proxy saw it.
#[derive(Debug, Clone, Serialize)]
pub struct RequestRecord {
    /// Its place in the daemon-wide sequence.
    pub seq: u64,
    /// The tab that made it (null for a worker of no tab).
    pub tab: Option<String>,
    /// `req-<n>`.
    pub id: String,
    /// Method.
    pub method: String,
    /// Full URL.
    pub url: String,
    /// Its type.
    pub resource_type: ResourceType,
    /// HTTP status (null when it failed before one).
    pub status: Option<u16>,
    /// The response's MIME type.
    pub mime_type: Option<String>,
    /// Request headers (secret values redacted).
    #[serde(skip)]
    pub request_headers: Vec<(String, String)>,
    /// Response headers (secret values redacted).
    #[serde(skip)]
    pub response_headers: Vec<(String, String)>,
    /// Bytes of the request body.
    pub request_body_size: u64,
    /// Bytes of the response body received so far.
    pub response_body_size: u64,
    /// When it started.
    pub started_at: String,
    /// Milliseconds from start to the end of the response (null while running).
    pub duration_ms: Option<u64>,
    /// Why it failed, when it did (a network error, a TLS error, blocked, a rule).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// The rule that decided it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_rule_id: Option<String>,
    /// What that rule did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<RuleAction>,
    /// What the rule matched on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub matched_by: Vec<&'static str>,
    /// The body, as the capture holds it.
    #[serde(skip)]
    pub body: BodyState,
    #[serde(skip)]
    begun: Option<Instant>,
    /// Whether the page's Resource Timing has said what started a fetch-like request.
    #[serde(skip)]
    initiator_known: bool,
}

impl RequestRecord {
    /// The record with its headers, for `requests {headers: true}`.
    pub fn with_headers(&self) -> Value {
        let mut value = serde_json::to_value(self).unwrap_or_default();
        let pairs = |headers: &[(String, String)]| {
            Value::Array(headers.iter().map(|(name, value)| json!({ "name": name, "value": value })).collect())
        };
        value["request_headers"] = pairs(&self.request_headers);
        value["response_headers"] = pairs(&self.response_headers);
        value
    }

    /// Whether the request ended in a network failure or was blocked (not an HTTP status).
    pub fn failed(&self) -> bool {
        self.failure.is_some()
    }
}

/// One shared record, updated as the response arrives.
pub type Entry = Arc<Mutex<RequestRecord>>;

/// Headers as a record keeps them: lowercase names, secret values hidden, long values cut.
pub fn recorded_headers<'a>(headers: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<(String, String)> {
    headers
        .map(|(name, value)| {
            let name = name.to_ascii_lowercase();
            let value = if SECRET_HEADERS.contains(&name.as_str()) {
                "[redacted]".to_string()
            } else {
                value.chars().take(HEADER_VALUE_CHARS).collect()
            };
            (name, value)
        })
        .collect()
}

/// A request as the proxy reports it when it starts.
#[derive(Debug, Clone)]
pub struct NewRequest {
    /// Method.
    pub method: String,
    /// Full URL.
    pub url: String,
    /// Its type.
    pub resource_type: ResourceType,
    /// Headers (already as recorded).
    pub headers: Vec<(String, String)>,
    /// Body size, when known.
    pub body_size: u64,
}

/// One tab's traffic: its request log and its interception rules.
#[derive(Debug)]
pub struct TabTraffic {
    /// The tab's short id.
    pub tab: String,
    /// The token the tab's requests carry (in their User-Agent, removed by the proxy).
    pub token: String,
    // Std mutexes: pushes, copies and short scans, never held across an await.
    requests: Mutex<VecDeque<Entry>>,
    rules: Mutex<Vec<InterceptRule>>,
    /// The session's event log (the proxy records what it blocks there).
    pub events: Arc<crate::events::EventLog>,
}

impl TabTraffic {
    /// An empty log for `tab` of the session whose events are `events`.
    pub fn new(tab: &str, events: Arc<crate::events::EventLog>) -> TabTraffic {
        TabTraffic {
            tab: tab.to_string(),
            token: crate::secret::random_hex(8),
            events,
            requests: Mutex::default(),
            rules: Mutex::default(),
        }
    }

    /// Adds a rule; answers it.
    pub fn add_rule(&self, rule: InterceptRule) -> InterceptRule {
        self.rules.lock().expect("rules poisoned").push(rule.clone());
        rule
    }

    /// Removes a rule; answers whether it was there.
    pub fn remove_rule(&self, rule_id: &str) -> bool {
        let mut rules = self.rules.lock().expect("rules poisoned");
        let before = rules.len();
        rules.retain(|rule| rule.id != rule_id);
        rules.len() != before
    }

    /// The rules, in the order they are tried.
    pub fn rules(&self) -> Vec<InterceptRule> {
        let mut rules = self.rules.lock().expect("rules poisoned").clone();
        rules.sort_by_key(|rule| rule.rank());
        rules
    }

    /// The rule that decides `request`, if any.
    pub fn decide(&self, request: &rules::RequestFacts<'_>) -> Option<RuleMatch> {
        rules::first_match(&self.rules.lock().expect("rules poisoned"), request)
    }

    /// What the page's Resource Timing says started its fetch-like requests, in the order
    /// they finished: each names the oldest request of its URL not yet named, which is then
    /// an XHR or stays a fetch. (On the wire the two look alike, and the page's own objects
    /// are left as the browser made them, so this is known only once a request is done.)
    pub fn name_initiators(&self, finished: &[(String, Initiator)]) {
        let requests = self.requests.lock().expect("requests poisoned");
        for (url, initiator) in finished {
            let unnamed = requests.iter().find(|entry| {
                let record = entry.lock().expect("record poisoned");
                !record.initiator_known && record.resource_type == ResourceType::Fetch && &record.url == url
            });
            if let Some(entry) = unnamed {
                let mut record = entry.lock().expect("record poisoned");
                record.initiator_known = true;
                if *initiator == Initiator::XmlHttpRequest {
                    record.resource_type = ResourceType::Xhr;
                }
            }
        }
    }

    fn push(&self, entry: Entry) {
        let mut requests = self.requests.lock().expect("requests poisoned");
        if requests.len() == TAB_REQUESTS {
            requests.pop_front();
        }
        requests.push_back(entry);
    }

    /// The log's records after `after` (without it, the newest), filtered, oldest first,
    /// at most `limit`.
    pub fn requests(&self, after: Option<u64>, filter: &RequestFilter, limit: usize) -> Window<RequestRecord> {
        let requests = self.requests.lock().expect("requests poisoned");
        let floor = after.unwrap_or(0);
        let matching: Vec<RequestRecord> = requests
            .iter()
            .map(|entry| entry.lock().expect("record poisoned").clone())
            .filter(|record| record.seq > floor && filter.admits(record))
            .collect();
        window(matching, after, limit)
    }

    /// The latest failure recorded for a request of `url`, for a navigation's report.
    pub fn failure_for(&self, url: &str) -> Option<String> {
        let requests = self.requests.lock().expect("requests poisoned");
        requests.iter().rev().take(64).find_map(|entry| {
            let record = entry.lock().expect("record poisoned");
            (record.url == url && record.resource_type == ResourceType::Document).then(|| record.failure.clone()).flatten()
        })
    }

    /// Every record still kept (for a HAR file).
    pub fn all(&self) -> Vec<Entry> {
        self.requests.lock().expect("requests poisoned").iter().cloned().collect()
    }
}

/// The filters of `requests`.
#[derive(Debug, Clone, Default)]
pub struct RequestFilter {
    /// URL contains.
    pub url_includes: Option<String>,
    /// Method (any case).
    pub method: Option<String>,
    /// A status or a class.
    pub status: Option<StatusFilter>,
    /// A resource type.
    pub resource_type: Option<ResourceType>,
    /// Only failed or blocked requests.
    pub failed_only: bool,
}

impl RequestFilter {
    fn admits(&self, record: &RequestRecord) -> bool {
        self.url_includes.as_deref().is_none_or(|part| record.url.contains(part))
            && self.method.as_deref().is_none_or(|method| method.eq_ignore_ascii_case(&record.method))
            && self.resource_type.is_none_or(|kind| kind == record.resource_type)
            && (!self.failed_only || record.failed())
            && self.status.is_none_or(|wanted| wanted.admits(record.status))
    }
}

/// A `status` filter: one code (`404`, `"404"`) or a class (`"4xx"`), as agents and
/// people write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusFilter {
    /// Exactly this status.
    Exact(u16),
    /// Every status of this hundred (`4` for 400-499).
    Class(u16),
}

impl StatusFilter {
    /// Whether a record's status passes.
    pub fn admits(self, status: Option<u16>) -> bool {
        match (self, status) {
            (StatusFilter::Exact(wanted), Some(status)) => wanted == status,
            (StatusFilter::Class(class), Some(status)) => status / 100 == class,
            (_, None) => false,
        }
    }
}

impl std::str::FromStr for StatusFilter {
    type Err = String;

    fn from_str(text: &str) -> Result<StatusFilter, String> {
        let wanted = text.trim().to_ascii_lowercase();
        let refused = || format!("status is a code such as 404 or a class such as \"4xx\", not {text:?}");
        match wanted.strip_suffix("xx") {
            Some(class) if class.len() == 1 => match class.parse::<u16>() {
                Ok(class) if (1..=5).contains(&class) => Ok(StatusFilter::Class(class)),
                _ => Err(refused()),
            },
            Some(_) => Err(refused()),
            None if wanted.len() == 3 => match wanted.parse::<u16>() {
                Ok(code) if (100..=599).contains(&code) => Ok(StatusFilter::Exact(code)),
                _ => Err(refused()),
            },
            None => Err(refused()),
        }
    }
}

impl<'de> Deserialize<'de> for StatusFilter {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<StatusFilter, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Number(u64),
            Text(String),
        }
        let text = match Written::deserialize(deserializer)? {
            Written::Number(number) => number.to_string(),
            Written::Text(text) => text,
        };
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl schemars::JsonSchema for StatusFilter {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "StatusFilter".into()
    }

    fn json_schema(_generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A status (404 or \"404\") or a class (\"4xx\").",
            "anyOf": [
                { "type": "integer", "minimum": 100, "maximum": 599 },
                { "type": "string", "pattern": "^\\s*([1-5][0-9][0-9]|[1-5][xX][xX])\\s*$" }
            ]
        })
    }
}

/// A session's response capture (seed 003): which URL prefixes keep bodies, the records
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
        let resource_type = request.resource_type;
        let body = if self.wants(&request.url) { BodyState::Pending } else { BodyState::NotSubscribed };
        let record = RequestRecord {
            seq: seq.next(),
            tab: traffic.map(|traffic| traffic.tab.clone()),
            id: format!("req-{}", self.next_request.fetch_add(1, Ordering::Relaxed) + 1),
            method: request.method,
            url: request.url,
            resource_type,
            status: None,
            mime_type: None,
            request_headers: request.headers,
            response_headers: Vec::new(),
            request_body_size: request.body_size,
            response_body_size: 0,
            started_at: crate::clock::now(),
            duration_ms: None,
            failure: None,
            matched_rule_id: None,
            action: None,
            matched_by: Vec::new(),
            body,
            begun: Some(Instant::now()),
            initiator_known: false,
        };
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
    /// under `url_prefix`), oldest first, at most `limit`, each with its seq.
    pub fn responses(&self, url_prefix: Option<&str>, after: Option<u64>, limit: usize) -> Window<(u64, Value)> {
        let entries: Vec<Entry> = self.state.lock().expect("capture poisoned").responses.iter().cloned().collect();
        let floor = after.unwrap_or(0);
        let matching: Vec<(u64, Value)> = entries
            .iter()
            .map(|entry| entry.lock().expect("record poisoned").clone())
            .filter(|record| record.seq > floor && url_prefix.is_none_or(|prefix| record.url.starts_with(prefix)))
            .map(|record| (record.seq, response_value(&record)))
            .collect();
        window(matching, after, limit)
    }
}

/// A record as `responses` shows it (seed 003's shape).
fn response_value(record: &RequestRecord) -> Value {
    let (body, truncated, error): (Option<String>, bool, Option<String>) = match &record.body {
        BodyState::Kept { text, truncated } => (Some(text.to_string()), *truncated, None),
        BodyState::NotSubscribed => (None, false, Some("not_subscribed".into())),
        BodyState::Pending if record.failed() => {
            (None, false, Some(format!("body_failed: {}", record.failure.clone().unwrap_or_default())))
        }
        BodyState::Pending => (None, false, Some("pending".into())),
        BodyState::NoBody => (None, false, Some("no_body".into())),
        BodyState::Binary => (None, false, Some("binary".into())),
        BodyState::Evicted => (None, false, Some("evicted".into())),
        BodyState::Failed(reason) => (None, false, Some(format!("body_failed: {reason}"))),
    };
    json!({
        "seq": record.seq, "url": record.url, "status": record.status, "mime_type": record.mime_type,
        "resource_type": record.resource_type, "body": body, "body_truncated": truncated, "body_error": error,
        "tab": record.tab,
    })
}

/// A request's end, as the proxy reports it.
#[derive(Debug, Clone, Default)]
pub struct Ending {
    /// Bytes of the response body the page received.
    pub body_size: u64,
    /// Why it failed, if it did.
    pub failure: Option<String>,
}

/// Updates a record when the response head arrives.
pub fn record_response(entry: &Entry, status: u16, mime_type: Option<String>, headers: Vec<(String, String)>) {
    let mut record = entry.lock().expect("record poisoned");
    record.status = Some(status);
    record.mime_type = mime_type;
    record.response_headers = headers;
    if matches!(status, 204 | 304) && record.body == BodyState::Pending {
        record.body = BodyState::NoBody;
    }
}

/// Updates a record when the request ends (answered whole, or failed).
pub fn record_end(entry: &Entry, ending: Ending) {
    let mut record = entry.lock().expect("record poisoned");
    record.response_body_size = ending.body_size;
    record.duration_ms = record.begun.map(|begun| begun.elapsed().as_millis() as u64);
    if ending.failure.is_some() {
        record.failure = ending.failure;
    }
}

/// Marks a record with the rule that decided it.
pub fn record_rule(entry: &Entry, matched: &RuleMatch) {
    let mut record = entry.lock().expect("record poisoned");
    record.matched_rule_id = Some(matched.rule.id.clone());
    record.action = Some(matched.rule.action());
    record.matched_by = matched.matched_by.clone();
}

/// A tab as the directory holds it: its traffic and its session's capture.
type Listed = (Weak<TabTraffic>, Weak<Capture>);

/// Every tab's traffic, by the token its requests carry (a profile's context is shared by
/// several sessions, so one proxy may see another session's tabs).
#[derive(Debug, Default)]
pub struct TabDirectory {
    // A std RwLock: lookups on every request, inserts and removals on tab open and close.
    tabs: RwLock<HashMap<String, Listed>>,
}

impl TabDirectory {
    /// Registers a tab's traffic under its token.
    pub fn register(&self, traffic: &Arc<TabTraffic>, capture: &Arc<Capture>) {
        self.tabs.write().expect("directory poisoned").insert(traffic.token.clone(), (Arc::downgrade(traffic), Arc::downgrade(capture)));
    }

    /// Forgets a tab.
    pub fn unregister(&self, token: &str) {
        self.tabs.write().expect("directory poisoned").remove(token);
    }

    /// The tab (and its session's capture) whose requests carry `token`.
    pub fn find(&self, token: &str) -> Option<(Arc<TabTraffic>, Arc<Capture>)> {
        let tabs = self.tabs.read().expect("directory poisoned");
        let (traffic, capture) = tabs.get(token)?;
        Some((traffic.upgrade()?, capture.upgrade()?))
    }
}

/// The ports of the daemon itself (broker, leases, proxies): a page may never reach them.
#[derive(Debug, Default)]
pub struct DaemonPorts {
    // A std RwLock: read on every proxied connection, written when a port opens or closes.
    ports: RwLock<HashSet<u16>>,
}

impl DaemonPorts {
    /// Marks a port as the daemon's own.
    pub fn add(&self, port: u16) {
        self.ports.write().expect("ports poisoned").insert(port);
    }

    /// Forgets a port.
    pub fn remove(&self, port: u16) {
        self.ports.write().expect("ports poisoned").remove(&port);
    }

    /// Whether `port` on a loopback address is the daemon's own.
    pub fn contains(&self, port: u16) -> bool {
        self.ports.read().expect("ports poisoned").contains(&port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(url: &str) -> NewRequest {
        NewRequest { method: "GET".into(), url: url.into(), resource_type: ResourceType::Fetch, headers: Vec::new(), body_size: 0 }
    }

    #[test]
    fn resource_timing_names_each_fetch_like_request_once_in_order() {
        let seq = SeqCounter::default();
        let capture = Capture::default();
        let traffic = TabTraffic::new("t1", Arc::new(crate::events::EventLog::new(Arc::new(SeqCounter::default()))));
        let first = capture.begin(Some(&traffic), &seq, request("http://a/api"));
        let second = capture.begin(Some(&traffic), &seq, request("http://a/api"));
        let image = capture.begin(Some(&traffic), &seq, NewRequest { resource_type: ResourceType::Image, ..request("http://a/api") });
        // The page used fetch() first, then an XMLHttpRequest, for the same URL.
        traffic.name_initiators(&[("http://a/api".into(), Initiator::Fetch)]);
        traffic
            .name_initiators(&[("http://a/api".into(), Initiator::XmlHttpRequest), ("http://a/other".into(), Initiator::XmlHttpRequest)]);
        let kind = |entry: &Entry| entry.lock().unwrap().resource_type;
        assert_eq!((kind(&first), kind(&second), kind(&image)), (ResourceType::Fetch, ResourceType::Xhr, ResourceType::Image));
        // A later report of the same URL finds nothing left to name.
        traffic.name_initiators(&[("http://a/api".into(), Initiator::XmlHttpRequest)]);
        assert_eq!(kind(&first), ResourceType::Fetch);
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
        let first = capture.responses(Some("http://a/api/0"), Some(0), 10);
        assert_eq!(first.items[0].1["body_error"], "evicted");
        capture.subscribe(Vec::new());
        assert_eq!(capture.subscription(), (Vec::new(), 0));
        let all = capture.responses(None, Some(0), 200);
        assert!(all.has_more, "metadata stays");
        assert!(all.items.iter().skip(1).all(|(_, record)| record["body_error"] == "evicted"));
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
            let value = response_value(&entry.lock().unwrap());
            if error.is_empty() {
                assert_eq!(value["body"], "é");
            } else {
                assert_eq!(value["body_error"], error);
            }
        }
        let big = capture.begin(None, &seq, request("http://a/big"));
        capture.keep_body(&big, &[b'a'; MAX_BODY_BUDGET / 2], false);
        let big_two = capture.begin(None, &seq, request("http://a/big2"));
        capture.keep_body(&big_two, &[b'b'; MAX_BODY_BUDGET / 2 + 1], false);
        assert_eq!(big.lock().unwrap().body, BodyState::Evicted, "over 16 MiB the oldest body goes");
    }

    #[test]
    fn filters_and_status_classes() {
        let parse = |text: &str| text.parse::<StatusFilter>();
        assert!(parse("4xx").unwrap().admits(Some(404)) && !parse("4xx").unwrap().admits(Some(500)));
        assert!(parse("204").unwrap().admits(Some(204)) && !parse("2xx").unwrap().admits(None));
        for good in ["404", "4xx", "5XX", "200", " 301 "] {
            assert!(parse(good).is_ok(), "{good}");
        }
        for bad in ["", "4x", "40", "xx", "9xx", "abc", "1000", "099", "600"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let from_json = |value: Value| serde_json::from_value::<StatusFilter>(value);
        assert_eq!(from_json(json!(200)).unwrap(), StatusFilter::Exact(200));
        assert_eq!(from_json(json!("200")).unwrap(), StatusFilter::Exact(200));
        assert_eq!(from_json(json!("4xx")).unwrap(), StatusFilter::Class(4));
        assert!(from_json(json!(42)).is_err() && from_json(json!(true)).is_err());
        let headers = recorded_headers([("Cookie", "a=1"), ("X-Long", &"v".repeat(5000))].into_iter());
        assert_eq!(headers[0], ("cookie".to_string(), "[redacted]".to_string()));
        assert_eq!(headers[1].1.len(), HEADER_VALUE_CHARS);
        assert_eq!(ResourceType::from_request(Some("empty"), false), ResourceType::Fetch);
        assert_eq!(serde_json::to_value(ResourceType::Xhr).unwrap(), "XHR");
    }
}
