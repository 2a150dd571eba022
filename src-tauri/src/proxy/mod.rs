//! The session proxy: every request of a session's pages (documents, sub-resources,
//! fetch/XHR, every frame, WebSockets; https through CONNECT, terminated here) passes
//! through a proxy of its own on 127.0.0.1, which records it (`network`), applies the
//! tab's interception rules (continue, fail, fulfill: answered here, the server never
//! sees it), keeps bodies the agent subscribed to, and refuses the daemon's own ports.
//!
//! A request names its tab by a token that malo's web-process extension adds to its
//! User-Agent header (never to the page's own user agent), which the proxy removes before
//! anything leaves the machine (`attribution.rs`).
//!
//! The rooms: `accept.rs` admits a page's connections, `attribution.rs` finds a request's
//! tab, `tunnel.rs` serves CONNECT (TLS
//! terminated with `tls.rs`'s leaves), `forward.rs` decides and forwards one request,
//! `upstream.rs` opens and reuses connections to servers (through an upstream proxy with
//! `chain.rs` and `socks.rs`, rationed by `throttle.rs`'s network conditions), and
//! `tee.rs` copies a response body into the capture on its way to the page.
//!
//! Invariant: no request of a page reaches a loopback port of the daemon (broker, leases,
//! proxies), whatever the host name resolves to.

mod accept;
mod attribution;
mod chain;
mod forward;
mod policy;
mod socks;
mod tee;
mod throttle;
pub mod tls;
mod tunnel;
mod upstream;

pub use self::chain::Route;

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use self::upstream::Upstream;
use crate::events::SeqCounter;
use crate::listen::Admission;
use crate::network::{Capture, DaemonPorts, TabDirectory};

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
    /// The session's way out: its upstream proxy and network conditions.
    state: Arc<Proxy>,
}

impl SessionProxy {
    /// Starts a proxy for a session whose capture is `capture` and whose pages the person's
    /// `policy` keeps to its sites.
    pub async fn start(
        services: Arc<ProxyServices>,
        capture: Arc<Capture>,
        policy: crate::policy::SessionPolicy,
    ) -> std::io::Result<SessionProxy> {
        let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
        let port = listener.local_addr()?.port();
        services.ports.add(port);
        let (stop, stopped) = oneshot::channel();
        let state = Arc::new(Proxy {
            services: services.clone(),
            capture,
            recent: Default::default(),
            route: Default::default(),
            shaping: Default::default(),
            policy,
        });
        let task = tokio::spawn(accept::accept_loop(listener, state.clone(), stopped));
        Ok(SessionProxy { port, stop: Some(stop), task, services, state })
    }

    /// Sends the session's connections through `route` from now on (once, before the
    /// session's first page: a second route is ignored).
    pub fn set_route(&self, route: Route) {
        let _ = self.state.route.set(route);
    }

    /// The session's upstream proxy, if any (no password).
    pub fn upstream(&self) -> Option<&crate::network::upstream_proxy::UpstreamProxyConfig> {
        self.state.route.get().map(Route::config)
    }

    /// Applies network conditions (checked) to the session's traffic from now on.
    pub fn set_conditions(&self, conditions: crate::network::conditions::NetworkConditions) {
        self.state.shaping.set(conditions);
    }

    /// The session's network conditions now.
    pub fn conditions(&self) -> crate::network::conditions::NetworkConditions {
        self.state.shaping.get()
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
#[derive(Debug)]
struct Proxy {
    services: Arc<ProxyServices>,
    /// The session's own capture (requests of no known tab are recorded there).
    capture: Arc<Capture>,
    /// The tab that last spoke from each origin, for requests that carry no token.
    recent: attribution::RecentOrigins,
    /// The upstream proxy its connections go through, if any.
    route: std::sync::OnceLock<Route>,
    /// Its network conditions.
    shaping: Arc<throttle::Shaping>,
    /// The person's policy for the session's pages (`policy.rs`).
    policy: crate::policy::SessionPolicy,
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
        return tunnel::connect(request, proxy, connection.admission.clone()).await;
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
            Upstream { https, host: upstream::unbracket(authority.host()), port: authority.port_u16().unwrap_or(80) }
        }
    };
    let (traffic, capture) = attribution::attribute(&proxy, request.headers_mut(), &target.origin());
    forward::forward(request, target, &proxy, traffic, capture, &connection).await
}
