//! `requests` (seed 002): a tab's request log as the session's proxy recorded it, filtered
//! and paged like every log read; as JSON records (HTTP's default) or as one line per
//! request (`request_lines.rs`, MCP's and the CLI's default), in full for one `id` or
//! with `detail`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::limits::REQUESTS_LIMIT;
use super::numbers::Lenient;
use super::request_lines::{self, LINE_URL_CHARS};
use super::since::{Earlier, Since};
use super::{Presentation, Tool, ToolContext};
use crate::error::{Error, ErrorCode};
use crate::events::Paging;
use crate::network::{NameValue, RequestFilter, RequestRecord, ResourceType, ResponseBody, StatusFilter, TAB_REQUESTS};

/// Output format of `requests`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ListFormat {
    /// Records with every field.
    #[default]
    Json,
    /// One line per request: id, method, status, type, size, duration, URL.
    Text,
}

/// Input of `requests`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RequestsInput {
    /// One request in full, by its id (`req-12`); not with `after`, `limit` or filters.
    #[serde(default)]
    id: Option<String>,
    /// Only records after this seq, oldest first. Without it, the newest.
    #[serde(default, with = "Lenient")]
    after: Option<u64>,
    /// `navigation`: only the tab's current page's requests (since its last main-frame
    /// navigation, the document's included); `all`: the whole log (the default over HTTP).
    #[serde(default)]
    since: Since,
    /// URL contains.
    #[serde(default)]
    url_includes: Option<String>,
    /// HTTP method.
    #[serde(default)]
    method: Option<String>,
    /// A status (`404` or `"404"`) or a class (`"4xx"`).
    #[serde(default)]
    status: Option<StatusFilter>,
    /// Document, XHR, Fetch, Script, Stylesheet, Image, Font, Media, WebSocket or Other.
    #[serde(default)]
    resource_type: Option<ResourceType>,
    /// Only network failures and blocked requests (not HTTP error statuses).
    #[serde(default)]
    failed_only: bool,
    /// Whole records with headers and body. Cookies and authorization are redacted; as text
    /// also the start and MIME type (`headers` is its former name).
    #[serde(default, alias = "headers")]
    detail: bool,
    /// `json` (default): records; `text`: one line per request, its id to ask for the rest.
    #[serde(default)]
    format: ListFormat,
    /// At most this many (1-500, default 100).
    #[serde(default, with = "Lenient")]
    limit: Option<usize>,
}

impl RequestsInput {
    /// Whether the call also pages or filters (which a call by `id` may not).
    fn pages_or_filters(&self) -> bool {
        self.after.is_some()
            || self.since != Since::All
            || self.limit.is_some()
            || self.url_includes.is_some()
            || self.method.is_some()
            || self.status.is_some()
            || self.resource_type.is_some()
            || self.failed_only
    }
}

/// Output of `requests`, one shape per `format`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum RequestsOutput {
    /// JSON: the records.
    Records(RequestRecords),
    /// Text: a line per request.
    Text(RequestsText),
}

/// The requests as records.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct RequestRecords {
    /// The requests, oldest first.
    requests: Vec<RequestEntry>,
    /// Where to go on from.
    #[serde(flatten)]
    paging: Paging,
    /// With `since: "navigation"`: the earlier requests it left out, when there are.
    #[serde(flatten)]
    earlier: Option<Earlier>,
}

/// The requests as text.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct RequestsText {
    /// `text`.
    format: &'static str,
    /// How many requests the text lists.
    count: usize,
    /// Where to go on from (the text's first line says it too).
    #[serde(flatten)]
    paging: Paging,
    /// With `since: "navigation"`: the earlier requests it left out (the text's second
    /// line says it too).
    #[serde(flatten)]
    earlier: Option<Earlier>,
    /// A line with the count and paging, then a line per request, oldest first (with
    /// `detail` or `id`, its other fields indented under it).
    text: String,
}

/// A request of the tab's log, whole with `detail`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct RequestEntry {
    /// The record's own fields.
    #[serde(flatten)]
    record: RequestRecord,
    /// With `detail`: the request's headers (cookies and authorization redacted).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<NameValue>")]
    request_headers: Option<Vec<NameValue>>,
    /// With `detail`: the response's headers (set-cookie redacted).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<NameValue>")]
    response_headers: Option<Vec<NameValue>>,
    /// With `detail`: the response body as the capture holds it (as `responses` shows it).
    #[serde(flatten)]
    body: Option<ResponseBody>,
}

impl RequestEntry {
    fn of(record: RequestRecord, detail: bool) -> RequestEntry {
        let request_headers = detail.then(|| NameValue::list(&record.request_headers));
        let response_headers = detail.then(|| NameValue::list(&record.response_headers));
        let body = detail.then(|| ResponseBody::of(&record));
        RequestEntry { record, request_headers, response_headers, body }
    }
}

pub(super) fn tool() -> Tool {
    Tool::tab(
        "requests",
        "The tab's request log, one line per request. 500 kept: method, url, resource_type, status, mime_type, sizes, timing, failure (DNS, refused, TLS, blocked), the interception rule that decided it. Without `after`, the newest `limit` (oldest first) and older_omitted; with `after`, those after that seq cursor, paging forward (has_more). since=navigation: only the current page's (over MCP and the CLI the default without after). Filters: url_includes, method, status (404, \"404\" or \"4xx\"), resource_type, failed_only. format=text gives one line per request (id, method, status, type, size, duration, URL: as a path on the page's origin, cut in the middle past 200 characters) under a line with the paging; `id` gives one request whole, `detail` every listed one (headers, body). JSON answers {requests, cursor, has_more}.",
        |context: ToolContext, input: RequestsInput| async move {
            let tab = context.tab()?;
            let detail = input.detail || input.id.is_some();
            let (records, paging, earlier) = match &input.id {
                Some(id) => {
                    if input.pages_or_filters() {
                        return Err(Error::bad_request("id names one request: leave out after, limit and the filters"));
                    }
                    let record = tab.traffic.request(id).ok_or_else(|| {
                        Error::new(ErrorCode::NotFound, format!("no request {id} in tab {}'s log (it keeps the last {TAB_REQUESTS})", tab.id))
                    })?;
                    let paging = Paging { cursor: record.seq, has_more: false, older_omitted: None };
                    (vec![record], paging, None)
                }
                None => {
                    let limit = REQUESTS_LIMIT.count(input.limit, "limit")?;
                    let filter = RequestFilter {
                        url_includes: input.url_includes,
                        method: input.method,
                        status: input.status,
                        resource_type: input.resource_type,
                        failed_only: input.failed_only,
                    };
                    let page = input.since.requests_floor(tab);
                    let (chosen, earlier) = tab.traffic.requests(input.after, page, &filter, limit);
                    let paging = chosen.paging(|record| record.seq, input.after, context.session.events.seq_now());
                    (chosen.items, paging, Earlier::of(earlier, "request", "requests"))
                }
            };
            Ok(match input.format {
                ListFormat::Json => {
                    let requests = records.into_iter().map(|record| RequestEntry::of(record, detail)).collect();
                    RequestsOutput::Records(RequestRecords { requests, paging, earlier })
                }
                ListFormat::Text => {
                    let (page_url, _) = tab.status.get();
                    let note = earlier.as_ref().map(|earlier| earlier.note.as_str());
                    let text = request_lines::render(&records, &paging, note, detail, &page_url);
                    RequestsOutput::Text(RequestsText { format: "text", count: records.len(), paging, earlier, text })
                }
            })
        },
    )
    .presented(Presentation {
        mcp_defaults: &[("format", "text")],
        cli_defaults: &[("format", "text")],
        text_field: Some("text"),
        current_page: true,
        ..Presentation::default()
    })
}

// The description says 200 characters: change the two together.
const _: () = assert!(LINE_URL_CHARS == 200);

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    fn required(schema: &Value) -> Vec<&str> {
        schema["required"].as_array().unwrap().iter().map(|name| name.as_str().unwrap()).collect()
    }

    #[test]
    fn the_output_schema_says_what_is_always_there_and_what_may_be_null() {
        let requests = super::super::output_schema_of::<RequestsOutput>();
        let entry = &requests["$defs"]["RequestEntry"];
        for always in ["seq", "tab", "status", "mime_type", "duration_ms", "started_at"] {
            assert!(required(entry).contains(&always), "{always}");
        }
        for sometimes in ["failure", "matched_rule_id", "action", "matched_by", "request_headers", "response_headers", "body", "body_error"]
        {
            assert!(!required(entry).contains(&sometimes), "{sometimes}");
        }
        assert_eq!(entry["properties"]["status"]["type"], json!(["integer", "null"]), "present, and null before a status");
        assert_eq!(entry["properties"]["failure"]["type"], "string", "absent, never null");
        let shapes = requests["anyOf"].as_array().unwrap();
        let [records, text] = [&requests["$defs"]["RequestRecords"], &requests["$defs"]["RequestsText"]];
        assert_eq!(shapes.len(), 2);
        assert_eq!(records["properties"]["older_omitted"]["type"], "integer");
        for always in ["format", "count", "cursor", "has_more", "text"] {
            assert!(required(text).contains(&always), "{always}");
        }
    }

    #[test]
    fn headers_is_the_former_name_of_detail() {
        let input: RequestsInput = serde_json::from_value(json!({ "headers": true })).unwrap();
        assert!(input.detail && input.format == ListFormat::Json);
        let input: RequestsInput = serde_json::from_value(json!({ "id": "req-3", "format": "text" })).unwrap();
        assert!(!input.pages_or_filters() && input.format == ListFormat::Text);
        let input: RequestsInput = serde_json::from_value(json!({ "id": "req-3", "failed_only": true })).unwrap();
        assert!(input.pages_or_filters());
    }
}
