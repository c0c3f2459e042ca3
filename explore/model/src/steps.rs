//! From what a browser execution observed to what the reorder phase needs: the steps as
//! events, the enabled set at every prefix, the platform's order between steps (a step that
//! enabled another; the trace's happens-before arcs, logged and derived, between their
//! actions), the conflicts between steps (the race detector's candidate races between their
//! actions, except on locations whose accesses commute), and for deliveries from FIFO queues
//! their queue and the step that posted them.

use crate::event::EventTable;
use crate::execution::{Execution, Fifo};
use crate::naming;
use crate::observation::RunOutput;
use serde::{Deserialize, Serialize};
use shepherd_races::filters::Tag;
use shepherd_races::{Analysis, Options, analyze};
use shepherd_trace::{ArcKind, Op, Trace};
use std::collections::{BTreeMap, HashMap};

/// One race between two steps, for reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RaceNote {
    /// The location, named as `shepherd races` names it.
    pub location: String,
    /// `WRITE-READ`, …
    pub kind: String,
    /// The earlier access: action stable id and source position.
    pub first: AccessNote,
    /// The later access.
    pub second: AccessNote,
}

/// One side of a race.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessNote {
    /// The action's stable id.
    pub stable: String,
    /// `READ`, `WRITE` or `UPDATE`.
    pub access: String,
    /// `url:line:col` of the access (or of its enclosing scope), when known.
    pub source: Option<String>,
    /// The enclosing scope's label (`fire:click @ BUTTON[7]`).
    pub scope: Option<String>,
}

/// An execution ready for the reorder phase, with the race details of its step pairs.
pub struct Built {
    /// The execution.
    pub exec: Execution,
    /// Races between steps `(earlier, later)`.
    pub races: BTreeMap<(u32, u32), Vec<RaceNote>>,
    /// The trace's uncovered races (what `shepherd races` lists), with the steps of their
    /// two accesses (equal when both are in one step).
    pub uncovered: Vec<(u32, u32, RaceNote)>,
    /// The race analysis of the trace (for reports), when there was a trace.
    pub analysis: Option<Analysis>,
    /// `(event, the event whose step enabled it)` for every step enabled by an earlier one.
    pub enablers: Vec<(String, String)>,
}

/// Locations whose accesses commute (R4's refinements, EventRacer's tags): not conflicts.
const COMMUTING: [Tag; 4] = [
    Tag::WriteSameValue,
    Tag::NeverRead,
    Tag::NoChangeWrite,
    Tag::OnlyLocalReads,
];

/// Builds the execution of `out`, naming events in `table`.
pub fn build(table: &mut EventTable, out: &RunOutput) -> Built {
    let n = out.steps.len();
    let mut exec = Execution {
        events: out.steps.iter().map(|s| table.intern(&s.name)).collect(),
        enabled: Vec::with_capacity(n + 1),
        hb: vec![Vec::new(); n],
        dep: vec![Vec::new(); n],
        user: out.steps.iter().map(|s| naming::is_user(&s.name)).collect(),
        fifo: vec![None; n],
    };
    for set in out
        .steps
        .iter()
        .map(|s| &s.enabled)
        .chain(std::iter::once(&out.enabled_after))
    {
        let mut v: Vec<_> = set.iter().map(|e| table.intern(e)).collect();
        v.sort_unstable();
        v.dedup();
        exec.enabled.push(v);
    }
    // A step enabled by an earlier one: its event was first enabled right after that step.
    let mut first: HashMap<_, usize> = HashMap::new();
    for (i, set) in exec.enabled.iter().enumerate() {
        for e in set {
            first.entry(*e).or_insert(i);
        }
    }
    let mut enablers = Vec::new();
    for (j, e) in exec.events.iter().enumerate() {
        if let Some(&f) = first.get(e)
            && f >= 1
            && f - 1 < j
        {
            exec.hb[j].push((f - 1) as u32);
            enablers.push((out.steps[j].name.clone(), out.steps[f - 1].name.clone()));
        }
    }
    let mut races = BTreeMap::new();
    let mut uncovered = Vec::new();
    let analysis = out
        .trace
        .as_ref()
        .and_then(|t| analyze(t, &Options::default()).ok());
    if let (Some(trace), Some(an)) = (&out.trace, &analysis) {
        let starts: Vec<u32> = out.steps.iter().map(|s| s.first_action).collect();
        let step_of = |a: u32| -> Option<u32> {
            match starts.partition_point(|&s| s <= a) {
                0 => None,
                k => Some((k - 1) as u32),
            }
        };
        for arc in an.graph.arcs() {
            if let (Some(t), Some(h)) = (step_of(arc.tail), step_of(arc.head))
                && t < h
            {
                exec.hb[h as usize].push(t);
            }
        }
        // FIFO queues (EM-DPOR): a delivery (a port message, a worker message, a self-post,
        // an animation frame) reads `Queue:<name>` first; its post is the tail of its fork
        // arc. Deliveries of one queue are ordered when their posts are.
        let mut queue_ids: HashMap<&str, u32> = HashMap::new();
        for a in &trace.actions {
            let Some(step) = step_of(a.id) else { continue };
            let step = step as usize;
            if exec.fifo[step].is_some() || out.steps[step].first_action != a.id {
                continue;
            }
            let first_read = trace.ops_of(a.id).iter().find_map(|op| match op {
                Op::Read { loc, .. } => Some(trace.strings.get(*loc)),
                _ => None,
            });
            let Some(q) = first_read.filter(|l| l.starts_with("Queue:")) else {
                continue;
            };
            let next = queue_ids.len() as u32;
            let queue = *queue_ids.entry(q).or_insert(next);
            let poster = trace
                .arcs
                .iter()
                .find(|x| x.head == a.id && x.kind == ArcKind::Fork)
                .and_then(|x| step_of(x.tail))
                .filter(|&p| (p as usize) < step);
            exec.fifo[step] = Some(Fifo { queue, poster });
        }
        for (k, r) in an.races.iter().enumerate() {
            let x = an.accesses.get(r.first);
            let y = an.accesses.get(r.second);
            if !an.covered[k]
                && let (Some(a), Some(b)) = (step_of(x.action), step_of(y.action))
            {
                uncovered.push((a.min(b), a.max(b), note(trace, an, x, y)));
            }
            let tags = an.tags.get(x.loc as usize).copied().unwrap_or_default();
            if COMMUTING.iter().any(|t| tags.has(*t)) {
                continue;
            }
            let (Some(a), Some(b)) = (step_of(x.action), step_of(y.action)) else {
                continue;
            };
            if a == b {
                continue;
            }
            let (a, b, x, y) = if a < b { (a, b, x, y) } else { (b, a, y, x) };
            exec.dep[b as usize].push(a);
            races
                .entry((a, b))
                .or_insert_with(Vec::new)
                .push(note(trace, an, x, y));
        }
    }
    lifecycle_order(&mut exec, out);
    for v in exec.hb.iter_mut().chain(exec.dep.iter_mut()) {
        v.sort_unstable();
        v.dedup();
    }
    Built {
        exec,
        races,
        uncovered,
        analysis,
        enablers,
    }
}

/// The top-level document's load, in the order HTML's "the end" runs it: `interactive`, the
/// `DOMContentLoaded` handlers, `complete`, the window's `load`, `pageshow`. Each is queued
/// only after the one before has been dispatched, so no browser runs them in another order;
/// but the controller holds their handlers, and the trace's arc from `DOMContentLoaded` to
/// `load` starts at the dispatch, not at the held handlers' step, so without this order the
/// reorder phase could run the `load` handlers first (it did on TodoMVC angularjs, and judged
/// that order harmful).
const LIFECYCLE: [&str; 5] = [
    "cb:doc/event:readystatechange@document#1",
    "cb:doc/event:DOMContentLoaded@document#1",
    "cb:doc/event:readystatechange@document#2",
    "cb:doc/event:load@window#1",
    "cb:doc/event:pageshow@window#1",
];

/// Adds [`LIFECYCLE`]'s order between the steps that ran it (in that order, as every
/// execution does).
fn lifecycle_order(exec: &mut Execution, out: &RunOutput) {
    let at: Vec<Option<usize>> = LIFECYCLE
        .iter()
        .map(|n| out.steps.iter().position(|s| s.name == *n))
        .collect();
    let mut last: Option<usize> = None;
    for step in at.into_iter().flatten() {
        if let Some(prev) = last
            && prev < step
        {
            exec.hb[step].push(prev as u32);
        }
        last = Some(step);
    }
}

fn note(
    trace: &Trace,
    an: &Analysis,
    x: &shepherd_races::accesses::Access,
    y: &shepherd_races::accesses::Access,
) -> RaceNote {
    let side = |a: &shepherd_races::accesses::Access| {
        let (scope_source, scope) = shepherd_races::report::access_context(trace, a);
        AccessNote {
            stable: trace
                .actions
                .get(a.action as usize)
                .map(|act| trace.strings.get(act.stable).to_string())
                .unwrap_or_default(),
            access: a.kind.name().to_string(),
            source: shepherd_races::report::access_position(trace, a).or(scope_source),
            scope,
        }
    };
    RaceNote {
        location: an.accesses.locs.name(trace, x.loc),
        kind: format!("{}-{}", x.kind.name(), y.kind.name()),
        first: side(x),
        second: side(y),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observation::Step;
    use std::time::Duration;

    fn run(names: &[&str]) -> RunOutput {
        RunOutput {
            steps: names
                .iter()
                .map(|n| Step {
                    name: n.to_string(),
                    kind: String::new(),
                    // Everything enabled from the start: no step enables another.
                    enabled: names.iter().map(|s| s.to_string()).collect(),
                    first_action: 0,
                })
                .collect(),
            enabled_after: Vec::new(),
            trace: None,
            snapshot: Default::default(),
            skipped: Vec::new(),
            diverged: false,
            stopped: None,
            elapsed: Duration::ZERO,
            checkpoint: None,
            inert: Vec::new(),
        }
    }

    #[test]
    fn the_documents_load_events_keep_their_order() {
        let out = run(&[
            "cb:doc/event:DOMContentLoaded@document#1",
            "cb:doc/script@#1#1/timer#1",
            "cb:doc/event:readystatechange@document#2",
            "cb:doc/event:load@window#1",
            "cb:doc/event:pageshow@window#1",
        ]);
        let built = build(&mut EventTable::default(), &out);
        assert_eq!(built.exec.hb[2], vec![0]);
        assert_eq!(built.exec.hb[3], vec![2]);
        assert_eq!(built.exec.hb[4], vec![3]);
        // A timer between them is not ordered by them.
        assert!(built.exec.hb[1].is_empty());
        // An execution that ran them otherwise (none should) gets no backward arc.
        let odd = run(&[
            "cb:doc/event:load@window#1",
            "cb:doc/event:DOMContentLoaded@document#1",
        ]);
        let built = build(&mut EventTable::default(), &odd);
        assert!(built.exec.hb.iter().all(Vec::is_empty));
    }
}
