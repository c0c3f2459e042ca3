//! The lanes, one function each: `detect` runs; `repair` (EventRaceCommander policies) and
//! `explore` (R4) report "not built" until their crates exist, and then take the same
//! [`Context`] and [`Scenario`] (bad schedule, oracle, policy, harmful races, bound).

use super::detect;
use super::drive::{self, Context, Scenario};
use super::matrix::Outcome;

/// What the detect lane found for one scenario.
pub struct Detected {
    /// Pass or fail (before known limits are applied).
    pub outcome: Outcome,
    /// Reported uncovered locations the manifest does not list.
    pub false_alarms: Option<usize>,
    /// Details for the log: the run's races, exceptions and timing.
    pub log: String,
}

/// Detect: record with the schedule and auto-exploration, analyse as `shepherd races` does,
/// and compare with the manifest; the bad schedule must also show the oracle's error (so the
/// repair and explore lanes inherit a schedule that works).
pub async fn detect(ctx: &Context, sc: &Scenario) -> Detected {
    let run = match drive::record(ctx, sc).await {
        Ok(r) => r,
        Err(e) => {
            return Detected {
                outcome: Outcome::Fail(format!("run failed: {e:#}")),
                false_alarms: None,
                log: String::new(),
            };
        }
    };
    let reported = detect::reported(&run.races);
    let mut verdict = detect::check(&sc.manifest, &reported);
    if run.oracle_fired == Some(false) {
        verdict.problems.push(format!(
            "the bad schedule did not show the oracle's error (exceptions: {:?})",
            run.exceptions
        ));
    }
    let log = format!(
        "  {:.1?}; exceptions {:?}; oracle {:?}; false alarms {:?}\n{}",
        run.elapsed,
        run.exceptions,
        run.oracle_fired,
        verdict.false_alarms,
        detect::describe(&reported)
    );
    Detected {
        outcome: if verdict.passed() {
            Outcome::Pass
        } else {
            Outcome::Fail(verdict.problems.join("\n"))
        },
        false_alarms: Some(verdict.false_alarms.len()),
        log,
    }
}

/// Repair: the bad schedule through `shepherd serve` without a policy (the oracle fires) and
/// with the manifest's policy (it does not). Not built: the policy language does not exist
/// yet.
pub async fn repair(_ctx: &Context, _sc: &Scenario) -> Outcome {
    Outcome::NotBuilt
}

/// Explore: from a recording in the good order, the explorer reports every harmful race of
/// the manifest as harmful (within `explore.bound`) and none of the harmless ones. Not built:
/// the explorer does not exist yet.
pub async fn explore(_ctx: &Context, _sc: &Scenario) -> Outcome {
    Outcome::NotBuilt
}
