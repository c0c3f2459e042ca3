//! Which race gets which answer. Every uncovered race of the recording (as `shepherd races`
//! lists it) gets one: the verdict of its probe (harmful or harmless, the rule that decided,
//! what makes room for the bad order), the verdict of the race it repeats, the reorder phase's
//! verdict when triage could not plan or run a probe, or the concrete reason it was not
//! explored. Reversals the reorder phase found deeper follow as their own entries.

use crate::naming::{self, EventName};
use crate::outcome::{Cause, OriginNote, Outcome, ProbeOutcome, RunRecord};
use crate::triage::{Answer, ProbeKind, Side, Target, Unexplored, Window};
use crate::verdict::{Difference, Judgement, Rule};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Changed lines shown in a witness' diffs.
pub const DIFF_LINES: usize = 60;

/// The verdict a report gives a race (`docs/explore-json.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RaceVerdict {
    /// The other order changes what the user sees, gets or loses.
    Harmful,
    /// It does not (the rule says why).
    Harmless,
    /// Not explored (the reason says why).
    NotExplored,
}

impl RaceVerdict {
    /// The word reports use (`harmful`, `harmless`, `not-explored`).
    pub fn as_str(self) -> &'static str {
        match self {
            RaceVerdict::Harmful => "harmful",
            RaceVerdict::Harmless => "harmless",
            RaceVerdict::NotExplored => "not-explored",
        }
    }
}

impl fmt::Display for RaceVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The two executions a verdict compares: the pair in its recorded order (the reference, or
/// the reorder phase's parent) and reordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair {
    /// The run with the recorded order.
    pub reference: u32,
    /// The run with the other order.
    pub reordered: u32,
}

/// One reported race.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The race, named as the race report names it.
    pub race: Target,
    /// Its verdict.
    pub verdict: RaceVerdict,
    /// The rule that decided (probes' verdicts).
    pub rule: Option<Rule>,
    /// Why, in words.
    pub reason: String,
    /// What makes room for the bad order (probes).
    pub window: Option<Window>,
    /// The probe that answered it.
    pub probe: Option<u32>,
    /// The race (index into the entries' races) it repeats, when it is answered by it.
    pub repeat_of: Option<usize>,
    /// The runs compared, when there was a comparison.
    pub runs: Option<Pair>,
    /// What differs between them.
    pub differences: Option<Vec<Difference>>,
    /// Conflict reversals of the reordered run from the initial execution.
    pub depth: Option<u32>,
    /// The events moved ahead and the events delayed (probes); the reversed pair (reorder
    /// phase).
    pub moved: Vec<String>,
    /// Locations of the other races between the same two events its harmful answer stands
    /// for (one finding, however many locations the two touch): the other covered races its
    /// probe found harmful, or the races a reversal that overturned its probe reversed with it.
    pub also_at: Vec<String>,
    /// See [`Entry::moved`].
    pub delayed: Vec<String>,
}

/// The entries of an outcome: the recording's races in the race report's order and the
/// covered races found harmful (the first [`Entries::recorded`]), then deeper reversals.
pub struct Entries {
    /// The entries.
    pub list: Vec<Entry>,
    /// How many of them are races of the recording.
    pub recorded: usize,
}

/// The entries of an outcome (see [`Entries`]).
pub fn entries(out: &Outcome) -> Entries {
    let targets: Vec<&Target> = out
        .triage
        .targets
        .iter()
        .chain(out.triage.covered.iter())
        .collect();
    let mut list: Vec<Entry> = targets.iter().map(|t| answer(out, t)).collect();
    // Repeats take the verdict of the race they repeat.
    for i in 0..list.len() {
        if let Answer::RepeatOf { race } = targets[i].answer
            && let Some(of) = list.get(race).cloned()
        {
            let e = &mut list[i];
            e.verdict = of.verdict;
            e.rule = of.rule;
            e.window = of.window.clone();
            e.probe = of.probe;
            e.runs = of.runs;
            e.differences = of.differences.clone();
            e.depth = of.depth;
            e.repeat_of = Some(race);
            e.reason = format!(
                "{} (as race {race}: the same events at another time)",
                of.reason
            );
        }
    }
    // Covered races are shown when found harmful by a probe of their own: one that shares an
    // uncovered race's probe (the same two steps) is that race's harm, which its covering race
    // already shows (EventRacer's point about coverage), and a repeat of another race adds
    // nothing to it. An uncovered race never repeats a covered one, so the indices of the
    // repeats kept stay valid.
    let uncovered = out.triage.targets.len();
    let shared: std::collections::HashSet<u32> = out
        .triage
        .targets
        .iter()
        .filter_map(|t| match t.answer {
            Answer::Probe { id } => Some(id),
            _ => None,
        })
        .collect();
    // Covered races a probe of their own found harmful are one finding per probe: a script
    // and a key press can race on hundreds of a framework's internals, so the first stands for
    // the others, which it names.
    let mut kept: Vec<Entry> = Vec::with_capacity(list.len());
    let mut by_probe: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
    for (i, e) in list.into_iter().enumerate() {
        let own_probe = e.probe.filter(|id| !shared.contains(id));
        if i < uncovered {
            kept.push(e);
        } else if let Some(probe) = own_probe
            && e.verdict == RaceVerdict::Harmful
            && e.repeat_of.is_none()
        {
            if let Some(&first) = by_probe.get(&probe) {
                kept[first].also_at.push(e.race.location_name.clone());
            } else {
                by_probe.insert(probe, kept.len());
                kept.push(e);
            }
        }
    }
    for e in kept.iter_mut().filter(|e| e.race.covered) {
        let others = match e.also_at.len() {
            0 => String::new(),
            n => {
                let named: Vec<&str> = e.also_at.iter().take(3).map(String::as_str).collect();
                let more = if n > named.len() { ", …" } else { "" };
                format!(
                    "; {n} more covered race{} between the same two events ({}{more})",
                    if n == 1 { "" } else { "s" },
                    named.join(", ")
                )
            }
        };
        e.reason = format!(
            "{} (a covered race: another race's order decides whether it happens, and this \
             order of it matters{others})",
            e.reason
        );
    }
    let mut list = kept;
    let recorded = list.len();
    // Reversals of the reorder phase that answer no race above: deeper ones, and races the
    // recording's report does not list.
    let used: Vec<u32> = list
        .iter()
        .filter_map(|e| e.runs.map(|p| p.reordered))
        .collect();
    // A reversal runs every race between its two steps the other way at once; a race the
    // recording lists and a probe answered keeps that answer (the verdict of the pair would
    // otherwise be pinned on races that did not cause it), one it lists unanswered takes the
    // reversal's verdict, and the others are listed here. Races are matched with the parser's
    // delivery ordinals blanked: the recording numbers parse actions otherwise than a replay.
    let blanked = |location: &str, first: &str, second: &str| {
        crate::triage::race_key(
            location,
            &naming::blank_parse(first),
            &naming::blank_parse(second),
        )
    };
    let answered: std::collections::HashMap<crate::triage::RaceKey, usize> = list
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let r = &e.race;
            (blanked(&r.location, &r.first.stable, &r.second.stable), i)
        })
        .collect();
    // Older-target probes found harmful: the races their own run reversed (the recording
    // has none between the two steps: the target's creation ordered them).
    for p in out
        .triage
        .probes
        .iter()
        .filter(|p| p.kind == ProbeKind::OlderTarget)
    {
        let Some(result) = out.probes.get(p.id as usize) else {
            continue;
        };
        let (ProbeOutcome::Judged(s), Some(reference), Some(run)) =
            (&result.outcome, result.reference, result.run)
        else {
            continue;
        };
        let Some(r) = out.runs.get(run as usize) else {
            continue;
        };
        if s.verdict != Judgement::Harmful {
            continue;
        }
        let place = p
            .moved
            .first()
            .and_then(|m| match m.parse::<EventName>() {
                Ok(EventName::User(k)) => out.site.gestures.get(k).map(|g| g.path.clone()),
                _ => None,
            })
            .unwrap_or_else(|| "its target's place".to_string());
        // One finding per probe, as for covered races: the verdict is the two events'. A race
        // the page's code made (with source positions) stands for the others, which it names
        // (the focus moved with the click, the answer removed the focused button).
        let mut races: Vec<&crate::steps::RaceNote> = r
            .pairs
            .iter()
            .flat_map(|pair| &pair.races)
            .filter(|race| {
                !answered.contains_key(&blanked(
                    &race.location,
                    &race.first.stable,
                    &race.second.stable,
                ))
            })
            .collect();
        races.sort_by_key(|race| race.first.source.is_none() && race.second.source.is_none());
        if let Some((race, others)) = races.split_first() {
            let mut also_at: Vec<String> = Vec::new();
            for o in others {
                if o.location != race.location && !also_at.contains(&o.location) {
                    also_at.push(o.location.clone());
                }
            }
            let others = match also_at.len() {
                0 => String::new(),
                n => format!(
                    "; {n} more location{} between the same two events ({})",
                    if n == 1 { "" } else { "s" },
                    also_at.join(", ")
                ),
            };
            list.push(Entry {
                race: found(race, Answer::Probe { id: p.id }, p.steps),
                verdict: RaceVerdict::Harmful,
                rule: Some(s.rule),
                reason: format!(
                    "{}; the user acted on {place} before {} replaced what was there (the \
                     older element at that place took the input){others}; the window: {}",
                    s.reason,
                    p.delayed.first().map_or("the page", String::as_str),
                    p.window.describe()
                ),
                window: Some(p.window.clone()),
                probe: Some(p.id),
                repeat_of: None,
                runs: Some(Pair {
                    reference,
                    reordered: run,
                }),
                differences: Some(s.differences.clone()),
                depth: Some(1),
                moved: p.moved.clone(),
                delayed: p.delayed.clone(),
                also_at,
            });
        }
    }
    let mut overturned_entries: Vec<usize> = Vec::new();
    for r in &out.runs {
        let Some(o) = &r.origin else { continue };
        if used.contains(&r.id) || o.kind != Cause::Reversal {
            continue;
        }
        let (verdict, reason) = judged(r);
        // A harmful reversal that also reverses a race already found harmful is that race's
        // harm: the races it reverses along with it (the same two steps, other locations)
        // cannot be told apart by it, and listing them harmful would pin the exception of a
        // call to an undefined function on the read of its argument. "Already found" means
        // the same race (a listed one) or the same code at another time (another click of
        // the same button, reversed with the same handler): which of the two a deeper
        // reversal reaches first depends on the run, not on the page.
        // The race of `list` each race of the reversal is, when the recording lists it.
        let listed: Vec<Option<usize>> = o
            .races
            .iter()
            .map(|race| {
                answered
                    .get(&blanked(
                        &race.location,
                        &race.first.stable,
                        &race.second.stable,
                    ))
                    .copied()
            })
            .collect();
        let explained = verdict == RaceVerdict::Harmful
            && o.races.iter().zip(&listed).any(|(race, at)| {
                at.is_some_and(|i| list[i].verdict == RaceVerdict::Harmful)
                    || list
                        .iter()
                        .any(|e| e.verdict == RaceVerdict::Harmful && same_code_note(&e.race, race))
            });
        // A probe's two runs end once the pair and what it forked have settled; a reversal
        // also runs every event after it. A harm no race found harmful explains, on a race a
        // probe cleared, is one the probe's runs ended too early to see (a later click reads
        // what the pair left): that race takes the reversal's verdict, and the other races
        // reversed with it are the same finding, named beside it.
        let overturned = if verdict == RaceVerdict::Harmful && !explained {
            listed.iter().flatten().copied().find(|&i| {
                let e = &list[i];
                e.verdict == RaceVerdict::Harmless && e.probe.is_some() && e.repeat_of.is_none()
            })
        } else {
            None
        };
        if let Some(i) = overturned {
            let e = &mut list[i];
            for race in &o.races {
                if race.location != e.race.location && !e.also_at.contains(&race.location) {
                    e.also_at.push(race.location.clone());
                }
            }
            let others = match e.also_at.len() {
                0 => String::new(),
                n => format!(
                    "; {n} more location{} reversed with it ({})",
                    if n == 1 { "" } else { "s" },
                    e.also_at.join(", ")
                ),
            };
            let reason = format!(
                "{reason} (the reorder phase's execution {}, which runs the later events too; \
                 the probe's runs, which end after the pair, settled alike: {}{others})",
                r.id, e.reason
            );
            take_reversal(e, r, o, RaceVerdict::Harmful, reason);
            e.rule = None;
            overturned_entries.push(i);
        }
        let explained = explained || overturned.is_some();
        for (race, at) in o.races.iter().zip(&listed) {
            if let Some(i) = *at {
                let e = &mut list[i];
                if e.verdict == RaceVerdict::NotExplored
                    && verdict != RaceVerdict::NotExplored
                    && e.repeat_of.is_none()
                {
                    take_reversal(e, r, o, verdict, reason.clone());
                }
                continue;
            }
            if explained {
                continue;
            }
            // The same code at another time, reversed by an earlier run: one entry, the
            // harmful answer when there is one (deeper reversals reach one race many times).
            if let Some(j) = (recorded..list.len()).find(|&j| same_code_note(&list[j].race, race)) {
                if list[j].verdict == RaceVerdict::Harmful || verdict != RaceVerdict::Harmful {
                    continue;
                }
                list.remove(j);
            }
            list.push(Entry {
                race: found(race, Answer::Unexplored(Unexplored::NotRun), o.steps),
                verdict,
                rule: None,
                reason: reason.clone(),
                window: None,
                probe: None,
                repeat_of: None,
                runs: Some(Pair {
                    reference: o.parent,
                    reordered: r.id,
                }),
                differences: r.verdict.as_ref().map(|v| v.differences.clone()),
                depth: Some(r.depth),
                moved: vec![o.events.1.clone()],
                delayed: vec![o.events.0.clone()],
                also_at: Vec::new(),
            });
        }
    }
    // Repeats of a race the reorder phase answered (or overturned) above share that answer
    // too.
    for i in 0..recorded {
        if let Some(j) = list[i].repeat_of
            && (list[i].verdict == RaceVerdict::NotExplored || overturned_entries.contains(&j))
            && let Some(of) = list
                .get(j)
                .filter(|o| o.verdict != RaceVerdict::NotExplored)
        {
            let of = of.clone();
            let e = &mut list[i];
            e.verdict = of.verdict;
            e.rule = of.rule;
            e.reason = format!(
                "{} (as race {j}: the same events at another time)",
                of.reason
            );
            e.runs = of.runs;
            e.differences = of.differences;
            e.depth = of.depth;
        }
    }
    Entries { list, recorded }
}

/// Gives `e` the answer of reversal `r` (whose origin is `o`): `verdict` and `reason`, the two
/// executions compared, what differs, the depth and the reversed pair.
fn take_reversal(
    e: &mut Entry,
    r: &RunRecord,
    o: &OriginNote,
    verdict: RaceVerdict,
    reason: String,
) {
    e.verdict = verdict;
    e.reason = reason;
    e.runs = Some(Pair {
        reference: o.parent,
        reordered: r.id,
    });
    e.differences = r.verdict.as_ref().map(|v| v.differences.clone());
    e.depth = Some(r.depth);
    e.moved = vec![o.events.1.clone()];
    e.delayed = vec![o.events.0.clone()];
}

/// Whether `note` is the race `t` at another time: the same location, and each side at the
/// same code position (or, where a side has none, the same event, parse ordinals blanked).
fn same_code_note(t: &Target, note: &crate::steps::RaceNote) -> bool {
    fn side(stable: &str, source: Option<&str>) -> String {
        source.map_or_else(|| naming::blank_parse(stable), str::to_string)
    }
    t.location == note.location
        && t.kind == note.kind
        && side(&t.first.stable, t.first.source.as_deref())
            == side(&note.first.stable, note.first.source.as_deref())
        && side(&t.second.stable, t.second.source.as_deref())
            == side(&note.second.stable, note.second.source.as_deref())
}

/// A race of an execution other than the recording's (a probe's or the reorder phase's run),
/// as a report lists it.
fn found(race: &crate::steps::RaceNote, answer: Answer, steps: (u32, u32)) -> Target {
    Target {
        location: race.location.clone(),
        location_name: race.location.clone(),
        kind: race.kind.clone(),
        first: side(&race.first),
        second: side(&race.second),
        level: String::new(),
        tags: Vec::new(),
        answer,
        steps: Some(steps),
        covered: false,
    }
}

fn side(a: &crate::steps::AccessNote) -> Side {
    Side {
        stable: a.stable.clone(),
        access: a.access.clone(),
        source: a.source.clone(),
        scope: a.scope.clone(),
    }
}

/// The answer to one race of the recording.
fn answer(out: &Outcome, t: &Target) -> Entry {
    let mut e = Entry {
        race: t.clone(),
        verdict: RaceVerdict::NotExplored,
        rule: None,
        reason: String::new(),
        window: None,
        probe: None,
        repeat_of: None,
        runs: None,
        differences: None,
        depth: None,
        moved: Vec::new(),
        delayed: Vec::new(),
        also_at: Vec::new(),
    };
    let unexplored = match &t.answer {
        Answer::RepeatOf { .. } => {
            // Filled in from the race it repeats.
            return e;
        }
        Answer::Probe { id } => {
            let probe = out.triage.probes.get(*id as usize);
            let result = out.probes.get(*id as usize);
            e.probe = Some(*id);
            if let Some(p) = probe {
                e.window = Some(p.window.clone());
                e.moved = p.moved.clone();
                e.delayed = p.delayed.clone();
            }
            match result.map(|r| (&r.outcome, r.reference, r.run)) {
                Some((ProbeOutcome::Judged(s), Some(reference), Some(run))) => {
                    e.verdict = match s.verdict {
                        Judgement::Harmful => RaceVerdict::Harmful,
                        Judgement::Harmless => RaceVerdict::Harmless,
                    };
                    e.rule = Some(s.rule);
                    e.reason = s.reason.clone();
                    e.runs = Some(Pair {
                        reference,
                        reordered: run,
                    });
                    e.differences = Some(s.differences.clone());
                    e.depth = Some(1);
                    if e.verdict == RaceVerdict::Harmful
                        && let Some(w) = &e.window
                    {
                        e.reason = format!("{}; the window: {}", e.reason, w.describe());
                    }
                    return e;
                }
                Some((ProbeOutcome::Unexplored(u), _, _)) => u.clone(),
                _ => Unexplored::NotRun,
            }
        }
        Answer::Unexplored(u) => u.clone(),
    };
    // The reorder phase may have reversed what triage could not.
    if let Some((first, second)) = t.steps
        && let Some(child) = reversal_of(out, 0, first, second)
    {
        let (verdict, reason) = judged(child);
        e.verdict = verdict;
        e.reason = reason;
        e.runs = child.origin.as_ref().map(|o| Pair {
            reference: o.parent,
            reordered: child.id,
        });
        e.differences = child.verdict.as_ref().map(|v| v.differences.clone());
        e.depth = Some(child.depth);
        if let Some(o) = &child.origin {
            e.moved = vec![o.events.1.clone()];
            e.delayed = vec![o.events.0.clone()];
        }
        return e;
    }
    e.reason = unexplored.to_string();
    e
}

fn reversal_of(out: &Outcome, parent: u32, first: u32, second: u32) -> Option<&RunRecord> {
    out.runs.iter().find(|r| {
        r.origin.as_ref().is_some_and(|o| {
            o.kind == Cause::Reversal && o.parent == parent && o.steps == (first, second)
        })
    })
}

/// The verdict of a reordered execution of the reorder phase against its parent, and why.
pub fn judged(r: &RunRecord) -> (RaceVerdict, String) {
    match &r.verdict {
        Some(v) if v.verdict == Judgement::Harmful => (RaceVerdict::Harmful, v.reason.clone()),
        Some(v) => (RaceVerdict::Harmless, v.reason.clone()),
        None => (
            RaceVerdict::NotExplored,
            "no parent to compare with".to_string(),
        ),
    }
}

/// One location's races together: what a developer triages.
#[derive(Clone, Debug)]
pub struct LocationRow {
    /// The trace's location.
    pub location: String,
    /// Its name as the race report gives it.
    pub name: String,
    /// The worst verdict among its races.
    pub verdict: RaceVerdict,
    /// The rule of the race that decided it.
    pub rule: Option<Rule>,
    /// What makes room for its most likely harmful order (or its first probe's).
    pub window: Option<Window>,
    /// Indices of its races in the entries.
    pub races: Vec<usize>,
    /// Of them, harmful.
    pub harmful: usize,
}

/// The entries of the recording's races grouped by location: harmful first, by how likely the
/// bad order is, then harmless, then not explored.
pub fn locations(list: &[Entry]) -> Vec<LocationRow> {
    let mut rows: Vec<LocationRow> = Vec::new();
    for (i, e) in list.iter().enumerate() {
        let row = match rows.iter_mut().find(|r| r.location == e.race.location) {
            Some(r) => r,
            None => {
                rows.push(LocationRow {
                    location: e.race.location.clone(),
                    name: e.race.location_name.clone(),
                    verdict: RaceVerdict::NotExplored,
                    rule: None,
                    window: None,
                    races: Vec::new(),
                    harmful: 0,
                });
                let last = rows.len() - 1;
                &mut rows[last]
            }
        };
        row.races.push(i);
        if e.verdict == RaceVerdict::Harmful {
            row.harmful += 1;
        }
        let better = e.verdict < row.verdict
            || (e.verdict == row.verdict
                && e.window.as_ref().map_or(u8::MAX, Window::rank)
                    < row.window.as_ref().map_or(u8::MAX, Window::rank));
        if better {
            row.verdict = e.verdict;
            row.rule = e.rule;
            row.window = e.window.clone();
        }
    }
    rows.sort_by(|a, b| {
        a.verdict
            .cmp(&b.verdict)
            .then_with(|| {
                a.window
                    .as_ref()
                    .map_or(u8::MAX, Window::rank)
                    .cmp(&b.window.as_ref().map_or(u8::MAX, Window::rank))
            })
            .then_with(|| a.name.cmp(&b.name))
    });
    rows
}

/// Whether an event name is a user's gesture.
pub fn is_user(name: &str) -> bool {
    name.parse::<EventName>().is_ok_and(|n| n.is_user())
}
