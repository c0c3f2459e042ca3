//! The text and HTML reports list a race once when the explorer repeated it: races of one location with
//! the same kind, coverage and source positions of both sides (clicking one button again) are
//! folded into a line naming their ids; races at other positions stay separate.

use shepherd_races::report::{self, RaceReport};
use shepherd_races::{Options, analyze};

#[path = "support/streamed.rs"]
mod streamed;

/// A script defines `f` at app.js:2; the button's handler calls it three times from line 5 of
/// the page and once from line 9 (another handler), all auto-explored, unordered with the script.
const TRACE: &str = r#"{"format":"shepherd-trace","version":2,"page":"https://a.test/"}
["s",0,"script"]
["s",1,"doc/script"]
["s",2,"Global.f"]
["s",3,"Function[1]:f"]
["s",4,"https://a.test/app.js:2:10"]
["s",5,"event:click"]
["s",6,"auto:explore"]
["s",7,"fire:click @ BUTTON[2]"]
["s",8,"https://a.test/#inline-1:5:1"]
["s",9,"https://a.test/#inline-2:9:1"]
["s",10,"doc/ui#1"]
["s",11,"doc/ui#2"]
["s",12,"doc/ui#3"]
["s",13,"doc/ui#4"]
["b",0,0,0,1]
["w",2,3,4]
["n",0]
["b",1,2,5,10]
["e",6]
["x"]
["e",7]
["r",2,null,8]
["x"]
["n",1]
["b",2,2,5,11]
["e",6]
["x"]
["e",7]
["r",2,null,8]
["x"]
["n",2]
["b",3,2,5,12]
["e",6]
["x"]
["e",7]
["r",2,null,9]
["x"]
["n",3]
["b",4,2,5,13]
["e",6]
["x"]
["e",7]
["r",2,null,8]
["x"]
["n",4]
"#;

#[test]
fn repeated_races_are_listed_once() {
    let trace = shepherd_trace::read_jsonl(TRACE.as_bytes()).unwrap();
    let an = analyze(&trace, &Options::default()).unwrap();
    let rep = RaceReport::new(&trace, &an, false);
    assert_eq!(rep.races.len(), 4, "four uncovered races on Global.f");
    let text = report::text::render(&rep);
    assert_eq!(text.matches("  race ").count(), 2, "{text}");
    assert_eq!(text.matches("... and 2 more like it").count(), 1, "{text}");
    assert!(text.contains("#inline-2:9:1"), "{text}");

    // The HTML report draws the repeated race once and lists the repeats under it.
    let all = RaceReport::new(&trace, &an, true);
    let html = report::html::render(&all, &an, &trace, &report::NoSources);
    assert_eq!(html.matches("<div class=race id=").count(), 2, "{html}");
    assert_eq!(html.matches("2 more like race").count(), 1, "{html}");
    assert_eq!(html.matches("<li id=race").count(), 2, "{html}");
}

/// The CLI's streamed text report folds the repeats as `render` does, and shows the explorer's
/// verdict of each race it lists (not of the repeats folded under it).
#[test]
fn streamed_report_folds_repeats_and_shows_verdicts() {
    let trace = shepherd_trace::read_jsonl(TRACE.as_bytes()).unwrap();
    let an = analyze(&trace, &Options::default()).unwrap();
    for all in [false, true] {
        let text = streamed::assert_streams_as_rendered(&trace, &an, all);
        assert_eq!(text.matches("... and 2 more like it").count(), 1, "{text}");
        assert_eq!(text.matches("  race ").count(), 2, "{text}");
        // Two races listed; `verdict` gives a verdict to two ids in three.
        let listed: Vec<usize> = text
            .lines()
            .filter_map(|l| l.strip_prefix("  race "))
            .map(|l| l.split(' ').next().unwrap().parse().unwrap())
            .collect();
        let with_verdict = listed.iter().filter(|&&id| id % 3 != 2).count();
        assert!(with_verdict > 0, "no listed race has a verdict: {text}");
        assert_eq!(
            text.matches("    explored: ").count(),
            with_verdict,
            "{text}"
        );
        for id in listed.iter().filter(|&&id| id % 3 == 0) {
            assert!(
                text.contains(&format!("explored: harmful (reason of race {id})")),
                "{text}"
            );
        }
    }
}
