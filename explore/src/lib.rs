//! The explorer's browser side: R4's reorder phase run on a real page. The model (DPOR, event
//! names, end states, verdicts, the report) is `shepherd-explore-model`'s; this crate executes
//! event sequences in Chromium behind a replay proxy and drives the whole exploration.
//!
//! - [`runner`]: a worker (replay proxy + Chromium) executing one event sequence step by step;
//! - [`capture`]: the browser's part of an end state (DOM, screenshot);
//! - [`grid`]: Selenium Grid 4 sessions as workers' browsers (created over WebDriver, driven
//!   over the DevTools endpoint the Grid proxies, never leaked);
//! - [`exploration`]: the whole run — initial execution, jobs over workers, verdicts, state
//!   kept beside the recording.

pub mod capture;
pub mod exploration;
pub mod grid;
pub mod runner;
