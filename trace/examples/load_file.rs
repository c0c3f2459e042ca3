//! Times one load of a trace file as `shepherd races` does it (same allocator and allocator
//! settings), in this fresh process: wall time, CPU time of the whole process (every thread),
//! and peak resident memory before and after. Run it several times; the machine may be shared.
//!
//! `cargo run --release -p shepherd-trace --example load_file -- FILE [MODE]`, MODE `file`
//! (the default: `load_path_with_progress`, what the CLI calls), `reader` (`load_reader` over
//! the file: one thread) or `check` (both, and compares the traces).

use std::time::Instant;

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn vm_hwm_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0.0)
        / 1024.0
}

/// CPU time of the process, all threads (including those that have exited), in ms.
fn process_cpu_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: load_file FILE [reader]");
        std::process::exit(2);
    };
    let mode = args.next().unwrap_or_else(|| "file".into());
    // The allocator set-up of `shepherd races` (analysis/src/memory.rs, `for_batch_analysis`;
    // this crate cannot depend on that one).
    // SAFETY: PR_SET_THP_DISABLE only sets a flag on this process; mi_option_set only stores
    // the option (15 = mi_option_purge_delay).
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
        libmimalloc_sys::mi_option_set(15, 10);
    }
    let base = vm_hwm_mb();
    let c0 = process_cpu_ms();
    let t0 = Instant::now();
    let loaded = match mode.as_str() {
        "reader" => std::fs::File::open(&path)
            .map_err(shepherd_trace::ReadError::from)
            .and_then(shepherd_trace::load_reader),
        _ => shepherd_trace::load_path_with_progress(path.as_ref(), &mut |_, _| {}),
    }
    .unwrap_or_else(|e| panic!("{path}: {e}"));
    let wall = t0.elapsed().as_secs_f64() * 1e3;
    let cpu = process_cpu_ms() - c0;
    println!(
        "{mode}: load {wall:.1} ms wall, {cpu:.1} ms CPU | peak {:.1} MB (start {base:.1}) | {} actions, {} ops, {} strings",
        vm_hwm_mb(),
        loaded.trace.actions.len(),
        loaded.trace.ops.len(),
        loaded.trace.strings.len()
    );
    if mode == "check" {
        let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let one = shepherd_trace::load_reader(file).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert!(one.trace == loaded.trace, "the traces differ");
        println!("same trace as load_reader");
    }
}
