//! `shepherd races FILE`: offline race detection (EventRacer's algorithms) on a trace.

use super::ci_outputs::CiArgs;
use crate::progress::PipelineProgress;
use shepherd_analysis::explored::Verdicts;
use shepherd_analysis::memory;
use shepherd_analysis::pipeline::{self, Input, Outputs, Request};
use std::path::PathBuf;
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
    /// Merge the verdicts of `shepherd explore --json` (docs/explore-json.md): each race says
    /// harmful (with its witness in that file) or harmless, and why.
    #[arg(long, value_name = "EXPLORE.json")]
    explored: Option<PathBuf>,
    #[command(flatten)]
    ci: CiArgs,
}

pub(crate) fn run(args: Args, _home: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    // A bad map fails now, not after the analysis.
    args.ci.url_map()?;
    let explored = match &args.explored {
        Some(p) => Some(Verdicts::load(p)?),
        None => None,
    };
    // A one-shot analysis: freed memory goes back to the OS as the phases end.
    memory::for_batch_analysis();
    let request = Request {
        all: args.all,
        explored: explored.as_ref(),
        ..Request::new(Input::File(&args.file))
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut whole = None;
    let mut outputs = Outputs {
        html: args.html.as_deref(),
        whole: args.ci.wanted().then_some(&mut whole),
        ..Outputs::default()
    };
    if args.json {
        outputs.json = Some(&mut out);
    } else {
        outputs.text = Some(&mut out);
    }
    pipeline::run(&request, outputs, &mut PipelineProgress::default())?;
    drop(out);
    let Some(report) = whole else {
        return Ok(ExitCode::SUCCESS);
    };
    let findings = shepherd_ci::races::findings(&report);
    let page = report.trace.page.clone();
    let mut properties = std::collections::BTreeMap::new();
    properties.insert(
        "trace".into(),
        serde_json::json!(args.file.display().to_string()),
    );
    properties.insert("summary".into(), serde_json::json!(report.summary));
    let info = shepherd_ci::sarif::RunInfo {
        version: env!("CARGO_PKG_VERSION").into(),
        command: "races".into(),
        page: page.clone(),
        properties,
        ..Default::default()
    };
    let suite = shepherd_ci::junit::Suite {
        name: format!(
            "shepherd races {}",
            page.unwrap_or_else(|| args.file.display().to_string())
        ),
        seconds: None,
        properties: vec![("trace".into(), args.file.display().to_string())],
    };
    args.ci.finish(&findings, info, suite)
}
