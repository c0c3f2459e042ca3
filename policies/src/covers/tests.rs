//! The indexed simulation against the plain one (`oracle.rs`), the shipped orderings' search
//! against the search that names rules, and the budget.

use super::oracle;
use super::shipped::PER_ASYNC_OPERATION;
use super::simulate::may_order;
use super::{Augmented, Base, TraceFacts, shipped_orderings_deferred, shipped_orderings_within};
use crate::ir::Policy;
use proptest::prelude::*;
use shepherd_trace::{ActionType, Trace, TraceBuilder};

/// The kinds of action the shipped policies tell apart, as the runtime labels them: besides
/// the first eight, the parser's chunks and scripts (forks of a chunk through their join
/// from it), an image's load, and an XHR response's first and last events (its end).
const SHAPES: [(ActionType, &str, &str); 14] = [
    (
        ActionType::Unknown,
        "script",
        "script:inserted https://s.test/a.js",
    ),
    (
        ActionType::Unknown,
        "script",
        "script:async https://s.test/b.js",
    ),
    (ActionType::Timer, "timer", "timer"),
    (ActionType::Network, "fetch", "fetch https://s.test/api"),
    (
        ActionType::Network,
        "event:load",
        "event:load @ XMLHttpRequest[4]",
    ),
    (
        ActionType::UserInterface,
        "event:click",
        "event:click @ BUTTON[2]",
    ),
    (
        ActionType::Unknown,
        "event:DOMContentLoaded",
        "event:DOMContentLoaded @ Document[0]",
    ),
    (ActionType::Unknown, "event:load", "event:load @ Window[0]"),
    (ActionType::Unknown, "parse", "parse HTML"),
    (
        ActionType::Unknown,
        "script",
        "script:external https://s.test/c.js",
    ),
    (ActionType::Unknown, "script", "script:inline #3"),
    (ActionType::Network, "event:load", "fire:load @ IMG[7]"),
    (
        ActionType::Network,
        "event:readystatechange",
        "event:readystatechange @ XMLHttpRequest[4]",
    ),
    (
        ActionType::Network,
        "event:loadend",
        "event:loadend @ XMLHttpRequest[4]",
    ),
];

/// A trace of `shapes` (indices into [`SHAPES`]) with fork arcs `forks` (tail index taken
/// modulo the head) and join arcs `joins`.
fn trace(
    shapes: &[usize],
    forks: &[(usize, bool)],
    joins: &[(usize, usize)],
) -> (Trace, Vec<(u32, u32)>) {
    let mut b = TraceBuilder::new();
    for (i, &s) in shapes.iter().enumerate() {
        let (ty, kind, label) = SHAPES[s % SHAPES.len()];
        b.begin(ty, kind, &format!("doc/{kind}@#{i}"));
        b.enter(label, None).exit();
        b.end();
    }
    let n = shapes.len();
    for (head, &(tail, yes)) in forks.iter().enumerate().take(n).skip(1) {
        if yes {
            b.fork((tail % head) as u32, head as u32);
        }
    }
    for &(x, y) in joins {
        let (x, y) = (x % n, y % n);
        if x < y {
            b.join(x as u32, y as u32);
        }
    }
    let t = b.finish();
    let hb: Vec<(u32, u32)> = t.arcs.iter().map(|a| (a.tail, a.head)).collect();
    (t, hb)
}

/// A policy over the parser's resources: images, inline and parser-blocking scripts in the
/// order they were created, inline scripts after the first XHR response.
fn parser_policy() -> Policy {
    let text = "on fork img, inline-script as v then next(v)\n\
                postpone inline-script until arrived(xhr)\n\
                template next(u):\n  \
                on fork img, inline-script, script blocking as w until arrived(u) once then order(u, w)\n";
    match crate::parse_policy("parser", "parser.policy", text) {
        Ok((p, _)) => p,
        Err(e) => panic!("{e}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    /// The indexed simulation orders exactly what the plain one does, for every shipped
    /// policy and for all of them together.
    #[test]
    fn indexed_simulation_agrees_with_the_plain_one(
        shapes in proptest::collection::vec(0usize..SHAPES.len(), 1..28),
        forks in proptest::collection::vec((0usize..64, proptest::bool::weighted(0.6)), 28),
        joins in proptest::collection::vec((0usize..28, 0usize..28), 0..6),
    ) {
        let (t, hb) = trace(&shapes, &forks, &joins);
        let mut sets: Vec<Vec<Policy>> = crate::SHIPPED
            .iter()
            .filter_map(|(name, _)| crate::load(name).ok().map(|s| s.policies))
            .collect();
        sets.push(sets.concat());
        sets.push(vec![parser_policy()]);
        for policies in &sets {
            let aug = Augmented::new(&t, &hb, policies);
            prop_assert!(!aug.exhausted);
            // What the shipped orderings skip orders nothing.
            if !may_order(&Base::new(&t, &hb), policies) {
                prop_assert!(aug.edges.is_empty());
            }
            let want = oracle::closure(&t, &hb, policies);
            let n = t.actions.len() as u32;
            for a in 0..n {
                for b in a..n {
                    prop_assert_eq!(
                        aug.orders(a, b).is_some(),
                        want[a as usize].contains(&b),
                        "{} -> {} under {:?}", a, b,
                        policies.iter().map(|p| p.name.clone()).collect::<Vec<_>>()
                    );
                }
            }
        }
    }
}

/// Shapes where many asynchronous operations are forked and several user events meet
/// them: the user events mostly one after the other (so a group's settled members are
/// skipped), sometimes not (so it looks at all of them again), timers forked by user
/// events, by timers and by scripts (so an adder reaches a user event only through an
/// ordering the policy added). `async-user`, `init-user-plus` and all five together
/// against the oracle.
fn busy_trace(
    shapes: &[bool],
    forks: &[(usize, bool)],
    chain: &[bool],
    joins: &[(usize, usize)],
) -> (Trace, Vec<(u32, u32)>) {
    // true: a click; false: a timer, every fifth a script.
    let idx: Vec<usize> = shapes
        .iter()
        .enumerate()
        .map(|(i, &click)| {
            if click {
                5
            } else if i % 5 == 4 {
                1
            } else {
                2
            }
        })
        .collect();
    let (t, mut hb) = trace(&idx, forks, joins);
    let users: Vec<u32> = (0..idx.len() as u32)
        .filter(|&i| idx[i as usize] == 5)
        .collect();
    for (k, w) in users.windows(2).enumerate() {
        if chain.get(k).copied().unwrap_or(false) {
            hb.push((w[0], w[1]));
        }
    }
    (t, hb)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The user-event policies on many asynchronous operations agree with the oracle.
    #[test]
    fn user_event_policies_agree_with_the_oracle_on_busy_traces(
        shapes in proptest::collection::vec(proptest::bool::weighted(0.3), 2..36),
        forks in proptest::collection::vec((0usize..64, proptest::bool::weighted(0.85)), 36),
        chain in proptest::collection::vec(proptest::bool::weighted(0.75), 36),
        joins in proptest::collection::vec((0usize..36, 0usize..36), 0..4),
    ) {
        let (t, hb) = busy_trace(&shapes, &forks, &chain, &joins);
        let mut sets: Vec<Vec<Policy>> = ["async-user", "init-user-plus"]
            .iter()
            .filter_map(|name| crate::load(name).ok().map(|s| s.policies))
            .collect();
        let all: Vec<Policy> = crate::SHIPPED
            .iter()
            .filter_map(|(name, _)| crate::load(name).ok().map(|s| s.policies))
            .flatten()
            .collect();
        sets.push(all);
        // The shipped orderings' two-sided search against the search that names rules.
        let n = t.actions.len() as u32;
        let pairs: Vec<(u32, u32)> = (0..n).flat_map(|a| (a..n).map(move |b| (a, b))).collect();
        let by = shipped_orderings_within(&t, &hb, &pairs, u64::MAX);
        prop_assert!(by.undecided.is_empty());
        // Pairs given late (asked for once, on whichever thread answers) change nothing.
        let asked = std::sync::atomic::AtomicUsize::new(0);
        let late = shipped_orderings_deferred(TraceFacts::new(&t), &hb, || {
            asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            pairs.clone()
        });
        prop_assert_eq!(&late, &by);
        prop_assert_eq!(asked.load(std::sync::atomic::Ordering::Relaxed), 1);
        for (name, _) in crate::SHIPPED {
            let Ok(set) = crate::load(name) else { continue };
            let aug = Augmented::new(&t, &hb, &set.policies);
            for (k, &(a, b)) in pairs.iter().enumerate() {
                prop_assert_eq!(
                    by.by_pair[k].iter().any(|x| x == name),
                    aug.orders(a, b).is_some_and(|rules| !rules.is_empty()),
                    "{} -> {} under {}", a, b, name
                );
            }
        }
        for policies in &sets {
            let aug = Augmented::new(&t, &hb, policies);
            let want = oracle::closure(&t, &hb, policies);
            let n = t.actions.len() as u32;
            for a in 0..n {
                for b in a..n {
                    prop_assert_eq!(
                        aug.orders(a, b).is_some(),
                        want[a as usize].contains(&b),
                        "{} -> {} under {:?}", a, b,
                        policies.iter().map(|p| p.name.clone()).collect::<Vec<_>>()
                    );
                }
            }
        }
    }
}

/// A long session: async-user adds a rule per asynchronous operation and every click
/// meets all of them. The budget stops the simulation and the policy is reported
/// undecided instead of the analysis running for hours.
/// The policies simulated one at a time are shipped ones (a misspelt name would let two
/// of them run at once).
#[test]
fn the_heavy_policies_are_shipped() {
    for name in PER_ASYNC_OPERATION {
        assert!(crate::SHIPPED.iter().any(|(n, _)| *n == name), "{name}");
    }
}

#[test]
fn a_policy_over_budget_is_undecided() {
    let mut shapes = Vec::new();
    for i in 0..3000 {
        shapes.push(if i % 10 == 9 { 5 } else { 2 });
    }
    let forks: Vec<(usize, bool)> = (0..shapes.len()).map(|i| (i + 7, true)).collect();
    let (t, hb) = trace(&shapes, &forks, &[]);
    let pairs = [(0, 9), (1, 19)];
    let unlimited = shipped_orderings_within(&t, &hb, &pairs, u64::MAX);
    assert!(unlimited.undecided.is_empty());
    let small = shipped_orderings_within(&t, &hb, &pairs, 10_000);
    assert!(
        small.undecided.contains(&"async-user".to_string()),
        "{small:?}"
    );
    for (i, names) in small.by_pair.iter().enumerate() {
        for name in names {
            assert!(unlimited.by_pair[i].contains(name), "{name} on pair {i}");
            assert!(!small.undecided.contains(name));
        }
    }
}
