//! Tabs (seed 002): several tabs per session sharing its context; short ids; every answer
//! carries tab and seq; unknown tabs are errors; a tab's events stay in its tab; popups
//! denied or opened as tabs (an OAuth-style popup posts back and closes itself).

use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::*;

fn tab_ids(session: &Session) -> Vec<String> {
    session.ok("tab_list", json!({}))["tabs"].as_array().unwrap().iter().map(|tab| tab["tab"].as_str().unwrap().to_string()).collect()
}

#[test]
fn tabs_open_list_select_and_close_sharing_the_session() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    let first = session.summary["tab"].as_str().unwrap().to_string();
    assert!(first.len() >= 4 && first.chars().all(|character| character.is_ascii_hexdigit()), "a short hex id: {first}");
    session.navigate(&fixtures.url("/set-cookie?value=shared"));

    // A new tab: selected, in the same cookie jar.
    let opened = session.tool("tab_new", json!({ "url": fixtures.url("/f/hello.html") }));
    assert_eq!(opened.status, 200, "{}", opened.body);
    let second = opened.body["result"]["tab"].as_str().unwrap().to_string();
    assert_ne!(second, first);
    assert_eq!(opened.body["tab"], second, "the answer names the new (selected) tab");
    assert!(opened.body["seq"].as_u64().unwrap() > 0);
    assert_eq!(fixtures.seen("/f/hello.html")[0].cookie.as_deref(), Some("marker=shared"), "tabs share the session's cookies");
    assert_eq!(tab_ids(&session), [first.clone(), second.clone()]);
    let listed = session.ok("tab_list", json!({}));
    assert_eq!(listed["selected"], second);
    assert_eq!(listed["tabs"][1]["title"], "Hello fixture");

    // Page tools act on the selected tab, or on the one they name.
    assert_eq!(session.observe()["title"], "Hello fixture");
    let on_first = session.get(&format!("/observe?tab={first}"));
    assert_eq!(on_first.body["url"], fixtures.url("/set-cookie?value=shared"));
    assert_eq!(on_first.body["tab"], first);
    let navigated = session.post("/navigate", json!({ "url": fixtures.url("/f/colors.html"), "tab": first }));
    assert_eq!(navigated.body["tab"], first);
    assert_eq!(session.observe()["title"], "Hello fixture", "the selected tab did not move");
    session.ok("tab_select", json!({ "tab": first }));
    assert_eq!(session.observe()["url"], fixtures.url("/f/colors.html"));

    // Unknown tabs are errors everywhere, never a fallback.
    for (tool, input) in [
        ("snapshot", json!({ "tab": "zzzz" })),
        ("tab_select", json!({ "tab": "zzzz" })),
        ("tab_close", json!({ "tab": "zzzz" })),
        ("events", json!({ "tab": "zzzz" })),
    ] {
        session.fails(tool, input, 404, "E_TAB_NOT_FOUND");
    }
    assert_eq!(session.post("/navigate", json!({ "url": fixtures.url("/f/hello.html"), "tab": "zzzz" })).code(), "E_TAB_NOT_FOUND");
    session.fails("click", json!({ "selector": "a", "tab": 5 }), 400, "E_BAD_REQUEST");

    // A tab's events stay in its tab.
    let second_events = session.ok("events", json!({ "tab": second }))["events"].as_array().unwrap().clone();
    assert!(!second_events.is_empty());
    assert!(second_events.iter().all(|event| event["tab"] == second), "only the tab's own events");
    assert!(!second_events.iter().any(|event| event["url"] == fixtures.url("/f/colors.html")), "none of the other tab's");

    // Closing frees the id; closing the last tab is allowed; tab_new works with none.
    let closed = session.ok("tab_close", json!({ "tab": second }));
    assert_eq!(closed["tab_closed"], second);
    session.fails("events", json!({ "tab": second }), 404, "E_TAB_NOT_FOUND");
    session.ok("tab_close", json!({ "tab": first }));
    assert!(tab_ids(&session).is_empty());
    let none = session.tool("snapshot", json!({}));
    assert_eq!(none.code(), "E_TAB_NOT_FOUND", "{}", none.body);
    assert_eq!(session.get("/observe").code(), "E_TAB_NOT_FOUND");
    assert_eq!(session.get("").body["tab"], Value::Null, "the summary says no tab is selected");
    let fresh = session.ok("tab_new", json!({}));
    assert_eq!(session.observe()["url"], "about:blank");
    assert_eq!(tab_ids(&session), [fresh["tab"].as_str().unwrap()]);
}

#[test]
fn every_answer_carries_tab_and_seq_and_seq_only_grows() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    let tab = session.summary["tab"].clone();
    let mut last = 0;
    let answers = [
        session.post("/navigate", json!({ "url": fixtures.url("/f/hello.html") })).body,
        session.get("/observe").body,
        session.get("/events?after=0").body,
        session.tool("snapshot", json!({})).body,
        session.tool("tab_list", json!({})).body,
        session.tool("set_popup_policy", json!({ "policy": "deny" })).body,
        session.post("/actions", json!({ "action": { "type": "scroll", "dy": 10 } })).body,
    ];
    for answer in answers {
        assert_eq!(answer["tab"], tab, "{answer}");
        let seq = answer["seq"].as_u64().unwrap_or_else(|| panic!("no seq in {answer}"));
        assert!(seq > last, "seq went from {last} to {seq}");
        last = seq;
    }
}

#[test]
fn popups_are_denied_by_default_and_become_tabs_when_asked() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let lease = daemon.lease("agent-a");
    let session = lease.session();
    session.navigate(&fixtures.url("/f/tabs.html"));
    let opener = session.summary["tab"].as_str().unwrap().to_string();

    // deny (the default): target=_blank and window.open open nothing.
    let clicked = session.ok("click", json!({ "selector": "#blank" }));
    assert_eq!(clicked["popups_blocked"].as_array().map(Vec::len), Some(1), "{clicked}");
    session.ok("click", json!({ "selector": "#open" }));
    assert_eq!(session.page_value("document.getElementById('result').textContent"), "window refused");
    assert_eq!(tab_ids(&session).len(), 1);

    // tab: each becomes a tab of the session, with its opener.
    assert_eq!(session.ok("set_popup_policy", json!({ "policy": "tab" }))["policy"], "tab");
    let clicked = session.ok("click", json!({ "selector": "#blank" }));
    let popup = clicked["popups"][0]["tab"].as_str().unwrap_or_else(|| panic!("no popup in {clicked}")).to_string();
    assert_eq!(clicked["popups"][0]["url"], fixtures.url("/f/hello.html"));
    assert!(eventually(Duration::from_secs(5), || { session.get(&format!("/observe?tab={popup}")).body["title"] == "Hello fixture" }));
    let listed = session.ok("tab_list", json!({}));
    assert_eq!(listed["selected"], opener, "a popup does not take the selection");
    assert_eq!(listed["tabs"][1]["opener"], opener);
    let event = session.ok("events", json!({ "type": "popup" }))["events"][0].clone();
    assert_eq!((event["tab"].as_str(), event["opener"].as_str()), (Some(popup.as_str()), Some(opener.as_str())));
    session.ok("click", json!({ "selector": "#open" }));
    assert_eq!(session.page_value("document.getElementById('result').textContent"), "window opened");
    assert_eq!(tab_ids(&session).len(), 3);

    // A session can start with popups as tabs.
    let other = lease.try_session(json!({ "popups": "tab" }));
    assert_eq!(other.status, 200, "{}", other.body);
    assert_eq!(lease.try_session(json!({ "popups": "window" })).status, 400);
}

#[test]
fn an_oauth_style_popup_posts_back_to_its_opener_and_closes_itself() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.ok("set_popup_policy", json!({ "policy": "tab" }));
    session.navigate(&fixtures.url("/f/tabs.html"));
    let clicked = session.ok("click", json!({ "selector": "#signin" }));
    let provider = clicked["popups"][0]["tab"].as_str().unwrap_or_else(|| panic!("no popup in {clicked}")).to_string();
    assert!(eventually(Duration::from_secs(5), || session.get(&format!("/observe?tab={provider}")).body["title"] == "Provider"));
    // The person (here: the agent) allows in the popup; it posts back and closes.
    let allowed = session.tool("click", json!({ "selector": "#allow", "tab": provider }));
    assert_eq!(allowed.status, 200, "{}", allowed.body);
    assert!(eventually(Duration::from_secs(5), || tab_ids(&session).len() == 1), "the popup did not close: {:?}", tab_ids(&session));
    assert_eq!(session.title(), "signed in");
    assert_eq!(session.page_value("document.getElementById('result').textContent"), "signed in as alice");
    let closed = session.ok("events", json!({ "type": "tab_closed" }))["events"][0].clone();
    assert_eq!((closed["tab"].as_str(), closed["by"].as_str()), (Some(provider.as_str()), Some("page")));
    session.fails("snapshot", json!({ "tab": provider }), 404, "E_TAB_NOT_FOUND");
}
