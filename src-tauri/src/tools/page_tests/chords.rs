//! Key chords: `press` holds the modifiers down in order, presses the key and releases
//! them in reverse, as trusted key events; Meta runs editing commands; a chord that names
//! no key is refused before anything reaches the page.

use serde_json::json;

use super::{element, with, Bench};
use crate::engine::agent::AgentOp;
use crate::engine::fake::{in_turn, Asked};
use crate::engine::{EditingCommand, InputEvent, KeyStroke, Modifiers};
use crate::error::ErrorCode;

// X keysyms (GDK keyvals), the keys' values on Linux.
const SHIFT_L: u32 = 0xffe1;
const CONTROL_L: u32 = 0xffe3;
const RETURN: u32 = 0xff0d;
const CAPITAL_A: u32 = 0x41;

const NONE: Modifiers = Modifiers { shift: false, control: false, alt: false, meta: false };
const CONTROL: Modifiers = Modifiers { control: true, ..NONE };
const CONTROL_SHIFT: Modifiers = Modifiers { control: true, shift: true, ..NONE };

fn down(keyval: u32, modifiers: Modifiers) -> InputEvent {
    InputEvent::KeyDown(KeyStroke { keyval, modifiers })
}

fn up(keyval: u32, modifiers: Modifiers) -> InputEvent {
    InputEvent::KeyUp(KeyStroke { keyval, modifiers })
}

#[tokio::test(start_paused = true)]
async fn a_chord_holds_its_modifiers_in_order_and_releases_them_in_reverse() {
    let bench = Bench::new().await;
    let result = bench.call("press", json!({ "key": "Control+Shift+A" })).await.unwrap();
    assert_eq!((&result["key"], &result["ok"], result.get("target")), (&json!("Control+Shift+A"), &json!(true), None));
    let events = vec![
        down(CONTROL_L, CONTROL),
        down(SHIFT_L, CONTROL_SHIFT),
        down(CAPITAL_A, CONTROL_SHIFT),
        up(CAPITAL_A, CONTROL_SHIFT),
        up(SHIFT_L, CONTROL),
        up(CONTROL_L, NONE),
    ];
    assert_eq!(bench.page.asked(), [Asked::Input(events), Asked::Other("after_action")], "one batch of key events, to the focused element");

    // Modifiers given apart go down first; a modifier pressed as the key is not held before itself.
    let bench = Bench::new().await;
    bench.call("press", json!({ "key": "Shift", "modifiers": ["Ctrl"] })).await.unwrap();
    let events = [down(CONTROL_L, CONTROL), down(SHIFT_L, CONTROL_SHIFT), up(SHIFT_L, CONTROL), up(CONTROL_L, NONE)];
    assert_eq!(bench.page.input_events(), events);
}

#[tokio::test(start_paused = true)]
async fn a_key_for_an_element_is_pressed_once_it_is_enabled_and_focused() {
    let bench = Bench::new().await;
    let field = element(4, "Search", 300.0, 40.0);
    bench.page.on(AgentOp::Locate, in_turn([with(field.clone(), json!({ "disabled": true })), field]));
    bench.page.on(AgentOp::Focus, in_turn([json!({ "focused": true })]));
    let result = bench.call("press", json!({ "key": "Enter", "ref": "e4" })).await.unwrap();
    assert_eq!(result["target"]["ref"], "e4");
    let asked: Vec<String> = bench
        .page
        .asked()
        .iter()
        .map(|asked| match asked {
            Asked::Agent { op, args, .. } => format!("{} e{}", op.name(), args["ref"]),
            Asked::Input(events) => format!("input {events:?}"),
            other => format!("{other:?}"),
        })
        .collect();
    let enter = format!("input {:?}", [down(RETURN, NONE), up(RETURN, NONE)]);
    let expected = ["input []", "locate e4", "input []", "locate e4", "focus e4", &enter, "Other(\"after_action\")"];
    assert_eq!(asked, expected, "looked for until enabled, focused, then the key");
}

#[tokio::test(start_paused = true)]
async fn meta_runs_editing_commands_and_refuses_other_keys() {
    for (key, command) in [("Meta+a", EditingCommand::SelectAll), ("Cmd+Shift+Z", EditingCommand::Redo), ("Meta+V", EditingCommand::Paste)]
    {
        let bench = Bench::new().await;
        bench.call("press", json!({ "key": key })).await.unwrap();
        assert_eq!(bench.page.asked(), [Asked::Editing(command), Asked::Other("after_action")], "{key}");
    }
    let bench = Bench::new().await;
    let error = bench.call("press", json!({ "key": "Meta+Enter" })).await.unwrap_err();
    assert_eq!(error.code, ErrorCode::Unsupported, "{}", error.message);
    assert_eq!(error.message, "Meta+Enter is not supported; Meta works with A, C, V, X and Z (editing commands)");
    assert_eq!(bench.page.asked(), [Asked::Other("screenshot")], "no key reached the page (only the failure screenshot was asked)");
}

#[tokio::test(start_paused = true)]
async fn a_chord_that_names_no_key_is_refused_before_reaching_the_page() {
    let cases = [
        ("Control+Nope", "unknown key \"Nope\""),
        ("Hyper+a", "\"Hyper\" in \"Hyper+a\" is not a modifier"),
        ("Control+", "names no key after its modifiers"),
        ("+a", "\"\" in \"+a\" is not a modifier"),
    ];
    for (key, says) in cases {
        let bench = Bench::new().await;
        let error = bench.call("press", json!({ "key": key })).await.unwrap_err();
        assert_eq!(error.code, ErrorCode::BadRequest, "{key}: {}", error.message);
        assert!(error.message.contains(says), "{key}: {}", error.message);
        assert_eq!(bench.page.asked(), [], "{key}: nothing asked of the page");
    }
}
