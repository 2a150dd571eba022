//! The live view's listener: its own loopback port, so that its origin is its own. Every
//! request is checked before anything else: a loopback Host (a page on another name that
//! resolves here gets nothing), then the capability, then the claim cookie; the WebSocket
//! also needs an Origin equal to the page's own, so a page of another origin cannot open
//! it. Nothing here logs a path, a header or a capability.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use axum::extract::ws::WebSocketUpgrade;
use axum::extract::Path;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::get;
use axum::Router;

use super::capability::Capability;
use super::{pages, Ended, Link};
use crate::error::{Error, Result};

/// The cookie that ties a link to the browser that opened it first.
const COOKIE: &str = "malo_live";
/// The largest message a viewer may send (a paste is the largest).
const MAX_MESSAGE: usize = 256 * 1024;

/// Binds the listener on 127.0.0.1 (a free port) and serves it for the daemon's life.
pub(super) async fn start() -> Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .map_err(|error| Error::internal(format!("cannot listen for the live view: {error}")))?;
    let address = listener.local_addr().map_err(|error| Error::internal(error.to_string()))?;
    let router = Router::new()
        .route("/assets/{name}", get(asset))
        .route("/live/{capability}", get(page))
        .route("/live/{capability}/ws", get(socket))
        .fallback(|headers: HeaderMap| async move {
            match loopback_host(&headers) {
                Some(_) => not_found(),
                None => wrong_host(),
            }
        });
    tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, router).await {
            tracing::warn!(%error, "the live view listener stopped");
        }
    });
    tracing::info!(%address, "live view listener started");
    Ok(address)
}

async fn asset(headers: HeaderMap, Path(name): Path<String>) -> Response {
    if loopback_host(&headers).is_none() {
        return wrong_host();
    }
    pages::asset(&name)
}

async fn page(headers: HeaderMap, Path(written): Path<String>) -> Response {
    let Some(host) = loopback_host(&headers) else { return wrong_host() };
    // The page is for a browser tab of its own, never a frame of another page.
    let destination = headers.get("sec-fetch-dest").and_then(|value| value.to_str().ok()).unwrap_or("document");
    if destination != "document" || headers.get(header::ORIGIN).is_some_and(|origin| !same_origin(origin, &host)) {
        return pages::refused(StatusCode::FORBIDDEN, "Not here", "This view opens only as a page of its own.");
    }
    let link = match open(&written) {
        Ok(link) => link,
        Err(why) => return refused(why),
    };
    let presented = cookie(&headers);
    let mut state = link.state();
    let cookie = match &state.viewer {
        Some(viewer) => {
            if !presented.as_ref().is_some_and(|presented| viewer.matches(presented)) {
                return in_use();
            }
            None
        }
        None => {
            if Instant::now() >= link.expires {
                return expired();
            }
            let viewer = Capability::generate();
            let cookie = format!("{COOKIE}={}; Path=/live/{written}; HttpOnly; SameSite=Strict", viewer.expose());
            state.viewer = Some(viewer);
            Some(cookie)
        }
    };
    drop(state);
    if cookie.is_some() {
        tracing::info!(session = %link.session_id, "live view opened");
    }
    pages::viewer(&host, cookie)
}

async fn socket(headers: HeaderMap, Path(written): Path<String>, upgrade: WebSocketUpgrade) -> Response {
    let Some(host) = loopback_host(&headers) else { return wrong_host() };
    if !headers.get(header::ORIGIN).is_some_and(|origin| same_origin(origin, &host)) {
        return pages::refused(StatusCode::FORBIDDEN, "Not from here", "Only the live view's own page may connect.");
    }
    let link = match open(&written) {
        Ok(link) => link,
        Err(why) => return refused(why),
    };
    let Ok((session, _)) = link.live_session() else { return ended(Ended::SessionClosed) };
    let presented = cookie(&headers);
    let connection = {
        let mut state = link.state();
        if !state.viewer.as_ref().is_some_and(|viewer| presented.as_ref().is_some_and(|presented| viewer.matches(presented))) {
            return in_use();
        }
        static CONNECTIONS: AtomicU64 = AtomicU64::new(1);
        state.connection = CONNECTIONS.fetch_add(1, Ordering::Relaxed);
        state.connection
    };
    // An earlier connection of the same browser (a reload) gives way.
    link.changed.notify_waiters();
    upgrade.max_message_size(MAX_MESSAGE).on_upgrade(move |socket| super::viewer::run(socket, link, session, connection))
}

/// The link `written` names, valid now; else why not (`None`: no such link).
fn open(written: &str) -> std::result::Result<Arc<Link>, Option<Ended>> {
    let Some(link) = Capability::parse(written).and_then(|capability| super::find(&capability)) else {
        return Err(None);
    };
    if let Err(why) = link.live_session() {
        return Err(Some(why));
    }
    Ok(link)
}

fn refused(why: Option<Ended>) -> Response {
    match why {
        Some(why) => ended(why),
        None => not_found(),
    }
}

/// The Host header when it names this machine's loopback (any port: `ssh -L` may forward
/// another local port to this one).
fn loopback_host(headers: &HeaderMap) -> Option<String> {
    let host = headers.get(header::HOST)?.to_str().ok()?.to_ascii_lowercase();
    let (name, port) = match host.strip_prefix('[') {
        Some(rest) => {
            let (name, after) = rest.split_once(']')?;
            (format!("[{name}]"), after.strip_prefix(':').unwrap_or(after).to_string())
        }
        None => match host.split_once(':') {
            Some((name, port)) => (name.to_string(), port.to_string()),
            None => (host.clone(), String::new()),
        },
    };
    let loopback = matches!(name.as_str(), "127.0.0.1" | "localhost" | "[::1]");
    (loopback && port.bytes().all(|byte| byte.is_ascii_digit())).then_some(host)
}

fn same_origin(origin: &header::HeaderValue, host: &str) -> bool {
    origin.to_str().is_ok_and(|origin| origin.eq_ignore_ascii_case(&format!("http://{host}")))
}

fn cookie(headers: &HeaderMap) -> Option<Capability> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().strip_prefix(COOKIE)?.strip_prefix('='))
        .find_map(Capability::parse)
}

fn wrong_host() -> Response {
    pages::refused(StatusCode::MISDIRECTED_REQUEST, "Wrong address", "Open the link exactly as it was given (127.0.0.1 or localhost).")
}

fn not_found() -> Response {
    pages::refused(StatusCode::NOT_FOUND, "No such link", "This link is not valid: check that it was copied whole.")
}

fn expired() -> Response {
    pages::refused(StatusCode::GONE, "Link expired", "This link was not opened in time.")
}

fn in_use() -> Response {
    pages::refused(StatusCode::CONFLICT, "Already open elsewhere", "This link is open in another browser: one person at a time.")
}

fn ended(why: Ended) -> Response {
    pages::refused(StatusCode::GONE, "Link ended", why.says())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, value.parse().unwrap());
        headers
    }

    #[test]
    fn only_loopback_names_are_served() {
        for good in ["127.0.0.1:4000", "localhost:4000", "[::1]:4000", "LOCALHOST:9", "127.0.0.1"] {
            assert!(loopback_host(&host(good)).is_some(), "{good}");
        }
        for bad in ["evil.example:4000", "127.0.0.1.evil.example:4000", "localhost:4000@evil", "10.0.0.1:4000", "[::2]:4000"] {
            assert!(loopback_host(&host(bad)).is_none(), "{bad}");
        }
        assert!(loopback_host(&HeaderMap::new()).is_none());
    }

    #[test]
    fn the_origin_must_be_the_page_s_own() {
        let origin = |value: &str| header::HeaderValue::from_str(value).unwrap();
        assert!(same_origin(&origin("http://127.0.0.1:4000"), "127.0.0.1:4000"));
        assert!(!same_origin(&origin("http://evil.example"), "127.0.0.1:4000"));
        assert!(!same_origin(&origin("http://127.0.0.1:4001"), "127.0.0.1:4000"));
        assert!(!same_origin(&origin("null"), "127.0.0.1:4000"));
    }
}
