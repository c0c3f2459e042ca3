//! Slow but obviously correct reference implementations, used as test oracles and as
//! benchmark baselines: reachability by breadth-first search and by plain (one bit per action)
//! vector clocks, and races / coverage computed straight from the definitions (EventRacer
//! Def. 2.1, 3.1, 3.2) over *all* racing pairs.

use crate::accesses::{self, Access, AccessKind, Accesses};
use crate::fixes::FixOptions;
use crate::graph::{HbGraph, Successors};
use crate::races::{self, Race};
use crate::{chains, coverage};
use shepherd_trace::Trace;
use std::cell::RefCell;
use std::collections::VecDeque;

/// Reachability by breadth-first search (no precomputation beyond successor lists).
#[derive(Debug)]
pub struct Bfs {
    succ: Successors,
    seen: RefCell<(Vec<u32>, u32, VecDeque<u32>)>,
}

impl Bfs {
    /// Prepares searches over `g`.
    pub fn new(g: &HbGraph) -> Bfs {
        Bfs {
            succ: g.successors(),
            seen: RefCell::new((vec![0; g.nodes() as usize], 0, VecDeque::new())),
        }
    }

    /// `a ⪯ b`.
    pub fn ordered(&self, a: u32, b: u32) -> bool {
        if a == b {
            return true;
        }
        if a > b {
            return false;
        }
        let mut st = self.seen.borrow_mut();
        let (seen, stamp, queue) = &mut *st;
        *stamp = stamp.wrapping_add(1);
        if *stamp == 0 {
            seen.fill(0);
            *stamp = 1;
        }
        queue.clear();
        queue.push_back(a);
        seen[a as usize] = *stamp;
        while let Some(v) = queue.pop_front() {
            for &w in self.succ.of(v) {
                if w == b {
                    return true;
                }
                if w < b && seen[w as usize] != *stamp {
                    seen[w as usize] = *stamp;
                    queue.push_back(w);
                }
            }
        }
        false
    }
}

/// Plain vector clocks: one slot per action, stored as bits (EventRacer §4.1.2/4.1.3).
/// Quadratic memory: for test-sized graphs and baselines only.
#[derive(Debug)]
pub struct BitClocks {
    words: usize,
    bits: Vec<u64>,
}

impl BitClocks {
    /// Computes the clocks of `g`.
    pub fn new(g: &HbGraph) -> BitClocks {
        let n = g.nodes() as usize;
        let words = n.div_ceil(64);
        let mut bits = vec![0u64; n * words];
        for v in 0..n {
            let (done, rest) = bits.split_at_mut(v * words);
            let row = &mut rest[..words];
            for p in g.preds(v as u32) {
                let p = p as usize;
                let src = &done[p * words..(p + 1) * words];
                for (d, s) in row.iter_mut().zip(src) {
                    *d |= *s;
                }
            }
            row[v / 64] |= 1 << (v % 64);
        }
        BitClocks { words, bits }
    }

    /// `a ⪯ b`.
    pub fn ordered(&self, a: u32, b: u32) -> bool {
        let (a, b) = (a as usize, b as usize);
        self.bits[b * self.words + a / 64] & (1 << (a % 64)) != 0
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.bits.len() * 8
    }
}

/// `x ⪯ y` on operations (EventRacer §2.3): same action and earlier, or different actions
/// ordered by `hb`.
pub fn op_before(x: &Access, y: &Access, hb: &dyn Fn(u32, u32) -> bool) -> bool {
    if x.action == y.action {
        x.op < y.op
    } else {
        hb(x.action, y.action)
    }
}

/// Every race (Def. 2.1) among the kept accesses: pairs of access indices `(a, b)`, `a`
/// earlier in the trace, at least one a write, not ordered.
pub fn all_races(acc: &Accesses, hb: &dyn Fn(u32, u32) -> bool) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for l in 0..acc.locs.len() as u32 {
        let r = acc.range_of(l);
        for i in r.clone() {
            for j in i + 1..r.end {
                let (x, y) = (acc.get(i), acc.get(j));
                let (x, y, i, j) = if x.op < y.op {
                    (x, y, i, j)
                } else {
                    (y, x, j, i)
                };
                if (x.kind.is_write() || y.kind.is_write()) && !op_before(x, y, hb) {
                    out.push((i, j));
                }
            }
        }
    }
    out
}

/// Def. 3.1: is race `r` covered by a single race of `races`?
pub fn single_covered(
    acc: &Accesses,
    races: &[(u32, u32)],
    r: (u32, u32),
    hb: &dyn Fn(u32, u32) -> bool,
) -> bool {
    let (a, b) = (acc.get(r.0), acc.get(r.1));
    races.iter().any(|&(c, d)| {
        let (c, d) = (acc.get(c), acc.get(d));
        hb(a.action, c.action) && op_before(d, b, hb)
    })
}

/// Def. 3.2: is race `r` covered by a sequence of races of `races`?
pub fn multi_covered(
    acc: &Accesses,
    races: &[(u32, u32)],
    r: (u32, u32),
    hb: &dyn Fn(u32, u32) -> bool,
) -> bool {
    let (a, b) = (acc.get(r.0), acc.get(r.1));
    let mut seen = vec![false; races.len()];
    let mut queue: VecDeque<usize> = VecDeque::new();
    for (i, &(c, _)) in races.iter().enumerate() {
        if hb(a.action, acc.get(c).action) {
            seen[i] = true;
            queue.push_back(i);
        }
    }
    while let Some(i) = queue.pop_front() {
        let d = acc.get(races[i].1);
        if op_before(d, b, hb) {
            return true;
        }
        for (j, &(c, _)) in races.iter().enumerate() {
            if !seen[j] && hb(d.action, acc.get(c).action) {
                seen[j] = true;
                queue.push_back(j);
            }
        }
    }
    false
}

/// What the retained-clock reference pipeline finds: `chains.rs` keeps every action's clock,
/// `races.rs` checks candidates against them, `coverage.rs` sweeps coverage with every G⁺
/// clock kept. The streaming sweep must give exactly this.
#[derive(Debug)]
pub struct Retained {
    /// Candidate races, sorted by second access.
    pub races: Vec<Race>,
    /// Def. 3.2 coverage.
    pub covered: Vec<bool>,
    /// Def. 3.1 coverage.
    pub single: Vec<bool>,
    /// Uninitialised reads: uncovered, and no earlier write of the location reaches the read
    /// even through races.
    pub uninit: Vec<bool>,
}

/// Runs the retained-clock reference pipeline on `trace`.
pub fn retained(trace: &Trace, fixes: &FixOptions) -> Result<Retained, crate::Error> {
    let scan = accesses::scan(trace, fixes)?;
    let acc = &scan.accesses;
    let (g, clocks) = chains::build(trace, &scan, fixes)?;
    let races = races::candidates(acc, &clocks);
    let cov = coverage::compute(&g, &clocks, acc, &races, true);
    let uninit = races
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let b = acc.get(r.second);
            !cov.covered[i]
                && b.kind == AccessKind::Read
                && acc
                    .range_of(r.loc)
                    .filter(|&w| acc.get(w).op < b.op && acc.get(w).kind.is_write())
                    .all(|w| {
                        acc.get(w).action != b.action
                            && !coverage::pair_covered(&g, &cov, acc, &races, w, r.second)
                    })
        })
        .collect();
    Ok(Retained {
        single: cov.single.unwrap_or_default(),
        covered: cov.covered,
        races,
        uninit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{ArcOrigin, HbArc};

    #[test]
    fn bfs_and_bits_agree_on_a_small_graph() {
        let arcs = [(0, 1), (1, 3), (2, 3), (3, 4)]
            .iter()
            .map(|&(t, h)| HbArc {
                tail: t,
                head: h,
                origin: ArcOrigin::Fork,
            })
            .collect();
        let g = HbGraph::new(5, arcs).unwrap();
        let (bfs, bits) = (Bfs::new(&g), BitClocks::new(&g));
        for a in 0..5 {
            for b in 0..5 {
                assert_eq!(bfs.ordered(a, b), bits.ordered(a, b), "{a} {b}");
            }
        }
        assert!(bfs.ordered(0, 4));
        assert!(!bfs.ordered(0, 2));
    }
}
