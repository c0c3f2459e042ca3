//! Offline race analysis: what `shepherd races` and the other offline commands do with a
//! recording or a trace file, without the proxy, the browser or a live stack.
//!
//! - [`pipeline`]: the one pipeline of `shepherd races` (analysis, the shipped repair
//!   policies' marks worked out on a second thread, text / JSON / HTML reports), which the
//!   CLI, `shepherd demo` and the pipeline benchmark run.
//! - [`covers`]: `shepherd policy covers`, which races given policies order.
//! - [`trace_file`]: the trace of a recording, a JSONL file or an `ER_actionlog` (sniffed).
//! - [`page_texts`]: the script and document texts a recording holds, so reports quote the
//!   racing lines.
//! - [`explored`]: the verdicts of an explore report, merged into race reports.
//! - [`memory`]: the allocator settings of a one-shot analysis.

pub mod covers;
pub mod explored;
mod marks;
pub mod memory;
pub mod page_texts;
pub mod pipeline;
pub mod trace_file;
