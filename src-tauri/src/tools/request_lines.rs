//! `requests` as text, which models read best: one line per request (id, method, status,
//! type, size, duration, URL cut in the middle past 200 characters; a URL on the tab's
//! page's origin as its path), under a line with the list's paging; with `detail`, each
//! request's whole record indented under its line.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde::Serialize;

use crate::events::Paging;
use crate::network::{RequestRecord, ResponseBody};

/// Characters of a URL a line shows; a longer one keeps its head and tail around `…`.
pub(super) const LINE_URL_CHARS: usize = 200;

/// The list as text: the paging line, the `note` of what it left out (a list of the current
/// page), the origin that URLs shown as paths are on, then one line per request (with
/// `detail`, each followed by its record's other fields, indented, and its URL whole).
pub(super) fn render(records: &[RequestRecord], paging: &Paging, note: Option<&str>, detail: bool, page_url: &str) -> String {
    let origin = url::Url::parse(page_url).ok().map(|page| page.origin()).filter(url::Origin::is_tuple);
    let origin = origin.map(|origin| origin.ascii_serialization());
    // A URL on the page's origin reads as its path: the origin is most of a line's tokens.
    let path_on_origin = |url: &str| -> Option<usize> {
        let rest = url.strip_prefix(origin.as_deref()?)?;
        rest.starts_with('/').then(|| url.len() - rest.len())
    };
    let mut text = paging_line(records.len(), paging);
    if let Some(note) = note {
        text.push('\n');
        text.push_str(note);
    }
    if let Some(origin) = origin.as_deref().filter(|_| !detail && records.iter().any(|record| path_on_origin(&record.url).is_some())) {
        let _ = write!(text, "\nURLs starting with / are on {origin} (the tab's page)");
    }
    for record in records {
        text.push('\n');
        if detail {
            text.push_str(&line(record, &record.url));
            text.push_str(&details(record));
        } else {
            let shown = &record.url[path_on_origin(&record.url).unwrap_or(0)..];
            text.push_str(&line(record, &shorten_middle(shown, LINE_URL_CHARS)));
        }
    }
    text
}

/// How many requests the list holds and how to go on, in the JSON answer's words.
fn paging_line(count: usize, paging: &Paging) -> String {
    let noun = if count == 1 { "request" } else { "requests" };
    let mut line = format!("{count} {noun} (oldest first) · cursor {} · has_more {}", paging.cursor, paging.has_more);
    if let Some(omitted) = paging.older_omitted {
        let _ = write!(line, " · older_omitted {omitted}");
    }
    line
}

/// One request on one line: `req-12 GET 200 Fetch 42B 3ms <url>`, then its failure and
/// the rule that decided it, when there are. The status is `failed` for a request that
/// failed before one and `pending` while it waits for one; the duration `-` while it runs.
fn line(record: &RequestRecord, url: &str) -> String {
    let status = match (record.status, record.failed()) {
        (Some(status), _) => status.to_string(),
        (None, true) => "failed".to_string(),
        (None, false) => "pending".to_string(),
    };
    let duration = record.duration_ms.map_or_else(|| "-".to_string(), |ms| format!("{ms}ms"));
    let mut line = format!(
        "{} {} {status} {} {} {duration} {url}",
        record.id,
        record.method,
        name_of(&record.resource_type),
        size(record.response_body_size)
    );
    if let Some(failure) = &record.failure {
        let _ = write!(line, " failure: {failure}");
    }
    if let (Some(rule), Some(action)) = (&record.matched_rule_id, &record.action) {
        let _ = write!(line, " rule: {rule} {}", name_of(action));
    }
    line
}

/// The rest of a record, indented under its line: when it started, its MIME type and the
/// bytes it sent, what the rule matched on, the headers (`>` sent, `<` received, as curl
/// shows them) and the body as the capture holds it.
fn details(record: &RequestRecord) -> String {
    let mut text = String::new();
    let mime_type = record.mime_type.as_deref().unwrap_or("-");
    let _ = write!(text, "\n  started {} · mime {mime_type} · sent {}", record.started_at, size(record.request_body_size));
    if !record.matched_by.is_empty() {
        let _ = write!(text, "\n  rule matched on {}", record.matched_by.join(", "));
    }
    for (name, value) in &record.request_headers {
        let _ = write!(text, "\n  > {name}: {value}");
    }
    for (name, value) in &record.response_headers {
        let _ = write!(text, "\n  < {name}: {value}");
    }
    let shown = ResponseBody::of(record);
    match (&shown.body, &shown.body_error) {
        (Some(body), _) => {
            let cut = if shown.body_truncated { " (its first 1 MiB)" } else { "" };
            let _ = write!(text, "\n  body{cut}:");
            for body_line in body.lines() {
                let _ = write!(text, "\n    {body_line}");
            }
        }
        (None, error) => {
            let _ = write!(text, "\n  body: none ({})", error.as_deref().unwrap_or("-"));
        }
    }
    text
}

/// `text` of at most `max_chars` characters: a longer one keeps its first two thirds and
/// its end around `…` (a URL's origin and path, and its last parameters), cut between
/// characters, never inside one.
fn shorten_middle(text: &str, max_chars: usize) -> Cow<'_, str> {
    let count = text.chars().count();
    if count <= max_chars {
        return Cow::Borrowed(text);
    }
    let kept = max_chars.saturating_sub(1);
    let head = kept * 2 / 3;
    let tail = kept - head;
    let head_end = text.char_indices().nth(head).map_or(text.len(), |(index, _)| index);
    let tail_start = text.char_indices().nth(count - tail).map_or(text.len(), |(index, _)| index);
    Cow::Owned(format!("{}…{}", &text[..head_end], &text[tail_start..]))
}

/// Bytes as people read them: `512B`, `1.5KiB`, `2.0MiB`.
fn size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    match bytes {
        0..KIB => format!("{bytes}B"),
        KIB..0x10_0000 => format!("{:.1}KiB", bytes as f64 / KIB as f64),
        _ => format!("{:.1}MiB", bytes as f64 / (KIB * KIB) as f64),
    }
}

/// A value's name on the wire (`XHR`, `fulfill`): the line says what the JSON says.
fn name_of(value: &impl Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => "?".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::events::SeqCounter;
    use crate::network::{BodyState, Capture, NewRequest, ResourceType};

    /// A finished request of `url`: `status`, `bytes` received in `ms`.
    fn record(url: &str, status: Option<u16>, bytes: u64, ms: Option<u64>) -> RequestRecord {
        let request = NewRequest {
            method: "GET".into(),
            url: url.into(),
            resource_type: ResourceType::Fetch,
            headers: vec![("accept".into(), "*/*".into())],
            body_size: 0,
        };
        let entry = Capture::default().begin(None, &SeqCounter::default(), request);
        let mut record = entry.lock().unwrap().clone();
        (record.status, record.response_body_size, record.duration_ms) = (status, bytes, ms);
        record
    }

    #[test]
    fn a_line_has_the_id_method_status_type_size_duration_and_url() {
        let mut shown = record("http://a.test/api/item-1.json", Some(200), 42, Some(3));
        assert_eq!(line(&shown, &shown.url), "req-1 GET 200 Fetch 42B 3ms http://a.test/api/item-1.json");
        shown.resource_type = ResourceType::Xhr;
        shown.response_body_size = 1536;
        assert_eq!(line(&shown, &shown.url), "req-1 GET 200 XHR 1.5KiB 3ms http://a.test/api/item-1.json");
        let waiting = record("http://a.test/slow", None, 0, None);
        assert_eq!(line(&waiting, &waiting.url), "req-1 GET pending Fetch 0B - http://a.test/slow");
        let mut refused = record("http://a.test:9/x", None, 0, Some(1));
        refused.failure = Some("connection_refused".into());
        assert_eq!(line(&refused, &refused.url), "req-1 GET failed Fetch 0B 1ms http://a.test:9/x failure: connection_refused");
        let mut fulfilled = record("http://a.test/api", Some(200), 9, Some(0));
        (fulfilled.matched_rule_id, fulfilled.action) = (Some("rule-1".into()), Some(crate::network::rules::RuleAction::Fulfill));
        assert!(line(&fulfilled, &fulfilled.url).ends_with("http://a.test/api rule: rule-1 fulfill"));
    }

    #[test]
    fn sizes_read_as_bytes_kibibytes_and_mebibytes() {
        assert_eq!([size(0), size(1023), size(1024), size(5 * 1024 * 1024 + 1)], ["0B", "1023B", "1.0KiB", "5.0MiB"]);
    }

    #[test]
    fn long_urls_keep_their_head_and_tail() {
        let url = format!("http://a.test/search?q={}&page=7", "x".repeat(300));
        let shown = shorten_middle(&url, LINE_URL_CHARS);
        assert_eq!(shown.chars().count(), LINE_URL_CHARS);
        let (head, tail) = shown.split_once('…').unwrap();
        assert_eq!((head.len(), tail.len()), (132, 67));
        assert!(url.starts_with(head) && url.ends_with(tail) && tail.ends_with("&page=7"));
        assert!(matches!(shorten_middle("http://a.test/", LINE_URL_CHARS), Cow::Borrowed(_)), "a short URL stays whole");
        let exact = "u".repeat(LINE_URL_CHARS);
        assert_eq!(shorten_middle(&exact, LINE_URL_CHARS), exact);
    }

    #[test]
    fn shortening_cuts_between_characters_never_inside_one() {
        // One, two, three and four bytes a character, so that every cut lands next to each.
        let pieces = ["a", "é", "日", "🦀"];
        for length in 150..=260 {
            let text: String = (0..length).map(|index| pieces[index % 4]).collect();
            let shown = shorten_middle(&text, LINE_URL_CHARS);
            assert_eq!(shown.chars().count(), length.min(LINE_URL_CHARS), "{length}");
            if length > LINE_URL_CHARS {
                let (head, tail) = shown.split_once('…').unwrap();
                assert!(text.starts_with(head) && text.ends_with(tail), "{length}");
            }
        }
        assert_eq!(shorten_middle("日本語のテキスト", 5), "日本…スト");
    }

    #[test]
    fn the_first_line_says_the_count_and_the_paging() {
        let records = vec![record("http://a.test/1", Some(200), 1, Some(1)), record("http://a.test/2", Some(404), 2, Some(2))];
        let newest = Paging { cursor: 41, has_more: false, older_omitted: Some(3) };
        let text = render(&records, &newest, None, false, "about:blank");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[0], "2 requests (oldest first) · cursor 41 · has_more false · older_omitted 3");
        assert!(lines[2].starts_with("req-1 GET 404 Fetch 2B 2ms"));
        let forward = Paging { cursor: 7, has_more: true, older_omitted: None };
        assert_eq!(
            render(&records[..1], &forward, None, false, "about:blank").lines().next(),
            Some("1 request (oldest first) · cursor 7 · has_more true")
        );
    }

    #[test]
    fn urls_on_the_pages_origin_read_as_paths() {
        let long = format!("http://a.test:8080/search?q={}&page=7", "x".repeat(300));
        let records = vec![
            record("http://a.test:8080/api/1", Some(200), 1, Some(1)),
            record("http://a.test:80801/elsewhere", Some(200), 1, Some(1)),
            record("https://cdn.test/lib.js", Some(200), 1, Some(1)),
            record(&long, Some(200), 1, Some(1)),
        ];
        let paging = Paging { cursor: 1, has_more: false, older_omitted: None };
        let text = render(&records, &paging, None, false, "http://a.test:8080/page.html");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "URLs starting with / are on http://a.test:8080 (the tab's page)");
        assert!(lines[2].ends_with(" /api/1") && lines[3].ends_with(" http://a.test:80801/elsewhere"), "{text}");
        assert!(lines[4].ends_with(" https://cdn.test/lib.js"));
        let (head, tail) = lines[5].rsplit_once(' ').unwrap().1.split_once('…').unwrap();
        assert!(head.starts_with("/search?q=xx") && tail.ends_with("xx&page=7"), "{}", lines[5]);
        let elsewhere = render(&records[2..3], &paging, None, false, "http://a.test:8080/page.html");
        assert_eq!(elsewhere.lines().count(), 2, "no origin line when no URL is on it: {elsewhere}");
        let whole = render(&records[..1], &paging, None, true, "http://a.test:8080/page.html");
        assert!(whole.lines().nth(1).unwrap().ends_with(" http://a.test:8080/api/1"), "detail shows whole URLs: {whole}");
    }

    #[test]
    fn detail_shows_the_whole_record_under_its_line() {
        let long = format!("http://a.test/{}", "p".repeat(250));
        let mut shown = record(&long, Some(200), 17, Some(4));
        shown.mime_type = Some("application/json".into());
        shown.response_headers = vec![("content-type".into(), "application/json".into())];
        shown.matched_by = vec!["url_includes", "method"];
        shown.body = BodyState::Kept { text: Arc::new("{\n\"ok\": true}".into()), truncated: false };
        let paging = Paging { cursor: 1, has_more: false, older_omitted: None };
        let text = render(std::slice::from_ref(&shown), &paging, None, true, "http://a.test/");
        let lines: Vec<&str> = text.lines().skip(1).collect();
        assert!(lines[0].ends_with(&long), "the whole URL: {text}");
        assert!(lines[1].starts_with("  started ") && lines[1].ends_with(" · mime application/json · sent 0B"), "{text}");
        assert_eq!(
            lines[2..],
            [
                "  rule matched on url_includes, method",
                "  > accept: */*",
                "  < content-type: application/json",
                "  body:",
                "    {",
                "    \"ok\": true}"
            ]
        );
        shown.body = BodyState::NotSubscribed;
        assert!(render(&[shown], &paging, None, true, "http://a.test/").ends_with("\n  body: none (not_subscribed)"));
    }

    #[test]
    fn fifty_fetches_fit_in_fewer_tokens_than_playwright_mcp_lists_them() {
        // The benchmark page (c): a document and 50 fetch() calls of a small JSON each.
        // Playwright MCP's browser_network_requests lists it in 1,422 o200k tokens.
        let origin = "http://127.0.0.1:41873/b";
        let mut records = vec![record(&format!("{origin}/fetch50.html"), Some(200), 1123, Some(12))];
        records[0].resource_type = ResourceType::Document;
        for index in 0..50 {
            records.push(record(&format!("{origin}/api/item-{index}.json"), Some(200), 44, Some(9 + index % 17)));
        }
        for (index, record) in records.iter_mut().enumerate() {
            record.id = format!("req-{}", 140 + index);
        }
        let paging = Paging { cursor: 20_512, has_more: false, older_omitted: Some(0) };
        // After the form page and the large page: the line that says what is left out.
        let note = super::super::since::note(153, "request", "requests");
        let text = render(&records, &paging, Some(&note), false, &format!("{origin}/fetch50.html"));
        assert_eq!(text.lines().nth(1), Some(note.as_str()));
        let tokens = tiktoken_rs::o200k_base().unwrap().encode_with_special_tokens(&text).len();
        assert!(tokens <= 1422, "{tokens} tokens:\n{text}");
    }
}
