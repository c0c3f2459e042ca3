//! The lanes, one function each: `detect` and `repair` (EventRaceCommander policies) run;
//! `explore` (R4) reports "not built" until the explorer exists, and then takes the same
//! [`Context`] and [`Scenario`] (bad schedule, oracle, harmful races, bound).

use super::detect;
use super::drive::{self, Context, Scenario};
use super::manifest::Oracle;
use super::matrix::Outcome;

/// What the detect lane found for one scenario.
pub struct Detected {
    /// Pass or fail (before known limits are applied).
    pub outcome: Outcome,
    /// Reported uncovered locations the manifest does not list.
    pub false_alarms: Option<usize>,
    /// Details for the log: the run's races, exceptions and timing.
    pub log: String,
    /// Whether the bad schedule (without a policy) showed the oracle's error: the repair
    /// lane's control.
    pub oracle_fired: Option<bool>,
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
                oracle_fired: None,
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
        oracle_fired: run.oracle_fired,
    }
}

/// What the repair lane found for one scenario.
pub struct Repair {
    /// Pass, fail, or why the lane has nothing to run (before known limits are applied).
    pub outcome: Outcome,
    /// Details for the log.
    pub log: String,
}

/// Repair: the bad schedule through `shepherd serve --policy` with the manifest's policy; the
/// oracle must not see the error. The control — the same schedule without a policy shows the
/// error — is the detect lane's bad-schedule check, passed in as `control` (whether its oracle
/// fired), so the schedule is not run a second time without a policy.
pub async fn repair(ctx: &Context, sc: &Scenario, control: Option<bool>) -> Repair {
    let m = &sc.manifest;
    let policy = m.repair.policy.as_str();
    if policy == "none" {
        let outcome = if matches!(m.oracle, Oracle::None { .. }) {
            Outcome::NothingToRepair
        } else {
            Outcome::NoPolicy
        };
        return Repair {
            outcome,
            log: String::new(),
        };
    }
    let fail = |why: String| Repair {
        outcome: Outcome::Fail(why),
        log: String::new(),
    };
    if control != Some(true) {
        return fail(format!(
            "no control: without a policy the bad schedule did not show the error (detect lane's oracle: {control:?})"
        ));
    }
    let spec = match policy.strip_prefix("file:") {
        Some(file) => sc.dir.join(file).to_string_lossy().into_owned(),
        None => policy.to_string(),
    };
    let set = match shepherd_policies::load(&spec) {
        Ok(set) => set,
        Err(e) => return fail(format!("policy {policy}: {}", e.rendered.trim_end())),
    };
    let run = match drive::repaired(ctx, sc, set).await {
        Ok(r) => r,
        Err(e) => return fail(format!("run with policy {policy} failed: {e:#}")),
    };
    let log = format!(
        "  repair with {policy}: {:.1?}; exceptions {:?}; oracle {:?}\n",
        run.elapsed, run.exceptions, run.oracle_fired
    );
    let outcome = match run.oracle_fired {
        Some(false) => Outcome::Pass,
        fired => Outcome::Fail(format!(
            "with policy {policy} the bad schedule still shows the error (oracle {fired:?}; exceptions {:?})",
            run.exceptions
        )),
    };
    Repair { outcome, log }
}

/// Explore: from a recording in the good order, the explorer reports every harmful race of
/// the manifest as harmful (within `explore.bound`) and none of the harmless ones. Not built:
/// the explorer does not exist yet.
pub async fn explore(_ctx: &Context, _sc: &Scenario) -> Outcome {
    Outcome::NotBuilt
}
