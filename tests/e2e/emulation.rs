//! `emulate` and `clipboard` (issue #49): media features per session, as CSS and
//! `matchMedia` see them and changeable at run time while another session shows the
//! other scheme; device presets; HTTP credentials whose password is never echoed; and a
//! clipboard per session that copy and paste through the page use, never the system's.

use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::*;

/// What media.html's `media()` reads: CSS custom properties and matchMedia.
fn media(session: &Session) -> Value {
    session.page_value("media()")
}

#[test]
fn dark_scheme_flips_a_prefers_color_scheme_page_in_one_session_only() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let lease = daemon.lease("agent-a");
    let dark = lease.session();
    let light = lease.session();
    dark.navigate(&fixtures.url("/f/media.html"));
    light.navigate(&fixtures.url("/f/media.html"));
    // Before any emulation, nothing of malo's is in the page's world.
    let native = "matchMedia.toString().includes('[native code]')";
    assert_eq!((dark.page_value(native), light.page_value(native)), (json!(true), json!(true)));
    let before = media(&dark);
    assert_eq!((before["css"]["scheme"].clone(), before["query"]["dark"].clone()), (json!("light"), json!(false)), "{before}");

    // At run time, on the loaded page: CSS and matchMedia flip (a MediaQueryList the page
    // made before the session's first media emulation keeps the engine's answer, as
    // docs/API.md says); the other session stays light.
    let state = dark.ok("emulate", json!({ "color_scheme": "dark", "reduced_motion": "reduce" }));
    assert_eq!(state["media"], json!({ "color_scheme": "dark", "reduced_motion": "reduce", "forced_colors": null }), "{state}");
    let seen = media(&dark);
    assert_eq!(seen["css"], json!({ "scheme": "dark", "motion": "reduce", "forced": "none", "background": "rgb(0, 0, 0)" }), "{seen}");
    assert_eq!(seen["query"]["darkNow"], true, "{seen}");
    assert_eq!(seen["query"]["reduce"], true, "{seen}");
    assert_eq!(seen["query"]["media"], "(prefers-color-scheme: dark)", "the page sees its own query: {seen}");
    let other = media(&light);
    assert_eq!(light.page_value(native), true, "a session that emulates nothing keeps the engine's matchMedia");
    assert_eq!((other["css"]["scheme"].clone(), other["query"]["darkNow"].clone()), (json!("light"), json!(false)), "{other}");

    // A new document of the session is dark from its first script on, its own
    // MediaQueryLists too, and they hear later changes; forced colors too.
    dark.ok("emulate", json!({ "forced_colors": "active" }));
    dark.navigate(&fixtures.url("/f/media.html?again"));
    let seen = media(&dark);
    assert_eq!((seen["css"]["scheme"].clone(), seen["css"]["forced"].clone()), (json!("dark"), json!("active")), "{seen}");
    assert_eq!((seen["query"]["dark"].clone(), seen["query"]["forced"].clone()), (json!(true), json!(true)), "{seen}");

    // Back to the engine's own: light again, and the listener heard it.
    dark.ok("emulate", json!({ "color_scheme": "default", "reduced_motion": "default", "forced_colors": "default" }));
    let seen = media(&dark);
    assert_eq!(seen["css"], json!({ "scheme": "light", "motion": "no-preference", "forced": "none", "background": "rgb(255, 255, 255)" }));
    assert_eq!(seen["changes"], json!(["light"]), "{seen}");

    // A session created dark shows it while the light one lives (once E_UNSUPPORTED).
    let created = lease.try_session(json!({ "color_scheme": "dark" }));
    assert_eq!(created.status, 200, "{}", created.body);
    let third = Session {
        id: created.body["session_id"].as_str().unwrap().to_string(),
        token: created.body["session_token"].as_str().unwrap().to_string(),
        lease: lease.clone(),
        summary: created.body.clone(),
    };
    third.navigate(&fixtures.url("/f/media.html"));
    assert_eq!(media(&third)["css"]["scheme"], "dark");
    assert_eq!(media(&light)["css"]["scheme"], "light");

    // Wrong values name the field.
    let refused = dark.fails("emulate", json!({ "color_scheme": "purple" }), 400, "E_BAD_REQUEST");
    assert!(refused.to_string().contains("color_scheme"), "{refused}");
    dark.fails("emulate", json!({ "reduced_motion": true }), 400, "E_BAD_REQUEST");
}

#[test]
fn device_presets_set_what_the_engine_can_and_name_what_it_cannot() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    session.navigate(&fixtures.url("/f/media.html"));

    // A phone's pixel ratio and touch screen are not WebKitGTK's to give: E_UNSUPPORTED
    // naming the field, and nothing changed.
    let refused = session.fails("emulate", json!({ "device": "iPhone 15" }), 422, "E_UNSUPPORTED");
    assert_eq!(refused["details"]["field"], "device_scale_factor", "{refused}");
    assert_eq!(session.page_value("innerWidth"), 1024);
    let unknown = session.fails("emulate", json!({ "device": "Nokia 3310" }), 400, "E_BAD_REQUEST");
    assert_eq!(unknown["details"]["field"], "device", "{unknown}");

    // best_effort applies the viewport and the user agent, and lists the rest.
    let applied = session.ok("emulate", json!({ "device": "iphone15", "best_effort": true }));
    assert_eq!(applied["device"], json!({ "name": "iPhone 15", "width": 393, "height": 852 }), "{applied}");
    assert_eq!(applied["not_emulated"], json!(["device_scale_factor", "touch"]), "{applied}");
    assert_eq!(session.page_value("innerWidth"), 393);
    session.navigate(&fixtures.url("/f/media.html?phone"));
    let agent = fixtures.seen("/f/media.html").pop().unwrap().headers.into_iter().find(|(name, _)| name == "user-agent").unwrap().1;
    assert!(agent.contains("iPhone OS 17_5"), "the server saw {agent}");
    assert!(session.page_value("navigator.userAgent").as_str().unwrap().contains("iPhone"));

    // A desktop preset is all the engine's to give; user_agent "" is the session's own again.
    let desktop = session.ok("emulate", json!({ "device": "Desktop 720p", "user_agent": null }));
    assert!(desktop.get("not_emulated").is_none(), "{desktop}");
    assert_eq!(session.page_value("[innerWidth, innerHeight]"), json!([1280, 720]));
    session.ok("emulate", json!({ "user_agent": "" }));
    session.navigate(&fixtures.url("/f/media.html?own"));
    assert!(session.page_value("navigator.userAgent").as_str().unwrap().ends_with("Safari/605.1.15"));
}

#[test]
fn http_credentials_answer_the_challenge_and_the_password_is_never_echoed() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-a").session();
    let url = fixtures.url("/basic-auth");

    // Without credentials the challenge is refused (no dialog waits): the 401 page.
    session.navigate(&url);
    assert_eq!(session.title(), "unauthorized");

    let origin = format!("http://127.0.0.1:{}", fixtures.port);
    let set = session.tool("emulate", json!({ "credentials": { "username": "ann", "password": "open-sesame-71", "origin": origin } }));
    assert_eq!(set.status, 200, "{}", set.body);
    assert!(!set.body.to_string().contains("open-sesame"), "{}", set.body);
    assert_eq!(set.body["result"]["credentials"], json!({ "username": "ann", "origin": origin }));
    session.navigate(&url);
    assert_eq!(session.title(), "authenticated");

    // Nowhere in the session's events or the daemon's log either.
    assert!(!session.events(0).to_string().contains("open-sesame"));
    assert!(!daemon.stderr().contains("open-sesame"));

    // Credentials for another origin are not given to this one; a wrong password ends on
    // the 401 page instead of a loop.
    let other = daemon.lease("agent-b").session();
    other.ok("emulate", json!({ "credentials": { "username": "ann", "password": "open-sesame-71", "origin": "http://localhost:9" } }));
    other.navigate(&url);
    assert_eq!(other.title(), "unauthorized");
    other.ok("emulate", json!({ "credentials": { "username": "ann", "password": "wrong" } }));
    other.navigate(&url);
    assert_eq!(other.title(), "unauthorized");

    // Bad input, named; a vault name that does not exist.
    let missing = session.fails("emulate", json!({ "credentials": { "username": "ann" } }), 400, "E_BAD_REQUEST");
    assert_eq!(missing["details"]["field"], "credentials.password", "{missing}");
    let both =
        session.fails("emulate", json!({ "credentials": { "credential": "x", "username": "ann", "password": "p" } }), 400, "E_BAD_REQUEST");
    assert_eq!(both["details"]["field"], "credentials.credential", "{both}");
    let response = session.tool("emulate", json!({ "credentials": { "credential": "no-such-login" } }));
    assert_eq!(response.code(), "E_CREDENTIAL_NOT_FOUND", "{}", response.body);

    // null removes them.
    let cleared = session.ok("emulate", json!({ "credentials": null }));
    assert_eq!(cleared["credentials"], Value::Null, "{cleared}");
}

#[test]
fn copy_and_paste_go_through_the_session_clipboard_and_no_other_session_sees_it() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let lease = daemon.lease("agent-a");
    let session = lease.session();
    session.navigate(&fixtures.url("/f/clipboard.html"));

    // A person's keys: select the first input, Ctrl+C, focus the second, Ctrl+V.
    session.page_value("document.getElementById('source').select(), true");
    session.ok("press", json!({ "key": "Control+c" }));
    assert!(
        eventually(Duration::from_secs(5), || session.ok("clipboard", json!({ "action": "read" }))["text"] == "copied through the page"),
        "{}",
        session.ok("clipboard", json!({ "action": "read" }))
    );
    session.ok("focus", json!({ "selector": "#target" }));
    session.ok("press", json!({ "key": "Control+v" }));
    assert_eq!(session.page_value("document.getElementById('target').value"), "copied through the page");
    let seen = session.page_value("seen");
    assert_eq!(
        seen,
        json!([
            { "kind": "copy", "target": "source", "data": null },
            { "kind": "paste", "target": "target", "data": "copied through the page" },
        ]),
        "the page saw its own clipboard events"
    );

    // The tool: write, then paste into a field whose page handles paste itself.
    let written = session.ok("clipboard", json!({ "action": "write", "text": "from the agent" }));
    assert_eq!(written["text"], "from the agent");
    session.ok("focus", json!({ "selector": "#note" }));
    let pasted = session.ok("clipboard", json!({ "action": "paste" }));
    assert_eq!(pasted["pasted"], false, "the page took the paste: {pasted}");
    assert_eq!(session.page_value("document.getElementById('note').value"), "[from the agent]");
    // Copy of a selection through the tool, and a plain paste into an input.
    session.page_value("(() => { const e = document.getElementById('source'); e.focus(); e.setSelectionRange(0, 6); return true; })()");
    assert_eq!(session.ok("clipboard", json!({ "action": "copy" }))["text"], "copied");
    session.page_value("(() => { const e = document.getElementById('target'); e.value = ''; e.focus(); return true; })()");
    assert_eq!(session.ok("clipboard", json!({ "action": "paste" }))["pasted"], true);
    assert_eq!(session.page_value("document.getElementById('target').value"), "copied");

    // Another session: its clipboard is empty, and a paste there gives its page nothing.
    let other = lease.session();
    other.navigate(&fixtures.url("/f/clipboard.html"));
    assert_eq!(other.ok("clipboard", json!({ "action": "read" }))["text"], "");
    other.ok("focus", json!({ "selector": "#target" }));
    other.ok("press", json!({ "key": "Control+v" }));
    assert_eq!(other.page_value("document.getElementById('target').value"), "");
    assert_eq!(other.page_value("seen"), json!([{ "kind": "paste", "target": "target", "data": "" }]));

    // Bad input, named.
    let refused = session.fails("clipboard", json!({ "action": "write" }), 400, "E_BAD_REQUEST");
    assert_eq!(refused["details"]["field"], "text", "{refused}");
    let refused = session.fails("clipboard", json!({ "action": "read", "text": "x" }), 400, "E_BAD_REQUEST");
    assert_eq!(refused["details"]["field"], "text", "{refused}");
    session.fails("clipboard", json!({ "action": "steal" }), 400, "E_BAD_REQUEST");
    let big = "x".repeat(300 * 1024);
    let refused = session.fails("clipboard", json!({ "action": "write", "text": big }), 400, "E_BAD_REQUEST");
    assert_eq!(refused["details"]["field"], "text", "{refused}");
}

#[test]
fn the_cli_emulates_and_uses_the_clipboard_with_positional_arguments() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let dir = TempDir::new("emulation-cli");
    let cli = |args: &[&str]| daemon.cli_in(&dir.0, args);
    cli(&["session", "new"]);
    cli(&["navigate", &fixtures.url("/f/media.html")]);
    let state = cli(&["emulate", "--color-scheme", "dark"]);
    assert_eq!(state["media"]["color_scheme"], "dark", "{state}");
    assert_eq!(cli(&["evaluate", "media().css.scheme"])["value"], "dark");
    let written = cli(&["clipboard", "write", "hello there"]);
    assert_eq!(written["text"], "hello there", "{written}");
    assert_eq!(cli(&["clipboard", "read"])["text"], "hello there");
    let help = daemon.cli_text_in(&dir.0, &["--help"]);
    assert!(help.contains("emulate") && help.contains("clipboard"), "{help}");
}
