//! The reserved namespace `/__shepherd/*`, answered by the proxy on every intercepted origin and
//! never forwarded: what pages need, and nothing that steers the proxy. The runtime script, the
//! CA downloads and source maps are public (they hold no secret); trace uploads and
//! dynamic-code instrumentation need the origin's page credential (`t=`, see `secret`). The
//! control surface is not here: it lives on the operator's side (`control`), because every
//! script of every page can read whatever a page is given. Bodies are bounded.

use crate::body::ProxyBody;
use crate::client_body::ClientBody;
use crate::query;
use crate::respond::{self, simple, with_type};
use crate::source_map::MAP_PREFIX;
use crate::state::{Shared, Target};
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Limited};

/// Dispatches `/__shepherd/*`.
pub(crate) async fn handle(
    shared: &Shared,
    target: &Target,
    req: Request<ClientBody>,
) -> Response<ProxyBody> {
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    let tail = path.trim_start_matches("/__shepherd");
    if tail == "/ca" || tail.starts_with("/ca.") || tail == "/cert.pem" || tail == "/cert.cer" {
        return crate::ca_page::answer(&shared.ca, &path);
    }
    if let Some(name) = path.strip_prefix(MAP_PREFIX) {
        // Devtools fetch maps without our secret; see `source_map`.
        return source_map(shared, target, req.method(), name, &query).await;
    }
    let method = req.method().clone();
    match (method, tail) {
        (Method::GET, "/runtime.js") => runtime(shared, &query),
        (Method::POST, "/trace" | "/instrument" | "/hold/release" | "/repair") => {
            let origin = target.origin();
            let token = query::param(&query, "t").unwrap_or_default();
            if !shared.secrets.is_page_token(&origin, &token) {
                shared
                    .stats
                    .rejected
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                tracing::info!(
                    origin,
                    path,
                    "page endpoint without this origin's credential, refused"
                );
                return simple(
                    StatusCode::FORBIDDEN,
                    "forbidden: missing or wrong page credential for this origin\n",
                );
            }
            match tail {
                "/trace" => trace(shared, &origin, req, &query).await,
                "/hold/release" => hold_release(shared, &query),
                "/repair" => repair(shared, target, req, &query).await,
                _ => instrument(shared, req, &query).await,
            }
        }
        _ => simple(StatusCode::NOT_FOUND, "no such shepherd endpoint\n"),
    }
}

/// `GET /__shepherd/runtime.js`: the runtime. Asked for by its current version (`v=`, the
/// URL documents are given), it may be kept: that URL names this text only, so the browser
/// reuses it (≈ 300 KB not fetched again) and V8 may reuse its compiled code on the next
/// page. Any other URL (an old version, none) gets the current text, kept by no cache.
fn runtime(shared: &Shared, query: &str) -> Response<ProxyBody> {
    let (body, current) = {
        let r = shared.runtime_js.read().unwrap_or_else(|p| p.into_inner());
        let asked = query::param(query, "v").unwrap_or_default();
        (r.body.clone(), !asked.is_empty() && asked == r.version)
    };
    let mut resp = with_type(
        StatusCode::OK,
        "application/javascript; charset=utf-8",
        ProxyBody::full(body),
    );
    if current {
        resp.headers_mut().insert(
            http::header::CACHE_CONTROL,
            http::HeaderValue::from_static("private, max-age=31536000, immutable"),
        );
    }
    resp
}

/// `POST /__shepherd/trace?t=T&doc=DOC&seq=N`: one batch of a document's trace. The document
/// must belong to the origin the batch arrives on (its id carries the origin's prefix).
async fn trace(
    shared: &Shared,
    origin: &str,
    req: Request<ClientBody>,
    query: &str,
) -> Response<ProxyBody> {
    let doc = query::param(query, "doc").unwrap_or_default().into_owned();
    let seq = query::param(query, "seq").and_then(|s| s.parse::<u64>().ok());
    let (Some(seq), false) = (seq, doc.is_empty() || doc.len() > 200) else {
        return simple(StatusCode::BAD_REQUEST, "trace needs doc= and seq=\n");
    };
    if !shared.secrets.owns_doc(origin, &doc) {
        shared
            .stats
            .rejected
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::info!(
            origin,
            doc,
            "trace batch for a document of another origin, refused"
        );
        return simple(
            StatusCode::FORBIDDEN,
            "forbidden: this document's trace belongs to another origin\n",
        );
    }
    let Some(sink) = shared.traces.clone() else {
        return simple(
            StatusCode::NOT_FOUND,
            "this proxy keeps no traces (record or replay to keep them)\n",
        );
    };
    let body = match read_body(shared, req).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    // SQLite writes may wait on the disk: not on the async workers.
    let stored = tokio::task::spawn_blocking(move || sink.append(&doc, seq, &body)).await;
    match stored {
        Ok(Ok(())) => with_type(StatusCode::NO_CONTENT, "text/plain", ProxyBody::Empty),
        Ok(Err(e)) => {
            tracing::warn!(origin, "trace batch not stored: {e}");
            respond::error(StatusCode::INTERNAL_SERVER_ERROR, &e)
        }
        Err(_) => respond::error(StatusCode::INTERNAL_SERVER_ERROR, "trace store failed"),
    }
}

/// `POST /__shepherd/hold/release?g=TOKEN&n=N`: the page lets a response it asked the proxy
/// to hold through (`page_holds`).
fn hold_release(shared: &Shared, query: &str) -> Response<ProxyBody> {
    let token = query::param(query, "g").unwrap_or_default();
    match query::param(query, "n").and_then(|n| n.parse::<u64>().ok()) {
        Some(n) if shared.page_holds.release(&token, n) => {
            with_type(StatusCode::NO_CONTENT, "text/plain", ProxyBody::Empty)
        }
        _ => simple(StatusCode::BAD_REQUEST, "release needs g=TOKEN and n=N\n"),
    }
}

/// `POST /__shepherd/repair?doc=DOC`: a document's repair figures (`repair_stats`).
async fn repair(
    shared: &Shared,
    target: &Target,
    req: Request<ClientBody>,
    query: &str,
) -> Response<ProxyBody> {
    let doc = query::param(query, "doc").unwrap_or_default().into_owned();
    if doc.is_empty() || doc.len() > 200 {
        return simple(StatusCode::BAD_REQUEST, "repair needs doc=\n");
    }
    let body = match read_body(shared, req).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    match shared
        .repair
        .accept(&doc, &body, |page| target.same_origin(page))
    {
        Ok(delta) => {
            shared.metrics.report(&delta);
            with_type(StatusCode::NO_CONTENT, "text/plain", ProxyBody::Empty)
        }
        Err(e) => {
            tracing::info!(origin = %target.authority, "repair report refused: {e}");
            simple(StatusCode::BAD_REQUEST, "repair report refused\n")
        }
    }
}

/// `POST /__shepherd/instrument?kind=K`: dynamic code (`script`, `module`, `handler`) or an
/// HTML fragment (`html`, for `document.write` / `innerHTML`) instrumented by the rewriter.
async fn instrument(shared: &Shared, req: Request<ClientBody>, query: &str) -> Response<ProxyBody> {
    let kind = query::param(query, "kind")
        .unwrap_or(std::borrow::Cow::Borrowed("script"))
        .into_owned();
    if !matches!(kind.as_str(), "script" | "module" | "handler" | "html") {
        return simple(
            StatusCode::BAD_REQUEST,
            "kind must be script, module, handler or html\n",
        );
    }
    let content_type = if kind == "html" {
        "text/html; charset=utf-8"
    } else {
        "application/javascript; charset=utf-8"
    };
    shared
        .stats
        .instrument_requests
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let body = match read_body(shared, req).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let source = String::from_utf8_lossy(&body).into_owned();
    let rewriter = shared.rewriter.clone();
    let out = tokio::task::spawn_blocking(move || {
        let changed = rewriter.as_ref().and_then(|r| r.instrument(&kind, &source));
        changed.unwrap_or(source)
    })
    .await;
    match out {
        Ok(s) => with_type(StatusCode::OK, content_type, ProxyBody::full(s)),
        Err(_) => respond::error(StatusCode::INTERNAL_SERVER_ERROR, "instrumenter failed"),
    }
}

/// `GET /__shepherd/map/<id>.map?url=SCRIPT`: the source map of a rewritten script. No secret:
/// devtools fetch maps on their own, without the page's secret, and a map only describes code
/// the page itself loaded; its id is a content hash (256 bits), so it cannot be enumerated.
async fn source_map(
    shared: &Shared,
    target: &Target,
    method: &Method,
    name: &str,
    query: &str,
) -> Response<ProxyBody> {
    if method != Method::GET && method != Method::HEAD {
        return simple(StatusCode::METHOD_NOT_ALLOWED, "source maps take GET\n");
    }
    let Some(id) = name.strip_suffix(".map") else {
        return simple(StatusCode::NOT_FOUND, "no such source map\n");
    };
    if !crate::source_map::valid_id(id) {
        return simple(StatusCode::NOT_FOUND, "no such source map\n");
    }
    let url = query::param(query, "url").unwrap_or_default();
    let mut map = shared
        .rewriter
        .as_ref()
        .and_then(|r| r.source_map(id, &url));
    // The page's own map, when the script had one: chain it so positions reach its sources.
    // Only from the origin this map is requested on (where devtools resolve the header): the
    // path takes no secret, so it must not let anyone make the proxy fetch other hosts.
    let page = query::param(query, "page").filter(|p| target.same_origin(p));
    if let (Some(ours), Some(page)) = (map.as_deref(), page.as_deref()) {
        match shared.source.fetch(page).await {
            Some(page_map) => match crate::source_map::chain(ours, &page_map, page) {
                Ok(chained) => map = Some(chained),
                Err(e) => tracing::info!(%url, page, "source map not chained: {e}"),
            },
            None => tracing::info!(%url, page, "page's source map unavailable, not chained"),
        }
    }
    match map {
        Some(json) => with_type(
            StatusCode::OK,
            "application/json; charset=utf-8",
            ProxyBody::full(json),
        ),
        None => simple(
            StatusCode::NOT_FOUND,
            "no such source map (unknown, or evicted from the instrumentation cache)\n",
        ),
    }
}

/// A request body up to `max_control_body`; the proxy's own answer when it cannot be read.
async fn read_body(
    shared: &Shared,
    req: Request<ClientBody>,
) -> Result<Bytes, Response<ProxyBody>> {
    let version = req.version();
    let path = req.uri().path().to_string();
    let body = req.into_body();
    let timed_out = body.timeout_flag();
    match Limited::new(body, shared.limits.max_control_body)
        .collect()
        .await
    {
        Ok(c) => Ok(c.to_bytes()),
        Err(e) => {
            if timed_out.fired() {
                Err(respond::body_timeout(version, &path))
            } else if e.is::<http_body_util::LengthLimitError>() {
                Err(simple(StatusCode::PAYLOAD_TOO_LARGE, "body too large\n"))
            } else {
                Err(simple(StatusCode::BAD_REQUEST, "body could not be read\n"))
            }
        }
    }
}
