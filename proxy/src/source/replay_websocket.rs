//! WebSocket replay. An upgrade is matched to a recorded WebSocket exchange by URL (exact, then
//! the same URL without its query), with the usual ordered queue per URL (the nth connection
//! gets the nth recording, then the last repeats). The proxy accepts the upgrade itself and
//! plays the origin's recorded messages back: those recorded before the browser's first message
//! right after the handshake, and those that followed the browser's nth message as soon as the
//! live browser sends its nth message. An unrecorded URL is refused (404 with a reason header);
//! nothing is ever forwarded.

use crate::body::ProxyBody;
use crate::client_body::ClientBody;
use crate::respond::error as error_response;
use crate::stats::Stats;
use futures_util::{SinkExt, StreamExt};
use http::header::{self, HeaderValue};
use http::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use shepherd_recording::{ExchangeId, Recording, WsKind, WsMessage, header_value};
use std::collections::HashMap;
use std::sync::Mutex;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role};

/// Recorded WebSocket exchanges by URL, and how many connections each URL has had this run.
#[derive(Debug, Default)]
pub(crate) struct WsIndex {
    by_url: HashMap<String, Vec<ExchangeId>>,
    by_path: HashMap<String, Vec<ExchangeId>>,
    served: Mutex<HashMap<String, usize>>,
}

fn without_query(url: &str) -> &str {
    url.split(['?', '#']).next().unwrap_or(url)
}

impl WsIndex {
    /// Indexes every successful upgrade of `rec`.
    pub fn build(rec: &Recording) -> Result<WsIndex, shepherd_recording::Error> {
        let mut index = WsIndex::default();
        for id in rec.websocket_exchanges()? {
            let url = rec.exchange(id)?.request.url;
            index
                .by_path
                .entry(without_query(&url).to_string())
                .or_default()
                .push(id);
            index.by_url.entry(url).or_default().push(id);
        }
        Ok(index)
    }

    /// Number of recorded WebSocket connections.
    pub fn len(&self) -> usize {
        self.by_url.values().map(Vec::len).sum()
    }

    /// The recording for the next connection to `url`, and the tier that found it.
    fn next(&self, url: &str) -> Option<(ExchangeId, &'static str)> {
        let (key, ids, tier) = match self.by_url.get(url) {
            Some(ids) => (url.to_string(), ids, "exact"),
            None => {
                let path = without_query(url);
                (format!("path:{path}"), self.by_path.get(path)?, "path")
            }
        };
        let mut served = self.served.lock().unwrap_or_else(|p| p.into_inner());
        let n = served.entry(key).or_insert(0);
        let id = ids.get(*n).or(ids.last()).copied()?;
        *n += 1;
        Some((id, tier))
    }

    /// Rewinds the queues (new replay run).
    pub fn reset(&self) {
        self.served
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}

/// Answers a WebSocket upgrade from the recording.
pub(crate) async fn serve(
    index: &WsIndex,
    recording: &Recording,
    stats: &Stats,
    url: http::Uri,
    mut req: Request<ClientBody>,
) -> Response<ProxyBody> {
    let url_s = url.to_string();
    let Some(key) = req.headers().get(header::SEC_WEBSOCKET_KEY).cloned() else {
        return error_response(
            StatusCode::BAD_REQUEST,
            "WebSocket upgrade without Sec-WebSocket-Key",
        );
    };
    let Some((id, tier)) = index.next(&url_s) else {
        stats
            .replay_misses
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::warn!(url = %url_s, "replay miss: no recorded WebSocket connection");
        return error_response(
            StatusCode::NOT_FOUND,
            "replay miss: no recorded WebSocket connection for this URL",
        );
    };
    let rec = recording.clone();
    let loaded = tokio::task::spawn_blocking(move || {
        let ex = rec.exchange(id)?;
        let messages = rec.ws_messages(id)?;
        Ok::<_, shepherd_recording::Error>((ex, messages))
    })
    .await;
    let (exchange, messages) = match loaded {
        Ok(Ok(x)) => x,
        Ok(Err(e)) => {
            return error_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                &format!("recording: {e}"),
            );
        }
        Err(_) => {
            return error_response(StatusCode::INTERNAL_SERVER_ERROR, "recording read failed");
        }
    };
    tracing::debug!(
        url = %url_s,
        tier,
        exchange = id.0,
        messages = messages.len(),
        "replay hit (WebSocket)"
    );
    let mut resp = Response::new(ProxyBody::Empty);
    *resp.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let h = resp.headers_mut();
    h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    h.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes());
    if let Ok(v) = HeaderValue::from_str(&accept) {
        h.insert(header::SEC_WEBSOCKET_ACCEPT, v);
    }
    // The subprotocol the origin chose, when the browser offered one (never extensions: the
    // recorded payloads are plain).
    let recorded_protocol = exchange
        .response
        .as_ref()
        .and_then(|r| header_value(&r.headers, "sec-websocket-protocol"))
        .and_then(|v| HeaderValue::from_bytes(v).ok());
    if let Some(p) = recorded_protocol
        && req.headers().contains_key(header::SEC_WEBSOCKET_PROTOCOL)
    {
        h.insert(header::SEC_WEBSOCKET_PROTOCOL, p);
    }
    h.insert(
        http::HeaderName::from_static("x-shepherd-replay"),
        HeaderValue::from_static(tier),
    );
    let upgrade = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        match upgrade.await {
            Ok(io) => {
                let ws =
                    WebSocketStream::from_raw_socket(TokioIo::new(io), Role::Server, None).await;
                play(ws, messages, &url_s).await;
            }
            Err(e) => tracing::debug!(url = %url_s, "WebSocket upgrade: {e}"),
        }
    });
    resp
}

/// The origin's messages, grouped by the browser message they followed (group 0: before the
/// browser's first message). Recording stops at the browser's close (the close reply is the
/// WebSocket library's job).
fn script(messages: Vec<WsMessage>) -> (Vec<Vec<WsMessage>>, Vec<WsMessage>) {
    let mut groups = vec![Vec::new()];
    let mut client = Vec::new();
    for m in messages {
        if m.from_client {
            if m.kind == WsKind::Close {
                break;
            }
            client.push(m);
            groups.push(Vec::new());
        } else if let Some(g) = groups.last_mut() {
            g.push(m);
        }
    }
    (groups, client)
}

fn to_message(m: &WsMessage) -> Message {
    match m.kind {
        WsKind::Text => Message::Text(String::from_utf8_lossy(&m.data).into_owned().into()),
        WsKind::Binary => Message::Binary(m.data.clone().into()),
        WsKind::Close => {
            let frame = (m.data.len() >= 2).then(|| CloseFrame {
                code: u16::from_be_bytes([m.data[0], m.data[1]]).into(),
                reason: String::from_utf8_lossy(&m.data[2..]).into_owned().into(),
            });
            Message::Close(frame)
        }
    }
}

fn same_content(live: &Message, recorded: &WsMessage) -> bool {
    match (live, recorded.kind) {
        (Message::Text(t), WsKind::Text) => t.as_bytes() == recorded.data.as_slice(),
        (Message::Binary(b), WsKind::Binary) => b[..] == recorded.data[..],
        _ => false,
    }
}

async fn play<S>(ws: WebSocketStream<S>, messages: Vec<WsMessage>, url: &str)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (groups, client) = script(messages);
    let (mut sink, mut stream) = ws.split();
    let mut closed = false;
    let mut send = async |group: Option<&Vec<WsMessage>>, closed: &mut bool| {
        for m in group.into_iter().flatten() {
            if *closed {
                return;
            }
            if sink.send(to_message(m)).await.is_err() {
                *closed = true;
                return;
            }
            *closed = m.kind == WsKind::Close;
        }
    };
    send(groups.first(), &mut closed).await;
    let mut n = 0;
    while let Some(msg) = stream.next().await {
        let msg = match msg {
            Ok(m) => m,
            Err(e) => {
                tracing::debug!(url, "replayed WebSocket: {e}");
                break;
            }
        };
        match &msg {
            Message::Text(_) | Message::Binary(_) => {
                match client.get(n) {
                    Some(rec) if !same_content(&msg, rec) => {
                        tracing::info!(
                            url,
                            n,
                            "replayed WebSocket: the browser's message differs from the recording"
                        );
                    }
                    None => {
                        tracing::info!(
                            url,
                            n,
                            "replayed WebSocket: more browser messages than recorded"
                        );
                    }
                    _ => {}
                }
                n += 1;
                send(groups.get(n), &mut closed).await;
            }
            // The library answers pings and the closing handshake itself.
            _ => {}
        }
    }
}
