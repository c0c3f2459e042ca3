//! Figures for the DevTools client: launch, tab creation, evaluation round trip, navigation,
//! quiet detection and exploration rate. Run: `cargo bench -p shepherd-browser --bench cdp`.
//! Prints medians; there is no baseline to compare against (the numbers bound what the
//! recorder and explorer spend per step).

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use shepherd_browser::ExploreOptions;

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
        let buttons: String = (0..20)
            .map(|i| {
                format!(
                    "<button id='b{i}' onclick='n++' style='display:block;height:20px'>{i}</button>"
                )
            })
            .collect();
        let server = common::serve(vec![
            ("/", common::html("<title>x</title><p>hello</p>")),
            (
                "/buttons",
                common::html(&format!("<script>var n = 0</script>{buttons}")),
            ),
        ])
        .await;

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

        page.navigate(&server.url("/buttons"))
            .await
            .expect("navigate");
        let report = page
            .explore(&ExploreOptions {
                max_events: 250,
                duration: Duration::from_secs(15),
                ..ExploreOptions::default()
            })
            .await
            .expect("explore");
        println!(
            "explore 20 buttons           {} events in {:.2?} = {:.0} events/s ({:?})",
            report.events.len(),
            report.elapsed,
            report.events.len() as f64 / report.elapsed.as_secs_f64(),
            report.stopped
        );
        browser.close().await.expect("close");
    });
}
