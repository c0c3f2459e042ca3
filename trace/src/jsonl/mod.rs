//! Our JSONL trace format (`docs/trace-format.md`): a streaming reader and a canonical writer.

mod late;
mod parallel;
mod read;
mod write;

pub use parallel::read_jsonl_parts;
pub(crate) use parallel::{Source, even_cuts, parts_for, read_parts};
pub use read::{JsonlLoader, read_jsonl};
pub use write::{to_jsonl_bytes, write_jsonl};
