//! Offline race detection on *Event* traces (EventRacer §3–§5): happens-before graph,
//! chain-decomposition vector clocks, race candidates, single and multi coverage, filters, and
//! the text / JSON / HTML reports.
//!
//! The analysis never knows where a trace came from: it takes a [`shepherd_trace::Trace`]
//! (JSONL, `ER_actionlog`, a recording, a generator) and returns an [`Analysis`].
//!
//! ```
//! use shepherd_trace::{ActionType, TraceBuilder};
//! let mut b = TraceBuilder::new();
//! let s = b.begin(ActionType::Unknown, "script", "s0");
//! b.write("Global.x", Some("1"));
//! b.end();
//! let t = b.begin(ActionType::Timer, "timer", "t0");
//! b.read("Global.x", None);
//! b.end();
//! let c = b.begin(ActionType::UserInterface, "event", "click0");
//! b.write("Global.x", Some("2"));
//! b.end();
//! b.fork_delay(s, t, 10);
//! let trace = b.finish();
//! let analysis = shepherd_races::analyze(&trace, &shepherd_races::Options::default()).unwrap();
//! // The click is unordered with both: write-write with the script, read-write with the timer.
//! assert_eq!(analysis.uncovered().count(), 2);
//! ```

pub mod accesses;
pub mod chains;
pub mod clocks;
pub mod coverage;
pub mod fifo;
pub mod filters;
pub mod fixes;
pub mod graph;
pub mod oracle;
pub mod races;
pub mod report;
pub mod store;
pub mod sweep;
pub mod synth;

use std::time::{Duration, Instant};

use accesses::{Accesses, ScanError};
use clocks::ChainTable;
use filters::LocTags;
pub use fixes::FixOptions;
use graph::{GraphError, HbGraph};
use races::Race;
use shepherd_trace::Trace;

/// Analysis options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Derived arcs to add.
    pub fixes: FixOptions,
    /// Also compute single coverage (Def. 3.1) besides multi-coverage (Def. 3.2, which alone
    /// decides what is uncovered). Costs a third clock per action and access frontiers per
    /// location; reports use it to say how a race is covered.
    pub single_coverage: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            fixes: FixOptions::default(),
            single_coverage: true,
        }
    }
}

/// Why a trace could not be analysed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The trace's operations are inconsistent.
    #[error("invalid trace: {0}")]
    Scan(#[from] ScanError),
    /// The trace's arcs are inconsistent.
    #[error("invalid trace: {0}")]
    Graph(#[from] GraphError),
}

/// Wall time of each phase.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timings {
    /// Access scan (grouping, deduplication, static derived arcs).
    pub scan: Duration,
    /// Building the happens-before graph from logged and static derived arcs.
    pub graph: Duration,
    /// The fused sweep: timer arcs, chains, clocks, race candidates and coverage.
    pub clocks: Duration,
    /// Filters.
    pub filters: Duration,
}

/// Everything the analysis found.
#[derive(Debug)]
pub struct Analysis {
    /// The final happens-before graph (logged and derived arcs).
    pub graph: HbGraph,
    /// The chain decomposition the clocks used.
    pub chains: ChainTable,
    /// Kept accesses by location.
    pub accesses: Accesses,
    /// Candidate races, sorted by second access.
    pub races: Vec<Race>,
    /// Def. 3.2 coverage of each race (`true` = covered).
    pub covered: Vec<bool>,
    /// Def. 3.1 coverage of each race, when computed.
    pub single: Option<Vec<bool>>,
    /// Per race: the second access is a read no earlier write reaches, even through races.
    pub uninit: Vec<bool>,
    /// Filter tags per location.
    pub tags: Vec<LocTags>,
    /// Phase timings.
    pub timings: Timings,
    /// Most clock entries (`u16`) held at once during the sweep (the sum of its two halves'
    /// peaks).
    pub peak_clock_entries: usize,
}

impl Analysis {
    /// Indices of the uncovered races.
    pub fn uncovered(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.races.len()).filter(|&i| !self.covered[i])
    }
}

/// Runs the whole analysis on `trace`.
pub fn analyze(trace: &Trace, opts: &Options) -> Result<Analysis, Error> {
    analyze_with_phases(trace, opts, &mut |_| {})
}

/// A phase of [`analyze_with_phases`].
#[derive(Clone, Copy, Debug)]
pub enum Phase<'a> {
    /// Reading the shared-location accesses.
    Accesses,
    /// The sweep: happens-before, races and coverage. The analysis' memory peaks here.
    Sweep,
    /// Tagging locations with the filters. The sweep's clocks are freed by then, so work
    /// started at this phase does not add to the peak; `graph` is the final happens-before
    /// (what the repair policies' simulations read).
    Filters {
        /// The happens-before graph the races were found with.
        graph: &'a HbGraph,
    },
}

impl Phase<'_> {
    /// What the phase does, for progress displays.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Accesses => "accesses",
            Phase::Sweep => "happens-before and races",
            Phase::Filters { .. } => "filters",
        }
    }
}

/// [`analyze`], calling `phase` with each phase as it starts, for progress displays on large
/// traces and for callers that start other work once the memory peak is behind.
pub fn analyze_with_phases(
    trace: &Trace,
    opts: &Options,
    phase: &mut dyn FnMut(Phase<'_>),
) -> Result<Analysis, Error> {
    let mut timings = Timings::default();
    phase(Phase::Accesses);
    let t = Instant::now();
    let scan = accesses::scan(trace, &opts.fixes)?;
    timings.scan = t.elapsed();

    phase(Phase::Sweep);
    let t = Instant::now();
    let out = sweep::sweep(trace, &scan, &opts.fixes, opts.single_coverage)?;
    timings.graph = out.graph_time;
    timings.clocks = t.elapsed().saturating_sub(out.graph_time);
    let acc = scan.accesses;

    phase(Phase::Filters { graph: &out.graph });
    let t = Instant::now();
    let tags = filters::tag(
        trace,
        &acc,
        &out.races,
        &out.covered,
        &out.uninit,
        &scan.auto,
    );
    timings.filters = t.elapsed();

    Ok(Analysis {
        graph: out.graph,
        chains: out.chains,
        accesses: acc,
        races: out.races,
        covered: out.covered,
        single: out.single,
        uninit: out.uninit,
        tags,
        timings,
        peak_clock_entries: out.peak_entries,
    })
}
