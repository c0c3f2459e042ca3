//! Memory accesses of a trace, grouped by location, plus the static derived arcs found on the
//! way (ordering keys, node existence, deferred scripts, auto exploration).
//!
//! Only the first read and the first write of a location per action are kept (EventRacer
//! §4.5: later ones cannot add a race between a new pair of actions). A write whose action
//! read the location before is an UPDATE (read-modify-write).
//!
//! Only the locations that can race (a write, and accesses from two actions) keep their
//! accesses; the others keep their name and the one thing the filters ask about them
//! (whether they have two accesses and a write). On a long session's trace most locations
//! are fields of objects that one action made and used: 261 000 of the 282 000 locations of
//! the many-location bench trace, with more than half its accesses, which no later phase
//! would have read.

use crate::fixes::{self, FixOptions, KeyChain, Special};
use crate::graph::{ArcOrigin, HbArc};
use shepherd_trace::{ActionType, Op, StrId, Trace};
use std::collections::HashMap;

const NONE: u32 = u32::MAX;

/// How an access touched its location.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum AccessKind {
    /// Read.
    Read,
    /// Write not preceded by a read of the same location in the same action.
    Write,
    /// Write preceded by a read of the same location in the same action.
    Update,
}

impl AccessKind {
    /// `READ`, `WRITE` or `UPDATE`.
    pub fn name(self) -> &'static str {
        match self {
            AccessKind::Read => "READ",
            AccessKind::Write => "WRITE",
            AccessKind::Update => "UPDATE",
        }
    }

    /// True for writes and updates.
    pub fn is_write(self) -> bool {
        !matches!(self, AccessKind::Read)
    }
}

/// One kept access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// Global index of the operation in [`Trace::ops`] (trace order).
    pub op: u32,
    /// The action performing it.
    pub action: u32,
    /// Location index into [`Locations`].
    pub loc: u32,
    /// Read, write or update.
    pub kind: AccessKind,
}

/// A location name: a trace string, or a renamed node-existence location.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LocName {
    /// The trace's own name, verbatim.
    Str(StrId),
    /// `NodeTree:<node>` created by action `writer`: printed `NodeTree:<node>-<writer>`.
    NodeTree {
        /// The original name.
        base: StrId,
        /// The creating action.
        writer: u32,
    },
}

/// Location table.
#[derive(Clone, Debug, Default)]
pub struct Locations {
    names: Vec<LocName>,
}

impl Locations {
    /// Number of locations.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The raw name of location `l`.
    pub fn raw(&self, l: u32) -> LocName {
        self.names[l as usize]
    }

    /// The printable name of location `l`.
    pub fn name(&self, trace: &Trace, l: u32) -> String {
        match self.names.get(l as usize) {
            Some(LocName::Str(s)) => trace.strings.get(*s).to_owned(),
            Some(LocName::NodeTree { base, writer }) => {
                format!("{}-{}", trace.strings.get(*base), writer)
            }
            None => String::new(),
        }
    }

    /// The trace string the name is based on.
    pub fn base(&self, l: u32) -> StrId {
        match self.names[l as usize] {
            LocName::Str(s) | LocName::NodeTree { base: s, .. } => s,
        }
    }
}

/// A trace that violates the model's invariants.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScanError {
    /// An action's op range is out of bounds or out of order.
    #[error("action {action}: operation range {start}..{end} is invalid ({ops} operations)")]
    BadOps {
        /// Action.
        action: u32,
        /// Range start.
        start: u32,
        /// Range end.
        end: u32,
        /// Number of operations.
        ops: usize,
    },
    /// An operation names a string that was never defined.
    #[error("operation {op}: string {string} is not defined")]
    BadString {
        /// Global op index.
        op: u32,
        /// The string id.
        string: u32,
    },
}

/// The kept accesses of the locations that can race, grouped by location.
#[derive(Clone, Debug, Default)]
pub struct Accesses {
    list: Vec<Access>,
    loc_off: Vec<u32>,
    trace_order: Vec<u32>,
    /// Per location, [`SHAPE_RACING`], [`SHAPE_FEW`] or [`SHAPE_ONE_ACTION`].
    shape: Vec<u8>,
    /// Location names.
    pub locs: Locations,
}

/// A location that can race: its accesses are kept.
const SHAPE_RACING: u8 = 0;
/// A location with fewer than two accesses or no write.
const SHAPE_FEW: u8 = 1;
/// A location with a write and two accesses or more, all by one action.
const SHAPE_ONE_ACTION: u8 = 2;

impl Accesses {
    /// Whether location `l` can race (it has a write, and accesses from two actions): only
    /// such a location's accesses are kept, [`of`](Self::of) is empty for the others.
    pub fn can_race(&self, l: u32) -> bool {
        self.shape.get(l as usize) == Some(&SHAPE_RACING)
    }

    /// Whether location `l` has fewer than two accesses or no write (EventRacer's filter
    /// level 0), kept or not.
    pub fn too_few(&self, l: u32) -> bool {
        self.shape.get(l as usize) == Some(&SHAPE_FEW)
    }

    /// All kept accesses, grouped by location and in trace order within a location.
    pub fn all(&self) -> &[Access] {
        &self.list
    }

    /// Access `i`.
    pub fn get(&self, i: u32) -> &Access {
        &self.list[i as usize]
    }

    /// Index range (into [`all`](Self::all)) of location `l`'s accesses.
    pub fn range_of(&self, l: u32) -> std::ops::Range<u32> {
        self.loc_off[l as usize]..self.loc_off[l as usize + 1]
    }

    /// Accesses of location `l`.
    pub fn of(&self, l: u32) -> &[Access] {
        let r = self.range_of(l);
        &self.list[r.start as usize..r.end as usize]
    }

    /// Access indices in trace order.
    pub fn trace_order(&self) -> &[u32] {
        &self.trace_order
    }

    /// Number of kept accesses.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// True when no access was kept.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.list.capacity() * std::mem::size_of::<Access>()
            + (self.loc_off.capacity() + self.trace_order.capacity()) * 4
            + self.shape.capacity()
    }
}

/// Result of the scan: accesses and the static derived arcs.
#[derive(Debug, Default)]
pub struct Scan {
    /// Accesses grouped by location.
    pub accesses: Accesses,
    /// Arcs derived from ordering keys, node existence and deferred scripts.
    pub derived: Vec<HbArc>,
    /// Actions that are auto-explored UI events.
    pub auto: Vec<bool>,
    /// Per action, the `Queue:` location (string id) it is a delivery of, `u32::MAX` for
    /// none; empty when no action is.
    pub queues: Vec<u32>,
}

/// What the scan knows about one location so far.
#[derive(Clone, Copy)]
struct Seen {
    /// The last action that read / wrote it (`NONE`: none yet).
    last_r: u32,
    last_w: u32,
    /// The first action that accessed it, and whether another one did too.
    first: u32,
    actions: bool,
    /// Whether it was written.
    writes: bool,
    /// Its kept accesses.
    count: u32,
}

impl Default for Seen {
    fn default() -> Seen {
        Seen {
            last_r: NONE,
            last_w: NONE,
            first: NONE,
            actions: false,
            writes: false,
            count: 0,
        }
    }
}

/// Scans the trace's operations once.
pub fn scan(trace: &Trace, opts: &FixOptions) -> Result<Scan, ScanError> {
    let ns = trace.strings.len();
    let nops = trace.ops.len();
    // Per trace string: location class (0 = not seen yet) and location id.
    let mut class: Vec<u8> = vec![0; ns];
    let mut loc_of: Vec<u32> = vec![NONE; ns];
    let mut names: Vec<LocName> = Vec::new();
    // Per location, what the scan has seen so far (one record: a location's bookkeeping is one
    // cache line, not five).
    let mut seen: Vec<Seen> = Vec::new();
    let mut renamed: HashMap<(StrId, u32), u32> = HashMap::new();
    let mut node_writer: HashMap<StrId, u32> = HashMap::new();
    let mut keys = KeyChain::default();
    let mut scripts = KeyChain::default();
    let mut derived = Vec::new();
    // Sized once (an upper bound: every read and write op), so the list never regrows: a
    // regrowth copies it and leaves the old block with the allocator.
    let rw = trace
        .ops
        .iter()
        .filter(|o| matches!(o, Op::Read { .. } | Op::Write { .. }))
        .count();
    let mut list: Vec<Access> = Vec::with_capacity(rw);
    let mut queues: Vec<u32> = Vec::new();
    let mut auto = vec![
        false;
        if opts.auto_explore {
            trace.actions.len()
        } else {
            0
        }
    ];
    // Locations (`class`): 1 plain, 2 node tree, 3 ordering key, 4 queue. Scope labels
    // (`scope_class`): 4 ordered script, 5 auto, 6 other. A string used both ways is classified
    // in each table separately.
    let mut scope_class: Vec<u8> = vec![0; ns];

    let mut new_loc = |name: LocName, seen: &mut Vec<Seen>| -> u32 {
        names.push(name);
        seen.push(Seen::default());
        (names.len() - 1) as u32
    };

    for (ai, action) in trace.actions.iter().enumerate() {
        let a = ai as u32;
        let (s, e) = (action.ops.start, action.ops.end);
        if s > e || e as usize > nops {
            return Err(ScanError::BadOps {
                action: a,
                start: s,
                end: e,
                ops: nops,
            });
        }
        for (k, op) in trace.ops[s as usize..e as usize].iter().enumerate() {
            let gi = s + k as u32;
            let (loc, is_write) = match *op {
                Op::Read { loc, .. } => (loc, false),
                Op::Write { loc, .. } => (loc, true),
                Op::Enter { scope, .. } => {
                    let sc = scope_class
                        .get_mut(scope as usize)
                        .ok_or(ScanError::BadString {
                            op: gi,
                            string: scope,
                        })?;
                    if *sc == 0 {
                        let label = trace.strings.get(scope);
                        *sc = if fixes::is_ordered_script_scope(label) {
                            4
                        } else if fixes::is_auto_scope(label) {
                            5
                        } else {
                            6
                        };
                    }
                    if *sc == 4 && opts.ordering_keys {
                        if let Some(arc) = scripts.touch(0, a, ArcOrigin::OrderingKey) {
                            derived.push(arc);
                        }
                    } else if *sc == 5
                        && opts.auto_explore
                        && action.ty == ActionType::UserInterface
                    {
                        auto[ai] = true;
                    }
                    continue;
                }
                Op::Exit | Op::Exception { .. } => continue,
            };
            let li = loc as usize;
            let cls = class.get_mut(li).ok_or(ScanError::BadString {
                op: gi,
                string: loc,
            })?;
            if *cls == 0 {
                *cls = match fixes::classify(trace.strings.get(loc), opts) {
                    Special::Plain => 1,
                    Special::NodeTree => 2,
                    Special::OrderingKey => 3,
                    Special::Queue => 4,
                };
            }
            let lid = match *cls {
                4 => {
                    if queues.is_empty() {
                        queues = vec![NONE; trace.actions.len()];
                    }
                    if queues[ai] == NONE {
                        queues[ai] = loc;
                    }
                    continue;
                }
                3 => {
                    if let Some(arc) = keys.touch(loc, a, ArcOrigin::OrderingKey) {
                        derived.push(arc);
                    }
                    continue;
                }
                2 => {
                    let writer = if is_write {
                        node_writer.insert(loc, a);
                        Some(a)
                    } else {
                        node_writer.get(&loc).copied()
                    };
                    match writer {
                        Some(w) => {
                            if w < a {
                                derived.push(HbArc {
                                    tail: w,
                                    head: a,
                                    origin: ArcOrigin::NodeTree,
                                });
                            }
                            match renamed.get(&(loc, w)) {
                                Some(&l) => l,
                                None => {
                                    let l = new_loc(
                                        LocName::NodeTree {
                                            base: loc,
                                            writer: w,
                                        },
                                        &mut seen,
                                    );
                                    renamed.insert((loc, w), l);
                                    l
                                }
                            }
                        }
                        // Created before the trace started: keep the plain name.
                        None => {
                            if loc_of[li] == NONE {
                                loc_of[li] = new_loc(LocName::Str(loc), &mut seen);
                            }
                            loc_of[li]
                        }
                    }
                }
                _ => {
                    if loc_of[li] == NONE {
                        loc_of[li] = new_loc(LocName::Str(loc), &mut seen);
                    }
                    loc_of[li]
                }
            };
            let Some(st) = seen.get_mut(lid as usize) else {
                continue;
            };
            let kind = if is_write {
                if st.last_w == a {
                    continue;
                }
                st.last_w = a;
                st.writes = true;
                if st.last_r == a {
                    AccessKind::Update
                } else {
                    AccessKind::Write
                }
            } else {
                if st.last_r == a {
                    continue;
                }
                st.last_r = a;
                AccessKind::Read
            };
            if st.count == 0 {
                st.first = a;
            } else if st.first != a {
                st.actions = true;
            }
            st.count += 1;
            list.push(Access {
                op: gi,
                action: a,
                loc: lid,
                kind,
            });
        }
    }

    // Which locations can race (a write, and accesses from two actions); the kept ones are
    // grouped by location with a counting sort (stable: trace order within a location), and
    // where each access went is remembered so the sweep can walk them in trace order.
    let nl = names.len();
    let shape: Vec<u8> = seen
        .iter()
        .map(|st| {
            if st.count < 2 || !st.writes {
                SHAPE_FEW
            } else if st.actions {
                SHAPE_RACING
            } else {
                SHAPE_ONE_ACTION
            }
        })
        .collect();
    let mut loc_off = vec![0u32; nl + 1];
    for (l, st) in seen.iter().enumerate() {
        let racing = shape[l] == SHAPE_RACING;
        loc_off[l + 1] = loc_off[l] + if racing { st.count } else { 0 };
    }
    drop(seen);
    let kept = loc_off[nl] as usize;
    let mut fill = loc_off.clone();
    let mut trace_order = Vec::with_capacity(kept);
    let mut grouped = vec![
        Access {
            op: 0,
            action: 0,
            loc: 0,
            kind: AccessKind::Read,
        };
        kept
    ];
    for x in &list {
        if shape[x.loc as usize] != SHAPE_RACING {
            continue;
        }
        let slot = &mut fill[x.loc as usize];
        grouped[*slot as usize] = *x;
        trace_order.push(*slot);
        *slot += 1;
    }
    drop(list);
    Ok(Scan {
        accesses: Accesses {
            list: grouped,
            loc_off,
            trace_order,
            shape,
            locs: Locations { names },
        },
        derived,
        auto,
        queues,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use shepherd_trace::{ActionType, TraceBuilder};

    #[test]
    fn dedups_classifies_updates_and_renames_node_tree() {
        let mut b = TraceBuilder::new();
        b.begin(ActionType::Unknown, "parse", "p0");
        b.write("NodeTree:5", None)
            .write("Global.x", Some("1"))
            .write("Global.x", Some("2"))
            .read("Global.y", None)
            .write("Global.y", Some("3"))
            .read("ScriptRunner-0x1-0x2", None);
        b.end();
        b.begin(ActionType::UserInterface, "event", "e0");
        b.write("Object[9].id", Some("1"))
            .read("Object[9].id", None)
            .read("Global.r", None);
        b.read("NodeTree:5", None)
            .read("Global.x", None)
            .read("Global.x", None)
            .read("Global.y", None)
            .read("Global.r", None)
            .write("ScriptRunner-0x1-0x2", None);
        b.end();
        let t = b.finish();
        let s = scan(&t, &FixOptions::default()).unwrap();
        let acc = &s.accesses;
        let names: Vec<String> = (0..acc.locs.len() as u32)
            .map(|l| acc.locs.name(&t, l))
            .collect();
        assert_eq!(
            names,
            vec![
                "NodeTree:5-0",
                "Global.x",
                "Global.y",
                "Object[9].id",
                "Global.r"
            ]
        );
        assert_eq!(acc.of(0).len(), 2);
        let x: Vec<_> = acc.of(1).iter().map(|a| (a.action, a.kind)).collect();
        assert_eq!(x, vec![(0, AccessKind::Write), (1, AccessKind::Read)]);
        let y: Vec<_> = acc.of(2).iter().map(|a| a.kind).collect();
        assert_eq!(
            y,
            vec![AccessKind::Read, AccessKind::Update, AccessKind::Read]
        );
        // A field one action wrote and read cannot race: named, not kept. Reads alone are
        // too few (level 0), kept or not.
        assert!((0..3).all(|l| acc.can_race(l) && !acc.too_few(l)));
        assert!(!acc.can_race(3) && !acc.too_few(3) && acc.of(3).is_empty());
        assert!(!acc.can_race(4) && acc.too_few(4) && acc.of(4).is_empty());
        assert_eq!(acc.len(), 7);
        let order: Vec<_> = acc.trace_order().iter().map(|&i| acc.get(i).op).collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
        let arcs: Vec<_> = s
            .derived
            .iter()
            .map(|a| (a.tail, a.head, a.origin))
            .collect();
        assert!(arcs.contains(&(0, 1, ArcOrigin::NodeTree)));
        assert!(arcs.contains(&(0, 1, ArcOrigin::OrderingKey)));
    }
}
