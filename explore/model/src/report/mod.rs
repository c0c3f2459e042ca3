//! What an exploration reports: every uncovered race of the initial execution (as `shepherd
//! races` lists them) with a verdict — harmful (with a witness), harmless (and why) or
//! not reordered (and why) — plus reversals found deeper, as the versioned JSON document of
//! `docs/explore-json.md` and a self-contained HTML page.
//!
//! - [`entries`]: which race gets which verdict;
//! - [`json`]: the document's types (writer and readers share them), built and read back;
//! - [`html`]: the page.

pub mod entries;
pub mod html;
pub mod json;

pub use entries::{Entry, RaceVerdict, entries};
pub use html::html;
pub use json::{ExploreReport, JSON_VERSION, ReadError, build};
