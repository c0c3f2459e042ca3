//! The model links neither the network stack nor the browser: what reads an explore report,
//! replays the papers' shapes or checks DPOR must not pull in the proxy, the DevTools client
//! or the live session (the reason this crate is apart from `shepherd-explore`).

use std::process::Command;

/// Crates the model's normal dependency tree must not contain.
const LIVE: [&str; 6] = [
    "hyper",
    "tokio-tungstenite",
    "shepherd-proxy",
    "shepherd-browser",
    "shepherd-session",
    "shepherd-explore",
];

#[test]
fn the_model_links_no_live_crate() {
    let out = Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "--locked",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}",
            "-p",
            "shepherd-explore-model",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap_or_else(|e| panic!("running cargo tree: {e}"));
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    let names: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(
        names.contains(&"shepherd-trace"),
        "unexpected tree:\n{tree}"
    );
    let linked: Vec<&&str> = LIVE.iter().filter(|c| names.contains(c)).collect();
    assert!(
        linked.is_empty(),
        "shepherd-explore-model links {linked:?}:\n{tree}"
    );
}
