//! Bodies: one enum for every body the proxy sends (no boxing for the common streamed case)
//! and a chunk-transforming body for decoding and rewriting on the fly (the decoders are
//! `shepherd_recording::codec`'s).

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::combinators::UnsyncBoxBody;
use hyper::body::Incoming;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

/// Error type of every proxy body.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A body sent to the browser or the origin.
pub enum ProxyBody {
    /// No body.
    Empty,
    /// A complete body in memory.
    Full(Option<Bytes>),
    /// A body streamed straight from the other side.
    Incoming(Incoming),
    /// A browser's request body (idle timeout), streamed to the origin.
    Client(crate::client_body::ClientBody),
    /// Anything else (tees, transforms, held chunks).
    Boxed(UnsyncBoxBody<Bytes, BoxError>),
}

impl ProxyBody {
    /// A body from bytes (empty bytes give an empty body).
    pub fn full(b: impl Into<Bytes>) -> Self {
        let b = b.into();
        if b.is_empty() {
            ProxyBody::Empty
        } else {
            ProxyBody::Full(Some(b))
        }
    }

    /// Boxes any body with compatible types.
    pub fn boxed<B>(b: B) -> Self
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        use http_body_util::BodyExt;
        ProxyBody::Boxed(b.map_err(Into::into).boxed_unsync())
    }
}

impl std::fmt::Debug for ProxyBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProxyBody::Empty => f.write_str("Empty"),
            ProxyBody::Full(b) => write!(f, "Full({})", b.as_ref().map_or(0, |b| b.len())),
            ProxyBody::Incoming(_) => f.write_str("Incoming"),
            ProxyBody::Client(_) => f.write_str("Client"),
            ProxyBody::Boxed(_) => f.write_str("Boxed"),
        }
    }
}

impl Body for ProxyBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match self.get_mut() {
            ProxyBody::Empty => Poll::Ready(None),
            ProxyBody::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            ProxyBody::Incoming(i) => Pin::new(i).poll_frame(cx).map_err(Into::into),
            ProxyBody::Client(c) => Pin::new(c).poll_frame(cx),
            ProxyBody::Boxed(b) => Pin::new(b).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ProxyBody::Empty => true,
            ProxyBody::Full(b) => b.is_none(),
            ProxyBody::Incoming(i) => i.is_end_stream(),
            ProxyBody::Client(c) => c.is_end_stream(),
            ProxyBody::Boxed(b) => b.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ProxyBody::Empty => SizeHint::with_exact(0),
            ProxyBody::Full(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            ProxyBody::Incoming(i) => i.size_hint(),
            ProxyBody::Client(c) => c.size_hint(),
            ProxyBody::Boxed(b) => b.size_hint(),
        }
    }
}

/// Transforms data chunks as they pass (`feed`), then emits whatever `finish` returns.
pub trait ChunkTransform: Send + 'static {
    /// Transforms one chunk; may return nothing (buffered) or more than one chunk's worth.
    fn feed(&mut self, chunk: Bytes) -> Result<Bytes, BoxError>;
    /// Called once at the end of the body.
    fn finish(&mut self) -> Result<Bytes, BoxError>;
}

/// A body whose data chunks go through a [`ChunkTransform`].
pub struct TransformBody<T> {
    inner: ProxyBody,
    transform: T,
    done: bool,
}

impl<T: ChunkTransform> TransformBody<T> {
    /// Wraps `inner`.
    pub fn new(inner: ProxyBody, transform: T) -> Self {
        Self {
            inner,
            transform,
            done: false,
        }
    }
}

impl<T: ChunkTransform + Unpin> Body for TransformBody<T> {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => {
                        let out = this.transform.feed(data)?;
                        if !out.is_empty() {
                            return Poll::Ready(Some(Ok(Frame::data(out))));
                        }
                    }
                    Err(frame) => return Poll::Ready(Some(Ok(frame))),
                },
                Some(Err(e)) => return Poll::Ready(Some(Err(e))),
                None => {
                    this.done = true;
                    let out = this.transform.finish()?;
                    if !out.is_empty() {
                        return Poll::Ready(Some(Ok(Frame::data(out))));
                    }
                    return Poll::Ready(None);
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done
    }
}

/// A body fed by a channel (recorded bodies read on a thread, held chunks of a document).
pub(crate) struct ChannelBody {
    rx: tokio::sync::mpsc::Receiver<Result<Bytes, BoxError>>,
    len: Option<u64>,
}

impl ChannelBody {
    /// A body of whatever `rx` yields; `len` is its exact length when known.
    pub fn new(rx: tokio::sync::mpsc::Receiver<Result<Bytes, BoxError>>, len: Option<u64>) -> Self {
        ChannelBody { rx, len }
    }
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        self.rx.poll_recv(cx).map(|o| o.map(|r| r.map(Frame::data)))
    }

    fn size_hint(&self) -> SizeHint {
        match self.len {
            Some(n) => SizeHint::with_exact(n),
            None => SizeHint::default(),
        }
    }
}

/// A body made of bytes already read followed by the rest of a stream.
pub(crate) struct PrefixBody {
    prefix: Option<Bytes>,
    rest: ProxyBody,
}

impl PrefixBody {
    /// `prefix`, then everything `rest` yields.
    pub fn new(prefix: Bytes, rest: ProxyBody) -> Self {
        PrefixBody {
            prefix: Some(prefix),
            rest,
        }
    }
}

impl Body for PrefixBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if let Some(p) = self.prefix.take() {
            return Poll::Ready(Some(Ok(Frame::data(p))));
        }
        Pin::new(&mut self.rest).poll_frame(cx)
    }
}
