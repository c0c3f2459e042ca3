//! `shepherd demo`: the whole job on the embedded demo site. A loopback origin serves the shop
//! page in `cli/demo/` (with the papers' races); it is recorded through the instrumenting proxy
//! in headless Chromium with auto-exploration, analysed, the reports are written, every race is
//! explored the other way round (triage: harmful first), and one harmful race is repaired.

use crate::demo_site::DemoSite;
use anyhow::Context;
use shepherd_analysis::pipeline::{self, Input, Outputs, Request};
use shepherd_session::drive::{DriveOptions, record_url};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Explores the demo's recording: every uncovered race run the other way round in headless
/// Chromium and judged by what the user sees, harmful races printed first; `explore.html` and
/// `explore.json` are written beside the race report.
fn triage(
    rt: &tokio::runtime::Runtime,
    rec: &std::path::Path,
    out: &std::path::Path,
) -> anyhow::Result<()> {
    use shepherd_explore::exploration::{ExploreOptions, explore};
    use shepherd_explore::runner::{BrowserSpec, Timing, WorkerConfig};
    use shepherd_explore_model::report;
    println!("\nshepherd demo: exploring every race the other way round (triage)…");
    let site = shepherd_explore_model::site::Site::load(rec)?;
    let state_dir = out.join("demo.rec.explore");
    let opts = ExploreOptions {
        bound: 1,
        budget: None,
        max_sequences: None,
        workers: vec![WorkerConfig {
            recording: rec.to_path_buf(),
            browser: BrowserSpec::Launch,
            listen: std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
            advertise: None,
            auth: None,
            cache_dir: Some(state_dir.join("cache")),
            timing: Timing::default(),
        }],
        state_dir: Some(state_dir),
        fresh: true,
        policy: None,
        triage: Default::default(),
        stop: Default::default(),
    };
    let bar = crate::progress::Progress::spinner("the recorded order, replayed");
    let explored = rt.block_on(explore(site, &opts, |p| {
        bar.message(format!(
            "explored {} · pending {} · harmful {}",
            p.explored, p.pending, p.harmful
        ));
    }))?;
    bar.finish();
    let sources = shepherd_analysis::page_texts::for_trace_file(rec);
    let doc = report::build(&explored, 1, &sources);
    let html = out.join("explore.html");
    std::fs::write(&html, report::html(&doc))
        .with_context(|| format!("writing {}", html.display()))?;
    let json = out.join("explore.json");
    std::fs::write(&json, serde_json::to_string_pretty(&doc)?)
        .with_context(|| format!("writing {}", json.display()))?;
    print!("{}", report::text::render(&doc));
    println!("explore report (open in a browser): {}", html.display());
    println!("explore report as JSON: {}", json.display());
    Ok(())
}

/// User events the demo's exercise fires at least before it may end on coverage: every
/// control once is enough for the races the demo shows, and a short session keeps its
/// exploration (which replays the whole session per execution) at about a minute.
const DEMO_MIN_EVENTS: usize = 20;

/// Record, analyse and report the bundled demo site.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Directory for the recording and the reports (created; files in it are replaced).
    #[arg(long, default_value = "shepherd-demo")]
    out: PathBuf,
    /// Longest time to fire user events at the page (the exercise ends sooner, once every
    /// control has had every gesture).
    #[arg(long, default_value = "5s", value_parser = super::proxy::parse_duration)]
    explore: Duration,
    /// Seed of the exploration.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Show the browser window.
    #[arg(long)]
    headful: bool,
    /// Stop after the race report (no exploration of the races' other orders).
    #[arg(long)]
    no_triage: bool,
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
            stop_when_covered: Some(DEMO_MIN_EVENTS),
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
    if !args.no_triage {
        triage(&rt, &rec, &args.out)?;
    }
    // One harmful race forced and repaired: the same bad order without and with a policy.
    if let Err(e) = rt.block_on(super::demo_repair::show(&site.url(), args.headful, ca)) {
        println!("\nrepair: not shown ({e:#})");
    }
    Ok(ExitCode::SUCCESS)
}
