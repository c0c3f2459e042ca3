//! `shepherd policy covers`: for each uncovered race of a trace, whether the given repair
//! policies order its two actions (the augmented happens-before ≤_P, without the budget the
//! race reports' marks have).

use crate::marks;
use crate::pipeline::{Input, Observer};
use anyhow::Context;
use shepherd_policies::PolicySet;
use shepherd_policies::covers::Augmented;
use shepherd_races::report::RaceReport;
use shepherd_races::{Options, analyze};
use std::io::Write;

/// Writes, for each uncovered race of `input`, which of `set`'s rules order it, then how many
/// are ordered.
pub fn write(
    out: &mut dyn Write,
    input: Input<'_>,
    set: &PolicySet,
    observer: &mut dyn Observer,
) -> anyhow::Result<()> {
    let mut loaded = None;
    let trace = input.trace(&mut loaded, observer)?;
    let an = analyze(trace, &Options::default())
        .with_context(|| format!("cannot analyse {}", input.name()))?;
    let aug = Augmented::new(trace, &marks::hb_arcs(&an.graph), &set.policies);
    let rep = RaceReport::new(trace, &an, false);
    let (mut ordered, mut total) = (0, 0);
    for r in &rep.races {
        total += 1;
        let (a, b) = (r.first.action, r.second.action);
        let verdict = match aug.orders(a, b) {
            Some(rules) if !rules.is_empty() => {
                ordered += 1;
                format!("ordered by {}", rules.join(", "))
            }
            _ => "not ordered".to_string(),
        };
        writeln!(
            out,
            "race {} {} on {}: #{a} {} -> #{b} {}: {verdict}",
            r.id, r.kind, r.location, r.first.action_kind, r.second.action_kind
        )?;
    }
    writeln!(
        out,
        "{ordered} of {total} uncovered races ordered by {}",
        set.names()
    )?;
    out.flush()?;
    Ok(())
}
