//! Real headless Chromium through the proxy: it must accept the minted leaf with only the SPKI
//! flag, over HTTP/2, and the page must be recorded; a WebSocket conversation Chromium holds is
//! recorded message by message and replayed to a new Chromium with the origin stopped.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use shepherd_testkit::patience;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chromium_loads_an_https_page_through_the_proxy() {
    let chromium = shepherd_testkit::chromium();
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("chromium.rec");
    let origin = Origin::start(true, true).await;
    let (proxy, ca) = start_proxy(Source::Record(rec.clone()), Some(&origin.ca_der), |_| {}).await;
    let url = format!("https://localhost:{}/page.html", origin.addr.port());
    let profile = dir.path().join("profile");
    let out = tokio::time::timeout(
        patience(Duration::from_secs(60)),
        tokio::process::Command::new(&chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                &format!("--user-data-dir={}", profile.display()),
                &format!("--proxy-server=http://{}", proxy.addr()),
                "--proxy-bypass-list=<-loopback>",
                &format!(
                    "--ignore-certificate-errors-spki-list={}",
                    ca.spki_sha256_base64()
                ),
                "--dump-dom",
                &url,
            ])
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("chromium timed out")
    .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        dom.contains("<p>three</p>"),
        "chromium did not get the page through the proxy: {dom}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    proxy.shutdown().await;
    let recording = shepherd_recording::Recording::open_readonly(&rec).unwrap();
    let exchanges = recording.exchanges(None).unwrap();
    let page = exchanges
        .iter()
        .find(|e| e.request.url == url)
        .expect("page not recorded");
    assert_eq!(
        page.request.http_version, "HTTP/2",
        "Chromium should speak h2 to us"
    );
    let hosts = recording.host_protocols().unwrap();
    assert!(hosts.iter().any(|h| h.alpn == "h2"), "{hosts:?}");
}

/// Opens `wss://AUTHORITY/ws?greet=1` in the page, answers the greeting with a text and then a
/// binary message, and resolves to what the server sent.
fn conversation_js(authority: &str) -> String {
    format!(
        r#"new Promise((resolve, reject) => {{
            const got = [];
            const ws = new WebSocket('wss://{authority}/ws?greet=1');
            ws.binaryType = 'arraybuffer';
            ws.onmessage = (e) => {{
                got.push(typeof e.data === 'string' ? e.data : 'bin:' + new Uint8Array(e.data).join('.'));
                if (got.length === 1) ws.send('hello from chromium');
                else if (got.length === 2) ws.send(new Uint8Array([9, 8, 7]));
                else {{ ws.close(); resolve(got.join('|')); }}
            }};
            ws.onerror = () => reject('WebSocket error after ' + got.join('|'));
            setTimeout(() => reject('timeout after ' + got.join('|')), {limit_ms});
        }})"#,
        // Below the command limit of the evaluate call that waits for it (8 s, times the same
        // factor).
        limit_ms = patience(Duration::from_secs(6)).as_millis()
    )
}

async fn chromium_conversation(
    proxy: &shepherd_proxy::ProxyHandle,
    spki: String,
    authority: &str,
) -> String {
    let browser = shepherd_testkit::pages::launch_with(shepherd_browser::LaunchOptions {
        proxy: Some(proxy.addr().to_string()),
        spki_allow: vec![spki],
        bypass_loopback_proxy: true,
        ..Default::default()
    })
    .await;
    let page = browser.new_page().await.unwrap();
    page.navigate(&format!("https://{authority}/page.html"))
        .await
        .unwrap();
    let got = page.evaluate(&conversation_js(authority)).await.unwrap();
    browser.close().await.unwrap();
    got.as_str().unwrap_or_default().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chromium_websocket_is_recorded_and_replayed() {
    shepherd_testkit::chromium();
    let expected = "welcome|hello from chromium|bin:9.8.7";
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("ws.rec");
    let mut origin = Origin::start(true, true).await;
    let authority = format!("localhost:{}", origin.addr.port());
    let (proxy, ca) = start_proxy(Source::Record(rec.clone()), Some(&origin.ca_der), |_| {}).await;
    let live = chromium_conversation(&proxy, ca.spki_sha256_base64(), &authority).await;
    assert_eq!(live, expected);
    proxy.shutdown().await;
    origin.stop().await;

    let stored = shepherd_recording::Recording::open_readonly(&rec).unwrap();
    let ids = stored.websocket_exchanges().unwrap();
    assert_eq!(ids.len(), 1);
    let msgs = stored.ws_messages(ids[0]).unwrap();
    let texts: Vec<(bool, Vec<u8>)> = msgs
        .iter()
        .take(4)
        .map(|m| (m.from_client, m.data.clone()))
        .collect();
    assert_eq!(
        texts,
        vec![
            (false, b"welcome".to_vec()),
            (true, b"hello from chromium".to_vec()),
            (false, b"hello from chromium".to_vec()),
            (true, vec![9, 8, 7]),
        ],
        "Chromium's masked frames are stored unmasked, in order"
    );
    drop(stored);

    let (proxy, ca) = start_proxy(
        Source::Replay(rec, shepherd_proxy::ReplayOptions::default()),
        None,
        |_| {},
    )
    .await;
    let replayed = chromium_conversation(&proxy, ca.spki_sha256_base64(), &authority).await;
    assert_eq!(replayed, expected);
    assert_eq!(proxy.upstream_connects(), 0);
}
