//! Which tab a request comes from. The web-process extension adds the tab's token to the
//! User-Agent header of every request a page makes (`network::TAB_MARKER`); the proxy reads
//! it and removes it, so no server sees it.
//!
//! A few requests leave WebKit without passing through a page, so they carry no token
//! (measured on WebKitGTK 2.50): WebSocket handshakes, downloads a page starts, and a
//! service worker's own fetches and update checks. Those go to the tab that most recently
//! made a request from the same origin (their `Origin`, else their `Referer`): the page
//! that opened the socket, started the download or registered the worker, unless two tabs
//! of the context use one origin at once. A request with neither is the session's only.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use hyper::header::{self, HeaderMap, HeaderValue};

use crate::network::{Capture, TabTraffic, TAB_MARKER};

/// Origins remembered per proxy; past this, the memory starts again (the tabs that speak
/// next fill it).
const MAX_ORIGINS: usize = 512;

/// A tab as an origin remembers it: its traffic and its session's capture.
type Remembered = (Weak<TabTraffic>, Weak<Capture>);

/// The tab that last made a request from each origin, through one proxy.
#[derive(Debug, Default)]
pub(super) struct RecentOrigins {
    // A std mutex: a lookup or an insert per request, never held across an await.
    origins: Mutex<HashMap<String, Remembered>>,
}

impl RecentOrigins {
    fn remember(&self, origin: String, traffic: &Arc<TabTraffic>, capture: &Arc<Capture>) {
        let mut origins = self.origins.lock().expect("origins poisoned");
        if origins.len() >= MAX_ORIGINS && !origins.contains_key(&origin) {
            origins.clear();
        }
        origins.insert(origin, (Arc::downgrade(traffic), Arc::downgrade(capture)));
    }

    fn find(&self, origin: &str) -> Option<(Arc<TabTraffic>, Arc<Capture>)> {
        let origins = self.origins.lock().expect("origins poisoned");
        let (traffic, capture) = origins.get(origin)?;
        Some((traffic.upgrade()?, capture.upgrade()?))
    }
}

/// The tab (and its session's capture) a request to `target_origin` comes from; the token
/// is removed from its User-Agent. `None`: no tab (the session's `capture` records it).
pub(super) fn attribute(proxy: &super::Proxy, headers: &mut HeaderMap, target_origin: &str) -> (Option<Arc<TabTraffic>>, Arc<Capture>) {
    let token = take_token(headers);
    let initiator = initiator_origin(headers);
    let Some(token) = token else {
        return match initiator.and_then(|origin| proxy.recent.find(&origin)) {
            Some((traffic, capture)) => (Some(traffic), capture),
            None => (None, proxy.capture.clone()),
        };
    };
    let Some((traffic, capture)) = proxy.services.directory.find(&token) else { return (None, proxy.capture.clone()) };
    if let Some(origin) = initiator {
        proxy.recent.remember(origin, &traffic, &capture);
    }
    // A document's own origin: its sockets and downloads name it as theirs.
    if is_document(headers) {
        proxy.recent.remember(target_origin.to_string(), &traffic, &capture);
    }
    (Some(traffic), capture)
}

/// Removes the token from the User-Agent header and answers it.
fn take_token(headers: &mut HeaderMap) -> Option<String> {
    let agent = headers.get(header::USER_AGENT)?.to_str().ok()?.to_string();
    let index = agent.rfind(TAB_MARKER)?;
    let token = agent[index + TAB_MARKER.len()..].to_string();
    match HeaderValue::from_str(&agent[..index]) {
        Ok(clean) if index > 0 => headers.insert(header::USER_AGENT, clean),
        _ => headers.remove(header::USER_AGENT),
    };
    Some(token)
}

/// The origin a request was made from: its `Origin`, else its `Referer`'s.
fn initiator_origin(headers: &HeaderMap) -> Option<String> {
    let text = |name| headers.get(name).and_then(|value: &HeaderValue| value.to_str().ok());
    if let Some(origin) = text(header::ORIGIN).filter(|origin| *origin != "null") {
        return Some(origin.to_string());
    }
    let referer = url::Url::parse(text(header::REFERER)?).ok()?;
    let origin = referer.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

/// Whether a request loads a document (a page's or a frame's).
fn is_document(headers: &HeaderMap) -> bool {
    headers.get("sec-fetch-dest").and_then(|value| value.to_str().ok()).is_some_and(|dest| matches!(dest, "document" | "iframe" | "frame"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_leaves_the_user_agent_whole() {
        let mut headers = HeaderMap::new();
        headers.insert(header::USER_AGENT, HeaderValue::from_static("Mozilla/5.0 Safari/605.1.15 malo/7.abc"));
        assert_eq!(take_token(&mut headers).as_deref(), Some("7.abc"));
        assert_eq!(headers[header::USER_AGENT], "Mozilla/5.0 Safari/605.1.15");
        // A page's own user agent that is only a token: no empty header goes upstream.
        headers.insert(header::USER_AGENT, HeaderValue::from_static(" malo/7.abc"));
        assert_eq!(take_token(&mut headers).as_deref(), Some("7.abc"));
        assert!(!headers.contains_key(header::USER_AGENT));
        headers.insert(header::USER_AGENT, HeaderValue::from_static("Mozilla/5.0"));
        assert_eq!(take_token(&mut headers), None);
        assert_eq!(headers[header::USER_AGENT], "Mozilla/5.0");
    }

    #[test]
    fn the_initiator_is_the_origin_or_the_referers() {
        let mut headers = HeaderMap::new();
        assert_eq!(initiator_origin(&headers), None);
        headers.insert(header::REFERER, HeaderValue::from_static("http://127.0.0.1:8080/f/page.html?q=1"));
        assert_eq!(initiator_origin(&headers).as_deref(), Some("http://127.0.0.1:8080"));
        headers.insert(header::ORIGIN, HeaderValue::from_static("null"));
        assert_eq!(initiator_origin(&headers).as_deref(), Some("http://127.0.0.1:8080"));
        headers.insert(header::ORIGIN, HeaderValue::from_static("https://example.com"));
        assert_eq!(initiator_origin(&headers).as_deref(), Some("https://example.com"));
    }
}
