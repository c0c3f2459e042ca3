//! One request on an intercepted origin: route it (CA page, reserved namespace, WebSocket,
//! replay, live), forward it through the pooled client, and prepare the response for the
//! browser (hop-by-hop headers, rewriting with decoding, recording tees).

use crate::body::{BoxError, ChunkTransform, ProxyBody, TransformBody};
use crate::client_body::{ClientBody, TimeoutFlag};
use crate::record::{Side, TeeBody};
use crate::rewrite::{HtmlStream, ResponseMeta, RewriteKind, ScriptJob};
use crate::server::{CA_HOST, ModeState, Shared, Target};
use bytes::Bytes;
use http::header::{self, HeaderName, HeaderValue};
use http::{HeaderMap, Method, Request, Response, StatusCode, Version};
use http_body::Body as _;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use shepherd_recording::codec::{Decoder, parse_codings};
use std::sync::Arc;

/// Header naming why the proxy itself answered (errors, replay misses).
pub(crate) const X_SHEPHERD_ERROR: HeaderName = HeaderName::from_static("x-shepherd-error");

/// A small text response from the proxy itself.
pub(crate) fn simple(status: StatusCode, text: &'static str) -> Response<ProxyBody> {
    simple_with(status, text, None)
}

/// Like [`simple`] with one extra header.
pub(crate) fn simple_with(
    status: StatusCode,
    text: &'static str,
    extra: Option<(HeaderName, &'static str)>,
) -> Response<ProxyBody> {
    let mut resp = Response::new(crate::server::static_body(text));
    *resp.status_mut() = status;
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some((name, value)) = extra {
        h.insert(name, HeaderValue::from_static(value));
    }
    resp
}

/// A proxy error response with a dynamic reason in `x-shepherd-error`.
pub(crate) fn error_response(status: StatusCode, reason: &str) -> Response<ProxyBody> {
    let mut resp = Response::new(ProxyBody::full(format!("shepherd: {reason}\n")));
    *resp.status_mut() = status;
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    let clean: String = reason
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .take(300)
        .collect();
    if let Ok(v) = HeaderValue::from_str(&clean) {
        h.insert(X_SHEPHERD_ERROR, v);
    }
    resp
}

/// The answer to a request whose body stopped arriving: 408, and on HTTP/1 the connection is
/// closed (the rest of the body would otherwise be read as the next request).
pub(crate) fn body_timeout_response(version: Version, url: &str) -> Response<ProxyBody> {
    tracing::warn!(
        url,
        "answering 408: the client stopped sending the request body"
    );
    let mut resp = error_response(
        StatusCode::REQUEST_TIMEOUT,
        "request body timed out (the client stopped sending)",
    );
    if version < Version::HTTP_2 {
        resp.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    resp
}

/// Routes one request for `target`.
pub(crate) async fn handle(
    shared: Arc<Shared>,
    target: Target,
    req: Request<Incoming>,
) -> Response<ProxyBody> {
    let timeout = shared.limits.body_timeout;
    let req = {
        let (parts, body) = req.into_parts();
        let body = ClientBody::new(body, timeout, || {
            target
                .url(&parts.uri)
                .map_or_else(|_| parts.uri.to_string(), |u| u.to_string())
        });
        Request::from_parts(parts, body)
    };
    if target.host() == CA_HOST {
        return crate::reserved::ca_page(&shared, req.uri().path());
    }
    if req.uri().path().starts_with("/__shepherd/") {
        return crate::reserved::handle(shared, &target, req).await;
    }
    let url = match target.url(req.uri()) {
        Ok(u) => u,
        Err(_) => return simple(StatusCode::BAD_REQUEST, "bad request target\n"),
    };
    if crate::websocket::is_upgrade(&req) {
        return crate::websocket::handle(shared, url, req).await;
    }
    match &shared.mode {
        ModeState::Replay(r) => {
            let r = r.clone();
            crate::replay::serve(shared, r, url, req).await
        }
        _ => forward(shared, url, req).await,
    }
}

/// Sends the request to the origin and streams the answer back.
async fn forward(
    shared: Arc<Shared>,
    url: http::Uri,
    req: Request<ClientBody>,
) -> Response<ProxyBody> {
    let Some(client) = shared.client.as_ref() else {
        return error_response(StatusCode::BAD_GATEWAY, "no upstream in this mode");
    };
    let (mut parts, body) = req.into_parts();
    let timed_out: TimeoutFlag = body.timeout_flag();
    let client_version = parts.version;
    let recording = match &shared.mode {
        ModeState::Record(r) => r.begin(
            parts.method.as_str(),
            &url.to_string(),
            parts.version,
            &parts.headers,
        ),
        _ => None,
    };
    // What the rewriter needs about the request outlives the request itself.
    let rewrite_ctx = shared
        .rewriter
        .as_ref()
        .map(|_| (parts.method.clone(), url.to_string(), parts.headers.clone()));
    let head_only = parts.method == Method::HEAD;
    crate::headers::request_to_origin(&mut parts.headers);
    let log_url = url.clone();
    parts.uri = url;
    parts.version = Version::HTTP_11;
    let body = match &recording {
        Some(w) if !body.is_end_stream() => ProxyBody::boxed(TeeBody::new(
            ProxyBody::Client(body),
            w.clone(),
            Side::Request,
        )),
        _ => ProxyBody::Client(body),
    };
    let resp = match client.request(Request::from_parts(parts, body)).await {
        Ok(r) => r,
        Err(_) if timed_out.fired() => {
            if let Some(w) = &recording {
                w.fail("request body timed out");
            }
            return body_timeout_response(client_version, &log_url.to_string());
        }
        Err(e) => {
            let reason = upstream_error_text(&e);
            tracing::info!("upstream error: {reason}");
            if let Some(w) = &recording {
                w.fail(&reason);
            }
            return error_response(StatusCode::BAD_GATEWAY, &reason);
        }
    };
    let (mut parts, body) = resp.into_parts();
    let mut body = ProxyBody::Incoming(body);
    if let Some(w) = recording {
        if let ModeState::Record(r) = &shared.mode {
            r.note_origin_protocol(&log_url, parts.version);
        }
        w.response_head(parts.status.as_u16(), parts.version, &parts.headers);
        if body.is_end_stream() {
            w.finish();
        } else {
            body = ProxyBody::boxed(TeeBody::new(body, w, Side::Response));
        }
    }
    crate::headers::response_to_browser(&mut parts.headers);
    if let Some(rev) = &shared.reverse {
        relativize_location(&mut parts.headers, rev);
    }
    parts.version = Version::HTTP_11;
    if let Some((method, url, req_headers)) = rewrite_ctx
        && !head_only
    {
        return apply_rewrite(&shared, &method, &url, &req_headers, parts, body).await;
    }
    Response::from_parts(parts, body)
}

/// In reverse mode, redirects to the origin itself become relative so the browser stays on
/// the proxy.
fn relativize_location(headers: &mut HeaderMap, target: &Target) {
    let Some(loc) = headers.get(header::LOCATION).and_then(|v| v.to_str().ok()) else {
        return;
    };
    let base = format!("{}://{}", target.scheme, target.authority);
    let Some(rest) = loc.strip_prefix(base.as_str()) else {
        return;
    };
    let rel = if rest.is_empty() { "/" } else { rest };
    if rel.starts_with('/')
        && let Ok(v) = HeaderValue::from_str(rel)
    {
        headers.insert(header::LOCATION, v);
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

/// Runs the rewrite hook on a response whose headers are ready for the browser.
pub(crate) async fn apply_rewrite(
    shared: &Shared,
    method: &Method,
    url: &str,
    req_headers: &HeaderMap,
    mut parts: http::response::Parts,
    body: ProxyBody,
) -> Response<ProxyBody> {
    let Some(rewriter) = shared.rewriter.as_ref() else {
        return Response::from_parts(parts, body);
    };
    let meta = ResponseMeta {
        method,
        url,
        request_headers: req_headers,
        status: parts.status,
        mode: shared.run_mode,
        secret: &shared.secret,
    };
    let kind = rewriter.plan(&meta, &mut parts.headers);
    if kind == RewriteKind::None || matches!(parts.status.as_u16(), 204 | 304) {
        return Response::from_parts(parts, body);
    }
    let codings = match parts.headers.get(header::CONTENT_ENCODING) {
        None => Vec::new(),
        Some(v) => match v.to_str().ok().and_then(parse_codings) {
            Some(c) => c,
            None => {
                tracing::info!(url, "unknown content-encoding, body not rewritten");
                return Response::from_parts(parts, body);
            }
        },
    };
    let decoder = match Decoder::new(&codings) {
        Ok(d) => d,
        Err(e) => {
            tracing::warn!(url, "decoder: {e}");
            return Response::from_parts(parts, body);
        }
    };
    // The body changes: its length and coding are no longer the origin's.
    parts.headers.remove(header::CONTENT_ENCODING);
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.remove(header::ETAG);
    match kind {
        RewriteKind::Html => {
            let stream = rewriter.html(&meta, &mut parts.headers);
            let body = TransformBody::new(body, HtmlTransform { decoder, stream });
            Response::from_parts(parts, ProxyBody::boxed(body))
        }
        _ => {
            let limit = shared.limits.max_rewrite_body;
            let collected = match collect_decoded(body, decoder, limit).await {
                Ok(b) => b,
                Err(e) => {
                    tracing::warn!(url, "script body: {e}");
                    return error_response(StatusCode::BAD_GATEWAY, "upstream body failed");
                }
            };
            let source = match collected {
                Collected::Whole(b) => b,
                Collected::TooLarge(head, rest) => {
                    tracing::info!(url, "script larger than the rewrite limit, passed through");
                    let body = ProxyBody::boxed(PrefixBody {
                        prefix: Some(head),
                        rest,
                    });
                    return Response::from_parts(parts, body);
                }
            };
            let rewriter = rewriter.clone();
            let page_map = crate::source_map::page_map_url(&parts.headers, &source, url);
            let job = ScriptJob {
                url: url.to_string(),
                mode: shared.run_mode,
                module: matches!(kind, RewriteKind::Script { module: true }),
                content_type: parts
                    .headers
                    .get(header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned),
                source,
            };
            let out = tokio::task::spawn_blocking(move || rewriter.rewrite_script(job)).await;
            let out = match out {
                Ok(b) => b,
                Err(_) => {
                    return error_response(StatusCode::INTERNAL_SERVER_ERROR, "rewriter panicked");
                }
            };
            if let Some(id) = &out.source_map_id {
                point_at_source_map(&mut parts.headers, id, url, page_map.as_deref());
            }
            if let Ok(v) = HeaderValue::from_str(&out.body.len().to_string()) {
                parts.headers.insert(header::CONTENT_LENGTH, v);
            }
            Response::from_parts(parts, ProxyBody::full(out.body))
        }
    }
}

/// The page's own map described the code before instrumentation; the browser gets ours
/// instead (`/__shepherd/map/ID.map?url=SCRIPT[&page=PAGE_MAP]`, resolved against the
/// script's origin; with `page`, the proxy chains the page's map when serving ours).
fn point_at_source_map(headers: &mut HeaderMap, id: &str, url: &str, page_map: Option<&str>) {
    headers.remove(HeaderName::from_static("sourcemap"));
    headers.remove(HeaderName::from_static("x-sourcemap"));
    let safe = id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !safe || id.is_empty() {
        tracing::warn!(url, "rewriter returned an unusable source map id");
        return;
    }
    let mut value = format!(
        "{}{id}.map?url={}",
        crate::reserved::MAP_PREFIX,
        crate::reserved::percent_encode(url)
    );
    if let Some(page) = page_map {
        value.push_str("&page=");
        value.push_str(&crate::reserved::percent_encode(page));
    }
    if let Ok(v) = HeaderValue::from_str(&value) {
        headers.insert(HeaderName::from_static("sourcemap"), v);
    }
}

struct HtmlTransform {
    decoder: Decoder,
    stream: Box<dyn HtmlStream>,
}

impl ChunkTransform for HtmlTransform {
    fn feed(&mut self, chunk: Bytes) -> Result<Bytes, BoxError> {
        let decoded = self.decoder.feed(&chunk)?;
        Ok(Bytes::from(self.stream.feed(&decoded)))
    }

    fn finish(&mut self) -> Result<Bytes, BoxError> {
        let tail = self.decoder.finish()?;
        let mut out = self.stream.feed(&tail);
        out.extend(self.stream.finish());
        Ok(Bytes::from(out))
    }
}

/// Decodes with a decoder carried over from the collecting phase.
struct DecodeOnly(Option<Decoder>);

impl ChunkTransform for DecodeOnly {
    fn feed(&mut self, chunk: Bytes) -> Result<Bytes, BoxError> {
        match self.0.as_mut() {
            Some(d) => Ok(Bytes::from(d.feed(&chunk)?)),
            None => Ok(chunk),
        }
    }

    fn finish(&mut self) -> Result<Bytes, BoxError> {
        match self.0.as_mut() {
            Some(d) => Ok(Bytes::from(d.finish()?)),
            None => Ok(Bytes::new()),
        }
    }
}

enum Collected {
    Whole(Bytes),
    /// Decoded head so far, and the rest of the body (decoding continues in it).
    TooLarge(Bytes, ProxyBody),
}

/// Collects and decodes a body up to `limit` decoded bytes.
async fn collect_decoded(
    mut body: ProxyBody,
    mut decoder: Decoder,
    limit: usize,
) -> Result<Collected, BoxError> {
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame?;
        if let Ok(data) = frame.into_data() {
            out.extend(decoder.feed(&data)?);
            if out.len() > limit {
                let rest = TransformBody::new(body, DecodeOnly(Some(decoder)));
                return Ok(Collected::TooLarge(
                    Bytes::from(out),
                    ProxyBody::boxed(rest),
                ));
            }
        }
    }
    out.extend(decoder.finish()?);
    Ok(Collected::Whole(Bytes::from(out)))
}

/// A body made of bytes already read followed by the rest of a stream.
pub(crate) struct PrefixBody {
    pub prefix: Option<Bytes>,
    pub rest: ProxyBody,
}

impl http_body::Body for PrefixBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, BoxError>>> {
        if let Some(p) = self.prefix.take() {
            return std::task::Poll::Ready(Some(Ok(http_body::Frame::data(p))));
        }
        std::pin::Pin::new(&mut self.rest).poll_frame(cx)
    }
}
