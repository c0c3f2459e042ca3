//! Navigation, evaluation, console/exception collection, scripts and screenshots.

mod common;

use std::time::Duration;

use common::*;
use serde_json::json;
use shepherd_browser::Error;

const INDEX: &str = r#"<!doctype html><title>Index</title>
<script>
  console.log('hello', 42, {a: 1});
  console.warn('careful');
  window.addEventListener('load', () => { setTimeout(() => { undefinedGlobal.read; }, 0); });
  Promise.reject(new Error('nobody handles me'));
</script>
<body><p id="p">text</p></body>"#;

#[test]
fn navigate_evaluate_console_and_exceptions() {
    with_browser(|browser| async move {
        let server = serve(vec![
            ("/", html(INDEX)),
            ("/slow", html("<title>slow</title><img src='/slow.png'>")),
            ("/slow.png", delayed("image/png", "", 2000)),
        ])
        .await;
        let page = browser.new_page().await.unwrap();

        let nav = page.navigate(&server.url("/")).await.unwrap();
        assert!(nav.loaded);
        assert!(nav.loader_id.is_some());
        assert_eq!(
            page.evaluate("document.title").await.unwrap(),
            json!("Index")
        );
        assert_eq!(page.url().await.unwrap(), server.url("/"));
        assert_eq!(
            page.evaluate("({n: 1 + 1, s: [1, 'x'], u: undefined})")
                .await
                .unwrap(),
            json!({"n": 2, "s": [1, "x"]})
        );
        assert_eq!(page.evaluate("undefined").await.unwrap(), json!(null));
        assert_eq!(page.evaluate("NaN").await.unwrap(), json!("NaN"));
        assert_eq!(
            page.evaluate("new Promise(r => setTimeout(() => r('later'), 30))")
                .await
                .unwrap(),
            json!("later")
        );
        match page.evaluate("null.x").await {
            Err(Error::JavaScript(m)) => assert!(m.contains("TypeError"), "{m}"),
            other => panic!("expected a JavaScript error, got {other:?}"),
        }
        match page.evaluate("Promise.reject(new Error('boom'))").await {
            Err(Error::JavaScript(m)) => assert!(m.contains("boom"), "{m}"),
            other => panic!("expected a rejection, got {other:?}"),
        }

        // The load-time exception fires in a timer after load: poll for it.
        let deadline = std::time::Instant::now() + patience(Duration::from_secs(5));
        let mut exceptions = page.exceptions();
        while exceptions.len() < 2 && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
            exceptions = page.exceptions();
        }
        let all: Vec<&str> = exceptions.iter().map(|e| e.message.as_str()).collect();
        assert!(
            all.iter()
                .any(|m| m.contains("undefinedGlobal is not defined")),
            "{all:?}"
        );
        assert!(
            all.iter().any(|m| m.contains("nobody handles me")),
            "{all:?}"
        );
        // Errors thrown by our own evaluate calls are not page exceptions.
        assert!(!all.iter().any(|m| m.contains("boom")), "{all:?}");

        let console = page.console_messages();
        assert_eq!(console[0].level, "log");
        assert!(console[0].text.starts_with("hello 42"), "{:?}", console[0]);
        assert_eq!(console[1].level, "warning");
        assert_eq!(console[1].text, "careful");
        assert_eq!(console[0].url.as_deref(), Some(server.url("/").as_str()));

        // Fragment navigation: same document, no new loader.
        let nav = page.navigate(&(server.url("/") + "#frag")).await.unwrap();
        assert_eq!(nav.loader_id, None);

        // A page that does not load in time: navigate_with reports it, navigate errors.
        let nav = page
            .navigate_with(&server.url("/slow"), Duration::from_millis(300))
            .await
            .unwrap();
        assert!(!nav.loaded);

        // Connection refused is a navigation error.
        let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let dead_port = dead.local_addr().unwrap().port();
        drop(dead);
        match page
            .navigate(&format!("http://127.0.0.1:{dead_port}/"))
            .await
        {
            Err(Error::Navigation { error, .. }) => assert!(error.contains("ERR_"), "{error}"),
            other => panic!("expected navigation error, got {other:?}"),
        }
        page.close().await.unwrap();
    });
}

#[test]
fn scripts_on_new_document_screenshots_dialogs() {
    with_browser(|browser| async move {
        let server = serve(vec![
            (
                "/",
                html("<script>window.seen = typeof window.__early;</script><p>hi</p>"),
            ),
            (
                "/alert",
                html("<script>alert('hi there'); window.after = confirm('ok?');</script>"),
            ),
        ])
        .await;
        let page = browser.new_page().await.unwrap();
        let id = page
            .add_script_on_new_document("Object.defineProperty(window, '__early', {value: 1})")
            .await
            .unwrap();
        page.navigate(&server.url("/")).await.unwrap();
        assert_eq!(page.evaluate("window.seen").await.unwrap(), json!("number"));
        page.remove_script_on_new_document(&id).await.unwrap();
        page.navigate(&server.url("/")).await.unwrap();
        assert_eq!(
            page.evaluate("window.seen").await.unwrap(),
            json!("undefined")
        );

        // Reload runs the document again (and its new-document scripts).
        page.evaluate("window.marker = 1").await.unwrap();
        let doc_hits = || {
            server
                .request_lines()
                .iter()
                .filter(|l| l.as_str() == "GET / HTTP/1.1")
                .count()
        };
        let before = doc_hits();
        page.reload(true).await.unwrap();
        assert_eq!(page.evaluate("window.marker").await.unwrap(), json!(null));
        assert_eq!(doc_hits(), before + 1);

        let png = page.screenshot().await.unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert!(png.len() > 100);

        // Dialogs would block the page forever; they are accepted and logged.
        page.navigate(&server.url("/alert")).await.unwrap();
        assert_eq!(page.evaluate("window.after").await.unwrap(), json!(true));
        let dialogs = page.dialogs();
        assert_eq!(dialogs.len(), 2, "{dialogs:?}");
        assert_eq!(dialogs[0].kind, "alert");
        assert_eq!(dialogs[0].message, "hi there");

        // Two pages are independent sessions.
        let other = browser.new_isolated_page(None, None).await.unwrap();
        other.navigate(&server.url("/")).await.unwrap();
        assert_eq!(
            other.evaluate("window.seen").await.unwrap(),
            json!("undefined")
        );
        other.close().await.unwrap();
    });
}

/// The explorer opens the next execution's page while one runs: the running page must stay
/// visible (a hidden page gets no animation frames and throttled timers) and count the bytes
/// its document received.
#[test]
fn a_page_opened_beside_another_leaves_it_visible_and_counts_document_bytes() {
    const BODY: &str = "<title>frames</title><p>frames</p>";
    with_browser(|browser| async move {
        let server = serve(vec![("/", html(BODY))]).await;
        let page = browser.new_isolated_page(None, None).await.unwrap();
        assert_eq!(page.document_bytes(&server.url("/")), 0);
        page.navigate(&server.url("/")).await.unwrap();
        // The load event and the document's last bytes are two DevTools events, handled by
        // two tasks: on a busy machine the count may trail the load for a moment.
        let deadline = std::time::Instant::now() + patience(Duration::from_secs(5));
        while page.document_bytes(&server.url("/")) < BODY.len() as u64
            && std::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(
            page.document_bytes(&server.url("/")),
            BODY.len() as u64,
            "the document's body, counted once"
        );
        let spare = browser.new_isolated_page(None, None).await.unwrap();
        let frames = page
            .evaluate(
                "new Promise((done) => { let n = 0; const f = () => (++n === 3 ? done([document.visibilityState, n]) : requestAnimationFrame(f)); requestAnimationFrame(f); setTimeout(() => done([document.visibilityState, n]), 2000); })",
            )
            .await
            .unwrap();
        assert_eq!(frames, json!(["visible", 3]));
        spare.close().await.unwrap();
        page.close().await.unwrap();
    });
}
