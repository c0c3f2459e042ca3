//! Live origins: requests go out through the pooled upstream client; with a recorder, request
//! and response bodies are teed into the recording as they stream (the response before any
//! decoding or rewriting).

use super::recorder::{Recorder, Side, TeeBody};
use crate::body::ProxyBody;
use crate::client_body::{ClientBody, TimeoutFlag};
use crate::respond::{self, Answer};
use crate::stats::Stats;
use crate::tls::UpstreamTrust;
use crate::upstream::UpstreamClient;
use http::header::{self, HeaderValue};
use http::{Request, StatusCode, Version};
use http_body::Body as _;
use http_body_util::{BodyExt, Limited};
use std::sync::Arc;
use std::time::Duration;

/// The largest body [`Live::fetch`] reads (a page's source map).
const MAX_FETCH: usize = 32 * 1024 * 1024;
/// How long [`Live::fetch`] may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// The live source: an upstream client, the TLS configuration for raw (WebSocket)
/// connections, and the recorder when recording.
pub(crate) struct Live {
    client: UpstreamClient,
    pub(super) tls: Arc<rustls::ClientConfig>,
    pub(super) recorder: Option<Arc<Recorder>>,
}

impl Live {
    pub fn new(
        trust: &UpstreamTrust,
        stats: &Stats,
        recorder: Option<Arc<Recorder>>,
    ) -> Result<Live, rustls::Error> {
        if matches!(trust, UpstreamTrust::Insecure) {
            tracing::warn!("upstream certificate verification is DISABLED (--insecure-upstream)");
        }
        let client = crate::upstream::build_client(trust, stats.upstream_connects.clone())?;
        let tls = Arc::new(crate::tls::client_config(trust)?);
        Ok(Live {
            client,
            tls,
            recorder,
        })
    }

    pub fn records(&self) -> bool {
        self.recorder.is_some()
    }

    pub fn flush(&self) {
        if let Some(r) = &self.recorder {
            r.flush();
        }
    }

    /// Sends the request to the origin; the answer's headers are the origin's.
    pub async fn exchange(&self, url: http::Uri, req: Request<ClientBody>) -> Answer {
        let (mut parts, body) = req.into_parts();
        let timed_out: TimeoutFlag = body.timeout_flag();
        let client_version = parts.version;
        let url_s = url.to_string();
        let recording = self
            .recorder
            .as_ref()
            .and_then(|r| r.begin(parts.method.as_str(), &url_s, parts.version, &parts.headers));
        crate::headers::request_to_origin(&mut parts.headers);
        parts.uri = url.clone();
        parts.version = Version::HTTP_11;
        let body = match &recording {
            Some(w) if !body.is_end_stream() => ProxyBody::boxed(TeeBody::new(
                ProxyBody::Client(body),
                w.clone(),
                Side::Request,
            )),
            _ => ProxyBody::Client(body),
        };
        let resp = match self.client.request(Request::from_parts(parts, body)).await {
            Ok(r) => r,
            Err(_) if timed_out.fired() => {
                if let Some(w) = &recording {
                    w.fail("request body timed out");
                }
                return Err(respond::body_timeout(client_version, &url_s));
            }
            Err(e) => {
                let reason = upstream_error_text(&e);
                tracing::info!("upstream error: {reason}");
                if let Some(w) = &recording {
                    w.fail(&reason);
                }
                return Err(respond::error(StatusCode::BAD_GATEWAY, &reason));
            }
        };
        let (parts, body) = resp.into_parts();
        let mut body = ProxyBody::Incoming(body);
        if let (Some(w), Some(r)) = (recording, &self.recorder) {
            r.note_origin_protocol(&url, parts.version);
            w.response_head(parts.status.as_u16(), parts.version, &parts.headers);
            if body.is_end_stream() {
                w.finish();
            } else {
                body = ProxyBody::boxed(TeeBody::new(body, w, Side::Response));
            }
        }
        Ok(http::Response::from_parts(parts, body))
    }

    /// `GET url` from the origin, decoded; `None` on any failure, a non-2xx answer, a body
    /// over 32 MiB or after 10 s. Not recorded: the browser did not ask for it.
    pub async fn fetch(&self, url: &str) -> Option<Vec<u8>> {
        let uri: http::Uri = url.parse().ok()?;
        let mut req = Request::new(ProxyBody::Empty);
        *req.uri_mut() = uri;
        req.headers_mut().insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_static("gzip, deflate, br, zstd"),
        );
        let fetch = async {
            let resp = self.client.request(req).await.ok()?;
            if !resp.status().is_success() {
                return None;
            }
            let coding = resp
                .headers()
                .get(header::CONTENT_ENCODING)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let body = Limited::new(resp.into_body(), MAX_FETCH)
                .collect()
                .await
                .ok()?
                .to_bytes();
            shepherd_recording::codec::decode(&coding, &body, MAX_FETCH as u64)
        };
        tokio::time::timeout(FETCH_TIMEOUT, fetch)
            .await
            .ok()
            .flatten()
    }
}

fn upstream_error_text(e: &hyper_util::client::legacy::Error) -> String {
    let mut s = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
}
