//! `examples/playwright-suite` run as its README says: its `run.sh` starts the site, records
//! the Playwright suite (playwright-core, the machine's Chromium) through `shepherd record
//! --listen` with the flags it writes, then runs `shepherd races` and `shepherd explore` with
//! SARIF and JUnit outputs and `--fail-on harmful`. The example's coupon page has two races
//! that change its total, so the script must end with status 3 and reports that say so.
//! playwright-core is fetched from the npm registry into the target directory
//! (`shepherd_testkit::npm_package`), at the version the example's package.json pins.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let name = e.file_name();
        if name == "node_modules" || name == "out" {
            continue;
        }
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(&name));
        } else {
            std::fs::copy(e.path(), to.join(&name)).unwrap();
        }
    }
}

#[test]
fn the_example_suite_is_recorded_and_its_harmful_races_fail_the_run() {
    shepherd_testkit::chromium();
    shepherd_testkit::node();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let example = root.join("examples/playwright-suite");
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(example.join("package.json")).unwrap()).unwrap();
    let version = manifest["devDependencies"]["playwright-core"]
        .as_str()
        .unwrap();
    let package = shepherd_testkit::npm_package(
        &format!("playwright-core@{version}"),
        Path::new(env!("CARGO_TARGET_TMPDIR")),
    );
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("suite");
    copy_dir(&example, &work);
    std::fs::create_dir_all(work.join("node_modules")).unwrap();
    std::os::unix::fs::symlink(&package, work.join("node_modules/playwright-core")).unwrap();
    let out = dir.path().join("out");
    let run = Command::new("bash")
        .arg(work.join("run.sh"))
        .env("SHEPHERD", env!("CARGO_BIN_EXE_shepherd"))
        .env("SHEPHERD_HOME", dir.path().join("home"))
        .env("CHROMIUM", shepherd_testkit::chromium())
        .env("OUT", &out)
        .env("EXPLORE_BUDGET", "120s")
        .output()
        .unwrap();
    let said = format!(
        "{}\n{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(run.status.code(), Some(3), "{said}");
    assert!(said.contains("# pass 1"), "the suite itself passed: {said}");
    let record_log = std::fs::read_to_string(out.join("record.log")).unwrap();
    assert!(
        record_log.contains("shepherd: browser args (Playwright's or Puppeteer's launch args): [\"--proxy-server=http://127.0.0.1:"),
        "{record_log}"
    );
    let races = std::fs::read_to_string(out.join("races.txt")).unwrap();
    assert!(races.contains("HARMFUL Global.applyCoupon"), "{races}");
    let explore: Value =
        serde_json::from_slice(&std::fs::read(out.join("explore.json")).unwrap()).unwrap();
    let harmful: Vec<&str> = explore["races"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["verdict"] == "harmful")
        .filter_map(|r| r["location"].as_str())
        .collect();
    assert!(
        harmful.contains(&"Global.applyCoupon") || harmful.contains(&"Global.discount"),
        "{explore:#}"
    );
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
    for file in ["races.sarif", "explore.sarif"] {
        let log: Value = serde_json::from_slice(&std::fs::read(out.join(file)).unwrap()).unwrap();
        let errors: Vec<String> = schema.iter_errors(&log).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{file}: {errors:#?}");
        assert!(
            log["runs"][0]["results"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["level"] == "error"),
            "{file} has the harmful races as errors"
        );
    }
    let junit = std::fs::read_to_string(out.join("explore.xml")).unwrap();
    assert!(junit.contains("<failure type=\"harmful\""), "{junit}");
}
