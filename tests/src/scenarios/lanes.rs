//! The lanes, one function each: `detect` and `explore` (R4) run; `repair`
//! (EventRaceCommander policies) reports "not built" until its crate exists, and then takes
//! the same [`Context`] and [`Scenario`] (bad schedule, oracle, policy, harmful races,
//! bound).

use super::detect;
use super::drive::{self, Context, Order, Scenario};
use super::explored;
use super::matrix::Outcome;
use shepherd_explore::exploration::ExploreOptions;
use shepherd_explore::report;
use shepherd_explore::runner::{BrowserSpec, Timing, WorkerConfig};
use shepherd_explore::site::Site;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Longest single execution of the explore lane (the explorer's default is for real sites).
const RUN_LIMIT: Duration = Duration::from_secs(20);

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

/// What the explore lane found for one scenario.
pub struct Explored {
    /// Pass or fail (before known limits are applied).
    pub outcome: Outcome,
    /// Details for the log: executions, timing and the report's races.
    pub log: String,
}

/// Explore: record in the good order (nothing held, the schedule's input once the page has
/// loaded), explore the recording with R4 up to the manifest's bound within `budget` (one
/// worker on the lane's Chromium), and compare the report with the manifest: every harmful
/// race reported harmful, no harmless one.
pub async fn explore(ctx: &Context, sc: &Scenario, budget: Duration) -> Explored {
    let started = Instant::now();
    let fail = |why: String| Explored {
        outcome: Outcome::Fail(why),
        log: String::new(),
    };
    let run = match drive::record_in(ctx, sc, Order::Good).await {
        Ok(r) => r,
        Err(e) => return fail(format!("good-order run failed: {e:#}")),
    };
    let site = match Site::load(&run.recording) {
        Ok(s) => s,
        Err(e) => return fail(format!("reading the good-order recording: {e:#}")),
    };
    let bound = sc.manifest.explore.bound;
    let opts = ExploreOptions {
        bound,
        budget: Some(budget),
        max_sequences: None,
        workers: vec![WorkerConfig {
            recording: run.recording.clone(),
            // The lane's browser: a worker connected to it only opens its own contexts.
            browser: BrowserSpec::Connect(ctx.browser.ws_url().to_string()),
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            advertise: None,
            auth: None,
            cache_dir: None,
            timing: Timing {
                screenshots: false,
                run_limit: RUN_LIMIT,
                ..Timing::default()
            },
        }],
        state_dir: Some(ctx.scratch.join(format!("{}.explore", sc.name))),
        fresh: true,
        policy: None,
    };
    let out = match shepherd_explore::exploration::explore(site, &opts, |_| {}).await {
        Ok(o) => o,
        Err(e) => return fail(format!("exploration failed: {e:#}")),
    };
    let doc = report::json(&out, bound, &shepherd_races::report::NoSources);
    if std::env::var_os("SHEPHERD_EXPLORE_DEBUG").is_some() {
        for r in &out.runs {
            eprintln!(
                "run {} depth {} origin {:?}\n  steps {:?}\n  skipped {:?}\n  pairs {:?}\n  uncovered {:?}\n  verdict {:?}",
                r.id,
                r.depth,
                r.origin
                    .as_ref()
                    .map(|o| (o.parent, &o.kind, o.steps, &o.events)),
                r.steps,
                r.skipped,
                r.pairs
                    .iter()
                    .map(|p| (
                        p.first,
                        p.second,
                        p.races
                            .iter()
                            .map(|x| x.location.clone())
                            .collect::<Vec<_>>()
                    ))
                    .collect::<Vec<_>>(),
                r.uncovered
                    .iter()
                    .map(|u| (u.first, u.second, u.race.location.clone()))
                    .collect::<Vec<_>>(),
                r.verdict.as_ref().map(|v| &v.reason)
            );
        }
    }
    let found = explored::found(&doc);
    let mut verdict = explored::check(&sc.manifest, &found, out.complete);
    if run.oracle_fired == Some(true) {
        verdict.problems.push(format!(
            "the good order shows the oracle's error (exceptions: {:?})",
            run.exceptions
        ));
    }
    let log = format!(
        "  explore: {:.1?} ({} executions, {} failed, {}; recording {:.1?}); unlisted harmful {:?}\n{}",
        started.elapsed(),
        out.runs.len(),
        out.failures,
        if out.complete {
            "complete"
        } else {
            "budget spent"
        },
        run.elapsed,
        verdict.unlisted,
        explored::describe(&found)
    );
    Explored {
        outcome: if verdict.problems.is_empty() {
            Outcome::Pass
        } else {
            Outcome::Fail(verdict.problems.join("\n"))
        },
        log,
    }
}
