//! The explorer: R4's stateless model checking of recorded pages (Jensen et al., "Stateless
//! Model Checking of Event-Driven Applications"), with EM-DPOR's FIFO queues (Maiya et al.).
//!
//! The algorithmic core needs no browser:
//! - [`execution`]: one executed event sequence (events, enabled sets, platform order,
//!   conflicts, FIFO queues) and the relations on it — transitive dependence, the races that
//!   can be made adjacent, their reversal witnesses;
//! - [`dpor`]: Algorithms 1–4 (persistent sets from races and disabled events, whole sequences
//!   kept for approximate replay, the shared-prefix case, conflict-reversal bounding);
//! - [`program`], [`brute`], [`shapes`]: a small event-driven program model that plays the
//!   browser's part in tests and benchmarks, brute-force enumeration, and the papers' example
//!   shapes with DPOR and dependence-covering counts side by side.

pub mod brute;
pub mod dpor;
pub mod event;
pub mod execution;
pub mod program;
pub mod shapes;

pub use dpor::{Explorer, Job, Origin, OriginKind, RunInfo};
pub use event::{Ev, EventTable};
pub use execution::{Execution, Fifo, Race, Relations, Witness};
