//! ≤_P of one simulation: happens-before plus the policy's edges ([`Augmented`], built by
//! `simulate.rs`), the backwards view the simulation searches as it goes, and the questions
//! asked once it is done (whether `a ≤_P b`, and through which rules).

use super::csr::Csr;
use super::facts::Base;
use shepherd_trace::{ActionId, FastState};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// One ordering a policy adds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyEdge {
    /// Runs first.
    pub from: ActionId,
    /// Waits for `from`.
    pub to: ActionId,
    /// The rule that makes it wait (`policy:line`).
    pub rule: String,
}

/// Happens-before plus the orderings of a policy over one trace.
#[derive(Clone, Debug)]
pub struct Augmented<'t> {
    /// The orderings the policies add that happens-before and the earlier orderings did not
    /// already imply.
    pub edges: Vec<PolicyEdge>,
    /// The simulation stopped at its work budget: `edges` is incomplete, so `orders` may say
    /// unordered where the policy orders.
    pub exhausted: bool,
    pub(super) base: Arc<Base<'t>>,
    /// The policy edges by tail (their indices in `edges`), made when the simulation ends.
    pub(super) extra_succ: Csr,
    /// The policy edges into x are `edges[pred_off[x]..pred_off[x + 1]]`: a simulation adds
    /// them in the order of their heads. While it runs, the list ends at the action being
    /// begun, whose edges run to the end of `edges`. Arrays instead of a map per direction
    /// (≈ 40 000 edges, each with its own small list): less memory and no hashing in the
    /// searches.
    pub(super) pred_off: Vec<u32>,
}

impl<'t> Augmented<'t> {
    /// Happens-before and the policy edges found so far, backwards.
    pub(super) fn graph(&self) -> Graph<'_> {
        Graph {
            pred: &self.base.pred,
            edges: &self.edges,
            pred_off: &self.pred_off,
        }
    }

    /// The tails of the policy edges into `x`.
    fn policy_preds(&self, x: u32) -> impl Iterator<Item = u32> + '_ {
        Graph::policy_preds_of(&self.edges, &self.pred_off, x)
    }

    /// The policy edges out of `x`: head and index in `edges`.
    fn policy_succs(&self, x: u32) -> impl Iterator<Item = (u32, usize)> + '_ {
        self.extra_succ
            .of(x)
            .iter()
            .filter_map(|&i| self.edges.get(i as usize).map(|e| (e.to, i as usize)))
    }

    /// Whether `a ≤_P b`: a path from `a` to `b` through happens-before and policy edges.
    /// `Some(rules)` names the policy rules on the path found (empty when happens-before alone
    /// orders them); `None` when unordered.
    pub fn orders(&self, a: ActionId, b: ActionId) -> Option<Vec<String>> {
        let mut unlimited = u64::MAX;
        self.orders_within(a, b, &mut unlimited)
    }

    /// Whether `a` reaches `b` through happens-before, and the policy edges too when
    /// `with_policy`; `None` when `budget` (node visits, decremented) runs out. Searches
    /// forwards from `a` and backwards from `b` in turns until one meets the other or one
    /// runs out of actions: a race's two actions usually have few descendants before the
    /// second or few ancestors after the first, but rarely both many, and a breadth-first
    /// search from the first (as [`Augmented::orders`]) walks all its descendants. On a
    /// 115 000-action page every earlier timer reaches each user event through the policy
    /// edges, and 40 000 races took more than 5 M visits.
    pub(super) fn reaches(
        &self,
        a: ActionId,
        b: ActionId,
        with_policy: bool,
        m: &mut Meeting,
        budget: &mut u64,
    ) -> Option<bool> {
        if a == b {
            return Some(true);
        }
        let n = self.base.succ.nodes();
        if a > b || (b as usize) >= n {
            return Some(false);
        }
        let s = m.start(n);
        m.fwd[a as usize] = s;
        m.bwd[b as usize] = s;
        m.fs.push(a);
        m.bs.push(b);
        loop {
            // A side with nothing left to search has found all it can reach.
            let Some(x) = m.fs.pop() else {
                return Some(false);
            };
            *budget = budget.checked_sub(1)?;
            let extra = self.policy_succs(x).filter(|_| with_policy);
            let succ = self.base.succ.of(x).iter().copied();
            let from = m.fs.len();
            for y in succ.chain(extra.map(|(y, _)| y)) {
                if y > b {
                    continue;
                }
                if m.bwd[y as usize] == s {
                    return Some(true);
                }
                if m.fwd[y as usize] != s {
                    m.fwd[y as usize] = s;
                    m.fs.push(y);
                }
            }
            // The latest on top: it gets nearest the second action soonest.
            m.fs[from..].sort_unstable();
            let Some(x) = m.bs.pop() else {
                return Some(false);
            };
            *budget = budget.checked_sub(1)?;
            let extra = self.policy_preds(x).filter(|_| with_policy);
            let from = m.bs.len();
            for p in self.base.pred.of(x).iter().copied().chain(extra) {
                if p < a {
                    continue;
                }
                if m.fwd[p as usize] == s {
                    return Some(true);
                }
                if m.bwd[p as usize] != s {
                    m.bwd[p as usize] = s;
                    m.bs.push(p);
                }
            }
            // The earliest on top, nearest the first action.
            m.bs[from..].sort_unstable_by(|x, y| y.cmp(x));
        }
    }

    /// [`Augmented::orders`] that spends at most `budget` node visits (decremented);
    /// `None` also when it runs out.
    pub(super) fn orders_within(
        &self,
        a: ActionId,
        b: ActionId,
        budget: &mut u64,
    ) -> Option<Vec<String>> {
        if a == b {
            return Some(Vec::new());
        }
        if a > b || (b as usize) >= self.base.succ.nodes() {
            return None;
        }
        let mut prev: HashMap<u32, (u32, Option<usize>), FastState> = HashMap::default();
        let mut q = VecDeque::from([a]);
        while let Some(x) = q.pop_front() {
            *budget = budget.checked_sub(1)?;
            let base = self.base.succ.of(x).iter().map(|&y| (y, None));
            let extra = self.policy_succs(x).map(|(y, i)| (y, Some(i)));
            for (y, e) in base.chain(extra) {
                if y > b || y == a || prev.contains_key(&y) {
                    continue;
                }
                prev.insert(y, (x, e));
                if y == b {
                    let mut rules = Vec::new();
                    let mut cur = b;
                    while cur != a {
                        let (p, e) = prev[&cur];
                        if let Some(i) = e {
                            rules.push(self.edges[i].rule.clone());
                        }
                        cur = p;
                    }
                    rules.reverse();
                    rules.dedup();
                    return Some(rules);
                }
                q.push_back(y);
            }
        }
        None
    }
}

/// Marks of the two searches of [`Augmented::reaches`], reused across questions.
#[derive(Default)]
pub(super) struct Meeting {
    /// `fwd[x] == stamp`: the search from the first action reached x; `bwd[x] == stamp`: x
    /// reaches the second action.
    fwd: Vec<u32>,
    bwd: Vec<u32>,
    stamp: u32,
    fs: Vec<u32>,
    bs: Vec<u32>,
}

impl Meeting {
    /// Starts a question over `n` actions: a new stamp (the marks are cleared when the
    /// stamps run out).
    fn start(&mut self, n: usize) -> u32 {
        if self.fwd.len() != n || self.stamp == u32::MAX {
            self.fwd = vec![0; n];
            self.bwd = vec![0; n];
            self.stamp = 0;
        }
        self.stamp += 1;
        self.fs.clear();
        self.bs.clear();
        self.stamp
    }
}

/// Happens-before and the policy edges found so far, backwards.
#[derive(Clone, Copy)]
pub(super) struct Graph<'g> {
    pred: &'g Csr,
    /// The policy edges so far and where each head's begin ([`Augmented::pred_off`]).
    edges: &'g [PolicyEdge],
    pred_off: &'g [u32],
}

impl Graph<'_> {
    pub(super) fn preds(&self, x: u32) -> impl Iterator<Item = u32> + '_ {
        let more = Graph::policy_preds_of(self.edges, self.pred_off, x);
        self.pred.of(x).iter().copied().chain(more)
    }

    /// The tails of the policy edges into `x` ([`Augmented::pred_off`]).
    fn policy_preds_of<'e>(
        edges: &'e [PolicyEdge],
        pred_off: &[u32],
        x: u32,
    ) -> impl Iterator<Item = u32> + 'e {
        let at = |i: usize| pred_off.get(i).map_or(edges.len(), |&o| o as usize);
        let (lo, hi) = (at(x as usize), at(x as usize + 1));
        edges.get(lo..hi).unwrap_or(&[]).iter().map(|e| e.from)
    }
}
