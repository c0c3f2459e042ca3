//! Summary figures and per-action views of a trace, for `shepherd trace` and for tools (the
//! JSON shapes are part of that command's versioned output).

use crate::model::{ActionId, ActionType, ArcKind, Op, StrId, Trace};
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};

/// Short lower-case name of an action type, as printed and in JSON.
pub fn type_name(ty: ActionType) -> &'static str {
    match ty {
        ActionType::Unknown => "unknown",
        ActionType::Timer => "timer",
        ActionType::UserInterface => "ui",
        ActionType::Network => "network",
        ActionType::Continuation => "continuation",
    }
}

/// Counts over a whole trace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TraceStats {
    /// Number of actions.
    pub actions: usize,
    /// Actions per type name.
    pub actions_by_type: BTreeMap<&'static str, usize>,
    /// Actions per finer kind.
    pub actions_by_kind: BTreeMap<String, usize>,
    /// Number of arcs.
    pub arcs: usize,
    /// Fork arcs.
    pub forks: usize,
    /// Fork arcs with a timer delay.
    pub timed_forks: usize,
    /// Join arcs.
    pub joins: usize,
    /// Number of operations.
    pub ops: usize,
    /// Reads.
    pub reads: usize,
    /// Writes.
    pub writes: usize,
    /// Scopes entered.
    pub scopes: usize,
    /// Exceptions that escaped to the event loop.
    pub exceptions: usize,
    /// Distinct locations read or written.
    pub locations: usize,
    /// Distinct locations written at least once.
    pub locations_written: usize,
    /// Distinct locations read at least once.
    pub locations_read: usize,
    /// Actions with no operation.
    pub empty_actions: usize,
    /// Interned strings.
    pub strings: usize,
}

impl TraceStats {
    /// Counts everything in `trace`.
    pub fn of(trace: &Trace) -> TraceStats {
        let mut s = TraceStats {
            actions: trace.actions.len(),
            arcs: trace.arcs.len(),
            ops: trace.ops.len(),
            strings: trace.strings.len(),
            ..TraceStats::default()
        };
        let mut kinds: BTreeMap<StrId, usize> = BTreeMap::new();
        for a in &trace.actions {
            *s.actions_by_type.entry(type_name(a.ty)).or_default() += 1;
            *kinds.entry(a.kind).or_default() += 1;
            if a.ops.is_empty() {
                s.empty_actions += 1;
            }
        }
        s.actions_by_kind = kinds
            .into_iter()
            .map(|(k, n)| (trace.strings.get(k).to_owned(), n))
            .collect();
        for a in &trace.arcs {
            match a.kind {
                ArcKind::Fork => {
                    s.forks += 1;
                    if a.delay_ms.is_some() {
                        s.timed_forks += 1;
                    }
                }
                ArcKind::Join => s.joins += 1,
            }
        }
        let mut read = HashSet::new();
        let mut written = HashSet::new();
        for op in &trace.ops {
            match *op {
                Op::Read { loc, .. } => {
                    s.reads += 1;
                    read.insert(loc);
                }
                Op::Write { loc, .. } => {
                    s.writes += 1;
                    written.insert(loc);
                }
                Op::Enter { .. } => s.scopes += 1,
                Op::Exit => {}
                Op::Exception { .. } => s.exceptions += 1,
            }
        }
        s.locations_read = read.len();
        s.locations_written = written.len();
        s.locations = read.union(&written).count();
        s
    }
}

/// One arc as seen from one of its ends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Neighbour {
    /// The action at the other end.
    pub action: ActionId,
    /// `"fork"` or `"join"`.
    pub kind: &'static str,
    /// Timer delay in milliseconds, for timed forks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u32>,
}

/// One operation with its strings resolved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum OpView {
    /// A read.
    Read {
        /// Location.
        loc: String,
        /// Value summary.
        #[serde(skip_serializing_if = "Option::is_none")]
        value: Option<String>,
        /// Source position of the reading code.
        #[serde(skip_serializing_if = "Option::is_none")]
        src: Option<String>,
    },
    /// A write.
    Write {
        /// Location.
        loc: String,
        /// Value summary.
        #[serde(skip_serializing_if = "Option::is_none")]
        value: Option<String>,
        /// Source position of the writing code.
        #[serde(skip_serializing_if = "Option::is_none")]
        src: Option<String>,
    },
    /// Scope entry.
    Enter {
        /// Label.
        scope: String,
        /// Source position.
        #[serde(skip_serializing_if = "Option::is_none")]
        src: Option<String>,
    },
    /// Scope exit.
    Exit,
    /// An exception escaped.
    Exception {
        /// Message.
        message: String,
        /// Source position.
        #[serde(skip_serializing_if = "Option::is_none")]
        src: Option<String>,
    },
}

impl OpView {
    /// Resolves `op`'s strings in `trace`.
    pub fn of(trace: &Trace, op: &Op) -> OpView {
        let s = |id: StrId| trace.strings.get(id).to_owned();
        let o = |id: Option<StrId>| id.map(s);
        match *op {
            Op::Read { loc, value, pos } => OpView::Read {
                loc: s(loc),
                value: o(value.get()),
                src: o(pos.get()),
            },
            Op::Write { loc, value, pos } => OpView::Write {
                loc: s(loc),
                value: o(value.get()),
                src: o(pos.get()),
            },
            Op::Enter { scope, src } => OpView::Enter {
                scope: s(scope),
                src: o(src),
            },
            Op::Exit => OpView::Exit,
            Op::Exception { message, src } => OpView::Exception {
                message: s(message),
                src: o(src),
            },
        }
    }
}

/// One action with everything needed to look at it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ActionView {
    /// Dense id.
    pub id: ActionId,
    /// Type name.
    #[serde(rename = "type")]
    pub ty: &'static str,
    /// Finer kind.
    pub kind: String,
    /// Stable identity.
    pub stable: String,
    /// Arcs into this action.
    pub predecessors: Vec<Neighbour>,
    /// Arcs out of this action.
    pub successors: Vec<Neighbour>,
    /// Operations in order.
    pub ops: Vec<OpView>,
}

impl ActionView {
    /// The view of action `id`, or `None` when the trace has no such action.
    pub fn of(trace: &Trace, id: ActionId) -> Option<ActionView> {
        let a = trace.actions.get(id as usize)?;
        let kind = |k: ArcKind| match k {
            ArcKind::Fork => "fork",
            ArcKind::Join => "join",
        };
        let mut predecessors = Vec::new();
        let mut successors = Vec::new();
        for arc in &trace.arcs {
            if arc.head == id {
                predecessors.push(Neighbour {
                    action: arc.tail,
                    kind: kind(arc.kind),
                    delay_ms: arc.delay_ms,
                });
            }
            if arc.tail == id {
                successors.push(Neighbour {
                    action: arc.head,
                    kind: kind(arc.kind),
                    delay_ms: arc.delay_ms,
                });
            }
        }
        Some(ActionView {
            id,
            ty: type_name(a.ty),
            kind: trace.strings.get(a.kind).to_owned(),
            stable: trace.strings.get(a.stable).to_owned(),
            predecessors,
            successors,
            ops: trace
                .ops_of(id)
                .iter()
                .map(|op| OpView::of(trace, op))
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TraceBuilder;

    fn sample() -> Trace {
        let mut b = TraceBuilder::new();
        let a = b.begin(ActionType::Unknown, "script", "s0");
        b.enter("script:inline #0", Some("u:1:1"));
        b.write("Global.x", Some("1"));
        b.read("Global.y", None);
        b.exit();
        b.end();
        let t = b.begin(ActionType::Timer, "timer", "s1");
        b.read("Global.x", Some("1"));
        b.exception("boom", Some("u:2:2"));
        b.end();
        let c = b.begin(ActionType::Timer, "timer", "s2");
        b.end();
        b.fork_delay(a, t, 5).fork(a, c).join(t, c);
        b.finish()
    }

    #[test]
    fn counts() {
        let s = TraceStats::of(&sample());
        assert_eq!(s.actions, 3);
        assert_eq!(s.actions_by_type.get("timer"), Some(&2));
        assert_eq!(s.actions_by_kind.get("script"), Some(&1));
        assert_eq!((s.arcs, s.forks, s.timed_forks, s.joins), (3, 2, 1, 1));
        assert_eq!(
            (s.ops, s.reads, s.writes, s.scopes, s.exceptions),
            (6, 2, 1, 1, 1)
        );
        assert_eq!(
            (s.locations, s.locations_read, s.locations_written),
            (2, 2, 1)
        );
        assert_eq!(s.empty_actions, 1);
    }

    #[test]
    fn action_view_resolves_strings_and_neighbours() {
        let t = sample();
        let v = ActionView::of(&t, 1).unwrap();
        assert_eq!(v.ty, "timer");
        assert_eq!(v.stable, "s1");
        assert_eq!(
            v.predecessors,
            vec![Neighbour {
                action: 0,
                kind: "fork",
                delay_ms: Some(5)
            }]
        );
        assert_eq!(
            v.successors,
            vec![Neighbour {
                action: 2,
                kind: "join",
                delay_ms: None
            }]
        );
        assert_eq!(
            serde_json::to_value(&v.ops).unwrap(),
            serde_json::json!([
                {"op": "read", "loc": "Global.x", "value": "1"},
                {"op": "exception", "message": "boom", "src": "u:2:2"}
            ])
        );
        assert!(ActionView::of(&t, 3).is_none());
    }
}
