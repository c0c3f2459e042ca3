//! Plain-text report: one block per location with races to look at, harmful first.

use super::stream::{self, Batching};
use super::{AccessView, RaceReport, RaceView, ReportPlan, SourceProvider, group_repeats, reason};
use crate::Analysis;
use shepherd_trace::Trace;
use std::fmt::Write;

/// Appends one side of a race (`WRITE in #12 script (doc/x) at url:3:1`, and the source line
/// when sources are attached). Pieces are pushed rather than formatted: `format!` and
/// `write!` of strings were a third of the text report's instructions.
fn side(out: &mut String, a: &AccessView) {
    out.push_str(a.access);
    out.push_str(" in #");
    let _ = write!(out, "{}", a.action);
    out.push(' ');
    out.push_str(&a.action_kind);
    if !a.stable.is_empty() {
        out.push_str(" (");
        out.push_str(&a.stable);
        out.push(')');
    }
    if let Some(src) = &a.source {
        out.push_str(" at ");
        out.push_str(src);
    } else if let Some(scope) = &a.scope_name {
        out.push_str(" in ");
        out.push_str(scope);
    }
    // The source line itself, when sources are attached (inline code: the document's line).
    if let Some(code) = &a.code
        && let Some(text) = code.hit()
    {
        let _ = write!(out, "\n            {:>5} | ", code.line);
        out.push_str(text.trim_end());
        // Only under the access itself (an enclosing scope's position is where its code starts).
        if a.access_source.is_some()
            && let Some(pad) = code.caret_pad()
        {
            out.push_str("\n                  | ");
            out.push_str(&pad);
            out.push('^');
        }
    }
}

/// Renders the report as text.
pub fn render(r: &RaceReport) -> String {
    let mut out = String::new();
    head(&mut out, r);
    for group in r.races.chunk_by(|x, y| x.location == y.location) {
        location(&mut out, group, None);
    }
    tail(&mut out, r.races.is_empty());
    out
}

/// Writes the text report `plan` plans for `an` to `out` as [`render`] would render
/// `plan.into_report(trace, an)` with `sources` attached, building the views of a few
/// locations at a time (memory follows the batches waiting to be written, not the whole
/// report); large reports render on two threads.
pub fn write(
    out: &mut dyn std::io::Write,
    trace: &Trace,
    an: &Analysis,
    plan: &ReportPlan,
    sources: &(dyn SourceProvider + Sync),
) -> std::io::Result<()> {
    write_batched(out, trace, an, plan, sources, Batching::DEFAULT)
}

/// [`write`], cutting and sharing the work as `batching` says.
pub(crate) fn write_batched(
    out: &mut dyn std::io::Write,
    trace: &Trace,
    an: &Analysis,
    plan: &ReportPlan,
    sources: &(dyn SourceProvider + Sync),
    batching: Batching,
) -> std::io::Result<()> {
    let mut buf = String::new();
    head(&mut buf, &plan.head);
    out.write_all(buf.as_bytes())?;
    let batches = plan.batches(an, batching.races);
    stream::write_in_order(
        &mut stream::Plain(&mut *out),
        plan.shown.len(),
        batches.len(),
        batching,
        |memo, k, buf: &mut String| {
            let ks = batches.get(k).cloned().unwrap_or_default();
            for mut group in plan.groups_at(trace, an, ks) {
                memo.attach(&mut group, sources);
                location(buf, &group, None);
            }
            Ok(())
        },
    )?;
    let mut buf = String::new();
    tail(&mut buf, batches.is_empty());
    out.write_all(buf.as_bytes())
}

/// Repair-policy marks still being worked out when a report starts ([`write_marks_later`]).
pub trait PendingMarks {
    /// Whether [`PendingMarks::take`] would return at once.
    fn is_ready(&self) -> bool;
    /// For each race shown (in the order of [`ReportPlan::action_pairs`]) the policies that
    /// order it, and the policies not worked out; waits until they are worked out.
    fn take(&mut self) -> (Vec<Vec<String>>, Vec<String>);
}

/// [`write`] for a plan whose repair-policy marks are still being worked out (on other
/// threads): the report is rendered meanwhile, without them, up to
/// [`Batching::ahead`](stream::Batching) bytes, and written once `marks` has them, each
/// race's `ordered by policy` line put where it belongs. The plan's own marks are ignored.
pub fn write_marks_later(
    out: &mut dyn std::io::Write,
    trace: &Trace,
    an: &Analysis,
    plan: &ReportPlan,
    sources: &(dyn SourceProvider + Sync),
    marks: &mut dyn PendingMarks,
) -> std::io::Result<()> {
    write_marks_later_batched(out, trace, an, plan, sources, marks, Batching::DEFAULT)
}

/// [`write_marks_later`], cutting and sharing the work as `batching` says.
pub(crate) fn write_marks_later_batched(
    out: &mut dyn std::io::Write,
    trace: &Trace,
    an: &Analysis,
    plan: &ReportPlan,
    sources: &(dyn SourceProvider + Sync),
    marks: &mut dyn PendingMarks,
    batching: Batching,
) -> std::io::Result<()> {
    let batches = plan.batches(an, batching.races);
    let mut sink = Spliced {
        out: &mut *out,
        head: &plan.head,
        marks,
        by: None,
    };
    stream::write_in_order(
        &mut sink,
        plan.shown.len(),
        batches.len(),
        batching,
        |memo, k, buf: &mut Holed| {
            let ks = batches.get(k).cloned().unwrap_or_default();
            let mut at = ks.start;
            for mut group in plan.groups_at(trace, an, ks) {
                memo.attach(&mut group, sources);
                location(&mut buf.text, &group, Some((&mut buf.holes, at)));
                at += group.len();
            }
            Ok(())
        },
    )?;
    // A report without races was never opened by a batch.
    stream::Sink::<Holed>::wait_open(&mut sink)?;
    let mut buf = String::new();
    tail(&mut buf, batches.is_empty());
    out.write_all(buf.as_bytes())
}

/// A batch of the text report rendered without its repair-policy lines, and where each
/// would go.
#[derive(Default)]
pub(crate) struct Holed {
    text: String,
    /// (byte offset in `text`, position of the race among those shown), in order.
    holes: Vec<(usize, usize)>,
}

impl AsRef<[u8]> for Holed {
    fn as_ref(&self) -> &[u8] {
        self.text.as_bytes()
    }
}

impl stream::Batch for Holed {
    fn clear(&mut self) {
        self.text.clear();
        self.holes.clear();
    }
}

/// Writes [`Holed`] batches once the marks are there: the summary first (it names the
/// policies not worked out), then each batch with its races' `ordered by policy` lines.
struct Spliced<'o, 'm> {
    out: &'o mut dyn std::io::Write,
    head: &'o RaceReport,
    marks: &'m mut dyn PendingMarks,
    /// The marks of the races shown, once taken (the summary is written then).
    by: Option<Vec<Vec<String>>>,
}

impl stream::Sink<Holed> for Spliced<'_, '_> {
    fn open(&mut self) -> bool {
        self.by.is_some() || self.marks.is_ready()
    }

    fn wait_open(&mut self) -> std::io::Result<()> {
        if self.by.is_some() {
            return Ok(());
        }
        let (by, undecided) = self.marks.take();
        let mut summary = self.head.clone();
        summary.summary.policies_undecided = undecided;
        let mut buf = String::new();
        head(&mut buf, &summary);
        self.by = Some(by);
        self.out.write_all(buf.as_bytes())
    }

    fn write(&mut self, b: &Holed) -> std::io::Result<()> {
        self.wait_open()?;
        let by = self.by.as_deref().unwrap_or_default();
        let mut from = 0;
        let mut line = String::new();
        for &(at, k) in &b.holes {
            let Some(names) = by.get(k).filter(|n| !n.is_empty()) else {
                continue;
            };
            self.out.write_all(&b.text.as_bytes()[from..at])?;
            line.clear();
            marks_line(&mut line, names);
            self.out.write_all(line.as_bytes())?;
            from = at;
        }
        self.out.write_all(&b.text.as_bytes()[from..])
    }
}

/// A race's `ordered by policy` line.
fn marks_line(out: &mut String, names: &[String]) {
    out.push_str("    ordered by policy: ");
    out.push_str(&names.join(", "));
    out.push('\n');
}

/// The summary lines.
fn head(out: &mut String, r: &RaceReport) {
    let s = &r.summary;
    let _ = writeln!(
        out,
        "{}: {} actions, {} arcs, {} chains; {} races, {} uncovered",
        r.trace.page.as_deref().unwrap_or("trace"),
        r.trace.actions,
        r.trace.arcs,
        r.trace.chains,
        s.races,
        s.uncovered
    );
    let l = &s.locations;
    let _ = writeln!(
        out,
        "locations: {} harmful, {} uncovered, {} filtered, {} only covered, {} without races",
        l.harmful,
        l.uncovered,
        l.filtered,
        l.only_covered,
        l.no_races + l.too_few_accesses
    );
    if let Some(e) = &s.exercised {
        let _ = write!(out, "exercised: {} of {} controls", e.exercised, e.controls);
        if !e.missed.is_empty() {
            const SHOWN: usize = 8;
            let names: Vec<&str> = e
                .missed
                .iter()
                .take(SHOWN)
                .map(|m| m.name.as_str())
                .collect();
            let _ = write!(
                out,
                "; never exercised (their races are not in the trace): {}",
                names.join(", ")
            );
            if e.missed.len() > SHOWN {
                let _ = write!(out, " and {} more", e.missed.len() - SHOWN);
            }
        }
        out.push('\n');
    }
    if !s.policies_undecided.is_empty() {
        let _ = writeln!(
            out,
            "repair policies not worked out (trace too long for the budget; `shepherd policy \
             covers --policy NAME` has none): {}",
            s.policies_undecided.join(", ")
        );
    }
}

fn tail(out: &mut String, no_races: bool) {
    if no_races {
        let _ = writeln!(out, "\nno uncovered races");
    }
}

/// The block of one location (its races, in order). With `holes` (the list and the position
/// of the group's first race among those shown), each race's `ordered by policy` line is not
/// written but its place recorded ([`write_marks_later`]).
fn location(
    out: &mut String,
    group: &[RaceView],
    mut holes: Option<(&mut Vec<(usize, usize)>, usize)>,
) {
    // Repeats of a race (see `group_repeats`) are listed once, with their ids, so the report
    // stays readable after long explorations.
    let Some(race) = group.first() else {
        return;
    };
    out.push('\n');
    out.push_str(if race.harmful { "HARMFUL" } else { race.level });
    out.push(' ');
    out.push_str(&race.location_name);
    if !race.tags.is_empty() {
        out.push_str(" [");
        out.push_str(&race.tags.join(", "));
        out.push(']');
    }
    out.push('\n');
    // The trace's own name keeps nodes that share a selector apart.
    if race.location_name != race.location {
        out.push_str("  trace location: ");
        out.push_str(&race.location);
        out.push('\n');
    }
    out.push_str("  reason: ");
    out.push_str(&reason(&race.tags, race.level == "only-covered"));
    out.push('\n');
    let refs: Vec<&RaceView> = group.iter().collect();
    for (k, repeats) in group_repeats(&refs) {
        let race = &group[k];
        let _ = write!(out, "  race {} ", race.id);
        out.push_str(&race.kind);
        if race.covered {
            out.push_str(" (covered, ");
            out.push_str(race.coverage);
            if let Some(by) = race.covered_by {
                let _ = write!(out, ", by race {by}");
            }
            out.push(')');
        }
        out.push_str("\n    first:  ");
        side(out, &race.first);
        out.push_str("\n    second: ");
        side(out, &race.second);
        out.push('\n');
        if let Some(x) = &race.explored {
            out.push_str("    explored: ");
            out.push_str(&x.verdict);
            out.push_str(" (");
            out.push_str(&x.reason);
            out.push_str(")\n");
        }
        match &mut holes {
            Some((list, first)) => list.push((out.len(), *first + k)),
            None if !race.repaired_by.is_empty() => marks_line(out, &race.repaired_by),
            None => {}
        }
        if !repeats.is_empty() {
            let _ = write!(
                out,
                "    ... and {} more like it (same places, other events): races ",
                repeats.len()
            );
            for (n, &j) in repeats.iter().enumerate() {
                if n > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{}", group[j].id);
            }
            out.push('\n');
        }
    }
}
