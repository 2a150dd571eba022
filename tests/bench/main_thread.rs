//! The engine's main thread as `GET /v1/stats` reports it, printed the same way by every
//! benchmark that loads it.

use serde_json::Value;

/// One line per command kind that held the main thread longest, the longest first.
pub(crate) fn print_longest_holds(stats: &Value, count: usize) {
    for hold in stats["main_thread"]["longest_holds"].as_array().into_iter().flatten().take(count) {
        println!(
            "  longest hold: {:<20} {:>8} ms over {} commands ({} over 50 ms)",
            hold["command"].as_str().unwrap_or("?"),
            hold["longest_ms"],
            hold["commands"],
            hold["over_50ms"]
        );
    }
}
