//! Content codings (`gzip`, `deflate`, `br`, `zstd` and chains of them). One push-based
//! decoder serves every user: the proxy feeds response bodies through it chunk by chunk while
//! they stream, and the store decodes whole bodies with it (HAR export, the matcher's JSON
//! response classes), where a limit bounds what a small compressed body may expand to.

use std::io::{self, Write};

/// A content coding Shepherd can decode (and encode, for tests and re-encoding).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    /// `gzip` / `x-gzip` (several members are decoded one after another).
    Gzip,
    /// `deflate`: zlib-wrapped, or the raw deflate some servers send under that name.
    Deflate,
    /// `br`.
    Brotli,
    /// `zstd`.
    Zstd,
}

/// Parses a `Content-Encoding` value into the codings to undo, in the order they must be
/// undone (the last one applied first). `identity` and empty items are skipped; `None` means an
/// unknown coding, so the body must be left as it is.
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
    out.reverse();
    Some(out)
}

/// Where a stage writes: a buffer drained after every call, refusing to grow past a total.
struct Sink {
    buf: Vec<u8>,
    total: u64,
    limit: u64,
}

impl Sink {
    fn new(limit: u64) -> Self {
        Self {
            buf: Vec::new(),
            total: 0,
            limit,
        }
    }
}

impl Write for Sink {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.total = self.total.saturating_add(data.len() as u64);
        if self.total > self.limit {
            return Err(too_large(self.limit));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn too_large(limit: u64) -> io::Error {
    io::Error::other(format!("decoded body exceeds {limit} bytes"))
}

enum Stage {
    Gzip(flate2::write::MultiGzDecoder<Sink>),
    Zlib(flate2::write::ZlibDecoder<Sink>),
    RawDeflate(flate2::write::DeflateDecoder<Sink>),
    /// `deflate` before its first two bytes arrived (they tell zlib from raw deflate).
    DeflateUnknown(Vec<u8>),
    Brotli(Box<brotli::DecompressorWriter<Sink>>),
    Zstd(zstd::stream::write::Decoder<'static, Sink>),
}

/// Whether two bytes form a zlib header: method 8, window ≤ 32 KiB, check bits valid.
fn is_zlib_header(cmf: u8, flg: u8) -> bool {
    cmf & 0x0f == 8 && cmf >> 4 <= 7 && (u16::from(cmf) << 8 | u16::from(flg)) % 31 == 0
}

impl Stage {
    fn new(c: Coding, limit: u64) -> io::Result<Stage> {
        Ok(match c {
            Coding::Gzip => Stage::Gzip(flate2::write::MultiGzDecoder::new(Sink::new(limit))),
            Coding::Deflate => Stage::DeflateUnknown(Vec::new()),
            Coding::Brotli => Stage::Brotli(Box::new(brotli::DecompressorWriter::new(
                Sink::new(limit),
                8192,
            ))),
            Coding::Zstd => Stage::Zstd(zstd::stream::write::Decoder::new(Sink::new(limit))?),
        })
    }

    fn sink(&mut self) -> Option<&mut Sink> {
        match self {
            Stage::Gzip(d) => Some(d.get_mut()),
            Stage::Zlib(d) => Some(d.get_mut()),
            Stage::RawDeflate(d) => Some(d.get_mut()),
            Stage::Brotli(d) => Some(d.get_mut()),
            Stage::Zstd(d) => Some(d.get_mut()),
            Stage::DeflateUnknown(_) => None,
        }
    }

    /// Picks zlib or raw deflate once the header is known (or the body ended shorter).
    fn resolve_deflate(&mut self, data: &[u8], at_end: bool, limit: u64) -> Vec<u8> {
        let Stage::DeflateUnknown(pending) = self else {
            return data.to_vec();
        };
        pending.extend_from_slice(data);
        if pending.len() < 2 && !at_end {
            return Vec::new();
        }
        let head = std::mem::take(pending);
        let zlib = head.len() >= 2 && is_zlib_header(head[0], head[1]);
        *self = if zlib {
            Stage::Zlib(flate2::write::ZlibDecoder::new(Sink::new(limit)))
        } else {
            Stage::RawDeflate(flate2::write::DeflateDecoder::new(Sink::new(limit)))
        };
        head
    }

    fn write(&mut self, data: &[u8], limit: u64) -> io::Result<Vec<u8>> {
        let owned;
        let data = if let Stage::DeflateUnknown(_) = self {
            owned = self.resolve_deflate(data, false, limit);
            &owned[..]
        } else {
            data
        };
        if data.is_empty() {
            return Ok(Vec::new());
        }
        match self {
            Stage::Gzip(d) => d.write_all(data)?,
            Stage::Zlib(d) => d.write_all(data)?,
            Stage::RawDeflate(d) => d.write_all(data)?,
            Stage::Brotli(d) => d.write_all(data)?,
            Stage::Zstd(d) => d.write_all(data)?,
            Stage::DeflateUnknown(_) => {}
        }
        Ok(self
            .sink()
            .map(|s| std::mem::take(&mut s.buf))
            .unwrap_or_default())
    }

    fn finish(&mut self, limit: u64) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        if let Stage::DeflateUnknown(_) = self {
            let head = self.resolve_deflate(&[], true, limit);
            if head.is_empty() {
                return Ok(Vec::new());
            }
            out = self.write(&head, limit)?;
        }
        match self {
            Stage::Gzip(d) => d.try_finish()?,
            Stage::Zlib(d) => d.try_finish()?,
            Stage::RawDeflate(d) => d.try_finish()?,
            // `close` also reports a stream that ended early.
            Stage::Brotli(d) => d.close()?,
            Stage::Zstd(d) => d.flush()?,
            Stage::DeflateUnknown(_) => {}
        }
        if let Some(s) = self.sink() {
            out.append(&mut s.buf);
        }
        Ok(out)
    }
}

/// Undoes a chain of content codings chunk by chunk. Memory is bounded by the chunk sizes (and
/// the expansion of one chunk), never by the body size.
pub struct Decoder {
    stages: Vec<Stage>,
    limit: u64,
    out_total: u64,
}

impl std::fmt::Debug for Decoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder")
            .field("stages", &self.stages.len())
            .field("limit", &self.limit)
            .finish()
    }
}

impl Decoder {
    /// A decoder for `codings` (in the order [`parse_codings`] returns them), without a size
    /// limit (streamed bodies).
    pub fn new(codings: &[Coding]) -> io::Result<Self> {
        Self::with_limit(codings, u64::MAX)
    }

    /// A decoder that fails once any stage has produced more than `limit` bytes in total, so
    /// a small hostile body cannot expand without bound.
    pub fn with_limit(codings: &[Coding], limit: u64) -> io::Result<Self> {
        Ok(Self {
            stages: codings
                .iter()
                .map(|c| Stage::new(*c, limit))
                .collect::<Result<_, _>>()?,
            limit,
            out_total: 0,
        })
    }

    /// Decodes the next chunk; may return nothing (the decoder is waiting for more input).
    pub fn feed(&mut self, data: &[u8]) -> io::Result<Vec<u8>> {
        let mut cur = data.to_vec();
        for s in &mut self.stages {
            cur = s.write(&cur, self.limit)?;
        }
        self.count(cur)
    }

    /// Ends the body: flushes every stage and reports a truncated stream where the coding can
    /// tell (gzip, deflate, br).
    pub fn finish(&mut self) -> io::Result<Vec<u8>> {
        let mut cur = Vec::new();
        for s in &mut self.stages {
            let mut out = s.write(&cur, self.limit)?;
            out.extend(s.finish(self.limit)?);
            cur = out;
        }
        self.count(cur)
    }

    fn count(&mut self, out: Vec<u8>) -> io::Result<Vec<u8>> {
        self.out_total = self.out_total.saturating_add(out.len() as u64);
        if self.out_total > self.limit {
            return Err(too_large(self.limit));
        }
        Ok(out)
    }
}

/// Decodes a whole body.
pub fn decode_all(codings: &[Coding], data: &[u8]) -> io::Result<Vec<u8>> {
    let mut d = Decoder::new(codings)?;
    let mut out = d.feed(data)?;
    out.extend(d.finish()?);
    Ok(out)
}

/// Undoes a `Content-Encoding` header value on a whole body. `None` when a coding is unknown,
/// the data is corrupt, or the decoded body would exceed `limit` bytes.
pub fn decode(content_encoding: &str, data: &[u8], limit: u64) -> Option<Vec<u8>> {
    let codings = parse_codings(content_encoding)?;
    let mut d = Decoder::with_limit(&codings, limit).ok()?;
    // Small slices keep the memory of one step near the limit even for a compression bomb.
    let mut out = Vec::new();
    for chunk in data.chunks(16 * 1024) {
        out.extend(d.feed(chunk).ok()?);
    }
    out.extend(d.finish().ok()?);
    Some(out)
}

/// Encodes a whole body with one coding (tests, and bodies re-encoded for a client).
pub fn encode_all(coding: Coding, data: &[u8]) -> io::Result<Vec<u8>> {
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

    fn text() -> Vec<u8> {
        (0..50_000u32)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect()
    }

    #[test]
    fn round_trips_every_coding_in_small_chunks() {
        let text = text();
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
    fn raw_deflate_one_byte_at_a_time_and_chains() {
        let text = b"hello hello hello hello".repeat(100);
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(&text).unwrap();
        let raw = e.finish().unwrap();
        assert_eq!(decode_all(&[Coding::Deflate], &raw).unwrap(), text);
        let mut d = Decoder::new(&[Coding::Deflate]).unwrap();
        let mut out = Vec::new();
        for b in &raw {
            out.extend(d.feed(std::slice::from_ref(b)).unwrap());
        }
        out.extend(d.finish().unwrap());
        assert_eq!(out, text);
        // gzip applied first, then br: the header says "gzip, br".
        let chained =
            encode_all(Coding::Brotli, &encode_all(Coding::Gzip, &text).unwrap()).unwrap();
        let codings = parse_codings("gzip, br").unwrap();
        assert_eq!(codings, vec![Coding::Brotli, Coding::Gzip]);
        assert_eq!(decode_all(&codings, &chained).unwrap(), text);
        assert_eq!(decode("gzip, br", &chained, 1 << 20).unwrap(), text);
        assert!(parse_codings("compress").is_none());
        assert_eq!(parse_codings("identity").unwrap(), vec![]);
    }

    #[test]
    fn corrupt_or_truncated_input_is_an_error_not_a_panic() {
        assert!(decode_all(&[Coding::Gzip], b"not gzip at all").is_err());
        assert!(decode_all(&[Coding::Zstd], b"not zstd at all").is_err());
        assert!(decode_all(&[Coding::Brotli], b"\xff\xff\xff\xff not br").is_err());
        let br = encode_all(Coding::Brotli, &text()).unwrap();
        assert!(decode_all(&[Coding::Brotli], &br[..br.len() / 2]).is_err());
        let gz = encode_all(Coding::Gzip, &text()).unwrap();
        assert!(decode_all(&[Coding::Gzip], &gz[..gz.len() / 2]).is_err());
        assert!(decode("gzip", b"not gzip", 1000).is_none());
    }

    #[test]
    fn limit_stops_expansion() {
        let zeros = vec![0u8; 4 << 20];
        for c in [Coding::Gzip, Coding::Deflate, Coding::Brotli, Coding::Zstd] {
            let enc = encode_all(c, &zeros).unwrap();
            assert!(enc.len() < 64 * 1024, "{c:?} compresses");
            let mut d = Decoder::with_limit(&[c], 1 << 20).unwrap();
            let r = d.feed(&enc).and_then(|mut a| {
                a.extend(d.finish()?);
                Ok(a)
            });
            assert!(r.is_err(), "{c:?} limit enforced");
        }
        let gz = encode_all(Coding::Gzip, b"hello hello hello").unwrap();
        assert_eq!(decode("gzip", &gz, 1000).unwrap(), b"hello hello hello");
        assert!(decode("gzip", &gz, 5).is_none());
        assert_eq!(decode("", b"plain", 1000).unwrap(), b"plain");
    }
}
