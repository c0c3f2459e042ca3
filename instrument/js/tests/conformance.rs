//! Differential conformance run over the npm package `test262-parser-tests` (fetched with
//! `npm pack` into the target directory on first use, never committed): every program of its
//! `fail/` and `early/` directories must be refused by the pass (the browser rejects it, so it
//! must reach the browser unchanged), every program of `pass/` and `pass-explicit/` that the
//! pass instruments must still compile in V8, and the two spellings of each `pass` program
//! (`pass-explicit` adds grouping parentheses) must be treated alike: both instrumented with
//! the same access calls, or both refused. V8 (node, one process for the whole corpus,
//! `tests/conformance/check.js`) compiles each plain and instrumented program without running
//! it. `CONFORMANCE_DEBUG=1` prints every case that counts against a figure.
//!
//! No package on the npm registry ships the language tests of a current test262 (`test262`
//! is not published there; `test262-parser-tests` stops at 0.0.5), so the classes of programs
//! a newer suite adds that V8 rejects and swc accepts are fixtures of their own
//! (`tests/conformance/newer/`): each file's name states V8's verdict (`reject-…`,
//! `accept-…`), node checks that verdict, and the pass must refuse exactly the rejected ones.

// Test code: a panic here is a failed test, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use shepherd_instrument_js::{Error, Kind, Options, instrument};

const PACKAGE: &str = "test262-parser-tests@0.0.5";
const DIRS: [&str; 4] = ["pass", "pass-explicit", "fail", "early"];

/// The unpacked package (`…/package`), fetched on first use (shepherd-testkit panics with
/// the reason when it cannot be had: the test needs npm and the registry, and never skips).
fn package_root() -> PathBuf {
    shepherd_testkit::npm_package(PACKAGE, Path::new(env!("CARGO_TARGET_TMPDIR")))
}

/// Programs V8 rejects that the pass still instruments, with why; V8 rejects their output
/// as well (checked), so the page behaves the same, only the error's position differs.
const KNOWN: &[(&str, &str)] = &[
    (
        "fail/66e383bfd18e66ab.js",
        "regular expression syntax (u flag) is not validated",
    ),
    (
        "fail/78c215fabdf13bae.js",
        "regular expression syntax (u flag) is not validated",
    ),
    (
        "fail/bf49ec8d96884562.js",
        "regular expression syntax (u flag) is not validated",
    ),
    (
        "fail/e4a43066905a597b.js",
        "regular expression syntax (u flag) is not validated",
    ),
    (
        "early/4de83a7417cd30dd.js",
        "regular expression syntax (u flag) is not validated",
    ),
    (
        "fail/c060a3014ad24dfd.js",
        "swc's identifier tables (U+2B81E) are newer than this V8's",
    ),
];

struct Case {
    dir: &'static str,
    file: String,
    module: bool,
    src: String,
    out: Result<String, Error>,
}

/// How many times each runtime entry point is called in `code` (`__shepherd.g(` …).
fn access_calls(code: &str) -> BTreeMap<&str, usize> {
    let mut calls = BTreeMap::new();
    let needle = "__shepherd.";
    let mut rest = code;
    while let Some(i) = rest.find(needle) {
        rest = &rest[i + needle.len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '$'))
            .unwrap_or(rest.len());
        if rest[end..].starts_with('(') {
            *calls.entry(&rest[..end]).or_insert(0) += 1;
        }
    }
    calls
}

#[test]
fn parser_corpus_refusals_and_round_trips() {
    let root = package_root();
    let mut cases = Vec::new();
    for dir in DIRS {
        let mut files: Vec<String> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|f| f.ends_with(".js"))
            .collect();
        files.sort();
        for file in files {
            // Not UTF-8 (a few `fail` cases hold lone surrogates): a browser decodes such
            // bytes to U+FFFD before parsing, the proxy serves them unchanged.
            let Ok(src) = std::fs::read_to_string(root.join(dir).join(&file)) else {
                continue;
            };
            let module = file.ends_with(".module.js");
            let kind = if module { Kind::Module } else { Kind::Script };
            let out = instrument(&src, &Options::new(kind, file.clone())).map(|o| o.code);
            cases.push(Case {
                dir,
                file,
                module,
                src,
                out,
            });
        }
    }
    assert!(
        cases.len() > 5000,
        "corpus incomplete: {} files",
        cases.len()
    );

    let manifest: Vec<serde_json::Value> = cases
        .iter()
        .map(|c| {
            serde_json::json!({
                "name": format!("{}/{}", c.dir, c.file),
                "module": c.module,
                "plain": c.src,
                "instrumented": c.out.as_ref().ok(),
            })
        })
        .collect();
    let verdicts = v8_verdicts(&manifest);
    assert_eq!(verdicts.len(), cases.len());

    let debug = std::env::var_os("CONFORMANCE_DEBUG").is_some();
    let mut failures = Vec::new();
    // Per directory: files, refused, V8 rejects the original, instrumented although V8
    // rejects the original, V8 rejects the output, strict verdicts that differ.
    let mut figures: BTreeMap<&str, [usize; 6]> = BTreeMap::new();
    for (c, v) in cases.iter().zip(&verdicts) {
        let name = format!("{}/{}", c.dir, c.file);
        let plain_ok = v["plain"].is_null();
        let instr_err = v["instr"].as_str();
        let invalid_kept = c.out.is_ok() && !plain_ok;
        let strict_differs =
            c.out.is_ok() && v["strictPlain"].is_null() != v["strictInstr"].is_null();
        let f = figures.entry(c.dir).or_default();
        f[0] += 1;
        f[1] += usize::from(c.out.is_err());
        f[2] += usize::from(!plain_ok);
        f[3] += usize::from(invalid_kept);
        f[4] += usize::from(instr_err.is_some());
        f[5] += usize::from(strict_differs);
        if invalid_kept {
            // V8 rejects the program: it must reach the browser unchanged. The known
            // exceptions are rejected by V8 in their instrumented form too.
            match KNOWN.iter().find(|(k, _)| *k == name) {
                Some(_) if instr_err.is_some() => {}
                _ => failures.push(format!(
                    "{name}: V8 rejects it ({}), yet it was instrumented",
                    v["plain"]
                )),
            }
        } else if c.out.is_ok() && instr_err.is_some() {
            failures.push(format!(
                "{name}: instrumented output does not compile: {}",
                instr_err.unwrap_or_default()
            ));
        }
        if strict_differs {
            failures.push(format!(
                "{name}: as strict code, V8 says {} of the original and {} of the output",
                v["strictPlain"], v["strictInstr"]
            ));
        }
        if debug && c.out.is_err() && plain_ok {
            eprintln!("refused valid {name}: {:?}", c.out.as_ref().err());
        }
    }
    // The two spellings of each valid program are treated alike.
    let explicit: BTreeMap<&str, &Case> = cases
        .iter()
        .filter(|c| c.dir == "pass-explicit")
        .map(|c| (c.file.as_str(), c))
        .collect();
    let mut pairs_differ = 0;
    for c in cases.iter().filter(|c| c.dir == "pass") {
        let Some(e) = explicit.get(c.file.as_str()) else {
            continue;
        };
        let same = match (&c.out, &e.out) {
            (Ok(a), Ok(b)) => access_calls(a) == access_calls(b),
            (Err(_), Err(_)) => true,
            _ => false,
        };
        if !same {
            pairs_differ += 1;
            failures.push(format!(
                "pass/{0} and pass-explicit/{0} are instrumented differently:\n  {1:?}\n  {2:?}",
                c.file,
                c.out.as_ref().map(|o| access_calls(o)),
                e.out.as_ref().map(|o| access_calls(o)),
            ));
        }
    }
    eprintln!(
        "test262-parser-tests 0.0.5 through the JS pass (V8 {}):",
        node_version()
    );
    eprintln!(
        "  dir            files  refused  V8 rejects  rejected, not refused  output rejected  strict verdict differs"
    );
    for (dir, [n, refused, plain_bad, kept, bad, strict]) in &figures {
        eprintln!(
            "  {dir:<14} {n:>5}  {refused:>7}  {plain_bad:>10}  {kept:>21}  {bad:>15}  {strict:>22}"
        );
    }
    eprintln!("  pass/pass-explicit pairs treated differently: {pairs_differ}");
    assert!(
        failures.is_empty(),
        "{} conformance failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// V8's verdicts on a manifest (`tests/conformance/check.js`, one node process).
fn v8_verdicts(manifest: &[serde_json::Value]) -> Vec<serde_json::Value> {
    let tmp = tempfile::tempdir().unwrap();
    let mpath = tmp.path().join("manifest.json");
    std::fs::write(&mpath, serde_json::to_vec(manifest).unwrap()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/check.js");
    let out = Command::new(shepherd_testkit::node())
        .args(["--experimental-vm-modules", "--no-warnings"])
        .arg(&script)
        .arg(&mpath)
        .output()
        .unwrap_or_else(|e| panic!("node is required (scripts/install-deps): {e}"));
    assert!(
        out.status.success(),
        "conformance checker failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The classes of programs a newer test262 adds that V8 rejects and swc's parser accepts
/// (`for (a; b⏎)`, escaped `get`/`set`/`static`, `\8` in templates, async functions and
/// generators as loop bodies, `async⏎m() {}`, `\u{1_0}`), with valid neighbours of each: V8's
/// verdict is the file name's, the pass refuses every rejected program and instruments every
/// accepted one into code V8 compiles, as sloppy and as strict code alike.
#[test]
fn newer_suite_classes_refused_as_v8_rejects_them() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/newer");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "js"))
        .collect();
    files.sort();
    assert!(files.len() >= 40, "fixtures missing in {}", dir.display());
    let mut manifest = Vec::new();
    let mut outs = Vec::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let src = std::fs::read_to_string(f).unwrap();
        let out = instrument(&src, &Options::new(Kind::Script, name.clone())).map(|o| o.code);
        manifest.push(serde_json::json!({
            "name": name,
            "module": false,
            "plain": src,
            "instrumented": out.as_ref().ok(),
        }));
        outs.push((name, out));
    }
    let verdicts = v8_verdicts(&manifest);
    assert_eq!(verdicts.len(), outs.len());
    let mut failures = Vec::new();
    let (mut rejected, mut refused) = (0, 0);
    for ((name, out), v) in outs.iter().zip(&verdicts) {
        let expect_reject = name.starts_with("reject-");
        assert!(
            expect_reject || name.starts_with("accept-"),
            "{name}: a fixture's name starts with reject- or accept-"
        );
        let v8_rejects = !v["plain"].is_null();
        if v8_rejects != expect_reject {
            failures.push(format!(
                "{name}: the file name says V8 {} it, V8 says {}",
                if expect_reject { "rejects" } else { "accepts" },
                v["plain"]
            ));
            continue;
        }
        rejected += usize::from(v8_rejects);
        match out {
            Ok(_) if v8_rejects => failures.push(format!(
                "{name}: V8 rejects it ({}), yet it was instrumented",
                v["plain"]
            )),
            Err(_) if v8_rejects => refused += 1,
            Err(e) => failures.push(format!("{name}: valid, yet refused: {e}")),
            Ok(_) => {
                if !v["instr"].is_null() {
                    failures.push(format!("{name}: output does not compile: {}", v["instr"]));
                }
                if v["strictPlain"].is_null() != v["strictInstr"].is_null() {
                    failures.push(format!(
                        "{name}: as strict code, V8 says {} of the original and {} of the output",
                        v["strictPlain"], v["strictInstr"]
                    ));
                }
            }
        }
    }
    eprintln!(
        "newer test262 classes: {} fixtures, V8 rejects {rejected}, the pass refuses {refused} of those",
        outs.len()
    );
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn node_version() -> String {
    Command::new(shepherd_testkit::node())
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}
