//! Logging runs no page code: the rendered runtime (record mode) runs in node
//! (`tests/logging.js`), and access calls shaped like instrumented code's touch Proxies,
//! `Symbol.toStringTag` getters and accessor `name`s exactly as often as the program's own
//! operation does; objects are still named (`Map`, `Uint8Array`, a data `@@toStringTag`).

mod common;

#[test]
fn logging_calls_no_page_code() {
    let stdout = common::run_with_runtime("logging.js");
    let v: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
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
