//! `bench coldstart`: `malo mcp` on a fresh data directory (starting its own daemon)
//! against Playwright MCP 0.0.83 on Debian's Chromium, side by side in one run of
//! `tests/clients/bench-coldstart.mjs`: spawn -> ready (the `initialize` answer) and
//! spawn -> first navigate done, with the goals.

use serde_json::Value;

use crate::harness::*;

/// Runs the client script on the benchmark pages served by `fixtures` and prints one row a
/// figure: medians side by side and whether each goal is met.
pub(crate) fn cold_start(fixtures: &Fixtures) {
    let binary = malo_binary().display().to_string();
    let run = run_client("bench-coldstart.mjs", &[&binary, &fixtures.url("/b"), "5"]);
    let (lines, _) = run.figures();
    println!("{:<30} {:>9} {:>9} {:>10} {:>10}  goal", "cold start (MCP over stdio)", "malo ms", "p95 ms", "PW MCP ms", "p95 ms");
    for (name, factor) in [("spawn -> ready", 1.0), ("spawn -> first navigate done", 0.5)] {
        let of =
            |target: &str| lines.iter().find(|line| line["figure"] == name && line["target"] == target).cloned().unwrap_or(Value::Null);
        let (malo, playwright) = (of("malo"), of("playwright-mcp"));
        let ms = |value: &Value| value.as_f64().map(|ms| format!("{ms:.0}")).unwrap_or_else(|| "-".into());
        let met = malo["median_ms"].as_f64().zip(playwright["median_ms"].as_f64()).map(|(malo, playwright)| malo <= factor * playwright);
        println!(
            "{name:<30} {:>9} {:>9} {:>10} {:>10}  ≤ {factor}×PW: {}",
            ms(&malo["median_ms"]),
            ms(&malo["p95_ms"]),
            ms(&playwright["median_ms"]),
            ms(&playwright["p95_ms"]),
            met.map_or("-", |met| if met { "met" } else { "not met" })
        );
    }
    for error in lines.iter().filter(|line| line["figure"] == "error") {
        println!("error ({}): {}", error["target"].as_str().unwrap_or("?"), error["error"].as_str().unwrap_or("?"));
    }
}
