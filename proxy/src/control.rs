//! The control surface on the operator's side: holds, releases, replay reset and counters act
//! on the whole proxy, so a scheduler (the explorer, a test, an operator's script) can drive
//! network arrival and parsing order. It is served only on the control listener
//! (`ProxyConfig::control_listen`, its own address, never an intercepted origin) and needs
//! `Authorization: Bearer <operator secret>`; `ProxyHandle` offers the same in process.
//!
//! | request | answer |
//! |---|---|
//! | `GET /control/holds` | `{"held":[{"id","url","kind","chunk"}]}` |
//! | `POST /control/hold?url=SUBSTR[&split_html=1]` (no `url`: hold all; `all=0` stops) | `{"ok":true}` |
//! | `POST /control/unhold` | stop holding new responses |
//! | `POST /control/release?id=N` or `?all=1` | `{"released":n}` |
//! | `POST /control/reset` | rewind the replay queues (409 when not replaying) |
//! | `GET /control/repair` | repair policies' figures per page (`repair_stats`) |
//! | `GET /stats` | the proxy's counters |
//! | `GET /metrics` | Prometheus metrics (`metrics`): counters, connections, repair by policy |

use crate::body::ProxyBody;
use crate::query;
use crate::respond::{json, simple, simple_with, with_type};
use crate::state::Shared;
use http::header::{self, HeaderName};
use http::{Method, Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::net::TcpListener;

/// Binds the control listener at `at` and serves it in the background; returns its address.
pub(crate) async fn listen(at: SocketAddr, shared: Arc<Shared>) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(at).await?;
    let addr = listener.local_addr()?;
    if !addr.ip().is_loopback() {
        tracing::warn!(%addr, "control listener off loopback: only the operator secret guards it");
    }
    tokio::spawn(async move {
        loop {
            let Ok((tcp, peer)) = listener.accept().await else {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            };
            let shared = shared.clone();
            tokio::spawn(async move {
                let svc_shared = shared.clone();
                let service = service_fn(move |req: Request<Incoming>| {
                    let shared = svc_shared.clone();
                    async move { Ok::<_, Infallible>(answer(&shared, &req)) }
                });
                let http = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                if let Err(e) = http.serve_connection(TokioIo::new(tcp), service).await {
                    tracing::debug!(%peer, "control connection: {e}");
                }
            });
        }
    });
    tracing::info!(%addr, "control listener");
    Ok(addr)
}

/// One request on the control listener (bodies are never read: everything is in the query).
fn answer(shared: &Shared, req: &Request<Incoming>) -> Response<ProxyBody> {
    let bearer = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    if !shared.secrets.is_operator(bearer.trim()) {
        shared.stats.rejected.fetch_add(1, Ordering::Relaxed);
        return simple_with(
            StatusCode::UNAUTHORIZED,
            "the control surface needs Authorization: Bearer <operator secret>\n",
            Some((HeaderName::from_static("www-authenticate"), "Bearer")),
        );
    }
    let query = req.uri().query().unwrap_or("");
    let path = req.uri().path();
    if path == "/stats" && req.method() == Method::GET {
        return json(stats(shared));
    }
    if path == "/metrics" && req.method() == Method::GET {
        return with_type(
            StatusCode::OK,
            "text/plain; version=0.0.4; charset=utf-8",
            ProxyBody::full(bytes::Bytes::from(metrics_text(shared))),
        );
    }
    match path.strip_prefix("/control/") {
        Some(what) => control(shared, req.method(), what, query),
        None => simple(StatusCode::NOT_FOUND, "no such control endpoint\n"),
    }
}

/// The Prometheus exposition of the proxy's counters and metrics.
pub(crate) fn metrics_text(shared: &Shared) -> String {
    let s = &shared.stats;
    let n = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let held = u64::try_from(shared.holds.pending().len()).unwrap_or(u64::MAX);
    shared.metrics.render(&[
        (
            "shepherd_requests_total",
            "counter",
            "HTTP requests handled.",
            n(&s.requests),
        ),
        (
            "shepherd_rejected_requests_total",
            "counter",
            "Requests refused: malformed, unauthenticated, or over a limit.",
            n(&s.rejected),
        ),
        (
            "shepherd_connections_total",
            "counter",
            "Client connections accepted.",
            n(&s.connections),
        ),
        (
            "shepherd_open_connections",
            "gauge",
            "Client connections open now.",
            n(&s.open_connections),
        ),
        (
            "shepherd_refused_connections_total",
            "counter",
            "Connections closed at accept: their address is outside --allow.",
            n(&s.refused_network),
        ),
        (
            "shepherd_upstream_connects_total",
            "counter",
            "Connections opened towards origins.",
            n(&s.upstream_connects),
        ),
        (
            "shepherd_replay_misses_total",
            "counter",
            "Requests no recorded exchange matched (replay).",
            n(&s.replay_misses),
        ),
        (
            "shepherd_held_responses",
            "gauge",
            "Responses held by the control surface now.",
            held,
        ),
        (
            "shepherd_page_holds",
            "gauge",
            "Responses pages hold for themselves now (repair policies postponing scripts).",
            u64::try_from(shared.page_holds.waiting()).unwrap_or(u64::MAX),
        ),
    ])
}

/// The counters, as `GET /stats` answers them.
fn stats(shared: &Shared) -> serde_json::Value {
    let s = &shared.stats;
    serde_json::json!({
        "source": shared.source.describe(),
        "requests": s.requests.load(Ordering::Relaxed),
        "rejected": s.rejected.load(Ordering::Relaxed),
        "replay_misses": s.replay_misses.load(Ordering::Relaxed),
        "upstream_connects": s.upstream_connects.load(Ordering::Relaxed),
        "instrument_requests": s.instrument_requests.load(Ordering::Relaxed),
        "held": shared.holds.pending().len(),
    })
}

/// Answers `/control/<what>`.
fn control(shared: &Shared, method: &Method, what: &str, query: &str) -> Response<ProxyBody> {
    let holds = &shared.holds;
    if what == "holds" && method == Method::GET {
        return json(serde_json::json!({ "held": holds.pending() }));
    }
    if what == "repair" && method == Method::GET {
        return json(serde_json::json!({ "pages": shared.repair.summary() }));
    }
    if method != Method::POST {
        return simple(
            StatusCode::METHOD_NOT_ALLOWED,
            "control endpoints take POST\n",
        );
    }
    match what {
        "hold" => {
            if let Some(p) = query::param(query, "url") {
                if p.is_empty() || p.len() > 2048 {
                    return simple(
                        StatusCode::BAD_REQUEST,
                        "url= pattern is empty or too long\n",
                    );
                }
                holds.hold_matching(&p);
            } else {
                holds.set_hold_all(query::param(query, "all").as_deref() != Some("0"));
            }
            if let Some(split) = query::param(query, "split_html") {
                holds.set_split_html(split == "1");
            }
            json(serde_json::json!({ "ok": true }))
        }
        "unhold" => {
            holds.clear_rules();
            json(serde_json::json!({ "ok": true }))
        }
        "release" => {
            if query::param(query, "all").is_some() {
                let n = holds.release_all();
                return json(serde_json::json!({ "released": n }));
            }
            match query::param(query, "id").and_then(|s| s.parse::<u64>().ok()) {
                Some(id) if holds.release(id) => json(serde_json::json!({ "released": 1 })),
                Some(_) => simple(StatusCode::NOT_FOUND, "no such hold\n"),
                None => simple(StatusCode::BAD_REQUEST, "release needs id= or all=1\n"),
            }
        }
        "reset" => {
            if shared.source.reset() {
                json(serde_json::json!({ "ok": true }))
            } else {
                simple(
                    StatusCode::CONFLICT,
                    "nothing to reset: this proxy is not replaying\n",
                )
            }
        }
        _ => simple(StatusCode::NOT_FOUND, "no such control endpoint\n"),
    }
}
