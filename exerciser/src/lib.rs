//! Exercises a page's controls with user gestures, R4-style (until a time or event limit),
//! without leaving the page. This is `shepherd record --explore`, `shepherd demo` and the
//! scenario corpus' auto-exploration; it is not R4's systematic explorer (`shepherd-explore`),
//! which reorders the events of a recorded run.
//!
//! ```no_run
//! # async fn demo(page: &shepherd_browser::Page) -> shepherd_browser::Result<()> {
//! use shepherd_exerciser::{ExerciseOptions, exercise, fire, reset_pointer};
//! let report = exercise(page, &ExerciseOptions::default()).await?;
//! let (exercised, present) = report.coverage();
//! // Later, on a fresh load of the same page: the same events, one dispatch at a time.
//! reset_pointer(page).await?;
//! for ev in &report.events {
//!     fire(page, ev).await?;
//! }
//! # let _ = (exercised, present);
//! # Ok(()) }
//! ```
//!
//! **Controls.** Every visible, enabled control of the document (through shadow roots and
//! same-process frames): links (`href`, `javascript:` URLs included), buttons, `<summary>`,
//! inputs of every type, `<select>`, `<textarea>`, `contenteditable` elements, labels of a
//! control, elements with a control `role` or a `tabindex` (event delegation leaves them
//! without listeners of their own); and every other element with a listener reported by
//! `DOMDebugger.getEventListeners` or an `on*` attribute. Visible: laid out with a box of at
//! least a pixel that scrolling can reach, `visibility` not hidden (a `DOMSnapshot`); enabled:
//! not `disabled` (nor in a disabled `<fieldset>`) and not `inert`. Listeners on the window,
//! the document, `<html>` or `<body>` add keys pressed at the page; Shepherd's runtime's own
//! root listener does not count.
//!
//! **Gestures** ([`Gesture`]), each control getting what a user does to its kind: a click
//! (links, buttons, checkboxes and radios, labels, other inputs, elements with click
//! listeners), typing after a click into text controls (text fitting the input's type),
//! keyboard and pointer choice in a `<select>` (arrow keys on the focused select; an option of
//! a list box clicked, or a drop-down opened by a click and an entry picked in its popup),
//! Space on a checkbox or radio, Enter on a link or button, keys at elements with key
//! listeners and at range inputs, focus then Tab away at elements with focus or blur listeners
//! (and at every control when the page listens to focus changes itself), and a hover at
//! elements with mouse listeners. `pointer-events: none` leaves only the keyboard's gestures.
//! A pointer gesture first checks (`DOM.getNodeForLocation`) that the control is what the
//! pointer hits at its centre: a control under an overlay is not clicked through it.
//!
//! **Order.** Seeded choices, prioritising what has not been exercised: keys at the page
//! first when it has page-level key listeners (only then do they reach the page: after a
//! gesture the focus is on a control), then a control no gesture reached yet, with its kind's
//! first gesture (a click on a button, typing in a text field, a choice in a select: what a
//! user does first, and what reaches most of its handlers; a hover only where nothing else
//! fits), then a gesture a control has not had yet, then anything, each uniformly at random.
//! After each gesture the page is given a short quiet period, so asynchronous effects
//! (timers, fetches) interleave with the next gesture as they would for a user. Controls are
//! re-scanned regularly (handlers and elements come and go); one that failed (gone, no box,
//! covered) is left until the next scan. The same seed on the same page makes the same choices
//! (the scenario corpus relies on it): each choice is among the controls in document order,
//! not in the order Chromium happened to number their nodes in this load. The report's
//! [`controls`](ExerciseReport::controls) say which controls were present and what each got:
//! the coverage. With [`stop_when_covered`](ExerciseOptions::stop_when_covered) the exercise
//! ends once every control has had every gesture (or was tried with it and could not take it).
//!
//! **Staying on the page** (decision): the page is exercised under a
//! [`NavigationGuard`](shepherd_browser::NavigationGuard): main-frame document requests are
//! failed with `Aborted`, so the current document is not unloaded and keeps running — link and
//! submit handlers still run, only their default navigation is dropped; popups are closed as
//! soon as they appear, file choosers are intercepted, dialogs accepted. A page running
//! Shepherd's runtime with `blockNavigations` on stops most navigations itself, before the
//! browser starts them, and traces each as an event. History traversals to another document
//! cannot be blocked this way: if the main frame commits a new document anyway, the exercise
//! stops and reports [`StopReason::LeftPage`].
//!
//! The log names targets by stable paths ([`shepherd_browser::Element::Path`]), so [`fire`]
//! replays it entry by entry on a fresh load.

mod controls;
mod gesture;
mod options;
mod replay;
mod report;
mod rng;
mod run;

pub use gesture::Gesture;
pub use options::{EventCounter, ExerciseOptions};
pub use replay::{fire, reset_pointer};
pub use report::{ControlCoverage, ExerciseReport, FiredEvent, StopReason};
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
