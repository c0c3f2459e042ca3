//! The explore lane's judgement: the races of an exploration report (`docs/explore-json.md`)
//! against the manifest's list. Every race the manifest calls harmful must be reported
//! harmful, and none it calls harmless; one it marks `explored = "harmless"` must be answered
//! harmless (explored, not merely never reversed). Races are matched by place as the detect lane
//! matches them (location pattern and positions, not kind: the good order may run the two
//! accesses the other way round).

use super::detect::same_place;
use super::manifest::Manifest;
use shepherd_explore_model::report::ExploreReport;

/// One race of an exploration report, the fields the check needs.
#[derive(Debug, Clone)]
pub struct Found {
    /// Location name.
    pub location: String,
    /// `WRITE-READ`, … (in the explored order).
    pub kind: String,
    /// `harmful`, `harmless` or `not-explored`.
    pub verdict: String,
    /// Why.
    pub reason: String,
    /// Source positions of both sides (when known).
    pub sources: Vec<String>,
    /// What answered it: a probe, a repeated race, or an execution of the reorder phase
    /// (a failure names it first: the execution list may be cut off in a CI log).
    pub answered_by: String,
}

impl Found {
    fn short(&self) -> String {
        format!(
            "{} {} [{}: {}] ({})",
            self.location, self.kind, self.verdict, self.reason, self.answered_by
        )
    }
}

/// Reads the races of an exploration report.
pub fn found(doc: &ExploreReport) -> Vec<Found> {
    doc.races
        .iter()
        .chain(&doc.deeper)
        .map(|r| Found {
            location: r.location.clone(),
            kind: r.kind.clone(),
            verdict: r.verdict.to_string(),
            reason: r.reason.clone(),
            sources: [&r.first, &r.second]
                .iter()
                .filter_map(|a| a.source.clone())
                .collect(),
            answered_by: match (r.probe, r.rule.is_some(), r.sequence, r.repeat_of) {
                (_, _, _, Some(i)) => format!("as race {i}"),
                (Some(p), true, Some(q), None) => format!("probe {p}, its run execution {q}"),
                (Some(p), _, Some(q), None) => {
                    format!("probe {p}, then the reorder phase's execution {q}")
                }
                (Some(p), _, None, None) => format!("probe {p}, no verdict"),
                (None, _, Some(q), None) => format!("the reorder phase's execution {q}"),
                (None, _, None, None) => "no run".to_string(),
            },
        })
        .collect()
}

/// What the check found.
#[derive(Debug, Default)]
pub struct Verdict {
    /// Problems that fail the lane.
    pub problems: Vec<String>,
    /// Harmful verdicts at locations the manifest does not list (logged, not failed: the
    /// manifest lists the races of the bad order's recording).
    pub unlisted: Vec<String>,
}

/// Checks the exploration's races against manifest `m`; `complete` says whether the
/// exploration finished within the bound (a miss of an incomplete one says so).
pub fn check(m: &Manifest, found: &[Found], complete: bool) -> Verdict {
    let mut v = Verdict::default();
    let harmful = |f: &&Found| f.verdict == "harmful";
    for want in m.races.iter().filter(|r| r.explored_harmful()) {
        if !found
            .iter()
            .filter(harmful)
            .any(|f| same_place(want, &f.location, &f.sources))
        {
            let there: Vec<String> = found
                .iter()
                .filter(|f| same_place(want, &f.location, &f.sources))
                .map(Found::short)
                .collect();
            v.problems.push(format!(
                "harmful race {} not reported harmful{} (reported there: {})",
                want.location,
                if complete {
                    ""
                } else {
                    " by an incomplete exploration"
                },
                if there.is_empty() {
                    "nothing".to_string()
                } else {
                    there.join("; ")
                }
            ));
        }
    }
    // `explored = "harmless"`: the race must be answered harmless (with its rule), not just
    // never called harmful because it was never run the other way round.
    for want in m
        .races
        .iter()
        .filter(|r| r.explored.as_deref() == Some("harmless"))
    {
        if !found
            .iter()
            .any(|f| f.verdict == "harmless" && same_place(want, &f.location, &f.sources))
        {
            let there: Vec<String> = found
                .iter()
                .filter(|f| same_place(want, &f.location, &f.sources))
                .map(Found::short)
                .collect();
            v.problems.push(format!(
                "harmless race {} not answered harmless (reported there: {})",
                want.location,
                if there.is_empty() {
                    "nothing".to_string()
                } else {
                    there.join("; ")
                }
            ));
        }
    }
    for f in found.iter().filter(harmful) {
        let at = |want: bool| {
            m.races
                .iter()
                .any(|r| r.explored_harmful() == want && same_place(r, &f.location, &f.sources))
        };
        if at(false) && !at(true) {
            v.problems
                .push(format!("a harmless race reported harmful: {}", f.short()));
        } else if !at(true) {
            v.unlisted.push(f.location.clone());
        }
    }
    v.unlisted.sort();
    v.unlisted.dedup();
    v
}

/// One line per race of the report (for failure messages and authoring).
pub fn describe(found: &[Found]) -> String {
    let mut out = String::new();
    for f in found {
        out.push_str("    ");
        out.push_str(&f.short());
        if !f.sources.is_empty() {
            out.push_str(&format!("  @ {}", f.sources.join(" | ")));
        }
        out.push('\n');
    }
    out
}
