//! Parser gates: a rewritten HTML document whose rewriter wrote hold points into it (an inline
//! script a repair policy may postpone, `page_holds::hold_point`) is sent in parts, each
//! hold point cut out, the part after it sent only once the page released that number of the
//! document's hold token (or the limit passed). The browser's parser stops where the bytes
//! stop, exactly as on a slow network, so the script after the point runs only when its rule
//! allows; everything the page already has keeps running meanwhile.

use crate::body::{BoxError, ChannelBody, ProxyBody};
use crate::page_holds::{PageHolds, hold_point_start};
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use std::sync::Arc;

/// Most digits a hold point's number has (`page_holds` accepts numbers below 2^40).
const MAX_DIGITS: usize = 13;

/// `body` with the hold points of `token` cut out, each part after one waiting for its
/// release.
pub(crate) fn gated(body: ProxyBody, token: String, holds: Arc<PageHolds>) -> ProxyBody {
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, BoxError>>(4);
    tokio::spawn(async move {
        let mut body = body;
        let mut cut = Cutter::new(hold_point_start(&token));
        loop {
            let frame = tokio::select! {
                f = body.frame() => f,
                _ = tx.closed() => return,
            };
            let data = match frame {
                None => {
                    let rest = cut.finish();
                    if !rest.is_empty() {
                        let _ = tx.send(Ok(rest)).await;
                    }
                    return;
                }
                Some(Err(e)) => {
                    let _ = tx.send(Err(e)).await;
                    return;
                }
                Some(Ok(f)) => match f.into_data() {
                    Ok(d) => d,
                    Err(_) => continue,
                },
            };
            for piece in cut.feed(&data) {
                match piece {
                    Piece::Bytes(b) => {
                        if !b.is_empty() && tx.send(Ok(b)).await.is_err() {
                            return;
                        }
                    }
                    Piece::Hold(n) => {
                        // The document's own connection waits: no other one is taken.
                        tokio::select! {
                            _ = holds.wait((token.clone(), n), None) => {}
                            _ = tx.closed() => return,
                        }
                    }
                }
            }
        }
    });
    ProxyBody::boxed(ChannelBody::new(rx, None))
}

/// What [`Cutter::feed`] found.
#[derive(Debug, PartialEq, Eq)]
enum Piece {
    /// Bytes to send.
    Bytes(Bytes),
    /// A hold point: wait for this release first.
    Hold(u64),
}

/// Finds the hold points in a stream of chunks (a point may straddle two).
struct Cutter {
    start: Vec<u8>,
    /// Bytes kept back: the start of what may be a hold point.
    carry: BytesMut,
}

impl Cutter {
    fn new(start: Vec<u8>) -> Cutter {
        Cutter {
            start,
            carry: BytesMut::new(),
        }
    }

    /// The end of the stream: what was kept back is sent as it is.
    fn finish(&mut self) -> Bytes {
        self.carry.split().freeze()
    }

    fn feed(&mut self, chunk: &[u8]) -> Vec<Piece> {
        self.carry.extend_from_slice(chunk);
        let mut out = Vec::new();
        loop {
            let buf = &self.carry[..];
            match find(buf, &self.start) {
                Some(at) => {
                    let digits_from = at + self.start.len();
                    let digits = buf[digits_from..]
                        .iter()
                        .take_while(|b| b.is_ascii_digit())
                        .count();
                    let end = digits_from + digits;
                    if end >= buf.len() && digits <= MAX_DIGITS {
                        // The point goes on in the next chunk.
                        if at > 0 {
                            out.push(Piece::Bytes(self.carry.split_to(at).freeze()));
                        }
                        return out;
                    }
                    let n = std::str::from_utf8(&buf[digits_from..end])
                        .ok()
                        .and_then(|d| d.parse::<u64>().ok());
                    match (n, buf.get(end)) {
                        (Some(n), Some(0x01)) if digits <= MAX_DIGITS => {
                            out.push(Piece::Bytes(self.carry.split_to(at).freeze()));
                            let _ = self.carry.split_to(end + 1 - at);
                            out.push(Piece::Hold(n));
                        }
                        // Not a hold point after all: the bytes go through.
                        _ => out.push(Piece::Bytes(self.carry.split_to(digits_from).freeze())),
                    }
                }
                None => {
                    // Keep back a tail that could start a point.
                    let keep = (1..self.start.len().min(buf.len() + 1))
                        .rev()
                        .find(|&k| buf.ends_with(&self.start[..k]))
                        .unwrap_or(0);
                    let send = buf.len() - keep;
                    if send > 0 {
                        out.push(Piece::Bytes(self.carry.split_to(send).freeze()));
                    }
                    return out;
                }
            }
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    let first = needle[0];
    (0..=hay.len() - needle.len()).find(|&i| hay[i] == first && hay[i..].starts_with(needle))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page_holds::hold_point;

    const T: &str = "0123456789abcdef0123456789abcdef";

    fn run(chunks: &[&[u8]]) -> (Vec<u8>, Vec<u64>) {
        let mut c = Cutter::new(hold_point_start(T));
        let mut bytes = Vec::new();
        let mut holds = Vec::new();
        let mut pieces: Vec<Piece> = chunks.iter().flat_map(|ch| c.feed(ch)).collect();
        pieces.push(Piece::Bytes(c.finish()));
        for p in pieces {
            match p {
                Piece::Bytes(b) => bytes.extend_from_slice(&b),
                Piece::Hold(n) => {
                    holds.push(n);
                    bytes.extend_from_slice(b"|");
                }
            }
        }
        (bytes, holds)
    }

    #[test]
    fn points_are_cut_out_wherever_the_chunks_split() {
        let doc = format!(
            "<p>a</p><script x>{}f()</script><script>{}g()</script>",
            hold_point(T, 1),
            hold_point(T, 22)
        );
        let b = doc.as_bytes();
        let want = b"<p>a</p><script x>|f()</script><script>|g()</script>".to_vec();
        for split in 0..b.len() {
            let (out, holds) = run(&[&b[..split], &b[split..]]);
            assert_eq!(out, want, "split at {split}");
            assert_eq!(holds, vec![1, 22]);
        }
        // Byte by byte.
        let chunks: Vec<&[u8]> = b.chunks(1).collect();
        assert_eq!(run(&chunks).0, want);
    }

    #[test]
    fn another_token_or_a_broken_point_goes_through() {
        let other = hold_point("ffffffffffffffffffffffffffffffff", 3);
        let broken = "\x01shepherd-hold:0123456789abcdef0123456789abcdef.x\x01";
        let unended = "\x01shepherd-hold:0123456789abcdef0123456789abcdef.12";
        for s in [other.as_str(), broken, unended] {
            let doc = format!("a{s}b");
            let (out, holds) = run(&[doc.as_bytes()]);
            assert_eq!(out, doc.as_bytes(), "{s:?}");
            assert!(holds.is_empty());
        }
    }
}
