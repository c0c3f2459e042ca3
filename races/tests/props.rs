//! Property tests: the fast algorithms against the definitions on random small inputs.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use shepherd_races::clocks::ClockBuilder;
use shepherd_races::graph::{ArcOrigin, HbArc, HbGraph};
use shepherd_races::oracle::{self, Bfs, BitClocks};
use shepherd_races::{Options, analyze};
use shepherd_trace::{ActionType, Trace, TraceBuilder};
use std::collections::BTreeSet;

fn dag(n: u32, picks: &[(u32, u32)]) -> HbGraph {
    let arcs = picks
        .iter()
        .filter_map(|&(x, y)| {
            let (t, h) = (x % n, y % n);
            (t < h).then_some(HbArc {
                tail: t,
                head: h,
                origin: ArcOrigin::Join,
            })
        })
        .collect();
    HbGraph::new(n, arcs).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Chain-decomposition clocks, BFS and plain vector clocks agree on every pair.
    #[test]
    fn reachability_oracles_agree(n in 1u32..60, picks in prop::collection::vec((0u32..60, 0u32..60), 0..150)) {
        let g = dag(n, &picks);
        let mut b = ClockBuilder::new(n as usize);
        for v in 0..n {
            for p in g.preds(v) {
                b.join_node(p);
            }
            b.finish_greedy();
        }
        let c = b.build();
        let (bfs, bits) = (Bfs::new(&g), BitClocks::new(&g));
        for x in 0..n {
            for y in 0..n {
                let want = bfs.ordered(x, y);
                prop_assert_eq!(c.ordered(x, y), want, "chains {} {}", x, y);
                prop_assert_eq!(bits.ordered(x, y), want, "bits {} {}", x, y);
            }
        }
        prop_assert!(c.chains() as u32 <= n);
    }
}

/// One random action: its operations as (location, is_write).
type Ops = Vec<(u8, bool)>;

fn trace_of(actions: &[Ops], picks: &[(u32, u32)]) -> Trace {
    let mut b = TraceBuilder::new();
    let n = actions.len() as u32;
    for (i, ops) in actions.iter().enumerate() {
        b.begin(ActionType::Unknown, "a", &format!("a{i}"));
        for &(l, w) in ops {
            // Location 3 is node existence: written by one action, read by later ones; 4
            // marks a delivery from a FIFO queue (its forks are posts).
            let loc = match l {
                3 => "NodeTree:1".to_owned(),
                4 => "Queue:q".to_owned(),
                _ => format!("Global.v{l}"),
            };
            if w {
                b.write(&loc, Some("1"));
            } else {
                b.read(&loc, None);
            }
        }
        b.end();
    }
    let mut seen = BTreeSet::new();
    for &(x, y) in picks {
        let (t, h) = (x % n, y % n);
        if t < h && seen.insert((t, h)) {
            // Some arcs are timer forks with a delay, so the FIFO rule gets exercised.
            match (x / 9 + y / 9) % 3 {
                0 => b.join(t, h),
                1 => b.fork_delay(t, h, (x % 3) * 10),
                _ => b.fork(t, h),
            };
        }
    }
    b.finish()
}

fn actions_strategy() -> impl Strategy<Value = Vec<Ops>> {
    prop::collection::vec(prop::collection::vec((0u8..5, any::<bool>()), 0..4), 2..9)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Candidates are races; coverage of every candidate matches Def. 3.1 / 3.2 evaluated over
    /// all races; the locations with uncovered races are exactly those of the definition.
    #[test]
    fn coverage_matches_definitions(actions in actions_strategy(), picks in prop::collection::vec((0u32..27, 0u32..27), 0..12)) {
        let trace = trace_of(&actions, &picks);
        let an = analyze(&trace, &Options::default()).unwrap();
        let acc = &an.accesses;
        let bfs = Bfs::new(&an.graph);
        let hb = |a: u32, b: u32| bfs.ordered(a, b);
        let all = oracle::all_races(acc, &hb);
        let all_set: BTreeSet<(u32, u32)> = all.iter().copied().collect();
        let single = an.single.as_ref().unwrap();
        for (i, r) in an.races.iter().enumerate() {
            prop_assert!(all_set.contains(&(r.first, r.second)), "candidate {:?} is not a race", r);
            let m = oracle::multi_covered(acc, &all, (r.first, r.second), &hb);
            let s = oracle::single_covered(acc, &all, (r.first, r.second), &hb);
            prop_assert_eq!(an.covered[i], m, "multi {:?}", r);
            prop_assert_eq!(single[i], s, "single {:?}", r);
        }
        let want: BTreeSet<u32> = all
            .iter()
            .filter(|&&r| !oracle::multi_covered(acc, &all, r, &hb))
            .map(|&(a, _)| acc.get(a).loc)
            .collect();
        let got: BTreeSet<u32> = an.uncovered().map(|i| an.races[i].loc).collect();
        prop_assert_eq!(got, want);
        // The reference pipeline (every clock kept) agrees with the streaming sweep.
        let reference = oracle::retained(&trace, &shepherd_races::FixOptions::default()).unwrap();
        prop_assert_eq!(&reference.races, &an.races);
        prop_assert_eq!(&reference.covered, &an.covered);
        prop_assert_eq!(Some(&reference.single), an.single.as_ref());
        prop_assert_eq!(&reference.uninit, &an.uninit);
        // At most p − 1 + 2q candidates per location.
        for l in 0..acc.locs.len() as u32 {
            let xs = acc.of(l);
            let p = xs.iter().filter(|x| x.kind.is_write()).count();
            let q = xs.len() - p;
            let c = an.races.iter().filter(|r| r.loc == l).count();
            prop_assert!(c <= (p + 2 * q).saturating_sub(1), "loc {} has {} candidates", l, c);
        }
    }
}
