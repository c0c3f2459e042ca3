//! Slow clients: a request body that stalls is cut off after the idle timeout with a 408 (h1:
//! and the connection closed; h2: on its own stream), a body that keeps trickling within the
//! timeout completes, and the proxy keeps serving everyone else meanwhile.

mod common;

use bytes::Bytes;
use common::*;
use http::Request;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper_util::rt::{TokioExecutor, TokioIo};
use shepherd_proxy::ReplayOptions;
use shepherd_testkit::patience;
use std::convert::Infallible;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const IDLE: Duration = Duration::from_millis(600);

fn short_body_timeout(c: &mut shepherd_proxy::ProxyConfig) {
    c.limits.body_timeout = IDLE;
}

/// A cut after the configured [`IDLE`] comes long before half the default body timeout (30 s),
/// however loaded the machine: a cut that late would be the default's, not the configuration's.
fn before_the_default() -> Duration {
    shepherd_proxy::Limits::default().body_timeout / 2
}

/// Reads what the proxy sends until it closes the stream (or 10 s, times the patience factor,
/// pass).
async fn read_until_closed(tls: &mut (impl AsyncReadExt + Unpin)) -> (String, bool) {
    let mut out = Vec::new();
    let closed = tokio::time::timeout(patience(Duration::from_secs(10)), tls.read_to_end(&mut out))
        .await
        .is_ok();
    (String::from_utf8_lossy(&out).into_owned(), closed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_h1_body_gets_408_and_the_connection_closes_while_others_are_served() {
    let origin = Origin::start(true, true).await;
    let (proxy, ca) = start_proxy(Source::Serve, Some(&origin.ca_der), short_body_timeout).await;
    let authority = format!("localhost:{}", origin.addr.port());
    let mut tls = connect_tls(proxy.addr(), &authority, "localhost", &ca, &[b"http/1.1"]).await;
    let started = Instant::now();
    tls.write_all(
        format!(
            "POST /echo HTTP/1.1\r\nHost: {authority}\r\nContent-Length: 100\r\n\r\nten bytes!"
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    // While that client stalls, another one is served normally.
    let mut other = Client::https(proxy.addr(), &authority, &ca, &[b"h2"]).await;
    let (resp, body) = other.get(&format!("https://{authority}/hello")).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(&body[..], b"hello from origin");

    let (answer, closed) = read_until_closed(&mut tls).await;
    let waited = started.elapsed();
    assert!(answer.starts_with("HTTP/1.1 408"), "answer: {answer}");
    let lower = answer.to_ascii_lowercase();
    assert!(lower.contains("connection: close"), "answer: {answer}");
    assert!(lower.contains("x-shepherd-error: request body timed out"));
    assert!(closed, "the proxy must close the connection after the 408");
    assert!(
        waited >= IDLE,
        "cut off after {waited:?}, before the timeout"
    );
    assert!(
        waited < before_the_default(),
        "cut off only after {waited:?}"
    );

    let (resp, _) = other.get(&format!("https://{authority}/hello")).await;
    assert_eq!(resp.status(), 200, "the proxy keeps serving after the cut");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn body_that_keeps_trickling_within_the_timeout_completes() {
    // The gaps between bytes must stay under the timeout however late a loaded machine wakes
    // the writer: 120 ms gaps against a 2 s timeout leave sixteenfold room, and the twenty
    // bytes take longer in total than the timeout.
    const TRICKLE_IDLE: Duration = Duration::from_secs(2);
    let origin = Origin::start(true, true).await;
    let (proxy, ca) = start_proxy(Source::Serve, Some(&origin.ca_der), |c| {
        c.limits.body_timeout = TRICKLE_IDLE;
    })
    .await;
    let authority = format!("localhost:{}", origin.addr.port());
    let mut tls = connect_tls(proxy.addr(), &authority, "localhost", &ca, &[b"http/1.1"]).await;
    let payload = b"01234567890123456789";
    tls.write_all(
        format!(
            "POST /echo HTTP/1.1\r\nHost: {authority}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            payload.len()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    // Twenty bytes over ~2.4 s: longer than the idle timeout in total, never idle that long.
    for b in payload {
        tokio::time::sleep(Duration::from_millis(120)).await;
        tls.write_all(std::slice::from_ref(b)).await.unwrap();
    }
    let (answer, _) = read_until_closed(&mut tls).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "answer: {answer}");
    assert!(answer.ends_with("01234567890123456789"), "answer: {answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_h2_body_gets_408_on_its_stream_and_the_connection_lives_on() {
    let origin = Origin::start(true, true).await;
    let (proxy, ca) = start_proxy(Source::Serve, Some(&origin.ca_der), short_body_timeout).await;
    let authority = format!("localhost:{}", origin.addr.port());
    let tls = connect_tls(proxy.addr(), &authority, "localhost", &ca, &[b"h2"]).await;
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    type Chunk = Result<Frame<Bytes>, Infallible>;
    let (mut send, conn) = hyper::client::conn::http2::handshake::<_, _, BoxBody>(
        TokioExecutor::new(),
        TokioIo::new(tls),
    )
    .await
    .unwrap();
    tokio::spawn(conn);
    let (tx, rx) = tokio::sync::mpsc::channel::<Chunk>(4);
    tx.send(Ok(Frame::data(Bytes::from_static(b"partial"))))
        .await
        .unwrap();
    let stream =
        futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|c| (c, rx)) });
    let req = Request::post(format!("https://{authority}/echo"))
        .version(http::Version::HTTP_2)
        .body(StreamBody::new(Box::pin(stream)).boxed())
        .unwrap();
    let started = Instant::now();
    let resp = tokio::time::timeout(patience(Duration::from_secs(10)), send.send_request(req))
        .await
        .expect("a 408 within the timeout")
        .unwrap();
    let waited = started.elapsed();
    assert_eq!(resp.status(), 408);
    assert!(resp.headers().get("connection").is_none());
    assert!(
        waited >= IDLE && waited < before_the_default(),
        "after {waited:?}"
    );
    drop(tx);

    // The same connection serves the next stream.
    let req = Request::get(format!("https://{authority}/hello"))
        .version(http::Version::HTTP_2)
        .body(http_body_util::Empty::new().boxed())
        .unwrap();
    send.ready().await.unwrap();
    let resp = send.send_request(req).await.unwrap();
    assert_eq!(resp.status(), 200);
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(&body[..], b"hello from origin");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_body_in_replay_gets_408() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.rec");
    {
        let rec = shepherd_recording::Recording::open(&path).unwrap();
        rec.begin_session("record").unwrap();
        rec.flush().unwrap();
    }
    let (proxy, ca) = start_proxy(
        Source::Replay(path, ReplayOptions::default()),
        None,
        short_body_timeout,
    )
    .await;
    let mut tls = connect_tls(
        proxy.addr(),
        "replayed.test:443",
        "replayed.test",
        &ca,
        &[b"http/1.1"],
    )
    .await;
    tls.write_all(b"POST /form HTTP/1.1\r\nHost: replayed.test\r\nContent-Length: 50\r\n\r\nname=")
        .await
        .unwrap();
    let (answer, closed) = read_until_closed(&mut tls).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "answer: {answer}");
    assert!(closed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_cap_wait_in_a_bounded_queue_or_are_closed_at_once() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let origin = Origin::start(false, false).await;
    // "Closed at once" is told from "closed after waiting" by a read limit far below the wait
    // limit (the same factor scales both), and the waiting connection must not give up before
    // the test frees a slot, however slow the machine.
    let read_limit = patience(Duration::from_secs(2));
    let (proxy, _ca) = start_proxy(Source::Serve, None, |c| {
        c.limits.max_connections = 2;
        c.limits.max_waiting = 1;
        c.limits.wait_timeout = patience(Duration::from_secs(60));
    })
    .await;
    let connect = || tokio::net::TcpStream::connect(proxy.addr());
    // Two idle connections take both slots.
    let first = connect().await.unwrap();
    let _second = connect().await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    // The third waits for a slot with its request.
    let mut third = connect().await.unwrap();
    let req = format!(
        "GET http://localhost:{}/hello HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
        origin.addr.port()
    );
    third.write_all(req.as_bytes()).await.unwrap();
    let waiter = tokio::spawn(async move {
        let mut out = Vec::new();
        let _ = third.read_to_end(&mut out).await;
        String::from_utf8_lossy(&out).into_owned()
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    // The fourth finds the queue full: closed at once, not left to time out.
    let mut fourth = connect().await.unwrap();
    let mut buf = [0u8; 16];
    let read = tokio::time::timeout(read_limit, fourth.read(&mut buf)).await;
    assert!(
        matches!(read, Ok(Ok(0)) | Ok(Err(_))),
        "the connection over the queue was not closed at once: {read:?}"
    );
    assert!(
        !waiter.is_finished(),
        "the waiting connection was served early"
    );
    // A slot frees: the waiting one is served.
    drop(first);
    let answer = tokio::time::timeout(patience(Duration::from_secs(5)), waiter)
        .await
        .expect("the waiting connection got a slot")
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("hello from origin"), "{answer}");
    assert!(
        proxy
            .stats()
            .rejected
            .load(std::sync::atomic::Ordering::Relaxed)
            >= 1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connect_tunnel_keeps_its_connection_slot() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let origin = Origin::start(true, false).await;
    // A connection let in by mistake would idle until the header timeout and then be closed,
    // which a read could take for "closed at once": that timeout is set far beyond the read's.
    let read_limit = patience(Duration::from_secs(2));
    let (proxy, ca) = start_proxy(Source::Serve, Some(&origin.ca_der), |c| {
        c.limits.max_connections = 1;
        c.limits.max_waiting = 0;
        c.limits.header_timeout = read_limit * 30;
    })
    .await;
    let authority = format!("localhost:{}", origin.addr.port());
    let mut tunnel = connect_tls(proxy.addr(), &authority, "localhost", &ca, &[b"http/1.1"]).await;
    tunnel
        .write_all(format!("GET /hello HTTP/1.1\r\nHost: {authority}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut answer = [0u8; 12];
    tunnel.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer, b"HTTP/1.1 200");
    // hyper ends the outer connection at the upgrade; the tunnel still holds the only slot, so
    // the next connection is over the cap with no room to wait: closed at once.
    let mut next = tokio::net::TcpStream::connect(proxy.addr()).await.unwrap();
    let mut buf = [0u8; 16];
    let read = tokio::time::timeout(read_limit, next.read(&mut buf)).await;
    assert!(
        matches!(read, Ok(Ok(0)) | Ok(Err(_))),
        "a connection beyond the tunnel's slot was let in: {read:?}"
    );
    drop(tunnel);
}
