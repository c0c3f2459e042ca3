//! `shepherd demo` end to end: the embedded shop is recorded through the proxy in headless
//! Chromium with auto-exploration and analysed. The report must show the demo's races: the
//! coupon field that the late `app.js` overwrites while the user types (the explorer types into
//! text fields; trusted `input` events write the field's value location) named by its selector
//! (`input#coupon.value`), and script actions named by their position.

use std::process::Command;

/// The report block of the location whose header line ends with `suffix` (up to the blank line).
fn block<'a>(report: &'a str, suffix: &str) -> Option<&'a str> {
    let start = report.lines().position(|l| {
        !l.starts_with(' ')
            && l.split_whitespace()
                .nth(1)
                .is_some_and(|loc| loc.ends_with(suffix))
    })?;
    let lines: Vec<&str> = report.lines().collect();
    let end = lines[start..]
        .iter()
        .position(|l| l.is_empty())
        .map_or(lines.len(), |n| start + n);
    let from = report.find(lines[start])?;
    let to = if end < lines.len() {
        report[from..]
            .find("\n\n")
            .map_or(report.len(), |n| from + n)
    } else {
        report.len()
    };
    Some(&report[from..to])
}

#[test]
fn demo_reports_the_coupon_race_between_typing_and_late_initialisation() {
    shepherd_testkit::chromium();
    let home = tempfile::tempdir().unwrap();
    let out = home.path().join("out");
    let run = Command::new(env!("CARGO_BIN_EXE_shepherd"))
        .arg("--home")
        .arg(home.path())
        .args(["demo", "--explore", "3s", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "shepherd demo failed: {}\n{stdout}",
        String::from_utf8_lossy(&run.stderr)
    );
    let coupon = block(&stdout, ".value").unwrap_or_else(|| {
        panic!("no race on a field value (the coupon) in the demo report:\n{stdout}")
    });
    assert!(
        coupon
            .lines()
            .any(|l| l.contains("WRITE in") && l.contains("/app.js:"))
            && coupon.contains("event:input@#coupon"),
        "the coupon race pairs app.js's write (with its source position) with the typing:\n{coupon}"
    );
    // Named as a developer finds the field, the trace's own name under it.
    assert!(
        coupon.starts_with("uncovered input#coupon.value")
            || coupon.starts_with("HARMFUL input#coupon.value"),
        "the coupon named by its selector:\n{coupon}"
    );
    assert!(coupon.contains("\n  trace location: DOMNode["), "{coupon}");
    assert!(
        stdout.contains("HARMFUL Global.f"),
        "EventRacer Fig. 1's race in the report:\n{stdout}"
    );
    for f in [
        "demo.rec",
        "report.html",
        "races.json",
        "explore.html",
        "explore.json",
    ] {
        assert!(out.join(f).is_file(), "{f} written");
    }
    // Triage: the "Show price" click before slow.js ran is harmful, its witness shows what
    // the user sees ("not ready"); every uncovered race has an answer, harmful ones first.
    let explored: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("explore.json")).unwrap()).unwrap();
    let races = explored["races"].as_array().cloned().unwrap_or_default();
    let show_price = races.iter().find(|r| {
        r["location"] == "Global.init"
            && r["verdict"] == "harmful"
            && r["witness"]["visible_diff"]
                .as_str()
                .is_some_and(|d| d.contains("not ready"))
    });
    assert!(
        show_price.is_some(),
        "the Show price race is not harmful with \"not ready\" in its witness:\n{stdout}"
    );
    assert!(
        races.iter().all(|r| r["verdict"] != "not-explored"
            || r["reason"].as_str().is_some_and(|s| !s.is_empty())),
        "a race without an answer: {explored:#}"
    );
    let triage = stdout
        .split("exploring every race the other way round")
        .nth(1)
        .unwrap_or_default();
    // One line per location, led by its verdict in capitals.
    let first_harmful = triage.find("\nHARMFUL ");
    let first_harmless = triage.find("\nHARMLESS ");
    assert!(
        first_harmful.is_some() && (first_harmless.is_none() || first_harmful < first_harmless),
        "the triage summary prints harmful races first:\n{triage}"
    );
}
