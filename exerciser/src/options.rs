//! What an exercise may do: its limits, seed and inputs.

use std::time::Duration;

/// Limits and knobs for [`exercise`](crate::exercise).
#[derive(Debug, Clone)]
pub struct ExerciseOptions {
    /// Stop after this long (R4: 15 s).
    pub duration: Duration,
    /// Stop after this many fired events (R4: 250); the log never exceeds it.
    pub max_events: usize,
    /// Seed of the random choices; the same seed on the same page makes the same choices.
    pub seed: u64,
    /// Quiet period awaited after each action.
    pub settle: Duration,
    /// Longest wait for that quiet period.
    pub settle_limit: Duration,
    /// Re-scan candidates after this many actions.
    pub rescan_every: usize,
    /// Strings typed into text fields (one chosen at random per typing action).
    pub text_inputs: Vec<String>,
    /// Told the number of events fired so far after every action (progress displays).
    pub on_events: Option<EventCounter>,
    /// Stop once every control found has had every one of its gestures (and the page's own
    /// keys, when it has page-level key listeners), after at least this many events: the
    /// exercise then ends on coverage rather than on the clock ([`StopReason::Covered`]).
    ///
    /// [`StopReason::Covered`]: crate::StopReason::Covered
    pub stop_when_covered: Option<usize>,
}

/// A callback given the running count of fired events.
#[derive(Clone)]
pub struct EventCounter(pub std::sync::Arc<dyn Fn(usize) + Send + Sync>);

impl std::fmt::Debug for EventCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EventCounter")
    }
}

impl Default for ExerciseOptions {
    fn default() -> Self {
        ExerciseOptions {
            duration: Duration::from_secs(15),
            max_events: 250,
            seed: 0x5e9e_4e2d,
            settle: Duration::from_millis(30),
            settle_limit: Duration::from_millis(400),
            rescan_every: 5,
            text_inputs: vec!["shepherd".into(), "42".into(), "a b".into(), "x".into()],
            on_events: None,
            stop_when_covered: None,
        }
    }
}
