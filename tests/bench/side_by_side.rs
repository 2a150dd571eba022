//! Figures a client script measured on malo and on Playwright MCP in one run, printed
//! side by side: medians and p95s, the ratio, and whether each row's goal is met.

use serde_json::Value;

/// Prints a header titled `title` and one row per `(figure, goal)`: the goal, when there
/// is one, is met when malo's median is at most that factor of Playwright MCP's. Then any
/// error the script reported.
pub(crate) fn print_rows(title: &str, lines: &[Value], rows: &[(&str, Option<f64>)]) {
    let width = rows.iter().map(|(name, _)| name.len()).chain([title.len()]).max().unwrap_or(30);
    println!("{title:<width$} {:>9} {:>9} {:>10} {:>10} {:>6}  goal", "malo ms", "p95 ms", "PW MCP ms", "p95 ms", "ratio");
    for (name, goal) in rows {
        let of =
            |target: &str| lines.iter().find(|line| line["figure"] == *name && line["target"] == target).cloned().unwrap_or(Value::Null);
        let (malo, playwright) = (of("malo"), of("playwright-mcp"));
        let ms = |value: &Value| value.as_f64().map(|ms| format!("{ms:.0}")).unwrap_or_else(|| "-".into());
        let ratio = malo["median_ms"].as_f64().zip(playwright["median_ms"].as_f64()).map(|(malo, playwright)| malo / playwright);
        let verdict = match (goal, ratio) {
            (Some(factor), Some(ratio)) => format!("≤ {factor}×PW: {}", if ratio <= *factor { "met" } else { "not met" }),
            (Some(factor), None) => format!("≤ {factor}×PW: -"),
            (None, _) => String::new(),
        };
        println!(
            "{name:<width$} {:>9} {:>9} {:>10} {:>10} {:>6}  {verdict}",
            ms(&malo["median_ms"]),
            ms(&malo["p95_ms"]),
            ms(&playwright["median_ms"]),
            ms(&playwright["p95_ms"]),
            ratio.map(|ratio| format!("{ratio:.2}")).unwrap_or_else(|| "-".into()),
        );
    }
    for error in lines.iter().filter(|line| line["figure"] == "error") {
        println!("error ({}): {}", error["target"].as_str().unwrap_or("?"), error["error"].as_str().unwrap_or("?"));
    }
}
