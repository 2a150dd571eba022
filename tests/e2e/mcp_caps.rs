//! `malo mcp`'s tool groups through the official MCP Python SDK over stdio
//! (`tests/mcp/caps.py`): the core set's and the whole list's size in o200k tokens, the
//! choice of groups (`--caps`, `MALO_MCP_CAPS`), growth at run time with
//! `notifications/tools/list_changed`, and an agent's task done with the core set and one
//! group.

use std::process::Command;

use serde_json::{json, Value};

use crate::harness::*;

/// The most the core set may cost a client, as listed (o200k tokens).
const DEFAULT_BUDGET: usize = 4_000;
/// The most every tool may cost (`--caps all`).
const ALL_BUDGET: usize = 12_000;

/// Runs `tests/mcp/caps.py` with `arguments`, on `malo mcp` with `flags`, and answers what
/// it printed (its stderr when it failed, as the panic's message).
fn caps_client(daemon: &Daemon, arguments: &[&str], flags: &[&str], environment: &[(&str, &str)]) -> Result<Value, String> {
    let mut command = Command::new(python());
    command.arg(repo_file("tests/mcp/caps.py")).args(arguments).arg("--").arg(malo_binary()).args(["mcp", "--data-dir"]);
    command.arg(&daemon.data_dir).args(flags).env("DISPLAY", display()).env_remove("MALO_MCP_CAPS");
    for (name, value) in environment {
        command.env(name, value);
    }
    let output = command.output().expect("the Python MCP SDK is set up by scripts/setup.sh");
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).to_string());
    }
    Ok(serde_json::from_slice(&output.stdout).unwrap())
}

fn tokens(text: &str) -> usize {
    tiktoken_rs::o200k_base().expect("o200k tokenizer").encode_with_special_tokens(text).len()
}

fn names(seen: &Value, field: &str) -> Vec<String> {
    seen[field].as_array().unwrap().iter().map(|name| name.as_str().unwrap().to_string()).collect()
}

#[test]
fn the_core_set_is_under_4000_tokens_and_all_lists_every_tool_under_12000() {
    let daemon = Daemon::start();
    let core = caps_client(&daemon, &["list"], &[], &[]).unwrap();
    let core_names = names(&core, "names");
    let core_tokens = tokens(core["listed"].as_str().unwrap());
    println!("core: {} tools, {core_tokens} o200k tokens", core_names.len());
    assert!(core_tokens <= DEFAULT_BUDGET, "the core set costs {core_tokens} tokens");
    assert_eq!(core["tools_list_changed"], true, "the server declares tools.listChanged");
    for tool in [
        "navigate",
        "snapshot",
        "click",
        "fill",
        "type",
        "press",
        "select",
        "wait_for",
        "requests",
        "console",
        "screenshot",
        "tab_new",
        "tab_list",
        "tab_select",
        "tab_close",
        "enable_caps",
    ] {
        assert!(core_names.contains(&format!("browser_{tool}")), "{tool} is not in the core set: {core_names:?}");
    }
    for tool in ["browser_pdf", "browser_set_file_input", "browser_session_new", "browser_evaluate", "browser_cookies"] {
        assert!(!core_names.iter().any(|name| name == tool), "{tool} is in the core set");
    }

    let all = caps_client(&daemon, &["list"], &["--caps", "all"], &[]).unwrap();
    let all_names = names(&all, "names");
    let all_tokens = tokens(all["listed"].as_str().unwrap());
    println!("all: {} tools, {all_tokens} o200k tokens", all_names.len());
    assert!(all_tokens <= ALL_BUDGET, "every tool costs {all_tokens} tokens");
    let lease = daemon.lease("catalogue");
    let registry = request(lease.port, "GET", "/v1/tools", &lease.headers(), None);
    let registry = registry.body["tools"].as_array().unwrap();
    // `get` and `is` are the command line's one-line reads; MCP has extract and assert.
    let cli_only = ["get", "is"];
    let registry: Vec<&Value> = registry.iter().filter(|tool| !cli_only.contains(&tool["name"].as_str().unwrap())).collect();
    for tool in &registry {
        let name = format!("browser_{}", tool["name"].as_str().unwrap());
        assert!(all_names.contains(&name), "{name} is missing from --caps all");
    }
    for name in ["browser_session_new", "browser_session_list", "browser_session_close", "browser_enable_caps"] {
        assert!(all_names.iter().any(|listed| listed == name), "{name}");
    }
    assert_eq!(all_names.len(), registry.len() + 4);
    // Shared blocks are defined once and referenced where a schema uses them twice or more,
    // and every listed schema is an object schema.
    let listed: Vec<Value> = serde_json::from_str(all["listed"].as_str().unwrap()).unwrap();
    for tool in &listed {
        assert_eq!(tool["inputSchema"]["type"], "object", "{}", tool["name"]);
        assert!(tool.get("outputSchema").is_none(), "output schemas stay in the HTTP catalogue: {}", tool["name"]);
    }

    // Groups by name, from the flag or the environment; a wrong name is refused at start.
    let some = caps_client(&daemon, &["list"], &["--caps", "pdf,network"], &[]).unwrap();
    let some_names = names(&some, "names");
    assert!(some_names.iter().any(|name| name == "browser_pdf") && some_names.iter().any(|name| name == "browser_responses"));
    assert!(!some_names.iter().any(|name| name == "browser_cookies"));
    let from_environment = caps_client(&daemon, &["list"], &[], &[("MALO_MCP_CAPS", "state")]).unwrap();
    assert!(names(&from_environment, "names").iter().any(|name| name == "browser_cookies"));
    let output =
        Command::new(malo_binary()).args(["mcp", "--caps", "network,teleport", "--data-dir"]).arg(&daemon.data_dir).output().unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success() && said.contains("\"teleport\"") && said.contains("sessions"), "{said}");
}

#[test]
fn enabling_a_group_at_run_time_notifies_the_client_and_the_next_list_has_it() {
    let daemon = Daemon::start();
    let seen = caps_client(&daemon, &["grow"], &[], &[]).unwrap();
    let (before, after) = (names(&seen, "before"), names(&seen, "after"));
    assert!(!before.iter().any(|name| name == "browser_set_file_input"), "{before:?}");
    assert_eq!(seen["enable_error"], false, "{seen}");
    assert_eq!(seen["list_changed_notifications"], 1, "{seen}");
    assert_eq!(seen["enabled"]["enabled"], json!(["files"]));
    let added: Vec<String> = after.iter().filter(|name| !before.contains(name)).cloned().collect();
    assert_eq!(
        added,
        ["browser_cancel_download", "browser_list_downloads", "browser_set_download_behavior", "browser_set_file_input"],
        "{seen}"
    );
    assert_eq!(names(&seen["enabled"], "added_tools").len(), 4);
    // Enabling it again changes nothing, and says so without a notification.
    assert_eq!(seen["again"]["added_tools"], json!([]));
    assert_eq!(seen["notifications_after_again"], 1);
    let unknown = &seen["unknown_group"];
    assert_eq!(unknown[0], true);
    assert!(unknown[1].as_str().unwrap().starts_with("E_BAD_REQUEST") && unknown[1].as_str().unwrap().contains("network"), "{unknown}");
}

#[test]
fn an_agent_signs_in_fills_a_form_uploads_a_file_and_reads_the_request_log_with_one_group() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let dir = TempDir::new("mcp-task");
    let file = dir.0.join("cv.txt");
    std::fs::write(&file, b"a short cv\n").unwrap();
    let seen =
        caps_client(&daemon, &["task", &fixtures.url(""), file.to_str().unwrap()], &[], &[]).unwrap_or_else(|error| panic!("{error}"));

    // The server saw the sign-in and the upload, with the form's field and the file's bytes.
    let logins = fixtures.seen("/login");
    assert_eq!(logins.len(), 1, "one sign-in was posted");
    assert!(fixtures.seen("/f/welcome.html").len() == 1, "the sign-in succeeded");
    let uploads = fixtures.uploads();
    assert_eq!(uploads.len(), 1);
    let part = |field: &str| uploads[0].iter().find(|part| part.field == field).cloned().unwrap();
    assert_eq!(part("one").filename.as_deref(), Some("cv.txt"));
    assert_eq!(part("one").bytes, b"a short cv\n");
    assert_eq!(part("note").bytes, b"sent by an agent");

    // The tool needed first was not listed, and its error named the group to enable.
    let refused = &seen["before_enabling"];
    assert_eq!(refused[0], true);
    let message = refused[1].as_str().unwrap();
    assert!(message.contains("`files`") && message.contains("browser_enable_caps"), "{message}");
    assert_eq!(seen["file_input"]["file_count"], 1);
    // The request log has the upload.
    let requests = seen["requests"].as_str().unwrap();
    assert!(requests.contains("/upload"), "{requests}");
    // Every call was to the core set or to the one group enabled.
    let default_tools = names(&seen, "default_tools");
    for call in names(&seen, "calls") {
        assert!(default_tools.contains(&call) || call == "browser_set_file_input", "{call} is outside the core set and `files`");
    }
}
