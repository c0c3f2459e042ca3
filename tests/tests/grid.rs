//! `shepherd explore --grid` end to end: a Selenium Grid 4 on loopback (a hub and two nodes,
//! each running Chromium through Chromium's driver: `shepherd_testkit::grid`), explored through
//! and compared with local workers; then a node killed in the middle of an exploration.
//!
//! Java, `chromedriver` and the Selenium server jar are required (a missing one fails the test
//! and names `scripts/install-deps`); the JVMs start slowly on a loaded machine, so every wait
//! for the Grid is scaled by the patience factor.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use serde_json::Value;
use shepherd_browser::Page;
use shepherd_e2e::explore_site::record;
use shepherd_e2e::{Case, case, patience, run_cases_within};
use shepherd_explore::exploration::{ExploreOptions, Progress, explore};
use shepherd_explore::grid::{Grid, GridOptions};
use shepherd_explore::runner::{BrowserSpec, Timing, WorkerConfig};
use shepherd_explore_model::outcome::Outcome;
use shepherd_explore_model::report;
use shepherd_explore_model::site::Site;
use shepherd_runtime::Mode;
use shepherd_testkit::grid::SeleniumGrid;

fn main() -> ExitCode {
    let cases: &[Case] = &[
        ("a_grid_gives_the_verdicts_of_local_workers", grid_verdicts),
        (
            "a_node_killed_mid_run_costs_a_retry_and_leaks_no_session",
            node_killed,
        ),
    ];
    // The watchdog (times the patience factor) outlasts a Grid's start and four explorations.
    run_cases_within(Mode::Record, cases, Duration::from_secs(300))
}

/// Starts a hub and two nodes off the async runtime. One Chromium slot per node: the two
/// workers' sessions are then on different nodes, and a session asked for while both are taken
/// waits in the Grid's queue.
async fn start_grid() -> Result<SeleniumGrid> {
    let cache = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    tokio::task::spawn_blocking(move || SeleniumGrid::start(&cache, 2, 1))
        .await
        .context("starting the Selenium Grid")
}

fn worker(site: &Site, browser: BrowserSpec, auth: Option<String>) -> WorkerConfig {
    WorkerConfig {
        recording: site.recording.clone(),
        browser,
        listen: "127.0.0.1:0".parse().unwrap_or_else(|_| unreachable!()),
        advertise: None,
        auth,
        cache_dir: None,
        timing: Timing::default(),
    }
}

fn options(bound: u32, workers: Vec<WorkerConfig>, dir: &std::path::Path) -> ExploreOptions {
    ExploreOptions {
        bound,
        // A backstop: the explorations complete well within it on an idle machine.
        budget: Some(patience(Duration::from_secs(150))),
        max_sequences: None,
        workers,
        state_dir: Some(dir.to_path_buf()),
        fresh: true,
        policy: None,
        triage: Default::default(),
        stop: Default::default(),
    }
}

/// Two workers on `grid`, each behind its own proxy credentials (the rule off loopback).
fn grid_workers(site: &Site, grid: &Grid) -> Vec<WorkerConfig> {
    (0..2)
        .map(|k| {
            worker(
                site,
                BrowserSpec::Grid(grid.clone()),
                Some(format!("grid{k}:s3cret{k}")),
            )
        })
        .collect()
}

/// The report's verdict of every race: `(location, kind, verdict)`, sorted.
fn verdicts(out: &Outcome, bound: u32) -> Result<Vec<(String, String, String)>> {
    let doc = serde_json::to_value(report::build(
        out,
        bound,
        &shepherd_races::report::NoSources,
    ))?;
    let mut v: Vec<(String, String, String)> = doc["races"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
            (s("location"), s("kind"), s("verdict"))
        })
        .collect();
    v.sort();
    Ok(v)
}

/// Explores `site` with `workers`; the outcome and its verdicts.
async fn run(
    site: &Site,
    bound: u32,
    workers: Vec<WorkerConfig>,
    progress: impl FnMut(&Progress),
) -> Result<(Outcome, Vec<(String, String, String)>, tempfile::TempDir)> {
    let dir = tempfile::tempdir()?;
    let out = explore(site.clone(), &options(bound, workers, dir.path()), progress).await?;
    let v = verdicts(&out, bound)?;
    Ok((out, v, dir))
}

/// Waits until the Grid's status lists no session (a dead node's go when the hub drops it).
async fn no_session_left(grid: &Grid, selenium: &SeleniumGrid) -> Result<()> {
    let limit = patience(Duration::from_secs(30));
    let start = Instant::now();
    loop {
        let left = grid.sessions().await?;
        if left.is_empty() {
            return Ok(());
        }
        if start.elapsed() > limit {
            bail!(
                "sessions left on the Grid after {limit:?}: {left:?}\n--- hub log ---\n{}",
                selenium.hub_log()
            );
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The user of the WordPress-shaped page: count, then greet (as in `tests/tests/explore.rs`).
async fn count_then_greet(p: &Page) -> Result<()> {
    let start = Instant::now();
    let loaded =
        "performance.getEntriesByType('resource').some(e => e.name.endsWith('/pixel.gif'))";
    while p.evaluate_isolated(loaded).await? != Value::Bool(true) {
        ensure!(
            start.elapsed() < patience(Duration::from_secs(5)),
            "pixel.gif never loaded"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    p.click("#a").await?;
    tokio::time::sleep(Duration::from_millis(100)).await;
    p.click("#b").await?;
    Ok(())
}

case!(grid_verdicts, |h| async move {
    let selenium = start_grid().await?;
    let grid = Grid::new(selenium.url(), GridOptions::default())?;
    let click = record(&h, "/explore/click-before-script/", async |p| {
        p.click("#go").await?;
        Ok(())
    })
    .await?;
    let ajax = record(&h, "/explore/ajax-order/", async |_| Ok(())).await?;
    for (site, harmful) in [(&click, "Global.show"), (&ajax, "")] {
        let local = vec![worker(site, BrowserSpec::Launch, None)];
        let (lout, local_v, _d1) = run(site, 1, local, |_| {}).await?;
        let mut most_starting = 0;
        let (gout, grid_v, _d2) = run(site, 1, grid_workers(site, &grid), |p| {
            most_starting = most_starting.max(p.starting);
        })
        .await?;
        ensure!(
            lout.complete && gout.complete,
            "{}: both explorations finish (local {}, Grid {})",
            site.page,
            lout.complete,
            gout.complete
        );
        ensure!(
            local_v == grid_v,
            "{}: the Grid's verdicts differ from local workers'\n local: {local_v:#?}\n grid: \
             {grid_v:#?}",
            site.page
        );
        ensure!(
            grid_v
                .iter()
                .any(|(l, _, v)| v == "harmful" && l.contains(harmful)),
            "{}: the known harmful race is found: {grid_v:#?}",
            site.page
        );
        ensure!(
            most_starting == 2,
            "the progress showed both sessions starting"
        );
        ensure!(gout.failures == 0, "{} failed executions", gout.failures);
        ensure!(grid.live_sessions() == 0, "sessions still registered");
        no_session_left(&grid, &selenium).await?;
    }
    Ok(())
});

case!(node_killed, |h| async move {
    let mut selenium = start_grid().await?;
    let grid = Grid::new(selenium.url(), GridOptions::default())?;
    let site = record(&h, "/explore/load-defines/", count_then_greet).await?;
    let local = vec![worker(&site, BrowserSpec::Launch, None)];
    let (lout, local_v, _d1) = run(&site, 2, local, |_| {}).await?;
    ensure!(lout.complete, "the local exploration finishes");
    // Once the initial execution is in, both workers take a job (bound 2 leaves several): the
    // node killed then (one worker's session is on each) is running a sequence, or about to.
    // The dead worker's new session waits in the Grid's queue (the other node's one slot is
    // taken), and the sequence goes to the other worker.
    let killed = Arc::new(Mutex::new(false));
    let mut retried = 0;
    let mut at_kill = (0, 0);
    let mut queued = 0;
    let (gout, grid_v, _d2) = run(&site, 2, grid_workers(&site, &grid), |p| {
        let mut k = killed.lock().unwrap_or_else(|e| e.into_inner());
        if p.explored >= 1 && !*k {
            *k = true;
            at_kill = (p.workers, p.pending);
            selenium.kill_node(0);
        }
        retried = retried.max(p.retried);
        queued = queued.max(p.queued);
    })
    .await?;
    eprintln!("sessions seen queued at the Grid: {queued}");
    ensure!(
        *killed.lock().unwrap_or_else(|e| e.into_inner()),
        "the node was killed"
    );
    ensure!(
        at_kill.0 == 2 && at_kill.1 >= 2,
        "both workers had a job when the node died ({} workers, {} pending)",
        at_kill.0,
        at_kill.1
    );
    ensure!(
        retried >= 1,
        "the sequence on the dead node was retried on another worker"
    );
    ensure!(gout.complete, "the exploration finishes on the node left");
    ensure!(
        gout.failures == 0,
        "{} failed executions (a retried one is not a failure)",
        gout.failures
    );
    ensure!(
        local_v == grid_v,
        "the verdicts differ from local workers'\n local: {local_v:#?}\n grid: {grid_v:#?}"
    );
    ensure!(grid.live_sessions() == 0, "sessions still registered");
    no_session_left(&grid, &selenium).await?;
    Ok(())
});
