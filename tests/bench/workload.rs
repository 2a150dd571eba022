//! `bench workload`: the whole agent workload (11 tool calls on the three benchmark pages)
//! over MCP stdio, `malo mcp` against Playwright MCP 0.0.83 on Debian's Chromium, side by
//! side in one run of `tests/clients/bench-workload.mjs` (2 runs of 15 reps, warm servers):
//! the whole rep and each operation, medians and p95s, and the text each answered.

use crate::harness::*;
use crate::side_by_side::print_rows;

/// The operations of one rep, in order, as the script names them.
const OPERATIONS: [&str; 11] = [
    "navigate (a)",
    "snapshot (a)",
    "type by ref",
    "click by ref",
    "snapshot (a) again",
    "screenshot (a)",
    "navigate (b)",
    "snapshot (b)",
    "screenshot (b)",
    "navigate (c)",
    "requests (c)",
];

/// Runs the client script on the benchmark pages served by `fixtures` and prints the rows.
pub(crate) fn workload(fixtures: &Fixtures) {
    let binary = malo_binary().display().to_string();
    let run = run_client("bench-workload.mjs", &[&binary, &fixtures.url("/b"), "15", "2"]);
    let (lines, _) = run.figures();
    let mut rows = vec![("whole workload per rep (11 ops)", Some(0.5))];
    // The goals for navigating: the form page at most half of Playwright MCP's, the
    // page of 50 fetches (answered only once they are done) at most 0.7 of it.
    let goal = |name: &str| match name {
        "navigate (a)" => Some(0.5),
        "navigate (c)" => Some(0.7),
        _ => None,
    };
    rows.extend(OPERATIONS.iter().map(|name| (*name, goal(name))));
    print_rows("agent workload (MCP over stdio)", &lines, &rows);
    let characters = |target: &str| {
        lines
            .iter()
            .find(|line| line["figure"] == "characters per rep" && line["target"] == target)
            .and_then(|line| line["median"].as_u64())
    };
    let show = |count: Option<u64>| count.map(|count| count.to_string()).unwrap_or_else(|| "-".into());
    println!("text answered per rep: malo {} characters, Playwright MCP {}", show(characters("malo")), show(characters("playwright-mcp")));
}
