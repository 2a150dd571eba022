//! Interception rules (seed 000): what a request must look like to match (method, URL
//! substring, a wildcard pattern or a regex over the whole URL, resource type, header
//! matchers) and what happens then (continue, fail, fulfill). Rules are bound to the tab
//! they were made for, kept in memory only, and tried by priority (high first), then
//! creation order; the first full match wins.

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::ResourceType;
use crate::error::{Error, Result};

/// Longest regex or pattern a rule accepts.
const MAX_PATTERN_CHARS: usize = 2000;
/// How much of a long pattern `list_intercept_rules` shows.
const SUMMARY_CHARS: usize = 60;
/// Largest body a fulfill rule may answer with.
pub const MAX_FULFILL_BODY_BYTES: usize = 512 * 1024;

/// What a matching rule does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RuleAction {
    /// Let the request through (and stop looking at lower rules).
    Continue,
    /// Fail it with a network error, as an unreachable server would.
    Fail,
    /// Answer it locally, without contacting the server.
    Fulfill,
}

/// A header condition: the header (any case) must be present with a value that
/// contains `value_includes` or matches `value_regex`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HeaderMatcher {
    /// Header name (case-insensitive).
    pub name: String,
    /// The value contains this.
    #[serde(default, alias = "valueIncludes", skip_serializing_if = "Option::is_none")]
    pub value_includes: Option<String>,
    /// The value matches this regex.
    #[serde(default, alias = "valueRegex", skip_serializing_if = "Option::is_none")]
    pub value_regex: Option<String>,
}

/// A rule as `add_intercept_rule` takes it.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// The URL contains this.
    #[serde(default, alias = "urlIncludes")]
    pub url_includes: Option<String>,
    /// A wildcard over the whole URL: `*` any run of characters, `?` one character.
    #[serde(default, alias = "urlPattern")]
    pub url_pattern: Option<String>,
    /// A regex over the URL (not with url_pattern).
    #[serde(default, alias = "urlRegex")]
    pub url_regex: Option<String>,
    /// The HTTP method (any case), e.g. `POST`.
    #[serde(default)]
    pub method: Option<String>,
    /// The resource type: Document, XHR, Fetch, Script, Stylesheet, Image, Font, Media,
    /// WebSocket or Other. XHR and Fetch both match either: a request cannot be told to
    /// be one or the other until it is done.
    #[serde(default, alias = "resourceType")]
    pub resource_type: Option<ResourceType>,
    /// Headers the request must carry; all must match.
    #[serde(default, alias = "headerMatchers")]
    pub header_matchers: Option<Vec<HeaderMatcher>>,
    /// Higher first (default 0); among equals, the oldest first.
    #[serde(default)]
    pub priority: Option<i64>,
    /// `continue`, `fail` or `fulfill`.
    pub action: RuleAction,
    /// Fulfill: the status (default 200).
    #[serde(default, alias = "statusCode")]
    pub status_code: Option<u16>,
    /// Fulfill: the Content-Type (default text/plain; charset=utf-8).
    #[serde(default, alias = "contentType")]
    pub content_type: Option<String>,
    /// Fulfill: more response headers, name to value.
    #[serde(default, alias = "responseHeaders")]
    pub response_headers: Option<serde_json::Map<String, Value>>,
    /// Fulfill: the body (text).
    #[serde(default)]
    pub body: Option<String>,
}

/// A rule, validated and compiled.
#[derive(Debug, Clone)]
pub struct InterceptRule {
    /// `rule-<hex>`.
    pub id: String,
    /// The tab it is bound to.
    pub tab: String,
    spec: RuleSpec,
    priority: i64,
    /// Creation order, for ties.
    pub order: u64,
    pattern: Option<Regex>,
    headers: Vec<(String, Option<String>, Option<Regex>)>,
}

/// A rule as `add_intercept_rule` and `list_intercept_rules` show it: long patterns cut
/// short, header matchers counted and summed up.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RuleSummary {
    /// `rule-<hex>`, for remove_intercept_rule.
    pub rule_id: String,
    /// The tab it is bound to.
    pub tab: String,
    /// Higher first; among equals, the oldest first.
    pub priority: i64,
    /// What it does.
    pub action: RuleAction,
    /// The method it matches (as written), if any.
    pub method: Option<String>,
    /// The URL substring it matches (cut at 60 characters).
    pub url_includes: Option<String>,
    /// The wildcard pattern it matches (cut at 60 characters).
    pub url_pattern: Option<String>,
    /// The regex it matches (cut at 60 characters).
    pub url_regex: Option<String>,
    /// The resource type it matches.
    pub resource_type: Option<ResourceType>,
    /// How many header matchers it has.
    pub header_matchers: usize,
    /// Each header matcher in short: `name contains value` or `name ~ /regex/`.
    pub headers: Vec<String>,
    /// A fulfill rule's status; null for the other actions.
    pub status_code: Option<u16>,
}

/// What a request offers to the rules.
#[derive(Debug, Clone, Copy)]
pub struct RequestFacts<'a> {
    /// Method.
    pub method: &'a str,
    /// Full URL.
    pub url: &'a str,
    /// Its type.
    pub resource_type: ResourceType,
    /// Its headers.
    pub headers: &'a [(String, String)],
}

/// The rule a request matched, and what it matched on.
#[derive(Debug, Clone)]
pub struct RuleMatch {
    /// The rule.
    pub rule: InterceptRule,
    /// Which conditions it had (`method`, `url_includes`, `url_pattern`, `url_regex`,
    /// `resource_type`, `headers`).
    pub matched_by: Vec<&'static str>,
}

impl InterceptRule {
    /// Validates a spec (every rule of seed 000) and compiles it.
    pub fn new(spec: RuleSpec, tab: &str, order: u64) -> Result<InterceptRule> {
        let has_condition = spec.url_includes.is_some()
            || spec.url_pattern.is_some()
            || spec.url_regex.is_some()
            || spec.method.is_some()
            || spec.resource_type.is_some()
            || spec.header_matchers.as_ref().is_some_and(|matchers| !matchers.is_empty());
        if !has_condition {
            return Err(refuse(
                "a rule needs at least one condition: url_includes, url_pattern, url_regex, method, resource_type or header_matchers",
                "no_condition",
            ));
        }
        if spec.url_pattern.is_some() && spec.url_regex.is_some() {
            return Err(refuse("url_pattern and url_regex cannot both be given", "pattern_and_regex"));
        }
        if spec.url_includes.as_deref() == Some("") {
            return Err(refuse("url_includes is empty", "empty_condition"));
        }
        if spec.method.as_deref().is_some_and(|method| method.is_empty() || !method.chars().all(|c| c.is_ascii_alphabetic())) {
            return Err(refuse("method must be an HTTP method name such as GET or POST", "bad_method"));
        }
        let pattern = match (&spec.url_pattern, &spec.url_regex) {
            (Some(pattern), None) => Some(compile_wildcard(pattern)?),
            (None, Some(regex)) => Some(compile_regex(regex, "url_regex")?),
            _ => None,
        };
        let mut headers = Vec::new();
        for matcher in spec.header_matchers.iter().flatten() {
            if matcher.name.trim().is_empty() {
                return Err(refuse("a header matcher needs a name", "matcher_without_name"));
            }
            if matcher.value_includes.is_none() && matcher.value_regex.is_none() {
                return Err(refuse(
                    format!("the header matcher for {:?} needs value_includes or value_regex", matcher.name),
                    "matcher_without_value",
                ));
            }
            let regex = matcher.value_regex.as_deref().map(|regex| compile_regex(regex, "value_regex")).transpose()?;
            headers.push((matcher.name.to_ascii_lowercase(), matcher.value_includes.clone(), regex));
        }
        match spec.action {
            RuleAction::Fulfill => {
                if spec.body.as_ref().is_some_and(|body| body.len() > MAX_FULFILL_BODY_BYTES) {
                    return Err(refuse(format!("body is limited to {MAX_FULFILL_BODY_BYTES} bytes"), "body_too_large"));
                }
                if let Some(status) = spec.status_code {
                    if !(200..=599).contains(&status) || (300..400).contains(&status) && !has_location(&spec) {
                        return Err(refuse("status_code must be 200-599 (a 3xx needs a Location response header)", "bad_status"));
                    }
                }
                for (name, value) in spec.response_headers.iter().flatten() {
                    let valid_name = hyper::header::HeaderName::from_bytes(name.as_bytes()).is_ok();
                    let valid_value = value.as_str().is_some_and(|value| hyper::header::HeaderValue::from_str(value).is_ok());
                    if !valid_name || !valid_value {
                        return Err(refuse(format!("response header {name:?} must be a header name with a text value"), "bad_header"));
                    }
                }
            }
            RuleAction::Continue | RuleAction::Fail => {
                if spec.status_code.is_some() || spec.content_type.is_some() || spec.response_headers.is_some() || spec.body.is_some() {
                    return Err(refuse("status_code, content_type, response_headers and body go with action fulfill", "fulfill_fields"));
                }
            }
        }
        Ok(InterceptRule {
            id: format!("rule-{}", crate::secret::random_hex(4)),
            tab: tab.to_string(),
            priority: spec.priority.unwrap_or(0),
            spec,
            order,
            pattern,
            headers,
        })
    }

    /// What the rule does.
    pub fn action(&self) -> RuleAction {
        self.spec.action
    }

    /// The local answer of a fulfill rule: status, headers, body.
    pub fn fulfillment(&self) -> (u16, Vec<(String, String)>, Vec<u8>) {
        let mut headers =
            vec![("content-type".to_string(), self.spec.content_type.clone().unwrap_or_else(|| "text/plain; charset=utf-8".into()))];
        for (name, value) in self.spec.response_headers.iter().flatten() {
            headers.push((name.to_ascii_lowercase(), value.as_str().unwrap_or_default().to_string()));
        }
        headers.push(("cache-control".into(), "no-store".into()));
        (self.spec.status_code.unwrap_or(200), headers, self.spec.body.clone().unwrap_or_default().into_bytes())
    }

    /// Whether every condition holds for `request`; answers what matched.
    pub fn matches(&self, request: &RequestFacts<'_>) -> Option<Vec<&'static str>> {
        let mut matched_by = Vec::new();
        if let Some(method) = &self.spec.method {
            if !method.eq_ignore_ascii_case(request.method) {
                return None;
            }
            matched_by.push("method");
        }
        if let Some(part) = &self.spec.url_includes {
            if !request.url.contains(part.as_str()) {
                return None;
            }
            matched_by.push("url_includes");
        }
        if let Some(pattern) = &self.pattern {
            if !pattern.is_match(request.url) {
                return None;
            }
            matched_by.push(if self.spec.url_regex.is_some() { "url_regex" } else { "url_pattern" });
        }
        if let Some(kind) = self.spec.resource_type {
            if !kind.could_be(request.resource_type) {
                return None;
            }
            matched_by.push("resource_type");
        }
        if !self.headers.is_empty() {
            for (name, includes, regex) in &self.headers {
                let ok = request.headers.iter().any(|(header, value)| {
                    header.eq_ignore_ascii_case(name)
                        && includes.as_deref().is_none_or(|part| value.contains(part))
                        && regex.as_ref().is_none_or(|regex| regex.is_match(value))
                });
                if !ok {
                    return None;
                }
            }
            matched_by.push("headers");
        }
        Some(matched_by)
    }

    /// How `list_intercept_rules` shows it: short summaries of long patterns, the count of
    /// header matchers.
    pub fn summary(&self) -> RuleSummary {
        let short = |text: &str| {
            if text.chars().count() > SUMMARY_CHARS {
                format!("{}…", text.chars().take(SUMMARY_CHARS).collect::<String>())
            } else {
                text.to_string()
            }
        };
        let spec = &self.spec;
        let matchers = spec.header_matchers.as_deref().unwrap_or_default();
        let header_summary: Vec<String> = matchers
            .iter()
            .map(|matcher| match (&matcher.value_includes, &matcher.value_regex) {
                (Some(part), _) => format!("{} contains {}", matcher.name, short(part)),
                (None, Some(regex)) => format!("{} ~ /{}/", matcher.name, short(regex)),
                _ => matcher.name.clone(),
            })
            .collect();
        RuleSummary {
            rule_id: self.id.clone(),
            tab: self.tab.clone(),
            priority: self.priority,
            action: spec.action,
            method: spec.method.clone(),
            url_includes: spec.url_includes.as_deref().map(short),
            url_pattern: spec.url_pattern.as_deref().map(short),
            url_regex: spec.url_regex.as_deref().map(short),
            resource_type: spec.resource_type,
            header_matchers: matchers.len(),
            headers: header_summary,
            status_code: (spec.action == RuleAction::Fulfill).then(|| spec.status_code.unwrap_or(200)),
        }
    }

    /// Sort key: priority high first, then creation order.
    pub fn rank(&self) -> (std::cmp::Reverse<i64>, u64) {
        (std::cmp::Reverse(self.priority), self.order)
    }
}

/// The first rule of `rules` (any order) that matches `request`, by rank.
pub fn first_match(rules: &[InterceptRule], request: &RequestFacts<'_>) -> Option<RuleMatch> {
    let mut ranked: Vec<&InterceptRule> = rules.iter().collect();
    ranked.sort_by_key(|rule| rule.rank());
    ranked.into_iter().find_map(|rule| rule.matches(request).map(|matched_by| RuleMatch { rule: rule.clone(), matched_by }))
}

fn has_location(spec: &RuleSpec) -> bool {
    spec.response_headers.iter().flatten().any(|(name, _)| name.eq_ignore_ascii_case("location"))
}

fn refuse(message: impl Into<String>, reason: &str) -> Error {
    Error::bad_request(message).with_details(json!({ "reason": reason }))
}

fn compile_regex(source: &str, field: &str) -> Result<Regex> {
    if source.is_empty() {
        return Err(refuse(format!("{field} is empty"), "empty_regex"));
    }
    if source.chars().count() > MAX_PATTERN_CHARS {
        return Err(refuse(format!("{field} is longer than {MAX_PATTERN_CHARS} characters"), "regex_too_long"));
    }
    regex::RegexBuilder::new(source)
        .size_limit(1 << 20)
        .build()
        .map_err(|error| refuse(format!("{field} is not a valid regex: {error}"), "invalid_regex"))
}

/// `*` any run of characters, `?` one, anything else literal; over the whole URL.
fn compile_wildcard(pattern: &str) -> Result<Regex> {
    if pattern.is_empty() {
        return Err(refuse("url_pattern is empty", "empty_pattern"));
    }
    if pattern.chars().count() > MAX_PATTERN_CHARS {
        return Err(refuse(format!("url_pattern is longer than {MAX_PATTERN_CHARS} characters"), "pattern_too_long"));
    }
    let mut source = String::from("^");
    for character in pattern.chars() {
        match character {
            '*' => source.push_str(".*"),
            '?' => source.push('.'),
            other => source.push_str(&regex::escape(&other.to_string())),
        }
    }
    source.push('$');
    Regex::new(&source).map_err(|error| refuse(format!("url_pattern cannot be used: {error}"), "invalid_pattern"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(value: Value) -> RuleSpec {
        serde_json::from_value(value).unwrap()
    }

    fn facts<'a>(method: &'a str, url: &'a str, kind: ResourceType, headers: &'a [(String, String)]) -> RequestFacts<'a> {
        RequestFacts { method, url, resource_type: kind, headers }
    }

    #[test]
    fn every_matcher_hits_and_misses() {
        let headers = vec![("X-Token".to_string(), "abc-123".to_string())];
        let get = facts("GET", "https://a.test/api/items?page=2", ResourceType::Fetch, &headers);
        let cases = [
            (json!({ "action": "fail", "method": "get" }), true),
            (json!({ "action": "fail", "method": "POST" }), false),
            (json!({ "action": "fail", "url_includes": "/api/" }), true),
            (json!({ "action": "fail", "url_includes": "/other/" }), false),
            (json!({ "action": "fail", "url_pattern": "https://a.test/api/*?page=?" }), true),
            (json!({ "action": "fail", "url_pattern": "https://a.test/api/*?page=??" }), false),
            (json!({ "action": "fail", "urlRegex": "items\\?page=\\d$" }), true),
            (json!({ "action": "fail", "url_regex": "^http:" }), false),
            (json!({ "action": "fail", "resource_type": "Fetch" }), true),
            // A fetch-like request may be an XHR: the two are told apart only once done.
            (json!({ "action": "fail", "resourceType": "XHR" }), true),
            (json!({ "action": "fail", "resource_type": "Image" }), false),
            (json!({ "action": "fail", "header_matchers": [{ "name": "x-token", "value_includes": "abc" }] }), true),
            (json!({ "action": "fail", "header_matchers": [{ "name": "X-TOKEN", "valueRegex": "^abc-\\d+$" }] }), true),
            (json!({ "action": "fail", "header_matchers": [{ "name": "x-token", "value_includes": "zzz" }] }), false),
            (json!({ "action": "fail", "header_matchers": [{ "name": "x-missing", "value_includes": "" }] }), false),
        ];
        for (value, hit) in cases {
            let rule = InterceptRule::new(spec(value.clone()), "t1", 0).unwrap();
            assert_eq!(rule.matches(&get).is_some(), hit, "{value}");
        }
    }

    #[test]
    fn priority_then_creation_order_decides() {
        let rules = vec![
            InterceptRule::new(spec(json!({ "action": "fail", "url_includes": "a" })), "t", 1).unwrap(),
            InterceptRule::new(spec(json!({ "action": "continue", "url_includes": "a" })), "t", 2).unwrap(),
            InterceptRule::new(spec(json!({ "action": "fulfill", "url_includes": "a", "priority": 5 })), "t", 3).unwrap(),
        ];
        let request = facts("GET", "http://a/", ResourceType::Document, &[]);
        assert_eq!(first_match(&rules, &request).unwrap().rule.action(), RuleAction::Fulfill);
        assert_eq!(first_match(&rules[..2], &request).unwrap().rule.action(), RuleAction::Fail, "the older of equals");
    }

    #[test]
    fn every_validation_rule_of_the_seed() {
        for (value, reason) in [
            (json!({ "action": "fail" }), "no_condition"),
            (json!({ "action": "fail", "url_pattern": "*", "url_regex": "x" }), "pattern_and_regex"),
            (json!({ "action": "fail", "url_regex": "" }), "empty_regex"),
            (json!({ "action": "fail", "url_regex": "(" }), "invalid_regex"),
            (json!({ "action": "fail", "url_pattern": "" }), "empty_pattern"),
            (json!({ "action": "fail", "header_matchers": [{ "name": "", "value_includes": "x" }] }), "matcher_without_name"),
            (json!({ "action": "fail", "header_matchers": [{ "name": "a" }] }), "matcher_without_value"),
            (json!({ "action": "fail", "header_matchers": [{ "name": "a", "value_regex": "[" }] }), "invalid_regex"),
            (json!({ "action": "fail", "url_includes": "x", "body": "no" }), "fulfill_fields"),
            (json!({ "action": "fulfill", "url_includes": "x", "status_code": 302 }), "bad_status"),
            (json!({ "action": "fulfill", "url_includes": "x", "response_headers": { "bad name": "v" } }), "bad_header"),
        ] {
            let error = InterceptRule::new(spec(value.clone()), "t", 0).unwrap_err();
            assert_eq!(error.details["reason"], reason, "{value}: {error}");
        }
        // Types are the schema's business: a non-integer priority or a non-array matcher list
        // does not even parse.
        assert!(serde_json::from_value::<RuleSpec>(json!({ "action": "fail", "method": "GET", "priority": 1.5 })).is_err());
        assert!(serde_json::from_value::<RuleSpec>(json!({ "action": "fail", "method": "GET", "header_matchers": {} })).is_err());
    }
}
