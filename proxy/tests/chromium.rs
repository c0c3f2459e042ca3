//! Real headless Chromium through the proxy: it must accept the minted leaf with only the SPKI
//! flag, over HTTP/2, and the page must be recorded.

mod common;

use common::*;
use shepherd_proxy::Mode;
use std::time::Duration;

const CHROMIUM: &str = "/usr/bin/chromium";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chromium_loads_an_https_page_through_the_proxy() {
    if !std::path::Path::new(CHROMIUM).exists() {
        eprintln!("skipping: {CHROMIUM} is not installed (scripts/install-deps installs it)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("chromium.rec");
    let origin = Origin::start(true, true).await;
    let (proxy, ca) = start_proxy(Mode::Record(rec.clone()), Some(&origin.ca_der), |_| {}).await;
    let url = format!("https://localhost:{}/page.html", origin.addr.port());
    let profile = dir.path().join("profile");
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::process::Command::new(CHROMIUM)
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
