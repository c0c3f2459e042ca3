//! The race scenario corpus (`tests/scenarios/`), every scenario in every lane, in headless
//! Chromium through the real Shepherd proxy, instrumenter, runtime and analyser
//! (`shepherd-session`).
//!
//! First every manifest is checked (errors name file, line and column); then one Chromium
//! runs the scenarios one after another, each recorded (detect) and then, when its manifest
//! names a policy, served with that policy (repair), and explored from its good order beside
//! the next scenarios (explore); the matrix is printed and compared with the copy in
//! `tests/scenarios/README.md` (`SHEPHERD_UPDATE_SCENARIOS=1` rewrites the copy).
//!
//! The trials are `manifests`, one per scenario (detect and repair), `NAME (explore)` per
//! explored scenario and `readme-matrix`; the command line selects them as cargo's harness
//! does (`-- fig1`, `--exact`, `--skip '(explore)'`, `--list`). The README is compared only
//! when everything ran. `SHEPHERD_SCENARIO_LOG=1` prints every run's races.

use anyhow::{Context as _, Result, bail};
use shepherd_browser::{Browser, LaunchOptions};
use shepherd_e2e::patience;
use shepherd_e2e::scenarios::drive::{Context, Scenario, corpus_dir};
use shepherd_e2e::scenarios::manifest::{Manifest, scenario_dirs};
use shepherd_e2e::scenarios::matrix::{self, Outcome, Row};
use shepherd_e2e::scenarios::origin::ScenarioOrigin;
use shepherd_e2e::scenarios::{lanes, product::Shepherd};
use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// The corpus must keep at least this many scenarios.
const MIN_SCENARIOS: usize = 40;

/// Longest time one scenario may take in the detect or the repair lane on an idle machine; the
/// watchdog is this times the patience factor (minutes: a liveness guard, since the lanes'
/// own waits end as soon as their conditions hold).
const SCENARIO_LIMIT: Duration = Duration::from_secs(40);

/// Executions the explore lane runs at most for one scenario: a count, not a time, so that a
/// loaded machine explores as much as an idle one (the initial execution, two per probe, the
/// reorder phase's).
const EXPLORE_SEQUENCES: u64 = 40;

/// Longest time one scenario's exploration may take: a liveness watchdog only, far above
/// what its executions take on a loaded two-core machine.
const EXPLORE_LIMIT: Duration = Duration::from_secs(600);

/// Explorations running at once, beside the scenario being recorded.
const EXPLORE_CONCURRENCY: usize = 2;

fn load_corpus(whole: bool) -> Result<Vec<Scenario>> {
    let root = corpus_dir();
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for dir in scenario_dirs(&root).with_context(|| format!("listing {}", root.display()))? {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match Manifest::load(&dir) {
            Ok(manifest) => out.push(Scenario {
                name,
                dir,
                manifest,
            }),
            Err(e) => errors.push(e.to_string()),
        }
    }
    if !errors.is_empty() {
        bail!("bad manifests:\n{}", errors.join("\n"));
    }
    if whole && out.len() < MIN_SCENARIOS {
        bail!(
            "the corpus has {} scenarios, fewer than {MIN_SCENARIOS}",
            out.len()
        );
    }
    Ok(out)
}

/// A manifest with mistakes is refused with the place of the mistake.
fn schema_errors_have_places() -> Result<()> {
    let dir = corpus_dir().join("er-fig1-click-before-definition");
    let file = dir.join("manifest.toml");
    let good = std::fs::read_to_string(&file)?;
    Manifest::parse(&good, &file, &dir).map_err(|e| anyhow::anyhow!("{e}"))?;
    let cases: [(&str, &str, usize); 3] = [
        // an unknown key
        ("title = ", "colour = \"red\"\ntitle = ", 1),
        // a bad race kind
        ("kind = \"READ-WRITE\"", "kind = \"READ-WROTE\"", 0),
        // an unknown policy
        ("policy = \"init-user\"", "policy = \"init-usr\"", 0),
    ];
    for (from, to, line) in cases {
        if !good.contains(from) {
            bail!("the fig1 manifest no longer contains {from:?}");
        }
        let bad = good.replacen(from, to, 1);
        let want_line = if line > 0 {
            line
        } else {
            bad[..bad.find(to).unwrap_or(0)].matches('\n').count() + 1
        };
        match Manifest::parse(&bad, &file, &dir) {
            Ok(_) => bail!("accepted a manifest with {to:?}"),
            Err(e) if e.line == Some(want_line) && e.column.is_some() => {}
            Err(e) => bail!("{to:?}: error {e} is not placed at line {want_line}"),
        }
    }
    Ok(())
}

// The trials: `manifests`, each scenario (its detect and repair lanes), `NAME (explore)` for
// each explored scenario, `readme-matrix`.

/// The trial that loads and checks every manifest.
const MANIFESTS: &str = "manifests";
/// The trial that compares the matrix with the README's copy.
const README_MATRIX: &str = "readme-matrix";

/// The trial of a scenario's explore lane.
fn explore_trial(name: &str) -> String {
    format!("{name} (explore)")
}

/// Which lanes of a scenario the command line selected.
struct Selected<'a> {
    sc: &'a Scenario,
    /// Detect and repair (one trial: repair starts from what detect saw).
    detect: bool,
    /// The explore lane.
    explore: bool,
}

/// The outcome of one trial, decided before the harness reports it.
type Verdict = Result<libtest_mimic::Completion, String>;

fn main() -> ExitCode {
    // libtest-mimic reads the command line as cargo's own harness does (a filter, `--exact`,
    // `--skip`, `--list`, `--ignored`, …). The scenarios share one browser and one origin, and
    // explorations overlap the next recordings, so the selected lanes run as one pipeline
    // first; the trials then report what it found.
    let mut args = libtest_mimic::Arguments::from_args();
    args.test_threads = Some(1);
    let selects = |name: &str| !args.is_filtered_out(&libtest_mimic::Trial::test(name, || Ok(())));
    let whole = args.filter.is_none() && args.skip.is_empty() && !args.ignored;
    let corpus = match load_corpus(whole).and_then(|c| schema_errors_have_places().map(|()| c)) {
        Ok(c) => c,
        Err(e) => {
            // No scenario can be named: whatever the command line selected, this is the result.
            args.filter = None;
            args.skip.clear();
            args.ignored = false;
            let trial = libtest_mimic::Trial::test(MANIFESTS, move || Err(format!("{e:#}").into()));
            return libtest_mimic::run(&args, vec![trial]).exit_code();
        }
    };
    let mut names = vec![MANIFESTS.to_string()];
    for sc in &corpus {
        names.push(sc.name.clone());
        if sc.manifest.explored() {
            names.push(explore_trial(&sc.name));
        }
    }
    names.push(README_MATRIX.to_string());
    let mut verdicts: HashMap<String, Verdict> = HashMap::new();
    if !args.list {
        let selected: Vec<Selected> = corpus
            .iter()
            .map(|sc| Selected {
                sc,
                detect: selects(&sc.name),
                explore: sc.manifest.explored() && selects(&explore_trial(&sc.name)),
            })
            .filter(|s| s.detect || s.explore)
            .collect();
        let everything = selected.len() == corpus.len()
            && selected
                .iter()
                .all(|s| s.detect && s.explore == s.sc.manifest.explored());
        verdicts = run_selected(&selected, everything && selects(README_MATRIX));
        verdicts.insert(MANIFESTS.into(), Ok(libtest_mimic::Completion::Completed));
    }
    let trials = names
        .into_iter()
        .map(|name| {
            let verdict = verdicts.remove(&name);
            libtest_mimic::Trial::ignorable_test(name, move || match verdict {
                Some(v) => v.map_err(Into::into),
                None => Err("the pipeline did not run this trial".into()),
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}

/// Runs the selected lanes, prints the matrix, and decides every selected trial;
/// `readme` compares the matrix with the README's copy (only a whole corpus run can).
fn run_selected(selected: &[Selected], readme: bool) -> HashMap<String, Verdict> {
    let mut verdicts = HashMap::new();
    let partial = || {
        Ok(libtest_mimic::Completion::ignored_with(
            "compared only when every lane of every scenario ran",
        ))
    };
    if selected.is_empty() {
        verdicts.insert(README_MATRIX.into(), partial());
        return verdicts;
    }
    let done = || Ok(libtest_mimic::Completion::Completed);
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            for s in selected {
                verdicts.insert(s.sc.name.clone(), Err(format!("cannot start tokio: {e}")));
            }
            return verdicts;
        }
    };
    let started = Instant::now();
    let rows = match rt.block_on(run_all(selected)) {
        Ok(r) => r,
        Err(e) => {
            let why = format!("{e:#}");
            for s in selected {
                verdicts.insert(s.sc.name.clone(), Err(why.clone()));
                verdicts.insert(explore_trial(&s.sc.name), Err(why.clone()));
            }
            verdicts.insert(README_MATRIX.into(), Err(why));
            return verdicts;
        }
    };
    let table = matrix::render(&rows.iter().map(|(r, _)| r.clone()).collect::<Vec<_>>());
    println!("\n{table}");
    println!("corpus run: {:.1?}\n", started.elapsed());
    for (s, (row, log)) in selected.iter().zip(&rows) {
        if s.detect {
            let verdict = if row.detect.fails() || row.repair.fails() {
                Err(format!(
                    "detect: {}{}\nrepair: {}{}\n{}",
                    row.detect,
                    failure(&row.detect),
                    row.repair,
                    failure(&row.repair),
                    log.lanes
                ))
            } else {
                done()
            };
            verdicts.insert(row.name.clone(), verdict);
        }
        if s.explore {
            let verdict = if row.explore.fails() {
                Err(format!(
                    "{}{}\n{}",
                    row.explore,
                    failure(&row.explore),
                    log.explore
                ))
            } else {
                done()
            };
            verdicts.insert(explore_trial(&row.name), verdict);
        }
    }
    let matrix_verdict = if readme {
        check_readme(&table)
            .map(|()| libtest_mimic::Completion::Completed)
            .map_err(|e| format!("{e:#}"))
    } else {
        partial()
    };
    verdicts.insert(README_MATRIX.into(), matrix_verdict);
    verdicts
}

/// What a failed outcome says, after a colon (nothing for the others).
fn failure(o: &Outcome) -> String {
    match o {
        Outcome::Fail(why) => format!(": {why}"),
        _ => String::new(),
    }
}

fn check_readme(table: &str) -> Result<()> {
    let path = corpus_dir().join("README.md");
    let readme = std::fs::read_to_string(&path)?;
    let Some(now) = matrix::current(&readme) else {
        bail!("{} lacks the matrix markers", path.display());
    };
    if now == table.trim_matches('\n') {
        return Ok(());
    }
    if std::env::var_os("SHEPHERD_UPDATE_SCENARIOS").is_some() {
        let Some(new) = matrix::replace(&readme, table) else {
            bail!("{}: cannot replace the matrix", path.display());
        };
        std::fs::write(&path, new)?;
        println!("(rewrote the matrix in {})", path.display());
        return Ok(());
    }
    bail!(
        "the matrix in {} differs from what the suite computed; rerun with \
         SHEPHERD_UPDATE_SCENARIOS=1 to rewrite it, and review the diff. Computed:\n{table}",
        path.display()
    )
}

/// What a scenario's lanes printed: detect and repair, and the exploration's.
#[derive(Default)]
struct Logs {
    lanes: String,
    explore: String,
}

/// Runs the selected lanes of every selected scenario (in corpus order, explorations beside
/// the next recordings) and prints one progress line per lane; a row per selected scenario,
/// lanes not selected marked as not run.
async fn run_all(selected: &[Selected<'_>]) -> Result<Vec<(Row, Logs)>> {
    let scratch = tempfile::tempdir()?;
    let shepherd = Shepherd::new()?;
    let origin = ScenarioOrigin::start(corpus_dir()).await?;
    let defaults = LaunchOptions::default();
    let browser = Browser::launch(LaunchOptions {
        spki_allow: vec![shepherd.spki.clone()],
        // Starting Chromium and answering a command are waits for a condition.
        startup_timeout: patience(defaults.startup_timeout),
        command_timeout: patience(defaults.command_timeout),
        ..defaults
    })
    .await
    .context("launching Chromium (required: /usr/bin/chromium or $SHEPHERD_CHROMIUM)")?;
    let ctx = Context {
        browser,
        origin,
        shepherd,
        scratch: scratch.path().to_path_buf(),
        explore: Duration::from_millis(1200),
    };
    let verbose = std::env::var_os("SHEPHERD_SCENARIO_LOG").is_some();
    let mut rows: Vec<(Row, Logs)> = Vec::new();
    let permits = Arc::new(Semaphore::new(EXPLORE_CONCURRENCY));
    let mut explorations = tokio::task::JoinSet::new();
    for s in selected {
        let sc = s.sc;
        let t = Instant::now();
        let m = &sc.manifest;
        let mut logs = Logs::default();
        let (mut detect, mut repair, mut false_alarms) = (Outcome::NotRun, Outcome::NotRun, None);
        let mut repair_failure = None;
        if s.detect {
            let control;
            let watchdog = patience(SCENARIO_LIMIT);
            (detect, false_alarms, logs.lanes, control) =
                match tokio::time::timeout(watchdog, lanes::detect(&ctx, sc)).await {
                    Ok(d) => (d.outcome, d.false_alarms, d.log, d.oracle_fired),
                    Err(_) => (
                        Outcome::Fail(format!("timed out after {watchdog:?}")),
                        None,
                        String::new(),
                        None,
                    ),
                };
            detect = detect.with_limit(m.limit("detect").map(|k| k.reason.as_str()));
            repair = match tokio::time::timeout(watchdog, lanes::repair(&ctx, sc, control)).await {
                Ok(r) => {
                    logs.lanes.push_str(&r.log);
                    r.outcome
                }
                Err(_) => Outcome::Fail(format!("repair timed out after {watchdog:?}")),
            };
            if let Outcome::Fail(why) = &repair {
                repair_failure = Some(why.clone());
            }
            repair = repair.with_limit(m.limit("repair").map(|k| k.reason.as_str()));
        }
        // The good order is recorded now (the origin serves one scenario at a time); its
        // exploration replays the recording and runs beside the next scenarios.
        let explore = if !s.explore {
            Outcome::NotRun
        } else {
            match lanes::explore_record(&ctx, sc, EXPLORE_SEQUENCES).await {
                Ok(good) => {
                    let permit = permits.clone().acquire_owned().await?;
                    let index = rows.len();
                    explorations.spawn(async move {
                        let e = tokio::time::timeout(EXPLORE_LIMIT, lanes::explore(good)).await;
                        drop(permit);
                        (index, e)
                    });
                    Outcome::NotBuilt
                }
                Err(e) => {
                    let o = e
                        .outcome
                        .with_limit(m.limit("explore").map(|k| k.reason.as_str()));
                    println!("scenario {} (explore): {o}", sc.name);
                    logs.explore = e.log;
                    o
                }
            }
        };
        if s.detect {
            println!(
                "scenario {}: detect: {detect}; repair: {repair}; {:.1?}",
                sc.name,
                t.elapsed()
            );
            // A known limit's failure is shown on request (a failure's, by its trial).
            if let Some(why) = repair_failure.as_ref().filter(|_| verbose) {
                println!("repair: {why}");
            }
            // A false alarm fails the README check, not the scenario: its races are printed
            // so the run that saw it says which location it was.
            if verbose || false_alarms.is_some_and(|n| n > 0) {
                print!("{}", logs.lanes);
            }
        }
        rows.push((
            Row {
                name: sc.name.clone(),
                source: format!("{} {}", m.paper, m.figure),
                detect,
                repair,
                policy: (m.repair.policy != "none").then(|| m.repair.policy.clone()),
                no_policy: m.repair.reason.clone(),
                explore,
                false_alarms,
                limits: m
                    .known_limit
                    .iter()
                    .map(|k| (k.lane.clone(), k.reason.clone()))
                    .collect(),
            },
            logs,
        ));
    }
    while let Some(done) = explorations.join_next().await {
        let (index, e) = done?;
        let Some((row, logs)) = rows.get_mut(index) else {
            continue;
        };
        let (outcome, log) = match e {
            Ok(e) => (e.outcome, e.log),
            Err(_) => (
                Outcome::Fail(format!("timed out after {EXPLORE_LIMIT:?}")),
                String::new(),
            ),
        };
        let limit = row.limits.iter().find(|(lane, _)| lane == "explore");
        row.explore = outcome.with_limit(limit.map(|(_, why)| why.as_str()));
        println!("scenario {} (explore): {}", row.name, row.explore);
        if verbose {
            print!("{log}");
        }
        logs.explore = log;
    }
    let Context { browser, .. } = ctx;
    let _ = browser.close().await;
    Ok(rows)
}
