//! Plain-text report: one block per location with races to look at, harmful first.

use super::{
    AccessView, RaceReport, RaceView, ReportPlan, SourceMemo, SourceProvider, group_repeats, reason,
};
use crate::Analysis;
use shepherd_trace::Trace;
use std::fmt::Write;

fn side(a: &AccessView) -> String {
    let mut s = format!("{} in #{} {}", a.access, a.action, a.action_kind);
    if !a.stable.is_empty() {
        let _ = write!(s, " ({})", a.stable);
    }
    if let Some(src) = &a.source {
        let _ = write!(s, " at {src}");
    } else if let Some(scope) = &a.scope_name {
        let _ = write!(s, " in {scope}");
    }
    // The source line itself, when sources are attached (inline code: the document's line).
    if let Some(code) = &a.code
        && let Some(text) = code.hit()
    {
        let _ = write!(s, "\n            {:>5} | {}", code.line, text.trim_end());
        // Only under the access itself (an enclosing scope's position is where its code starts).
        if a.access_source.is_some()
            && let Some(pad) = code.caret_pad()
        {
            let _ = write!(s, "\n                  | {pad}^");
        }
    }
    s
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
/// `plan.into_report(trace, an)` with `sources` attached, building the views of one location
/// at a time (memory follows the largest location, not the whole report).
pub fn write(
    out: &mut dyn std::io::Write,
    trace: &Trace,
    an: &Analysis,
    plan: &ReportPlan,
    sources: &dyn SourceProvider,
) -> std::io::Result<()> {
    let mut memo = SourceMemo::default();
    let mut buf = String::new();
    head(&mut buf, &plan.head);
    let mut empty = true;
    for mut group in plan.groups(trace, an) {
        empty = false;
        memo.attach(&mut group, sources);
        location(&mut buf, &group);
        out.write_all(buf.as_bytes())?;
        buf.clear();
    }
    tail(&mut buf, empty);
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
    let race = &group[0];
    let _ = writeln!(out);
    let marker = if race.harmful { "HARMFUL" } else { race.level };
    let tags = if race.tags.is_empty() {
        String::new()
    } else {
        format!(" [{}]", race.tags.join(", "))
    };
    let _ = writeln!(out, "{marker} {}{tags}", race.location_name);
    // The trace's own name keeps nodes that share a selector apart.
    if race.location_name != race.location {
        let _ = writeln!(out, "  trace location: {}", race.location);
    }
    let _ = writeln!(
        out,
        "  reason: {}",
        reason(&race.tags, race.level == "only-covered")
    );
    let refs: Vec<&RaceView> = group.iter().collect();
    for (k, repeats) in group_repeats(&refs) {
        let race = &group[k];
        let cov = if race.covered {
            match race.covered_by {
                Some(by) => format!(" (covered, {}, by race {by})", race.coverage),
                None => format!(" (covered, {})", race.coverage),
            }
        } else {
            String::new()
        };
        let _ = writeln!(out, "  race {} {}{cov}", race.id, race.kind);
        let _ = writeln!(out, "    first:  {}", side(&race.first));
        let _ = writeln!(out, "    second: {}", side(&race.second));
        if let Some(x) = &race.explored {
            let _ = writeln!(out, "    explored: {} ({})", x.verdict, x.reason);
        }
        if !race.repaired_by.is_empty() {
            let _ = writeln!(
                out,
                "    ordered by policy: {}",
                race.repaired_by.join(", ")
            );
        }
        if !repeats.is_empty() {
            let ids: Vec<String> = repeats.iter().map(|&j| group[j].id.to_string()).collect();
            let _ = writeln!(
                out,
                "    ... and {} more like it (same places, other events): races {}",
                repeats.len(),
                ids.join(", ")
            );
        }
    }
}
