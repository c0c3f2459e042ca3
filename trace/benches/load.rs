//! Load speed of the trace readers on a page-shaped synthetic trace of 115 000 actions
//! (~1.5M records, the size of EventRacer's largest site). Prints ms per load and the ratio
//! against a naive `serde_json::Value`-per-line parse of the same bytes in the same process.
//! Then the same trace with source positions on 6 of 7 accesses (format 2; TodoMVC's recorded
//! trace has them on 86%): size and load time against the trace without them.
//!
//! `CARGO_TARGET_DIR=... cargo bench -p shepherd-trace --bench load`

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use rand_xoshiro::SplitMix64;
use rand_xoshiro::rand_core::{RngCore, SeedableRng};
use shepherd_trace::{ActionType, Trace, TraceBuilder, er, read_jsonl, to_jsonl_bytes};
use std::hint::black_box;
use std::io::BufRead;
use std::time::{Duration, Instant};

/// Seeded draws (SplitMix64), so every run measures the same trace.
struct Rng(SplitMix64);
impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(SplitMix64::seed_from_u64(seed))
    }
    fn below(&mut self, n: u64) -> u64 {
        self.0.next_u64() % n
    }
}

/// `positions`: give 6 of 7 accesses one of 2000 positions (drawn from a separate generator, so
/// the trace is otherwise identical).
fn page_like(actions: u32, positions: bool) -> Trace {
    let mut r = Rng::new(0x9e37_79b9_7f4a_7c15);
    let mut rp = Rng::new(0x2545_f491_4f6c_dd1d);
    let pos: Vec<String> = (0..2000)
        .map(|i| {
            format!(
                "https://bench.test/js/app{}.js:{}:{}",
                i % 7,
                1 + i * 3,
                5 + i % 40
            )
        })
        .collect();
    let locs: Vec<String> = (0..3000)
        .map(|i| match i % 4 {
            0 => format!("Global.v{i}"),
            1 => format!("Object[{i}].count"),
            2 => format!("DOMNode[{i}].innerHTML"),
            _ => format!("BUTTON[{i}].click"),
        })
        .collect();
    let values: Vec<String> = (0..500).map(|i| format!("\"value {i}\"")).collect();
    let kinds = [
        "script", "parse", "event", "timer", "xhr", "fetch", "raf", "message",
    ];
    let mut b = TraceBuilder::new();
    b.page("https://bench.test/");
    for id in 0..actions {
        let kind = kinds[r.below(kinds.len() as u64) as usize];
        b.begin(
            ActionType::from_code(r.below(5) as i64),
            kind,
            &format!("doc/{kind}:{id}"),
        );
        if id > 0 {
            let tail = (id as u64 - 1 - r.below(u64::from(id).min(50))) as u32;
            b.fork_delay(tail, id, r.below(100) as u32);
            if r.below(3) == 0 {
                b.join(id - 1, id);
            }
        }
        b.enter(&format!("fire:{kind} @ BUTTON[{}]", r.below(300)), None);
        for _ in 0..5 {
            let loc = &locs[r.below(locs.len() as u64) as usize];
            let v = values[r.below(values.len() as u64) as usize].as_str();
            let p = (positions && rp.below(7) != 0)
                .then(|| pos[rp.below(pos.len() as u64) as usize].as_str());
            if r.below(2) == 0 {
                b.read_at(loc, Some(v), p);
            } else {
                b.write_at(loc, Some(v), p);
            }
        }
        b.exit();
        b.end();
    }
    b.finish()
}

/// CPU time of this thread in ns (Linux `schedstat`), so figures stay meaningful when other
/// builds share the machine; `None` elsewhere.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Best wall time and best on-CPU time over `n` runs.
fn best_of(n: usize, mut f: impl FnMut()) -> (Duration, Option<Duration>) {
    let mut wall = Duration::MAX;
    let mut cpu: Option<Duration> = None;
    for _ in 0..n {
        let c0 = thread_cpu_ns();
        let t = Instant::now();
        f();
        wall = wall.min(t.elapsed());
        if let (Some(a), Some(b)) = (c0, thread_cpu_ns()) {
            let d = Duration::from_nanos(b.saturating_sub(a));
            cpu = Some(cpu.map_or(d, |c| c.min(d)));
        }
    }
    (wall, cpu)
}

fn show(d: (Duration, Option<Duration>)) -> String {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    match d.1 {
        Some(c) => format!("{:7.1} ms wall, {:7.1} ms on-CPU", ms(d.0), ms(c)),
        None => format!("{:7.1} ms wall", ms(d.0)),
    }
}

fn cpu_or_wall(d: (Duration, Option<Duration>)) -> f64 {
    d.1.unwrap_or(d.0).as_secs_f64()
}

fn main() {
    let trace = page_like(115_000, false);
    let bytes = to_jsonl_bytes(&trace);
    let records = bytes.iter().filter(|&&b| b == b'\n').count();
    println!(
        "trace: {} actions, {} arcs, {} ops, {} strings, {records} records, {:.1} MB JSONL",
        trace.actions.len(),
        trace.arcs.len(),
        trace.ops.len(),
        trace.strings.len(),
        bytes.len() as f64 / 1e6
    );
    // For profilers: only N JSONL reads (`LOAD_BENCH_PROFILE_JSONL=N`).
    if let Some(n) = std::env::var("LOAD_BENCH_PROFILE_JSONL")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        for _ in 0..n {
            black_box(read_jsonl(&bytes[..]).unwrap());
        }
        return;
    }

    let ours = best_of(5, || {
        black_box(read_jsonl(&bytes[..]).unwrap());
    });
    let write = best_of(5, || {
        black_box(to_jsonl_bytes(&trace));
    });
    let naive = best_of(2, || {
        let mut n = 0usize;
        for line in (&bytes[..]).lines() {
            let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
            n += v.is_array() as usize;
        }
        black_box(n);
    });
    let erb = er::to_er_bytes(&trace);
    let er_read = best_of(5, || {
        black_box(er::read_er(&erb).unwrap());
    });
    let er_write = best_of(5, || {
        black_box(er::to_er_bytes(&trace));
    });
    println!(
        "jsonl read:  {}  ({:.0} ns/record on-CPU)",
        show(ours),
        cpu_or_wall(ours) * 1e9 / records as f64
    );
    println!(
        "naive serde_json::Value per line (parse only, no model): {}  -> ours is {:.1}x faster",
        show(naive),
        cpu_or_wall(naive) / cpu_or_wall(ours)
    );
    println!("jsonl write: {}", show(write));
    println!(
        "ER_actionlog ({:.1} MB) read:  {}",
        erb.len() as f64 / 1e6,
        show(er_read)
    );
    println!("ER_actionlog write: {}", show(er_write));

    let with = page_like(115_000, true);
    let wbytes = to_jsonl_bytes(&with);
    let wread = best_of(5, || {
        black_box(read_jsonl(&wbytes[..]).unwrap());
    });
    let werb = er::to_er_bytes(&with);
    let wer_read = best_of(5, || {
        black_box(er::read_er(&werb).unwrap());
    });
    println!(
        "with access positions: {:.1} MB JSONL ({:+.1}%), read {} ({:.2}x); ER_actionlog {:.1} MB ({:+.1}%), read {}; in memory {} bytes per op",
        wbytes.len() as f64 / 1e6,
        (wbytes.len() as f64 / bytes.len() as f64 - 1.0) * 100.0,
        show(wread),
        cpu_or_wall(wread) / cpu_or_wall(ours),
        werb.len() as f64 / 1e6,
        (werb.len() as f64 / erb.len() as f64 - 1.0) * 100.0,
        show(wer_read),
        std::mem::size_of::<shepherd_trace::Op>()
    );
}
