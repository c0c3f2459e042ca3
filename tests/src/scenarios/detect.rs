//! The detect lane's judgement: the races `shepherd races --json --all` reported for a
//! recorded run against the manifest's list.

use super::manifest::{Manifest, glob};
use serde_json::Value;
use std::collections::BTreeSet;

/// One reported race, the fields the check needs.
#[derive(Debug, Clone)]
pub struct Reported {
    /// Location name.
    pub location: String,
    /// The location as a developer finds it (`select#size.value`).
    pub name: String,
    /// `WRITE-READ`, …
    pub kind: String,
    /// Covered (Def. 3.2).
    pub covered: bool,
    /// `uncovered`, `single`, `multi` or `covered`.
    pub coverage: String,
    /// Filter tags of the location.
    pub tags: Vec<String>,
    /// `harmful`, `uncovered`, `filtered`, `only-covered`.
    pub level: String,
    /// Source positions of both sides (when known).
    pub sources: Vec<String>,
}

impl Reported {
    fn short(&self) -> String {
        format!(
            "{}{} {}{} [{}]{}",
            self.location,
            if self.name != self.location && !self.name.is_empty() {
                format!(" ({})", self.name)
            } else {
                String::new()
            },
            self.kind,
            if self.covered {
                format!(" covered ({})", self.coverage)
            } else {
                String::new()
            },
            self.level,
            if self.tags.is_empty() {
                String::new()
            } else {
                format!(" {}", self.tags.join(","))
            }
        )
    }
}

/// The races of a report (its `races` array), each read by `read`; both the races and the
/// explore report have one.
pub fn each_race<T>(doc: &Value, read: impl Fn(&Value) -> T) -> Vec<T> {
    doc.get("races")
        .and_then(Value::as_array)
        .map(|races| races.iter().map(read).collect())
        .unwrap_or_default()
}

/// A string field of a reported race (empty when absent).
pub fn text(r: &Value, k: &str) -> String {
    r.get(k).and_then(Value::as_str).unwrap_or("").to_string()
}

/// Source positions of a reported race's two sides (`first.source`, `second.source`).
pub fn sides(r: &Value) -> Vec<String> {
    ["first", "second"]
        .iter()
        .filter_map(|k| r.get(k)?.get("source")?.as_str().map(str::to_string))
        .collect()
}

/// Reads the races of a `docs/races-json.md` document.
pub fn reported(doc: &Value) -> Vec<Reported> {
    let strs = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    each_race(doc, |r| Reported {
        location: text(r, "location"),
        name: text(r, "location_name"),
        kind: text(r, "kind"),
        covered: r.get("covered").and_then(Value::as_bool).unwrap_or(false),
        coverage: text(r, "coverage"),
        tags: strs(r.get("tags")),
        level: text(r, "level"),
        sources: sides(r),
    })
}

/// What the check found.
#[derive(Debug, Default)]
pub struct Verdict {
    /// Problems that fail the lane.
    pub problems: Vec<String>,
    /// Reported uncovered locations (not explained by a harmless filter) that the manifest
    /// does not list.
    pub false_alarms: BTreeSet<String>,
}

impl Verdict {
    /// True when nothing failed.
    pub fn passed(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Whether a race at `location` whose sides are at `sources` is where manifest race `want`
/// is: the location matches its pattern and every listed position is one side's (the
/// explore lane matches its races the same way).
pub fn same_place(want: &super::manifest::Race, location: &str, sources: &[String]) -> bool {
    glob(&want.location, location)
        && want
            .positions
            .iter()
            .all(|p| sources.iter().any(|s| s.contains(p.as_str())))
}

/// Whether pattern `p` names `r`'s location, raw (`DOMNode[*].value`) or as reports name it
/// (`select#size.value`: no object numbers, so a manifest can tell two fields apart).
fn at(p: &str, r: &Reported) -> bool {
    glob(p, &r.location) || glob(p, &r.name)
}

/// [`same_place`] for a reported race, by either of its location's names.
fn placed(want: &super::manifest::Race, r: &Reported) -> bool {
    at(&want.location, r)
        && want
            .positions
            .iter()
            .all(|p| r.sources.iter().any(|s| s.contains(p.as_str())))
}

/// Whether `r` is what manifest race `want` describes.
fn matches(want: &super::manifest::Race, r: &Reported) -> bool {
    placed(want, r)
        && want.kinds().any(|k| k == r.kind)
        && match want.coverage.as_deref() {
            Some("any") => true,
            Some(c) => r.covered == want.covered && c == r.coverage,
            None => r.covered == want.covered,
        }
        && want.tags.iter().all(|t| r.tags.contains(t))
        && want.filtered.is_none_or(|f| f == (r.level == "filtered"))
}

/// The exercise types and clicks in an arbitrary order: its own events race with each other
/// everywhere (filtered as `USER_EVENTS_ONLY`), also where the page does nothing. Such a race
/// is not the page's, so it does not break an `[[absent]]` entry, whatever other harmless tag
/// it has too (`WRITE_SAME_VALUE` when the exercise typed the same text into a field twice).
fn explorer_only(r: &Reported) -> bool {
    r.level == "filtered" && r.tags.iter().any(|t| t == "USER_EVENTS_ONLY")
}

/// Checks `reported` against manifest `m`.
pub fn check(m: &Manifest, reported: &[Reported]) -> Verdict {
    let mut v = Verdict::default();
    for want in &m.races {
        if !reported.iter().any(|r| matches(want, r)) {
            let near: Vec<String> = reported
                .iter()
                .filter(|r| at(&want.location, r))
                .map(Reported::short)
                .collect();
            v.problems.push(format!(
                "missing race {} {}{}{}{} (reported there: {})",
                want.location,
                want.kind,
                match (want.covered, want.filtered) {
                    (true, _) => " covered",
                    (false, Some(true)) => " filtered",
                    (false, Some(false)) => " unfiltered",
                    (false, None) => "",
                },
                if want.tags.is_empty() {
                    String::new()
                } else {
                    format!(" tags {}", want.tags.join(","))
                },
                if want.positions.is_empty() {
                    String::new()
                } else {
                    format!(" at {}", want.positions.join(", "))
                },
                if near.is_empty() {
                    "nothing".to_string()
                } else {
                    near.join("; ")
                }
            ));
        }
        if m.harmless_only
            && let Some(r) = reported
                .iter()
                .find(|r| at(&want.location, r) && !r.covered && r.level != "filtered")
        {
            v.problems.push(format!(
                "harmless-only page, yet {} is not explained by a filter",
                r.short()
            ));
        }
    }
    for a in &m.absent {
        if let Some(r) = reported
            .iter()
            .find(|r| !r.covered && !explorer_only(r) && at(&a.location, r))
        {
            v.problems
                .push(format!("race reported where none exists: {}", r.short()));
        }
    }
    for r in reported {
        let alarm = !r.covered && (r.level == "harmful" || r.level == "uncovered");
        let listed = m.races.iter().any(|w| at(&w.location, r))
            || m.absent.iter().any(|a| at(&a.location, r))
            || m.sometimes.iter().any(|x| at(&x.location, r));
        if alarm && !listed {
            v.false_alarms.insert(r.location.clone());
        }
    }
    if m.harmless_only && !v.false_alarms.is_empty() {
        v.problems.push(format!(
            "harmless-only page with false alarms: {}",
            v.false_alarms
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    v
}

/// The reach lane's judgement of a `record --explore` run with nothing scheduled: the exercise
/// reached every control (`reach.controls` of them, the report's `summary.exercised`), every
/// listed race is reported uncovered at its place (the good order may turn a race's kind
/// round, so kinds are not compared; a harmful one unfiltered), no `[[absent]]` location has an
/// uncovered race, and nothing else is reported unfiltered (no false alarm).
pub fn check_reach(m: &Manifest, doc: &Value) -> Verdict {
    let mut v = Verdict::default();
    let reported = reported(doc);
    let want = m.reach.as_ref().map_or(0, |r| r.controls);
    match doc.pointer("/summary/exercised") {
        None => v
            .problems
            .push("the report has no coverage (summary.exercised)".into()),
        Some(e) => {
            let n = |k: &str| e.get(k).and_then(Value::as_u64).unwrap_or(0) as usize;
            let (controls, exercised) = (n("controls"), n("exercised"));
            if controls != want || exercised != controls {
                let missed: Vec<String> = e
                    .get("missed")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|x| x.get("name").and_then(Value::as_str).map(str::to_string))
                    .collect();
                v.problems.push(format!(
                    "exercised {exercised} of {controls} controls, the page has {want} (never exercised: {})",
                    missed.join(", ")
                ));
            }
        }
    }
    for want in &m.races {
        let found = reported.iter().any(|r| {
            placed(want, r)
                && !r.covered
                && (!want.harmful || r.level != "filtered")
                && want.filtered.is_none_or(|f| f == (r.level == "filtered"))
        });
        if !found {
            let near: Vec<String> = reported
                .iter()
                .filter(|r| at(&want.location, r))
                .map(Reported::short)
                .collect();
            v.problems.push(format!(
                "record --explore did not report {}{} (reported there: {})",
                want.location,
                if want.positions.is_empty() {
                    String::new()
                } else {
                    format!(" at {}", want.positions.join(", "))
                },
                if near.is_empty() {
                    "nothing".to_string()
                } else {
                    near.join("; ")
                }
            ));
        }
    }
    for a in &m.absent {
        if let Some(r) = reported
            .iter()
            .find(|r| !r.covered && !explorer_only(r) && at(&a.location, r))
        {
            v.problems
                .push(format!("race reported where none exists: {}", r.short()));
        }
    }
    for r in &reported {
        let alarm = !r.covered && (r.level == "harmful" || r.level == "uncovered");
        let listed = m.races.iter().any(|w| at(&w.location, r))
            || m.absent.iter().any(|a| at(&a.location, r))
            || m.sometimes.iter().any(|x| at(&x.location, r));
        if alarm && !listed {
            v.false_alarms.insert(r.location.clone());
        }
    }
    if !v.false_alarms.is_empty() {
        v.problems.push(format!(
            "false alarms: {}",
            v.false_alarms
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    v
}

/// One line per reported race (for failure messages and authoring).
pub fn describe(reported: &[Reported]) -> String {
    let mut out = String::new();
    for r in reported {
        out.push_str("    ");
        out.push_str(&r.short());
        if !r.sources.is_empty() {
            out.push_str(&format!("  @ {}", r.sources.join(" | ")));
        }
        out.push('\n');
    }
    out
}
