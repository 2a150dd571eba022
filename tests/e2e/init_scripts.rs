//! Init scripts (issue 49, point 9): a script added with `init_script` runs in the page's
//! own world before the page's first script, in the main frame and in an iframe, in tabs
//! opened later too, and no longer once removed by its id. The pages record what their
//! first script saw.

use serde_json::json;

use crate::harness::*;

const MARK: &str = "window.__initMark = 'init ran at ' + location.pathname;";

#[test]
fn an_init_script_runs_before_the_pages_first_script_in_every_frame_until_removed() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent").session();
    let url = fixtures.url("/f/init.html");
    session.navigate(&url);
    let seen = || session.page_value("[window.firstSaw, window.frameSaw]");
    assert_eq!(seen(), json!(["nothing", "nothing"]), "no init script yet");

    let added = session.ok("init_script", json!({ "action": "add", "script": MARK }));
    let id = added["added"].as_u64().unwrap();
    assert_eq!(added["scripts"][0]["id"], id, "{added}");
    session.navigate(&url);
    assert_eq!(seen(), json!(["init ran at /f/init.html", "init ran at /f/init-frame.html"]));

    // A tab opened later runs it as well, from its first page.
    session.ok("tab_new", json!({ "url": url }));
    assert_eq!(seen(), json!(["init ran at /f/init.html", "init ran at /f/init-frame.html"]));

    assert_eq!(session.ok("init_script", json!({ "action": "list" }))["scripts"].as_array().unwrap().len(), 1);
    let removed = session.ok("init_script", json!({ "action": "remove", "id": id }));
    assert_eq!((removed["removed"].as_u64(), removed["scripts"].as_array().map(Vec::len)), (Some(id), Some(0)), "{removed}");
    session.navigate(&url);
    assert_eq!(seen(), json!(["nothing", "nothing"]), "removed: it runs no more");

    let error = session.fails("init_script", json!({ "action": "remove", "id": id }), 404, "E_NOT_FOUND");
    assert_eq!(error["details"]["field"], "id");
    let error = session.fails("init_script", json!({ "action": "add" }), 400, "E_BAD_REQUEST");
    assert_eq!(error["details"]["field"], "script");
    let error = session.fails("init_script", json!({ "action": "add", "path": "relative.js" }), 400, "E_BAD_REQUEST");
    assert_eq!(error["details"]["field"], "path");
}

#[test]
fn init_script_add_file_and_remove_id_on_the_command_line() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let dir = TempDir::new("cli-init-script");
    std::fs::write(dir.0.join("mark.js"), MARK).unwrap();
    let added = daemon.cli_in(&dir.0, &["init-script", "add", "mark.js"]);
    let id = added["added"].as_u64().unwrap().to_string();
    daemon.cli_text_in(&dir.0, &["navigate", &fixtures.url("/f/init.html")]);
    assert_eq!(daemon.cli_in(&dir.0, &["eval", "window.firstSaw"])["value"], "init ran at /f/init.html");
    let removed = daemon.cli_in(&dir.0, &["init-script", "remove", &id]);
    assert_eq!(removed["removed"].as_u64().map(|id| id.to_string()), Some(id));
    daemon.cli_text_in(&dir.0, &["navigate", &fixtures.url("/f/init.html")]);
    assert_eq!(daemon.cli_in(&dir.0, &["eval", "window.firstSaw"])["value"], "nothing");
    let inline = daemon.cli_in(&dir.0, &["init-script", "add", "--script", "window.__initMark = 'inline';"]);
    assert_eq!(inline["scripts"][0]["start"], "window.__initMark = 'inline';");
    daemon.cli_text_in(&dir.0, &["close"]);
}
