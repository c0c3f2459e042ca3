//! `shepherd demo`: the whole job on the embedded demo site. A loopback origin serves the shop
//! page in `cli/demo/` (with the papers' races); it is recorded through the instrumenting proxy
//! in headless Chromium with auto-exploration, analysed, and the reports are written.

use crate::demo_site::DemoSite;
use anyhow::Context;
use shepherd_races::report::{self, RaceReport};
use shepherd_races::{Options, analyze};
use shepherd_session::drive::{DriveOptions, record_url};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Record, analyse and report the bundled demo site.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Directory for the recording and the reports (created; files in it are replaced).
    #[arg(long, default_value = "shepherd-demo")]
    out: PathBuf,
    /// How long to fire user events at the page.
    #[arg(long, default_value = "5s", value_parser = super::proxy::parse_duration)]
    explore: Duration,
    /// Seed of the exploration.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Show the browser window.
    #[arg(long)]
    headful: bool,
}

pub(crate) fn run(args: Args, home: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let rec = args.out.join("demo.rec");
    // A fresh recording each run, so the report is about this run only.
    for suffix in ["", "-wal", "-shm"] {
        let p = PathBuf::from(format!("{}{suffix}", rec.display()));
        if p.exists() {
            std::fs::remove_file(&p).with_context(|| format!("removing {}", p.display()))?;
        }
    }
    let ca = Arc::new(super::ca::load_ca(home)?);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let site = rt
        .block_on(DemoSite::start())
        .context("starting the demo site")?;
    let summary = rt.block_on(async {
        eprintln!(
            "shepherd demo: recording {} in headless Chromium…",
            site.url()
        );
        let opts = DriveOptions {
            explore: args.explore,
            seed: args.seed,
            headful: args.headful,
            ..DriveOptions::new(site.url(), rec.clone())
        };
        record_url(&opts, ca.clone()).await
    })?;
    let source = shepherd_analysis::trace_file::load(&rec, None)?;
    let trace = &source.loaded.trace;
    let analysis = analyze(trace, &Options::default()).context("analysing the demo trace")?;
    let mut uncovered = RaceReport::new(trace, &analysis, false);
    let mut full = RaceReport::new(trace, &analysis, true);
    let lists = [
        super::policy::race_pairs(&uncovered),
        super::policy::race_pairs(&full),
    ];
    let (by, undecided) = super::policy::shipped_orderings(trace, &analysis, &lists);
    let mut by = by.into_iter();
    super::policy::set_repaired_by(
        &mut uncovered,
        by.next().unwrap_or_default(),
        undecided.clone(),
    );
    super::policy::set_repaired_by(&mut full, by.next().unwrap_or_default(), undecided);
    let sources = shepherd_analysis::page_texts::from_recording(&rec).unwrap_or_default();
    let html = args.out.join("report.html");
    std::fs::write(
        &html,
        report::html::render(&full, &analysis, trace, &sources),
    )
    .with_context(|| format!("writing {}", html.display()))?;
    let json = args.out.join("races.json");
    std::fs::write(&json, report::json::render(&uncovered))
        .with_context(|| format!("writing {}", json.display()))?;
    print!("{}", report::text::render(&uncovered));
    println!(
        "\nrecorded {} exchanges, {} actions, {} arcs, {} user events in {:.1}s",
        summary.exchanges,
        trace.actions.len(),
        trace.arcs.len(),
        summary.events_fired,
        summary.elapsed.as_secs_f64()
    );
    println!("recording: {}", rec.display());
    println!("race report (open in a browser): {}", html.display());
    println!("races as JSON: {}", json.display());
    // One harmful race forced and repaired: the same bad order without and with a policy.
    if let Err(e) = rt.block_on(super::demo_repair::show(&site.url(), args.headful, ca)) {
        println!("\nrepair: not shown ({e:#})");
    }
    Ok(ExitCode::SUCCESS)
}
