//! TodoMVC workload benchmark: the vanillajs app of `todomvc@0.1.1` in headless Chromium, with
//! 100 todos added, completed and deleted by one script that drives the app with DOM events.
//! Timed plain (no proxy), through `shepherd serve` (repair: runtime injected, scripts
//! untouched) and through `shepherd record` (scripts instrumented, runtime tracing), interleaved
//! in one run; prints medians and ratios against plain. Targets: repair <= 1.03x, record <= 2x.
//!
//! `cargo bench -p shepherd --bench todomvc` (ROUNDS=n to change the number of rounds).

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/todomvc.rs"]
mod support;

use shepherd_browser::{Browser, LaunchOptions};
use support::{ITEMS, ProxyMode, ShepherdProxy, StaticServer, median};

async fn one_round(
    browser: &Browser,
    url: &str,
    proxy: Option<&ShepherdProxy>,
    label: &str,
) -> f64 {
    support::timed_round(browser, url, proxy, label).await.1
}

/// Slowdown targets against plain: repair mode adds at most 3 %, record mode at most 2x
/// (issue 28; it was 3x).
const REPAIR_TARGET: f64 = 1.03;
const RECORD_TARGET: f64 = 2.0;

fn verdict(ratio: f64, target: f64) -> &'static str {
    if ratio <= target { "ok" } else { "MISSED" }
}

fn main() {
    // `cargo test --benches` runs bench binaries with `--bench` absent; do nothing then.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    shepherd_testkit::chromium();
    let root = support::package_root();
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(15);
    let server = StaticServer::start(root);
    let bin = env!("CARGO_BIN_EXE_shepherd");
    let repair = ShepherdProxy::start(bin, ProxyMode::Repair);
    let record = ShepherdProxy::start(bin, ProxyMode::Record);
    let url = format!("{}/examples/vanillajs/index.html", server.origin());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (mut plain, mut rep, mut rec) = rt.block_on(async {
        let browser = Browser::launch(LaunchOptions::default()).await.unwrap();
        // One warm-up of each so instrumentation caches and Chromium's code caches are hot.
        one_round(&browser, &url, None, "plain").await;
        one_round(&browser, &url, Some(&repair), "repair").await;
        one_round(&browser, &url, Some(&record), "record").await;
        let (mut p, mut a, mut r) = (Vec::new(), Vec::new(), Vec::new());
        // The order of the three modes rotates from round to round, so no mode always runs
        // right after the heaviest one (the browser's garbage collection, caches).
        for round in 0..rounds {
            for slot in 0..3 {
                match (round + slot) % 3 {
                    0 => p.push(one_round(&browser, &url, None, "plain").await),
                    1 => a.push(one_round(&browser, &url, Some(&repair), "repair").await),
                    _ => r.push(one_round(&browser, &url, Some(&record), "record").await),
                }
            }
        }
        let _ = browser.close().await;
        (p, a, r)
    });
    // Ratios within a round compare runs seconds apart, which share the machine's load of
    // the moment; their median is steadier than the ratio of the medians.
    let mut rep_paired: Vec<f64> = rep.iter().zip(&plain).map(|(a, p)| a / p).collect();
    let mut rec_paired: Vec<f64> = rec.iter().zip(&plain).map(|(r, p)| r / p).collect();
    let (rp, rr) = (median(&mut rep_paired), median(&mut rec_paired));
    let (p, a, r) = (median(&mut plain), median(&mut rep), median(&mut rec));
    println!(
        "todomvc vanillajs, add+complete+delete {ITEMS} items, median of {rounds} rounds (in-page time):"
    );
    println!("  plain   {p:8.1} ms");
    println!(
        "  repair  {a:8.1} ms  {:.3}x  (target <= {REPAIR_TARGET}x) {}",
        a / p,
        verdict(a / p, REPAIR_TARGET)
    );
    println!(
        "  record  {r:8.1} ms  {:.3}x  (target <= {RECORD_TARGET}x) {}",
        r / p,
        verdict(r / p, RECORD_TARGET)
    );
    // On a shared VM single rounds swing by +-25 %; the fastest round of each mode is the
    // best estimate of its uncontended cost, the median of the typical one. (`median`
    // sorted the vectors, so the fastest round is first.)
    let (pm, am, rm) = (plain[0], rep[0], rec[0]);
    println!(
        "  fastest: plain {pm:.1} ms, repair {am:.1} ms {:.3}x {}, record {rm:.1} ms {:.3}x {}",
        am / pm,
        verdict(am / pm, REPAIR_TARGET),
        rm / pm,
        verdict(rm / pm, RECORD_TARGET)
    );
    println!(
        "  paired (median of per-round ratios): repair {rp:.3}x {}, record {rr:.3}x {}",
        verdict(rp, REPAIR_TARGET),
        verdict(rr, RECORD_TARGET)
    );
    println!("  all plain  {plain:.1?}");
    println!("  all repair {rep:.1?}");
    println!("  all record {rec:.1?}");
}
