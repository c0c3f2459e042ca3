//! Load speed of the trace readers on a page-shaped synthetic trace of 115 000 actions
//! (~1.5M records, the size of EventRacer's largest site). Prints ms per load and the ratio
//! against a naive `serde_json::Value`-per-line parse of the same bytes in the same process.
//!
//! `CARGO_TARGET_DIR=... cargo bench -p shepherd-trace --bench load`

use shepherd_trace::{ActionType, Trace, TraceBuilder, er, read_jsonl, to_jsonl_bytes};
use std::hint::black_box;
use std::io::BufRead;
use std::time::{Duration, Instant};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn page_like(actions: u32) -> Trace {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
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
            if r.below(2) == 0 {
                b.read(loc, Some(v));
            } else {
                b.write(loc, Some(v));
            }
        }
        b.exit();
        b.end();
    }
    b.finish()
}

fn best_of(n: usize, mut f: impl FnMut()) -> Duration {
    (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let trace = page_like(115_000);
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
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "jsonl read:  {:7.1} ms  ({:.0} ns/record)",
        ms(ours),
        ours.as_nanos() as f64 / records as f64
    );
    println!(
        "naive serde_json::Value per line (parse only, no model): {:7.1} ms  -> ours is {:.1}x faster",
        ms(naive),
        naive.as_secs_f64() / ours.as_secs_f64()
    );
    println!("jsonl write: {:7.1} ms", ms(write));
    println!(
        "ER_actionlog ({:.1} MB) read: {:7.1} ms, write: {:7.1} ms",
        erb.len() as f64 / 1e6,
        ms(er_read),
        ms(er_write)
    );
}
