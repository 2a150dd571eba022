//! Servers as the proxy reaches them: where a request goes (`Upstream`), the check that it
//! is not the daemon's own port, the connection (TLS verified against the system roots),
//! reused per page connection (through the session's upstream proxy, `chain.rs`, unless
//! bypassed; rationed by `throttle.rs`), and upstream failures named as a navigation
//! reports them.

use std::net::SocketAddr;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::throttle::Throttled;
use super::{Connection, Proxy, ProxyBody};

/// How long an upstream connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Where requests go: a scheme, a host and a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Upstream {
    /// Whether it is spoken to over TLS.
    pub(super) https: bool,
    /// Host name or address (an IPv6 address without brackets).
    pub(super) host: String,
    /// Port.
    pub(super) port: u16,
}

impl Upstream {
    /// `scheme://host[:port]`, the port left out when it is the scheme's default.
    pub(super) fn origin(&self) -> String {
        let default = if self.https { 443 } else { 80 };
        let scheme = if self.https { "https" } else { "http" };
        let host = if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() };
        if self.port == default {
            format!("{scheme}://{host}")
        } else {
            format!("{scheme}://{host}:{}", self.port)
        }
    }

    /// The `Host` header a request to it carries.
    pub(super) fn host_header(&self) -> String {
        self.origin().split("://").nth(1).unwrap_or_default().to_string()
    }
}

/// `[::1]` -> `::1`.
pub(super) fn unbracket(host: &str) -> String {
    host.trim_start_matches('[').trim_end_matches(']').to_string()
}

/// Refuses a destination that is a loopback port of the daemon; answers the addresses to
/// connect to (resolved once, so what was checked is what is used).
pub(super) async fn check_destination(proxy: &Proxy, target: &Upstream) -> Result<Vec<SocketAddr>, String> {
    let addresses: Vec<SocketAddr> = match tokio::net::lookup_host((target.host.as_str(), target.port)).await {
        Ok(found) => found.collect(),
        Err(error) => return Err(format!("name_not_resolved: {error}")),
    };
    if addresses.is_empty() {
        return Err("name_not_resolved: no address".into());
    }
    if reaches_own_port(proxy, &addresses) {
        return Err("blocked: the daemon's own port".into());
    }
    Ok(addresses)
}

/// Names an upstream failure as a navigation reports it.
pub(super) fn describe_failure(error: &(dyn std::error::Error + 'static)) -> String {
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

/// A new connection to `target` (through the session's upstream proxy unless bypassed),
/// its bytes rationed by the session's network conditions.
async fn open_upstream(proxy: &Proxy, target: &Upstream) -> Result<SendRequest<ProxyBody>, String> {
    proxy.shaping.delay().await;
    let stream: Box<dyn Io> = match proxy.route.get().filter(|route| route.applies_to(&target.host)) {
        Some(route) => super::chain::open(proxy, route, target).await?,
        None => Box::new(Throttled::new(connect_direct(proxy, target).await?, proxy.shaping.clone())),
    };
    let io: Box<dyn Io> = if target.https {
        let name = rustls::pki_types::ServerName::try_from(target.host.clone()).map_err(|error| format!("tls_error: {error}"))?;
        let connector = tokio_rustls::TlsConnector::from(proxy.services.client_tls.clone());
        match tokio::time::timeout(CONNECT_TIMEOUT, connector.connect(name, stream)).await {
            Ok(Ok(tls)) => Box::new(tls),
            Ok(Err(error)) => return Err(describe_failure(&error)),
            Err(_) => return Err("timed_out: TLS handshake".into()),
        }
    } else {
        stream
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

/// A TCP connection straight to `target`, once it passed [`check_destination`].
async fn connect_direct(proxy: &Proxy, target: &Upstream) -> Result<TcpStream, String> {
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
    Ok(stream)
}

/// What a connection to a server is: TCP, or TLS over it.
pub(super) trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static> Io for T {}

/// Sends a request upstream on the connection's cached connection to the same target, or a
/// new one (a dedicated one for upgrades).
pub(super) async fn send(
    proxy: &Proxy,
    connection: &Connection,
    target: &Upstream,
    request: Request<ProxyBody>,
    dedicated: bool,
) -> Result<Response<Incoming>, String> {
    if let Some(offline) = proxy.shaping.offline_failure() {
        return Err(offline);
    }
    proxy.shaping.delay().await;
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

/// Whether one of `addresses` is one of the daemon's own ports on this machine.
pub(super) fn reaches_own_port(proxy: &Proxy, addresses: &[SocketAddr]) -> bool {
    addresses.iter().any(|address| {
        let ip = match address.ip() {
            std::net::IpAddr::V6(v6) => v6.to_canonical(),
            other => other,
        };
        (ip.is_loopback() || ip.is_unspecified()) && proxy.services.ports.contains(address.port())
    })
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
    fn origins_bracket_ipv6_and_leave_out_default_ports() {
        assert_eq!(Upstream { https: true, host: "::1".into(), port: 8443 }.origin(), "https://[::1]:8443");
        assert_eq!(Upstream { https: false, host: "a".into(), port: 80 }.origin(), "http://a");
    }
}
