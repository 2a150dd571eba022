//! The wire answers of every tool, pinned: one session drives each tool on the fixtures and
//! the answers are compared with `tests/e2e/wire.golden.json`, after taking out what
//! changes from run to run (seqs, times, durations, ports, ids, image data). A change of
//! the API shows up here as a diff; a refactor that keeps the API keeps this file as it is.
//! `MALO_BLESS_WIRE=1` rewrites the file (then read the diff).

use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::harness::*;

/// The golden file.
fn golden_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/e2e/wire.golden.json")
}

/// Keys whose numbers differ between runs.
const VOLATILE_NUMBERS: [&str; 15] = [
    "seq",
    "cursor",
    "time",
    "bytes",
    "stable_samples",
    "request_body_size",
    "response_body_size",
    "received_bytes",
    "total_bytes",
    "pid",
    "dom_elements",
    "older_omitted",
    "done_count",
    "captured",
    "entries",
];

/// Takes out of answers what varies between runs.
struct Normalizer {
    port: u16,
    data_dir: String,
    upload_dir: String,
    /// Tab ids (random) in the order they first appeared: each becomes `<tab-N>`.
    tabs: Vec<String>,
}

impl Normalizer {
    /// The answer with what varies between runs replaced by a placeholder of its kind.
    fn value(&mut self, value: &Value, key: &str) -> Value {
        match value {
            Value::Object(object) => {
                let normalized: Map<String, Value> =
                    object.iter().map(|(field, inner)| (field.clone(), self.value(inner, field))).collect();
                Value::Object(normalized)
            }
            Value::Array(items) => Value::Array(items.iter().map(|item| self.value(item, key)).collect()),
            Value::Number(_) if key.ends_with("_ms") || key.ends_with("_at") || VOLATILE_NUMBERS.contains(&key) => json!("<number>"),
            Value::Number(number) if number.is_f64() => json!("<float>"),
            Value::String(text) => json!(self.text(text, key)),
            other => other.clone(),
        }
    }

    fn text(&mut self, text: &str, key: &str) -> String {
        if matches!(key, "data" | "session_token" | "token" | "sha256") {
            return format!("<{key}>");
        }
        if key.ends_with("_at") || key == "time" {
            return "<time>".into();
        }
        let tab_id = regex::Regex::new(r"^[0-9a-f]{4}$").unwrap();
        if matches!(key, "tab" | "opener" | "selected") && tab_id.is_match(text) && !self.tabs.iter().any(|tab| tab == text) {
            self.tabs.push(text.to_string());
        }
        let mut text =
            text.replace(&self.port.to_string(), "<port>").replace(&self.data_dir, "<data-dir>").replace(&self.upload_dir, "<upload-dir>");
        for (index, tab) in self.tabs.iter().enumerate() {
            text = regex_replace(&text, &format!(r"\b{tab}\b"), &format!("<tab-{}>", index + 1));
        }
        for (pattern, replacement) in [
            (r"\b[0-9a-f]{16,}\b", "<id>"),
            (r"req-\d+", "req-<n>"),
            (r"rule-[0-9a-z]+", "rule-<id>"),
            (r"dl-[0-9a-z]+", "dl-<id>"),
            (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "<time>"),
            (r"-\d{10,}([-.])", "-<millis>$1"),
            (r"[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT", "<http-date>"),
            (r"\b\d+ ?ms\b", "<n> ms"),
            (r"cursor \d+", "cursor <n>"),
            (r"127\.0\.0\.1:\d+", "127.0.0.1:<port>"),
        ] {
            text = regex_replace(&text, pattern, replacement);
        }
        text
    }
}

fn regex_replace(text: &str, pattern: &str, replacement: &str) -> String {
    regex::Regex::new(pattern).unwrap().replace_all(text, replacement).into_owned()
}

/// One call and its normalized answer.
fn record(session: &Session, normalizer: &mut Normalizer, tool: &str, input: Value) -> Value {
    let response = session.tool(tool, input.clone());
    let body = normalizer.value(&response.body, "");
    json!({ "tool": tool, "input": normalizer.value(&input, ""), "status": response.status, "body": body })
}

#[test]
fn every_tool_answers_as_recorded() {
    let daemon = Daemon::start();
    let fixtures = Fixtures::start();
    let session = daemon.lease("agent-wire").session();
    let upload_dir = TempDir::new("wire");
    let mut normalizer = Normalizer {
        port: fixtures.port,
        data_dir: daemon.data_dir.display().to_string(),
        upload_dir: upload_dir.0.display().to_string(),
        tabs: Vec::new(),
    };
    let url = |path: &str| fixtures.url(path);
    let mut calls: Vec<Value> = Vec::new();
    let mut call = |tool: &str, input: Value| {
        let recorded = record(&session, &mut normalizer, tool, input);
        calls.push(recorded.clone());
        recorded
    };

    // Pages and reading them.
    call("navigate", json!({ "url": url("/f/hello.html") }));
    call("navigate", json!({ "url": url("/f/actions.html") }));
    call("history", json!({ "action": "back" }));
    call("history", json!({ "action": "forward" }));
    call("snapshot", json!({ "format": "text" }));
    call("snapshot", json!({}));
    call("snapshot", json!({ "changes": true }));
    call("observe", json!({ "mode": "light" }));
    call("observe", json!({ "mode": "screenshot" }));
    call("screenshot", json!({ "clip": { "x": 0, "y": 0, "width": 200, "height": 100 }, "format": "jpeg", "quality": 50 }));
    call("screenshot", json!({ "selector": "h1", "path": "wire.png", "scale": "css" }));
    call("screenshot", json!({ "marks": true, "max_width": 512 }));
    call("screenshot", json!({ "full_page": true, "max_height": 400, "format": "webp" }));
    call("screenshot", json!({ "quality": 50 }));
    call("mouse", json!({ "action": "move", "x": 5, "y": 5 }));
    call("mouse", json!({ "action": "wheel", "x": 5, "y": 5 }));
    call("pdf", json!({ "path": "wire.pdf", "page_ranges": "1" }));
    call("pdf", json!({ "page_ranges": "1", "landscape": true }));
    call("pdf", json!({ "path": "../escape.pdf" }));
    call("extract", json!({ "selector": "h1" }));
    call("extract", json!({ "selector": "#color option", "mode": "attribute", "attribute": "value", "all": true }));
    call("evaluate", json!({ "expression": "document.title" }));
    call("evaluate", json!({ "expression": "({a: 1, b: [true, null]})" }));
    // Actions.
    call("click", json!({ "selector": "#save" }));
    call("fill", json!({ "selector": "#user", "text": "ada" }));
    call("type", json!({ "selector": "#notes", "text": "hi" }));
    call("press", json!({ "key": "Enter", "selector": "#user" }));
    call("hover", json!({ "selector": "#hover-target" }));
    call("select", json!({ "selector": "#color", "value": "g" }));
    call("check", json!({ "selector": "#agree" }));
    call("uncheck", json!({ "selector": "#agree" }));
    call("focus", json!({ "selector": "#pass" }));
    call("scroll", json!({ "dy": 200 }));
    call("scroll_into_view", json!({ "selector": "#far" }));
    call("drag", json!({ "from": { "selector": "#drag-box" }, "to": { "selector": "#hover-target" } }));
    call("click", json!({ "selector": "#delayed" }));
    call("wait_for", json!({ "selector": "#later" }));
    call("wait_for", json!({ "text": "arrived later", "timeout_ms": 2000 }));
    call("sleep", json!({ "ms": 10 }));
    call("dialog", json!({ "action": "accept", "prompt_text": "malo" }));
    call("click", json!({ "selector": "#prompter" }));
    call("assert", json!({ "selector": "#status", "text": "prompt malo" }));
    call("assert", json!({ "selector": "#status", "text": "nothing like it", "timeout_ms": 100 }));
    call(
        "run_steps",
        json!({ "steps": [{ "type": "click", "selector": "#adder" }, { "type": "assert", "selector": "#list li", "count": 1 }] }),
    );
    // Failures.
    call("click", json!({ "selector": "#off", "timeout_ms": 200 }));
    call("click", json!({ "selector": "#nothing-here" }));
    call("click", json!({ "ref": "e99999" }));
    call("click", json!({ "selector": "#covered", "timeout_ms": 200 }));
    call("click", json!({ "selector": "#hidden-button", "timeout_ms": 200 }));
    call("fill", json!({ "selector": "#user" }));
    call("navigate", json!({ "url": "file:///etc/passwd" }));
    call("no_such_tool", json!({}));
    // Tabs.
    call("tab_list", json!({}));
    let opened = call("tab_new", json!({ "url": url("/f/hello.html") }));
    let new_tab = session.ok("tab_list", json!({}))["tabs"].as_array().unwrap().last().unwrap()["tab"].clone();
    assert_eq!(opened["status"], 200, "{opened}");
    call("tab_select", json!({ "tab": new_tab }));
    call("tab_close", json!({ "tab": new_tab }));
    call("set_popup_policy", json!({ "policy": "deny" }));
    call("set_popup_policy", json!({ "policy": "allow" }));
    // Files.
    call("navigate", json!({ "url": url("/f/files.html") }));
    call("set_download_behavior", json!({ "behavior": "allow" }));
    call("click", json!({ "selector": "#report" }));
    assert!(eventually(Duration::from_secs(10), || { session.ok("list_downloads", json!({}))["downloads"][0]["status"] == "completed" }));
    call("list_downloads", json!({}));
    call("cancel_download", json!({ "download_id": "dl-none" }));
    let upload = upload_dir.0.join("upload.txt");
    std::fs::write(&upload, "wire\n").unwrap();
    call("set_file_input", json!({ "selector": "#one", "files": [upload.display().to_string()] }));
    call("wait_for_event", json!({ "kind": "popup", "timeout_ms": 100 }));
    // The wire.
    call("network_capture", json!({ "url_prefixes": [url("/api/")] }));
    call("navigate", json!({ "url": url("/f/network.html") }));
    call("click", json!({ "selector": "#load" }));
    assert!(eventually(Duration::from_secs(10), || session.page_value("document.getElementById('count').textContent") == "3"));
    call("responses", json!({ "url_prefix": url("/api/items.json") }));
    call("requests", json!({ "url_includes": "/api/items.json" }));
    call("requests", json!({ "url_includes": "/api/items.json", "headers": true }));
    call("requests", json!({ "url_includes": "/api/items.json", "format": "text" }));
    call("requests", json!({ "url_includes": "/api/items.json", "detail": true, "format": "text" }));
    let rule = call("add_intercept_rule", json!({ "url_includes": "/api/blocked", "action": "fail" }));
    call("list_intercept_rules", json!({}));
    let rule_id = session.ok("list_intercept_rules", json!({}))["rules"][0]["rule_id"].clone();
    assert_eq!(rule["status"], 200, "{rule}");
    call("remove_intercept_rule", json!({ "rule_id": rule_id }));
    call("export_har", json!({}));
    call("console", json!({ "level": "warn" }));
    call("page_errors", json!({}));
    // The session.
    call("navigate", json!({ "url": url("/f/login.html") }));
    call("login", json!({ "username": "demo", "password": "wrong-pass", "timeout_ms": 3000 }));
    call("watch", json!({}));
    call("profiles", json!({ "action": "list" }));
    call("events", json!({ "type": "navigation", "limit": 2 }));
    call("close", json!({}));

    let recorded = serde_json::to_string_pretty(&Value::Array(calls)).unwrap() + "\n";
    if std::env::var_os("MALO_BLESS_WIRE").is_some() {
        std::fs::write(golden_path(), &recorded).unwrap();
        return;
    }
    let golden = std::fs::read_to_string(golden_path()).unwrap_or_default();
    if golden != recorded {
        let diff: Vec<String> = golden
            .lines()
            .zip(recorded.lines())
            .enumerate()
            .filter(|(_, (was, now))| was != now)
            .take(20)
            .map(|(line, (was, now))| format!("line {}:\n  golden: {was}\n  now:    {now}", line + 1))
            .collect();
        panic!(
            "the wire answers changed ({} lines golden, {} now); first differences:\n{}\n(MALO_BLESS_WIRE=1 rewrites {})",
            golden.lines().count(),
            recorded.lines().count(),
            diff.join("\n"),
            golden_path().display()
        );
    }
}
