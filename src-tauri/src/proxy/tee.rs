//! A response body on its way to the page, counted and, when the agent subscribed to its
//! URL, copied aside into the capture (decoded, up to a limit); the request's record ends
//! with the body, or when the page stops reading.
//!
//! Invariant: the copy goes only to the capture (`Capture::keep_body`), never to a log line
//! or an event.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use hyper::body::{Body, Frame, Incoming, SizeHint};

use super::upstream::describe_failure;
use super::ProxyError;
use crate::network::{self, Capture, Ending, Entry, MAX_BODY_BYTES};

/// The response body on its way to the page, counted, and copied aside (up to a limit)
/// when the agent subscribed to it. The record is finished when the body ends or the page
/// goes away.
pub(super) struct TeeBody {
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
    /// A body that keeps up to `keep` bytes (encoded) when the agent subscribed to it.
    pub(super) fn new(inner: Incoming, keep: Option<usize>, entry: Entry, capture: Arc<Capture>, encoding: Option<String>) -> TeeBody {
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

    /// Keeps the copy (or says why not) and ends the record, once.
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
    fn bodies_are_decoded_for_the_agent() {
        use std::io::Write;
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gzip.write_all(b"{\"a\":1}").unwrap();
        assert_eq!(decode(&gzip.finish().unwrap(), Some("gzip")).unwrap(), b"{\"a\":1}");
        assert!(decode(b"x", Some("br")).is_err());
    }
}
