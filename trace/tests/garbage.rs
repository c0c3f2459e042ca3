//! Deterministic garbage for both readers: thousands of mutated and random inputs must give a
//! result or an error naming an offset inside the input — never a panic — and a read must never
//! allocate much more than the input's size justifies (a per-thread counting allocator checks).
//! The JSONL reader in parts gives the same result or error as the sequential one.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Rng;

use shepherd_trace::er::{read_er, to_er_bytes};
use shepherd_trace::{ReadError, read_jsonl, read_jsonl_parts, to_jsonl_bytes};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the counters are plain thread-local cells.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let _ = LIVE.try_with(|c| {
            let v = c.get() + l.size();
            c.set(v);
            let _ = PEAK.try_with(|p| p.set(p.get().max(v)));
        });
        // SAFETY: same contract as ours.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        let _ = LIVE.try_with(|c| c.set(c.get().saturating_sub(l.size())));
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Peak bytes allocated (above the level at the start) while running `f`.
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let r = f();
    (r, PEAK.with(Cell::get) - base)
}

const INTERESTING: &[&[u8]] = &[
    b"\xff\xff\xff\x7f",
    b"\x00\x00\x00\x80",
    b"\xff\xff\xff\xff",
    b"\x00\x00\x00\x00",
    b"\x01\x00\x00\x00",
    b"SHEPHERD",
    b"4294967296",
    b"99999999999999999999",
    b"-1",
    b"\"\\ud800\"",
    b"[\"a\",0,0,\"f\"]\n",
    b"{\"format\":\"shepherd-trace\",\"version\":1}\n",
    b"\n",
    b"\\",
];

fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = v.len();
        match rng.below(7) {
            0 if len > 0 => {
                let i = rng.below(len);
                v[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                v[i] = rng.next() as u8;
            }
            2 => v.truncate(rng.below(len + 1)),
            3 => {
                let i = rng.below(len + 1);
                let x = INTERESTING[rng.below(INTERESTING.len())];
                v.splice(i..i, x.iter().copied());
            }
            4 if len > 4 => {
                // Overwrite an aligned word (ER counts and ids live there).
                let i = rng.below(len / 4) * 4;
                let x = INTERESTING[rng.below(5)];
                let end = (i + 4).min(len);
                v[i..end].copy_from_slice(&x[..end - i]);
            }
            5 if len > 0 => {
                let a = rng.below(len);
                let b = (a + rng.below(64)).min(len);
                v.drain(a..b);
            }
            _ => {
                let a = rng.below(len + 1);
                let b = (a + rng.below(32)).min(len);
                let chunk: Vec<u8> = v[a..b].to_vec();
                let i = rng.below(len + 1);
                v.splice(i..i, chunk);
            }
        }
    }
    v
}

fn check(input: &[u8]) {
    let limit = 64 * input.len() + (1 << 20);
    let (r, peak) = peak_during(|| read_jsonl(input));
    assert!(
        peak <= limit,
        "JSONL read of {} bytes allocated {peak}",
        input.len()
    );
    // Read in parts on other threads, the same trace or the same error.
    let len = input.len() as u64;
    let parts = read_jsonl_parts(input, &[len / 3, len / 2 + 1, len - len / 5]);
    match (&r, parts) {
        (Ok(a), Ok(b)) => assert_eq!(*a, b),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        (a, b) => panic!("sequential {a:?}, in parts {b:?}"),
    }
    if let Err(e) = r {
        check_offset(&e, input.len());
    }
    let (r, peak) = peak_during(|| read_er(input));
    assert!(
        peak <= limit,
        "ER read of {} bytes allocated {peak}",
        input.len()
    );
    match r {
        Err(e) => check_offset(&e, input.len()),
        // Whatever was accepted satisfies the model's invariants: our strict JSONL reader
        // takes it back unchanged.
        Ok(imp) => {
            let back = read_jsonl(&to_jsonl_bytes(&imp.trace)[..]).unwrap();
            assert_eq!(back, imp.trace);
        }
    }
}

fn check_offset(e: &ReadError, len: usize) {
    match e {
        ReadError::Io(e) => panic!("I/O error from a byte slice: {e}"),
        _ => assert!(e.offset().unwrap() <= len as u64, "{e} (input {len} bytes)"),
    }
}

fn seeds() -> Vec<Vec<u8>> {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let mut out = Vec::new();
    for _ in 0..12 {
        let t = common::trace().new_tree(&mut runner).unwrap().current();
        out.push(to_jsonl_bytes(&t));
        let er = to_er_bytes(&t);
        // Also without our trailer, as EventRacer writes it.
        let cut = er
            .windows(8)
            .rposition(|w| w == b"SHEPHERD")
            .unwrap_or(er.len());
        out.push(er[..cut].to_vec());
        out.push(er);
    }
    out
}

#[test]
fn mutated_inputs_never_panic() {
    let seeds = seeds();
    let mut rng = Rng::new(0x5eed);
    for seed in &seeds {
        check(seed);
    }
    // The allocation counter does see the readers' allocations.
    let (_, peak) = peak_during(|| read_jsonl(&seeds[0][..]));
    assert!(peak > 0);
    for _ in 0..4000 {
        let seed = &seeds[rng.below(seeds.len())];
        check(&mutate(&mut rng, seed));
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng::new(42);
    for _ in 0..1500 {
        let len = rng.below(300);
        let v: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        check(&v);
        // Small little-endian words: plausible counts and ids for the ER reader.
        let w: Vec<u8> = (0..len / 4)
            .flat_map(|_| (rng.below(12) as i32 - 2).to_le_bytes())
            .collect();
        check(&w);
    }
}

/// Refreshes the fuzzers' seed corpus: `cargo test -p shepherd-trace --test garbage -- --ignored`.
#[test]
#[ignore]
fn write_fuzz_corpus() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    for (i, seed) in seeds().iter().enumerate() {
        let kind = if seed.first() == Some(&b'{') {
            "jsonl"
        } else {
            "er"
        };
        let d = dir.join(kind);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(format!("seed-{i:02}")), seed).unwrap();
    }
}
