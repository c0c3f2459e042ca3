//! Live WebSocket upgrades: the handshake is forwarded over a dedicated HTTP/1.1 connection,
//! then bytes are piped both ways unchanged; when recording, a passive frame reader
//! (`ws_frames`) follows each direction and stores every message.

use super::live::Live;
use super::recorder::WsTap;
use crate::body::ProxyBody;
use crate::client_body::ClientBody;
use crate::respond::error as error_response;
use crate::stats::Stats;
use crate::ws_frames::FrameParser;
use http::header::{self, HeaderValue};
use http::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Copies one direction; with a tap, a copy of the bytes goes through a frame reader and
/// every complete message is stored. The bytes themselves are never altered.
async fn pump<R, W>(
    mut from: R,
    mut to: W,
    tap: Option<(&WsTap, bool)>,
    url: &str,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf = vec![0u8; 16 * 1024];
    let mut parser = tap.map(|_| FrameParser::default());
    let mut messages = Vec::new();
    loop {
        let n = from.read(&mut buf).await?;
        if n == 0 {
            return to.shutdown().await;
        }
        to.write_all(&buf[..n]).await?;
        if let (Some(p), Some((tap, from_client))) = (parser.as_mut(), tap) {
            p.push(&buf[..n], &mut messages);
            for m in messages.drain(..) {
                tap.record(from_client, m, url);
            }
            if let Some(why) = p.broken() {
                tracing::warn!(
                    url,
                    from_client,
                    "WebSocket stream not followed any more: {why}"
                );
                parser = None;
            }
        }
    }
}

/// Tunnels a WebSocket upgrade to the origin (and records its messages when recording).
pub(crate) async fn handle(
    live: &Live,
    stats: &Stats,
    url: http::Uri,
    mut req: Request<ClientBody>,
) -> Response<ProxyBody> {
    let recording = live
        .recorder
        .as_ref()
        .and_then(|r| r.begin("GET", &url.to_string(), req.version(), req.headers()));
    let client_upgrade = hyper::upgrade::on(&mut req);
    let mut headers = req.headers().clone();
    headers.remove(header::PROXY_AUTHORIZATION);
    headers.remove(http::HeaderName::from_static("proxy-connection"));
    if recording.is_some() {
        // Without extensions the origin sends plain frames, which the recorder can read.
        headers.remove(header::SEC_WEBSOCKET_EXTENSIONS);
    }
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
    let io = match crate::upstream::connect_raw(&url, &live.tls, &stats.upstream_connects).await {
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
    let tap = recording
        .as_ref()
        .and_then(|w| w.finish_websocket())
        .and_then(|id| live.recorder.as_ref().map(|r| r.ws_tap(id)));
    let upstream_upgrade = hyper::upgrade::on(&mut resp);
    let url_s = url.to_string();
    tokio::spawn(async move {
        let (client, upstream) = match tokio::try_join!(client_upgrade, upstream_upgrade) {
            Ok(x) => x,
            Err(e) => {
                tracing::debug!("WebSocket upgrade: {e}");
                return;
            }
        };
        let result = match tap {
            None => {
                let mut client = TokioIo::new(client);
                let mut upstream = TokioIo::new(upstream);
                tokio::io::copy_bidirectional(&mut client, &mut upstream)
                    .await
                    .map(|_| ())
            }
            Some(tap) => {
                let (client_r, client_w) = tokio::io::split(TokioIo::new(client));
                let (up_r, up_w) = tokio::io::split(TokioIo::new(upstream));
                tokio::try_join!(
                    pump(client_r, up_w, Some((&tap, true)), &url_s),
                    pump(up_r, client_w, Some((&tap, false)), &url_s),
                )
                .map(|_| ())
            }
        };
        if let Err(e) = result {
            tracing::debug!(url = %url_s, "WebSocket tunnel closed: {e}");
        }
    });
    let mut out = Response::new(ProxyBody::Empty);
    *out.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    *out.headers_mut() = resp.headers().clone();
    out
}
