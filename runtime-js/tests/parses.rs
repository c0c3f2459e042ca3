//! The rendered runtime is one script per mode (with and without a policy): a syntax error in
//! any of its files, or two files declaring the same name, leaves pages with no controller at
//! all, so every rendering is checked by node's parser.

use std::process::Command;

use shepherd_runtime::{Config, Mode, RuntimePolicy, render};

#[test]
fn every_rendering_parses() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for mode in [Mode::Record, Mode::Repair, Mode::Replay] {
        for with_policy in [false, true] {
            let mut config = Config::new(mode, "s");
            if with_policy {
                config.policy = Some(RuntimePolicy {
                    json: serde_json::json!({ "policies": [], "userTypes": ["click"] }),
                    js: vec!["typeof f === 'function'".to_string()],
                });
            }
            let path = dir.path().join(format!("{mode}-{with_policy}.js"));
            std::fs::write(&path, render(&config)).unwrap();
            let out = Command::new(shepherd_testkit::node())
                .arg("--check")
                .arg(&path)
                .output()
                .unwrap_or_else(|e| panic!("node is required (scripts/install-deps): {e}"));
            if !out.status.success() {
                failures.push(format!(
                    "{mode} (policy: {with_policy}): {}",
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
