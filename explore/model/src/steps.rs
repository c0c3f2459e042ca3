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
    let mut races = BTreeMap::new();
    let mut uncovered = Vec::new();
    // Per step, the earlier steps the trace's happens-before orders directly before it, and
    // whether the step ran any traced action at all.
    let mut traced: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut acted = vec![false; n];
    let analysis = out
        .trace
        .as_ref()
        .and_then(|t| analyze(t, &Options::default()).ok());
    if let (Some(trace), Some(an)) = (&out.trace, &analysis) {
        let starts: Vec<u32> = out.steps.iter().map(|s| s.first_action).collect();
        for k in 0..n {
            let end = starts
                .get(k + 1)
                .copied()
                .unwrap_or(trace.actions.len() as u32);
            acted[k] = starts[k] < end;
        }
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
                traced[h as usize].push(t);
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
    let enablers = enable(&mut exec, &first, (&traced, &acted), out);
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

/// `(event, the event whose step enabled it)` for every step enabled by an earlier one, each
/// also a platform order of `exec`. A step is enabled by the step after which its event first
/// showed up in the enabled set — unless the trace names its causes, and that step ran traced
/// actions of which none is ordered before it. What shows up is dated by when the explorer
/// looked: a frame's `load` or a timer that shows up a little late on a loaded machine does so
/// after an unrelated step, and taking that step as its enabler would order the two, hiding a
/// race between them. The trace's causes (the script that set the timer, the parse that
/// inserted the frame) do not move with the load; the latest of them is the enabler then.
/// The observed enabler stays when the trace cannot speak for it: a step without traced
/// actions (a response released to the browser with no script of its own: what lets an
/// image's `load` fire), a gesture (its target's appearance and the gesture before it enable
/// it, which no arc records), a piece of the document (the proxy hands them out in order).
fn enable(
    exec: &mut Execution,
    first: &HashMap<crate::event::Ev, usize>,
    (traced, acted): (&[Vec<u32>], &[bool]),
    out: &RunOutput,
) -> Vec<(String, String)> {
    let n = exec.events.len();
    // Step-level reachability through the trace's arcs (steps are in execution order).
    let mut reach: Vec<Vec<bool>> = vec![vec![false; n]; n];
    for (h, causes) in traced.iter().enumerate() {
        // Trace arcs go forward: every cause `t` of `h` is an earlier row.
        let (before, rest) = reach.split_at_mut(h);
        let row = &mut rest[0];
        for &t in causes {
            let t = t as usize;
            row[t] = true;
            for (k, r) in before[t].iter().enumerate().take(t) {
                if *r {
                    row[k] = true;
                }
            }
        }
    }
    let mut enablers = Vec::new();
    for j in 0..n {
        let Some(&f) = first.get(&exec.events[j]) else {
            continue;
        };
        if f == 0 || f > j {
            continue;
        }
        let seen = f - 1;
        let name = &out.steps[j].name;
        let by = match traced[j].iter().max() {
            Some(&cause)
                if acted[seen]
                    && !naming::is_user(name)
                    && !naming::is_chunk(name)
                    && !reach[j][seen] =>
            {
                cause as usize
            }
            _ => {
                exec.hb[j].push(seen as u32);
                seen
            }
        };
        enablers.push((name.clone(), out.steps[by].name.clone()));
    }
    enablers
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
    use shepherd_trace::{ActionType, TraceBuilder};
    use std::time::Duration;

    fn step(name: &str, enabled: &[&str], first_action: u32) -> Step {
        Step {
            name: name.to_string(),
            kind: String::new(),
            enabled: enabled.iter().map(|s| s.to_string()).collect(),
            first_action,
        }
    }

    /// A timer the first script set shows up only after an unrelated response's step (the
    /// explorer looked late); a gesture shows up after the timer's step; an image's load shows
    /// up after its response's release, which ran no script.
    fn run(with_trace: bool) -> RunOutput {
        let (chunk, net, timer, user) = ("chunk:u#0", "net:u/x.js#1", "cb:t#1", "user:0");
        let mut b = TraceBuilder::new();
        let a0 = b.begin(ActionType::Unknown, "script", "doc/script@#1#1");
        b.write("Global.x", Some("1"));
        b.end();
        b.begin(ActionType::Unknown, "script", "doc/script@x.js#1");
        b.end();
        let a2 = b.begin(ActionType::Timer, "timer", "doc/script@#1#1/timer#1");
        b.read("Global.x", None);
        b.end();
        b.begin(
            ActionType::UserInterface,
            "event:click",
            "doc/event:click@#go#1",
        );
        b.end();
        b.fork(a0, a2);
        RunOutput {
            steps: vec![
                step(chunk, &[chunk], 0),
                step(net, &[net], 1),
                step(timer, &[timer], 2),
                step(user, &[user], 3),
                // The image's response: released with no script of its own; then its load.
                step("net:u/i.png#1", &["net:u/i.png#1"], 4),
                step("cb:l#1", &["cb:l#1"], 4),
            ],
            enabled_after: Vec::new(),
            trace: with_trace.then(|| b.finish()),
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
    fn a_late_callback_is_enabled_by_its_traced_cause_not_the_step_before_it() {
        let out = run(true);
        let built = build(&mut EventTable::default(), &out);
        let by = |e: &str| {
            built
                .enablers
                .iter()
                .find(|(x, _)| x == e)
                .map(|(_, b)| b.as_str())
        };
        assert_eq!(by("cb:t#1"), Some("chunk:u#0"));
        assert!(
            !built.exec.hb[2].contains(&1),
            "the response's step does not order the timer: {:?}",
            built.exec.hb[2]
        );
        assert!(built.exec.hb[2].contains(&0));
        // A gesture keeps what it was offered after; so does everything without a trace.
        assert_eq!(by("user:0"), Some("cb:t#1"));
        assert!(built.exec.hb[3].contains(&2));
        // A release without traced actions: the trace cannot say it enabled nothing.
        assert_eq!(by("cb:l#1"), Some("net:u/i.png#1"));
        assert!(built.exec.hb[5].contains(&4));
        let untraced = build(&mut EventTable::default(), &run(false));
        assert!(untraced.exec.hb[2].contains(&1));
    }
}
