//! The lanes, one function each: `detect`, `repair` (EventRaceCommander policies through
//! `shepherd serve --policy`) and `explore` (R4's explorer from a recording in the good order),
//! all taking the same [`Context`] and [`Scenario`] (bad schedule, oracle, policy, harmful
//! races, bound).

use super::detect;
use super::drive::{self, Context, Order, Scenario};
use super::explored;
use super::manifest::{Manifest, Oracle};
use super::matrix::Outcome;
use shepherd_explore::exploration::ExploreOptions;
use shepherd_explore::runner::{BrowserSpec, Timing, WorkerConfig};
use shepherd_explore_model::report;
use shepherd_explore_model::site::Site;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Longest single execution of the explore lane (the explorer's default is for real sites;
/// a page that never settles, a worker's or a service worker's, spends it on every
/// execution, and src-worker-message's recorded order needs more than 8 s to reach its
/// click).
const RUN_LIMIT: Duration = Duration::from_secs(20);

/// Longest wait for a quiet state in the explore lane (a page with a streaming fetch body
/// is never quiet by the explorer's measure).
const SETTLE_LIMIT: Duration = Duration::from_secs(1);

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

/// What the reach lane found for one scenario.
pub struct Reached {
    /// Pass, fail, or not run (no `[reach]`), before known limits are applied.
    pub outcome: Outcome,
    /// Details for the log.
    pub log: String,
}

/// Reach: the page recorded as `shepherd record URL --explore` records it (nothing held,
/// delayed or scheduled; the exercise with `record`'s seed for `reach.explore_ms`), then
/// analysed as `shepherd races` does; the exercise must reach every control and the report
/// list every race of the manifest, with no false alarm.
pub async fn reach(ctx: &Context, sc: &Scenario) -> Reached {
    let Some(r) = &sc.manifest.reach else {
        return Reached {
            outcome: Outcome::NotRun,
            log: String::new(),
        };
    };
    let order = Order::Explored {
        duration: Duration::from_millis(r.explore_ms),
        max_events: r.max_events,
    };
    let run = match drive::record_in(ctx, sc, order).await {
        Ok(run) => run,
        Err(e) => {
            return Reached {
                outcome: Outcome::Fail(format!("record --explore run failed: {e:#}")),
                log: String::new(),
            };
        }
    };
    let verdict = detect::check_reach(&sc.manifest, &run.races);
    let exercised = run
        .races
        .pointer("/summary/exercised")
        .map(|e| {
            format!(
                "{} of {}",
                e.get("exercised").cloned().unwrap_or_default(),
                e.get("controls").cloned().unwrap_or_default()
            )
        })
        .unwrap_or_else(|| "no coverage".into());
    let log = format!(
        "  reach: {:.1?}; exceptions {:?}; controls exercised {exercised}; false alarms {:?}\n{}",
        run.elapsed,
        run.exceptions,
        verdict.false_alarms,
        detect::describe(&detect::reported(&run.races))
    );
    Reached {
        outcome: if verdict.passed() {
            Outcome::Pass
        } else {
            Outcome::Fail(verdict.problems.join("\n"))
        },
        log,
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
    let run = match drive::repaired(ctx, sc, set.clone()).await {
        Ok(r) => r,
        Err(e) => return fail(format!("run with policy {policy} failed: {e:#}")),
    };
    let mut log = format!(
        "  repair with {policy}: {:.1?}; exceptions {:?}; oracle {:?}\n",
        run.elapsed, run.exceptions, run.oracle_fired
    );
    let outcome = match run.oracle_fired {
        Some(false) if m.repair.covers_not.is_some() => Outcome::Pass,
        Some(false) => match covers_agree(ctx, sc, &set).await {
            Ok(found) => {
                log.push_str(&found);
                Outcome::Pass
            }
            Err(why) => Outcome::Fail(why),
        },
        fired => Outcome::Fail(format!(
            "with policy {policy} the bad schedule still shows the error (oracle {fired:?}; exceptions {:?})",
            run.exceptions
        )),
    };
    Repair { outcome, log }
}

/// `shepherd policy covers` agrees with the runtime: on the repaired execution (the bad
/// schedule with the policy enforced, recorded), where the harmful races happen in the order
/// the policy made them take, the policy orders every race the manifest calls harmful that
/// the run has. Returns what it found, for the log.
async fn covers_agree(
    ctx: &Context,
    sc: &Scenario,
    set: &shepherd_policies::PolicySet,
) -> Result<String, String> {
    let m = &sc.manifest;
    let run = drive::record_repaired(ctx, sc, set.clone())
        .await
        .map_err(|e| format!("recording the repaired run for policy covers failed: {e:#}"))?;
    if run.oracle_fired == Some(true) {
        return Err(format!(
            "recorded with the policy, the bad schedule shows the error (exceptions {:?})",
            run.exceptions
        ));
    }
    let races = ctx
        .shepherd
        .covers(&run.recording, set)
        .map_err(|e| format!("policy covers on the repaired run: {e:#}"))?;
    let mut log = String::new();
    let mut unordered = Vec::new();
    let mut checked = 0;
    for want in m.races.iter().filter(|r| r.harmful && r.repaired) {
        for r in races
            .iter()
            .filter(|r| detect::same_place(want, &r.location, &r.sources))
        {
            checked += 1;
            let verdict = match &r.ordered_by {
                Some(rules) if rules.is_empty() => "ordered by happens-before".to_string(),
                Some(rules) => format!("ordered by {}", rules.join(", ")),
                None => {
                    unordered.push(format!("{} {}", r.location, r.kind));
                    "not ordered".to_string()
                }
            };
            log.push_str(&format!(
                "    policy covers, repaired run: {} {}: {verdict}\n",
                r.location, r.kind
            ));
        }
    }
    if !unordered.is_empty() {
        return Err(format!(
            "policy covers does not order what the policy repaired, on the repaired run recorded: {}\n{log}",
            unordered.join("; ")
        ));
    }
    if checked == 0 {
        log.push_str("    policy covers, repaired run: the run has none of the harmful races\n");
    }
    Ok(log)
}

/// What the explore lane found for one scenario.
pub struct Explored {
    /// Pass or fail (before known limits are applied).
    pub outcome: Outcome,
    /// Details for the log: executions, timing and the report's races.
    pub log: String,
}

impl Explored {
    fn failed(why: String) -> Explored {
        Explored {
            outcome: Outcome::Fail(why),
            log: String::new(),
        }
    }
}

/// A scenario recorded in the good order, ready to explore. It owns what the exploration
/// needs (the replay does not use the origin), so it can run while the next scenario is
/// recorded.
pub struct GoodRun {
    manifest: Manifest,
    site: Site,
    opts: ExploreOptions,
    oracle_fired: Option<bool>,
    exceptions: Vec<String>,
    recorded: Duration,
}

/// Explore, first half: record `sc` in the good order (nothing held, the schedule's input
/// once the page has loaded) and prepare an exploration with the manifest's bound, `budget`
/// and one worker on the lane's Chromium.
pub async fn explore_record(
    ctx: &Context,
    sc: &Scenario,
    sequences: u64,
) -> Result<GoodRun, Explored> {
    let run = drive::record_in(ctx, sc, Order::Good)
        .await
        .map_err(|e| Explored::failed(format!("good-order run failed: {e:#}")))?;
    let site = Site::load(&run.recording)
        .map_err(|e| Explored::failed(format!("reading the good-order recording: {e:#}")))?;
    let opts = ExploreOptions {
        bound: sc.manifest.bound(),
        budget: None,
        max_sequences: Some(sequences),
        workers: vec![WorkerConfig {
            recording: run.recording.clone(),
            // The lane's browser: a worker connected to it only opens contexts of its own.
            browser: BrowserSpec::Connect(ctx.browser.ws_url().to_string()),
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            advertise: None,
            auth: None,
            cache_dir: None,
            timing: Timing {
                screenshots: false,
                run_limit: RUN_LIMIT,
                settle_limit: SETTLE_LIMIT,
                ..Timing::default()
            },
        }],
        state_dir: Some(ctx.scratch.join(format!("{}.explore", sc.name))),
        fresh: true,
        policy: None,
        triage: Default::default(),
        stop: Default::default(),
    };
    Ok(GoodRun {
        manifest: sc.manifest.clone(),
        site,
        opts,
        oracle_fired: run.oracle_fired,
        exceptions: run.exceptions,
        recorded: run.elapsed,
    })
}

/// Explore, second half: explore the good-order recording with R4 and compare the report
/// with the manifest: every harmful race reported harmful, no harmless one. Whether the good
/// order showed the oracle's error is only logged: without holds some pages still load in
/// either order (an async script), and the explorer judges reversals against the recorded
/// order whichever it was.
pub async fn explore(good: GoodRun) -> Explored {
    let started = Instant::now();
    let GoodRun {
        manifest,
        site,
        opts,
        oracle_fired,
        exceptions,
        recorded,
    } = good;
    let out = match shepherd_explore::exploration::explore(site, &opts, |_| {}).await {
        Ok(o) => o,
        Err(e) => return Explored::failed(format!("exploration failed: {e:#}")),
    };
    let doc = report::build(&out, opts.bound, &shepherd_races::report::NoSources);
    let found = explored::found(&doc);
    let verdict = explored::check(&manifest, &found, out.complete);
    let mut log = format!(
        "  explore: {:.1?} after a {:.1?} recording (oracle {:?}, exceptions {:?}); {} executions ({} failed, {}); unlisted harmful {:?}\n",
        started.elapsed(),
        recorded,
        oracle_fired,
        exceptions,
        out.runs.len(),
        out.failures,
        if out.complete {
            "complete"
        } else {
            "budget spent"
        },
        verdict.unlisted,
    );
    // Probes and races first, the executions last: a CI log keeps only the start of a
    // long failure.
    // The recorded order's racing step pairs: what the reorder phase could reverse.
    if let Some(r0) = out.runs.first() {
        for p in &r0.pairs {
            let step = |i: u32| r0.steps.get(i as usize).map_or("?", String::as_str);
            log.push_str(&format!(
                "    racing steps {} / {}: {}\n",
                step(p.first),
                step(p.second),
                p.races
                    .iter()
                    .map(|x| x.location.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    for p in &out.probes {
        let sides = out
            .triage
            .probes
            .get(p.probe as usize)
            .map_or(String::new(), |t| {
                format!(" ({:?} before {:?})", t.moved, t.delayed)
            });
        log.push_str(&format!(
            "    probe {}{sides}, executions {:?}/{:?}: {:?}\n",
            p.probe, p.reference, p.run, p.outcome
        ));
    }
    log.push_str(&explored::describe(&found));
    for r in &out.runs {
        log.push_str(&format!(
            "    execution {} depth {} ({} ms{}): {}{}\n",
            r.id,
            r.depth,
            r.elapsed_ms,
            r.stopped
                .as_deref()
                .map_or(String::new(), |s| format!(", {s}")),
            r.origin
                .as_ref()
                .map_or("the recorded order".to_string(), |o| format!(
                    "{} {} / {}",
                    o.kind, o.events.0, o.events.1
                )),
            r.verdict
                .as_ref()
                .map_or(String::new(), |v| format!(" -> {}", v.reason))
        ));
    }
    Explored {
        outcome: if verdict.problems.is_empty() {
            Outcome::Pass
        } else {
            Outcome::Fail(verdict.problems.join("\n"))
        },
        log,
    }
}
