//! `shepherd races --sarif/--junit/--fail-on` on fixture traces: the files are written, the
//! SARIF log validates against the published SARIF 2.1.0 schema (a PyPI wheel ships it,
//! `shepherd_testkit::sarif_schema`) and names both positions of each race, and the exit
//! status is 3 exactly when the gate finds what it is set for (harmful: an uninitialised
//! read in `gallery-b`; uncovered: any race not shown harmless), 0 otherwise.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn races(trace: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shepherd"))
        .arg("races")
        .arg(trace)
        .args(extra)
        .output()
        .unwrap()
}

fn validator() -> jsonschema::Validator {
    let path = shepherd_testkit::sarif_schema(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let schema: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap()
}

#[test]
fn the_gate_exits_3_exactly_when_it_trips() {
    let gallery = workspace().join("cli/tests/fixtures/gallery-b.jsonl");
    let positions = workspace().join("races/tests/positions/trace.jsonl");
    let code = |o: &Output| o.status.code();
    // gallery-b: one harmful race (a read before every write).
    let o = races(&gallery, &["--fail-on", "harmful"]);
    assert_eq!(code(&o), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("Harmful event race on Global.loadThumbs"));
    // positions: two uncovered races, nothing harmful.
    let o = races(&positions, &["--fail-on", "harmful"]);
    assert_eq!(code(&o), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let o = races(&positions, &["--fail-on", "uncovered"]);
    assert_eq!(code(&o), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
    // Without a gate, findings never change the status; the report still goes to stdout.
    let o = races(&gallery, &[]);
    assert_eq!(code(&o), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("Global.loadThumbs"));
    // Errors keep status 1, and a bad flag is refused before any analysis.
    let o = races(
        &workspace().join("no-such.jsonl"),
        &["--fail-on", "harmful"],
    );
    assert_eq!(code(&o), Some(1));
    let o = races(&positions, &["--fail-on", "sometimes"]);
    assert_eq!(code(&o), Some(2), "clap refuses the value");
    let o = races(&positions, &["--map-url", "https://a.test/"]);
    assert_eq!(code(&o), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("URL_PREFIX=PATH"));
}

#[test]
fn sarif_and_junit_files_are_written_and_the_sarif_is_valid() {
    let v = validator();
    let dir = tempfile::tempdir().unwrap();
    let sarif = dir.path().join("races.sarif");
    let junit = dir.path().join("races.xml");
    let positions = workspace().join("races/tests/positions/trace.jsonl");
    let o = races(
        &positions,
        &[
            "--json",
            "--sarif",
            sarif.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
            "--map-url",
            "https://a.test/=web/",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The JSON report is still what stdout carries.
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["races"].as_array().unwrap().len(), 2);
    let log: Value = serde_json::from_slice(&std::fs::read(&sarif).unwrap()).unwrap();
    let errors: Vec<String> = v.iter_errors(&log).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    for r in results {
        // A JSONL trace has no page texts: positions are the trace's own, inline code by its
        // script key (a URL fragment, dropped by the map).
        let uris: Vec<&str> = r["locations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                l["physicalLocation"]["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap()
            })
            .collect();
        assert_eq!(uris.len(), 2, "{r:#}");
        assert!(uris.iter().all(|u| u.starts_with("web/")), "{uris:?}");
    }
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("tests=\"2\" failures=\"0\" errors=\"0\" skipped=\"2\""),
        "{xml}"
    );
}
