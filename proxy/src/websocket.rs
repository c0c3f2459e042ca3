//! WebSocket upgrades: the handshake is forwarded over a dedicated HTTP/1.1 connection, then
//! bytes are piped both ways unchanged. The handshake is recorded as a WebSocket exchange;
//! message content is not stored and replay answers upgrades with an error.

use crate::body::ProxyBody;
use crate::client_body::ClientBody;
use crate::forward::error_response;
use crate::server::{ModeState, Shared};
use http::header::{self, HeaderValue};
use http::{Request, Response, StatusCode, Version};
use hyper_util::rt::TokioIo;
use std::sync::Arc;

/// Whether `req` asks for a WebSocket upgrade (HTTP/1.1 style).
pub(crate) fn is_upgrade<B>(req: &Request<B>) -> bool {
    req.version() <= Version::HTTP_11
        && req
            .headers()
            .get(header::UPGRADE)
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"websocket"))
}

pub(crate) async fn handle(
    shared: Arc<Shared>,
    url: http::Uri,
    mut req: Request<ClientBody>,
) -> Response<ProxyBody> {
    let (Some(tls), Some(_)) = (shared.client_tls.as_ref(), shared.client.as_ref()) else {
        tracing::info!(%url, "WebSocket upgrade in replay mode: not replayed");
        if let ModeState::Replay(_) = &shared.mode {
            shared
                .stats
                .replay_misses
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        return error_response(
            StatusCode::NOT_IMPLEMENTED,
            "WebSocket content is not replayed",
        );
    };
    let recording = match &shared.mode {
        ModeState::Record(r) => r.begin("GET", &url.to_string(), req.version(), req.headers()),
        _ => None,
    };
    let client_upgrade = hyper::upgrade::on(&mut req);
    let mut headers = req.headers().clone();
    headers.remove(header::PROXY_AUTHORIZATION);
    headers.remove(http::HeaderName::from_static("proxy-connection"));
    if let Ok(host) = HeaderValue::from_str(url.authority().map_or("", |a| a.as_str())) {
        headers.insert(header::HOST, host);
    }
    let path = url
        .path_and_query()
        .map_or("/".to_string(), |p| p.as_str().to_string());
    let mut up_req = Request::new(ProxyBody::Empty);
    *up_req.uri_mut() = match path.parse() {
        Ok(u) => u,
        Err(_) => return error_response(StatusCode::BAD_REQUEST, "bad WebSocket path"),
    };
    *up_req.headers_mut() = headers;
    let io = match crate::upstream::connect_raw(&url, tls, &shared.stats.upstream_connects).await {
        Ok(io) => io,
        Err(e) => {
            if let Some(w) = &recording {
                w.fail(&e.to_string());
            }
            return error_response(StatusCode::BAD_GATEWAY, &format!("WebSocket connect: {e}"));
        }
    };
    let (mut sender, conn) = match hyper::client::conn::http1::handshake(TokioIo::new(io)).await {
        Ok(x) => x,
        Err(e) => return error_response(StatusCode::BAD_GATEWAY, &format!("WebSocket: {e}")),
    };
    tokio::spawn(async move {
        if let Err(e) = conn.with_upgrades().await {
            tracing::debug!("WebSocket upstream connection: {e}");
        }
    });
    let mut resp = match sender.send_request(up_req).await {
        Ok(r) => r,
        Err(e) => {
            if let Some(w) = &recording {
                w.fail(&e.to_string());
            }
            return error_response(StatusCode::BAD_GATEWAY, &format!("WebSocket: {e}"));
        }
    };
    if let Some(w) = &recording {
        w.response_head(resp.status().as_u16(), resp.version(), resp.headers());
    }
    if resp.status() != StatusCode::SWITCHING_PROTOCOLS {
        // The origin refused the upgrade: pass its answer on as an ordinary response.
        if let Some(w) = &recording {
            w.finish();
        }
        let (parts, body) = resp.into_parts();
        return Response::from_parts(parts, ProxyBody::Incoming(body));
    }
    if let Some(w) = &recording {
        w.finish_websocket();
    }
    let upstream_upgrade = hyper::upgrade::on(&mut resp);
    tokio::spawn(async move {
        let (client, upstream) = match tokio::try_join!(client_upgrade, upstream_upgrade) {
            Ok(x) => x,
            Err(e) => {
                tracing::debug!("WebSocket upgrade: {e}");
                return;
            }
        };
        let mut client = TokioIo::new(client);
        let mut upstream = TokioIo::new(upstream);
        if let Err(e) = tokio::io::copy_bidirectional(&mut client, &mut upstream).await {
            tracing::debug!("WebSocket tunnel closed: {e}");
        }
    });
    let mut out = Response::new(ProxyBody::Empty);
    *out.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    *out.headers_mut() = resp.headers().clone();
    out
}
