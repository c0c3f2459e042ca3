//! The explorer's model: R4's stateless model checking of recorded pages (Jensen et al.,
//! "Stateless Model Checking of Event-Driven Applications"), with EM-DPOR's FIFO queues
//! (Maiya et al.), and everything about an exploration that needs neither a browser nor a
//! proxy. The browser executor and the run over workers are `shepherd-explore`'s.
//!
//! The reorder phase:
//! - [`execution`]: one executed event sequence (events, enabled sets, platform order,
//!   conflicts, FIFO queues) and the relations on it — transitive dependence, the races that
//!   can be made adjacent, their reversal witnesses;
//! - [`dpor`]: Algorithms 1–4 (persistent sets from races and disabled events, whole sequences
//!   kept for approximate replay, the shared-prefix case, conflict-reversal bounding);
//! - [`program`], [`brute`], [`shapes`]: a small event-driven program model that plays the
//!   browser's part in tests and benchmarks, brute-force enumeration, and the papers' example
//!   shapes with DPOR and dependence-covering counts side by side.
//!
//! A recording and its executions:
//! - [`site`], [`gesture`], [`naming`]: a recording prepared for exploration (page, trace, the
//!   user's gestures, the recorded order) and how events are named across executions;
//! - [`observation`], [`steps`]: what an execution observed, turned into the reorder phase's
//!   [`Execution`];
//! - [`snapshot`], [`verdict`]: the end state, and the report phase comparing a sequence
//!   with its parent;
//! - [`outcome`]: the record of every execution and what the whole exploration produced;
//! - [`report`]: every race with its verdict and witness, as JSON (`docs/explore-json.md`)
//!   and HTML.

pub mod brute;
pub mod document;
pub mod dpor;
pub mod event;
pub mod execution;
pub mod gesture;
pub mod naming;
pub mod observation;
pub mod outcome;
pub mod program;
pub mod report;
pub mod shapes;
pub mod site;
pub mod snapshot;
pub mod steps;
pub mod triage;
pub mod verdict;

pub use dpor::{Explorer, Job, Origin, OriginKind, RunInfo};
pub use event::{Ev, EventTable};
pub use execution::{Execution, Fifo, Race, Relations, Witness};
