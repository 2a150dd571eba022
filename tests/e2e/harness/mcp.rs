//! A `malo mcp` process, spoken to in newline-delimited JSON-RPC as an MCP client does.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use super::{display, malo_binary, wait_exit, watchdog, Daemon};

/// A `malo mcp` process spoken to in newline-delimited JSON-RPC.
pub struct McpProcess {
    pub child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Drop for McpProcess {
    /// Goes away as a client would (stdin closed), so the lease is released; kills it if
    /// it does not exit.
    fn drop(&mut self) {
        self.close_input();
        if wait_exit(&mut self.child, Duration::from_secs(10)).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl McpProcess {
    pub fn start(daemon: &Daemon, agent_id: &str) -> McpProcess {
        McpProcess::start_in(&daemon.data_dir, agent_id)
    }

    /// `malo mcp` listing these tool groups beyond the core set (`--caps`).
    pub fn start_with_caps(daemon: &Daemon, agent_id: &str, caps: &str) -> McpProcess {
        McpProcess::launch(&daemon.data_dir, agent_id, &["--caps", caps])
    }

    /// `malo mcp` on a data directory (it starts a daemon there when none runs).
    pub fn start_in(data_dir: &Path, agent_id: &str) -> McpProcess {
        McpProcess::launch(data_dir, agent_id, &[])
    }

    fn launch(data_dir: &Path, agent_id: &str, flags: &[&str]) -> McpProcess {
        let mut child = Command::new(malo_binary())
            .args(["mcp", "--data-dir"])
            .arg(data_dir)
            .args(["--agent-id", agent_id])
            .args(flags)
            .env_remove("MALO_MCP_CAPS")
            .env("DISPLAY", display())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        watchdog(child.id());
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut process = McpProcess { child, stdin: Some(stdin), stdout, next_id: 0 };
        let initialized = process.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": agent_id, "version": "1" }
            }),
        );
        assert!(initialized["serverInfo"].is_object(), "{initialized}");
        process.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        process
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Closes the server's stdin, as a client that goes away.
    pub fn close_input(&mut self) {
        self.stdin.take();
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "malo mcp closed stdout");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message["result"].clone();
            }
        }
    }

    /// Calls a tool; returns (is_error, first text content).
    pub fn call(&mut self, tool: &str, arguments: Value) -> (bool, String) {
        let result = self.request("tools/call", json!({ "name": tool, "arguments": arguments }));
        let text = result["content"].as_array().into_iter().flatten().find(|block| block["type"] == "text");
        (result["isError"] == true, text.and_then(|block| block["text"].as_str()).unwrap_or("").to_string())
    }
}
