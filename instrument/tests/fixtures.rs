//! Fixture tests: `tests/fixtures/<case>/{input.html, mode, headers?}` against
//! `expected.html`, `expected-headers` (when `headers` exists) and `report.json`.
//! `UPDATE_FIXTURES=1 cargo test -p shepherd-instrument --test fixtures` rewrites the expected
//! files. Every case is also fed in random chunk sizes and must give the same bytes.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shepherd_instrument::{CspHeader, HtmlInstrumenter, Mode};
use std::path::{Path, PathBuf};

struct Case {
    dir: PathBuf,
    input: Vec<u8>,
    mode: Mode,
    content_type: Option<String>,
    csp: Vec<(CspHeader, String)>,
}

fn load(dir: &Path) -> Case {
    let input = std::fs::read(dir.join("input.html")).unwrap();
    let mode: Mode = std::fs::read_to_string(dir.join("mode"))
        .unwrap()
        .parse()
        .unwrap();
    let mut content_type = None;
    let mut csp = Vec::new();
    if let Ok(h) = std::fs::read_to_string(dir.join("headers")) {
        for line in h.lines().filter(|l| !l.trim().is_empty()) {
            let (name, value) = line.split_once(':').unwrap();
            let value = value.trim().to_string();
            match name.trim().to_ascii_lowercase().as_str() {
                "content-type" => content_type = Some(value),
                "content-security-policy" => csp.push((CspHeader::Enforce, value)),
                "content-security-policy-report-only" => csp.push((CspHeader::ReportOnly, value)),
                other => panic!("unknown header {other} in {}", dir.display()),
            }
        }
    }
    Case {
        dir: dir.to_path_buf(),
        input,
        mode,
        content_type,
        csp,
    }
}

/// Runs a case, feeding the chunk sizes `sizes` yields; returns body, headers text, report.
fn run(case: &Case, mut sizes: impl FnMut() -> usize) -> (Vec<u8>, String, String) {
    let mut cfg = common::config(case.mode);
    cfg.content_type = case.content_type.clone();
    let mut inst = HtmlInstrumenter::new(cfg);
    let mut headers = String::new();
    for (h, v) in &case.csp {
        let name = match h {
            CspHeader::Enforce => "content-security-policy",
            CspHeader::ReportOnly => "content-security-policy-report-only",
        };
        headers.push_str(&format!("{name}: {}\n", inst.adjust_csp_header(v, *h)));
    }
    let mut out = Vec::new();
    let mut rest = &case.input[..];
    while !rest.is_empty() {
        let n = sizes().clamp(1, rest.len());
        out.extend(inst.write(&rest[..n]).unwrap());
        rest = &rest[n..];
    }
    let (tail, report) = inst.finish().unwrap();
    out.extend(tail);
    if let Some(ct) = &report.content_type {
        headers.push_str(&format!("content-type: {ct}\n"));
    }
    let report = serde_json::to_string_pretty(&report).unwrap() + "\n";
    (out, headers, report)
}

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut dirs: Vec<_> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn fixtures() {
    let update = std::env::var_os("UPDATE_FIXTURES").is_some();
    let mut failures = Vec::new();
    let dirs = cases();
    assert!(dirs.len() >= 20, "fixtures missing");
    for dir in dirs {
        let case = load(&dir);
        let (out, headers, report) = run(&case, || usize::MAX);
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let files: Vec<(&str, Vec<u8>)> = {
            let mut f = vec![
                ("expected.html", out.clone()),
                ("report.json", report.into_bytes()),
            ];
            if !headers.is_empty() {
                f.push(("expected-headers", headers.into_bytes()));
            }
            f
        };
        for (file, got) in files {
            let path = case.dir.join(file);
            if update {
                std::fs::write(&path, &got).unwrap();
            } else {
                let want = std::fs::read(&path).unwrap_or_default();
                if want != got {
                    failures.push(format!(
                        "{name}/{file}:\n--- want\n{}\n--- got\n{}",
                        String::from_utf8_lossy(&want),
                        String::from_utf8_lossy(&got)
                    ));
                }
            }
        }
        // Streaming: random chunk sizes (1..=64, sometimes single bytes) give the same bytes.
        for seed in 0..8u64 {
            let mut rng = StdRng::seed_from_u64(seed);
            let tiny = seed % 2 == 0;
            let (chunked, _, _) = run(&case, || {
                if tiny {
                    rng.random_range(1..=3)
                } else {
                    rng.random_range(1..=64)
                }
            });
            if chunked != out {
                failures.push(format!(
                    "{name}: chunked (seed {seed}) differs:\n{}\n--- vs one chunk\n{}",
                    String::from_utf8_lossy(&chunked),
                    String::from_utf8_lossy(&out)
                ));
                break;
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} fixture failures:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
