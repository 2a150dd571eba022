//! The page tools in real WebKit: snapshot (refs, frames, shadow roots, redaction, text
//! format, changes), trusted actions and their errors, dialogs, extract, evaluate,
//! assert, run_steps and the seed's /actions form.

use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::*;

/// A session on the actions fixture, with a JSON snapshot taken.
fn on_actions_page() -> (Daemon, Fixtures, Session, Value) {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session_sized(1280, 800);
    session.navigate(&fixtures.url("/f/actions.html"));
    let snapshot = ok(&session, "snapshot", json!({}));
    (daemon, fixtures, session, snapshot)
}

/// Calls a tool and returns its result, asserting HTTP 200.
fn ok(session: &Session, tool: &str, input: Value) -> Value {
    let response = session.tool(tool, input.clone());
    assert_eq!(response.status, 200, "{tool} {input}: {}", response.body);
    response.body["result"].clone()
}

/// Calls a tool that must fail with `code`; returns the error.
fn fails(session: &Session, tool: &str, input: Value, status: u16, code: &str) -> Value {
    let response = session.tool(tool, input.clone());
    assert_eq!((response.status, response.code()), (status, code), "{tool} {input}: {}", response.body);
    response.body["error"].clone()
}

/// The ref of the first node with this role and name.
fn ref_of(snapshot: &Value, role: &str, name: &str) -> String {
    snapshot["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|node| node["role"] == role && node["name"] == name)
        .unwrap_or_else(|| panic!("no {role} {name:?} in {}", snapshot["nodes"]))["ref"]
        .as_str()
        .unwrap()
        .to_string()
}

fn page_value(session: &Session, expression: &str) -> Value {
    ok(session, "evaluate", json!({ "expression": expression }))["value"].clone()
}

fn status_text(session: &Session) -> String {
    page_value(session, "document.getElementById('status').textContent").as_str().unwrap_or("").to_string()
}

#[test]
fn snapshot_lists_what_an_agent_needs_with_refs_frames_shadow_roots_and_redaction() {
    let (_daemon, _fixtures, session, snapshot) = on_actions_page();
    assert_eq!(snapshot["title"], "actions");
    assert_eq!(snapshot["headings"][0]["text"], "Actions");
    let landmarks: Vec<&str> =
        snapshot["landmarks"].as_array().unwrap().iter().map(|landmark| landmark["role"].as_str().unwrap()).collect();
    assert!(landmarks.contains(&"navigation") && landmarks.contains(&"main"), "{landmarks:?}");
    assert_eq!(snapshot["tables"][0]["caption"], "Prices");
    assert_eq!(snapshot["tables"][0]["rows"], 3);
    assert_eq!(snapshot["forms"][0]["name"], "login");
    assert_eq!(snapshot["frames"][0]["url"].as_str().unwrap().split(':').nth(1), Some("//localhost"));

    let password = snapshot["nodes"].as_array().unwrap().iter().find(|node| node["name"] == "Password").unwrap();
    assert_eq!(password["value"], "[redacted]");
    assert_eq!(password["sensitive"], true);
    let user = snapshot["nodes"].as_array().unwrap().iter().find(|node| node["name"] == "User name").unwrap();
    assert_eq!(user["selector"], "#user");
    assert_eq!(user["required"], true);
    assert!(user["w"].as_f64().unwrap() > 0.0 && user["in_viewport"] == true);
    // Cross-origin frame content and an open shadow root are listed.
    let inner = snapshot["nodes"].as_array().unwrap().iter().find(|node| node["name"] == "Inner button").unwrap();
    assert_eq!(inner["frame"], "f1");
    ref_of(&snapshot, "textbox", "Shadow field");
    // Hidden elements are not.
    assert!(snapshot["nodes"].as_array().unwrap().iter().all(|node| node["name"] != "Hidden"));

    let text = ok(&session, "snapshot", json!({ "format": "text" }));
    let body = text["text"].as_str().unwrap();
    assert!(body.contains(&format!("{} button \"Save\"", ref_of(&snapshot, "button", "Save"))), "{body}");
    assert!(body.contains("value=[redacted] (sensitive)"));
    assert!(body.contains("\"Inner button\" @f1"));
    assert!(body.len() < snapshot.to_string().len() / 2, "text is the compact form");

    // Nothing changed: the changes form says so.
    let unchanged = ok(&session, "snapshot", json!({ "changes": true }));
    assert_eq!(unchanged["added"], json!([]));
    assert_eq!(unchanged["removed"], json!([]));
    let limited = ok(&session, "snapshot", json!({ "max_items": 3, "max_chars": 10 }));
    assert_eq!(limited["nodes"].as_array().unwrap().len(), 3);
    assert_eq!(limited["items_truncated"], true);
    assert_eq!(limited["text_truncated"], true);
}

#[test]
fn clicks_and_keys_are_trusted_events() {
    let (_daemon, _fixtures, session, snapshot) = on_actions_page();
    let save = ref_of(&snapshot, "button", "Save");
    let clicked = ok(&session, "click", json!({ "ref": save }));
    assert_eq!(clicked["target"]["name"], "Save");
    assert_eq!(clicked["navigated"], false);
    assert_eq!(status_text(&session), "Saved trusted 1");
    let log = page_value(&session, "window.log.join(' ')");
    for expected in ["mousedown:save:true", "mouseup:save:true", "click:save:true"] {
        assert!(log.as_str().unwrap().contains(expected), "{log}");
    }
    ok(&session, "click", json!({ "selector": "#save", "click_count": 2 }));
    assert!(page_value(&session, "window.log.join(' ')").as_str().unwrap().contains("dblclick:save:true"));

    // Typing, then Enter, in the user field.
    let filled = ok(&session, "fill", json!({ "ref": ref_of(&snapshot, "textbox", "User name"), "text": "alice" }));
    assert_eq!(filled["value"], "alice");
    assert!(page_value(&session, "window.log.join(' ')").as_str().unwrap().contains("input:user:true"));
    ok(&session, "press", json!({ "key": "Enter", "ref": ref_of(&snapshot, "textbox", "User name") }));
    assert_eq!(status_text(&session), "enter in user true");
    ok(&session, "fill", json!({ "selector": "#user", "text": " smith", "clear": false }));
    assert_eq!(page_value(&session, "document.getElementById('user').value"), "alice smith");
    ok(&session, "press", json!({ "key": "Meta+A", "selector": "#user" }));
    ok(&session, "press", json!({ "key": "Backspace" }));
    assert_eq!(page_value(&session, "document.getElementById('user').value"), "");
    ok(&session, "fill", json!({ "ref": ref_of(&snapshot, "textbox", "Notes"), "text": "line one" }));
    assert_eq!(page_value(&session, "document.getElementById('notes').value"), "line one");

    // Hover and a mouse drag.
    ok(&session, "hover", json!({ "selector": "#hover-target" }));
    assert!(page_value(&session, "window.log.join(' ')").as_str().unwrap().contains("mouseover:hover-target:true"));
    ok(&session, "drag", json!({ "from": { "selector": "#drag-box" }, "to": { "x": 400, "y": 200 } }));
    let dragged = page_value(&session, "window.dragged");
    assert_eq!(dragged["trusted"], true, "{dragged}");
    assert!(dragged["dx"].as_i64().unwrap() != 0 || dragged["dy"].as_i64().unwrap() != 0);
    // The moves of a drag say the button is down, as a hand's do; the release says it is up.
    let moves = dragged["move_buttons"].as_array().unwrap();
    assert!(!moves.is_empty() && moves.iter().all(|buttons| buttons == 1), "{dragged}");
    assert_eq!(dragged["up_buttons"], 0);

    fails(&session, "press", json!({ "key": "Meta+Q" }), 422, "E_UNSUPPORTED");
    fails(&session, "evaluate", json!({ "expression": "'a\u{0}b'" }), 400, "E_BAD_REQUEST");
    assert_eq!(page_value(&session, "1 + 1"), 2, "the engine survives bad input");
    fails(&session, "press", json!({ "key": "NoSuchKey" }), 400, "E_BAD_REQUEST");
}

#[test]
fn actions_refuse_covered_disabled_hidden_missing_and_stale_targets() {
    let (_daemon, _fixtures, session, snapshot) = on_actions_page();
    // Refusals come after the action's wait for actionability (timeout_ms), and name the reason.
    let begun = std::time::Instant::now();
    let covered = fails(&session, "click", json!({ "ref": ref_of(&snapshot, "button", "Under"), "timeout_ms": 400 }), 409, "E_COVERED");
    assert!(begun.elapsed() >= Duration::from_millis(400), "the click waited for the element to be uncovered");
    assert_eq!(covered["details"]["covered_by"], "div#overlay");
    let screenshot = covered["details"]["screenshot_path"].as_str().unwrap();
    let png = std::fs::read(screenshot).expect("the failure screenshot exists");
    assert_eq!(image::load_from_memory(&png).unwrap().width(), 1280);
    fails(&session, "click", json!({ "ref": ref_of(&snapshot, "button", "Disabled"), "timeout_ms": 100 }), 409, "E_DISABLED");
    fails(&session, "click", json!({ "selector": "#hidden-button", "timeout_ms": 100 }), 409, "E_NOT_VISIBLE");
    fails(&session, "click", json!({ "selector": "#hidden-button", "timeout_ms": 120001 }), 400, "E_BAD_REQUEST");
    fails(&session, "click", json!({ "selector": "#does-not-exist" }), 404, "E_NOT_FOUND");
    fails(&session, "click", json!({ "selector": "##" }), 400, "E_BAD_REQUEST");
    fails(&session, "click", json!({ "ref": "e99999" }), 409, "E_STALE_REF");
    fails(&session, "click", json!({ "ref": "nonsense" }), 400, "E_BAD_REQUEST");
    fails(&session, "click", json!({}), 400, "E_BAD_REQUEST");
    fails(&session, "click", json!({ "x": 5000, "y": 5 }), 400, "E_BAD_REQUEST");
    assert!(status_text(&session).is_empty(), "no refused click reached the page");
}

#[test]
fn refs_survive_unrelated_changes_and_go_stale_when_their_element_goes() {
    let (_daemon, _fixtures, session, snapshot) = on_actions_page();
    let save = ref_of(&snapshot, "button", "Save");
    ok(&session, "click", json!({ "ref": ref_of(&snapshot, "button", "Add item") }));
    let again = ok(&session, "snapshot", json!({}));
    assert_eq!(ref_of(&again, "button", "Save"), save, "same element, same ref");
    ok(&session, "click", json!({ "ref": save }));
    assert_eq!(status_text(&session), "Saved trusted 1");

    ok(&session, "click", json!({ "ref": ref_of(&snapshot, "button", "Remove save") }));
    let changes = ok(&session, "snapshot", json!({ "changes": true, "format": "text" }));
    assert!(changes["text"].as_str().unwrap().contains(&format!("- {save}")), "{}", changes["text"]);
    let stale = fails(&session, "click", json!({ "ref": save }), 409, "E_STALE_REF");
    assert!(stale["message"].as_str().unwrap().contains("snapshot"));
}

#[test]
fn a_cross_origin_frame_and_an_open_shadow_root_are_actionable() {
    let (_daemon, _fixtures, session, snapshot) = on_actions_page();
    ok(&session, "click", json!({ "ref": ref_of(&snapshot, "button", "Inner button") }));
    ok(&session, "fill", json!({ "ref": ref_of(&snapshot, "textbox", "Inner field"), "text": "in the frame" }));
    let after = ok(&session, "snapshot", json!({}));
    let text = after["text"].as_str().unwrap();
    assert!(text.contains("inner clicked true"), "the frame's text, in the page's: {text}");
    let inner_field = after["nodes"].as_array().unwrap().iter().find(|node| node["name"] == "Inner field").unwrap();
    assert_eq!(inner_field["value"], "in the frame");

    // A frame under an element of its parent: a click would land on that element.
    page_value(&session, "(() => { const frame = document.getElementById('cross').getBoundingClientRect(); const veil = document.createElement('div'); veil.id = 'veil'; veil.style.cssText = `position:absolute;left:${frame.left + scrollX}px;top:${frame.top + scrollY}px;width:${frame.width}px;height:${frame.height}px;background:rgba(0,0,0,.2)`; document.body.appendChild(veil); return true; })()");
    let covered =
        fails(&session, "click", json!({ "ref": ref_of(&snapshot, "button", "Inner button"), "timeout_ms": 200 }), 409, "E_COVERED");
    assert_eq!(covered["details"]["covered_by"], "div#veil", "{covered}");
    page_value(&session, "document.getElementById('veil').remove() || true");
    ok(&session, "click", json!({ "ref": ref_of(&snapshot, "button", "Inner button") }));

    ok(&session, "fill", json!({ "ref": ref_of(&snapshot, "textbox", "Shadow field"), "text": "shadowy" }));
    ok(&session, "click", json!({ "selector": "#shadow-host >>> #shadow-button" }));
    assert_eq!(status_text(&session), "shadow true shadowy");
}

#[test]
fn a_hostile_page_cannot_break_snapshot_or_actions() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/hostile.html"));
    let snapshot = ok(&session, "snapshot", json!({}));
    assert_eq!(snapshot["title"], "hostile");
    let button = ref_of(&snapshot, "button", "Still clickable");
    ok(&session, "click", json!({ "ref": button }));
    ok(&session, "fill", json!({ "selector": "#field", "text": "typed" }));
    let text = ok(&session, "snapshot", json!({ "format": "text" }));
    assert!(text["text"].as_str().unwrap().contains("clicked true"), "{}", text["text"]);
    assert!(text["text"].as_str().unwrap().contains("value=\"typed\""));
    assert_eq!(ok(&session, "extract", json!({ "selector": "#out" }))["value"], "clicked true");
}

#[test]
fn dialogs_never_hang_and_follow_the_policy() {
    let (_daemon, _fixtures, session, snapshot) = on_actions_page();
    let begun = std::time::Instant::now();
    let alert = ok(&session, "click", json!({ "ref": ref_of(&snapshot, "button", "Alert") }));
    assert!(begun.elapsed() < Duration::from_secs(5));
    assert_eq!(alert["dialogs"][0]["dialog_type"], "alert");
    assert_eq!(alert["dialogs"][0]["message"], "hello from alert");
    assert_eq!(status_text(&session), "after alert");

    ok(&session, "click", json!({ "ref": ref_of(&snapshot, "button", "Confirm") }));
    assert_eq!(status_text(&session), "confirm false", "confirm is dismissed by default");
    ok(&session, "dialog", json!({ "action": "accept" }));
    ok(&session, "click", json!({ "ref": ref_of(&snapshot, "button", "Confirm") }));
    assert_eq!(status_text(&session), "confirm true");
    ok(&session, "click", json!({ "ref": ref_of(&snapshot, "button", "Confirm") }));
    assert_eq!(status_text(&session), "confirm false", "a policy without persist applies once");

    ok(&session, "dialog", json!({ "action": "accept", "prompt_text": "Bob", "persist": true }));
    for _ in 0..2 {
        ok(&session, "click", json!({ "ref": ref_of(&snapshot, "button", "Prompt") }));
        assert_eq!(status_text(&session), "prompt Bob");
    }
    ok(&session, "dialog", json!({ "action": "default" }));
    ok(&session, "click", json!({ "ref": ref_of(&snapshot, "button", "Prompt") }));
    assert_eq!(status_text(&session), "prompt null");

    let popup = ok(&session, "click", json!({ "ref": ref_of(&snapshot, "button", "Open popup") }));
    assert!(popup["popups_blocked"][0]["url"].as_str().unwrap().ends_with("/f/hello.html"));
    let events = session.events(0);
    let dialogs = events["events"].as_array().unwrap().iter().filter(|event| event["type"] == "dialog").count();
    assert_eq!(dialogs, 7, "alert, three confirms, three prompts");
}

#[test]
fn select_check_focus_scroll_wait_and_navigation_by_click() {
    let (_daemon, fixtures, session, snapshot) = on_actions_page();
    let color = ref_of(&snapshot, "combobox", "color");
    assert_eq!(ok(&session, "select", json!({ "ref": color, "label": "Blue" }))["selected"][0]["value"], "b");
    assert_eq!(ok(&session, "select", json!({ "ref": color, "value": "g" }))["selected"][0]["label"], "Green");
    fails(&session, "select", json!({ "ref": color, "value": "purple" }), 404, "E_NOT_FOUND");
    fails(&session, "select", json!({ "selector": "#user", "value": "x" }), 400, "E_BAD_REQUEST");

    let agree = ref_of(&snapshot, "checkbox", "I agree");
    assert_eq!(ok(&session, "check", json!({ "ref": agree }))["checked"], true);
    assert_eq!(ok(&session, "check", json!({ "ref": agree }))["changed"], false);
    assert_eq!(ok(&session, "uncheck", json!({ "ref": agree }))["checked"], false);
    assert_eq!(page_value(&session, "document.getElementById('agree').checked"), false);

    assert_eq!(ok(&session, "focus", json!({ "selector": "#notes" }))["focused"], true);
    assert_eq!(page_value(&session, "document.activeElement.id"), "notes");
    let scrolled = ok(&session, "scroll", json!({ "dy": 500 }));
    assert_eq!(scrolled["scroll_y"], 500);
    let far = ok(&session, "scroll_into_view", json!({ "selector": "#far" }));
    assert_eq!(far["in_viewport"], true);
    let far_click = ok(&session, "click", json!({ "selector": "#far" }));
    assert_eq!(status_text(&session), "far clicked", "{far_click} {}", page_value(&session, "[scrollY, window.log.slice(-8)]"));

    ok(&session, "click", json!({ "selector": "#delayed" }));
    let waited = ok(&session, "wait_for", json!({ "selector": "#later", "timeout_ms": 3000 }));
    assert!(waited["waited_ms"].as_u64().unwrap() < 3000);
    ok(&session, "wait_for", json!({ "text": "arrived later" }));
    ok(&session, "wait_for", json!({ "selector": "#hidden-button", "state": "hidden" }));
    let timeout = fails(&session, "wait_for", json!({ "selector": "#never", "timeout_ms": 200 }), 504, "E_TIMEOUT");
    assert!(std::path::Path::new(timeout["details"]["screenshot_path"].as_str().unwrap()).exists());
    let slept = ok(&session, "sleep", json!({ "ms": 120 }));
    assert_eq!(slept["slept_ms"], 120);
    fails(&session, "sleep", json!({ "ms": 70000 }), 400, "E_BAD_REQUEST");

    let navigated = ok(&session, "click", json!({ "selector": "#nav-link" }));
    assert_eq!(navigated["navigated"], true, "{navigated}");
    assert_eq!(navigated["navigation"]["url"], fixtures.url("/f/hello.html"));
    assert_eq!(navigated["navigation"]["http_status"], 200);
}

#[test]
fn extract_and_evaluate_read_the_page() {
    let (_daemon, _fixtures, session, _snapshot) = on_actions_page();
    ok(&session, "fill", json!({ "selector": "#pass", "text": "hunter2" }));
    assert_eq!(ok(&session, "extract", json!({ "selector": "h1" }))["value"], "Actions");
    assert_eq!(
        ok(&session, "extract", json!({ "selector": "#user", "mode": "attribute", "attribute": "placeholder" }))["value"],
        "you@example.com"
    );
    assert_eq!(ok(&session, "extract", json!({ "selector": "#pass", "mode": "value" }))["value"], "[redacted]");
    assert!(ok(&session, "extract", json!({ "selector": "caption", "mode": "html" }))["value"].as_str().unwrap().starts_with("<caption>"));
    let cells = ok(&session, "extract", json!({ "selector": "td", "all": true, "max_chars": 2 }));
    assert_eq!(cells["values"], json!(["Te", "3", "Ca", "5"]));
    assert_eq!(cells["truncated"], true);
    fails(&session, "extract", json!({ "selector": ".nothing" }), 404, "E_NOT_FOUND");
    fails(&session, "extract", json!({ "selector": "h1", "mode": "attribute" }), 400, "E_BAD_REQUEST");

    assert_eq!(page_value(&session, "1 + 2"), 3);
    assert_eq!(page_value(&session, "({ a: [1, 'x'] })"), json!({ "a": [1, "x"] }));
    assert_eq!(page_value(&session, "Promise.resolve('later')"), "later");
    assert_eq!(page_value(&session, "const x = 20; return x * 2;"), 40);
    let thrown = fails(&session, "evaluate", json!({ "expression": "(() => { throw new Error('boom') })()" }), 422, "E_SCRIPT_ERROR");
    assert!(thrown["message"].as_str().unwrap().contains("boom"));
}

#[test]
fn assert_is_a_verdict_with_checks_and_a_screenshot() {
    let (_daemon, _fixtures, session, _snapshot) = on_actions_page();
    ok(&session, "fill", json!({ "selector": "#user", "text": "alice" }));
    ok(&session, "fill", json!({ "selector": "#pass", "text": "hunter2" }));
    let passed = ok(
        &session,
        "assert",
        json!({ "visible": "#save", "hidden": "#hidden-button", "text": "Prices", "url": "/f/actions", "timeout_ms": 1000 }),
    );
    assert_eq!((passed["ok"].clone(), passed["passed"].clone()), (json!(true), json!(true)));
    assert_eq!(passed["checks"].as_array().unwrap().len(), 4);
    let counted = ok(&session, "assert", json!({ "selector": "td", "count": 4 }));
    assert_eq!(counted["passed"], true);
    let value = ok(&session, "assert", json!({ "selector": "#user", "value": "alice" }));
    assert_eq!(value["passed"], true);

    let response = session.tool("assert", json!({ "visible": "#hidden-button", "selector": "#pass", "value": "wrong", "timeout_ms": 300 }));
    assert_eq!(response.status, 200, "a failed assertion is a verdict, not an HTTP error");
    let failed = &response.body["result"];
    assert_eq!((failed["ok"].clone(), failed["passed"].clone()), (json!(false), json!(false)));
    assert_eq!(failed["error"]["code"], "E_ASSERTION_FAILED");
    assert!(failed["error"]["message"].as_str().unwrap().starts_with("E_ASSERTION_FAILED"));
    assert_eq!(
        failed["checks"][0],
        json!({ "kind": "visible", "selector": "#hidden-button", "expected": true, "actual": false, "ok": false })
    );
    assert_eq!(failed["checks"][1]["actual"], "[redacted]");
    assert!(!response.text.contains("hunter2"));
    assert!(failed["waited_ms"].as_u64().unwrap() >= 300);
    let path = failed["screenshot"].as_str().unwrap();
    assert_eq!(failed["error"]["details"]["screenshotPath"], path);
    assert!(std::path::Path::new(path).exists());
    fails(&session, "assert", json!({}), 400, "E_BAD_REQUEST");
    fails(&session, "assert", json!({ "count": 2 }), 400, "E_BAD_REQUEST");
}

#[test]
fn run_steps_runs_in_order_stops_on_failure_and_writes_a_report() {
    let (_daemon, _fixtures, session, snapshot) = on_actions_page();
    let save = ref_of(&snapshot, "button", "Save");
    let run = ok(
        &session,
        "run_steps",
        json!({ "steps": [
        { "type": "fill", "selector": "#pass", "text": "hunter2" },
        { "type": "click", "ref": save },
        { "type": "assert", "text": "Saved trusted", "timeout_ms": 1000 },
        { "type": "assert", "text": "not on the page", "timeout_ms": 200 },
        { "type": "click", "selector": "#adder" },
    ] }),
    );
    assert_eq!(run["ok"], false);
    assert_eq!(run["step_count"], 4, "stopped at the failed assert");
    assert_eq!(run["failed_step"], 3);
    assert_eq!(run["steps"][2]["ok"], true);
    let report = std::fs::read_to_string(run["report_path"].as_str().unwrap()).unwrap();
    assert!(report.contains("\"failed_step\": 3"));
    assert!(!report.contains("hunter2"), "typed text never reaches the report");
    assert_eq!(page_value(&session, "document.querySelectorAll('#list li').length"), 0);

    let all = ok(
        &session,
        "run_steps",
        json!({ "stop_on_failure": false, "steps": [
        { "type": "click", "selector": "#missing" },
        { "type": "click", "selector": "#adder" },
    ] }),
    );
    assert_eq!((all["ok"].clone(), all["step_count"].clone(), all["failed_step"].clone()), (json!(false), json!(2), json!(0)));
    assert_eq!(all["steps"][0]["error"]["code"], "E_NOT_FOUND");
    assert_eq!(page_value(&session, "document.querySelectorAll('#list li').length"), 1);

    fails(&session, "run_steps", json!({ "steps": [{ "type": "run_steps", "steps": [] }] }), 400, "E_BAD_REQUEST");
    fails(&session, "run_steps", json!({ "steps": [{ "type": "teleport" }] }), 404, "E_UNKNOWN_TOOL");
    fails(&session, "run_steps", json!({ "steps": [{ "selector": "#x" }] }), 400, "E_BAD_REQUEST");
}

#[test]
fn the_seed_action_form_reaches_the_same_tools() {
    let (_daemon, _fixtures, session, _snapshot) = on_actions_page();
    let response = session.post("/actions", json!({ "action": { "type": "fill", "selector": "#user", "text": "hello" } }));
    assert_eq!(response.status, 200, "{}", response.body);
    assert_eq!(response.body["tool"], "fill");
    assert_eq!(page_value(&session, "document.getElementById('user').value"), "hello");
    let response = session.post("/actions", json!({ "action": { "selector": "#user" } }));
    assert_eq!((response.status, response.code()), (400, "E_BAD_REQUEST"));
    let actions: Vec<String> = session.events(0)["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| event["type"] == "action")
        .map(|event| event["tool"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(actions[..3], ["navigate", "snapshot", "fill"]);
}

#[test]
fn a_focused_field_does_not_pull_the_page_back_under_a_later_click() {
    // WebKit's plain focus() scrolls to the element at some later layout: after the agent
    // scrolled elsewhere, and possibly under its next click.
    let (_daemon, _fixtures, session, _snapshot) = on_actions_page();
    assert_eq!(ok(&session, "focus", json!({ "selector": "#notes" }))["focused"], true);
    let far = ok(&session, "scroll_into_view", json!({ "selector": "#far" }));
    assert_eq!(far["in_viewport"], true);
    let scrolled = page_value(&session, "scrollY");
    std::thread::sleep(std::time::Duration::from_millis(400));
    assert_eq!(page_value(&session, "scrollY"), scrolled, "the page scrolled back to the focused field");
    ok(&session, "click", json!({ "selector": "#far" }));
    assert_eq!(status_text(&session), "far clicked");
}

#[test]
fn html5_drag_and_drop_plays_in_the_hidden_page_and_no_native_drag_leaves_it() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session_sized(1024, 768);
    session.navigate(&fixtures.url("/f/dnd.html"));
    let parent = |session: &Session| page_value(session, "document.getElementById('card').parentElement.id");

    // Onto a zone that accepts it: the page's own handlers move the card, with the data
    // its dragstart set.
    let moved = ok(&session, "drag", json!({ "from": { "selector": "#card" }, "to": { "selector": "#done" } }));
    assert_eq!((moved["html5"].clone(), moved["dropped"].clone()), (json!(true), json!(true)), "{moved}");
    assert_eq!(moved["drop_target"], "div#done \"Done\"");
    assert_eq!(parent(&session), "done");
    assert_eq!(page_value(&session, "window.dropped.data"), "card:card");
    let log = page_value(&session, "window.log.map((entry) => entry.split(':').slice(0, 2).join(':'))");
    let kinds: Vec<&str> = log.as_array().unwrap().iter().map(|entry| entry.as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"dragstart:card"));
    assert_eq!(&kinds[kinds.len() - 3..], ["dragover:done", "drop:done", "dragend:card"]);
    assert!(kinds.contains(&"dragenter:done"));

    // Onto a zone that refuses drops (no dragover cancelled): no drop, the card stays.
    let refused = ok(&session, "drag", json!({ "from": { "selector": "#card" }, "to": { "selector": "#closed" } }));
    assert_eq!((refused["started"].clone(), refused["dropped"].clone()), (json!(true), json!(false)), "{refused}");
    assert_eq!(parent(&session), "done");
    assert_eq!(page_value(&session, "window.log.slice(-1)[0]"), "dragend:card:false");

    // Selected text dragged onto a field goes in, as a person's drop would. No native drag
    // starts (it would work on the real screen's pointer): no window shows.
    page_value(&session, "(() => { const range = document.createRange(); range.selectNodeContents(document.querySelector('h1')); getSelection().removeAllRanges(); getSelection().addRange(range); return true; })()");
    let on_text = page_value(&session, "(() => { const box = getSelection().getRangeAt(0).getBoundingClientRect(); return { x: box.left + box.width / 2, y: box.top + box.height / 2 }; })()");
    let text = ok(&session, "drag", json!({ "from": on_text, "to": { "selector": "#note" } }));
    assert_eq!((text["selection"].clone(), text["dropped"].clone()), (json!(true), json!(true)), "{text}");
    assert_eq!(page_value(&session, "document.getElementById('note').value"), "Board");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(mapped_windows_of(daemon.pid), Vec::<String>::new());
    assert!(!session.events(0).to_string().contains("native_drag_cancelled"));
    ok(&session, "click", json!({ "selector": "#ping" }));
    assert_eq!(page_value(&session, "window.pinged"), true);
}

#[test]
fn calls_on_one_tab_take_turns_in_arrival_order() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/hello.html"));
    // A navigation to a page served 1.5 s late, and a click sent while it loads: the click
    // waits its turn and lands on the new page (it would find no #arrived on the old one).
    let navigating = {
        let session = session.clone();
        let url = fixtures.url("/delayed/arrived.html?ms=1500");
        std::thread::spawn(move || session.post("/navigate", json!({ "url": url })))
    };
    std::thread::sleep(Duration::from_millis(300));
    let begun = std::time::Instant::now();
    let clicked = session.tool("click", json!({ "selector": "#arrived" }));
    let waited = begun.elapsed();
    let navigated = navigating.join().unwrap();
    assert_eq!(navigated.status, 200, "{}", navigated.body);
    assert_eq!(clicked.status, 200, "the click did not wait for the navigation: {}", clicked.body);
    assert!(waited >= Duration::from_millis(900), "the click ran after {waited:?}, during the navigation");
    assert_eq!(session.title(), "clicked on the new page");
    assert!(clicked.body["seq"].as_u64().unwrap() > navigated.body["seq"].as_u64().unwrap(), "the click's turn came second");
    assert_eq!(clicked.body["tab"], navigated.body["tab"]);
}
