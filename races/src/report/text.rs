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
        location(&mut out, group);
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
        out,
        plan.shown.len(),
        batches.len(),
        batching,
        |memo, k, buf: &mut String| {
            let ks = batches.get(k).cloned().unwrap_or_default();
            for mut group in plan.groups_at(trace, an, ks) {
                memo.attach(&mut group, sources);
                location(buf, &group);
            }
            Ok(())
        },
    )?;
    let mut buf = String::new();
    tail(&mut buf, batches.is_empty());
    out.write_all(buf.as_bytes())
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

/// The block of one location (its races, in order).
fn location(out: &mut String, group: &[RaceView]) {
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
        if !race.repaired_by.is_empty() {
            out.push_str("    ordered by policy: ");
            out.push_str(&race.repaired_by.join(", "));
            out.push('\n');
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
