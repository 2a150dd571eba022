//! Actionability: an action waits for its element (retrying after 0, 20, 100, 100, then
//! every 500 ms), fails with the last refusal at its timeout, and fails at once on a ref
//! that went stale or a selector that matches nothing.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::time::Instant;

use super::{element, with, Bench};
use crate::engine::agent::AgentOp;
use crate::engine::fake::{in_turn, Asked};
use crate::engine::{InputEvent, Modifiers, MouseButton};
use crate::error::{Error, ErrorCode};

/// The mouse events of one left click at (x, y).
fn left_click(x: f64, y: f64) -> Vec<InputEvent> {
    let (button, modifiers) = (MouseButton::Left, Modifiers::default());
    vec![
        InputEvent::MouseMove { x, y, modifiers },
        InputEvent::MouseDown { x, y, button, modifiers },
        InputEvent::MouseUp { x, y, button, modifiers },
    ]
}

#[tokio::test(start_paused = true)]
async fn a_click_waits_until_its_element_is_visible_still_and_enabled() {
    let bench = Bench::new().await;
    let save = element(5, "Save", 200.0, 150.0);
    bench.page.on(
        AgentOp::Locate,
        in_turn([
            with(save.clone(), json!({ "visible": false })),
            with(save.clone(), json!({ "moving": true })),
            with(save.clone(), json!({ "disabled": true })),
            save,
        ]),
    );
    let begun = Instant::now();
    let result = bench.call("click", json!({ "selector": "#save" })).await.unwrap();
    assert_eq!(result["target"], json!({ "ref": "e5", "role": "button", "name": "Save" }));
    assert_eq!(result["ok"], true);
    // Three refusals, retried after 0, 20 and 100 ms; the fourth look finds it actionable.
    assert_eq!(begun.elapsed(), Duration::from_millis(120));
    let locates = bench.page.calls_of(AgentOp::Locate);
    assert_eq!(locates.len(), 4);
    for (frame, args) in &locates {
        assert!(frame.is_empty(), "a selector is looked up in the main frame");
        assert_eq!((&args["selector"], &args["scroll"], &args["stable"]), (&json!("#save"), &json!(true), &json!(true)));
    }
    assert_eq!(bench.page.input_events(), left_click(200.0, 150.0), "the click lands at the element's centre, once");
}

#[tokio::test(start_paused = true)]
async fn an_element_that_never_becomes_actionable_fails_with_the_last_refusal_at_the_timeout() {
    let bench = Bench::new().await;
    let save = element(5, "Save", 200.0, 150.0);
    let hidden = with(save.clone(), json!({ "visible": false }));
    let covered = with(save, json!({ "covered_by": "div#cookie-banner" }));
    bench.page.on(AgentOp::Locate, in_turn([hidden, covered]));
    let begun = Instant::now();
    let error = bench.call("click", json!({ "ref": "e5", "timeout_ms": 1000 })).await.unwrap_err();
    assert_eq!(begun.elapsed(), Duration::from_millis(1000), "it waits the whole timeout, and not longer");
    assert_eq!(error.code, ErrorCode::Covered, "{}", error.message);
    assert_eq!(error.message, "the element e5 (button \"Save\") is covered by div#cookie-banner; a click would land there");
    assert_eq!(error.details["covered_by"], "div#cookie-banner");
    assert_eq!(error.details["target"]["ref"], "e5");
    assert!(bench.page.calls_of(AgentOp::Locate).len() > 2, "it looked again and again");
    assert_eq!(bench.page.input_events(), Vec::new(), "nothing was clicked");
    assert!(bench.page.asked().contains(&Asked::Other("screenshot")), "a failed action asks for a screenshot of the moment");
}

#[tokio::test(start_paused = true)]
async fn an_element_that_never_holds_still_times_out_saying_so() {
    let bench = Bench::new().await;
    bench.page.on(AgentOp::Locate, in_turn([with(element(5, "Save", 200.0, 150.0), json!({ "moving": true }))]));
    let error = bench.call("hover", json!({ "ref": "e5", "timeout_ms": 300 })).await.unwrap_err();
    assert_eq!(error.code, ErrorCode::Timeout, "{}", error.message);
    assert!(error.message.contains("never stopped moving"), "{}", error.message);
    assert_eq!(error.details["reason"], "not_stable");
    assert_eq!(bench.page.input_events(), Vec::new());
}

#[tokio::test(start_paused = true)]
async fn a_stale_ref_or_a_selector_that_matches_nothing_fails_at_once() {
    let cases: [(Value, ErrorCode, &str); 2] = [
        (json!({ "ref": "e9" }), ErrorCode::StaleRef, "the element of ref e9 is gone (the page changed); take a new snapshot"),
        (json!({ "selector": "#gone" }), ErrorCode::NotFound, "no element matches \"#gone\""),
    ];
    for (target, code, message) in cases {
        let bench = Bench::new().await;
        // What the agent throws, as the engine hands it on.
        bench.page.on(AgentOp::Locate, move |_, _| Err(Error::new(code, message)));
        let begun = Instant::now();
        let error = bench.call("click", with(target.clone(), json!({ "timeout_ms": 5000 }))).await.unwrap_err();
        assert_eq!((error.code, error.message.as_str()), (code, message), "{target}");
        assert_eq!(begun.elapsed(), Duration::ZERO, "{target}: no retry");
        let locates = bench.page.calls_of(AgentOp::Locate);
        assert_eq!(locates.len(), 1, "{target}");
        if code == ErrorCode::StaleRef {
            assert_eq!(locates[0].1["ref"], 9, "e9 is ref 9 to the agent");
        }
        assert_eq!(bench.page.input_events(), Vec::new(), "{target}: nothing was clicked");
    }
}
