//! The session proxy chained behind an upstream proxy (`proxy` at session creation): the
//! page's requests are still recorded, ruled and captured here, then each connection to a
//! server goes through the upstream proxy instead of straight to it: an HTTP CONNECT
//! (with `Proxy-Authorization: Basic`) to an http proxy, the same inside TLS to an https
//! proxy, or a SOCKS5 CONNECT (RFC 1928/1929). Plain http goes through CONNECT too, so
//! every request takes one path; TLS to an https origin is opened inside the tunnel and
//! verified here, as without a proxy. Host names are resolved by the upstream proxy, not
//! here; `bypass` hosts go direct.
//!
//! Every failure of the hop is named `proxy_failed: <kind>: <reason>`, its kind one of
//! [`ProxyFailure`]'s (a navigation reports `net_error: "proxy_failed"` and the kind as
//! `proxy_error`); the password is in no reason, log line or answer.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::throttle::Throttled;
use super::upstream::{Io, Upstream};
use super::Proxy;
use crate::network::upstream_proxy::{is_loopback_host, Password, ProxyScheme, UpstreamProxyConfig};

/// How long the hop (connecting to the proxy and its handshake) may take.
const HOP_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest answer head to a CONNECT read.
const MAX_CONNECT_ANSWER: usize = 16 * 1024;

/// What went wrong with the upstream proxy: the second part of a `proxy_failed` failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ProxyFailure {
    /// The proxy could not be reached: its name does not resolve, nothing listens, it did
    /// not answer in time, TLS with it failed.
    Unreachable,
    /// It refused the login, or asked for one the session did not give.
    AuthFailed,
    /// It took the login but would not open the tunnel to the server.
    TunnelFailed,
    /// It answered in a way that is not its protocol.
    ProtocolError,
    /// It is one of the daemon's own ports, or the target is.
    Blocked,
}

impl ProxyFailure {
    /// Its name in a failure and a navigation's `proxy_error`.
    pub(super) fn name(self) -> &'static str {
        match self {
            ProxyFailure::Unreachable => "proxy_unreachable",
            ProxyFailure::AuthFailed => "proxy_auth_failed",
            ProxyFailure::TunnelFailed => "proxy_tunnel_failed",
            ProxyFailure::ProtocolError => "proxy_protocol_error",
            ProxyFailure::Blocked => "proxy_blocked",
        }
    }

    /// `proxy_failed: <kind>: <why>`, a request's failure.
    pub(super) fn because(self, why: impl std::fmt::Display) -> String {
        format!("proxy_failed: {}: {why}", self.name())
    }
}

/// An upstream proxy as a session proxy uses it: where, how, and the credentials.
#[derive(Debug)]
pub struct Route {
    config: UpstreamProxyConfig,
    scheme: ProxyScheme,
    host: String,
    port: u16,
    credentials: Option<(String, Password)>,
    /// `Basic <base64(username:password)>`, for HTTP proxies.
    basic: Option<Password>,
}

impl Route {
    /// The route of a checked `config`, with the username and password it logs in with
    /// (its own, or its vault credential's).
    pub fn new(config: UpstreamProxyConfig, credentials: Option<(String, Password)>) -> Result<Route, String> {
        use base64::Engine;
        let (scheme, host, port) = config.endpoint().map_err(|error| error.message)?;
        let basic = credentials.as_ref().map(|(username, password)| {
            let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{username}:{}", password.expose()));
            Password::new(format!("Basic {encoded}"))
        });
        Ok(Route { config, scheme, host, port, credentials, basic })
    }

    /// The route as the session answers it (no password).
    pub fn config(&self) -> &UpstreamProxyConfig {
        &self.config
    }

    /// Whether requests to `host` go through the proxy (not bypassed).
    pub(super) fn applies_to(&self, host: &str) -> bool {
        !self.config.bypasses(host)
    }

    fn password(&self) -> Option<&str> {
        self.credentials.as_ref().map(|(_, password)| password.expose())
    }
}

/// Refuses a target the upstream proxy would find on this machine's daemon ports: an
/// address literal or a loopback name (names are the proxy's to resolve, so no other
/// name is looked up here).
pub(super) fn check_target(proxy: &Proxy, target: &Upstream) -> Result<(), String> {
    let local = is_loopback_host(&target.host)
        || target.host.parse::<std::net::IpAddr>().is_ok_and(|ip| match ip {
            std::net::IpAddr::V6(v6) => v6.to_canonical().is_unspecified(),
            v4 => v4.is_unspecified(),
        });
    if local && proxy.services.ports.contains(target.port) {
        return Err("blocked: the daemon's own port".into());
    }
    Ok(())
}

/// A connection to `target` through the route's proxy, its bytes rationed by the
/// session's network conditions.
pub(super) async fn open(proxy: &Proxy, route: &Route, target: &Upstream) -> Result<Box<dyn Io>, String> {
    check_target(proxy, target)?;
    match tokio::time::timeout(HOP_TIMEOUT, hop(proxy, route, target)).await {
        Ok(opened) => opened,
        Err(_) => Err(ProxyFailure::Unreachable.because(format_args!("the proxy at {}:{} did not answer in time", route.host, route.port))),
    }
}

async fn hop(proxy: &Proxy, route: &Route, target: &Upstream) -> Result<Box<dyn Io>, String> {
    let at = format!("{}:{}", route.host, route.port);
    let addresses: Vec<SocketAddr> = match tokio::net::lookup_host((route.host.as_str(), route.port)).await {
        Ok(found) => found.collect(),
        Err(_) => return Err(ProxyFailure::Unreachable.because(format_args!("the proxy's host name {} does not resolve", route.host))),
    };
    if super::upstream::reaches_own_port(proxy, &addresses) {
        return Err(ProxyFailure::Blocked.because("the proxy is one of the daemon's own ports"));
    }
    let mut last = None;
    let mut stream = None;
    for address in &addresses {
        match TcpStream::connect(address).await {
            Ok(connected) => {
                stream = Some(connected);
                break;
            }
            Err(error) => last = Some(error),
        }
    }
    let Some(stream) = stream else {
        let why = match last.map(|error| error.kind()) {
            Some(std::io::ErrorKind::ConnectionRefused) => "refused the connection".to_string(),
            Some(kind) => format!("could not be reached ({kind})"),
            None => "has no address".to_string(),
        };
        return Err(ProxyFailure::Unreachable.because(format_args!("the proxy at {at} {why}")));
    };
    let _ = stream.set_nodelay(true);
    let mut io: Box<dyn Io> = Box::new(Throttled::new(stream, proxy.shaping.clone()));
    if route.scheme == ProxyScheme::Https {
        let name = rustls::pki_types::ServerName::try_from(route.host.clone()).map_err(|error| ProxyFailure::Unreachable.because(error))?;
        let connector = tokio_rustls::TlsConnector::from(proxy.services.client_tls.clone());
        let tls = connector
            .connect(name, io)
            .await
            .map_err(|error| ProxyFailure::Unreachable.because(format_args!("TLS with the proxy at {at} failed ({error})")))?;
        io = Box::new(tls);
    }
    match route.scheme {
        ProxyScheme::Socks5 => {
            let credentials = route.credentials.as_ref().map(|(username, password)| (username.as_str(), password.expose()));
            super::socks::connect(&mut io, &target.host, target.port, credentials).await?;
        }
        ProxyScheme::Http | ProxyScheme::Https => http_connect(&mut io, route, target).await?,
    }
    Ok(io)
}

/// `CONNECT host:port` to an HTTP proxy, answered 2xx.
async fn http_connect(io: &mut Box<dyn Io>, route: &Route, target: &Upstream) -> Result<(), String> {
    let closed = |error: std::io::Error| ProxyFailure::ProtocolError.because(format_args!("the proxy closed the connection ({error})"));
    let authority =
        if target.host.contains(':') { format!("[{}]:{}", target.host, target.port) } else { format!("{}:{}", target.host, target.port) };
    let mut head = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n");
    if let Some(basic) = &route.basic {
        head.push_str("Proxy-Authorization: ");
        head.push_str(basic.expose());
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    io.write_all(head.as_bytes()).await.map_err(closed)?;
    io.flush().await.map_err(closed)?;
    // Byte by byte up to the blank line: nothing of the tunnel is read ahead.
    let mut answer = Vec::with_capacity(256);
    while !answer.ends_with(b"\r\n\r\n") {
        if answer.len() >= MAX_CONNECT_ANSWER {
            return Err(ProxyFailure::ProtocolError.because("the proxy's answer to CONNECT is too long"));
        }
        let mut byte = [0u8; 1];
        if io.read(&mut byte).await.map_err(closed)? == 0 {
            return Err(ProxyFailure::ProtocolError.because("the proxy closed the connection without answering CONNECT"));
        }
        answer.push(byte[0]);
    }
    let status_line = String::from_utf8_lossy(answer.split(|byte| *byte == b'\r').next().unwrap_or_default()).to_string();
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    let code: u16 = parts.next().and_then(|code| code.parse().ok()).unwrap_or(0);
    let mut reason: String = parts.next().unwrap_or_default().chars().filter(|c| c.is_ascii_graphic() || *c == ' ').take(100).collect();
    if route.password().is_some_and(|password| reason.contains(password)) {
        reason.clear();
    }
    if !version.starts_with("HTTP/1.") || code == 0 {
        return Err(ProxyFailure::ProtocolError.because("the proxy does not speak HTTP"));
    }
    match code {
        200..=299 => Ok(()),
        407 if route.basic.is_some() => {
            Err(ProxyFailure::AuthFailed.because(format_args!("the proxy refused the username or password ({code} {reason})")))
        }
        407 => Err(ProxyFailure::AuthFailed.because(format_args!("the proxy asks for a username and password ({code} {reason})"))),
        _ => Err(ProxyFailure::TunnelFailed.because(format_args!("the proxy answered CONNECT {authority} with {code} {reason}"))),
    }
}
