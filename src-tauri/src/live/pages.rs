//! What the browser is sent: the viewer page and its script and style (`ui/live/`,
//! embedded at build time: nothing is fetched from anywhere else), and the plain pages
//! that say why a link is refused. Every answer carries a strict Content-Security-Policy,
//! may not be framed, cached or sniffed, and sends no referrer.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

const PAGE: &str = include_str!("../../../ui/live/index.html");
const SCRIPT: &str = include_str!("../../../ui/live/live.js");
const STYLE: &str = include_str!("../../../ui/live/live.css");

/// The headers every answer carries; `connect` is the one WebSocket origin the page may
/// open (its own).
fn guarded(mut response: Response, connect: Option<&str>) -> Response {
    let policy = format!(
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src {}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        connect.unwrap_or("'none'")
    );
    let headers = response.headers_mut();
    if let Ok(policy) = HeaderValue::from_str(&policy) {
        headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert("cross-origin-resource-policy", HeaderValue::from_static("same-origin"));
    headers.insert("cross-origin-opener-policy", HeaderValue::from_static("same-origin"));
    response
}

/// The viewer page for a viewer on `host` (checked already), with its claim cookie.
pub(super) fn viewer(host: &str, cookie: Option<String>) -> Response {
    let mut response = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE).into_response();
    if let Some(cookie) = cookie.and_then(|cookie| HeaderValue::from_str(&cookie).ok()) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    guarded(response, Some(&format!("ws://{host}")))
}

/// The page's script or style, by name.
pub(super) fn asset(name: &str) -> Response {
    let (kind, body) = match name {
        "live.js" => ("text/javascript; charset=utf-8", SCRIPT),
        "live.css" => ("text/css; charset=utf-8", STYLE),
        _ => return refused(StatusCode::NOT_FOUND, "Not found", "There is nothing here."),
    };
    guarded(([(header::CONTENT_TYPE, kind)], body).into_response(), None)
}

/// A plain page saying why nothing is shown (the status says it to programs).
pub(super) fn refused(status: StatusCode, title: &str, text: &str) -> Response {
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">\
         <title>malo-browser: {title}</title><link rel=\"stylesheet\" href=\"/assets/live.css\"></head>\
         <body class=\"refused\"><main><h1 id=\"refused\">{title}</h1><p>{text}</p>\
         <p>Ask the agent for a new link if you still need to see the session.</p></main></body></html>"
    );
    guarded((status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response(), None)
}
