//! Snapshot frame merging: each frame's content is put in its frame's place in the main
//! one (boxes in top-page coordinates, items marked with their frame), refs of every frame
//! stay usable, and a frame that fails is named with its error while the rest still answers.

use serde_json::{json, Value};

use super::{element, Bench};
use crate::engine::agent::AgentOp;
use crate::engine::fake::in_turn;
use crate::engine::{InputEvent, Modifiers, MouseButton};
use crate::error::{Error, ErrorCode};

/// The main frame: a heading, a button, an iframe (frame 1, ref 5) whose content starts at
/// (100, 200), and a line after it.
fn main_frame() -> Value {
    json!({
        "url": "https://shop.example/", "title": "Shop",
        "viewport": { "width": 1280, "height": 800, "scroll_x": 0, "scroll_y": 0, "document_width": 1280, "document_height": 800 },
        "items": [
            { "mark": "heading", "entry": { "level": 1, "text": "Checkout" } }, { "text": "Checkout", "h": 1 },
            { "node": 0 }, { "frame": 0 }, { "text": "Secure payment" },
        ],
        "nodes": [{ "ref": 1, "role": "button", "name": "Pay", "x": 10, "y": 20, "w": 50, "h": 20 }],
        "frames": [{ "frame": 1, "ref": 5, "name": "card", "src": "https://pay.example/card", "x": 100, "y": 200, "w": 300, "h": 150 }],
        "element_count": 9, "next_ref": 6,
    })
}

/// Frame 1: a card field in a form (ref 6), and an iframe (frame 3, ref 7) at (10, 40) of
/// its content.
fn card_frame() -> Value {
    json!({
        "url": "https://pay.example/card", "title": "Card",
        "items": [
            { "mark": "heading", "entry": { "level": 2, "text": "Card" } }, { "text": "Card", "h": 2 }, { "text": "Card details" },
            { "mark": "form", "entry": { "ref": 6, "method": "post", "action": "/pay", "fields": [2] } }, { "node": 0 }, { "frame": 0 },
        ],
        "nodes": [{ "ref": 2, "role": "textbox", "name": "Card number", "x": 5, "y": 6, "w": 200, "h": 20 }],
        "frames": [{ "frame": 3, "ref": 7, "name": "cvc", "src": "https://pay.example/cvc", "x": 10, "y": 40, "w": 50, "h": 20 }],
        "element_count": 5, "next_ref": 8,
    })
}

/// Frame 1 > 3: one field.
fn cvc_frame() -> Value {
    json!({
        "url": "https://pay.example/cvc", "title": "CVC", "items": [{ "node": 0 }],
        "nodes": [{ "ref": 3, "role": "textbox", "name": "CVC", "x": 1, "y": 2, "w": 40, "h": 16 }],
        "frames": [], "element_count": 2, "next_ref": 8,
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
async fn child_frame_snapshots_are_merged_into_the_main_one_in_document_order() {
    let bench = Bench::new().await;
    shop_page(&bench);
    let page = bench.call("snapshot", json!({})).await.unwrap();

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
    assert_eq!(page["element_count"], 16);
    assert_eq!(
        page["frames"],
        json!([
            { "frame": "f1", "ref": "e5", "name": "card", "src": "https://pay.example/card", "x": 100.0, "y": 200.0, "w": 300, "h": 150,
              "url": "https://pay.example/card", "title": "Card" },
            { "frame": "f1.3", "ref": "e7", "name": "cvc", "src": "https://pay.example/cvc", "x": 110.0, "y": 240.0, "w": 50, "h": 20,
              "url": "https://pay.example/cvc", "title": "CVC" },
        ])
    );
    assert_eq!(page["headings"], json!([{ "level": 1, "text": "Checkout" }, { "level": 2, "text": "Card", "frame": "f1" }]));
    assert_eq!(page["forms"], json!([{ "ref": "e6", "method": "post", "action": "/pay", "fields": ["e2"], "frame": "f1" }]));
    assert_eq!(page["text"], "Checkout\nCard\nCard details\nSecure payment", "each frame's text in its frame's place");
    assert_eq!((page.get("totals"), page.get("next_ref"), page.get("truncated")), (None, None, None));
    // Each frame is asked for everything once; the limits are applied to the whole.
    let asked: Vec<(Vec<u32>, Value)> =
        bench.page.calls_of(AgentOp::Snapshot).into_iter().map(|(frame, args)| (frame, args["max_chars"].clone())).collect();
    assert_eq!(asked, [(vec![], Value::Null), (vec![1], Value::Null), (vec![1, 3], Value::Null)]);

    let text = bench.call("snapshot", json!({ "format": "text" })).await.unwrap();
    let lines: Vec<&str> = text["text"].as_str().unwrap().lines().skip(2).collect();
    assert_eq!(
        lines,
        [
            "# Checkout",
            "e1 button \"Pay\"",
            "e5 frame f1 \"Card\" <https://pay.example/card>:",
            "## Card",
            "Card details",
            "e6 form post /pay @f1:",
            "e2 textbox \"Card number\" @f1",
            "e7 frame f1.3 \"CVC\" <https://pay.example/cvc>:",
            "e3 textbox \"CVC\" @f1.3",
            "Secure payment",
        ]
    );
    // A frame's refs are known to be in it: scope by the ref of the card frame's form.
    bench.page.on(AgentOp::FrameBox, |_, _| Ok(json!({ "x": 100, "y": 200, "w": 300, "h": 150 })));
    let before = bench.page.calls_of(AgentOp::Snapshot).len();
    bench.call("snapshot", json!({ "scope": "e6" })).await.unwrap();
    let scoped = bench.page.calls_of(AgentOp::Snapshot).swap_remove(before);
    assert_eq!((scoped.0, &scoped.1["ref"]), (vec![1], &json!(6)), "the scope is read in its own frame");
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
    main["items"].as_array_mut().unwrap().push(json!({ "frame": 1 }));
    main["frames"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "frame": 2, "ref": 8, "name": "ads", "src": "https://ads.example/", "x": 0, "y": 700, "w": 728, "h": 90 }));
    let ads = json!({ "url": "https://ads.example/", "title": "Ad", "items": [{ "text": "Buy" }, { "node": 0 }],
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
            { "frame": "f1", "ref": "e5", "name": "card", "src": "https://pay.example/card", "x": 100.0, "y": 200.0, "w": 300, "h": 150, "error": "E_TIMEOUT" },
            { "frame": "f2", "ref": "e8", "name": "ads", "src": "https://ads.example/", "x": 0.0, "y": 700.0, "w": 728, "h": 90,
              "url": "https://ads.example/", "title": "Ad" },
        ])
    );
    let refs: Vec<&Value> = page["nodes"].as_array().unwrap().iter().map(|node| &node["ref"]).collect();
    assert_eq!(refs, [&json!("e1"), &json!("e4")], "the main frame's elements and the other frame's");
    assert_eq!((&page["url"], &page["title"]), (&json!("https://shop.example/"), &json!("Shop")));

    let text = bench.call("snapshot", json!({ "format": "text" })).await.unwrap();
    let text = text["text"].as_str().unwrap();
    assert!(text.lines().any(|line| line == "e5 frame f1 \"card\" <https://pay.example/card> (E_TIMEOUT):"), "{text}");
    assert!(text.lines().any(|line| line == "e4 link \"Buy now\" @f2"), "{text}");
}
