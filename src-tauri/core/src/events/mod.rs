//! The event log: one global, monotonically increasing `seq` for the whole daemon, and a
//! bounded buffer of events per session, read with a cursor (`events?after=<seq>`).
//!
//! Actions (tool calls) and page events (navigation, load, crash, blocked popups,
//! denied permissions) land here. Nothing secret is ever written to an event.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;

mod kinds;

pub use kinds::{ApprovalAnswer, BlockReason, ClosedBy, DownloadStatus, EventKind};

/// How many events a session keeps; older ones are dropped first.
pub const EVENT_CAPACITY: usize = 1000;

/// The daemon-wide sequence counter. Every event and action takes the next number.
#[derive(Debug, Default)]
pub struct SeqCounter(AtomicU64);

impl SeqCounter {
    /// The next sequence number (the first is 1).
    pub fn next(&self) -> u64 {
        self.0.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// The last number handed out (0 before any).
    pub fn current(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// One entry of the log.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Event {
    /// Global sequence number.
    pub seq: u64,
    /// When it happened (RFC 3339, ms).
    pub time: String,
    /// The tab it happened in, when it concerns one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    /// What happened: its `type` and own fields, flattened into the object.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// A page of events after a cursor.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct EventPage {
    /// Events with `seq > after` (or the newest, without `after`), oldest first.
    pub events: Vec<Event>,
    /// Where to go on from.
    #[serde(flatten)]
    pub paging: Paging,
}

/// How a page read from a log ends, beside its entries in every such answer (events,
/// console, page_errors, responses, requests): where to go on from, and what the page
/// left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Paging {
    /// Pass this as the next `after` to continue.
    pub cursor: u64,
    /// With `after`: more matched than `limit` allowed.
    pub has_more: bool,
    /// Without `after`: how many older matching entries were left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "usize")]
    pub older_omitted: Option<usize>,
}

/// The part of a log's matching entries that a read answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window<T> {
    /// The entries answered, oldest first.
    pub items: Vec<T>,
    /// With a cursor: more entries after these than `limit` allowed.
    pub has_more: bool,
    /// Without a cursor: how many older entries were left out.
    pub older_omitted: Option<usize>,
}

impl<T> Window<T> {
    /// How the page of this window ends. Its cursor, where the reader goes on from (its
    /// next `after`), is the seq of the last entry answered; with none, the cursor it gave
    /// or the log's `newest` seq, whichever is later.
    pub fn paging(&self, seq_of: impl Fn(&T) -> u64, after: Option<u64>, newest: u64) -> Paging {
        let cursor = self.items.last().map(seq_of).unwrap_or(after.unwrap_or(0).max(newest));
        Paging { cursor, has_more: self.has_more, older_omitted: self.older_omitted }
    }
}

/// Chooses what a read of a log answers from `matching` (oldest first; already only those
/// after the cursor when there is one): with a cursor the first `limit`, paging forward;
/// without one the newest `limit`, since the buffers keep the newest and an agent that
/// looks without a cursor wants what just happened.
pub fn window<T>(mut matching: Vec<T>, after: Option<u64>, limit: usize) -> Window<T> {
    match after {
        Some(_) => {
            let has_more = matching.len() > limit;
            matching.truncate(limit);
            Window { items: matching, has_more, older_omitted: None }
        }
        None => {
            let omitted = matching.len().saturating_sub(limit);
            matching.drain(..omitted);
            Window { items: matching, has_more: false, older_omitted: Some(omitted) }
        }
    }
}

/// A session's event buffer. Cheap to share: the engine writes page events into it from
/// the main thread while the HTTP side reads it.
#[derive(Debug)]
pub struct EventLog {
    seq: Arc<SeqCounter>,
    // A std mutex: every critical section is a push or a copy, never held across await.
    events: Mutex<VecDeque<Event>>,
    /// Woken on every new event (`wait_for_event` listens).
    pushed: tokio::sync::Notify,
}

impl EventLog {
    /// An empty log numbering its events from the daemon-wide counter.
    pub fn new(seq: Arc<SeqCounter>) -> EventLog {
        EventLog { seq, events: Mutex::new(VecDeque::new()), pushed: tokio::sync::Notify::new() }
    }

    /// Appends an event and returns its seq.
    pub fn push(&self, tab: Option<&str>, kind: EventKind) -> u64 {
        let mut events = self.events.lock().expect("event log poisoned");
        // Take the number under the lock so that the buffer is always in seq order.
        let seq = self.seq.next();
        if events.len() == EVENT_CAPACITY {
            events.pop_front();
        }
        events.push_back(Event { seq, time: crate::clock::now(), tab: tab.map(str::to_string), kind });
        drop(events);
        self.pushed.notify_waiters();
        seq
    }

    /// The first event after `after` of type `kind` (and of `tab` when given), waiting for
    /// one until `deadline`; `None` when none came.
    pub async fn wait_for(&self, after: u64, kind: &str, tab: Option<&str>, deadline: tokio::time::Instant) -> Option<Event> {
        loop {
            // Listen before looking, so an event pushed in between is not missed.
            let pushed = self.pushed.notified();
            tokio::pin!(pushed);
            pushed.as_mut().enable();
            if let Some(event) = self.after_matching(Some(after), 1, tab, Some(kind)).events.into_iter().next() {
                return Some(event);
            }
            if tokio::time::timeout_at(deadline, pushed).await.is_err() {
                return None;
            }
        }
    }

    /// Takes the next seq without recording anything (a call that is not an action, such
    /// as reading the log, still has its place in the sequence).
    pub fn next_seq(&self) -> u64 {
        self.seq.next()
    }

    /// The daemon-wide counter this log numbers from.
    pub fn counter(&self) -> Arc<SeqCounter> {
        self.seq.clone()
    }

    /// The last seq handed out daemon-wide (a cursor for an empty page).
    pub fn seq_now(&self) -> u64 {
        self.seq.current()
    }

    /// Up to `limit` events with `seq > after`.
    pub fn after(&self, after: u64, limit: usize) -> EventPage {
        self.after_matching(Some(after), limit, None, None)
    }

    /// Up to `limit` events with `seq > after` (without `after`, the newest `limit`), only
    /// of `tab` and of type `kind` when given.
    pub fn after_matching(&self, after: Option<u64>, limit: usize, tab: Option<&str>, kind: Option<&str>) -> EventPage {
        let events = self.events.lock().expect("event log poisoned");
        let floor = after.unwrap_or(0);
        let matching: Vec<&Event> = events
            .iter()
            .filter(|event| {
                event.seq > floor
                    && tab.is_none_or(|tab| event.tab.as_deref() == Some(tab))
                    && kind.is_none_or(|kind| event.kind.name() == kind)
            })
            .collect();
        let chosen = window(matching, after, limit);
        let paging = chosen.paging(|event| event.seq, after, self.newest_of(&events));
        EventPage { events: chosen.items.into_iter().cloned().collect(), paging }
    }

    /// The seq of the newest event kept (0 when none).
    pub fn newest_seq(&self) -> u64 {
        self.events.lock().expect("event log poisoned").back().map(|event| event.seq).unwrap_or(0)
    }

    fn newest_of(&self, events: &VecDeque<Event>) -> u64 {
        events.back().map(|event| event.seq).unwrap_or(0)
    }
}

/// A bounded log of `T` numbered from the daemon-wide counter, read with a cursor: what a
/// tab keeps of its console lines and page errors (seed 002: 200 and 100).
#[derive(Debug)]
pub struct SeqRing<T> {
    seq: Arc<SeqCounter>,
    capacity: usize,
    // A std mutex: pushes and copies only.
    entries: Mutex<VecDeque<(u64, T)>>,
}

/// A page of a [`SeqRing`] after a cursor.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RingPage<T> {
    /// Entries with `seq > after` (or the newest, without `after`), oldest first, each
    /// with its `seq`.
    pub entries: Vec<Sequenced<T>>,
    /// Where to go on from.
    #[serde(flatten)]
    pub paging: Paging,
}

/// An entry of a [`SeqRing`] with its `seq` beside its own fields.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[schemars(rename = "Sequenced{T}")]
pub struct Sequenced<T> {
    /// Its place in the daemon-wide sequence.
    pub seq: u64,
    /// The entry itself, flattened into the object.
    #[serde(flatten)]
    pub entry: T,
}

impl<T: Clone> SeqRing<T> {
    /// An empty ring of `capacity` entries.
    pub fn new(seq: Arc<SeqCounter>, capacity: usize) -> SeqRing<T> {
        SeqRing { seq, capacity, entries: Mutex::new(VecDeque::new()) }
    }

    /// Appends an entry (the oldest goes when full); answers its seq.
    pub fn push(&self, entry: T) -> u64 {
        let mut entries = self.entries.lock().expect("ring poisoned");
        let seq = self.seq.next();
        if entries.len() == self.capacity {
            entries.pop_front();
        }
        entries.push_back((seq, entry));
        seq
    }

    /// Up to `limit` entries after `after` (without `after`, the newest `limit`) that
    /// `keep` admits, each with its `seq`.
    pub fn after(&self, after: Option<u64>, limit: usize, keep: impl Fn(&T) -> bool) -> RingPage<T> {
        self.after_since(after, 0, limit, keep).0
    }

    /// As [`SeqRing::after`], of the entries with `seq > since` only (a page's, since it
    /// began); also how many matching entries (after `after`) came before and were left out.
    pub fn after_since(&self, after: Option<u64>, since: u64, limit: usize, keep: impl Fn(&T) -> bool) -> (RingPage<T>, usize) {
        let entries = self.entries.lock().expect("ring poisoned");
        let floor = after.unwrap_or(0);
        let admitted = entries.iter().filter(|(seq, entry)| *seq > floor && keep(entry));
        let (mut earlier, mut matching) = (0, Vec::new());
        for item in admitted {
            if item.0 <= since {
                earlier += 1;
            } else {
                matching.push(item);
            }
        }
        let chosen = window(matching, after, limit);
        let selected: Vec<Sequenced<T>> = chosen.items.iter().map(|(seq, entry)| Sequenced { seq: *seq, entry: entry.clone() }).collect();
        let paging = chosen.paging(|(seq, _)| *seq, after, entries.back().map(|(seq, _)| *seq).unwrap_or(0));
        (RingPage { entries: selected, paging }, earlier)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn load(url: &str) -> EventKind {
        EventKind::Load { url: url.into(), title: String::new() }
    }

    fn action(duration_ms: u64) -> EventKind {
        EventKind::Action { tool: "navigate".into(), ok: true, duration_ms, error: None }
    }

    #[test]
    fn seq_is_global_and_increasing_across_logs() {
        let seq = Arc::new(SeqCounter::default());
        let first = EventLog::new(seq.clone());
        let second = EventLog::new(seq.clone());
        let a = first.push(Some("t1"), load("http://a/"));
        let b = second.push(None, load("http://b/"));
        let c = first.push(None, action(0));
        assert!(a < b && b < c);
        assert_eq!(first.after(0, 10).events.len(), 2);
        assert_eq!(second.after(0, 10).events.len(), 1, "logs are per session");
    }

    #[test]
    fn cursor_paging_and_capacity() {
        let log = EventLog::new(Arc::new(SeqCounter::default()));
        for index in 0..(EVENT_CAPACITY + 5) {
            log.push(None, action(index as u64));
        }
        let page = log.after(0, 10);
        assert_eq!(page.events.len(), 10);
        assert!(page.paging.has_more);
        assert_eq!(page.events[0].seq, 6, "the oldest five were dropped");
        let rest = log.after(page.paging.cursor, 5000);
        assert_eq!(rest.events.len(), EVENT_CAPACITY - 10);
        assert!(!rest.paging.has_more);
        let empty = log.after(rest.paging.cursor, 10);
        assert!(empty.events.is_empty());
        assert_eq!(empty.paging.cursor, rest.paging.cursor);

        // Without a cursor, the newest ten, oldest first, and how many older ones there are.
        let newest = log.after_matching(None, 10, None, None);
        assert_eq!(newest.events.first().unwrap().seq, (EVENT_CAPACITY + 5 - 9) as u64);
        assert_eq!(newest.events.last().unwrap().seq, (EVENT_CAPACITY + 5) as u64);
        assert_eq!(
            newest.paging,
            Paging { cursor: (EVENT_CAPACITY + 5) as u64, has_more: false, older_omitted: Some(EVENT_CAPACITY - 10) }
        );
    }

    #[test]
    fn rings_keep_their_capacity_and_page_by_cursor() {
        let seq = Arc::new(SeqCounter::default());
        let ring = SeqRing::new(seq.clone(), 3);
        for text in ["a", "b", "c", "d"] {
            ring.push(json!({ "text": text }));
        }
        let page = ring.after(Some(0), 2, |_| true);
        assert_eq!(page.entries.iter().map(|entry| entry.entry["text"].as_str().unwrap()).collect::<Vec<_>>(), ["b", "c"]);
        assert!(page.paging.has_more);
        assert_eq!(serde_json::to_value(&page).unwrap()["entries"][0], json!({ "seq": 2, "text": "b" }), "seq beside the fields");
        let rest = ring.after(Some(page.paging.cursor), 10, |entry| entry["text"] != "zzz");
        assert_eq!(rest.entries.len(), 1);
        assert_eq!(rest.paging.cursor, 4);
        assert_eq!(ring.after(Some(rest.paging.cursor), 10, |_| true).paging.cursor, 4, "an empty page keeps the cursor");

        // Without a cursor: the newest, in order, saying how many older ones were left out.
        let newest = ring.after(None, 2, |_| true);
        assert_eq!(newest.entries.iter().map(|entry| entry.entry["text"].as_str().unwrap()).collect::<Vec<_>>(), ["c", "d"]);
        assert_eq!(newest.paging, Paging { cursor: 4, has_more: false, older_omitted: Some(1) });
        let all = ring.after(None, 10, |_| true);
        assert_eq!((all.entries.len(), all.paging.older_omitted), (3, Some(0)));
    }

    #[test]
    fn data_is_flattened_when_serialized() {
        let log = EventLog::new(Arc::new(SeqCounter::default()));
        log.push(Some("t1"), EventKind::Navigation { url: "http://x/".into(), http_status: Some(200) });
        let page = serde_json::to_value(log.after(0, 1)).unwrap();
        assert_eq!(page["events"][0]["type"], "navigation");
        assert_eq!(page["events"][0]["url"], "http://x/");
        assert_eq!(page["events"][0]["tab"], "t1");
        // The paging fields stand beside `events`, and `older_omitted` only without `after`.
        assert_eq!((&page["cursor"], &page["has_more"]), (&json!(1), &json!(false)));
        assert!(page.get("paging").is_none() && page.get("older_omitted").is_none(), "{page}");
        let newest = serde_json::to_value(log.after_matching(None, 1, None, None)).unwrap();
        assert_eq!(newest["older_omitted"], 0);
    }
}
