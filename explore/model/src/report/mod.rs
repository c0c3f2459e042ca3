//! What an exploration reports: every uncovered race of the recording (as `shepherd races`
//! lists it) with an answer — harmful (with the rule, the window that makes room for the bad
//! order, and a witness), harmless (and the rule that cleared it) or not explored (and why) —
//! by location, plus reversals found deeper, as the versioned JSON document of
//! `docs/explore-json.md`, a self-contained HTML page and a text summary.
//!
//! - [`entries`]: which race gets which answer;
//! - [`json`]: the document's types (writer and readers share them), built and read back;
//! - [`html`]: the page, drawn from the document;
//! - [`text`]: the terminal's summary, harmful first.

pub mod entries;
pub mod html;
pub mod json;
pub mod text;

pub use entries::{Entry, RaceVerdict, entries};
pub use html::html;
pub use json::{ExploreReport, JSON_VERSION, ReadError, build};
