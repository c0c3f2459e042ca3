//! Logging runs no page code: the rendered runtime (record mode) runs in node
//! (`tests/logging.js`), and access calls shaped like instrumented code's touch Proxies,
//! `Symbol.toStringTag` getters and accessor `name`s exactly as often as the program's own
//! operation does; objects are still named (`Map`, `Uint8Array`, a data `@@toStringTag`).

use std::process::Command;

use shepherd_runtime::{Config, Mode, render};

#[test]
fn logging_calls_no_page_code() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runtime.js");
    std::fs::write(&path, render(&Config::new(Mode::Record, "s"))).unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/logging.js");
    let out = Command::new(shepherd_testkit::node())
        .arg(&script)
        .arg(&path)
        .output()
        .unwrap_or_else(|e| panic!("node is required (scripts/install-deps): {e}"));
    assert!(
        out.status.success(),
        "logging.js failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut failures = Vec::new();
    for c in v["checks"].as_array().unwrap() {
        if c["calls"] != c["own"] {
            failures.push(format!(
                "{}: {} page-code calls, the program makes {}",
                c["name"], c["calls"], c["own"]
            ));
        }
    }
    let strings: Vec<&str> = v["strings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s.as_str())
        .collect();
    for prefix in ["Map[", "Uint8Array[", "Tagged[", "Array[", "Function["] {
        if !strings.iter().any(|s| s.starts_with(prefix)) {
            failures.push(format!("no name starts with {prefix}: {strings:?}"));
        }
    }
    if !strings.iter().any(|s| s.ends_with(":named")) {
        failures.push(format!("the named function lost its name: {strings:?}"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
