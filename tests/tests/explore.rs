//! The explorer end to end: pages with known harmful races, recorded in the good order, are
//! explored through a real replay proxy and Chromium.

use std::process::ExitCode;
use std::time::Duration;

use shepherd_e2e::{Case, case, run_cases_within};
use shepherd_explore::exploration::{ExploreOptions, explore};
use shepherd_explore::runner::{BrowserSpec, Timing, WorkerConfig};
use shepherd_explore::site::Site;
use shepherd_runtime::Mode;

fn main() -> ExitCode {
    let cases: &[Case] = &[("smoke", smoke)];
    run_cases_within(Mode::Record, cases, Duration::from_secs(300))
}

case!(smoke, |h| async move {
    let path = "/explore/click-before-script/";
    let page = h.open(path).await?;
    page.click("#go").await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let t = h.flushed_trace(&page).await?;
    let _ = page.close().await;
    h.origin.flush().await;
    let site = Site::from_trace(
        h.origin.recording().to_path_buf(),
        h.origin.url(path),
        t.trace,
    );
    let dir = tempfile::tempdir()?;
    let cfg = WorkerConfig {
        recording: h.origin.recording().to_path_buf(),
        browser: BrowserSpec::Launch,
        listen: "127.0.0.1:0".parse()?,
        advertise: None,
        auth: None,
        cache_dir: None,
        timing: Timing::default(),
    };
    let opts = ExploreOptions {
        bound: 1,
        budget: Some(Duration::from_secs(120)),
        workers: vec![cfg],
        state_dir: Some(dir.path().to_path_buf()),
        fresh: true,
        policy: None,
    };
    let out = explore(site, &opts, |p| println!("progress {p:?}")).await?;
    for r in &out.runs {
        println!(
            "run {} depth {} origin {:?}\n  steps {:?}\n  skipped {:?}\n  verdict {:?}\n  exceptions {:?}",
            r.id,
            r.depth,
            r.origin.as_ref().map(|o| (
                &o.kind,
                &o.events,
                o.races.iter().map(|r| &r.location).collect::<Vec<_>>()
            )),
            r.steps,
            r.skipped,
            r.verdict,
            r.snapshot.exceptions
        );
    }
    println!(
        "pairs0 {:?}",
        out.runs[0]
            .pairs
            .iter()
            .map(|p| (
                p.first,
                p.second,
                p.races
                    .iter()
                    .map(|r| r.location.clone())
                    .collect::<Vec<_>>()
            ))
            .collect::<Vec<_>>()
    );
    println!(
        "uncovered0 {:?}",
        out.runs[0]
            .uncovered
            .iter()
            .map(|u| (u.first, u.second, &u.race.location))
            .collect::<Vec<_>>()
    );
    println!(
        "complete {} stats {:?} pruned {:?}",
        out.complete,
        out.explorer.stats(),
        out.explorer.pruned_fraction()
    );
    Ok(())
});
