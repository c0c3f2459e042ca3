//! Figures for the DevTools client: launch, tab creation, evaluation round trip, navigation and
//! quiet detection. Run: `cargo bench -p shepherd-browser --bench cdp`. Prints medians; there
//! is no baseline to compare against (the numbers bound what the recorder and explorer spend
//! per step). The exerciser's event rate is `cargo bench -p shepherd-exerciser`.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let server = common::serve(vec![("/", common::html("<title>x</title><p>hello</p>"))]).await;

        let mut launches = Vec::new();
        for _ in 0..3 {
            let t = Instant::now();
            let b = common::launch().await;
            launches.push(t.elapsed());
            b.close().await.expect("close");
        }
        println!(
            "launch (to connected)        median {:>9.1?} of 3",
            median(launches)
        );

        let browser = common::launch().await;
        let mut tabs = Vec::new();
        for _ in 0..5 {
            let t = Instant::now();
            let p = browser.new_page().await.expect("page");
            tabs.push(t.elapsed());
            p.close().await.expect("close");
        }
        println!(
            "new tab (attach + enable)    median {:>9.1?} of 5",
            median(tabs)
        );

        let page = browser.new_page().await.expect("page");
        let mut navs = Vec::new();
        for _ in 0..10 {
            let t = Instant::now();
            page.navigate(&server.url("/")).await.expect("navigate");
            navs.push(t.elapsed());
        }
        println!(
            "navigate loopback page       median {:>9.1?} of 10",
            median(navs)
        );

        let n = 500;
        let t = Instant::now();
        for i in 0..n {
            page.evaluate(&format!("{i} + 1")).await.expect("evaluate");
        }
        println!(
            "evaluate round trip          mean   {:>9.1?} of {n}",
            t.elapsed() / n
        );

        let t = Instant::now();
        let q = page
            .wait_quiet(Duration::from_millis(50), Duration::from_secs(5))
            .await
            .expect("quiet");
        println!(
            "wait_quiet(50 ms) idle page  {:>16.1?} (reached {})",
            t.elapsed(),
            q.reached
        );
        if !q.reached {
            println!("  in flight: {:?}", page.requests_in_flight());
        }

        browser.close().await.expect("close");
    });
}
