//! Giving memory back after a burst. mimalloc returns freed pages to the OS only when the thread
//! that owns them calls into the allocator again, so a proxy whose workers went idle after
//! thousands of connections closed kept their memory resident indefinitely. The proxy runtime
//! calls [`worker_idle`] whenever a worker runs out of work, and [`wake_idle_workers`] makes sure
//! an idle runtime still gets there after the last collection was skipped as too recent.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// Least time between two collections on one worker: parking happens thousands of times a
/// second under load, and a forced collection is not cheap: collecting at every park cost 18%
/// more CPU per proxied request, at most every 10 ms still 12% (`scripts/soak-proxy`, 1 KB
/// over HTTPS); twice a second costs nothing measurable.
const EVERY: Duration = Duration::from_millis(500);

/// Collects this thread's free pages and returns them to the OS (at most every [`EVERY`]).
pub(crate) fn worker_idle() {
    thread_local! {
        static LAST: Cell<Option<Instant>> = const { Cell::new(None) };
    }
    let now = Instant::now();
    if LAST
        .get()
        .is_some_and(|last| now.duration_since(last) < EVERY)
    {
        return;
    }
    LAST.set(Some(now));
    release_freed();
}

/// Wakes the workers every second so that a collection skipped at the end of a burst (too soon
/// after the previous one) happens once the burst is over: a tick wakes one worker, the empty
/// tasks it spawns wake the others to steal them. Costs a few wake-ups a second.
pub(crate) async fn wake_idle_workers() {
    let workers = tokio::runtime::Handle::current().metrics().num_workers();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tick.tick().await;
        // One per worker: the first spawned sits in this worker's LIFO slot, which others
        // cannot steal; each further one pushes its predecessor to the stealable queue.
        for _ in 0..workers {
            tokio::spawn(async {});
        }
    }
}

/// `mi_option_purge_delay` in mimalloc's `mi_option_t` (the same index in v2 and v3; the
/// crate exports no constant for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// How long freed memory stays resident before mimalloc returns it during a batch analysis.
/// mimalloc's default (1 s) outlasts a whole `shepherd races` run, so nothing freed was ever
/// returned; 0 and 10 ms peak the same (`cargo bench -p shepherd-races --bench pipeline`).
const ANALYSIS_PURGE_DELAY_MS: std::ffi::c_long = 10;

/// Sets up the allocator for a one-shot analysis that loads a trace, builds large tables and
/// frees them phase after phase (`shepherd races`, `policy covers`): peak resident memory
/// then follows what is live rather than everything ever allocated. The pipeline benchmark
/// does the same, so its figures are this command's.
///
/// - Transparent huge pages off for the process: mimalloc advises huge pages on its 1 GiB
///   arena, so every touched 2 MiB counted whole and freed memory could not be returned in
///   smaller pieces (wide 115 000-action page: 124–133 MB → 104–107 MB peak). 4 KiB pages
///   cost page faults (with the purge below, 0.02–0.1 s of CPU on that page), but huge
///   pages were not reliably faster: on a busy machine the kernel sometimes spent 0.3–0.45 s
///   of system time per run assembling them. Children inherit the setting; these commands
///   start none.
/// - Freed memory returned after [`ANALYSIS_PURGE_DELAY_MS`] instead of one second (→ 95 MB).
pub(crate) fn for_batch_analysis() {
    // SAFETY: PR_SET_THP_DISABLE only sets a flag on this process; a kernel without it
    // returns an error, which changes nothing.
    #[cfg(target_os = "linux")]
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
    // SAFETY: mi_option_set only stores the option; mimalloc reads the delay when it purges.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, ANALYSIS_PURGE_DELAY_MS) };
}

/// Returns what this thread's heap has freed to the OS now. `shepherd races` calls it before
/// another thread starts allocating: a thread allocates from its own heap, so memory freed
/// on the main thread but not returned yet ([`ANALYSIS_PURGE_DELAY_MS`]) would still count
/// while the other thread fills new pages. (On the races bench's pages its effect on the
/// peak was within the run-to-run spread of 1-2 MB.)
pub(crate) fn release_freed() {
    // SAFETY: mi_collect has no preconditions; it only touches the calling thread's heap and
    // the allocator's own arenas.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

#[cfg(test)]
mod tests {
    /// `MI_OPTION_PURGE_DELAY` is an index into mimalloc's option table: a renumbering in a
    /// later mimalloc would set another option. Only the purge delay defaults to 1000 (ms).
    #[test]
    fn the_purge_delay_index_names_the_purge_delay() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return;
        }
        // SAFETY: mi_option_get only reads the option.
        let value = unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
        assert_eq!(value, 1000);
    }
}
