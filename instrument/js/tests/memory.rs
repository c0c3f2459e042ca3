//! Workers live for the whole proxy run: a job must not leave memory behind. swc interns every
//! name longer than 7 bytes in a per-thread table that only shrinks when collected, and the
//! pass interns one position literal per access, distinct for every script; without the
//! collection after each job a worker grew by ~0.3 MB per distinct jQuery-sized script.
//!
//! Live heap bytes are counted exactly by a wrapping global allocator (this test binary only),
//! so allocator caching cannot hide or fake growth.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use shepherd_instrument_js::{Kind, Options, instrument};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only a counter is kept.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as isize, Ordering::Relaxed);
        // SAFETY: same layout as requested.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
        // SAFETY: `p` was allocated by `alloc` with layout `l`.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new as isize - l.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// A script with many logged accesses and long names; `i` makes its bytes (and so its
/// position literals) distinct.
fn script(i: usize) -> String {
    let mut s = format!("/* variant {i} */\n");
    for k in 0..300 {
        s.push_str(&format!(
            "someObjectName.propertyNumber{k} = otherObjectName.valueNumber{k} + globalCounter{k};\n"
        ));
    }
    s
}

/// Live bytes once the workers are idle (they free a job's tree after replying): unchanged for
/// five samples in a row, so a worker that a loaded machine left waiting for a moment with a
/// tree still held is not taken for an idle one.
fn settled() -> isize {
    use std::time::{Duration, Instant};
    let deadline = Instant::now() + shepherd_testkit::patience(Duration::from_secs(2));
    let mut last = LIVE.load(Ordering::Relaxed);
    let mut same = 0;
    while same < 5 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(40));
        let now = LIVE.load(Ordering::Relaxed);
        same = if now == last { same + 1 } else { 0 };
        last = now;
    }
    last
}

#[test]
fn distinct_scripts_leave_no_memory_behind() {
    let opts = Options::new(Kind::Script, "memory.js");
    // Warm up every worker (thread-local tables, allocator state).
    for i in 0..16 {
        instrument(&script(i), &opts).unwrap();
    }
    let before = settled();
    for i in 16..56 {
        let out = instrument(&script(i), &opts).unwrap();
        assert!(out.code.contains("__shepherd.W("));
    }
    let grown = settled() - before;
    // Without collection these 40 jobs leave about 1.7 MB of interned names behind.
    assert!(
        grown < 256 * 1024,
        "40 distinct jobs left {grown} bytes live"
    );
}
