//! The proxy's modules form a DAG: no two files use each other, directly or around a circle,
//! and the crate root only declares modules and re-exports them (code inside the crate names
//! the module that defines a thing, never the facade). A circle means two files share one
//! concern and should be split differently; this test keeps the request path readable as a
//! pipeline.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path (`source::live`) of every `.rs` file under `src`.
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    fn walk(dir: &Path, prefix: &[String], out: &mut BTreeMap<String, PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            panic!("cannot read {}", dir.display());
        };
        for e in entries.flatten() {
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                let mut p = prefix.to_vec();
                p.push(name);
                walk(&path, &p, out);
            } else if let Some(stem) = name.strip_suffix(".rs") {
                let mut p = prefix.to_vec();
                if stem != "mod" && stem != "lib" {
                    p.push(stem.to_string());
                }
                out.insert(p.join("::"), path);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, &[], &mut out);
    out
}

/// The paths a file refers to with `crate::…` or `super::…`, expanded through `use` groups,
/// as module paths relative to the crate root.
fn references(text: &str, module: &str) -> Vec<String> {
    // Drop comments and the test module: tests may reach anywhere.
    let code: String = text
        .lines()
        .take_while(|l| !l.trim_start().starts_with("#[cfg(test)]"))
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let self_path: Vec<&str> = if module.is_empty() {
        Vec::new()
    } else {
        module.split("::").collect()
    };
    // `super` of `a::b` is `a`, whether it lives in a/b.rs or a/b/mod.rs.
    let parent: Vec<&str> = self_path[..self_path.len().saturating_sub(1)].to_vec();
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let (base, skip): (Vec<&str>, usize) =
            if rest.starts_with("crate::") && (i == 0 || !is_ident(bytes[i - 1])) {
                (Vec::new(), "crate::".len())
            } else if rest.starts_with("super::") && (i == 0 || !is_ident(bytes[i - 1])) {
                (parent.clone(), "super::".len())
            } else {
                i += rest.chars().next().map_or(1, char::len_utf8);
                continue;
            };
        let after = &rest[skip..];
        for path in expand(after) {
            let mut full: Vec<String> = base.iter().map(|s| s.to_string()).collect();
            full.extend(path);
            out.push(full.join("::"));
        }
        i += skip;
    }
    out
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `a::b::C` or `a::{b, c::D}` at the start of `s`, as lists of segments.
fn expand(s: &str) -> Vec<Vec<String>> {
    let mut segs = Vec::new();
    let mut rest = s;
    if let Some(group) = rest.strip_prefix('{') {
        let end = matching_brace(group);
        return split_top(&group[..end])
            .into_iter()
            .flat_map(|item| expand(item.trim()))
            .collect();
    }
    loop {
        let ident: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if ident.is_empty() {
            break;
        }
        segs.push(ident.clone());
        rest = &rest[ident.len()..];
        if let Some(r) = rest.strip_prefix("::") {
            rest = r;
            if let Some(group) = rest.strip_prefix('{') {
                let end = matching_brace(group);
                let mut all = Vec::new();
                for item in split_top(&group[..end]) {
                    for tail in expand(item.trim()) {
                        let mut p = segs.clone();
                        p.extend(tail);
                        all.push(p);
                    }
                }
                return all;
            }
        } else {
            break;
        }
    }
    if segs.is_empty() {
        Vec::new()
    } else {
        vec![segs]
    }
}

fn matching_brace(s: &str) -> usize {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return i,
            '}' => depth -= 1,
            _ => {}
        }
    }
    s.len()
}

fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// The longest module path that is a prefix of `path`.
fn owner<'a>(path: &str, mods: &'a BTreeMap<String, PathBuf>) -> Option<&'a str> {
    let segs: Vec<&str> = path.split("::").collect();
    (0..=segs.len())
        .rev()
        .map(|n| segs[..n].join("::"))
        .find_map(|p| mods.get_key_value(&p).map(|(k, _)| k.as_str()))
}

#[test]
fn proxy_modules_have_no_import_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mods = modules(&src);
    assert!(mods.len() > 20, "found only {} modules", mods.len());
    let mut edges: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut via_root = Vec::new();
    for (module, path) in &mods {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        for r in references(&text, module) {
            let Some(target) = owner(&r, &mods) else {
                continue;
            };
            if target.is_empty() && !module.is_empty() {
                via_root.push(format!("{module} -> crate::{r}"));
            }
            if target != module.as_str() && !module.is_empty() {
                edges.entry(module.as_str()).or_default().insert(target);
            }
        }
    }
    assert!(
        via_root.is_empty(),
        "modules must name the module that defines a thing, not the crate root:\n{}",
        via_root.join("\n")
    );
    // Depth-first search for a back edge.
    fn visit<'a>(
        n: &'a str,
        edges: &BTreeMap<&'a str, BTreeSet<&'a str>>,
        state: &mut BTreeMap<&'a str, u8>,
        stack: &mut Vec<&'a str>,
    ) -> Option<Vec<&'a str>> {
        match state.get(n) {
            Some(2) => return None,
            Some(1) => {
                let from = stack.iter().position(|m| *m == n).unwrap_or(0);
                let mut cycle = stack[from..].to_vec();
                cycle.push(n);
                return Some(cycle);
            }
            _ => {}
        }
        state.insert(n, 1);
        stack.push(n);
        for m in edges.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, edges, state, stack) {
                return Some(c);
            }
        }
        stack.pop();
        state.insert(n, 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in mods.keys() {
        let mut stack = Vec::new();
        if let Some(cycle) = visit(n.as_str(), &edges, &mut state, &mut stack) {
            panic!("import cycle in proxy/src: {}", cycle.join(" -> "));
        }
    }
    // The pipeline's order shows in the graph: routing reaches the source only through the
    // pipeline or the WebSocket path, and sources know nothing of routing.
    for source_module in mods.keys().filter(|m| m.starts_with("source")) {
        for bad in [
            "route", "pipeline", "server", "reserved", "control", "state",
        ] {
            assert!(
                !edges
                    .get(source_module.as_str())
                    .is_some_and(|e| e.contains(bad)),
                "{source_module} uses {bad}: a source must not know the request path"
            );
        }
    }
}

#[test]
fn the_checker_sees_a_cycle() {
    // The graph code itself: a two-file circle and a grouped import are found.
    let text = "use crate::{a::X, b::{c::Y, Z}};\nfn f() { super::d::g(); }";
    let refs = references(text, "m::n");
    assert_eq!(refs, vec!["a::X", "b::c::Y", "b::Z", "m::d::g"]);
    let mut mods = BTreeMap::new();
    for m in ["a", "b", "b::c", "m", "m::d"] {
        mods.insert(m.to_string(), PathBuf::new());
    }
    assert_eq!(owner("b::c::Y", &mods), Some("b::c"));
    assert_eq!(owner("b::Z", &mods), Some("b"));
}
