//! `shepherd races FILE`: offline race detection (EventRacer's algorithms) on a trace.

use super::policy::PolicyMarks;
use crate::progress::Progress;
use anyhow::Context;
use shepherd_explore_model::report::{ExploreReport, RaceVerdict};
use shepherd_policies::covers::{TraceFacts, shipped_orderings_deferred};
use shepherd_races::report::{self, Explored, RaceReport, RaceView, ReportPlan};
use shepherd_races::{Options, Phase, analyze_with_phases};
use shepherd_trace::Trace;
use std::collections::HashMap;
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
    /// Merge the verdicts of `shepherd explore --json` (docs/explore-json.md): each race says
    /// harmful (with its witness in that file) or harmless, and why.
    #[arg(long, value_name = "EXPLORE.json")]
    explored: Option<PathBuf>,
}

/// A race's key across reports: its location (object numbers blanked, they depend on the
/// execution) and the stable ids of its two actions.
fn race_key(location: &str, first: &str, second: &str) -> (String, String, String) {
    let mut loc = String::with_capacity(location.len());
    let mut digits = false;
    for c in location.chars() {
        if c.is_ascii_digit() && (digits || loc.ends_with('[')) {
            digits = true;
            continue;
        }
        digits = false;
        loc.push(c);
    }
    (loc, first.to_string(), second.to_string())
}

/// The verdicts of an explore report, by race key.
fn load_explored(path: &Path) -> anyhow::Result<HashMap<(String, String, String), Explored>> {
    let doc = ExploreReport::read(path)?;
    let mut out = HashMap::new();
    for r in doc.races {
        let key = race_key(&r.location, &r.first.stable, &r.second.stable);
        let verdict = Explored {
            verdict: r.verdict.to_string(),
            reason: r.reason,
            sequence: r.sequence.map(u64::from),
        };
        // A harmful verdict wins over others for the same race.
        let keep = out
            .get(&key)
            .is_none_or(|old: &Explored| old.verdict != RaceVerdict::Harmful.as_str());
        if keep {
            out.insert(key, verdict);
        }
    }
    Ok(out)
}

/// Where traces come from: `shepherd_session::trace_source` reads JSONL and `ER_actionlog` files (format
/// sniffed) and recordings (`.rec`: the newest session's top-level page trace).
pub(crate) fn load_trace(path: &Path) -> anyhow::Result<Trace> {
    // Every caller analyses what it loads.
    crate::memory::for_batch_analysis();
    let progress = Progress::bytes(0, "reading the trace");
    let src =
        shepherd_session::trace_source::load_with_progress(path, None, &mut |done, total| {
            progress.update(done, total)
        })?;
    progress.finish();
    // The parts a large trace was read in were merged on this thread, and the other threads'
    // heaps are gone: what they freed is returned now, not after the sweep has grown past it.
    crate::memory::release_freed();
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
    let explored = match &args.explored {
        Some(p) => Some(load_explored(p)?),
        None => None,
    };
    let trace = load_trace(&args.file)?;
    std::thread::scope(|s| analyse_and_report(s, &args, &trace, explored.as_ref()))?;
    Ok(ExitCode::SUCCESS)
}

/// The analysis and the reports. The repair policies' simulations read only the trace and
/// happens-before, so they start on a second core as soon as the sweep is over (a thread of
/// `scope`) and learn which races to answer for once the report is planned.
fn analyse_and_report<'s, 't: 's>(
    s: &'s std::thread::Scope<'s, '_>,
    args: &Args,
    trace: &'t Trace,
    explored: Option<&HashMap<(String, String, String), Explored>>,
) -> anyhow::Result<()> {
    // Single coverage only says how a covered race is covered: reports without covered races
    // (no `--all`, no HTML page) never show it, and it costs a third clock per action (wide
    // 115 000-action page: ≈ 0.2 s and 17 MB of the analysis' 0.5 s and 95 MB).
    let opts = Options {
        single_coverage: args.all || args.html.is_some(),
        ..Options::default()
    };
    let progress = Progress::spinner("analysing");
    let actions = trace.actions.len();
    // The pairs of actions to answer for, sent once the report is planned. If this thread
    // fails first, the sender goes and the policy thread ends with no pairs.
    let (pairs_tx, pairs_rx) = std::sync::mpsc::channel::<Vec<(u32, u32)>>();
    let mut pairs_rx = Some(pairs_rx);
    let mut policies = None;
    let analysis = analyze_with_phases(trace, &opts, &mut |phase| {
        match phase {
            // The simulations need the final happens-before: they start once the sweep is
            // over, and get the races to answer for once the report is planned. The sweep
            // keeps both cores busy (its two halves); the policies' trace facts are read
            // after it, on the policy thread: read beside it they saved ≈ 20 ms on the wide
            // bench page but raised its peak, which is the sweep's end, by ≈ 3 MB.
            Phase::Filters { graph } => {
                if let Some(rx) = pairs_rx.take() {
                    let hb = super::policy::hb_arcs(graph);
                    crate::memory::release_freed();
                    policies = Some(s.spawn(move || {
                        shipped_orderings_deferred(TraceFacts::new(trace), &hb, move || {
                            rx.recv().unwrap_or_default()
                        })
                    }));
                }
            }
            Phase::Sweep => {}
            Phase::Accesses => {}
        }
        progress.message(format!("analysing {actions} actions: {}", phase.name()));
    })
    .with_context(|| format!("cannot analyse {}", args.file.display()))?;
    // A recording also holds the page's HTML and scripts: reports show the racing lines.
    progress.message("loading page sources for the report");
    let sources = shepherd_session::page_sources::for_trace_file(&args.file);
    progress.finish();
    let lookup = |r: &RaceView| {
        explored.and_then(|m| {
            m.get(&race_key(&r.location, &r.first.stable, &r.second.stable))
                .cloned()
        })
    };
    // The page folds covered races under their cover, so it always has them.
    let mut full = args.html.as_ref().map(|_| {
        let mut full = RaceReport::new(trace, &analysis, true);
        full.attach_explored(lookup);
        full
    });
    // Both reports are streamed from the plan a few locations at a time (large ones rendered
    // on two threads): a long session's report is never held whole.
    {
        let mut plan = ReportPlan::new(trace, &analysis, args.all);
        if explored.is_some() {
            plan.attach_explored(trace, &analysis, lookup);
        }
        let mut lists = vec![plan.action_pairs(&analysis)];
        lists.extend(full.as_ref().map(super::policy::race_pairs));
        // The analysis reaches its filters (where the policy thread starts) before it returns.
        let Some(thread) = policies else {
            anyhow::bail!(
                "the analysis of {} ended before its filters",
                args.file.display()
            );
        };
        // Fails only when the policy thread is gone: its join says why.
        let _ = pairs_tx.send(lists.concat());
        let mut marks = PolicyMarks::working(thread, &lists);
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        if args.json {
            let (by, undecided) = marks.of_list(0);
            plan.set_repaired_by(by, undecided);
            report::json::write(&mut out, trace, &analysis, &plan, &sources)?;
            writeln!(out)?;
        } else {
            // Rendered while the policies are worked out (races bench, wide page, one timed
            // run: the report ended 17 ms after the marks came, of its ≈ 35 ms on two threads).
            report::text::write_marks_later(
                &mut out, trace, &analysis, &plan, &sources, &mut marks,
            )?;
        }
        if let Some(full) = &mut full {
            let (by, undecided) = marks.of_list(1);
            super::policy::set_repaired_by(full, by, undecided);
        }
        out.flush()?;
    }
    if let (Some(out), Some(full)) = (&args.html, &full) {
        let progress = Progress::spinner("writing the HTML report");
        let page = report::html::render(full, &analysis, trace, &sources);
        std::fs::write(out, page).with_context(|| format!("cannot write {}", out.display()))?;
        progress.finish();
    }
    Ok(())
}
