//! The hold stage: a response whose URL the hold rules match waits until a scheduler releases
//! it. With `split_html`, an HTML document is decoded and cut before each `<script`, and every
//! part is held on its own, so the scheduler also controls parsing progress.

use crate::body::{BoxError, ChannelBody, PrefixBody, ProxyBody};
use crate::holds::{HoldGuard, Holds};
use bytes::Bytes;
use http::header::{self, HeaderValue};
use http_body_util::BodyExt;
use shepherd_recording::codec::{decode_all, parse_codings};
use std::sync::Arc;

/// Holds the response for `url` if the rules say so; returns its (possibly re-chunked) body.
/// `max_split` bounds the document decoded for splitting; larger ones are held whole.
pub(crate) async fn apply(
    holds: &Arc<Holds>,
    url: &str,
    parts: &mut http::response::Parts,
    body: ProxyBody,
    max_split: usize,
) -> Result<ProxyBody, BoxError> {
    let Some(split) = holds.should_hold(url) else {
        return Ok(body);
    };
    let is_html = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("text/html"));
    if split && is_html {
        let plan = holds.split(url);
        if let Some(charset) = plan.as_ref().and_then(|p| p.charset.as_deref()) {
            declare_charset(parts, charset);
        }
        let cuts = plan.as_ref().map(|p| p.cuts.as_slice());
        match split_document(parts, body, max_split, cuts).await? {
            Split::Parts(chunks) => return Ok(held_chunks(holds.clone(), url.to_string(), chunks)),
            Split::TooLarge(body) => {
                tracing::info!(url, "document too large to split, held whole");
                wait(holds, url).await;
                return Ok(body);
            }
        }
    }
    wait(holds, url).await;
    Ok(body)
}

/// Adds `charset` to a `Content-Type` that names none.
fn declare_charset(parts: &mut http::response::Parts, charset: &str) {
    let current = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("text/html")
        .to_string();
    if current.to_ascii_lowercase().contains("charset=") {
        return;
    }
    if let Ok(v) = HeaderValue::from_str(&format!("{}; charset={charset}", current.trim_end())) {
        parts.headers.insert(header::CONTENT_TYPE, v);
    }
}

/// Waits until the hold registered for `url` is released (forgotten if the browser leaves).
async fn wait(holds: &Holds, url: &str) {
    let (id, rx) = holds.hold(url, None);
    let guard = HoldGuard { holds, id };
    let _ = rx.await;
    drop(guard);
}

enum Split {
    Parts(Vec<Bytes>),
    /// Over the limit: the body as read so far followed by the rest, still encoded.
    TooLarge(ProxyBody),
}

/// Decodes the whole document and splits it before each `<script`; the coding header goes and
/// the length is set to the decoded size.
async fn split_document(
    parts: &mut http::response::Parts,
    body: ProxyBody,
    limit: usize,
    cuts: Option<&[usize]>,
) -> Result<Split, BoxError> {
    let mut body = body;
    let mut read = Vec::new();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            read.extend_from_slice(&data);
            if read.len() > limit {
                let rest = PrefixBody::new(Bytes::from(read), body);
                return Ok(Split::TooLarge(ProxyBody::boxed(rest)));
            }
        }
    }
    let raw = Bytes::from(read);
    let codings = parts
        .headers
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .and_then(parse_codings)
        .unwrap_or_default();
    let decoded = if codings.is_empty() {
        raw
    } else {
        match decode_all(&codings, &raw) {
            Ok(d) => Bytes::from(d),
            // Undecodable: deliver it as the origin sent it, in one held part.
            Err(_) => return Ok(Split::TooLarge(ProxyBody::full(raw))),
        }
    };
    parts.headers.remove(header::CONTENT_ENCODING);
    if let Ok(v) = HeaderValue::from_str(&decoded.len().to_string()) {
        parts.headers.insert(header::CONTENT_LENGTH, v);
    }
    Ok(Split::Parts(match cuts {
        Some(cuts) => split_at(&decoded, cuts),
        None => split_before_scripts(&decoded),
    }))
}

/// Splits `doc` at the given byte offsets (in any order; offsets at 0 or past the end are
/// ignored). Empty parts are dropped; the concatenation of the parts is always `doc`.
pub fn split_at(doc: &Bytes, cuts: &[usize]) -> Vec<Bytes> {
    let mut bounds: Vec<usize> = cuts
        .iter()
        .copied()
        .filter(|&c| c > 0 && c < doc.len())
        .collect();
    bounds.push(0);
    bounds.push(doc.len());
    bounds.sort_unstable();
    bounds.dedup();
    bounds
        .windows(2)
        .map(|w| doc.slice(w[0]..w[1]))
        .filter(|c| !c.is_empty())
        .collect()
}

/// Splits `doc` before every `<script` start tag (ASCII case-insensitive). Empty parts are
/// dropped; the concatenation of the parts is always `doc`.
pub fn split_before_scripts(doc: &Bytes) -> Vec<Bytes> {
    let b = doc.as_ref();
    let mut cuts = vec![0];
    let mut i = 0;
    while i + 7 < b.len() {
        if b[i] == b'<'
            && b[i + 1..i + 7].eq_ignore_ascii_case(b"script")
            && matches!(
                b[i + 7],
                b' ' | b'>' | b'/' | b'\t' | b'\n' | b'\r' | b'\x0c'
            )
        {
            cuts.push(i);
            i += 7;
        } else {
            i += 1;
        }
    }
    cuts.push(b.len());
    cuts.dedup();
    cuts.windows(2)
        .map(|w| doc.slice(w[0]..w[1]))
        .filter(|c| !c.is_empty())
        .collect()
}

/// A body that sends chunk k only after its hold is released (and chunks before it).
fn held_chunks(holds: Arc<Holds>, url: String, chunks: Vec<Bytes>) -> ProxyBody {
    let total = chunks.len();
    let ids: Vec<_> = (0..total)
        .map(|i| holds.hold(&url, Some((i, total))))
        .collect();
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, BoxError>>(1);
    tokio::spawn(async move {
        let mut pending: Vec<u64> = ids.iter().map(|(id, _)| *id).collect();
        for ((id, release), chunk) in ids.into_iter().zip(chunks) {
            tokio::select! {
                _ = release => {}
                _ = tx.closed() => break,
            }
            pending.retain(|p| *p != id);
            if tx.send(Ok(chunk)).await.is_err() {
                break;
            }
        }
        // The browser went away: its remaining chunks are no longer waiting.
        for id in pending {
            holds.forget(id);
        }
    });
    ProxyBody::boxed(ChannelBody::new(rx, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_before_each_script() {
        let doc = Bytes::from_static(
            b"<html><p>a</p><script>x()</script><p>b</p><SCRIPT src=y></SCRIPT><scripts>",
        );
        let parts = split_before_scripts(&doc);
        assert_eq!(parts.len(), 3);
        assert_eq!(&parts[0][..], b"<html><p>a</p>");
        assert!(parts[1].starts_with(b"<script>"));
        assert!(parts[2].starts_with(b"<SCRIPT src"));
        assert_eq!(parts.concat(), doc.to_vec());
        let starts = Bytes::from_static(b"<script></script>");
        assert_eq!(split_before_scripts(&starts).len(), 1);
    }

    #[test]
    fn splits_at_given_cuts() {
        let doc = Bytes::from_static(b"<p>a</p><b>c</b>");
        let parts = split_at(&doc, &[8, 0, 3, 8, 99]);
        assert_eq!(parts.len(), 3);
        assert_eq!(&parts[0][..], b"<p>");
        assert_eq!(&parts[1][..], b"a</p>");
        assert_eq!(parts.concat(), doc.to_vec());
    }
}
