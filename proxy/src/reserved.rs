//! The reserved namespace `/__shepherd/*`, answered by the proxy on every origin and never
//! forwarded. Everything but the CA page needs the per-run secret (`?s=`); bodies are bounded.

use crate::body::ProxyBody;
use crate::client_body::ClientBody;
use crate::forward::{error_response, simple};
use crate::limits::constant_time_eq;
use crate::server::{ModeState, Shared, Target};
use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Limited};
use std::sync::Arc;

fn query_param<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == name).then_some(v)
    })
}

fn respond(status: StatusCode, content_type: &'static str, body: ProxyBody) -> Response<ProxyBody> {
    let mut resp = Response::new(body);
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

fn json(value: serde_json::Value) -> Response<ProxyBody> {
    respond(
        StatusCode::OK,
        "application/json",
        ProxyBody::full(value.to_string()),
    )
}

const CA_PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>Shepherd CA</title></head>
<body>
<h1>Shepherd certificate authority</h1>
<p>Shepherd intercepts HTTPS to instrument pages. Browsers accept its certificates once they
trust this CA, or when started with <code>--ignore-certificate-errors-spki-list=SPKI</code>
(print SPKI with <code>shepherd ca spki</code>).</p>
<ul>
<li><a href="/__shepherd/ca.pem">shepherd-ca.pem</a> (PEM: Linux, Firefox, Android)</li>
<li><a href="/__shepherd/ca.der">shepherd-ca.cer</a> (DER: Windows, macOS, iOS)</li>
</ul>
<h2>Install</h2>
<ul>
<li>Chromium on Linux: Settings, Privacy and security, Security, Manage certificates,
Authorities, Import, then tick "Trust this certificate for identifying websites".
Or: <code>certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n shepherd -i shepherd-ca.pem</code>.</li>
<li>Firefox: Settings, Privacy &amp; Security, Certificates, View Certificates, Authorities,
Import.</li>
<li>Debian/Ubuntu system store: copy to <code>/usr/local/share/ca-certificates/shepherd.crt</code>
and run <code>update-ca-certificates</code>.</li>
<li>macOS: open the .cer file, then in Keychain Access set it to "Always Trust".</li>
<li>Windows: open the .cer file, Install Certificate, "Trusted Root Certification Authorities".</li>
</ul>
<p>Anyone holding the CA key can impersonate any site to a browser that trusts it: the key
stays on this machine (mode 0600); remove the CA from the browser when you are done.</p>
</body></html>
"#;

/// The CA page and downloads (`http://shepherd.ca/`, `/__shepherd/ca*`); no secret needed.
pub(crate) fn ca_page(shared: &Shared, path: &str) -> Response<ProxyBody> {
    let ca = &shared.ca;
    let tail = path.trim_start_matches("/__shepherd");
    match tail {
        "/ca.pem" | "/cert.pem" => {
            let mut r = respond(
                StatusCode::OK,
                "application/x-pem-file",
                ProxyBody::full(ca.cert_pem().to_string()),
            );
            r.headers_mut().insert(
                header::CONTENT_DISPOSITION,
                HeaderValue::from_static("attachment; filename=\"shepherd-ca.pem\""),
            );
            r
        }
        "/ca.der" | "/ca.cer" | "/cert.cer" => {
            let mut r = respond(
                StatusCode::OK,
                "application/x-x509-ca-cert",
                ProxyBody::full(ca.cert_der().to_vec()),
            );
            r.headers_mut().insert(
                header::CONTENT_DISPOSITION,
                HeaderValue::from_static("attachment; filename=\"shepherd-ca.cer\""),
            );
            r
        }
        _ => respond(
            StatusCode::OK,
            "text/html; charset=utf-8",
            ProxyBody::full(Bytes::from_static(CA_PAGE.as_bytes())),
        ),
    }
}

/// Dispatches `/__shepherd/*`.
pub(crate) async fn handle(
    shared: Arc<Shared>,
    target: &Target,
    req: Request<ClientBody>,
) -> Response<ProxyBody> {
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    let tail = path.trim_start_matches("/__shepherd");
    if tail == "/ca" || tail.starts_with("/ca.") || tail == "/cert.pem" || tail == "/cert.cer" {
        return ca_page(&shared, &path);
    }
    if let Some(name) = path.strip_prefix(MAP_PREFIX) {
        // Devtools fetch maps without our secret; see `source_map`.
        return source_map(&shared, target, req.method(), name, &query).await;
    }
    let secret_ok = query_param(&query, "s")
        .is_some_and(|s| constant_time_eq(s.as_bytes(), shared.secret.as_bytes()));
    if !secret_ok {
        shared
            .stats
            .rejected
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::info!(origin = %target.authority, path, "reserved endpoint without the secret, refused");
        return simple(
            StatusCode::FORBIDDEN,
            "forbidden: missing or wrong secret\n",
        );
    }
    let method = req.method().clone();
    match (method, tail) {
        (Method::GET, "/runtime.js") => respond(
            StatusCode::OK,
            "application/javascript; charset=utf-8",
            ProxyBody::full(Bytes::from_static(shared.runtime_js.as_bytes())),
        ),
        (Method::POST, "/trace") => {
            let doc = query_param(&query, "doc").unwrap_or("").to_string();
            let seq = query_param(&query, "seq").and_then(|s| s.parse::<u64>().ok());
            let (Some(seq), false) = (seq, doc.is_empty() || doc.len() > 200) else {
                return simple(StatusCode::BAD_REQUEST, "trace needs doc= and seq=\n");
            };
            let body = match read_body(&shared, req).await {
                Ok(b) => b,
                Err(r) => return r,
            };
            let result = match (&shared.mode, &shared.trace_sink) {
                (ModeState::Record(r), _) => r.append_trace(&doc, seq, &body),
                (_, Some(sink)) => sink.append(&doc, seq, &body),
                _ => Ok(()),
            };
            match result {
                Ok(()) => respond(StatusCode::NO_CONTENT, "text/plain", ProxyBody::Empty),
                Err(e) => error_response(StatusCode::INTERNAL_SERVER_ERROR, &e),
            }
        }
        (Method::POST, "/instrument") => {
            let kind = query_param(&query, "kind").unwrap_or("script").to_string();
            // `html`: a fragment for document.write / innerHTML (inline code instrumented).
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
            let body = match read_body(&shared, req).await {
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
                Ok(s) => respond(StatusCode::OK, content_type, ProxyBody::full(s)),
                Err(_) => error_response(StatusCode::INTERNAL_SERVER_ERROR, "instrumenter failed"),
            }
        }
        (m, t) if t.starts_with("/control/") => {
            control(&shared, &m, &t["/control/".len()..], &query)
        }
        _ => simple(StatusCode::NOT_FOUND, "no such shepherd endpoint\n"),
    }
}

/// Where source maps of rewritten scripts are served (`<prefix><id>.map?url=SCRIPT`).
pub(crate) const MAP_PREFIX: &str = "/__shepherd/map/";

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
    let valid = !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !valid {
        return simple(StatusCode::NOT_FOUND, "no such source map\n");
    }
    let url = percent_decode(query_param(query, "url").unwrap_or(""));
    let mut map = shared
        .rewriter
        .as_ref()
        .and_then(|r| r.source_map(id, &url));
    // The page's own map, when the script had one: chain it so positions reach its sources.
    // Only from the origin this map is requested on (where devtools resolve the header): the
    // path takes no secret, so it must not let anyone make the proxy fetch other hosts.
    let page = query_param(query, "page")
        .map(percent_decode)
        .filter(|p| same_origin(p, target));
    if let (Some(ours), Some(page)) = (map.as_deref(), page.as_deref()) {
        match crate::source_map::fetch_page_map(shared, page).await {
            Some(page_map) => match crate::source_map::chain(ours, &page_map, page) {
                Ok(chained) => map = Some(chained),
                Err(e) => tracing::info!(url, page, "source map not chained: {e}"),
            },
            None => tracing::info!(url, page, "page's source map unavailable, not chained"),
        }
    }
    match map {
        Some(json) => respond(
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

/// Whether `url` is on `target`'s scheme and authority (default ports made explicit).
fn same_origin(url: &str, target: &Target) -> bool {
    let Ok(u) = url.parse::<http::Uri>() else {
        return false;
    };
    let default = |scheme: Option<&str>| if scheme == Some("http") { 80 } else { 443 };
    let (Some(scheme), Some(auth)) = (u.scheme_str(), u.authority()) else {
        return false;
    };
    scheme == target.scheme.as_str()
        && auth.host().eq_ignore_ascii_case(target.authority.host())
        && auth.port_u16().unwrap_or(default(Some(scheme)))
            == target
                .authority
                .port_u16()
                .unwrap_or(default(Some(target.scheme.as_str())))
}

/// Escapes a URL for use as a query value (everything but unreserved characters).
pub(crate) fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 3 / 2);
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

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
                Err(crate::forward::body_timeout_response(version, &path))
            } else if e.is::<http_body_util::LengthLimitError>() {
                Err(simple(StatusCode::PAYLOAD_TOO_LARGE, "body too large\n"))
            } else {
                Err(simple(StatusCode::BAD_REQUEST, "body could not be read\n"))
            }
        }
    }
}

/// `/__shepherd/control/*`: holds, releases, replay reset.
fn control(shared: &Shared, method: &Method, what: &str, query: &str) -> Response<ProxyBody> {
    let holds = &shared.holds;
    if what == "holds" && method == Method::GET {
        return json(serde_json::json!({ "held": holds.pending() }));
    }
    if method != Method::POST {
        return simple(
            StatusCode::METHOD_NOT_ALLOWED,
            "control endpoints take POST\n",
        );
    }
    match what {
        "hold" => {
            if let Some(p) = query_param(query, "url") {
                let p = percent_decode(p);
                if p.is_empty() || p.len() > 2048 {
                    return simple(
                        StatusCode::BAD_REQUEST,
                        "url= pattern is empty or too long\n",
                    );
                }
                holds.hold_matching(&p);
            } else {
                holds.set_hold_all(query_param(query, "all") != Some("0"));
            }
            if let Some(split) = query_param(query, "split_html") {
                holds.set_split_html(split == "1");
            }
            json(serde_json::json!({ "ok": true }))
        }
        "unhold" => {
            holds.clear_rules();
            json(serde_json::json!({ "ok": true }))
        }
        "release" => {
            if query_param(query, "all").is_some() {
                let n = holds.release_all();
                return json(serde_json::json!({ "released": n }));
            }
            match query_param(query, "id").and_then(|s| s.parse::<u64>().ok()) {
                Some(id) if holds.release(id) => json(serde_json::json!({ "released": 1 })),
                Some(_) => simple(StatusCode::NOT_FOUND, "no such hold\n"),
                None => simple(StatusCode::BAD_REQUEST, "release needs id= or all=1\n"),
            }
        }
        "reset" => {
            shared.reset_replay();
            json(serde_json::json!({ "ok": true }))
        }
        _ => simple(StatusCode::NOT_FOUND, "no such control endpoint\n"),
    }
}

/// Decodes `%XX` escapes (and `+` as space) in a query value; invalid escapes stay as they are.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(v) => {
                        out.push(v);
                        i += 3;
                        continue;
                    }
                    None => out.push(b'%'),
                }
            }
            b'+' => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_query_values() {
        assert_eq!(percent_decode("a%2Fb+c"), "a/b c");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
        let url = "https://a.test/x y.js?q=1&r=é";
        assert_eq!(percent_decode(&percent_encode(url)), url);
        assert!(!percent_encode(url).contains(['&', '?', '/', ' ']));
        assert_eq!(query_param("s=1&doc=x", "doc"), Some("x"));
        assert_eq!(query_param("s=1&doc", "doc"), Some(""));
        assert_eq!(query_param("s=1", "doc"), None);
    }
}
