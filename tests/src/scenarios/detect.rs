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
            "{} {}{} [{}]{}",
            self.location,
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
    doc.get("races")
        .and_then(Value::as_array)
        .map(|races| {
            races
                .iter()
                .map(|r| {
                    let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                    let side = |k: &str| {
                        r.get(k)
                            .and_then(|a| a.get("source"))
                            .and_then(Value::as_str)
                            .map(str::to_string)
                    };
                    Reported {
                        location: s("location"),
                        kind: s("kind"),
                        covered: r.get("covered").and_then(Value::as_bool).unwrap_or(false),
                        coverage: s("coverage"),
                        tags: strs(r.get("tags")),
                        level: s("level"),
                        sources: [side("first"), side("second")]
                            .into_iter()
                            .flatten()
                            .collect(),
                    }
                })
                .collect()
        })
        .unwrap_or_default()
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

/// Whether `r` is what manifest race `want` describes.
fn matches(want: &super::manifest::Race, r: &Reported) -> bool {
    glob(&want.location, &r.location)
        && r.kind == want.kind
        && match want.coverage.as_deref() {
            Some("any") => true,
            Some(c) => r.covered == want.covered && c == r.coverage,
            None => r.covered == want.covered,
        }
        && want.tags.iter().all(|t| r.tags.contains(t))
        && want.filtered.is_none_or(|f| f == (r.level == "filtered"))
        && want
            .positions
            .iter()
            .all(|p| r.sources.iter().any(|s| s.contains(p.as_str())))
}

/// Checks `reported` against manifest `m`.
pub fn check(m: &Manifest, reported: &[Reported]) -> Verdict {
    let mut v = Verdict::default();
    for want in &m.races {
        if !reported.iter().any(|r| matches(want, r)) {
            let near: Vec<String> = reported
                .iter()
                .filter(|r| glob(&want.location, &r.location))
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
                .find(|r| glob(&want.location, &r.location) && !r.covered && r.level != "filtered")
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
            .find(|r| !r.covered && glob(&a.location, &r.location))
        {
            v.problems
                .push(format!("race reported where none exists: {}", r.short()));
        }
    }
    for r in reported {
        let alarm = !r.covered && (r.level == "harmful" || r.level == "uncovered");
        let listed = m.races.iter().any(|w| glob(&w.location, &r.location))
            || m.absent.iter().any(|a| glob(&a.location, &r.location));
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
