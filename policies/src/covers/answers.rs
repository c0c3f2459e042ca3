//! Which of a list of pairs a simulated shipped policy orders: each policy simulated within a
//! work budget, and the pairs asked once per set of edges (policies that add the same edges
//! order the same pairs).

use super::augmented::{Augmented, Meeting};
use super::facts::Base;
use super::simulate::may_order;
use shepherd_trace::ActionId;
use std::sync::Arc;

/// What simulating one shipped policy gave.
pub(super) enum Simulated<'t> {
    /// It orders no pair of this trace.
    Nothing,
    /// Given up at the budget.
    Undecided,
    /// The policy's edges: it may order pairs.
    Graph(Augmented<'t>),
}

/// Simulates the shipped policy `name` within `budget`.
pub(super) fn simulate<'t>(base: &Arc<Base<'t>>, name: &str, budget: u64) -> Simulated<'t> {
    let Ok(set) = crate::load(name) else {
        return Simulated::Nothing;
    };
    // Decided without the simulation (and so never given up at the budget).
    if !may_order(base, &set.policies) {
        return Simulated::Nothing;
    }
    let aug = Augmented::over(base.clone(), &set.policies, budget);
    if aug.exhausted {
        Simulated::Undecided
    } else if aug.edges.is_empty() {
        // Races are unordered by happens-before: without a policy edge nothing orders them.
        Simulated::Nothing
    } else {
        Simulated::Graph(aug)
    }
}

/// The answers given so far, by the edges they were asked of: policies that add the same
/// edges order the same pairs (which rule added an edge does not matter to that), so they
/// are asked once. On the races bench's pages `init-user-plus` and `async-user` add the same
/// 41 000 edges (the pages never finish parsing), and answering was ≈ 30 ms each.
pub(super) struct Answers<F> {
    /// The pairs asked about, once known ([`Answers::pairs`]).
    pairs: Option<Vec<(ActionId, ActionId)>>,
    /// Gives the pairs the first time they are needed.
    source: Option<F>,
    by_edges: Vec<(Vec<(ActionId, ActionId)>, Answer)>,
}

/// The indices of the pairs a policy orders; `None` when it was given up at the budget.
pub(super) type Answer = Option<Vec<usize>>;

impl<F: FnOnce() -> Vec<(ActionId, ActionId)>> Answers<F> {
    pub(super) fn new(source: F) -> Answers<F> {
        Answers {
            pairs: None,
            source: Some(source),
            by_edges: Vec::new(),
        }
    }

    /// The pairs asked about (asked for the first time here).
    pub(super) fn pairs(&mut self) -> &[(ActionId, ActionId)] {
        let source = &mut self.source;
        self.pairs
            .get_or_insert_with(|| source.take().map(|f| f()).unwrap_or_default())
    }

    /// The indices of the pairs that `sim` orders; `None` when the simulation or the
    /// questions ran out of `budget`.
    pub(super) fn of(&mut self, sim: Simulated, budget: u64) -> Answer {
        let aug = match sim {
            Simulated::Nothing => return Some(Vec::new()),
            Simulated::Undecided => return None,
            Simulated::Graph(aug) => aug,
        };
        let edges: Vec<(ActionId, ActionId)> = aug.edges.iter().map(|e| (e.from, e.to)).collect();
        if let Some((_, found)) = self.by_edges.iter().find(|(e, _)| *e == edges) {
            return found.clone();
        }
        let found = ask(&aug, self.pairs(), budget);
        self.by_edges.push((edges, found.clone()));
        found
    }
}

/// The indices of the `pairs` that `aug` orders with a policy rule on the way; `None` when the
/// questions together need more than `budget` node visits.
fn ask(aug: &Augmented, pairs: &[(ActionId, ActionId)], budget: u64) -> Answer {
    let mut left = budget;
    let mut found = Vec::new();
    let mut m = Meeting::default();
    for (i, &(a, b)) in pairs.iter().enumerate() {
        // Ordered with a policy rule on the way: reached with the policy edges and not
        // without. Happens-before orders no race; for a pair it orders, whether the
        // path found names a rule is left to the search that finds it.
        let ordered = match aug.reaches(a, b, true, &mut m, &mut left) {
            Some(true) => match aug.reaches(a, b, false, &mut m, &mut left) {
                Some(false) => true,
                Some(true) => aug
                    .orders_within(a, b, &mut left)
                    .is_some_and(|rules| !rules.is_empty()),
                None => false,
            },
            _ => false,
        };
        if left == 0 {
            return None;
        }
        if ordered {
            found.push(i);
        }
    }
    Some(found)
}
