//! The race scenario corpus (`tests/scenarios/`), every scenario in every lane, in headless
//! Chromium through the real Shepherd proxy, instrumenter, runtime and analyser
//! (`shepherd-session`).
//!
//! First every manifest is checked (errors name file, line and column); then one Chromium
//! runs the scenarios one after another, each recorded (detect) and then, when its manifest
//! names a policy, served with that policy (repair); the matrix is printed and compared with the copy in
//! `tests/scenarios/README.md` (`SHEPHERD_UPDATE_SCENARIOS=1` rewrites the copy). Words on the
//! command line select scenarios by substring (the README is then not compared).
//! `SHEPHERD_SCENARIO_LOG=1` prints every run's races.

use anyhow::{Context as _, Result, bail};
use shepherd_browser::{Browser, LaunchOptions};
use shepherd_e2e::scenarios::drive::{Context, Scenario, corpus_dir};
use shepherd_e2e::scenarios::manifest::{Manifest, scenario_dirs};
use shepherd_e2e::scenarios::matrix::{self, Outcome, Row};
use shepherd_e2e::scenarios::origin::ScenarioOrigin;
use shepherd_e2e::scenarios::{lanes, product::Shepherd};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// The corpus must keep at least this many scenarios.
const MIN_SCENARIOS: usize = 40;

/// Longest time one scenario may take in one lane.
const SCENARIO_LIMIT: Duration = Duration::from_secs(40);

/// How long the explore lane explores one scenario (it stops starting executions then).
const EXPLORE_BUDGET: Duration = Duration::from_secs(20);

/// Longest time one scenario's exploration may take (the budget, then the executions
/// under way).
const EXPLORE_LIMIT: Duration = Duration::from_secs(60);

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

fn main() -> ExitCode {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let corpus = match load_corpus(filters.is_empty())
        .and_then(|c| schema_errors_have_places().map(|()| c))
    {
        Ok(c) => c,
        Err(e) => {
            println!("test manifests ... FAILED\n{e:#}");
            println!("test result: FAILED. 0 passed; 1 failed");
            return ExitCode::FAILURE;
        }
    };
    println!("test manifests ... ok ({} scenarios)", corpus.len());
    let selected: Vec<&Scenario> = corpus
        .iter()
        .filter(|s| filters.is_empty() || filters.iter().any(|f| s.name.contains(f.as_str())))
        .collect();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            println!("cannot start tokio: {e}");
            return ExitCode::FAILURE;
        }
    };
    let started = Instant::now();
    let rows = match rt.block_on(run_all(&selected)) {
        Ok(r) => r,
        Err(e) => {
            println!("test scenarios ... FAILED\n{e:#}");
            println!("test result: FAILED. 1 passed; 1 failed");
            return ExitCode::FAILURE;
        }
    };
    let table = matrix::render(&rows);
    println!("\n{table}");
    println!("corpus run: {:.1?}", started.elapsed());
    let mut failed: Vec<String> = rows
        .iter()
        .filter(|r| r.detect.fails() || r.repair.fails() || r.explore.fails())
        .map(|r| r.name.clone())
        .collect();
    if filters.is_empty() {
        match check_readme(&table) {
            Ok(()) => println!("test readme-matrix ... ok"),
            Err(e) => {
                println!("test readme-matrix ... FAILED\n{e:#}");
                failed.push("README matrix".into());
            }
        }
    }
    let total = rows.len() + 1;
    if failed.is_empty() {
        println!("test result: ok. {total} passed; 0 failed");
        ExitCode::SUCCESS
    } else {
        println!(
            "test result: FAILED. {} passed; {} failed ({})",
            total.saturating_sub(failed.len()),
            failed.len(),
            failed.join(", ")
        );
        ExitCode::FAILURE
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

async fn run_all(selected: &[&Scenario]) -> Result<Vec<Row>> {
    let scratch = tempfile::tempdir()?;
    let shepherd = Shepherd::new()?;
    let origin = ScenarioOrigin::start(corpus_dir()).await?;
    let browser = Browser::launch(LaunchOptions {
        spki_allow: vec![shepherd.spki.clone()],
        ..LaunchOptions::default()
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
    let mut rows = Vec::new();
    let permits = Arc::new(Semaphore::new(EXPLORE_CONCURRENCY));
    let mut explorations = tokio::task::JoinSet::new();
    for sc in selected {
        let t = Instant::now();
        let m = &sc.manifest;
        let (detect, false_alarms, mut log, control) =
            match tokio::time::timeout(SCENARIO_LIMIT, lanes::detect(&ctx, sc)).await {
                Ok(d) => (d.outcome, d.false_alarms, d.log, d.oracle_fired),
                Err(_) => (
                    Outcome::Fail(format!("timed out after {SCENARIO_LIMIT:?}")),
                    None,
                    String::new(),
                    None,
                ),
            };
        let detect = detect.with_limit(m.limit("detect").map(|k| k.reason.as_str()));
        let repair =
            match tokio::time::timeout(SCENARIO_LIMIT, lanes::repair(&ctx, sc, control)).await {
                Ok(r) => {
                    log.push_str(&r.log);
                    r.outcome
                }
                Err(_) => Outcome::Fail(format!("repair timed out after {SCENARIO_LIMIT:?}")),
            };
        let repair_failure = match &repair {
            Outcome::Fail(why) => Some(why.clone()),
            _ => None,
        };
        let repair = repair.with_limit(m.limit("repair").map(|k| k.reason.as_str()));
        // The good order is recorded now (the origin serves one scenario at a time); its
        // exploration replays the recording and runs beside the next scenarios.
        let explore = if !m.explored() {
            Outcome::NotRun
        } else {
            match lanes::explore_record(&ctx, sc, EXPLORE_BUDGET).await {
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
                    if let Outcome::Fail(why) = &o {
                        println!("test {} (explore) ... FAILED\n{why}", sc.name);
                    }
                    o
                }
            }
        };
        let failed = detect.fails() || repair.fails();
        let status = if failed { "FAILED" } else { "ok" };
        println!(
            "test {} ... {status} (detect: {detect}; repair: {repair}; {:.1?})",
            sc.name,
            t.elapsed()
        );
        if let Outcome::Fail(why) = &detect {
            println!("{why}");
        }
        if let Some(why) = &repair_failure
            && (verbose || repair.fails())
        {
            println!("repair: {why}");
        }
        // A false alarm fails the README check, not the scenario: its races are printed so
        // the run that saw it says which location it was.
        if verbose || failed || false_alarms.is_some_and(|n| n > 0) {
            print!("{log}");
        }
        rows.push(Row {
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
        });
    }
    while let Some(done) = explorations.join_next().await {
        let (index, e) = done?;
        let Some(row) = rows.get_mut(index) else {
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
        let status = if row.explore.fails() { "FAILED" } else { "ok" };
        println!("test {} (explore) ... {status} ({})", row.name, row.explore);
        if let Outcome::Fail(why) = &row.explore {
            println!("{why}");
        }
        if verbose || row.explore.fails() {
            print!("{log}");
        }
    }
    let Context { browser, .. } = ctx;
    let _ = browser.close().await;
    Ok(rows)
}
