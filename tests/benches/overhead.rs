//! Overhead of Shepherd on a TodoMVC-style workload (add, complete and delete N items, one DOM
//! event per task) in headless Chromium: the plain page (no proxy) vs the page through
//! `serve` (repair mode: runtime only) vs through `record` (runtime plus the JS pass's access
//! logging), the real proxies, measured in the same run.
//!
//! `cargo bench -p shepherd-e2e --bench overhead [-- N ROUNDS]` (defaults 100 items, 7 rounds).
//! Prints the median per mode and the ratios against plain; targets: repair ≤ 1.03×,
//! record ≤ 3×.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use shepherd_e2e::{TestOrigin, pages_dir};
use shepherd_runtime::Mode;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Variant {
    Plain,
    Repair,
    Record,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Plain => "plain",
            Variant::Repair => "repair",
            Variant::Record => "record (runtime + JS pass)",
        }
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

async fn run(n: usize, rounds: usize) -> Result<()> {
    let browser = shepherd_browser::Browser::launch(shepherd_browser::LaunchOptions::default())
        .await
        .context("launching Chromium")?;
    let origin = TestOrigin::start(pages_dir(), Mode::Record).await?;
    let variants = [Variant::Plain, Variant::Repair, Variant::Record];
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    // Another page with a `todoWorkload(n)` (for investigating where time goes).
    let page_path = std::env::var("SHEPHERD_BENCH_PAGE").unwrap_or_else(|_| "/todo/".into());
    // Round 0 warms up caches and the JIT's code caches; it is not counted.
    for round in 0..=rounds {
        // Rotate the order every round so no variant always follows the costliest one.
        for k in 0..variants.len() {
            let i = (k + round) % variants.len();
            let v = &variants[i];
            origin.set_inject(*v != Variant::Plain).await;
            origin
                .set_mode(if *v == Variant::Repair {
                    Mode::Repair
                } else {
                    Mode::Record
                })
                .await?;
            let page = match origin.proxy_for_pages().await {
                Some(p) => {
                    browser
                        .new_isolated_page(Some(&p), Some("<-loopback>"))
                        .await?
                }
                None => browser.new_isolated_page(None, None).await?,
            };
            let nav = page
                .navigate_with(&origin.url(&page_path), Duration::from_secs(10))
                .await?;
            if !nav.loaded {
                bail!("todo page did not load");
            }
            let r = page.evaluate(&format!("todoWorkload({n})")).await?;
            let _ = page.close().await;
            let ms = r["ms"].as_f64().context("workload time")?;
            if r["left"] != 0 {
                bail!("{}: the app misbehaved: {r}", v.name());
            }
            if std::env::var_os("SHEPHERD_BENCH_VERBOSE").is_some() {
                println!("{} {r}", v.name());
            }
            if round > 0 {
                times[i].push(ms);
            }
        }
        origin.clear();
    }
    let plain = median(&mut times[0].clone());
    println!("TodoMVC-style workload: add, complete, delete {n} items; median of {rounds} rounds");
    for (i, v) in variants.iter().enumerate() {
        let m = median(&mut times[i]);
        println!("{:<28} {:>9.1} ms  {:>5.2}x", v.name(), m, m / plain);
    }
    let _ = browser.close().await;
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n = args.first().copied().unwrap_or(100);
    let rounds = args.get(1).copied().unwrap_or(7).max(1);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?
        .block_on(run(n, rounds))
}
