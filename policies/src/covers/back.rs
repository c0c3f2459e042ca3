//! The backward search of the simulation: which actions reach the action being begun, found
//! only as far back as the simulation's questions about it need.

use super::augmented::Graph;
use std::collections::BinaryHeap;

/// No action ([`Back`]).
const NONE: u32 = u32::MAX;

/// Which actions reach the action being begun (`at`), found as far back as questions need:
/// every arc goes forwards in the trace, so whether `x` reaches `at` only needs the ancestors
/// of `at` after `x`. A search of all of them for every user event was most of the time of a
/// policy that meets every user event (≈ 60 000 on a 115 000-action page).
pub(super) struct Back {
    /// `mark[x] == s`: x reached action `s` when `s` was begun (`NONE`: never marked).
    mark: Vec<u32>,
    /// The action being begun (`NONE` before the first question).
    at: u32,
    /// Actions marked for `at` whose predecessors are not marked yet, latest on top.
    todo: BinaryHeap<u32>,
    /// Every earlier `at` from `chain_from` on reaches the current one, so a mark from one of
    /// them says the marked action reaches `at` too: user events one after the other each
    /// find what reached the previous one without a search.
    chain_from: u32,
    /// Predecessor lists read since [`Back::take_visits`] (work units).
    visits: u64,
}

impl Back {
    pub(super) fn new(n: usize) -> Back {
        Back {
            mark: vec![NONE; n],
            at: NONE,
            todo: BinaryHeap::new(),
            chain_from: NONE,
            visits: 0,
        }
    }

    /// Starts the questions about action `v` (after those about an earlier action).
    fn open(&mut self, v: u32, g: Graph) {
        let prev = self.at;
        self.at = v;
        self.todo.clear();
        self.mark[v as usize] = v;
        self.todo.push(v);
        // The intervals between consecutive `at` do not overlap: this search costs at most
        // one visit per action over the whole trace.
        self.chain_from = if prev != NONE && self.expand_above(prev, g) {
            self.chain_from
        } else {
            v
        };
    }

    /// Marks the ancestors of `at` after `x`; says whether `x` is one.
    fn expand_above(&mut self, x: u32, g: Graph) -> bool {
        let at = self.at;
        while let Some(&y) = self.todo.peek() {
            if y <= x {
                break;
            }
            self.todo.pop();
            self.visits += 1;
            for p in g.preds(y) {
                let m = &mut self.mark[p as usize];
                if *m != at {
                    *m = at;
                    self.todo.push(p);
                }
            }
        }
        self.mark[x as usize] == at
    }

    /// Whether `x` reaches `v` through `g` (`v` included).
    pub(super) fn reaches(&mut self, x: u32, v: u32, g: Graph) -> bool {
        if x == v {
            return true;
        }
        if x > v || (v as usize) >= self.mark.len() {
            return false;
        }
        if self.at != v {
            self.open(v, g);
        }
        let m = self.mark[x as usize];
        if m == v || (m != NONE && m >= self.chain_from && m < v) {
            return true;
        }
        self.expand_above(x, g)
    }

    /// `u` now reaches `at` (an edge to it was added): so does everything before `u`.
    pub(super) fn add_source(&mut self, u: u32) {
        if self.mark[u as usize] != self.at {
            self.mark[u as usize] = self.at;
            self.todo.push(u);
        }
    }

    pub(super) fn take_visits(&mut self) -> u64 {
        std::mem::take(&mut self.visits)
    }
}
