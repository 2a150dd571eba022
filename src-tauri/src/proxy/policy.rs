//! The person's site rules at the session proxy: a request (page, frame, sub-resource,
//! fetch, WebSocket) to a host the session's policy refuses is failed before anything
//! leaves the machine, its record naming the rule, and a refused document is a
//! `navigation_blocked` event (reason `policy`), which the navigation reports as
//! `net_error: "blocked_by_policy"`.

use super::{Proxy, ProxyError};
use crate::events::{BlockReason, EventKind};
use crate::network::{self, Ending, Entry, ResourceType, TabTraffic};

/// What a refused request's record says failed it (the navigation's `net_error` is the
/// part before the colon).
pub(super) const BLOCKED_BY_POLICY: &str = "blocked_by_policy";

/// Fails a request the session's policy refuses (the connection closes, as for an
/// unreachable server); `Ok` lets it go on.
pub(super) fn refuse_if_blocked(proxy: &Proxy, url: &str, traffic: Option<&TabTraffic>, entry: &Entry) -> Result<(), ProxyError> {
    let Some(rule) = proxy.policy.refuses_url(url) else { return Ok(()) };
    let document = entry.lock().expect("record poisoned").resource_type == ResourceType::Document;
    network::record_policy(entry, &rule);
    network::record_end(entry, Ending { body_size: 0, failure: Some(format!("{BLOCKED_BY_POLICY}: {rule}")) });
    if let (true, Some(traffic)) = (document, traffic) {
        let blocked = EventKind::NavigationBlocked {
            url: crate::urls::redact_credentials(url),
            reason: BlockReason::Policy,
            from: None,
            rule: Some(rule.clone()),
        };
        traffic.events.push(Some(&traffic.tab), blocked);
    }
    tracing::debug!(%rule, "a request refused by the policy");
    Err(ProxyError(format!("{BLOCKED_BY_POLICY}: {rule}")))
}
