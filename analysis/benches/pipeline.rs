//! End-to-end benchmark of `shepherd races` on synthetic 115 000-action traces (see
//! `shepherd_races::synth`) of three shapes: the page (≈ 450 chains), the wide page
//! (≈ 1 000 chains: many independent timers, requests and callbacks) and the wide page with
//! many locations (≈ 280 000 locations, 1.2 M operations: the shape of the EventRacer log
//! issue 28 measured). Each trace is written as JSONL, and the last one also as an
//! `ER_actionlog` the way EventRacer writes it (no Shepherd trailer), since reading that
//! format is part of the command's work; then, per file and configuration (with covered
//! races and single coverage as `--all` computes them, the text report, the JSON report of
//! `--json`), a fresh child process runs the command's own pipeline
//! (`shepherd_analysis::pipeline::run`, with the command's allocator settings,
//! `shepherd_analysis::memory::for_batch_analysis`) — load, analyse, mark each race shown
//! with the shipped repair policies that order it, write the report (streamed a few
//! locations at a time, rendered on two threads) — printing wall and CPU time (of every
//! thread) per phase, and the peak resident memory (VmHWM) after each phase. The child
//! runs with mimalloc, the `shepherd` binary's allocator, so resident figures are the CLI's.
//! Each file's medians are checked against the command's targets (≤ 0.5 s, ≤ 100 MB without
//! covered races). The many-location files are compared with the wide page in the same run
//! (the same actions and arcs, more locations and operations: what the extra locations
//! cost), as ratios of the medians; with `SHEPHERD_BENCH_BASELINE=EXE` (this benchmark built
//! at another commit) every child of that build runs beside this one's, on the same files,
//! in the same rounds, and each figure gets the median of its per-round ratios. Baselines of
//! the clocks run in the parent: reachability by BFS and by plain bit-vector clocks, on the
//! same queries, with ratios.
//!
//! `cargo bench -p shepherd-analysis --bench pipeline` (env: `SHEPHERD_BENCH_ACTIONS`,
//! `SHEPHERD_BENCH_SEED`, `SHEPHERD_BENCH_RUNS=n` runs every child n times, interleaved, and
//! prints median, fastest and slowest, `SHEPHERD_BENCH_FILES=wide,many,many-er` runs only
//! those files (`page`, `wide`, `many`, `many-er`), `SHEPHERD_BENCH_BASELINE=EXE` as above,
//! `SHEPHERD_BENCH_KEEP=DIR` keeps the traces as `DIR/page.jsonl`, `DIR/wide.jsonl`,
//! `DIR/many.jsonl` and `DIR/many.er`, `SHEPHERD_BENCH_REPORT=FILE` copies each child's report
//! to FILE (each child overwrites it: run one child by hand to compare reports across a
//! change; `SHEPHERD_RACES_BENCH_CHILD=TRACE` runs one, `SHEPHERD_BENCH_SINGLE=0|1` and
//! `SHEPHERD_BENCH_JSON=0|1` pick its configuration), `SHEPHERD_BENCH_ALLOCATOR_DEFAULTS=1`
//! leaves mimalloc and huge pages as they were before `shepherd races` tuned them).

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use shepherd_analysis::memory;
use shepherd_analysis::pipeline::{self, Input, Observer, Outputs, Request, Step};
use shepherd_races::oracle::{Bfs, BitClocks};
use shepherd_races::synth::{SynthConfig, generate};
use shepherd_races::{Options, Timings, analyze};
use shepherd_trace::Trace;
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

/// Child: `shepherd races FILE`'s pipeline on one file (`shepherd races --json FILE`'s with
/// `json`); prints figures.
fn child(path: &str, single: bool, json: bool) {
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
    let mut outputs = Outputs::default();
    if json {
        outputs.json = Some(&mut out);
    } else {
        outputs.text = Some(&mut out);
    }
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
    // For the parent's medians and ratios.
    println!(
        "{FIGURES} {} {} {}",
        ms(total),
        (c3 - c0) as f64 / 1e6,
        hwm_report
    );
}

/// Starts the child's line of figures for the parent: wall ms, CPU ms, peak MB.
const FIGURES: &str = "figures:";

/// One child's end-to-end figures.
#[derive(Clone, Copy)]
struct Run {
    wall_ms: f64,
    cpu_ms: f64,
    peak_mb: f64,
}

/// The `FIGURES` line of a child's output.
fn parse_run(out: &str) -> Option<Run> {
    let line = out.lines().find_map(|l| l.strip_prefix(FIGURES))?;
    let v: Vec<f64> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    match v[..] {
        [wall_ms, cpu_ms, peak_mb] => Some(Run {
            wall_ms,
            cpu_ms,
            peak_mb,
        }),
        _ => None,
    }
}

/// Median, smallest and largest of `xs` (not empty).
fn spread(mut xs: Vec<f64>) -> (f64, f64, f64) {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    let median = if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    };
    (median, xs[0], xs[n - 1])
}

/// Writes `trace` to `path` (JSONL, or an `ER_actionlog` as EventRacer writes it), printing
/// its size.
fn write_trace(label: &str, trace: &Trace, path: &Path, er: bool) {
    let t = Instant::now();
    if er {
        let bytes = eventracer_bytes(&shepherd_trace::er::to_er_bytes(trace));
        std::fs::write(path, bytes).expect("write");
    } else {
        let f = std::fs::File::create(path).expect("create");
        shepherd_trace::write_jsonl(trace, BufWriter::new(f)).expect("write");
    }
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    println!(
        "{label}: {} actions, {} ops, {:.1} MB {} (written in {:.0} ms)",
        trace.actions.len(),
        trace.ops.len(),
        size as f64 / 1e6,
        if er { "ER_actionlog" } else { "JSONL" },
        ms(t.elapsed())
    );
}

/// An `ER_actionlog` of ours cut where EventRacer's own files end: after the `values` table,
/// before the Shepherd trailer (kinds, stable ids, positions). The layout is walked, not
/// searched, so nothing in a string table can be mistaken for the trailer.
fn eventracer_bytes(ours: &[u8]) -> Vec<u8> {
    let word = |at: usize| i32::from_le_bytes(ours[at..at + 4].try_into().unwrap()) as usize;
    let table = |at: usize| at + 4 + word(at) + 4;
    let mut at = table(table(0)); // vars, scopes
    let (actions, arcs) = (word(at), word(at + 4));
    at += 8 + arcs * 12;
    for _ in 0..actions {
        at += 12 + word(at + 8) * 8;
    }
    at = table(table(at)); // js, values
    assert_eq!(
        &ours[at..at + 8],
        b"SHEPHERD",
        "the trailer follows the values table"
    );
    ours[..at].to_vec()
}

/// A file the children read: a name, a trace shape and its format.
struct BenchFile {
    name: &'static str,
    cfg: SynthConfig,
    er: bool,
}

/// A configuration each file is analysed in.
struct Config {
    label: &'static str,
    /// Single coverage computed too.
    single: bool,
    /// The JSON report instead of the text report.
    json: bool,
}

/// The configurations each file is analysed in.
const CONFIGS: [Config; 3] = [
    Config {
        label: "single + multi coverage, text (as --all and --html compute it)",
        single: true,
        json: false,
    },
    Config {
        label: "multi coverage, text (the CLI's default)",
        single: false,
        json: false,
    },
    Config {
        label: "multi coverage, JSON (races --json)",
        single: false,
        json: true,
    },
];

/// `shepherd races`' targets on every page shape, without covered races (the CLI's default
/// text report and `--json`): the wide page's since 2026-11-27, the many-location files'
/// from issue 28.
const TARGET_WALL_MS: f64 = 500.0;
const TARGET_PEAK_MB: f64 = 100.0;

/// The figures of one file in one configuration, of this build and of the baseline build.
#[derive(Clone, Default)]
struct Cell {
    ours: Vec<Run>,
    base: Vec<Run>,
}

/// `median unit (fastest-slowest)` of `xs`.
fn show(xs: Vec<f64>, unit: &str) -> String {
    let (m, lo, hi) = spread(xs);
    format!("{m:.1} {unit} ({lo:.1}-{hi:.1})")
}

/// `median× (smallest-largest)` of the ratios `xs`.
fn show_ratio(xs: Vec<f64>) -> String {
    let (m, lo, hi) = spread(xs);
    format!("{m:.2}x ({lo:.2}-{hi:.2})")
}

/// Medians and spreads per file and configuration, this build against the baseline build
/// (when given: medians of the per-round ratios), the targets, and the many-location files
/// against the wide page (the same actions and arcs).
fn summarize(files: &[BenchFile], cells: &[Cell], runs: usize, loads: &[f64]) {
    let (lmed, llo, lhi) = spread(loads.to_vec());
    println!(
        "end to end over {runs} interleaved run(s), load average {lmed:.1} ({llo:.1}-{lhi:.1}): median (fastest-slowest)"
    );
    let mut medians: Vec<Option<(f64, f64, f64)>> = vec![None; cells.len()];
    for (i, f) in files.iter().enumerate() {
        for (j, c) in CONFIGS.iter().enumerate() {
            let k = i * CONFIGS.len() + j;
            let rs = &cells[k].ours;
            if rs.is_empty() {
                continue;
            }
            let wall: Vec<f64> = rs.iter().map(|r| r.wall_ms).collect();
            let cpu: Vec<f64> = rs.iter().map(|r| r.cpu_ms).collect();
            let peak: Vec<f64> = rs.iter().map(|r| r.peak_mb).collect();
            let m = (
                spread(wall.clone()).0,
                spread(cpu.clone()).0,
                spread(peak.clone()).0,
            );
            medians[k] = Some(m);
            println!(
                "  {:8} {}: wall {} | CPU {} | peak {}",
                f.name,
                c.label,
                show(wall, "ms"),
                show(cpu, "ms"),
                show(peak, "MB")
            );
            let base = &cells[k].base;
            if !base.is_empty() {
                let ratio = |get: fn(&Run) -> f64| {
                    show_ratio(rs.iter().zip(base).map(|(a, b)| get(a) / get(b)).collect())
                };
                println!(
                    "           baseline build: wall {} | CPU {} | peak {}; this / baseline (per round): wall {} | CPU {} | peak {}",
                    show(base.iter().map(|r| r.wall_ms).collect(), "ms"),
                    show(base.iter().map(|r| r.cpu_ms).collect(), "ms"),
                    show(base.iter().map(|r| r.peak_mb).collect(), "MB"),
                    ratio(|r| r.wall_ms),
                    ratio(|r| r.cpu_ms),
                    ratio(|r| r.peak_mb)
                );
            }
            if !c.single {
                let met = |ok: bool| if ok { "met" } else { "not met" };
                println!(
                    "           target ≤ {TARGET_WALL_MS:.0} ms, ≤ {TARGET_PEAK_MB:.0} MB (medians): wall {}, peak {}",
                    met(m.0 <= TARGET_WALL_MS),
                    met(m.2 <= TARGET_PEAK_MB)
                );
            }
        }
    }
    let Some(w) = files.iter().position(|f| f.name == "wide") else {
        return;
    };
    for (i, f) in files.iter().enumerate() {
        if f.cfg.young == 0 {
            continue;
        }
        for (j, c) in CONFIGS.iter().enumerate() {
            let (Some(m), Some(b)) = (
                medians[i * CONFIGS.len() + j],
                medians[w * CONFIGS.len() + j],
            ) else {
                continue;
            };
            println!(
                "  {} / wide, {}: wall {:.2}x | CPU {:.2}x | peak {:.2}x",
                f.name,
                c.label,
                m.0 / b.0,
                m.1 / b.1,
                m.2 / b.2
            );
        }
    }
}

/// The one-minute load average.
fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(0.0)
}

/// Runs one child of `exe` on `path` in configuration `c`; prints its report when `show`.
fn run_child(exe: &Path, path: &Path, c: &Config, show: bool) -> Option<Run> {
    let out = Command::new(exe)
        .env(CHILD, path)
        .env("SHEPHERD_BENCH_SINGLE", if c.single { "1" } else { "0" })
        .env("SHEPHERD_BENCH_JSON", if c.json { "1" } else { "0" })
        .output()
        .expect("run child");
    let text = String::from_utf8_lossy(&out.stdout);
    if show {
        print!(
            "{}",
            text.lines()
                .filter(|l| !l.starts_with(FIGURES))
                .map(|l| format!("{l}\n"))
                .collect::<String>()
        );
    }
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    }
    parse_run(&text)
}

fn main() {
    if let Ok(path) = std::env::var(CHILD) {
        let single = std::env::var("SHEPHERD_BENCH_SINGLE")
            .map(|v| v != "0")
            .unwrap_or(true);
        let json = std::env::var("SHEPHERD_BENCH_JSON").is_ok_and(|v| v == "1");
        child(&path, single, json);
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
    let runs: usize = std::env::var("SHEPHERD_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
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
    let many = SynthConfig {
        actions,
        seed,
        ..SynthConfig::many_locations()
    };
    let only = std::env::var("SHEPHERD_BENCH_FILES").ok();
    let files: Vec<BenchFile> = [
        ("page", page, false),
        ("wide", wide, false),
        ("many", many, false),
        ("many-er", many, true),
    ]
    .into_iter()
    .filter(|(name, ..)| {
        only.as_deref()
            .is_none_or(|o| o.split(',').any(|x| x.trim() == *name))
    })
    .map(|(name, cfg, er)| BenchFile { name, cfg, er })
    .collect();
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = std::env::current_exe().expect("current exe");
    let path_of = |f: &BenchFile| {
        let ext = if f.er { "er" } else { "jsonl" };
        let stem = f.name.trim_end_matches("-er");
        dir.path().join(format!("{stem}.{ext}"))
    };
    let mut made: Option<(SynthConfig, Trace)> = None;
    for f in &files {
        if made.as_ref().is_none_or(|(c, _)| *c != f.cfg) {
            made = Some((f.cfg, generate(&f.cfg)));
        }
        let Some((_, trace)) = &made else { continue };
        let path = path_of(f);
        write_trace(
            &format!(
                "synthetic trace '{}' (width {}, {} locations)",
                f.name,
                f.cfg.width,
                if f.cfg.young > 0 { "many" } else { "few" }
            ),
            trace,
            &path,
            f.er,
        );
        if let Ok(keep) = std::env::var("SHEPHERD_BENCH_KEEP") {
            // Keep a copy for profiling the child or the CLI by hand.
            let _ = std::fs::copy(&path, Path::new(&keep).join(path.file_name().unwrap()));
        }
    }
    drop(made);
    // Another build of this benchmark (an earlier commit's) whose children run beside this
    // one's, on the same files, in the same rounds.
    let baseline = std::env::var_os("SHEPHERD_BENCH_BASELINE").map(std::path::PathBuf::from);
    // Every child of every round, the rounds interleaved (and the two builds alternating
    // which goes first): a slow spell of the shared machine falls on all files alike.
    let mut cells: Vec<Cell> = vec![Cell::default(); files.len() * CONFIGS.len()];
    let mut loads = Vec::new();
    for round in 0..runs {
        loads.push(load_average());
        for (i, f) in files.iter().enumerate() {
            for (j, c) in CONFIGS.iter().enumerate() {
                if round == 0 {
                    println!("'{}', end to end, {} (fresh process):", f.name, c.label);
                }
                let cell = &mut cells[i * CONFIGS.len() + j];
                let base_first = round % 2 == 1;
                let base = || {
                    baseline
                        .as_deref()
                        .and_then(|b| run_child(b, &path_of(f), c, false))
                };
                let b = if base_first { base() } else { None };
                let ours = run_child(&exe, &path_of(f), c, round == 0);
                let b = if base_first { b } else { base() };
                // Ratios pair the runs of one round: keep a round only when both arms ran.
                match (ours, b, &baseline) {
                    (Some(o), Some(b), Some(_)) => {
                        cell.ours.push(o);
                        cell.base.push(b);
                    }
                    (Some(o), _, None) => cell.ours.push(o),
                    _ => {}
                }
            }
        }
    }
    loads.push(load_average());
    summarize(&files, &cells, runs, &loads);

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
