//! Snapshots complete by default and cheap (issue #27): the whole page when it fits the
//! token budget, a longer one in parts that `next` pages through (every element and every
//! line once, frames in their place), and `scope` for one part of a page.

use std::sync::OnceLock;

use serde_json::{json, Value};

use crate::harness::*;

/// The words the fixtures' rows are made of (`rows.html`, `long.html`).
const WORDS: [&str; 10] = ["amber", "birch", "cobalt", "dune", "ember", "fjord", "garnet", "harbor", "indigo", "juniper"];

/// The default budget of an answer, in estimated o200k tokens.
const BUDGET: usize = 12_000;

/// A session on a fixture page.
fn on(page: &str) -> (Daemon, Fixtures, Session) {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session_sized(1280, 800);
    session.navigate(&fixtures.url(page));
    (daemon, fixtures, session)
}

/// What o200k (the tokenizer of the models the budget is for) counts in a text.
fn tokens(text: &str) -> usize {
    static TOKENIZER: OnceLock<tiktoken_rs::CoreBPE> = OnceLock::new();
    TOKENIZER.get_or_init(|| tiktoken_rs::o200k_base().expect("the o200k tokenizer loads")).encode_with_special_tokens(text).len()
}

/// What an answer costs: the text of a text answer (all that MCP shows), a JSON one whole.
fn cost(answer: &Value) -> usize {
    match answer["text"].as_str().filter(|_| answer["format"] == "text") {
        Some(text) => tokens(text),
        None => tokens(&answer.to_string()),
    }
}

/// Row `n` of `rows.html` as a text line: its cells, tab-separated.
fn inventory_row(n: usize) -> String {
    let status = ["in stock", "backorder", "discontinued"][n % 3];
    format!("SKU-{}\t{} {} crate {n}\t{:.2}\t{}\t{status}", 10000 + n, WORDS[n % 10], WORDS[n * 7 % 10], n as f64 * 3.17, n * 13 % 97)
}

#[test]
fn a_default_snapshot_holds_the_whole_200_row_table_in_both_formats() {
    let (_daemon, _fixtures, session) = on("/f/rows.html");
    let text = session.ok("snapshot", json!({ "format": "text" }));
    let body = text["text"].as_str().unwrap();
    assert!(text.get("truncated").is_none(), "{}", text["truncated"]);
    let rows: Vec<String> = (1..=200).map(inventory_row).collect();
    let shown: Vec<&str> = body.lines().filter(|line| line.starts_with("SKU-")).collect();
    assert_eq!(shown, rows, "every row, in order, each once");
    assert!(body.contains("\nSKU\tItem\tPrice\tStock\tStatus\n"), "the header row: {body}");
    let end = body.lines().position(|line| line == "End of the inventory.").expect("the text after the table");
    assert!(body.lines().nth(end + 1).unwrap().ends_with(" link \"Back to the top\" -> #top"), "{body}");
    assert!(cost(&text) <= BUDGET, "{} tokens", cost(&text));

    let page = session.ok("snapshot", json!({}));
    assert!(page.get("truncated").is_none(), "{}", page["truncated"]);
    assert!(page["text"].as_str().unwrap().contains(&inventory_row(200)), "{}", page["text"]);
    assert_eq!((&page["tables"][0]["caption"], &page["tables"][0]["rows"]), (&json!("Stock, 200 items"), &json!(201)));
    assert!(cost(&page) <= BUDGET, "{} tokens", cost(&page));
}

/// What a part of `long.html` showed: element refs, row numbers, frame row numbers.
#[derive(Debug, Default, PartialEq)]
struct Seen {
    refs: Vec<String>,
    rows: Vec<usize>,
    frame_rows: Vec<usize>,
}

impl Seen {
    /// Adds the rows of some text lines (`Row 17: ...`, `Frame row 3`).
    fn lines(&mut self, text: &str) {
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("Row ") {
                self.rows.push(rest.split(':').next().unwrap().parse().unwrap());
            } else if let Some(rest) = line.strip_prefix("Frame row ") {
                self.frame_rows.push(rest.parse().unwrap());
            }
        }
    }

    /// Adds a part: from its text lines in the text format, its nodes and text in JSON.
    fn part(&mut self, answer: &Value) {
        let text = answer["text"].as_str().unwrap();
        if answer["format"] == "text" {
            for line in text.lines() {
                let words: Vec<&str> = line.splitn(3, ' ').collect();
                if words.len() == 3 && words[0].starts_with('e') && ["link", "button"].contains(&words[1]) {
                    self.refs.push(words[0].to_string());
                }
            }
        } else {
            self.refs.extend(answer["nodes"].as_array().unwrap().iter().map(|node| node["ref"].as_str().unwrap().to_string()));
        }
        self.lines(text);
    }
}

/// Pages through a snapshot from its first part to its last; answers each part.
fn parts(session: &Session, input: Value) -> Vec<Value> {
    let mut parts = vec![session.ok("snapshot", input.clone())];
    while let Some(truncated) = parts.last().unwrap().get("truncated").cloned() {
        let shown_so_far = truncated["from"].as_u64().unwrap() + truncated["shown"].as_u64().unwrap();
        let mut next = input.clone();
        next["next"] = truncated["next"].clone();
        let part = session.ok("snapshot", next);
        assert_eq!(part["from"].as_u64(), Some(shown_so_far), "a part starts where the one before stopped");
        parts.push(part);
        assert!(parts.len() < 50, "paging ends");
    }
    parts
}

#[test]
fn paging_a_page_longer_than_the_budget_shows_every_element_and_row_once() {
    let (_daemon, _fixtures, session) = on("/f/long.html");
    // The whole page in one answer, for what paging must show.
    let whole = session.ok("snapshot", json!({ "max_tokens": 200_000 }));
    assert!(whole.get("truncated").is_none());
    let mut expected = Seen::default();
    expected.part(&whole);
    assert_eq!(expected.refs.len(), 3 + 1000 + 40 + 1, "the nav, a link per row, a button per frame row, the appendix's");
    assert_eq!(expected.rows, (1..=1000).collect::<Vec<_>>());
    assert_eq!(expected.frame_rows, (1..=40).collect::<Vec<_>>());

    for format in ["text", "json"] {
        let parts = parts(&session, json!({ "format": format }));
        assert!(parts.len() >= 3, "{format}: {} parts", parts.len());
        let mut seen = Seen::default();
        for part in &parts {
            assert!(cost(part) <= BUDGET, "{format}: a part of {} tokens", cost(part));
            seen.part(part);
        }
        assert_eq!(seen, expected, "{format}: the parts show what the whole shows, each thing once, in order");
        let last = parts.last().unwrap()["text"].as_str().unwrap().to_string();
        assert!(last.contains("Only in the appendix: closing notes."), "{format}: the last part reaches the end: {last}");
    }
    // A text part says how to go on, in a line a model can act on.
    let first = session.ok("snapshot", json!({ "format": "text" }));
    let next = first["truncated"]["next"].as_str().unwrap();
    assert!(
        first["text"].as_str().unwrap().trim_end().ends_with(&format!("snapshot {{\"next\":\"{next}\"}} goes on)")),
        "{}",
        first["text"]
    );
    session.fails("snapshot", json!({ "next": "not a cursor" }), 400, "E_BAD_REQUEST");
}

#[test]
fn scope_reads_one_part_of_the_page_by_selector_ref_or_frame() {
    let (_daemon, _fixtures, session) = on("/f/long.html");
    let outside = ["Shipping log", "Row 1:", "Part one", "Frame row"];

    let by_selector = session.ok("snapshot", json!({ "format": "text", "scope": "#appendix" }));
    let text = by_selector["text"].as_str().unwrap();
    assert!(text.contains("\nOnly in the appendix: closing notes.\n") && text.contains(" button \"Appendix button\"\n"), "{text}");
    assert!(outside.iter().all(|words| !text.contains(words)), "nothing outside the scope: {text}");
    assert!(text.lines().nth(2).unwrap().starts_with("scope: e") && by_selector.get("truncated").is_none(), "{text}");

    // By the ref a snapshot gives the region; the same content, as JSON.
    let page = session.ok("snapshot", json!({ "max_tokens": 200_000 }));
    let landmarks = page["landmarks"].as_array().unwrap();
    let appendix = landmarks.iter().find(|landmark| landmark["name"] == "Appendix").unwrap()["ref"].clone();
    let by_ref = session.ok("snapshot", json!({ "scope": appendix }));
    assert_eq!(by_ref["scope"]["ref"], appendix);
    let names: Vec<&Value> = by_ref["nodes"].as_array().unwrap().iter().map(|node| &node["name"]).collect();
    assert_eq!(names, [&json!("Appendix button")]);
    assert_eq!(by_ref["text"], "Appendix\nOnly in the appendix: closing notes.");

    // In a frame: a selector there, or the frame's own ref.
    let framed = session.ok("snapshot", json!({ "format": "text", "scope": "ul", "frame_selector": "#inner" }));
    let text = framed["text"].as_str().unwrap();
    assert!(text.contains("\nFrame row 40\n") && text.contains(" button \"Frame button 40\" @f"), "{text}");
    assert!(!text.contains("Frame log") && !text.contains("Row 1:"), "only the list: {text}");
    let frame = page["frames"][0]["ref"].clone();
    let whole_frame = session.ok("snapshot", json!({ "format": "text", "scope": frame }));
    let text = whole_frame["text"].as_str().unwrap();
    assert!(text.contains("## Frame log\n") && text.contains("\nFrame row 1\n") && !text.contains("Row 1:"), "{text}");

    // A part longer than the budget pages within the scope.
    let mut seen = Seen::default();
    for part in parts(&session, json!({ "format": "text", "scope": "#part-2" })) {
        seen.part(&part);
    }
    assert_eq!(seen.rows, (501..=1000).collect::<Vec<_>>());
    assert!(seen.frame_rows.is_empty());

    session.fails("snapshot", json!({ "scope": "e999999" }), 409, "E_STALE_REF");
    session.fails("snapshot", json!({ "scope": "#nowhere" }), 404, "E_NOT_FOUND");
    session.fails("snapshot", json!({ "scope": appendix, "frame_selector": "#inner" }), 400, "E_BAD_REQUEST");
    session.fails("snapshot", json!({ "scope": "#appendix", "changes": true }), 400, "E_BAD_REQUEST");
}
