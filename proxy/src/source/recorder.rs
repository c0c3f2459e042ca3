//! The recorder of a live source: each exchange goes to the recording as it streams. Request
//! and response bodies are teed chunk by chunk (the response before any decoding or
//! rewriting), so memory stays bounded and a crash loses only the exchanges in flight. Traces
//! uploaded by pages go into the same session.

use crate::body::{BoxError, ProxyBody};
use bytes::Bytes;
use http::HeaderMap;
use http_body::{Body, Frame};
use shepherd_recording::{
    ExchangeWriter, Header, Recording, RequestHead, ResponseHead, SessionId, Timings,
};
use std::collections::HashMap;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Instant;

/// The open recording and the session of this run.
pub(crate) struct Recorder {
    rec: Recording,
    session: SessionId,
    /// Origin protocol already noted per authority (the recording is told once per origin).
    alpn_seen: Mutex<HashMap<String, String>>,
}

impl Recorder {
    /// Opens (or creates) the recording at `path` and begins a session of `kind` (`record`,
    /// `replay`).
    pub fn create(path: &Path, kind: &str) -> Result<Self, String> {
        let rec = Recording::open(path).map_err(|e| e.to_string())?;
        let session = rec.begin_session(kind).map_err(|e| e.to_string())?;
        Ok(Self {
            rec,
            session,
            alpn_seen: Mutex::new(HashMap::new()),
        })
    }

    /// Notes the protocol the origin of `url` answered with (`h2`, `http/1.1`, or empty for
    /// plain HTTP), once per origin and change; replay offers the browser the same ALPN.
    pub fn note_origin_protocol(&self, url: &http::Uri, version: http::Version) {
        let https = url.scheme() == Some(&http::uri::Scheme::HTTPS);
        let Some(authority) = url.authority() else {
            return;
        };
        let alpn = match (https, version) {
            (false, _) => "",
            (true, http::Version::HTTP_2) => "h2",
            (true, _) => "http/1.1",
        };
        let key = shepherd_recording::normalize_authority(
            authority.as_str(),
            if https { 443 } else { 80 },
        );
        let mut seen = self.alpn_seen.lock().unwrap_or_else(|p| p.into_inner());
        if seen.get(&key).map(String::as_str) == Some(alpn) {
            return;
        }
        seen.insert(key.clone(), alpn.to_string());
        drop(seen);
        if let Err(e) = self.rec.set_host_protocol(self.session, &key, alpn) {
            tracing::warn!("recording host protocol: {e}");
        }
    }

    /// Starts an exchange for a request head as the browser sent it.
    pub fn begin(
        &self,
        method: &str,
        url: &str,
        version: http::Version,
        headers: &HeaderMap,
    ) -> Option<SharedWriter> {
        let head = RequestHead {
            method: method.to_string(),
            url: url.to_string(),
            http_version: version_str(version).to_string(),
            headers: to_headers(headers),
        };
        match self.rec.begin_exchange(self.session, head) {
            Ok(w) => Some(SharedWriter(Arc::new(Mutex::new(Slot {
                writer: Some(w),
                timings: Timings::starting_now(),
                started: Instant::now(),
                request_done: false,
            })))),
            Err(e) => {
                tracing::warn!("recording: cannot begin exchange: {e}");
                None
            }
        }
    }

    /// Where the messages of WebSocket exchange `exchange` go once it is upgraded.
    pub fn ws_tap(&self, exchange: shepherd_recording::ExchangeId) -> WsTap {
        WsTap {
            rec: self.rec.clone(),
            exchange,
            seq: std::sync::atomic::AtomicU64::new(0),
            started: Instant::now(),
        }
    }

    /// Stores batch `seq` of document `doc`'s trace in this session.
    pub fn append(&self, doc: &str, seq: u64, data: &[u8]) -> Result<(), String> {
        self.rec
            .append_trace_batch(self.session, doc, seq, data)
            .map_err(|e| e.to_string())
    }

    /// Commits everything queued.
    pub fn flush(&self) {
        if let Err(e) = self.rec.flush() {
            tracing::error!("recording flush: {e}");
        }
    }
}

pub(crate) fn version_str(v: http::Version) -> &'static str {
    match v {
        http::Version::HTTP_09 => "HTTP/0.9",
        http::Version::HTTP_10 => "HTTP/1.0",
        http::Version::HTTP_2 => "HTTP/2",
        http::Version::HTTP_3 => "HTTP/3",
        _ => "HTTP/1.1",
    }
}

pub(crate) fn to_headers(h: &HeaderMap) -> Vec<Header> {
    h.iter()
        .map(|(n, v)| Header::new(n.as_str(), v.as_bytes()))
        .collect()
}

/// Stores the messages of one upgraded WebSocket connection (both directions share the order).
pub(crate) struct WsTap {
    rec: Recording,
    exchange: shepherd_recording::ExchangeId,
    seq: std::sync::atomic::AtomicU64,
    started: Instant,
}

impl WsTap {
    /// Stores one message seen on the wire.
    pub fn record(&self, from_client: bool, msg: crate::ws_frames::Parsed, url: &str) {
        use shepherd_recording::{WsKind, WsMessage};
        let Some(kind) = WsKind::from_opcode(msg.opcode) else {
            return;
        };
        if msg.oversize {
            tracing::warn!(
                url,
                from_client,
                "WebSocket message over 16 MiB not recorded"
            );
            return;
        }
        if msg.compressed {
            tracing::warn!(
                url,
                from_client,
                "compressed WebSocket message stored as received"
            );
        }
        let seq = self.seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let at_us = i64::try_from(self.started.elapsed().as_micros()).unwrap_or(i64::MAX);
        let m = WsMessage {
            from_client,
            kind,
            at_us,
            data: msg.data,
        };
        if let Err(e) = self.rec.append_ws_message(self.exchange, seq, m) {
            tracing::warn!(url, "recording WebSocket message: {e}");
        }
    }
}

struct Slot {
    writer: Option<ExchangeWriter>,
    timings: Timings,
    started: Instant,
    request_done: bool,
}

/// One exchange being recorded, shared by the request tee and the response tee.
#[derive(Clone)]
pub(crate) struct SharedWriter(Arc<Mutex<Slot>>);

impl SharedWriter {
    fn with<R>(&self, f: impl FnOnce(&mut Slot) -> R) -> R {
        let mut g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut g)
    }

    /// The origin answered: store its head (headers exactly as sent).
    pub fn response_head(&self, status: u16, version: http::Version, headers: &HeaderMap) {
        self.with(|s| {
            let waited = s.started.elapsed().as_micros();
            s.timings.wait_us = i64::try_from(waited).unwrap_or(i64::MAX);
            if let Some(w) = s.writer.as_mut() {
                w.response_head(ResponseHead {
                    status,
                    reason: String::new(),
                    http_version: version_str(version).to_string(),
                    headers: to_headers(headers),
                });
            }
        });
    }

    /// The exchange failed before or during the response.
    pub fn fail(&self, error: &str) {
        self.with(|s| {
            if let Some(mut w) = s.writer.take() {
                w.set_error(error);
                let _ = w.finish(s.timings);
            }
        });
    }

    /// Marks a WebSocket upgrade and commits the handshake; returns the exchange id (its
    /// messages are stored under it).
    pub fn finish_websocket(&self) -> Option<shepherd_recording::ExchangeId> {
        self.with(|s| {
            let mut w = s.writer.take()?;
            w.set_websocket();
            match w.finish(s.timings) {
                Ok(id) => Some(id),
                Err(e) => {
                    tracing::warn!("recording: {e}");
                    None
                }
            }
        })
    }

    /// Commits the exchange when nothing more will arrive (response without body).
    pub fn finish(&self) {
        self.with(|s| {
            if let Some(w) = s.writer.take() {
                let total = i64::try_from(s.started.elapsed().as_micros()).unwrap_or(i64::MAX);
                s.timings.receive_us = (total - s.timings.wait_us).max(0);
                if let Err(e) = w.finish(s.timings) {
                    tracing::warn!("recording: {e}");
                }
            }
        });
    }

    fn request_chunk(&self, data: &[u8]) {
        self.with(|s| {
            if let Some(w) = s.writer.as_mut()
                && let Err(e) = w.request_body(data)
            {
                tracing::warn!("recording request body: {e}");
            }
        });
    }

    fn request_end(&self) {
        self.with(|s| {
            s.request_done = true;
            let sent = i64::try_from(s.started.elapsed().as_micros()).unwrap_or(i64::MAX);
            s.timings.send_us = sent;
        });
    }

    fn response_chunk(&self, data: &[u8]) {
        self.with(|s| {
            if let Some(w) = s.writer.as_mut()
                && let Err(e) = w.response_body(data)
            {
                tracing::warn!("recording response body: {e}");
            }
        });
    }
}

/// Which side a tee copies.
#[derive(Clone, Copy)]
pub(crate) enum Side {
    Request,
    Response,
}

/// Passes a body through unchanged while copying its chunks into the recording. A response
/// body that ends commits the exchange; one that is dropped early (client gone) discards it.
pub(crate) struct TeeBody {
    inner: ProxyBody,
    writer: SharedWriter,
    side: Side,
    ended: bool,
}

impl TeeBody {
    pub fn new(inner: ProxyBody, writer: SharedWriter, side: Side) -> Self {
        Self {
            inner,
            writer,
            side,
            ended: false,
        }
    }

    fn end(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        match self.side {
            Side::Request => self.writer.request_end(),
            Side::Response => self.writer.finish(),
        }
    }
}

impl Body for TeeBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        let frame = ready!(Pin::new(&mut this.inner).poll_frame(cx));
        match &frame {
            Some(Ok(f)) => {
                if let Some(data) = f.data_ref() {
                    match this.side {
                        Side::Request => this.writer.request_chunk(data),
                        Side::Response => this.writer.response_chunk(data),
                    }
                }
                if this.inner.is_end_stream() {
                    this.end();
                }
            }
            Some(Err(e)) => {
                if let Side::Response = this.side {
                    this.writer.fail(&format!("body: {e}"));
                }
                this.ended = true;
            }
            None => this.end(),
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

impl crate::trace_sink::TraceSink for Recorder {
    fn append(&self, doc: &str, seq: u64, data: &[u8]) -> Result<(), String> {
        Recorder::append(self, doc, seq, data)
    }

    fn flush(&self) {
        Recorder::flush(self);
    }
}
