//! A tab's request log as a HAR 1.2 document (what `export_har` writes), with the response
//! bodies the capture holds. HAR has no place for what malo adds (the resource type, the
//! seq, a failure): those are `_`-prefixed custom fields, as the format allows.

use serde::Serialize;

use super::records::{BodyState, NameValue, RequestRecord, TabTraffic};

/// The HTTP version every entry names: the proxy speaks HTTP/1.1 both ways.
const HTTP_VERSION: &str = "HTTP/1.1";

/// A HAR 1.2 document.
#[derive(Debug, Serialize)]
pub struct Har {
    /// The one log.
    log: HarLog,
}

impl Har {
    /// The document of every record `traffic` still keeps, oldest first.
    pub fn of(traffic: &TabTraffic) -> Har {
        let entries: Vec<HarEntry> = traffic.all().iter().map(|entry| HarEntry::of(&entry.lock().expect("record poisoned"))).collect();
        let creator = HarCreator { name: "malo-browser", version: env!("CARGO_PKG_VERSION") };
        Har { log: HarLog { version: "1.2", creator, entries } }
    }

    /// How many entries it holds.
    pub fn entry_count(&self) -> usize {
        self.log.entries.len()
    }
}

#[derive(Debug, Serialize)]
struct HarLog {
    version: &'static str,
    creator: HarCreator,
    entries: Vec<HarEntry>,
}

#[derive(Debug, Serialize)]
struct HarCreator {
    name: &'static str,
    version: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct HarEntry {
    started_date_time: String,
    /// Milliseconds (0 while the request runs).
    time: u64,
    request: HarRequest,
    response: HarResponse,
    /// Nothing is known of caches: the proxy sees what left WebKit.
    cache: HarCache,
    timings: HarTimings,
    #[serde(rename = "_resourceType")]
    resource_type: super::ResourceType,
    #[serde(rename = "_seq")]
    seq: u64,
    #[serde(rename = "_failure", skip_serializing_if = "Option::is_none")]
    failure: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct HarRequest {
    method: String,
    url: String,
    http_version: &'static str,
    /// Cookies are secrets here: never listed.
    cookies: Vec<NameValue>,
    headers: Vec<NameValue>,
    query_string: Vec<NameValue>,
    /// -1: unknown.
    headers_size: i64,
    body_size: u64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct HarResponse {
    /// 0 when it failed before a status.
    status: u16,
    status_text: &'static str,
    http_version: &'static str,
    cookies: Vec<NameValue>,
    headers: Vec<NameValue>,
    content: HarContent,
    #[serde(rename = "redirectURL")]
    redirect_url: &'static str,
    headers_size: i64,
    body_size: u64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct HarContent {
    size: u64,
    mime_type: String,
    /// The body, when the capture kept it.
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
}

#[derive(Debug, Serialize)]
struct HarCache {}

#[derive(Debug, Serialize)]
struct HarTimings {
    send: u64,
    wait: u64,
    receive: u64,
}

impl HarEntry {
    fn of(record: &RequestRecord) -> HarEntry {
        let duration = record.duration_ms.unwrap_or(0);
        let query_string = url::Url::parse(&record.url)
            .map(|url| url.query_pairs().map(|(name, value)| NameValue { name: name.into_owned(), value: value.into_owned() }).collect())
            .unwrap_or_default();
        let text = match &record.body {
            BodyState::Kept { text, .. } => Some(text.to_string()),
            _ => None,
        };
        HarEntry {
            started_date_time: record.started_at.clone(),
            time: duration,
            request: HarRequest {
                method: record.method.clone(),
                url: record.url.clone(),
                http_version: HTTP_VERSION,
                cookies: Vec::new(),
                headers: NameValue::list(&record.request_headers),
                query_string,
                headers_size: -1,
                body_size: record.request_body_size,
            },
            response: HarResponse {
                status: record.status.unwrap_or(0),
                status_text: "",
                http_version: HTTP_VERSION,
                cookies: Vec::new(),
                headers: NameValue::list(&record.response_headers),
                content: HarContent { size: record.response_body_size, mime_type: record.mime_type.clone().unwrap_or_default(), text },
                redirect_url: "",
                headers_size: -1,
                body_size: record.response_body_size,
            },
            cache: HarCache {},
            timings: HarTimings { send: 0, wait: duration, receive: 0 },
            resource_type: record.resource_type,
            seq: record.seq,
            failure: record.failure.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::events::{EventLog, SeqCounter};
    use crate::network::{record_end, record_response, Capture, Ending, NewRequest, ResourceType};

    #[test]
    fn entries_carry_headers_query_and_kept_bodies() {
        let seq = SeqCounter::default();
        let capture = Capture::default();
        capture.subscribe(vec!["http://a/api".into()]);
        let traffic = TabTraffic::new("t1", Arc::new(EventLog::new(Arc::new(SeqCounter::default()))));
        let request = |url: &str, headers: Vec<(String, String)>| NewRequest {
            method: "GET".into(),
            url: url.into(),
            resource_type: ResourceType::Fetch,
            headers,
            body_size: 0,
        };
        let entry = capture.begin(Some(&traffic), &seq, request("http://a/api?q=1&r=two", vec![("accept".into(), "*/*".into())]));
        record_response(&entry, 200, Some("application/json".into()), Vec::new());
        capture.keep_body(&entry, b"{}", false);
        record_end(&entry, Ending { body_size: 2, failure: None });
        let failed = capture.begin(Some(&traffic), &seq, request("http://b/", Vec::new()));
        record_end(&failed, Ending { body_size: 0, failure: Some("connection_refused".into()) });

        let har = Har::of(&traffic);
        assert_eq!(har.entry_count(), 2);
        let document = serde_json::to_value(&har).unwrap();
        let first = &document["log"]["entries"][0];
        assert_eq!(document["log"]["version"], "1.2");
        assert_eq!(first["request"]["queryString"][1], serde_json::json!({ "name": "r", "value": "two" }));
        assert_eq!(first["request"]["headers"][0]["name"], "accept");
        assert_eq!(first["response"]["content"]["text"], "{}");
        assert_eq!(first["_resourceType"], "Fetch");
        assert!(first.get("_failure").is_none());
        let second = &document["log"]["entries"][1];
        assert_eq!((second["response"]["status"].as_u64(), second["_failure"].as_str()), (Some(0), Some("connection_refused")));
        assert!(second["response"]["content"].get("text").is_none());
    }
}
