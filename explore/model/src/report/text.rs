//! The terminal's summary of an exploration: a line per location, harmful first (the most
//! likely bad orders first), with the rule, the window and the witness in a few words.

use super::entries::RaceVerdict;
use super::json::{ExploreReport, rule_name};
use std::fmt::Write as _;

/// The summary of `doc`.
pub fn render(doc: &ExploreReport) -> String {
    let mut o = String::new();
    let s = &doc.summary;
    let _ = writeln!(
        o,
        "{}{}: {} uncovered races, {} harmful, {} harmless{}, {} not explored{} ({} executions, {} probes, {:.1} s{})",
        doc.page,
        doc.policy
            .as_deref()
            .map(|p| format!(" under {p}"))
            .unwrap_or_default(),
        s.races,
        s.harmful,
        s.harmless,
        if s.invisible > 0 {
            format!(" ({} only in DOM the user does not see)", s.invisible)
        } else {
            String::new()
        },
        s.not_explored,
        super::html::covered_note(s.covered_harmful),
        doc.sequences,
        doc.probes,
        doc.elapsed_s,
        if doc.complete {
            ""
        } else {
            "; stopped by the budget: run again to resume"
        },
    );
    for l in &doc.locations {
        let _ = write!(
            o,
            "\n{:<12} {} ({} pair{}",
            l.verdict.as_str().to_uppercase(),
            l.name,
            l.pairs,
            if l.pairs == 1 { "" } else { "s" }
        );
        if l.harmful > 0 && l.harmful < l.pairs {
            let _ = write!(o, ", {} harmful", l.harmful);
        }
        o.push(')');
        if let Some(r) = l.rule {
            let _ = write!(o, " [{}]", rule_name(r));
        }
        o.push('\n');
        // The race that decided the row.
        let decided = l
            .races
            .iter()
            .filter_map(|&k| doc.races.get(k))
            .find(|r| r.verdict == l.verdict);
        if let Some(r) = decided {
            let _ = writeln!(o, "  {}", r.reason);
            if l.verdict == RaceVerdict::Harmful
                && let Some(w) = &r.witness
            {
                let _ = writeln!(
                    o,
                    "  witness: {} before {} (sequences {} and {})",
                    w.moved.join(", "),
                    w.delayed.join(", "),
                    w.sequences.recorded,
                    w.sequences.reordered
                );
                for x in w
                    .exceptions
                    .reordered
                    .iter()
                    .filter(|x| !w.exceptions.recorded.contains(x))
                {
                    let _ = writeln!(o, "  throws: {x}");
                }
                for line in w
                    .visible_diff
                    .lines()
                    .filter(|l| l.starts_with('+') || l.starts_with('-'))
                    .take(6)
                {
                    let _ = writeln!(o, "  {line}");
                }
            }
        }
    }
    o
}
