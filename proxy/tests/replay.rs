//! Record through the proxy, then replay with the origin stopped: byte-identical answers, no
//! outbound connection, ordered duplicates, misses on their own stream, holds, chunked HTML,
//! and a recording process killed with SIGKILL.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bytes::Bytes;
use common::*;
use http::Request;
use http_body_util::{BodyExt, Full};
use shepherd_proxy::ReplayOptions;
use shepherd_testkit::patience;
use std::sync::atomic::Ordering;
use std::time::Duration;

async fn record_site(path: &std::path::Path) -> (Origin, Vec<(String, Bytes)>) {
    let origin = Origin::start(true, true).await;
    let (proxy, ca) = start_proxy(
        Source::Record(path.to_path_buf()),
        Some(&origin.ca_der),
        |_| {},
    )
    .await;
    let authority = format!("localhost:{}", origin.addr.port());
    let mut client = Client::https(proxy.addr(), &authority, &ca, &[b"h2"]).await;
    let mut seen = Vec::new();
    for path in [
        "/hello",
        "/page.html",
        "/gzip",
        "/time",
        "/time",
        "/chunked",
    ] {
        let url = format!("https://{authority}{path}");
        let (resp, body) = client.get(&url).await;
        assert_eq!(resp.status(), 200);
        seen.push((url, body));
    }
    let req = Request::post(format!("https://{authority}/echo"))
        .body(Full::new(Bytes::from_static(b"posted body")))
        .unwrap();
    let body = client
        .send(req)
        .await
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes();
    assert_eq!(&body[..], b"posted body");
    proxy.shutdown().await;
    (origin, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_serves_the_recording_with_the_origin_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("site.rec");
    let (mut origin, seen) = record_site(&rec).await;
    assert_ne!(
        seen[3].1, seen[4].1,
        "the origin's /time must differ per call"
    );
    origin.stop().await;
    let origin_conns = origin.connections.load(Ordering::SeqCst);

    let (proxy, ca) = start_proxy(
        Source::Replay(rec.clone(), ReplayOptions::default()),
        None,
        |c| c.control_listen = Some("127.0.0.1:0".parse().unwrap()),
    )
    .await;
    let authority = format!("localhost:{}", origin.addr.port());
    for alpn in [&[b"h2" as &[u8]][..], &[b"http/1.1" as &[u8]][..]] {
        proxy.reset_replay();
        let mut client = Client::https(proxy.addr(), &authority, &ca, alpn).await;
        for (url, body) in &seen {
            let (resp, got) = client.get(url).await;
            assert_eq!(resp.status(), 200, "{url}");
            assert_eq!(&got, body, "{url}: replay differs from the recording");
            assert_eq!(resp.headers()["x-shepherd-replay"], "exact");
        }
        // Ordered duplicates: the queue is exhausted, the last recording repeats.
        let (_, again) = client.get(&format!("https://{authority}/time")).await;
        assert_eq!(again, seen[4].1);
        let req = Request::post(format!("https://{authority}/echo"))
            .body(Full::new(Bytes::from_static(b"posted body")))
            .unwrap();
        let resp = client.send(req).await;
        assert_eq!(resp.status(), 200);
        // A miss answers 404 on its stream; the connection keeps working.
        let (resp, _) = client.get(&format!("https://{authority}/never-seen")).await;
        assert_eq!(resp.status(), 404);
        assert!(
            resp.headers()["x-shepherd-error"]
                .to_str()
                .unwrap()
                .contains("replay miss")
        );
        let (resp, _) = client.get(&format!("https://{authority}/hello")).await;
        assert_eq!(resp.status(), 200);
    }
    // Reset on the control listener gives the first /time again.
    let mut client = Client::https(proxy.addr(), &authority, &ca, &[b"h2"]).await;
    assert_eq!(operator(&proxy, "POST", "/control/reset").await.0, 200);
    let (_, first) = client.get(&format!("https://{authority}/time")).await;
    assert_eq!(first, seen[3].1);
    assert_eq!(proxy.upstream_connects(), 0, "replay dialled out");
    assert_eq!(origin.connections.load(Ordering::SeqCst), origin_conns);
    assert!(proxy.stats().replay_misses.load(Ordering::Relaxed) >= 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holds_and_chunked_html_release() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("site.rec");
    let (mut origin, _) = record_site(&rec).await;
    origin.stop().await;
    let (proxy, ca) = start_proxy(
        Source::Replay(rec.clone(), ReplayOptions::default()),
        None,
        |c| c.control_listen = Some("127.0.0.1:0".parse().unwrap()),
    )
    .await;
    let authority = format!("localhost:{}", origin.addr.port());
    let holds = proxy.holds().clone();

    // Whole-response hold, released through the in-process API.
    holds.hold_matching("/hello");
    let mut client = Client::https(proxy.addr(), &authority, &ca, &[b"h2"]).await;
    let url = format!("https://{authority}/hello");
    let task = tokio::spawn(async move { client.get(&url).await });
    let held = holds
        .wait_pending(1, patience(Duration::from_secs(5)))
        .await;
    assert_eq!(held.len(), 1);
    assert_eq!(held[0].kind, "response");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!task.is_finished(), "held response was delivered");
    assert!(holds.release(held[0].id));
    let (resp, body) = task.await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(&body[..], b"hello from origin");
    holds.clear_rules();

    // Chunked HTML: one hold per part, released on the control listener.
    holds.hold_matching("/page.html");
    holds.set_split_html(true);
    let mut client = Client::https(proxy.addr(), &authority, &ca, &[b"h2"]).await;
    let req = Request::get(format!("https://{authority}/page.html"))
        .body(Full::new(Bytes::new()))
        .unwrap();
    let resp = client.send(req).await;
    assert_eq!(resp.status(), 200);
    let mut body = resp.into_body();
    let chunks = holds
        .wait_pending(3, patience(Duration::from_secs(5)))
        .await;
    assert_eq!(chunks.len(), 3, "{chunks:?}");
    assert_eq!(chunks[0].chunk, Some((0, 3)));
    let mut received = Vec::new();
    for (i, c) in chunks.iter().enumerate() {
        // Nothing of part i arrives before its release.
        let early = tokio::time::timeout(Duration::from_millis(100), body.frame()).await;
        assert!(early.is_err(), "part {i} arrived before release");
        let released = operator(&proxy, "POST", &format!("/control/release?id={}", c.id)).await;
        assert_eq!(released.0, 200, "{released:?}");
        let frame = body.frame().await.unwrap().unwrap();
        let data = frame.into_data().unwrap();
        if i > 0 {
            assert!(data.starts_with(b"<script"), "part {i}: {data:?}");
        }
        received.extend_from_slice(&data);
    }
    // Only an empty end-of-stream frame may follow.
    while let Some(f) = body.frame().await {
        assert!(f.unwrap().into_data().map_or(true, |d| d.is_empty()));
    }
    assert_eq!(String::from_utf8(received).unwrap(), PAGE);
    assert_eq!(proxy.upstream_connects(), 0);
}

/// Waits until no recorder holds `rec` any more (a stopped proxy's last connections let go of
/// it a moment after shutdown).
async fn wait_until_released(rec: &std::path::Path) {
    let deadline = std::time::Instant::now() + patience(Duration::from_secs(2));
    while std::time::Instant::now() < deadline {
        if shepherd_recording::Recording::open(rec).is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{} stayed locked", rec.display());
}

/// POSTs one trace batch through the proxy on `authority`, as a page of that origin does
/// (its page credential, a document id with the origin's prefix); returns the status and the
/// document id used.
async fn upload(
    proxy: &shepherd_proxy::ProxyHandle,
    ca: &std::sync::Arc<shepherd_proxy::CertificateAuthority>,
    authority: &str,
    doc: &str,
    body: &'static [u8],
) -> http::StatusCode {
    let mut client = Client::https(proxy.addr(), authority, ca, &[b"h2"]).await;
    let token = proxy.page_token(&format!("https://{authority}")).unwrap();
    let req = Request::post(format!(
        "https://{authority}/__shepherd/trace?t={token}&doc={}.{doc}&seq=0",
        &token[..12]
    ))
    .body(Full::new(Bytes::from_static(body)))
    .unwrap();
    client.send(req).await.status()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replayed_pages_traces_go_into_a_new_session() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("site.rec");
    let (mut origin, _) = record_site(&rec).await;
    origin.stop().await;
    wait_until_released(&rec).await;
    let authority = format!("localhost:{}", origin.addr.port());
    let batch: &[u8] = b"{\"v\":2,\"page\":\"https://replayed.test/\"}\n";

    // Default: into the replayed recording, as a session of kind `replay`.
    let (proxy, ca) = start_proxy(
        Source::Replay(rec.clone(), ReplayOptions::default()),
        None,
        |_| {},
    )
    .await;
    assert_eq!(upload(&proxy, &ca, &authority, "doc-a", batch).await, 204);
    proxy.shutdown().await;
    let r = shepherd_recording::Recording::open_readonly(&rec).unwrap();
    let sessions = r.sessions().unwrap();
    assert_eq!(
        sessions
            .iter()
            .map(|s| s.label.as_str())
            .collect::<Vec<_>>(),
        ["record", "replay"]
    );
    let traces = r.traces().unwrap();
    assert_eq!(traces.len(), 1, "{traces:?}");
    assert_eq!(traces[0].session, sessions[1].id);
    assert!(traces[0].doc.ends_with(".doc-a"), "{traces:?}");
    assert_eq!(
        r.trace_jsonl(sessions[1].id, &traces[0].doc).unwrap(),
        batch
    );
    drop(r);

    // A replay nobody traces leaves the recording as it was.
    let (proxy, _) = start_proxy(
        Source::Replay(rec.clone(), ReplayOptions::default()),
        None,
        |_| {},
    )
    .await;
    proxy.shutdown().await;
    let r = shepherd_recording::Recording::open_readonly(&rec).unwrap();
    assert_eq!(r.sessions().unwrap().len(), 2);
    drop(r);

    // With trace_out: into that file; the replayed one is untouched.
    let out = dir.path().join("runs.rec");
    let (proxy, ca) = start_proxy(
        Source::Replay(rec.clone(), ReplayOptions::default()),
        None,
        |c| {
            c.source = shepherd_proxy::ResponseSource::Recording {
                path: rec.clone(),
                options: ReplayOptions::default(),
                trace_out: Some(out.clone()),
            }
        },
    )
    .await;
    assert_eq!(upload(&proxy, &ca, &authority, "doc-b", batch).await, 204);
    proxy.shutdown().await;
    let r = shepherd_recording::Recording::open_readonly(&out).unwrap();
    assert!(r.traces().unwrap()[0].doc.ends_with(".doc-b"));
    let r = shepherd_recording::Recording::open_readonly(&rec).unwrap();
    assert_eq!(r.traces().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_sources_hold_too_and_serve_keeps_no_traces() {
    let origin = Origin::start(true, true).await;
    let (proxy, ca) = start_proxy(Source::Serve, Some(&origin.ca_der), |_| {}).await;
    let authority = format!("localhost:{}", origin.addr.port());
    let holds = proxy.holds().clone();
    holds.hold_matching("/hello");
    let mut client = Client::https(proxy.addr(), &authority, &ca, &[b"h2"]).await;
    let url = format!("https://{authority}/hello");
    let task = tokio::spawn(async move { client.get(&url).await });
    let held = holds
        .wait_pending(1, patience(Duration::from_secs(5)))
        .await;
    assert_eq!(held.len(), 1, "a live response is held like a replayed one");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!task.is_finished(), "held response was delivered");
    assert!(holds.release(held[0].id));
    let (resp, body) = task.await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(&body[..], b"hello from origin");
    // Nothing to rewind on a live source, and no trace store: both say so.
    assert!(!proxy.reset_replay());
    assert_eq!(upload(&proxy, &ca, &authority, "d", b"{}\n").await, 404);
}

/// Child half of `sigkill_during_recording_keeps_committed_exchanges`: records until killed.
#[test]
#[ignore = "helper: run by sigkill_during_recording_keeps_committed_exchanges"]
fn child_recorder() {
    let path = std::env::var("SHEPHERD_TEST_CHILD_RECORD")
        .expect("run by sigkill_during_recording_keeps_committed_exchanges");
    let ca_der = std::fs::read(std::env::var("SHEPHERD_TEST_ORIGIN_CA").unwrap()).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async move {
        let der = rustls_pki_types::CertificateDer::from(ca_der);
        let (proxy, ca) = start_proxy(Source::Record(path.into()), Some(&der), |_| {}).await;
        std::fs::write(
            std::env::var("SHEPHERD_TEST_CHILD_CA").unwrap(),
            ca.cert_der().as_ref(),
        )
        .unwrap();
        println!("LISTENING {}", proxy.addr());
        use std::io::Write;
        std::io::stdout().flush().unwrap();
        std::future::pending::<()>().await;
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_recording_keeps_committed_exchanges() {
    use tokio::io::AsyncBufReadExt;
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("killed.rec");
    let origin = Origin::start(true, true).await;
    let origin_ca = dir.path().join("origin.der");
    std::fs::write(&origin_ca, origin.ca_der.as_ref()).unwrap();
    let child_ca = dir.path().join("child.der");
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_recorder",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("SHEPHERD_TEST_CHILD_RECORD", &rec)
        .env("SHEPHERD_TEST_ORIGIN_CA", &origin_ca)
        .env("SHEPHERD_TEST_CHILD_CA", &child_ca)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let addr = loop {
        let line = tokio::time::timeout(patience(Duration::from_secs(30)), lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .expect("child exited early");
        // libtest prints "test child_recorder ... " on the same line.
        if let Some((_, a)) = line.split_once("LISTENING ") {
            break a.trim().parse::<std::net::SocketAddr>().unwrap();
        }
    };
    let der = std::fs::read(&child_ca).unwrap();
    let ca = rustls_pki_types::CertificateDer::from(der);
    let authority = format!("localhost:{}", origin.addr.port());
    let mut client = Client::https(addr, &authority, &ca, &[b"h2"]).await;
    const N: u64 = 20;
    for i in 0..N {
        let (resp, _) = client
            .get(&format!("https://{authority}/hello?i={i}"))
            .await;
        assert_eq!(resp.status(), 200);
    }
    // Committed exchanges become visible to readers; wait for them, then kill.
    let deadline = std::time::Instant::now() + patience(Duration::from_secs(10));
    loop {
        let n = shepherd_recording::Recording::open_readonly(&rec)
            .and_then(|r| r.exchange_count())
            .unwrap_or(0);
        if n >= N || std::time::Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // One more exchange in flight (a large body) when the process dies.
    let url = format!("https://{authority}/big?mb=50");
    let in_flight = tokio::spawn(async move {
        let req = Request::get(url).body(Full::new(Bytes::new())).unwrap();
        let resp = client.send(req).await;
        let _ = resp.into_body().collect().await;
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    child.start_kill().unwrap();
    let status = child.wait().await.unwrap();
    assert!(!status.success());
    let _ = in_flight.await;
    let reopened = shepherd_recording::Recording::open(&rec).unwrap();
    let exchanges = reopened.exchanges(None).unwrap();
    let hellos = exchanges
        .iter()
        .filter(|e| e.request.url.contains("/hello?i="))
        .count() as u64;
    assert_eq!(hellos, N, "committed exchanges lost");
    assert!(
        exchanges.iter().all(|e| !e.request.url.contains("/big")),
        "the in-flight exchange must not appear half-written"
    );
}
