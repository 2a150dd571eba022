//! Actions that land where a person's would, in real WebKit: styled checkboxes and radios,
//! Playwright's key grammar with the modifier state a page really sees, `type` for pages
//! that listen to keys, every input type, the wait for a moving or late element, and
//! snapshots bounded in every list (docs/API.md, "Actionability" and "Keys").

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::harness::*;

fn on_fidelity_page() -> (Daemon, Fixtures, Session) {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session_sized(1280, 800);
    session.navigate(&fixtures.url("/f/fidelity.html"));
    (daemon, fixtures, session)
}

/// The key events the page logged since the last call (and forgets them).
fn key_events(session: &Session) -> Vec<Value> {
    let events = session.page_value("(() => { const seen = keylog; keylog = []; return seen; })()");
    events.as_array().cloned().unwrap_or_default()
}

/// `(type, key, code)` of each event.
fn keys_of(events: &[Value]) -> Vec<(String, String, String)> {
    events
        .iter()
        .map(|event| {
            let text = |field: &str| event[field].as_str().unwrap_or("").to_string();
            (text("type"), text("key"), text("code"))
        })
        .collect()
}

fn checked(session: &Session, id: &str) -> bool {
    session.page_value(&format!("document.getElementById('{id}').checked")) == json!(true)
}

#[test]
fn styled_checkboxes_radios_and_switches_take_a_persons_click() {
    let (_daemon, _fixtures, session) = on_fidelity_page();
    // A transparent checkbox over its drawing is visible (opacity does not hide), listed,
    // and clickable: the to-do gets done.
    let snapshot = session.ok("snapshot", json!({}));
    let toggle = snapshot["nodes"].as_array().unwrap().iter().find(|node| node["name"] == "Buy milk").expect("the toggle is listed");
    assert_eq!(toggle["role"], "checkbox");
    let clicked = session.ok("click", json!({ "ref": toggle["ref"] }));
    assert_eq!(clicked["ok"], true, "{clicked}");
    assert!(checked(&session, "todo-toggle"));
    assert_eq!(session.page_value("document.getElementById('todo').className"), "todo done");
    session.ok("uncheck", json!({ "selector": "#todo-toggle" }));
    assert!(!checked(&session, "todo-toggle"));

    // A switch whose input is not drawn at all: checked through its visible label.
    let switched = session.ok("check", json!({ "selector": "#dark-mode" }));
    assert_eq!((switched["changed"].clone(), switched["checked"].clone()), (json!(true), json!(true)), "{switched}");
    assert!(checked(&session, "dark-mode"));

    // Radios of no size inside their labels: check one, then click the other's label.
    session.ok("check", json!({ "selector": "#size-m" }));
    assert!(checked(&session, "size-m"));
    session.ok("click", json!({ "selector": "#pill-s" }));
    assert!(checked(&session, "size-s") && !checked(&session, "size-m"));
}

#[test]
fn keys_follow_playwrights_grammar_with_the_modifier_state_a_page_sees() {
    let (_daemon, _fixtures, session) = on_fidelity_page();
    session.ok("focus", json!({ "selector": "#keys" }));
    key_events(&session);

    // "+" is a key, and the last "+" of "Control++" too.
    session.ok("press", json!({ "key": "+" }));
    let plus = key_events(&session);
    assert_eq!(keys_of(&plus)[0], ("keydown".into(), "+".into(), "Equal".into()), "{plus:?}");
    assert_eq!(session.page_value("document.getElementById('keys').value"), "+");
    session.ok("press", json!({ "key": "Control++" }));
    let events = key_events(&session);
    let down = events.iter().find(|event| event["type"] == "keydown" && event["key"] == "+").expect("keydown +");
    assert_eq!(down["ctrlKey"], true, "{events:?}");

    // A modifier's own keydown carries its flag, its keyup does not.
    session.ok("press", json!({ "key": "Shift+~" }));
    let events = key_events(&session);
    let seen: Vec<(String, String, bool)> = events
        .iter()
        .filter(|event| event["type"] != "keypress")
        .map(|event| (event["type"].as_str().unwrap().into(), event["key"].as_str().unwrap().into(), event["shiftKey"] == true))
        .collect();
    assert_eq!(
        seen,
        [
            ("keydown".into(), "Shift".into(), true),
            ("keydown".into(), "~".into(), true),
            ("keyup".into(), "~".into(), true),
            ("keyup".into(), "Shift".into(), false)
        ],
        "{events:?}"
    );
    assert_eq!(events.iter().find(|event| event["key"] == "~").unwrap()["code"], "Backquote");
    for (chord, modifier, flag) in [("Control+a", "Control", "ctrlKey"), ("Alt+b", "Alt", "altKey")] {
        session.ok("press", json!({ "key": chord }));
        let events = key_events(&session);
        let first = &events[0];
        let last = events.last().unwrap();
        assert_eq!((first["type"].as_str(), first["key"].as_str(), first[flag].as_bool()), (Some("keydown"), Some(modifier), Some(true)));
        assert_eq!((last["type"].as_str(), last["key"].as_str(), last[flag].as_bool()), (Some("keyup"), Some(modifier), Some(false)));
    }

    // Names of Playwright's US layout: codes, the numpad with NumLock off, sided modifiers.
    for (name, key, code, location, key_code) in [
        ("KeyA", "a", "KeyA", 0, 65),
        ("Shift+KeyA", "A", "KeyA", 0, 65),
        ("Digit1", "1", "Digit1", 0, 49),
        ("Backquote", "`", "Backquote", 0, 192),
        ("Numpad1", "End", "Numpad1", 3, 35),
        ("NumpadAdd", "+", "NumpadAdd", 3, 107),
        ("ShiftRight", "Shift", "ShiftRight", 2, 16),
        ("ControlLeft", "Control", "ControlLeft", 1, 17),
        ("F5", "F5", "F5", 0, 116),
        ("Enter", "Enter", "Enter", 0, 13),
    ] {
        session.ok("press", json!({ "key": name }));
        let events = key_events(&session);
        let down = events.iter().rev().find(|event| event["type"] == "keydown").unwrap_or_else(|| panic!("{name}: {events:?}"));
        assert_eq!(
            (
                down["key"].as_str().unwrap(),
                down["code"].as_str().unwrap(),
                down["location"].as_u64().unwrap(),
                down["keyCode"].as_u64().unwrap()
            ),
            (key, code, location, key_code),
            "{name}: {events:?}"
        );
    }
    for bad in ["Hyper+a", "Control+", "F25", "Keya", "+a", "NoSuchKey"] {
        session.fails("press", json!({ "key": bad }), 400, "E_BAD_REQUEST");
    }
    assert!(key_events(&session).is_empty(), "no refused press reached the page");
}

#[test]
fn type_sends_real_keys_to_pages_that_listen_only_to_keys() {
    let (_daemon, _fixtures, session) = on_fidelity_page();
    // `fill` inserts text: a pad that reads keydown sees nothing of it; `type` it sees.
    let typed = session.ok("type", json!({ "selector": "#keypad", "text": "Hi, you!" }));
    assert_eq!(typed["typed_chars"], 8, "{typed}");
    assert_eq!(session.page_value("document.getElementById('keypad').textContent"), "Hi, you!");
    let events = key_events(&session);
    let capital = events.iter().find(|event| event["type"] == "keydown" && event["key"] == "H").unwrap();
    assert_eq!((capital["code"].as_str(), capital["shiftKey"].as_bool()), (Some("KeyH"), Some(true)));

    // Into a field, with a pause between keys, after what is there.
    session.ok("fill", json!({ "selector": "#keys", "text": "ab" }));
    let begun = Instant::now();
    session.ok("type", json!({ "selector": "#keys", "text": "cd", "delay_ms": 150 }));
    assert!(begun.elapsed() >= Duration::from_millis(150));
    assert_eq!(session.page_value("document.getElementById('keys').value"), "abcd");
    // Without a target, the focused element gets the keys.
    session.ok("type", json!({ "text": "e" }));
    assert_eq!(session.page_value("document.getElementById('keys').value"), "abcde");

    session.fails("type", json!({ "text": "x", "delay_ms": 1001 }), 400, "E_BAD_REQUEST");
    session.fails("type", json!({ "text": "x".repeat(10_001) }), 400, "E_BAD_REQUEST");
    session.fails("type", json!({ "selector": "#nowhere", "text": "x" }), 404, "E_NOT_FOUND");
}

#[test]
fn fill_takes_every_text_type_and_sets_picker_values_like_a_picker() {
    let (_daemon, _fixtures, session) = on_fidelity_page();
    let value = |id: &str| session.page_value(&format!("document.getElementById('{id}').value"));
    let events = |id: &str| session.page_value(&format!("fieldEvents['{id}']"));
    for (id, text) in [
        ("in-text", "plain text"),
        ("in-search", "query"),
        ("in-email", "a@example.com"),
        ("in-url", "https://example.com/"),
        ("in-tel", "+1 555 0100"),
        ("in-password", "s3cret"),
        ("in-number", "42"),
        ("in-odd", "an unknown type is text"),
    ] {
        session.ok("fill", json!({ "selector": format!("#{id}"), "text": text }));
        assert_eq!(value(id), text, "{id}");
    }
    for (id, text, expected) in [
        ("in-date", "2024-05-17", "2024-05-17"),
        ("in-time", "13:45", "13:45"),
        ("in-datetime", "2024-05-17T13:45", "2024-05-17T13:45"),
        ("in-month", "2024-05", "2024-05"),
        ("in-week", "2024-W20", "2024-W20"),
        ("in-color", "#FF8800", "#ff8800"),
        ("in-range", "42", "10"),
    ] {
        let filled = session.ok("fill", json!({ "selector": format!("#{id}"), "text": text }));
        assert_eq!(value(id), expected, "{id}: {filled}");
        assert_eq!(events(id), json!(["input", "change"]), "{id} fired input and change");
    }
    // Malformed values are refused and leave the field as it was.
    for (id, text) in
        [("in-date", "17/05/2024"), ("in-date", "2024-02-30"), ("in-time", "25:00"), ("in-color", "orange"), ("in-range", "lots")]
    {
        let before = value(id);
        let error = session.fails("fill", json!({ "selector": format!("#{id}"), "text": text }), 400, "E_BAD_REQUEST");
        assert!(error["message"].as_str().unwrap().contains("valid"), "{error}");
        assert_eq!(value(id), before, "{id} kept its value after {text:?}");
    }
    let readonly = session.fails("fill", json!({ "selector": "#in-readonly", "text": "x", "timeout_ms": 100 }), 409, "E_DISABLED");
    assert_eq!(readonly["details"]["reason"], "readonly");
    assert_eq!(value("in-readonly"), "fixed");

    // select by position, too.
    let selected = session.ok("select", json!({ "selector": "#in-select", "index": 2 }));
    assert_eq!(selected["selected"][0]["value"], "c", "{selected}");
    session.fails("select", json!({ "selector": "#in-select", "index": 3 }), 404, "E_NOT_FOUND");
    session.fails("select", json!({ "selector": "#in-select", "index": 1, "value": "a" }), 400, "E_BAD_REQUEST");
}

#[test]
fn actions_wait_for_a_late_or_settling_element_and_give_up_on_one_that_never_stops() {
    let (_daemon, _fixtures, session) = on_fidelity_page();
    // Appears 600 ms after load; slides for 500 ms: both are clicked once ready.
    session.ok("click", json!({ "selector": "#late" }));
    session.ok("click", json!({ "selector": "#settling" }));
    assert_eq!(session.page_value("clicks"), json!(["late", "settling"]));

    let begun = Instant::now();
    let error = session.fails("click", json!({ "selector": "#spinner", "timeout_ms": 600 }), 504, "E_TIMEOUT");
    assert!(begun.elapsed() >= Duration::from_millis(600));
    assert_eq!(error["details"]["reason"], "not_stable", "{error}");
    assert!(error["message"].as_str().unwrap().contains("never stopped moving"), "{error}");
    // Moved by script frame by frame: no animation to see, but its box changes between frames,
    // found by selector or by a ref from a snapshot.
    let error = session.fails("click", json!({ "selector": "#drifter", "timeout_ms": 300 }), 504, "E_TIMEOUT");
    assert_eq!(error["details"]["reason"], "not_stable", "{error}");
    let snapshot = session.ok("snapshot", json!({}));
    let drifter = snapshot["nodes"].as_array().unwrap().iter().find(|node| node["name"] == "Drifter").unwrap()["ref"].clone();
    session.fails("click", json!({ "ref": drifter, "timeout_ms": 300 }), 504, "E_TIMEOUT");
    assert_eq!(session.page_value("clicks"), json!(["late", "settling"]), "no moving button was clicked");
}

#[test]
fn snapshots_bound_every_list_and_say_what_they_cut() {
    let (_daemon, _fixtures, session) = on_fidelity_page();
    let whole = session.ok("snapshot", json!({}));
    assert!(whole.get("omitted").is_none(), "nothing is cut by default: {}", whole["omitted"]);
    assert_eq!(whole["frames"].as_array().unwrap().len(), 4);

    let bounded = session.ok("snapshot", json!({ "max_items": 3, "max_chars": 60 }));
    for list in ["nodes", "headings", "landmarks", "forms", "tables", "frames", "dialogs", "live"] {
        assert!(bounded[list].as_array().unwrap().len() <= 3, "{list}: {}", bounded[list]);
    }
    let omitted = &bounded["omitted"];
    // Every frame is read (the fourth too, though cut from the list), so every heading counts.
    assert_eq!(omitted["headings"], whole["headings"].as_array().unwrap().len(), "{omitted}");
    assert_eq!(omitted["landmarks"], whole["landmarks"].as_array().unwrap().len(), "{omitted}");
    assert_eq!(omitted["frames"], 4, "{omitted}");
    assert_eq!(omitted["nodes"], whole["nodes"].as_array().unwrap().len(), "{omitted}");
    assert_eq!(bounded["items_truncated"], true);
    let text_chars: usize = bounded["text"].as_str().unwrap().chars().count()
        + bounded["frames"]
            .as_array()
            .unwrap()
            .iter()
            .map(|frame| frame["text"].as_str().map_or(0, |text| text.chars().count()))
            .sum::<usize>();
    assert!(text_chars <= 60, "the page text of every frame together stays within max_chars ({text_chars})");

    let text = session.ok("snapshot", json!({ "max_items": 3, "format": "text" }));
    let rendered = text["text"].as_str().unwrap();
    assert!(rendered.contains("lists cut at max_items: ") && rendered.contains("headings (of "), "{rendered}");
    assert_eq!(text["omitted"]["frames"], 4);
}
