//! WebSocket record and replay: a session with an echo origin (that greets first) is recorded
//! through the proxy with every message in order; with the origin stopped, replay accepts the
//! upgrade and plays the origin's messages back as the client sends its own. Unrecorded
//! WebSocket URLs are refused with a reason, never forwarded.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use futures_util::{SinkExt, StreamExt};
use shepherd_proxy::ReplayOptions;
use shepherd_recording::{Recording, WsKind};
use shepherd_testkit::patience;
use std::time::Duration;
use tokio_tungstenite::tungstenite::{self, Message};

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_rustls::client::TlsStream<tokio::net::TcpStream>>;

async fn open(
    proxy: std::net::SocketAddr,
    authority: &str,
    ca: &impl TrustRoot,
    path: &str,
) -> Result<Ws, tungstenite::Error> {
    open_with_head(proxy, authority, ca, path)
        .await
        .map(|(ws, _)| ws)
}

async fn open_with_head(
    proxy: std::net::SocketAddr,
    authority: &str,
    ca: &impl TrustRoot,
    path: &str,
) -> Result<(Ws, http::HeaderMap), tungstenite::Error> {
    let tls = connect_tls(proxy, authority, "localhost", ca, &[b"http/1.1"]).await;
    let mut req = tungstenite::client::IntoClientRequest::into_client_request(format!(
        "wss://{authority}{path}"
    ))?;
    // Browsers offer compression; recording must keep the frames readable anyway.
    req.headers_mut().insert(
        "sec-websocket-extensions",
        "permessage-deflate; client_max_window_bits"
            .parse()
            .unwrap(),
    );
    let (ws, resp) = tokio_tungstenite::client_async(req, tls).await?;
    assert_eq!(resp.status(), 101);
    Ok((ws, resp.headers().clone()))
}

async fn next_message(ws: &mut Ws) -> Message {
    tokio::time::timeout(patience(Duration::from_secs(5)), ws.next())
        .await
        .expect("a message in time")
        .expect("stream open")
        .expect("no error")
}

/// The conversation both the live origin and the replay must hold.
async fn converse(ws: &mut Ws) {
    assert_eq!(next_message(ws).await, Message::text("welcome"));
    ws.send(Message::text("hello")).await.unwrap();
    assert_eq!(next_message(ws).await, Message::text("hello"));
    ws.send(Message::binary(vec![0u8, 1, 2, 255]))
        .await
        .unwrap();
    assert_eq!(
        next_message(ws).await,
        Message::binary(vec![0u8, 1, 2, 255])
    );
    let long = "x".repeat(70_000);
    ws.send(Message::text(long.clone())).await.unwrap();
    assert_eq!(next_message(ws).await, Message::text(long));
    ws.close(None).await.unwrap();
    // The closing handshake completes.
    while let Ok(Some(Ok(_))) =
        tokio::time::timeout(patience(Duration::from_secs(5)), ws.next()).await
    {}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_session_is_recorded_and_replayed_with_the_origin_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("ws.rec");
    let mut origin = Origin::start(true, true).await;
    let authority = format!("localhost:{}", origin.addr.port());
    {
        let (proxy, ca) =
            start_proxy(Source::Record(rec.clone()), Some(&origin.ca_der), |_| {}).await;
        let (mut ws, head) = open_with_head(proxy.addr(), &authority, &ca, "/ws?greet=1")
            .await
            .unwrap();
        assert!(
            head.get("x-origin-saw-extensions").is_none(),
            "recording must not let the origin negotiate compression"
        );
        converse(&mut ws).await;
        // Let the tunnel see the last frames before the recording closes.
        tokio::time::sleep(Duration::from_millis(200)).await;
        proxy.shutdown().await;
    }
    origin.stop().await;

    let stored = Recording::open_readonly(&rec).unwrap();
    let ids = stored.websocket_exchanges().unwrap();
    assert_eq!(ids.len(), 1);
    let msgs = stored.ws_messages(ids[0]).unwrap();
    let summary: Vec<(bool, WsKind, usize)> = msgs
        .iter()
        .map(|m| (m.from_client, m.kind, m.data.len()))
        .collect();
    assert_eq!(
        &summary[..7],
        &[
            (false, WsKind::Text, 7),
            (true, WsKind::Text, 5),
            (false, WsKind::Text, 5),
            (true, WsKind::Binary, 4),
            (false, WsKind::Binary, 4),
            (true, WsKind::Text, 70_000),
            (false, WsKind::Text, 70_000),
        ],
        "{summary:?}"
    );
    assert_eq!(msgs[0].data, b"welcome");
    assert_eq!(msgs[1].data, b"hello");
    assert_eq!(msgs[3].data, [0, 1, 2, 255]);
    assert!(
        summary[7..]
            .iter()
            .all(|(_, kind, _)| *kind == WsKind::Close),
        "then the closing handshake: {summary:?}"
    );
    assert!(msgs.windows(2).all(|w| w[0].at_us <= w[1].at_us));
    drop(stored);

    let (proxy, ca) = start_proxy(
        Source::Replay(rec.clone(), ReplayOptions::default()),
        None,
        |_| {},
    )
    .await;
    // Twice: the second connection to the URL gets the (last) recording again.
    for path in ["/ws?greet=1", "/ws?greet=1", "/ws?greet=other"] {
        let mut ws = open(proxy.addr(), &authority, &ca, path).await.unwrap();
        converse(&mut ws).await;
    }
    // The replayed greeting arrives without the client sending anything first.
    let mut ws = open(proxy.addr(), &authority, &ca, "/ws?greet=1")
        .await
        .unwrap();
    assert_eq!(next_message(&mut ws).await, Message::text("welcome"));

    // Not recorded: a clear refusal, no forwarding.
    match open(proxy.addr(), &authority, &ca, "/chat").await {
        Err(tungstenite::Error::Http(resp)) => {
            assert_eq!(resp.status(), 404);
            let why = resp.headers()["x-shepherd-error"].to_str().unwrap();
            assert!(why.contains("no recorded WebSocket"), "{why}");
        }
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("an unrecorded WebSocket was accepted"),
    }
    assert_eq!(proxy.upstream_connects(), 0);
}
