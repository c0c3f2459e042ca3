//! The rewrite stage: asks the rewrite hook what a response is, and when it is to be changed,
//! decodes its body and streams it through the HTML rewriter or collects it for the script
//! rewriter. Bodies the hook does not touch pass through still encoded, with their length.

use crate::body::{BoxError, ChunkTransform, PrefixBody, ProxyBody, TransformBody};
use crate::page_holds::PageHolds;
use crate::respond;
use crate::rewrite::{HtmlStream, ResponseMeta, RewriteKind, Rewriter, ScriptJob};
use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{HeaderMap, Method, Response, StatusCode};
use http_body_util::BodyExt;
use shepherd_recording::codec::{Decoder, parse_codings};
use std::sync::Arc;

/// What the stage needs to know about the request a response answers.
pub(crate) struct RequestInfo<'a> {
    pub method: &'a Method,
    pub url: &'a str,
    pub headers: &'a HeaderMap,
    /// The page credential of the response's origin.
    pub page_token: &'a str,
    /// The version of the runtime served now.
    pub runtime_version: &'a str,
    /// Where a document's hold points wait for the page (parser gates).
    pub page_holds: &'a Arc<PageHolds>,
    /// Where documents served with the runtime are counted.
    pub metrics: &'a crate::metrics::Metrics,
}

/// Runs `rewriter` on a response whose headers are ready for the browser. Script bodies over
/// `max_script` decoded bytes pass through unchanged.
pub(crate) async fn apply(
    rewriter: &Arc<dyn Rewriter>,
    req: &RequestInfo<'_>,
    mut parts: http::response::Parts,
    body: ProxyBody,
    max_script: usize,
) -> Response<ProxyBody> {
    let url = req.url;
    let meta = ResponseMeta {
        method: req.method,
        url,
        request_headers: req.headers,
        status: parts.status,
        page_token: req.page_token,
        runtime_version: req.runtime_version,
        hold_token: "",
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
    let module = match kind {
        RewriteKind::Html => {
            req.metrics.document_served();
            let token = crate::page_holds::new_token();
            let meta = ResponseMeta {
                hold_token: &token,
                ..meta
            };
            let stream = rewriter.html(&meta, &mut parts.headers);
            let holds = stream.hold_points();
            let body =
                ProxyBody::boxed(TransformBody::new(body, HtmlTransform { decoder, stream }));
            let body = if holds {
                req.page_holds.parser_token(&token);
                super::gates::gated(body, token, req.page_holds.clone())
            } else {
                body
            };
            return Response::from_parts(parts, body);
        }
        RewriteKind::Script { module } => module,
        RewriteKind::None => return Response::from_parts(parts, body),
    };
    let source = match collect_decoded(body, decoder, max_script).await {
        Ok(Collected::Whole(b)) => b,
        Ok(Collected::TooLarge(head, rest)) => {
            tracing::info!(url, "script larger than the rewrite limit, passed through");
            return Response::from_parts(parts, ProxyBody::boxed(PrefixBody::new(head, rest)));
        }
        Err(e) => {
            tracing::warn!(url, "script body: {e}");
            return respond::error(StatusCode::BAD_GATEWAY, "upstream body failed");
        }
    };
    let page_map = crate::source_map::page_map_url(&parts.headers, &source, url);
    let job = ScriptJob {
        url: url.to_string(),
        module,
        content_type: parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        fetch_dest: req
            .headers
            .get("sec-fetch-dest")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string(),
        page_token: req.page_token.to_string(),
        source,
    };
    let rewriter = rewriter.clone();
    let Ok(out) = tokio::task::spawn_blocking(move || rewriter.rewrite_script(job)).await else {
        return respond::error(StatusCode::INTERNAL_SERVER_ERROR, "rewriter panicked");
    };
    if let Some(id) = &out.source_map_id {
        crate::source_map::point_at(&mut parts.headers, id, url, page_map.as_deref());
    }
    if let Ok(v) = HeaderValue::from_str(&out.body.len().to_string()) {
        parts.headers.insert(header::CONTENT_LENGTH, v);
    }
    Response::from_parts(parts, ProxyBody::full(out.body))
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
struct DecodeOnly(Decoder);

impl ChunkTransform for DecodeOnly {
    fn feed(&mut self, chunk: Bytes) -> Result<Bytes, BoxError> {
        Ok(Bytes::from(self.0.feed(&chunk)?))
    }

    fn finish(&mut self) -> Result<Bytes, BoxError> {
        Ok(Bytes::from(self.0.finish()?))
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
                let rest = TransformBody::new(body, DecodeOnly(decoder));
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
