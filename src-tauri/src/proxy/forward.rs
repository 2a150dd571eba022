//! One request of a page, decided and forwarded: recorded, put to the tab's interception
//! rules (fulfill answers here, fail closes the connection), sent upstream without hop
//! headers, a redirect to a scheme no page may load answered 204, a WebSocket upgrade
//! bridged, and the response body teed into the capture on its way back.

use std::sync::Arc;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Request, Response, StatusCode, Uri};
use hyper_util::rt::TokioIo;

use super::tee::TeeBody;
use super::upstream::{self, Upstream};
use super::{empty, full, Connection, Proxy, ProxyBody, ProxyError};
use crate::events::{BlockReason, EventKind};
use crate::listen::Admission;
use crate::network::rules::{RequestFacts, RuleAction};
use crate::network::{self, Capture, Ending, Entry, NewRequest, ResourceType, TabTraffic, MAX_BODY_BYTES};

/// Forwards one request (its tab and capture already known) to `target`.
pub(super) async fn forward(
    mut request: Request<Incoming>,
    target: Upstream,
    proxy: &Proxy,
    traffic: Option<Arc<TabTraffic>>,
    capture: Arc<Capture>,
    connection: &Connection,
) -> Result<Response<ProxyBody>, ProxyError> {
    let path = request.uri().path_and_query().map(|path| path.as_str()).unwrap_or("/").to_string();
    let url = format!("{}{path}", target.origin());
    let websocket = request
        .headers()
        .get(header::UPGRADE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.eq_ignore_ascii_case("websocket"));
    if let Some(traffic) = &traffic {
        // A DevTools client's extra headers, as if the page had sent them (so logged too).
        for (name, value) in traffic.extra_headers() {
            if let (Ok(name), Ok(value)) = (header::HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(&value)) {
                request.headers_mut().insert(name, value);
            }
        }
    }
    let entry = begin_record(&request, &url, websocket, proxy, traffic.as_deref(), &capture);
    super::policy::refuse_if_blocked(proxy, &url, traffic.as_deref(), &entry)?;

    // The tab's rules decide first.
    if let Some(traffic) = &traffic {
        if let Some(fulfilled) = apply_rules(&request, &url, traffic, &entry, &capture)? {
            return Ok(fulfilled);
        }
    }

    // Upstream: origin-form, no hop headers; a subscribed body comes in a form we can read.
    *request.uri_mut() = path.parse::<Uri>()?;
    strip_hop_headers(request.headers_mut(), websocket);
    if !request.headers().contains_key(header::HOST) {
        request.headers_mut().insert(header::HOST, HeaderValue::from_str(&target.host_header())?);
    }
    let capturing = entry.lock().expect("record poisoned").body == network::BodyState::Pending;
    if capturing {
        request.headers_mut().insert(header::ACCEPT_ENCODING, HeaderValue::from_static("gzip, deflate"));
    }
    let downstream_upgrade = websocket.then(|| hyper::upgrade::on(&mut request));
    let request = request.map(|body| body.map_err(ProxyError::from).boxed());
    let mut response = match upstream::send(proxy, connection, &target, request, websocket).await {
        Ok(response) => response,
        Err(failure) => {
            network::record_end(&entry, Ending { body_size: 0, failure: Some(failure.clone()) });
            return Err(ProxyError(failure));
        }
    };
    let status = response.status().as_u16();
    if let Some(blocked) = redirect_to_forbidden_scheme(&response, &url) {
        // WebKit crashes following some of these (a redirect to file: in a frame, say):
        // the page never sees the redirect. A 204 tells it to stay where it is (a dropped
        // connection would be retried).
        let reason = format!("blocked: a redirect to {}", blocked.split(':').next().unwrap_or("?"));
        if let Some(traffic) = &traffic {
            let redirected = EventKind::NavigationBlocked {
                url: crate::urls::redact_credentials(&blocked),
                reason: BlockReason::Redirect,
                from: Some(url.clone()),
                rule: None,
            };
            traffic.events.push(Some(&traffic.tab), redirected);
        }
        network::record_end(&entry, Ending { body_size: 0, failure: Some(reason) });
        return Ok(Response::builder().status(StatusCode::NO_CONTENT).body(empty())?);
    }
    let mime = response.headers().get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok()).map(mime_of);
    network::record_response(&entry, status, mime, recorded_headers(response.headers()));

    if status == 101 {
        if let Some(downstream) = downstream_upgrade {
            bridge(downstream, hyper::upgrade::on(&mut response), connection.admission.clone());
        }
        network::record_end(&entry, Ending::default());
        let (parts, _) = response.into_parts();
        return Ok(Response::from_parts(parts, empty()));
    }
    strip_hop_headers(response.headers_mut(), false);
    let encoding = response.headers().get(header::CONTENT_ENCODING).and_then(|value| value.to_str().ok()).map(str::to_ascii_lowercase);
    let (parts, body) = response.into_parts();
    let tee = TeeBody::new(body, capturing.then_some(MAX_BODY_BYTES * 4), entry, capture, encoding);
    Ok(Response::from_parts(parts, tee.boxed()))
}

/// Records a request as it starts, typed by its `Sec-Fetch-Dest` (or `Accept`) and Upgrade
/// headers.
fn begin_record(
    request: &Request<Incoming>,
    url: &str,
    websocket: bool,
    proxy: &Proxy,
    traffic: Option<&TabTraffic>,
    capture: &Capture,
) -> Entry {
    let fetch_dest = request.headers().get("sec-fetch-dest").and_then(|value| value.to_str().ok());
    let accept = request.headers().get(header::ACCEPT).and_then(|value| value.to_str().ok());
    let resource_type = ResourceType::from_request(fetch_dest, accept, websocket);
    let body_size = request.headers().get(header::CONTENT_LENGTH).and_then(|value| value.to_str().ok()?.parse().ok()).unwrap_or(0);
    let method = request.method().as_str().to_string();
    let new_request = NewRequest { method, url: url.to_string(), resource_type, headers: recorded_headers(request.headers()), body_size };
    capture.begin(traffic, &proxy.services.seq, new_request)
}

/// Puts a request to the tab's rules: `Ok(Some(answer))` when a rule fulfilled it, an
/// error (the connection closes, as an unreachable server's would) when one failed it,
/// `Ok(None)` when it goes on upstream.
fn apply_rules(
    request: &Request<Incoming>,
    url: &str,
    traffic: &TabTraffic,
    entry: &Entry,
    capture: &Capture,
) -> Result<Option<Response<ProxyBody>>, ProxyError> {
    let resource_type = entry.lock().expect("record poisoned").resource_type;
    let raw_headers: Vec<(String, String)> =
        request.headers().iter().filter_map(|(name, value)| Some((name.as_str().to_string(), value.to_str().ok()?.to_string()))).collect();
    let facts = RequestFacts { method: request.method().as_str(), url, resource_type, headers: &raw_headers };
    let Some(matched) = traffic.decide(&facts) else { return Ok(None) };
    network::record_rule(entry, &matched);
    match matched.rule.action() {
        RuleAction::Continue => Ok(None),
        RuleAction::Fail => {
            network::record_end(entry, Ending { body_size: 0, failure: Some(format!("blocked_by_rule: {}", matched.rule.id)) });
            // Closing without an answer is what an unreachable server looks like.
            Err(ProxyError("failed by an interception rule".into()))
        }
        RuleAction::Fulfill => {
            let (status, headers, body) = matched.rule.fulfillment();
            let mut response = Response::builder().status(status);
            for (name, value) in &headers {
                response = response.header(name.as_str(), value.as_str());
            }
            let mime = headers.iter().find(|(name, _)| name == "content-type").map(|(_, value)| mime_of(value));
            network::record_response(
                entry,
                status,
                mime,
                network::recorded_headers(headers.iter().map(|(name, value)| (name.as_str(), value.as_str()))),
            );
            capture.keep_body(entry, &body[..body.len().min(MAX_BODY_BYTES)], body.len() > MAX_BODY_BYTES);
            network::record_end(entry, Ending { body_size: body.len() as u64, failure: None });
            Ok(Some(response.body(full(body))?))
        }
    }
}

/// Joins a page's upgraded connection to the server's (a WebSocket), holding a place among
/// the daemon's connections while it lasts.
fn bridge(downstream: hyper::upgrade::OnUpgrade, upstream: hyper::upgrade::OnUpgrade, admission: Arc<Admission>) {
    tokio::spawn(async move {
        let _in_use = admission.request_started();
        if let Ok((down, up)) = tokio::try_join!(downstream, upstream) {
            let (mut down, mut up) = (TokioIo::new(down), TokioIo::new(up));
            let _ = tokio::io::copy_bidirectional(&mut down, &mut up).await;
        }
    });
}

/// Headers as a record keeps them (those whose values are not text are left out).
fn recorded_headers(headers: &HeaderMap) -> Vec<(String, String)> {
    network::recorded_headers(headers.iter().filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?))))
}

/// Headers that concern one hop, not the request.
fn strip_hop_headers(headers: &mut HeaderMap, keep_upgrade: bool) {
    let listed: Vec<header::HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|name| header::HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .collect();
    for name in listed {
        if !(keep_upgrade && name == header::UPGRADE) {
            headers.remove(&name);
        }
    }
    for name in ["keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "te", "trailer", "transfer-encoding"] {
        headers.remove(name);
    }
    if !keep_upgrade {
        headers.remove(header::CONNECTION);
        headers.remove(header::UPGRADE);
    }
}

/// The target of a redirect to a scheme no page may load (file:, a custom scheme, ...).
fn redirect_to_forbidden_scheme(response: &Response<Incoming>, url: &str) -> Option<String> {
    if !response.status().is_redirection() {
        return None;
    }
    let location = response.headers().get(header::LOCATION)?.to_str().ok()?;
    let target = url::Url::parse(url).ok()?.join(location).ok()?;
    let web = matches!(target.scheme(), "http" | "https");
    (!web).then(|| target.to_string())
}

/// `text/html; charset=utf-8` -> `text/html`.
fn mime_of(content_type: &str) -> String {
    content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}
