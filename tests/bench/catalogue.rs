//! `bench catalogue`: what the tool list costs an MCP client in every turn, in o200k
//! tokens, listed through the official MCP Python SDK (`tests/mcp/caps.py list`: the tools
//! as JSON, as the SDK hands them on): `malo mcp` with its core set and with `--caps all`,
//! beside Playwright MCP 0.0.83 with its default tools and with `--caps=vision,pdf`, each
//! with its goal and whether it is met.

use std::process::Command;

use crate::harness::*;

/// Playwright MCP's figures measured the same way on 2026-12-07 (issue 43), shown when its
/// package or Chromium is not installed here.
const PLAYWRIGHT_DEFAULT_TOKENS: usize = 5_250;
const PLAYWRIGHT_VISION_PDF_TOKENS: usize = 6_307;

/// The tools a server lists, through the Python SDK: (count, o200k tokens).
fn listed(command: &[String]) -> Option<(usize, usize)> {
    let output = Command::new(python())
        .arg(repo_file("tests/mcp/caps.py"))
        .args(["list", "--"])
        .args(command)
        .env("DISPLAY", display())
        .env_remove("MALO_MCP_CAPS")
        .output()
        .ok()?;
    if !output.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&output.stderr));
        return None;
    }
    let seen: serde_json::Value = serde_json::from_slice(&output.stdout).ok()?;
    let tokenizer = tiktoken_rs::o200k_base().expect("o200k tokenizer");
    Some((seen["names"].as_array()?.len(), tokenizer.encode_with_special_tokens(seen["listed"].as_str()?).len()))
}

/// Prints the catalogue's rows.
pub(crate) fn catalogue(daemon: &Daemon) {
    let malo = |caps: &[&str]| {
        let mut command: Vec<String> = vec![malo_binary().display().to_string(), "mcp".into(), "--data-dir".into()];
        command.push(daemon.data_dir.display().to_string());
        command.extend(caps.iter().map(|flag| flag.to_string()));
        listed(&command)
    };
    let playwright = |caps: &[&str]| {
        let dir = clients_dir();
        let mut command: Vec<String> = vec!["node".into(), dir.join("node_modules/@playwright/mcp/cli.js").display().to_string()];
        command.extend(["--headless", "--browser", "chromium", "--isolated"].map(String::from));
        command.extend(["--executable-path".into(), std::env::var("MALO_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into())]);
        command.extend(caps.iter().map(|flag| flag.to_string()));
        listed(&command)
    };
    let rows = [
        ("default", malo(&[]), playwright(&[]), PLAYWRIGHT_DEFAULT_TOKENS, 4_000),
        (
            "all (malo --caps all; PW --caps=vision,pdf)",
            malo(&["--caps", "all"]),
            playwright(&["--caps=vision,pdf"]),
            PLAYWRIGHT_VISION_PDF_TOKENS,
            12_000,
        ),
    ];
    println!(
        "{:<46} {:>10} {:>12} {:>10} {:>12}  goal",
        "MCP tool list (o200k tokens, as listed)", "malo tools", "malo tokens", "PW tools", "PW tokens"
    );
    for (name, malo, playwright, playwright_known, goal) in rows {
        let (playwright_tools, playwright_tokens) = match playwright {
            Some((tools, tokens)) => (tools.to_string(), tokens.to_string()),
            None => ("-".into(), format!("{playwright_known}*")),
        };
        let (malo_tools, malo_tokens, verdict) = match malo {
            Some((tools, tokens)) => (tools.to_string(), tokens.to_string(), if tokens <= goal { "met" } else { "not met" }),
            None => ("-".into(), "-".into(), "-"),
        };
        println!("{name:<46} {malo_tools:>10} {malo_tokens:>12} {playwright_tools:>10} {playwright_tokens:>12}  ≤ {goal}: {verdict}");
    }
    println!("(* Playwright MCP 0.0.83's figure measured on 2026-12-07; not installed here)");
}
