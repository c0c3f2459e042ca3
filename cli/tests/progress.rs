//! Long-running commands (`races`, `har export`, `har import`, `merge`) show progress only on a
//! terminal: with stderr piped, as here and in every script, stderr holds no progress frames
//! and the commands' results are unchanged.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

fn shepherd(args: &[&std::ffi::OsStr]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_shepherd"))
        .args(args)
        .env("SHEPHERD_LOG", "warn")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "shepherd {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// No drawing escape codes, spinner frames or bar text.
fn assert_no_progress(out: &Output, what: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    for frame in [
        "\x1b[",
        "\r",
        "[=",
        "analysing",
        "reading the",
        "exporting",
        "importing",
        "merging",
    ] {
        assert!(
            !err.contains(frame),
            "{what}: progress on a pipe ({frame:?}): {err:?}"
        );
    }
}

#[test]
fn progress_stays_off_pipes() {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../races/tests/positions/trace.jsonl");
    let races = shepherd(&["races".as_ref(), trace.as_os_str()]);
    assert_no_progress(&races, "races");
    assert!(
        String::from_utf8_lossy(&races.stdout).contains("Global.init"),
        "{}",
        String::from_utf8_lossy(&races.stdout)
    );

    let dir = tempfile::tempdir().unwrap();
    let har = dir.path().join("in.har");
    std::fs::write(
        &har,
        r#"{"log":{"version":"1.2","entries":[
          {"startedDateTime":"2024-01-15T10:30:45.123Z","time":5,
           "request":{"method":"GET","url":"https://a.test/","httpVersion":"HTTP/1.1","headers":[]},
           "response":{"status":200,"statusText":"OK","httpVersion":"HTTP/1.1","headers":[],
                       "content":{"size":2,"mimeType":"text/html","text":"hi"}},
           "timings":{"send":1,"wait":3,"receive":1}}]}}"#,
    )
    .unwrap();
    let a = dir.path().join("a.rec");
    let import = shepherd(&[
        "har".as_ref(),
        "import".as_ref(),
        har.as_os_str(),
        "--out".as_ref(),
        a.as_os_str(),
    ]);
    assert_no_progress(&import, "har import");
    assert!(String::from_utf8_lossy(&import.stderr).contains("imported 1 entries"));

    let merged = dir.path().join("m.rec");
    let merge = shepherd(&[
        "merge".as_ref(),
        a.as_os_str(),
        a.as_os_str(),
        "--out".as_ref(),
        merged.as_os_str(),
    ]);
    assert_no_progress(&merge, "merge");
    assert!(String::from_utf8_lossy(&merge.stderr).contains("merged 2 sessions, 2 exchanges"));

    let export = shepherd(&["har".as_ref(), "export".as_ref(), merged.as_os_str()]);
    assert_no_progress(&export, "har export");
    let doc: serde_json::Value = serde_json::from_slice(&export.stdout).unwrap();
    let entries = doc["log"]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["startedDateTime"], "2024-01-15T10:30:45.123Z");
    assert_eq!(entries[1]["response"]["content"]["text"], "hi");
}
