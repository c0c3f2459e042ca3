//! Which shipped repair policies order each race a report shows: worked out on a thread of
//! their own (the simulations read only the trace and the happens-before), joined when a
//! report needs them.

use shepherd_policies::covers::ShippedOrderings;
use shepherd_races::graph::HbGraph;
use shepherd_races::report::RaceReport;
use shepherd_races::report::text::PendingMarks;
use std::thread::ScopedJoinHandle;

/// The happens-before arcs (logged and derived) the analysis used.
pub(crate) fn hb_arcs(graph: &HbGraph) -> Vec<(u32, u32)> {
    graph.arcs().iter().map(|a| (a.tail, a.head)).collect()
}

/// The action pairs of `rep`'s races, in order.
pub(crate) fn race_pairs(rep: &RaceReport) -> Vec<(u32, u32)> {
    rep.races
        .iter()
        .map(|r| (r.first.action, r.second.action))
        .collect()
}

/// Fills each race's `repaired_by` (in the order of [`race_pairs`]) and the policies not
/// worked out.
pub(crate) fn set_repaired_by(rep: &mut RaceReport, by: Vec<Vec<String>>, undecided: Vec<String>) {
    for (r, names) in rep.races.iter_mut().zip(by) {
        r.repaired_by = names;
    }
    rep.summary.policies_undecided = undecided;
}

/// Per list of action pairs, the shipped policies that order each pair; and the policies
/// given up at the budget.
type ListMarks = (Vec<Vec<Vec<String>>>, Vec<String>);

/// Splits the answers for lists of `lens` pairs, concatenated, back into one list per list,
/// and the policies given up at the budget.
fn split_by_list(by: ShippedOrderings, lens: &[usize]) -> ListMarks {
    let mut names = by.by_pair.into_iter();
    let split = lens
        .iter()
        .map(|&n| names.by_ref().take(n).collect())
        .collect();
    (split, by.undecided)
}

/// The shipped policies' marks of a report's races (and its HTML page's): all lists share
/// one simulation per policy, because a report and its page ask about the same trace and on
/// a long session each simulation costs up to its whole budget.
pub(crate) struct PolicyMarks<'s> {
    thread: Option<ScopedJoinHandle<'s, ShippedOrderings>>,
    /// How many pairs each list has.
    lens: Vec<usize>,
    /// Per list, the policies that order each pair; and the policies not worked out.
    done: Option<ListMarks>,
    /// How many pairs of the first list some policy orders, once joined.
    ordered: usize,
    /// How many more times the first list will be asked for (a text and a JSON report, the
    /// whole report): every ask but the last leaves a copy.
    first_asks: usize,
}

impl<'s> PolicyMarks<'s> {
    /// Marks for `lists` (concatenated) that `thread` is working out; `first_asks` outputs
    /// show the first list.
    pub(crate) fn working(
        thread: ScopedJoinHandle<'s, ShippedOrderings>,
        lists: &[Vec<(u32, u32)>],
        first_asks: usize,
    ) -> Self {
        PolicyMarks {
            thread: Some(thread),
            lens: lists.iter().map(Vec::len).collect(),
            done: None,
            ordered: 0,
            first_asks,
        }
    }

    /// Waits for the thread (once), and keeps its answers split by list.
    fn join(&mut self) {
        if let Some(thread) = self.thread.take() {
            let by = thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            let done = split_by_list(by, &self.lens);
            self.ordered = done
                .0
                .first()
                .map_or(0, |l| l.iter().filter(|p| !p.is_empty()).count());
            self.done = Some(done);
        }
    }

    /// The marks of list `k`, waiting for the thread. Taken out: asked once per list, except
    /// the first list, copied until its last ask.
    pub(crate) fn of_list(&mut self, k: usize) -> (Vec<Vec<String>>, Vec<String>) {
        self.join();
        let keep = k == 0 && self.first_asks > 1;
        if k == 0 {
            self.first_asks = self.first_asks.saturating_sub(1);
        }
        match &mut self.done {
            Some((lists, undecided)) => {
                let list = lists.get_mut(k).map_or_else(Vec::new, |l| {
                    if keep { l.clone() } else { std::mem::take(l) }
                });
                (list, undecided.clone())
            }
            None => Default::default(),
        }
    }

    /// How many pairs of the first list some policy orders (waiting for the thread).
    pub(crate) fn ordered(&mut self) -> usize {
        self.join();
        self.ordered
    }
}

impl PendingMarks for PolicyMarks<'_> {
    fn is_ready(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    fn take(&mut self) -> (Vec<Vec<String>>, Vec<String>) {
        self.of_list(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn answers_are_split_back_by_list() {
        let by = ShippedOrderings {
            by_pair: vec![names(&["a"]), vec![], names(&["b"]), names(&["a", "b"])],
            undecided: names(&["c"]),
        };
        let (lists, undecided) = split_by_list(by, &[1, 3, 0]);
        assert_eq!(
            lists,
            vec![
                vec![names(&["a"])],
                vec![vec![], names(&["b"]), names(&["a", "b"])],
                vec![],
            ]
        );
        assert_eq!(undecided, names(&["c"]));
    }

    #[test]
    fn the_first_list_asked_twice_is_kept_once() {
        let lists = vec![vec![(0, 1), (1, 2)], vec![(0, 1)]];
        std::thread::scope(|s| {
            let thread = s.spawn(|| ShippedOrderings {
                by_pair: vec![names(&["a"]), vec![], names(&["a"])],
                undecided: vec![],
            });
            let mut marks = PolicyMarks::working(thread, &lists, 2);
            assert_eq!(marks.take().0, vec![names(&["a"]), vec![]]);
            assert_eq!(marks.of_list(0).0, vec![names(&["a"]), vec![]]);
            assert!(marks.of_list(0).0.is_empty(), "taken by the second ask");
            assert_eq!(marks.of_list(1).0, vec![names(&["a"])]);
            assert_eq!(marks.ordered(), 1);
        });
    }

    #[test]
    fn the_first_list_asked_three_times_is_copied_twice() {
        let lists = vec![vec![(0, 1)]];
        std::thread::scope(|s| {
            let thread = s.spawn(|| ShippedOrderings {
                by_pair: vec![names(&["a"])],
                undecided: vec![],
            });
            let mut marks = PolicyMarks::working(thread, &lists, 3);
            for _ in 0..3 {
                assert_eq!(marks.of_list(0).0, vec![names(&["a"])]);
            }
            assert!(marks.of_list(0).0.is_empty(), "taken by the third ask");
        });
    }
}
