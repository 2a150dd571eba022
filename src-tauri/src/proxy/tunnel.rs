//! CONNECT tunnels for https and wss: the page gets a leaf of `tls.rs`'s CA for the host,
//! and the requests inside the tunnel are handled like plain ones.

use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

use super::upstream::{self, Upstream};
use super::{accept, attribution, empty, handle, tls, Connection, Proxy, ProxyBody, ProxyError};
use crate::listen::Admission;
use crate::network::{self, Ending, NewRequest, ResourceType};

/// How long a page may take to finish its TLS handshake with the proxy.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);

/// Opens a tunnel for https/wss: the page gets our leaf for the host, and the requests in
/// the tunnel are handled like plain ones (upstream TLS is opened and verified per request
/// connection, so a fulfilled request never contacts the server).
pub(super) async fn connect(
    mut request: Request<Incoming>,
    proxy: Arc<Proxy>,
    admission: Arc<Admission>,
) -> Result<Response<ProxyBody>, ProxyError> {
    let Some(authority) = request.uri().authority().cloned() else {
        return Ok(Response::builder().status(StatusCode::BAD_REQUEST).body(empty())?);
    };
    let target = Upstream { https: true, host: upstream::unbracket(authority.host()), port: authority.port_u16().unwrap_or(443) };
    let (traffic, capture) = attribution::attribute(&proxy, request.headers_mut(), &target.origin());
    if let Err(reason) = upstream::admit(&proxy, &target).await {
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
