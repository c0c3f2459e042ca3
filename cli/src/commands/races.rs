//! `shepherd races FILE`: offline race detection (EventRacer's algorithms) on a trace.

use anyhow::Context;
use shepherd_races::report::{self, RaceReport};
use shepherd_races::{Options, analyze};
use shepherd_trace::Trace;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Find event races in a recorded trace.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// A recording (`.rec`), a JSONL trace (`docs/trace-format.md`) or an EventRacer
    /// `ER_actionlog`.
    file: PathBuf,
    /// Print the versioned JSON report (`docs/races-json.md`) instead of text.
    #[arg(long)]
    json: bool,
    /// Include covered races (default: uncovered only).
    #[arg(long)]
    all: bool,
    /// Also write a self-contained HTML report to this file.
    #[arg(long, value_name = "OUT.html")]
    html: Option<PathBuf>,
}

/// Where traces come from: `crate::trace_source` reads JSONL and `ER_actionlog` files (format
/// sniffed) and recordings (`.rec`: the newest session's top-level page trace).
fn load_trace(path: &Path) -> anyhow::Result<Trace> {
    let src = crate::trace_source::load(path, None)?;
    for w in &src.loaded.warnings {
        tracing::warn!("{}: {w}", path.display());
    }
    let mut trace = src.loaded.trace;
    // A recording knows the page URL even when the trace header does not.
    if trace.header.page.is_none() {
        trace.header.page = src.page;
    }
    Ok(trace)
}

pub(crate) fn run(args: Args, _home: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let trace = load_trace(&args.file)?;
    let opts = Options {
        single_coverage: true,
        ..Options::default()
    };
    let analysis = analyze(&trace, &opts)
        .with_context(|| format!("cannot analyse {}", args.file.display()))?;
    // A recording also holds the page's HTML and scripts: reports show the racing lines.
    let sources = crate::sources::for_trace_file(&args.file);
    if args.json {
        let mut rep = RaceReport::new(&trace, &analysis, args.all);
        rep.attach_sources(&sources);
        println!("{}", report::json::render(&rep));
    } else {
        // Streamed one location at a time: a long session's report is never held whole.
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        report::text::write(&mut out, &trace, &analysis, args.all, &sources)?;
        out.flush()?;
    }
    if let Some(out) = &args.html {
        // The page folds covered races under their cover, so it always has them.
        let full = RaceReport::new(&trace, &analysis, true);
        let page = report::html::render(&full, &analysis, &trace, &sources);
        std::fs::write(out, page).with_context(|| format!("cannot write {}", out.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}
