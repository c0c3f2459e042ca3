//! The path every HTTP request of an intercepted origin takes, whatever the proxy's source:
//! the source answers (live origin, optionally recorded, or the recording) → response headers
//! made fit for the browser → holds → the rewrite stage → the browser. Answers the proxy makes
//! itself (errors, misses, timeouts) skip the stages.

mod gates;
mod hold;
mod rewrite;

pub use hold::split_before_scripts;

use crate::body::ProxyBody;
use crate::client_body::ClientBody;
use crate::respond;
use crate::state::{Shared, Target};
use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, Request, Response, StatusCode, Version};

/// Answers one HTTP request for `url`.
pub(crate) async fn http(
    shared: &Shared,
    target: &Target,
    url: http::Uri,
    req: Request<ClientBody>,
) -> Response<ProxyBody> {
    // What the rewriter needs about the request outlives the request itself.
    let for_rewrite = shared
        .rewriter
        .as_ref()
        .filter(|_| req.method() != Method::HEAD)
        .map(|r| (r.clone(), req.method().clone(), req.headers().clone()));
    // A page's own hold marker never leaves the proxy (page_holds.rs).
    let (url, page_hold) = match crate::page_holds::take_marker(&url) {
        Some((clean, key)) => (clean, Some(key)),
        None => (url, None),
    };
    let url_s = url.to_string();
    // A held answer keeps one of the browser's few HTTP/1.1 connections to the origin busy.
    let http1 = req.version() < Version::HTTP_2;
    let resp = match shared.source.exchange(&shared.stats, url, req).await {
        Ok(r) => r,
        Err(answer) => return answer,
    };
    if let Some(key) = page_hold {
        let origin = http1.then(|| target.origin());
        shared.page_holds.wait(key, origin.as_deref()).await;
    }
    let (mut parts, body) = resp.into_parts();
    crate::headers::response_to_browser(&mut parts.headers);
    if let Some(rev) = &shared.reverse {
        relativize_location(&mut parts.headers, rev);
    }
    parts.version = Version::HTTP_11;
    let body = match hold::apply(
        &shared.holds,
        &url_s,
        &mut parts,
        body,
        shared.limits.max_rewrite_body,
    )
    .await
    {
        Ok(b) => b,
        Err(e) => {
            tracing::warn!(url = %url_s, "held response failed: {e}");
            return respond::error(StatusCode::BAD_GATEWAY, "upstream body failed");
        }
    };
    let Some((rewriter, method, headers)) = for_rewrite else {
        return Response::from_parts(parts, body);
    };
    let page_token = shared.secrets.page_token(&target.origin());
    let runtime_version = shared
        .runtime_js
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .version
        .clone();
    let info = rewrite::RequestInfo {
        method: &method,
        url: &url_s,
        headers: &headers,
        page_token: &page_token,
        runtime_version: &runtime_version,
        page_holds: &shared.page_holds,
        metrics: &shared.metrics,
    };
    rewrite::apply(
        &rewriter,
        &info,
        parts,
        body,
        shared.limits.max_rewrite_body,
    )
    .await
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
