//! Bodies: one enum for every body the proxy sends (no boxing for the common streamed case),
//! a chunk-transforming body for decoding and rewriting on the fly, and push-based decoders
//! for gzip, deflate (zlib or raw), br and zstd.

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::combinators::UnsyncBoxBody;
use hyper::body::Incoming;
use std::io::Write;
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
            ProxyBody::Boxed(b) => Pin::new(b).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ProxyBody::Empty => true,
            ProxyBody::Full(b) => b.is_none(),
            ProxyBody::Incoming(i) => i.is_end_stream(),
            ProxyBody::Boxed(b) => b.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ProxyBody::Empty => SizeHint::with_exact(0),
            ProxyBody::Full(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            ProxyBody::Incoming(i) => i.size_hint(),
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

/// A content coding the proxy can decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    /// `gzip` / `x-gzip`.
    Gzip,
    /// `deflate` (zlib-wrapped, or raw deflate as some servers send).
    Deflate,
    /// `br`.
    Brotli,
    /// `zstd`.
    Zstd,
}

/// Parses a `Content-Encoding` value into the codings to undo, outermost first. `identity` is
/// skipped; `None` means an unknown coding (the body must then be passed through untouched).
pub fn parse_codings(value: &str) -> Option<Vec<Coding>> {
    let mut out = Vec::new();
    for token in value.split(',') {
        let t = token.trim();
        let c = if t.eq_ignore_ascii_case("gzip") || t.eq_ignore_ascii_case("x-gzip") {
            Coding::Gzip
        } else if t.eq_ignore_ascii_case("deflate") {
            Coding::Deflate
        } else if t.eq_ignore_ascii_case("br") {
            Coding::Brotli
        } else if t.eq_ignore_ascii_case("zstd") {
            Coding::Zstd
        } else if t.eq_ignore_ascii_case("identity") || t.is_empty() {
            continue;
        } else {
            return None;
        };
        out.push(c);
    }
    // Listed in the order applied; undo the last one first.
    out.reverse();
    Some(out)
}

enum Stage {
    Gzip(flate2::write::MultiGzDecoder<Vec<u8>>),
    Zlib(flate2::write::ZlibDecoder<Vec<u8>>),
    RawDeflate(flate2::write::DeflateDecoder<Vec<u8>>),
    /// Deflate before the first byte tells zlib from raw.
    DeflateUnknown,
    Brotli(Box<brotli::DecompressorWriter<Vec<u8>>>),
    Zstd(zstd::stream::write::Decoder<'static, Vec<u8>>),
}

impl Stage {
    fn new(c: Coding) -> std::io::Result<Stage> {
        Ok(match c {
            Coding::Gzip => Stage::Gzip(flate2::write::MultiGzDecoder::new(Vec::new())),
            Coding::Deflate => Stage::DeflateUnknown,
            Coding::Brotli => {
                Stage::Brotli(Box::new(brotli::DecompressorWriter::new(Vec::new(), 8192)))
            }
            Coding::Zstd => Stage::Zstd(zstd::stream::write::Decoder::new(Vec::new())?),
        })
    }

    fn write(&mut self, data: &[u8]) -> std::io::Result<Vec<u8>> {
        if data.is_empty() {
            return Ok(Vec::new());
        }
        if let Stage::DeflateUnknown = self {
            // A zlib header is 0x78 followed by a byte making the pair a multiple of 31.
            let zlib = data[0] & 0x0f == 8;
            *self = if zlib {
                Stage::Zlib(flate2::write::ZlibDecoder::new(Vec::new()))
            } else {
                Stage::RawDeflate(flate2::write::DeflateDecoder::new(Vec::new()))
            };
        }
        Ok(match self {
            Stage::Gzip(d) => {
                d.write_all(data)?;
                std::mem::take(d.get_mut())
            }
            Stage::Zlib(d) => {
                d.write_all(data)?;
                std::mem::take(d.get_mut())
            }
            Stage::RawDeflate(d) => {
                d.write_all(data)?;
                std::mem::take(d.get_mut())
            }
            Stage::Brotli(d) => {
                d.write_all(data)?;
                std::mem::take(d.get_mut())
            }
            Stage::Zstd(d) => {
                d.write_all(data)?;
                std::mem::take(d.get_mut())
            }
            Stage::DeflateUnknown => Vec::new(),
        })
    }

    fn finish(&mut self) -> std::io::Result<Vec<u8>> {
        Ok(match self {
            Stage::Gzip(d) => {
                d.try_finish()?;
                std::mem::take(d.get_mut())
            }
            Stage::Zlib(d) => {
                d.try_finish()?;
                std::mem::take(d.get_mut())
            }
            Stage::RawDeflate(d) => {
                d.try_finish()?;
                std::mem::take(d.get_mut())
            }
            Stage::Brotli(d) => {
                d.flush()?;
                std::mem::take(d.get_mut())
            }
            Stage::Zstd(d) => {
                d.flush()?;
                std::mem::take(d.get_mut())
            }
            Stage::DeflateUnknown => Vec::new(),
        })
    }
}

/// Undoes a chain of content codings chunk by chunk, with memory bounded by the chunk sizes.
pub struct Decoder {
    stages: Vec<Stage>,
}

impl Decoder {
    /// A decoder for `codings` (outermost first, as [`parse_codings`] returns them).
    pub fn new(codings: &[Coding]) -> std::io::Result<Self> {
        Ok(Self {
            stages: codings
                .iter()
                .map(|c| Stage::new(*c))
                .collect::<Result<_, _>>()?,
        })
    }

    /// Decodes one chunk.
    pub fn feed(&mut self, data: &[u8]) -> std::io::Result<Vec<u8>> {
        let mut cur = data.to_vec();
        for s in &mut self.stages {
            cur = s.write(&cur)?;
        }
        Ok(cur)
    }

    /// Flushes every stage at the end of the body.
    pub fn finish(&mut self) -> std::io::Result<Vec<u8>> {
        let mut cur = Vec::new();
        for s in &mut self.stages {
            let mut out = s.write(&cur)?;
            out.extend(s.finish()?);
            cur = out;
        }
        Ok(cur)
    }
}

/// Decodes a whole body (replay of a coding the client does not accept, tests).
pub fn decode_all(codings: &[Coding], data: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut d = Decoder::new(codings)?;
    let mut out = d.feed(data)?;
    out.extend(d.finish()?);
    Ok(out)
}

/// Encodes a whole body with one coding (tests and re-encoding).
pub fn encode_all(coding: Coding, data: &[u8]) -> std::io::Result<Vec<u8>> {
    Ok(match coding {
        Coding::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(data)?;
            e.finish()?
        }
        Coding::Deflate => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(data)?;
            e.finish()?
        }
        Coding::Brotli => {
            let mut out = Vec::new();
            {
                let mut e = brotli::CompressorWriter::new(&mut out, 8192, 5, 22);
                e.write_all(data)?;
            }
            out
        }
        Coding::Zstd => zstd::stream::encode_all(data, 3)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_coding_in_small_chunks() {
        let text: Vec<u8> = (0..50_000u32)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        for c in [Coding::Gzip, Coding::Deflate, Coding::Brotli, Coding::Zstd] {
            let enc = encode_all(c, &text).unwrap();
            let mut d = Decoder::new(&[c]).unwrap();
            let mut out = Vec::new();
            for chunk in enc.chunks(7) {
                out.extend(d.feed(chunk).unwrap());
            }
            out.extend(d.finish().unwrap());
            assert_eq!(out, text, "{c:?}");
        }
    }

    #[test]
    fn raw_deflate_and_chains() {
        let text = b"hello hello hello hello".repeat(100);
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(&text).unwrap();
        let raw = e.finish().unwrap();
        assert_eq!(decode_all(&[Coding::Deflate], &raw).unwrap(), text);
        // gzip applied first, then br: header says "gzip, br".
        let chained =
            encode_all(Coding::Brotli, &encode_all(Coding::Gzip, &text).unwrap()).unwrap();
        let codings = parse_codings("gzip, br").unwrap();
        assert_eq!(decode_all(&codings, &chained).unwrap(), text);
        assert!(parse_codings("compress").is_none());
    }

    #[test]
    fn corrupt_input_is_an_error_not_a_panic() {
        assert!(decode_all(&[Coding::Gzip], b"not gzip at all").is_err());
        assert!(decode_all(&[Coding::Zstd], b"not zstd at all").is_err());
    }
}
