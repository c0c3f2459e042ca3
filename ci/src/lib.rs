//! CI-native outputs of Shepherd's reports, for the tools a pipeline already has: SARIF 2.1.0
//! (code scanning), JUnit XML (test report viewers) and an exit-code gate (`--fail-on`).
//!
//! Both reports are first turned into [`finding::Finding`]s, one per race group (a race and
//! its repeats, as the text report lists them) or per sequence that ran a disabled event;
//! every output is then made from those, so SARIF, JUnit and the gate always agree.
//!
//! - [`races`]: findings of the race report (`shepherd races`, `shepherd_races::report`);
//! - [`explore`]: findings of the explore report (`shepherd explore`,
//!   `shepherd_explore_model::report::ExploreReport`);
//! - [`sarif`], [`junit`], [`gate`]: the outputs;
//! - [`class`]: race classes, the SARIF rules; [`position`]: source positions and the mapping
//!   of page URLs to repository paths.

pub mod class;
pub mod explore;
pub mod finding;
pub mod gate;
pub mod junit;
pub mod position;
pub mod races;
pub mod sarif;
