//! Reports name DOM nodes as developers find them (`tests/names/`: a shop page's trace of
//! format 3, with node descriptions, and its minified script). `expected.txt` and
//! `expected.json` are the exact text and JSON reports (`UPDATE_FIXTURES=1` rewrites them).
//! The same trace without its descriptions (what older runtimes wrote) keeps the numbered
//! names.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use shepherd_races::report::{self, PageSources, RaceReport};
use shepherd_races::{Options, analyze};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/names")
}

fn trace_text() -> String {
    std::fs::read_to_string(dir().join("trace.jsonl")).unwrap()
}

fn load(text: &str) -> shepherd_trace::Trace {
    shepherd_trace::read_jsonl(text.as_bytes()).unwrap()
}

fn sources() -> PageSources {
    let mut texts = HashMap::new();
    texts.insert(
        "https://a.test/app.min.js".to_owned(),
        std::fs::read_to_string(dir().join("app.min.js")).unwrap(),
    );
    PageSources::new(texts)
}

fn report(trace: &shepherd_trace::Trace, all: bool) -> (shepherd_races::Analysis, RaceReport) {
    let an = analyze(trace, &Options::default()).unwrap();
    let mut rep = RaceReport::new(trace, &an, all);
    rep.attach_sources(&sources());
    (an, rep)
}

/// Compares `got` with the fixture file `name` (rewritten with `UPDATE_FIXTURES=1`).
fn fixture(name: &str, got: &str) {
    let path = dir().join(name);
    if std::env::var("UPDATE_FIXTURES").is_ok() {
        std::fs::write(&path, got).unwrap();
    }
    assert_eq!(got, std::fs::read_to_string(&path).unwrap(), "{name}");
}

#[test]
fn text_report_names_nodes_and_shows_the_minified_column() {
    let trace = load(&trace_text());
    let (_, rep) = report(&trace, false);
    let text = report::text::render(&rep);
    fixture("expected.txt", &text);
    // Named, with the trace's name under it.
    assert!(text.contains(
        "HARMFUL input#coupon.value [INITIALIZATION_RACE]\n  trace location: DOMNode[19].value\n"
    ));
    assert!(text.contains(
        "#todo-list > li:nth-child(1) > input (click listeners) [LATE_EVENT_ATTACH]\n  trace location: INPUT[14].click\n"
    ));
    // The event's scope names its target.
    assert!(text.contains("in fire:input @ input#coupon"), "{text}");
    // Column 5001 of an 11 200-character line: the racing expression, not the line's start.
    assert!(text.contains("    2 | …q=0;var q=0;"), "{text}");
    assert!(text.contains("document.getElementById(\"coupon\").value=\"\";var q=0;"));
    assert!(!text.contains("/*! shop v1 (minified) */\n"));
}

#[test]
fn json_report_adds_names_and_nodes() {
    let trace = load(&trace_text());
    let (_, rep) = report(&trace, false);
    let json = report::json::render(&rep);
    fixture("expected.json", &(json.clone() + "\n"));
    let j: Value = serde_json::from_str(&json).unwrap();
    let race = |loc: &str| {
        j["races"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["location"] == loc)
            .unwrap()
            .clone()
    };
    let r = race("DOMNode[19].value");
    assert_eq!(r["location_name"], "input#coupon.value");
    assert_eq!(r["node"]["number"], 19);
    assert_eq!(r["node"]["tag"], "input");
    assert_eq!(r["node"]["selector"], "input#coupon");
    assert_eq!(r["node"]["id"], "coupon");
    assert!(r["node"]["classes"].is_null());
    let r = race("INPUT[14].click");
    assert_eq!(r["node"]["classes"], "toggle");
    assert_eq!(r["second"]["scope"], "fire:click @ INPUT[14]");
    assert_eq!(
        r["second"]["scope_name"],
        "fire:click @ #todo-list > li:nth-child(1) > input"
    );
    // The caret points at the access in the windowed line.
    let w = race("DOMNode[19].value");
    let code = if w["first"]["code"].is_null() {
        &w["second"]["code"]
    } else {
        &w["first"]["code"]
    };
    let hit = code["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["line"] == code["line"])
        .unwrap()["text"]
        .as_str()
        .unwrap();
    let caret = code["caret"].as_u64().unwrap() as usize;
    let at: String = hit.chars().skip(caret).take(9).collect();
    assert!(at == "document." || at == "C.value;v", "{at} in {hit}");
}

#[test]
fn html_boxes_show_whole_event_names_and_named_targets() {
    let trace = load(&trace_text());
    let (an, rep) = report(&trace, true);
    let html = report::html::render(&rep, &an, &trace, &sources());
    std::fs::write("/tmp/rn-names.html", &html).unwrap();
    // The kind is never cut (the boxes cut it at 14 characters: `event:selectio`).
    assert!(html.contains(">#5 event:selectionchange</tspan>"), "{html}");
    assert!(html.contains(">fire:selectionchange @ document</tspan>"));
    assert!(html.contains(">fire:click @ #todo-list &gt;</tspan>"));
    assert!(html.contains(">li:nth-child(1) &gt; input</tspan>"));
    // Every line fits its box: box widths follow the longest line.
    for g in html.split("<g><title>").skip(1) {
        let w: usize = g
            .split("width=")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|s| s.parse().ok())
            .unwrap();
        for line in g.split("<tspan").skip(1) {
            let text = line
                .split('>')
                .nth(1)
                .unwrap()
                .split("</tspan")
                .next()
                .unwrap();
            let chars = text
                .replace("&gt;", ">")
                .replace("&amp;", "&")
                .chars()
                .count();
            assert!(chars * 7 + 14 <= w, "{text:?} in a box {w} wide");
        }
    }
    // Locations: the name, then the trace's own name.
    assert!(html.contains(
        "<h3><code>input#coupon.value</code> <span class='muted raw' title='name in the trace'>DOMNode[19].value</span>"
    ));
    assert!(html.contains("<code title='classes: toggle'>"));
    // The minified line around the column, the racing expression marked.
    assert!(html.contains(";;;;;;c=<mark class=at>C.value</mark>;var q=0;"));
    assert!(
        html.contains("var q=0;<mark class=at>document.getElementById</mark>(&quot;coupon&quot;)")
    );
}

#[test]
fn traces_without_descriptions_keep_numbered_names() {
    let old: String = trace_text()
        .lines()
        .filter(|l| !l.starts_with("[\"d\""))
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .replace("\"version\":3", "\"version\":2");
    let trace = load(&old);
    assert!(trace.nodes.is_empty());
    let (_, rep) = report(&trace, false);
    for r in &rep.races {
        assert_eq!(r.location_name, r.location);
        assert!(r.node.is_none());
        for a in [&r.first, &r.second] {
            assert_eq!(a.scope_name, a.scope);
        }
    }
    let text = report::text::render(&rep);
    assert!(
        text.contains("HARMFUL DOMNode[19].value [INITIALIZATION_RACE]\n  reason"),
        "{text}"
    );
    assert!(!text.contains("trace location"));
    // The same races as with descriptions.
    let (_, named) = report(&load(&trace_text()), false);
    let key = |r: &RaceReport| -> Vec<(String, String)> {
        r.races
            .iter()
            .map(|x| (x.location.clone(), x.kind.clone()))
            .collect()
    };
    assert_eq!(key(&rep), key(&named));
}
