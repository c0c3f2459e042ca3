//! Which race gets which verdict: every uncovered race of the initial execution, judged by
//! the reversal that ran it the other way round or told why none did, then the reversals not
//! named that way (deeper ones, races the initial trace did not report), harmful first.

use crate::outcome::{Cause, Outcome, RunRecord};
use crate::steps::RaceNote;
use crate::verdict::Judgement;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Changed DOM lines shown in a witness.
pub const DIFF_LINES: usize = 60;

/// The verdict a report gives a race (`docs/explore-json.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RaceVerdict {
    /// Reversed, and the other order changes what the page shows or does.
    Harmful,
    /// Reversed, and it does not (or only the heap, with low confidence).
    Harmless,
    /// Not reversed (one step, two user events, covered, out of budget).
    NotReordered,
}

impl RaceVerdict {
    /// The word reports use (`harmful`, `harmless`, `not-reordered`).
    pub fn as_str(self) -> &'static str {
        match self {
            RaceVerdict::Harmful => "harmful",
            RaceVerdict::Harmless => "harmless",
            RaceVerdict::NotReordered => "not-reordered",
        }
    }
}

impl fmt::Display for RaceVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One reported race.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The race.
    pub race: RaceNote,
    /// Its verdict.
    pub verdict: RaceVerdict,
    /// Why.
    pub reason: String,
    /// The execution that reversed it, if one did.
    pub sequence: Option<u32>,
}

/// Builds the race entries of an outcome, harmful first.
pub fn entries(out: &Outcome) -> Vec<Entry> {
    let mut list = Vec::new();
    let Some(first) = out.runs.first() else {
        return list;
    };
    let mut used = vec![false; out.runs.len()];
    for u in &first.uncovered {
        let (verdict, reason, sequence) = if u.first == u.second {
            (
                RaceVerdict::NotReordered,
                "both accesses happen in one step (one release or gesture ran both actions)"
                    .to_string(),
                None,
            )
        } else if let Some(child) = reversal_of(out, 0, u.first, u.second) {
            used[child.id as usize] = true;
            let (v, r) = judged(child);
            (v, r, Some(child.id))
        } else {
            let is_user = |k: u32| {
                first
                    .steps
                    .get(k as usize)
                    .is_some_and(|s| crate::naming::is_user(s))
            };
            let adjacent = first
                .pairs
                .iter()
                .any(|p| p.first == u.first && p.second == u.second);
            let reason = if is_user(u.first) && is_user(u.second) {
                "two user events: the user's order is kept"
            } else if adjacent && !out.complete {
                "not explored within the budget"
            } else if adjacent {
                "its reversed order was explored as part of another sequence"
            } else {
                "covered: the platform orders the two steps, or another race must be reversed first"
            };
            (RaceVerdict::NotReordered, reason.to_string(), None)
        };
        list.push(Entry {
            race: u.race.clone(),
            verdict,
            reason,
            sequence,
        });
    }
    // Reversals not named above: deeper ones, or between steps the initial trace did not
    // report as uncovered races.
    for r in &out.runs {
        let Some(o) = &r.origin else { continue };
        if used[r.id as usize] || o.kind != Cause::Reversal {
            continue;
        }
        let (v, reason) = judged(r);
        for race in &o.races {
            list.push(Entry {
                race: race.clone(),
                verdict: v,
                reason: reason.clone(),
                sequence: Some(r.id),
            });
        }
    }
    // Harmful, harmless, not reordered: the enum's order.
    list.sort_by(|a, b| {
        a.verdict
            .cmp(&b.verdict)
            .then_with(|| a.race.location.cmp(&b.race.location))
    });
    list
}

fn reversal_of(out: &Outcome, parent: u32, first: u32, second: u32) -> Option<&RunRecord> {
    out.runs.iter().find(|r| {
        r.origin.as_ref().is_some_and(|o| {
            o.kind == Cause::Reversal && o.parent == parent && o.steps == (first, second)
        })
    })
}

/// The verdict of a reordered execution against its parent, and why.
pub fn judged(r: &RunRecord) -> (RaceVerdict, String) {
    match &r.verdict {
        Some(v) if v.verdict == Judgement::Harmful => (RaceVerdict::Harmful, v.reason.clone()),
        Some(v) => (RaceVerdict::Harmless, v.reason.clone()),
        None => (
            RaceVerdict::NotReordered,
            "no parent to compare with".to_string(),
        ),
    }
}
