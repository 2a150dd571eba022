//! A session's network conditions at its proxy: offline (every request fails at once),
//! latency (added before each request and each new connection), and throughput limits,
//! one token bucket per direction for the whole session, charged with every byte relayed
//! to and from servers (TLS and proxy handshakes included). They change at any time: every
//! connection reads them as it goes.

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use crate::network::conditions::NetworkConditions;

/// The longest a connection sleeps before it reads the conditions again.
const MAX_NAP: Duration = Duration::from_millis(250);

/// One direction's budget: bytes per second, and the bytes it may still relay now
/// (negative: owed, after a read or write that took more).
#[derive(Debug)]
struct Bucket {
    rate: Option<f64>,
    tokens: f64,
    last: Instant,
}

impl Bucket {
    fn new() -> Bucket {
        Bucket { rate: None, tokens: 0.0, last: Instant::now() }
    }

    /// The burst a bucket holds: a twentieth of a second's bytes, at least 512.
    fn burst(rate: f64) -> f64 {
        (rate / 20.0).max(512.0)
    }

    fn set_rate(&mut self, kbps: Option<u64>) {
        self.rate = kbps.map(|kbps| kbps as f64 * 1000.0 / 8.0);
        self.tokens = 0.0;
        self.last = Instant::now();
    }

    /// How long to wait before relaying more (`None`: now), and how much at most.
    fn allowance(&mut self) -> Result<Option<usize>, Duration> {
        let Some(rate) = self.rate else { return Ok(None) };
        let now = Instant::now();
        self.tokens = (self.tokens + rate * now.duration_since(self.last).as_secs_f64()).min(Self::burst(rate));
        self.last = now;
        // Half a burst at a time: no trickle of tiny reads and writes.
        let enough = Self::burst(rate) / 2.0;
        if self.tokens < enough {
            let wait = Duration::from_secs_f64((enough - self.tokens) / rate);
            return Err(wait.clamp(Duration::from_millis(1), MAX_NAP));
        }
        Ok(Some(self.tokens as usize))
    }

    fn charge(&mut self, bytes: usize) {
        if self.rate.is_some() {
            self.tokens -= bytes as f64;
        }
    }
}

/// A session's conditions and its two buckets.
#[derive(Debug)]
pub(super) struct Shaping {
    // std mutexes: a copy or a few float operations, never held across an await.
    conditions: Mutex<NetworkConditions>,
    down: Mutex<Bucket>,
    up: Mutex<Bucket>,
}

impl Default for Shaping {
    fn default() -> Shaping {
        Shaping { conditions: Mutex::default(), down: Mutex::new(Bucket::new()), up: Mutex::new(Bucket::new()) }
    }
}

impl Shaping {
    /// Replaces the conditions (checked).
    pub(super) fn set(&self, conditions: NetworkConditions) {
        *self.conditions.lock().expect("conditions poisoned") = conditions;
        self.down.lock().expect("bucket poisoned").set_rate(conditions.download_kbps);
        self.up.lock().expect("bucket poisoned").set_rate(conditions.upload_kbps);
    }

    /// The conditions now.
    pub(super) fn get(&self) -> NetworkConditions {
        *self.conditions.lock().expect("conditions poisoned")
    }

    /// The failure of a request while offline, if the session is.
    pub(super) fn offline_failure(&self) -> Option<String> {
        self.get().is_offline().then(|| "internet_disconnected: the session is offline (network_conditions)".to_string())
    }

    /// Waits the latency, if any (before a request, and before a new connection).
    pub(super) async fn delay(&self) {
        if let Some(latency) = self.get().latency_ms.filter(|latency| *latency > 0) {
            tokio::time::sleep(Duration::from_millis(latency)).await;
        }
    }

    fn bucket(&self, download: bool) -> &Mutex<Bucket> {
        if download {
            &self.down
        } else {
            &self.up
        }
    }
}

/// A connection to a server (or an upstream proxy) whose bytes the session's buckets
/// ration.
pub(super) struct Throttled<S> {
    inner: S,
    shaping: std::sync::Arc<Shaping>,
    read_nap: Option<Pin<Box<Sleep>>>,
    write_nap: Option<Pin<Box<Sleep>>>,
}

impl<S> Throttled<S> {
    pub(super) fn new(inner: S, shaping: std::sync::Arc<Shaping>) -> Throttled<S> {
        Throttled { inner, shaping, read_nap: None, write_nap: None }
    }
}

/// Waits until `download`'s bucket allows bytes; answers how many at most (`None`: any).
fn poll_allowance(shaping: &Shaping, download: bool, nap: &mut Option<Pin<Box<Sleep>>>, context: &mut Context<'_>) -> Poll<Option<usize>> {
    loop {
        if let Some(sleeping) = nap {
            if sleeping.as_mut().poll(context).is_pending() {
                return Poll::Pending;
            }
            *nap = None;
        }
        match shaping.bucket(download).lock().expect("bucket poisoned").allowance() {
            Ok(allowed) => return Poll::Ready(allowed),
            Err(wait) => *nap = Some(Box::pin(tokio::time::sleep(wait))),
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Throttled<S> {
    fn poll_read(mut self: Pin<&mut Self>, context: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        let Some(allowed) = std::task::ready!(poll_allowance(&this.shaping, true, &mut this.read_nap, context)) else {
            return Pin::new(&mut this.inner).poll_read(context, buf);
        };
        let mut scratch = [0u8; 16 * 1024];
        let room = allowed.min(buf.remaining()).min(scratch.len());
        let mut limited = ReadBuf::new(&mut scratch[..room]);
        std::task::ready!(Pin::new(&mut this.inner).poll_read(context, &mut limited))?;
        let read = limited.filled();
        buf.put_slice(read);
        this.shaping.down.lock().expect("bucket poisoned").charge(read.len());
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Throttled<S> {
    fn poll_write(mut self: Pin<&mut Self>, context: &mut Context<'_>, data: &[u8]) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        let allowed = std::task::ready!(poll_allowance(&this.shaping, false, &mut this.write_nap, context));
        let room = allowed.map_or(data.len(), |allowed| allowed.min(data.len()));
        let written = std::task::ready!(Pin::new(&mut this.inner).poll_write(context, &data[..room]))?;
        this.shaping.up.lock().expect("bucket poisoned").charge(written);
        Poll::Ready(Ok(written))
    }

    fn poll_flush(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(context)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(context)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test(start_paused = true)]
    async fn the_buckets_hold_both_directions_to_their_rate_and_let_go_when_off() {
        let shaping = std::sync::Arc::new(Shaping::default());
        shaping.set(NetworkConditions { download_kbps: Some(80), upload_kbps: Some(40), ..NetworkConditions::default() });
        let (near, far) = tokio::io::duplex(1 << 20);
        let mut throttled = Throttled::new(near, shaping.clone());
        let mut far = far;
        // 10 kB down at 10 kB/s: about a second.
        far.write_all(&[7u8; 10_000]).await.unwrap();
        let begun = Instant::now();
        let mut received = vec![0u8; 10_000];
        throttled.read_exact(&mut received).await.unwrap();
        let took = begun.elapsed();
        assert!(took >= Duration::from_millis(850) && took <= Duration::from_millis(1100), "{took:?}");
        // 10 kB up at 5 kB/s: about two seconds.
        let begun = Instant::now();
        throttled.write_all(&[1u8; 10_000]).await.unwrap();
        let took = begun.elapsed();
        assert!(took >= Duration::from_millis(1800) && took <= Duration::from_millis(2100), "{took:?}");
        let mut sent = vec![0u8; 10_000];
        far.read_exact(&mut sent).await.unwrap();
        // Off: at once.
        shaping.set(NetworkConditions::default());
        far.write_all(&[7u8; 100_000]).await.unwrap();
        let begun = Instant::now();
        let mut received = vec![0u8; 100_000];
        throttled.read_exact(&mut received).await.unwrap();
        assert_eq!(begun.elapsed(), Duration::ZERO);
    }
}
