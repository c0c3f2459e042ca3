//! Cold instrumentation throughput on real libraries from the npm package `todomvc@0.1.1`
//! (jQuery, AngularJS, React, Ember, Backbone, Knockout, Underscore).
//!
//! The package is fetched with `npm pack` into `target/tmp/` (`shepherd_testkit`; or taken from
//! `$SHEPHERD_TODOMVC_DIR/package`) and never committed; the bench fails and says why when it
//! cannot be fetched. Every run is a full cold job (fresh swc globals and source map, no
//! cache).
//!
//! The figure that matters is the pass against its baseline, swc's own parse + emit of the
//! same file with the same options on the same workers (`baseline_roundtrip`: no depth check,
//! early-error walk, resolver, analysis or rewrite), target ≤ 1.5×. Runs are interleaved
//! (pass, baseline, and both again with a source map; the order rotates every round) so that load from
//! other processes falls on all three alike; each run is timed in process CPU time
//! (`CLOCK_PROCESS_CPUTIME_ID`, all threads: the job runs on a pool worker), which waiting
//! for a core does not inflate. Printed per library: the median CPU time of each, the median
//! of the per-round ratios with their spread (quartiles, then minimum and maximum), the output
//! size, whether node accepts the output, and a per-phase breakdown (minimum wall time per
//! phase). Then the totals (sums of medians), and the cost of a cache hit (sha256 of the bytes,
//! map lookup, copy of the cached output: what `shepherd-instrument`'s cache does) against
//! passing the original bytes through (a copy).
//!
//! Runs with mimalloc, the `shepherd` binary's global allocator.
//!
//! Run: `cargo bench -p shepherd-instrument-js` (`SHEPHERD_BENCH_ONLY=jQuery` runs the libraries
//! whose name contains that text; `SHEPHERD_BENCH_ROUNDS=N` sets the rounds per library).

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

/// The allocator the `shepherd` binary uses, so the figures are the product's.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use rustc_hash::FxHashMap;
use sha2::{Digest, Sha256};
use shepherd_instrument_js::{Kind, Options, baseline_roundtrip, instrument, profile_phases};

const LIBS: &[(&str, &str)] = &[
    (
        "jQuery 2.x",
        "examples/backbone/bower_components/jquery/jquery.js",
    ),
    (
        "AngularJS",
        "examples/angularjs/bower_components/angular/angular.js",
    ),
    (
        "React (with addons)",
        "examples/react/bower_components/react/react-with-addons.js",
    ),
    ("Ember", "examples/emberjs/bower_components/ember/ember.js"),
    (
        "Backbone",
        "examples/backbone/bower_components/backbone/backbone.js",
    ),
    (
        "Underscore",
        "examples/backbone/bower_components/underscore/underscore.js",
    ),
    (
        "Knockout",
        "examples/knockoutjs/bower_components/component-knockout-passy/knockout.js",
    ),
];

/// Target of the pass against its baseline (issue 28).
const TARGET_RATIO: f64 = 1.5;

/// Process CPU time, all threads (the job runs on a pool worker), with nanosecond resolution.
fn cpu_now() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` only writes the `timespec` it is handed.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Process CPU time of one call of `f`.
fn cpu_of(f: impl FnOnce()) -> Duration {
    let t = cpu_now();
    f();
    cpu_now() - t
}

/// CPU time per call of `f`, over enough calls to add up to a fifth of a CPU second.
fn cpu_per_call(mut f: impl FnMut()) -> Option<Duration> {
    f();
    let start = cpu_now();
    let mut calls = 0u32;
    loop {
        f();
        calls += 1;
        let used = cpu_now() - start;
        if used >= Duration::from_millis(200) || calls >= 200_000 {
            return Some(used / calls);
        }
    }
}

/// The `q`-quantile (0..=1) of sorted values (nearest rank).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Median, quartiles and range of a sample.
struct Spread {
    median: f64,
    q1: f64,
    q3: f64,
    min: f64,
    max: f64,
}

impl Spread {
    fn of(mut v: Vec<f64>) -> Self {
        v.sort_by(f64::total_cmp);
        Spread {
            median: quantile(&v, 0.5),
            q1: quantile(&v, 0.25),
            q3: quantile(&v, 0.75),
            min: v.first().copied().unwrap_or(f64::NAN),
            max: v.last().copied().unwrap_or(f64::NAN),
        }
    }
}

impl std::fmt::Display for Spread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.2} [{:.2}–{:.2}] ({:.2}–{:.2})",
            self.median, self.q1, self.q3, self.min, self.max
        )
    }
}

/// Interleaved runs of the pass and its baseline, each without and with a source map: CPU
/// seconds of each run, per round.
struct Rounds {
    pass: Vec<f64>,
    base: Vec<f64>,
    map: Vec<f64>,
    base_map: Vec<f64>,
}

fn interleaved(src: &str, opts: &Options, rounds: usize) -> Rounds {
    let mut map_opts = opts.clone();
    map_opts.source_map = true;
    let run = |which: usize| {
        cpu_of(|| {
            let _ = std::hint::black_box(match which {
                0 => instrument(src, opts),
                1 => baseline_roundtrip(src, opts),
                2 => instrument(src, &map_opts),
                _ => baseline_roundtrip(src, &map_opts),
            });
        })
        .as_secs_f64()
    };
    // Warm-up: the workers' allocator arenas and swc's tables.
    for which in 0..4 {
        run(which);
    }
    let mut r = Rounds {
        pass: Vec::with_capacity(rounds),
        base: Vec::with_capacity(rounds),
        map: Vec::with_capacity(rounds),
        base_map: Vec::with_capacity(rounds),
    };
    for round in 0..rounds {
        let mut times = [0.0; 4];
        for k in 0..4 {
            let which = (round + k) % 4;
            times[which] = run(which);
        }
        r.pass.push(times[0]);
        r.base.push(times[1]);
        r.map.push(times[2]);
        r.base_map.push(times[3]);
    }
    r
}

/// `node --check` of the instrumented output.
fn node_check(code: &str) -> String {
    let file = tempfile::Builder::new()
        .suffix(".js")
        .tempfile()
        .expect("temporary file");
    std::fs::write(file.path(), code).expect("writing the instrumented output");
    let o = Command::new(shepherd_testkit::node())
        .arg("--check")
        .arg(file.path())
        .output()
        .expect("running node");
    if o.status.success() {
        return "ok".into();
    }
    format!(
        "FAILED: {}",
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .take(5)
            .collect::<Vec<_>>()
            .join(" | ")
    )
}

fn main() {
    let pkg = shepherd_testkit::todomvc(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let only = std::env::var("SHEPHERD_BENCH_ONLY").unwrap_or_default();
    let rounds_override = std::env::var("SHEPHERD_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse::<usize>().ok());
    println!(
        "JS pass against swc's parse + emit of the same file (CPU ms, medians of interleaved runs; \
         ratio: median [quartiles] (range) of the per-round ratios; target <= {TARGET_RATIO})"
    );
    println!(
        "{:<20} {:>7} {:>8} {:>8} {:>34} {:>8} {:>8} {:>24} {:>7}",
        "library", "KB", "pass", "base", "ratio", "+map", "base+map", "ratio with maps", "out KB"
    );
    let (mut total_bytes, mut total_pass, mut total_base) = (0usize, 0.0, 0.0);
    let (mut total_map, mut total_base_map) = (0.0, 0.0);
    let mut over_target = Vec::new();
    // (source, instrumented output) of every library, for the cache-hit figures.
    let mut outputs: Vec<(String, String)> = Vec::new();
    for (name, rel) in LIBS {
        if !name.contains(only.as_str()) {
            continue;
        }
        let path: &Path = &pkg.join(rel);
        let Ok(src) = std::fs::read_to_string(path) else {
            println!("{name:<20} missing ({})", path.display());
            continue;
        };
        let opts = Options::new(Kind::Script, rel.to_string());
        let out = match instrument(&src, &opts) {
            Ok(o) => o,
            Err(e) => {
                println!("{name:<20} not instrumented: {e}");
                continue;
            }
        };
        let syntax = node_check(&out.code);
        let rounds = rounds_override.unwrap_or(if src.len() > 1_000_000 { 15 } else { 31 });
        let r = interleaved(&src, &opts, rounds);
        let ratios = Spread::of(r.pass.iter().zip(&r.base).map(|(p, b)| p / b).collect());
        let map_ratios = Spread::of(r.map.iter().zip(&r.base_map).map(|(m, b)| m / b).collect());
        let (pass, base, map, base_map) = (
            Spread::of(r.pass).median,
            Spread::of(r.base).median,
            Spread::of(r.map).median,
            Spread::of(r.base_map).median,
        );
        println!(
            "{:<20} {:>7.1} {:>8.2} {:>8.2} {:>34} {:>8.2} {:>8.2} {:>24} {:>7.1}",
            name,
            src.len() as f64 / 1024.0,
            pass * 1e3,
            base * 1e3,
            ratios.to_string(),
            map * 1e3,
            base_map * 1e3,
            map_ratios.to_string(),
            out.code.len() as f64 / 1024.0,
        );
        if ratios.median > TARGET_RATIO {
            over_target.push(format!("{name} {:.2}", ratios.median));
        }
        total_bytes += src.len();
        total_pass += pass;
        total_base += base;
        total_map += map;
        total_base_map += base_map;
        // Phase breakdown (minimum wall time per phase over the runs).
        let mut best: Vec<(&str, Duration)> = Vec::new();
        for _ in 0..rounds.min(11) {
            if let Ok(p) = profile_phases(&src, &opts) {
                if best.is_empty() {
                    best = p;
                } else {
                    for (b, (_, d)) in best.iter_mut().zip(p) {
                        b.1 = b.1.min(d);
                    }
                }
            }
        }
        let parts: Vec<String> = best
            .iter()
            .map(|(n, d)| format!("{n} {:.1}", d.as_secs_f64() * 1e3))
            .collect();
        println!(
            "{:<20} output syntax (node --check): {syntax}; phases (ms, min wall): {}",
            "",
            parts.join(", ")
        );
        outputs.push((src, out.code));
    }
    if total_pass > 0.0 {
        let mbs = |s: f64| total_bytes as f64 / 1e6 / s;
        println!(
            "overall (sums of medians): pass {:.1} MB/s, baseline {:.1} MB/s, ratio {:.2} \
             (target <= {TARGET_RATIO}); with source maps: pass {:.1} MB/s, baseline {:.1} MB/s, \
             ratio {:.2}",
            mbs(total_pass),
            mbs(total_base),
            total_pass / total_base,
            mbs(total_map),
            mbs(total_base_map),
            total_map / total_base_map,
        );
        if over_target.is_empty() {
            println!("target met by every library");
        } else {
            println!("over the target: {}", over_target.join(", "));
        }
    }
    cache_hits(&outputs);
}

/// A cache hit as the proxy serves it (sha256 of the received bytes, map lookup, copy of the
/// cached instrumented body) against passthrough (a copy of the received bytes).
fn cache_hits(outputs: &[(String, String)]) {
    if outputs.is_empty() {
        return;
    }
    let cache: FxHashMap<[u8; 32], &str> = outputs
        .iter()
        .map(|(src, out)| (Sha256::digest(src.as_bytes()).into(), out.as_str()))
        .collect();
    let bytes: usize = outputs.iter().map(|(s, _)| s.len()).sum();
    let hit = cpu_per_call(|| {
        for (src, _) in outputs {
            let key: [u8; 32] = Sha256::digest(std::hint::black_box(src).as_bytes()).into();
            if let Some(out) = cache.get(&key) {
                std::hint::black_box(out.as_bytes().to_vec());
            }
        }
    });
    let copy = cpu_per_call(|| {
        for (src, _) in outputs {
            std::hint::black_box(std::hint::black_box(src).as_bytes().to_vec());
        }
    });
    if let (Some(hit), Some(copy)) = (hit, copy) {
        let mbs = |d: Duration| bytes as f64 / 1e6 / d.as_secs_f64();
        println!(
            "cache hit: {:.0} MB/s ({:.3} ms for all {:.0} KB) vs passthrough copy {:.0} MB/s ({:.3} ms): {:.1}x the copy",
            mbs(hit),
            hit.as_secs_f64() * 1e3,
            bytes as f64 / 1024.0,
            mbs(copy),
            copy.as_secs_f64() * 1e3,
            hit.as_secs_f64() / copy.as_secs_f64()
        );
    }
}
