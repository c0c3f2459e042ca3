//! Random traces for property tests (shared by the test files of this crate).
#![allow(dead_code)]

use proptest::prelude::*;
use rand_xoshiro::SplitMix64;
use rand_xoshiro::rand_core::{RngCore, SeedableRng};
use shepherd_trace::{ActionType, ArcKind, Trace, TraceBuilder};

/// Texts that exercise escaping and interning: quotes, backslashes, control characters,
/// non-ASCII, astral characters, the ER scope marker.
const POOL: &[&str] = &[
    "Global.x",
    "Global.y",
    "DOMNode[4].innerHTML",
    "BUTTON[7].click",
    "Tree[1]:out",
    "Timer:3",
    "\"quoted\"",
    "back\\slash",
    "tab\tnew\nline\u{1}",
    "ünïcödé €",
    "emoji 🦀",
    "",
    "fire:click @ BUTTON[7]",
    "a @@ b",
    "https://a.test/app.js:12:4",
    "undefined",
];

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::sample::select(POOL).prop_map(str::to_owned),
        1 => "[a-z\\[\\]\\.:0-9 ]{0,12}",
        1 => any::<String>().prop_map(|s| s.chars().take(8).collect()),
    ]
}

#[derive(Clone, Debug)]
pub enum GenOp {
    Read(String, Option<String>, Option<String>),
    Write(String, Option<String>, Option<String>),
    Enter(String, Option<String>),
    Exit,
    Exception(String, Option<String>),
}

fn gen_op() -> impl Strategy<Value = GenOp> {
    prop_oneof![
        3 => (text(), proptest::option::of(text()), proptest::option::of(text()))
            .prop_map(|(l, v, p)| GenOp::Read(l, v, p)),
        3 => (text(), proptest::option::of(text()), proptest::option::of(text()))
            .prop_map(|(l, v, p)| GenOp::Write(l, v, p)),
        1 => (text(), proptest::option::of(text())).prop_map(|(l, v)| GenOp::Enter(l, v)),
        1 => Just(GenOp::Exit),
        1 => (text(), proptest::option::of(text())).prop_map(|(l, v)| GenOp::Exception(l, v)),
    ]
}

#[derive(Clone, Debug)]
pub struct GenAction {
    pub ty: u8,
    pub kind: String,
    pub stable: String,
    pub ops: Vec<GenOp>,
}

fn gen_action() -> impl Strategy<Value = GenAction> {
    (
        0u8..5,
        text(),
        text(),
        proptest::collection::vec(gen_op(), 0..8),
    )
        .prop_map(|(ty, kind, stable, ops)| GenAction {
            ty,
            kind,
            stable,
            ops,
        })
}

/// A node description: number, tag, optional path, id, classes.
pub type GenNode = (u32, String, Option<String>, Option<String>, Option<String>);

fn gen_node() -> impl Strategy<Value = GenNode> {
    (
        prop_oneof![3 => 0u32..40, 1 => any::<u32>()],
        text(),
        proptest::option::of(text()),
        proptest::option::of(text()),
        proptest::option::of(text()),
    )
}

/// A control's coverage: number, gestures offered, gestures done.
pub type GenControl = (u32, String, String);

fn gen_control() -> impl Strategy<Value = GenControl> {
    (
        prop_oneof![3 => 0u32..40, 1 => any::<u32>()],
        text(),
        text(),
    )
}

/// A random valid trace: up to 12 actions, arcs between them, assorted ops and strings, a few
/// node descriptions and controls.
pub fn trace() -> impl Strategy<Value = Trace> {
    (
        proptest::option::of(text()),
        proptest::collection::vec(gen_action(), 0..12),
        proptest::collection::vec(
            (
                any::<u16>(),
                any::<u16>(),
                any::<bool>(),
                proptest::option::of(0u32..100_000),
            ),
            0..16,
        ),
        proptest::collection::vec(text(), 0..3),
        proptest::collection::vec(gen_node(), 0..4),
        proptest::collection::vec(gen_control(), 0..4),
    )
        .prop_map(|(page, actions, arcs, extra, nodes, controls)| {
            build(page, &actions, &arcs, &extra, &nodes, &controls)
        })
}

pub fn build(
    page: Option<String>,
    actions: &[GenAction],
    arcs: &[(u16, u16, bool, Option<u32>)],
    extra_strings: &[String],
    nodes: &[GenNode],
    controls: &[GenControl],
) -> Trace {
    let mut b = TraceBuilder::new();
    if let Some(p) = page {
        b.page(&p);
    }
    let n = actions.len() as u32;
    for a in actions {
        b.begin(ActionType::from_code(i64::from(a.ty)), &a.kind, &a.stable);
        for op in &a.ops {
            match op {
                GenOp::Read(l, v, p) => b.read_at(l, v.as_deref(), p.as_deref()),
                GenOp::Write(l, v, p) => b.write_at(l, v.as_deref(), p.as_deref()),
                GenOp::Enter(s, p) => b.enter(s, p.as_deref()),
                GenOp::Exit => b.exit(),
                GenOp::Exception(m, p) => b.exception(m, p.as_deref()),
            };
        }
        b.end();
    }
    if n >= 2 {
        for &(x, y, fork, delay) in arcs {
            let (x, y) = (u32::from(x) % n, u32::from(y) % n);
            if x == y {
                continue;
            }
            let (t, h) = (x.min(y), x.max(y));
            if fork {
                b.arc(t, h, ArcKind::Fork, delay);
            } else {
                b.arc(t, h, ArcKind::Join, None);
            }
        }
    }
    let mut described = std::collections::HashSet::new();
    for (n, tag, path, id, classes) in nodes {
        if described.insert(*n) {
            b.node(*n, tag, path.as_deref(), id.as_deref(), classes.as_deref());
        }
    }
    // One entry per control, as for nodes: a second one would replace the first's strings,
    // and the trace's string numbers would no longer follow the order it was built in.
    let mut exercised = std::collections::HashSet::new();
    for (n, offered, done) in controls {
        if exercised.insert(*n) {
            b.control(*n, offered, done);
        }
    }
    for s in extra_strings {
        b.intern(s);
    }
    b.finish()
}

/// A seeded generator (SplitMix64) for the tests that mutate inputs at random: a failing seed
/// reproduces the same inputs.
pub struct Rng(SplitMix64);

impl Rng {
    /// The generator whose state starts at `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(SplitMix64::seed_from_u64(seed))
    }

    pub fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// True once in `n` times on average.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
}
