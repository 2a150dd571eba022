//! The accept loop and connections of the API's servers: hyper's HTTP/1.1 with the limits
//! of [`crate::listen`] (a place per connection, replaceable while idle or while its body
//! does not arrive), request headers due within [`HEADER_TIMEOUT`] (an idle connection,
//! keep-alive included, closes then), and bodies that never pause longer than
//! [`BODY_STALL`] and arrive whole within [`body_time_limit`] of their first byte.

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

use crate::listen::{body_time_limit, Admission, BodyProgress, BODY_STALL, HEADER_TIMEOUT, MAX_CONNECTIONS_PER_PORT};

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
                let Some(admission) = Admission::admit(port, MAX_CONNECTIONS_PER_PORT, &stream) else { continue };
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
            let mut request = request.map(|body| {
                let progress = (!hyper::body::Body::is_end_stream(&body)).then(|| guard.body_progress());
                Body::new(TimedBody::new(body, progress))
            });
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
        .serve_connection(TokioIo::new(stream), service)
        // The DevTools endpoint's WebSocket: the upgraded stream lives on in its own task.
        .with_upgrades();
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

/// A request body that must keep arriving: a pause longer than [`BODY_STALL`] (before the
/// first byte, too) or a body slower than [`body_time_limit`] from its first byte fails
/// (the handler answers `E_BAD_REQUEST`) and the connection closes. Meanwhile the
/// registry learns when it last brought a byte, so a stalled one is replaced first.
struct TimedBody {
    inner: Incoming,
    progress: Option<BodyProgress>,
    /// When the body has gone [`BODY_STALL`] without a byte.
    stall: Pin<Box<tokio::time::Sleep>>,
    /// When the whole body is due, once its first byte came.
    whole: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl TimedBody {
    fn new(inner: Incoming, progress: Option<BodyProgress>) -> TimedBody {
        TimedBody { inner, progress, stall: Box::pin(tokio::time::sleep(BODY_STALL)), whole: None }
    }

    /// The length it announced, else the most the API reads.
    fn expected_length(&self) -> u64 {
        hyper::body::Body::size_hint(&self.inner).exact().unwrap_or(super::guard::MAX_BODY_BYTES as u64)
    }

    fn finished(&mut self) {
        if let Some(progress) = self.progress.take() {
            progress.done();
        }
    }
}

/// The body did not arrive in time.
#[derive(Debug)]
enum BodyTooSlow {
    Stalled,
    Slow(Duration),
}

impl std::fmt::Display for BodyTooSlow {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyTooSlow::Stalled => write!(formatter, "the request body paused for more than {} s", BODY_STALL.as_secs()),
            BodyTooSlow::Slow(limit) => write!(formatter, "the request body did not arrive within {} s", limit.as_secs()),
        }
    }
}

impl std::error::Error for BodyTooSlow {}

impl hyper::body::Body for TimedBody {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::BoxError>>> {
        match Pin::new(&mut self.inner).poll_frame(context) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(progress) = &self.progress {
                    progress.arrived();
                }
                let next_stall = tokio::time::Instant::now() + BODY_STALL;
                self.stall.as_mut().reset(next_stall);
                if self.whole.is_none() {
                    let limit = body_time_limit(self.expected_length());
                    self.whole = Some(Box::pin(tokio::time::sleep(limit)));
                }
                if hyper::body::Body::is_end_stream(&self.inner) {
                    self.finished();
                }
                return Poll::Ready(Some(Ok(frame)));
            }
            Poll::Ready(other) => {
                self.finished();
                return Poll::Ready(other.map(|frame| frame.map_err(Into::into)));
            }
            Poll::Pending => {}
        }
        if self.stall.as_mut().poll(context).is_ready() {
            self.finished();
            return Poll::Ready(Some(Err(Box::new(BodyTooSlow::Stalled))));
        }
        if self.whole.as_mut().is_some_and(|whole| whole.as_mut().poll(context).is_ready()) {
            self.finished();
            let limit = body_time_limit(self.expected_length());
            return Poll::Ready(Some(Err(Box::new(BodyTooSlow::Slow(limit)))));
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
