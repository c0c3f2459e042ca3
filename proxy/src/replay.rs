//! Replay mode: every request is answered from the recording through the tiered matcher, with
//! no outbound connection. Misses get a configurable status on their own stream (never a
//! connection reset). Responses can be held, and HTML documents delivered in held chunks split
//! before each `<script>`. Dates are shifted by the recording's age.

use crate::body::{BoxError, ProxyBody};
use crate::client_body::ClientBody;
use crate::forward::error_response;
use crate::holds::HoldGuard;
use crate::record::to_headers;
use crate::server::Shared;
use bytes::Bytes;
use http::header::{self, HeaderName, HeaderValue};
use http::{Request, Response, StatusCode, Version};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Limited};
use shepherd_recording::codec::{decode_all, parse_codings};
use shepherd_recording::{
    DateShift, ExchangeId, LiveRequest, MatchConfig, Matcher, OriginProtocol, Recording, SessionId,
    normalize_authority,
};
use std::collections::HashMap;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

const X_SHEPHERD_REPLAY: HeaderName = HeaderName::from_static("x-shepherd-replay");
/// Recorded bodies up to this size are read in one go; larger ones stream from the file.
const READ_WHOLE: u64 = 1024 * 1024;
/// Request bodies longer than this are matched by digest only.
const MAX_MATCH_BODY: usize = 16 * 1024 * 1024;

/// Replay settings.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Matcher tiers and ignore lists.
    pub matching: MatchConfig,
    /// Status answered on a miss (404 by default).
    pub miss_status: u16,
    /// Shift dates by the recording's age.
    pub shift_dates: bool,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        Self {
            matching: MatchConfig::default(),
            miss_status: 404,
            shift_dates: true,
        }
    }
}

/// The recording being served and the matcher state of this run.
pub(crate) struct Replayer {
    rec: Recording,
    matcher: Mutex<Matcher>,
    shifts: HashMap<SessionId, DateShift>,
    opts: ReplayOptions,
    /// The protocol each HTTPS origin spoke when recorded (normalised `host:port`).
    protocols: HashMap<String, OriginProtocol>,
    /// TLS configurations offering only `http/1.1`, per certificate host name (origins
    /// recorded over HTTP/1.x); the CA's cached ones offer `h2` first.
    h1_configs: Mutex<HashMap<String, Arc<rustls::ServerConfig>>>,
    /// Recorded WebSocket connections.
    pub(crate) ws: crate::ws_replay::WsIndex,
}

impl Replayer {
    pub fn open(path: &Path, opts: ReplayOptions) -> Result<Self, String> {
        if !path.exists() {
            return Err("no such recording".into());
        }
        let rec = Recording::open_readonly(path).map_err(|e| e.to_string())?;
        let requests = rec
            .replay_requests(MAX_MATCH_BODY as u64)
            .map_err(|e| e.to_string())?;
        let shifts = rec
            .sessions()
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|s| (s.id, DateShift::since_recorded_us(s.started_unix_us)))
            .collect();
        let protocols = rec.origin_protocols().map_err(|e| e.to_string())?;
        let ws = crate::ws_replay::WsIndex::build(&rec).map_err(|e| e.to_string())?;
        tracing::info!(
            requests = requests.len(),
            websockets = ws.len(),
            origins = protocols.len(),
            "replay index built"
        );
        let matcher = Matcher::new(requests, opts.matching.clone());
        Ok(Self {
            rec,
            matcher: Mutex::new(matcher),
            shifts,
            opts,
            protocols,
            h1_configs: Mutex::new(HashMap::new()),
            ws,
        })
    }

    /// The recording being served.
    pub(crate) fn recording(&self) -> &Recording {
        &self.rec
    }

    /// The decoded body of a recorded `GET url` with a 2xx answer (the page's source maps,
    /// fetched for chaining); blocking. Takes a place in the URL's queue like any request.
    pub(crate) fn recorded_get(&self, url: &str) -> Option<Vec<u8>> {
        let live = LiveRequest {
            method: "GET",
            url,
            headers: &[],
            body: &[],
        };
        let hit = self
            .matcher
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .find(&live)
            .ok()?;
        let ex = self.rec.exchange(hit.exchange).ok()?;
        if !(200..300).contains(&ex.response.as_ref()?.status) {
            return None;
        }
        self.rec
            .decoded_response_body(hit.exchange, 32 * 1024 * 1024)
            .ok()
            .flatten()
    }

    /// The TLS configuration to present for `authority` (`host[:port]`, 443 by default):
    /// `base` (h2, http/1.1; its certificate is for `cert_host`) unless the origin was
    /// recorded speaking HTTP/1.x only.
    pub fn tls_config(
        &self,
        authority: &str,
        cert_host: &str,
        base: Arc<rustls::ServerConfig>,
    ) -> Arc<rustls::ServerConfig> {
        let key = normalize_authority(authority, 443);
        if self.protocols.get(&key) != Some(&OriginProtocol::Http1) {
            return base;
        }
        let mut cache = self.h1_configs.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = cache.get(cert_host) {
            return c.clone();
        }
        let mut c = (*base).clone();
        c.alpn_protocols = vec![b"http/1.1".to_vec()];
        let c = Arc::new(c);
        if cache.len() >= 4096 {
            cache.clear();
        }
        cache.insert(cert_host.to_string(), c.clone());
        c
    }

    /// Rewinds the per-key queues for a new run.
    pub fn reset(&self) {
        self.matcher
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .reset();
        self.ws.reset();
    }
}

/// Answers one request from the recording.
pub(crate) async fn serve(
    shared: Arc<Shared>,
    replayer: Arc<Replayer>,
    url: http::Uri,
    req: Request<ClientBody>,
) -> Response<ProxyBody> {
    let (parts, body) = req.into_parts();
    let url_s = url.to_string();
    let timed_out = body.timeout_flag();
    let body = match Limited::new(body, MAX_MATCH_BODY).collect().await {
        Ok(c) => c.to_bytes(),
        Err(_) if timed_out.fired() => {
            return crate::forward::body_timeout_response(parts.version, &url_s);
        }
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            return error_response(StatusCode::PAYLOAD_TOO_LARGE, "request body too large");
        }
        Err(e) => {
            return error_response(StatusCode::BAD_REQUEST, &format!("request body: {e}"));
        }
    };
    let headers = to_headers(&parts.headers);
    let found = {
        let live = LiveRequest {
            method: parts.method.as_str(),
            url: &url_s,
            headers: &headers,
            body: &body,
        };
        let mut m = replayer.matcher.lock().unwrap_or_else(|p| p.into_inner());
        m.find(&live)
    };
    let hit = match found {
        Ok(hit) => hit,
        Err(miss) => {
            shared
                .stats
                .replay_misses
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            tracing::warn!(method = %parts.method, url = %url_s, reason = %miss, "replay miss");
            let status =
                StatusCode::from_u16(replayer.opts.miss_status).unwrap_or(StatusCode::NOT_FOUND);
            return error_response(status, &format!("replay miss: {miss}"));
        }
    };
    tracing::info!(
        method = %parts.method,
        url = %url_s,
        tier = hit.tier.as_str(),
        exchange = hit.exchange.0,
        occurrence = hit.occurrence,
        "replay hit"
    );
    let rec = replayer.rec.clone();
    let id = hit.exchange;
    let loaded = tokio::task::spawn_blocking(move || load(&rec, id)).await;
    let (exchange, body) = match loaded {
        Ok(Ok(x)) => x,
        Ok(Err(e)) => {
            tracing::error!(url = %url_s, "replay read: {e}");
            return error_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                &format!("recording: {e}"),
            );
        }
        Err(_) => {
            return error_response(StatusCode::INTERNAL_SERVER_ERROR, "recording read failed");
        }
    };
    let Some(mut head) = exchange.response else {
        return error_response(StatusCode::BAD_GATEWAY, "recorded exchange has no response");
    };
    if replayer.opts.shift_dates
        && let Some(shift) = replayer.shifts.get(&exchange.session)
    {
        shift.apply(&mut head.headers);
    }
    let mut resp = Response::new(ProxyBody::Empty);
    *resp.status_mut() = StatusCode::from_u16(head.status).unwrap_or(StatusCode::OK);
    *resp.version_mut() = Version::HTTP_11;
    let h = resp.headers_mut();
    for hd in &head.headers {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(hd.name.as_bytes()),
            HeaderValue::from_bytes(&hd.value),
        ) {
            h.append(n, v);
        }
    }
    crate::headers::response_to_browser(h);
    h.insert(
        X_SHEPHERD_REPLAY,
        HeaderValue::from_static(hit.tier.as_str()),
    );
    let (mut rparts, _) = resp.into_parts();
    let mut body = body;

    if let Some(split) = shared.holds.should_hold(&url_s) {
        let is_html = rparts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.to_ascii_lowercase().contains("text/html"));
        if split && is_html {
            match split_document(&mut rparts, body).await {
                Ok(chunks) => {
                    body = held_chunks(shared.clone(), url_s.clone(), chunks);
                }
                Err(e) => {
                    return error_response(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string());
                }
            }
        } else {
            let (hid, rx) = shared.holds.hold(&url_s, None);
            let guard = HoldGuard {
                holds: &shared.holds,
                id: hid,
            };
            let _ = rx.await;
            drop(guard);
        }
    }
    if parts.method == http::Method::HEAD {
        return Response::from_parts(rparts, ProxyBody::Empty);
    }
    crate::forward::apply_rewrite(&shared, &parts.method, &url_s, &parts.headers, rparts, body)
        .await
}

fn load(
    rec: &Recording,
    id: ExchangeId,
) -> Result<(shepherd_recording::Exchange, ProxyBody), shepherd_recording::Error> {
    let exchange = rec.exchange(id)?;
    let mut reader = rec.response_body(id)?;
    if reader.len() <= READ_WHOLE {
        let data = reader.read_to_vec(READ_WHOLE)?;
        return Ok((exchange, ProxyBody::full(data)));
    }
    // Large body: a blocking thread reads chunk after chunk into a small channel, so memory
    // stays at a few chunks whatever the body size.
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, BoxError>>(4);
    let len = reader.len();
    std::thread::spawn(move || {
        loop {
            match reader.next_chunk() {
                Ok(Some(c)) => {
                    if tx.blocking_send(Ok(Bytes::from(c))).is_err() {
                        return;
                    }
                }
                Ok(None) => return,
                Err(e) => {
                    let _ = tx.blocking_send(Err(Box::new(e)));
                    return;
                }
            }
        }
    });
    Ok((
        exchange,
        ProxyBody::boxed(ChannelBody { rx, len: Some(len) }),
    ))
}

/// A body fed by a channel (recorded bodies read on a thread, held chunks).
pub(crate) struct ChannelBody {
    rx: tokio::sync::mpsc::Receiver<Result<Bytes, BoxError>>,
    len: Option<u64>,
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

    fn size_hint(&self) -> http_body::SizeHint {
        match self.len {
            Some(n) => http_body::SizeHint::with_exact(n),
            None => http_body::SizeHint::default(),
        }
    }
}

/// Decodes the whole document and splits it before each `<script`; the coding header goes and
/// the length is set to the decoded size.
async fn split_document(
    parts: &mut http::response::Parts,
    body: ProxyBody,
) -> Result<Vec<Bytes>, BoxError> {
    let raw = body.collect().await?.to_bytes();
    let codings = parts
        .headers
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .and_then(parse_codings)
        .unwrap_or_default();
    let decoded = if codings.is_empty() {
        raw
    } else {
        Bytes::from(decode_all(&codings, &raw)?)
    };
    parts.headers.remove(header::CONTENT_ENCODING);
    if let Ok(v) = HeaderValue::from_str(&decoded.len().to_string()) {
        parts.headers.insert(header::CONTENT_LENGTH, v);
    }
    Ok(split_before_scripts(&decoded))
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
fn held_chunks(shared: Arc<Shared>, url: String, chunks: Vec<Bytes>) -> ProxyBody {
    let total = chunks.len();
    let ids: Vec<_> = (0..total)
        .map(|i| shared.holds.hold(&url, Some((i, total))))
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
            shared.holds.forget(id);
        }
    });
    ProxyBody::boxed(ChannelBody { rx, len: None })
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
}
