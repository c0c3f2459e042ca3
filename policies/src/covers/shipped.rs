//! The shipped policies over one trace: what each orders among a list of pairs, within a
//! work budget per policy, the expensive simulations on this thread and the others (and the
//! questions) on a second one when there is a second core.

use super::answers::{Answer, Answers, Simulated, simulate};
use super::facts::{Base, TraceFacts};
use shepherd_trace::{ActionId, Trace};
use std::sync::Arc;

/// Work units (rule instances examined, graph nodes visited) after which
/// [`shipped_orderings`] gives a policy up, once for the simulation and once for the races'
/// questions: a safety net for shapes the simulation does not handle incrementally (user
/// events unordered among themselves each meet every WAITFOR rule). On the races bench's
/// 115 000-action pages, where the simulation that met every user event with every rule
/// needed ≈ 105 s for `init-user-plus` and for `async-user`, each of the five policies now
/// needs at most ≈ 0.32 M units to simulate (wide page) and ≈ 1.3 M to answer the default
/// report's 40 000 races; `--all` and `--html` ask about all 273 000 and still run out.
pub const SHIPPED_BUDGET: u64 = 5_000_000;

/// What the shipped policies order among some pairs of actions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShippedOrderings {
    /// For `pairs[i]`: the shipped policies that order its first action before its second.
    pub by_pair: Vec<Vec<String>>,
    /// Shipped policies given up at [`SHIPPED_BUDGET`] (a long trace): they may order pairs
    /// `by_pair` does not list; `shepherd policy covers` runs one without a budget. A policy
    /// that can postpone or discard no action of the trace is decided without simulating it,
    /// so it is never listed.
    pub undecided: Vec<String>,
}

/// For each pair `(first, second)` of actions (a race's two sides), the shipped policies that
/// order `first` before `second`, within [`SHIPPED_BUDGET`] per policy.
pub fn shipped_orderings(
    trace: &Trace,
    hb: &[(u32, u32)],
    pairs: &[(ActionId, ActionId)],
) -> ShippedOrderings {
    orderings_within(
        TraceFacts::new(trace),
        hb,
        || pairs.to_vec(),
        SHIPPED_BUDGET,
    )
}

/// [`shipped_orderings`] from [`TraceFacts`] read before (they need no happens-before
/// graph, so a caller can read them on another core while the race analysis runs), asking
/// `pairs` for the pairs only when a simulation needs them: the simulations read only the
/// trace and happens-before, so a caller can start them (on another core) before it has
/// worked out which races it reports, and send the pairs when it has. `pairs` runs on
/// another thread than the caller's when there are two cores.
pub fn shipped_orderings_deferred(
    facts: TraceFacts,
    hb: &[(u32, u32)],
    pairs: impl FnOnce() -> Vec<(ActionId, ActionId)> + Send,
) -> ShippedOrderings {
    orderings_within(facts, hb, pairs, SHIPPED_BUDGET)
}

/// [`shipped_orderings`] with another budget per policy (for the simulation, and again for
/// the queries).
pub fn shipped_orderings_within(
    trace: &Trace,
    hb: &[(u32, u32)],
    pairs: &[(ActionId, ActionId)],
    budget: u64,
) -> ShippedOrderings {
    orderings_within(TraceFacts::new(trace), hb, || pairs.to_vec(), budget)
}

fn orderings_within(
    facts: TraceFacts,
    hb: &[(u32, u32)],
    pairs: impl FnOnce() -> Vec<(ActionId, ActionId)> + Send,
    budget: u64,
) -> ShippedOrderings {
    let base = Arc::new(Base::with_facts(facts, hb));
    let names: Vec<&str> = crate::SHIPPED.iter().map(|(name, _)| *name).collect();
    let mut answers = Answers::new(pairs);
    let mut found: Vec<Answer> = vec![Some(Vec::new()); names.len()];
    let pairs = if two_cores() {
        // The policies that make a rule instance per asynchronous operation are simulated
        // one after the other on this thread: two alive at once raised `shepherd races`' peak
        // on the races bench's wide page from 87 MB to 92-97 MB (their instances are ≈ 11 MB
        // there). The others are light; the second thread simulates them, then answers the
        // questions about each policy's edges as they come (while the next is simulated).
        let heavy = |k: &usize| PER_ASYNC_OPERATION.contains(&names[*k]);
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Simulated)>();
        std::thread::scope(|s| {
            let answerer = s.spawn(|| {
                let mut got = Vec::new();
                for k in (0..names.len()).filter(|k| !heavy(k)) {
                    got.push((k, answers.of(simulate(&base, names[k], budget), budget)));
                }
                for (k, sim) in rx {
                    got.push((k, answers.of(sim, budget)));
                }
                (got, answers.pairs().len())
            });
            for k in (0..names.len()).filter(heavy) {
                // Fails only when the answering thread is gone (it panicked): its join says why.
                if tx.send((k, simulate(&base, names[k], budget))).is_err() {
                    break;
                }
            }
            drop(tx);
            let (got, pairs) = answerer
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            for (k, answer) in got {
                found[k] = answer;
            }
            pairs
        })
    } else {
        for (k, name) in names.iter().enumerate() {
            found[k] = answers.of(simulate(&base, name, budget), budget);
        }
        answers.pairs().len()
    };
    let mut out = ShippedOrderings {
        by_pair: vec![Vec::new(); pairs],
        undecided: Vec::new(),
    };
    for (name, found) in names.iter().zip(found) {
        match found {
            Some(list) => {
                for i in list {
                    out.by_pair[i].push(name.to_string());
                }
            }
            None => out.undecided.push(name.to_string()),
        }
    }
    out
}

/// The shipped policies whose simulation keeps a rule instance for every asynchronous
/// operation (WAITFOR, WAITREC): the expensive ones, simulated one at a time.
pub(super) const PER_ASYNC_OPERATION: [&str; 2] = ["init-user-plus", "async-user"];

/// Whether a second core is there for the policy step's questions.
fn two_cores() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
}
