//! Where a snapshot's answer ends: its items are taken in document order while their
//! estimated tokens fit the budget, and the answer stops before the first that does not,
//! so a line or an element is never cut. The answer then says where to go on: a cursor,
//! the `next` of `truncated`, that names the item to start from and the last item shown
//! (by a fingerprint), so that the next part starts right after what was shown even if
//! the page moved a little in between.

use crate::error::{Error, Result};

/// Where a part of a snapshot starts: given back as `next`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::tools) struct Cursor {
    /// The index of the first item of the part.
    pub(in crate::tools) index: usize,
    /// The fingerprint of the item before it, the last one the previous part showed.
    pub(in crate::tools) anchor: u32,
}

impl Cursor {
    /// Its text: `540.1a2b3c4d`.
    pub(in crate::tools) fn encode(self) -> String {
        format!("{}.{:08x}", self.index, self.anchor)
    }

    /// Reads a cursor an answer gave.
    pub(in crate::tools) fn decode(text: &str) -> Result<Cursor> {
        let refused = || Error::bad_request(format!("next {text:?} is not a cursor; give the `next` of a truncated snapshot"));
        let (index, anchor) = text.trim().split_once('.').ok_or_else(refused)?;
        let index = index.parse::<usize>().ok().filter(|index| *index > 0).ok_or_else(refused)?;
        let anchor = u32::from_str_radix(anchor, 16).map_err(|_| refused())?;
        Ok(Cursor { index, anchor })
    }
}

/// Where a part starts, given the fingerprints of the items now. The item before
/// `cursor.index` should be the one the previous part ended with; if the page moved,
/// the part starts after the nearest item with that fingerprint. `true` with the start
/// when none has it (the page changed there): the part starts at the same index.
pub(in crate::tools) fn resume(fingerprints: &[u32], cursor: Cursor) -> (usize, bool) {
    let expected = cursor.index - 1;
    if fingerprints.get(expected) == Some(&cursor.anchor) {
        return (cursor.index, false);
    }
    let nearest = fingerprints
        .iter()
        .enumerate()
        .filter(|(_, fingerprint)| **fingerprint == cursor.anchor)
        .min_by_key(|(index, _)| index.abs_diff(expected))
        .map(|(index, _)| index + 1);
    match nearest {
        Some(start) => (start, false),
        None => (cursor.index.min(fingerprints.len()), true),
    }
}

/// The end (exclusive) of the part that starts at `from`: items are taken while the sum
/// of their `costs` stays within `budget`. The first item is always taken, so that paging
/// goes on whatever the budget. A part does not end on an item that only opens what
/// follows (`opens`: a heading's or table's mark), unless that is all it could hold.
pub(in crate::tools) fn cut(costs: &[usize], from: usize, budget: usize, opens: impl Fn(usize) -> bool) -> usize {
    let mut spent = 0;
    let mut end = from;
    while end < costs.len() && (end == from || spent + costs[end] <= budget) {
        spent += costs[end];
        end += 1;
    }
    if end < costs.len() {
        let mut kept = end;
        while kept > from + 1 && opens(kept - 1) {
            kept -= 1;
        }
        if !opens(kept - 1) {
            end = kept;
        }
    }
    end
}

/// A 32-bit FNV-1a hash: an item's fingerprint in cursors.
pub(in crate::tools) fn fingerprint(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |hash, byte| (hash ^ u32::from(*byte)).wrapping_mul(0x0100_0193))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_holds_whole_items_within_the_budget_and_at_least_one() {
        let costs = [4, 4, 4, 4, 4];
        let never = |_| false;
        assert_eq!(cut(&costs, 0, 12, never), 3);
        assert_eq!(cut(&costs, 0, 11, never), 2, "an item that does not fit whole is left for the next part");
        assert_eq!(cut(&costs, 3, 100, never), 5, "the last part reaches the end");
        assert_eq!(cut(&[50, 1], 0, 10, never), 1, "an item bigger than the budget is shown alone");
        assert_eq!(cut(&costs, 5, 10, never), 5, "nothing after the end");
    }

    #[test]
    fn a_part_does_not_end_on_what_opens_the_next_lines() {
        let costs = [4, 4, 1, 1, 4, 4];
        let opens = |index: usize| index == 2 || index == 3;
        assert_eq!(cut(&costs, 0, 10, opens), 2, "the marks at 2 and 3 go with the line they open");
        assert_eq!(cut(&costs, 2, 2, opens), 4, "unless they are all the part could hold");
        assert_eq!(cut(&costs, 0, 100, opens), 6);
    }

    #[test]
    fn paging_visits_every_item_once() {
        let costs: Vec<usize> = (0..200).map(|index| 1 + index % 7).collect();
        let fingerprints: Vec<u32> = (0..200u32).map(|index| fingerprint(&index.to_le_bytes())).collect();
        let mut seen = Vec::new();
        let mut from = 0;
        loop {
            let end = cut(&costs, from, 25, |index| index % 10 == 0);
            seen.extend(from..end);
            if end == costs.len() {
                break;
            }
            let cursor = Cursor::decode(&Cursor { index: end, anchor: fingerprints[end - 1] }.encode()).unwrap();
            from = resume(&fingerprints, cursor).0;
        }
        assert_eq!(seen, (0..200).collect::<Vec<_>>());
    }

    #[test]
    fn a_cursor_follows_the_item_it_names_when_the_page_moves() {
        let before = [10, 20, 30, 40, 50];
        let cursor = Cursor { index: 3, anchor: 30 };
        assert_eq!(resume(&before, cursor), (3, false));
        assert_eq!(resume(&[5, 10, 20, 30, 40, 50], cursor), (4, false), "an item added above");
        assert_eq!(resume(&[10, 30, 40, 50], cursor), (2, false), "an item removed above");
        assert_eq!(resume(&[30, 10, 20, 30, 40], cursor), (4, false), "the nearest of two");
        assert_eq!(resume(&[10, 20, 31, 40, 50], cursor), (3, true), "gone: the same place, said");
        assert_eq!(resume(&[10], cursor), (1, true));
    }

    #[test]
    fn cursors_read_back_and_refuse_anything_else() {
        let cursor = Cursor { index: 540, anchor: 0x1a2b_3c4d };
        assert_eq!(cursor.encode(), "540.1a2b3c4d");
        assert_eq!(Cursor::decode("540.1a2b3c4d").unwrap(), cursor);
        for bad in ["", "540", "0.1a2b3c4d", "x.1", "540.zz", "-1.0"] {
            assert_eq!(Cursor::decode(bad).unwrap_err().code, crate::error::ErrorCode::BadRequest, "{bad:?}");
        }
    }
}
