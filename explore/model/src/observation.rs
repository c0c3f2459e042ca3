//! What one execution observed, as the browser executor hands it over: the steps it ran with
//! the events enabled before each, the page's trace and its end state.

use crate::snapshot::Snapshot;
use serde::{Deserialize, Serialize};
use shepherd_trace::Trace;
use std::time::Duration;

/// One executed step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// The event.
    pub name: String,
    /// Its kind (`chunk`, `net`, `user`, or the controller's kind: `timer`, `event:load`…).
    pub kind: String,
    /// Events enabled before it.
    pub enabled: Vec<String>,
    /// The first trace action at or after it (trace ids are dense in execution order).
    pub first_action: u32,
}

/// What one execution did.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// Events enabled after the last step.
    pub enabled_after: Vec<String>,
    /// The page's trace (the top-level document).
    pub trace: Option<Trace>,
    /// The end state.
    pub snapshot: Snapshot,
    /// Events of the plan skipped because they were not enabled when reached.
    pub skipped: Vec<String>,
    /// A prefix event was not enabled (the page did not repeat its parent's steps).
    pub diverged: bool,
    /// Why the execution stopped before nothing was enabled, if it did.
    pub stopped: Option<String>,
    /// Wall-clock time.
    pub elapsed: Duration,
    /// A probe's state right after its moved events ran, before the page settled.
    pub checkpoint: Option<Checkpoint>,
    /// Moved gestures that waited because their target could not be acted on (read-only,
    /// disabled), with why.
    pub inert: Vec<(String, String)>,
}

/// What a probe saw right after the events it moved had run, before letting the page settle
/// by its own means (timers, retries, responses): compared with the settled state, it tells a
/// difference the page repairs by itself from one it keeps.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Steps run before it.
    pub step: u32,
    /// What the user saw then ([`Snapshot::visible`]).
    pub visible: String,
}
