//! Responses the proxy writes itself: short texts, errors with a reason header, JSON, and the
//! 408 for a request body that stopped arriving. Every module that answers on its own uses
//! these, so proxy-made answers look alike and are never cached.

use crate::body::ProxyBody;
use bytes::Bytes;
use http::header::{self, HeaderName, HeaderValue};
use http::{Response, StatusCode, Version};

/// What a response source made of one request: the origin's (or the recording's) response,
/// headers as the origin sent them, or an answer the proxy made itself (errors, misses,
/// timeouts) that must reach the browser as it is.
pub(crate) type Answer = Result<Response<ProxyBody>, Response<ProxyBody>>;

/// Header naming why the proxy itself answered (errors, replay misses).
pub(crate) const X_SHEPHERD_ERROR: HeaderName = HeaderName::from_static("x-shepherd-error");

/// A response with `content_type` that no cache keeps.
pub(crate) fn with_type(
    status: StatusCode,
    content_type: &'static str,
    body: ProxyBody,
) -> Response<ProxyBody> {
    let mut resp = Response::new(body);
    *resp.status_mut() = status;
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

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
    let mut resp = with_type(
        status,
        "text/plain; charset=utf-8",
        ProxyBody::full(Bytes::from_static(text.as_bytes())),
    );
    if let Some((name, value)) = extra {
        resp.headers_mut()
            .insert(name, HeaderValue::from_static(value));
    }
    resp
}

/// `200 OK` with a JSON body.
pub(crate) fn json(value: serde_json::Value) -> Response<ProxyBody> {
    with_type(
        StatusCode::OK,
        "application/json",
        ProxyBody::full(value.to_string()),
    )
}

/// A proxy error response with a dynamic reason, also in `x-shepherd-error` (printable ASCII,
/// at most 300 characters, so any reason makes a valid header).
pub(crate) fn error(status: StatusCode, reason: &str) -> Response<ProxyBody> {
    let mut resp = with_type(
        status,
        "text/plain; charset=utf-8",
        ProxyBody::full(format!("shepherd: {reason}\n")),
    );
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
        resp.headers_mut().insert(X_SHEPHERD_ERROR, v);
    }
    resp
}

/// The answer to a request whose body stopped arriving: 408, and on HTTP/1 the connection is
/// closed (the rest of the body would otherwise be read as the next request).
pub(crate) fn body_timeout(version: Version, url: &str) -> Response<ProxyBody> {
    tracing::warn!(
        url,
        "answering 408: the client stopped sending the request body"
    );
    let mut resp = error(
        StatusCode::REQUEST_TIMEOUT,
        "request body timed out (the client stopped sending)",
    );
    if version < Version::HTTP_2 {
        resp.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    resp
}
