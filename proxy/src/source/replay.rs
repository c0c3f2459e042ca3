//! The replay source: every request is answered from the recording through the tiered
//! matcher, with no outbound connection. Misses get a configurable status on their own stream
//! (never a connection reset). Dates are shifted by the recording's age.

use super::recorder::to_headers;
use crate::body::{BoxError, ChannelBody, ProxyBody};
use crate::client_body::ClientBody;
use crate::respond::{self, Answer};
use crate::stats::Stats;
use bytes::Bytes;
use http::header::{HeaderName, HeaderValue};
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Limited};
use shepherd_recording::{
    DateShift, ExchangeId, LiveRequest, MatchConfig, Matcher, OriginProtocol, Recording, SessionId,
    normalize_authority,
};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

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

/// A request the replay answered (or missed) since the last reset, as the page sent it: what
/// an explorer compares between two executions ("the page sends other requests").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenRequest {
    /// `GET`, `POST`, …
    pub method: String,
    /// The absolute URL.
    pub url: String,
    /// SHA-256 of the body (hex, first 16 digits), when there is one.
    pub body: Option<String>,
    /// The `Cookie` header.
    pub cookie: Option<String>,
    /// Sent as telemetry: a beacon (`navigator.sendBeacon`, `fetch` with `keepalive`) or a
    /// hyperlink-auditing ping; its answer is not read.
    pub telemetry: bool,
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
    /// Requests seen since the last reset.
    seen: Mutex<Vec<SeenRequest>>,
    /// Recorded WebSocket connections.
    pub(crate) ws: super::replay_websocket::WsIndex,
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
        let ws = super::replay_websocket::WsIndex::build(&rec).map_err(|e| e.to_string())?;
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
            seen: Mutex::new(Vec::new()),
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
        self.seen.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// The requests seen since the last reset, in order.
    pub fn seen(&self) -> Vec<SeenRequest> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Answers one request from the recording: the recorded response with its headers (dates
/// shifted by the recording's age), or a miss.
pub(crate) async fn exchange(
    replayer: &Replayer,
    stats: &Stats,
    url: http::Uri,
    req: Request<ClientBody>,
) -> Answer {
    let (parts, body) = req.into_parts();
    let url_s = url.to_string();
    let timed_out = body.timeout_flag();
    let body = match Limited::new(body, MAX_MATCH_BODY).collect().await {
        Ok(c) => c.to_bytes(),
        Err(_) if timed_out.fired() => {
            return Err(respond::body_timeout(parts.version, &url_s));
        }
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            return Err(respond::error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "request body too large",
            ));
        }
        Err(e) => {
            return Err(respond::error(
                StatusCode::BAD_REQUEST,
                &format!("request body: {e}"),
            ));
        }
    };
    let headers = to_headers(&parts.headers);
    {
        let header = |n: &str| {
            parts
                .headers
                .get(n)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let keepalive = header("sec-fetch-mode").as_deref() == Some("no-cors")
            && header("sec-fetch-dest").as_deref() == Some("empty")
            && parts.method == http::Method::POST;
        let seen = SeenRequest {
            method: parts.method.to_string(),
            url: url_s.clone(),
            body: (!body.is_empty()).then(|| {
                use sha2::Digest;
                hex::encode(&sha2::Sha256::digest(&body)[..8])
            }),
            cookie: header("cookie"),
            telemetry: keepalive || header("ping-to").is_some(),
        };
        replayer
            .seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(seen);
    }
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
            stats
                .replay_misses
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            tracing::warn!(method = %parts.method, url = %url_s, reason = %miss, "replay miss");
            let status =
                StatusCode::from_u16(replayer.opts.miss_status).unwrap_or(StatusCode::NOT_FOUND);
            return Err(respond::error(status, &format!("replay miss: {miss}")));
        }
    };
    tracing::debug!(
        method = %parts.method,
        url = %url_s,
        tier = hit.tier.as_str(),
        exchange = hit.exchange.0,
        occurrence = hit.occurrence,
        "replay hit"
    );
    let rec = replayer.rec.clone();
    let id = hit.exchange;
    let head_only = parts.method == http::Method::HEAD;
    let loaded = tokio::task::spawn_blocking(move || load(&rec, id, head_only)).await;
    let (exchange, body) = match loaded {
        Ok(Ok(x)) => x,
        Ok(Err(e)) => {
            tracing::error!(url = %url_s, "replay read: {e}");
            return Err(respond::error(
                StatusCode::INTERNAL_SERVER_ERROR,
                &format!("recording: {e}"),
            ));
        }
        Err(_) => {
            return Err(respond::error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "recording read failed",
            ));
        }
    };
    let Some(mut head) = exchange.response else {
        return Err(respond::error(
            StatusCode::BAD_GATEWAY,
            "recorded exchange has no response",
        ));
    };
    if replayer.opts.shift_dates
        && let Some(shift) = replayer.shifts.get(&exchange.session)
    {
        shift.apply(&mut head.headers);
    }
    let mut resp = Response::new(body);
    *resp.status_mut() = StatusCode::from_u16(head.status).unwrap_or(StatusCode::OK);
    let h = resp.headers_mut();
    for hd in &head.headers {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(hd.name.as_bytes()),
            HeaderValue::from_bytes(&hd.value),
        ) {
            h.append(n, v);
        }
    }
    h.insert(
        X_SHEPHERD_REPLAY,
        HeaderValue::from_static(hit.tier.as_str()),
    );
    Ok(resp)
}

fn load(
    rec: &Recording,
    id: ExchangeId,
    head_only: bool,
) -> Result<(shepherd_recording::Exchange, ProxyBody), shepherd_recording::Error> {
    let exchange = rec.exchange(id)?;
    if head_only {
        return Ok((exchange, ProxyBody::Empty));
    }
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
    Ok((exchange, ProxyBody::boxed(ChannelBody::new(rx, Some(len)))))
}
