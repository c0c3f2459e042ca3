//! Fixture tests: `tests/fixtures/<case>/input.js` (+ optional `kind`: script, module, handler,
//! jsurl; optional `options`: inline_script, ascii_only) must instrument to exactly
//! `output.js`; a refused input expects `// error: <variant>`.
//! `UPDATE_FIXTURES=1 cargo test -p shepherd-instrument-js --test fixtures` rewrites them.

use std::path::Path;

use shepherd_instrument_js::{Error, Kind, Options, instrument};

fn variant(e: &Error) -> &'static str {
    match e {
        Error::Parse(_) => "Parse",
        Error::Recovered(_) => "Recovered",
        Error::Invalid(_) => "Invalid",
        Error::Unfaithful(_) => "Unfaithful",
        Error::AlreadyInstrumented => "AlreadyInstrumented",
        Error::TooDeep => "TooDeep",
        Error::SourceMap(_) => "SourceMap",
        Error::Worker(_) => "Worker",
        Error::NotAscii => "NotAscii",
    }
}

#[test]
fn fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let update = std::env::var_os("UPDATE_FIXTURES").is_some();
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("input.js").exists())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 40, "fixtures missing: {}", dirs.len());
    let mut failures = Vec::new();
    for dir in &dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let input = std::fs::read_to_string(dir.join("input.js")).unwrap();
        let kind = match std::fs::read_to_string(dir.join("kind"))
            .unwrap_or_default()
            .trim()
        {
            "module" => Kind::Module,
            "handler" => Kind::Handler,
            "jsurl" => Kind::JsUrl,
            _ => Kind::Script,
        };
        let flags = std::fs::read_to_string(dir.join("options")).unwrap_or_default();
        let mut opts = Options::new(kind, "input.js");
        opts.inline_script = flags.contains("inline_script") || name == "inline_script_escape";
        opts.ascii_only = flags.contains("ascii_only");
        let actual = match instrument(&input, &opts) {
            Ok(o) => o.code + "\n",
            Err(e) => format!("// error: {}\n", variant(&e)),
        };
        let path = dir.join("output.js");
        if update {
            std::fs::write(&path, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_default();
        if expected != actual {
            failures.push(format!(
                "{name}:\n  expected: {expected}  actual:   {actual}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} fixture(s) differ (UPDATE_FIXTURES=1 to accept):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
