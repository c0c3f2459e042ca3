//! The exerciser fires only at handler elements and never leaves the page.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::Value;
use shepherd_exerciser::{
    ExerciseOptions, ExerciseReport, StopReason, exercise, fire, reset_pointer,
};
use shepherd_testkit::pages::*;
use shepherd_testkit::patience;

const PAGE: &str = r#"<!doctype html>
<style> div, a, button, input { display: block; margin: 8px; height: 30px; width: 200px; } </style>
<body>
<div id="a">A (listener)</div>
<div id="b" onmouseover="window.bOver = (window.bOver || 0) + 1">B (attribute)</div>
<div id="plain">no handlers</div>
<a id="link" href="/away">leave by link</a>
<form action="/submitted"><input id="q" name="q"></form>
<button id="nav" onclick="location.href = '/away2'">leave by script</button>
<button id="pop" onclick="window.open('/popup')">popup</button>
<script>
  window.hits = [];
  document.getElementById('a').addEventListener('click', () => { window.aClicks = (window.aClicks || 0) + 1; });
  document.getElementById('link').addEventListener('click', () => { window.linkClicks = (window.linkClicks || 0) + 1; });
  for (const t of ['mousedown', 'mouseover', 'click'])
    window.addEventListener(t, e => hits.push(t + ':' + (e.target.id || e.target.nodeName)), true);
  document.addEventListener('keydown', e => hits.push('keydown:' + (e.target.id || e.target.nodeName)), true);
</script>"#;

/// [`PAGE`] with the pages its links, form, script and popup lead to.
async fn serve_page() -> Server {
    serve(vec![
        ("/", html(PAGE)),
        ("/away", html("away")),
        ("/away2", html("away2")),
        ("/submitted", html("submitted")),
        ("/popup", html("popup")),
    ])
    .await
}

#[test]
fn exercises_handler_elements_only_and_stays_on_the_page() {
    with_browser(|browser| async move {
        let server = serve_page().await;
        let page = browser.new_page().await.unwrap();
        let url = server.url("/");
        page.navigate(&url).await.unwrap();
        // Same seed, same choices needs the same page state at the start: a page still laying
        // out has elements without a box, which the driver drops (and then picks otherwise).
        let quiet = page
            .wait_quiet(Duration::from_millis(100), patience(Duration::from_secs(5)))
            .await
            .unwrap();
        assert!(quiet.reached, "{quiet:?}");

        // The run must end at its event count: the time limit is only a backstop, generous
        // enough for a loaded machine (it ends at the count, so a long limit costs nothing).
        let opts = ExerciseOptions {
            max_events: 40,
            duration: patience(Duration::from_secs(24)),
            seed: 3,
            ..ExerciseOptions::default()
        };
        let report = exercise(&page, &opts).await.unwrap();
        assert_eq!(report.stopped, StopReason::MaxEvents, "{report:?}");
        assert!(
            report.events.len() <= 40 && report.events.len() > 30,
            "{}",
            report.events.len()
        );

        let allowed: BTreeSet<&str> = [
            "div#a",
            "div#b",
            "a#link",
            "input#q",
            "button#nav",
            "button#pop",
            "page",
        ]
        .into_iter()
        .collect();
        let targets: BTreeSet<&str> = report.events.iter().map(|e| e.target.as_str()).collect();
        assert!(targets.is_subset(&allowed), "{targets:?}");
        assert!(targets.len() >= 5, "too few distinct targets: {targets:?}");
        for (i, e) in report.events.iter().enumerate() {
            assert_eq!(e.seq, i);
        }

        // The page saw the events as trusted input on those elements, never on #plain.
        let hits = page.evaluate("hits").await.unwrap();
        let hits: Vec<&str> = hits
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(hits.iter().any(|h| h.starts_with("click:")), "{hits:?}");
        assert!(!hits.iter().any(|h| h.ends_with(":plain")), "{hits:?}");
        assert!(
            page.evaluate("window.bOver > 0")
                .await
                .unwrap()
                .as_bool()
                .unwrap()
        );

        // Still on the same document; navigations were blocked before reaching the server.
        assert_eq!(page.url().await.unwrap(), url);
        assert!(!report.blocked_navigations.is_empty(), "{report:?}");
        let lines = server.request_lines();
        for path in ["/away ", "/away2 ", "/submitted"] {
            assert!(
                !lines.iter().any(|l| l.contains(path)),
                "{path} reached: {lines:?}"
            );
        }
        // The seed's choices include a click on the popup button; the popup was closed.
        assert!(
            report
                .events
                .iter()
                .any(|e| e.target == "button#pop" && e.event == "click"),
            "{report:?}"
        );
        assert!(!report.closed_popups.is_empty(), "{report:?}");

        // Same seed, same page state: the same choices.
        page.navigate(&url).await.unwrap();
        let quiet = page
            .wait_quiet(Duration::from_millis(100), patience(Duration::from_secs(5)))
            .await
            .unwrap();
        assert!(quiet.reached, "{quiet:?}");
        let again = exercise(&page, &opts).await.unwrap();
        let firsts = |r: &ExerciseReport| {
            r.events
                .iter()
                .map(|e| (e.event.clone(), e.target.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(firsts(&report), firsts(&again));

        // After the exercise, navigation works normally again.
        page.navigate(&server.url("/away")).await.unwrap();
        assert_eq!(page.url().await.unwrap(), server.url("/away"));
    });
}

/// Chromium numbers a node (its backend id) when something first asks for it: autofill as a
/// form field is parsed, other parts of the renderer at moments that depend on timing (a busy
/// machine once had the link numbered before the elements above it), DevTools the rest at the
/// exercise's first scan. Here the first load has its controls numbered last to first before
/// the exercise, the second first to last: the same seed still makes the same choices. Which
/// order a run had is checked on the two buttons, which nothing in the renderer numbers on its
/// own (the link and the field may be numbered early, whatever the test asks).
#[test]
fn the_same_seed_makes_the_same_choices_whatever_order_the_nodes_were_numbered_in() {
    with_browser(|browser| async move {
        let server = serve_page().await;
        let page = browser.new_page().await.unwrap();
        let url = server.url("/");
        let opts = ExerciseOptions {
            max_events: 24,
            // A backstop only: the run ends at its event count.
            duration: patience(Duration::from_secs(24)),
            seed: 3,
            ..ExerciseOptions::default()
        };
        let mut runs = Vec::new();
        for numbered_backwards in [true, false] {
            page.navigate(&url).await.unwrap();
            page.wait_quiet(Duration::from_millis(100), patience(Duration::from_secs(5)))
                .await
                .unwrap();
            let mut ids = ["a", "b", "link", "q", "nav", "pop"];
            if numbered_backwards {
                ids.reverse();
            }
            for id in ids {
                let expression = format!("document.getElementById('{id}')");
                let object = page
                    .call(
                        "Runtime.evaluate",
                        serde_json::json!({ "expression": expression }),
                    )
                    .await
                    .unwrap();
                let object_id = object["result"]["objectId"].as_str().unwrap();
                page.call(
                    "DOM.describeNode",
                    serde_json::json!({ "objectId": object_id }),
                )
                .await
                .unwrap();
            }
            let report = exercise(&page, &opts).await.unwrap();
            assert_eq!(report.stopped, StopReason::MaxEvents, "{report:?}");
            let id = |t: &str| {
                report
                    .controls
                    .iter()
                    .find(|c| c.target == t)
                    .map(|c| c.backend_node_id)
                    .unwrap()
            };
            // The numbering is the one this run is about: backwards, the second button comes
            // before the first.
            assert_eq!(
                id("button#pop") < id("button#nav"),
                numbered_backwards,
                "{:?}",
                report.controls
            );
            // The report lists the controls as the page has them, whatever their numbers.
            let found: Vec<&str> = report.controls.iter().map(|c| c.target.as_str()).collect();
            assert_eq!(
                found,
                [
                    "div#a",
                    "div#b",
                    "a#link",
                    "input#q",
                    "button#nav",
                    "button#pop"
                ]
            );
            runs.push(
                report
                    .events
                    .iter()
                    .map(|e| (e.event.clone(), e.target.clone()))
                    .collect::<Vec<_>>(),
            );
        }
        assert_eq!(runs[0], runs[1]);
    });
}

#[test]
fn time_limit_and_pages_without_handlers() {
    with_browser(|browser| async move {
        let server = serve(vec![
            ("/", html("<p>nothing to do</p>")),
            ("/one", html("<button onclick='1'>x</button>")),
        ])
        .await;
        let page = browser.new_page().await.unwrap();
        page.navigate(&server.url("/")).await.unwrap();
        let report = exercise(&page, &ExerciseOptions::default()).await.unwrap();
        assert_eq!(report.stopped, StopReason::NoCandidates);
        assert!(report.events.is_empty());

        page.navigate(&server.url("/one")).await.unwrap();
        let report = exercise(
            &page,
            &ExerciseOptions {
                duration: Duration::from_millis(800),
                max_events: 100_000,
                ..ExerciseOptions::default()
            },
        )
        .await
        .unwrap();
        assert_eq!(report.stopped, StopReason::Time);
        // The exercise's own time limit ended it (100 000 events would take minutes): the
        // event under way when the limit passed finishes within a second's grace, which a
        // loaded machine stretches, hence the patience factor.
        assert!(
            report.elapsed < patience(Duration::from_secs(3)),
            "{:?}",
            report.elapsed
        );
        assert!(!report.events.is_empty());
    });
}

#[tokio::test]
async fn a_handler_that_never_returns_ends_the_exercise_on_time() {
    // Its own browser: the spinning renderer must not slow the shared one down.
    let browser = launch().await;
    let server = serve(vec![(
        "/",
        html("<button id='x' onclick='for(;;){}' style='width:100px;height:40px'>hang</button>"),
    )])
    .await;
    let page = browser.new_page().await.unwrap();
    page.navigate(&server.url("/")).await.unwrap();
    let start = std::time::Instant::now();
    let report = exercise(
        &page,
        &ExerciseOptions {
            duration: Duration::from_millis(1000),
            ..ExerciseOptions::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(report.stopped, StopReason::Time);
    // The exercise gave up on the stuck click at its own time limit (1 s, plus a second's
    // grace), well before the stuck command would have failed at the command limit (8 s times
    // the patience factor).
    assert!(
        start.elapsed() < page.timeout() * 3 / 4,
        "{:?}",
        start.elapsed()
    );
    // Closing the browser kills the spinning renderer too.
    drop(page);
    browser.close().await.unwrap();
}

const NESTED: &str = r#"<!doctype html><body style="margin:0">
<div id="host"></div>
<iframe id="f" src="/inner" style="position:absolute; top:200px; left:50px; width:300px; height:200px; border:0"></iframe>
<script>
  window.log = [];
  const root = document.getElementById('host').attachShadow({mode: 'open'});
  root.innerHTML = '<button id="shadowed" style="width:120px;height:40px">in shadow</button>';
  root.getElementById('shadowed').addEventListener('click', e => log.push('shadow:' + e.isTrusted));
</script>"#;

const INNER: &str = r#"<!doctype html><body style="margin:0">
<button id="framed" style="margin:60px; width:120px; height:40px">in frame</button>
<script>
  document.getElementById('framed').addEventListener('click', e => parent.log.push('frame:' + e.isTrusted));
</script>"#;

#[test]
fn finds_handlers_in_shadow_roots_and_same_origin_frames() {
    with_browser(|browser| async move {
        let server = serve(vec![("/", html(NESTED)), ("/inner", html(INNER))]).await;
        let page = browser.new_page().await.unwrap();
        page.navigate(&server.url("/")).await.unwrap();
        let report = exercise(
            &page,
            &ExerciseOptions {
                max_events: 40,
                seed: 11,
                ..ExerciseOptions::default()
            },
        )
        .await
        .unwrap();
        let targets: BTreeSet<&str> = report.events.iter().map(|e| e.target.as_str()).collect();
        assert!(targets.contains("button#shadowed"), "{targets:?}");
        assert!(targets.contains("button#framed"), "{targets:?}");
        let log = page.evaluate("log").await.unwrap();
        let log: Vec<&str> = log
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(log.contains(&"shadow:true"), "{log:?}");
        // The click landed inside the frame: quads are in main-frame viewport coordinates.
        assert!(log.contains(&"frame:true"), "{log:?}");
    });
}

const REPLAYABLE: &str = r#"<!doctype html><body style="margin:0">
<style> button, input { display: block; margin: 6px; width: 160px; height: 30px; } </style>
<button id="one">one</button><button id="two" onmouseover="">two</button>
<input id="field" onkeydown="">
<div id="host"></div>
<iframe src="/inner" style="width:300px; height:200px; border:0"></iframe>
<script>
  window.log = [];
  const root = document.getElementById('host').attachShadow({mode: 'open'});
  root.innerHTML = '<button id="shadowed" style="width:120px;height:30px">in shadow</button>';
  root.getElementById('shadowed').addEventListener('click', () => log.push('shadow-click'));
  document.getElementById('one').addEventListener('click', () => log.push('one-click'));
  for (const t of ['mouseover', 'mousedown', 'mouseup', 'click', 'keydown', 'keyup', 'focusin'])
    document.addEventListener(t, e => log.push(t + ':' + (e.target.id || e.target.nodeName) + (e.key ? ':' + e.key : '')), true);
</script>"#;

#[test]
fn a_logged_exercise_replays_identically_on_a_fresh_load() {
    with_browser(|browser| async move {
        let server = serve(vec![("/", html(REPLAYABLE)), ("/inner", html(INNER))]).await;
        let page = browser.new_page().await.unwrap();
        page.navigate(&server.url("/")).await.unwrap();
        let report = exercise(
            &page,
            &ExerciseOptions {
                max_events: 40,
                seed: 9,
                ..ExerciseOptions::default()
            },
        )
        .await
        .unwrap();
        let original = page.evaluate("log").await.unwrap();
        let paths: BTreeSet<&str> = report.events.iter().map(|e| e.path.as_str()).collect();
        assert!(
            paths.iter().any(|p| p.contains("/#shadow/"))
                || paths.iter().any(|p| p.contains("/#document/")),
            "{paths:?}"
        );

        page.navigate(&server.url("/")).await.unwrap();
        reset_pointer(&page).await.unwrap();
        for ev in &report.events {
            fire(&page, ev).await.unwrap();
        }
        let replayed = page.evaluate("log").await.unwrap();
        assert_eq!(original, replayed);
        assert!(original.as_array().unwrap().len() > 10, "{original}");
    });
}

const CLICKABLE: &str = r#"<!doctype html>
<style> a, button, label, summary, div { display: block; margin: 8px; height: 30px; width: 200px; } </style>
<body>
<a id="js" href="javascript:window.jsLinks = (window.jsLinks || 0) + 1; void 0">run code</a>
<a id="plain" href="/away">leave</a>
<form action="/submitted"><button id="send">send</button></form>
<label id="lab"><input type="checkbox" id="cb"> check</label>
<details><summary id="sum">more</summary>inside</details>
<div id="inert">nothing happens here</div>
<script>
  // Page-level listeners only: they make no element a candidate.
  window.submits = 0;
  window.addEventListener('submit', () => { window.submits++; }, true);
  window.addEventListener('change', e => { window.changed = e.target.id; }, true);
</script>"#;

#[test]
fn clicks_links_buttons_and_labels_without_listeners() {
    with_browser(|browser| async move {
        let server = serve(vec![
            ("/", html(CLICKABLE)),
            ("/away", html("away")),
            ("/submitted", html("submitted")),
        ])
        .await;
        let page = browser.new_page().await.unwrap();
        let url = server.url("/");
        page.navigate(&url).await.unwrap();
        let report = exercise(
            &page,
            &ExerciseOptions {
                max_events: 90,
                // A backstop only: the run ends at its event count.
                duration: patience(Duration::from_secs(24)),
                seed: 5,
                ..ExerciseOptions::default()
            },
        )
        .await
        .unwrap();
        let targets: BTreeSet<&str> = report.events.iter().map(|e| e.target.as_str()).collect();
        for t in [
            "a#js",
            "a#plain",
            "button#send",
            "label#lab",
            "input#cb",
            "summary#sum",
        ] {
            assert!(
                targets.contains(t),
                "{t} never clicked: {targets:?}; stopped {:?} after {:?}, navigations {:?}",
                report.stopped,
                report.elapsed,
                report.blocked_navigations
            );
        }
        assert!(!targets.contains("div#inert"), "{targets:?}");
        // The clicks did what a user's would: code ran, a form was submitted, a box toggled.
        let state = page
            .evaluate("[window.jsLinks > 0, window.submits > 0, window.changed === 'cb']")
            .await
            .unwrap();
        assert_eq!(state, serde_json::json!([true, true, true]), "{report:?}");
        // Without leaving the page.
        assert_eq!(page.url().await.unwrap(), url);
        let lines = server.request_lines();
        for path in ["/away ", "/submitted"] {
            assert!(
                !lines.iter().any(|l| l.contains(path)),
                "{path} reached: {lines:?}"
            );
        }
    });
}

const CONTROLS: &str = r#"<!doctype html>
<style> a, button, input, select, textarea, label, div[role] { display: block; margin: 4px; } </style>
<body>
<nav>
  <a id="l1" href="https://partner1.example/">one</a> <a id="l2" href="https://partner2.example/">two</a>
  <a id="l3" href="https://partner3.example/">three</a> <a id="l4" href="https://partner4.example/">four</a>
  <a id="l5" href="https://partner5.example/">five</a> <a id="l6" href="https://partner6.example/">six</a>
  <a id="l7" href="https://partner7.example/">seven</a> <a id="l8" href="https://partner8.example/">eight</a>
  <a id="l9" href="https://partner9.example/">nine</a> <a id="l10" href="https://partner10.example/">ten</a>
  <a id="l11" href="https://partner11.example/">eleven</a> <a id="l12" href="https://partner12.example/">twelve</a>
</nav>
<select id="drop"><option>a</option><option>b</option><option>c</option></select>
<select id="list" size="3"><option>x</option><option>y</option><option>z</option></select>
<input type="checkbox" id="cb"> <input type="radio" name="r" id="r1"> <input type="radio" name="r" id="r2">
<input id="text"> <input id="mail" type="email"> <input id="num" type="number">
<textarea id="area"></textarea> <div id="edit" contenteditable="true">edit me</div>
<input id="range" type="range">
<div id="tab" role="button" tabindex="0">custom button</div>
<div style="position: relative"><button id="under">under an overlay</button>
  <div style="position: absolute; inset: 0; background: white"></div></div>
<button id="off" disabled>disabled</button>
<fieldset disabled><input id="fenced"></fieldset>
<input id="gone" style="display: none"> <input id="invisible" style="visibility: hidden">
<input id="far" style="position: absolute; left: -9999px">
<script>
  window.log = [];
  for (const t of ['mousedown', 'change', 'input', 'keydown'])
    document.addEventListener(t, e => log.push(t + ':' + (e.target.id || e.target.nodeName)), true);
</script>"#;

#[test]
fn every_visible_enabled_control_gets_its_gestures() {
    with_browser(|browser| async move {
        let server = serve(vec![("/", html(CONTROLS))]).await;
        let page = browser.new_page().await.unwrap();
        let url = server.url("/");
        page.navigate(&url).await.unwrap();
        page.wait_quiet(Duration::from_millis(100), patience(Duration::from_secs(5)))
            .await
            .unwrap();
        let report = exercise(
            &page,
            &ExerciseOptions {
                max_events: 1000,
                // A backstop only: the run ends when everything is covered.
                duration: patience(Duration::from_secs(36)),
                seed: 1,
                stop_when_covered: Some(0),
                ..ExerciseOptions::default()
            },
        )
        .await
        .unwrap();
        assert_eq!(report.stopped, StopReason::Covered, "{report:?}");
        let by_target = |t: &str| {
            report
                .controls
                .iter()
                .find(|c| c.target == t)
                .unwrap_or_else(|| panic!("{t} is no control: {:?}", report.controls))
        };
        // Present: the visible, enabled ones; not the disabled, hidden or unreachable ones.
        let targets: BTreeSet<&str> = report.controls.iter().map(|c| c.target.as_str()).collect();
        for absent in [
            "button#off",
            "input#fenced",
            "input#gone",
            "input#invisible",
            "input#far",
        ] {
            assert!(!targets.contains(absent), "{absent} counted: {targets:?}");
        }
        assert_eq!(report.controls.len(), 25, "{targets:?}");
        // Each control gets what a user does to its kind.
        let offered = |t: &str| by_target(t).offered.clone();
        assert_eq!(offered("a#l1"), vec!["click", "key-activate"]);
        assert_eq!(offered("select#drop"), vec!["key-choose", "pointer-choose"]);
        assert_eq!(offered("input#cb"), vec!["click", "key-toggle"]);
        assert_eq!(offered("input#mail"), vec!["type"]);
        assert_eq!(offered("div#edit"), vec!["type"]);
        assert_eq!(offered("input#range"), vec!["click", "keys"]);
        assert_eq!(offered("div#tab"), vec!["click", "key-activate"]);
        // Everything got every gesture, except the covered button's click.
        for c in &report.controls {
            if c.target == "button#under" {
                assert_eq!(c.done, vec!["key-activate"], "{c:?}");
            } else {
                assert_eq!(c.done, c.offered, "{c:?}");
            }
        }
        assert_eq!(report.coverage(), (25, 25));
        // The page saw it: every link pressed, both selects changed by keyboard and pointer,
        // the checkbox toggled by Space, typing in the e-mail field.
        let log = page.evaluate("log").await.unwrap();
        let log: Vec<&str> = log
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        for i in 1..=12 {
            assert!(log.contains(&format!("mousedown:l{i}").as_str()), "{log:?}");
        }
        for want in [
            "change:drop",
            "change:list",
            "change:cb",
            "input:mail",
            "change:range",
        ] {
            assert!(log.contains(&want), "{want}: {log:?}");
        }
        assert!(
            !log.contains(&"mousedown:under"),
            "clicked through the overlay: {log:?}"
        );
        // Without leaving the page.
        assert_eq!(page.url().await.unwrap(), url);
        assert!(report.blocked_navigations.len() >= 12, "{report:?}");
    });
}

#[test]
fn controls_nothing_was_done_to_come_first() {
    with_browser(|browser| async move {
        let server = serve(vec![("/", html(CONTROLS))]).await;
        let page = browser.new_page().await.unwrap();
        page.navigate(&server.url("/")).await.unwrap();
        page.wait_quiet(Duration::from_millis(100), patience(Duration::from_secs(5)))
            .await
            .unwrap();
        let report = exercise(
            &page,
            &ExerciseOptions {
                max_events: 120,
                // A backstop only: the run ends at its event count.
                duration: patience(Duration::from_secs(24)),
                seed: 4,
                ..ExerciseOptions::default()
            },
        )
        .await
        .unwrap();
        // A gesture's entries share their start time; the first gestures go to as many
        // different controls (an option of the list box counts as the list box).
        let mut firsts: Vec<(u64, String)> = Vec::new();
        for e in &report.events {
            if firsts.last().is_none_or(|(at, _)| *at != e.at_ms) {
                let t = if e.target.starts_with("option") {
                    "select#list".to_string()
                } else {
                    e.target.clone()
                };
                firsts.push((e.at_ms, t));
            }
        }
        let n = 20.min(firsts.len());
        let distinct: BTreeSet<&str> = firsts[..n].iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(distinct.len(), n, "{firsts:?}");
    });
}

/// Two buttons whose handlers also listen to the pointer's arrival: a hover is one of their
/// gestures, but not the first.
const HOVERABLE: &str = r#"<!doctype html>
<input type="button" id="b1" value="one"> <input type="button" id="b2" value="two">
<script>
  window.clicks = [];
  for (const id of ['b1', 'b2']) {
    const b = document.getElementById(id);
    b.addEventListener('click', () => clicks.push(id));
    b.addEventListener('mouseover', () => {});
  }
</script>"#;

#[test]
fn a_controls_first_gesture_is_what_its_kind_gets_first() {
    with_browser(|browser| async move {
        let server = serve(vec![("/", html(HOVERABLE))]).await;
        let page = browser.new_page().await.unwrap();
        page.navigate(&server.url("/")).await.unwrap();
        page.wait_quiet(Duration::from_millis(100), patience(Duration::from_secs(5)))
            .await
            .unwrap();
        // Room for two clicks (three entries each) and nothing else: a hover first would
        // leave one button unclicked.
        let report = exercise(
            &page,
            &ExerciseOptions {
                max_events: 6,
                // A backstop only: the run ends at its event count.
                duration: patience(Duration::from_secs(12)),
                seed: 2,
                ..ExerciseOptions::default()
            },
        )
        .await
        .unwrap();
        let clicks = page.evaluate("clicks.slice().sort()").await.unwrap();
        assert_eq!(clicks, serde_json::json!(["b1", "b2"]), "{report:?}");
    });
}
