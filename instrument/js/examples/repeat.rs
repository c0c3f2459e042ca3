//! Instruments one file N times and prints nothing: a fixed workload for instruction counts
//! (`valgrind --tool=callgrind`, repeatable whatever else the machine does) and page-fault
//! counts (`/usr/bin/time -v`), which wall-clock benchmarks on a shared machine cannot resolve.
//! Uses mimalloc, the `shepherd` binary's allocator.
//!
//! `cargo build --release --example repeat -p shepherd-instrument-js`, then
//! `valgrind --tool=callgrind target/release/examples/repeat FILE 3` (and with `1`: the
//! difference over 2 is one warm job). A third argument `base` runs the benchmark's baseline
//! (swc's parse + emit of the same file) instead of the pass, `map` the pass with a source map.
use shepherd_instrument_js::{Kind, Options, baseline_roundtrip, instrument};

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(n)) = (args.get(1), args.get(2).and_then(|n| n.parse::<u32>().ok()))
    else {
        eprintln!("usage: repeat FILE N [base|map]");
        return std::process::ExitCode::FAILURE;
    };
    let src = match std::fs::read_to_string(path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{path}: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let mut opts = Options::new(Kind::Script, path.clone());
    let mode = args.get(3).map_or("pass", String::as_str);
    opts.source_map = mode == "map";
    let run = if mode == "base" {
        baseline_roundtrip
    } else {
        instrument
    };
    let mut bytes = 0;
    for _ in 0..n {
        match run(&src, &opts) {
            Ok(o) => bytes += o.code.len(),
            Err(e) => {
                eprintln!("{e}");
                return std::process::ExitCode::FAILURE;
            }
        }
    }
    eprintln!("{n} jobs, {bytes} bytes out");
    std::process::ExitCode::SUCCESS
}
