//! House rules over the whole workspace's sources.
//!
//! No crate's modules import each other in a circle: two files that need each other share one
//! concern and should be split differently. Every member of the root `Cargo.toml` is read (fuzz
//! crates and `proxy/bench-baseline` are not members), and every circle of every crate is
//! reported at once, each with the paths that make it.
//!
//! This lives in `testkit` rather than `tests/` (`shepherd-e2e`) because it only parses sources:
//! `cargo test -p shepherd-testkit` runs it in a second, without building the end-to-end crate
//! or launching Chromium.

use std::path::{Path, PathBuf};

use shepherd_testkit::module_graph::ModuleGraph;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| panic!("testkit has no parent folder"))
}

/// The member folders listed in the root `Cargo.toml`.
fn members(root: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(root.join("Cargo.toml"))
        .unwrap_or_else(|e| panic!("reading the root Cargo.toml: {e}"));
    let manifest: toml::Table =
        toml::from_str(&text).unwrap_or_else(|e| panic!("parsing the root Cargo.toml: {e}"));
    let Some(list) = manifest
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
    else {
        panic!("the root Cargo.toml has no [workspace] members");
    };
    list.iter()
        .map(|m| {
            m.as_str()
                .unwrap_or_else(|| panic!("member {m:?} is not a string"))
                .to_string()
        })
        .collect()
}

#[test]
fn no_crate_imports_in_a_circle() {
    let root = workspace_root();
    let members = members(&root);
    assert!(members.len() >= 10, "found only {members:?}");
    let mut failures = Vec::new();
    let mut modules = 0;
    for member in &members {
        assert!(
            !member.contains('*'),
            "member {member}: globs in members are not read by this test"
        );
        let graphs = ModuleGraph::of_crate(&root.join(member))
            .unwrap_or_else(|e| panic!("crate {member}: {e}"));
        for (target, graph) in graphs {
            modules += graph.modules().count();
            for circle in graph.circles() {
                failures.push(format!("{member} ({target}): {circle}"));
            }
        }
    }
    assert!(modules > 100, "read only {modules} modules");
    assert!(
        failures.is_empty(),
        "modules that import each other in a circle (split them by concern):\n{}",
        failures.join("")
    );
}
