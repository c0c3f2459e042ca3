//! The recording driver: a recording proxy with instrumentation, headless Chromium pointed at
//! it, the page loaded and (optionally) exercised with random user events (`shepherd-exerciser`),
//! the trace flushed, and everything stored in one recording. `shepherd record URL` and
//! `shepherd demo` use it.

use crate::stack::{Run, Stack, StackOptions};
use anyhow::Context;
use shepherd_browser::{Browser, LaunchOptions, Page};
use shepherd_exerciser::{ExerciseOptions, ExerciseReport, exercise};
use shepherd_proxy::{CertificateAuthority, UpstreamTrust};
use shepherd_recording::Recording;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The progress callback of [`DriveOptions::on_events`], re-exported so a caller need not
/// depend on the exerciser for it.
pub use shepherd_exerciser::EventCounter;

/// What to record and how.
#[derive(Debug, Clone)]
pub struct DriveOptions {
    /// Page to load.
    pub url: String,
    /// Recording file (created, or extended with a new session).
    pub out: PathBuf,
    /// Exercise the page with random user events for this long after load (zero: load only;
    /// `record --explore`).
    pub explore: Duration,
    /// At most this many user events.
    pub max_events: usize,
    /// Seed of the exercise's random choices.
    pub seed: u64,
    /// Show the browser window.
    pub headful: bool,
    /// Where instrumented scripts are cached on disk.
    pub cache_dir: Option<PathBuf>,
    /// How origin certificates are verified (a private CA for staging or test origins).
    pub trust: UpstreamTrust,
    /// Told the number of user events fired so far while exercising (progress displays).
    pub on_events: Option<EventCounter>,
    /// End the exercise once every control has had every gesture, after at least this many
    /// events (`explore` is then a limit, not a duration).
    pub stop_when_covered: Option<usize>,
}

impl DriveOptions {
    /// Loads `url` into a new session of `out`, without exercising it, trusting the web's roots.
    pub fn new(url: impl Into<String>, out: impl Into<PathBuf>) -> Self {
        DriveOptions {
            url: url.into(),
            out: out.into(),
            explore: Duration::ZERO,
            max_events: 250,
            seed: 1,
            headful: false,
            cache_dir: None,
            trust: UpstreamTrust::default(),
            on_events: None,
            stop_when_covered: None,
        }
    }
}

/// What one recording run produced.
#[derive(Debug, Clone)]
pub struct DriveSummary {
    /// Exchanges stored in this run's session.
    pub exchanges: usize,
    /// Traces (documents) stored.
    pub traces: usize,
    /// User events fired while exercising the page.
    pub events_fired: usize,
    /// What the exercise reached (empty without `explore`).
    pub coverage: Coverage,
    /// Uncaught page exceptions seen over DevTools.
    pub page_errors: usize,
    /// Wall-clock time of the run.
    pub elapsed: Duration,
}

/// What an exercise reached: the controls it found (visible and enabled at some point) and
/// those it acted on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Controls found.
    pub present: usize,
    /// Controls that got at least one gesture.
    pub exercised: usize,
    /// Descriptions (`select#size`) of the controls that got none, in page order.
    pub missed: Vec<String>,
}

impl Coverage {
    /// The coverage of an exercise's report.
    pub fn of(report: &ExerciseReport) -> Coverage {
        let (exercised, present) = report.coverage();
        Coverage {
            present,
            exercised,
            missed: report
                .controls
                .iter()
                .filter(|c| !c.exercised())
                .map(|c| c.target.clone())
                .collect(),
        }
    }
}

/// Runs one recording: proxy + Chromium + load + exercise + flush.
pub async fn record_url(
    opts: &DriveOptions,
    ca: Arc<CertificateAuthority>,
) -> anyhow::Result<DriveSummary> {
    let started = Instant::now();
    let spki = ca.spki_sha256_base64();
    let run = Run::Record {
        out: opts.out.clone(),
        trust: opts.trust.clone(),
    };
    let stack_opts = StackOptions {
        cache_dir: opts.cache_dir.clone(),
        ..StackOptions::default()
    };
    let stack = Stack::start(run, stack_opts, ca).await?;
    let proxy = stack.proxy();
    let secret = proxy.operator_secret().to_string();

    let launch = LaunchOptions {
        headless: !opts.headful,
        proxy: Some(proxy.addr().to_string()),
        spki_allow: vec![spki],
        bypass_loopback_proxy: true,
        ..LaunchOptions::default()
    };
    let result = drive_browser(opts, launch, &secret).await;
    stack.shutdown().await;
    let (events_fired, coverage, page_errors) = result?;

    let rec = Recording::open_readonly(&opts.out)
        .with_context(|| format!("reopening {}", opts.out.display()))?;
    let sessions = rec.sessions()?;
    let last = sessions.last().map(|s| s.id);
    let exchanges = match last {
        Some(id) => rec.exchanges(Some(id))?.len(),
        None => 0,
    };
    let traces = rec
        .traces()?
        .iter()
        .filter(|t| Some(t.session) == last)
        .count();
    Ok(DriveSummary {
        exchanges,
        traces,
        events_fired,
        coverage,
        page_errors,
        elapsed: started.elapsed(),
    })
}

/// Exercises a page of a recording stack as `record --explore` does: the runtime marks the
/// driver's events as auto-explored and stops navigations away (each traced as an event),
/// the exerciser fires its gestures, and what it reached goes into the page's trace as its
/// coverage (`docs/trace-format.md`, "Controls"). `secret` is the stack's operator secret.
pub async fn exercise_recorded(
    page: &Page,
    secret: &str,
    opts: &ExerciseOptions,
) -> anyhow::Result<ExerciseReport> {
    let secret_js = serde_json::to_string(secret)?;
    // The driver's random order is not one the page relies on: mark those events; and the
    // page stays loaded, its navigation attempts traced as events.
    let mark = format!(
        "(() => {{ const c = globalThis.__shepherd && __shepherd.control({secret_js}); return !!(c && c.explore(true) && c.blockNavigations(true)); }})()"
    );
    if let Err(e) = page.evaluate(&mark).await {
        tracing::warn!("marking auto-explored events: {e}");
    }
    let report = exercise(page, opts).await.context("exercising the page")?;
    let list: Vec<serde_json::Value> = report
        .controls
        .iter()
        .map(|c| {
            serde_json::json!({
                "path": c.path,
                "offered": c.offered.join(","),
                "done": c.done.join(","),
            })
        })
        .collect();
    let record = format!(
        "(() => {{ const c = globalThis.__shepherd && __shepherd.control({secret_js}); return c ? c.coverage({}) : -1; }})()",
        serde_json::to_string(&list)?
    );
    if let Err(e) = page.evaluate(&record).await {
        tracing::warn!("recording the exercise's coverage in the trace: {e}");
    }
    Ok(report)
}

async fn drive_browser(
    opts: &DriveOptions,
    launch: LaunchOptions,
    secret: &str,
) -> anyhow::Result<(usize, Coverage, usize)> {
    let browser = Browser::launch(launch)
        .await
        .context("launching Chromium (install it with scripts/install-deps)")?;
    let page = browser.new_page().await?;
    page.navigate(&opts.url)
        .await
        .with_context(|| format!("loading {}", opts.url))?;
    let _ = page
        .wait_quiet(Duration::from_millis(300), Duration::from_secs(10))
        .await;
    let (mut fired, mut coverage) = (0, Coverage::default());
    let secret_js = serde_json::to_string(secret)?;
    if !opts.explore.is_zero() && opts.max_events > 0 {
        let report = exercise_recorded(
            &page,
            secret,
            &ExerciseOptions {
                duration: opts.explore,
                max_events: opts.max_events,
                seed: opts.seed,
                on_events: opts.on_events.clone(),
                stop_when_covered: opts.stop_when_covered,
                ..ExerciseOptions::default()
            },
        )
        .await?;
        fired = report.events.len();
        coverage = Coverage::of(&report);
        let _ = page
            .wait_quiet(Duration::from_millis(300), Duration::from_secs(5))
            .await;
    }
    // Hand the buffered trace to the proxy before the page goes away; the exit flush at
    // pagehide covers anything after this.
    let flush = format!(
        "(async () => {{ const c = globalThis.__shepherd && __shepherd.control({secret_js}); if (c) await c.flush(); return true; }})()"
    );
    if let Err(e) = page.evaluate(&flush).await {
        tracing::warn!("trace flush: {e}");
    }
    let errors = page.exceptions().len();
    let _ = page.navigate("about:blank").await;
    // sendBeacon from pagehide is asynchronous: give it a moment to reach the proxy.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let _ = browser.close().await;
    Ok((fired, coverage, errors))
}
