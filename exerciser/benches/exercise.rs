//! The exerciser's event rate on a page of 20 buttons (each action fired, then the page given
//! its quiet period). Run: `cargo bench -p shepherd-exerciser --bench exercise`. Prints one
//! figure; there is no baseline to compare against.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use shepherd_exerciser::{ExerciseOptions, exercise};
use shepherd_testkit::pages::{html, launch, serve};

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
        let server = serve(vec![(
            "/buttons",
            html(&format!("<script>var n = 0</script>{buttons}")),
        )])
        .await;
        let browser = launch().await;
        let page = browser.new_page().await.expect("page");
        page.navigate(&server.url("/buttons"))
            .await
            .expect("navigate");
        let report = exercise(
            &page,
            &ExerciseOptions {
                max_events: 250,
                duration: Duration::from_secs(15),
                ..ExerciseOptions::default()
            },
        )
        .await
        .expect("exercise");
        println!(
            "exercise 20 buttons          {} events in {:.2?} = {:.0} events/s ({:?})",
            report.events.len(),
            report.elapsed,
            report.events.len() as f64 / report.elapsed.as_secs_f64(),
            report.stopped
        );
        browser.close().await.expect("close");
    });
}
