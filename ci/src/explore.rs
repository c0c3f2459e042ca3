//! Findings of the explore report (`shepherd explore`, the typed
//! [`ExploreReport`] of `docs/explore-json.md`): one per race group (a race and the races that
//! repeat it — the report's `repeat_of`, or the same location, kind and places — are one
//! finding whose verdict is the worst of theirs), the reorder phase's deeper reversals, and one
//! per sequence that ran a disabled event.

use crate::class::RaceClass;
use crate::finding::{Finding, Side, Status, blank_numbers};
use crate::position::Position;
use shepherd_explore_model::report::RaceVerdict;
use shepherd_explore_model::report::json::{
    Access, DisabledEntry, ExploreReport, RaceEntry, Witness,
};

/// Lines of the DOM diff a witness summary quotes.
const DIFF_LINES: usize = 12;

/// The findings of `report`: race groups in the report's order (harmful first), then the
/// disabled events.
pub fn findings(report: &ExploreReport) -> Vec<Finding> {
    let mut groups: Vec<(String, Vec<&RaceEntry>)> = Vec::new();
    for r in &report.races {
        // A repeat joins the group of the race it repeats.
        if let Some(of) = r.repeat_of
            && let Some(first) = report.races.get(of)
            && let Some((_, members)) = groups
                .iter_mut()
                .find(|(_, m)| m.first().is_some_and(|x| std::ptr::eq(*x, first)))
        {
            members.push(r);
            continue;
        }
        let key = format!(
            "{}\u{0}{}\u{0}{}\u{0}{}",
            blank_numbers(&r.location),
            r.kind,
            place(&r.first),
            place(&r.second)
        );
        // Races without a place on either side cannot be told apart: never grouped.
        let placed = r.first.source.is_some() || r.first.scope.is_some();
        let placed = placed && (r.second.source.is_some() || r.second.scope.is_some());
        match groups.iter_mut().find(|(k, _)| placed && *k == key) {
            Some((_, members)) => members.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    let mut out: Vec<Finding> = groups
        .iter()
        .filter_map(|(_, members)| race_finding(members))
        .collect();
    out.extend(report.deeper.iter().filter_map(|r| race_finding(&[r])));
    out.extend(report.disabled.iter().map(disabled_finding));
    out
}

fn place(a: &Access) -> String {
    a.source
        .clone()
        .or_else(|| a.scope.clone())
        .unwrap_or_default()
}

fn status(v: RaceVerdict) -> Status {
    match v {
        RaceVerdict::Harmful => Status::Harmful,
        RaceVerdict::Harmless => Status::Harmless,
        RaceVerdict::NotExplored => Status::Uncovered,
    }
}

/// The finding of one group: its worst verdict (harmful, then not explored, then harmless)
/// is shown.
fn race_finding(members: &[&RaceEntry]) -> Option<Finding> {
    let r = members.iter().min_by_key(|r| match r.verdict {
        RaceVerdict::Harmful => 0,
        RaceVerdict::NotExplored => 1,
        RaceVerdict::Harmless => 2,
    })?;
    let verdict = match r.sequence {
        Some(n) => format!("{} in sequence {n}: {}", r.verdict, r.reason),
        None => format!("{}: {}", r.verdict, r.reason),
    };
    Some(Finding {
        class: RaceClass::of_location(&r.location),
        location: r.name.clone(),
        trace_location: r.location.clone(),
        kind: r.kind.clone(),
        status: status(r.verdict),
        first: side(&r.first),
        second: side(&r.second),
        reason: match r.verdict {
            RaceVerdict::Harmful => "Reversing the race changes what the page shows or does",
            RaceVerdict::Harmless => "Reversing the race changes nothing that matters",
            RaceVerdict::NotExplored => {
                "Both orders are possible; the explorer did not run the other"
            }
        }
        .to_string(),
        verdict: Some(verdict),
        witness: r.witness.as_ref().map(witness_summary),
        details: r.witness.as_ref().map(witness_details),
        repaired_by: Vec::new(),
        ids: Vec::new(),
        repeats: members.len() - 1,
    })
}

/// A sequence that ran an event before the step that disabled it.
fn disabled_finding(d: &DisabledEntry) -> Finding {
    let event = |e: &Option<String>| e.clone().unwrap_or_else(|| "an event".to_string());
    let side = |name: String| Side {
        access: String::new(),
        stable: name,
        position: None,
        scope: None,
        line_text: None,
    };
    Finding {
        class: RaceClass::DisabledEvent,
        location: event(&d.disabled),
        trace_location: event(&d.disabled),
        kind: String::new(),
        status: status(d.verdict),
        first: side(event(&d.by)),
        second: side(event(&d.disabled)),
        reason: format!("Sequence {}: {}", d.sequence, d.reason),
        verdict: Some(format!("{} in sequence {}", d.verdict, d.sequence)),
        witness: d.witness.as_ref().map(witness_summary),
        details: d.witness.as_ref().map(witness_details),
        repaired_by: Vec::new(),
        ids: Vec::new(),
        repeats: 0,
    }
}

fn side(a: &Access) -> Side {
    let from_code = a.code.as_ref().and_then(|c| {
        Some(Position {
            url: c.url.clone(),
            line: u32::try_from(c.line).ok().filter(|&l| l > 0)?,
            col: u32::try_from(c.col).ok().filter(|&c| c > 0)?,
        })
    });
    Side {
        access: a.access.clone(),
        stable: a.stable.clone(),
        position: from_code.or_else(|| a.source.as_deref().and_then(Position::parse)),
        scope: a.scope.clone(),
        line_text: a.code.as_ref().and_then(|c| {
            c.lines
                .iter()
                .find(|l| l.line == c.line)
                .map(|l| l.text.trim_end().to_string())
        }),
    }
}

/// One paragraph: which events were moved ahead of which, and what differs.
fn witness_summary(w: &Witness) -> String {
    let mut out = format!(
        "running {} before {} (sequence {} against {}): ",
        w.moved.join(", "),
        w.delayed.join(", "),
        w.sequences.reordered,
        w.sequences.recorded
    );
    let diffs: Vec<&str> = w.differences.iter().map(|d| d.describe()).collect();
    out.push_str(&if diffs.is_empty() {
        "no difference recorded".to_string()
    } else {
        diffs.join("; ")
    });
    let new: Vec<&String> = w
        .exceptions
        .reordered
        .iter()
        .filter(|e| !w.exceptions.recorded.contains(e))
        .collect();
    if !new.is_empty() {
        out.push_str(&format!(
            "; thrown only in the other order: {}",
            new.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    out
}

/// The witness in full, as plain text.
fn witness_details(w: &Witness) -> String {
    let mut out = witness_summary(w);
    out.push_str("\n\nrecorded order: ");
    out.push_str(&w.orders.recorded.join(" → "));
    out.push_str("\nother order: ");
    out.push_str(&w.orders.reordered.join(" → "));
    if !w.skipped.is_empty() {
        out.push_str("\nskipped: ");
        out.push_str(&w.skipped.join(", "));
    }
    for (label, list) in [
        ("exceptions (recorded)", &w.exceptions.recorded),
        ("exceptions (other order)", &w.exceptions.reordered),
    ] {
        if !list.is_empty() {
            out.push_str(&format!("\n{label}:\n  {}", list.join("\n  ")));
        }
    }
    let missing: Vec<&String> = w
        .requests
        .recorded
        .iter()
        .filter(|u| !w.requests.reordered.contains(u))
        .collect();
    let extra: Vec<&String> = w
        .requests
        .reordered
        .iter()
        .filter(|u| !w.requests.recorded.contains(u))
        .collect();
    if !missing.is_empty() || !extra.is_empty() {
        out.push_str("\nrequests:");
        for u in missing {
            out.push_str(&format!("\n  - {u}"));
        }
        for u in extra {
            out.push_str(&format!("\n  + {u}"));
        }
    }
    for (label, diff) in [
        (
            "what the user sees (- recorded, + other order)",
            &w.visible_diff,
        ),
        ("DOM diff (- recorded, + other order)", &w.dom_diff),
    ] {
        if diff.is_empty() {
            continue;
        }
        out.push_str(&format!("\n{label}:\n"));
        let lines: Vec<&str> = diff.lines().collect();
        out.push_str(&lines[..lines.len().min(DIFF_LINES)].join("\n"));
        if lines.len() > DIFF_LINES {
            out.push_str(&format!(
                "\n… {} more line(s) in the explore report",
                lines.len() - DIFF_LINES
            ));
        }
    }
    for (label, shot) in [
        ("screenshot (recorded)", &w.screenshots.recorded),
        ("screenshot (other order)", &w.screenshots.reordered),
    ] {
        if let Some(s) = shot {
            out.push_str(&format!("\n{label}: {s}"));
        }
    }
    out
}
