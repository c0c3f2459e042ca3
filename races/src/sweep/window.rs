//! The last [`TIMER_WINDOW`](crate::fifo::TIMER_WINDOW) timer fires and queue deliveries, which each
//! new one is checked against for FIFO arcs.
//!
//! Every fire looks at the whole window: 42 000 fires × 256 entries on the 1 000-chain bench
//! page. With a branch per test (kind, "already below", "registrar ordered") that was 68 of
//! the happens-before half's 170 ms: about half the entries pass the kind test, in no
//! pattern, so its branch mispredicted at every other entry. Here the tests that cannot
//! change during the look (kind, registrar order, below the predecessors' clock) are
//! computed without branches over all entries (7 % pass the registrar test, 2.8 % all
//! three); only those picked are then walked newest first, as before, re-checking "below"
//! against the clock as it grows. 35 ms, same arcs.

use crate::fifo::FifoKind;

/// A fire's place in the chains: (action, chain, position).
pub(super) type Place = (u32, u32, u16);

/// One fire in the window.
#[derive(Clone, Copy)]
struct Entry {
    /// The kind as the range of later kinds it precedes, `lo..=hi` (see [`range`]).
    lo: u64,
    hi: u64,
    action: u32,
    chain: u32,
    reg_chain: u32,
    pos: u16,
    reg_pos: u16,
}

/// The window; entries `start..` are live, oldest first.
#[derive(Default)]
pub(super) struct Window {
    start: usize,
    entries: Vec<Entry>,
    /// What the last [`Window::pick`] picked: indices into the live entries, newest first.
    order: Vec<u32>,
    picked: usize,
}

/// A kind as one number, and the numbers of the kinds it precedes as a range: a timer
/// precedes timers of no shorter delay, a delivery only deliveries of its own queue.
fn range(kind: FifoKind) -> (u64, u64, u64) {
    const TIMER: u64 = 1 << 32;
    match kind {
        FifoKind::Timer(d) => {
            let at = TIMER | u64::from(d);
            (at, at, TIMER | u64::from(u32::MAX))
        }
        FifoKind::Queue(q) => {
            let at = u64::from(q);
            (at, at, at)
        }
    }
}

impl Window {
    /// Live entries.
    pub(super) fn len(&self) -> usize {
        self.entries.len() - self.start
    }

    /// Adds the newest fire, at `at`, registered by the action at (`chain`, `pos`) `reg`.
    pub(super) fn push(&mut self, at: Place, reg: (u32, u16), kind: FifoKind) {
        // Slide the live entries down once the dead ones outnumber them: each entry moves
        // once on average.
        if self.start > 0 && self.start >= self.len() {
            self.entries.drain(..self.start);
            self.start = 0;
        }
        let (_, lo, hi) = range(kind);
        self.entries.push(Entry {
            lo,
            hi,
            action: at.0,
            chain: at.1,
            reg_chain: reg.0,
            pos: at.2,
            reg_pos: reg.1,
        });
    }

    /// Drops the oldest fire and returns its action.
    pub(super) fn pop_oldest(&mut self) -> Option<u32> {
        let a = self.entries.get(self.start)?.action;
        self.start += 1;
        Some(a)
    }

    /// Picks the fires that must run before a new fire of `kind` whose registrar's clock is
    /// `reg_clock`: kind precedes `kind`, registrar below `reg_clock`, and the fire is not
    /// below `gs` (the new fire's clock so far). Both clocks are dense and cover every chain
    /// of the window. The caller then walks [`Window::picked`], newest first, joining the
    /// fires and, as its clock grows, skipping those that became below it.
    pub(super) fn pick(&mut self, kind: FifoKind, reg_clock: &[u16], gs: &[u16]) {
        let (key, _, _) = range(kind);
        let live = &self.entries[self.start..];
        // Sized once: every entry is written, and only the first `picked` count.
        if self.order.len() < live.len() {
            self.order.resize(live.len(), 0);
        }
        let mut k = 0;
        for (i, e) in live.iter().enumerate().rev() {
            // `&` and `|`, not `&&` and `||`: about half the entries pass the kind test, in
            // no pattern, and a branch on it mispredicted at every other entry.
            let precedes = (e.lo <= key) & (key <= e.hi);
            // A registrar is below its own clock: no test for `reg` itself.
            let ordered = reg_clock[e.reg_chain as usize] >= e.reg_pos;
            let below = gs[e.chain as usize] >= e.pos;
            self.order[k] = i as u32;
            k += usize::from(precedes & ordered & !below);
        }
        self.picked = k;
    }

    /// The `j`-th fire picked (newest first): (action, chain, position).
    pub(super) fn picked(&self, j: usize) -> Option<Place> {
        if j >= self.picked {
            return None;
        }
        let e = self
            .entries
            .get(self.start + *self.order.get(j)? as usize)?;
        Some((e.action, e.chain, e.pos))
    }
}
