//! The *Event* trace model: event actions, happens-before arcs and the operations each action
//! performed (reads and writes of shared locations, scopes, exceptions).
//!
//! This crate owns the in-memory model and the file formats (`docs/trace-format.md`): our JSONL
//! trace and EventRacer's binary `ER_actionlog`. It knows nothing about where a trace came from
//! (browser, file, generator) nor about analysis; `shepherd-races` consumes it.

pub mod builder;
pub mod er;
pub mod error;
mod hash;
pub mod jsonl;
pub mod kind;
pub mod model;
pub mod open;
pub mod stats;

pub use builder::{BuildError, TraceBuilder};
pub use error::ReadError;
/// The seeded hasher of the string interner, for other crates' maps keyed by trace data.
pub use hash::{FastHasher, FastState};
pub use jsonl::{JsonlLoader, read_jsonl, read_jsonl_parts, to_jsonl_bytes, write_jsonl};
pub use kind::ActionKind;
pub use model::*;
pub use open::{Format, Loaded, load_bytes, load_path, load_path_with_progress, load_reader};
pub use stats::{ActionView, OpView, TraceStats};
