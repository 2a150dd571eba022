//! Request records: one per request a session's pages make, as the proxy saw it (method,
//! url, type, status, sizes, timing, failure, the rule that decided it), and each tab's
//! traffic (its request log, seed 002, and its interception rules).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::filters::RequestFilter;
use super::rules::{self, InterceptRule, RuleAction, RuleMatch};
use crate::events::{window, Window};

/// Requests a tab's log keeps (seed 002's network buffer).
pub const TAB_REQUESTS: usize = 500;
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

    /// From the request's `Sec-Fetch-Dest` (and Upgrade) headers, or without the first its
    /// `Accept` header.
    pub fn from_request(fetch_dest: Option<&str>, accept: Option<&str>, websocket: bool) -> ResourceType {
        if websocket {
            return ResourceType::WebSocket;
        }
        let Some(fetch_dest) = fetch_dest else { return ResourceType::from_accept(accept.unwrap_or("")) };
        match fetch_dest {
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

    /// The type a request without `Sec-Fetch-Dest` asks for (WebKit sends that header to
    /// potentially trustworthy origins only: https and loopback, not `http://example.com`):
    /// the browser's documents and frames ask for HTML first, its images for an image type,
    /// its style sheets for CSS. Anything else (scripts, fetch, XHR: `*/*`) is `Other`.
    fn from_accept(accept: &str) -> ResourceType {
        let first = accept.split(',').next().unwrap_or("").split(';').next().unwrap_or("").trim().to_ascii_lowercase();
        match first.as_str() {
            "text/html" | "application/xhtml+xml" => ResourceType::Document,
            "text/css" => ResourceType::Stylesheet,
            media if media.starts_with("image/") => ResourceType::Image,
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

/// One request as the proxy saw it (as `requests` shows it, headers aside).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
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
    #[schemars(with = "String")]
    pub failure: Option<String>,
    /// The rule that decided it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub matched_rule_id: Option<String>,
    /// What that rule did.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "RuleAction")]
    pub action: Option<RuleAction>,
    /// What the rule matched on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub matched_by: Vec<&'static str>,
    /// The rule of the person's policy (`policy.toml`) that refused it, e.g.
    /// `profiles.work.allow_domains`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub policy_rule: Option<String>,
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
    /// Whether the page has said if a fetch-looking request was an XHR or a fetch().
    pub fn initiator_known(&self) -> bool {
        self.initiator_known
    }

    /// Whether the request ended in a network failure or was blocked (not an HTTP status).
    pub fn failed(&self) -> bool {
        self.failure.is_some()
    }
}

impl RequestRecord {
    /// A request's record as it starts: `id` is `req-<n>`, `body` where its body stands.
    pub(super) fn begin(seq: u64, tab: Option<String>, id: String, request: NewRequest, body: BodyState) -> RequestRecord {
        RequestRecord {
            seq,
            tab,
            id,
            method: request.method,
            url: request.url,
            resource_type: request.resource_type,
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
            policy_rule: None,
            body,
            begun: Some(Instant::now()),
            initiator_known: false,
        }
    }
}

/// A name and a value: a header or a query parameter (HAR's shape for both).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct NameValue {
    /// The name (a header's in lowercase).
    pub name: String,
    /// The value.
    pub value: String,
}

impl NameValue {
    /// Pairs as a record keeps them, in their order.
    pub fn list(pairs: &[(String, String)]) -> Vec<NameValue> {
        pairs.iter().map(|(name, value)| NameValue { name: name.clone(), value: value.clone() }).collect()
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

/// Headers every request of a session carries, shared by its tabs' traffic.
#[derive(Debug, Clone, Default)]
pub struct SessionHeaders(Arc<Mutex<Vec<(String, String)>>>);

impl SessionHeaders {
    /// Replaces the headers (lower-case names).
    pub fn set(&self, headers: Vec<(String, String)>) {
        *self.0.lock().expect("session headers poisoned") = headers;
    }

    /// The headers, in order.
    pub fn get(&self) -> Vec<(String, String)> {
        self.0.lock().expect("session headers poisoned").clone()
    }
}

/// One tab's traffic: its request log and its interception rules.
#[derive(Debug)]
pub struct TabTraffic {
    /// The tab's short id.
    pub tab: String,
    /// The WebKit page id of the tab's view, once it has one: its requests name it (in
    /// their User-Agent, removed by the proxy; see `TAB_MARKER`).
    page_id: std::sync::OnceLock<u64>,
    // Std mutexes: pushes, copies and short scans, never held across an await.
    requests: Mutex<VecDeque<Entry>>,
    rules: Mutex<Vec<InterceptRule>>,
    /// Headers every request of the tab carries besides its own (a DevTools client's
    /// `Network.setExtraHTTPHeaders`), in order.
    extra_headers: Mutex<Vec<(String, String)>>,
    /// Headers every request of the session carries (its `extra_http_headers`, and the
    /// `Accept-Language` of its locale), shared by its tabs.
    session_headers: SessionHeaders,
    /// The session's event log (the proxy records what it blocks there).
    pub events: Arc<crate::events::EventLog>,
}

impl TabTraffic {
    /// An empty log for `tab` of the session whose events are `events`.
    pub fn new(tab: &str, events: Arc<crate::events::EventLog>) -> TabTraffic {
        TabTraffic {
            tab: tab.to_string(),
            page_id: std::sync::OnceLock::new(),
            events,
            requests: Mutex::default(),
            rules: Mutex::default(),
            extra_headers: Mutex::default(),
            session_headers: SessionHeaders::default(),
        }
    }

    /// The same, carrying the session's headers too.
    pub fn with_session_headers(self, session_headers: SessionHeaders) -> TabTraffic {
        TabTraffic { session_headers, ..self }
    }

    /// The page id the tab's requests carry, once its view exists.
    pub fn page_id(&self) -> Option<u64> {
        self.page_id.get().copied()
    }

    /// Remembers the page id of the tab's view (set once: a tab keeps its view).
    pub(super) fn set_page_id(&self, page_id: u64) {
        let _ = self.page_id.set(page_id);
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

    /// Sets the headers every request of the tab carries besides its own (replacing the
    /// previous set; empty: none).
    pub fn set_extra_headers(&self, headers: Vec<(String, String)>) {
        *self.extra_headers.lock().expect("extra headers poisoned") = headers;
    }

    /// The headers every request of the tab carries besides its own: the session's, then
    /// the tab's own (which win on a name both set).
    pub fn extra_headers(&self) -> Vec<(String, String)> {
        let mut headers = self.session_headers.get();
        headers.extend(self.extra_headers.lock().expect("extra headers poisoned").iter().cloned());
        headers
    }

    /// Appends a record (the oldest goes when the log is full).
    pub(super) fn push(&self, entry: Entry) {
        let mut requests = self.requests.lock().expect("requests poisoned");
        if requests.len() == TAB_REQUESTS {
            requests.pop_front();
        }
        requests.push_back(entry);
    }

    /// The log's records after `after` (without it, the newest), filtered, oldest first,
    /// at most `limit`; with `page`, only those after that seq (the current page's), and
    /// how many matching records it left out (0 without it).
    pub fn requests(&self, after: Option<u64>, page: Option<u64>, filter: &RequestFilter, limit: usize) -> (Window<RequestRecord>, usize) {
        let requests = self.requests.lock().expect("requests poisoned");
        let floor = after.unwrap_or(0);
        let page = page.unwrap_or(0);
        let mut earlier = 0;
        let mut matching = Vec::new();
        for entry in requests.iter() {
            let record = entry.lock().expect("record poisoned");
            if record.seq <= floor || !filter.admits(&record) {
                continue;
            }
            if record.seq <= page {
                earlier += 1;
            } else {
                matching.push(record.clone());
            }
        }
        (window(matching, after, limit), earlier)
    }

    /// Where the requests of a page whose load of `url` began at `began_at`, when the
    /// session's sequence stood at `began`, start: after `began`. Its document's request may
    /// reach the proxy a moment before the engine says the load began: then the page starts
    /// just before that request (the newest document request of `url` after `previous`, the
    /// page before's start, begun at most [`DOCUMENT_AHEAD`] before the load).
    pub fn page_floor(&self, began: u64, began_at: Instant, url: &str, previous: u64) -> u64 {
        let asked = url.split('#').next().unwrap_or(url);
        let requests = self.requests.lock().expect("requests poisoned");
        // Newest first: a document request after `began` is the load's own.
        for entry in requests.iter().rev() {
            let record = entry.lock().expect("record poisoned");
            if record.seq <= previous {
                break;
            }
            if record.resource_type != ResourceType::Document || record.url != asked {
                continue;
            }
            if record.seq > began {
                return began;
            }
            if record.begun.is_some_and(|begun| begun + DOCUMENT_AHEAD >= began_at) {
                return record.seq - 1;
            }
        }
        began
    }

    /// The record of the request `id` (`req-<n>`), while the log keeps it.
    pub fn request(&self, id: &str) -> Option<RequestRecord> {
        let requests = self.requests.lock().expect("requests poisoned");
        requests.iter().map(|entry| entry.lock().expect("record poisoned")).find(|record| record.id == id).map(|record| record.clone())
    }

    /// How the latest request of `url` that loads a document failed, if it did (the proxy's
    /// reason, for the tab's load failure).
    pub fn failure_for(&self, url: &str) -> Option<String> {
        let requests = self.requests.lock().expect("requests poisoned");
        requests
            .iter()
            .rev()
            .take(64)
            .find_map(|entry| {
                let record = entry.lock().expect("record poisoned");
                (record.url == url && record.resource_type == ResourceType::Document).then(|| record.failure.clone())
            })
            .flatten()
    }

    /// Every record still kept (for a HAR file).
    pub fn all(&self) -> Vec<Entry> {
        self.requests.lock().expect("requests poisoned").iter().cloned().collect()
    }
}

/// A request's end, as the proxy reports it.
#[derive(Debug, Clone, Default)]
pub struct Ending {
    /// Bytes of the response body the page received.
    pub body_size: u64,
    /// Why it failed, if it did.
    pub failure: Option<String>,
}

/// How long before the engine says a load began its document's request may reach the proxy.
const DOCUMENT_AHEAD: std::time::Duration = std::time::Duration::from_secs(1);

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

/// Marks a record with the rule of the person's policy that refused it.
pub fn record_policy(entry: &Entry, rule: &str) {
    entry.lock().expect("record poisoned").policy_rule = Some(rule.to_string());
}

/// Marks a record with the rule that decided it.
pub fn record_rule(entry: &Entry, matched: &RuleMatch) {
    let mut record = entry.lock().expect("record poisoned");
    record.matched_rule_id = Some(matched.rule.id.clone());
    record.action = Some(matched.rule.action());
    record.matched_by = matched.matched_by.clone();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::SeqCounter;
    use crate::network::Capture;

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
    fn headers_are_redacted_and_cut_and_types_named() {
        let headers = recorded_headers([("Cookie", "a=1"), ("X-Long", &"v".repeat(5000))].into_iter());
        assert_eq!(headers[0], ("cookie".to_string(), "[redacted]".to_string()));
        assert_eq!(headers[1].1.len(), HEADER_VALUE_CHARS);
        assert_eq!(ResourceType::from_request(Some("empty"), Some("text/html"), false), ResourceType::Fetch);
        // Without Sec-Fetch-Dest (an http origin that is not loopback), by WebKit's Accept.
        let document = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
        assert_eq!(ResourceType::from_request(None, Some(document), false), ResourceType::Document);
        assert_eq!(ResourceType::from_request(None, Some("image/webp,image/avif,*/*;q=0.5"), false), ResourceType::Image);
        assert_eq!(ResourceType::from_request(None, Some("text/css,*/*;q=0.1"), false), ResourceType::Stylesheet);
        assert_eq!(ResourceType::from_request(None, Some("*/*"), false), ResourceType::Other);
        assert_eq!(ResourceType::from_request(None, None, true), ResourceType::WebSocket);
        assert_eq!(serde_json::to_value(ResourceType::Xhr).unwrap(), "XHR");
    }
}
