//! Lists of the page the agent is on: over MCP (and the CLI) `requests`, `console` and
//! `page_errors` answer the tab's current page unless the call asks for `since: "all"` or
//! gives a cursor, and say in one line what they left out; over HTTP they answer the whole
//! log (seed 003) unless asked for `since: "navigation"`.

use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::*;

/// The requests of fetches.html: its document and 13 fetches.
const FETCHES_PAGE_REQUESTS: usize = 14;

/// The pages each test loads in turn: the last is the page the agent is on.
const PAGES: [&str; 3] = ["/f/network.html", "/f/hello.html", "/f/fetches.html"];

/// The lines of a compact request list that stand for a request.
fn request_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|line| line.starts_with("req-")).collect()
}

/// Whether a list of requests (as text) holds fetches.html's, all done.
fn fetches_done(text: &str) -> bool {
    let lines = request_lines(text);
    lines.iter().filter(|line| line.contains(" /api/count/") && line.split(' ').nth(2) == Some("200")).count() == 13
}

/// The entries of a JSON list answer.
fn entries(list: &Value) -> &Vec<Value> {
    list["entries"].as_array().unwrap_or_else(|| panic!("no entries: {list}"))
}

#[test]
fn lists_over_mcp_answer_the_page_the_agent_is_on_and_say_what_came_before() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    // page_errors is in the devtools group.
    let mut agent = McpProcess::start_with_caps(&daemon, "agent-page", "devtools");
    for page in PAGES {
        let (failed, text) = agent.call("browser_navigate", json!({ "url": fixtures.url(page) }));
        assert!(!failed, "{text}");
    }
    let mut listed = String::new();
    let done = eventually(Duration::from_secs(10), || {
        listed = agent.call("browser_requests", json!({})).1;
        fetches_done(&listed)
    });
    assert!(done, "{listed}");
    // Only the current page's requests, its document included; nothing of the pages before.
    let lines = request_lines(&listed);
    assert_eq!(lines.len(), FETCHES_PAGE_REQUESTS, "{listed}");
    assert!(lines.iter().any(|line| line.contains(" Document ") && line.ends_with(" /f/fetches.html")), "{listed}");
    assert!(!listed.contains("/f/network.html") && !listed.contains("/f/hello.html") && !listed.contains("/api/pixel.png"), "{listed}");
    // One line says how many came before, and how to get them.
    let note = listed.lines().nth(1).unwrap();
    let earlier: usize = note.split(' ').next().unwrap().parse().unwrap_or_else(|_| panic!("{listed}"));
    assert!(earlier >= 3, "network.html's document and picture, hello.html's document: {listed}");
    assert!(note.contains(" earlier requests, before this page's navigation") && note.contains("since \"all\""), "{note}");

    // since: "all", or a cursor, gives the whole log.
    let (_, all) = agent.call("browser_requests", json!({ "since": "all" }));
    let every = request_lines(&all);
    assert_eq!(every.len(), FETCHES_PAGE_REQUESTS + earlier, "{all}");
    for page in PAGES {
        assert!(every.iter().any(|line| line.ends_with(&format!(" {page}"))), "{page}: {all}");
    }
    assert!(!all.contains(" earlier "), "{all}");
    let (_, from_start) = agent.call("browser_requests", json!({ "after": 0 }));
    assert_eq!(request_lines(&from_start).len(), FETCHES_PAGE_REQUESTS + earlier, "{from_start}");
    let (_, records) = agent.call("browser_requests", json!({ "format": "json" }));
    let records: Value = serde_json::from_str(&records).unwrap();
    assert_eq!((records["requests"].as_array().unwrap().len(), records["earlier"].clone()), (FETCHES_PAGE_REQUESTS, json!(earlier)));

    // The console: fetches.html writes nothing; network.html's five lines came before.
    let (_, console) = agent.call("browser_console", json!({}));
    let console: Value = serde_json::from_str(&console).unwrap();
    assert_eq!((entries(&console).len(), console["earlier"].clone()), (0, json!(5)), "{console}");
    assert!(console["note"].as_str().unwrap().starts_with("5 earlier lines, before this page's navigation"), "{console}");
    let (_, all) = agent.call("browser_console", json!({ "since": "all" }));
    let all: Value = serde_json::from_str(&all).unwrap();
    assert_eq!(entries(&all).len(), 5, "{all}");
    assert!(all.get("earlier").is_none() && all.get("note").is_none(), "{all}");

    // Back on network.html: its own five lines, not ten; its error, then none on the next page.
    let (failed, text) = agent.call("browser_navigate", json!({ "url": fixtures.url("/f/network.html") }));
    assert!(!failed, "{text}");
    let (_, again) = agent.call("browser_console", json!({}));
    let again: Value = serde_json::from_str(&again).unwrap();
    assert_eq!((entries(&again).len(), again["earlier"].clone()), (5, json!(5)), "{again}");
    assert!(entries(&again)[0]["seq"].as_u64() > entries(&all)[4]["seq"].as_u64(), "the new page's lines: {again}");
    let (failed, text) = agent.call("browser_click", json!({ "selector": "#throw" }));
    assert!(!failed, "{text}");
    let thrown = eventually(Duration::from_secs(5), || {
        let (_, errors) = agent.call("browser_page_errors", json!({}));
        serde_json::from_str::<Value>(&errors).is_ok_and(|errors| entries(&errors).len() == 1)
    });
    assert!(thrown);
    let (failed, text) = agent.call("browser_navigate", json!({ "url": fixtures.url("/f/hello.html") }));
    assert!(!failed, "{text}");
    let (_, errors) = agent.call("browser_page_errors", json!({}));
    let errors: Value = serde_json::from_str(&errors).unwrap();
    assert_eq!((entries(&errors).len(), errors["earlier"].clone()), (0, json!(1)), "{errors}");
    let (_, errors) = agent.call("browser_page_errors", json!({ "since": "all" }));
    assert!(errors.contains("thrown on purpose"), "{errors}");
}

#[test]
fn lists_over_http_keep_the_whole_log_unless_asked_for_the_page() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    for page in PAGES {
        session.navigate(&fixtures.url(page));
    }
    let done = eventually(Duration::from_secs(10), || {
        fetches_done(session.ok("requests", json!({ "format": "text", "since": "navigation" }))["text"].as_str().unwrap())
    });
    assert!(done);
    // The default is the whole log, as seed 003 says, and says nothing of pages.
    let whole = session.ok("requests", json!({}));
    let urls: Vec<&str> = whole["requests"].as_array().unwrap().iter().map(|record| record["url"].as_str().unwrap()).collect();
    for page in PAGES {
        assert!(urls.contains(&fixtures.url(page).as_str()), "{page}: {urls:?}");
    }
    let fields: Vec<&str> = whole.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(fields, ["cursor", "has_more", "older_omitted", "requests"], "{whole}");
    // since: "navigation" gives the current page's, and what it left out.
    let page = session.ok("requests", json!({ "since": "navigation" }));
    let listed = page["requests"].as_array().unwrap();
    assert_eq!(listed.len(), FETCHES_PAGE_REQUESTS, "{page}");
    assert_eq!(
        (listed[0]["url"].as_str(), listed[0]["resource_type"].as_str()),
        (Some(fixtures.url("/f/fetches.html").as_str()), Some("Document"))
    );
    assert_eq!(page["earlier"].as_u64(), Some((urls.len() - FETCHES_PAGE_REQUESTS) as u64), "{page}");
    assert!(page["note"].as_str().unwrap().contains("since \"all\""), "{page}");
    // A call by id, or a cursor, names its own part of the log; a bad value is refused.
    session.fails("requests", json!({ "id": listed[0]["id"], "since": "navigation" }), 400, "E_BAD_REQUEST");
    session.fails("requests", json!({ "since": "yesterday" }), 400, "E_BAD_REQUEST");
    // The console likewise: network.html's five lines by default, none of the page's own.
    assert_eq!(entries(&session.ok("console", json!({}))).len(), 5);
    let console = session.ok("console", json!({ "since": "navigation" }));
    assert_eq!((entries(&console).len(), console["earlier"].clone()), (0, json!(5)), "{console}");
    let errors = session.ok("page_errors", json!({ "since": "navigation" }));
    assert!(entries(&errors).is_empty() && errors.get("earlier").is_none(), "nothing left out, nothing said: {errors}");
}

/// What o200k (the tokenizer the benchmark counts with) counts in a text.
fn tokens(text: &str) -> usize {
    static TOKENIZER: std::sync::OnceLock<tiktoken_rs::CoreBPE> = std::sync::OnceLock::new();
    TOKENIZER.get_or_init(|| tiktoken_rs::o200k_base().expect("the o200k tokenizer loads")).encode_with_special_tokens(text).len()
}

/// Playwright MCP 0.0.83's answers on the benchmark's pages, in o200k tokens: navigate 86,
/// type 33 (its click, fill and press answer alike: the code it ran), the text beside a
/// screenshot 108.
const PEER_NAVIGATE: usize = 86;
const PEER_ACTION: usize = 33;
const PEER_SCREENSHOT_TEXT: usize = 108;

#[test]
fn mcp_answers_of_navigations_actions_and_screenshots_are_no_longer_than_the_peers() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    // evaluate (to read what the page saw) is in the devtools group.
    let mut agent = McpProcess::start_with_caps(&daemon, "agent-lean", "devtools");
    let mut call = |tool: &str, arguments: Value| {
        let (failed, text) = agent.call(tool, arguments.clone());
        assert!(!failed, "{tool} {arguments}: {text}");
        let answer: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{tool}: {text}"));
        println!("{tool}: {} tokens: {text}", tokens(&text));
        (tokens(&text), answer)
    };
    let url = fixtures.url("/f/actions.html");
    let (cost, navigated) = call("browser_navigate", json!({ "url": url }));
    assert!(cost <= PEER_NAVIGATE, "{cost}: {navigated}");
    assert_eq!(
        (navigated["url"].as_str(), navigated["title"].as_str(), navigated["http_status"].as_u64()),
        (Some(url.as_str()), Some("actions"), Some(200))
    );
    let (cost, filled) = call("browser_fill", json!({ "selector": "#user", "text": "agent@example.com" }));
    assert!(cost <= PEER_ACTION, "{cost}: {filled}");
    assert_eq!((filled["target"]["role"].as_str(), filled["target"]["name"].as_str()), (Some("textbox"), Some("User name")), "{filled}");
    let (cost, typed) = call("browser_type", json!({ "selector": "#notes", "text": "typed by key" }));
    assert!(cost <= PEER_ACTION, "{cost}: {typed}");
    let (cost, pressed) = call("browser_press", json!({ "key": "Tab" }));
    assert!(cost <= PEER_ACTION, "{cost}: {pressed}");
    let (cost, clicked) = call("browser_click", json!({ "selector": "#save" }));
    assert!(cost <= PEER_ACTION, "{cost}: {clicked}");
    let fields: Vec<&str> = clicked.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(fields, ["seq", "tab", "target"], "what it hit, and where in the sequence: {clicked}");
    assert_eq!((clicked["target"]["role"].as_str(), clicked["target"]["name"].as_str()), (Some("button"), Some("Save")));
    // What the page saw: the text filled and typed.
    let seen = call(
        "browser_evaluate",
        json!({ "expression": "document.querySelector('#user').value + '|' + document.querySelector('#notes').value" }),
    )
    .1;
    assert!(seen.to_string().contains("agent@example.com|typed by key"), "{seen}");
    let (cost, followed) = call("browser_navigate", json!({ "url": fixtures.url("/f/hello.html") }));
    assert!(cost <= PEER_NAVIGATE, "{cost}: {followed}");
    let (failed, picture) = agent.call("browser_screenshot", json!({}));
    assert!(!failed, "{picture}");
    assert!(tokens(&picture) <= PEER_SCREENSHOT_TEXT, "{picture}");
    let picture: Value = serde_json::from_str(&picture).unwrap();
    assert!(picture["width"].as_u64().is_some() && picture["height"].as_u64().is_some() && picture.get("bytes").is_none(), "{picture}");
}
