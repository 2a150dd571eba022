//! Two snapshots' lines compared: a shortest edit script (Myers), then, inside each run of
//! edits, a removed line and an added one that are alike (the same element, or most of
//! the text in common) read as one changed line. Lines are compared without their refs
//! (`e12 `), which differ between documents; they are shown with them.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::Serialize;

/// A line that changed: before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct ChangedLine {
    /// The line as it was.
    pub(crate) before: String,
    /// The line as it is.
    pub(crate) after: String,
}

/// What differs between two lists of lines.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct LineDiff {
    pub(crate) added: Vec<String>,
    pub(crate) removed: Vec<String>,
    pub(crate) changed: Vec<ChangedLine>,
    pub(crate) unchanged: usize,
    /// The compact text: `@@ N @@` where a run of edits starts (N: the line in the new
    /// list), `- old`, `+ new` (a changed line is its `-` and its `+`).
    pub(crate) text: String,
    /// Lines of `text` left out at the size limit.
    pub(crate) cut: usize,
}

/// Characters of diff lines kept at most (about 10,000 tokens); the rest is counted.
const MAX_CHARS: usize = 40_000;

/// Edits past which two lists are compared as wholly different (the edit script's memory
/// grows with their square: 1,000 edits keep a million positions).
const MAX_EDITS: usize = 1000;

/// Pairs of lines of one run compared at most when looking for changed lines.
const MAX_PAIRINGS: usize = 250_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edit {
    Same,
    Remove(usize),
    Add(usize),
}

/// Compares `before` with `after`.
pub(crate) fn diff(before: &[String], after: &[String]) -> LineDiff {
    let masked = |lines: &[String]| lines.iter().map(|line| without_ref(line).to_string()).collect::<Vec<_>>();
    let (old, new) = (masked(before), masked(after));
    let edits = edit_script(&old, &new);
    let mut result = LineDiff::default();
    let mut position = 0;
    let mut at_new = 0;
    while position < edits.len() {
        if edits[position] == Edit::Same {
            result.unchanged += 1;
            at_new += 1;
            position += 1;
            continue;
        }
        let start = position;
        while position < edits.len() && edits[position] != Edit::Same {
            position += 1;
        }
        let removed: Vec<usize> =
            edits[start..position].iter().filter_map(|edit| if let Edit::Remove(index) = edit { Some(*index) } else { None }).collect();
        let added: Vec<usize> =
            edits[start..position].iter().filter_map(|edit| if let Edit::Add(index) = edit { Some(*index) } else { None }).collect();
        run(&mut result, (before, &old, &removed), (after, &new, &added), at_new);
        at_new += added.len();
    }
    result
}

/// One run of edits: pairs alike lines (in order) as changed, the rest added or removed.
fn run(
    result: &mut LineDiff,
    (before, old, removed): (&[String], &[String], &[usize]),
    (after, new, added): (&[String], &[String], &[usize]),
    at: usize,
) {
    let mut lines = vec![format!("@@ {} @@", at + 1)];
    let mut next_added = 0;
    let mut paired: Vec<Option<usize>> = vec![None; removed.len()];
    for (slot, &gone) in removed.iter().enumerate().take_while(|_| removed.len() * added.len() <= MAX_PAIRINGS) {
        if let Some(offset) = added[next_added..].iter().position(|&came| alike(&before[gone], &old[gone], &after[came], &new[came])) {
            paired[slot] = Some(next_added + offset);
            next_added += offset + 1;
        }
    }
    let is_paired: Vec<bool> = (0..added.len()).map(|index| paired.contains(&Some(index))).collect();
    for (slot, &gone) in removed.iter().enumerate() {
        lines.push(format!("- {}", before[gone]));
        match paired[slot] {
            Some(index) => result.changed.push(ChangedLine { before: before[gone].clone(), after: after[added[index]].clone() }),
            None => result.removed.push(before[gone].clone()),
        }
    }
    for (index, &came) in added.iter().enumerate() {
        lines.push(format!("+ {}", after[came]));
        if !is_paired[index] {
            result.added.push(after[came].clone());
        }
    }
    for line in lines {
        if result.cut > 0 || result.text.len() + line.len() + 1 > MAX_CHARS {
            result.cut += 1;
        } else {
            let _ = writeln!(result.text, "{line}");
        }
    }
}

/// Whether a removed line and an added one are the same line changed: the same ref, or
/// (refs aside) a common start and end covering half of the shorter one.
fn alike(before: &str, old: &str, after: &str, new: &str) -> bool {
    let reference = |line: &str| line.trim_start_matches(['#', ' ']).split(' ').next().filter(|word| is_ref(word)).map(str::to_string);
    if let (Some(one), Some(other)) = (reference(before), reference(after)) {
        if one == other {
            return true;
        }
    }
    let (old, new): (Vec<char>, Vec<char>) = (old.chars().collect(), new.chars().collect());
    let shorter = old.len().min(new.len());
    if shorter == 0 {
        return false;
    }
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix = old.iter().rev().zip(new.iter().rev()).take(shorter - prefix).take_while(|(a, b)| a == b).count();
    2 * (prefix + suffix) >= shorter
}

fn is_ref(word: &str) -> bool {
    word.strip_prefix('e').is_some_and(|number| !number.is_empty() && number.bytes().all(|byte| byte.is_ascii_digit()))
}

/// A line without the ref it starts with (after a heading's `#`s): `e12 button "Save"` is
/// `button "Save"`.
fn without_ref(line: &str) -> std::borrow::Cow<'_, str> {
    let marks = line.len() - line.trim_start_matches('#').len();
    let rest = line[marks..].trim_start_matches(' ');
    let start = line.len() - rest.len();
    match rest.split_once(' ') {
        Some((word, tail)) if is_ref(word) => std::borrow::Cow::Owned(format!("{}{tail}", &line[..start])),
        None if is_ref(rest) => std::borrow::Cow::Owned(line[..start].to_string()),
        _ => std::borrow::Cow::Borrowed(line),
    }
}

/// A shortest edit script from `old` to `new` (Myers' O(ND) algorithm), after their common
/// start and end; past [`MAX_EDITS`] the middle is all removed, then all added.
fn edit_script(old: &[String], new: &[String]) -> Vec<Edit> {
    let head = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let tail = old[head..].iter().rev().zip(new[head..].iter().rev()).take_while(|(a, b)| a == b).count();
    let (middle_old, middle_new) = (&old[head..old.len() - tail], &new[head..new.len() - tail]);
    let mut edits = vec![Edit::Same; head];
    match myers(middle_old, middle_new) {
        Some(middle) => edits.extend(middle.into_iter().map(|edit| match edit {
            Edit::Remove(index) => Edit::Remove(index + head),
            Edit::Add(index) => Edit::Add(index + head),
            Edit::Same => Edit::Same,
        })),
        None => {
            edits.extend((0..middle_old.len()).map(|index| Edit::Remove(index + head)));
            edits.extend((0..middle_new.len()).map(|index| Edit::Add(index + head)));
        }
    }
    edits.extend(std::iter::repeat_n(Edit::Same, tail));
    edits
}

/// Myers' shortest edit script, or `None` past [`MAX_EDITS`] edits.
fn myers(old: &[String], new: &[String]) -> Option<Vec<Edit>> {
    let (n, m) = (old.len() as isize, new.len() as isize);
    let max = (n + m) as usize;
    let offset = max as isize + 1;
    let mut furthest = vec![0isize; 2 * max + 3];
    // `trace[d]`: the furthest x of each diagonal k in -d..=d before step d.
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let at = |k: isize| (k + offset) as usize;
    let mut found = None;
    'steps: for d in 0..=(max.min(MAX_EDITS) as isize) {
        trace.push((-d..=d).map(|k| furthest[at(k)]).collect());
        let mut k = -d;
        while k <= d {
            let mut x = if k == -d || (k != d && furthest[at(k - 1)] < furthest[at(k + 1)]) {
                furthest[at(k + 1)]
            } else {
                furthest[at(k - 1)] + 1
            };
            let mut y = x - k;
            while x < n && y < m && old[x as usize] == new[y as usize] {
                x += 1;
                y += 1;
            }
            furthest[at(k)] = x;
            if x >= n && y >= m {
                found = Some(d);
                break 'steps;
            }
            k += 2;
        }
    }
    let steps = found?;
    let mut edits = Vec::new();
    let (mut x, mut y) = (n, m);
    for d in (1..=steps).rev() {
        let saved = &trace[d as usize];
        let value = |k: isize| saved[(k + d) as usize];
        let k = x - y;
        let previous_k = if k == -d || (k != d && value(k - 1) < value(k + 1)) { k + 1 } else { k - 1 };
        let previous_x = value(previous_k);
        let previous_y = previous_x - previous_k;
        while x > previous_x && y > previous_y {
            edits.push(Edit::Same);
            x -= 1;
            y -= 1;
        }
        if x == previous_x {
            edits.push(Edit::Add((y - 1) as usize));
        } else {
            edits.push(Edit::Remove((x - 1) as usize));
        }
        x = previous_x;
        y = previous_y;
    }
    edits.extend(std::iter::repeat_n(Edit::Same, x as usize));
    edits.reverse();
    Some(edits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn added_removed_and_changed_lines_are_told_apart() {
        let before = lines("# Shop\nStatus: idle\nApples\ne4 button \"Save\"\nPlums\nFooter");
        let after = lines("# Shop\nStatus: done\nApples\ne4 button \"Save\" [disabled]\nPears\nFooter\nNew line");
        let result = diff(&before, &after);
        assert_eq!(
            result.changed,
            vec![
                ChangedLine { before: "Status: idle".into(), after: "Status: done".into() },
                ChangedLine { before: "e4 button \"Save\"".into(), after: "e4 button \"Save\" [disabled]".into() },
            ]
        );
        assert_eq!(result.removed, vec!["Plums".to_string()]);
        assert_eq!(result.added, vec!["Pears".to_string(), "New line".to_string()]);
        assert_eq!(result.unchanged, 3);
        assert!(result.text.starts_with("@@ 2 @@\n- Status: idle\n+ Status: done\n@@ 4 @@\n"), "{}", result.text);
    }

    #[test]
    fn refs_do_not_count_as_changes() {
        let before = lines("e3 link \"Home\" -> /\n## e9 button \"Go\"\ntext");
        let after = lines("e41 link \"Home\" -> /\n## e50 button \"Go\"\ntext");
        let result = diff(&before, &after);
        assert_eq!((result.unchanged, result.text.as_str()), (3, ""));
        assert_eq!(without_ref("## e9 button \"Go\""), "## button \"Go\"");
        assert_eq!(without_ref("e10"), "");
        assert_eq!(without_ref("eleven words"), "eleven words");
    }

    #[test]
    fn the_edit_script_is_shortest_and_whole() {
        let (old, new) = (lines("a\nb\nc\na\nb\nb\na"), lines("c\nb\na\nb\na\nc"));
        let edits = edit_script(&old, &new);
        assert_eq!(edits.iter().filter(|edit| **edit != Edit::Same).count(), 5, "{edits:?}");
        assert_eq!(edits.iter().filter(|edit| !matches!(edit, Edit::Add(_))).count(), old.len());
        assert_eq!(edits.iter().filter(|edit| !matches!(edit, Edit::Remove(_))).count(), new.len());
        let empty: Vec<String> = Vec::new();
        assert_eq!(diff(&empty, &lines("x\ny")).added, lines("x\ny"));
        assert_eq!(diff(&lines("x"), &empty).removed, lines("x"));
    }

    #[test]
    fn a_long_diff_is_cut_and_counted() {
        let before: Vec<String> = (0..3000).map(|index| format!("old line {index} {}", "x".repeat(20))).collect();
        let after: Vec<String> = (0..3000).map(|index| format!("{index} new {}", "y".repeat(20))).collect();
        let result = diff(&before, &after);
        assert!(result.text.len() <= MAX_CHARS && result.cut > 0, "{} {}", result.text.len(), result.cut);
        assert_eq!(result.added.len() + result.changed.len(), 3000);
    }
}
