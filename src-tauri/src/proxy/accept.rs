//! Accepting a page's connections: each is admitted through `crate::listen` (anyone on the
//! machine may connect, so a place is rationed like the API's) and served as HTTP/1.1 with
//! upgrades, each request in flight until its answer's head.

use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use super::{handle, Connection, Proxy};
use crate::listen::Admission;

/// Connections one session proxy holds (WebKit's network process opens at most 256).
const MAX_CONNECTIONS: usize = 512;
/// How long a page's connection may wait for its next request's headers (idle keep-alive
/// included) before the proxy closes it.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// How the proxy serves a page's connection, plain or inside a tunnel: header case kept,
/// and an idle connection closed after [`IDLE_TIMEOUT`].
pub(super) fn page_server() -> http1::Builder {
    let mut builder = http1::Builder::new();
    builder.preserve_header_case(true).timer(TokioTimer::new()).header_read_timeout(IDLE_TIMEOUT);
    builder
}

/// Accepts the page's connections until `stopped`.
pub(super) async fn accept_loop(listener: TcpListener, proxy: Arc<Proxy>, mut stopped: oneshot::Receiver<()>) {
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
        let Some(admission) = Admission::admit(port, MAX_CONNECTIONS, &stream) else { continue };
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
            let served = page_server().serve_connection(TokioIo::new(stream), service).with_upgrades();
            tokio::select! {
                _ = served => {}
                () = admission.evicted() => {}
            }
        });
    }
}
