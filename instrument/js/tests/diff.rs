//! Differential tests: every program under `tests/diff/cases/` runs plain and instrumented in
//! node (`tests/diff/harness.js`, fresh `vm` contexts, `runtime-js/access.js` over a collecting
//! stub of the controller's `T`); console output and uncaught errors must be identical, and the
//! access log must contain every `// expect: <entry>` line of the case and no
//! `// expect-not: <entry>` line, and for every `// expect-distinct: <entry> <n>` line at least
//! `n` different entries matching `<entry>` (e.g. `r Scope[*].i 3`: three scope instances).
//!
//! Case headers: `// kind: module|handler|jsurl`, `// options: ascii_only inline_script`,
//! `// output-not-contains: <text>`, `// output-contains: <text>`, `// instrument: error`
//! (the pass must refuse the program; it is then only run plain).
//! `SHEPHERD_ACCESS_JS=<path>` runs the cases against another copy of access.js.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use shepherd_instrument_js::{Kind, Options, instrument};

struct Case {
    name: String,
    src: String,
    kind: Kind,
    opts: Vec<String>,
    expect: Vec<String>,
    expect_not: Vec<String>,
    expect_distinct: Vec<(String, usize)>,
    out_not: Vec<String>,
    out_has: Vec<String>,
    must_fail: bool,
}

fn header(src: &str, key: &str) -> Vec<String> {
    let tag = format!("// {key}:");
    src.lines()
        .filter_map(|l| l.trim().strip_prefix(&tag).map(|v| v.trim().to_string()))
        .collect()
}

fn load_cases() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/diff/cases");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "js"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let src = std::fs::read_to_string(&p).unwrap();
            let kind = match header(&src, "kind").first().map(String::as_str) {
                Some("module") => Kind::Module,
                Some("handler") => Kind::Handler,
                Some("jsurl") => Kind::JsUrl,
                _ => Kind::Script,
            };
            Case {
                name: p.file_stem().unwrap().to_string_lossy().into_owned(),
                kind,
                opts: header(&src, "options")
                    .join(" ")
                    .split_whitespace()
                    .map(String::from)
                    .collect(),
                expect: header(&src, "expect"),
                expect_not: header(&src, "expect-not"),
                expect_distinct: header(&src, "expect-distinct")
                    .iter()
                    .map(|l| {
                        let (pat, n) = l.rsplit_once(' ').unwrap();
                        (pat.to_string(), n.parse().unwrap())
                    })
                    .collect(),
                out_not: header(&src, "output-not-contains"),
                out_has: header(&src, "output-contains"),
                must_fail: header(&src, "instrument").iter().any(|v| v == "error"),
                src,
            }
        })
        .collect()
}

/// Handler bodies run as the body of a function called with an event and a receiver.
fn wrap(kind: Kind, code: &str) -> String {
    match kind {
        Kind::Handler => format!(
            "var __recv = {{ tag: 'recv' }};\nvar __form = {{ q: {{ value: '' }}, submit() {{ console.log('submit on form', this === __form); }} }};\nwith (__form) {{ console.log('handler returned', (function (event) {{\n{code}\n}}).call(__recv, {{ type: 'click' }})); }}\nconsole.log('form field', __form.q.value);"
        ),
        Kind::JsUrl => format!(
            "console.log('completion', (0, eval)({}));",
            serde_json::to_string(code).unwrap()
        ),
        _ => code.to_string(),
    }
}

/// Runs the harness over `manifest` until every piece of dynamic code the instrumented runs
/// asked for (eval, `new Function`…) has been through the pass, so the last run executes
/// instrumented dynamic code as the proxy would serve it. Returns that run's results.
fn run_harness(node: &Path, manifest: &mut [serde_json::Value]) -> Vec<serde_json::Value> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let mpath = dir.path().join("manifest.json");
    for round in 0.. {
        std::fs::write(&mpath, serde_json::to_vec(&manifest).unwrap()).unwrap();
        let out = Command::new(node)
            .arg("--experimental-vm-modules")
            .arg("--no-warnings")
            .arg(root.join("tests/diff/harness.js"))
            .arg(
                std::env::var_os("SHEPHERD_ACCESS_JS")
                    .map_or_else(|| root.join("../../runtime-js/access.js"), PathBuf::from),
            )
            .arg(&mpath)
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", node.display()));
        assert!(
            out.status.success(),
            "harness failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let results: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
        let mut asked = false;
        for (m, r) in manifest.iter_mut().zip(&results) {
            for req in r["instr"]["missing"].as_array().into_iter().flatten() {
                let (Some(kind), Some(src)) = (req[0].as_str(), req[1].as_str()) else {
                    continue;
                };
                let k = match kind {
                    "module" => Kind::Module,
                    "handler" => Kind::Handler,
                    _ => Kind::Script,
                };
                let code = instrument(src, &Options::new(k, "dynamic.js"))
                    .ok()
                    .map(|o| o.code);
                m["dynamic"][format!("{kind}:{src}")] = serde_json::json!(code);
                asked = true;
            }
        }
        if !asked {
            return results;
        }
        assert!(round < 4, "dynamic code keeps producing new dynamic code");
    }
    unreachable!()
}

#[test]
fn differential_against_node() {
    let node = shepherd_testkit::node();
    let cases = load_cases();
    assert!(
        cases.len() >= 54,
        "expected a case per pitfall, found {}",
        cases.len()
    );
    let mut manifest = Vec::new();
    let mut failures = Vec::new();
    for c in &cases {
        let mut opts = Options::new(c.kind, format!("{}.js", c.name));
        opts.ascii_only = c.opts.iter().any(|o| o == "ascii_only");
        opts.inline_script = c.opts.iter().any(|o| o == "inline_script");
        opts.source_map = true;
        let parts: Vec<&str> = c.src.split("//--- next script ---").collect();
        let mut instrumented = Vec::new();
        let mut bad = false;
        for part in &parts {
            match (instrument(part, &opts), c.must_fail) {
                (Ok(o), false) => instrumented.push(o.code),
                (Err(_), true) => instrumented.push(part.to_string()),
                (Ok(_), true) => {
                    failures.push(format!("{}: instrumentation should have failed", c.name));
                    bad = true;
                }
                (Err(e), false) => {
                    failures.push(format!("{}: instrumentation failed: {e}", c.name));
                    bad = true;
                }
            }
        }
        if bad {
            continue;
        }
        let all = instrumented.join("\n");
        for s in &c.out_not {
            if all.contains(s.as_str()) {
                failures.push(format!("{}: output contains {s:?}", c.name));
            }
        }
        for s in &c.out_has {
            if !all.contains(s.as_str()) {
                failures.push(format!("{}: output lacks {s:?}", c.name));
            }
        }
        if c.opts.iter().any(|o| o == "ascii_only") && !all.is_ascii() {
            failures.push(format!("{}: output is not ASCII", c.name));
        }
        manifest.push(serde_json::json!({
            "name": c.name,
            "module": c.kind == Kind::Module,
            "plain": parts.iter().map(|p| wrap(c.kind, p)).collect::<Vec<_>>(),
            "instrumented": instrumented.iter().map(|p| wrap(c.kind, p)).collect::<Vec<_>>(),
            "dynamic": {},
        }));
    }
    let results = run_harness(&node, &mut manifest);
    for r in &results {
        let name = r["name"].as_str().unwrap();
        let c = cases.iter().find(|c| c.name == name).unwrap();
        if r["plain"]["out"] != r["instr"]["out"] {
            failures.push(format!(
                "{name}: output differs\n  plain: {}\n  instr: {}",
                r["plain"]["out"], r["instr"]["out"]
            ));
        }
        if r["plain"]["error"] != r["instr"]["error"] {
            failures.push(format!(
                "{name}: error differs\n  plain: {}\n  instr: {}",
                r["plain"]["error"], r["instr"]["error"]
            ));
        }
        let log: Vec<&str> = r["instr"]["log"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        if std::env::var("DIFF_DEBUG").is_ok_and(|v| v == name) {
            eprintln!("{name}: out {}\nlog {log:#?}", r["instr"]["out"]);
        }
        for e in &c.expect {
            if !log.iter().any(|l| glob(e, l)) {
                failures.push(format!("{name}: log lacks {e:?}; log: {log:?}"));
            }
        }
        for (e, n) in &c.expect_distinct {
            let mut hits: Vec<&str> = log.iter().copied().filter(|l| glob(e, l)).collect();
            hits.sort_unstable();
            hits.dedup();
            if hits.len() < *n {
                failures.push(format!(
                    "{name}: {} distinct {e:?}, want {n}: {hits:?}",
                    hits.len()
                ));
            }
        }
        for e in &c.expect_not {
            if log.iter().any(|l| glob(e, l)) {
                failures.push(format!("{name}: log has unexpected {e:?}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `*` matches any run of characters; everything else literally.
fn glob(pat: &str, s: &str) -> bool {
    let parts: Vec<&str> = pat.split('*').collect();
    if parts.len() == 1 {
        return pat == s;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !s.starts_with(first) || !s.ends_with(last) || s.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &s[first.len()..s.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}
