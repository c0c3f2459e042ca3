//! `shepherd explore` on TodoMVC apps of the npm package `todomvc@0.1.1`: each app is recorded
//! through `shepherd record` in the good order (the app has initialised, then the user types a
//! todo and presses Enter), then explored by the binary with a small budget. Every exploration
//! must end at its budget (or complete) with a versioned JSON report; the apps that initialise
//! late (Knockout: the `value` binding clears the field when `applyBindings` runs) must show the
//! keystroke-loss race as harmful. Each exploration also writes SARIF (validated against the
//! published schema) and JUnit, with `--fail-on harmful`: the status is 3 exactly when
//! something is harmful.
//!
//! The package is fetched with `npm pack` into the target directory on first run
//! (`shepherd_testkit::todomvc`); npm and Chromium are required.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/todomvc.rs"]
mod support;

use serde_json::Value;
use shepherd_browser::Browser;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use support::{ProxyMode, ShepherdProxy, StaticServer, wait_for};

/// Apps explored, and whether typing before initialisation loses the text (Knockout's `value`
/// binding writes the field when `applyBindings` runs).
const APPS: [(&str, bool); 3] = [
    ("knockoutjs", true),
    ("vanillajs", false),
    ("backbone", false),
];

/// Budget of each exploration on an idle machine (each completes well within it), times the
/// patience factor: a loaded machine must not cut an exploration short of the race it checks.
const BUDGET: Duration = Duration::from_secs(40);

/// Loads the app, waits until it has initialised, adds one todo, flushes the trace.
async fn record(browser: &Browser, url: &str, proxy: &ShepherdProxy) {
    let page = browser
        .new_isolated_page(Some(&proxy.addr), Some("<-loopback>"))
        .await
        .unwrap();
    page.navigate(url).await.unwrap();
    let _ = page
        .wait_quiet(
            Duration::from_millis(300),
            shepherd_testkit::patience(Duration::from_secs(10)),
        )
        .await;
    assert!(
        wait_for(
            &page,
            "!!document.querySelector('#new-todo')",
            Duration::from_secs(10)
        )
        .await,
        "{url}: no #new-todo"
    );
    page.focus("#new-todo").await.unwrap();
    page.insert_text("buy milk").await.unwrap();
    page.press_key("Enter").await.unwrap();
    assert!(
        wait_for(
            &page,
            "document.querySelectorAll('#todo-list > li').length === 1",
            Duration::from_secs(10)
        )
        .await,
        "{url}: the todo was not added while recording"
    );
    let flush = format!(
        "(async () => {{ const c = __shepherd.control({:?}); await c.flush(); return true; }})()",
        proxy.secret
    );
    page.evaluate(&flush).await.unwrap();
    let _ = page.navigate("about:blank").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let _ = page.close().await;
}

#[test]
fn todomvc_recordings_explore_and_the_keystroke_loss_is_harmful() {
    shepherd_testkit::chromium();
    let root = support::package_root();
    let server = StaticServer::start(root);
    let bin = env!("CARGO_BIN_EXE_shepherd");
    let schema: Value = serde_json::from_slice(
        &std::fs::read(shepherd_testkit::sarif_schema(Path::new(env!(
            "CARGO_TARGET_TMPDIR"
        ))))
        .unwrap(),
    )
    .unwrap();
    let schema = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let browser = rt.block_on(shepherd_testkit::pages::launch());
    for (app, loses_keystrokes) in APPS {
        let url = format!("{}/examples/{app}/index.html", server.origin());
        let proxy = ShepherdProxy::start(bin, ProxyMode::Record);
        rt.block_on(record(&browser, &url, &proxy));
        // The recording lives in the proxy's home: copy it (with its write-ahead log) while
        // the recorder is idle, then stop the recorder.
        let state = tempfile::tempdir().unwrap();
        if std::env::var_os("EXPLORE_KEEP").is_some() {
            eprintln!("keeping {}", state.path().display());
        }
        let rec = state.path().join(format!("{app}.rec"));
        for suffix in ["", "-wal", "-shm"] {
            let mut from = proxy.recording.clone().into_os_string();
            from.push(suffix);
            let mut to = rec.clone().into_os_string();
            to.push(suffix);
            if std::path::Path::new(&from).exists() {
                std::fs::copy(&from, &to).unwrap();
            }
        }
        drop(proxy);
        let budget = shepherd_testkit::patience(BUDGET);
        let started = Instant::now();
        let out = Command::new(bin)
            .arg("explore")
            .arg(&rec)
            .args(["--bound", "1", "--json", "--state"])
            .arg(state.path().join("explore"))
            .arg("--budget")
            .arg(format!("{}ms", budget.as_millis()))
            .arg("--html")
            .arg(state.path().join("report.html"))
            .args(["--fail-on", "harmful", "--sarif"])
            .arg(state.path().join("explore.sarif"))
            .arg("--junit")
            .arg(state.path().join("explore.xml"))
            .output()
            .unwrap();
        let took = started.elapsed();
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{app}: the report is not JSON ({e}): {}; stderr: {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        // `--fail-on harmful`: status 3 exactly when something is harmful, 0 otherwise.
        let harmful_in = |key: &str| {
            doc[key]
                .as_array()
                .into_iter()
                .flatten()
                .any(|r| r["verdict"] == "harmful")
        };
        let harmful = harmful_in("races") || harmful_in("deeper") || harmful_in("disabled");
        assert_eq!(
            harmful,
            doc["summary"]["harmful"].as_u64().unwrap_or(0) > 0
                || harmful_in("deeper")
                || harmful_in("disabled"),
            "{app}: the summary counts the harmful races: {doc:#}"
        );
        assert_eq!(
            out.status.code(),
            Some(if harmful { 3 } else { 0 }),
            "{app}: harmful {harmful}; shepherd explore said: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let sarif: Value =
            serde_json::from_slice(&std::fs::read(state.path().join("explore.sarif")).unwrap())
                .unwrap();
        let errors: Vec<String> = schema.iter_errors(&sarif).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{app}: invalid SARIF: {errors:#?}");
        // One SARIF error and one JUnit failure per harmful group (repeats of a race and
        // races of the same two places fold into one).
        let errors_in_log = sarif["runs"][0]["results"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["level"] == "error")
            .count();
        assert_eq!(
            errors_in_log > 0,
            harmful,
            "{app}: SARIF errors iff harmful"
        );
        let junit = std::fs::read_to_string(state.path().join("explore.xml")).unwrap();
        assert!(
            junit.contains(&format!("failures=\"{errors_in_log}\"")),
            "{app}: one JUnit failure per SARIF error: {junit}"
        );
        assert_eq!(doc["version"], 2, "{app}");
        let sequences = doc["sequences"].as_u64().unwrap_or(0);
        eprintln!(
            "todomvc {app}: {sequences} sequences in {:.1}s (complete: {}), summary {}",
            took.as_secs_f64(),
            doc["complete"],
            doc["summary"]
        );
        assert!(sequences >= 2, "{app}: the exploration ran: {doc:#}");
        assert!(
            doc["complete"] == true || took >= budget,
            "{app}: stopped before its budget without completing: {doc:#}"
        );
        let state = keep_if_asked(state);
        let keystroke_loss = doc["races"].as_array().into_iter().flatten().any(|r| {
            r["verdict"] == "harmful"
                && r["location"]
                    .as_str()
                    .is_some_and(|l| l.ends_with(".value"))
                && (r["first"]["stable"]
                    .as_str()
                    .is_some_and(|s| s.contains("event:input"))
                    || r["second"]["stable"]
                        .as_str()
                        .is_some_and(|s| s.contains("event:input")))
        });
        for r in doc["races"].as_array().into_iter().flatten() {
            eprintln!(
                "  {} {} {} / {}: {}",
                r["verdict"],
                r["location"],
                r["first"]["stable"],
                r["second"]["stable"],
                r["reason"]
            );
        }
        if loses_keystrokes {
            assert!(
                keystroke_loss,
                "{app}: typing before the app initialised is not found harmful: {doc:#}"
            );
            // The page shows the witness: both end states and what changed.
            let html = std::fs::read_to_string(state.join("report.html")).unwrap();
            assert!(
                html.contains("data:image/png;base64,") && html.contains("DOM diff"),
                "{app}: the HTML report has no witness"
            );
            // `shepherd races --explored` puts the verdict on the recording's own race.
            let json = state.join("explore.json");
            std::fs::write(&json, &out.stdout).unwrap();
            let races = Command::new(bin)
                .arg("races")
                .arg(&rec)
                .arg("--json")
                .arg("--explored")
                .arg(&json)
                .output()
                .unwrap();
            assert!(
                races.status.success(),
                "{app}: shepherd races --explored failed"
            );
            let report: Value = serde_json::from_slice(&races.stdout).unwrap();
            let merged = report["races"].as_array().into_iter().flatten().any(|r| {
                r["explored"]["verdict"] == "harmful"
                    && r["location"]
                        .as_str()
                        .is_some_and(|l| l.ends_with(".value"))
            });
            assert!(
                merged,
                "{app}: the race report does not carry the harmful verdict: {report:#}"
            );
            // The streamed text report and the HTML report show the verdicts too: each race
            // the text lists (repeats are folded under the first) with the JSON's verdict.
            let page = state.join("races.html");
            let text = Command::new(bin)
                .arg("races")
                .arg(&rec)
                .arg("--explored")
                .arg(&json)
                .arg("--html")
                .arg(&page)
                .output()
                .unwrap();
            assert!(text.status.success(), "{app}: shepherd races --html failed");
            let text = String::from_utf8_lossy(&text.stdout);
            let verdict_of = |id: u64| {
                report["races"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|r| r["id"] == id)
                    .and_then(|r| r["explored"]["verdict"].as_str())
            };
            let mut shown = 0;
            for block in text.split("\n  race ").skip(1) {
                let id: u64 = block.split(' ').next().unwrap().parse().unwrap();
                let line = block.lines().find(|l| l.starts_with("    explored: "));
                let want = verdict_of(id).map(|v| format!("    explored: {v} ("));
                assert_eq!(
                    line.map(|l| l.split('(').next().unwrap_or_default().to_owned() + "("),
                    want,
                    "{app}: race {id} of the text report: {text}"
                );
                shown += usize::from(want.is_some());
            }
            assert!(
                shown > 0,
                "{app}: no race of the text report has a verdict: {text}"
            );
            let html = std::fs::read_to_string(&page).unwrap();
            assert!(
                html.contains("<div>explored: <span class=\"tag"),
                "{app}: the HTML race report has no verdict"
            );
        }
    }
    let _ = rt.block_on(browser.close());
}

/// With `EXPLORE_KEEP` set, the exploration's directory outlives the test (to look at it).
fn keep_if_asked(dir: tempfile::TempDir) -> PathBuf {
    if std::env::var_os("EXPLORE_KEEP").is_some() {
        dir.keep()
    } else {
        let p = dir.path().to_path_buf();
        STATES.with(|s| s.borrow_mut().push(dir));
        p
    }
}

thread_local! {
    static STATES: std::cell::RefCell<Vec<tempfile::TempDir>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `--grid` and its options are checked before anything starts (no browser, no Grid needed):
/// an https Grid, a remote Grid with proxies the nodes cannot reach, capabilities that are not
/// a JSON object, capabilities without a Grid.
#[test]
fn grid_arguments_are_checked_before_anything_starts() {
    let bin = env!("CARGO_BIN_EXE_shepherd");
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("site.rec");
    std::fs::write(&rec, b"").unwrap();
    let cases: [(&[&str], &str); 4] = [
        (&["--grid", "https://grid.test:4444"], "only http:// Grids"),
        (
            &["--grid", "http://grid.test:4444"],
            "--listen 0.0.0.0:0 --advertise",
        ),
        (
            &[
                "--grid",
                "http://127.0.0.1:4444",
                "--grid-capabilities",
                "[1]",
            ],
            "expected a JSON object",
        ),
        (
            &["--grid-capabilities", "{}"],
            "--grid-capabilities needs --grid",
        ),
    ];
    for (args, want) in cases {
        let out = Command::new(bin)
            .arg("explore")
            .arg(&rec)
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
    }
}
