//! The offline side does not link the live side. Analysing a recording or a trace needs no
//! network stack and no browser: the offline crates' normal dependencies (what they link, not
//! their dev- or build-dependencies) must not reach hyper, the DevTools client's WebSocket or
//! the crates that start live stacks, and the CLI modules of the offline commands must use no
//! live crate. Each check is also run once where it must fail, so a broken check shows.

use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The crates offline work is made of. Another one is added here, in one line.
const OFFLINE_CRATES: &[&str] = &[
    "shepherd-analysis",
    "shepherd-races",
    "shepherd-trace",
    "shepherd-recording",
    "shepherd-policies",
    "shepherd-explore-model",
    "shepherd-ci",
];

/// What no offline crate may link: the HTTP stack, the WebSocket client of the DevTools
/// protocol, and the crates that start live stacks.
const LIVE_CRATES: &[&str] = &[
    "hyper",
    "tokio-tungstenite",
    "shepherd-proxy",
    "shepherd-browser",
    "shepherd-session",
];

/// The CLI modules (`cli/src/commands/*.rs`) of the offline commands.
const OFFLINE_COMMANDS: &[&str] = &["races", "trace", "policy", "har", "check", "ci_outputs"];

/// Besides [`LIVE_CRATES`], the crates the offline commands' modules may not name: the
/// explorer, whose crate holds the browser executor.
const LIVE_ONLY_PATHS: &[&str] = &["shepherd_explore"];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| panic!("{} has no parent", env!("CARGO_MANIFEST_DIR")))
}

/// `cargo` as cargo runs the tests (`$CARGO`), in the workspace.
fn cargo(args: &[&str]) -> Vec<u8> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(&cargo)
        .args(args)
        .current_dir(workspace_root())
        .output()
        .unwrap_or_else(|e| panic!("running {cargo:?} {args:?}: {e}"));
    assert!(
        out.status.success(),
        "{cargo:?} {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Package name → names of the packages it links (its normal dependencies, transitively).
struct Links {
    name_of: HashMap<String, String>,
    id_of: HashMap<String, String>,
    normal_deps: HashMap<String, Vec<String>>,
}

impl Links {
    /// The workspace's resolved graph. Only the host platform's: offline, the packages other
    /// platforms need are not downloaded, and this build links the host's.
    fn of_workspace() -> Links {
        let version = String::from_utf8_lossy(&cargo(&["-vV"])).into_owned();
        let host = version
            .lines()
            .find_map(|l| l.strip_prefix("host: "))
            .unwrap_or_else(|| panic!("no host in `cargo -vV`:\n{version}"))
            .to_string();
        let meta: Value = serde_json::from_slice(&cargo(&[
            "metadata",
            "--format-version",
            "1",
            "--locked",
            "--offline",
            "--filter-platform",
            &host,
        ]))
        .unwrap_or_else(|e| panic!("cargo metadata is not JSON: {e}"));
        let mut links = Links {
            name_of: HashMap::new(),
            id_of: HashMap::new(),
            normal_deps: HashMap::new(),
        };
        for p in meta["packages"].as_array().into_iter().flatten() {
            let (id, name) = (str_of(&p["id"]), str_of(&p["name"]));
            links.name_of.insert(id.clone(), name.clone());
            links.id_of.insert(name, id);
        }
        for node in meta["resolve"]["nodes"].as_array().into_iter().flatten() {
            let deps = node["deps"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|d| {
                    // `kind` is null for a normal dependency, "dev" or "build" otherwise.
                    d["dep_kinds"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|k| k["kind"].is_null())
                })
                .map(|d| str_of(&d["pkg"]))
                .collect();
            links.normal_deps.insert(str_of(&node["id"]), deps);
        }
        links
    }

    /// The names of every package `name` links, itself excluded.
    fn closure(&self, name: &str) -> BTreeSet<String> {
        let Some(start) = self.id_of.get(name) else {
            panic!("no package {name} in the workspace's graph");
        };
        let mut seen = BTreeSet::new();
        let mut todo = vec![start.clone()];
        while let Some(id) = todo.pop() {
            for dep in self.normal_deps.get(&id).into_iter().flatten() {
                if seen.insert(dep.clone()) {
                    todo.push(dep.clone());
                }
            }
        }
        seen.iter()
            .filter_map(|id| self.name_of.get(id).cloned())
            .collect()
    }

    /// The live crates `name` links.
    fn live_links(&self, name: &str) -> Vec<String> {
        let closure = self.closure(name);
        LIVE_CRATES
            .iter()
            .filter(|c| closure.contains(**c))
            .map(|c| c.to_string())
            .collect()
    }
}

fn str_of(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

#[test]
fn offline_crates_link_no_network_stack_nor_browser() {
    let links = Links::of_workspace();
    let bad: Vec<String> = OFFLINE_CRATES
        .iter()
        .filter_map(|c| {
            let live = links.live_links(c);
            (!live.is_empty()).then(|| format!("{c} links {}", live.join(", ")))
        })
        .collect();
    assert!(
        bad.is_empty(),
        "offline crates link live ones:\n{}",
        bad.join("\n")
    );

    // The check sees links where they are.
    assert!(
        links.closure("shepherd-proxy").contains("hyper"),
        "shepherd-proxy is found to link hyper"
    );
    assert_eq!(
        links.live_links("shepherd-session"),
        [
            "hyper",
            "tokio-tungstenite",
            "shepherd-proxy",
            "shepherd-browser"
        ],
        "shepherd-session is found to link the live stack"
    );
    // Dev-dependencies are not links: the CLI's tests use the testkit (which links the
    // browser), and the races crate's dev-dependencies are not in its closure.
    assert!(!links.closure("shepherd-races").contains("proptest"));
}

/// The module of `cli/src` that `path` (after `crate::` or `super::`, in `from`) names, if
/// it is a file.
fn module_file(src: &Path, from: &Path, base: &str, path: &str) -> Option<PathBuf> {
    let first = path.split("::").next()?;
    let dir = if base == "super" {
        from.parent()?.to_path_buf()
    } else {
        src.to_path_buf()
    };
    let file = dir.join(format!("{first}.rs"));
    if file.is_file() {
        return Some(file);
    }
    // `crate::commands::x`: a module in a folder.
    let second = path.split("::").nth(1)?;
    let nested = dir.join(first).join(format!("{second}.rs"));
    nested.is_file().then_some(nested)
}

/// The code of a module file: comments and its test module left out (tests may reach
/// anywhere).
fn code_of(file: &Path) -> String {
    let text = std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
    text.lines()
        .take_while(|l| !l.trim_start().starts_with("#[cfg(test)]"))
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `code` names the crate `krate` (a Rust path, `shepherd_proxy`) as a whole word.
fn names(code: &str, krate: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    code.match_indices(krate).any(|(i, _)| {
        let before = code[..i].chars().next_back();
        let after = code[i + krate.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// The live crates the CLI module `command` names, in itself or in the modules of the crate
/// it uses (`crate::…`, `super::…`), with the file that names each.
fn live_uses(command: &str) -> Vec<String> {
    let src = workspace_root().join("cli/src");
    let live: Vec<String> = LIVE_CRATES
        .iter()
        .map(|c| c.replace('-', "_"))
        .chain(LIVE_ONLY_PATHS.iter().map(|c| c.to_string()))
        .collect();
    let mut found = Vec::new();
    let mut seen = BTreeSet::new();
    let mut todo = vec![src.join("commands").join(format!("{command}.rs"))];
    while let Some(file) = todo.pop() {
        if !seen.insert(file.clone()) {
            continue;
        }
        let code = code_of(&file);
        let shown = file
            .strip_prefix(workspace_root())
            .unwrap_or(&file)
            .to_path_buf();
        for krate in live.iter().filter(|k| names(&code, k)) {
            found.push(format!("{} uses {krate}", shown.display()));
        }
        for base in ["crate", "super"] {
            let prefix = format!("{base}::");
            for (i, _) in code.match_indices(&prefix) {
                let path: String = code[i + prefix.len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                if let Some(m) = module_file(&src, &file, base, &path) {
                    todo.push(m);
                }
            }
        }
    }
    found
}

#[test]
fn offline_commands_use_no_live_crate() {
    let bad: Vec<String> = OFFLINE_COMMANDS.iter().flat_map(|c| live_uses(c)).collect();
    assert!(
        bad.is_empty(),
        "offline commands reach live crates:\n{}",
        bad.join("\n")
    );
    // The check sees uses where they are: `shepherd record` starts a live stack.
    let record = live_uses("proxy");
    assert!(
        record.iter().any(|u| u.ends_with("uses shepherd_session")),
        "{record:?}"
    );
    // And follows the modules a command uses: `demo` reaches the proxy through `ca`.
    assert!(
        live_uses("demo")
            .iter()
            .any(|u| u.contains("ca.rs uses shepherd_proxy")),
        "{:?}",
        live_uses("demo")
    );
    assert!(names("use shepherd_proxy::x;", "shepherd_proxy"));
    assert!(!names("use shepherd_proxy_model::x;", "shepherd_proxy"));
}
