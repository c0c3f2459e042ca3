//! The papers' examples as fixture directories: `trace.jsonl` in, `expected.json` (exact
//! uncovered races with their tags, and covered races with how they are covered) out.
//! `UPDATE_FIXTURES=1 cargo test -p shepherd-races --test fixtures` rewrites the expectations;
//! review the diff against the paper before committing it.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use shepherd_races::report::{self, NoSources, RaceReport};
use shepherd_races::{Options, analyze};
use std::path::Path;

#[path = "support/streamed.rs"]
mod streamed;

fn summarise(dir: &Path) -> Value {
    let f = std::fs::File::open(dir.join("trace.jsonl")).unwrap();
    let trace = shepherd_trace::read_jsonl(std::io::BufReader::new(f)).unwrap();
    let an = analyze(
        &trace,
        &Options {
            single_coverage: true,
            ..Options::default()
        },
    )
    .unwrap();
    let rep = RaceReport::new(&trace, &an, true);
    let side = |a: &report::AccessView| format!("{} {}", a.access, a.stable);
    let mut uncovered = Vec::new();
    let mut covered = Vec::new();
    for r in &rep.races {
        if r.covered {
            let by = r
                .covered_by
                .and_then(|i| rep.races.iter().find(|x| x.id == i));
            covered.push(json!({
                "location": r.location,
                "kind": r.kind,
                "first": side(&r.first),
                "second": side(&r.second),
                "coverage": r.coverage,
                "covered_by": by.map(|b| format!("{} {}", b.location, b.kind)),
            }));
        } else {
            uncovered.push(json!({
                "location": r.location,
                "kind": r.kind,
                "first": side(&r.first),
                "second": side(&r.second),
                "tags": r.tags,
                "level": r.level,
            }));
        }
    }
    // The renderers run on every fixture too.
    let text = report::text::render(&RaceReport::new(&trace, &an, false));
    assert!(text.contains("races"), "{text}");
    // The CLI's streaming writer prints the same text, with and without covered races, with
    // the repairing policies and explorer verdicts it is given.
    for all in [false, true] {
        streamed::assert_streams_as_rendered(&trace, &an, all);
    }
    let html = report::html::render(&rep, &an, &trace, &NoSources);
    assert!(
        html.starts_with("<!doctype html>") && html.contains("<svg"),
        "html"
    );
    let j: Value =
        serde_json::from_str(&report::json::render(&RaceReport::new(&trace, &an, false))).unwrap();
    assert_eq!(j["version"], 1);
    json!({ "uncovered": uncovered, "covered": covered })
}

#[test]
fn papers_examples() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("trace.jsonl").exists())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 4, "fixtures missing: {dirs:?}");
    let update = std::env::var("UPDATE_FIXTURES").is_ok();
    let mut failed = Vec::new();
    for dir in dirs {
        let got = summarise(&dir);
        let path = dir.join("expected.json");
        if update {
            std::fs::write(&path, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
            continue;
        }
        let want: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        if got != want {
            failed.push(format!(
                "{}:\n{}",
                dir.display(),
                serde_json::to_string_pretty(&got).unwrap()
            ));
        }
    }
    assert!(failed.is_empty(), "fixtures differ:\n{}", failed.join("\n"));
}

/// The same fixtures exported as EventRacer `ER_actionlog` files, cut before our trailer (as
/// EventRacer's own logger would write them), give the same uncovered races and tags, with the
/// location names verbatim.
#[test]
fn er_actionlog_input_gives_the_same_races() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let opts = Options::default();
    let key = |trace: &shepherd_trace::Trace| {
        let an = analyze(trace, &opts).unwrap();
        let rep = RaceReport::new(trace, &an, false);
        let mut v: Vec<(String, String, Vec<&'static str>)> = rep
            .races
            .iter()
            .map(|r| (r.location.clone(), r.kind.clone(), r.tags.clone()))
            .collect();
        v.sort();
        v
    };
    for name in ["fig1", "fig4", "fig5", "fig7", "filters"] {
        let f = std::fs::File::open(root.join(name).join("trace.jsonl")).unwrap();
        let trace = shepherd_trace::read_jsonl(std::io::BufReader::new(f)).unwrap();
        let mut bytes = shepherd_trace::er::to_er_bytes(&trace);
        let at = bytes
            .windows(8)
            .position(|w| w == b"SHEPHERD")
            .expect("our ER export ends with its trailer");
        bytes.truncate(at);
        let loaded = shepherd_trace::load_reader(&bytes[..]).unwrap();
        assert_eq!(loaded.format, shepherd_trace::Format::ErActionlog);
        let want = key(&trace);
        assert!(!want.is_empty(), "{name}: the fixture has races");
        assert_eq!(want, key(&loaded.trace), "{name}");
    }
}
