//! Repair-mode overhead of a policy: the TodoMVC vanillajs app of `todomvc@0.1.1` in headless
//! Chromium, loaded and driven (100 todos added, completed, deleted) plain, through `shepherd
//! serve` (the runtime, no policy) and through `shepherd serve --policy init-user-plus` (or
//! POLICY), the three interleaved in one run. Prints load time and workload time per mode, each policy
//! figure as the median of per-round ratios against `serve` without a policy and against
//! plain (target <= 1.03x), and the runtime's size with and without the policy.
//!
//! `cargo bench -p shepherd --bench repair_policy` (ROUNDS=n to change the number of rounds,
//! POLICY=name to measure another policy).

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/todomvc.rs"]
mod support;

use shepherd_browser::{Browser, LaunchOptions};
use support::{ProxyMode, ShepherdProxy, StaticServer, median, timed_round};

/// The policy measured: `POLICY=name` (default init-user-plus, the shipped policy that
/// observes the most while a page loads).
fn policy_name() -> &'static str {
    match std::env::var("POLICY") {
        Ok(p) if !p.is_empty() => Box::leak(p.into_boxed_str()),
        _ => "init-user-plus",
    }
}
const TARGET: f64 = 1.03;

fn ratio(a: &[f64], b: &[f64]) -> f64 {
    let mut r: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
    median(&mut r)
}

fn verdict(r: f64) -> &'static str {
    if r <= TARGET { "ok" } else { "MISSED" }
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let policy_name = policy_name();
    let set = shepherd_policies::load(policy_name).unwrap();
    let compiled = set.compile();
    let mut cfg = shepherd_runtime::Config::new(shepherd_runtime::Mode::Repair, "0123456789abcdef");
    let without = shepherd_runtime::render(&cfg).len();
    cfg.policy = Some(shepherd_runtime::RuntimePolicy {
        json: compiled.json,
        js: compiled.js,
    });
    let with = shepherd_runtime::render(&cfg).len();
    println!(
        "runtime: {without} bytes without a policy, {with} bytes with {policy_name} (+{} bytes)",
        with - without
    );
    let root = support::package_root();
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(15);
    let server = StaticServer::start(root);
    let bin = env!("CARGO_BIN_EXE_shepherd");
    let repair = ShepherdProxy::start(bin, ProxyMode::Repair);
    let policy = ShepherdProxy::start(bin, ProxyMode::Policy(policy_name));
    let url = format!("{}/examples/vanillajs/index.html", server.origin());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let runs: [Vec<(f64, f64)>; 3] = rt.block_on(async {
        let browser = Browser::launch(LaunchOptions::default()).await.unwrap();
        // After loading, nothing is left for init-user-plus to decide: the controller must be
        // idle (its wrappers back to the natives), or the workload would pay for it.
        let page = browser
            .new_isolated_page(Some(policy.addr.as_str()), Some("<-loopback>"))
            .await
            .unwrap();
        page.navigate(&url).await.unwrap();
        let _ = page
            .wait_quiet(
                std::time::Duration::from_millis(200),
                std::time::Duration::from_secs(10),
            )
            .await;
        let stats = page
            .evaluate(&format!("__shepherd.control({:?}).stats()", policy.secret))
            .await
            .unwrap();
        println!(
            "after load with {policy_name}: repairActive {}, postponed {}, discarded {}",
            stats["repairActive"], stats["postponed"], stats["policyDiscarded"]
        );
        let _ = page.close().await;
        timed_round(&browser, &url, None, "plain").await;
        timed_round(&browser, &url, Some(&repair), "serve").await;
        timed_round(&browser, &url, Some(&policy), policy_name).await;
        let mut out: [Vec<(f64, f64)>; 3] = Default::default();
        for round in 0..rounds {
            for slot in 0..3 {
                let mode = (round + slot) % 3;
                let proxy = [None, Some(&repair), Some(&policy)][mode];
                out[mode].push(
                    timed_round(&browser, &url, proxy, ["plain", "serve", policy_name][mode]).await,
                );
            }
        }
        let _ = browser.close().await;
        out
    });
    let load = |m: usize| runs[m].iter().map(|r| r.0).collect::<Vec<f64>>();
    let work = |m: usize| runs[m].iter().map(|r| r.1).collect::<Vec<f64>>();
    println!(
        "todomvc vanillajs, {rounds} rounds, medians; ratios are medians of per-round ratios:"
    );
    for (what, f) in [
        (
            "load (navigation to load event)",
            &load as &dyn Fn(usize) -> Vec<f64>,
        ),
        ("workload (add+complete+delete 100)", &work),
    ] {
        let (p, s, q) = (f(0), f(1), f(2));
        let (vs_serve, vs_plain) = (ratio(&q, &s), ratio(&q, &p));
        println!(
            "  {what}: plain {:.1} ms, serve {:.1} ms, serve --policy {policy_name} {:.1} ms: {vs_serve:.3}x serve {}, {vs_plain:.3}x plain {}",
            median(&mut p.clone()),
            median(&mut s.clone()),
            median(&mut q.clone()),
            verdict(vs_serve),
            verdict(vs_plain)
        );
    }
}
