//! Plain data types shared by the store, HAR conversion and the replay matcher.

use serde::{Deserialize, Serialize};

/// Identifies one exchange inside a recording. Ids grow in the order requests *started*, so
/// they double as the recording order (`seq`). Aborted exchanges leave gaps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ExchangeId(pub i64);

/// Identifies one recording session inside a recording file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SessionId(pub i64);

/// One header line, kept exactly as received: name as sent (case preserved), value as raw bytes
/// (values are not guaranteed to be UTF-8 on the wire).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Header {
    /// Header name as received.
    pub name: String,
    /// Raw value bytes.
    pub value: Vec<u8>,
}

impl Header {
    /// Builds a header from text.
    pub fn new(name: impl Into<String>, value: impl Into<Vec<u8>>) -> Self {
        Header {
            name: name.into(),
            value: value.into(),
        }
    }

    /// The value as text, with invalid UTF-8 replaced (for display and matching only).
    pub fn value_str(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.value)
    }
}

/// First value of header `name` (ASCII case-insensitive) in an ordered header list.
pub fn header_value<'a>(headers: &'a [Header], name: &str) -> Option<&'a [u8]> {
    headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case(name))
        .map(|h| h.value.as_slice())
}

/// The request line and headers, as the browser sent them (before any proxy change).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestHead {
    /// Method, e.g. `GET`.
    pub method: String,
    /// Absolute URL (`https://host[:port]/path?query`), the form replay matches on.
    pub url: String,
    /// Protocol between browser and proxy: `HTTP/1.0`, `HTTP/1.1`, `HTTP/2`.
    pub http_version: String,
    /// Headers in order, duplicates kept.
    pub headers: Vec<Header>,
}

/// The status line and headers as the origin sent them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResponseHead {
    /// Status code.
    pub status: u16,
    /// Reason phrase when the origin spoke HTTP/1 (empty for HTTP/2).
    pub reason: String,
    /// Protocol between proxy and origin: `HTTP/1.1`, `HTTP/2`.
    pub http_version: String,
    /// Headers in order, duplicates kept. `Content-Encoding` describes the stored body.
    pub headers: Vec<Header>,
}

/// When an exchange happened and how long its phases took. All durations in microseconds;
/// `None` when the phase did not happen (reused connection) or is unknown (HAR `-1`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timings {
    /// Wall-clock start of the request, microseconds since the Unix epoch.
    pub started_unix_us: i64,
    /// Waiting for a connection slot.
    pub blocked_us: Option<i64>,
    /// DNS resolution.
    pub dns_us: Option<i64>,
    /// TCP connect (including TLS, as in HAR).
    pub connect_us: Option<i64>,
    /// TLS handshake (part of `connect_us`).
    pub ssl_us: Option<i64>,
    /// Sending the request.
    pub send_us: i64,
    /// Waiting for the first response byte.
    pub wait_us: i64,
    /// Receiving the response body.
    pub receive_us: i64,
}

impl Timings {
    /// A timing record starting now with all phases zero.
    pub fn starting_now() -> Self {
        Timings {
            started_unix_us: now_unix_us(),
            ..Timings::default()
        }
    }
}

/// Current time in microseconds since the Unix epoch (0 if the clock is before 1970).
pub fn now_unix_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Size and digest of a stored body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BodyInfo {
    /// Length in bytes as stored (still content-encoded for responses).
    pub len: u64,
    /// SHA-256 of the stored bytes.
    pub sha256: [u8; 32],
}

/// One stored exchange without its bodies (read the bodies with
/// [`crate::Recording::request_body`] / [`crate::Recording::response_body`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exchange {
    /// Id (also the recording order).
    pub id: ExchangeId,
    /// Session it belongs to.
    pub session: SessionId,
    /// Request as the browser sent it.
    pub request: RequestHead,
    /// Request body size and digest.
    pub request_body: BodyInfo,
    /// Response as the origin sent it; `None` if the exchange failed before a response.
    pub response: Option<ResponseHead>,
    /// Response body size and digest (empty when there is no response).
    pub response_body: BodyInfo,
    /// Timings.
    pub timings: Timings,
    /// The request was a WebSocket upgrade (its messages: [`crate::Recording::ws_messages`]).
    pub websocket: bool,
    /// Why the exchange failed (upstream unreachable, reset, ...), if it did.
    pub error: Option<String>,
}

/// One recording session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInfo {
    /// Id.
    pub id: SessionId,
    /// Free-form label (`record`, `har import site.har`, ...).
    pub label: String,
    /// When the session started, microseconds since the Unix epoch.
    pub started_unix_us: i64,
}

/// Which side of an exchange a body belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Part {
    /// The request body.
    Request,
    /// The response body.
    Response,
}

/// A stored trace (one per document) and its size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceInfo {
    /// Session the trace was uploaded in.
    pub session: SessionId,
    /// Document id chosen by the runtime.
    pub doc: String,
    /// Page URL from the trace header line, when the header has been received.
    pub page_url: Option<String>,
    /// Number of batches stored.
    pub batches: u64,
    /// Total bytes stored.
    pub bytes: u64,
}

/// Negotiated protocol towards one origin during a session (replay serves the same).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostProtocol {
    /// Session.
    pub session: SessionId,
    /// `host:port`.
    pub authority: String,
    /// ALPN protocol id (`h2`, `http/1.1`), empty for plain HTTP.
    pub alpn: String,
}

/// Called by long operations as they go with `(done, total)` in the unit the operation
/// documents (exchanges, entries), so a front end can show progress; `total` may grow.
pub type Progress<'a> = &'a mut dyn FnMut(u64, u64);
