//! Meeting agents where they are: `malo mcp` over stdio (raw JSON-RPC and the official
//! Python MCP SDK), Streamable HTTP MCP at `/mcp`, two agents at once, the CLI, and
//! schemathesis against `/v1/openapi.json`.

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::*;

fn leases(daemon: &Daemon) -> Vec<String> {
    let listed = request(daemon.port, "GET", "/v1/leases", &daemon.broker_headers(), None);
    listed.body["leases"].as_array().unwrap().iter().map(|lease| lease["agent_id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn the_official_python_mcp_sdk_drives_malo_over_stdio_and_http() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let stdio = Command::new(python())
        .arg(repo_file("tests/mcp/client.py"))
        .args(["stdio", &fixtures.url("/f/actions.html"), "--"])
        .arg(malo_binary())
        .args(["mcp", "--data-dir"])
        .arg(&daemon.data_dir)
        .env("DISPLAY", display())
        .output()
        .expect("the Python MCP SDK is set up by scripts/setup.sh");
    assert!(stdio.status.success(), "{}", String::from_utf8_lossy(&stdio.stderr));
    let lease = daemon.lease("http-agent");
    let http = Command::new(python())
        .arg(repo_file("tests/mcp/client.py"))
        .args(["http", &fixtures.url("/f/actions.html"), &format!("{}/mcp", lease.endpoint), &lease.token])
        .output()
        .unwrap();
    assert!(http.status.success(), "{}", String::from_utf8_lossy(&http.stderr));
    for output in [stdio.stdout, http.stdout] {
        let seen: Value = serde_json::from_slice(&output).unwrap();
        let core: Vec<&str> = seen["core_tools"].as_array().unwrap().iter().map(|tool| tool.as_str().unwrap()).collect();
        assert!(core.contains(&"browser_enable_caps") && !core.contains(&"browser_assert"), "{core:?}");
        assert_eq!(seen["enabled"], json!(["vision", "devtools", "sessions"]));
        let tools: Vec<&str> = seen["tools"].as_array().unwrap().iter().map(|tool| tool.as_str().unwrap()).collect();
        for name in ["browser_navigate", "browser_snapshot", "browser_click", "browser_fill", "browser_assert", "browser_session_new"] {
            assert!(tools.contains(&name), "{tools:?}");
        }
        assert_eq!(seen["navigate_schema_required"], json!(["url"]));
        assert_eq!(seen["has_session_property"], true);
        // Lean answers over MCP: the status, what an action was aimed at (not the ref the
        // call gave, nor the value it filled as given).
        assert_eq!(seen["navigate"]["http_status"], 200, "{seen}");
        assert!(seen["snapshot_text"].as_str().unwrap().contains("button \"Save\""));
        assert_eq!(seen["click"]["target"], json!({ "role": "button", "name": "Save" }), "{seen}");
        assert_eq!(seen["fill"]["target"], json!({ "role": "textbox", "name": "User name" }), "{seen}");
        assert!(["ok", "action", "settle", "value"].iter().all(|field| seen["fill"].get(*field).is_none()), "{seen}");
        assert_eq!(seen["assert_ok"], true, "the click landed: {seen}");
        assert_eq!(seen["assert_failed_is_error"], true);
        assert_eq!(seen["bad_click_error"], true);
        assert!(seen["bad_click_text"].as_str().unwrap().starts_with("E_NOT_FOUND"));
        assert_eq!(seen["image_count"], 1);
        assert_eq!(seen["image_mime"], "image/png");
        assert_eq!(seen["session_count"], 2);
        assert_eq!(seen["second_closed"], true);
    }
    assert!(fixtures.seen("/f/actions.html").len() >= 2);
    // The stdio client went away: its lease was released.
    assert!(eventually(Duration::from_secs(5), || leases(&daemon) == ["http-agent"]), "{:?}", leases(&daemon));
}

#[test]
fn two_mcp_agents_are_isolated_and_a_killed_one_is_reclaimed() {
    let daemon = Daemon::start_with(DaemonOptions { lease_ttl_seconds: 3, ..DaemonOptions::default() });
    let fixtures = Fixtures::start();
    let mut agent_a = McpProcess::start(&daemon, "agent-a");
    let mut agent_b = McpProcess::start(&daemon, "agent-b");
    let (failed, _) = agent_a.call("browser_navigate", json!({ "url": fixtures.url("/set-cookie?value=from-a") }));
    assert!(!failed);
    let (failed, _) = agent_b.call("browser_navigate", json!({ "url": fixtures.url("/echo") }));
    assert!(!failed);
    assert_eq!(fixtures.seen("/echo").last().unwrap().cookie, None, "agent B saw agent A's cookie");
    let listed = request(daemon.port, "GET", "/v1/leases", &daemon.broker_headers(), None);
    let ports: Vec<&str> = listed.body["leases"].as_array().unwrap().iter().map(|lease| lease["endpoint"].as_str().unwrap()).collect();
    assert_eq!(ports.len(), 2);
    assert_ne!(ports[0], ports[1]);

    // SIGKILL agent A: no goodbye, so its lease expires and its session closes.
    agent_a.child.kill().unwrap();
    let _ = agent_a.child.wait();
    // Agent B keeps working (its heartbeats keep its lease alive past the TTL).
    let begun = std::time::Instant::now();
    while begun.elapsed() < Duration::from_secs(5) {
        let (failed, text) = agent_b.call("browser_snapshot", json!({}));
        assert!(!failed, "{text}");
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(eventually(Duration::from_secs(6), || leases(&daemon) == ["agent-b"]), "{:?}", leases(&daemon));
    let (failed, text) = agent_b.call("browser_snapshot", json!({}));
    assert!(!failed && text.contains("page: echo"), "{text}");
    agent_b.close_input();
    assert!(wait_exit(&mut agent_b.child, Duration::from_secs(10)).is_some(), "malo mcp exits when stdin closes");
    assert!(eventually(Duration::from_secs(5), || leases(&daemon).is_empty()));
}

#[test]
fn mcp_errors_are_tool_errors_with_codes_and_sessions_are_addressable() {
    let daemon = Daemon::start();
    let mut agent = McpProcess::start_with_caps(&daemon, "agent-x", "all");
    let listed = agent.request("tools/list", json!({}));
    let tools = listed["tools"].as_array().unwrap();
    let registry = request(daemon.lease("other").port, "GET", "/v1/tools", &daemon.lease("other").headers(), None);
    // `get` and `is` are the command line's one-line reads, never listed over MCP.
    for tool in registry.body["tools"].as_array().unwrap().iter().filter(|tool| !["get", "is"].contains(&tool["name"].as_str().unwrap())) {
        let name = format!("browser_{}", tool["name"].as_str().unwrap());
        let exposed = tools.iter().find(|candidate| candidate["name"] == name.as_str()).unwrap_or_else(|| panic!("{name} missing"));
        // Over MCP a description is its first sentence, without asides when long.
        let said = exposed["description"].as_str().unwrap();
        assert!(!said.is_empty() && said.len() <= tool["description"].as_str().unwrap().len(), "{name}: {said}");
        assert_eq!(exposed["inputSchema"]["required"], tool["input_schema"]["required"]);
    }
    let (failed, text) = agent.call("browser_navigate", json!({ "url": "file:///etc/passwd" }));
    assert!(failed);
    assert!(text.starts_with("E_INVALID_URL"), "{text}");
    let (failed, text) = agent.call("browser_click", json!({ "session": "sess-nope", "ref": "e1" }));
    assert!(failed && text.starts_with("E_SESSION_NOT_FOUND"), "{text}");
    let (failed, text) = agent.call("browser_teleport", json!({}));
    assert!(failed && text.starts_with("E_UNKNOWN_TOOL"), "{text}");
}

#[test]
fn the_cli_runs_the_same_flow_and_documents_each_tool() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let cli = |args: &[&str]| {
        let output =
            Command::new(malo_binary()).args(args).arg("--data-dir").arg(&daemon.data_dir).env("DISPLAY", display()).output().unwrap();
        (output.status.success(), String::from_utf8_lossy(&output.stdout).to_string(), String::from_utf8_lossy(&output.stderr).to_string())
    };
    let (ok, out, err) = cli(&["session", "new", "--width", "900", "--height", "700", "--json"]);
    assert!(ok, "{err}");
    let session: Value = serde_json::from_str(&out).unwrap();
    assert!(session.get("session_token").is_none(), "tokens stay in cli.json");
    let id = session["session_id"].as_str().unwrap();
    let (ok, _, err) = cli(&["navigate", "-s", id, "--url", &fixtures.url("/f/actions.html")]);
    assert!(ok, "{err}");
    let (ok, text, _) = cli(&["snapshot", "-s", id, "--format", "text"]);
    assert!(ok && text.starts_with("page: actions"), "{text}");
    let save = text.lines().find(|line| line.contains("button \"Save\"")).unwrap().split(' ').next().unwrap().to_string();
    let (ok, out, err) = cli(&["click", "-s", id, "--ref", &save, "--json"]);
    assert!(ok, "{err}");
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["target"]["name"], "Save");
    let (ok, _, err) = cli(&["fill", "--selector", "#user", "--text", "from the cli"]);
    assert!(ok, "the newest session is the default: {err}");
    let (ok, _, err) = cli(&["assert", "--selector", "#user", "--value", "from the cli"]);
    assert!(ok, "{err}");
    let (ok, _, err) = cli(&["click", "--selector", "#nothing-here"]);
    assert!(!ok && err.starts_with("E_NOT_FOUND"), "{err}");
    let mode = std::fs::metadata(daemon.data_dir.join("cli.json"))
        .map(|meta| std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777)
        .unwrap();
    assert_eq!(mode, 0o600);
    let (ok, out, _) = cli(&["session", "close", id]);
    assert!(ok, "{out}");

    let help = Command::new(malo_binary()).args(["click", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for flag in ["--ref", "--selector", "--click-count", "--button", "--modifiers", "--x", "--y", "--settle-ms"] {
        assert!(help.contains(flag), "{flag} missing from click --help:\n{help}");
    }
    assert!(help.contains("[possible values: left, middle, right]"));
}

#[test]
fn schemathesis_finds_no_server_error_and_no_schema_violation() {
    let daemon = Daemon::start_with(DaemonOptions { max_sessions: 50, ..DaemonOptions::default() });
    let lease = daemon.lease("fuzzer");
    let session = lease.session();
    let broker_spec = request(daemon.port, "GET", "/v1/openapi.json", &[], None);
    assert_eq!(broker_spec.body["openapi"], "3.1.0");
    let dir = TempDir::new("schemathesis");
    let config = dir.0.join("schemathesis.toml");
    std::fs::write(&config, format!("[parameters]\n\"path.id\" = \"{}\"\n", session.id)).unwrap();
    let schemathesis = std::path::Path::new(&python()).with_file_name("schemathesis");
    // Navigations are left out: they reach the network, and a site that cannot be reached is
    // reported as 502 by design. close, sleep and the waits (up to 5 minutes, longer than
    // schemathesis waits for an answer) would only end or stall the run, and so would type
    // (delay_ms between every character of a long text outlasts its 10 s); watch and
    // login (whose watch mode waits minutes for a person) open windows for a person.
    let output = Command::new(schemathesis)
        .current_dir(&dir.0)
        .arg("--config-file")
        .arg(&config)
        .args(["run", &format!("{}/v1/openapi.json", lease.endpoint)])
        .args(["-H", &format!("x-malo-lease-token: {}", lease.token), "-H", &format!("x-malo-session-token: {}", session.token)])
        .args(["--checks", "not_a_server_error,response_schema_conformance,content_type_conformance,status_code_conformance"])
        .args(["--max-examples", "8", "--workers", "2", "--seed", "1"])
        .args(["--exclude-operation-id", "navigate", "--exclude-operation-id", "tool_navigate", "--exclude-operation-id", "tool_history"])
        .args([
            "--exclude-operation-id",
            "tool_close",
            "--exclude-operation-id",
            "close_session",
            "--exclude-operation-id",
            "tool_sleep",
            "--exclude-operation-id",
            "tool_wait_for",
            "--exclude-operation-id",
            "tool_wait_for_event",
            "--exclude-operation-id",
            "tool_type",
        ])
        .args(["--exclude-operation-id", "tool_watch", "--exclude-operation-id", "tool_login"])
        .output()
        .expect("schemathesis is set up by scripts/setup.sh");
    let report = String::from_utf8_lossy(&output.stdout);
    assert_no_findings(&report, &output);
    // The broker's spec too.
    let output = Command::new(std::path::Path::new(&python()).with_file_name("schemathesis"))
        .current_dir(&dir.0)
        .args(["run", &format!("{}/v1/openapi.json", daemon.endpoint), "-H", &format!("x-malo-broker-token: {}", daemon.token)])
        .args(["--checks", "not_a_server_error,response_schema_conformance,content_type_conformance,status_code_conformance"])
        .args(["--max-examples", "8", "--seed", "1", "--exclude-operation-id", "release_lease"])
        .output()
        .unwrap();
    assert_no_findings(&String::from_utf8_lossy(&output.stdout), &output);
}

/// A run's verdict: no failed check. schemathesis also reports its own internal errors
/// (a generator crash on some schema); those say nothing about the API and are not findings.
fn assert_no_findings(report: &str, output: &std::process::Output) {
    assert!(report.contains("generated"), "schemathesis did not run:\n{report}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(!report.contains("Failures:"), "{report}");
    // The summary's error lines read "🚫 <kind>: <count>" (phase lines have no colon).
    let internal_only = report
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with("🚫") && line.contains(": "))
        .all(|line| line.contains("Runtime Error"));
    assert!(output.status.success() || internal_only, "{report}");
}

#[test]
fn autostart_on_writes_an_xdg_entry_for_this_binary_and_off_removes_it() {
    let home = TempDir::new("autostart");
    let malo = |state: &str| {
        Command::new(malo_binary()).args(["autostart", state]).env("HOME", &home.0).env_remove("XDG_CONFIG_HOME").output().unwrap()
    };
    let entry = home.0.join(".config/autostart/malo-browser.desktop");
    assert!(malo("on").status.success());
    let text = std::fs::read_to_string(&entry).unwrap();
    assert!(text.starts_with("[Desktop Entry]\n"), "{text}");
    assert!(text.contains(&format!("Exec={} daemon\n", malo_binary().display())), "{text}");
    assert!(malo("off").status.success());
    assert!(!entry.exists());
    assert!(malo("off").status.success(), "off twice is fine");
    assert!(!malo("sometimes").status.success());
}

#[test]
fn malo_links_no_webkit_and_hands_the_daemon_to_malo_daemon() {
    let mapped = |pid: u32| std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
    let daemon = Daemon::start();
    // `malo daemon` became `malo-daemon` in the same process: the pid the harness spawned.
    assert_eq!(command_of(daemon.pid), "malo-daemon");
    assert!(mapped(daemon.pid).contains("libwebkit2gtk-4.1"));
    let mut mcp = McpProcess::start(&daemon, "light");
    let listed = mcp.request("tools/list", json!({}));
    assert!(listed["tools"].as_array().is_some_and(|tools| tools.len() > 10), "{listed}");
    let maps = mapped(mcp.child.id());
    assert!(maps.contains("libc.so"), "the MCP server's mappings are readable");
    for library in ["libwebkit2gtk", "libjavascriptcoregtk", "libgtk-3", "libgdk-3", "libsoup-3"] {
        assert!(!maps.contains(library), "`malo mcp` loaded {library}");
    }

    // Without malo-daemon beside it, `malo daemon` says what is missing, in one line.
    let dir = TempDir::new("lone-malo");
    let lone = dir.0.join("malo");
    std::fs::copy(malo_binary(), &lone).unwrap();
    let output = Command::new(&lone).args(["daemon", "--data-dir"]).arg(dir.0.join("data")).output().unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(said.contains("malo-daemon is missing"), "{said}");
    assert!(!dir.0.join("data").exists(), "nothing was started");
}
