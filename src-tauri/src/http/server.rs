//! The accept loop and connections of the API's servers: hyper's HTTP/1.1 with the limits
//! of [`crate::listen`] (a place per connection, replaceable while idle), request headers
//! due within [`HEADER_TIMEOUT`] (an idle connection, keep-alive included, closes then),
//! and bodies within [`BODY_TIMEOUT`].

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::ConnectInfo;
use axum::Router;
use http_body_util::BodyExt;
use hyper::body::{Frame, Incoming};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tower::ServiceExt;

use crate::listen::{Admission, BODY_TIMEOUT, HEADER_TIMEOUT, MAX_CONNECTIONS_PER_PORT};

/// Serves `router` on `listener` until `shutdown` resolves; then the listener closes at
/// once, idle connections close, and requests in flight are answered.
pub async fn serve(listener: TcpListener, router: Router, shutdown: impl Future<Output = ()> + Send + 'static) {
    let port = listener.local_addr().map(|address| address.port()).unwrap_or_default();
    let (stopping, stop_seen) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        match accepted {
            Ok((stream, peer)) => {
                // Past the limits with no one to replace: closed at once.
                let Some(admission) = Admission::admit(port, MAX_CONNECTIONS_PER_PORT) else { continue };
                connections.spawn(connection(stream, peer, router.clone(), admission, stop_seen.clone()));
            }
            Err(error) if out_of_descriptors(&error) => {
                // Close an idle connection to make room, then try again.
                if !Admission::relieve(port) {
                    tracing::warn!(port, %error, "no file descriptor left to accept a connection");
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(error) => tracing::debug!(port, %error, "accept failed"),
        }
    }
    drop(listener);
    let _ = stopping.send(true);
    while connections.join_next().await.is_some() {}
}

/// Whether `accept` failed for want of a file descriptor (per process or system-wide).
fn out_of_descriptors(error: &std::io::Error) -> bool {
    matches!(error.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE))
}

/// One connection, until the client closes it, it times out, another takes its place or
/// the server stops.
async fn connection(stream: TcpStream, peer: SocketAddr, router: Router, admission: Admission, mut stop_seen: watch::Receiver<bool>) {
    let _ = stream.set_nodelay(true);
    let admission = Arc::new(admission);
    let service = {
        let admission = admission.clone();
        hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let guard = admission.request_started();
            let mut request = request.map(|body| Body::new(TimedBody::new(body, BODY_TIMEOUT)));
            request.extensions_mut().insert(ConnectInfo(peer));
            let router = router.clone();
            async move {
                let response = router.oneshot(request).await.unwrap_or_else(|never: Infallible| match never {});
                // The request counts as in flight until its answer has been sent whole (a
                // stream of events, say): such a connection is never replaced.
                Ok::<_, Infallible>(response.map(|body| {
                    Body::new(body.map_frame(move |frame| {
                        let _in_flight = &guard;
                        frame
                    }))
                }))
            }
        })
    };
    let served = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(TokioIo::new(stream), service);
    let mut served = std::pin::pin!(served);
    tokio::select! {
        _ = served.as_mut() => {}
        () = admission.evicted() => {}
        () = async { drop(stop_seen.wait_for(|stopping| *stopping).await) } => {
            served.as_mut().graceful_shutdown();
            let _ = served.await;
        }
    }
}

/// A request body that must arrive whole within a time limit: a body that trickles in
/// fails (the handler answers `E_BAD_REQUEST`) and the connection closes.
struct TimedBody {
    inner: Incoming,
    deadline: Pin<Box<tokio::time::Sleep>>,
    limit: Duration,
}

impl TimedBody {
    fn new(inner: Incoming, limit: Duration) -> TimedBody {
        TimedBody { inner, deadline: Box::pin(tokio::time::sleep(limit)), limit }
    }
}

/// The body did not arrive in time.
#[derive(Debug)]
struct BodyTooSlow(Duration);

impl std::fmt::Display for BodyTooSlow {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "the request body did not arrive within {} s", self.0.as_secs())
    }
}

impl std::error::Error for BodyTooSlow {}

impl hyper::body::Body for TimedBody {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::BoxError>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(context) {
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        if self.deadline.as_mut().poll(context).is_ready() {
            let limit = self.limit;
            return Poll::Ready(Some(Err(Box::new(BodyTooSlow(limit)))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        hyper::body::Body::is_end_stream(&self.inner)
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        hyper::body::Body::size_hint(&self.inner)
    }
}
