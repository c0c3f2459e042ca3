//! Our JSONL trace format (`docs/trace-format.md`): a streaming reader and a canonical writer.

mod read;
mod write;

pub use read::{JsonlLoader, read_jsonl};
pub use write::{to_jsonl_bytes, write_jsonl};
