//! Reports: a view model of the analysis ([`RaceReport`]) and three renderings — text for
//! people, JSON for tools (`docs/races-json.md`), one self-contained HTML page.

pub mod html;
pub mod json;
pub mod names;
pub mod sources;
mod stream;
pub mod text;

use crate::Analysis;
use crate::accesses::Access;
use crate::clocks::{ClockBuilder, Clocks};
use crate::filters::{self, Level, Tag};
pub use names::{NodeNames, NodeView};
use serde::Serialize;
use shepherd_trace::{ActionType, Op, Trace};
pub use sources::{
    CodeKind, InlineCode, InlineFinder, NoSources, PageSources, Snippet, SourceLine, SourceProvider,
};
use std::collections::HashMap;
use std::ops::Range;

/// Version of the JSON schema (`docs/races-json.md`).
pub const JSON_VERSION: u32 = 1;

/// One side of a race.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct AccessView {
    /// Action id (dense, execution order).
    pub action: u32,
    /// The action's stable identity.
    pub stable: String,
    /// EventRacer action type: `unknown`, `timer`, `ui`, `network`, `continuation`.
    #[serde(rename = "type")]
    pub ty: &'static str,
    /// The action's finer kind (`script`, `event`, …).
    pub action_kind: String,
    /// `READ`, `WRITE` or `UPDATE`.
    pub access: &'static str,
    /// Source position `url:line:col` of the access itself when the trace has it, else of the
    /// innermost scope that has one.
    pub source: Option<String>,
    /// The access's own position (instrumented code; trace format 2).
    pub access_source: Option<String>,
    /// Position of the innermost scope that has one.
    pub scope_source: Option<String>,
    /// Innermost scope label (`fire:click @ BUTTON[7]`, `script:inline #0`, …).
    pub scope: Option<String>,
    /// The scope label with its event target named (`fire:click @ input#coupon`); the label
    /// itself when it names no described node.
    pub scope_name: Option<String>,
    /// Value summary read or written, when logged.
    pub value: Option<String>,
    /// The source lines at `source`, when sources were attached
    /// ([`RaceReport::attach_sources`]) and know the file.
    pub code: Option<Snippet>,
}

/// One race as reported.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct RaceView {
    /// Index of the race in the analysis (stable for one trace).
    pub id: usize,
    /// Location name (verbatim from the trace).
    pub location: String,
    /// The location as a developer finds it (`input#coupon.value`); `location` itself when
    /// it names no described node ([`names`]).
    pub location_name: String,
    /// The DOM node the location belongs to, when the trace described it.
    pub node: Option<NodeView>,
    /// `WRITE-READ`, `READ-UPDATE`, …
    pub kind: String,
    /// Covered (Def. 3.2).
    pub covered: bool,
    /// `uncovered`, `single` (Def. 3.1) or `multi` (Def. 3.2 only); `covered` when single
    /// coverage was not computed.
    pub coverage: &'static str,
    /// For a covered race: an uncovered race that starts a covering chain (display only).
    pub covered_by: Option<usize>,
    /// The location's filter tags.
    pub tags: Vec<&'static str>,
    /// The location has a harmful marker.
    pub harmful: bool,
    /// The location's level (`harmful`, `uncovered`, `filtered`, `only-covered`).
    pub level: &'static str,
    /// Earlier access.
    pub first: AccessView,
    /// Later access.
    pub second: AccessView,
    /// The explorer's verdict on this race, when merged in ([`RaceReport::attach_explored`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explored: Option<Explored>,
    /// Repair policies that order the two accesses' actions (`shepherd-policies`' augmented
    /// happens-before); filled in by the caller, empty when not asked. Not serialized empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub repaired_by: Vec<String>,
}

/// What `shepherd explore` found out about a race (docs/explore-json.md).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Explored {
    /// `harmful`, `harmless` or `not-explored`.
    pub verdict: String,
    /// Why.
    pub reason: String,
    /// The explored sequence that reversed it, if one did.
    pub sequence: Option<u64>,
}

/// Groups the races of one location so that a race repeating an earlier one (same kind,
/// coverage, and source positions — or scopes — of both sides: the explorer clicking one
/// button again) is listed under it. Returns `(index of the shown race, indices of its
/// repeats)` in order; races with neither positions nor scopes are never grouped.
pub fn group_repeats(races: &[&RaceView]) -> Vec<(usize, Vec<usize>)> {
    fn place(a: &AccessView) -> Option<&str> {
        a.source.as_deref().or(a.scope.as_deref())
    }
    let mut shown: Vec<(usize, Vec<usize>)> = Vec::new();
    for (k, r) in races.iter().enumerate() {
        let key = (place(&r.first), place(&r.second));
        let same = |j: usize| {
            let x = races[j];
            x.kind == r.kind && x.covered == r.covered && (place(&x.first), place(&x.second)) == key
        };
        match shown
            .iter_mut()
            .find(|(j, _)| key.0.is_some() && key.1.is_some() && same(*j))
        {
            Some((_, repeats)) => repeats.push(k),
            None => shown.push((k, Vec::new())),
        }
    }
    shown
}

/// The report view model.
#[derive(Clone, Debug, Serialize)]
pub struct RaceReport {
    /// Schema version.
    pub version: u32,
    /// What was analysed.
    pub trace: TraceSummary,
    /// Counts.
    pub summary: Summary,
    /// Races, harmful locations first, then unfiltered, then filtered; covered races only
    /// when asked for.
    pub races: Vec<RaceView>,
}

/// What was analysed.
#[derive(Clone, Debug, Serialize)]
pub struct TraceSummary {
    /// Page URL from the header.
    pub page: Option<String>,
    /// Number of actions.
    pub actions: usize,
    /// Number of happens-before arcs (logged and derived).
    pub arcs: usize,
    /// Number of chains in the decomposition.
    pub chains: usize,
}

/// Counts.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Candidate races.
    pub races: usize,
    /// Uncovered races.
    pub uncovered: usize,
    /// Locations per level (EventRacer's filter levels 0–5).
    pub locations: LevelCounts,
    /// Locations per tag (among those with uncovered races).
    pub tags: Vec<(String, usize)>,
    /// Shipped repair policies whose orderings were not worked out (the trace was too long
    /// for the simulation's budget): races do not say whether these order them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub policies_undecided: Vec<String>,
    /// What a tool exercising the page reached (the trace's controls), when one reported it:
    /// the races of controls it never exercised are not in the trace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exercised: Option<Exercised>,
}

/// The coverage of the recording's exercise (trace format 4, `docs/trace-format.md`).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Exercised {
    /// Controls found (visible and enabled at some point).
    pub controls: usize,
    /// Controls that got at least one gesture.
    pub exercised: usize,
    /// The controls that got none, in the trace's order.
    pub missed: Vec<MissedControl>,
}

/// A control the exercise found but never acted on.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct MissedControl {
    /// How reports name it (its selector), or `DOMNode[N]` when the trace did not describe it.
    pub name: String,
    /// The node, when described.
    pub node: Option<NodeView>,
    /// The gestures it would have got.
    pub gestures: Vec<String>,
}

impl Exercised {
    /// The coverage `trace` carries, when a tool reported any control.
    pub fn of(trace: &Trace, nodes: &NodeNames) -> Option<Exercised> {
        if trace.controls.is_empty() {
            return None;
        }
        let names = |id: shepherd_trace::StrId| -> Vec<String> {
            trace
                .strings
                .get(id)
                .split(',')
                .filter(|g| !g.is_empty())
                .map(str::to_string)
                .collect()
        };
        let mut exercised = 0;
        let mut missed = Vec::new();
        for c in &trace.controls {
            if !trace.strings.get(c.done).is_empty() {
                exercised += 1;
                continue;
            }
            let node = nodes.node(c.node).cloned();
            missed.push(MissedControl {
                name: node
                    .as_ref()
                    .map_or_else(|| format!("DOMNode[{}]", c.node), |n| n.name.clone()),
                node,
                gestures: names(c.offered),
            });
        }
        Some(Exercised {
            controls: trace.controls.len(),
            exercised,
            missed,
        })
    }
}

/// Locations per level.
#[derive(Clone, Debug, Serialize, Default)]
pub struct LevelCounts {
    /// 5: harmful marker.
    pub harmful: usize,
    /// 4: uncovered, no tag.
    pub uncovered: usize,
    /// 3: uncovered, explained by a harmless tag.
    pub filtered: usize,
    /// 2: only covered races.
    pub only_covered: usize,
    /// 1: accesses that could race but none do.
    pub no_races: usize,
    /// 0: fewer than two accesses or no write.
    pub too_few_accesses: usize,
}

fn type_name(t: ActionType) -> &'static str {
    match t {
        ActionType::Unknown => "unknown",
        ActionType::Timer => "timer",
        ActionType::UserInterface => "ui",
        ActionType::Network => "network",
        ActionType::Continuation => "continuation",
    }
}

/// Source position and innermost scope label of an access.
pub fn access_context(trace: &Trace, x: &Access) -> (Option<String>, Option<String>) {
    let ops = trace
        .actions
        .get(x.action as usize)
        .and_then(|a| {
            trace
                .ops
                .get(a.ops.start as usize..x.op.min(a.ops.end) as usize)
        })
        .unwrap_or(&[]);
    // Walked backwards from the access, the scopes still open are the `Enter`s that no later
    // `Exit` closes, innermost first: the walk stops at the first one with a position, usually
    // a few operations back, where the forward walk replayed the action's whole prefix on an
    // allocated stack (a quarter of the text report's time). An `Exit` with nothing open is
    // ignored either way.
    let (mut scope, mut src) = (None, None);
    let mut closed = 0usize;
    for o in ops.iter().rev() {
        match o {
            Op::Exit => closed += 1,
            Op::Enter { .. } if closed > 0 => closed -= 1,
            Op::Enter { scope: l, src: s } => {
                scope.get_or_insert(*l);
                if s.is_some() {
                    src = *s;
                    break;
                }
            }
            _ => {}
        }
    }
    let text = |s| trace.strings.get(s).to_owned();
    (src.map(text), scope.map(text))
}

/// The access's own source position (`url:line:col`), when the trace logged one.
pub fn access_position(trace: &Trace, x: &Access) -> Option<String> {
    let op = trace.ops.get(x.op as usize)?;
    op.pos().map(|p| trace.strings.get(p).to_owned())
}

fn access_view(trace: &Trace, names: &NodeNames, x: &Access) -> AccessView {
    let a = trace.actions.get(x.action as usize);
    let (scope_source, scope) = access_context(trace, x);
    let scope_name = scope
        .as_deref()
        .map(|l| names.label(l).unwrap_or_else(|| l.to_owned()));
    let access_source = access_position(trace, x);
    AccessView {
        action: x.action,
        stable: a
            .map(|a| trace.strings.get(a.stable).to_owned())
            .unwrap_or_default(),
        ty: a.map(|a| type_name(a.ty)).unwrap_or("unknown"),
        action_kind: a
            .map(|a| trace.strings.get(a.kind).to_owned())
            .unwrap_or_default(),
        access: x.kind.name(),
        source: access_source.clone().or_else(|| scope_source.clone()),
        access_source,
        scope_source,
        scope,
        scope_name,
        value: filters::value_of(trace, x).map(str::to_owned),
        code: None,
    }
}

/// Most clock entries (actions × chains) spent on covering witnesses, which need every clock
/// (about 100 MB); beyond that `covered_by` stays empty.
const WITNESS_LIMIT: usize = 50_000_000;

/// Clocks of the final graph, for witness queries on report-sized traces.
fn retained_clocks(an: &Analysis) -> Clocks {
    let n = an.graph.nodes();
    let mut b = ClockBuilder::new(n as usize);
    for v in 0..n {
        for p in an.graph.preds(v) {
            b.join_node(p);
        }
        b.finish_greedy();
    }
    b.build()
}

/// For each covered race shown, an uncovered race that covers it alone (Def. 3.1 at action
/// level) or, failing that, one that starts a covering chain (`ev(a) ⪯ ev(c)`).
fn witnesses(an: &Analysis, shown: &[usize]) -> HashMap<usize, usize> {
    let mut out = HashMap::new();
    let cov: Vec<usize> = shown.iter().copied().filter(|&i| an.covered[i]).collect();
    if cov.is_empty() || an.graph.nodes() as usize * an.chains.chains().max(1) > WITNESS_LIMIT {
        return out;
    }
    let clocks = retained_clocks(an);
    let acc = &an.accesses;
    let unc: Vec<usize> = an.uncovered().collect();
    for i in cov {
        let r = &an.races[i];
        let (a, b) = (acc.get(r.first), acc.get(r.second));
        let starts = |s: usize| clocks.ordered(a.action, acc.get(an.races[s].first).action);
        let ends = |s: usize| {
            let d = acc.get(an.races[s].second);
            if d.action == b.action {
                d.op < b.op
            } else {
                clocks.ordered(d.action, b.action)
            }
        };
        if let Some(&s) = unc
            .iter()
            .find(|&&s| starts(s) && ends(s))
            .or_else(|| unc.iter().find(|&&s| starts(s)))
        {
            out.insert(i, s);
        }
    }
    out
}

/// A report before its races are rendered: the counts, and which races to show in which
/// order. [`RaceReport::new`] turns every race into a [`RaceView`] at once; the CLI's text and
/// JSON reports ([`text::write`], [`json::write`]) take them a batch of whole locations at a
/// time, so a trace with tens of thousands of uncovered races never holds all their views.
#[derive(Debug)]
pub struct ReportPlan {
    /// The report without races.
    pub head: RaceReport,
    /// Indices of the races to show, in order.
    shown: Vec<usize>,
    /// Names of the locations shown.
    names: HashMap<u32, String>,
    /// Covering witnesses of covered races shown.
    witnesses: HashMap<usize, usize>,
    /// The trace's node descriptions, to name DOM locations.
    nodes: NodeNames,
    /// Per race shown (same order): the repair policies that order it; empty until
    /// [`ReportPlan::set_repaired_by`].
    repaired_by: Vec<Vec<String>>,
    /// The explorer's verdicts by position among the races shown (only races that have one);
    /// empty until [`ReportPlan::attach_explored`].
    explored: HashMap<usize, Explored>,
}

impl ReportPlan {
    /// Plans the report. `all` includes covered races.
    pub fn new(trace: &Trace, an: &Analysis, all: bool) -> ReportPlan {
        let acc = &an.accesses;
        let mut levels = LevelCounts::default();
        let mut tag_counts: HashMap<Tag, usize> = HashMap::new();
        for t in &an.tags {
            match t.level() {
                Level::Harmful => levels.harmful += 1,
                Level::Uncovered => levels.uncovered += 1,
                Level::Filtered => levels.filtered += 1,
                Level::OnlyCovered => levels.only_covered += 1,
                Level::NoRaces => levels.no_races += 1,
                Level::TooFewAccesses => levels.too_few_accesses += 1,
            }
            for tag in t.iter() {
                *tag_counts.entry(tag).or_default() += 1;
            }
        }
        let shown: Vec<usize> = (0..an.races.len())
            .filter(|&i| all || !an.covered[i])
            .collect();
        // Each location's name once (not once per race: most locations show several).
        let mut names: HashMap<u32, String> = HashMap::new();
        let mut named = vec![false; acc.locs.len()];
        for &i in &shown {
            let l = an.races[i].loc;
            match named.get_mut(l as usize) {
                Some(true) => {}
                Some(done) => {
                    *done = true;
                    names.insert(l, acc.locs.name(trace, l));
                }
                None => {
                    names.entry(l).or_insert_with(|| acc.locs.name(trace, l));
                }
            }
        }
        drop(named);
        // Order: level (highest first), location name, race index. The locations are ranked
        // once (equal level and name, equal rank), then the races sorted by rank: comparing
        // the races by name through two hash lookups each was 6 % of a wide page's run. The
        // locations are sorted with their names at hand (looking both up in each comparison
        // was half of planning a wide page's report).
        let level = |l: u32| std::cmp::Reverse(an.tags[l as usize].level());
        let mut by_name: Vec<(std::cmp::Reverse<Level>, &str, u32)> = names
            .iter()
            .map(|(&l, name)| (level(l), name.as_str(), l))
            .collect();
        by_name.sort_unstable();
        let mut rank = vec![0u32; acc.locs.len()];
        let mut r = 0u32;
        for (k, &(lv, name, l)) in by_name.iter().enumerate() {
            if k > 0 && (by_name[k - 1].0, by_name[k - 1].1) != (lv, name) {
                r += 1;
            }
            if let Some(slot) = rank.get_mut(l as usize) {
                *slot = r;
            }
        }
        drop(by_name);
        let rank_of = |x: usize| rank.get(an.races[x].loc as usize).copied().unwrap_or(0);
        let mut keyed: Vec<(u32, usize)> = shown.iter().map(|&x| (rank_of(x), x)).collect();
        keyed.sort_unstable();
        let shown: Vec<usize> = keyed.into_iter().map(|(_, x)| x).collect();
        let nodes = NodeNames::new(trace);
        let witnesses = if all {
            witnesses(an, &shown)
        } else {
            HashMap::new()
        };
        let mut tags: Vec<(String, usize)> = Tag::ALL
            .iter()
            .filter_map(|t| tag_counts.get(t).map(|&c| (t.name().to_owned(), c)))
            .collect();
        tags.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let head = RaceReport {
            version: JSON_VERSION,
            trace: TraceSummary {
                page: trace.header.page.clone(),
                actions: trace.actions.len(),
                arcs: an.graph.arcs().len(),
                chains: an.chains.chains(),
            },
            summary: Summary {
                races: an.races.len(),
                uncovered: an.uncovered().count(),
                locations: levels,
                tags,
                policies_undecided: Vec::new(),
                exercised: Exercised::of(trace, &nodes),
            },
            races: Vec::new(),
        };
        ReportPlan {
            head,
            shown,
            names,
            witnesses,
            nodes,
            repaired_by: Vec::new(),
            explored: HashMap::new(),
        }
    }

    /// The first and second access's actions of each race shown, in order.
    pub fn action_pairs(&self, an: &Analysis) -> Vec<(u32, u32)> {
        let acc = &an.accesses;
        self.shown
            .iter()
            .map(|&i| {
                let r = &an.races[i];
                (acc.get(r.first).action, acc.get(r.second).action)
            })
            .collect()
    }

    /// Sets each shown race's repairing policies (in the order of [`ReportPlan::action_pairs`])
    /// and the policies not worked out.
    pub fn set_repaired_by(&mut self, by: Vec<Vec<String>>, undecided: Vec<String>) {
        self.repaired_by = by;
        self.head.summary.policies_undecided = undecided;
    }

    /// Merges the explorer's verdicts as [`RaceReport::attach_explored`] does: `lookup`
    /// answers for each race shown, given its view (built one at a time, not kept).
    pub fn attach_explored(
        &mut self,
        trace: &Trace,
        an: &Analysis,
        lookup: impl Fn(&RaceView) -> Option<Explored>,
    ) {
        let found = (0..self.shown.len())
            .filter_map(|k| lookup(&self.view(trace, an, k)).map(|x| (k, x)))
            .collect();
        self.explored = found;
    }

    /// The view of the `k`th race shown.
    fn view(&self, trace: &Trace, an: &Analysis, k: usize) -> RaceView {
        let i = self.shown[k];
        let acc = &an.accesses;
        let r = &an.races[i];
        let t = &an.tags[r.loc as usize];
        let coverage = if !an.covered[i] {
            "uncovered"
        } else {
            match &an.single {
                Some(s) if s[i] => "single",
                Some(_) => "multi",
                None => "covered",
            }
        };
        let location = self.names[&r.loc].clone();
        let (location_name, node) = match self.nodes.location(&location) {
            Some((name, node)) => (name, node.cloned()),
            None => (location.clone(), None),
        };
        RaceView {
            id: i,
            location,
            location_name,
            node,
            kind: crate::races::kind_name(acc, r),
            covered: an.covered[i],
            coverage,
            covered_by: self.witnesses.get(&i).copied(),
            tags: t.iter().map(Tag::name).collect(),
            harmful: t.harmful(),
            level: t.level().name(),
            first: access_view(trace, &self.nodes, acc.get(r.first)),
            second: access_view(trace, &self.nodes, acc.get(r.second)),
            explored: self.explored.get(&k).cloned(),
            repaired_by: self.repaired_by.get(k).cloned().unwrap_or_default(),
        }
    }

    /// The races shown, one location at a time, in order.
    pub fn groups<'a>(
        &'a self,
        trace: &'a Trace,
        an: &'a Analysis,
    ) -> impl Iterator<Item = Vec<RaceView>> + 'a {
        self.groups_at(trace, an, 0..self.shown.len())
    }

    /// The races shown at positions `ks`, one location at a time (`ks` should start and end
    /// between locations, as [`ReportPlan::batches`] cuts them).
    fn groups_at<'a>(
        &'a self,
        trace: &'a Trace,
        an: &'a Analysis,
        ks: Range<usize>,
    ) -> impl Iterator<Item = Vec<RaceView>> + 'a {
        let mut start = ks.start;
        self.shown
            .get(ks)
            .unwrap_or(&[])
            .chunk_by(move |&x, &y| an.races[x].loc == an.races[y].loc)
            .map(move |ids| {
                let ks = start..start + ids.len();
                start = ks.end;
                ks.map(|k| self.view(trace, an, k)).collect()
            })
    }

    /// The positions of the races shown cut between locations into runs of at least `races`
    /// races (the last may have fewer), in order: the streamed reports' batches.
    fn batches(&self, an: &Analysis, races: usize) -> Vec<Range<usize>> {
        let mut out = Vec::new();
        let mut start = 0;
        let mut end = 0;
        for ids in self
            .shown
            .chunk_by(|&x, &y| an.races[x].loc == an.races[y].loc)
        {
            end += ids.len();
            if end - start >= races {
                out.push(start..end);
                start = end;
            }
        }
        if end > start {
            out.push(start..end);
        }
        out
    }

    /// The whole report.
    pub fn into_report(self, trace: &Trace, an: &Analysis) -> RaceReport {
        let races = (0..self.shown.len())
            .map(|k| self.view(trace, an, k))
            .collect();
        RaceReport { races, ..self.head }
    }
}

impl RaceReport {
    /// Builds the report. `all` includes covered races.
    pub fn new(trace: &Trace, an: &Analysis, all: bool) -> RaceReport {
        ReportPlan::new(trace, an, all).into_report(trace, an)
    }

    /// Fills each access's `code` with the source lines at its position.
    pub fn attach_sources(&mut self, sources: &dyn SourceProvider) {
        SourceMemo::default().attach(&mut self.races, sources);
    }

    /// Merges the explorer's verdicts: `lookup` answers for a race (matched by location and
    /// the stable ids of its two actions).
    pub fn attach_explored(&mut self, lookup: impl Fn(&RaceView) -> Option<Explored>) {
        for r in &mut self.races {
            r.explored = lookup(r);
        }
    }
}

/// Source lines already looked up, by position (one lookup per position however many races
/// show it).
#[derive(Debug, Default)]
pub struct SourceMemo {
    memo: HashMap<String, Option<Snippet>>,
}

impl SourceMemo {
    /// Fills each access's `code` with the source lines at its position.
    pub fn attach(&mut self, races: &mut [RaceView], sources: &dyn SourceProvider) {
        for r in races {
            for a in [&mut r.first, &mut r.second] {
                if let Some(pos) = &a.source {
                    a.code = self
                        .memo
                        .entry(pos.clone())
                        .or_insert_with(|| sources.snippet(pos))
                        .clone();
                }
            }
        }
    }
}

/// The one-line reason shown for a location.
pub fn reason(tags: &[&str], covered: bool) -> String {
    let named: Vec<&'static str> = Tag::ALL
        .iter()
        .filter(|t| tags.contains(&t.name()))
        .map(|t| t.reason())
        .collect();
    if !named.is_empty() {
        named.join("; ")
    } else if covered {
        "covered: ordered by another race treated as synchronisation".to_owned()
    } else {
        "uncovered race: both orders are possible (EventRacer Thm. 3.6)".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accesses::AccessKind;
    use proptest::prelude::*;
    use shepherd_trace::{ActionType, TraceBuilder};

    /// The definition: replay the action's operations up to the access on a stack of open
    /// scopes (an `Exit` with nothing open does nothing).
    fn replayed(trace: &Trace, x: &Access) -> (Option<String>, Option<String>) {
        let mut stack: Vec<(u32, Option<u32>)> = Vec::new();
        if let Some(a) = trace.actions.get(x.action as usize) {
            let end = x.op.min(a.ops.end);
            for o in trace
                .ops
                .get(a.ops.start as usize..end as usize)
                .unwrap_or(&[])
            {
                match o {
                    Op::Enter { scope, src } => stack.push((*scope, *src)),
                    Op::Exit => {
                        stack.pop();
                    }
                    _ => {}
                }
            }
        }
        let src = stack
            .iter()
            .rev()
            .find_map(|(_, s)| s.map(|s| trace.strings.get(s).to_owned()));
        let scope = stack.last().map(|(l, _)| trace.strings.get(*l).to_owned());
        (src, scope)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        /// The backward walk finds what replaying the action finds, at every operation of
        /// random actions (unbalanced exits included) and past their ends.
        #[test]
        fn access_context_is_the_replayed_stack(
            actions in prop::collection::vec(prop::collection::vec(0u8..6, 0..24), 1..4)
        ) {
            let mut b = TraceBuilder::new();
            for (i, ops) in actions.iter().enumerate() {
                b.begin(ActionType::Unknown, "a", &format!("a{i}"));
                for (k, &o) in ops.iter().enumerate() {
                    match o {
                        0 => b.enter(&format!("s{k}"), None),
                        1 => b.enter(&format!("s{k}"), Some(&format!("u:{k}:1"))),
                        2 | 3 => b.exit(),
                        _ => b.read("Global.x", None),
                    };
                }
                b.end();
            }
            let trace = b.finish();
            for (action, a) in trace.actions.iter().enumerate() {
                for op in a.ops.start..=a.ops.end + 1 {
                    let x = Access { op, action: action as u32, loc: 0, kind: AccessKind::Read };
                    prop_assert_eq!(access_context(&trace, &x), replayed(&trace, &x), "{} {}", action, op);
                }
            }
        }
    }
}
