//! Locators (issue 49, point 2): `find` by role and name, text, label, placeholder, alt,
//! title and test id, with nth, across an iframe and an open shadow root; its refs work in
//! every action; a locator in place of a ref in `click` and `fill`; one that matches
//! several elements where one is needed is `E_AMBIGUOUS`, listing them. What each click
//! reached is what the page saw (`window.clicked`).

use serde_json::{json, Value};

use crate::harness::*;

fn clicked(session: &Session) -> Value {
    session.page_value("window.clicked")
}

#[test]
fn find_role_button_name_save_click_clicks_save_of_three_buttons_on_the_command_line() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let dir = TempDir::new("cli-find");
    daemon.cli_text_in(&dir.0, &["navigate", &fixtures.url("/f/find.html")]);

    // Save, Save draft and Cancel: "Save" is the button named Save (the whole name wins
    // over a part of one), and the page saw that one clicked, trusted.
    let said = daemon.cli_text_in(&dir.0, &["find", "role", "button", "--name", "Save", "click"]);
    assert!(said.starts_with("ok"), "{said}");
    // A part of a name, in any case, when no name is whole.
    daemon.cli_text_in(&dir.0, &["find", "role", "button", "--name", "DRAFT", "click"]);
    daemon.cli_text_in(&dir.0, &["find", "label", "Email", "fill", "me@x.test"]);
    let found = daemon.cli_in(&dir.0, &["find", "testid", "item", "--last"]);
    assert_eq!((found["count"].as_u64(), found["matches"][0]["name"].as_str()), (Some(3), Some("Item three")), "{found}");
    daemon.cli_text_in(&dir.0, &["find", "text", "Sign in", "click"]);

    // The page saw it all, through the CLI's own session (`eval` reads the page's world).
    let clicks = daemon.cli_in(&dir.0, &["eval", "JSON.stringify([window.clicked, document.getElementById('email').value])"]);
    assert_eq!(clicks["value"], json!(r#"[["save","save draft","sign in"],"me@x.test"]"#).as_str().unwrap(), "{clicks}");

    // Ambiguous: several buttons have "sav" in their names and none is whole.
    let output = daemon.cli_output_in(&dir.0, &["find", "role", "button", "--name", "sav", "click"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success() && stderr.contains("E_AMBIGUOUS"), "{stderr}");
    assert!(stderr.contains("\"Save\"") && stderr.contains("\"Save draft\""), "the error lists the matches: {stderr}");
    // `--help` and completions name find and its action words.
    assert!(daemon.cli_text_in(&dir.0, &["find", "--help"]).contains("fill"));
    let completions = std::process::Command::new(malo_binary()).args(["completions", "bash"]).output().unwrap();
    let completions = String::from_utf8(completions.stdout).unwrap();
    assert!(completions.contains("find") && completions.contains("batch") && completions.contains("init-script"));
    daemon.cli_text_in(&dir.0, &["close"]);
}

#[test]
fn find_answers_refs_by_every_kind_in_frames_and_shadow_roots_and_actions_take_locators() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent").session();
    session.navigate(&fixtures.url("/f/find.html"));

    let find = |locator: Value| session.ok("find", locator);
    let names = |found: &Value| -> Vec<String> {
        found["matches"].as_array().unwrap().iter().map(|found| found["name"].as_str().unwrap().to_string()).collect()
    };
    // Every button of the page, its shadow root and its frame, in document order; the
    // hidden one is out of the accessibility tree.
    let buttons = find(json!({ "role": "button" }));
    assert_eq!(names(&buttons), ["Save", "Save draft", "Cancel", "Shadow action", "Frame button"], "{buttons}");
    assert_eq!(buttons["matches"][4]["frame"], "f1", "{buttons}");
    assert!(buttons["matches"][0]["frame"].is_null());
    assert_eq!(names(&find(json!({ "placeholder": "search" }))), ["Search the docs"]);
    assert_eq!(find(json!({ "alt": "logo" }))["matches"][0]["role"], "img");
    assert_eq!(find(json!({ "title": "Help text", "exact": true }))["count"], 1);
    assert_eq!(find(json!({ "title": "help text", "exact": true }))["count"], 0, "exact is case-sensitive");
    assert_eq!(find(json!({ "label": "Comment" }))["matches"][0]["role"], "textbox");
    assert_eq!(names(&find(json!({ "testid": "item", "nth": 1 }))), ["Item two"]);
    assert_eq!(find(json!({ "testid": "hidden-thing" }))["matches"][0]["visible"], false);

    // The refs find answers work in every action, as a snapshot's do.
    let shadow = find(json!({ "role": "button", "name": "Shadow action" }));
    session.ok("click", json!({ "ref": shadow["matches"][0]["ref"] }));
    let frame_field = find(json!({ "label": "Frame field" }));
    assert_eq!(frame_field["matches"][0]["frame"], "f1", "{frame_field}");
    session.ok("fill", json!({ "ref": frame_field["matches"][0]["ref"], "text": "in the frame" }));

    // A locator in place of a ref: click and fill find their one element themselves.
    session.ok("click", json!({ "locator": { "role": "button", "name": "Frame button" } }));
    session.ok("click", json!({ "locator": { "testid": "item", "nth": -1 } }));
    session.ok("fill", json!({ "locator": { "placeholder": "Search the docs" }, "text": "locators" }));
    assert_eq!(clicked(&session), json!(["shadow", "frame button", "item 3"]));
    assert_eq!(session.page_value("[window.typed, document.getElementById('search').value]"), json!(["in the frame", "locators"]));

    // Several matches where one is needed: E_AMBIGUOUS with the matches; none: E_NOT_FOUND.
    let error = session.fails("click", json!({ "locator": { "testid": "item" } }), 409, "E_AMBIGUOUS");
    assert_eq!(error["details"]["count"], 3, "{error}");
    let listed: Vec<&str> = error["details"]["matches"].as_array().unwrap().iter().map(|found| found["name"].as_str().unwrap()).collect();
    assert_eq!(listed, ["Item one", "Item two", "Item three"], "{error}");
    assert!(error["details"]["matches"][0]["ref"].as_str().unwrap().starts_with('e'), "{error}");
    session.fails("click", json!({ "locator": { "text": "no such words" } }), 404, "E_NOT_FOUND");
    session.fails("click", json!({ "locator": { "testid": "item", "nth": 5 } }), 404, "E_NOT_FOUND");
    assert_eq!(clicked(&session), json!(["shadow", "frame button", "item 3"]), "nothing else was clicked");

    // Bad locators name their field.
    let error = session.fails("find", json!({ "text": "a", "label": "b" }), 400, "E_BAD_REQUEST");
    assert_eq!(error["details"]["field"], "label", "{error}");
    let error = session.fails("click", json!({ "locator": { "name": "Save" } }), 400, "E_BAD_REQUEST");
    assert_eq!(error["details"]["field"], "locator", "{error}");
    let error = session.fails("click", json!({ "ref": "e1", "locator": { "text": "Save" } }), 400, "E_BAD_REQUEST");
    assert_eq!(error["details"]["field"], "ref", "{error}");
    session.fails("find", json!({ "role": "button", "colour": "red" }), 400, "E_BAD_REQUEST");
}
