//! Repair-mode overhead of a policy: the TodoMVC vanillajs app of `todomvc@0.1.1` in headless
//! Chromium, loaded and driven (100 todos added, completed, deleted) plain, through `shepherd
//! serve` (the runtime, no policy), through a second `shepherd serve` and through `shepherd
//! serve --policy init-user-plus` (or POLICY), the four interleaved in one run.
//!
//! Two measures per mode, each policy figure the median of per-round ratios against `serve`
//! without a policy (target <= 1.03x):
//!
//! - wall time (navigation to load event; the workload's in-page time), which moves by ±10 %
//!   with the machine's load, more than the target;
//! - CPU time, the figure the verdict is on: the renderer's main-thread tasks measured in thread
//!   time (DevTools `Performance` with `threadTicks`, so time the thread waits for a core does
//!   not count) plus, for the load, the proxy process's on-CPU time (`/proc/PID/task/*/schedstat`).
//!
//! The two `serve` proxies are the noise floor: their ratio is what the measure reads when
//! nothing differs, printed beside the policy's. The workload runs with a counting clock
//! (`Date` replaced for its duration) so no busy wait for a new millisecond adds CPU time.
//!
//! `cargo bench -p shepherd --bench repair_policy` (ROUNDS=n to change the number of rounds,
//! POLICY=name to measure another policy, BASELINE_BIN=path to add a fifth mode: the same
//! policy through another build of `shepherd`, so a change is judged against the build before
//! it in the same run, on the same machine load).
//!
//! `TRACE=n` prints, instead of the rounds, where the renderer's main thread spends its time
//! while the page loads: Chromium's own trace of n loads per mode (`serve`, or the BASELINE_BIN
//! build when given, against the policy), each trace event's self thread time summed by name
//! (a `FunctionCall` by the name and file of the function Blink called), the largest differences first. A CPU
//! figure says how much a change moved; this says which callbacks the rest is in.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/todomvc.rs"]
mod support;

use serde_json::json;
use shepherd_browser::{Browser, LaunchOptions, Page};
use std::time::{Duration, Instant};
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

/// The modes of a round, in the order of their columns (a fifth, BASELINE, with
/// `BASELINE_BIN`).
const PLAIN: usize = 0;
const SERVE: usize = 1;
const SERVE_AGAIN: usize = 2;
const POLICY: usize = 3;
const BASELINE: usize = 4;

/// `Date` replaced by a clock that advances a millisecond per reading, so the workload's wait
/// for a new millisecond (vanillajs names todos by the time) ends at once instead of spinning.
const COUNTING_CLOCK: &str = r#"(() => {
    const Real = Date;
    let t = Real.now();
    class Counting extends Real {
        constructor(...a) { if (a.length) { super(...a); } else { super(++t); } }
        static now() { return ++t; }
    }
    window.Date = Counting;
    return true;
})()"#;

/// One round of one mode.
#[derive(Clone, Copy, Default)]
struct Round {
    /// Navigation to load event, ms of wall time.
    load_wall: f64,
    /// The renderer's main-thread CPU until the page was quiet, plus the proxy's, ms.
    load_cpu: f64,
    /// The workload's in-page time, ms of wall time.
    work_wall: f64,
    /// The renderer's main-thread CPU during the workload, ms.
    work_cpu: f64,
    /// The proxy's part of `load_cpu`, ms.
    proxy_cpu: f64,
}

/// On-CPU time of every thread of process `pid`, in ms (the scheduler's nanosecond count, so
/// a short round is not lost to the clock tick of `/proc/PID/stat`).
fn process_cpu_ms(pid: u32) -> f64 {
    let mut ns: u64 = 0;
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in tasks.flatten() {
            if let Ok(s) = std::fs::read_to_string(t.path().join("schedstat")) {
                ns += s
                    .split_whitespace()
                    .next()
                    .and_then(|f| f.parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
    }
    ns as f64 / 1e6
}

/// The renderer main thread's task time so far, ms (thread time: `Performance.enable` was
/// called with `threadTicks`).
async fn task_cpu_ms(page: &Page) -> f64 {
    let m = page
        .call("Performance.getMetrics", json!({}))
        .await
        .unwrap();
    m["metrics"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|x| x["name"] == "TaskDuration")
        .and_then(|x| x["value"].as_f64())
        .expect("Performance.getMetrics gives TaskDuration")
        * 1000.0
}

/// Loads `url` in a fresh isolated page (through `proxy` when given) and runs the workload.
async fn cpu_round(browser: &Browser, url: &str, proxy: Option<&ShepherdProxy>) -> Round {
    let page = browser
        .new_isolated_page(proxy.map(|p| p.addr.as_str()), proxy.map(|_| "<-loopback>"))
        .await
        .unwrap();
    page.call("Performance.enable", json!({ "timeDomain": "threadTicks" }))
        .await
        .unwrap();
    let proxy_before = proxy.map_or(0.0, |p| process_cpu_ms(p.pid()));
    let t0 = Instant::now();
    page.navigate(url).await.unwrap();
    let load_wall = t0.elapsed().as_secs_f64() * 1000.0;
    let _ = page
        .wait_quiet(
            Duration::from_millis(200),
            shepherd_testkit::patience(Duration::from_secs(10)),
        )
        .await;
    let proxy_cpu = proxy.map_or(0.0, |p| process_cpu_ms(p.pid())) - proxy_before;
    let loaded = task_cpu_ms(&page).await;
    assert_eq!(
        page.evaluate(COUNTING_CLOCK).await.unwrap(),
        json!(true),
        "the counting clock is installed"
    );
    let before = task_cpu_ms(&page).await;
    let r = page.evaluate(&support::workload()).await.unwrap();
    let after = task_cpu_ms(&page).await;
    support::check_workload(&r, "a CPU round");
    let _ = page.close().await;
    Round {
        load_wall,
        load_cpu: loaded + proxy_cpu,
        work_wall: r["ms"].as_f64().unwrap(),
        work_cpu: after - before,
        proxy_cpu,
    }
}

/// Median of per-round ratios `a / b`, with the lower and upper quartiles.
fn ratio(a: &[f64], b: &[f64]) -> (f64, f64, f64) {
    let mut r: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
    let m = median(&mut r);
    let q = |f: f64| r[((r.len() - 1) as f64 * f).round() as usize];
    (m, q(0.25), q(0.75))
}

/// One page load traced by Chromium: each event name on the renderer's main thread with its
/// count and its self thread time in ms (its own, less that of the events inside it).
async fn trace_load(
    browser: &Browser,
    url: &str,
    proxy: Option<&ShepherdProxy>,
) -> std::collections::HashMap<String, (f64, f64)> {
    let page = browser
        .new_isolated_page(proxy.map(|p| p.addr.as_str()), proxy.map(|_| "<-loopback>"))
        .await
        .unwrap();
    let mut events = page.events(&["Tracing.dataCollected", "Tracing.tracingComplete"]);
    let categories = [
        "devtools.timeline",
        "disabled-by-default-devtools.timeline",
        "v8.execute",
        "v8",
        "blink",
        "loading",
    ];
    page.call(
        "Tracing.start",
        json!({
            "traceConfig": {"includedCategories": categories, "excludedCategories": ["*"]},
            "transferMode": "ReportEvents",
        }),
    )
    .await
    .unwrap();
    page.navigate(url).await.unwrap();
    page.call("Tracing.end", json!({})).await.unwrap();
    let mut all = Vec::new();
    while let Some(ev) = events.next().await {
        if ev.method == "Tracing.tracingComplete" {
            break;
        }
        if let Some(v) = ev.params["value"].as_array() {
            all.extend(v.iter().cloned());
        }
    }
    let _ = page.close().await;
    let thread = |e: &serde_json::Value| (e["pid"].as_i64(), e["tid"].as_i64());
    let mains: std::collections::HashSet<_> = all
        .iter()
        .filter(|e| {
            e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == "CrRendererMain"
        })
        .map(thread)
        .collect();
    // (start, wall duration, thread duration, name) of complete events, outer ones first.
    let mut spans: Vec<(f64, f64, f64, String)> = all
        .iter()
        .filter(|e| e["ph"] == "X" && mains.contains(&thread(e)))
        .map(|e| {
            let dur = e["dur"].as_f64().unwrap_or(0.0);
            let mut name = e["name"].as_str().unwrap_or("").to_string();
            if name == "FunctionCall" {
                let d = &e["args"]["data"];
                let file = d["url"]
                    .as_str()
                    .unwrap_or("")
                    .rsplit('/')
                    .next()
                    .unwrap_or("");
                let file = file.split('?').next().unwrap_or("");
                // By name and file, not line: two builds of the runtime compare.
                name = format!(
                    "FunctionCall {} {file}",
                    d["functionName"].as_str().unwrap_or("")
                );
            }
            let ts = e["ts"].as_f64().unwrap_or(0.0);
            (ts, dur, e["tdur"].as_f64().unwrap_or(dur), name)
        })
        .collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
    let mut own: Vec<f64> = spans.iter().map(|s| s.2).collect();
    let mut open: Vec<usize> = Vec::new();
    for i in 0..spans.len() {
        while let Some(&top) = open.last() {
            if spans[i].0 >= spans[top].0 + spans[top].1 {
                open.pop();
            } else {
                break;
            }
        }
        if let Some(&top) = open.last() {
            own[top] -= spans[i].2;
        }
        open.push(i);
    }
    let mut out = std::collections::HashMap::new();
    for (s, t) in spans.iter().zip(own) {
        let e: &mut (f64, f64) = out.entry(s.3.clone()).or_default();
        e.0 += 1.0;
        e.1 += t / 1000.0;
    }
    out
}

/// `TRACE=n`: n traced loads per mode, interleaved; prints the per-load differences by name.
async fn trace_breakdown(
    browser: &Browser,
    url: &str,
    modes: [(&str, Option<&ShepherdProxy>); 2],
    loads: usize,
) {
    let mut sums: [std::collections::HashMap<String, (f64, f64)>; 2] = Default::default();
    for _ in 0..loads {
        for (k, (_, proxy)) in modes.iter().enumerate() {
            for (name, (n, ms)) in trace_load(browser, url, *proxy).await {
                let e = sums[k].entry(name).or_default();
                e.0 += n;
                e.1 += ms;
            }
        }
    }
    let per_load = |k: usize, name: &str| {
        let (n, ms) = sums[k].get(name).copied().unwrap_or_default();
        (n / loads as f64, ms / loads as f64)
    };
    let mut names: Vec<String> = sums[0].keys().chain(sums[1].keys()).cloned().collect();
    names.sort();
    names.dedup();
    names.sort_by(|a, b| {
        let d = |n: &str| (per_load(1, n).1 - per_load(0, n).1).abs();
        d(b).total_cmp(&d(a))
    });
    let total = |k: usize| sums[k].values().map(|v| v.1).sum::<f64>() / loads as f64;
    println!(
        "main thread while loading, self thread time per load ({loads} traced loads per mode): {} {:.2} ms, {} {:.2} ms; largest differences:",
        modes[0].0,
        total(0),
        modes[1].0,
        total(1)
    );
    for name in names.iter().take(30) {
        let (a, b) = (per_load(0, name), per_load(1, name));
        println!(
            "  {:+7.3} ms  {} {:5.1}x {:7.3} ms  {} {:5.1}x {:7.3} ms  {name}",
            b.1 - a.1,
            modes[0].0,
            a.0,
            a.1,
            modes[1].0,
            b.0,
            b.1
        );
    }
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
    let repair_again = ShepherdProxy::start(bin, ProxyMode::Repair);
    let policy = ShepherdProxy::start(bin, ProxyMode::Policy(policy_name));
    let baseline_bin = std::env::var("BASELINE_BIN").ok().filter(|b| !b.is_empty());
    let baseline = baseline_bin
        .as_deref()
        .map(|b| ShepherdProxy::start(b, ProxyMode::Policy(policy_name)));
    let modes = if baseline.is_some() { 5 } else { 4 };
    let url = format!("{}/examples/vanillajs/index.html", server.origin());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let baseline_name = format!("{policy_name} (BASELINE_BIN)");
    let names = ["plain", "serve", "serve again", policy_name, &baseline_name];
    let runs: Option<Vec<Vec<Round>>> = rt.block_on(async {
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
        let figures = page
            .evaluate(&format!("__shepherd.control({:?}).repair()", policy.secret))
            .await
            .unwrap();
        println!(
            "after load with {policy_name}: repairActive {}, postponed {}, discarded {}, \
             events seen created {}, events left alone {}",
            stats["repairActive"],
            stats["postponed"],
            stats["policyDiscarded"],
            figures["forked"],
            figures["leftAlone"]
        );
        let _ = page.close().await;
        // Warm-up: the app's files in the server's and the proxies' caches, the renderer's
        // code caches; the workload itself, checked, once per mode.
        timed_round(&browser, &url, None, "plain").await;
        let proxies = [
            None,
            Some(&repair),
            Some(&repair_again),
            Some(&policy),
            baseline.as_ref(),
        ];
        for &proxy in &proxies[..modes] {
            cpu_round(&browser, &url, proxy).await;
        }
        if let Some(loads) = std::env::var("TRACE").ok().and_then(|s| s.parse().ok()) {
            let against = if modes > BASELINE {
                (baseline_name.as_str(), proxies[BASELINE])
            } else {
                ("serve", proxies[SERVE])
            };
            let traced = [against, (policy_name, proxies[POLICY])];
            trace_breakdown(&browser, &url, traced, loads).await;
            let _ = browser.close().await;
            return None;
        }
        let mut out: Vec<Vec<Round>> = vec![Vec::new(); modes];
        for round in 0..rounds {
            for slot in 0..modes {
                let mode = (round + slot) % modes;
                out[mode].push(cpu_round(&browser, &url, proxies[mode]).await);
            }
        }
        let _ = browser.close().await;
        Some(out)
    });
    // A TRACE run prints its breakdown only; the proxies end when they drop, here.
    let Some(runs) = runs else { return };
    println!(
        "todomvc vanillajs, {rounds} rounds of the {modes} modes in rotating order; ratios are medians of per-round ratios (quartiles in brackets):"
    );
    type Field = fn(&Round) -> f64;
    let figures: [(&str, Field, bool); 5] = [
        (
            "load, wall (navigation to load event)",
            |r| r.load_wall,
            false,
        ),
        (
            "load, CPU (renderer main thread + proxy)",
            |r| r.load_cpu,
            true,
        ),
        ("  of which the proxy", |r| r.proxy_cpu, false),
        (
            "workload, wall (add+complete+delete 100)",
            |r| r.work_wall,
            false,
        ),
        ("workload, CPU (renderer main thread)", |r| r.work_cpu, true),
    ];
    for (what, f, judged) in figures {
        let col = |m: usize| runs[m].iter().map(f).collect::<Vec<f64>>();
        let meds: Vec<String> = (0..modes)
            .map(|m| format!("{} {:.1} ms", names[m], median(&mut col(m))))
            .collect();
        let (q, q1, q3) = ratio(&col(POLICY), &col(SERVE));
        let (n, n1, n3) = ratio(&col(SERVE_AGAIN), &col(SERVE));
        // Plain has no proxy: no ratio against its zero.
        let vs_plain = if col(PLAIN).iter().all(|&x| x > 0.0) {
            format!(
                "; {policy_name} / plain {:.3}x",
                ratio(&col(POLICY), &col(PLAIN)).0
            )
        } else {
            String::new()
        };
        let judgement = if judged {
            format!(", target <= {TARGET}x: {}", verdict(q))
        } else {
            String::new()
        };
        println!("  {what}: {}", meds.join(", "));
        if modes > BASELINE {
            let (b, b1, b3) = ratio(&col(POLICY), &col(BASELINE));
            println!("    {policy_name} / {baseline_name} {b:.3}x [{b1:.3}-{b3:.3}]");
        }
        println!(
            "    {policy_name} / serve {q:.3}x [{q1:.3}-{q3:.3}]{judgement}; noise floor, serve again / serve {n:.3}x [{n1:.3}-{n3:.3}]{vs_plain}"
        );
    }
}
