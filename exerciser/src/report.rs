//! What an exercise did: the log of fired events, the controls it found and acted on, and why
//! it ended.

use std::time::Duration;

/// One user-level event fired during the exercise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FiredEvent {
    /// Position in the log, from 0.
    pub seq: usize,
    /// Milliseconds since the exercise started.
    pub at_ms: u64,
    /// The input dispatched, one entry per dispatch so a replay can interleave other events
    /// between them (see [`fire`](crate::fire)): `mouseover` (the mouse moves onto the element:
    /// `mouseover`/`mouseenter`/`mousemove`), `mousedown`, `click` (the button release:
    /// `mouseup` then `click`), `focus`, `keydown`, `keyup`.
    pub event: String,
    /// The target element's backend node id in this page load (`None`: the page as a whole).
    pub backend_node_id: Option<i64>,
    /// The target's stable path (`/html[1]/body[1]/button[2]`, see [`Element::Path`](shepherd_browser::Element::Path)); empty
    /// for the page as a whole.
    pub path: String,
    /// Short description of the target (`button#save.primary`).
    pub target: String,
    /// The key for key events.
    pub detail: Option<String>,
}

/// Why the exercise ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The time limit passed.
    Time,
    /// The event limit was reached.
    MaxEvents,
    /// No control and no element with handlers was found.
    NoCandidates,
    /// The main frame committed another document despite the navigation block.
    LeftPage,
    /// Every control found had every gesture ([`ExerciseOptions::stop_when_covered`](crate::ExerciseOptions::stop_when_covered)).
    Covered,
}

/// A control the exercise found (visible and enabled at some scan), and what it did to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlCoverage {
    /// Backend node id in this page load.
    pub backend_node_id: i64,
    /// Stable path ([`FiredEvent::path`]).
    pub path: String,
    /// Short description (`select#size`).
    pub target: String,
    /// The gestures it gets ([`Gesture::name`](crate::Gesture::name)), in report order.
    pub offered: Vec<&'static str>,
    /// The gestures that were dispatched on it in full, in report order.
    pub done: Vec<&'static str>,
}

impl ControlCoverage {
    /// Whether any gesture reached it.
    pub fn exercised(&self) -> bool {
        !self.done.is_empty()
    }
}

/// What [`exercise`](crate::exercise) did.
#[derive(Debug, Clone)]
pub struct ExerciseReport {
    /// Every event fired, in order.
    pub events: Vec<FiredEvent>,
    /// Main-frame navigations the DevTools guard blocked (their URLs); the runtime's own block
    /// (`blockNavigations`) stops most before they get there.
    pub blocked_navigations: Vec<String>,
    /// Popups that were closed (their URLs).
    pub closed_popups: Vec<String>,
    /// Every control found over all scans, in the order found (a scan's in document order).
    pub controls: Vec<ControlCoverage>,
    /// Why it stopped.
    pub stopped: StopReason,
    /// How long it ran.
    pub elapsed: Duration,
}

impl ExerciseReport {
    /// (controls exercised, controls present): the coverage of the exercise.
    pub fn coverage(&self) -> (usize, usize) {
        let done = self.controls.iter().filter(|c| c.exercised()).count();
        (done, self.controls.len())
    }
}
