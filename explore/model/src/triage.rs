//! Race-directed triage: one answer for every uncovered race `shepherd races` reports on the
//! recording.
//!
//! R4's reorder phase reverses the races that can be made adjacent in an execution; a race
//! with another race between its two steps (a click whose latest race is with a later script)
//! needs several reversals, and a bound of one never reaches it. Triage asks the developer's
//! question directly, race by race: *could the later event have come before the earlier one,
//! and would the user see a difference?* For each race it plans a **probe**: the initial
//! execution (the recorded order, replayed) up to the step of the earlier access; then what the
//! later event needs that had not run yet (the steps the platform orders before it: the part of
//! the document that creates a gesture's target, the response a callback waits for); then the
//! later event; then the earlier one; then the page settles by its own means (timers, retries,
//! responses; no more user input). Its **reference** runs the same events in the recorded order
//! of the pair and settles the same way, so the two end states differ only by the order of the
//! race. A gesture moves as the user would move it: typing (focus, keys, inserted text) as one
//! unit, and ahead of gestures the user made earlier in the recording but need not have made.
//!
//! Races a probe cannot be planned for get the concrete reason: both accesses in one step, two
//! user events (the user's own order), a platform order between the two steps, an action the
//! replay did not reproduce, the per-location budget.

use crate::document::{Document, Gap};
use crate::execution::Execution;
use crate::gesture::{Aim, Gesture, GestureKind};
use crate::naming::{self, EventName};
use crate::observation::Step;
use serde::{Deserialize, Serialize};
use shepherd_races::report::RaceReport;
use shepherd_trace::{ActionKind, ArcKind, Op, Trace};
use std::collections::{BTreeSet, HashMap};
use std::fmt;

/// A race's identity across executions and reports: its location with object numbers
/// blanked (they depend on the execution) and the stable ids of its two actions — the key
/// `shepherd races --explored` matches on.
pub type RaceKey = (String, String, String);

/// The [`RaceKey`] of a race at `location` between the actions `first` and `second`.
pub fn race_key(location: &str, first: &str, second: &str) -> RaceKey {
    (
        blank_objects(location),
        first.to_string(),
        second.to_string(),
    )
}

/// In which order a run made the two accesses of race `target` (recorded in another run):
/// `Some(true)` when the run has the race in its recorded order only, `Some(false)` when it
/// has it only the other way round, `None` when it has neither (the accesses are ordered in
/// this run, or one did not happen) or both. Actions are matched by stable id with parse
/// ordinals blanked and by the kind of their access; locations with object numbers blanked.
pub fn recorded_order_kept(
    trace: &Trace,
    an: &shepherd_races::Analysis,
    target: &Target,
) -> Option<bool> {
    let want = same_place(&target.location);
    let first = (
        naming::blank_parse(&target.first.stable),
        target.first.access.as_str(),
    );
    let second = (
        naming::blank_parse(&target.second.stable),
        target.second.access.as_str(),
    );
    let (mut kept, mut reversed) = (false, false);
    // Races come grouped by nothing in particular: a location's name is built once.
    let mut at_place: HashMap<u32, bool> = HashMap::new();
    for r in &an.races {
        let here = *at_place
            .entry(r.loc)
            .or_insert_with(|| same_place(&an.accesses.locs.name(trace, r.loc)) == want);
        if !here {
            continue;
        }
        let side = |i: u32| {
            let a = an.accesses.get(i);
            let stable = trace
                .actions
                .get(a.action as usize)
                .map(|act| trace.strings.get(act.stable))
                .unwrap_or_default();
            (naming::blank_parse(stable), a.kind.name())
        };
        let (x, y) = (side(r.first), side(r.second));
        let is = |s: &(String, &str), t: &(String, &str)| s.0 == t.0 && s.1 == t.1;
        kept |= is(&x, &first) && is(&y, &second);
        reversed |= is(&x, &second) && is(&y, &first);
    }
    match (kept, reversed) {
        (true, false) => Some(true),
        (false, true) => Some(false),
        // Both: several actions share the blanked id (parse actions) and the run put the
        // other side between them; no one order to compare.
        _ => None,
    }
}

/// A location as two runs can both name it: object numbers blanked, and a node-existence
/// location's creating action (`NodeTree:…-12`) dropped.
fn same_place(location: &str) -> String {
    let mut loc = blank_objects(location);
    if loc.starts_with("NodeTree:")
        && let Some(dash) = loc.rfind('-')
        && loc.len() > dash + 1
        && loc[dash + 1..].bytes().all(|b| b.is_ascii_digit())
    {
        loc.truncate(dash);
    }
    loc
}

/// `location` with its object numbers blanked (`Tree[12]:panel` → `Tree[]:panel`): they
/// depend on the execution.
fn blank_objects(location: &str) -> String {
    let mut loc = String::with_capacity(location.len());
    let mut digits = false;
    for c in location.chars() {
        if c.is_ascii_digit() && (digits || loc.ends_with('[')) {
            digits = true;
            continue;
        }
        digits = false;
        loc.push(c);
    }
    loc
}

/// What makes room for the bad order in a real browser: how long the window is open, hence how
/// likely a user meets it. Ordered from the most likely to the least.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Window {
    /// The earlier event waits for the network (a response, a parser-blocking script or
    /// style sheet): open as long as the response takes.
    Network {
        /// What is waited for.
        what: String,
    },
    /// The earlier event is a timer: open for its delay.
    Timer {
        /// The delay, when the trace has it.
        delay_ms: Option<u32>,
    },
    /// The earlier event is the user's own: open for as long as the user takes to act.
    UserThinkTime,
    /// Two tasks the browser queued may run in either order (messages, observers, events).
    TaskOrder,
    /// Only a parser yield inside one received chunk of the document makes room: possible,
    /// unlikely.
    ParserYield,
    /// No room at all: the parser goes straight from one to the other.
    None,
}

impl Window {
    /// Words for reports.
    pub fn describe(&self) -> String {
        match self {
            Window::Network { what } => format!("a network wait ({what})"),
            Window::Timer { delay_ms: Some(d) } => format!("a timer ({d} ms)"),
            Window::Timer { delay_ms: None } => "a timer".to_string(),
            Window::UserThinkTime => "the user's think time".to_string(),
            Window::TaskOrder => "the browser's task order".to_string(),
            Window::ParserYield => {
                "only a parser yield inside one received chunk (possible, unlikely)".to_string()
            }
            Window::None => "no window: the parser goes straight on".to_string(),
        }
    }

    /// Rank for sorting: 0 is the most likely.
    pub fn rank(&self) -> u8 {
        match self {
            Window::Network { .. } => 0,
            Window::Timer { .. } => 1,
            Window::UserThinkTime => 2,
            Window::TaskOrder => 3,
            Window::ParserYield => 4,
            Window::None => 5,
        }
    }
}

/// Why a race got no probe.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Unexplored {
    /// Both accesses run in one step of the replay.
    OneStep,
    /// Both sides are the user's: the user's own order.
    TwoUserEvents,
    /// The platform orders the two steps (`why` names the arc).
    Ordered {
        /// The ordering, in words.
        why: String,
    },
    /// The replay did not reproduce an action of the race.
    NotReplayed {
        /// The stable id missing from the replay.
        stable: String,
    },
    /// The location's probes were spent on other pairs (`--probes-per-location`).
    Budget,
    /// The exploration stopped (budget, `--max-sequences`) before the probe ran.
    NotRun,
    /// The probe ran, but the later event was never enabled before the earlier one.
    NeverEarlier {
        /// The event that did not come.
        event: String,
    },
    /// The probe or its reference failed to run in the browser.
    Failed,
    /// The probe ran its steps in the moved order, but its run made the race's two accesses
    /// in the same order as its reference's run (an access ran in a later step than the one
    /// it was mapped to: a script the browser ran after the next piece of the document, a
    /// parser waiting for another script): the two end states are of one order.
    NotReversed {
        /// The race's location.
        location: String,
    },
}

impl fmt::Display for Unexplored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unexplored::OneStep => f.write_str(
                "both accesses run in one step of the replay (one release or gesture runs both)",
            ),
            Unexplored::TwoUserEvents => f.write_str("two user events: the user's own order"),
            Unexplored::Ordered { why } => write!(f, "the platform orders the two: {why}"),
            Unexplored::NotReplayed { stable } => {
                write!(f, "the replay did not reproduce the action {stable}")
            }
            Unexplored::Budget => {
                f.write_str("not probed: the location's probes went to other pairs of events")
            }
            Unexplored::NotRun => f.write_str("not probed within the budget"),
            Unexplored::NeverEarlier { event } => write!(
                f,
                "target never enabled earlier: {event} could not run before the other side"
            ),
            Unexplored::Failed => f.write_str("the probe failed to run in the browser"),
            Unexplored::NotReversed { location } => write!(
                f,
                "the probe and its reference made the accesses to {location} in one order (an access ran later than its step)"
            ),
        }
    }
}

/// How one race of the recording is answered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "by")]
pub enum Answer {
    /// By probe `id`.
    Probe {
        /// The probe.
        id: u32,
    },
    /// Like race `race` (same places, other events: the user clicked the button again).
    RepeatOf {
        /// Index of the race answered for it.
        race: usize,
    },
    /// Not at all, and why.
    Unexplored(Unexplored),
}

/// One uncovered race of the recording, as `shepherd races` names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// The trace's location (object numbers and all).
    pub location: String,
    /// The location as a developer finds it (`input#coupon.value`).
    pub location_name: String,
    /// `WRITE-READ`, …
    pub kind: String,
    /// The earlier access.
    pub first: Side,
    /// The later access.
    pub second: Side,
    /// The race report's level of the location (`harmful`, `uncovered`, `filtered`).
    pub level: String,
    /// The location's filter tags.
    pub tags: Vec<String>,
    /// How it is answered.
    pub answer: Answer,
    /// The steps of the initial execution its two accesses ran in, when the replay
    /// reproduced both.
    #[serde(default)]
    pub steps: Option<(u32, u32)>,
    /// A covered race (EventRacer's race coverage: another race's order decides whether this
    /// one happens), which `shepherd races` does not list.
    #[serde(default)]
    pub covered: bool,
}

impl Target {
    /// Its key.
    pub fn key(&self) -> RaceKey {
        race_key(&self.location, &self.first.stable, &self.second.stable)
    }
}

/// One side of a race.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Side {
    /// The action's stable id.
    pub stable: String,
    /// `READ`, `WRITE` or `UPDATE`.
    pub access: String,
    /// `url:line:col` of the access (or of its scope).
    pub source: Option<String>,
    /// The scope's label, its target named (`fire:click @ input#coupon`).
    pub scope: Option<String>,
}

impl Side {
    fn of(a: &shepherd_races::report::AccessView) -> Side {
        Side {
            stable: a.stable.clone(),
            access: a.access.to_string(),
            source: a.source.clone(),
            scope: a.scope_name.clone().or_else(|| a.scope.clone()),
        }
    }
}

/// What a probe asks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProbeKind {
    /// Could the later side of a race of the recording have come first?
    #[default]
    Race,
    /// Could the user have acted before the step that made the gesture's target, on the
    /// older element at the same place (a list re-rendered by a response, a gallery's answer
    /// replacing its buttons)? The target's creation orders the two, so no race of the
    /// recording pairs them; the probe's own run names the races it reverses.
    OlderTarget,
}

/// One planned probe.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Probe {
    /// Its number.
    pub id: u32,
    /// Steps of the initial execution: the earlier side's (delayed by the probe) and the later
    /// side's (moved ahead).
    pub steps: (u32, u32),
    /// Events of the initial execution run first, as they were.
    pub prefix: Vec<String>,
    /// Events the moved one needs that had not run (in their order).
    pub needs: Vec<String>,
    /// The moved event(s): the later side, a typing unit whole.
    pub moved: Vec<String>,
    /// The delayed event(s): the earlier side, a typing unit whole.
    pub delayed: Vec<String>,
    /// What would make room for the moved order in a real browser.
    pub window: Window,
    /// What it asks.
    #[serde(default)]
    pub kind: ProbeKind,
}

impl Probe {
    /// The events the probe runs after its prefix: what the moved side needs, the moved side,
    /// the delayed side.
    pub fn probe_order(&self) -> Vec<String> {
        let mut v = self.needs.clone();
        v.extend(self.moved.iter().cloned());
        v.extend(self.delayed.iter().cloned());
        v
    }

    /// The reference's order: the delayed side first, as recorded, then the rest.
    pub fn reference_order(&self) -> Vec<String> {
        let mut v = self.delayed.clone();
        v.extend(self.needs.iter().cloned());
        v.extend(self.moved.iter().cloned());
        v
    }
}

/// Every race of the recording with its answer, and the probes to run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Triage {
    /// The recording's uncovered races, in the race report's order.
    pub targets: Vec<Target>,
    /// Its covered races, probed after the uncovered ones within [`Limits::covered`]: coverage
    /// says which race to look at first, not that the covered one cannot matter, and a covering
    /// race that turns out harmless leaves the covered one unanswered (a request chain: the
    /// click's race with the second answer is covered by its race with the first). Reports
    /// show those found harmful. A covered race's [`Answer::RepeatOf`] indexes `targets`
    /// followed by `covered`.
    #[serde(default)]
    pub covered: Vec<Target>,
    /// The probes.
    pub probes: Vec<Probe>,
}

/// Limits of planning.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Most probes per location (pairs of other steps at the same location beyond it are
    /// answered as not probed).
    pub per_location: usize,
    /// Most probes planned for covered races alone (pairs no uncovered race's probe runs).
    pub covered: usize,
    /// Most probes of gestures on an older element at the same place
    /// ([`ProbeKind::OlderTarget`]).
    pub older_targets: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            per_location: 3,
            covered: 8,
            older_targets: 4,
        }
    }
}

/// The recording's races as `shepherd races --all` reports them, without answers yet: the
/// uncovered ones in the race report's order, then the covered ones.
pub fn targets(trace: &Trace) -> Vec<Target> {
    let Ok(an) = shepherd_races::analyze(trace, &shepherd_races::Options::default()) else {
        return Vec::new();
    };
    let report = RaceReport::new(trace, &an, true);
    let mut out: Vec<Target> = report
        .races
        .iter()
        .map(|r| Target {
            location: r.location.clone(),
            location_name: r.location_name.clone(),
            kind: r.kind.clone(),
            first: Side::of(&r.first),
            second: Side::of(&r.second),
            level: r.level.to_string(),
            tags: r.tags.iter().map(|t| t.to_string()).collect(),
            answer: Answer::Unexplored(Unexplored::NotRun),
            steps: None,
            covered: r.covered,
        })
        .collect();
    out.sort_by_key(|t| t.covered);
    out
}

/// What planning needs of the initial execution.
pub struct Initial<'a> {
    /// Its steps.
    pub steps: &'a [Step],
    /// Its trace (the replay's own stable ids).
    pub trace: &'a Trace,
    /// Its relations (the platform's order between steps).
    pub exec: &'a Execution,
    /// `(event, the event whose step enabled it)`: the orderings the run merely observed. A
    /// gesture is offered only after the one before it, so its enabler says nothing about
    /// when it could have run; its target's creation (a trace arc) does.
    pub enablers: &'a [(String, String)],
}

/// Plans the probes for `targets` (answers filled in) from the initial execution. `gestures`
/// are the recording's; `document` the recorded top-level document with each gesture's target
/// located ([`Document::targets`] in gesture order); `recorded` the recorded trace (for timer
/// delays).
pub fn plan(
    mut targets: Vec<Target>,
    initial: &Initial<'_>,
    gestures: &[Gesture],
    document: Option<&Document>,
    recorded: &Trace,
    limits: Limits,
) -> Triage {
    // Uncovered races first: they take the locations' probes before covered ones.
    targets.sort_by_key(|t| t.covered);
    let steps = initial.steps;
    let n = steps.len();
    let names: Vec<EventName> = steps
        .iter()
        .map(|s| {
            s.name
                .parse()
                .unwrap_or_else(|_| EventName::Callback(s.name.clone()))
        })
        .collect();
    let is_user = |i: usize| names.get(i).is_some_and(EventName::is_user);
    let aimed_at_focus = |i: usize| match names.get(i) {
        Some(EventName::User(k)) => gestures.get(*k).is_some_and(|g| g.aim == Aim::Focus),
        _ => false,
    };
    // The step of each action of the replay (trace ids are dense in execution order).
    let starts: Vec<u32> = steps.iter().map(|s| s.first_action).collect();
    let step_of_action = |a: u32| -> Option<u32> {
        match starts.partition_point(|&s| s <= a) {
            0 => None,
            k => Some((k - 1) as u32),
        }
    };
    let mut step_of_stable: HashMap<&str, u32> = HashMap::new();
    // The same keyed by the id with its parse ordinals blanked (`None`: several steps share
    // the key): the replay delivers the document in other pieces than the recording, so a
    // recorded `doc/parse#3/…` may be the replay's `doc/parse#5/…`.
    let mut step_of_blanked: HashMap<String, Option<u32>> = HashMap::new();
    for a in &initial.trace.actions {
        let st = initial.trace.strings.get(a.stable);
        if let Some(s) = step_of_action(a.id) {
            if !step_of_stable.contains_key(st) {
                step_of_blanked
                    .entry(naming::blank_parse(st))
                    .and_modify(|e| {
                        if *e != Some(s) {
                            *e = None
                        }
                    })
                    .or_insert(Some(s));
            }
            step_of_stable.entry(st).or_insert(s);
        }
    }
    // A recorded id with parse ordinals is the replay's action of that blanked id that made
    // the same access to the same location: the replay's own id of the same number names
    // another piece of the document when the pieces differ (a parser stopped at a held script
    // creates the recording's `parse#6` element in the replay's `parse#4`), and matching it
    // put the race beside the wrong step. Indexed once: (blanked id, place, write) -> the
    // first such action.
    let mut first_access: HashMap<(u32, u32, bool), u32> = HashMap::new();
    // Blanked ids and places numbered, so the index holds no string per access.
    let mut blanks: HashMap<String, u32> = HashMap::new();
    let mut place_ids: HashMap<String, u32> = HashMap::new();
    if targets.iter().any(|t| {
        [&t.first.stable, &t.second.stable]
            .iter()
            .any(|s| s.contains("/parse#"))
    }) {
        let mut places: HashMap<shepherd_trace::StrId, u32> = HashMap::new();
        for a in &initial.trace.actions {
            let st = initial.trace.strings.get(a.stable);
            let blank = naming::blank_parse(st);
            if blank == st {
                continue;
            }
            let next = blanks.len() as u32;
            let b = *blanks.entry(blank).or_insert(next);
            for op in initial.trace.ops_of(a.id) {
                let (loc, write) = match op {
                    Op::Read { loc, .. } => (*loc, false),
                    Op::Write { loc, .. } => (*loc, true),
                    _ => continue,
                };
                let place = *places.entry(loc).or_insert_with(|| {
                    let next = place_ids.len() as u32;
                    *place_ids
                        .entry(same_place(initial.trace.strings.get(loc)))
                        .or_insert(next)
                });
                first_access.entry((b, place, write)).or_insert(a.id);
            }
        }
    }
    let by_access = |stable: &str, access: &str, location: &str| -> Option<u32> {
        let b = *blanks.get(&naming::blank_parse(stable))?;
        let place = *place_ids.get(&same_place(location))?;
        let at = |write: bool| first_access.get(&(b, place, write)).copied();
        let id = match access {
            "READ" => at(false),
            "WRITE" => at(true),
            _ => at(false).into_iter().chain(at(true)).min(),
        }?;
        step_of_action(id)
    };
    let replayed = |stable: &str| -> Option<u32> {
        step_of_stable.get(stable).copied().or_else(|| {
            step_of_blanked
                .get(&naming::blank_parse(stable))
                .copied()
                .flatten()
        })
    };
    // Which step enabled which (observed), and which orderings the trace itself has.
    let enabled_by: BTreeSet<(usize, usize)> = initial
        .enablers
        .iter()
        .filter_map(|(e, by)| {
            Some((
                steps.iter().position(|s| &s.name == e)?,
                steps.iter().position(|s| &s.name == by)?,
            ))
        })
        .collect();
    let mut traced: BTreeSet<(usize, usize)> = BTreeSet::new();
    if let Ok(an) = shepherd_races::analyze(initial.trace, &shepherd_races::Options::default()) {
        for arc in an.graph.arcs() {
            if let (Some(t), Some(h)) = (step_of_action(arc.tail), step_of_action(arc.head))
                && t < h
            {
                traced.insert((t as usize, h as usize));
            }
        }
    }
    // Typing units: gesture index -> the unit's gesture indices.
    let units = typing_units(gestures);
    let unit_of = |k: usize| -> Vec<usize> {
        units
            .iter()
            .find(|u| u.contains(&k))
            .cloned()
            .unwrap_or_else(|| vec![k])
    };
    let step_of_event: HashMap<&str, usize> = steps
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.as_str(), i))
        .collect();
    // Which steps of a unit: the steps of its gestures, in order.
    let unit_steps = |step: usize| -> Vec<usize> {
        match &names[step] {
            EventName::User(k) => {
                let mut v: Vec<usize> = unit_of(*k)
                    .into_iter()
                    .filter_map(|g| {
                        step_of_event
                            .get(EventName::User(g).to_string().as_str())
                            .copied()
                    })
                    .collect();
                v.sort_unstable();
                if v.is_empty() {
                    v.push(step);
                }
                v
            }
            _ => vec![step],
        }
    };
    // A race whose two events have the shapes of an earlier race's at the same location (the
    // same callbacks or gestures at other times: the user clicked the button again) is
    // answered by that race. Shapes keep what an event is (its kind, target, URL) and drop
    // its ordinals.
    let mut repeat_of: HashMap<usize, usize> = HashMap::new();
    {
        let mut first_of: HashMap<(&str, String, String), usize> = HashMap::new();
        for (i, t) in targets.iter().enumerate() {
            let key = (
                t.location.as_str(),
                shape(&t.first.stable),
                shape(&t.second.stable),
            );
            match first_of.get(&key) {
                Some(&of) => {
                    repeat_of.insert(i, of);
                }
                None => {
                    first_of.insert(key, i);
                }
            }
        }
    }
    let mut probes: Vec<Probe> = Vec::new();
    let mut by_pair: HashMap<(u32, u32), u32> = HashMap::new();
    let mut per_location: HashMap<String, usize> = HashMap::new();
    let mut covered_probes = 0;
    // Indexed: a target's answer is written while other targets are read.
    #[allow(clippy::needless_range_loop)]
    for i in 0..targets.len() {
        if let Some(&of) = repeat_of.get(&i) {
            targets[i].answer = Answer::RepeatOf { race: of };
            continue;
        }
        let t = &targets[i];
        // A focus the page caused (an autofocus) is an action of its own, forked by what
        // caused it, but the browser moved the focus with the cause: holding the focus event's
        // handler back holds nothing a key could notice, so the cause's step is the side.
        let side = |s: &Side| -> Option<u32> {
            is_focus_location(&t.location)
                .then(|| focus_cause(&s.stable))
                .flatten()
                .and_then(&replayed)
                .or_else(|| by_access(&s.stable, &s.access, &t.location))
                .or_else(|| replayed(&s.stable))
        };
        let (Some(a), Some(b)) = (side(&t.first), side(&t.second)) else {
            let missing = if replayed(&t.first.stable).is_some() {
                t.second.stable.clone()
            } else {
                t.first.stable.clone()
            };
            targets[i].answer = Answer::Unexplored(Unexplored::NotReplayed { stable: missing });
            continue;
        };
        let (a, b) = (a.min(b) as usize, a.max(b) as usize);
        targets[i].steps = Some((a as u32, b as u32));
        let t = &targets[i];
        if a == b || a >= n || b >= n {
            targets[i].answer = Answer::Unexplored(Unexplored::OneStep);
            continue;
        }
        if is_user(a) && is_user(b) {
            targets[i].answer = Answer::Unexplored(Unexplored::TwoUserEvents);
            continue;
        }
        // The delayed side: the earlier step, or its whole typing unit. A race on the focus
        // splits the unit at the racing key: what moves the focus is tried between two keys
        // (the caret jumps while the user types), which moving the unit whole never tries
        // (its focus would take the caret back first).
        let delayed_steps = {
            let unit = unit_steps(a);
            if is_focus_location(&t.location) {
                unit.into_iter().filter(|&s| s >= a).collect()
            } else {
                unit
            }
        };
        let moved_steps = unit_steps(b);
        if moved_steps.iter().any(|s| delayed_steps.contains(s)) {
            targets[i].answer = Answer::Unexplored(Unexplored::OneStep);
            continue;
        }
        let start = delayed_steps.first().copied().unwrap_or(a).min(a);
        // What the moved side needs: its platform predecessors after `start`, transitively
        // (for a gesture, not the user's own earlier gestures: the user need not have made
        // them first).
        let mut need: BTreeSet<usize> = BTreeSet::new();
        let mut stack: Vec<usize> = moved_steps.clone();
        let mut ordered_by: Option<(usize, usize)> = None;
        while let Some(j) = stack.pop() {
            for &p in initial.exec.hb.get(j).into_iter().flatten() {
                let p = p as usize;
                if p < start || moved_steps.contains(&p) {
                    continue;
                }
                if is_user(j) && is_user(p) {
                    continue;
                }
                // A key the page's focus aimed needs no element but the body: it goes
                // wherever the focus is, so what created its recorded target is not needed.
                if aimed_at_focus(j) {
                    continue;
                }
                if is_user(j) && enabled_by.contains(&(j, p)) && !traced.contains(&(p, j)) {
                    continue;
                }
                if delayed_steps.contains(&p) {
                    ordered_by.get_or_insert((p, j));
                    continue;
                }
                if need.insert(p) {
                    stack.push(p);
                }
            }
        }
        if let Some((p, j)) = ordered_by {
            targets[i].answer = Answer::Unexplored(Unexplored::Ordered {
                why: format!("{} happens before {}", steps[p].name, steps[j].name),
            });
            continue;
        }
        // The probe reverses this race alone: the moved side's other conflicting accesses that
        // came first in the recording stay first (with what they need), unless they follow
        // the delayed side. A click moved before the cart's answer still comes after the
        // DOMContentLoaded handler that attached its listener, as it did when recorded;
        // otherwise both orders would lose the click and the race on the cart would look
        // harmless.
        let kept = kept_conflicts(
            &moved_steps,
            &delayed_steps,
            start,
            initial.exec,
            &is_user,
            &need,
        );
        need.extend(kept);
        let key = (a as u32, b as u32);
        if let Some(&id) = by_pair.get(&key) {
            targets[i].answer = Answer::Probe { id };
            continue;
        }
        let used = per_location.entry(t.location.clone()).or_default();
        if *used >= limits.per_location || (t.covered && covered_probes >= limits.covered) {
            targets[i].answer = Answer::Unexplored(Unexplored::Budget);
            continue;
        }
        *used += 1;
        covered_probes += usize::from(t.covered);
        let skip: BTreeSet<usize> = delayed_steps
            .iter()
            .chain(moved_steps.iter())
            .copied()
            .collect();
        let prefix: Vec<String> = (0..start)
            .filter(|s| !skip.contains(s))
            .map(|s| steps[s].name.clone())
            .collect();
        let name_of =
            |v: &[usize]| -> Vec<String> { v.iter().map(|&s| steps[s].name.clone()).collect() };
        let needs: Vec<usize> = need.into_iter().collect();
        let window = window_of(
            &names,
            steps,
            &delayed_steps,
            &moved_steps,
            gestures,
            document,
            recorded,
        );
        let id = probes.len() as u32;
        probes.push(Probe {
            id,
            steps: key,
            prefix,
            needs: name_of(&needs),
            moved: name_of(&moved_steps),
            delayed: name_of(&delayed_steps),
            window,
            kind: ProbeKind::Race,
        });
        by_pair.insert(key, id);
        targets[i].answer = Answer::Probe { id };
    }
    // A gesture whose target a step of the page made (a response re-rendering a list, a
    // gallery's answer replacing its buttons) while an element at the same place was there
    // before that step: the user could have acted first, on the older element. The target's
    // creation orders the two steps, so no race of the recording asks it.
    let mut older = 0;
    for g in 0..n {
        if older >= limits.older_targets {
            break;
        }
        let EventName::User(k) = &names[g] else {
            continue;
        };
        if gestures.get(*k).is_none_or(|x| x.needs().is_none()) || aimed_at_focus(g) {
            continue;
        }
        let unit = unit_steps(g);
        if unit.first() != Some(&g) {
            continue;
        }
        let preds = |j: usize| {
            initial
                .exec
                .hb
                .get(j)
                .into_iter()
                .flatten()
                .map(|&p| p as usize)
        };
        // The latest step of the page that made the target (a trace arc into the gesture).
        let Some(c) = preds(g)
            .filter(|&p| !is_user(p) && traced.contains(&(p, g)))
            .max()
        else {
            continue;
        };
        // Something at the target's place could be acted on before it ran...
        let Some(ev) = initial.exec.events.get(g) else {
            continue;
        };
        let could = |i: usize| {
            initial
                .exec
                .enabled
                .get(i)
                .is_some_and(|e| e.binary_search(ev).is_ok())
        };
        if !could(c) {
            continue;
        }
        // ... from this step on (the user acts as soon as they can after their previous
        // gesture: a response delivered in several callbacks may make the target in another
        // of them than it did when recorded).
        let mut from = c;
        while from > 0 && could(from - 1) && !is_user(from - 1) {
            from -= 1;
        }
        // Delayed: `c` and what it needs from then on, and what follows those meanwhile;
        // the other steps of the window run first, as recorded.
        let mut delayed: BTreeSet<usize> = BTreeSet::from([c]);
        let mut stack = vec![c];
        while let Some(j) = stack.pop() {
            for p in preds(j) {
                if p >= from && !is_user(p) && delayed.insert(p) {
                    stack.push(p);
                }
            }
        }
        for s in from..c {
            if preds(s).any(|p| delayed.contains(&p)) {
                delayed.insert(s);
            }
        }
        // The user's order stays, and the unit needs nothing delayed but the step that made
        // its target, and nothing that came after it.
        let blocked = unit.iter().any(|&j| {
            preds(j).any(|p| {
                !unit.contains(&p)
                    && !is_user(p)
                    && p != c
                    && (p > c || delayed.contains(&p))
                    && (!enabled_by.contains(&(j, p)) || traced.contains(&(p, j)))
            })
        });
        let delayed: Vec<usize> = delayed.into_iter().collect();
        let key = (delayed[0] as u32, g as u32);
        if blocked
            || (from..g).any(|s| is_user(s) && !unit.contains(&s))
            || by_pair.contains_key(&key)
        {
            continue;
        }
        let name_of =
            |v: &[usize]| -> Vec<String> { v.iter().map(|&s| steps[s].name.clone()).collect() };
        let window = window_of(&names, steps, &delayed, &unit, gestures, document, recorded);
        let prefix: Vec<usize> = (0..c).filter(|s| !delayed.contains(s)).collect();
        let id = probes.len() as u32;
        probes.push(Probe {
            id,
            steps: key,
            prefix: name_of(&prefix),
            needs: Vec::new(),
            moved: name_of(&unit),
            delayed: name_of(&delayed),
            window,
            kind: ProbeKind::OlderTarget,
        });
        by_pair.insert(key, id);
        older += 1;
    }
    let split = targets
        .iter()
        .position(|t| t.covered)
        .unwrap_or(targets.len());
    let covered = targets.split_off(split);
    Triage {
        targets,
        covered,
        probes,
    }
}

/// What an event is, without when: a stable id with its ordinals (`#3`) blanked, so the second
/// click on a button has the shape of the first.
pub fn shape(stable: &str) -> String {
    let mut out = String::with_capacity(stable.len());
    let mut chars = stable.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '#' {
            let mut digits = false;
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
                digits = true;
            }
            if digits {
                out.push('N');
            }
        }
    }
    out
}

/// Whether a race location is the document's focus (`Document[1].activeElement`): the
/// runtime's name for where keys land.
/// Steps at or after `start` that conflict with the moved side and ran before it (with
/// their platform predecessors), that the probe can keep before it: none of them follows the
/// delayed side or the moved side, conflicts with the delayed side, or is the user's (user
/// events keep their own order).
fn kept_conflicts(
    moved: &[usize],
    delayed: &[usize],
    start: usize,
    exec: &Execution,
    is_user: &dyn Fn(usize) -> bool,
    need: &BTreeSet<usize>,
) -> BTreeSet<usize> {
    let mut kept = BTreeSet::new();
    for &j in moved {
        for &c in exec.dep.get(j).into_iter().flatten() {
            let c = c as usize;
            if c < start
                || moved.contains(&c)
                || delayed.contains(&c)
                || need.contains(&c)
                || kept.contains(&c)
                || is_user(c)
            {
                continue;
            }
            let mut closure = BTreeSet::from([c]);
            let mut stack = vec![c];
            let mut possible = true;
            'walk: while let Some(q) = stack.pop() {
                // A step that conflicts with the delayed side would be reversed with it too
                // (a poller tick that reads the flag the delayed script sets does something
                // else before it): keeping it first is a second reversal, not the recorded
                // order.
                let conflicts_delayed = exec
                    .dep
                    .get(q)
                    .into_iter()
                    .flatten()
                    .any(|&d| delayed.contains(&(d as usize)));
                if conflicts_delayed {
                    possible = false;
                    break;
                }
                for &r in exec.hb.get(q).into_iter().flatten() {
                    let r = r as usize;
                    if r < start || need.contains(&r) || kept.contains(&r) {
                        continue;
                    }
                    if delayed.contains(&r) || moved.contains(&r) || is_user(r) {
                        possible = false;
                        break 'walk;
                    }
                    if closure.insert(r) {
                        stack.push(r);
                    }
                }
            }
            if possible {
                kept.extend(closure);
            }
        }
    }
    kept
}

fn is_focus_location(location: &str) -> bool {
    location.ends_with(".activeElement")
}

/// The action that caused a focus event the page caused (`doc/script@…/a.js#1` of
/// `doc/script@…/a.js#1/event:focusin#1`); `None` for the user's focus (`doc/event:focus@#q#1`)
/// and for other actions.
fn focus_cause(stable: &str) -> Option<&str> {
    let (cause, last) = stable.rsplit_once('/')?;
    let focus = ["event:focus", "event:blur"]
        .iter()
        .any(|p| last.starts_with(p));
    (focus && cause.contains('/')).then_some(cause)
}

/// Runs of gestures that type into one field: a focus or click on it, then keys and inserted
/// text, with nothing else between. Such a run moves as one unit.
pub fn typing_units(gestures: &[Gesture]) -> Vec<Vec<usize>> {
    let typing = |g: &Gesture| {
        matches!(
            g.kind,
            GestureKind::KeyDown(_) | GestureKind::KeyUp(_) | GestureKind::Text(_)
        )
    };
    let mut out = Vec::new();
    let mut k = 0;
    while k < gestures.len() {
        if !typing(&gestures[k]) {
            k += 1;
            continue;
        }
        let path = gestures[k].path.clone();
        let mut start = k;
        if k > 0
            && gestures[k - 1].path == path
            && matches!(
                gestures[k - 1].kind,
                GestureKind::Focus | GestureKind::Click
            )
        {
            start = k - 1;
        }
        let mut end = k;
        while end + 1 < gestures.len()
            && typing(&gestures[end + 1])
            && gestures[end + 1].path == path
        {
            end += 1;
        }
        out.push((start..=end).collect());
        k = end + 1;
    }
    out
}

/// What makes room for `moved` to run before `delayed` in a real browser.
fn window_of(
    names: &[EventName],
    steps: &[Step],
    delayed: &[usize],
    moved: &[usize],
    gestures: &[Gesture],
    document: Option<&Document>,
    recorded: &Trace,
) -> Window {
    let Some(&d) = delayed.first() else {
        return Window::TaskOrder;
    };
    match &names[d] {
        EventName::User(_) => Window::UserThinkTime,
        EventName::Net { url, .. } => Window::Network { what: url.clone() },
        EventName::Callback(stable) => {
            let kind = ActionKind::parse(&steps[d].kind);
            if kind.is_timer_like() {
                return Window::Timer {
                    delay_ms: timer_delay(recorded, stable),
                };
            }
            if stable.contains("/xhr@") || stable.contains("/fetch") {
                return Window::Network {
                    what: "a request's answer".to_string(),
                };
            }
            match kind {
                ActionKind::Event(
                    "load" | "error" | "readystatechange" | "loadend" | "abort" | "progress",
                ) => Window::Network {
                    what: "a resource's load".to_string(),
                },
                ActionKind::Event("DOMContentLoaded") => Window::Network {
                    what: "the rest of the document".to_string(),
                },
                ActionKind::Fetch | ActionKind::Xhr => Window::Network {
                    what: "a request's answer".to_string(),
                },
                _ => Window::TaskOrder,
            }
        }
        EventName::Chunk { part, .. } => {
            let Some(doc) = document else {
                return Window::ParserYield;
            };
            let parts = doc.parts();
            let Some(to) = parts.get(*part).map(|r| r.start) else {
                return Window::ParserYield;
            };
            // Where the moved side became possible: a gesture once its target exists, other
            // events at the start of the part before.
            let from = moved
                .iter()
                .find_map(|&m| match &names[m] {
                    EventName::User(k) => {
                        let g = gestures.get(*k)?;
                        doc.targets
                            .get(*k)
                            .copied()
                            .flatten()
                            .filter(|_| g.needs().is_some())
                    }
                    _ => None,
                })
                .unwrap_or_else(|| {
                    part.checked_sub(1)
                        .and_then(|p| parts.get(p))
                        .map_or(0, |r| r.start)
                });
            if from == to {
                return Window::None;
            }
            if from > to {
                return Window::ParserYield;
            }
            match doc.gap(from, to) {
                Gap::Network => Window::Network {
                    what: "a parser-blocking script or style sheet".to_string(),
                },
                Gap::Markup => Window::ParserYield,
                Gap::Nothing => Window::None,
            }
        }
    }
}

/// The delay of the timer whose callback has stable id `stable` in the recorded trace.
fn timer_delay(trace: &Trace, stable: &str) -> Option<u32> {
    let base = stable.split('~').next().unwrap_or(stable);
    let action = trace
        .actions
        .iter()
        .find(|a| trace.strings.get(a.stable) == base)?;
    trace
        .arcs
        .iter()
        .find(|x| x.head == action.id && x.kind == ArcKind::Fork)
        .and_then(|x| x.delay_ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gesture::GestureKind;
    use shepherd_trace::{ActionType, TraceBuilder};

    /// One action with no operations.
    fn act(b: &mut TraceBuilder, ty: ActionType, kind: &str, stable: &str) -> u32 {
        let a = b.begin(ty, kind, stable);
        b.end();
        a
    }

    fn step(name: &str, kind: &str, first_action: u32) -> Step {
        Step {
            name: name.into(),
            kind: kind.into(),
            enabled: Vec::new(),
            first_action,
        }
    }

    fn side(stable: &str, access: &str) -> Side {
        Side {
            stable: stable.into(),
            access: access.into(),
            source: None,
            scope: None,
        }
    }

    fn target(location: &str, first: &str, second: &str) -> Target {
        Target {
            location: location.into(),
            location_name: location.into(),
            kind: "WRITE-READ".into(),
            first: side(first, "WRITE"),
            second: side(second, "READ"),
            level: "uncovered".into(),
            tags: Vec::new(),
            answer: Answer::Unexplored(Unexplored::NotRun),
            steps: None,
            covered: false,
        }
    }

    /// An execution of `hb.len()` steps with these orders and user steps, nothing else known.
    fn execution(hb: Vec<Vec<u32>>, user: Vec<bool>) -> Execution {
        let n = hb.len();
        Execution {
            events: (0..n as u32).map(crate::event::Ev).collect(),
            enabled: vec![Vec::new(); n + 1],
            hb,
            dep: vec![Vec::new(); n],
            user,
            fifo: vec![None; n],
        }
    }

    /// [`plan`] over an initial execution that observed no enablers, with no document and the
    /// default limits.
    fn plan_on(
        targets: Vec<Target>,
        steps: &[Step],
        trace: &Trace,
        exec: &Execution,
        gestures: &[Gesture],
    ) -> Triage {
        let initial = Initial {
            steps,
            trace,
            exec,
            enablers: &[],
        };
        plan(targets, &initial, gestures, None, trace, Limits::default())
    }

    /// A page: chunk 0 creates a button, chunk 1 runs a script defining `f`, a timer set by the
    /// script fires, the user clicks twice, and a response's callback runs.
    fn fixture() -> (Vec<Step>, Trace, Execution, Vec<Gesture>) {
        let mut b = TraceBuilder::new();
        let parse = act(&mut b, ActionType::Unknown, "parse", "doc/parse#1");
        let script = act(&mut b, ActionType::Unknown, "script", "doc/script@#1#1");
        let timer = act(
            &mut b,
            ActionType::Timer,
            "timer",
            "doc/script@#1#1/timer#1",
        );
        let click1 = act(
            &mut b,
            ActionType::UserInterface,
            "event:click",
            "doc/event:click@#b#1",
        );
        let click2 = act(
            &mut b,
            ActionType::UserInterface,
            "event:click",
            "doc/event:click@#b#2",
        );
        b.fork(parse, script);
        b.fork_delay(script, timer, 200);
        b.fork(parse, click1);
        b.fork(parse, click2);
        b.join(click1, click2);
        let trace = b.finish();
        let steps = vec![
            step("chunk:https://a.test/#0", "chunk", 0),
            step("chunk:https://a.test/#1", "chunk", 1),
            step("cb:doc/script@#1#1/timer#1", "timer", 2),
            step("user:0", "user", 3),
            step("user:1", "user", 4),
        ];
        let exec = execution(
            vec![vec![], vec![0], vec![1], vec![0, 2], vec![0, 3]],
            vec![false, false, false, true, true],
        );
        let g = |path: &str| Gesture {
            kind: GestureKind::Click,
            path: path.into(),
            actions: Vec::new(),
            aim: Default::default(),
            focuses: false,
        };
        (steps, trace, exec, vec![g("#b"), g("#b")])
    }

    /// The user opens gallery 2; its answer (two callbacks: headers, then the body) replaces
    /// the list, making the Delete button the user then clicks; a timer of the page fires
    /// meanwhile. `before`: whether a Delete button (gallery 1's) could be clicked before the
    /// answer came.
    fn gallery(before: bool) -> (Vec<Step>, Trace, Execution, Vec<Gesture>) {
        let mut b = TraceBuilder::new();
        let parse = act(&mut b, ActionType::Unknown, "parse", "doc/parse#1");
        let open = act(
            &mut b,
            ActionType::UserInterface,
            "event:click",
            "doc/event:click@#g2#1",
        );
        let headers = act(
            &mut b,
            ActionType::Network,
            "xhr",
            "doc/event:click@#g2#1/xhr#1",
        );
        let timer = act(&mut b, ActionType::Timer, "timer", "doc/parse#1/timer#1");
        let body = act(
            &mut b,
            ActionType::Network,
            "xhr",
            "doc/event:click@#g2#1/xhr#2",
        );
        let delete = act(
            &mut b,
            ActionType::UserInterface,
            "event:click",
            "doc/event:click@#del#1",
        );
        b.fork(parse, open);
        b.fork(parse, timer);
        b.fork(open, headers);
        b.fork(headers, body);
        b.fork(body, delete);
        b.join(open, delete);
        let trace = b.finish();
        let steps = vec![
            step("chunk:https://a.test/#0", "chunk", 0),
            step("user:0", "user", 1),
            step("cb:doc/event:click@#g2#1/xhr#1", "xhr", 2),
            step("cb:doc/parse#1/timer#1", "timer", 3),
            step("cb:doc/event:click@#g2#1/xhr#2", "xhr", 4),
            step("user:1", "user", 5),
        ];
        let ev = crate::event::Ev;
        let mut enabled = vec![Vec::new(); 7];
        if before {
            enabled[2] = vec![ev(2), ev(3), ev(5)];
            enabled[3] = vec![ev(3), ev(5)];
            enabled[4] = vec![ev(4), ev(5)];
        }
        let exec = Execution {
            events: (0..6).map(ev).collect(),
            enabled,
            hb: vec![vec![], vec![0], vec![1], vec![0], vec![2], vec![1, 4]],
            dep: vec![Vec::new(); 6],
            user: vec![false, true, false, false, false, true],
            fifo: vec![None; 6],
        };
        let g = |path: &str| Gesture {
            kind: GestureKind::Click,
            path: path.into(),
            actions: Vec::new(),
            aim: Default::default(),
            focuses: false,
        };
        (steps, trace, exec, vec![g("#g2"), g("#del")])
    }

    #[test]
    fn a_gesture_is_tried_on_the_older_element_at_its_place() {
        for before in [true, false] {
            let (steps, trace, exec, gestures) = gallery(before);
            let initial = Initial {
                steps: &steps,
                trace: &trace,
                exec: &exec,
                enablers: &[],
            };
            let t = plan(
                Vec::new(),
                &initial,
                &gestures,
                None,
                &trace,
                Limits::default(),
            );
            if !before {
                assert!(
                    t.probes.is_empty(),
                    "nothing was at its place: {:?}",
                    t.probes
                );
                continue;
            }
            assert_eq!(t.probes.len(), 1, "{:?}", t.probes);
            let p = &t.probes[0];
            assert_eq!(p.kind, ProbeKind::OlderTarget);
            assert_eq!(p.steps, (2, 5));
            // The whole answer waits (the body's callback needs the headers'); the timer,
            // which needs neither, runs first as recorded.
            assert_eq!(
                p.prefix,
                vec![
                    "chunk:https://a.test/#0".to_string(),
                    "user:0".to_string(),
                    "cb:doc/parse#1/timer#1".to_string()
                ]
            );
            assert_eq!(p.moved, vec!["user:1".to_string()]);
            assert_eq!(
                p.delayed,
                vec![
                    "cb:doc/event:click@#g2#1/xhr#1".to_string(),
                    "cb:doc/event:click@#g2#1/xhr#2".to_string()
                ]
            );
            assert!(p.needs.is_empty());
            let none = Limits {
                older_targets: 0,
                ..Limits::default()
            };
            let t = plan(Vec::new(), &initial, &gestures, None, &trace, none);
            assert!(t.probes.is_empty(), "the limit holds: {:?}", t.probes);
        }
    }

    #[test]
    fn probes_move_the_later_event_before_the_earlier() {
        let (steps, trace, exec, gestures) = fixture();
        let targets = vec![
            target("Global.f", "doc/script@#1#1", "doc/event:click@#b#1"),
            // The same events at another time: answered by the first.
            target("Global.f", "doc/script@#1#1", "doc/event:click@#b#2"),
            target("Global.n", "doc/event:click@#b#1", "doc/event:click@#b#2"),
            target("Global.t", "doc/script@#1#1", "doc/script@#1#1/timer#1"),
            target("Global.gone", "doc/script@#1#1", "doc/script@#9#1"),
        ];
        // The timer's step happens before the second click only by the user's order... and the
        // enabler of user:0 is the timer's step: observed, not binding.
        let enablers = vec![(
            "user:0".to_string(),
            "cb:doc/script@#1#1/timer#1".to_string(),
        )];
        let initial = Initial {
            steps: &steps,
            trace: &trace,
            exec: &exec,
            enablers: &enablers,
        };
        let t = plan(
            targets,
            &initial,
            &gestures,
            None,
            &trace,
            Limits::default(),
        );
        assert_eq!(t.probes.len(), 1, "{:?}", t.probes);
        let p = &t.probes[0];
        assert_eq!(p.moved, vec!["user:0".to_string()]);
        assert_eq!(p.delayed, vec!["chunk:https://a.test/#1".to_string()]);
        assert_eq!(p.prefix, vec!["chunk:https://a.test/#0".to_string()]);
        assert!(p.needs.is_empty(), "{:?}", p.needs);
        assert_eq!(t.targets[0].answer, Answer::Probe { id: 0 });
        assert_eq!(t.targets[1].answer, Answer::RepeatOf { race: 0 });
        assert_eq!(
            t.targets[2].answer,
            Answer::Unexplored(Unexplored::TwoUserEvents)
        );
        assert!(matches!(
            t.targets[3].answer,
            Answer::Unexplored(Unexplored::Ordered { .. })
        ));
        assert!(matches!(
            t.targets[4].answer,
            Answer::Unexplored(Unexplored::NotReplayed { .. })
        ));
        // The reference runs the pair as recorded, the probe the other way round.
        assert_eq!(
            p.reference_order(),
            vec!["chunk:https://a.test/#1".to_string(), "user:0".to_string()]
        );
        assert_eq!(
            p.probe_order(),
            vec!["user:0".to_string(), "chunk:https://a.test/#1".to_string()]
        );
    }

    #[test]
    fn a_race_on_the_focus_splits_the_typing_at_its_key() {
        // The user focuses #q and types two keys; a timer (set by the page's script) moves
        // the focus after them.
        let mut b = TraceBuilder::new();
        let parse = act(&mut b, ActionType::Unknown, "parse", "doc/parse#1");
        let mut user = Vec::new();
        for stable in [
            "doc/event:focus@#q#1",
            "doc/event:keydown@#q#1",
            "doc/event:keydown@#q#2",
        ] {
            user.push(b.begin(ActionType::UserInterface, "event", stable));
            b.end();
        }
        let timer = act(&mut b, ActionType::Timer, "timer", "doc/parse#1/timer#1");
        b.fork_delay(parse, timer, 1500);
        for &u in &user {
            b.fork(parse, u);
        }
        let trace = b.finish();
        let steps = vec![
            step("chunk:https://a.test/#0", "chunk", 0),
            step("user:0", "user", 1),
            step("user:1", "user", 2),
            step("user:2", "user", 3),
            step("cb:doc/parse#1/timer#1", "timer", 4),
        ];
        let exec = Execution {
            events: (0..5).map(crate::event::Ev).collect(),
            enabled: vec![Vec::new(); 6],
            hb: vec![vec![], vec![0], vec![0, 1], vec![0, 2], vec![0]],
            dep: vec![Vec::new(); 5],
            user: vec![false, true, true, true, false],
            fifo: vec![None; 5],
        };
        let g = |kind| Gesture {
            kind,
            path: "#q".into(),
            actions: Vec::new(),
            aim: Default::default(),
            focuses: false,
        };
        let gestures = vec![
            g(GestureKind::Focus),
            g(GestureKind::KeyDown("a".into())),
            g(GestureKind::KeyDown("b".into())),
        ];
        let initial = Initial {
            steps: &steps,
            trace: &trace,
            exec: &exec,
            enablers: &[],
        };
        let probe = |location: &str| {
            let t = plan(
                vec![target(
                    location,
                    "doc/event:keydown@#q#2",
                    "doc/parse#1/timer#1",
                )],
                &initial,
                &gestures,
                None,
                &trace,
                Limits::default(),
            );
            assert_eq!(t.probes.len(), 1, "{location}: {:?}", t.targets);
            t.probes[0].clone()
        };
        // The focus: the timer runs between the two keys.
        let p = probe("Document[1].activeElement");
        assert_eq!(p.delayed, vec!["user:2".to_string()]);
        assert_eq!(
            p.prefix,
            vec![
                "chunk:https://a.test/#0".to_string(),
                "user:0".into(),
                "user:1".into()
            ]
        );
        // Anything else: the typing is delayed whole, its focus included.
        let p = probe("input#q.value");
        assert_eq!(
            p.delayed,
            vec!["user:0".to_string(), "user:1".into(), "user:2".into()]
        );
        assert_eq!(p.prefix, vec!["chunk:https://a.test/#0".to_string()]);
    }

    #[test]
    fn recorded_parse_ordinals_map_onto_the_replays() {
        // The recording's document came in other pieces: its `parse#7` is the replay's
        // `parse#1`, and an id the replay has twice under the blanked key is not guessed.
        let (steps, trace, exec, gestures) = fixture();
        let t = plan_on(
            vec![target("Global.p", "doc/parse#7", "doc/event:click@#b#1")],
            &steps,
            &trace,
            &exec,
            &gestures,
        );
        assert_eq!(t.targets[0].steps, Some((0, 3)), "{:?}", t.targets[0]);
        assert_eq!(
            naming::blank_parse("doc/parse#12/event:load@#cover#1"),
            "doc/parse#*/event:load@#cover#1"
        );
    }

    const BADGE: &str = "doc/script@https://a.test/badge.js#1";

    /// One action that makes one access.
    fn access(b: &mut TraceBuilder, kind: &str, stable: &str, write: bool, loc: &str) {
        b.begin(ActionType::Unknown, kind, stable);
        if write {
            b.write(loc, None);
        } else {
            b.read(loc, None);
        }
        b.end();
    }

    /// The recording's race: badge.js read the panel before `parse#6` created it.
    fn badge_race() -> Target {
        let mut race = target("Tree[4]:panel", BADGE, "doc/parse#6");
        race.kind = "READ-WRITE".into();
        race.first.access = "READ".into();
        race.second.access = "WRITE".into();
        race
    }

    #[test]
    fn a_recorded_parse_action_is_the_replays_that_made_the_same_access() {
        // A parser stopped at a held script: the replay's `parse#6` is an earlier piece, and
        // the panel the recording's `parse#6` created comes from the replay's `parse#7`, after
        // the async script that looked the panel up.
        let mut b = TraceBuilder::new();
        act(&mut b, ActionType::Unknown, "parse", "doc/parse#1");
        access(&mut b, "parse", "doc/parse#6", true, "Tree[1]:title");
        access(&mut b, "script", BADGE, false, "Tree[1]:panel");
        access(&mut b, "parse", "doc/parse#7", true, "Tree[1]:panel");
        let trace = b.finish();
        let steps = vec![
            step("chunk:https://a.test/#0", "chunk", 0),
            step("chunk:https://a.test/#1", "chunk", 1),
            step("net:https://a.test/badge.js#1", "net", 2),
            step("net:https://a.test/layout.js#1", "net", 3),
        ];
        let exec = execution(vec![vec![], vec![0], vec![], vec![1]], vec![false; 4]);
        let t = plan_on(vec![badge_race()], &steps, &trace, &exec, &[]);
        assert_eq!(t.targets[0].steps, Some((2, 3)), "{:?}", t.targets[0]);
        let p = &t.probes[0];
        assert_eq!(p.moved, vec!["net:https://a.test/layout.js#1".to_string()]);
        assert_eq!(p.delayed, vec!["net:https://a.test/badge.js#1".to_string()]);
    }

    #[test]
    fn a_runs_order_of_a_recorded_race_is_read_from_its_own_race() {
        let run = |parse_first: bool| {
            let mut b = TraceBuilder::new();
            act(&mut b, ActionType::Unknown, "parse", "doc/parse#1");
            let sides = [("parse", "doc/parse#9", true), ("script", BADGE, false)];
            let order = if parse_first { [0, 1] } else { [1, 0] };
            for (kind, stable, write) in order.map(|i| sides[i]) {
                access(&mut b, kind, stable, write, "Tree[1]:panel");
            }
            b.finish()
        };
        let order = |t: &Trace, race: &Target| {
            let an = shepherd_races::analyze(t, &shepherd_races::Options::default()).unwrap();
            recorded_order_kept(t, &an, race)
        };
        // Another parse ordinal, another object number: still the recorded race.
        let mut race = badge_race();
        assert_eq!(order(&run(false), &race), Some(true));
        assert_eq!(order(&run(true), &race), Some(false));
        // Two parse actions write the panel, the script reads it between them: both orders.
        let mut b = TraceBuilder::new();
        access(&mut b, "parse", "doc/parse#2", true, "Tree[1]:panel");
        access(&mut b, "script", BADGE, false, "Tree[1]:panel");
        access(&mut b, "parse", "doc/parse#9", true, "Tree[1]:panel");
        assert_eq!(order(&b.finish(), &race), None);
        // Another location: no such race in the run.
        race.location = "Tree[4]:header".into();
        assert_eq!(order(&run(false), &race), None);
        assert_eq!(same_place("NodeTree:Tree[3]>div-12"), "NodeTree:Tree[]>div");
    }

    #[test]
    fn covered_races_are_probed_after_the_uncovered_within_their_limit() {
        let (steps, trace, exec, gestures) = fixture();
        // The timer enabled the click only as observed (as in the test above).
        let enablers = vec![(
            "user:0".to_string(),
            "cb:doc/script@#1#1/timer#1".to_string(),
        )];
        let initial = Initial {
            steps: &steps,
            trace: &trace,
            exec: &exec,
            enablers: &enablers,
        };
        let covered = |mut t: Target| {
            t.covered = true;
            t
        };
        // Given first, planned last: the covered race on `c` shares the uncovered race's pair;
        // the one on `d` (the timer and the click) needs a probe of its own.
        let races = || {
            vec![
                covered(target(
                    "Global.c",
                    "doc/script@#1#1",
                    "doc/event:click@#b#1",
                )),
                covered(target(
                    "Global.d",
                    "doc/script@#1#1/timer#1",
                    "doc/event:click@#b#1",
                )),
                target("Global.f", "doc/script@#1#1", "doc/event:click@#b#1"),
            ]
        };
        let t = plan(
            races(),
            &initial,
            &gestures,
            None,
            &trace,
            Limits::default(),
        );
        assert_eq!(t.targets.len(), 1);
        assert_eq!(t.targets[0].location, "Global.f");
        assert_eq!(t.targets[0].answer, Answer::Probe { id: 0 });
        assert_eq!(t.covered.len(), 2);
        assert_eq!(t.covered[0].answer, Answer::Probe { id: 0 });
        assert_eq!(t.covered[1].answer, Answer::Probe { id: 1 });
        let none = Limits {
            covered: 0,
            ..Limits::default()
        };
        let t = plan(races(), &initial, &gestures, None, &trace, none);
        assert_eq!(t.probes.len(), 1);
        assert_eq!(t.covered[1].answer, Answer::Unexplored(Unexplored::Budget));
    }

    #[test]
    fn windows_say_what_makes_room() {
        let (steps, trace, exec, gestures) = fixture();
        // The button is not located (no cut after it): part 1 is the script, after markup.
        let html =
            b"<html><body><input type=button id=b><p>a</p><script>f()</script></body></html>";
        let doc = Document::parse(html, &["[id=\"none\"]".into(), "[id=\"none\"]".into()]);
        let names: Vec<EventName> = steps.iter().map(|s| s.name.parse().unwrap()).collect();
        // A chunk after markup: only a parser yield.
        let w = window_of(&names, &steps, &[1], &[3], &gestures, Some(&doc), &trace);
        assert_eq!(w, Window::ParserYield);
        // A timer: its delay from the trace.
        let w = window_of(&names, &steps, &[2], &[3], &gestures, Some(&doc), &trace);
        assert_eq!(
            w,
            Window::Timer {
                delay_ms: Some(200)
            }
        );
        // The user's own event.
        let w = window_of(&names, &steps, &[3], &[2], &gestures, Some(&doc), &trace);
        assert_eq!(w, Window::UserThinkTime);
        // The script right after the field: no room at all.
        let tight = b"<html><body><input type=button id=b><script>f()</script></body></html>";
        let doc = Document::parse(tight, &["[id=\"b\"]".into(), "[id=\"b\"]".into()]);
        let w = window_of(&names, &steps, &[1], &[3], &gestures, Some(&doc), &trace);
        assert_eq!(w, Window::None);
        let _ = exec;
    }

    #[test]
    fn shapes_and_units() {
        assert_eq!(
            shape("doc/event:click@#refresh#12/xhr@stock.txt#1/event:load#3"),
            "doc/event:click@#refresh#N/xhr@stock.txt#N/event:load#N"
        );
        assert_eq!(shape("doc/event:click@#b1#1"), "doc/event:click@#b1#N");
        let g = |kind, path: &str| Gesture {
            kind,
            path: path.into(),
            actions: Vec::new(),
            aim: Default::default(),
            focuses: false,
        };
        let gestures = vec![
            g(GestureKind::Click, "#b"),
            g(GestureKind::Focus, "#q"),
            g(GestureKind::KeyDown("a".into()), "#q"),
            g(GestureKind::KeyUp("a".into()), "#q"),
            g(GestureKind::Text("ab".into()), "#q"),
            g(GestureKind::Click, "#go"),
            g(GestureKind::KeyDown("x".into()), "#r"),
        ];
        assert_eq!(typing_units(&gestures), vec![vec![1, 2, 3, 4], vec![6]]);
    }

    #[test]
    fn a_focus_the_page_caused_is_its_causes() {
        assert_eq!(
            focus_cause("doc/script@https://a.test/s.js#1/event:focusin#1"),
            Some("doc/script@https://a.test/s.js#1")
        );
        assert_eq!(focus_cause("doc/timer#2/event:blur#1"), Some("doc/timer#2"));
        // The user's own focus, and events that are not focus changes.
        assert_eq!(focus_cause("doc/event:focus@#q#1"), None);
        assert_eq!(
            focus_cause("doc/script@https://a.test/s.js#1/event:load#1"),
            None
        );
    }

    #[test]
    fn a_probe_keeps_the_moved_sides_other_conflicts_first() {
        // 0 the document, 1 the cart's answer (delayed), 2 DOMContentLoaded attaching the
        // click's listener, 3 the rates' answer (requested by the cart's handler), 4 the click
        // (moved), which conflicts with all three.
        let exec = Execution {
            events: (0..5).map(crate::event::Ev).collect(),
            enabled: vec![Vec::new(); 6],
            hb: vec![vec![], vec![0], vec![0], vec![1], vec![0]],
            dep: vec![vec![], vec![], vec![], vec![], vec![1, 2, 3]],
            user: vec![false, false, false, false, true],
            fifo: vec![None; 5],
        };
        let is_user = |i: usize| i == 4;
        let kept = kept_conflicts(&[4], &[1], 1, &exec, &is_user, &BTreeSet::new());
        // The listener stays before the click; the rates follow the cart's answer, so they
        // cannot.
        assert_eq!(kept, BTreeSet::from([2]));
        // A listener attached by a step that reads what the cart's answer wrote would behave
        // otherwise before it: not kept.
        let mut reads_cart = exec.clone();
        reads_cart.dep[2] = vec![1];
        let kept = kept_conflicts(&[4], &[1], 1, &reads_cart, &is_user, &BTreeSet::new());
        assert!(kept.is_empty(), "{kept:?}");
        // Delaying the rates instead: the cart's answer and the listener run in the prefix.
        let kept = kept_conflicts(&[4], &[3], 3, &exec, &is_user, &BTreeSet::new());
        assert!(kept.is_empty(), "{kept:?}");
    }
}
