//! What a session's pages say on the wire, as the proxy records it: one record per request
//! (method, url, type, status, sizes, timing, failure, the rule that decided it), kept per
//! tab (the `requests` log, seed 002) and per session (the `responses` view, seed 003, with
//! bodies for subscribed URL prefixes), and the tabs' interception rules (seed 000).
//!
//! Invariant: response bodies live only here, in memory, and leave only through the
//! `responses` answer and a HAR file the agent asks for; never a log line, an event, or a
//! run report.
//!
//! The rooms: `records.rs` (a request's record, a tab's log), `filters.rs` (what `requests`
//! filters on), `capture.rs` (a session's bodies and the `responses` view), `har.rs` (a tab's
//! log as HAR 1.2) and `rules.rs` (interception rules).

mod capture;
mod filters;
pub mod har;
mod records;
pub mod rules;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock, Weak};

pub use self::capture::{Capture, ResponseBody, ResponseRecord, MAX_BODIES, MAX_BODY_BUDGET, MAX_BODY_BYTES, SESSION_RESPONSES};
pub use self::filters::{RequestFilter, StatusFilter};
pub use self::records::{
    record_end, record_response, record_rule, recorded_headers, BodyState, Ending, Entry, Initiator, NameValue, NewRequest, RequestRecord,
    ResourceType, TabTraffic, TAB_REQUESTS,
};

/// The marker a tab's User-Agent ends with, before its token: the session proxy reads the
/// token to know the tab, and removes both before a request leaves the machine.
pub const TAB_MARKER: &str = " malo/";

/// A tab as the directory holds it: its traffic and its session's capture.
type Listed = (Weak<TabTraffic>, Weak<Capture>);

/// Every tab's traffic, by the token its requests carry (a profile's context is shared by
/// several sessions, so one proxy may see another session's tabs).
#[derive(Debug, Default)]
pub struct TabDirectory {
    // A std RwLock: lookups on every request, inserts and removals on tab open and close.
    tabs: RwLock<HashMap<String, Listed>>,
}

impl TabDirectory {
    /// Registers a tab's traffic under its token.
    pub fn register(&self, traffic: &Arc<TabTraffic>, capture: &Arc<Capture>) {
        self.tabs.write().expect("directory poisoned").insert(traffic.token.clone(), (Arc::downgrade(traffic), Arc::downgrade(capture)));
    }

    /// Forgets a tab.
    pub fn unregister(&self, token: &str) {
        self.tabs.write().expect("directory poisoned").remove(token);
    }

    /// The tab (and its session's capture) whose requests carry `token`.
    pub fn find(&self, token: &str) -> Option<(Arc<TabTraffic>, Arc<Capture>)> {
        let tabs = self.tabs.read().expect("directory poisoned");
        let (traffic, capture) = tabs.get(token)?;
        Some((traffic.upgrade()?, capture.upgrade()?))
    }
}

/// The ports of the daemon itself (broker, leases, proxies): a page may never reach them.
#[derive(Debug, Default)]
pub struct DaemonPorts {
    // A std RwLock: read on every proxied connection, written when a port opens or closes.
    ports: RwLock<HashSet<u16>>,
}

impl DaemonPorts {
    /// Marks a port as the daemon's own.
    pub fn add(&self, port: u16) {
        self.ports.write().expect("ports poisoned").insert(port);
    }

    /// Forgets a port.
    pub fn remove(&self, port: u16) {
        self.ports.write().expect("ports poisoned").remove(&port);
    }

    /// Whether `port` on a loopback address is the daemon's own.
    pub fn contains(&self, port: u16) -> bool {
        self.ports.read().expect("ports poisoned").contains(&port)
    }
}
