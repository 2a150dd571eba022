//! Reading and showing (issue 49): `read` gives an article fixture's main content as
//! Markdown (headings, list, link, table) without its navigation, sidebar and footer, and
//! pages a long one by its token budget; `highlight` outlines an element for a person and
//! shows in a screenshot only when the screenshot asks; `get` and `is` answer one-line reads
//! on the command line.

use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};

use crate::harness::*;

fn on_article() -> (Daemon, Fixtures, Session) {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-content").session_sized(1000, 700);
    session.navigate(&fixtures.url("/f/article.html"));
    (daemon, fixtures, session)
}

#[test]
fn read_keeps_the_articles_headings_list_link_and_table_and_drops_the_navigation() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-content").session_sized(1000, 700);
    // With a url, read loads it first in the tab.
    let read = session.ok("read", json!({ "url": fixtures.url("/f/article.html") }));
    assert_eq!(read["title"], "Field notes on river stones");
    assert_eq!(read["url"], fixtures.url("/f/article.html"));
    assert!(read.get("truncated").is_none(), "{read}");
    let text = read["text"].as_str().unwrap();
    for kept in [
        "# Field notes on river stones\n",
        "\n## What we measured\n",
        "\n## Results by bend\n",
        "- Granite from the upper bend, coarse and speckled\n- Basalt from the middle bend, dark and dense\n- Quartzite",
        &format!("[survey handbook]({})", fixtures.url("/f/hello.html?method")),
        "| Bend | Stones | Mean weight |\n| --- | --- | --- |\n| Upper | 41 | 310 g |\n| Middle | 57 | 265 g |\n| Lower | 63 | 198 g |",
        "River stones are shaped by water, sand and time.",
    ] {
        assert!(text.contains(kept), "{kept:?} is missing from:\n{text}");
    }
    for dropped in [
        "navigation link",
        "Sidebar trending",
        "Trending sidebar story",
        "Footer copyright",
        "Stone Journal",
        "hidden note",
        "Disabled action",
    ] {
        assert!(!text.contains(dropped), "{dropped:?} should be left out of:\n{text}");
    }
    assert!(text.starts_with("# Field notes on river stones"), "{text}");

    // The CLI prints the Markdown itself.
    let dir = TempDir::new("content-read");
    let printed = daemon.cli_text_in(&dir.0, &["read", &fixtures.url("/f/article.html")]);
    assert!(printed.starts_with("# Field notes on river stones\n") && printed.contains("| Upper | 41 | 310 g |"), "{printed}");
    assert!(!printed.contains("navigation link"), "{printed}");

    // Refusals name their field.
    let error = session.fails("read", json!({ "max_tokens": 100 }), 400, "E_BAD_REQUEST");
    assert_eq!(error["details"]["field"], "max_tokens", "{error}");
    let error = session.fails("read", json!({ "next": "nope" }), 400, "E_BAD_REQUEST");
    assert_eq!(error["details"]["field"], "next", "{error}");
    session.fails("read", json!({ "url": "file:///etc/passwd" }), 400, "E_INVALID_URL");
}

#[test]
fn read_pages_a_long_article_by_its_token_budget_and_is_quicker_than_a_snapshot() {
    let (_daemon, _fixtures, session) = on_article();
    session.page_value(
        "(() => { const story = document.getElementById('story'); for (let i = 0; i < 150; i++) { const p = document.createElement('p'); \
         p.textContent = 'Paragraph ' + i + ' of the long survey: the stones of this bend were counted, weighed and put back where they lay.'; \
         story.appendChild(p); } return true; })()",
    );
    let mut seen = Vec::new();
    let mut parts = 0;
    let mut next: Option<String> = None;
    loop {
        let input = match &next {
            Some(next) => json!({ "max_tokens": 500, "next": next }),
            None => json!({ "max_tokens": 500 }),
        };
        let read = session.ok("read", input);
        parts += 1;
        let text = read["text"].as_str().unwrap();
        for line in text.lines().filter(|line| line.starts_with("Paragraph ")) {
            seen.push(line.split(' ').nth(1).unwrap().parse::<u32>().unwrap());
        }
        if parts > 1 {
            assert!(text.starts_with("(continued from block "), "{text}");
        }
        match read.get("truncated") {
            Some(truncated) => {
                next = Some(truncated["next"].as_str().unwrap().to_string());
                assert!(text.contains(next.as_deref().unwrap()), "the text says how to go on: {text}");
            }
            None => break,
        }
        assert!(parts < 100, "paging ends");
    }
    assert!(parts >= 4, "150 paragraphs at 500 tokens take several parts, not {parts}");
    assert_eq!(seen, (0..150).collect::<Vec<_>>(), "every paragraph once, in order");

    // A static page reads faster than it snapshots (both its whole text).
    let timed = |tool: &str, input: Value| {
        let begun = Instant::now();
        session.ok(tool, input);
        begun.elapsed()
    };
    let (mut read, mut snapshot) = (Duration::MAX, Duration::MAX);
    for _ in 0..3 {
        read = read.min(timed("read", json!({ "max_tokens": 200000 })));
        snapshot = snapshot.min(timed("snapshot", json!({ "max_tokens": 200000, "format": "text" })));
    }
    eprintln!("read {read:?}, snapshot {snapshot:?}");
    assert!(read <= snapshot, "read {read:?} against snapshot {snapshot:?}");
}

/// How many pixels of the picture are the highlight's colour.
fn outline_pixels(result: &Value) -> usize {
    let bytes = base64::engine::general_purpose::STANDARD.decode(result["data"].as_str().expect("data")).unwrap();
    let image = image::load_from_memory(&bytes).unwrap().to_rgba8();
    image.pixels().filter(|pixel| pixel.0[0].abs_diff(236) < 8 && pixel.0[1] < 8 && pixel.0[2].abs_diff(140) < 8).count()
}

#[test]
fn a_highlight_shows_in_a_screenshot_only_when_it_asks_and_the_page_never_sees_it() {
    let (_daemon, _fixtures, session) = on_article();
    let page_html = "document.documentElement.outerHTML.length + ':' + document.querySelectorAll('*').length";
    let before_html = session.page_value(page_html);
    assert_eq!(outline_pixels(&session.ok("screenshot", json!({}))), 0);

    let shown = session.ok("highlight", json!({ "selector": "#swatch" }));
    assert_eq!(shown["box"]["width"], 120.0, "{shown}");
    assert_eq!(shown["box"]["height"], 40.0, "{shown}");
    assert_eq!(session.page_value(page_html), before_html, "the page's document is unchanged");

    let without = session.ok("screenshot", json!({}));
    assert_eq!(outline_pixels(&without), 0, "a screenshot leaves the outline out");
    let with = session.ok("screenshot", json!({ "highlight": true }));
    let outlined = outline_pixels(&with);
    // 3 CSS px around a 120x40 box, at the screen's scale.
    let scale = with["scale"].as_f64().unwrap();
    let expected = ((126.0 * 46.0 - 120.0 * 40.0) * scale * scale) as usize;
    assert!(outlined.abs_diff(expected) <= expected / 10, "{outlined} outline pixels, {expected} expected");

    let cleared = session.ok("highlight", json!({ "clear": true }));
    assert_eq!(cleared["cleared"], true);
    let after = session.ok("screenshot", json!({ "highlight": true }));
    assert_eq!(outline_pixels(&after), 0, "gone once cleared");
    assert!(after["data"] == without["data"], "the picture without the outline is the one once it is cleared");
    assert_eq!(session.ok("highlight", json!({ "clear": true }))["cleared"], false);

    // A duration ends it.
    session.ok("highlight", json!({ "selector": "#swatch", "duration_ms": 300 }));
    assert!(outline_pixels(&session.ok("screenshot", json!({ "highlight": true }))) > 0);
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(outline_pixels(&session.ok("screenshot", json!({ "highlight": true }))), 0, "gone after its duration");

    let error = session.fails("highlight", json!({}), 400, "E_BAD_REQUEST");
    assert_eq!(error["details"]["field"], "ref", "{error}");
    let error = session.fails("highlight", json!({ "clear": true, "selector": "#swatch" }), 400, "E_BAD_REQUEST");
    assert_eq!(error["details"]["field"], "selector", "{error}");
    session.fails("highlight", json!({ "selector": "#hidden-note" }), 409, "E_NOT_VISIBLE");
    session.fails("highlight", json!({ "selector": "#nothing-here" }), 404, "E_NOT_FOUND");
}

#[test]
fn a_person_watching_the_live_view_sees_the_highlight() {
    let (_daemon, _fixtures, session) = on_article();
    session.ok("highlight", json!({ "selector": "#swatch" }));
    let link = session.ok("watch", json!({ "mode": "live", "control": false }))["live_url"].as_str().unwrap().to_string();
    let run = run_client("live-view.mjs", &[&link, "leave"]);
    assert!(run.success, "{}", run.output);
    let (_, ok, seen) = run.checks.iter().find(|(check, ..)| check == "first frame").unwrap_or_else(|| panic!("{}", run.output));
    assert!(ok, "{}", run.output);
    let frame = seen.as_str().unwrap().trim_start_matches("data:image/png;base64,");
    let frame = image::load_from_memory(&base64::engine::general_purpose::STANDARD.decode(frame).unwrap()).unwrap().to_rgba8();
    // The frame is a JPEG drawn on a canvas: the magenta comes back close, not exact.
    let outlined = frame.pixels().filter(|pixel| pixel.0[0] > 180 && pixel.0[1] < 80 && (90..200).contains(&pixel.0[2])).count();
    assert!(outlined > 300, "{outlined} outline pixels in the live view's frame");
    assert_eq!(outline_pixels(&session.ok("screenshot", json!({}))), 0, "while the screenshot still leaves it out");
}

/// Runs `malo args` on a pipe: exit code, stdout, stderr.
fn run(daemon: &Daemon, dir: &Path, args: &[&str]) -> (i32, String, String) {
    let output = daemon.cli_output_in(dir, args);
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).to_string();
    (output.status.code().unwrap_or(-1), text(&output.stdout), text(&output.stderr))
}

#[test]
fn get_and_is_answer_one_line_reads_on_the_command_line() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let dir = TempDir::new("content-get");
    let line = |args: &[&str]| {
        let (code, out, err) = run(&daemon, &dir.0, args);
        assert_eq!(code, 0, "malo {args:?}: {err}");
        assert_eq!(out.matches('\n').count(), 1, "malo {args:?} prints one line: {out:?}");
        out.trim_end().to_string()
    };
    let url = fixtures.url("/f/article.html");
    run(&daemon, &dir.0, &["navigate", &url]);
    assert_eq!(line(&["get", "title"]), "Field notes on river stones");
    assert_eq!(line(&["get", "url"]), url);
    assert_eq!(line(&["get", "text", "h1"]), "Field notes on river stones");
    assert_eq!(line(&["get", "html", "#swatch"]), "Swatch");
    assert_eq!(line(&["get", "value", "#name"]), "Ada");
    assert_eq!(line(&["get", "attr", "p.byline a", "href"]), "/f/hello.html?author");
    assert_eq!(line(&["get", "count", "article li"]), "3");
    assert_eq!(line(&["get", "styles", "#swatch", "background-color"]), "rgb(10, 120, 200)");
    let styles: Value = serde_json::from_str(&line(&["get", "styles", "#swatch"])).unwrap();
    assert_eq!(styles["color"], "rgb(255, 255, 255)");
    let area: Value = serde_json::from_str(&line(&["get", "box", "#swatch"])).unwrap();
    assert_eq!((area["width"].as_f64(), area["height"].as_f64()), (Some(120.0), Some(40.0)), "{area}");
    assert_eq!(line(&["is", "visible", "#swatch"]), "true");
    assert_eq!(line(&["is", "visible", "#hidden-note"]), "false");
    assert_eq!(line(&["is", "visible", "#nothing-here"]), "false");
    assert_eq!(line(&["is", "enabled", "#off"]), "false");
    assert_eq!(line(&["is", "enabled", "#name"]), "true");
    assert_eq!(line(&["is", "checked", "#agree"]), "true");

    // By ref, and after an action.
    let (_, text, _) = run(&daemon, &dir.0, &["snapshot"]);
    let news =
        text.lines().find(|line| line.contains("checkbox \"News\"")).expect("the News checkbox").split(' ').next().unwrap().to_string();
    assert_eq!(line(&["is", "checked", &news]), "false");
    run(&daemon, &dir.0, &["click", &news]);
    assert_eq!(line(&["is", "checked", &format!("@{news}")]), "true");

    // Bad reads are clear errors.
    let (code, _, err) = run(&daemon, &dir.0, &["is", "checked", "#swatch"]);
    assert_eq!(code, 1);
    assert!(err.contains("E_BAD_REQUEST") && err.contains("checked"), "{err}");
    let (code, _, err) = run(&daemon, &dir.0, &["get", "attr", "#swatch"]);
    assert!(code == 1 && err.contains("E_BAD_REQUEST") && err.contains("name"), "{err}");
    let (code, _, err) = run(&daemon, &dir.0, &["get", "text", "#nothing-here"]);
    assert!(code == 1 && err.contains("E_NOT_FOUND"), "{err}");
    let (code, _, err) = run(&daemon, &dir.0, &["get", "colour", "h1"]);
    assert!(code != 0 && err.contains("colour"), "{err}");

    // The commands are in the help and the completions.
    let text_of = |args: &[&str]| String::from_utf8(std::process::Command::new(malo_binary()).args(args).output().unwrap().stdout).unwrap();
    let help = text_of(&["--help"]);
    for command in ["read", "highlight", "get", "is"] {
        assert!(help.lines().any(|line| line.trim_start().starts_with(&format!("{command} "))), "{command} in --help:\n{help}");
    }
    let completions = text_of(&["completions", "bash"]);
    for command in ["read", "highlight", "get", "is"] {
        assert!(completions.contains(&format!("malo__subcmd__{command})")), "{command} in the completions");
    }
}
