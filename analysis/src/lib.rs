//! Offline race analysis: what `shepherd races` and the other offline commands do with a
//! recording or a trace file, without the proxy, the browser or a live stack.
//!
//! - [`trace_file`]: the trace of a recording, a JSONL file or an `ER_actionlog` (sniffed).
//! - [`explored`]: the verdicts of an explore report, merged into race reports.
//! - [`memory`]: the allocator settings of a one-shot analysis.
//! - [`page_texts`]: the script and document texts a recording holds, so reports quote the
//!   racing lines.

pub mod explored;
pub mod memory;
pub mod page_texts;
pub mod trace_file;
