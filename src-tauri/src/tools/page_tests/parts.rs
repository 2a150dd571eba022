//! A snapshot in parts: each part fits the budget, `next` goes on right after the last
//! item shown (found again when the page moved above it), and the explicit limits
//! (`max_chars`, `max_items`) cut the page before the budget pages it.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::Bench;
use crate::engine::agent::AgentOp;

/// A page of `rows` lines of text (`Line 1 of the log`, ...), a link after every tenth.
fn log_page(first: usize, rows: usize) -> Value {
    let mut items = Vec::new();
    let mut nodes = Vec::new();
    for row in first..first + rows {
        items.push(json!({ "text": format!("Line {row} of the log, with a few more words to read") }));
        if row % 10 == 0 {
            items.push(json!({ "node": nodes.len() }));
            nodes.push(json!({ "ref": row, "role": "link", "name": format!("Entry {row}"), "href": format!("#entry-{row}") }));
        }
    }
    json!({ "url": "https://log.example/", "title": "Log", "viewport": {}, "items": items, "nodes": nodes, "frames": [] })
}

/// The row numbers of a text answer's lines.
fn rows_of(answer: &Value) -> Vec<usize> {
    let text = answer["text"].as_str().unwrap();
    text.lines().filter_map(|line| line.strip_prefix("Line ")?.split(' ').next()?.parse().ok()).collect()
}

#[tokio::test(start_paused = true)]
async fn parts_fit_the_budget_and_next_goes_on_after_the_last_item_shown_even_if_the_page_moved() {
    let bench = Bench::new().await;
    let page = Arc::new(Mutex::new(log_page(1, 300)));
    let shown = page.clone();
    bench.page.on(AgentOp::Snapshot, move |_, _| Ok(shown.lock().unwrap().clone()));

    let first = bench.call("snapshot", json!({ "format": "text", "max_tokens": 1000 })).await.unwrap();
    let text = first["text"].as_str().unwrap();
    assert!(crate::tools::snapshot::estimate_tokens(text) <= 1000, "{text}");
    let rows = rows_of(&first);
    assert_eq!(rows, (1..=rows.len()).collect::<Vec<_>>(), "from the start, in order");
    let truncated = &first["truncated"];
    assert_eq!((&truncated["from"], &truncated["total"]), (&json!(0), &json!(330)));
    let footer = text.lines().last().unwrap();
    assert!(footer.starts_with("(cut at the token budget: ") && footer.ends_with(" goes on)"), "{footer}");
    assert!(footer.contains(&format!("\"next\":{}", truncated["next"])) && footer.contains("\"max_tokens\":1000"), "{footer}");

    // Twenty lines are added above what was shown: the next part still starts right after it.
    let mut moved = log_page(1, 300);
    let added: Vec<Value> = (0..20).map(|index| json!({ "text": format!("New line {index}") })).collect();
    moved["items"].as_array_mut().unwrap().splice(0..0, added);
    *page.lock().unwrap() = moved;
    let next = json!({ "format": "text", "max_tokens": 1000, "next": truncated["next"] });
    let second = bench.call("snapshot", next).await.unwrap();
    assert_eq!(rows_of(&second)[0], rows.last().unwrap() + 1, "{}", second["text"]);
    assert_eq!(second.get("page_changed"), None);

    // The line it ended on is gone: the part starts at the same index, and says so.
    let mut changed = log_page(1, 300);
    changed["items"][truncated["next"].as_str().unwrap().split('.').next().unwrap().parse::<usize>().unwrap() - 1] =
        json!({ "text": "A line that was not there" });
    *page.lock().unwrap() = changed;
    let next = json!({ "max_tokens": 1000, "next": truncated["next"] });
    let third = bench.call("snapshot", next).await.unwrap();
    assert_eq!(third["page_changed"], true);
    assert_eq!(third["from"], truncated["shown"]);

    let refused = bench.call("snapshot", json!({ "next": "12" })).await.unwrap_err();
    assert_eq!(refused.code, crate::error::ErrorCode::BadRequest);
}

#[tokio::test(start_paused = true)]
async fn max_chars_and_max_items_cut_the_page_and_say_what_they_cut() {
    let bench = Bench::new().await;
    bench.page.on(AgentOp::Snapshot, |_, _| Ok(log_page(1, 100)));
    let cut = bench.call("snapshot", json!({ "max_chars": 100, "max_items": 3 })).await.unwrap();
    let text = cut["text"].as_str().unwrap();
    assert_eq!(text.chars().count(), 100, "lines and the newlines between them: {text:?}");
    assert!(text.starts_with("Line 1 of the log, with a few more words to read\nLine 2 of"), "{text:?}");
    assert_eq!((&cut["text_truncated"], &cut["text_length"]), (&json!(true), &json!(4991)));
    let refs: Vec<&Value> = cut["nodes"].as_array().unwrap().iter().map(|node| &node["ref"]).collect();
    assert_eq!(refs, [&json!("e10"), &json!("e20"), &json!("e30")]);
    assert_eq!((&cut["omitted"], &cut["items_truncated"]), (&json!({ "nodes": 10 }), &json!(true)));
    assert_eq!(cut.get("truncated"), None, "what the limits leave fits the budget");

    let bounds = [json!({ "max_chars": 200_001 }), json!({ "max_items": 0 }), json!({ "max_tokens": 499 })];
    for input in bounds {
        let refused = bench.call("snapshot", input.clone()).await.unwrap_err();
        assert_eq!(refused.code, crate::error::ErrorCode::BadRequest, "{input}");
    }
}
