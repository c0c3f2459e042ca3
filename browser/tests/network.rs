//! Quiet detection and proxy flags.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::*;
use serde_json::json;
use shepherd_browser::{Error, LaunchOptions};

const LATE_FETCH: &str = r#"<!doctype html><body><script>
window.addEventListener('load', () => {
  setTimeout(() => {
    fetch('/data').then(r => r.text()).then(t => {
      setTimeout(() => {
        const p = document.createElement('p'); p.id = 'done'; p.textContent = t;
        document.body.append(p);
      }, 100);
    });
  }, 50);
});
</script>"#;

const BUSY: &str = r#"<!doctype html><body><script>
setInterval(() => { document.body.dataset.n = String(Date.now()); }, 20);
</script>"#;

#[test]
fn wait_quiet_outlasts_a_delayed_fetch_and_gives_up_on_busy_pages() {
    with_browser(|browser| async move {
        let server = serve(vec![
            ("/", html(LATE_FETCH)),
            ("/data", delayed("text/plain", "payload", 600)),
            ("/busy", html(BUSY)),
            ("/plain", html("<p>plain</p>")),
            (
                "/stalled",
                html("<script>fetch('/never').catch(() => {})</script><p>stalled</p>"),
            ),
            ("/never", delayed("text/plain", "late", 20_000)),
        ])
        .await;
        let page = browser.new_page().await.unwrap();
        page.navigate(&server.url("/")).await.unwrap();
        let quiet = page
            .wait_quiet(Duration::from_millis(250), patience(Duration::from_secs(5)))
            .await
            .unwrap();
        assert!(quiet.reached, "{quiet:?}");
        assert_eq!(quiet.in_flight, 0);
        assert!(quiet.waited >= Duration::from_millis(600), "{quiet:?}");
        assert_eq!(
            page.evaluate("document.getElementById('done')?.textContent")
                .await
                .unwrap(),
            json!("payload")
        );
        // Already quiet (for longer than the idle period): the first look says so. With no
        // time allowed at all, a wait that started the idle period afresh would give up.
        let again = page
            .wait_quiet(Duration::from_millis(100), Duration::ZERO)
            .await
            .unwrap();
        assert!(again.reached, "{again:?}");

        // Requests cut off by a navigation never report an end; they must not count.
        page.navigate(&server.url("/stalled")).await.unwrap();
        for _ in 0..3 {
            page.navigate(&server.url("/plain")).await.unwrap();
        }
        let after = page
            .wait_quiet(Duration::from_millis(50), patience(Duration::from_secs(3)))
            .await
            .unwrap();
        assert!(after.reached, "{after:?} {:?}", page.requests_in_flight());

        // A page that changes its DOM every 20 ms is never quiet. The idle period is fifty of
        // its changes: load would have to stall the page for a whole second (and let our probe
        // run first) to make it look quiet, so the outcome does not depend on load.
        page.navigate(&server.url("/busy")).await.unwrap();
        let busy = page
            .wait_quiet(Duration::from_secs(1), Duration::from_millis(2500))
            .await
            .unwrap();
        assert!(!busy.reached, "{busy:?}");
        assert!(busy.waited >= Duration::from_millis(2500));
    });
}

const WORKER: &str = r#"<!doctype html><body><script>
const w = new Worker('/w.js');
w.onmessage = (e) => { document.body.dataset.answer = String(e.data); };
w.postMessage(20);
// An analytics-like POST whose answer the page never reads.
fetch('/sink', { method: 'POST', body: 'x' });
</script>"#;

/// A dedicated worker's script request starts on the page's session and ends on the worker's;
/// a `fetch` whose body nobody reads may never report an end. Neither keeps the page from
/// being quiet (each kept every quiet wait on such a page running to its limit).
#[test]
fn a_page_with_a_worker_and_an_unread_answer_is_quiet() {
    with_browser(|browser| async move {
        let server = serve(vec![
            ("/", html(WORKER)),
            (
                "/w.js",
                delayed(
                    "text/javascript",
                    "onmessage = (e) => { postMessage(e.data + 1); };",
                    0,
                ),
            ),
            ("/sink", delayed("text/plain", "thanks", 0)),
        ])
        .await;
        let page = browser.new_page().await.unwrap();
        page.navigate(&server.url("/")).await.unwrap();
        let quiet = page
            .wait_quiet(Duration::from_millis(250), patience(Duration::from_secs(5)))
            .await
            .unwrap();
        assert!(quiet.reached, "{quiet:?} {:?}", page.requests_in_flight());
        assert!(page.requests_in_flight().is_empty());
        // The worker runs (it was resumed after the monitor attached to it): its answer
        // comes, whenever a loaded machine lets it.
        let start = std::time::Instant::now();
        while page.evaluate("document.body.dataset.answer").await.unwrap() != json!("21") {
            assert!(
                start.elapsed() < patience(Duration::from_secs(5)),
                "the worker never answered"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
}

fn unused_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[tokio::test]
async fn proxy_flag_sends_loopback_and_other_hosts_through_the_proxy() {
    let proxy = serve(vec![("/page", html("<title>via proxy</title>"))]).await;
    let browser = launch_with(LaunchOptions {
        proxy: Some(format!("127.0.0.1:{}", proxy.port)),
        bypass_loopback_proxy: true,
        ..LaunchOptions::default()
    })
    .await;
    let page = browser.new_page().await.unwrap();
    // Nothing listens on this port: only the proxy can answer.
    let port = unused_port();
    page.navigate(&format!("http://127.0.0.1:{port}/page"))
        .await
        .unwrap();
    assert_eq!(
        page.evaluate("document.title").await.unwrap(),
        json!("via proxy")
    );
    page.navigate("http://shepherd.test/page").await.unwrap();
    let lines = proxy.request_lines();
    assert!(
        lines.contains(&format!("GET http://127.0.0.1:{port}/page HTTP/1.1")),
        "{lines:?}"
    );
    assert!(
        lines.contains(&"GET http://shepherd.test/page HTTP/1.1".to_string()),
        "{lines:?}"
    );
    browser.close().await.unwrap();
}

#[tokio::test]
async fn without_bypass_flag_loopback_skips_the_proxy_and_isolated_pages_take_their_own() {
    let proxy = serve(vec![("/page", html("<title>via proxy</title>"))]).await;
    let browser = launch_with(LaunchOptions {
        proxy: Some(format!("127.0.0.1:{}", proxy.port)),
        ..LaunchOptions::default()
    })
    .await;
    let page = browser.new_page().await.unwrap();
    let port = unused_port();
    match page
        .navigate(&format!("http://127.0.0.1:{port}/page"))
        .await
    {
        Err(Error::Navigation { error, .. }) => {
            assert!(error.contains("CONNECTION_REFUSED"), "{error}")
        }
        other => panic!("expected a refused connection, got {other:?}"),
    }
    // Neither the page's loopback request nor Chromium's own service requests
    // (accounts.google.com, update.googleapis.com: seen within a second of startup when not
    // bypassed) reach the proxy.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let lines = proxy.request_lines();
    assert!(lines.is_empty(), "{lines:?}");

    // A per-page proxy (isolated context) with loopback routed through it.
    let second = serve(vec![("/page", html("<title>second proxy</title>"))]).await;
    let iso = browser
        .new_isolated_page(
            Some(&format!("127.0.0.1:{}", second.port)),
            Some("<-loopback>"),
        )
        .await
        .unwrap();
    iso.navigate(&format!("http://127.0.0.1:{port}/page"))
        .await
        .unwrap();
    assert_eq!(
        iso.evaluate("document.title").await.unwrap(),
        json!("second proxy")
    );
    let lines = second.request_lines();
    assert!(
        lines.contains(&format!("GET http://127.0.0.1:{port}/page HTTP/1.1")),
        "{lines:?}"
    );
    browser.close().await.unwrap();
}

const SERVICE_WORKER: &str = r#"<!doctype html><body><script>
navigator.serviceWorker.addEventListener('controllerchange', () => {
  document.body.dataset.controlled = 'yes';
});
navigator.serviceWorker.register('/sw.js');
</script>"#;

/// A service worker installs and activates in its own context, where no request need be in
/// flight and the page's DOM does not change: a page waiting for its worker
/// (`controllerchange`) is not quiet until the setup has run.
#[test]
fn a_page_is_not_quiet_while_its_service_worker_installs() {
    with_browser(|browser| async move {
        let server = serve(vec![
            ("/", html(SERVICE_WORKER)),
            (
                "/sw.js",
                delayed(
                    "text/javascript",
                    "addEventListener('install', (e) => { \
                       skipWaiting(); \
                       e.waitUntil(new Promise((ok) => setTimeout(ok, 1000))); }); \
                     addEventListener('activate', (e) => { e.waitUntil(clients.claim()); });",
                    0,
                ),
            ),
        ])
        .await;
        let page = browser.new_page().await.unwrap();
        page.navigate(&server.url("/")).await.unwrap();
        let quiet = page
            .wait_quiet(
                Duration::from_millis(250),
                patience(Duration::from_secs(10)),
            )
            .await
            .unwrap();
        assert!(quiet.reached, "{quiet:?} {:?}", page.requests_in_flight());
        assert!(quiet.waited >= Duration::from_millis(1000), "{quiet:?}");
        assert_eq!(
            page.evaluate("document.body.dataset.controlled")
                .await
                .unwrap(),
            json!("yes"),
            "quiet before the worker took control"
        );
    });
}

/// A frame whose document has arrived is still parsing it (nothing in flight, nothing
/// changing in the page's own DOM) until its `load`: the page is not quiet before the frame
/// element's load event has fired.
#[test]
fn a_page_is_not_quiet_while_a_frame_parses() {
    with_browser(|browser| async move {
        // Some megabytes of markup: the parser takes them in many slices, well past an idle
        // period, after the last byte has arrived.
        let frame: String = (0..60_000)
            .map(|i| format!("<div class=row><p>row {i}</p><span>{i}</span></div>\n"))
            .collect();
        let server = serve(vec![
            (
                "/",
                // Added by the page's load handler (the page's load waits for the frames that
                // were there before it), as a late widget is: in the document before
                // `navigate` returns.
                html(
                    "<script>addEventListener('load', () => { \
                       const f = document.createElement('iframe'); \
                       f.onload = () => { document.body.dataset.loaded = 'yes'; }; \
                       f.src = '/frame'; document.body.append(f); });</script>",
                ),
            ),
            ("/frame", html(&frame)),
        ])
        .await;
        let page = browser.new_page().await.unwrap();
        page.navigate(&server.url("/")).await.unwrap();
        let quiet = page
            .wait_quiet(
                Duration::from_millis(100),
                patience(Duration::from_secs(20)),
            )
            .await
            .unwrap();
        assert!(quiet.reached, "{quiet:?} {:?}", page.requests_in_flight());
        assert_eq!(
            page.evaluate("document.body.dataset.loaded").await.unwrap(),
            json!("yes"),
            "quiet before the frame's load"
        );
        assert_eq!(page.frames_parsing(), 0);
    });
}

/// A frame of another site runs in another process: its loading is reported on its own
/// session, and the page's must not count it as parsing forever (every quiet wait on a page
/// with an ad frame would run to its limit).
#[test]
fn a_frame_of_another_site_does_not_keep_the_page_busy() {
    with_browser(|browser| async move {
        let server = serve(vec![
            ("/frame", html("<p>framed</p>")),
            ("/", html("<p>page</p>")),
        ])
        .await;
        // 127.0.0.1 and localhost are two sites: the frame gets a process of its own.
        let framed = format!("http://localhost:{}/frame", server.port);
        let page = browser.new_page().await.unwrap();
        page.navigate(&server.url("/")).await.unwrap();
        page.evaluate(&format!(
            "new Promise((ok) => {{ const f = document.createElement('iframe'); \
               f.onload = () => ok(true); f.src = {framed:?}; document.body.append(f); }})"
        ))
        .await
        .unwrap();
        let quiet = page
            .wait_quiet(
                Duration::from_millis(100),
                patience(Duration::from_secs(10)),
            )
            .await
            .unwrap();
        assert!(quiet.reached, "{quiet:?} {:?}", page.requests_in_flight());
        assert_eq!(page.frames_parsing(), 0);
    });
}

/// Request bodies stay out of DevTools' request events (`hasPostData` still says there is
/// one): the runtime uploads its trace in `fetch` bodies, and carrying them twice, once to the
/// proxy and once in the events, cost ≈ 1.3 MB of DevTools messages per explored execution.
#[test]
fn request_events_carry_no_bodies() {
    with_browser(|browser| async move {
        let server = serve(vec![
            ("/", html("<title>post</title>")),
            ("/sink", delayed("text/plain", "thanks", 0)),
        ])
        .await;
        let page = browser.new_page().await.unwrap();
        page.navigate(&server.url("/")).await.unwrap();
        let mut events = page
            .connection()
            .subscribe(Some(page.session_id()), &["Network.requestWillBeSent"]);
        let answer = page
            .evaluate(
                "fetch('/sink', { method: 'POST', body: 'x'.repeat(5000) }).then((r) => r.text())",
            )
            .await
            .unwrap();
        assert_eq!(answer, json!("thanks"));
        let sent = loop {
            let event = events
                .next_within(patience(Duration::from_secs(10)))
                .await
                .unwrap()
                .expect("the POST's request event");
            if event.params["request"]["url"] == json!(server.url("/sink")) {
                break event.params;
            }
        };
        assert_eq!(sent["request"]["method"], json!("POST"));
        assert_eq!(sent["request"]["hasPostData"], json!(true), "{sent}");
        assert!(sent["request"].get("postData").is_none(), "{sent}");
        assert!(sent["request"].get("postDataEntries").is_none(), "{sent}");
    });
}
