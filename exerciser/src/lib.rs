//! Exercises a page's controls with user gestures: seeded random user events at the elements
//! that have handlers, R4-style (until a time or event limit), without leaving the page. This
//! is `shepherd record --explore` and the scenario corpus' auto-exploration; it is not R4's
//! systematic explorer (`shepherd-explore`), which reorders the events of a recorded run.
//!
//! ```no_run
//! # async fn demo(page: &shepherd_browser::Page) -> shepherd_browser::Result<()> {
//! use shepherd_exerciser::{ExerciseOptions, exercise, fire, reset_pointer};
//! let report = exercise(page, &ExerciseOptions::default()).await?;
//! // Later, on a fresh load of the same page: the same events, one dispatch at a time.
//! reset_pointer(page).await?;
//! for ev in &report.events {
//!     fire(page, ev).await?;
//! }
//! # Ok(()) }
//! ```
//!
//! Candidates: every element with a listener reported by `DOMDebugger.getEventListeners` on the
//! document (whole subtree, piercing frames and shadow roots) or with an `on*` attribute, every
//! text field (forms feed other handlers), and every element whose click does something
//! without a listener: links (`href`, `javascript:` URLs included), buttons and
//! submit/reset/image/checkbox/radio inputs, labels of a control, and `<summary>`. Their races
//! (code in a `javascript:` URL, a form's submit handlers, a box a label checks) only show when
//! they are clicked; plain links and submit buttons are safe to click because navigations away
//! are blocked (below). Listeners on the document, the window, `<html>`
//! or `<body>` only add a page-level keyboard action: clicking the page background is not an
//! action on a handler element, and instrumentation typically listens at the root anyway.
//!
//! Actions, chosen uniformly at random with a seeded generator: a hover (mouse moved onto the
//! element: `mouseover`/`mouseenter`/`mousemove`), a click sequence (over, down, up, click), key
//! presses on the focused element, or text typed into a field. After each action the page is
//! given a short quiet period, so asynchronous effects (timers, fetches) interleave with the
//! next action as they would for a user. Candidates are re-scanned regularly, because handlers
//! come and go. The same seed on the same page makes the same choices (the scenario corpus
//! relies on it).
//!
//! Staying on the page (decision): while exercising, the `Fetch` domain pauses every
//! main-frame document request and fails it with `Aborted`. An aborted navigation never
//! commits, so the current document is not unloaded and keeps running — link and submit
//! handlers still run, only their default navigation is dropped. Navigations of subframes
//! continue. Popups (`window.open`, `target=_blank`) are closed as soon as they appear, file
//! choosers are intercepted, dialogs are accepted by the page monitor. History traversals to
//! another document need no request and cannot be blocked this way: if the main frame commits
//! a new document anyway, the exercise stops and reports [`StopReason::LeftPage`].
//!
//! The log names targets by stable paths ([`shepherd_browser::Element::Path`]), so [`fire`]
//! replays it entry by entry on a fresh load.

mod candidates;
mod guard;
mod options;
mod replay;
mod report;
mod rng;
mod run;

pub use options::{EventCounter, ExerciseOptions};
pub use replay::{fire, reset_pointer};
pub use report::{ExerciseReport, FiredEvent, StopReason};
pub use run::exercise;

#[cfg(test)]
mod tests {
    /// The options and the report cross tasks (the recorder drives the exercise from a
    /// spawned task and reports progress from another).
    #[test]
    fn options_and_reports_are_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<crate::ExerciseOptions>();
        check::<crate::ExerciseReport>();
    }
}
