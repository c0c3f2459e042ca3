//! `shepherd demo`: the whole job on the embedded demo site. A loopback origin serves the shop
//! page in `cli/demo/` (with the papers' races); it is recorded through the instrumenting proxy
//! in headless Chromium with auto-exploration, analysed, and the reports are written.

use crate::demo_site::DemoSite;
use anyhow::Context;
use shepherd_analysis::pipeline::{self, Input, Outputs, Request};
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
    // The report is what `shepherd races demo.rec --html report.html` prints, and the JSON
    // what `--json` prints.
    let html = args.out.join("report.html");
    let json = args.out.join("races.json");
    let mut json_file = std::io::BufWriter::new(
        std::fs::File::create(&json).with_context(|| format!("creating {}", json.display()))?,
    );
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    let outcome = pipeline::run(
        &Request::new(Input::File(&rec)),
        Outputs {
            text: Some(&mut stdout),
            json: Some(&mut json_file),
            html: Some(&html),
            whole: None,
        },
        &mut (),
    )
    .context("analysing the demo trace")?;
    drop(stdout);
    println!(
        "\nrecorded {} exchanges, {} actions, {} arcs, {} user events ({} of {} controls exercised) in {:.1}s",
        summary.exchanges,
        outcome.actions,
        outcome.logged_arcs,
        summary.events_fired,
        summary.coverage.exercised,
        summary.coverage.present,
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
