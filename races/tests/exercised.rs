//! A trace that carries an exercise's coverage (format 4, `c` records) gets it into every
//! report: which controls the recording reached, and which it never exercised (whose races
//! cannot be in the trace). A trace without it reports nothing about coverage.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use shepherd_races::report::{self, NoSources, RaceReport};
use shepherd_races::{Options, analyze};
use shepherd_trace::{ActionType, Trace, TraceBuilder};

fn trace(with_coverage: bool) -> Trace {
    let mut b = TraceBuilder::new();
    b.page("https://shop.test/");
    b.begin(ActionType::Unknown, "script", "doc/script:0");
    b.write("DOMNode[4].value", Some("\"DE\""));
    b.end();
    b.begin(
        ActionType::UserInterface,
        "event:change",
        "doc/event:change#1",
    );
    b.write("DOMNode[4].value", Some("\"FR\""));
    b.end();
    b.node(4, "select", Some("select#country"), Some("country"), None);
    b.node(7, "select", Some("select#size"), Some("size"), None);
    if with_coverage {
        b.control(4, "key-choose,pointer-choose", "key-choose,pointer-choose");
        b.control(7, "key-choose,pointer-choose", "");
        b.control(9, "click", "");
    }
    b.finish()
}

fn reports(t: &Trace) -> (String, serde_json::Value, String) {
    let an = analyze(t, &Options::default()).unwrap();
    let rep = RaceReport::new(t, &an, false);
    let text = report::text::render(&rep);
    let json: serde_json::Value = serde_json::from_str(&report::json::render(&rep)).unwrap();
    let html = report::html::render(&rep, &an, t, &NoSources);
    (text, json, html)
}

#[test]
fn every_report_says_what_the_exercise_reached() {
    let (text, json, html) = reports(&trace(true));
    assert!(
        text.contains(
            "exercised: 1 of 3 controls; never exercised (their races are not in the trace): select#size, DOMNode[9]\n"
        ),
        "{text}"
    );
    let e = &json["summary"]["exercised"];
    assert_eq!(e["controls"], 3);
    assert_eq!(e["exercised"], 1);
    assert_eq!(e["missed"][0]["name"], "select#size");
    assert_eq!(e["missed"][0]["node"]["id"], "size");
    assert_eq!(
        e["missed"][0]["gestures"],
        serde_json::json!(["key-choose", "pointer-choose"])
    );
    assert_eq!(e["missed"][1]["name"], "DOMNode[9]");
    assert!(e["missed"][1]["node"].is_null());
    assert!(
        html.contains("Exercised: 1 of 3 controls. Never exercised"),
        "{html}"
    );
    assert!(html.contains("<code>select#size</code>"));
    // The races are the same with or without the coverage.
    let (plain_text, plain_json, _) = reports(&trace(false));
    assert!(plain_json["summary"].get("exercised").is_none());
    assert!(!plain_text.contains("exercised:"));
    assert_eq!(json["races"], plain_json["races"]);
}
