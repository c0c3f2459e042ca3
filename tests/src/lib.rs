//! Shared helpers for the end-to-end tests: a loopback origin that serves fixture pages from
//! `tests/pages/` and collects uploaded traces.
