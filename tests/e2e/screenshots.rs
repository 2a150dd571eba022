//! Pictures for vision models: `screenshot` of the viewport, the whole document, an
//! element (in the page, below the fold, in an iframe, in a shadow root) or a clip, sized
//! and encoded as asked; set-of-marks whose refs click what they label; and the `mouse`
//! tool at coordinates. Fixture pages of solid blocks at known places; pixel colours are
//! checked where the blocks must be.

use std::path::PathBuf;

use base64::Engine as _;
use serde_json::{json, Value};

use crate::harness::*;

/// The picture a screenshot result holds.
fn picture(result: &Value) -> image::RgbaImage {
    let bytes = base64::engine::general_purpose::STANDARD.decode(result["data"].as_str().expect("data")).unwrap();
    assert_eq!(bytes.len() as u64, result["bytes"].as_u64().unwrap());
    let decoded = image::load_from_memory(&bytes).unwrap().to_rgba8();
    assert_eq!((decoded.width() as u64, decoded.height() as u64), (result["width"].as_u64().unwrap(), result["height"].as_u64().unwrap()));
    decoded
}

/// Whether a pixel is within a few levels of `want` (lossy formats and antialiasing).
fn near(image: &image::RgbaImage, x: u32, y: u32, want: [u8; 3]) -> bool {
    let pixel = image.get_pixel(x, y);
    pixel.0[..3].iter().zip(want).all(|(got, want)| got.abs_diff(want) < 12)
}

/// Asserts the four corner pixels of the picture have colour `want`.
fn corners_are(image: &image::RgbaImage, want: [u8; 3], what: &str) {
    let (right, bottom) = (image.width() - 1, image.height() - 1);
    for (x, y) in [(0, 0), (right, 0), (0, bottom), (right, bottom)] {
        assert!(near(image, x, y, want), "{what}: pixel ({x}, {y}) is {:?}, not {want:?}", image.get_pixel(x, y));
    }
}

const GREEN: [u8; 3] = [0, 160, 0];
const BLUE: [u8; 3] = [0, 0, 255];
const MAGENTA: [u8; 3] = [255, 0, 255];
const ORANGE: [u8; 3] = [255, 140, 0];
const WHITE: [u8; 3] = [255, 255, 255];

#[test]
fn screenshots_show_exactly_the_page_the_element_or_the_clip_asked_for() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session_sized(800, 600);
    session.navigate(&fixtures.url("/f/shots.html"));
    session.page_value("scrollTo(0, 700), scrollY");

    // The whole document: 5000 CSS px tall, the bottom block shown, the fixed bar drawn once,
    // and the page still scrolled where it was.
    let full = session.ok("screenshot", json!({ "full_page": true }));
    let image = picture(&full);
    assert_eq!((image.width(), image.height()), (800, 5000));
    assert_eq!((full["scale"].as_f64(), full["truncated"].as_bool()), (Some(1.0), Some(false)));
    assert_eq!(full["clip"], json!({ "x": 0.0, "y": 0.0, "width": 800.0, "height": 5000.0 }));
    assert!(near(&image, 10, 4950, MAGENTA), "the bottom block: {:?}", image.get_pixel(10, 4950));
    assert!(near(&image, 10, 5, ORANGE), "the fixed bar at the top");
    assert!(near(&image, 10, 715, WHITE), "the fixed bar only once: {:?}", image.get_pixel(10, 715));
    assert!(near(&image, 310, 3010, BLUE), "the block below the fold");
    assert_eq!(session.page_value("scrollY"), json!(700), "a full-page picture leaves the scroll alone");

    // Elements: exactly their border box, wherever they are.
    let cases = [
        (json!({ "selector": "#below" }), (150, 80), BLUE, "below the viewport"),
        (json!({ "selector": "#near" }), (200, 100), GREEN, "in the viewport"),
        (json!({ "selector": "#inner", "frame_selector": "#frame" }), (100, 60), [200, 0, 200], "in an iframe"),
        (json!({ "selector": "#host >>> #shadowed" }), (120, 40), [0, 200, 200], "in a shadow root"),
    ];
    for (target, size, colour, what) in cases {
        let shot = session.ok("screenshot", target);
        let image = picture(&shot);
        assert_eq!((image.width(), image.height()), size, "{what}");
        corners_are(&image, colour, what);
    }
    let shot = session.ok("screenshot", json!({ "selector": "#near" }));
    assert_eq!(shot["clip"], json!({ "x": 50.0, "y": 60.0, "width": 200.0, "height": 100.0 }), "the clip is in document px");

    // A clip of the document: the block below the fold, and a frame around the near block.
    let blue = picture(&session.ok("screenshot", json!({ "clip": { "x": 300, "y": 3000, "width": 150, "height": 80 } })));
    assert_eq!((blue.width(), blue.height()), (150, 80));
    corners_are(&blue, BLUE, "clip of the block below");
    let framed = picture(&session.ok("screenshot", json!({ "clip": { "x": 40, "y": 50, "width": 220, "height": 120 } })));
    corners_are(&framed, WHITE, "around the near block");
    assert!(near(&framed, 110, 60, GREEN));

    // Sizes: max_width keeps the aspect ratio and the scale says how.
    session.page_value("scrollTo(0, 0), 0");
    let small = session.ok("screenshot", json!({ "max_width": 400 }));
    assert_eq!((small["width"].as_u64(), small["height"].as_u64(), small["scale"].as_f64()), (Some(400), Some(300), Some(0.5)));
    let image = picture(&small);
    assert!(near(&image, 75, 55, GREEN), "the near block at half size: {:?}", image.get_pixel(75, 55));
    let capped = session.ok("screenshot", json!({ "full_page": true, "max_height": 1000 }));
    assert_eq!((capped["width"].as_u64(), capped["height"].as_u64(), capped["scale"].as_f64()), (Some(160), Some(1000), Some(0.2)));

    // Formats: JPEG at quality 50 is smaller than PNG of the same picture; WebP decodes.
    let clip = json!({ "x": 0, "y": 400, "width": 800, "height": 180 });
    let png = session.ok("screenshot", json!({ "clip": clip }));
    let jpeg = session.ok("screenshot", json!({ "clip": clip, "format": "jpeg", "quality": 50 }));
    assert_eq!(jpeg["mime_type"], "image/jpeg");
    assert!(jpeg["bytes"].as_u64() < png["bytes"].as_u64(), "jpeg {} against png {}", jpeg["bytes"], png["bytes"]);
    let webp = session.ok("screenshot", json!({ "selector": "#near", "format": "webp", "quality": 90 }));
    assert_eq!(webp["mime_type"], "image/webp");
    let image = picture(&webp);
    assert!(near(&image, 100, 50, GREEN));

    // To a file in artifacts/.
    let saved = session.ok("screenshot", json!({ "selector": "#near", "path": "near.png" }));
    let path = PathBuf::from(saved["path"].as_str().unwrap());
    assert_eq!(path, PathBuf::from(session.summary["artifacts_dir"].as_str().unwrap()).join("near.png"));
    assert_eq!(image::open(&path).unwrap().to_rgba8().dimensions(), (200, 100));
    assert!(saved.get("data").is_none());

    // What cannot be shown, and what does not go together.
    session.fails("screenshot", json!({ "selector": "#empty" }), 409, "E_NOT_VISIBLE");
    for (input, field) in [
        (json!({ "selector": "#near", "clip": { "x": 0, "y": 0, "width": 5, "height": 5 } }), "clip"),
        (json!({ "quality": 50 }), "quality"),
        (json!({ "clip": { "x": 0, "y": 6000, "width": 50, "height": 50 } }), "clip"),
        (json!({ "clip": { "x": 0, "y": 0, "width": 0.5, "height": 50 } }), "clip"),
        (json!({ "max_width": 0 }), "max_width"),
        (json!({ "path": "../escape.png" }), "path"),
        (json!({ "format": "jpeg", "path": "x.png" }), "path"),
    ] {
        let error = session.fails("screenshot", input.clone(), 400, "E_BAD_REQUEST");
        assert!(error["message"].as_str().unwrap().contains(field), "{input}: {error}");
    }

    // A document taller than a picture may be stops at 16384 CSS px; one taller than WebKit
    // snapshots (32,767 px) is put together from tiles, each in its place, the scroll kept.
    for height in [20_000, 40_000] {
        session.page_value(&format!(
            "document.getElementById('spacer').style.height = '{height}px'; document.getElementById('bottom').style.top = '15000px'; scrollTo(0, 300); 0"
        ));
        let tall = session.ok("screenshot", json!({ "full_page": true }));
        assert_eq!((tall["height"].as_u64(), tall["truncated"].as_bool()), (Some(16384), Some(true)), "{height}");
        let image = picture(&tall);
        assert!(near(&image, 10, 15050, MAGENTA), "{height}: the block at 15000: {:?}", image.get_pixel(10, 15050));
        assert!(near(&image, 10, 14990, WHITE) && near(&image, 10, 15110, WHITE), "{height}: the block in its place");
        assert!(near(&image, 310, 3010, BLUE), "{height}: the block below the fold");
        assert_eq!(session.page_value("scrollY"), json!(300), "{height}: the scroll is kept");
    }

    assert_eq!(mapped_windows_of(daemon.pid), Vec::<String>::new(), "a window was mapped on screen");
}

#[test]
fn marks_label_every_visible_control_and_each_label_clicks_its_control() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session_sized(900, 600);
    session.navigate(&fixtures.url("/f/marks.html"));
    let plain = picture(&session.ok("screenshot", json!({})));
    let marked_shot = session.ok("screenshot", json!({ "marks": true }));
    let marked = picture(&marked_shot);
    let marks = marked_shot["marks"].as_array().unwrap();
    let names: Vec<&str> = marks.iter().map(|mark| mark["name"].as_str().unwrap()).collect();
    let expected: Vec<String> = (1..=30).map(|index| format!("c{index}")).collect();
    assert_eq!(names, expected, "every visible control, once, in document order; no hidden one");

    // Each control's box (from the page) is its mark's box, and the label is drawn inside it:
    // pixels changed within every box, and nowhere outside the boxes.
    let boxes = session.page_value(
        "Array.from(document.querySelectorAll('#grid > *')).map((element) => { const rect = element.getBoundingClientRect(); return [rect.left, rect.top, rect.width, rect.height]; })",
    );
    let inside = |x: u32, y: u32| {
        marks.iter().any(|mark| {
            let (left, top) = (mark["x"].as_u64().unwrap() as u32, mark["y"].as_u64().unwrap() as u32);
            let (width, height) = (mark["width"].as_u64().unwrap() as u32, mark["height"].as_u64().unwrap() as u32);
            (left..left + width).contains(&x) && (top..top + height).contains(&y)
        })
    };
    for (mark, found) in marks.iter().zip(boxes.as_array().unwrap()) {
        let found: Vec<f64> = found.as_array().unwrap().iter().map(|value| value.as_f64().unwrap()).collect();
        let given = ["x", "y", "width", "height"].map(|key| mark[key].as_f64().unwrap());
        for (given, found) in given.iter().zip(&found) {
            assert!((given - found).abs() <= 1.0, "{mark} against the page's box {found:?}");
        }
        let (left, top, width, height) = (given[0] as u32, given[1] as u32, given[2] as u32, given[3] as u32);
        let changed = (top..top + height)
            .flat_map(|y| (left..left + width).map(move |x| (x, y)))
            .filter(|(x, y)| plain.get_pixel(*x, *y) != marked.get_pixel(*x, *y))
            .count();
        assert!(changed > 20, "no label drawn in {mark}");
    }
    let outside = (0..marked.height())
        .flat_map(|y| (0..marked.width()).map(move |x| (x, y)))
        .filter(|(x, y)| !inside(*x, *y) && plain.get_pixel(*x, *y) != marked.get_pixel(*x, *y))
        .count();
    assert_eq!(outside, 0, "labels drawn outside their element's box");

    // The refs on the picture click their controls.
    for mark in marks {
        session.ok("click", json!({ "ref": mark["ref"] }));
    }
    let clicked = session.page_value("window.clicked");
    assert_eq!(clicked, json!(expected), "the clicks reached, in order");
    assert_eq!(mapped_windows_of(daemon.pid), Vec::<String>::new(), "a click on a select mapped its option menu on screen");
}

#[test]
fn the_mouse_scrolls_drags_and_clicks_at_points() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session_sized(800, 600);
    session.navigate(&fixtures.url("/f/pointer.html"));

    // A press, moves and a release on the range slider drag its thumb to the right end.
    session.ok("mouse", json!({ "action": "down", "x": 42, "y": 48 }));
    session.ok("mouse", json!({ "action": "move", "x": 200, "y": 48 }));
    session.ok("mouse", json!({ "action": "move", "x": 345, "y": 48 }));
    let released = session.ok("mouse", json!({ "action": "up", "x": 345, "y": 48 }));
    assert_eq!(released["action"], "mouse");
    assert!(released["settle"].is_object(), "the settle report of an action: {released}");
    assert_eq!(session.page_value("document.getElementById('range').value"), json!("100"));

    // A click at a point hits the element there (a trusted click), a double click too.
    session.ok("mouse", json!({ "action": "click", "x": 210, "y": 145 }));
    session.ok("mouse", json!({ "action": "double_click", "x": 90, "y": 145 }));
    assert_eq!(session.page_value("window.pressed"), json!(["right:1:true", "left:1:true", "left:2:true", "left:dbl"]));

    // The wheel scrolls by its delta.
    session.ok("mouse", json!({ "action": "wheel", "x": 400, "y": 300, "delta_y": 500 }));
    assert!(
        eventually(std::time::Duration::from_secs(3), || session.page_value("scrollY") == json!(500)),
        "{}",
        session.page_value("scrollY")
    );
    session.ok("mouse", json!({ "action": "wheel", "x": 400, "y": 300, "delta_y": -200 }));
    assert!(
        eventually(std::time::Duration::from_secs(3), || session.page_value("scrollY") == json!(300)),
        "{}",
        session.page_value("scrollY")
    );

    let error = session.fails("mouse", json!({ "action": "click", "x": 900, "y": 10 }), 400, "E_BAD_REQUEST");
    assert!(error["message"].as_str().unwrap().contains("x, y: the point"), "{error}");
}

#[test]
fn over_mcp_a_screenshot_is_image_content_capped_for_vision_models() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let mut agent = McpProcess::start_with_caps(&daemon, "agent-m", "sessions");
    let opened = agent.request("tools/call", json!({ "name": "browser_session_new", "arguments": { "width": 2000, "height": 1000 } }));
    let opened: Value = serde_json::from_str(opened["content"][0]["text"].as_str().unwrap()).unwrap();
    let session = opened["session_id"].as_str().unwrap().to_string();
    let (failed, _) = agent.call("browser_navigate", json!({ "session": session, "url": fixtures.url("/f/shots.html") }));
    assert!(!failed);
    let shot = |agent: &mut McpProcess, arguments: Value| {
        let answer = agent.request("tools/call", json!({ "name": "browser_screenshot", "arguments": arguments }));
        let blocks = answer["content"].as_array().unwrap().clone();
        let image = blocks.iter().find(|block| block["type"] == "image").expect("an image block").clone();
        let text: Value =
            serde_json::from_str(blocks.iter().find(|block| block["type"] == "text").unwrap()["text"].as_str().unwrap()).unwrap();
        let bytes = base64::engine::general_purpose::STANDARD.decode(image["data"].as_str().unwrap()).unwrap();
        (image["mimeType"].as_str().unwrap().to_string(), image::load_from_memory(&bytes).unwrap().to_rgba8(), text)
    };
    let (mime, image, text) = shot(&mut agent, json!({ "session": session }));
    assert_eq!(mime, "image/png");
    assert_eq!(image.dimensions(), (1568, 784), "the long edge capped at 1568");
    assert_eq!(text["width"], 1568);
    assert!(text.get("data").is_none(), "the bytes come once, as the image");
    let (_, image, _) = shot(&mut agent, json!({ "session": session, "max_width": 2000, "format": "jpeg" }));
    assert_eq!(image.dimensions(), (2000, 1000), "asked otherwise, no cap");
}

#[test]
fn the_cli_writes_a_screenshot_where_it_is_told() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let out = TempDir::new("screenshot-cli");
    let cli = |args: &[&str]| daemon.cli_in(&out.0, args);
    cli(&["session", "new", "--width", "800", "--height", "600"]);
    cli(&["navigate", "--url", &fixtures.url("/f/shots.html")]);
    let answer = cli(&["screenshot", "--full-page", "-o", "page.png"]);
    let written = out.0.join("page.png");
    assert_eq!(answer["output"], written.display().to_string(), "{answer}");
    assert!(answer.get("data").is_none(), "the bytes go to the file, not the terminal");
    assert_eq!(image::open(&written).unwrap().to_rgba8().dimensions(), (800, 5000));
    let answer = cli(&["screenshot", "--selector", "#near", "--format", "jpeg", "-o", "near.jpg"]);
    assert_eq!(answer["mime_type"], "image/jpeg");
    assert_eq!(image::open(out.0.join("near.jpg")).unwrap().to_rgba8().dimensions(), (200, 100));
}

/// A hidden 800 x 600 session on a page taller than its viewport, with two scroll boxes.
fn on_tall_form() -> (Daemon, Fixtures, Session) {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session_sized(800, 600);
    session.navigate(&fixtures.url("/f/tall-form.html"));
    (daemon, fixtures, session)
}

#[test]
fn a_hidden_page_draws_no_scrollbars_and_lays_out_as_with_overlay_ones() {
    let (_daemon, _fixtures, session) = on_tall_form();
    // No room taken, as with WebKit's overlay scrollbars; a page's own scrollbar style wins.
    let room = |id: &str| session.page_value(&format!("(box => box.offsetWidth - box.clientWidth)(document.getElementById('{id}'))"));
    assert_eq!(room("plain"), json!(0));
    assert_eq!(room("styled"), json!(12));
    assert_eq!(session.page_value("innerWidth - document.documentElement.clientWidth"), json!(0));

    // Scrolled, the plain box shows its white page along its right edge: no scrollbar drawn.
    session.page_value("document.getElementById('plain').scrollTop = 100");
    let image = picture(&session.ok("screenshot", json!({ "selector": "#plain" })));
    for x in image.width() - 8..image.width() {
        assert!(near(&image, x, image.height() / 2, WHITE), "column {x}: {:?}", image.get_pixel(x, image.height() / 2));
    }
    // The page's own scrollbar is drawn: its thumb is grey.
    let styled = picture(&session.ok("screenshot", json!({ "selector": "#styled" })));
    assert!(!near(&styled, styled.width() - 6, 10, WHITE), "the styled thumb: {:?}", styled.get_pixel(styled.width() - 6, 10));
}

#[test]
fn a_hidden_page_that_scrolled_goes_idle() {
    let (daemon, _fixtures, session) = on_tall_form();
    let web = web_processes(daemon.pid);
    assert_eq!(web.len(), 1, "one web process for one session");
    // An overlay scrollbar would now fade in and out, repainting the page at 60 Hz for
    // seconds (measured: 120-340 wakeups a second in the web process); nobody sees it.
    session.page_value("document.getElementById('plain').scrollTop = 100; scrollTo(0, 300)");
    let before = context_switches(web[0]);
    std::thread::sleep(std::time::Duration::from_secs(3));
    let per_second = (context_switches(web[0]) - before) / 3;
    assert!(per_second < 60, "the hidden page's web process woke {per_second} times a second");
}
