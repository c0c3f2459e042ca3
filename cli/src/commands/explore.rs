//! `shepherd explore site.rec`: R4's stateless model checking of a recorded page (the
//! explorer: `shepherd-explore` runs it, `shepherd-explore-model` holds the model and the
//! report): replay it under other event orders and report which races change what the page
//! shows.

use super::ci_outputs::CiArgs;
use crate::progress::Progress;
use anyhow::{Context, bail};
use clap::Args as ClapArgs;
use shepherd_explore::exploration::{ExploreOptions, Stop, default_state_dir, explore};
use shepherd_explore::grid::{Grid, GridOptions};
use shepherd_explore::runner::{BrowserSpec, Timing, WorkerConfig};
use shepherd_explore_model::report;
use shepherd_explore_model::site::Site;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Explore a recording: every uncovered race of the recording run the other way round (a
/// probe and its reference, each settled by the page's own means) and judged by what the user
/// sees; deeper orders chosen by dynamic partial-order reduction (`--bound`).
#[derive(ClapArgs, Debug)]
pub(crate) struct Args {
    /// The recording (made with `shepherd record`).
    recording: PathBuf,
    /// Conflict-reversal bound of the reorder phase: most races reversed from the recorded
    /// order (every race is probed once whatever the bound; 2 or more also explores orders
    /// that need several reversals).
    #[arg(long, default_value_t = 1)]
    bound: u32,
    /// Most probes per location: races of a location between other pairs of events beyond
    /// it are answered as not probed (repeats of one pair share its answer).
    #[arg(long, default_value_t = 3)]
    probes_per_location: usize,
    /// Most probes for covered races (pairs no uncovered race's probe runs); 0 probes only
    /// the uncovered races.
    #[arg(long, default_value_t = 8)]
    covered_probes: usize,
    /// Most probes of a gesture on the older element at its target's place, before the step
    /// of the page that made the target (0: none).
    #[arg(long, default_value_t = 4)]
    older_target_probes: usize,
    /// Local Chromium workers (each with its own replay proxy); with `--grid`, the number of
    /// sessions asked of each Grid instead.
    #[arg(long, default_value_t = 1)]
    workers: usize,
    /// Stop starting new sequences after this long (15s, 2m, 1h); state is kept, a later run
    /// resumes.
    #[arg(long, value_parser = super::proxy::parse_duration)]
    budget: Option<Duration>,
    /// Stop starting new sequences after this many (this run; a later run resumes).
    #[arg(long)]
    max_sequences: Option<u64>,
    /// A running browser's DevTools endpoint (`ws://host:port/devtools/browser/…`) to use as
    /// one more worker; repeatable.
    #[arg(long = "cdp", value_name = "WS_URL")]
    cdp: Vec<String>,
    /// A Selenium Grid 4 (hub, router or standalone URL, `http://host:4444`): every worker is
    /// a Chromium session of it, driven over the DevTools endpoint the Grid proxies (`se:cdp`);
    /// `--workers` sessions per Grid; repeatable. The nodes must reach the replay proxies:
    /// `--listen 0.0.0.0:0 --advertise HOST` unless the Grid is on this machine.
    #[arg(long = "grid", value_name = "URL")]
    grid: Vec<String>,
    /// More capabilities for the Grid's new-session requests, a JSON object merged into
    /// `alwaysMatch` (`{"platformName":"linux"}`; `goog:chromeOptions.args` are appended).
    #[arg(long, value_name = "JSON")]
    grid_capabilities: Option<String>,
    /// How long a worker waits for its Grid session (queued until a node has a free slot).
    #[arg(long, value_parser = super::proxy::parse_duration, default_value = "10m")]
    grid_wait: Duration,
    /// Explore under repair policies (names from `shepherd policy list`, or files; several
    /// with commas): only the orders they allow run, so what stays harmful is what they do not
    /// repair.
    #[arg(long)]
    policy: Option<String>,
    /// Write a self-contained HTML report here.
    #[arg(long, value_name = "OUT.html")]
    html: Option<PathBuf>,
    /// Print the versioned JSON report (docs/explore-json.md) on stdout.
    #[arg(long)]
    json: bool,
    /// Where the workers' replay proxies listen (port 0: any); off loopback they require
    /// credentials (`--auth`, or generated).
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// The host name or address browsers use to reach the proxies (remote browsers).
    #[arg(long)]
    advertise: Option<String>,
    /// Credentials the proxies require (`user:pass`).
    #[arg(long)]
    auth: Option<String>,
    /// Where exploration state is kept (default: `RECORDING.explore` beside it).
    #[arg(long)]
    state: Option<PathBuf>,
    /// Start over instead of resuming.
    #[arg(long)]
    fresh: bool,
    /// A state is quiet when nothing changed for this long (milliseconds).
    #[arg(long, default_value_t = 8)]
    idle_ms: u64,
    /// Most steps in one sequence.
    #[arg(long, default_value_t = 400)]
    max_steps: usize,
    /// Do not take screenshots (faster; rendering is then not compared).
    #[arg(long)]
    no_screenshots: bool,
    #[command(flatten)]
    ci: CiArgs,
}

pub(crate) fn run(args: Args, _home: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    if !args.recording.exists() {
        bail!("{}: no such recording", args.recording.display());
    }
    if args.workers == 0 && args.cdp.is_empty() {
        bail!("--workers 0 needs at least one --cdp endpoint");
    }
    let grids = grids(&args)?;
    // A bad map fails now, not after the exploration.
    args.ci.url_map()?;
    // Checked before anything starts: a policy with errors starts nothing.
    let policy = match &args.policy {
        Some(p) => Some(super::policy::load_or_report(p)?),
        None => None,
    };
    let site = Site::load(&args.recording)?;
    let state_dir = args
        .state
        .clone()
        .unwrap_or_else(|| default_state_dir(&args.recording));
    // Off loopback, each worker's proxy demands credentials of its own (generated unless
    // given): a browser that reaches one proxy cannot use another.
    let auth = |k: usize| match (&args.auth, args.listen.ip().is_loopback()) {
        (Some(a), _) => Some(a.clone()),
        (None, true) => None,
        (None, false) => Some(format!("explore{k}:{}", shepherd_proxy::random_secret())),
    };
    let timing = Timing {
        idle: Duration::from_millis(args.idle_ms.max(5)),
        max_steps: args.max_steps,
        screenshots: !args.no_screenshots,
        ..Timing::default()
    };
    let mut browsers: Vec<BrowserSpec> = if grids.is_empty() {
        (0..args.workers).map(|_| BrowserSpec::Launch).collect()
    } else {
        grids
            .iter()
            .flat_map(|g| (0..args.workers).map(|_| BrowserSpec::Grid(g.clone())))
            .collect()
    };
    browsers.extend(args.cdp.iter().map(|u| BrowserSpec::Connect(u.clone())));
    let workers: Vec<WorkerConfig> = browsers
        .into_iter()
        .enumerate()
        .map(|(k, browser)| WorkerConfig {
            recording: args.recording.clone(),
            browser,
            listen: args.listen,
            advertise: args.advertise.clone(),
            auth: auth(k),
            cache_dir: Some(state_dir.join("cache")),
            timing: timing.clone(),
        })
        .collect();
    let stop = Stop::default();
    let opts = ExploreOptions {
        bound: args.bound,
        budget: args.budget,
        max_sequences: args.max_sequences,
        workers,
        state_dir: Some(state_dir),
        fresh: args.fresh,
        policy,
        triage: shepherd_explore_model::triage::Limits {
            per_location: args.probes_per_location.max(1),
            covered: args.covered_probes,
            older_targets: args.older_target_probes,
        },
        stop: stop.clone(),
    };
    let bar = Progress::spinner("initial execution (the recorded order)");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.spawn(stop_on_signals(stop.clone()));
    let out = rt.block_on(explore(site, &opts, |p| bar.message(progress_line(p))))?;
    bar.finish();
    let interrupted = stop.is_stopped();
    let sources = shepherd_analysis::page_texts::for_trace_file(&args.recording);
    let doc = report::build(&out, args.bound, &sources);
    if let Some(path) = &args.html {
        std::fs::write(path, report::html(&doc))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", report::text::render(&doc));
        println!("state: {}", out.state_dir.display());
        if interrupted {
            println!("interrupted: run again to resume");
        }
    }
    if interrupted {
        // 128 + SIGINT, as a shell reports a command it interrupted; reports were written.
        return Ok(ExitCode::from(130));
    }
    if !args.ci.wanted() {
        return Ok(ExitCode::SUCCESS);
    }
    let (info, suite) = ci_context(&doc);
    args.ci
        .finish(&shepherd_ci::explore::findings(&doc), info, suite)
}

/// The Grids of `--grid`, checked before anything starts: a bad URL or capability object, or
/// proxies the nodes could not reach.
fn grids(args: &Args) -> anyhow::Result<Vec<Grid>> {
    if args.grid.is_empty() {
        if args.grid_capabilities.is_some() {
            bail!("--grid-capabilities needs --grid");
        }
        return Ok(Vec::new());
    }
    if args.workers == 0 {
        bail!("--grid with --workers 0 asks the Grid for no session");
    }
    let capabilities = match &args.grid_capabilities {
        None => serde_json::Map::new(),
        Some(text) => match serde_json::from_str(text) {
            Ok(serde_json::Value::Object(m)) => m,
            Ok(_) => bail!("--grid-capabilities: expected a JSON object, got {text}"),
            Err(e) => bail!("--grid-capabilities: {e}"),
        },
    };
    let options = GridOptions {
        capabilities,
        session_wait: args.grid_wait,
    };
    let mut out = Vec::new();
    for url in &args.grid {
        let grid = Grid::new(url, options.clone())?;
        if !grid.is_loopback() && args.listen.ip().is_loopback() {
            bail!(
                "the nodes of the Grid at {url} cannot reach replay proxies listening on {}: \
                 add --listen 0.0.0.0:0 --advertise <this machine's name or address as the \
                 nodes see it>",
                args.listen
            );
        }
        out.push(grid);
    }
    Ok(out)
}

/// The progress bar's line for `p`.
fn progress_line(p: &shepherd_explore::exploration::Progress) -> String {
    let mut line = format!(
        "explored {} · pending {} · depth {} · harmful {}",
        p.explored, p.pending, p.depth, p.harmful
    );
    if p.starting > 0 {
        line.push_str(&format!(" · starting {} browser(s)", p.starting));
        if p.queued > 0 {
            line.push_str(&format!(", {} queued at the Grid", p.queued));
        }
    }
    if p.retried > 0 {
        line.push_str(&format!(" · retried {}", p.retried));
    }
    if p.failures > 0 {
        line.push_str(&format!(" · failed {}", p.failures));
    }
    line
}

/// Ctrl-C or SIGTERM (a CI job cancelled) stops the exploration cleanly: state saved, browsers
/// closed, Grid sessions deleted. A second one exits at once.
async fn stop_on_signals(stop: Stop) {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).ok();
    let mut signals = 0;
    loop {
        let term_signal = async {
            match term.as_mut() {
                Some(t) => {
                    t.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            r = tokio::signal::ctrl_c() => {
                if r.is_err() {
                    return;
                }
            }
            () = term_signal => {}
        }
        signals += 1;
        if signals > 1 {
            eprintln!("shepherd explore: stopped without cleaning up");
            std::process::exit(130);
        }
        eprintln!(
            "shepherd explore: stopping (saving state, closing browsers, deleting Grid \
             sessions); again to quit at once"
        );
        stop.stop();
    }
}

/// What the CI outputs say about the exploration beside its findings.
fn ci_context(
    doc: &report::ExploreReport,
) -> (shepherd_ci::sarif::RunInfo, shepherd_ci::junit::Suite) {
    let mut notes = Vec::new();
    if !doc.complete {
        notes.push(format!(
            "the exploration stopped at its budget after {} sequences: races not reordered may \
             be reordered by a later run (it resumes)",
            doc.sequences
        ));
    }
    if doc.failures > 0 {
        notes.push(format!("{} execution(s) failed", doc.failures));
    }
    let mut properties = std::collections::BTreeMap::new();
    properties.insert("recording".into(), serde_json::json!(doc.recording));
    properties.insert("bound".into(), serde_json::json!(doc.bound));
    properties.insert("sequences".into(), serde_json::json!(doc.sequences));
    properties.insert("complete".into(), serde_json::json!(doc.complete));
    properties.insert("summary".into(), serde_json::json!(doc.summary));
    if let Some(p) = &doc.policy {
        properties.insert("policy".into(), serde_json::json!(p));
    }
    let info = shepherd_ci::sarif::RunInfo {
        version: env!("CARGO_PKG_VERSION").into(),
        command: "explore".into(),
        page: Some(doc.page.clone()),
        notes,
        properties,
        ..Default::default()
    };
    let mut suite_props = vec![
        ("recording".to_string(), doc.recording.clone()),
        ("bound".to_string(), doc.bound.to_string()),
        ("sequences".to_string(), doc.sequences.to_string()),
        ("complete".to_string(), doc.complete.to_string()),
        ("failures".to_string(), doc.failures.to_string()),
    ];
    if let Some(p) = &doc.policy {
        suite_props.push(("policy".to_string(), p.clone()));
    }
    let suite = shepherd_ci::junit::Suite {
        name: format!("shepherd explore {}", doc.page),
        seconds: Some(doc.elapsed_s),
        properties: suite_props,
    };
    (info, suite)
}
