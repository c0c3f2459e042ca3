//! `--fail-on harmful|uncovered`: whether a report should fail the pipeline, and the exit
//! status that says so (distinct from the status of an error, so a pipeline can tell "races
//! found" from "Shepherd could not run").

use crate::finding::{Finding, Status};
use std::str::FromStr;

/// The exit status of a run whose findings trip the gate (1 is an error, 2 a usage error).
pub const EXIT_TRIPPED: u8 = 3;

/// What fails the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailOn {
    /// Any harmful finding: a race the explorer showed harmful (with its witness), a
    /// location the race report's filters mark harmful, or a disabled event that changed the
    /// page.
    Harmful,
    /// Any finding not shown harmless: harmful ones, and every uncovered race that was not
    /// explored harmless (filtered ones included).
    Uncovered,
}

impl FromStr for FailOn {
    type Err = String;

    fn from_str(s: &str) -> Result<FailOn, String> {
        match s {
            "harmful" => Ok(FailOn::Harmful),
            "uncovered" => Ok(FailOn::Uncovered),
            other => Err(format!("{other:?}: expected harmful or uncovered")),
        }
    }
}

impl FailOn {
    /// The word on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            FailOn::Harmful => "harmful",
            FailOn::Uncovered => "uncovered",
        }
    }

    /// Whether `f` trips this gate.
    pub fn trips(self, f: &Finding) -> bool {
        match self {
            FailOn::Harmful => f.status == Status::Harmful,
            FailOn::Uncovered => matches!(
                f.status,
                Status::Harmful | Status::Uncovered | Status::Filtered
            ),
        }
    }

    /// The findings that trip this gate.
    pub fn tripped(self, findings: &[Finding]) -> Vec<&Finding> {
        findings.iter().filter(|f| self.trips(f)).collect()
    }
}
