//! The versioned JSON document (`docs/explore-json.md`): its types, shared by the writer
//! (`shepherd explore --json`) and the readers (`shepherd races --explored`), built from an
//! outcome and read back with errors that name the file.
//!
//! Fields are declared in alphabetical order: the document was first written from `json!`
//! maps, which serde_json (without `preserve_order`) writes with sorted keys, and the bytes
//! stay what they were.

use super::entries::{self, DIFF_LINES, RaceVerdict};
use crate::outcome::{Cause, Outcome, RunRecord};
use crate::steps::AccessNote;
use crate::verdict::{self, Class, Difference};
use serde::{Deserialize, Serialize};
use shepherd_races::report::SourceProvider;
use shepherd_races::report::sources::Snippet;
use std::path::{Path, PathBuf};

/// Version of the JSON document.
pub const JSON_VERSION: u32 = 1;

/// The whole document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExploreReport {
    /// The conflict-reversal bound of this run.
    pub bound: u32,
    /// Nothing is left within the bound.
    pub complete: bool,
    /// Sequences that ran an event first because a step disabled it.
    pub disabled: Vec<DisabledEntry>,
    /// Exploring time over all sessions, in seconds (one decimal).
    pub elapsed_s: f64,
    /// Executions that failed.
    pub failures: u64,
    /// The top-level page the recording loads.
    pub page: String,
    /// The repair policies every execution enforced (comma-separated names).
    pub policy: Option<String>,
    /// How much reordering the explorer avoided.
    pub pruned: Pruned,
    /// The races: harmful first, then harmless, then not reordered; by location.
    pub races: Vec<RaceEntry>,
    /// The recording explored.
    pub recording: String,
    /// Seconds per execution (two decimals); `None` before the first.
    pub seconds_per_sequence: Option<f64>,
    /// Executions so far, the initial one included.
    pub sequences: usize,
    /// Races per verdict.
    pub summary: Summary,
    /// Schema version ([`JSON_VERSION`]).
    pub version: u32,
}

/// What the explorer did not have to run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pruned {
    /// R4's measure: over every state reached, the share of enabled events never explored.
    pub enabled_fraction: Option<f64>,
    /// `1 − reversals / racing_pairs` (`None` without racing pairs).
    pub fraction: Option<f64>,
    /// Conflicting step pairs of the initial execution the platform does not order.
    pub racing_pairs: usize,
    /// Sequences explored because of a race or a disabled event.
    pub reversals: usize,
}

/// Races per verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Harmful races.
    pub harmful: usize,
    /// Harmless races.
    pub harmless: usize,
    /// Races not reordered.
    pub not_reordered: usize,
}

/// One race with its verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RaceEntry {
    /// For reordered races: how the end states compare.
    pub class: Option<Class>,
    /// The reversing execution's number of reversals from the initial one.
    pub depth: Option<u32>,
    /// What differs between the two end states (`None` when not reordered).
    pub differences: Option<Vec<Difference>>,
    /// The earlier access.
    pub first: Access,
    /// `<first>-<second>`, each `READ`, `WRITE` or `UPDATE`.
    pub kind: String,
    /// The shared location, as `shepherd races` names it.
    pub location: String,
    /// Why, in words.
    pub reason: String,
    /// The later access.
    pub second: Access,
    /// The execution that reversed it.
    pub sequence: Option<u32>,
    /// The verdict.
    pub verdict: RaceVerdict,
    /// For harmful races: both orders and what differs.
    pub witness: Option<Witness>,
}

/// One side of a race.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Access {
    /// `READ`, `WRITE` or `UPDATE`.
    pub access: String,
    /// The source lines, when the recording holds the file.
    pub code: Option<Code>,
    /// The innermost scope label.
    pub scope: Option<String>,
    /// `url:line:col` of the access or of its scope.
    pub source: Option<String>,
    /// The action's stable id.
    pub stable: String,
}

/// Source lines around a position (a [`Snippet`], as `docs/races-json.md` writes it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Code {
    /// 0-based character index of the column in the position's line, when within it.
    pub caret: Option<usize>,
    /// 1-based column (UTF-16 code units).
    pub col: usize,
    /// 1-based line of the position.
    pub line: usize,
    /// The line with a few around it.
    pub lines: Vec<CodeLine>,
    /// The file the lines come from.
    pub url: String,
}

/// One numbered source line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeLine {
    /// 1-based line number.
    pub line: usize,
    /// Its text.
    pub text: String,
}

/// A value for the parent execution and one for the reversed (child) one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Both<T> {
    /// The reversed execution's.
    pub child: T,
    /// The parent's.
    pub parent: T,
}

/// What a reversal changed: both orders, the reversed pair, exceptions, DOM diff,
/// screenshots, requests.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Witness {
    /// What differs (`None` when the reversal has no verdict).
    pub differences: Option<Vec<Difference>>,
    /// Line diff of the two DOMs (`-` parent, `+` reversed).
    pub dom_diff: String,
    /// Uncaught exceptions.
    pub exceptions: Both<Vec<String>>,
    /// The events of both executions, in order.
    pub orders: Both<Vec<String>>,
    /// The parent execution.
    pub parent_sequence: u32,
    /// URLs of the responses each asked for.
    pub requests: Both<Vec<String>>,
    /// The reversed pair.
    pub reversed: Reversed,
    /// PNG files of both end states.
    pub screenshots: Both<Option<String>>,
    /// Events of the plan the reversed execution skipped.
    pub skipped: Vec<String>,
}

/// The reversed pair, as event names and as the parent's step indices.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reversed {
    /// The earlier event in the parent.
    pub first: String,
    /// For a race between messages of one FIFO queue: the two posts swapped.
    pub posts: Option<(u32, u32)>,
    /// The later event in the parent.
    pub second: String,
    /// The parent's steps of the two events.
    pub steps: (u32, u32),
}

/// A sequence that ran an event before the step that disabled it in the parent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisabledEntry {
    /// The disabling event.
    pub by: Option<String>,
    /// The event run first.
    pub disabled: Option<String>,
    /// Why.
    pub reason: String,
    /// The execution.
    pub sequence: u32,
    /// Its verdict.
    pub verdict: RaceVerdict,
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
    let list = entries::entries(out);
    let count = |v: RaceVerdict| list.iter().filter(|e| e.verdict == v).count();
    let reversals = out.runs.iter().filter(|r| r.origin.is_some()).count();
    let racing = out.runs.first().map_or(0, |r| r.racing_pairs);
    let races = list
        .iter()
        .map(|e| {
            let child = e.sequence.and_then(|s| out.runs.get(s as usize));
            let judged = child.and_then(|c| c.verdict.as_ref());
            RaceEntry {
                location: e.race.location.clone(),
                kind: e.race.kind.clone(),
                first: access(&e.race.first, sources),
                second: access(&e.race.second, sources),
                verdict: e.verdict,
                class: judged.map(|v| v.class),
                reason: e.reason.clone(),
                differences: judged.map(|v| v.differences.clone()),
                sequence: e.sequence,
                depth: child.map(|c| c.depth),
                witness: match child {
                    Some(c) if e.verdict == RaceVerdict::Harmful => witness(out, c),
                    _ => None,
                },
            }
        })
        .collect();
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
                witness: match verdict {
                    RaceVerdict::Harmful => witness(out, r),
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
        failures: out.failures,
        elapsed_s: (secs * 10.0).round() / 10.0,
        seconds_per_sequence: (!out.runs.is_empty())
            .then(|| ((secs / out.runs.len() as f64) * 100.0).round() / 100.0),
        pruned: Pruned {
            racing_pairs: racing,
            reversals,
            fraction: (racing > 0).then(|| 1.0 - (reversals as f64 / racing as f64).min(1.0)),
            enabled_fraction: out.explorer.pruned_fraction(),
        },
        summary: Summary {
            harmful: count(RaceVerdict::Harmful),
            harmless: count(RaceVerdict::Harmless),
            not_reordered: count(RaceVerdict::NotReordered),
        },
        races,
        disabled,
    }
}

fn access(a: &AccessNote, sources: &dyn SourceProvider) -> Access {
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

/// The witness of a reversal (`None` without an origin or a parent).
fn witness(out: &Outcome, child: &RunRecord) -> Option<Witness> {
    let o = child.origin.as_ref()?;
    let parent = out.runs.get(o.parent as usize)?;
    let shot = |r: &RunRecord| out.screenshot(r).map(|p| p.display().to_string());
    Some(Witness {
        orders: Both {
            parent: parent.steps.clone(),
            child: child.steps.clone(),
        },
        parent_sequence: parent.id,
        reversed: Reversed {
            first: o.events.0.clone(),
            second: o.events.1.clone(),
            steps: o.steps,
            posts: o.posts,
        },
        skipped: child.skipped.clone(),
        exceptions: Both {
            parent: parent.snapshot.exceptions.clone(),
            child: child.snapshot.exceptions.clone(),
        },
        dom_diff: verdict::dom_diff(&parent.snapshot.dom, &child.snapshot.dom, DIFF_LINES),
        screenshots: Both {
            parent: shot(parent),
            child: shot(child),
        },
        requests: Both {
            parent: parent.snapshot.requests.clone(),
            child: child.snapshot.requests.clone(),
        },
        differences: child.verdict.as_ref().map(|v| v.differences.clone()),
    })
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
        let e = read(r#"{"version": 2, "races": []}"#)
            .err()
            .map(|e| message(&e));
        assert_eq!(
            e.as_deref(),
            Some(
                "e.json: not an explore report of version 1 (docs/explore-json.md); its version is 2"
            )
        );
        let e = read(r#"{"races": []}"#).err().map(|e| message(&e));
        assert_eq!(
            e.as_deref(),
            Some("e.json: not an explore report of version 1 (docs/explore-json.md)")
        );
        let e = read(r#"{"version": 1, "races": []}"#)
            .err()
            .map(|e| message(&e));
        assert!(
            e.as_deref().is_some_and(|m| m.starts_with(
                "e.json: not an explore report of version 1 (docs/explore-json.md): missing field `bound`"
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
