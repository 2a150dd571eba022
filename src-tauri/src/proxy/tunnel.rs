//! CONNECT tunnels for https and wss: the page gets a leaf of `tls.rs`'s CA for the host,
//! and the requests inside the tunnel are handled like plain ones (refused, failed and
//! recorded one by one, never the tunnel as a whole).

use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

use super::upstream::{self, Upstream};
use super::{accept, empty, handle, tls, Connection, Proxy, ProxyBody, ProxyError};
use crate::listen::Admission;

/// How long a page may take to finish its TLS handshake with the proxy.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);

/// Opens a tunnel for https/wss: the page gets our leaf for the host, and the requests in
/// the tunnel are handled like plain ones (upstream TLS is opened and verified per request
/// connection, so a fulfilled or refused request never contacts the server, nor looks up
/// its name).
pub(super) async fn connect(
    mut request: Request<Incoming>,
    proxy: Arc<Proxy>,
    admission: Arc<Admission>,
) -> Result<Response<ProxyBody>, ProxyError> {
    let Some(authority) = request.uri().authority().cloned() else {
        return Ok(Response::builder().status(StatusCode::BAD_REQUEST).body(empty())?);
    };
    let target = Upstream { https: true, host: upstream::unbracket(authority.host()), port: authority.port_u16().unwrap_or(443) };
    // Nothing about the server is decided here: the tunnel opens whatever the host (a name
    // that does not resolve, one the policy refuses, a daemon port), and each request in it
    // is recorded under its own URL and type and refused or failed for its own reason
    // (`forward.rs`), so the page's navigation and its sub-resources name it. Refusing the
    // CONNECT would leave the page a closed connection and the log a record of no request.
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

/// Serves the requests inside one tunnel, after its TLS handshake with the page.
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
    accept::page_server().serve_connection(TokioIo::new(accepted), service).with_upgrades().await?;
    Ok(())
}
