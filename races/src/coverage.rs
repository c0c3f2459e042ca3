//! Race coverage (EventRacer Def. 3.1 and 3.2), computed with clocks instead of the paper's
//! pairwise `O(n·m + m³)` procedure.
//!
//! Multi-coverage as reachability: `R = (a, b)` is covered by a sequence of races iff, in the
//! graph G⁺ = happens-before plus one arc `ev(c) → ev(d)` per race `(c, d)`, `ev(a)` reaches
//! `b`'s action through a path whose last arc is either a happens-before arc or a race arc
//! whose `d` comes before `b` in that action (the only place Def. 3.2 looks at operations).
//! All arcs go forward in id order, so one sweep computes G⁺ clocks (reusing G's chains —
//! a chain of G is a chain of G⁺) and, inside each action, folds race arcs in operation order,
//! answering every race whose second access sits there just before its own position.
//!
//! Only candidate races are used as arcs: any race is covered by a chain of candidates whenever
//! it is covered at all (§4.2), so multi-coverage of the candidates is exact.
//!
//! Single coverage (Def. 3.1) is the same sweep with a second clock that collects, for every
//! race `S = (c, d)` whose `d ⪯` the current point, the happens-before clock of `ev(c)` — and
//! propagates only along happens-before arcs, so races never chain. Here a non-candidate race
//! can be the only single cover (it may span what candidates split in two), so the sweep
//! considers all races, via running joins per location (see `SingleSweep`).

use crate::accesses::Accesses;
use crate::clocks::{ClockBuilder, Clocks};
use crate::graph::HbGraph;
use crate::races::Race;

/// Coverage of every candidate race.
#[derive(Debug, Default)]
pub struct Coverage {
    /// Def. 3.2 (which includes 3.1): covered by some set of races.
    pub covered: Vec<bool>,
    /// Def. 3.1: covered by a single race (when computed).
    pub single: Option<Vec<bool>>,
    /// Clocks of G⁺ (happens-before plus race arcs), same chains as G.
    pub plus: Clocks,
}

impl Coverage {
    /// Number of uncovered races.
    pub fn uncovered(&self) -> usize {
        self.covered.iter().filter(|c| !**c).count()
    }
}

/// Computes coverage of `races` (sorted by second access, as [`crate::races::candidates`]
/// returns them).
pub fn compute(
    graph: &HbGraph,
    clocks: &Clocks,
    acc: &Accesses,
    races: &[Race],
    single: bool,
) -> Coverage {
    let n = graph.nodes();
    let mut covered = vec![false; races.len()];
    let mut bp = ClockBuilder::new(n as usize);
    let mut sc = if single {
        Some(SingleSweep::new(acc, n, races.len()))
    } else {
        None
    };
    let mut i = 0;
    for v in 0..n {
        for p in graph.preds(v) {
            bp.join_node(p);
        }
        if let Some(sc) = sc.as_mut() {
            sc.begin(graph, v);
        }
        while i < races.len() && acc.get(races[i].second).action == v {
            let op = acc.get(races[i].second).op;
            let mut j = i;
            while j < races.len() && acc.get(races[j].second).op == op {
                j += 1;
            }
            if let Some(sc) = sc.as_mut() {
                sc.advance_to(acc, clocks, op);
            }
            // Races ending at the same operation cannot cover each other (d ⪯ b is strict).
            for k in i..j {
                let a = acc.get(races[k].first).action;
                let (c, p) = (clocks.chain_of(a), clocks.pos_of(a));
                covered[k] = bp.reaches(c, p);
                if let Some(sc) = sc.as_mut() {
                    sc.result[k] = sc.b.reaches(c, p);
                }
            }
            for race in &races[i..j] {
                bp.join_node(acc.get(race.first).action);
            }
            i = j;
        }
        let (c, p) = (clocks.chain_of(v), clocks.pos_of(v));
        bp.finish_fixed(c, p);
        if let Some(sc) = sc.as_mut() {
            sc.advance_to(acc, clocks, u32::MAX);
            sc.b.finish_raw(c, p);
        }
    }
    Coverage {
        covered,
        single: sc.map(|s| s.result),
        plus: bp.build(),
    }
}

/// `dst ⊔= src`, growing `dst`.
fn join_into(dst: &mut Vec<u16>, src: &[u16]) {
    if dst.len() < src.len() {
        dst.resize(src.len(), 0);
    }
    for (d, s) in dst.iter_mut().zip(src) {
        *d = (*d).max(*s);
    }
}

/// State of the single-coverage sweep.
///
/// Def. 3.1 lets *any* race `S = (c, d)` cover, not only candidates, so at each access `d` the
/// sweep folds in the clocks of every earlier conflicting access `c` of the same location
/// (kept as two running joins per location: all accesses, writes only). Conflicting accesses
/// that are ordered before `d` add nothing wrong: anything before them is before `d`, and a
/// race `(a, b)` with `ev(a) ⪯ ev(d) ⪯ b` cannot exist.
struct SingleSweep {
    b: ClockBuilder,
    result: Vec<bool>,
    /// Access indices in trace order.
    order: Vec<u32>,
    next: usize,
    /// Per location: join over all accesses so far / over writes so far.
    all: Vec<Vec<u16>>,
    writes: Vec<Vec<u16>>,
    current: u32,
}

impl SingleSweep {
    fn new(acc: &Accesses, n: u32, races: usize) -> SingleSweep {
        let mut order: Vec<u32> = (0..acc.len() as u32).collect();
        order.sort_unstable_by_key(|&i| acc.get(i).op);
        SingleSweep {
            b: ClockBuilder::new(n as usize),
            result: vec![false; races],
            order,
            next: 0,
            all: vec![Vec::new(); acc.locs.len()],
            writes: vec![Vec::new(); acc.locs.len()],
            current: 0,
        }
    }

    fn begin(&mut self, graph: &HbGraph, v: u32) {
        self.current = v;
        for p in graph.preds(v) {
            self.b.join_node(p);
        }
    }

    /// Folds in the accesses of the current action before operation `op`.
    fn advance_to(&mut self, acc: &Accesses, clocks: &Clocks, op: u32) {
        while let Some(&xi) = self.order.get(self.next) {
            let x = acc.get(xi);
            if x.action != self.current || x.op >= op {
                break;
            }
            let l = x.loc as usize;
            if x.kind.is_write() {
                self.b.join_slice(&self.all[l]);
            } else {
                self.b.join_slice(&self.writes[l]);
            }
            let own = clocks.clock(x.action);
            join_into(&mut self.all[l], own);
            if x.kind.is_write() {
                join_into(&mut self.writes[l], own);
            }
            self.next += 1;
        }
    }
}

/// Races whose second access is in action `v` (a range into the sorted race list).
pub fn races_into(acc: &Accesses, races: &[Race], v: u32) -> std::ops::Range<usize> {
    let s = races.partition_point(|r| acc.get(r.second).action < v);
    let e = races.partition_point(|r| acc.get(r.second).action <= v);
    s..e
}

/// Whether the pair (access `a` … access `b`, `a` earlier, unordered) would be covered by the
/// races: the query of [`compute`] for an arbitrary pair, after the sweep.
pub fn pair_covered(
    graph: &HbGraph,
    cov: &Coverage,
    acc: &Accesses,
    races: &[Race],
    a: u32,
    b: u32,
) -> bool {
    let (xa, xb) = (acc.get(a), acc.get(b));
    let (av, bv) = (xa.action, xb.action);
    if graph.preds(bv).any(|p| cov.plus.ordered(av, p)) {
        return true;
    }
    races[races_into(acc, races, bv)]
        .iter()
        .any(|s| acc.get(s.second).op < xb.op && cov.plus.ordered(av, acc.get(s.first).action))
}
