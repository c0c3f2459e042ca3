//! The streaming analysis: one pass over the actions in id order that derives timer FIFO arcs,
//! assigns chains, finds race candidates, and answers single and multi coverage — keeping only
//! the clocks that a later node still needs.
//!
//! Each action `v` goes through three clocks, all over the same chain numbering:
//! - `G`: happens-before (predecessors, timer FIFO arcs); decides which pairs race;
//! - `G⁺`: happens-before plus race arcs, folded in operation order (see `coverage.rs` for why
//!   this is Def. 3.2);
//! - `S`: what a single race reaches (Def. 3.1; see `coverage.rs`).
//!
//! What stays in memory: the clocks of actions with successors not processed yet (and the
//! last few timer fires, for FIFO), the `G⁺` clocks of each location's last writer and maximal
//! pending readers, and, for single coverage, two running joins per location that can race
//! (the `G` clocks of all its accesses and of its writes). Leaf
//! actions — most of a page — are never stored. Race arcs of pairs that turn out ordered are
//! folded too: their tail's clock is already below the current one, so that adds nothing.
//! Accesses are known in advance, so a location's state goes as soon as nothing will ask
//! about it again (after its last access; pending reads after its last write).
//!
//! Clocks live in [`ClockStore`]s (chunked, compacted as clocks are freed, each clock
//! sparse when most of its entries are 0) and the running joins are [`RunningJoin`]s (sparse
//! until half set): on a page with ≈ 1 000 chains most clocks reach few of them, and memory
//! follows what they reach rather than actions × chains.
//!
//! The pass is cut in two halves on two threads (on one when the trace is small or the
//! machine has one core). This file is the happens-before half: `G`, `S`, chains, FIFO
//! arcs, races, and which clocks are still needed. `G⁺` needs those decisions but feeds
//! nothing back into them, so the happens-before half writes what `G⁺` must do as a stream
//! of commands, and `plus.rs` plays it: the coverage answers and the `G⁺` clocks. On the
//! 1 000-chain bench page the fused loop took ≈ 263 ms; the happens-before half's loop, which
//! now bounds the pass, took ≈ 170 ms (≈ 131 ms with the FIFO window of `window.rs`). Each half keeps its own store, so the `G⁺` clocks are held by the
//! thread that made them.
//!
//! The reference implementation that keeps every clock is `chains.rs` + `races.rs` +
//! `coverage.rs`; property tests check that both agree.

use crate::accesses::{AccessKind, Scan};
use crate::clocks::{ChainTable, Scratch};
use crate::fifo::{self, FifoKind, TIMER_WINDOW};
use crate::fixes::FixOptions;
use crate::graph::{GraphError, HbArc, HbGraph};
use crate::races::Race;
use crate::store::{ClockRef, ClockStore, RunningJoin};
use plus::{Commands, PlusHalf};
use shepherd_trace::Trace;
use window::Window;

mod plus;
mod window;

const NONE: u32 = u32::MAX;

/// How many accesses (in trace order) ahead of the current one the sweep prefetches.
const PREFETCH_AHEAD: usize = 16;

/// Hints the CPU to bring `x` into the cache.
#[inline(always)]
fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only hints the cache; it reads nothing and `x` is a valid reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (x as *const T).cast::<i8>(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// Everything the sweep computes.
#[derive(Debug, Default)]
pub struct SweepOutput {
    /// Final happens-before graph (logged, static derived and timer FIFO arcs).
    pub graph: HbGraph,
    /// The chain decomposition.
    pub chains: ChainTable,
    /// Candidate races in order of their second access.
    pub races: Vec<Race>,
    /// Def. 3.2 coverage per race.
    pub covered: Vec<bool>,
    /// Def. 3.1 coverage per race (when asked for).
    pub single: Option<Vec<bool>>,
    /// Per race: its second access is a read that no earlier write reaches, even through
    /// races (the initialisation-race condition, EventRacer §5.4).
    pub uninit: Vec<bool>,
    /// Largest number of clock entries held at once: the happens-before half's (its store and
    /// the per-location joins) plus the `G⁺` half's. The halves peak at nearly the same
    /// moments: on the bench pages the sum is within 0.2 % of what one pass held at its peak.
    pub peak_entries: usize,
    /// Time spent building the static graph (the rest of the sweep is the fused pass).
    pub graph_time: std::time::Duration,
}

/// Which of an action's clocks the happens-before half's store key names.
#[derive(Clone, Copy)]
enum Kind {
    G = 0,
    Single = 1,
}

/// The clocks of every action still needed, with the reasons they are needed. The `G⁺`
/// clocks are kept by the other half, told here when to drop one.
struct Stores<'s, 'g> {
    clocks: ClockStore,
    /// Keys per action: 2 with single coverage (G and S), else 1 (a key costs 8 bytes per
    /// action, ≈ 1 MB on the bench pages).
    stride: u32,
    /// Successors not processed yet (+1 while in the timer window): keep G, G⁺ and S.
    succ: Vec<u32>,
    /// Last writer of / maximal pending reader at how many locations: keeps G⁺.
    p_refs: Vec<u32>,
    /// Whether the `G⁺` half keeps the action's clock.
    plus_kept: Vec<bool>,
    plus: Commands<'s, 'g>,
}

impl Stores<'_, '_> {
    fn key(&self, v: u32, k: Kind) -> u32 {
        self.stride * v + k as u32
    }

    fn get(&self, v: u32, k: Kind) -> ClockRef<'_> {
        self.clocks.get(self.key(v, k))
    }

    /// Drops whatever clocks of `a` nothing refers to any more.
    fn maybe_free(&mut self, a: u32) {
        let i = a as usize;
        if self.succ[i] == 0 {
            if self.stride == 2 {
                self.clocks.remove(self.key(a, Kind::Single));
            }
            self.clocks.remove(self.key(a, Kind::G));
            if self.p_refs[i] == 0 && self.plus_kept[i] {
                self.plus_kept[i] = false;
                self.plus.free(a);
            }
        }
    }

    /// `a` is no longer last writer or pending reader somewhere.
    fn unref(&mut self, a: u32) {
        self.p_refs[a as usize] -= 1;
        self.maybe_free(a);
    }
}

/// An access remembered by a location, with what race checks need (no lookups).
#[derive(Clone, Copy, Debug)]
struct Pending {
    access: u32,
    action: u32,
    chain: u32,
    pos: u16,
}

/// Per-location state of the sweep.
#[derive(Default)]
struct LocState {
    /// Reads since the last write: each pairs with the next write.
    pending: Vec<Pending>,
    /// Maximal actions among the pending reads (their G⁺ clocks cover all pending reads').
    pend_frontier: Vec<u32>,
    /// Joins of the G clocks of all accesses / of the writes so far (single coverage).
    join_all: RunningJoin,
    join_writes: RunningJoin,
    /// Minimal writes: writes no earlier write happens before.
    min_writes: Vec<u32>,
}

/// Adds action `v` to a frontier of maximal actions, dropping members below it.
fn advance(fr: &mut Vec<u32>, v: u32, gs: &Scratch, chains: &ChainTable, st: &mut Stores) {
    let mut k = 0;
    while k < fr.len() {
        let f = fr[k];
        if f != v && gs.reaches(chains.chain_of(f), chains.pos_of(f)) {
            fr.swap_remove(k);
            st.unref(f);
        } else {
            k += 1;
        }
    }
    if !fr.contains(&v) {
        fr.push(v);
        st.p_refs[v as usize] += 1;
    }
}

/// The locations that can race at all (a write, and accesses from two actions), numbered
/// densely: only they get per-location state. On a long session's trace most locations are
/// fields of objects that one action made and used (≈ 21 000 of 282 000 can race on the
/// many-location bench trace), and state for every location ever seen was most of the
/// sweep's memory there (a `LocState` is ≈ 140 bytes); now it follows the locations that
/// can race.
struct Slots {
    /// Per location: its slot, or `NONE` when it cannot race.
    of: Vec<u32>,
    /// Per slot: its location.
    loc: Vec<u32>,
}

impl Slots {
    fn new(acc: &crate::accesses::Accesses) -> Slots {
        let mut loc = Vec::new();
        let of = (0..acc.locs.len() as u32)
            .map(|l| {
                let xs = acc.of(l);
                let may_race = xs.iter().any(|x| x.kind.is_write())
                    && xs.iter().any(|x| x.action != xs[0].action);
                if may_race {
                    loc.push(l);
                    (loc.len() - 1) as u32
                } else {
                    NONE
                }
            })
            .collect();
        Slots { of, loc }
    }

    /// How many locations can race.
    fn len(&self) -> usize {
        self.loc.len()
    }
}

/// What is left of a location after one of its accesses (the accesses are known in
/// advance, so state nothing will ask about again is dropped at once).
struct Ahead {
    /// Per slot: index (into [`crate::accesses::Accesses::all`]) of its location's last
    /// write, or `NONE`.
    last_write: Vec<u32>,
}

impl Ahead {
    fn new(acc: &crate::accesses::Accesses, slots: &Slots) -> Ahead {
        let last_write = slots
            .loc
            .iter()
            .map(|&l| {
                acc.range_of(l)
                    .rev()
                    .find(|&i| acc.get(i).kind.is_write())
                    .unwrap_or(NONE)
            })
            .collect();
        Ahead { last_write }
    }

    /// Whether a write of the location in slot `s` comes after access `xi`.
    fn write_after(&self, s: usize, xi: u32) -> bool {
        let w = self.last_write[s];
        w != NONE && w > xi
    }
}

/// Fewest actions for which the `G⁺` half gets a thread of its own. Picked, not tuned: a
/// smaller trace's whole pass takes milliseconds, so a thread would save little, and the
/// fixtures' reports keep coming from one thread.
const SPLIT_FROM: u32 = 20_000;

/// Runs the sweep. `single` also computes Def. 3.1 coverage.
pub fn sweep(
    trace: &Trace,
    scan: &Scan,
    opts: &FixOptions,
    single: bool,
) -> Result<SweepOutput, GraphError> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let split = cores > 1 && trace.actions.len() >= SPLIT_FROM as usize;
    sweep_with(trace, scan, opts, single, split).map(|(out, _)| out)
}

/// What the two halves hold when the sweep ends: equal counts (and no minimal writes left)
/// when the command stream freed what the happens-before half dropped.
#[derive(Debug, PartialEq)]
struct Leftovers {
    kept_by_g: usize,
    held_by_plus: usize,
    minimal_left: usize,
}

/// What the happens-before half reads.
struct Input<'a> {
    trace: &'a Trace,
    scan: &'a Scan,
    graph: &'a HbGraph,
    fifo: &'a [Option<(u32, FifoKind)>],
    slots: &'a Slots,
    single: bool,
}

/// What the happens-before half finds.
struct GHalf {
    chains: ChainTable,
    races: Vec<Race>,
    single: Vec<bool>,
    fifo_arcs: Vec<HbArc>,
    peak: usize,
    /// Actions whose `G⁺` clock the other half should still hold at the end.
    plus_kept: usize,
}

/// [`sweep`], with the `G⁺` half on a thread of its own when `split`, else played on this
/// thread as the commands come (tests run both).
fn sweep_with(
    trace: &Trace,
    scan: &Scan,
    opts: &FixOptions,
    single: bool,
    split: bool,
) -> Result<(SweepOutput, Leftovers), GraphError> {
    let started = std::time::Instant::now();
    let n = trace.actions.len() as u32;
    let graph = crate::chains::static_graph(trace, scan, opts)?;
    let graph_time = started.elapsed();

    // Registrar/poster and FIFO kind of each timer fire and queue delivery.
    let fifo = fifo::fifo_members(trace, &scan.queues, opts);
    let slots = Slots::new(&scan.accesses);
    let input = Input {
        trace,
        scan,
        graph: &graph,
        fifo: &fifo,
        slots: &slots,
        single,
    };
    let half = PlusHalf::new(&graph, slots.len());
    let (g, answers) = if split {
        std::thread::scope(|s| {
            let (plus, handle) = Commands::thread(s, half);
            let g = happens_before(&input, plus);
            let answers = handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (g, answers)
        })
    } else {
        let mut half = half;
        let g = happens_before(&input, Commands::here(&mut half));
        (g, half.into_answers())
    };

    let leftovers = Leftovers {
        kept_by_g: g.plus_kept,
        held_by_plus: answers.held_at_end,
        minimal_left: answers.minimal_left,
    };
    let graph = if g.fifo_arcs.is_empty() {
        graph
    } else {
        let mut all = graph.into_arcs();
        all.extend(g.fifo_arcs);
        HbGraph::new(n, all)?
    };
    let out = SweepOutput {
        graph,
        chains: g.chains,
        races: g.races,
        covered: answers.covered,
        single: single.then_some(g.single),
        uninit: answers.uninit,
        peak_entries: g.peak + answers.peak,
        graph_time,
    };
    Ok((out, leftovers))
}

/// The happens-before half: `G` (and `S`) clocks, chains, timer FIFO arcs and races, telling
/// the `G⁺` half what to do as it goes.
fn happens_before(input: &Input, plus: Commands) -> GHalf {
    let Input {
        trace,
        scan,
        graph,
        fifo,
        slots,
        single,
    } = *input;
    let n = trace.actions.len() as u32;
    let acc = &scan.accesses;
    let mut succ_refs = vec![0u32; n as usize];
    for a in graph.arcs() {
        succ_refs[a.tail as usize] += 1;
    }
    // Successors left to process, without the timer-window reference (for chain choice).
    let mut static_left = succ_refs.clone();
    let stride = if single { 2 } else { 1 };
    let mut st = Stores {
        clocks: ClockStore::new((stride * n) as usize),
        stride,
        succ: succ_refs,
        p_refs: vec![0u32; n as usize],
        plus_kept: vec![false; n as usize],
        plus,
    };

    // Per-location state, by slot (locations that cannot race have none).
    let nl = slots.len();
    let ahead = Ahead::new(acc, slots);
    let mut loc: Vec<LocState> = (0..nl).map(|_| LocState::default()).collect();
    // Last write per slot, kept apart from the rest of the state: it is read at every
    // access, so it should stay in cache.
    let mut lws: Vec<Pending> = vec![
        Pending {
            access: NONE,
            action: NONE,
            chain: 0,
            pos: 0,
        };
        nl
    ];

    let mut chains = ChainTable::default();
    let (mut gs, mut ss) = (Scratch::default(), Scratch::default());
    let mut rs = Scratch::default();
    let mut window = Window::default();
    let mut fifo_arcs: Vec<HbArc> = Vec::new();
    let mut new_fifo: Vec<u32> = Vec::new();
    let mut races: Vec<Race> = Vec::new();
    let mut single_cov: Vec<bool> = Vec::new();
    let mut peak = 0usize;
    let mut loc_entries = 0usize;
    let mut merge_buf: Vec<u32> = Vec::new();
    let order = acc.trace_order();
    let mut next = 0usize;

    for v in 0..n {
        // G clock.
        gs.clear();
        for p in graph.preds(v) {
            st.get(p, Kind::G).join_into(&mut gs);
        }
        new_fifo.clear();
        if let Some(&Some((reg, kind))) = fifo.get(v as usize) {
            rs.clear();
            st.get(reg, Kind::G).join_into(&mut rs);
            let nc = chains.chains();
            window.pick(kind, rs.padded(nc), gs.padded(nc));
            let mut j = 0;
            while let Some((a, ac, ap)) = window.picked(j) {
                j += 1;
                // An earlier pick joined may have brought this one below.
                if gs.reaches(ac, ap) {
                    continue;
                }
                st.get(a, Kind::G).join_into(&mut gs);
                new_fifo.push(a);
                fifo_arcs.push(HbArc {
                    tail: a,
                    head: v,
                    origin: kind.origin(),
                });
            }
        }
        // Fast path: continue the chain of a predecessor whose only successor left is v.
        let mut fast = None;
        for p in graph.preds(v) {
            if static_left[p as usize] == 1 && chains.is_tail(p) && chains.has_room(p) {
                fast = Some(p);
                break;
            }
        }
        let (c, pos) = match fast {
            Some(p) => chains.extend(p, &mut gs),
            None => chains.assign_greedy(&mut gs, |t| static_left[t as usize] == 0),
        };
        let reach = |gs: &Scratch, a: u32| gs.reaches(chains.chain_of(a), chains.pos_of(a));

        // S starts from the same predecessors as G⁺.
        if single {
            ss.clear();
            for p in graph.preds(v).chain(new_fifo.iter().copied()) {
                st.get(p, Kind::Single).join_into(&mut ss);
            }
        }

        // Accesses of v in trace order.
        while let Some(&xi) = order.get(next) {
            let x = *acc.get(xi);
            if x.action != v {
                break;
            }
            next += 1;
            // Accesses are stored by location, so each one in trace order is a cache miss;
            // asking for one a few ahead overlaps them (≈ a tenth of the sweep was this load).
            if let Some(&ahead) = order.get(next + PREFETCH_AHEAD) {
                prefetch(acc.get(ahead));
            }
            let l = slots.of[x.loc as usize];
            if l == NONE {
                continue;
            }
            let l = l as usize;
            let ls = &mut loc[l];
            let first_new = races.len();
            let hot = lws[l];
            let lw = hot.access;
            let mut lw_races = false;
            if lw != NONE {
                let a = hot.action;
                if a != v && !gs.reaches(hot.chain, hot.pos) {
                    races.push(Race {
                        loc: x.loc,
                        first: lw,
                        second: xi,
                    });
                    lw_races = true;
                }
            }
            let mut pend_races = false;
            if x.kind.is_write() {
                for p in &ls.pending {
                    if p.action != v && !gs.reaches(p.chain, p.pos) {
                        races.push(Race {
                            loc: x.loc,
                            first: p.access,
                            second: xi,
                        });
                        pend_races = true;
                    }
                }
            }
            // Queries, before anything at x is folded in.
            let new = &races[first_new..];
            if !new.is_empty() {
                let firsts = new.iter().map(|r| {
                    let a = acc.get(r.first).action;
                    (chains.chain_of(a), chains.pos_of(a))
                });
                // Any write reached implies a minimal write reached, so the minimal ones
                // decide "no earlier write reaches the read".
                let read_uninit = x.kind == AccessKind::Read && !ls.min_writes.contains(&v);
                st.plus.ask(v, &new_fifo, l as u32, read_uninit, firsts);
                if single {
                    for r in new {
                        let a = acc.get(r.first).action;
                        single_cov.push(reach(&ss, a));
                    }
                }
            }
            // Fold the race arcs ending at x. Pairs that are ordered add nothing (their
            // tail is already below), so only unordered maximal tails are joined.
            if lw_races {
                st.plus.fold(v, &new_fifo, hot.action);
            }
            if pend_races {
                for &f in &ls.pend_frontier {
                    if f != v && !reach(&gs, f) {
                        st.plus.fold(v, &new_fifo, f);
                    }
                }
            }
            let more = xi + 1 < acc.range_of(x.loc).end;
            let more_writes = ahead.write_after(l, xi);
            if single {
                // Every earlier conflicting access c of this location gives a race (c, x)
                // or is ordered before x; either way its clock may be folded in (an ordered
                // one adds only what is already below x, which no race can start from).
                if x.kind.is_write() {
                    ls.join_all.join_into(&mut ss);
                } else {
                    ls.join_writes.join_into(&mut ss);
                }
                let before = ls.join_all.entries() + ls.join_writes.entries();
                let own = gs.trimmed();
                // Writes to come fold in all accesses, reads only the writes.
                if more_writes {
                    ls.join_all.absorb(own, &mut merge_buf);
                } else {
                    ls.join_all = RunningJoin::default();
                }
                if !more {
                    ls.join_writes = RunningJoin::default();
                } else if x.kind.is_write() {
                    ls.join_writes.absorb(own, &mut merge_buf);
                }
                loc_entries =
                    loc_entries + ls.join_all.entries() + ls.join_writes.entries() - before;
            }
            // Location state.
            if x.kind == AccessKind::Read {
                // Reads pair with the next write only.
                if more_writes {
                    ls.pending.push(Pending {
                        access: xi,
                        action: v,
                        chain: c,
                        pos,
                    });
                    advance(&mut ls.pend_frontier, v, &gs, &chains, &mut st);
                }
            } else {
                ls.pending.clear();
                for f in ls.pend_frontier.drain(..) {
                    st.unref(f);
                }
                if lw != NONE {
                    st.unref(hot.action);
                }
                lws[l] = Pending {
                    access: xi,
                    action: v,
                    chain: c,
                    pos,
                };
                st.p_refs[v as usize] += 1;
                if !ls.min_writes.iter().any(|&m| m == v || reach(&gs, m)) {
                    ls.min_writes.push(v);
                    st.plus.minimal(l as u32, c, pos);
                }
            }
            if !more {
                // Nothing asks about this location again.
                if lws[l].access != NONE {
                    lws[l].access = NONE;
                    st.unref(lws[l].action);
                }
                for f in ls.pend_frontier.drain(..) {
                    st.unref(f);
                }
                if !ls.min_writes.is_empty() {
                    st.plus.forget(l as u32);
                }
                *ls = LocState::default();
            }
        }

        // Seal v.
        if let Some(&Some((reg, kind))) = fifo.get(v as usize) {
            st.succ[v as usize] += 1;
            window.push(
                (v, c, pos),
                (chains.chain_of(reg), chains.pos_of(reg)),
                kind,
            );
        }
        let vu = v as usize;
        if st.succ[vu] > 0 {
            st.clocks.put(st.key(v, Kind::G), gs.trimmed());
            if single {
                st.clocks.put(st.key(v, Kind::Single), ss.trimmed());
            }
        }
        let keep_plus = st.succ[vu] > 0 || st.p_refs[vu] > 0;
        st.plus_kept[vu] = keep_plus;
        st.plus.seal(v, &new_fifo, c, pos, keep_plus);
        if window.len() > TIMER_WINDOW
            && let Some(old) = window.pop_oldest()
        {
            st.succ[old as usize] -= 1;
            st.maybe_free(old);
        }
        for p in graph.preds(v) {
            static_left[p as usize] -= 1;
            st.succ[p as usize] -= 1;
            st.maybe_free(p);
        }
        if st.clocks.live() + loc_entries > peak {
            peak = st.clocks.live() + loc_entries;
        }
    }
    st.plus.finish();
    GHalf {
        chains,
        races,
        single: single_cov,
        fifo_arcs,
        peak,
        plus_kept: st.plus_kept.iter().filter(|&&k| k).count(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accesses::scan;
    use crate::oracle;
    use crate::synth::{SynthConfig, generate};
    use proptest::prelude::*;
    use shepherd_trace::{ActionType, TraceBuilder};

    /// A trace made of timer fires (three delays) and deliveries of three queues, each
    /// registered or posted by an earlier action, with a few joins: what the FIFO window is
    /// about. Per action `(cause, kind, join)`: kind 0-2 a timer of delay 0/10/20 ms, 3-5 a
    /// delivery of queue 0-2, 6 a plain fork.
    fn fifo_trace(actions: &[(u32, u8, u32)]) -> Trace {
        let mut b = TraceBuilder::new();
        // Queue names with neighbouring string ids: a queue must not precede the next one.
        for q in 0..3 {
            b.intern(&format!("Queue:q{q}"));
        }
        let mut ids = Vec::new();
        for (i, &(_, kind, _)) in actions.iter().enumerate() {
            let ty = if kind < 3 {
                ActionType::Timer
            } else {
                ActionType::Unknown
            };
            ids.push(b.begin(ty, "a", &format!("a{i}")));
            if (3..6).contains(&kind) {
                b.read(&format!("Queue:q{}", kind - 3), None);
            }
            b.write(&format!("Global.v{}", i % 7), Some("1"));
            b.end();
        }
        for (i, &(cause, kind, join)) in actions.iter().enumerate().skip(1) {
            let (t, h) = (ids[cause as usize % i], ids[i]);
            match kind {
                0..3 => b.fork_delay(t, h, u32::from(kind) * 10),
                _ => b.fork(t, h),
            };
            let j = join as usize % i;
            if j != cause as usize % i && join % 3 == 0 {
                b.join(ids[j], h);
            }
        }
        b.finish()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// The sweep derives the same timer and queue FIFO arcs as the clock builder of
        /// `chains.rs` (its own window, `fifo::TimerFifo`), so the same graph.
        #[test]
        fn fifo_arcs_agree_with_the_clock_builder(
            actions in prop::collection::vec((any::<u32>(), 0u8..7, any::<u32>()), 2..700),
        ) {
            let trace = fifo_trace(&actions);
            let fixes = FixOptions::default();
            let s = scan(&trace, &fixes).unwrap();
            let (want, _) = crate::chains::build(&trace, &s, &fixes).unwrap();
            let mut want = want.arcs().to_vec();
            want.sort();
            for split in [false, true] {
                let (got, _) = sweep_with(&trace, &s, &fixes, false, split).unwrap();
                let mut got = got.graph.arcs().to_vec();
                got.sort();
                prop_assert_eq!(&got, &want);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// Wide traces (up to a few hundred chains, most of them short) give what the
        /// retained-clock pipeline gives, with the store compacting all along (small chunks
        /// in unit tests) and clocks both sparse and dense.
        #[test]
        fn many_chains_agree_with_retained_clocks(
            seed in any::<u64>(),
            width in 2u32..20,
            actions in 200u32..2_500,
            locations in 10u32..150,
            young in 0u32..3,
        ) {
            let trace = generate(&SynthConfig { actions, locations, seed, width, young });
            let fixes = FixOptions::default();
            let s = scan(&trace, &fixes).unwrap();
            let want = oracle::retained(&trace, &fixes).unwrap();
            for (single, split) in [(true, false), (false, false), (true, true), (false, true)] {
                let (got, left) = sweep_with(&trace, &s, &fixes, single, split).unwrap();
                prop_assert_eq!(left.minimal_left, 0);
                prop_assert_eq!(left.held_by_plus, left.kept_by_g);
                prop_assert_eq!(&got.races, &want.races);
                prop_assert_eq!(&got.covered, &want.covered);
                prop_assert_eq!(&got.uninit, &want.uninit);
                if single {
                    prop_assert_eq!(got.single.as_ref(), Some(&want.single));
                }
            }
        }
    }
}
