//! `shepherd policy`, `shepherd serve --policy` and `shepherd explore --policy` as a user runs them: a bad policy file
//! gives its line and column and starts nothing; a good one is explained in words.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn shepherd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_shepherd"))
}

#[test]
fn a_bad_policy_names_line_and_column_and_serve_starts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.policy");
    std::fs::write(
        &bad,
        "# checkout\npostpone clik until parsed\ndiscard timer until loaded\n",
    )
    .unwrap();
    let out = shepherd()
        .args(["policy", "check"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let f = bad.display();
    assert!(
        err.contains(&format!(
            "{f}:2:10: error: unknown event kind or type `clik` (did you mean `click`?)"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!("{f}:3:9: error: `discard` drops the event")),
        "{err}"
    );
    // serve: the same errors, exit 1, and it never listens.
    let start = Instant::now();
    let mut child = shepherd()
        .arg("--home")
        .arg(dir.path())
        .args(["serve", "--listen", "127.0.0.1:0", "--policy"])
        .arg(&bad)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < shepherd_testkit::patience(Duration::from_secs(20)),
            "serve kept running with a bad policy"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(
        err.contains(":2:10: error:") && err.contains("nothing was started"),
        "{err}"
    );
    assert!(!err.contains("listening"), "{err}");
    // explore: the same, before any browser or proxy starts.
    let rec = dir.path().join("site.rec");
    std::fs::write(&rec, b"").unwrap();
    let out = shepherd()
        .arg("--home")
        .arg(dir.path())
        .arg("explore")
        .arg(&rec)
        .arg("--policy")
        .arg(&bad)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(":2:10: error:") && err.contains("nothing was started"),
        "{err}"
    );
}

#[test]
fn check_explains_and_list_names_the_shipped_policies() {
    let out = shepherd()
        .args(["policy", "check", "init-system"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("postpone timer callbacks (setTimeout) or `load` events on iframe, img, until the document is parsed"), "{text}");
    let out = shepherd().args(["policy", "list"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for name in [
        "init-user ",
        "init-user-plus",
        "init-system",
        "async-fifo",
        "async-user",
    ] {
        assert!(text.contains(name), "{name} missing: {text}");
    }
    let out = shepherd()
        .args(["policy", "check", "--json", "async-fifo"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["compiled"]["postponesScripts"], true);
}

/// `shepherd races` says which shipped policies order a race (text and JSON), and `policy
/// covers` agrees.
#[test]
fn races_name_the_shipped_policies_that_order_a_race() {
    // Gallery B in the order init-user allows: script.js, DOMContentLoaded, then the click
    // that calls what script.js defined (nothing but timing orders the click after it).
    let trace =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gallery-b.jsonl");
    let out = shepherd().arg("races").arg(&trace).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("Global.loadThumbs"), "{text}");
    let line = text
        .lines()
        .find(|l| l.contains("ordered by policy:"))
        .unwrap_or_else(|| panic!("no policy line:\n{text}"));
    assert!(line.contains("init-user"), "{line}");
    assert!(!line.contains("async-fifo"), "{line}");
    assert!(!text.contains("not worked out"), "{text}");
    let out = shepherd()
        .args(["races", "--json"])
        .arg(&trace)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let race = doc["races"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["location"] == "Global.loadThumbs"))
        .unwrap_or_else(|| panic!("{doc:#}"));
    let by = race["repaired_by"].as_array().unwrap();
    assert!(by.iter().any(|p| p == "init-user"), "{race:#}");
    assert!(
        doc["summary"].get("policies_undecided").is_none(),
        "{doc:#}"
    );
    let out = shepherd()
        .args(["policy", "covers", "--policy", "init-user"])
        .arg(&trace)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("1 of 1 uncovered races ordered by init-user"),
        "{text}"
    );
}
