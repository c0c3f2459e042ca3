//! Request bodies as the browser sends them, with an idle timeout: a client that sends its
//! headers and then stalls (or stops half-way through the body) must not hold a request, an
//! upstream stream and a connection slot forever. The clock only runs while the proxy is
//! waiting for the client's next bytes: an origin that is slow to read (backpressure) never
//! counts against the client.

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use std::future::Future as _;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep};

/// The error a request body yields when the client sent nothing for the idle timeout.
#[derive(Debug, thiserror::Error)]
#[error("request body timed out: no data from the client for {0:?}")]
pub struct BodyTimeout(pub Duration);

/// Set once the body has timed out; the handler reads it to answer 408 rather than 502.
#[derive(Clone, Debug, Default)]
pub(crate) struct TimeoutFlag(Option<Arc<AtomicBool>>);

impl TimeoutFlag {
    /// Whether the request body timed out.
    pub fn fired(&self) -> bool {
        self.0.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
    }
}

/// A browser's request body with an idle timeout.
pub struct ClientBody {
    inner: Incoming,
    /// `None` for bodies that are already complete (GET and friends): no timer, no flag.
    idle: Option<Idle>,
}

struct Idle {
    timeout: Duration,
    sleep: Option<Pin<Box<Sleep>>>,
    /// Whether `sleep` is armed for the current wait.
    armed: bool,
    fired: Arc<AtomicBool>,
    url: Arc<str>,
}

impl ClientBody {
    /// Wraps `inner`; `url` names the request in the log line when the timeout fires.
    pub(crate) fn new(inner: Incoming, timeout: Duration, url: impl FnOnce() -> String) -> Self {
        let idle = (!inner.is_end_stream()).then(|| Idle {
            timeout,
            sleep: None,
            armed: false,
            fired: Arc::new(AtomicBool::new(false)),
            url: url().into(),
        });
        Self { inner, idle }
    }

    /// The flag telling whether this body timed out.
    pub(crate) fn timeout_flag(&self) -> TimeoutFlag {
        TimeoutFlag(self.idle.as_ref().map(|i| i.fired.clone()))
    }
}

impl std::fmt::Debug for ClientBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientBody")
    }
}

impl Body for ClientBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        let Some(idle) = this.idle.as_mut() else {
            return polled.map_err(Into::into);
        };
        if idle.fired.load(Ordering::Relaxed) {
            return Poll::Ready(Some(Err(Box::new(BodyTimeout(idle.timeout)))));
        }
        match polled {
            Poll::Ready(r) => {
                idle.armed = false;
                Poll::Ready(r.map(|r| r.map_err(Into::into)))
            }
            Poll::Pending => {
                let deadline = Instant::now() + idle.timeout;
                if !idle.armed {
                    idle.armed = true;
                    match idle.sleep.as_mut() {
                        Some(s) => s.as_mut().reset(deadline),
                        None => idle.sleep = Some(Box::pin(tokio::time::sleep_until(deadline))),
                    }
                }
                let Some(sleep) = idle.sleep.as_mut() else {
                    return Poll::Pending;
                };
                if sleep.as_mut().poll(cx).is_ready() {
                    idle.fired.store(true, Ordering::Relaxed);
                    tracing::info!(url = %idle.url, timeout = ?idle.timeout, "request body timed out, cutting the client off");
                    return Poll::Ready(Some(Err(Box::new(BodyTimeout(idle.timeout)))));
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
