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
//! log as HAR 1.2) and `rules.rs` (interception rules). `upstream_proxy.rs` and
//! `conditions.rs` hold what a session asks of its way out (an upstream proxy, network
//! conditions), checked; the session proxy applies them.

mod capture;
pub mod conditions;
mod filters;
pub mod har;
mod records;
pub mod rules;
pub mod upstream_proxy;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock, Weak};

use crate::secret::Token;

pub use self::capture::{Capture, ResponseBody, ResponseRecord, MAX_BODIES, MAX_BODY_BUDGET, MAX_BODY_BYTES, SESSION_RESPONSES};
pub use self::filters::{RequestFilter, StatusFilter};
pub use self::records::{
    record_end, record_policy, record_response, record_rule, recorded_headers, BodyState, Ending, Entry, Initiator, NameValue, NewRequest,
    RequestRecord, ResourceType, SessionHeaders, TabTraffic, TAB_REQUESTS,
};

/// What precedes a tab's token in the User-Agent header of its requests, as the web-process
/// extension writes it (`src-tauri/web-process/extension.rs`, which only the header gets:
/// the page's own user agent never carries it). The token is `<page id>.<context secret>`;
/// the session proxy reads it to know the tab and removes it before a request leaves the
/// machine.
pub const TAB_MARKER: &str = " malo/";

/// A tab as the directory holds it: its traffic, its session's capture, and the secret of
/// its WebKit context.
#[derive(Debug)]
struct Listed {
    traffic: Weak<TabTraffic>,
    capture: Weak<Capture>,
    secret: Token,
}

/// Every tab's traffic, by the WebKit page id its requests carry (a profile's context is
/// shared by several sessions, so one proxy may see another session's tabs).
#[derive(Debug, Default)]
pub struct TabDirectory {
    // A std RwLock: lookups on every request, inserts and removals on tab open and close.
    tabs: RwLock<HashMap<u64, Listed>>,
}

impl TabDirectory {
    /// Registers a tab's traffic under its view's page id, in a context whose secret is
    /// `secret`; the traffic remembers the page id, to be forgotten with the tab.
    pub fn register(&self, page_id: u64, secret: &Token, traffic: &Arc<TabTraffic>, capture: &Arc<Capture>) {
        let listed = Listed { traffic: Arc::downgrade(traffic), capture: Arc::downgrade(capture), secret: secret.clone() };
        self.tabs.write().expect("directory poisoned").insert(page_id, listed);
        traffic.set_page_id(page_id);
    }

    /// Forgets a tab.
    pub fn unregister(&self, page_id: u64) {
        self.tabs.write().expect("directory poisoned").remove(&page_id);
    }

    /// The tab (and its session's capture) whose requests carry `token`
    /// (`<page id>.<secret>`); the secret is compared in constant time.
    pub fn find(&self, token: &str) -> Option<(Arc<TabTraffic>, Arc<Capture>)> {
        let (page_id, secret) = token.split_once('.')?;
        let page_id: u64 = page_id.parse().ok()?;
        let tabs = self.tabs.read().expect("directory poisoned");
        let listed = tabs.get(&page_id)?;
        if !listed.secret.matches(secret) {
            return None;
        }
        Some((listed.traffic.upgrade()?, listed.capture.upgrade()?))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{EventLog, SeqCounter};

    #[test]
    fn a_tab_is_found_by_its_page_id_and_its_contexts_secret_only() {
        let directory = TabDirectory::default();
        let traffic = Arc::new(TabTraffic::new("t1", Arc::new(EventLog::new(Arc::new(SeqCounter::default())))));
        let capture = Arc::new(Capture::default());
        let secret = Token::generate();
        directory.register(7, &secret, &traffic, &capture);
        assert_eq!(traffic.page_id(), Some(7));
        let token = format!("7.{}", secret.expose());
        assert_eq!(directory.find(&token).map(|(found, _)| found.tab.clone()).as_deref(), Some("t1"));
        let forgeries =
            ["7".to_string(), "7.".into(), format!("8.{}", secret.expose()), format!("7.{}", Token::generate().expose()), "x.y".into()];
        for forged in forgeries {
            assert!(directory.find(&forged).is_none(), "{forged}");
        }
        directory.unregister(7);
        assert!(directory.find(&token).is_none());
    }

    #[test]
    fn the_web_process_extension_writes_the_same_marker() {
        let extension = include_str!("../../web-process/extension.rs");
        assert!(extension.contains(&format!("const TAB_MARKER: &str = \"{TAB_MARKER}\";")));
    }
}
