//! The pipeline of `shepherd races`, the one the CLI, `shepherd demo` and the pipeline
//! benchmark run: the trace loaded, analysed, the shipped repair policies simulated on a
//! second thread once the sweep is over, and the reports written (text streamed with the
//! policy marks spliced in when they come, JSON, the HTML page), with the explorer's verdicts
//! merged in when given.

use crate::explored::Verdicts;
use crate::marks::{self, PolicyMarks};
use crate::memory;
use crate::page_texts;
use crate::trace_file;
use anyhow::Context;
use shepherd_policies::covers::{TraceFacts, shipped_orderings_deferred};
use shepherd_races::report::{self, PageSources, RaceReport, RaceView, ReportPlan};
use shepherd_races::{Analysis, Options, Phase, analyze_with_phases};
use shepherd_trace::Trace;
use std::io::Write;
use std::path::Path;

/// Where the trace comes from.
#[derive(Clone, Copy, Debug)]
pub enum Input<'a> {
    /// A recording (`.rec`: its page texts are quoted in the reports), a JSONL trace or an
    /// `ER_actionlog` ([`load`]).
    File(&'a Path),
    /// A trace already loaded (reports show positions only).
    Trace(&'a Trace),
}

impl<'a> Input<'a> {
    /// How messages name the input.
    pub(crate) fn name(&self) -> String {
        match self {
            Input::File(path) => path.display().to_string(),
            Input::Trace(_) => "the trace".to_string(),
        }
    }

    /// The trace: a file's is [`load`]ed into `slot`.
    pub(crate) fn trace<'b>(
        self,
        slot: &'b mut Option<Trace>,
        observer: &mut dyn Observer,
    ) -> anyhow::Result<&'b Trace>
    where
        'a: 'b,
    {
        Ok(match self {
            Input::File(path) => slot.insert(load(path, observer)?),
            Input::Trace(trace) => trace,
        })
    }
}

/// What to analyse and how.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// The trace.
    pub input: Input<'a>,
    /// Covered races too (default: uncovered only), in the text and JSON reports.
    pub all: bool,
    /// The explorer's verdicts, merged into every report.
    pub explored: Option<&'a Verdicts>,
    /// Whether single coverage is computed. `None` (the CLI): only when a report shows how a
    /// covered race is covered (`all` or an HTML page); the benchmark sets it to measure it.
    pub single_coverage: Option<bool>,
}

impl<'a> Request<'a> {
    /// The uncovered races of `input`, nothing merged.
    pub fn new(input: Input<'a>) -> Request<'a> {
        Request {
            input,
            all: false,
            explored: None,
            single_coverage: None,
        }
    }
}

/// Where the reports go; any of them may be left out.
#[derive(Default)]
pub struct Outputs<'w> {
    /// The text report.
    pub text: Option<&'w mut dyn Write>,
    /// The versioned JSON report (`docs/races-json.md`), followed by a newline.
    pub json: Option<&'w mut dyn Write>,
    /// A file to write the self-contained HTML page to (covered races folded under their
    /// cover).
    pub html: Option<&'w Path>,
    /// Filled with the whole report of the races the text and JSON reports show (sources,
    /// explored verdicts and policy marks attached), for the outputs made from it (SARIF and
    /// JUnit, `shepherd-ci`). Every race's view is held at once: asked only for those.
    pub whole: Option<&'w mut Option<RaceReport>>,
}

/// Where the pipeline is, for progress displays and measurements.
#[derive(Clone, Copy, Debug)]
pub enum Step<'a> {
    /// Reading the trace file starts ([`Observer::read`] follows its bytes).
    Reading,
    /// The trace is loaded, and the memory its reading freed returned.
    Read,
    /// The analysis of a trace of `actions` actions starts.
    Analysing {
        /// Actions in the trace.
        actions: usize,
    },
    /// A phase of the analysis starts.
    Phase {
        /// Actions in the trace.
        actions: usize,
        /// What the phase does ([`Phase::name`]).
        name: &'static str,
    },
    /// The analysis is over (the policies' simulations may still run).
    Analysed(&'a Analysis),
    /// The recording's page texts are being read for the reports.
    LoadingSources,
    /// The text or JSON report is being written.
    Reporting,
    /// The HTML page is being rendered and written.
    WritingHtml,
    /// Everything is written.
    Done,
}

/// Told where the pipeline is. Every method does nothing unless overridden.
pub trait Observer {
    /// `done` of `total` bytes of the trace file read.
    fn read(&mut self, done: u64, total: u64) {
        let _ = (done, total);
    }

    /// The pipeline reached `step`.
    fn step(&mut self, step: Step<'_>) {
        let _ = step;
    }
}

/// Observes nothing.
impl Observer for () {}

/// What a run found, for summaries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Actions in the trace.
    pub actions: usize,
    /// Happens-before arcs the trace logged.
    pub logged_arcs: usize,
    /// Races the text and JSON reports show.
    pub shown: usize,
    /// Of those, the races some shipped repair policy orders.
    pub ordered: usize,
}

/// Loads the trace in `path` (a recording's top-level page trace, a JSONL trace or an
/// `ER_actionlog`) for an analysis: warnings are logged, a recording's page URL fills in a
/// header without one, and the memory freed by the parsing threads is returned.
pub fn load(path: &Path, observer: &mut dyn Observer) -> anyhow::Result<Trace> {
    observer.step(Step::Reading);
    let src =
        trace_file::load_with_progress(path, None, &mut |done, total| observer.read(done, total))?;
    // The parts a large trace was read in were merged on this thread, and the other threads'
    // heaps are gone: what they freed is returned now, not after the sweep has grown past it.
    memory::release_freed();
    observer.step(Step::Read);
    for w in &src.loaded.warnings {
        tracing::warn!("{}: {w}", path.display());
    }
    let mut trace = src.loaded.trace;
    // A recording knows the page URL even when the trace header does not.
    if trace.header.page.is_none() {
        trace.header.page = src.page;
    }
    // The analysis and the reports only read the strings: the index interning needs goes
    // (≈ 5 MB of a 276 000-location trace's peak).
    trace.strings.drop_index();
    Ok(trace)
}

/// Runs `request`, writing the reports to `outputs`.
pub fn run(
    request: &Request<'_>,
    outputs: Outputs<'_>,
    observer: &mut dyn Observer,
) -> anyhow::Result<Outcome> {
    let mut loaded = None;
    let trace = request.input.trace(&mut loaded, observer)?;
    std::thread::scope(|s| analyse_and_report(s, request, trace, outputs, observer))
}

/// The analysis and the reports. The repair policies' simulations read only the trace and
/// happens-before, so they start on a second core as soon as the sweep is over (a thread of
/// `scope`) and learn which races to answer for once the report is planned.
fn analyse_and_report<'s, 't: 's>(
    s: &'s std::thread::Scope<'s, '_>,
    request: &Request<'_>,
    trace: &'t Trace,
    mut outputs: Outputs<'_>,
    observer: &mut dyn Observer,
) -> anyhow::Result<Outcome> {
    // Single coverage only says how a covered race is covered: reports without covered races
    // (no `all`, no HTML page) never show it, and it costs a third clock per action (wide
    // 115 000-action page: ≈ 0.2 s and 17 MB of the analysis' 0.5 s and 95 MB).
    let opts = Options {
        single_coverage: request
            .single_coverage
            .unwrap_or(request.all || outputs.html.is_some()),
        ..Options::default()
    };
    let actions = trace.actions.len();
    observer.step(Step::Analysing { actions });
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
                    let hb = marks::hb_arcs(graph);
                    memory::release_freed();
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
        observer.step(Step::Phase {
            actions,
            name: phase.name(),
        });
    })
    .with_context(|| format!("cannot analyse {}", request.input.name()))?;
    observer.step(Step::Analysed(&analysis));
    // A recording also holds the page's HTML and scripts: reports show the racing lines.
    observer.step(Step::LoadingSources);
    let sources = match request.input {
        Input::File(path) => page_texts::for_trace_file(path),
        Input::Trace(_) => PageSources::default(),
    };
    observer.step(Step::Reporting);
    let explored = request.explored;
    let lookup = |r: &RaceView| explored.and_then(|v| v.of(r));
    // The page folds covered races under their cover, so it always has them.
    let mut full = outputs.html.map(|_| {
        let mut full = RaceReport::new(trace, &analysis, true);
        full.attach_explored(lookup);
        full
    });
    // Both reports are streamed from the plan a few locations at a time (large ones rendered
    // on two threads): a long session's report is never held whole.
    let mut plan = ReportPlan::new(trace, &analysis, request.all);
    if explored.is_some() {
        plan.attach_explored(trace, &analysis, lookup);
    }
    let mut lists = vec![plan.action_pairs(&analysis)];
    lists.extend(full.as_ref().map(marks::race_pairs));
    let shown = lists[0].len();
    // The analysis reaches its filters (where the policy thread starts) before it returns.
    let Some(thread) = policies else {
        anyhow::bail!(
            "the analysis of {} ended before its filters",
            request.input.name()
        );
    };
    // Fails only when the policy thread is gone: its join says why.
    let _ = pairs_tx.send(lists.concat());
    // How many outputs take the first list's marks.
    let asks = [
        outputs.text.is_some(),
        outputs.json.is_some(),
        outputs.whole.is_some(),
    ]
    .into_iter()
    .filter(|&x| x)
    .count();
    let mut marks = PolicyMarks::working(thread, &lists, asks);
    if let Some(out) = outputs.text.as_deref_mut() {
        // Rendered while the policies are worked out (races bench, wide page, one timed
        // run: the report ended 17 ms after the marks came, of its ≈ 35 ms on two threads).
        report::text::write_marks_later(out, trace, &analysis, &plan, &sources, &mut marks)?;
        out.flush()?;
    }
    if let Some(out) = outputs.json.as_deref_mut() {
        let (by, undecided) = marks.of_list(0);
        plan.set_repaired_by(by, undecided);
        report::json::write(out, trace, &analysis, &plan, &sources)?;
        writeln!(out)?;
        out.flush()?;
    }
    if let Some(slot) = outputs.whole {
        let (by, undecided) = marks.of_list(0);
        plan.set_repaired_by(by, undecided);
        let mut whole = plan.into_report(trace, &analysis);
        whole.attach_sources(&sources);
        *slot = Some(whole);
    }
    if let Some(full) = &mut full {
        let (by, undecided) = marks.of_list(1);
        marks::set_repaired_by(full, by, undecided);
    }
    let ordered = marks.ordered();
    if let (Some(out), Some(full)) = (outputs.html, &full) {
        observer.step(Step::WritingHtml);
        let page = report::html::render(full, &analysis, trace, &sources);
        std::fs::write(out, page).with_context(|| format!("cannot write {}", out.display()))?;
    }
    observer.step(Step::Done);
    Ok(Outcome {
        actions,
        logged_arcs: trace.arcs.len(),
        shown,
        ordered,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use shepherd_races::synth::{SynthConfig, generate};

    fn trace() -> Trace {
        generate(&SynthConfig {
            actions: 3_000,
            locations: 300,
            ..SynthConfig::default()
        })
    }

    /// The reports `request` writes: text, JSON, HTML page (each when asked).
    fn reports(
        request: &Request<'_>,
        text: bool,
        json: bool,
        html: bool,
    ) -> (Outcome, Vec<u8>, Vec<u8>, Option<String>) {
        let dir = tempfile::tempdir().unwrap();
        let page = dir.path().join("report.html");
        let (mut t, mut j) = (Vec::new(), Vec::new());
        let outputs = Outputs {
            text: text.then_some(&mut t as &mut dyn Write),
            json: json.then_some(&mut j as &mut dyn Write),
            html: html.then_some(page.as_path()),
            whole: None,
        };
        let outcome = run(request, outputs, &mut ()).unwrap();
        let page = html.then(|| std::fs::read_to_string(&page).unwrap());
        (outcome, t, j, page)
    }

    /// `shepherd demo` asks for all three reports at once: each is what it is alone.
    #[test]
    fn reports_asked_together_are_the_reports_asked_alone() {
        let trace = trace();
        let request = Request::new(Input::Trace(&trace));
        let (outcome, text, json, page) = reports(&request, true, true, true);
        let (alone, text_alone, _, page_alone) = reports(&request, true, false, true);
        let (_, _, json_alone, _) = reports(&request, false, true, true);
        assert_eq!(text, text_alone);
        assert_eq!(json, json_alone);
        assert_eq!(page, page_alone);
        assert_eq!(outcome, alone);

        let doc: serde_json::Value = serde_json::from_slice(&json).unwrap();
        let races = doc["races"].as_array().unwrap();
        assert_eq!(races.len(), outcome.shown);
        assert!(outcome.shown > 0, "the synthetic page has uncovered races");
        let marked = races
            .iter()
            .filter(|r| r["repaired_by"].as_array().is_some_and(|p| !p.is_empty()))
            .count();
        assert_eq!(marked, outcome.ordered);
        assert!(
            String::from_utf8_lossy(&text).contains("ordered by policy: "),
            "the text report has the policy marks"
        );
        assert_eq!(
            (outcome.actions, outcome.logged_arcs),
            (trace.actions.len(), trace.arcs.len())
        );
    }

    /// The whole report asked beside the text and JSON reports has the JSON report's races,
    /// policy marks included, and leaves the other reports as they are alone.
    #[test]
    fn the_whole_report_is_the_json_reports_races() {
        let trace = trace();
        let request = Request::new(Input::Trace(&trace));
        let (mut t, mut j) = (Vec::new(), Vec::new());
        let mut whole = None;
        let outputs = Outputs {
            text: Some(&mut t),
            json: Some(&mut j),
            whole: Some(&mut whole),
            ..Outputs::default()
        };
        run(&request, outputs, &mut ()).unwrap();
        let (_, text_alone, json_alone, _) = reports(&request, true, true, false);
        assert_eq!(t, text_alone);
        assert_eq!(j, json_alone);
        let whole = whole.expect("the whole report");
        let doc: serde_json::Value = serde_json::from_slice(&j).unwrap();
        assert_eq!(
            serde_json::to_value(&whole.races).unwrap(),
            doc["races"],
            "the same races, marks and all"
        );
        assert!(whole.races.iter().any(|r| !r.repaired_by.is_empty()));
    }

    /// The text report with its marks spliced in is the plan's report with the marks set.
    #[test]
    fn the_streamed_text_report_is_the_whole_report() {
        let trace = trace();
        let request = Request {
            all: true,
            ..Request::new(Input::Trace(&trace))
        };
        let (_, text, json, _) = reports(&request, true, true, false);
        let an = shepherd_races::analyze(&trace, &Options::default()).unwrap();
        let mut whole = RaceReport::new(&trace, &an, true);
        let doc: serde_json::Value = serde_json::from_slice(&json).unwrap();
        let races = doc["races"].as_array().unwrap();
        let by: Vec<Vec<String>> = races
            .iter()
            .map(|r| {
                r["repaired_by"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|p| p.as_str().unwrap().to_string())
                    .collect()
            })
            .collect();
        let undecided = doc["summary"]["policies_undecided"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| p.as_str().unwrap().to_string())
            .collect();
        marks::set_repaired_by(&mut whole, by, undecided);
        assert_eq!(
            String::from_utf8(text).unwrap(),
            report::text::render(&whole)
        );
    }

    /// Every phase is reported, in order, and a trace file is read first.
    #[test]
    fn the_observer_sees_every_step() {
        #[derive(Default)]
        struct Steps(Vec<String>);
        impl Observer for Steps {
            fn step(&mut self, step: Step<'_>) {
                let name = match step {
                    Step::Phase { name, .. } => name.to_string(),
                    Step::Analysed(an) => format!("analysed {}", !an.races.is_empty()),
                    other => format!("{other:?}")
                        .split([' ', '{'])
                        .next()
                        .unwrap()
                        .into(),
                };
                self.0.push(name);
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let f = std::fs::File::create(&path).unwrap();
        shepherd_trace::write_jsonl(&trace(), std::io::BufWriter::new(f)).unwrap();
        let page = dir.path().join("p.html");
        let mut steps = Steps::default();
        let outputs = Outputs {
            html: Some(&page),
            ..Outputs::default()
        };
        run(&Request::new(Input::File(&path)), outputs, &mut steps).unwrap();
        assert_eq!(
            steps.0,
            [
                "Reading",
                "Read",
                "Analysing",
                "accesses",
                "happens-before and races",
                "filters",
                "analysed true",
                "LoadingSources",
                "Reporting",
                "WritingHtml",
                "Done"
            ]
        );
    }
}
