//! The session proxy: every request of a session's pages (documents, sub-resources,
//! fetch/XHR, every frame, WebSockets; https through CONNECT, terminated here) passes
//! through a proxy of its own on 127.0.0.1, which records it (`network`), applies the
//! tab's interception rules (continue, fail, fulfill: answered here, the server never
//! sees it), keeps bodies the agent subscribed to, and refuses the daemon's own ports.
//!
//! A request names its tab by a token at the end of its User-Agent (each tab's webview has
//! its own), which the proxy removes before anything leaves the machine.
//!
//! Invariant: no request of a page reaches a loopback port of the daemon (broker, leases,
//! proxies), whatever the host name resolves to.

pub mod tls;

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode, Uri};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::events::{BlockReason, EventKind, SeqCounter};
use crate::listen::Admission;
use crate::network::rules::{RequestFacts, RuleAction};
use crate::network::{
    self, Capture, DaemonPorts, Ending, Entry, NewRequest, ResourceType, TabDirectory, TabTraffic, MAX_BODY_BYTES, TAB_MARKER,
};

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type ProxyBody = BoxBody<Bytes, ProxyError>;

/// Why the proxy gave up on a request or connection (a concrete type: hyper's services and
/// bodies need one that is `Send + Sync + 'static` without trait-object lifetimes).
#[derive(Debug)]
pub struct ProxyError(String);

impl std::fmt::Display for ProxyError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.0)
    }
}

impl std::error::Error for ProxyError {}

macro_rules! proxy_error_from {
    ($($type:ty),*) => {
        $(impl From<$type> for ProxyError {
            fn from(error: $type) -> ProxyError {
                ProxyError(error.to_string())
            }
        })*
    };
}
proxy_error_from!(
    hyper::Error,
    std::io::Error,
    hyper::http::Error,
    hyper::http::uri::InvalidUri,
    hyper::header::InvalidHeaderValue,
    tokio::time::error::Elapsed,
    String,
    &str,
    BoxError
);

/// How long an upstream connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a page may take to finish its TLS handshake with the proxy.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);
/// Connections one session proxy holds (WebKit's network process opens at most 256).
const MAX_CONNECTIONS: usize = 512;
/// How long a page's connection may wait for its next request's headers (idle keep-alive
/// included) before the proxy closes it.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// What every session proxy of the daemon shares.
#[derive(Debug)]
pub struct ProxyServices {
    provider: Arc<rustls::crypto::CryptoProvider>,
    ca: Arc<tls::CertAuthority>,
    client_tls: Arc<rustls::ClientConfig>,
    /// The daemon's own ports, never to be reached by a page.
    pub ports: Arc<DaemonPorts>,
    /// Every tab's traffic, by token.
    pub directory: Arc<TabDirectory>,
    seq: Arc<SeqCounter>,
}

impl ProxyServices {
    /// The CA of `data_dir` (made on first use) and the upstream trust.
    pub fn new(data_dir: &std::path::Path, ports: Arc<DaemonPorts>, seq: Arc<SeqCounter>) -> Result<ProxyServices, BoxError> {
        let provider = tls::provider();
        let ca = Arc::new(tls::CertAuthority::load_or_create(&data_dir.join("proxy"), &provider)?);
        let client_tls = tls::client_config(provider.clone())?;
        Ok(ProxyServices { provider, ca, client_tls, ports, directory: Arc::default(), seq })
    }
}

/// A running session proxy; dropping it closes the port.
#[derive(Debug)]
pub struct SessionProxy {
    /// Its port on 127.0.0.1.
    pub port: u16,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
    services: Arc<ProxyServices>,
}

impl SessionProxy {
    /// Starts a proxy for a session whose capture is `capture`.
    pub async fn start(services: Arc<ProxyServices>, capture: Arc<Capture>) -> std::io::Result<SessionProxy> {
        let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
        let port = listener.local_addr()?.port();
        services.ports.add(port);
        let (stop, stopped) = oneshot::channel();
        let state = Arc::new(Proxy { services: services.clone(), capture });
        let task = tokio::spawn(accept_loop(listener, state, stopped));
        Ok(SessionProxy { port, stop: Some(stop), task, services })
    }

    /// `http://127.0.0.1:<port>`, for the engine's proxy settings.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for SessionProxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.task.abort();
        self.services.ports.remove(self.port);
    }
}

/// One session's proxy.
struct Proxy {
    services: Arc<ProxyServices>,
    /// The session's own capture (requests of no known tab are recorded there).
    capture: Arc<Capture>,
}

async fn accept_loop(listener: TcpListener, proxy: Arc<Proxy>, mut stopped: oneshot::Receiver<()>) {
    let port = listener.local_addr().map(|address| address.port()).unwrap_or_default();
    loop {
        let accepted = tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) if matches!(error.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE)) => {
                Admission::relieve(port);
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
            Err(_) => continue,
        };
        // Anyone on the machine may connect: a place is rationed like the API's.
        let Some(admission) = Admission::admit(port, MAX_CONNECTIONS) else { continue };
        let _ = stream.set_nodelay(true);
        let proxy = proxy.clone();
        tokio::spawn(async move {
            let connection = Arc::new(Connection::new(None, Arc::new(admission)));
            let admission = connection.admission.clone();
            let service = service_fn(move |request| {
                // In flight until the answer's head (a tunnel or a WebSocket holds its own
                // mark for its whole life).
                let in_flight = connection.admission.request_started();
                let answer = handle(request, proxy.clone(), connection.clone());
                async move {
                    let answer = answer.await;
                    drop(in_flight);
                    answer
                }
            });
            let served = hyper::server::conn::http1::Builder::new()
                .preserve_header_case(true)
                .timer(TokioTimer::new())
                .header_read_timeout(IDLE_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades();
            tokio::select! {
                _ = served => {}
                () = admission.evicted() => {}
            }
        });
    }
}

/// Where requests go: a scheme, a host and a port.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Upstream {
    https: bool,
    host: String,
    port: u16,
}

impl Upstream {
    fn origin(&self) -> String {
        let default = if self.https { 443 } else { 80 };
        let scheme = if self.https { "https" } else { "http" };
        let host = if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() };
        if self.port == default {
            format!("{scheme}://{host}")
        } else {
            format!("{scheme}://{host}:{}", self.port)
        }
    }
}

fn unbracket(host: &str) -> String {
    host.trim_start_matches('[').trim_end_matches(']').to_string()
}

/// One connection from the page: inside a tunnel it knows its target, and it keeps one
/// upstream connection to reuse.
struct Connection {
    tunnel: Option<Upstream>,
    upstream: tokio::sync::Mutex<Option<(Upstream, hyper::client::conn::http1::SendRequest<ProxyBody>)>>,
    /// The page connection's place among the daemon's connections.
    admission: Arc<Admission>,
}

impl Connection {
    fn new(tunnel: Option<Upstream>, admission: Arc<Admission>) -> Connection {
        Connection { tunnel, upstream: tokio::sync::Mutex::new(None), admission }
    }
}

fn empty() -> ProxyBody {
    Empty::<Bytes>::new().map_err(|never| match never {}).boxed()
}

fn full(bytes: impl Into<Bytes>) -> ProxyBody {
    Full::new(bytes.into()).map_err(|never| match never {}).boxed()
}

/// The tab (and its session's capture) a request comes from, by the token in its
/// User-Agent, which is removed.
fn attribute(proxy: &Proxy, headers: &mut HeaderMap) -> (Option<Arc<TabTraffic>>, Arc<Capture>) {
    let Some(agent) = headers.get(header::USER_AGENT).and_then(|value| value.to_str().ok()).map(str::to_string) else {
        return (None, proxy.capture.clone());
    };
    let Some(index) = agent.rfind(TAB_MARKER) else { return (None, proxy.capture.clone()) };
    let token = &agent[index + TAB_MARKER.len()..];
    if let Ok(clean) = HeaderValue::from_str(&agent[..index]) {
        headers.insert(header::USER_AGENT, clean);
    }
    match proxy.services.directory.find(token) {
        Some((traffic, capture)) => (Some(traffic), capture),
        None => (None, proxy.capture.clone()),
    }
}

type Handled = Pin<Box<dyn std::future::Future<Output = Result<Response<ProxyBody>, ProxyError>> + Send>>;

/// One request from a page. (Boxed: a tunnel serves its requests with this again.)
fn handle(request: Request<Incoming>, proxy: Arc<Proxy>, connection: Arc<Connection>) -> Handled {
    Box::pin(handle_request(request, proxy, connection))
}

async fn handle_request(
    mut request: Request<Incoming>,
    proxy: Arc<Proxy>,
    connection: Arc<Connection>,
) -> Result<Response<ProxyBody>, ProxyError> {
    if request.method() == Method::CONNECT {
        return connect(request, proxy, connection.admission.clone()).await;
    }
    let target = match &connection.tunnel {
        Some(target) => target.clone(),
        None => {
            let uri = request.uri();
            let https = match uri.scheme_str() {
                Some("http") | Some("ws") => false,
                _ => return Ok(Response::builder().status(StatusCode::BAD_REQUEST).body(full("the proxy takes absolute http URLs"))?),
            };
            let Some(authority) = uri.authority() else { return Ok(Response::builder().status(StatusCode::BAD_REQUEST).body(empty())?) };
            Upstream { https, host: unbracket(authority.host()), port: authority.port_u16().unwrap_or(80) }
        }
    };
    let (traffic, capture) = attribute(&proxy, request.headers_mut());
    forward(request, target, &proxy, traffic, capture, &connection).await
}

/// Opens a tunnel for https/wss: the page gets our leaf for the host, and the requests in
/// the tunnel are handled like plain ones (upstream TLS is opened and verified per request
/// connection, so a fulfilled request never contacts the server).
async fn connect(mut request: Request<Incoming>, proxy: Arc<Proxy>, admission: Arc<Admission>) -> Result<Response<ProxyBody>, ProxyError> {
    let Some(authority) = request.uri().authority().cloned() else {
        return Ok(Response::builder().status(StatusCode::BAD_REQUEST).body(empty())?);
    };
    let target = Upstream { https: true, host: unbracket(authority.host()), port: authority.port_u16().unwrap_or(443) };
    let (traffic, capture) = attribute(&proxy, request.headers_mut());
    if let Err(reason) = check_destination(&proxy, &target).await {
        // Recorded as the page would name it, then refused as an unreachable server.
        let entry = capture.begin(
            traffic.as_deref(),
            &proxy.services.seq,
            NewRequest {
                method: "GET".into(),
                url: format!("{}/", target.origin()),
                resource_type: ResourceType::Other,
                headers: Vec::new(),
                body_size: 0,
            },
        );
        network::record_end(&entry, Ending { body_size: 0, failure: Some(reason.clone()) });
        return Err(ProxyError(reason));
    }
    let upgrade = hyper::upgrade::on(&mut request);
    tokio::spawn(async move {
        let Ok(upgraded) = upgrade.await else { return };
        let _in_use = admission.request_started();
        let ended = tokio::select! {
            ended = tunnel(TokioIo::new(upgraded), target, proxy, admission.clone()) => ended,
            () = admission.evicted() => Ok(()),
        };
        if let Err(error) = ended {
            tracing::debug!(%error, "proxy tunnel ended");
        }
    });
    Ok(Response::new(empty()))
}

async fn tunnel(
    io: TokioIo<hyper::upgrade::Upgraded>,
    target: Upstream,
    proxy: Arc<Proxy>,
    admission: Arc<Admission>,
) -> Result<(), ProxyError> {
    let config = tls::server_config(proxy.services.provider.clone(), proxy.services.ca.clone(), &target.host)?;
    let accepted = tokio::time::timeout(HANDSHAKE_TIMEOUT, tokio_rustls::TlsAcceptor::from(config).accept(io)).await??;
    let connection = Arc::new(Connection::new(Some(target), admission));
    let service = service_fn(move |request| handle(request, proxy.clone(), connection.clone()));
    hyper::server::conn::http1::Builder::new()
        .preserve_header_case(true)
        .timer(TokioTimer::new())
        .header_read_timeout(IDLE_TIMEOUT)
        .serve_connection(TokioIo::new(accepted), service)
        .with_upgrades()
        .await?;
    Ok(())
}

/// Refuses a destination that is a loopback port of the daemon; answers the addresses to
/// connect to (resolved once, so what was checked is what is used).
async fn check_destination(proxy: &Proxy, target: &Upstream) -> Result<Vec<SocketAddr>, String> {
    let addresses: Vec<SocketAddr> = match tokio::net::lookup_host((target.host.as_str(), target.port)).await {
        Ok(found) => found.collect(),
        Err(error) => return Err(format!("name_not_resolved: {error}")),
    };
    if addresses.is_empty() {
        return Err("name_not_resolved: no address".into());
    }
    let own = addresses.iter().any(|address| {
        let ip = match address.ip() {
            std::net::IpAddr::V6(v6) => v6.to_canonical(),
            other => other,
        };
        (ip.is_loopback() || ip.is_unspecified()) && proxy.services.ports.contains(address.port())
    });
    if own {
        return Err("blocked: the daemon's own port".into());
    }
    Ok(addresses)
}

/// Names an upstream failure as a navigation reports it.
fn describe_failure(error: &(dyn std::error::Error + 'static)) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        if let Some(tls) = current.downcast_ref::<rustls::Error>() {
            return format!("tls_error: {tls}");
        }
        if let Some(io) = current.downcast_ref::<std::io::Error>() {
            if let Some(inner) = io.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
                return format!("tls_error: {inner}");
            }
            return match io.kind() {
                std::io::ErrorKind::ConnectionRefused => "connection_refused".into(),
                std::io::ErrorKind::ConnectionReset => "connection_reset".into(),
                std::io::ErrorKind::TimedOut => "timed_out".into(),
                _ => format!("network_failed: {io}"),
            };
        }
        source = current.source();
    }
    format!("network_failed: {error}")
}

async fn open_upstream(proxy: &Proxy, target: &Upstream) -> Result<hyper::client::conn::http1::SendRequest<ProxyBody>, String> {
    let addresses = check_destination(proxy, target).await?;
    let connecting = async {
        let mut last = None;
        for address in &addresses {
            match TcpStream::connect(address).await {
                Ok(stream) => return Ok(stream),
                Err(error) => last = Some(error),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("no address")))
    };
    let stream = match tokio::time::timeout(CONNECT_TIMEOUT, connecting).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(error)) => return Err(describe_failure(&error)),
        Err(_) => return Err("timed_out: connecting".into()),
    };
    let _ = stream.set_nodelay(true);
    let io: Box<dyn Io> = if target.https {
        let name = rustls::pki_types::ServerName::try_from(target.host.clone()).map_err(|error| format!("tls_error: {error}"))?;
        let connector = tokio_rustls::TlsConnector::from(proxy.services.client_tls.clone());
        match tokio::time::timeout(CONNECT_TIMEOUT, connector.connect(name, stream)).await {
            Ok(Ok(tls)) => Box::new(tls),
            Ok(Err(error)) => return Err(describe_failure(&error)),
            Err(_) => return Err("timed_out: TLS handshake".into()),
        }
    } else {
        Box::new(stream)
    };
    let (sender, connection) = hyper::client::conn::http1::Builder::new()
        .preserve_header_case(true)
        .handshake::<_, ProxyBody>(TokioIo::new(io))
        .await
        .map_err(|error| describe_failure(&error))?;
    tokio::spawn(async move {
        let _ = connection.with_upgrades().await;
    });
    Ok(sender)
}

trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static> Io for T {}

/// Sends a request upstream on the connection's cached connection to the same target, or a
/// new one (a dedicated one for upgrades).
async fn send(
    proxy: &Proxy,
    connection: &Connection,
    target: &Upstream,
    request: Request<ProxyBody>,
    dedicated: bool,
) -> Result<Response<Incoming>, String> {
    let cached = if dedicated { None } else { connection.upstream.lock().await.take() };
    let reusable = match cached {
        Some((cached_target, mut sender)) if &cached_target == target => sender.ready().await.is_ok().then_some(sender),
        _ => None,
    };
    let mut sender = match reusable {
        Some(sender) => sender,
        None => open_upstream(proxy, target).await?,
    };
    let response = match sender.try_send_request(request).await {
        Ok(response) => response,
        // A connection the server closed meanwhile: once more on a new one, if the request
        // never left.
        Err(mut error) => match error.take_message() {
            Some(request) => {
                sender = open_upstream(proxy, target).await?;
                sender.send_request(request).await.map_err(|error| describe_failure(&error))?
            }
            None => return Err(describe_failure(&error.into_error())),
        },
    };
    if !dedicated {
        *connection.upstream.lock().await = Some((target.clone(), sender));
    }
    Ok(response)
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

async fn forward(
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
    let fetch_dest = request.headers().get("sec-fetch-dest").and_then(|value| value.to_str().ok()).map(str::to_string);
    let resource_type = ResourceType::from_request(fetch_dest.as_deref(), websocket);
    let headers =
        network::recorded_headers(request.headers().iter().filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?))));
    let body_size = request.headers().get(header::CONTENT_LENGTH).and_then(|value| value.to_str().ok()?.parse().ok()).unwrap_or(0);
    let method = request.method().as_str().to_string();
    let raw_headers: Vec<(String, String)> =
        request.headers().iter().filter_map(|(name, value)| Some((name.as_str().to_string(), value.to_str().ok()?.to_string()))).collect();
    let entry = capture.begin(
        traffic.as_deref(),
        &proxy.services.seq,
        NewRequest { method: method.clone(), url: url.clone(), resource_type, headers, body_size },
    );
    let resource_type = entry.lock().expect("record poisoned").resource_type;

    // The tab's rules decide first.
    if let Some(traffic) = &traffic {
        let facts = RequestFacts { method: &method, url: &url, resource_type, headers: &raw_headers };
        if let Some(matched) = traffic.decide(&facts) {
            network::record_rule(&entry, &matched);
            match matched.rule.action() {
                RuleAction::Continue => {}
                RuleAction::Fail => {
                    network::record_end(&entry, Ending { body_size: 0, failure: Some(format!("blocked_by_rule: {}", matched.rule.id)) });
                    // Closing without an answer is what an unreachable server looks like.
                    return Err(ProxyError("failed by an interception rule".into()));
                }
                RuleAction::Fulfill => {
                    let (status, headers, body) = matched.rule.fulfillment();
                    let mut response = Response::builder().status(status);
                    for (name, value) in &headers {
                        response = response.header(name.as_str(), value.as_str());
                    }
                    let mime = headers.iter().find(|(name, _)| name == "content-type").map(|(_, value)| mime_of(value));
                    network::record_response(
                        &entry,
                        status,
                        mime,
                        network::recorded_headers(headers.iter().map(|(name, value)| (name.as_str(), value.as_str()))),
                    );
                    capture.keep_body(&entry, &body[..body.len().min(MAX_BODY_BYTES)], body.len() > MAX_BODY_BYTES);
                    network::record_end(&entry, Ending { body_size: body.len() as u64, failure: None });
                    return Ok(response.body(full(body))?);
                }
            }
        }
    }

    // Upstream: origin-form, no hop headers; a subscribed body comes in a form we can read.
    *request.uri_mut() = path.parse::<Uri>()?;
    strip_hop_headers(request.headers_mut(), websocket);
    if !request.headers().contains_key(header::HOST) {
        request.headers_mut().insert(header::HOST, HeaderValue::from_str(&host_header(&target))?);
    }
    let capturing = entry.lock().expect("record poisoned").body == network::BodyState::Pending;
    if capturing {
        request.headers_mut().insert(header::ACCEPT_ENCODING, HeaderValue::from_static("gzip, deflate"));
    }
    let downstream_upgrade = websocket.then(|| hyper::upgrade::on(&mut request));
    let request = request.map(|body| body.map_err(ProxyError::from).boxed());
    let mut response = match send(proxy, connection, &target, request, websocket).await {
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
            };
            traffic.events.push(Some(&traffic.tab), redirected);
        }
        network::record_end(&entry, Ending { body_size: 0, failure: Some(reason) });
        return Ok(Response::builder().status(StatusCode::NO_CONTENT).body(empty())?);
    }
    let mime = response.headers().get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok()).map(mime_of);
    let recorded =
        network::recorded_headers(response.headers().iter().filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?))));
    network::record_response(&entry, status, mime, recorded);

    if status == 101 {
        if let Some(downstream) = downstream_upgrade {
            let upstream = hyper::upgrade::on(&mut response);
            let admission = connection.admission.clone();
            tokio::spawn(async move {
                let _in_use = admission.request_started();
                if let Ok((down, up)) = tokio::try_join!(downstream, upstream) {
                    let (mut down, mut up) = (TokioIo::new(down), TokioIo::new(up));
                    let _ = tokio::io::copy_bidirectional(&mut down, &mut up).await;
                }
            });
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

fn host_header(target: &Upstream) -> String {
    target.origin().split("://").nth(1).unwrap_or_default().to_string()
}

/// `text/html; charset=utf-8` -> `text/html`.
fn mime_of(content_type: &str) -> String {
    content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

/// The response body on its way to the page, counted, and copied aside (up to a limit)
/// when the agent subscribed to it. The record is finished when the body ends or the page
/// goes away.
struct TeeBody {
    inner: Incoming,
    kept: Option<BytesMut>,
    limit: usize,
    cut: bool,
    size: u64,
    finished: bool,
    entry: Entry,
    capture: Arc<Capture>,
    encoding: Option<String>,
}

impl TeeBody {
    fn new(inner: Incoming, keep: Option<usize>, entry: Entry, capture: Arc<Capture>, encoding: Option<String>) -> TeeBody {
        TeeBody {
            inner,
            kept: keep.map(|_| BytesMut::new()),
            limit: keep.unwrap_or(0),
            cut: false,
            size: 0,
            finished: false,
            entry,
            capture,
            encoding,
        }
    }

    fn finish(&mut self, failure: Option<String>) {
        if self.finished {
            return;
        }
        self.finished = true;
        if let Some(kept) = self.kept.take() {
            match &failure {
                Some(reason) => self.entry.lock().expect("record poisoned").body = network::BodyState::Failed(reason.clone()),
                None => match decode(&kept, self.encoding.as_deref()) {
                    Ok(decoded) => {
                        let truncated = self.cut || decoded.len() > MAX_BODY_BYTES;
                        self.capture.keep_body(&self.entry, &decoded[..decoded.len().min(MAX_BODY_BYTES)], truncated);
                    }
                    Err(reason) => self.entry.lock().expect("record poisoned").body = network::BodyState::Failed(reason),
                },
            }
        }
        network::record_end(&self.entry, Ending { body_size: self.size, failure });
    }
}

/// A captured body in its readable form (gzip and deflate undone), at most a few MiB.
fn decode(bytes: &[u8], encoding: Option<&str>) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let limit = (MAX_BODY_BYTES + 1) as u64;
    let mut out = Vec::new();
    let result = match encoding.unwrap_or("identity") {
        "identity" | "" => return Ok(bytes.to_vec()),
        "gzip" | "x-gzip" => flate2::read::GzDecoder::new(bytes).take(limit).read_to_end(&mut out),
        "deflate" => flate2::read::ZlibDecoder::new(bytes).take(limit).read_to_end(&mut out),
        other => return Err(format!("encoding {other} cannot be read")),
    };
    match result {
        Ok(_) => Ok(out),
        // A body cut short decodes as far as it goes.
        Err(_) if !out.is_empty() => Ok(out),
        Err(error) => Err(format!("decoding failed: {error}")),
    }
}

impl Body for TeeBody {
    type Data = Bytes;
    type Error = ProxyError;

    fn poll_frame(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, ProxyError>>> {
        let this = &mut *self;
        let polled = match Pin::new(&mut this.inner).poll_frame(context) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(polled) => polled,
        };
        match &polled {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    this.size += data.len() as u64;
                    if let Some(kept) = &mut this.kept {
                        let room = this.limit.saturating_sub(kept.len());
                        if data.len() > room {
                            this.cut = true;
                        }
                        kept.extend_from_slice(&data[..data.len().min(room)]);
                    }
                }
            }
            Some(Err(error)) => this.finish(Some(describe_failure(error))),
            None => this.finish(None),
        }
        Poll::Ready(polled.map(|frame| frame.map_err(ProxyError::from)))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for TeeBody {
    fn drop(&mut self) {
        if !self.finished {
            let failure = (!self.inner.is_end_stream()).then(|| "aborted: the page stopped reading".to_string());
            self.finish(failure);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_named_like_navigation_errors() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(describe_failure(&refused), "connection_refused");
        let tls = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
        );
        assert!(describe_failure(&tls).starts_with("tls_error"));
    }

    #[test]
    fn bodies_are_decoded_for_the_agent() {
        use std::io::Write;
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gzip.write_all(b"{\"a\":1}").unwrap();
        assert_eq!(decode(&gzip.finish().unwrap(), Some("gzip")).unwrap(), b"{\"a\":1}");
        assert!(decode(b"x", Some("br")).is_err());
        assert_eq!(Upstream { https: true, host: "::1".into(), port: 8443 }.origin(), "https://[::1]:8443");
        assert_eq!(Upstream { https: false, host: "a".into(), port: 80 }.origin(), "http://a");
    }
}
