//! End-to-end benchmark of `shepherd races` on synthetic 115 000-action traces (see
//! `shepherd_races::synth`) of two shapes: the page (≈ 450 chains) and the wide page
//! (≈ 1 000 chains: many independent timers, requests and callbacks). Each trace is written
//! as JSONL; then, per shape and configuration, a fresh child process runs the command's own
//! pipeline (`shepherd_analysis::pipeline::run`, with the command's allocator settings,
//! `shepherd_analysis::memory::for_batch_analysis`) — load, analyse, mark each race shown
//! with the shipped repair policies that order it, write the text report (streamed a few
//! locations at a time, rendered on two threads) — printing wall and CPU time (of every
//! thread) per phase, and the peak resident memory (VmHWM) after each phase. The child
//! runs with mimalloc, the `shepherd` binary's allocator, so resident figures are the CLI's.
//! Baselines run in the parent: reachability by BFS and by plain bit-vector clocks, on the
//! same queries, with ratios.
//!
//! `cargo bench -p shepherd-analysis --bench pipeline` (env: `SHEPHERD_BENCH_ACTIONS`,
//! `SHEPHERD_BENCH_SEED`, `SHEPHERD_BENCH_KEEP=DIR` keeps the traces as `DIR/page.jsonl` and
//! `DIR/wide.jsonl`, `SHEPHERD_BENCH_REPORT=FILE` copies each child's text report to FILE
//! (each child overwrites it: run one child by hand to compare reports across a change),
//! `SHEPHERD_BENCH_ALLOCATOR_DEFAULTS=1` leaves mimalloc and huge pages as they were before
//! `shepherd races` tuned them).

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use shepherd_analysis::memory;
use shepherd_analysis::pipeline::{self, Input, Observer, Outputs, Request, Step};
use shepherd_races::oracle::{Bfs, BitClocks};
use shepherd_races::synth::{SynthConfig, generate};
use shepherd_races::{Options, Timings, analyze};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CHILD: &str = "SHEPHERD_RACES_BENCH_CHILD";

fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn mb_hwm() -> f64 {
    vm_hwm_kib() as f64 / 1024.0
}

/// CPU time of the whole process in ns (every thread's: work moved to another thread counts):
/// robust when the machine is shared and wall time is inflated by other processes.
fn cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec it is given.
    if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Counts what the report writes (the CLI writes it to stdout), and copies it to a file when
/// asked (to check that a change leaves the report as it was).
struct Counter(usize, Option<BufWriter<std::fs::File>>);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        if let Some(f) = &mut self.1 {
            f.write_all(buf)?;
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.1 {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

/// Wall time, CPU time and peak resident memory at one point of the pipeline.
#[derive(Clone, Copy, Default)]
struct Mark {
    wall: Duration,
    cpu: u64,
    hwm: f64,
}

impl Mark {
    fn now(t0: Instant) -> Mark {
        Mark {
            wall: t0.elapsed(),
            cpu: cpu_ns(),
            hwm: mb_hwm(),
        }
    }
}

/// What the analysis found, for the figures line.
#[derive(Default)]
struct Figures {
    arcs: usize,
    accesses: usize,
    locations: usize,
    chains: usize,
    peak_clock_entries: usize,
    candidates: usize,
    uncovered: usize,
    timings: Timings,
}

/// Watches the pipeline: marks when the trace is loaded and when the analysis is over (the
/// policies' simulations may still run), and the analysis' figures.
struct Watch {
    t0: Instant,
    loaded: Mark,
    analysed: Mark,
    figures: Figures,
}

impl Observer for Watch {
    fn step(&mut self, step: Step<'_>) {
        match step {
            Step::Read => self.loaded = Mark::now(self.t0),
            Step::Analysed(an) => {
                self.analysed = Mark::now(self.t0);
                self.figures = Figures {
                    arcs: an.graph.arcs().len(),
                    accesses: an.accesses.len(),
                    locations: an.accesses.locs.len(),
                    chains: an.chains.chains(),
                    peak_clock_entries: an.peak_clock_entries,
                    candidates: an.races.len(),
                    uncovered: an.uncovered().count(),
                    timings: an.timings,
                };
            }
            _ => {}
        }
    }
}

/// Child: `shepherd races FILE`'s pipeline on one file; prints figures.
fn child(path: &str, single: bool) {
    if std::env::var_os("SHEPHERD_BENCH_ALLOCATOR_DEFAULTS").is_none() {
        memory::for_batch_analysis();
    }
    let base = mb_hwm();
    let c0 = cpu_ns();
    let t0 = Instant::now();
    let copy = std::env::var_os("SHEPHERD_BENCH_REPORT")
        .map(|p| BufWriter::new(std::fs::File::create(p).expect("create report copy")));
    let mut out = Counter(0, copy);
    let mut watch = Watch {
        t0,
        loaded: Mark::default(),
        analysed: Mark::default(),
        figures: Figures::default(),
    };
    // Single coverage is set rather than derived: the text report of `--html` without
    // writing the page.
    let request = Request {
        single_coverage: Some(single),
        ..Request::new(Input::File(Path::new(path)))
    };
    let outputs = Outputs {
        text: Some(&mut out),
        ..Outputs::default()
    };
    let outcome = pipeline::run(&request, outputs, &mut watch).expect("the pipeline");
    let total = t0.elapsed();
    let (c3, hwm_report) = (cpu_ns(), mb_hwm());
    let (l, a, f) = (watch.loaded, watch.analysed, &watch.figures);
    let t = f.timings;
    println!(
        "  actions {} | arcs {} | accesses {} | locations {} | chains {} | peak live clock entries {} ({:.1} MB) | candidates {} | uncovered {} | ordered by a policy {} | report {:.1} MB",
        outcome.actions,
        f.arcs,
        f.accesses,
        f.locations,
        f.chains,
        f.peak_clock_entries,
        f.peak_clock_entries as f64 * 2.0 / 1e6,
        f.candidates,
        f.uncovered,
        outcome.ordered,
        out.0 as f64 / 1e6,
    );
    println!(
        "  wall: load {:.1} ms | scan {:.1} | graph {:.1} | sweep {:.1} | filters {:.1} | policies and report (overlapped) {:.1} | total {:.1} ms",
        ms(l.wall),
        ms(t.scan),
        ms(t.graph),
        ms(t.clocks),
        ms(t.filters),
        ms(total - a.wall),
        ms(total)
    );
    println!(
        "  CPU (all threads): load {:.1} ms + analysis {:.1} ms + policies and report {:.1} ms = {:.1} ms end to end (load average {})",
        (l.cpu - c0) as f64 / 1e6,
        (a.cpu - l.cpu) as f64 / 1e6,
        (c3 - a.cpu) as f64 / 1e6,
        (c3 - c0) as f64 / 1e6,
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .next()
            .unwrap_or("?")
    );
    println!(
        "  peak memory (VmHWM) {:.1} MB | after load {:.1} MB, analysis {:.1} MB, policies and report {:.1} MB (process start {:.1} MB)",
        hwm_report, l.hwm, a.hwm, hwm_report, base
    );
}

/// Writes `cfg`'s trace to `path`, printing its size.
fn write_trace(label: &str, cfg: &SynthConfig, path: &Path) {
    let t = Instant::now();
    let trace = generate(cfg);
    let f = std::fs::File::create(path).expect("create");
    shepherd_trace::write_jsonl(&trace, BufWriter::new(f)).expect("write");
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    println!(
        "{label}: {} actions, {} ops, {:.1} MB JSONL (generated in {:.0} ms)",
        trace.actions.len(),
        trace.ops.len(),
        size as f64 / 1e6,
        ms(t.elapsed())
    );
}

fn main() {
    if let Ok(path) = std::env::var(CHILD) {
        let single = std::env::var("SHEPHERD_BENCH_SINGLE")
            .map(|v| v != "0")
            .unwrap_or(true);
        child(&path, single);
        return;
    }
    let actions: u32 = std::env::var("SHEPHERD_BENCH_ACTIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(115_000);
    let seed: u64 = std::env::var("SHEPHERD_BENCH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let page = SynthConfig {
        actions,
        seed,
        ..SynthConfig::default()
    };
    let wide = SynthConfig {
        actions,
        seed,
        ..SynthConfig::wide()
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = std::env::current_exe().expect("current exe");
    for (name, cfg) in [("page", &page), ("wide", &wide)] {
        let path = dir.path().join(format!("{name}.jsonl"));
        write_trace(
            &format!("synthetic trace '{name}' (width {})", cfg.width),
            cfg,
            &path,
        );
        if let Ok(keep) = std::env::var("SHEPHERD_BENCH_KEEP") {
            // Keep a copy for profiling the child or the CLI by hand.
            let _ = std::fs::copy(&path, Path::new(&keep).join(format!("{name}.jsonl")));
        }
        for (label, single) in [
            (
                "single + multi coverage (as --all and --html compute it)",
                "1",
            ),
            ("multi coverage only (the CLI's default)", "0"),
        ] {
            println!("'{name}', end to end, {label} (fresh process):");
            let out = Command::new(&exe)
                .env(CHILD, &path)
                .env("SHEPHERD_BENCH_SINGLE", single)
                .output()
                .expect("run child");
            print!("{}", String::from_utf8_lossy(&out.stdout));
            if !out.status.success() {
                eprintln!("{}", String::from_utf8_lossy(&out.stderr));
            }
        }
    }

    // Baselines on the same graph and the same happens-before queries (the race candidate
    // checks): chain clocks vs BFS (sampled) vs plain bit-vector clocks (on a prefix that
    // fits in memory).
    let trace = generate(&page);
    let an = analyze(&trace, &Options::default()).expect("analyse");
    let acc = &an.accesses;
    // Retained chain clocks (the reference pipeline keeps every clock).
    let fixes = shepherd_races::FixOptions::default();
    let scan = shepherd_races::accesses::scan(&trace, &fixes).expect("scan");
    let t = Instant::now();
    let (_, clocks) = shepherd_races::chains::build(&trace, &scan, &fixes).expect("clocks");
    println!(
        "retained chain clocks (reference pipeline, 'page'): {:.1} ms, {:.1} MB for all {} actions",
        ms(t.elapsed()),
        clocks.bytes() as f64 / 1e6,
        trace.actions.len()
    );
    let mut queries: Vec<(u32, u32)> = Vec::new();
    for l in 0..acc.locs.len() as u32 {
        let xs = acc.of(l);
        for w in xs.windows(2) {
            if w[0].action != w[1].action {
                queries.push((w[0].action, w[1].action));
            }
        }
    }
    let t = Instant::now();
    let mut hits = 0usize;
    for &(a, b) in &queries {
        hits += clocks.ordered(a, b) as usize;
    }
    let per_clock = t.elapsed().as_secs_f64() / queries.len().max(1) as f64;
    let bfs = Bfs::new(&an.graph);
    let sample: Vec<(u32, u32)> = queries
        .iter()
        .step_by((queries.len() / 300).max(1))
        .copied()
        .collect();
    let t = Instant::now();
    let mut hits_bfs = 0usize;
    for &(a, b) in &sample {
        hits_bfs += bfs.ordered(a, b) as usize;
    }
    let per_bfs = t.elapsed().as_secs_f64() / sample.len().max(1) as f64;
    println!(
        "reachability queries: {} ({} ordered) | chain clocks {:.1} ns/query | BFS {:.1} µs/query on a sample of {} ({} ordered) | BFS/clocks {:.0}x",
        queries.len(),
        hits,
        per_clock * 1e9,
        per_bfs * 1e6,
        sample.len(),
        hits_bfs,
        per_bfs / per_clock
    );
    // Plain vector clocks need n² bits: compare on a prefix-sized trace.
    let small_n = actions.min(20_000);
    let small = generate(&SynthConfig {
        actions: small_n,
        ..page
    });
    let scan_small = shepherd_races::accesses::scan(&small, &fixes).expect("scan");
    let t = Instant::now();
    let (g_small, c_small) =
        shepherd_races::chains::build(&small, &scan_small, &fixes).expect("clocks");
    let cd_time = t.elapsed();
    let t = Instant::now();
    let bits = BitClocks::new(&g_small);
    let bits_time = t.elapsed();
    println!(
        "plain bit-vector clocks on {} actions: {:.1} ms, {:.1} MB | chain clocks (graph+clocks phase): {:.1} ms, {:.1} MB, {} chains | ratio time {:.1}x, memory {:.1}x",
        small_n,
        ms(bits_time),
        bits.bytes() as f64 / 1e6,
        ms(cd_time),
        c_small.bytes() as f64 / 1e6,
        c_small.chains(),
        bits_time.as_secs_f64() / cd_time.as_secs_f64().max(1e-9),
        bits.bytes() as f64 / c_small.bytes().max(1) as f64
    );
}
