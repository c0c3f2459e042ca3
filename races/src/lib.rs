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
pub mod filters;
pub mod fixes;
pub mod graph;
pub mod oracle;
pub mod races;
pub mod report;
pub mod synth;

use std::time::{Duration, Instant};

use accesses::{Accesses, ScanError};
use clocks::Clocks;
use coverage::Coverage;
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
    /// Also compute single coverage (Def. 3.1) besides multi-coverage (costs one more clock
    /// array during the coverage sweep).
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
    /// Graph, timer arcs, chain decomposition and clocks.
    pub clocks: Duration,
    /// Race candidates.
    pub races: Duration,
    /// Coverage sweep.
    pub coverage: Duration,
    /// Filters.
    pub filters: Duration,
}

/// Everything the analysis found.
#[derive(Debug)]
pub struct Analysis {
    /// The final happens-before graph (logged and derived arcs).
    pub graph: HbGraph,
    /// Its clocks.
    pub clocks: Clocks,
    /// Kept accesses by location.
    pub accesses: Accesses,
    /// Candidate races, sorted by second access.
    pub races: Vec<Race>,
    /// Coverage of each race.
    pub coverage: Coverage,
    /// Filter tags per location.
    pub tags: Vec<LocTags>,
    /// Phase timings.
    pub timings: Timings,
}

impl Analysis {
    /// Indices of the uncovered races.
    pub fn uncovered(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.races.len()).filter(|&i| !self.coverage.covered[i])
    }
}

/// Runs the whole analysis on `trace`.
pub fn analyze(trace: &Trace, opts: &Options) -> Result<Analysis, Error> {
    let mut timings = Timings::default();
    let t = Instant::now();
    let scan = accesses::scan(trace, &opts.fixes)?;
    timings.scan = t.elapsed();

    let t = Instant::now();
    let (graph, clocks) = chains::build(trace, &scan.derived, &scan.auto, &opts.fixes)?;
    timings.clocks = t.elapsed();
    let acc = scan.accesses;

    let t = Instant::now();
    let races = races::candidates(&acc, &clocks);
    timings.races = t.elapsed();

    let t = Instant::now();
    let coverage = coverage::compute(&graph, &clocks, &acc, &races, opts.single_coverage);
    timings.coverage = t.elapsed();

    let t = Instant::now();
    let tags = filters::tag(trace, &graph, &acc, &races, &coverage);
    timings.filters = t.elapsed();

    Ok(Analysis {
        graph,
        clocks,
        accesses: acc,
        races,
        coverage,
        tags,
        timings,
    })
}
