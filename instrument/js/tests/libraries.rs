//! Real libraries (Underscore, Backbone, Knockout, React from `todomvc@0.1.1`) run plain and
//! instrumented in node with the same workloads (`tests/libs/*.js`); outputs must match and the
//! instrumented run must have logged accesses. The package is fetched with `npm pack` into the
//! target directory on first use (`shepherd_testkit::todomvc`); node and npm are required.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use shepherd_instrument_js::{Kind, Options, instrument};

fn run(name: &str, files: &[PathBuf]) -> serde_json::Value {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut plain = Vec::new();
    let mut instrumented = Vec::new();
    for p in files {
        let src = std::fs::read_to_string(p).unwrap();
        let out = instrument(&src, &Options::new(Kind::Script, p.display().to_string())).unwrap();
        plain.push(src);
        instrumented.push(out.code);
    }
    let manifest = serde_json::json!([{
        "name": name, "module": false, "plain": plain, "instrumented": instrumented,
    }]);
    let dir = tempfile::tempdir().unwrap();
    let mpath = dir.path().join("manifest.json");
    std::fs::write(&mpath, manifest.to_string()).unwrap();
    let out = Command::new(shepherd_testkit::node())
        .arg("--experimental-vm-modules")
        .arg("--no-warnings")
        .arg(root.join("tests/diff/harness.js"))
        .arg(std::env::var_os("SHEPHERD_ACCESS_JS").map_or_else(
            || root.join("../../runtime-js/access.js"),
            std::path::PathBuf::from,
        ))
        .arg(&mpath)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = r[0].clone();
    assert_eq!(
        r["plain"]["out"], r["instr"]["out"],
        "{name}: output differs"
    );
    assert_eq!(
        r["plain"]["error"], r["instr"]["error"],
        "{name}: error differs"
    );
    let log = r["instr"]["log"].as_array().unwrap();
    assert!(
        log.len() > 1000,
        "{name}: too few accesses logged: {}",
        log.len()
    );
    r
}

#[test]
fn real_libraries_behave_the_same() {
    let pkg = shepherd_testkit::todomvc(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let libs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/libs");
    let ex = pkg.join("examples");
    let r = run(
        "underscore+backbone",
        &[
            ex.join("backbone/bower_components/underscore/underscore.js"),
            ex.join("backbone/bower_components/backbone/backbone.js"),
            libs.join("workload.js"),
        ],
    );
    assert!(
        r["plain"]["out"].to_string().contains("add:a"),
        "workload did not run"
    );
    let log = r["instr"]["log"].as_array().unwrap();
    assert!(log.iter().any(|l| l == "w Global._"));
    assert!(
        log.iter()
            .any(|l| l.as_str().is_some_and(|s| s.starts_with("w Scope[")))
    );

    let r = run(
        "knockout",
        &[
            ex.join("knockoutjs/bower_components/component-knockout-passy/knockout.js"),
            libs.join("knockout_workload.js"),
        ],
    );
    assert!(
        r["plain"]["out"].to_string().contains("x y"),
        "knockout workload did not run"
    );

    let r = run(
        "react",
        &[
            libs.join("window_shim.js"),
            ex.join("react/bower_components/react/react-with-addons.js"),
            libs.join("react_workload.js"),
        ],
    );
    assert!(
        r["plain"]["out"].to_string().contains("<b>42</b>"),
        "react workload did not run"
    );
}
