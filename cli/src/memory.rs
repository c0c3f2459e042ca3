//! Giving the proxy's memory back after a burst. mimalloc returns freed pages to the OS only
//! when the thread that owns them calls into the allocator again, so a proxy whose workers
//! went idle after thousands of connections closed kept their memory resident indefinitely.
//! The proxy runtime calls [`worker_idle`] whenever a worker runs out of work, and
//! [`wake_idle_workers`] makes sure an idle runtime still gets there after the last collection
//! was skipped as too recent. The collection itself is the analysis' own
//! (`shepherd_analysis::memory::release_freed`).

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
    shepherd_analysis::memory::release_freed();
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
