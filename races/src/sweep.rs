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
//!
//! The reference implementation that keeps every clock is `chains.rs` + `races.rs` +
//! `coverage.rs`; property tests check that both agree.

use crate::accesses::{AccessKind, Scan};
use crate::clocks::{ChainTable, Scratch};
use crate::fixes::{self, FifoKind, FixOptions};
use crate::graph::{GraphError, HbArc, HbGraph};
use crate::races::Race;
use shepherd_trace::{ActionType, Trace};
use std::collections::VecDeque;

const NONE: u32 = u32::MAX;

/// How many recent timer fires and queue deliveries the FIFO rules look back over. EventRacer searches the whole
/// graph; a bounded window keeps the pass linear. A missed FIFO arc can only add races (the
/// order is weaker), never hide one.
pub const TIMER_WINDOW: usize = 256;

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
    /// Largest number of clock entries held at once (all stores and per-location joins).
    pub peak_entries: usize,
    /// Time spent building the static graph (the rest of the sweep is the fused pass).
    pub graph_time: std::time::Duration,
}

/// A store of clocks that can be dropped once unused.
struct Store {
    clocks: Vec<Option<Box<[u16]>>>,
    live: usize,
}

impl Store {
    fn new(n: usize) -> Store {
        Store {
            clocks: vec![None; n],
            live: 0,
        }
    }
    fn put(&mut self, v: u32, c: &[u16]) {
        self.live += c.len();
        self.clocks[v as usize] = Some(c.into());
    }
    fn get(&self, v: u32) -> &[u16] {
        self.clocks[v as usize].as_deref().unwrap_or(&[])
    }
    fn drop_clock(&mut self, v: u32) {
        if let Some(c) = self.clocks[v as usize].take() {
            self.live -= c.len();
        }
    }
}

/// `dst ⊔= src`, growing `dst`.
fn join_into(dst: &mut Vec<u16>, src: &[u16]) {
    if dst.len() < src.len() {
        dst.resize(src.len(), 0);
    }
    crate::clocks::max_into(&mut dst[..src.len()], src);
}

/// The three clock stores.
struct Stores {
    g: Store,
    gp: Store,
    sc: Store,
}

impl Stores {
    /// Drops whatever clocks of `a` nothing refers to any more.
    fn maybe_free(&mut self, a: u32, succ: &[u32], p_refs: &[u32]) {
        let i = a as usize;
        if succ[i] == 0 {
            self.sc.drop_clock(a);
            self.g.drop_clock(a);
            if p_refs[i] == 0 {
                self.gp.drop_clock(a);
            }
        }
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
    join_all: Vec<u16>,
    join_writes: Vec<u16>,
    /// Minimal writes: writes no earlier write happens before.
    min_writes: Vec<u32>,
}

/// Adds action `v` to a frontier of maximal actions, dropping members below it.
fn advance(
    fr: &mut Vec<u32>,
    v: u32,
    gs: &Scratch,
    chains: &ChainTable,
    refs: &mut [u32],
    freed: &mut Vec<u32>,
) {
    fr.retain(|&f| {
        let keep = f == v || !gs.reaches(chains.chain_of(f), chains.pos_of(f));
        if !keep {
            refs[f as usize] -= 1;
            freed.push(f);
        }
        keep
    });
    if !fr.contains(&v) {
        fr.push(v);
        refs[v as usize] += 1;
    }
}

/// Runs the sweep. `single` also computes Def. 3.1 coverage.
pub fn sweep(
    trace: &Trace,
    scan: &Scan,
    opts: &FixOptions,
    single: bool,
) -> Result<SweepOutput, GraphError> {
    let started = std::time::Instant::now();
    let n = trace.actions.len() as u32;
    let acc = &scan.accesses;
    let mut arcs = HbGraph::logged_arcs(trace);
    arcs.extend_from_slice(&scan.derived);
    if opts.auto_explore {
        let ui: Vec<bool> = trace
            .actions
            .iter()
            .map(|a| a.ty == ActionType::UserInterface)
            .collect();
        fixes::fix_auto_explore(&mut arcs, &scan.auto, &ui);
    }
    let graph = HbGraph::new(n, arcs)?;
    let graph_time = started.elapsed();

    // Registrar/poster and FIFO kind of each timer fire and queue delivery.
    let fifo = fixes::fifo_members(trace, &scan.queues, opts);

    // Reference counts: successors not yet processed (+1 while in the timer window) keep
    // G, G⁺ and S; being a location's last writer or a maximal pending reader keeps G⁺.
    let mut succ_refs = vec![0u32; n as usize];
    for a in graph.arcs() {
        succ_refs[a.tail as usize] += 1;
    }
    // Successors left to process, without the timer-window reference (for chain choice).
    let mut static_left = succ_refs.clone();
    let mut p_refs = vec![0u32; n as usize];
    let mut st = Stores {
        g: Store::new(n as usize),
        gp: Store::new(n as usize),
        sc: Store::new(n as usize),
    };

    let nl = acc.locs.len();
    // Locations that can race at all: a write and accesses from two actions.
    let may_race: Vec<bool> = (0..nl as u32)
        .map(|l| {
            let xs = acc.of(l);
            xs.iter().any(|x| x.kind.is_write()) && xs.iter().any(|x| x.action != xs[0].action)
        })
        .collect();
    let mut loc: Vec<LocState> = (0..nl).map(|_| LocState::default()).collect();
    // Last write per location, kept apart from the rest of the state: it is read at every
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
    let (mut gs, mut ps, mut ss) = (Scratch::default(), Scratch::default(), Scratch::default());
    let mut window: VecDeque<(u32, u32, FifoKind)> = VecDeque::new(); // (fired, registrar, kind)
    let mut fifo_arcs: Vec<HbArc> = Vec::new();
    let mut new_fifo: Vec<u32> = Vec::new();
    let mut races: Vec<Race> = Vec::new();
    let mut covered: Vec<bool> = Vec::new();
    let mut single_cov: Vec<bool> = Vec::new();
    let mut uninit: Vec<bool> = Vec::new();
    let mut peak = 0usize;
    let mut loc_entries = 0usize;
    let mut freed: Vec<u32> = Vec::new();
    let order = acc.trace_order();
    let seq = acc.in_trace_order();
    let mut next = 0usize;

    for v in 0..n {
        // G clock.
        gs.clear();
        for p in graph.preds(v) {
            gs.join(st.g.get(p));
        }
        new_fifo.clear();
        if let Some(&Some((reg, kind))) = fifo.get(v as usize) {
            let reg_clock = st.g.get(reg);
            for &(a, ra, ka) in window.iter().rev() {
                if !ka.precedes(kind) || gs.reaches(chains.chain_of(a), chains.pos_of(a)) {
                    continue;
                }
                let ordered = ra == reg || {
                    let c = chains.chain_of(ra) as usize;
                    reg_clock.get(c).copied().unwrap_or(0) >= chains.pos_of(ra)
                };
                if ordered {
                    gs.join(st.g.get(a));
                    new_fifo.push(a);
                    fifo_arcs.push(HbArc {
                        tail: a,
                        head: v,
                        origin: kind.origin(),
                    });
                }
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

        // G⁺ and S start from the same predecessors.
        ps.clear();
        ss.clear();
        for p in graph.preds(v).chain(new_fifo.iter().copied()) {
            ps.join(st.gp.get(p));
            if single {
                ss.join(st.sc.get(p));
            }
        }

        // Accesses of v in trace order.
        while let Some(&x) = seq.get(next) {
            if x.action != v {
                break;
            }
            let xi = order[next];
            next += 1;
            let l = x.loc as usize;
            if !may_race[l] {
                continue;
            }
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
            for r in &races[first_new..] {
                let a = acc.get(r.first).action;
                let (ca, pa) = (chains.chain_of(a), chains.pos_of(a));
                let cov = ps.reaches(ca, pa);
                covered.push(cov);
                if single {
                    single_cov.push(ss.reaches(ca, pa));
                }
                // Any write reached implies a minimal write reached, so the minimal ones
                // decide "no earlier write reaches the read".
                let un = !cov
                    && x.kind == AccessKind::Read
                    && ls.min_writes.iter().all(|&m| m != v && !reach(&ps, m));
                uninit.push(un);
            }
            // Fold the race arcs ending at x. Pairs that are ordered add nothing (their
            // tail is already below), so only unordered maximal tails are joined.
            if lw_races {
                ps.join(st.gp.get(hot.action));
            }
            if pend_races {
                for &f in &ls.pend_frontier {
                    if f != v && !reach(&gs, f) {
                        ps.join(st.gp.get(f));
                    }
                }
            }
            if single {
                // Every earlier conflicting access c of this location gives a race (c, x)
                // or is ordered before x; either way its clock may be folded in (an ordered
                // one adds only what is already below x, which no race can start from).
                if x.kind.is_write() {
                    ss.join(&ls.join_all);
                } else {
                    ss.join(&ls.join_writes);
                }
                let own = gs.trimmed();
                let before = ls.join_all.len() + ls.join_writes.len();
                join_into(&mut ls.join_all, own);
                if x.kind.is_write() {
                    join_into(&mut ls.join_writes, own);
                }
                loc_entries += ls.join_all.len() + ls.join_writes.len() - before;
            }
            // Location state.
            freed.clear();
            if x.kind == AccessKind::Read {
                ls.pending.push(Pending {
                    access: xi,
                    action: v,
                    chain: c,
                    pos,
                });
                advance(
                    &mut ls.pend_frontier,
                    v,
                    &gs,
                    &chains,
                    &mut p_refs,
                    &mut freed,
                );
            } else {
                ls.pending.clear();
                for f in ls.pend_frontier.drain(..) {
                    p_refs[f as usize] -= 1;
                    freed.push(f);
                }
                if lw != NONE {
                    p_refs[hot.action as usize] -= 1;
                    freed.push(hot.action);
                }
                lws[l] = Pending {
                    access: xi,
                    action: v,
                    chain: c,
                    pos,
                };
                p_refs[v as usize] += 1;
                if !ls.min_writes.iter().any(|&m| m == v || reach(&gs, m)) {
                    ls.min_writes.push(v);
                }
            }
            for &f in &freed {
                if f != v {
                    st.maybe_free(f, &succ_refs, &p_refs);
                }
            }
        }

        // Seal v.
        ps.set(c as usize, pos);
        if let Some(&Some((reg, kind))) = fifo.get(v as usize) {
            succ_refs[v as usize] += 1;
            window.push_back((v, reg, kind));
        }
        let vu = v as usize;
        if succ_refs[vu] > 0 {
            st.g.put(v, gs.trimmed());
        }
        if succ_refs[vu] > 0 && single {
            st.sc.put(v, ss.trimmed());
        }
        if succ_refs[vu] > 0 || p_refs[vu] > 0 {
            st.gp.put(v, ps.trimmed());
        }
        if window.len() > TIMER_WINDOW
            && let Some((old, _, _)) = window.pop_front()
        {
            succ_refs[old as usize] -= 1;
            st.maybe_free(old, &succ_refs, &p_refs);
        }
        for p in graph.preds(v) {
            static_left[p as usize] -= 1;
            succ_refs[p as usize] -= 1;
            st.maybe_free(p, &succ_refs, &p_refs);
        }
        peak = peak.max(st.g.live + st.gp.live + st.sc.live + loc_entries);
    }

    let graph = if fifo_arcs.is_empty() {
        graph
    } else {
        let mut all = graph.arcs().to_vec();
        all.extend(fifo_arcs);
        HbGraph::new(n, all)?
    };
    Ok(SweepOutput {
        graph,
        chains,
        races,
        covered,
        single: single.then_some(single_cov),
        uninit,
        peak_entries: peak,
        graph_time,
    })
}
