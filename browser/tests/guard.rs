//! The navigation guard keeps a driven page in place: a link's navigation is failed before it
//! leaves, a popup is closed, the document keeps running; once stopped, the page navigates
//! again.

mod common;

use common::*;
use serde_json::json;
use shepherd_browser::NavigationGuard;
use std::time::{Duration, Instant};

const PAGE: &str = r#"<!doctype html>
<a id="away" href="/elsewhere">away</a>
<button id="pop" onclick="window.open('/popup', '_blank')">popup</button>
<script>window.stayed = 'yes';</script>"#;

/// Polls `f` until it returns true (at most `limit` times the patience factor).
async fn until(limit: Duration, mut f: impl AsyncFnMut() -> bool) -> bool {
    let deadline = Instant::now() + patience(limit);
    loop {
        if f().await {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[test]
fn links_and_popups_are_stopped_until_the_guard_stops() {
    with_browser(|browser| async move {
        let server = serve(vec![
            ("/", html(PAGE)),
            ("/elsewhere", html("<p>elsewhere</p>")),
            ("/popup", html("<p>popup</p>")),
        ])
        .await;
        let page = browser.new_page().await.unwrap();
        let url = server.url("/");
        page.navigate(&url).await.unwrap();
        let guard = NavigationGuard::start(&page).await.unwrap();

        page.click("#away").await.unwrap();
        assert!(
            until(Duration::from_secs(5), async || !guard.blocked().is_empty()).await,
            "no navigation was blocked"
        );
        assert!(
            guard.blocked()[0].ends_with("/elsewhere"),
            "{:?}",
            guard.blocked()
        );
        // The same document, still running.
        assert_eq!(page.url().await.unwrap(), url);
        assert_eq!(page.evaluate("window.stayed").await.unwrap(), json!("yes"));

        page.click("#pop").await.unwrap();
        assert!(
            until(Duration::from_secs(5), async || !guard.popups().is_empty()).await,
            "no popup was closed"
        );

        let (blocked, popups) = guard.stop(&page).await;
        assert_eq!(blocked.len(), 1, "{blocked:?}");
        assert_eq!(popups.len(), 1, "{popups:?}");
        assert!(
            !server
                .request_lines()
                .iter()
                .any(|r| r.contains("/elsewhere")),
            "the blocked navigation reached the server"
        );

        // Unguarded, the link navigates.
        page.click("#away").await.unwrap();
        assert!(
            until(Duration::from_secs(5), async || page
                .url()
                .await
                .is_ok_and(|u| u.ends_with("/elsewhere")))
            .await,
            "the link did not navigate once the guard stopped"
        );
    });
}
