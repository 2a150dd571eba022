//! Looking again and auditing: `diff` of a snapshot against the tab's last one, of a
//! picture against a baseline or the last screenshot, and of two URLs; `a11y` (axe-core in
//! the isolated world, which the page never sees) and `vitals` on fixture pages.

use serde_json::{json, Value};

use crate::harness::*;

/// The lines of a diff's list.
fn strings(list: &Value) -> Vec<String> {
    list.as_array().unwrap_or_else(|| panic!("not a list: {list}")).iter().map(|line| line.as_str().unwrap().to_string()).collect()
}

#[test]
fn diff_snapshot_lists_exactly_the_lines_that_changed_since_the_last_snapshot() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/changes.html"));
    let first = session.ok("snapshot", json!({ "format": "text" }));
    let save_line = first["text"].as_str().unwrap().lines().find(|line| line.contains("button \"Save\"")).expect("the button").to_string();

    // Nothing changed yet.
    let same = session.ok("diff", json!({ "kind": "snapshot" }));
    assert_eq!((same["added"].clone(), same["removed"].clone(), same["changed"].clone()), (json!([]), json!([]), json!([])), "{same}");
    assert!(same["unchanged"].as_u64().unwrap() >= 6, "{same}");

    session.page_value(
        "document.querySelector('#status').textContent = 'Status: done'; \
         document.querySelector('#fruit').lastElementChild.remove(); \
         document.querySelector('#fruit').insertAdjacentHTML('beforeend', '<li>Pears</li><li>Figs</li>'); \
         document.querySelector('#save').disabled = true; 1",
    );
    let diff = session.ok("diff", json!({ "kind": "snapshot" }));
    let url = fixtures.url("/f/changes.html");
    assert_eq!((diff["url"].as_str(), diff["previous_url"].as_str()), (Some(url.as_str()), Some(url.as_str())));
    assert_eq!(
        diff["changed"],
        json!([
            { "before": "Status: idle", "after": "Status: done" },
            { "before": save_line, "after": format!("{save_line} [disabled]") },
        ]),
        "{diff}"
    );
    // Plums and Pears have too little in common to be one line changed.
    assert_eq!(strings(&diff["added"]), ["Pears", "Figs"], "{diff}");
    assert_eq!(strings(&diff["removed"]), ["Plums"], "{diff}");
    assert_eq!(diff["unchanged"], 4, "{diff}");

    // The diff's snapshot is now the last one: a second diff sees no change; text reads as
    // a unified diff.
    let again = session.ok("diff", json!({ "kind": "snapshot", "format": "text" }));
    assert!(again["text"].as_str().unwrap().contains("0 changed, 0 added, 0 removed"), "{again}");
    session.page_value("document.querySelector('#status').textContent = 'Status: shipped'; 1");
    let text = session.ok("diff", json!({ "kind": "snapshot", "format": "text" }))["text"].as_str().unwrap().to_string();
    assert!(text.contains("\n- Status: done\n+ Status: shipped\n"), "{text}");
    assert!(text.contains("1 changed, 0 added, 0 removed"), "{text}");

    // Fields of other kinds are refused, naming them.
    for (input, field) in [
        (json!({ "kind": "snapshot", "urls": ["http://a.test/"] }), "urls"),
        (json!({ "kind": "url", "urls": ["http://a.test/"] }), "urls"),
        (json!({ "kind": "snapshot", "baseline": "/tmp/x.png" }), "baseline"),
        (json!({ "kind": "screenshot", "baseline": "x.png" }), "baseline"),
    ] {
        let error = session.fails("diff", input.clone(), 400, "E_BAD_REQUEST");
        assert_eq!(error["details"]["field"], field, "{input}: {error}");
    }
    let error = session.fails("diff", json!({ "kind": "pixels" }), 400, "E_BAD_REQUEST");
    assert!(error["message"].as_str().unwrap().contains("kind"), "{error}");
}

#[test]
fn a_screenshot_diff_of_a_one_word_change_is_above_0_and_below_1_percent() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/changes.html"));
    session.fails("diff", json!({ "kind": "screenshot" }), 400, "E_BAD_REQUEST");
    let baseline = session.ok("screenshot", json!({ "path": "before.png" }));
    let unchanged = session.ok("diff", json!({ "kind": "screenshot" }));
    assert_eq!((unchanged["changed_pixels"].as_u64(), unchanged["baseline"].as_str()), (Some(0), Some("last screenshot")), "{unchanged}");

    session.page_value("document.querySelector('#note').textContent = 'The quick brown cat jumps over the lazy dog.'; 1");
    let diff = session.ok("diff", json!({ "kind": "screenshot" }));
    let ratio = diff["changed_ratio"].as_f64().unwrap();
    println!("a one-word change: {} of {} pixels changed ({ratio})", diff["changed_pixels"], diff["total_pixels"]);
    assert!(ratio > 0.0 && ratio < 0.01, "{diff}");
    assert_eq!((diff["width"].as_u64(), diff["height"].as_u64(), diff["size_changed"].as_bool()), (Some(1024), Some(768), Some(false)));
    let artifacts = std::path::PathBuf::from(session.summary["artifacts_dir"].as_str().unwrap());
    let picture = std::path::PathBuf::from(diff["path"].as_str().unwrap());
    assert_eq!(picture.parent(), Some(artifacts.as_path()), "{diff}");
    let image = image::open(&picture).unwrap().to_rgba8();
    let red = image.pixels().filter(|pixel| pixel.0 == [230, 0, 0, 255]).count() as u64;
    assert_eq!(red, diff["changed_pixels"].as_u64().unwrap(), "the diff picture marks each changed pixel red");

    // Against a baseline file: the same change, counted the same.
    let path = baseline["path"].as_str().unwrap();
    let against = session.ok("diff", json!({ "kind": "screenshot", "baseline": path }));
    assert_eq!(
        (against["changed_pixels"].clone(), against["baseline"].as_str()),
        (diff["changed_pixels"].clone(), Some(path)),
        "{against}"
    );
    let error = session.fails("diff", json!({ "kind": "screenshot", "baseline": "/nonexistent/before.png" }), 400, "E_BAD_REQUEST");
    assert_eq!(error["details"]["field"], "baseline");
    let error =
        session.fails("diff", json!({ "kind": "screenshot", "baseline": daemon.data_dir.join("broker.json") }), 400, "E_BAD_REQUEST");
    assert_eq!(error["details"]["reason"], "inside_data_dir", "{error}");
}

#[test]
fn diff_url_compares_two_pages_in_a_tab_that_closes_after() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/hello.html"));
    let (first, second) = (fixtures.url("/f/compare-a.html"), fixtures.url("/f/compare-b.html"));
    let diff = session.ok("diff", json!({ "kind": "url", "urls": [first, second] }));
    assert_eq!((diff["previous_url"].as_str(), diff["url"].as_str()), (Some(first.as_str()), Some(second.as_str())));
    assert_eq!(diff["changed"], json!([{ "before": "Monday: write the tests.", "after": "Monday: write the code." }]), "{diff}");
    assert_eq!(strings(&diff["added"]), ["Wednesday: ship."], "{diff}");
    assert_eq!(strings(&diff["removed"]), Vec::<String>::new(), "{diff}");
    assert_eq!(fixtures.seen("/f/compare-a.html").len() + fixtures.seen("/f/compare-b.html").len(), 2);
    // The session's own tab is where it was, and the only one.
    let tabs = session.ok("tab_list", json!({}));
    assert_eq!(tabs["tabs"].as_array().unwrap().len(), 1, "{tabs}");
    assert_eq!(tabs["tabs"][0]["url"], fixtures.url("/f/hello.html"));
    assert_eq!(tabs["selected"], tabs["tabs"][0]["tab"]);
    let error = session.fails(
        "diff",
        json!({ "kind": "url", "urls": [fixtures.url("/f/hello.html"), "file:///etc/passwd"] }),
        400,
        "E_INVALID_URL",
    );
    assert_eq!(error["details"]["field"], "urls[1]", "{error}");
    assert_eq!(session.ok("tab_list", json!({}))["tabs"].as_array().unwrap().len(), 1);

    // The CLI: `malo diff url A B`.
    let dir = TempDir::new("diff-cli");
    let printed = daemon.cli_text_in(&dir.0, &["diff", "url", &first, &second]);
    assert!(printed.contains("1 changed, 1 added, 0 removed") && printed.contains("+ Wednesday: ship."), "{printed}");
}

#[test]
fn the_axe_audit_finds_the_two_planted_violations_and_the_page_never_sees_axe() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/audit.html"));
    let audit = session.ok("a11y", json!({}));
    assert!(audit["engine"].as_str().unwrap().starts_with("axe-core 4."), "{audit}");
    let violations = audit["violations"].as_array().unwrap();
    let mut ids: Vec<&str> = violations.iter().map(|violation| violation["id"].as_str().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, ["image-alt", "label"], "{audit}");
    for (id, selector) in [("image-alt", "#logo"), ("label", "#query")] {
        let violation = violations.iter().find(|violation| violation["id"] == id).unwrap();
        assert_eq!(violation["count"], 1, "{violation}");
        assert_eq!(violation["nodes"][0]["selector"], selector, "{violation}");
        assert!(violation["impact"].is_string() && violation["help"].is_string(), "{violation}");
        // The ref names the element: the page agent describes it at that ref.
        let element_ref = violation["nodes"][0]["ref"].as_str().expect("a ref");
        let shot = session.ok("screenshot", json!({ "ref": element_ref }));
        assert!(shot["width"].as_u64().unwrap() > 0);
    }
    assert!(audit["passes"].as_u64().unwrap() > 5, "{audit}");

    // The page's world has no axe, before and after a second audit.
    assert_eq!(session.page_value("window.sawAxe()"), json!("undefined "));
    let scoped = session.ok("a11y", json!({ "selector": "form", "tags": ["wcag2a"] }));
    let ids: Vec<&str> = scoped["violations"].as_array().unwrap().iter().map(|violation| violation["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["label"], "{scoped}");
    assert_eq!(session.page_value("window.sawAxe()"), json!("undefined "));
    let error = session.fails("a11y", json!({ "selector": "#nothing" }), 404, "E_NOT_FOUND");
    assert_eq!(error["details"]["field"], "selector");
}

#[test]
fn vitals_answers_ttfb_and_fcp_and_says_why_any_metric_is_missing() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/changes.html"));
    let vitals = session.ok("vitals", json!({}));
    assert_eq!(vitals["url"], fixtures.url("/f/changes.html"));
    let ttfb = vitals["ttfb_ms"].as_f64().unwrap_or_else(|| panic!("ttfb: {vitals}"));
    let fcp = vitals["fcp_ms"].as_f64().unwrap_or_else(|| panic!("fcp: {vitals}"));
    assert!(ttfb >= 0.0 && fcp > 0.0 && fcp >= ttfb && fcp < 30_000.0, "{vitals}");
    let unmeasured: Vec<&str> = vitals["not_measured"].as_array().unwrap().iter().map(|entry| entry["metric"].as_str().unwrap()).collect();
    for metric in ["ttfb_ms", "fcp_ms", "lcp_ms", "cls"] {
        assert_eq!(vitals[metric].is_null(), unmeasured.contains(&metric), "{metric}: {vitals}");
    }
    assert!(vitals["not_measured"]
        .as_array()
        .unwrap()
        .iter()
        .all(|entry| entry["reason"].as_str().is_some_and(|reason| !reason.is_empty())));
    println!("vitals of a fixture page: {vitals}");
}
