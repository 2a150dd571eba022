//! The person's policy (`<data-dir>/policy.toml`): sites kept off at the session proxy for
//! pages, frames and sub-resources alike; gated tools refused (`E_POLICY_DENIED`) or put
//! to a person through a desktop notification (tests/desktop/host.py presses its buttons);
//! a broken file refused by `malo policy check` and, in a running daemon, leaving the
//! last good policy in force; and no tool, route or MCP call that writes the file.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::*;

/// A daemon on a fresh data directory holding `policy` as its policy file.
fn daemon_with_policy(policy: &str, options: DaemonOptions) -> (TempDir, Daemon) {
    let dir = TempDir::new("policy");
    let data_dir = dir.0.join("data");
    std::fs::create_dir_all(&data_dir).unwrap();
    std::fs::write(data_dir.join("policy.toml"), policy).unwrap();
    let daemon = Daemon::spawn_in(&data_dir, &options).expect("the daemon did not start");
    (dir, daemon)
}

/// A session opened with `body` (a profile's, say).
fn session_with(lease: &Lease, body: Value) -> Session {
    let response = lease.try_session(body);
    assert_eq!(response.status, 200, "create session: {}", response.body);
    Session {
        id: response.body["session_id"].as_str().unwrap().to_string(),
        token: response.body["session_token"].as_str().unwrap().to_string(),
        lease: lease.clone(),
        summary: response.body,
    }
}

fn events_of_type(session: &Session, kind: &str) -> Vec<Value> {
    session.ok("events", json!({ "type": kind }))["events"].as_array().unwrap().clone()
}

/// The fixture server's URL under the host name `localhost` (another site than 127.0.0.1).
fn on_localhost(fixtures: &Fixtures, path: &str) -> String {
    format!("http://localhost:{}{path}", fixtures.port)
}

#[test]
fn a_profile_kept_to_one_site_loads_nothing_from_another_and_the_log_names_the_rule() {
    let policy = "[profiles.limited]\nallow_domains = [\"127.0.0.1\"]\n";
    let (_dir, daemon) = daemon_with_policy(policy, DaemonOptions::default());
    let allowed = Fixtures::start();
    let other = Fixtures::start();
    let lease = daemon.lease("agent-policy");
    let limited = session_with(&lease, json!({ "name": "limited", "profile": "limited" }));
    assert_eq!(limited.summary["policy"]["rules"], "profiles.limited", "{}", limited.summary);
    assert_eq!(limited.summary["policy"]["allow_domains"], json!(["127.0.0.1"]));

    // The page of the allowed site loads; its frame, image and fetch from the other do not.
    let page = format!("{}?other=http://localhost:{}", allowed.url("/f/crossing.html"), other.port);
    limited.navigate(&page);
    let settled = eventually(Duration::from_secs(10), || {
        let status = limited.ok("extract", json!({ "selector": "#status" }));
        let text = status.to_string();
        text.contains("\\\"image\\\":\\\"failed\\\"") && text.contains("\\\"fetch\\\":\\\"failed\\\"")
    });
    assert!(settled, "{}", limited.ok("extract", json!({ "selector": "#status" })));
    let requests = limited.ok("requests", json!({ "limit": 500 }))["requests"].as_array().unwrap().clone();
    for path in ["/f/hello.html", "/api/image", "/api/items.json"] {
        let record = requests
            .iter()
            .find(|record| record["url"] == on_localhost(&other, path))
            .unwrap_or_else(|| panic!("no record of {path}: {requests:?}"));
        assert_eq!(record["policy_rule"], "profiles.limited.allow_domains", "{record}");
        assert!(record["failure"].as_str().unwrap().starts_with("blocked_by_policy"), "{record}");
        assert_eq!(record["status"], Value::Null, "{record}");
    }
    // A page load of the other site fails as blocked, with an event naming the policy.
    let navigated = limited.post("/navigate", json!({ "url": on_localhost(&other, "/f/hello.html?top") }));
    assert_eq!((navigated.status, navigated.code()), (502, "E_NAVIGATION_FAILED"), "{}", navigated.body);
    assert_eq!(navigated.body["error"]["details"]["navigation"]["net_error"], "blocked_by_policy", "{}", navigated.body);
    let blocked = events_of_type(&limited, "navigation_blocked");
    assert!(
        blocked.iter().any(|event| event["reason"] == "policy" && event["url"] == on_localhost(&other, "/f/hello.html?top")),
        "{blocked:?}"
    );
    assert!(other.seen_all().is_empty(), "the blocked site saw {:?}", other.seen_all().iter().map(|seen| &seen.path).collect::<Vec<_>>());

    // An anonymous session of the same daemon has no rules: the other site is reachable.
    let anonymous = lease.session();
    assert_eq!(anonymous.summary["policy"]["rules"], "none");
    anonymous.navigate(&on_localhost(&other, "/f/hello.html"));
    assert_eq!(other.seen("/f/hello.html").len(), 1);
}

#[test]
fn a_blocked_host_that_does_not_resolve_is_refused_by_the_policy_for_pages_and_sub_resources() {
    // Issue 44: such a host was `partial_input` (over https the name was looked up before
    // the rule was read; over http WebKit sends no Sec-Fetch-Dest, so the page's request
    // was not known as one), with no `navigation_blocked` event.
    let policy = "[anonymous]\nblock_domains = [\"blocked.example.test\", \"*.wild.example.test\"]\n";
    let (_dir, daemon) = daemon_with_policy(policy, DaemonOptions::default());
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-policy").session();
    let exact = "anonymous.block_domains \"blocked.example.test\"";
    let wild = "anonymous.block_domains \"*.wild.example.test\"";
    for (url, rule) in [
        ("http://blocked.example.test/page?plain", exact),
        ("https://blocked.example.test/page?secure", exact),
        ("http://deep.down.wild.example.test/page", wild),
        ("https://a.wild.example.test/page", wild),
    ] {
        let navigated = session.post("/navigate", json!({ "url": url }));
        assert_eq!((navigated.status, navigated.code()), (502, "E_NAVIGATION_FAILED"), "{url}: {}", navigated.body);
        let navigation = &navigated.body["error"]["details"]["navigation"];
        assert_eq!(
            (navigation["net_error"].as_str(), navigation["policy_rule"].as_str()),
            (Some("blocked_by_policy"), Some(rule)),
            "{url}: {navigation}"
        );
        let blocked = events_of_type(&session, "navigation_blocked");
        assert!(
            blocked.iter().any(|event| event["url"] == url && event["reason"] == "policy" && event["rule"] == rule),
            "{url}: {blocked:?}"
        );
        let failed = events_of_type(&session, "load_failed");
        assert!(failed.iter().any(|event| event["url"] == url && event["net_error"] == "blocked_by_policy"), "{url}: {failed:?}");
    }
    // A page of an allowed site: its frame, image and fetch from the blocked sites, each
    // recorded under its own URL with the rule.
    for (other, rule) in [("http://blocked.example.test", exact), ("https://x.wild.example.test", wild)] {
        session.navigate(&format!("{}?other={other}", fixtures.url("/f/crossing.html")));
        let ended = eventually(Duration::from_secs(10), || {
            let text = session.ok("extract", json!({ "selector": "#status" })).to_string();
            text.contains("\\\"image\\\":\\\"failed\\\"") && text.contains("\\\"fetch\\\":\\\"failed\\\"")
        });
        assert!(ended, "{}", session.ok("extract", json!({ "selector": "#status" })));
        let requests = session.ok("requests", json!({ "limit": 500 }))["requests"].as_array().unwrap().clone();
        for (path, resource_type) in [("/f/hello.html", "Document"), ("/api/image", "Image")] {
            let url = format!("{other}{path}");
            let record = requests.iter().find(|record| record["url"] == url).unwrap_or_else(|| panic!("no record of {url}: {requests:?}"));
            assert_eq!(record["failure"], format!("blocked_by_policy: {rule}"), "{record}");
            assert_eq!((record["policy_rule"].as_str(), record["resource_type"].as_str()), (Some(rule), Some(resource_type)), "{record}");
        }
        let fetched = format!("{other}/api/items.json");
        let record =
            requests.iter().find(|record| record["url"] == fetched).unwrap_or_else(|| panic!("no record of {fetched}: {requests:?}"));
        assert_eq!(record["policy_rule"], rule, "{record}");
        let frame = events_of_type(&session, "navigation_blocked");
        assert!(frame.iter().any(|event| event["url"] == format!("{other}/f/hello.html") && event["rule"] == rule), "{frame:?}");
    }
}

#[test]
fn a_download_the_policy_denies_says_blocked_by_policy_with_the_rule() {
    let policy = "[profiles.nodownloads.tools]\ndownloads = \"deny\"\n";
    let (_dir, daemon) = daemon_with_policy(policy, DaemonOptions::default());
    let fixtures = Fixtures::start();
    let session = session_with(&daemon.lease("agent-policy"), json!({ "name": "nodownloads", "profile": "nodownloads" }));
    session.navigate(&fixtures.url("/f/files.html"));
    let rule = "profiles.nodownloads.tools.downloads";
    let clicked = session.ok("click", json!({ "selector": "#report" }));
    let download_id = clicked["downloads"][0]["download_id"].as_str().unwrap_or_else(|| panic!("no download: {clicked}")).to_string();
    let mut record = Value::Null;
    let ended = eventually(Duration::from_secs(10), || {
        let listed = session.ok("list_downloads", json!({}));
        record =
            listed["downloads"].as_array().unwrap().iter().find(|record| record["download_id"] == download_id).cloned().unwrap_or_default();
        record["status"] == "denied"
    });
    assert!(ended, "{record}");
    assert_eq!((record["error"].as_str(), record["policy_rule"].as_str()), (Some("blocked_by_policy"), Some(rule)), "{record}");
    assert_eq!((record["saved_path"].clone(), record["received_bytes"].clone()), (Value::Null, json!(0)), "{record}");
    let finished = events_of_type(&session, "download_finished");
    let event = finished.iter().find(|event| event["download_id"] == download_id).unwrap_or_else(|| panic!("{finished:?}"));
    assert_eq!(
        (event["status"].as_str(), event["error"].as_str(), event["policy_rule"].as_str()),
        (Some("denied"), Some("blocked_by_policy"), Some(rule)),
        "{event}"
    );
    // The agent's own denial is its own: no policy named.
    let anonymous = daemon.lease("agent-other").session();
    anonymous.navigate(&fixtures.url("/f/files.html"));
    anonymous.ok("set_download_behavior", json!({ "behavior": "deny" }));
    let clicked = anonymous.ok("click", json!({ "selector": "#report" }));
    let own = clicked["downloads"][0]["download_id"].as_str().unwrap().to_string();
    let ended = eventually(Duration::from_secs(10), || {
        let listed = anonymous.ok("list_downloads", json!({}));
        record = listed["downloads"].as_array().unwrap().iter().find(|record| record["download_id"] == own).cloned().unwrap_or_default();
        record["status"] == "denied"
    });
    assert!(ended && record["error"].is_null() && record["policy_rule"].is_null(), "{record}");
}

#[test]
fn evaluate_denied_on_a_profile_answers_policy_denied_and_works_on_an_anonymous_session() {
    let policy = "[profiles.guarded]\ncredentials = [\"allowed\"]\n[profiles.guarded.tools]\nevaluate = \"deny\"\nuploads = \"deny\"\n";
    let (_dir, daemon) = daemon_with_policy(policy, DaemonOptions::default());
    let fixtures = Fixtures::start();
    let lease = daemon.lease("agent-policy");
    let guarded = session_with(&lease, json!({ "name": "guarded", "profile": "guarded" }));
    assert_eq!(guarded.summary["policy"]["tools"]["evaluate"], "deny", "{}", guarded.summary);
    assert_eq!(guarded.summary["policy"]["tools"]["export_har"], "allow");
    guarded.navigate(&fixtures.url("/f/hello.html"));
    let error = guarded.fails("evaluate", json!({ "expression": "document.title" }), 403, "E_POLICY_DENIED");
    assert_eq!(error["details"]["rule"], "profiles.guarded.tools.evaluate", "{error}");
    assert!(error["message"].as_str().unwrap().contains("profiles.guarded.tools.evaluate"), "{error}");
    let refusals = events_of_type(&guarded, "action");
    assert!(refusals.iter().any(|event| event["tool"] == "evaluate" && event["error"] == "E_POLICY_DENIED"), "{refusals:?}");
    // Inside run_steps too, and through the DevTools endpoint's door.
    let steps = guarded.tool("run_steps", json!({ "steps": [{ "type": "evaluate", "expression": "1" }] }));
    assert!(steps.body.to_string().contains("E_POLICY_DENIED"), "{}", steps.body);
    guarded.fails("cdp_endpoint", json!({}), 403, "E_POLICY_DENIED");
    // A vault credential the policy leaves out is refused before the vault is asked.
    let error = guarded.fails("login", json!({ "mode": "password", "credential": "other" }), 403, "E_POLICY_DENIED");
    assert_eq!(error["details"]["rule"], "profiles.guarded.credentials", "{error}");
    assert_eq!(guarded.summary["policy"]["credentials"], json!(["allowed"]));
    // What the policy does not gate still works.
    guarded.ok("extract", json!({ "selector": "h1" }));

    let anonymous = lease.session();
    anonymous.navigate(&fixtures.url("/f/hello.html"));
    assert_eq!(anonymous.page_value("document.title"), "Hello fixture");
}

#[test]
fn a_malformed_policy_is_refused_with_its_line_and_the_daemon_keeps_the_last_good_one() {
    let good = "[anonymous.tools]\nevaluate = \"deny\"\n";
    let broken = "[anonymous.tools]\nevaluate = \"deny\"\n[anonymous]\nblock_domains = [\"https://x.example/\"]\n";
    let (dir, daemon) = daemon_with_policy(good, DaemonOptions::default());
    let policy_path = daemon.data_dir.join("policy.toml");

    // `malo policy check` explains a good file and refuses a broken one with where.
    let check = |path: &Path| Command::new(malo_binary()).args(["policy", "check"]).arg(path).output().unwrap();
    let said = check(&policy_path);
    assert!(said.status.success(), "{}", String::from_utf8_lossy(&said.stderr));
    let words = String::from_utf8_lossy(&said.stdout).to_string();
    assert!(words.contains("run JavaScript in pages (evaluate): refused"), "{words}");
    let broken_path = dir.0.join("broken.toml");
    std::fs::write(&broken_path, broken).unwrap();
    let said = check(&broken_path);
    assert_eq!(said.status.code(), Some(1));
    let error = String::from_utf8_lossy(&said.stderr).to_string();
    assert!(error.contains(&format!("{}:4:18:", broken_path.display())), "{error}");
    assert!(error.contains("URL"), "{error}");

    // The running daemon: a broken file leaves the last good policy in force, logged.
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-policy").session();
    session.navigate(&fixtures.url("/f/hello.html"));
    session.fails("evaluate", json!({ "expression": "1" }), 403, "E_POLICY_DENIED");
    std::fs::write(&policy_path, broken).unwrap();
    std::thread::sleep(Duration::from_millis(400));
    session.fails("evaluate", json!({ "expression": "1" }), 403, "E_POLICY_DENIED");
    assert!(
        eventually(Duration::from_secs(5), || daemon.stderr().contains("does not parse: the last good policy stays in force")),
        "{}",
        daemon.stderr()
    );
    assert!(daemon.stderr().contains("policy.toml:4:18"), "the log names the line: {}", daemon.stderr());
    // A fixed file is read again.
    std::fs::write(&policy_path, "[anonymous.tools]\nevaluate = \"allow\"\n").unwrap();
    assert!(eventually(Duration::from_secs(5), || session.tool("evaluate", json!({ "expression": "1 + 1" })).status == 200));

    // A daemon does not start on a broken file.
    let fresh = TempDir::new("policy-broken");
    std::fs::create_dir_all(fresh.0.join("data")).unwrap();
    std::fs::write(fresh.0.join("data/policy.toml"), broken).unwrap();
    let refused = Daemon::spawn_in(&fresh.0.join("data"), &DaemonOptions::default()).err().expect("a daemon started on a broken policy");
    assert!(refused.1.contains("policy.toml:4:18"), "{}", refused.1);
}

/// The first notification not yet closed whose summary holds `what`, once shown.
fn question(desktop: &mut DesktopHost, what: &str, seen: usize) -> Value {
    let mut found = None;
    let shown = eventually(Duration::from_secs(10), || {
        let all = desktop.notifications();
        found = all.iter().skip(seen).find(|notification| notification["summary"].as_str().unwrap_or("").contains(what)).cloned();
        found.is_some()
    });
    assert!(shown, "no question about {what:?}: {:?}", desktop.notifications());
    found.unwrap()
}

fn evaluate_in_background(session: &Session) -> std::thread::JoinHandle<Response> {
    let session = session.clone();
    std::thread::spawn(move || session.tool("evaluate", json!({ "expression": "6 * 7" })))
}

#[test]
fn a_person_allows_denies_or_leaves_unanswered_and_allow_for_the_lease_lasts_the_lease() {
    let mut desktop = DesktopHost::start();
    let policy = "approval_timeout_seconds = 3\n[anonymous.tools]\nevaluate = \"ask\"\n";
    let options = DaemonOptions { dbus: Some(desktop.address.clone()), ..Default::default() };
    let (_dir, daemon) = daemon_with_policy(policy, options);
    let fixtures = Fixtures::start();
    let lease = daemon.lease("agent-asks");
    let session = lease.session();
    session.navigate(&fixtures.url("/f/hello.html"));
    assert_eq!(session.summary["policy"]["tools"]["evaluate"], "ask");

    // Allow: the call goes through; the question named the agent, session, site and action.
    let call = evaluate_in_background(&session);
    let asked = question(&mut desktop, "evaluate", 0);
    assert_eq!(asked["summary"], "agent-asks asks to run JavaScript in pages (evaluate)", "{asked}");
    let body = asked["body"].as_str().unwrap();
    assert!(body.contains("127.0.0.1") && body.contains("an anonymous session") && body.contains("\u{201c}test\u{201d}"), "{body}");
    assert_eq!(asked["actions"], json!(["allow", "Allow", "allow_lease", "Allow for this lease", "deny", "Deny"]));
    desktop.press(asked["id"].as_u64().unwrap(), "allow");
    let answered = call.join().unwrap();
    assert_eq!(answered.status, 200, "{}", answered.body);
    assert_eq!(answered.body["result"]["value"], 42);

    // Allow once is once: the next call asks again, and Deny refuses it.
    let seen = desktop.notifications().len();
    let call = evaluate_in_background(&session);
    let asked = question(&mut desktop, "evaluate", seen);
    desktop.press(asked["id"].as_u64().unwrap(), "deny");
    let answered = call.join().unwrap();
    assert_eq!((answered.status, answered.code()), (403, "E_DENIED_BY_PERSON"), "{}", answered.body);

    // Dismissed: a no as well.
    let seen = desktop.notifications().len();
    let call = evaluate_in_background(&session);
    let asked = question(&mut desktop, "evaluate", seen);
    desktop.dismiss(asked["id"].as_u64().unwrap());
    let answered = call.join().unwrap();
    assert_eq!(answered.code(), "E_DENIED_BY_PERSON", "{}", answered.body);

    // Nobody answers: the call ends in time, the question is withdrawn, the agent is told.
    let seen = desktop.notifications().len();
    let begun = std::time::Instant::now();
    let call = evaluate_in_background(&session);
    let asked = question(&mut desktop, "evaluate", seen);
    let answered = call.join().unwrap();
    assert_eq!((answered.status, answered.code()), (504, "E_APPROVAL_TIMEOUT"), "{}", answered.body);
    assert!(answered.body["error"]["message"].as_str().unwrap().contains("tell your person"), "{}", answered.body);
    assert!(begun.elapsed() < Duration::from_secs(8), "{:?}", begun.elapsed());
    let withdrawn = eventually(Duration::from_secs(5), || {
        desktop.notifications().iter().any(|notification| notification["id"] == asked["id"] && notification["closed"] == true)
    });
    assert!(withdrawn, "the unanswered question stayed: {:?}", desktop.notifications());

    // Allow for this lease: not asked again within the lease.
    let seen = desktop.notifications().len();
    let call = evaluate_in_background(&session);
    let asked = question(&mut desktop, "evaluate", seen);
    desktop.press(asked["id"].as_u64().unwrap(), "allow_lease");
    assert_eq!(call.join().unwrap().status, 200);
    let seen = desktop.notifications().len();
    assert_eq!(session.page_value("6 * 7"), 42);
    let another = lease.session();
    another.navigate(&fixtures.url("/f/hello.html"));
    assert_eq!(another.page_value("1 + 1"), 2);
    assert_eq!(desktop.notifications().len(), seen, "asked again within the lease");
    let answers: Vec<String> =
        events_of_type(&session, "approval").iter().map(|event| event["answer"].as_str().unwrap().to_string()).collect();
    assert_eq!(answers, ["allowed_once", "denied", "denied", "timed_out", "allowed_for_lease", "allowed_earlier_in_lease"]);

    // The next lease is asked again.
    let next_lease = daemon.lease("agent-next");
    let next = next_lease.session();
    next.navigate(&fixtures.url("/f/hello.html"));
    let call = evaluate_in_background(&next);
    let asked = question(&mut desktop, "agent-next asks", seen);
    desktop.press(asked["id"].as_u64().unwrap(), "allow");
    assert_eq!(call.join().unwrap().status, 200);
    assert!(daemon.stderr().contains("approval"), "each decision is a log line");
}

#[test]
fn opening_a_profile_under_ask_waits_for_the_person_once_per_lease() {
    let mut desktop = DesktopHost::start();
    let policy = "[profiles.vip]\nopen = \"ask\"\n[profiles.plain]\nopen = \"deny\"\n";
    let options = DaemonOptions { dbus: Some(desktop.address.clone()), ..Default::default() };
    let (_dir, daemon) = daemon_with_policy(policy, options);
    let lease = daemon.lease("agent-opens");
    let error = lease.try_session(json!({ "name": "p", "profile": "plain" }));
    assert_eq!((error.status, error.code()), (403, "E_POLICY_DENIED"), "{}", error.body);
    assert_eq!(error.body["error"]["details"]["rule"], "profiles.plain.open");

    let open_in_background = |lease: &Lease| {
        let lease = lease.clone();
        std::thread::spawn(move || lease.try_session(json!({ "name": "vip", "profile": "vip" })))
    };
    let opening = open_in_background(&lease);
    let asked = question(&mut desktop, "open the profile", 0);
    assert!(asked["body"].as_str().unwrap().contains("\u{201c}vip\u{201d}"), "{asked}");
    desktop.press(asked["id"].as_u64().unwrap(), "deny");
    let refused = opening.join().unwrap();
    assert_eq!((refused.status, refused.code()), (403, "E_DENIED_BY_PERSON"), "{}", refused.body);
    assert!(!daemon.data_dir.join("profiles/vip").exists(), "a refused profile was created");

    let seen = desktop.notifications().len();
    let opening = open_in_background(&lease);
    let asked = question(&mut desktop, "open the profile", seen);
    desktop.press(asked["id"].as_u64().unwrap(), "allow_lease");
    let opened = opening.join().unwrap();
    assert_eq!(opened.status, 200, "{}", opened.body);
    let again = lease.try_session(json!({ "name": "vip2", "profile": "vip" }));
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(desktop.notifications().len(), seen + 1, "asked again within the lease");
}

#[test]
fn with_nobody_to_ask_an_ask_is_a_denial_that_says_so() {
    // No session D-Bus at all: no notification can reach a person.
    let policy = "[anonymous.tools]\nexport_har = \"ask\"\n";
    let (_dir, daemon) = daemon_with_policy(policy, DaemonOptions::default());
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-alone").session();
    session.navigate(&fixtures.url("/f/hello.html"));
    let error = session.fails("export_har", json!({}), 403, "E_POLICY_DENIED");
    assert_eq!(error["details"]["reason"], "no_person_reachable", "{error}");
    assert!(error["message"].as_str().unwrap().contains("no way to reach them"), "{error}");
    let events = events_of_type(&session, "approval");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["answer"], "unreachable");
}

/// The tools whose input names a file or directory the daemon writes.
const PATH_FIELDS: [(&str, &str); 4] =
    [("screenshot", "path"), ("pdf", "path"), ("set_download_behavior", "download_path"), ("storage_state", "path")];

#[test]
fn no_tool_route_or_mcp_call_writes_the_policy_file() {
    let policy = "# the person's\n[anonymous]\nblock_domains = [\"blocked.example\"]\n";
    let (_dir, daemon) = daemon_with_policy(policy, DaemonOptions::default());
    let policy_path = daemon.data_dir.join("policy.toml");
    let written = |path: &PathBuf| (std::fs::read(path).unwrap(), std::fs::metadata(path).unwrap().modified().unwrap());
    let before = written(&policy_path);
    let fixtures = Fixtures::start();
    let lease = daemon.lease("agent-writer");
    let session = lease.session();
    session.navigate(&fixtures.url("/f/hello.html"));

    // Every tool whose input takes a path is in the list tried below.
    let catalogue = request(lease.port, "GET", "/v1/tools", &lease.headers(), None).body;
    let mut taking_paths: Vec<(String, String)> = Vec::new();
    for tool in catalogue["tools"].as_array().unwrap() {
        for field in tool["input_schema"]["properties"].as_object().into_iter().flatten().map(|(name, _)| name) {
            if field.contains("path") || field.contains("file") || field.contains("dir") {
                taking_paths.push((tool["name"].as_str().unwrap().to_string(), field.clone()));
            }
        }
    }
    // These read files (outside the data directory), never write.
    taking_paths.retain(|(tool, _)| tool != "set_file_input" && tool != "init_script");
    let mut listed: Vec<(String, String)> = PATH_FIELDS.iter().map(|(tool, field)| (tool.to_string(), field.to_string())).collect();
    listed.sort();
    taking_paths.sort();
    assert_eq!(taking_paths, listed, "a tool takes a path this test does not try");

    let data_dir = daemon.data_dir.display().to_string();
    let aims = [
        policy_path.display().to_string(),
        "../../../../../policy.toml".to_string(),
        format!("{data_dir}/leases/../policy.toml"),
        "policy.toml".to_string(),
    ];
    for aim in &aims {
        for (tool, field) in PATH_FIELDS {
            let mut input = json!({});
            input[field] = json!(aim);
            if tool == "set_download_behavior" {
                input["behavior"] = json!("accept");
            }
            if tool == "storage_state" {
                input["action"] = json!("export");
            }
            let _ = session.tool(tool, input);
        }
    }
    // A download directory in the data directory is refused outright.
    for directory in [data_dir.clone(), format!("{data_dir}/leases/..")] {
        session.fails("set_download_behavior", json!({ "behavior": "accept", "download_path": directory }), 400, "E_BAD_REQUEST");
    }
    // The same through MCP, and the CLI's -o.
    let mut mcp = McpProcess::start_with_caps(&daemon, "agent-mcp", "all");
    for aim in &aims {
        let _ = mcp.call("browser_screenshot", json!({ "path": aim }));
        let _ = mcp.call("browser_pdf", json!({ "path": aim }));
        let _ = mcp.call("browser_storage_state", json!({ "action": "export", "path": aim }));
        let (failed, _) = mcp.call("browser_set_download_behavior", json!({ "behavior": "accept", "download_path": data_dir }));
        assert!(failed);
    }
    let work = TempDir::new("policy-cli");
    let cli = daemon.cli_output_in(&work.0, &["screenshot", "-o", &policy_path.display().to_string()]);
    assert!(!cli.status.success());
    assert!(String::from_utf8_lossy(&cli.stderr).contains("data directory"), "{}", String::from_utf8_lossy(&cli.stderr));

    assert!(written(&policy_path) == before, "the policy file changed");
    assert_eq!(std::fs::read_to_string(&policy_path).unwrap(), policy);
}
