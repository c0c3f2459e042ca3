//! `shepherd record URL --explore` end to end: the exercise stays on a page whose links lead
//! to another site, reaches every control (links, a select nobody listens to, a text field, a
//! button), and both record's summary and the race report say so.

// Test code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use shepherd_testkit::pages::{html, runtime, serve};
use shepherd_testkit::patience;
use std::process::Command;
use std::time::Duration;

/// Six controls: three links to another site, a select without listeners, a text field and a
/// button. A late script writes the field (a race with the user's typing).
const PAGE: &str = r#"<!doctype html>
<a href="https://partner1.invalid/">one</a> <a href="https://partner2.invalid/">two</a>
<a href="https://partner3.invalid/">three</a>
<select id="size"><option>S</option><option>M</option><option>L</option></select>
<input id="name">
<button id="go" onclick="document.title = 'go'">go</button>
<script>setTimeout(() => { document.getElementById('name').value = 'guest'; }, 300);</script>"#;

/// The controls of [`PAGE`].
const CONTROLS: usize = 6;

/// `(exercised, present)` from a line holding "`N` of `M` controls".
fn coverage_in(line: &str) -> Option<(usize, usize)> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words
        .windows(4)
        .position(|w| w[1] == "of" && w[3].starts_with("controls"))?;
    let n = words[at].trim_start_matches('(').parse().ok()?;
    let m = words[at + 2].parse().ok()?;
    Some((n, m))
}

#[test]
fn record_explore_reaches_every_control_and_says_so() {
    shepherd_testkit::chromium();
    let server = runtime().block_on(serve(vec![("/", html(PAGE))]));
    let home = tempfile::tempdir().unwrap();
    let rec = home.path().join("page.rec");
    // The run ends at its event count; the duration is only a backstop.
    let explore = format!("{}s", patience(Duration::from_secs(30)).as_secs());
    let run = Command::new(env!("CARGO_BIN_EXE_shepherd"))
        .arg("--home")
        .arg(home.path())
        .args(["record", &server.url("/"), "--explore", &explore])
        .args(["--max-events", "60", "--out"])
        .arg(&rec)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "shepherd record failed: {}\n{stdout}",
        String::from_utf8_lossy(&run.stderr)
    );
    let summary = stdout
        .lines()
        .find(|l| l.starts_with("recorded "))
        .unwrap_or_else(|| panic!("no summary line:\n{stdout}"));
    assert_eq!(
        coverage_in(summary),
        Some((CONTROLS, CONTROLS)),
        "record's summary gives the coverage, every control exercised: {summary}\n{stdout}"
    );
    assert!(!stdout.contains("not exercised:"), "{stdout}");
    // No link led the exercise away: nothing was requested from the partners (they do not
    // resolve), and every later gesture still found the page.
    let races = Command::new(env!("CARGO_BIN_EXE_shepherd"))
        .arg("races")
        .arg(&rec)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&races.stdout);
    assert!(
        races.status.success(),
        "shepherd races failed: {}\n{report}",
        String::from_utf8_lossy(&races.stderr)
    );
    let line = report
        .lines()
        .find(|l| l.starts_with("exercised:"))
        .unwrap_or_else(|| panic!("the race report has no coverage line:\n{report}"));
    assert_eq!(coverage_in(line), Some((CONTROLS, CONTROLS)), "{line}");
    // The late script's write races with the typing the exercise did.
    assert!(
        report.contains("input#name.value"),
        "the race on the field the script writes:\n{report}"
    );
}
