//! The proxy's modules form a DAG: no two files use each other, directly or around a circle,
//! and the crate root only declares modules and re-exports them (code inside the crate names
//! the module that defines a thing, never the facade). A circle means two files share one
//! concern and should be split differently; this test keeps the request path readable as a
//! pipeline. The graph is read by `shepherd_testkit::module_graph`, which also checks every
//! other crate (`testkit/tests/house.rs`); the rules here are the proxy's own.

use std::path::Path;

use shepherd_testkit::module_graph::{ModuleGraph, display_name};

#[test]
fn proxy_modules_have_no_import_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs");
    let graph = ModuleGraph::read(&root).unwrap_or_else(|e| panic!("{e}"));
    let modules: Vec<&str> = graph.modules().map(|(m, _)| m).collect();
    assert!(modules.len() > 20, "found only {} modules", modules.len());
    let via_root: Vec<String> = modules
        .iter()
        .filter(|m| !m.is_empty())
        .flat_map(|m| graph.paths(m, "").map(move |p| format!("{m} -> {p}")))
        .collect();
    assert!(
        via_root.is_empty(),
        "modules must name the module that defines a thing, not the crate root:\n{}",
        via_root.join("\n")
    );
    let circles: Vec<String> = graph.circles().iter().map(|c| c.to_string()).collect();
    assert!(
        circles.is_empty(),
        "import circles in proxy/src:\n{}",
        circles.join("")
    );
    // The pipeline's order shows in the graph: routing reaches the source only through the
    // pipeline or the WebSocket path, and sources know nothing of routing.
    for source_module in modules.iter().filter(|m| m.starts_with("source")) {
        for bad in [
            "route", "pipeline", "server", "reserved", "control", "state",
        ] {
            assert!(
                !graph.uses(source_module).any(|u| u == bad),
                "{} uses {bad}: a source must not know the request path",
                display_name(source_module)
            );
        }
    }
}
