//! Running a node script of these tests over the rendered runtime.

// Test code: a panic here is a failed test, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use shepherd_runtime::{Config, Mode, render};

/// Renders the runtime (record mode, secret `s`) to a file and runs `tests/<script>` in node
/// with its path as the argument; returns the script's stdout. Panics when node is missing
/// (it is required) or the script fails.
pub fn run_with_runtime(script: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runtime.js");
    std::fs::write(&path, render(&Config::new(Mode::Record, "s"))).unwrap();
    let script_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(script);
    let out = Command::new(shepherd_testkit::node())
        .arg(&script_path)
        .arg(&path)
        .output()
        .unwrap_or_else(|e| panic!("node is required (scripts/install-deps): {e}"));
    assert!(
        out.status.success(),
        "{script} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}
