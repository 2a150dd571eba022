//! `requests` (seed 002): a tab's request log as the session's proxy recorded it, filtered
//! and paged like every log read.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::limits::REQUESTS_LIMIT;
use super::numbers::Lenient;
use super::{Tool, ToolContext};
use crate::events::Paging;
use crate::network::{NameValue, RequestFilter, RequestRecord, ResourceType, StatusFilter};

/// Input of `requests`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RequestsInput {
    /// Only records with seq greater than this, oldest first; without it, the newest.
    #[serde(default, with = "Lenient")]
    after: Option<u64>,
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
    /// Include request and response headers (cookies and authorization redacted).
    #[serde(default)]
    headers: bool,
    /// At most this many (1-500, default 100).
    #[serde(default, with = "Lenient")]
    limit: Option<usize>,
}

/// Output of `requests`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct RequestsOutput {
    /// The requests, oldest first.
    requests: Vec<RequestEntry>,
    /// Where to go on from.
    #[serde(flatten)]
    paging: Paging,
}

/// A request of the tab's log, with its headers when asked for.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct RequestEntry {
    /// The record's own fields.
    #[serde(flatten)]
    record: RequestRecord,
    /// With `headers: true`: the request's headers (cookies and authorization redacted).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<NameValue>")]
    request_headers: Option<Vec<NameValue>>,
    /// With `headers: true`: the response's headers (set-cookie redacted).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<NameValue>")]
    response_headers: Option<Vec<NameValue>>,
}

impl RequestEntry {
    fn of(record: RequestRecord, headers: bool) -> RequestEntry {
        let request_headers = headers.then(|| NameValue::list(&record.request_headers));
        let response_headers = headers.then(|| NameValue::list(&record.response_headers));
        RequestEntry { record, request_headers, response_headers }
    }
}

pub(super) fn tool() -> Tool {
    Tool::tab(
        "requests",
        "The tab's request log (500 kept): method, url, resource_type, status, mime_type, sizes, timing, failure (DNS, refused, TLS, blocked), the interception rule that decided it. Without `after`, the newest `limit` (oldest first) and older_omitted; with `after`, those after that seq cursor, paging forward (has_more). Filters: url_includes, method, status (404, \"404\" or \"4xx\"), resource_type, failed_only. Answers {requests, cursor, has_more}.",
        |context: ToolContext, input: RequestsInput| async move {
            let limit = REQUESTS_LIMIT.count(input.limit, "limit")?;
            let filter = RequestFilter {
                url_includes: input.url_includes,
                method: input.method,
                status: input.status,
                resource_type: input.resource_type,
                failed_only: input.failed_only,
            };
            let chosen = context.tab()?.traffic.requests(input.after, &filter, limit);
            let paging = chosen.paging(|record| record.seq, input.after, context.session.events.seq_now());
            let requests = chosen.items.into_iter().map(|record| RequestEntry::of(record, input.headers)).collect();
            Ok(RequestsOutput { requests, paging })
        },
    )
}

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
        for sometimes in ["failure", "matched_rule_id", "action", "matched_by", "request_headers", "response_headers"] {
            assert!(!required(entry).contains(&sometimes), "{sometimes}");
        }
        assert_eq!(entry["properties"]["status"]["type"], json!(["integer", "null"]), "present, and null before a status");
        assert_eq!(entry["properties"]["failure"]["type"], "string", "absent, never null");
        assert_eq!(requests["properties"]["older_omitted"]["type"], "integer");
    }
}
