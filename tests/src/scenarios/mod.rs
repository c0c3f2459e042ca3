//! The race scenario corpus (`tests/scenarios/`) and its harness: manifests, the HTTPS test
//! origin, the recorded run of a scenario, the lanes and the acceptance matrix.

pub mod detect;
pub mod drive;
pub mod lanes;
pub mod manifest;
pub mod matrix;
pub mod origin;
pub mod product;
