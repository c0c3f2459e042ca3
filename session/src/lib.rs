//! A live Shepherd run, assembled from the crates that each own one concern: the proxy started
//! for one [`Mode`] with the instrumenter plugged into its rewrite hook ([`rewriter`]) and the
//! runtime rendered for that mode ([`stack`]), and headless Chromium driven through it
//! ([`drive`]). Reading back what a run left in its recording is offline work:
//! `shepherd-analysis` does it without linking this crate.
//!
//! The command-line front end, the end-to-end tests and the explorer all start Shepherd through
//! this crate, so they run the same code.

pub mod drive;
pub mod memory_traces;
pub mod rewriter;
pub mod stack;

pub use memory_traces::MemoryTraces;
pub use shepherd_runtime::Mode;
pub use stack::{Run, Stack, StackOptions};
