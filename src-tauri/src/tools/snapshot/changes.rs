//! `changes`: what differs between the previous whole-page snapshot of the tab and this
//! one (elements added, changed, removed; the text when it changed, cut to the budget).

use std::collections::HashMap;

use serde_json::Value;

use super::capture::Capture;
use super::render::changes_text;
use super::tokens::estimate;
use super::{element_lines, page_text, SnapshotChanges, SnapshotChangesText, SnapshotFormat, SnapshotOutput};
use crate::state::PreviousSnapshot;

/// The answer of `changes`: what differs from the snapshot before, with its text cut to
/// the budget.
pub(super) fn changes(previous: Option<PreviousSnapshot>, captured: &Capture, format: SnapshotFormat, budget: usize) -> SnapshotOutput {
    let previous = previous.unwrap_or_default();
    let current_text = page_text(&captured.items);
    let lines = element_lines(captured, &captured.items);
    let mut diff = diff(&previous, &lines, captured);
    diff.text_changed = previous.text != current_text;
    diff.text = diff.text_changed.then(|| fit_lines(&current_text, budget.saturating_sub(estimate(&changes_text(&diff)))));
    match format {
        SnapshotFormat::Json => SnapshotOutput::Changes(diff),
        SnapshotFormat::Text => {
            let text = changes_text(&diff);
            SnapshotOutput::ChangesText(SnapshotChangesText { format: "text", url: diff.url, title: diff.title, text })
        }
    }
}

/// The lines of `text` that fit `budget` tokens, and a last line saying so if not all do.
fn fit_lines(text: &str, budget: usize) -> String {
    if estimate(text) <= budget {
        return text.to_string();
    }
    let room = budget.saturating_sub(estimate(CUT_TEXT) + 1);
    let mut spent = 0;
    let mut kept = Vec::new();
    for line in text.lines() {
        spent += estimate(line) + 1;
        if spent > room {
            break;
        }
        kept.push(line);
    }
    kept.push(CUT_TEXT);
    kept.join("\n")
}

/// The last line of a text cut to the budget.
const CUT_TEXT: &str = "(text cut at the token budget; snapshot shows the rest)";

fn diff(previous: &PreviousSnapshot, lines: &[(u64, String)], captured: &Capture) -> SnapshotChanges {
    let before: HashMap<u64, &String> = previous.lines.iter().map(|(number, line)| (*number, line)).collect();
    let now: HashMap<u64, &String> = lines.iter().map(|(number, line)| (*number, line)).collect();
    let by_ref: HashMap<u64, &Value> =
        captured.nodes.iter().filter_map(|node| Some((node["ref"].as_str()?.trim_start_matches('e').parse().ok()?, node))).collect();
    let mut added = Vec::new();
    let mut changed = Vec::new();
    for (number, line) in lines {
        match before.get(number) {
            None => added.push(by_ref[number].clone()),
            Some(old) if *old != line => changed.push(by_ref[number].clone()),
            _ => {}
        }
    }
    let removed: Vec<String> =
        previous.lines.iter().filter(|(number, _)| !now.contains_key(number)).map(|(number, _)| format!("e{number}")).collect();
    SnapshotChanges {
        changes: true,
        url: captured.url.clone(),
        title: captured.title.clone(),
        url_changed: previous.url != captured.url,
        title_changed: previous.title != captured.title,
        added,
        changed,
        removed,
        text_changed: false,
        text: None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tools::snapshot::capture::Item;

    #[test]
    fn diff_reports_added_changed_removed() {
        let before = PreviousSnapshot { lines: vec![(1, "e1 a".into()), (2, "e2 b".into())], ..Default::default() };
        let captured = Capture {
            nodes: vec![json!({"ref": "e2", "role": "x"}), json!({"ref": "e3", "role": "y"})],
            items: vec![Item::Element { node: 0, heading: None }, Item::Element { node: 1, heading: None }],
            ..Capture::default()
        };
        let result = diff(&before, &[(2, "e2 changed".into()), (3, "e3 new".into())], &captured);
        assert_eq!(result.added[0]["ref"], "e3");
        assert_eq!(result.changed[0]["ref"], "e2");
        assert_eq!(result.removed, vec!["e1".to_string()]);
    }

    #[test]
    fn the_text_of_changes_is_cut_to_the_budget_between_lines() {
        let text: Vec<String> = (0..400).map(|line| format!("line {line} of the page")).collect();
        let fitted = fit_lines(&text.join("\n"), 100);
        assert!(estimate(&fitted) <= 100, "{fitted}");
        assert!(fitted.starts_with("line 0 of the page\nline 1 of the page\n"));
        assert!(fitted.ends_with("\n(text cut at the token budget; snapshot shows the rest)"), "{fitted}");
        assert_eq!(fit_lines("one\ntwo", 100), "one\ntwo");
    }
}
