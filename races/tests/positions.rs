//! Source positions in reports: a trace whose accesses carry positions (`tests/positions/`,
//! a page with an inline script, an external script and an `onclick` handler) gives reports
//! that show each racing access's own line — for inline code, the HTML document's line.
//! `expected.txt` is the exact text report (`UPDATE_FIXTURES=1` rewrites it).

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use shepherd_races::report::{
    self, CodeKind, InlineCode, NoSources, PageSources, RaceReport, ReportPlan,
};
use shepherd_races::{Options, analyze};
use std::collections::HashMap;
use std::path::Path;

/// The inline code of `index.html` as the instrumenter's finder reports it (keys as in
/// `trace.jsonl`); `shepherd_instrument`'s `agrees_with_the_races_report_fixture` test checks
/// the real finder gives exactly this table, so this crate's tests need no HTML scanner.
fn fixture_finder(html: &str) -> Vec<InlineCode> {
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
}

fn fixture() -> (shepherd_trace::Trace, PageSources) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/positions");
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
    (
        trace,
        PageSources::new(texts).with_inline_finder(fixture_finder),
    )
}

#[test]
fn text_report_shows_the_lines_of_both_accesses() {
    let (trace, sources) = fixture();
    let an = analyze(&trace, &Options::default()).unwrap();
    let mut rep = RaceReport::new(&trace, &an, false);
    rep.attach_sources(&sources);
    let text = report::text::render(&rep);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/positions/expected.txt");
    if std::env::var("UPDATE_FIXTURES").is_ok() {
        std::fs::write(&path, &text).unwrap();
    }
    assert_eq!(text, std::fs::read_to_string(&path).unwrap());
    // The CLI streams the same text, one location at a time.
    let mut streamed = Vec::new();
    report::text::write(
        &mut streamed,
        &trace,
        &an,
        &ReportPlan::new(&trace, &an, false),
        &sources,
    )
    .unwrap();
    assert_eq!(String::from_utf8(streamed).unwrap(), text);
    // The handler's read of `init` is on line 11 of index.html, the write in ready() on line 6.
    assert!(
        text.contains("   11 | <button id=\"b\" onclick=\"if (init) show(count);\">go</button>")
    );
    assert!(text.contains("    6 |   function ready() { init = true; }"));
    assert!(text.contains("    4 |   count = count + 1;"));
}

#[test]
fn json_report_has_own_and_scope_positions_and_lines() {
    let (trace, sources) = fixture();
    let an = analyze(&trace, &Options::default()).unwrap();
    let mut rep = RaceReport::new(&trace, &an, false);
    rep.attach_sources(&sources);
    let j: Value = serde_json::from_str(&report::json::render(&rep)).unwrap();
    let init = j["races"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["location"] == "Global.init")
        .unwrap();
    let w = &init["first"];
    assert_eq!(w["access_source"], "https://a.test/#inline-2a609:3:22");
    assert_eq!(w["source"], w["access_source"]);
    assert_eq!(w["scope_source"], "https://a.test/#inline-2a609:3:3");
    assert_eq!(w["code"]["url"], "https://a.test/");
    assert_eq!(w["code"]["line"], 6);
    assert_eq!(w["code"]["col"], 22);
    let r = &init["second"];
    assert_eq!(r["code"]["line"], 11);
    assert_eq!(r["code"]["col"], 29);
    // Without sources, positions only.
    let bare: Value =
        serde_json::from_str(&report::json::render(&RaceReport::new(&trace, &an, false))).unwrap();
    assert!(bare["races"][0]["first"]["code"].is_null());
    assert!(!bare["races"][0]["first"]["source"].is_null());
}

#[test]
fn html_report_marks_the_hit_lines() {
    let (trace, sources) = fixture();
    let an = analyze(&trace, &Options::default()).unwrap();
    let rep = RaceReport::new(&trace, &an, true);
    let html = report::html::render(&rep, &an, &trace, &sources);
    // The hit lines, the accessed name marked at the access's column.
    for hit in [
        "<span class=hit>   11 &lt;button id=&quot;b&quot; onclick=&quot;if (init) show(<mark class=at>count</mark>);&quot;&gt;go&lt;/button&gt;</span>",
        "<span class=hit>   11 &lt;button id=&quot;b&quot; onclick=&quot;if (<mark class=at>init</mark>) show(count);&quot;&gt;go&lt;/button&gt;</span>",
        "<span class=hit>    6   function ready() { <mark class=at>init</mark> = true; }</span>",
        "<span class=hit>    4   <mark class=at>count</mark> = count + 1;</span>",
    ] {
        assert!(html.contains(hit), "{hit}\n{html}");
    }
    // The document position is shown under the inline position.
    assert!(html.contains("<div class='pos muted'>https://a.test/:11:29</div>"));
}

#[test]
fn accesses_without_positions_fall_back_to_their_scope() {
    let mut b = shepherd_trace::TraceBuilder::new();
    b.begin(shepherd_trace::ActionType::Unknown, "script", "a");
    b.enter("script:inline #0", Some("https://a.test/:4:9"));
    b.write("Global.x", Some("1"));
    b.exit();
    b.end();
    b.begin(shepherd_trace::ActionType::Timer, "timer", "b");
    b.read_at("Global.x", None, Some("https://a.test/app.js:2:1"));
    b.end();
    let trace = b.finish();
    let an = analyze(&trace, &Options::default()).unwrap();
    let rep = RaceReport::new(&trace, &an, false);
    let r = &rep.races[0];
    assert_eq!(r.first.source.as_deref(), Some("https://a.test/:4:9"));
    assert_eq!(r.first.access_source, None);
    assert_eq!(
        r.second.source.as_deref(),
        Some("https://a.test/app.js:2:1")
    );
    assert_eq!(r.second.scope_source, None);
    // With sources, the access's own line gets a caret under its column; the enclosing
    // scope's line (where its code starts, not what raced) gets none.
    let mut rep = rep;
    rep.attach_sources(&HashMap::from([
        (
            "https://a.test/".to_owned(),
            "<html>\n<body>\n<p>x</p>\n<script>x = 1;</script>\n".to_owned(),
        ),
        (
            "https://a.test/app.js".to_owned(),
            "// app\nwindow.x;\n".to_owned(),
        ),
    ]));
    let text = report::text::render(&rep);
    assert!(
        text.contains("    4 | <script>x = 1;</script>\n    second:"),
        "{text}"
    );
    assert!(
        text.contains("    2 | window.x;\n                  | ^\n"),
        "{text}"
    );
    let html = report::html::render(&rep, &an, &trace, &NoSources);
    assert!(html.contains("<span class=hit>    4 &lt;script&gt;x = 1;&lt;/script&gt;</span>"));
    assert!(html.contains("<span class=hit>    2 <mark class=at>window.x</mark>;</span>"));
}
