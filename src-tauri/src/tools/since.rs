//! Lists of the page an agent is on: the `since` of `requests`, `responses`, `console` and
//! `page_errors`. `navigation` answers what happened since the tab's last main-frame load
//! began, its document request included; `all`, HTTP's default (seed 003), every entry
//! kept. Over MCP and the CLI a list answers the current page when the call gives neither
//! `since` nor `after` ([`super::Presentation::current_page`]), and says in one line how
//! many earlier entries it left out and how to list them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::state::TabState;

/// Which part of a tab's log a list answers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Since {
    /// Every entry the log keeps.
    #[default]
    All,
    /// Since the tab's last main-frame navigation (its document request included).
    Navigation,
}

/// What a list of the current page left out.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Earlier {
    /// How many matching entries came before the page's navigation.
    pub(crate) earlier: usize,
    /// A line saying so, and how to list them.
    pub(crate) note: String,
}

impl Earlier {
    /// What a list left out of `count` earlier entries, named `one` or `many`: nothing to
    /// say when there were none.
    pub(crate) fn of(count: usize, one: &str, many: &str) -> Option<Earlier> {
        (count > 0).then(|| Earlier { earlier: count, note: note(count, one, many) })
    }
}

/// The line that says what a list of the current page left out.
pub(crate) fn note(count: usize, one: &str, many: &str) -> String {
    let noun = if count == 1 { one } else { many };
    format!("{count} earlier {noun}, before this page's navigation, not listed: since \"all\" (or an after cursor) lists them")
}

impl Since {
    /// The seq after which `tab`'s requests are its current page's (`None`: every one).
    pub(crate) fn requests_floor(self, tab: &TabState) -> Option<u64> {
        if self == Since::All {
            return None;
        }
        let start = tab.page_start();
        let at = start.at?;
        Some(tab.traffic.page_floor(start.seq, at, &start.url, start.previous))
    }

    /// The seq after which `tab`'s console lines and errors are its current page's.
    pub(crate) fn page_floor(self, tab: &TabState) -> Option<u64> {
        (self == Since::Navigation).then(|| tab.page_start().seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_counts_and_says_how_to_list_the_rest() {
        assert!(Earlier::of(0, "request", "requests").is_none());
        let one = Earlier::of(1, "line", "lines").unwrap();
        assert_eq!(one.earlier, 1);
        assert!(one.note.starts_with("1 earlier line, before this page's navigation"), "{}", one.note);
        assert!(note(3, "request", "requests").contains("3 earlier requests") && one.note.contains("since \"all\""));
    }
}
