//! `bench coldstart`: `malo mcp` on a fresh data directory (starting its own daemon)
//! against Playwright MCP 0.0.83 on Debian's Chromium, side by side in one run of
//! `tests/clients/bench-coldstart.mjs`: spawn -> ready (the `initialize` answer) and
//! spawn -> first navigate done, with the goals.

use crate::harness::*;
use crate::side_by_side::print_rows;

/// Runs the client script on the benchmark pages served by `fixtures` and prints one row a
/// figure: medians side by side and whether each goal is met.
pub(crate) fn cold_start(fixtures: &Fixtures) {
    let binary = malo_binary().display().to_string();
    let run = run_client("bench-coldstart.mjs", &[&binary, &fixtures.url("/b"), "5"]);
    let (lines, _) = run.figures();
    print_rows("cold start (MCP over stdio)", &lines, &[("spawn -> ready", Some(1.0)), ("spawn -> first navigate done", Some(0.5))]);
}
