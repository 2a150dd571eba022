//! Snapshot frame merging: each frame's snapshot is merged into the main one (boxes in
//! top-page coordinates, items marked with their frame), refs of every frame stay usable,
//! and a frame that fails is named with its error while the rest still answers.

use serde_json::{json, Value};

use super::{element, Bench};
use crate::engine::agent::AgentOp;
use crate::engine::fake::in_turn;
use crate::engine::{InputEvent, Modifiers, MouseButton};
use crate::error::{Error, ErrorCode};

/// The main frame: a button, and an iframe (frame 1) whose content starts at (100, 200).
fn main_frame() -> Value {
    json!({
        "url": "https://shop.example/", "title": "Shop", "text": "Checkout",
        "viewport": { "width": 1280, "height": 800, "scroll_x": 0, "scroll_y": 0, "document_width": 1280, "document_height": 800 },
        "nodes": [{ "ref": 1, "role": "button", "name": "Pay", "x": 10, "y": 20, "w": 50, "h": 20 }],
        "headings": [{ "level": 1, "text": "Checkout" }],
        "landmarks": [], "forms": [], "tables": [], "dialogs": [], "live": [],
        "frames": [{ "frame": 1, "name": "card", "src": "https://pay.example/card", "x": 100, "y": 200, "w": 300, "h": 150 }],
        "totals": { "nodes": 1, "headings": 1, "frames": 1 },
        "next_ref": 2,
    })
}

/// Frame 1: a card field in a form, and an iframe (frame 3) at (10, 40) of its content.
fn card_frame() -> Value {
    json!({
        "url": "https://pay.example/card", "title": "Card", "text": "Card details",
        "nodes": [{ "ref": 2, "role": "textbox", "name": "Card number", "x": 5, "y": 6, "w": 200, "h": 20 }],
        "headings": [{ "level": 2, "text": "Card" }],
        "forms": [{ "method": "post", "action": "/pay", "fields": [2] }],
        "frames": [{ "frame": 3, "name": "cvc", "src": "https://pay.example/cvc", "x": 10, "y": 40, "w": 50, "h": 20 }],
        "totals": { "nodes": 1, "headings": 1, "forms": 1, "frames": 1 },
        "next_ref": 3,
    })
}

/// Frame 1 > 3: one field.
fn cvc_frame() -> Value {
    json!({
        "url": "https://pay.example/cvc", "title": "CVC", "text": "",
        "nodes": [{ "ref": 3, "role": "textbox", "name": "CVC", "x": 1, "y": 2, "w": 40, "h": 16 }],
        "frames": [], "totals": { "nodes": 1 }, "next_ref": 4,
    })
}

/// A page whose snapshot, per frame path, is `main_frame`, `card_frame` and `cvc_frame`.
fn shop_page(bench: &Bench) {
    bench.page.on(AgentOp::Snapshot, |frame, _| match frame {
        [] => Ok(main_frame()),
        [1] => Ok(card_frame()),
        [1, 3] => Ok(cvc_frame()),
        other => Err(Error::internal(format!("no frame {other:?}"))),
    });
}

#[tokio::test(start_paused = true)]
async fn child_frame_snapshots_are_merged_into_the_main_one() {
    let bench = Bench::new().await;
    shop_page(&bench);
    let page = bench.call("snapshot", json!({ "max_chars": 30 })).await.unwrap();

    let nodes: Vec<(&Value, &Value, &Value, &Value)> =
        page["nodes"].as_array().unwrap().iter().map(|node| (&node["ref"], &node["x"], &node["y"], &node["frame"])).collect();
    let expected = [
        (json!("e1"), json!(10), json!(20), Value::Null),
        (json!("e2"), json!(105.0), json!(206.0), json!("f1")),
        (json!("e3"), json!(111.0), json!(242.0), json!("f1.3")),
    ];
    let expected: Vec<(&Value, &Value, &Value, &Value)> = expected.iter().map(|(a, b, c, d)| (a, b, c, d)).collect();
    assert_eq!(nodes, expected, "refs as the API spells them, boxes in top-page coordinates, each marked with its frame");
    assert_eq!(page["interactive_count"], 3);
    assert_eq!(
        page["frames"],
        json!([
            { "frame": "f1", "name": "card", "src": "https://pay.example/card", "x": 100.0, "y": 200.0, "w": 300, "h": 150,
              "url": "https://pay.example/card", "title": "Card", "text": "Card details" },
            { "frame": "f1.3", "name": "cvc", "src": "https://pay.example/cvc", "x": 110.0, "y": 240.0, "w": 50, "h": 20,
              "url": "https://pay.example/cvc", "title": "CVC", "text": "" },
        ])
    );
    assert_eq!(page["headings"], json!([{ "level": 1, "text": "Checkout" }, { "level": 2, "text": "Card", "frame": "f1" }]));
    assert_eq!(page["forms"], json!([{ "method": "post", "action": "/pay", "fields": ["e2"], "frame": "f1" }]));
    assert_eq!((page.get("totals"), page.get("next_ref"), &page["items_truncated"]), (None, None, &json!(false)));
    // The frames share what the main frame left of max_chars (30 - 8, then - 12).
    let asked: Vec<(Vec<u32>, Value)> =
        bench.page.calls_of(AgentOp::Snapshot).into_iter().map(|(frame, args)| (frame, args["max_chars"].clone())).collect();
    assert_eq!(asked, [(vec![], json!(30)), (vec![1], json!(22)), (vec![1, 3], json!(10))]);

    let text = bench.call("snapshot", json!({ "format": "text" })).await.unwrap();
    let text = text["text"].as_str().unwrap();
    for line in [
        "frame f1 \"Card\" <https://pay.example/card>",
        "frame f1.3 \"CVC\" <https://pay.example/cvc>",
        "interactive (3):",
        "e1 button \"Pay\"",
        "e2 textbox \"Card number\" @f1",
        "e3 textbox \"CVC\" @f1.3",
    ] {
        assert!(text.lines().any(|shown| shown == line), "{line:?} in:\n{text}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_ref_in_a_nested_frame_is_clicked_through_its_frames() {
    let bench = Bench::new().await;
    shop_page(&bench);
    bench.call("snapshot", json!({})).await.unwrap();
    bench.page.on(AgentOp::FrameBox, |frame, args| match (frame, &args["frame"]) {
        ([], number) if number == 1 => Ok(json!({ "x": 100, "y": 200, "w": 300, "h": 150 })),
        ([1], number) if number == 3 => Ok(json!({ "x": 10, "y": 40, "w": 50, "h": 20 })),
        other => Err(Error::internal(format!("no frame {other:?}"))),
    });
    bench.page.on(AgentOp::FrameHit, in_turn([json!({ "covered_by": null })]));
    bench.page.on(AgentOp::Locate, in_turn([element(3, "CVC", 1.0, 2.0)]));
    bench.call("click", json!({ "ref": "e3" })).await.unwrap();

    let locates = bench.page.calls_of(AgentOp::Locate);
    assert_eq!(locates.len(), 1);
    assert_eq!((locates[0].0.clone(), &locates[0].1["ref"]), (vec![1, 3], &json!(3)), "e3 is looked up in its own frame");
    let hits: Vec<(Vec<u32>, Value)> = bench.page.calls_of(AgentOp::FrameHit);
    let hits: Vec<(Vec<u32>, &Value, &Value)> = hits.iter().map(|(frame, args)| (frame.clone(), &args["x"], &args["y"])).collect();
    assert_eq!(
        hits,
        [(vec![1], &json!(11.0), &json!(42.0)), (vec![], &json!(111.0), &json!(242.0))],
        "each parent is asked what the point reaches"
    );
    let (x, y, button, modifiers) = (111.0, 242.0, MouseButton::Left, Modifiers::default());
    assert_eq!(
        bench.page.input_events(),
        [
            InputEvent::MouseMove { x, y, modifiers },
            InputEvent::MouseDown { x, y, button, modifiers },
            InputEvent::MouseUp { x, y, button, modifiers }
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_frame_that_does_not_answer_is_named_and_the_rest_still_answers() {
    let bench = Bench::new().await;
    let mut main = main_frame();
    main["frames"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "frame": 2, "name": "ads", "src": "https://ads.example/", "x": 0, "y": 700, "w": 728, "h": 90 }));
    let ads = json!({ "url": "https://ads.example/", "title": "Ad", "text": "Buy",
        "nodes": [{ "ref": 4, "role": "link", "name": "Buy now", "x": 3, "y": 4, "w": 60, "h": 12 }], "frames": [] });
    bench.page.on(AgentOp::Snapshot, move |frame, _| match frame {
        [] => Ok(main.clone()),
        // What the engine answers when a child frame's agent does not answer in time.
        [1] => Err(Error::new(ErrorCode::Timeout, "the frame did not answer; it may be navigating or blocked")),
        [2] => Ok(ads.clone()),
        other => Err(Error::internal(format!("no frame {other:?}"))),
    });
    let page = bench.call("snapshot", json!({})).await.unwrap();
    assert_eq!(
        page["frames"],
        json!([
            { "frame": "f1", "name": "card", "src": "https://pay.example/card", "x": 100.0, "y": 200.0, "w": 300, "h": 150, "error": "E_TIMEOUT" },
            { "frame": "f2", "name": "ads", "src": "https://ads.example/", "x": 0.0, "y": 700.0, "w": 728, "h": 90,
              "url": "https://ads.example/", "title": "Ad", "text": "Buy" },
        ])
    );
    let refs: Vec<&Value> = page["nodes"].as_array().unwrap().iter().map(|node| &node["ref"]).collect();
    assert_eq!(refs, [&json!("e1"), &json!("e4")], "the main frame's elements and the other frame's");
    assert_eq!((&page["url"], &page["title"]), (&json!("https://shop.example/"), &json!("Shop")));

    let text = bench.call("snapshot", json!({ "format": "text" })).await.unwrap();
    let text = text["text"].as_str().unwrap();
    assert!(text.lines().any(|line| line == "frame f1 \"card\" <https://pay.example/card> (E_TIMEOUT)"), "{text}");
    assert!(text.lines().any(|line| line == "e4 link \"Buy now\" @f2"), "{text}");
}
