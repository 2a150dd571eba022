//! What the page says on the wire: `network_capture` and `responses` (seed 003, response
//! bodies by URL prefix), interception rules (seed 000: `add_intercept_rule`,
//! `remove_intercept_rule`, `list_intercept_rules`) and `export_har`; the request log
//! (`requests`, seed 002) is `requests.rs`. All of it comes from the session's proxy (see
//! `proxy/`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::limits::{CAPTURE_PREFIXES, CAPTURE_PREFIX_CHARS, RESPONSES_LIMIT};
use super::numbers::Lenient;
use super::since::{Earlier, Since};
use super::{Presentation, Tool, ToolContext};
use crate::error::{Error, ErrorCode, Result};
use crate::events::Paging;
use crate::network::har::Har;
use crate::network::rules::{InterceptRule, RuleSpec, RuleSummary};
use crate::network::ResponseRecord;

/// Input of `network_capture`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NetworkCaptureInput {
    /// URL prefixes whose response bodies are kept (replaces the current list). `[]` clears
    /// it and drops the kept bodies (their records stay); omitted: only report.
    #[serde(default)]
    url_prefixes: Option<Vec<String>>,
}

/// Input of `responses`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResponsesInput {
    /// Only responses whose URL starts with this.
    #[serde(default)]
    url_prefix: Option<String>,
    /// Only records after this seq, oldest first. Without it, the newest.
    #[serde(default, with = "Lenient")]
    after: Option<u64>,
    /// `navigation`: only those since the selected tab's last main-frame navigation (its
    /// document's included); `all`: every one kept (the default over HTTP).
    #[serde(default)]
    since: Since,
    /// At most this many (1-200, default 50).
    #[serde(default, with = "Lenient")]
    limit: Option<usize>,
}

/// Input of `remove_intercept_rule`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RemoveRuleInput {
    /// The rule, from add_intercept_rule or list_intercept_rules.
    #[serde(alias = "ruleId")]
    rule_id: String,
}

/// Input of `list_intercept_rules` and `export_har`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoInput {}

/// Output of `network_capture`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct NetworkCaptureOutput {
    /// The URL prefixes whose response bodies are kept.
    url_prefixes: Vec<String>,
    /// How many bodies the capture holds now.
    captured: usize,
}

/// Output of `responses`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ResponsesOutput {
    /// The responses, oldest first.
    responses: Vec<ResponseRecord>,
    /// Where to go on from.
    #[serde(flatten)]
    paging: Paging,
    /// With `since: "navigation"`: the earlier responses it left out, when there are.
    #[serde(flatten)]
    earlier: Option<Earlier>,
}

/// Output of `add_intercept_rule`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct AddRuleOutput {
    /// The rule as list_intercept_rules shows it.
    rule: RuleSummary,
    /// Its id, for remove_intercept_rule.
    rule_id: String,
}

/// Output of `remove_intercept_rule`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct RemoveRuleOutput {
    /// Always true: a rule that was not there is E_NOT_FOUND.
    removed: bool,
    /// The rule removed.
    rule_id: String,
}

/// Output of `list_intercept_rules`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ListRulesOutput {
    /// The tab's rules, in the order they are tried.
    rules: Vec<RuleSummary>,
}

/// Output of `export_har`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ExportHarOutput {
    /// The HAR file, in the session's artifacts/.
    path: String,
    /// How many requests it holds.
    entries: usize,
}

pub(super) fn tools() -> Vec<Tool> {
    vec![
        Tool::session(
            "network_capture",
            "Subscribe to response bodies by URL prefix (replaces the list; [] clears it and drops kept bodies; omitted only reports). Subscribe, then navigate and act, then poll responses. Private to the session.",
            |context: ToolContext, input: NetworkCaptureInput| async move {
                let capture = capture_of(&context)?;
                if let Some(prefixes) = input.url_prefixes {
                    if prefixes.len() > CAPTURE_PREFIXES || prefixes.iter().any(|prefix| prefix.is_empty() || prefix.len() > CAPTURE_PREFIX_CHARS) {
                        return Err(Error::bad_request(format!(
                            "url_prefixes holds at most {CAPTURE_PREFIXES} non-empty prefixes of at most {CAPTURE_PREFIX_CHARS} characters"
                        )));
                    }
                    capture.subscribe(prefixes);
                }
                let (url_prefixes, captured) = capture.subscription();
                Ok(NetworkCaptureOutput { url_prefixes, captured })
            },
        ),
        Tool::session(
            "responses",
            "The session's responses: {seq, url, status, mime_type, resource_type, body, body_truncated, body_error}. Without `after`, the newest `limit` (oldest first) and older_omitted; with `after`, those after that seq cursor, paging forward (has_more). since=navigation: only those since the selected tab's navigation (over MCP and the CLI the default without after). Bodies only for subscribed prefixes (1 MiB each, 200 and 16 MiB kept); body_error says why a body is absent (not_subscribed, no_body, evicted, pending, binary, body_failed: ...). Answers {responses, cursor, has_more}.",
            |context: ToolContext, input: ResponsesInput| async move {
                let limit = RESPONSES_LIMIT.count(input.limit, "limit")?;
                let capture = capture_of(&context)?;
                // The selected tab's page (a session with no tab has no page: every one).
                let page = context.session.tabs.get(None).ok().and_then(|tab| input.since.requests_floor(&tab));
                let (chosen, earlier) = capture.responses(input.url_prefix.as_deref(), input.after, page, limit);
                let paging = chosen.paging(|record| record.seq, input.after, context.session.events.seq_now());
                let earlier = page.and_then(|_| Earlier::of(earlier, "response", "responses"));
                Ok(ResponsesOutput { responses: chosen.items, paging, earlier })
            },
        )
        .presented(Presentation { current_page: true, ..Presentation::default() }),
        super::requests::tool(),
        Tool::tab(
            "add_intercept_rule",
            "Add an interception rule to the tab: conditions (url_includes, url_pattern wildcard or url_regex, method, resource_type, header_matchers), priority (higher first, then oldest first; the first full match wins), and an action: continue, fail (a network error in the page) or fulfill (status_code, content_type, response_headers, body; the server never sees the request). Applies to every request of the tab: documents, sub-resources, fetch/XHR, every frame. Kept in memory until removed or the tab closes.",
            |context: ToolContext, input: RuleSpec| async move {
                let tab = context.tab()?;
                let order = context.session.events.next_seq();
                let rule = tab.traffic.add_rule(InterceptRule::new(input, &tab.id, order)?);
                Ok(AddRuleOutput { rule: rule.summary(), rule_id: rule.id })
            },
        ),
        Tool::session(
            "remove_intercept_rule",
            "Remove an interception rule (of any tab of the session) by its id.",
            |context: ToolContext, input: RemoveRuleInput| async move {
                let removed = context.session.tabs.list().iter().any(|tab| tab.traffic.remove_rule(&input.rule_id));
                if !removed {
                    return Err(Error::new(ErrorCode::NotFound, format!("no interception rule {} in this session", input.rule_id)));
                }
                Ok(RemoveRuleOutput { removed: true, rule_id: input.rule_id })
            },
        ),
        Tool::tab(
            "list_intercept_rules",
            "The tab's interception rules, in the order they are tried. Long patterns are summarised, header matchers counted.",
            |context: ToolContext, _input: NoInput| async move {
                let rules = context.tab()?.traffic.rules().iter().map(InterceptRule::summary).collect();
                Ok(ListRulesOutput { rules })
            },
        ),
        Tool::tab(
            "export_har",
            "Write the tab's request log (with the response bodies the capture holds) as a HAR 1.2 file in the session's artifacts/; answers its path.",
            |context: ToolContext, _input: NoInput| async move { export_har(&context).await },
        ),
    ]
}

fn capture_of(context: &ToolContext) -> Result<&std::sync::Arc<crate::network::Capture>> {
    if context.session.proxy.lock().expect("proxy poisoned").is_none() {
        return Err(Error::new(ErrorCode::CaptureUnavailable, "this session runs without the proxy that captures its traffic"));
    }
    Ok(&context.session.capture)
}

/// Writes the tab's log as a HAR 1.2 file in the session's artifacts.
async fn export_har(context: &ToolContext) -> Result<ExportHarOutput> {
    let tab = context.tab()?;
    let har = Har::of(&tab.traffic);
    let millis = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_millis();
    let path = context.session.dirs.artifacts.join(format!("har-{}-{millis}.har", tab.id));
    let bytes = serde_json::to_vec_pretty(&har).map_err(|error| Error::internal(error.to_string()))?;
    tokio::fs::write(&path, bytes).await.map_err(|error| Error::internal(format!("cannot write the HAR file: {error}")))?;
    Ok(ExportHarOutput { path: path.display().to_string(), entries: har.entry_count() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_of_a_response_is_always_there() {
        let responses = super::super::output_schema_of::<ResponsesOutput>();
        let required = responses["$defs"]["ResponseRecord"]["required"].as_array().unwrap().len();
        assert_eq!(required, 9, "every field of a response is always there");
    }
}
