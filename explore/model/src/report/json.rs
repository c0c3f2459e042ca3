//! The versioned JSON document (`docs/explore-json.md`): its types, shared by the writer
//! (`shepherd explore --json`) and the readers (`shepherd races --explored`, CI outputs), built
//! from an outcome and read back with errors that name the file.

use super::entries::{self, DIFF_LINES, Entry, LocationRow, RaceVerdict};
use crate::outcome::{Cause, Outcome, RunRecord};
use crate::triage::{Side, Window};
use crate::verdict::{self, Difference, Rule};
use serde::{Deserialize, Serialize};
use shepherd_races::report::SourceProvider;
use shepherd_races::report::sources::Snippet;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Version of the JSON document. Version 2: every uncovered race of the recording with an
/// answer, rules, windows, locations; version 1 listed the races of the replayed execution.
pub const JSON_VERSION: u32 = 2;

/// The whole document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExploreReport {
    /// Schema version ([`JSON_VERSION`]).
    pub version: u32,
    /// The recording explored.
    pub recording: String,
    /// The top-level page the recording loads.
    pub page: String,
    /// The conflict-reversal bound of the reorder phase.
    pub bound: u32,
    /// The repair policies every execution enforced (comma-separated names).
    pub policy: Option<String>,
    /// Nothing is left to run (probes, and the reorder phase within the bound).
    pub complete: bool,
    /// Executions so far, the initial one and probes included.
    pub sequences: usize,
    /// Probes planned (each runs twice: the reference and the reordered order).
    pub probes: usize,
    /// Executions that failed.
    pub failures: u64,
    /// Exploring time over all sessions, in seconds (one decimal).
    pub elapsed_s: f64,
    /// Seconds per execution (two decimals); `None` before the first.
    pub seconds_per_sequence: Option<f64>,
    /// How much reordering was avoided.
    pub pruned: Pruned,
    /// Races per verdict.
    pub summary: Summary,
    /// The races by location: harmful first, the most likely bad orders first.
    pub locations: Vec<LocationEntry>,
    /// Every uncovered race of the recording, in the race report's order, with its answer.
    pub races: Vec<RaceEntry>,
    /// Reversals of the reorder phase that answer no race of the recording (deeper ones,
    /// races only the replay showed).
    pub deeper: Vec<RaceEntry>,
    /// Sequences that ran an event first because a step disabled it.
    pub disabled: Vec<DisabledEntry>,
}

/// What the explorer did not have to run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pruned {
    /// Conflicting step pairs of the initial execution the platform does not order: what
    /// reordering every racing pair would run.
    pub racing_pairs: usize,
    /// Reordered executions run (probes and the reorder phase's).
    pub reversals: usize,
    /// `1 − reversals / racing_pairs` (`None` without racing pairs).
    pub fraction: Option<f64>,
    /// R4's measure: over every state reached (probes' runs included), the share of enabled
    /// events never explored.
    pub enabled_fraction: Option<f64>,
    /// The most `enabled_fraction` could be over the same states (at most one event explored
    /// from each): it depends on how many events the page enables at once.
    #[serde(default)]
    pub enabled_ceiling: Option<f64>,
}

/// Races per verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Uncovered races of the recording.
    pub races: usize,
    /// Harmful.
    pub harmful: usize,
    /// Harmless.
    pub harmless: usize,
    /// Of the harmless, those where only DOM the user does not see differs (their own class).
    pub invisible: usize,
    /// Not explored (each says why).
    pub not_explored: usize,
    /// Races per rule (`exception`, `lost-input`, `settles-itself`, …).
    pub rules: BTreeMap<String, usize>,
    /// Covered races found harmful (listed in `races` beside the uncovered ones, not counted
    /// above).
    #[serde(default)]
    pub covered_harmful: usize,
}

/// One location: its races together.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LocationEntry {
    /// The trace's location.
    pub location: String,
    /// Its name as `shepherd races` prints it (`input#coupon.value`).
    pub name: String,
    /// The worst verdict of its races.
    pub verdict: RaceVerdict,
    /// The rule of the race that decided it.
    pub rule: Option<Rule>,
    /// What makes room for its bad order.
    pub window: Option<Window>,
    /// Its races (pairs of actions).
    pub pairs: usize,
    /// Of them, harmful.
    pub harmful: usize,
    /// Their indices in [`ExploreReport::races`].
    pub races: Vec<usize>,
}

/// One race and its answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RaceEntry {
    /// The trace's location (object numbers and all: `races --explored` matches on it).
    pub location: String,
    /// Its name as `shepherd races` prints it.
    pub name: String,
    /// `WRITE-READ`, …
    pub kind: String,
    /// The earlier access of the recording.
    pub first: Access,
    /// The later access.
    pub second: Access,
    /// `harmful`, `harmless` or `not-explored`.
    pub verdict: RaceVerdict,
    /// The rule that decided (probes).
    pub rule: Option<Rule>,
    /// Why, in words.
    pub reason: String,
    /// What makes room for the other order in a real browser (probes).
    pub window: Option<Window>,
    /// The probe that answered it.
    pub probe: Option<u32>,
    /// The race (index in `races`) it repeats (the same events at another time).
    pub repeat_of: Option<usize>,
    /// The reordered execution.
    pub sequence: Option<u32>,
    /// Its conflict reversals from the initial execution.
    pub depth: Option<u32>,
    /// What differs between the two orders.
    pub differences: Option<Vec<Difference>>,
    /// For a harmful race: both orders as the user saw them.
    pub witness: Option<Witness>,
    /// A covered race of the recording (listed only when found harmful: `shepherd races`
    /// shows it with `--all`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub covered: bool,
    /// The locations of the other races between the same two events that its harmful
    /// answer stands for: on a covered race, those its probe found harmful; on a race whose
    /// probe a reversal overturned, those the reversal reversed with it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_at: Vec<String>,
}

/// One side of a race.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Access {
    /// The action's stable id.
    pub stable: String,
    /// `READ`, `WRITE` or `UPDATE`.
    pub access: String,
    /// `url:line:col` of the access (or of its scope).
    pub source: Option<String>,
    /// The innermost scope's label.
    pub scope: Option<String>,
    /// The source lines around it, when the recording holds the file.
    pub code: Option<Code>,
}

/// Source lines around a position.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Code {
    /// The file.
    pub url: String,
    /// The line (1-based).
    pub line: usize,
    /// The column (1-based).
    pub col: usize,
    /// The caret's column in the shown line, when it can be placed.
    pub caret: Option<usize>,
    /// The lines shown.
    pub lines: Vec<CodeLine>,
}

/// One source line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CodeLine {
    /// Its number.
    pub line: usize,
    /// Its text.
    pub text: String,
}

/// A value for the order as recorded and for the other order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Both<T> {
    /// The pair in its recorded order (the reference).
    pub recorded: T,
    /// The other order.
    pub reordered: T,
}

/// Both orders as the user saw them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Witness {
    /// The executions compared.
    pub sequences: Both<u32>,
    /// The events each ran, in order.
    pub orders: Both<Vec<String>>,
    /// The events moved ahead in the reordered execution.
    pub moved: Vec<String>,
    /// The events they were moved ahead of.
    pub delayed: Vec<String>,
    /// Events of the plan the reordered execution skipped (not enabled when reached).
    pub skipped: Vec<String>,
    /// Uncaught exceptions of each (`message @ url:line:col`).
    pub exceptions: Both<Vec<String>>,
    /// The source lines of the exceptions only the reordered order throws.
    pub exception_code: Vec<Code>,
    /// What the user sees, line diff (`-` recorded, `+` reordered).
    pub visible_diff: String,
    /// The DOM, line diff (`-` recorded, `+` reordered; at most 60 changed lines).
    pub dom_diff: String,
    /// Screenshots of both end states (files in the state directory).
    pub screenshots: Both<Option<String>>,
    /// The requests each made.
    pub requests: Both<Vec<String>>,
    /// Cookies and web storage of each, when they differ.
    pub storage: Option<Both<BTreeMap<String, String>>>,
    /// What differs.
    pub differences: Vec<Difference>,
}

/// An event run first because a step of its parent disabled it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DisabledEntry {
    /// The execution.
    pub sequence: u32,
    /// The disabling event.
    pub by: Option<String>,
    /// The event run first.
    pub disabled: Option<String>,
    /// Its verdict.
    pub verdict: RaceVerdict,
    /// Why.
    pub reason: String,
    /// For a harmful one: both orders and what differs.
    pub witness: Option<Witness>,
}

/// Why a file is not an explore report this version can read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file could not be read.
    #[error("reading {}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// It is not JSON.
    #[error("{} is not JSON", path.display())]
    NotJson {
        /// The file.
        path: PathBuf,
        /// The parser's complaint.
        #[source]
        source: serde_json::Error,
    },
    /// Another version, or no version at all.
    #[error(
        "{}: not an explore report of version {JSON_VERSION} (docs/explore-json.md){}",
        path.display(),
        match found {
            Some(v) => format!("; its version is {v}"),
            None => String::new(),
        }
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// Its `version`, if it has one.
        found: Option<serde_json::Value>,
    },
    /// The right version, but a field is missing or of the wrong type.
    #[error("{}: not an explore report of version {JSON_VERSION} (docs/explore-json.md)", path.display())]
    Shape {
        /// The file.
        path: PathBuf,
        /// Which field, and where.
        #[source]
        source: serde_json::Error,
    },
}

impl ExploreReport {
    /// Reads the document at `path`.
    pub fn read(path: &Path) -> Result<ExploreReport, ReadError> {
        let bytes = std::fs::read(path).map_err(|source| ReadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        ExploreReport::from_slice(&bytes, path)
    }

    /// Reads a document held in memory; `path` names it in errors.
    pub fn from_slice(bytes: &[u8], path: &Path) -> Result<ExploreReport, ReadError> {
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|source| ReadError::NotJson {
                path: path.to_path_buf(),
                source,
            })?;
        // The version first: a document of another version is that, whatever its fields.
        let found = value.get("version");
        if found.and_then(serde_json::Value::as_u64) != Some(u64::from(JSON_VERSION)) {
            return Err(ReadError::Version {
                path: path.to_path_buf(),
                found: found.cloned(),
            });
        }
        // From the bytes again rather than the value: errors then say where (line, column).
        serde_json::from_slice(bytes).map_err(|source| ReadError::Shape {
            path: path.to_path_buf(),
            source,
        })
    }
}

/// The document of `out`, explored with `bound`; `sources` gives the code around accesses.
pub fn build(out: &Outcome, bound: u32, sources: &dyn SourceProvider) -> ExploreReport {
    let entries::Entries { list, recorded } = entries::entries(out);
    let rows = entries::locations(&list[..recorded.min(list.len())]);
    let races: Vec<RaceEntry> = list[..recorded.min(list.len())]
        .iter()
        .map(|e| race_entry(out, e, sources))
        .collect();
    let deeper: Vec<RaceEntry> = list[recorded.min(list.len())..]
        .iter()
        .map(|e| race_entry(out, e, sources))
        .collect();
    let count = |v: RaceVerdict| {
        races
            .iter()
            .filter(|e| !e.covered && e.verdict == v)
            .count()
    };
    let mut rules = BTreeMap::new();
    for r in races.iter().filter(|r| !r.covered) {
        if let Some(rule) = r.rule {
            *rules.entry(rule_name(rule)).or_insert(0) += 1;
        }
    }
    let reversals = out
        .runs
        .iter()
        .filter(|r| r.origin.is_some() || r.probe.is_some_and(|p| !p.reference))
        .count();
    let racing = out.runs.first().map_or(0, |r| r.racing_pairs);
    let disabled = out
        .runs
        .iter()
        .filter(|r| r.origin.as_ref().is_some_and(|o| o.kind == Cause::Disabled))
        .map(|r| {
            let events = r.origin.as_ref().map(|o| &o.events);
            let (verdict, reason) = entries::judged(r);
            DisabledEntry {
                sequence: r.id,
                by: events.map(|e| e.0.clone()),
                disabled: events.map(|e| e.1.clone()),
                verdict,
                reason,
                witness: match (verdict, &r.origin) {
                    (RaceVerdict::Harmful, Some(o)) => out.runs.get(o.parent as usize).map(|p| {
                        witness(
                            out,
                            p,
                            r,
                            std::slice::from_ref(&o.events.1),
                            std::slice::from_ref(&o.events.0),
                            sources,
                        )
                    }),
                    _ => None,
                },
            }
        })
        .collect();
    let secs = out.elapsed.as_secs_f64();
    ExploreReport {
        version: JSON_VERSION,
        recording: out.site.recording.display().to_string(),
        page: out.site.page.clone(),
        bound,
        policy: out.policy.clone(),
        complete: out.complete,
        sequences: out.runs.len(),
        probes: out.triage.probes.len(),
        failures: out.failures,
        elapsed_s: (secs * 10.0).round() / 10.0,
        seconds_per_sequence: (!out.runs.is_empty())
            .then(|| ((secs / out.runs.len() as f64) * 100.0).round() / 100.0),
        pruned: Pruned {
            racing_pairs: racing,
            reversals,
            fraction: (racing > 0).then(|| 1.0 - (reversals as f64 / racing as f64).min(1.0)),
            enabled_fraction: out.explorer.pruned_fraction(),
            enabled_ceiling: out.explorer.pruned_ceiling(),
        },
        summary: Summary {
            races: races.iter().filter(|r| !r.covered).count(),
            harmful: count(RaceVerdict::Harmful),
            harmless: count(RaceVerdict::Harmless),
            invisible: races
                .iter()
                .filter(|r| !r.covered && r.rule == Some(Rule::InvisibleDom))
                .count(),
            not_explored: count(RaceVerdict::NotExplored),
            rules,
            covered_harmful: races.iter().filter(|r| r.covered).count(),
        },
        locations: rows.iter().map(location_entry).collect(),
        races,
        deeper,
        disabled,
    }
}

/// A rule's name as JSON writes it (`lost-input`).
pub fn rule_name(rule: Rule) -> String {
    serde_json::to_value(rule)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn location_entry(r: &LocationRow) -> LocationEntry {
    LocationEntry {
        location: r.location.clone(),
        name: r.name.clone(),
        verdict: r.verdict,
        rule: r.rule,
        window: r.window.clone(),
        pairs: r.races.len(),
        harmful: r.harmful,
        races: r.races.clone(),
    }
}

fn race_entry(out: &Outcome, e: &Entry, sources: &dyn SourceProvider) -> RaceEntry {
    let runs = e.runs.and_then(|p| {
        Some((
            out.runs.get(p.reference as usize)?,
            out.runs.get(p.reordered as usize)?,
        ))
    });
    RaceEntry {
        location: e.race.location.clone(),
        name: e.race.location_name.clone(),
        kind: e.race.kind.clone(),
        first: access(&e.race.first, sources),
        second: access(&e.race.second, sources),
        verdict: e.verdict,
        rule: e.rule,
        reason: e.reason.clone(),
        window: e.window.clone(),
        probe: e.probe,
        repeat_of: e.repeat_of,
        sequence: e.runs.map(|p| p.reordered),
        depth: e.depth,
        differences: e.differences.clone(),
        witness: match runs {
            // A repeat points at the race whose witness it shares.
            Some((a, b)) if e.verdict == RaceVerdict::Harmful && e.repeat_of.is_none() => {
                Some(witness(out, a, b, &e.moved, &e.delayed, sources))
            }
            _ => None,
        },
        covered: e.race.covered,
        also_at: e.also_at.clone(),
    }
}

fn access(a: &Side, sources: &dyn SourceProvider) -> Access {
    Access {
        stable: a.stable.clone(),
        access: a.access.clone(),
        source: a.source.clone(),
        scope: a.scope.clone(),
        code: a
            .source
            .as_deref()
            .and_then(|p| sources.snippet(p))
            .map(Code::from),
    }
}

impl From<Snippet> for Code {
    fn from(s: Snippet) -> Code {
        Code {
            caret: s.caret,
            col: s.col,
            line: s.line,
            lines: s
                .lines
                .into_iter()
                .map(|l| CodeLine {
                    line: l.line,
                    text: l.text,
                })
                .collect(),
            url: s.url,
        }
    }
}

/// Both orders of a comparison as the user saw them.
fn witness(
    out: &Outcome,
    reference: &RunRecord,
    reordered: &RunRecord,
    moved: &[String],
    delayed: &[String],
    sources: &dyn SourceProvider,
) -> Witness {
    let shot = |r: &RunRecord| out.screenshot(r).map(|p| p.display().to_string());
    let (a, b) = (&reference.snapshot, &reordered.snapshot);
    // Exceptions only the other order throws, with the lines that threw. The browser reports
    // positions in the code it ran (the instrumented script; for inline code, the runtime gives
    // the position in the inline script's instrumented text): only a position mapped back into
    // the script's own text has its lines shown (handlers' code is not mapped).
    let exception_code = b
        .exceptions
        .iter()
        .filter(|x| !a.exceptions.contains(x))
        .filter_map(|x| x.rsplit_once(" @ ").map(|(_, at)| at))
        .filter_map(|at| sources.snippet(&sources.original(at)?))
        .map(Code::from)
        .collect();
    let mapped = |v: &[String]| -> Vec<String> {
        v.iter()
            .map(|x| match x.rsplit_once(" @ ") {
                Some((what, at)) => match sources.original(at) {
                    Some(at) => format!("{what} @ {at}"),
                    None => x.clone(),
                },
                None => x.clone(),
            })
            .collect()
    };
    Witness {
        sequences: Both {
            recorded: reference.id,
            reordered: reordered.id,
        },
        orders: Both {
            recorded: reference.steps.clone(),
            reordered: reordered.steps.clone(),
        },
        moved: moved.to_vec(),
        delayed: delayed.to_vec(),
        skipped: reordered.skipped.clone(),
        exceptions: Both {
            recorded: mapped(&a.exceptions),
            reordered: mapped(&b.exceptions),
        },
        exception_code,
        visible_diff: verdict::dom_diff(&a.visible, &b.visible, DIFF_LINES),
        dom_diff: verdict::dom_diff(&a.dom, &b.dom, DIFF_LINES),
        screenshots: Both {
            recorded: shot(reference),
            reordered: shot(reordered),
        },
        requests: Both {
            recorded: a.requests.clone(),
            reordered: b.requests.clone(),
        },
        storage: (a.storage != b.storage).then(|| Both {
            recorded: a.storage.clone(),
            reordered: b.storage.clone(),
        }),
        differences: verdict::differences(a, b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<ExploreReport, ReadError> {
        ExploreReport::from_slice(text.as_bytes(), Path::new("e.json"))
    }

    /// The message with its causes, as the command line prints errors.
    fn message(e: &ReadError) -> String {
        let mut s = e.to_string();
        let mut cause = std::error::Error::source(e);
        while let Some(c) = cause {
            s.push_str(&format!(": {c}"));
            cause = c.source();
        }
        s
    }

    #[test]
    fn errors_name_the_file_and_the_problem() {
        let e = read("{").err().map(|e| message(&e));
        assert!(
            e.as_deref()
                .is_some_and(|m| m.starts_with("e.json is not JSON: EOF")),
            "{e:?}"
        );
        let e = read(r#"{"version": 1, "races": []}"#)
            .err()
            .map(|e| message(&e));
        assert_eq!(
            e.as_deref(),
            Some(
                "e.json: not an explore report of version 2 (docs/explore-json.md); its version is 1"
            )
        );
        let e = read(r#"{"races": []}"#).err().map(|e| message(&e));
        assert_eq!(
            e.as_deref(),
            Some("e.json: not an explore report of version 2 (docs/explore-json.md)")
        );
        let e = read(r#"{"version": 2, "races": []}"#)
            .err()
            .map(|e| message(&e));
        assert!(
            e.as_deref().is_some_and(|m| m.starts_with(
                "e.json: not an explore report of version 2 (docs/explore-json.md): missing field `recording`"
            )),
            "{e:?}"
        );
        let missing = Path::new("/nonexistent/e.json");
        let e = ExploreReport::read(missing).err().map(|e| message(&e));
        assert!(
            e.as_deref()
                .is_some_and(|m| m.starts_with("reading /nonexistent/e.json: ")),
            "{e:?}"
        );
    }
}
