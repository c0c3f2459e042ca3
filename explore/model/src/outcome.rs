//! What an exploration produced: one record per finished execution (why it ran, its steps,
//! its end state, the races between its steps, its verdict against its parent), kept in the
//! state directory, and the whole outcome the report is written from.

use crate::dpor::Explorer;
use crate::event::EventTable;
use crate::observation::Checkpoint;
use crate::site::Site;
use crate::snapshot::Snapshot;
use crate::steps::RaceNote;
use crate::triage::{Triage, Unexplored};
use crate::verdict::{Settled, Verdict};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// Why a sequence was explored (`reversal`, `disabled` in the state directory).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cause {
    /// A race of its parent reversed.
    Reversal,
    /// An event a step of its parent disabled, run before that step.
    Disabled,
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Cause::Reversal => "reversal",
            Cause::Disabled => "disabled",
        })
    }
}

/// Where a sequence came from, in names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OriginNote {
    /// The parent execution.
    pub parent: u32,
    /// A race reversed, or a disabled event run first.
    pub kind: Cause,
    /// The parent's steps involved (reversal: the race; disabled: the disabling step).
    pub steps: (u32, u32),
    /// Their events (reversal: earlier, later; disabled: the disabling event, the disabled).
    pub events: (String, String),
    /// FIFO races: the posts swapped.
    pub posts: Option<(u32, u32)>,
    /// The races between the two steps in the parent.
    pub races: Vec<RaceNote>,
}

/// The races between two steps of one execution that the reorder phase could reverse.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairRaces {
    /// Earlier step.
    pub first: u32,
    /// Later step.
    pub second: u32,
    /// The races.
    pub races: Vec<RaceNote>,
}

/// One uncovered race of the trace, with the steps of its accesses.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRace {
    /// Step of the earlier access.
    pub first: u32,
    /// Step of the later access.
    pub second: u32,
    /// The race.
    pub race: RaceNote,
}

/// One finished execution.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Run id (0: the initial execution).
    pub id: u32,
    /// Conflict reversals from the initial execution.
    pub depth: u32,
    /// Why it ran.
    pub origin: Option<OriginNote>,
    /// The events it ran.
    pub steps: Vec<String>,
    /// Events of its plan it skipped (not enabled).
    pub skipped: Vec<String>,
    /// A prefix event was not enabled.
    pub diverged: bool,
    /// Why it stopped early, if it did.
    pub stopped: Option<String>,
    /// Wall-clock milliseconds.
    pub elapsed_ms: u64,
    /// Its end state.
    pub snapshot: Snapshot,
    /// Screenshot file (in the runs directory).
    pub screenshot: Option<String>,
    /// Adjacent step races (what its children reverse).
    pub pairs: Vec<PairRaces>,
    /// The trace's uncovered races mapped to steps (initial execution only).
    pub uncovered: Vec<StepRace>,
    /// Conflicting step pairs the platform does not order (naive baseline).
    pub racing_pairs: usize,
    /// `(event, the event that enabled it)` for its steps enabled by an earlier step (what a
    /// replay of its events can expect to see).
    pub enablers: Vec<(String, String)>,
    /// Against its parent.
    pub verdict: Option<Verdict>,
    /// The part it plays in triage, when it ran for a probe.
    #[serde(default)]
    pub probe: Option<ProbeRole>,
    /// A probe's state right after its events ran, before the page settled.
    #[serde(default)]
    pub checkpoint: Option<Checkpoint>,
    /// Moved gestures that waited because their target could not be acted on, with why.
    #[serde(default)]
    pub inert: Vec<(String, String)>,
}

/// Which run of a probe an execution is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeRole {
    /// The probe ([`crate::triage::Probe::id`]).
    pub probe: u32,
    /// The reference (the pair in its recorded order) rather than the probe itself.
    pub reference: bool,
}

/// What one probe found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeResult {
    /// The probe.
    pub probe: u32,
    /// The run of its reference, once it ran.
    pub reference: Option<u32>,
    /// The run of the probe, once it ran.
    pub run: Option<u32>,
    /// The verdict, or why there is none.
    pub outcome: ProbeOutcome,
    /// For each race the probe answers, the order its two runs made the race's accesses in:
    /// when they agree, the probe compared one order with itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub orders: Vec<RaceOrders>,
}

/// The order of one race's two accesses in a probe's two runs, each `Some(true)` for the
/// recording's order, `Some(false)` for the other, `None` when the run had no such race
/// ([`crate::triage::recorded_order_kept`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RaceOrders {
    /// The race's location.
    pub location: String,
    /// In the reference's run.
    pub reference: Option<bool>,
    /// In the probe's run.
    pub run: Option<bool>,
}

/// A probe's verdict, or why it has none.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProbeOutcome {
    /// Not both runs yet.
    Pending,
    /// Both ran and the moved order happened: judged.
    Judged(Settled),
    /// It could not answer.
    Unexplored(Unexplored),
}

impl RunRecord {
    /// The races between steps `first` and `second`.
    pub fn races_between(&self, first: u32, second: u32) -> &[RaceNote] {
        self.pairs
            .iter()
            .find(|p| p.first == first && p.second == second)
            .map_or(&[], |p| p.races.as_slice())
    }
}

/// What an exploration produced.
pub struct Outcome {
    /// The site explored.
    pub site: Site,
    /// Every execution, by run id.
    pub runs: Vec<RunRecord>,
    /// The explorer (counters, pruning).
    pub explorer: Explorer,
    /// Event names.
    pub table: EventTable,
    /// Nothing is left within the bound.
    pub complete: bool,
    /// Executions that failed (browser errors).
    pub failures: u64,
    /// Total exploring time over all sessions.
    pub elapsed: Duration,
    /// The state directory.
    pub state_dir: PathBuf,
    /// The repair policies every execution enforced (comma-separated names), if any.
    pub policy: Option<String>,
    /// Every uncovered race of the recording and its probes (empty before the initial
    /// execution ran).
    pub triage: Triage,
    /// What each probe found, by probe id.
    pub probes: Vec<ProbeResult>,
}

impl Outcome {
    /// A screenshot's path.
    pub fn screenshot(&self, run: &RunRecord) -> Option<PathBuf> {
        run.screenshot
            .as_ref()
            .map(|f| self.state_dir.join("runs").join(f))
    }
}
