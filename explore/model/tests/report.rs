//! The explore report of a fixed outcome, against golden files: every kind of answer (a
//! harmful probe with its witness, a harmless one that settles by itself, a repeat, races not
//! explored for several reasons, one answered by the reorder phase), deeper reversals, a
//! disabled event, source snippets and a screenshot; the reader reads them back as the
//! writer's value.
//!
//! `UPDATE_GOLDEN=1 cargo test -p shepherd-explore-model --test report` rewrites them.

use shepherd_explore_model::execution::Execution;
use shepherd_explore_model::observation::Checkpoint;
use shepherd_explore_model::outcome::{
    Cause, OriginNote, Outcome, PairRaces, ProbeOutcome, ProbeResult, ProbeRole, RunRecord,
    StepRace,
};
use shepherd_explore_model::report::{self, ExploreReport};
use shepherd_explore_model::site::Site;
use shepherd_explore_model::snapshot::Snapshot;
use shepherd_explore_model::steps::{AccessNote, RaceNote};
use shepherd_explore_model::triage::{
    Answer, Probe, ProbeKind, Side, Target, Triage, Unexplored, Window,
};
use shepherd_explore_model::verdict::{self, Class, Difference, Judgement, Rule, Verdict};
use shepherd_explore_model::{Ev, EventTable, Explorer};
use shepherd_races::report::SourceProvider;
use shepherd_trace::TraceBuilder;
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `app.js`, known; anything else, not.
struct Sources;

impl SourceProvider for Sources {
    fn source(&self, url: &str) -> Option<Cow<'_, str>> {
        (url == "https://a.test/app.js").then_some(Cow::Borrowed(
            "var show = false;\nfunction go() {\n  show = true;\n  render(show);\n}\n",
        ))
    }

    /// The browser reports positions in the instrumented code (one long line after the
    /// marker); the one exception of the fixture is there.
    fn original(&self, pos: &str) -> Option<String> {
        (pos == "https://a.test/app.js:2:140").then(|| "https://a.test/app.js:4:3".to_string())
    }
}

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn access(stable: &str, access: &str, source: Option<&str>, scope: Option<&str>) -> AccessNote {
    AccessNote {
        stable: stable.into(),
        access: access.into(),
        source: source.map(str::to_string),
        scope: scope.map(str::to_string),
    }
}

fn race(location: &str, kind: &str, first: AccessNote, second: AccessNote) -> RaceNote {
    RaceNote {
        location: location.into(),
        kind: kind.into(),
        first,
        second,
    }
}

fn snapshot(dom: &str, exceptions: &[&str], requests: &[&str]) -> Snapshot {
    Snapshot {
        dom: dom.into(),
        exceptions: exceptions.iter().map(|s| s.to_string()).collect(),
        requests: requests.iter().map(|s| s.to_string()).collect(),
        ..Snapshot::default()
    }
}

fn run(id: u32, depth: u32, steps: &[&str], snapshot: Snapshot) -> RunRecord {
    RunRecord {
        probe: None,
        checkpoint: None,
        inert: Vec::new(),
        id,
        depth,
        origin: None,
        steps: steps.iter().map(|s| s.to_string()).collect(),
        skipped: Vec::new(),
        diverged: false,
        stopped: None,
        elapsed_ms: 900 + u64::from(id),
        snapshot,
        screenshot: None,
        pairs: Vec::new(),
        uncovered: Vec::new(),
        racing_pairs: 0,
        enablers: Vec::new(),
        verdict: None,
    }
}

fn outcome(policy: Option<&str>) -> Outcome {
    let show = race(
        "Global.show",
        "READ-WRITE",
        access(
            "doc/event:click@#go#1",
            "READ",
            Some("https://a.test/app.js:4:10"),
            Some("fire:click @ BUTTON[7]"),
        ),
        access(
            "doc/script@https://a.test/app.js#1",
            "WRITE",
            Some("https://a.test/app.js:3:3"),
            None,
        ),
    );
    let slot = race(
        "BUTTON[7].onclick",
        "WRITE-READ",
        access(
            "doc/parse#1",
            "WRITE",
            Some("https://a.test/#inline-1:1:2"),
            None,
        ),
        access("doc/event:click@#go#1", "READ", None, Some("fire:click")),
    );
    let same = race(
        "Global.count",
        "WRITE-WRITE",
        access("doc/timer#1", "WRITE", None, None),
        access("doc/timer#1", "WRITE", None, None),
    );
    let users = race(
        "INPUT[3].value",
        "WRITE-READ",
        access("doc/event:input@#q#1", "WRITE", None, None),
        access("doc/event:click@#go#1", "READ", None, None),
    );
    let covered = race(
        "Global.ready",
        "WRITE-READ",
        access("doc/script#1", "WRITE", None, None),
        access("doc/timer#2", "READ", None, None),
    );
    let later = race(
        "Global.later",
        "READ-WRITE",
        access("doc/timer#1", "READ", None, None),
        access(
            "doc/timer#2",
            "WRITE",
            Some("https://a.test/other.js:1:1"),
            None,
        ),
    );
    let deep = race(
        "Global.deep",
        "WRITE-WRITE",
        access("doc/timer#1", "WRITE", None, None),
        access("doc/timer#2", "WRITE", None, None),
    );
    let steps0 = [
        "chunk:https://a.test/#0",
        "net:https://a.test/app.js#1",
        "cb:doc/timer#1",
        "user:0",
        "user:1",
        "cb:doc/timer#2",
    ];
    let mut r0 = run(
        0,
        0,
        &steps0,
        snapshot(
            "<html>\n  <p>\n    \"shown\"",
            &[],
            &["https://a.test/", "https://a.test/app.js"],
        ),
    );
    r0.screenshot = Some("0.png".into());
    r0.racing_pairs = 7;
    r0.pairs = vec![
        PairRaces {
            first: 1,
            second: 3,
            races: vec![show.clone()],
        },
        PairRaces {
            first: 0,
            second: 3,
            races: vec![slot.clone()],
        },
        PairRaces {
            first: 1,
            second: 5,
            races: vec![covered.clone()],
        },
    ];
    r0.uncovered = vec![
        StepRace {
            first: 1,
            second: 3,
            race: show.clone(),
        },
        StepRace {
            first: 0,
            second: 3,
            race: slot.clone(),
        },
        StepRace {
            first: 2,
            second: 2,
            race: same,
        },
        StepRace {
            first: 3,
            second: 4,
            race: users,
        },
        StepRace {
            first: 1,
            second: 5,
            race: covered.clone(),
        },
        StepRace {
            first: 2,
            second: 5,
            race: later,
        },
    ];
    // The harmful reversal of `show`.
    let mut r1 = run(
        1,
        1,
        &[
            "chunk:https://a.test/#0",
            "user:0",
            "net:https://a.test/app.js#1",
        ],
        snapshot(
            "<html>\n  <p>\n    \"idle\"",
            &["ReferenceError: render is not defined @ https://a.test/app.js:2:140"],
            &[
                "https://a.test/",
                "https://a.test/app.js",
                "https://a.test/favicon.ico",
            ],
        ),
    );
    r1.origin = Some(OriginNote {
        parent: 0,
        kind: Cause::Reversal,
        steps: (1, 3),
        events: ("net:https://a.test/app.js#1".into(), "user:0".into()),
        posts: None,
        // It also reverses a race the recording does not list (the click reads the argument
        // of the call that throws): the harm is `show`'s, so that race is not listed deeper.
        races: vec![
            show,
            race(
                "Global.arg",
                "READ-WRITE",
                access("doc/event:click@#go#1", "READ", None, None),
                access("doc/script@https://a.test/app.js#1", "WRITE", None, None),
            ),
        ],
    });
    r1.screenshot = Some("1.png".into());
    r1.skipped = vec!["cb:doc/timer#1".into()];
    r1.verdict = Some(verdict::judge(&r0.snapshot, &r1.snapshot, &[]));
    // The harmless reversal of the handler slot.
    let mut r2 = run(2, 1, &steps0, r0.snapshot.clone());
    r2.origin = Some(OriginNote {
        parent: 0,
        kind: Cause::Reversal,
        steps: (0, 3),
        events: ("chunk:https://a.test/#0".into(), "user:0".into()),
        posts: Some((4, 5)),
        races: vec![slot],
    });
    r2.verdict = Some(Verdict {
        verdict: Judgement::Harmless,
        class: Class::ApproximatelyEquivalent,
        reason: "late attachment of an event handler".into(),
        differences: vec![Difference::Dom],
    });
    // A deeper reversal, below the harmful one. It also runs the recording's race on `ready`
    // the other way, which triage left unanswered: that race takes its verdict.
    let mut r3 = run(3, 2, &steps0, r0.snapshot.clone());
    r3.origin = Some(OriginNote {
        parent: 1,
        kind: Cause::Reversal,
        steps: (2, 5),
        events: ("cb:doc/timer#1".into(), "cb:doc/timer#2".into()),
        posts: None,
        races: vec![deep, covered],
    });
    r3.verdict = Some(Verdict {
        verdict: Judgement::Harmless,
        class: Class::Equivalent,
        reason: "equivalent".into(),
        differences: Vec::new(),
    });
    // A disabled event run first: harmful, with a witness.
    let mut r4 = run(
        4,
        1,
        &steps0,
        snapshot("<html>\n  <p>\n    \"gone\"", &[], &["https://a.test/"]),
    );
    r4.origin = Some(OriginNote {
        parent: 0,
        kind: Cause::Disabled,
        steps: (2, 2),
        events: ("cb:doc/timer#1".into(), "cb:doc/timer#2".into()),
        posts: None,
        races: Vec::new(),
    });
    r4.verdict = Some(verdict::judge(&r0.snapshot, &r4.snapshot, &[]));
    // A disabled event with no verdict (its parent was missing).
    let mut r5 = run(5, 1, &steps0, Snapshot::default());
    r5.origin = Some(OriginNote {
        parent: 9,
        kind: Cause::Disabled,
        steps: (3, 3),
        events: ("user:0".into(), "cb:doc/timer#3".into()),
        posts: None,
        races: Vec::new(),
    });
    let mut trace = TraceBuilder::new();
    trace.begin(shepherd_trace::ActionType::Timer, "timer", "doc/timer#1");
    trace.end();
    let site = Site::from_trace(
        PathBuf::from("site.rec"),
        "https://a.test/".into(),
        trace.finish(),
    );
    // One recorded execution, so the explorer has an enabled fraction to report.
    let mut explorer = Explorer::new(1);
    let exec = Execution {
        events: vec![Ev(0), Ev(1)],
        enabled: vec![vec![Ev(0), Ev(1), Ev(2)], vec![Ev(1)], vec![]],
        hb: vec![vec![], vec![]],
        dep: vec![vec![], vec![0]],
        user: vec![false, false],
        fifo: vec![None, None],
    };
    explorer.record(&exec, None);
    // Triage: the probes' runs (a reference and the other order each).
    let side = |stable: &str, access: &str, source: Option<&str>| Side {
        stable: stable.into(),
        access: access.into(),
        source: source.map(str::to_string),
        scope: None,
    };
    let target = |location: &str,
                  name: &str,
                  kind: &str,
                  first: Side,
                  second: Side,
                  answer: Answer,
                  steps| Target {
        location: location.into(),
        location_name: name.into(),
        kind: kind.into(),
        first,
        second,
        level: "uncovered".into(),
        tags: Vec::new(),
        answer,
        steps,
        covered: false,
    };
    let targets = vec![
        target(
            "Global.show",
            "Global.show",
            "READ-WRITE",
            side(
                "doc/event:click@#go#1",
                "READ",
                Some("https://a.test/app.js:4:10"),
            ),
            side(
                "doc/script@https://a.test/app.js#1",
                "WRITE",
                Some("https://a.test/app.js:3:3"),
            ),
            Answer::Probe { id: 0 },
            Some((1, 3)),
        ),
        target(
            "Global.show",
            "Global.show",
            "READ-WRITE",
            side(
                "doc/event:click@#go#2",
                "READ",
                Some("https://a.test/app.js:4:10"),
            ),
            side(
                "doc/script@https://a.test/app.js#1",
                "WRITE",
                Some("https://a.test/app.js:3:3"),
            ),
            Answer::RepeatOf { race: 0 },
            None,
        ),
        target(
            "DOMNode[4].childList",
            "output#count.childList",
            "WRITE-WRITE",
            side("doc/timer#1", "WRITE", None),
            side("doc/xhr#1", "WRITE", None),
            Answer::Probe { id: 1 },
            Some((2, 4)),
        ),
        target(
            "INPUT[3].value",
            "input#q.value",
            "WRITE-READ",
            side("doc/event:input@#q#1", "WRITE", None),
            side("doc/event:click@#go#1", "READ", None),
            Answer::Unexplored(Unexplored::TwoUserEvents),
            Some((3, 4)),
        ),
        target(
            "BUTTON[7].onclick",
            "button#go.onclick",
            "WRITE-READ",
            side("doc/parse#1", "WRITE", Some("https://a.test/#inline-1:1:2")),
            Side {
                scope: Some("fire:click".into()),
                ..side("doc/event:click@#go#1", "READ", None)
            },
            Answer::Unexplored(Unexplored::NeverEarlier {
                event: "user:0".into(),
            }),
            Some((0, 3)),
        ),
        target(
            "Global.ready",
            "Global.ready",
            "WRITE-READ",
            side("doc/script#1", "WRITE", None),
            side("doc/timer#2", "READ", None),
            Answer::Unexplored(Unexplored::Ordered {
                why: "net:https://a.test/app.js#1 happens before cb:doc/timer#2".into(),
            }),
            Some((1, 5)),
        ),
    ];
    // Covered races: one a harmful probe of its own answers (shown), another of the same
    // probe (folded into the first: `also_at`), one that shares the uncovered race's probe
    // (its harm is that race's: not shown), one not probed (not shown).
    let covered = vec![
        Target {
            covered: true,
            ..target(
                "Global.ready",
                "Global.ready",
                "WRITE-READ",
                side("doc/script@https://a.test/app.js#1", "WRITE", None),
                side("doc/event:click@#go#1", "READ", None),
                Answer::Probe { id: 2 },
                Some((1, 3)),
            )
        },
        Target {
            covered: true,
            ..target(
                "Object[7].handlers",
                "Object[7].handlers",
                "WRITE-READ",
                side("doc/script@https://a.test/app.js#1", "WRITE", None),
                side("doc/event:click@#go#1", "READ", None),
                Answer::Probe { id: 2 },
                Some((1, 3)),
            )
        },
        Target {
            covered: true,
            ..target(
                "Global.flag",
                "Global.flag",
                "WRITE-READ",
                side("doc/script@https://a.test/app.js#1", "WRITE", None),
                side("doc/event:click@#go#1", "READ", None),
                Answer::Probe { id: 0 },
                Some((1, 3)),
            )
        },
        Target {
            covered: true,
            ..target(
                "Global.later",
                "Global.later",
                "WRITE-READ",
                side("doc/timer#1", "WRITE", None),
                side("doc/xhr#1", "READ", None),
                Answer::Unexplored(Unexplored::Budget),
                Some((2, 4)),
            )
        },
    ];
    let probes = vec![
        Probe {
            id: 0,
            steps: (1, 3),
            prefix: vec!["chunk:https://a.test/#0".into()],
            needs: Vec::new(),
            moved: vec!["user:0".into()],
            delayed: vec!["net:https://a.test/app.js#1".into()],
            window: Window::Network {
                what: "https://a.test/app.js".into(),
            },
            kind: ProbeKind::Race,
        },
        Probe {
            id: 1,
            steps: (2, 4),
            prefix: vec!["chunk:https://a.test/#0".into()],
            needs: vec!["net:https://a.test/count#1".into()],
            moved: vec!["cb:doc/xhr#1".into()],
            delayed: vec!["cb:doc/timer#1".into()],
            window: Window::Timer {
                delay_ms: Some(200),
            },
            kind: ProbeKind::Race,
        },
    ];
    // The covered race's own probe: the same moves as probe 0, planned for it.
    let probes = {
        let mut probes = probes;
        let own = Probe {
            id: 2,
            ..probes[0].clone()
        };
        probes.push(own);
        probes
    };
    let probe_run = |id: u32, role: ProbeRole, steps: &[&str], snap: Snapshot, early: &str| {
        let mut r = run(id, u32::from(!role.reference), steps, snap);
        r.probe = Some(role);
        r.checkpoint = Some(Checkpoint {
            step: 2,
            visible: early.into(),
        });
        r
    };
    let mut shown = snapshot(
        "<html>\n  <p>\n    \"shown\"",
        &[],
        &["GET https://a.test/"],
    );
    shown.visible = "title \"a\"\n\"shown\"".into();
    let mut idle = snapshot(
        "<html>\n  <p>\n    \"idle\"",
        &["Uncaught ReferenceError: render is not defined @ https://a.test/app.js:2:140"],
        &["GET https://a.test/"],
    );
    idle.visible = "title \"a\"\n\"idle\"".into();
    let mut r6 = probe_run(
        6,
        ProbeRole {
            probe: 0,
            reference: true,
        },
        &[
            "chunk:https://a.test/#0",
            "net:https://a.test/app.js#1",
            "user:0",
        ],
        shown.clone(),
        "title \"a\"\n\"shown\"",
    );
    r6.screenshot = Some("0.png".into());
    let mut r7 = probe_run(
        7,
        ProbeRole {
            probe: 0,
            reference: false,
        },
        &[
            "chunk:https://a.test/#0",
            "user:0",
            "net:https://a.test/app.js#1",
        ],
        idle.clone(),
        "title \"a\"\n\"idle\"",
    );
    r7.screenshot = Some("1.png".into());
    let r8 = probe_run(
        8,
        ProbeRole {
            probe: 1,
            reference: true,
        },
        &[
            "chunk:https://a.test/#0",
            "cb:doc/timer#1",
            "net:https://a.test/count#1",
            "cb:doc/xhr#1",
        ],
        shown.clone(),
        "title \"a\"\n\"1\"",
    );
    let r9 = probe_run(
        9,
        ProbeRole {
            probe: 1,
            reference: false,
        },
        &[
            "chunk:https://a.test/#0",
            "net:https://a.test/count#1",
            "cb:doc/xhr#1",
            "cb:doc/timer#1",
        ],
        shown.clone(),
        "title \"a\"\n\"2\"",
    );
    let judged = |a: &RunRecord, b: &RunRecord, user| {
        let early = match (&a.checkpoint, &b.checkpoint) {
            (Some(x), Some(y)) => Some((x.visible.as_str(), y.visible.as_str())),
            _ => None,
        };
        ProbeOutcome::Judged(verdict::judge_settled(
            &a.snapshot,
            &b.snapshot,
            early,
            user,
            false,
            &[],
        ))
    };
    let results = vec![
        ProbeResult {
            probe: 0,
            reference: Some(6),
            run: Some(7),
            outcome: judged(&r6, &r7, true),
            orders: Vec::new(),
        },
        ProbeResult {
            probe: 1,
            reference: Some(8),
            run: Some(9),
            outcome: judged(&r8, &r9, false),
            orders: Vec::new(),
        },
        ProbeResult {
            probe: 2,
            reference: Some(6),
            run: Some(7),
            outcome: judged(&r6, &r7, true),
            orders: Vec::new(),
        },
    ];
    Outcome {
        triage: Triage {
            targets,
            covered,
            probes,
        },
        probes: results,
        site,
        runs: vec![r0, r1, r2, r3, r4, r5, r6, r7, r8, r9],
        explorer,
        table: EventTable::default(),
        complete: policy.is_none(),
        failures: 2,
        elapsed: Duration::from_millis(12_345),
        state_dir: data().join("state"),
        policy: policy.map(str::to_string),
    }
}

/// The report with the machine's path to the test data blanked.
fn reports(out: &Outcome) -> (String, String) {
    let json = serde_json::to_string_pretty(&report::build(out, 1, &Sources))
        .unwrap_or_else(|e| panic!("serialising: {e}"));
    let html = report::html(&report::build(out, 1, &Sources));
    let dir = data().display().to_string();
    (json.replace(&dir, "$DATA"), html.replace(&dir, "$DATA"))
}

fn golden(name: &str, got: &str) {
    let path = data().join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, got).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    assert!(
        got == want,
        "{name} differs from the golden file; got:\n{got}"
    );
}

#[test]
fn the_report_keeps_its_bytes() {
    let (json, html) = reports(&outcome(None));
    golden("report.json", &json);
    golden("report.html", &html);
    let (json, html) = reports(&outcome(Some("init-user")));
    golden("report-policy.json", &json);
    golden("report-policy.html", &html);
}

#[test]
fn an_empty_outcome_reports_nothing() {
    let mut out = outcome(None);
    out.runs.clear();
    out.triage = Triage::default();
    out.probes.clear();
    out.explorer = Explorer::new(1);
    let (json, html) = reports(&out);
    golden("report-empty.json", &json);
    golden("report-empty.html", &html);
}

#[test]
fn the_reader_reads_what_the_writer_wrote() {
    for policy in [None, Some("init-user")] {
        let out = outcome(policy);
        let written = report::build(&out, 1, &Sources);
        let bytes = serde_json::to_vec(&written).unwrap_or_else(|e| panic!("{e}"));
        let read = ExploreReport::from_slice(&bytes, Path::new("x.json"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read, written);
    }
    let golden = data().join("report.json");
    let read = ExploreReport::read(&golden).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(read.summary.harmful, 2);
    assert_eq!(read.disabled[0].verdict, report::RaceVerdict::Harmful);
    assert_eq!(read.races[0].verdict, report::RaceVerdict::Harmful);
}

/// An older-target probe (the gesture moved before the step that made its target, onto the
/// element at its place then): found harmful, the races its own run reversed are one finding
/// in `deeper`, with the probe's verdict and the place, a race of the page's code standing for
/// the others; found harmless, nothing is listed.
#[test]
fn an_older_target_probe_lists_the_races_its_run_reversed() {
    for harmful in [true, false] {
        let mut out = outcome(None);
        out.site.gestures = vec![shepherd_explore_model::gesture::Gesture {
            kind: shepherd_explore_model::gesture::GestureKind::Click,
            path: "#container>button:0".into(),
            actions: Vec::new(),
            aim: Default::default(),
            focuses: false,
        }];
        let id = out.triage.probes.len() as u32;
        out.triage.probes.push(Probe {
            id,
            steps: (1, 2),
            prefix: vec!["chunk:https://a.test/#0".into()],
            needs: Vec::new(),
            moved: vec!["user:0".into()],
            delayed: vec!["net:https://a.test/g2.json#1".into()],
            window: Window::Network {
                what: "https://a.test/g2.json".into(),
            },
            kind: ProbeKind::OlderTarget,
        });
        let n = out.runs.len() as u32;
        let reference = run(
            n,
            0,
            &[
                "chunk:https://a.test/#0",
                "net:https://a.test/g2.json#1",
                "user:0",
            ],
            snapshot("<html>\n  <p>\n    \"deleted 21\"", &[], &[]),
        );
        let thrown = [
            "Uncaught TypeError: Cannot read properties of undefined @ https://a.test/app.js:29:12",
        ];
        let mut moved = run(
            n + 1,
            1,
            &[
                "chunk:https://a.test/#0",
                "user:0",
                "net:https://a.test/g2.json#1",
            ],
            if harmful {
                snapshot("<html>\n  <p>", &thrown, &[])
            } else {
                reference.snapshot.clone()
            },
        );
        moved.probe = Some(ProbeRole {
            probe: id,
            reference: false,
        });
        moved.pairs = vec![PairRaces {
            first: 1,
            second: 2,
            races: vec![race(
                "Global.thumbs",
                "READ-WRITE",
                access(
                    "doc/event:click@#container>button:0#1",
                    "READ",
                    Some("https://a.test/app.js:29:12"),
                    None,
                ),
                access(
                    "doc/event:click@#g2#1/xhr#1",
                    "WRITE",
                    Some("https://a.test/app.js:7:7"),
                    None,
                ),
            )],
        }];
        // The focus moved with the click and left with the replaced button: a race of the
        // same two events that no code of the page made, listed first by the run.
        moved.pairs[0].races.insert(
            0,
            race(
                "Document[1].activeElement",
                "WRITE-WRITE",
                access("doc/event:click@#container>button:0#1", "WRITE", None, None),
                access("doc/event:click@#g2#1/xhr#1", "WRITE", None, None),
            ),
        );
        let outcome = ProbeOutcome::Judged(verdict::judge_settled(
            &reference.snapshot,
            &moved.snapshot,
            None,
            true,
            false,
            &[],
        ));
        out.probes.push(ProbeResult {
            probe: id,
            reference: Some(n),
            run: Some(n + 1),
            outcome,
            orders: Vec::new(),
        });
        out.runs.push(reference);
        out.runs.push(moved);
        let doc = report::build(&out, 1, &Sources);
        let listed: Vec<_> = doc
            .deeper
            .iter()
            .filter(|r| r.location == "Global.thumbs" || r.location.contains("activeElement"))
            .collect();
        if !harmful {
            assert!(
                listed.is_empty(),
                "a harmless probe lists nothing: {listed:?}"
            );
            continue;
        }
        // One finding: the race the page's code made stands for the pair, naming the other.
        assert_eq!(listed.len(), 1, "{:?}", doc.deeper);
        let e = listed[0];
        assert_eq!(e.location, "Global.thumbs");
        assert_eq!(e.also_at, vec!["Document[1].activeElement".to_string()]);
        assert_eq!(e.verdict, report::RaceVerdict::Harmful);
        assert!(
            e.reason.contains("older element") && e.reason.contains("#container>button:0"),
            "{}",
            e.reason
        );
    }
}

/// Deeper reversals reach the same code many times (another click of the same button, reversed
/// with the same handler), and which pair a run reaches first depends on the run: a harmful
/// reversal that runs a race of code already found harmful is that race's harm (the other
/// location it reverses with it is not listed), and one race of code reversed twice is one
/// entry, with the harmful answer whichever run came first.
#[test]
fn deeper_reversals_list_each_race_of_the_code_once() {
    let mut out = outcome(None);
    let n = out.runs.len() as u32;
    let harmful = |reason: &str| Verdict {
        verdict: Judgement::Harmful,
        class: Class::Different,
        reason: reason.into(),
        differences: vec![Difference::Dom],
    };
    let reversal = |id: u32, events: (&str, &str), races: Vec<RaceNote>, verdict: Verdict| {
        let mut r = run(id, 2, &["chunk:https://a.test/#0"], Snapshot::default());
        r.origin = Some(OriginNote {
            parent: 0,
            kind: Cause::Reversal,
            steps: (1, 4),
            events: (events.0.into(), events.1.into()),
            posts: None,
            races,
        });
        r.verdict = Some(verdict);
        r
    };
    // `show` again, with a later click of the same button, and its argument read along.
    let show_again = race(
        "Global.show",
        "READ-WRITE",
        access(
            "doc/event:click@#go#3",
            "READ",
            Some("https://a.test/app.js:4:10"),
            Some("fire:click @ BUTTON[7]"),
        ),
        access(
            "doc/script@https://a.test/app.js#1",
            "WRITE",
            Some("https://a.test/app.js:3:3"),
            None,
        ),
    );
    let mode = |click: &str| {
        race(
            "Object[13].mode",
            "WRITE-READ",
            access(
                "doc/script@https://a.test/app.js#1",
                "WRITE",
                Some("https://a.test/app.js:1:5"),
                None,
            ),
            access(click, "READ", Some("https://a.test/app.js:4:16"), None),
        )
    };
    out.runs.push(reversal(
        n,
        ("net:https://a.test/app.js#1", "user:2"),
        vec![show_again, mode("doc/event:click@#go#3")],
        harmful("the other order throws an uncaught exception"),
    ));
    // A race of code reversed harmlessly first, harmfully by a later run of another click.
    let twice = |click: &str| {
        race(
            "Global.twice",
            "WRITE-WRITE",
            access(click, "WRITE", Some("https://a.test/app.js:2:1"), None),
            access(
                "doc/timer#2",
                "WRITE",
                Some("https://a.test/other.js:1:1"),
                None,
            ),
        )
    };
    out.runs.push(reversal(
        n + 1,
        ("user:1", "cb:doc/timer#2"),
        vec![twice("doc/event:click@#go#1")],
        Verdict {
            verdict: Judgement::Harmless,
            class: Class::Equivalent,
            reason: "equivalent".into(),
            differences: Vec::new(),
        },
    ));
    out.runs.push(reversal(
        n + 2,
        ("user:2", "cb:doc/timer#2"),
        vec![twice("doc/event:click@#go#2")],
        harmful("the user sees something else"),
    ));
    let doc = report::build(&out, 1, &Sources);
    let at = |location: &str| -> Vec<_> {
        doc.deeper
            .iter()
            .filter(|r| r.location == location)
            .collect()
    };
    assert!(at("Global.show").is_empty(), "{:?}", doc.deeper);
    assert!(at("Object[13].mode").is_empty(), "{:?}", doc.deeper);
    let twice = at("Global.twice");
    assert_eq!(twice.len(), 1, "{:?}", doc.deeper);
    assert_eq!(twice[0].verdict, report::RaceVerdict::Harmful);
    // The golden fixture's own deeper entries are still there.
    assert!(!at("Global.deep").is_empty(), "{:?}", doc.deeper);
}

#[test]
fn a_harmful_reversal_overturns_a_probe_whose_runs_ended_too_early() {
    let mut out = outcome(None);
    let n = out.runs.len() as u32;
    // Probe 1 cleared the timer and the answer writing the counter (the page settles by
    // itself); the reorder phase runs the events after them too.
    let counter = race(
        "DOMNode[4].childList",
        "WRITE-WRITE",
        access("doc/timer#1", "WRITE", None, None),
        access("doc/xhr#1", "WRITE", None, None),
    );
    let total = race(
        "Global.total",
        "WRITE-READ",
        access("doc/timer#1", "WRITE", None, None),
        access("doc/xhr#1", "READ", None, None),
    );
    let reversal = |id: u32, races: Vec<RaceNote>, verdict: Verdict| {
        let mut r = run(id, 1, &["chunk:https://a.test/#0"], Snapshot::default());
        r.origin = Some(OriginNote {
            parent: 0,
            kind: Cause::Reversal,
            steps: (2, 4),
            events: ("cb:doc/timer#1".into(), "cb:doc/xhr#1".into()),
            posts: None,
            races,
        });
        r.verdict = Some(verdict);
        r
    };
    let entry = |doc: &ExploreReport| {
        doc.races
            .iter()
            .find(|r| r.location == "DOMNode[4].childList")
            .cloned()
            .unwrap_or_else(|| panic!("no counter race: {:?}", doc.races))
    };
    // A harmless reversal (of another parent, in a deeper search) leaves the probe's answer
    // alone.
    out.runs.push(reversal(
        n,
        vec![counter.clone()],
        Verdict {
            verdict: Judgement::Harmless,
            class: Class::Equivalent,
            reason: "equivalent".into(),
            differences: Vec::new(),
        },
    ));
    let first = report::build(&out, 1, &Sources);
    let before = entry(&first);
    assert_eq!(before.verdict, report::RaceVerdict::Harmless);
    assert_eq!(before.rule, Some(Rule::SettlesItself));
    // A harmful one is what the probe's runs ended too early to see.
    out.runs.push(reversal(
        n + 1,
        vec![total.clone(), counter.clone()],
        Verdict {
            verdict: Judgement::Harmful,
            class: Class::Different,
            reason: "once the page has settled, the user sees something else".into(),
            differences: vec![Difference::Dom],
        },
    ));
    let doc = report::build(&out, 1, &Sources);
    let after = entry(&doc);
    assert_eq!(after.verdict, report::RaceVerdict::Harmful, "{after:?}");
    assert_eq!(after.rule, None);
    assert_eq!(after.sequence, Some(n + 1));
    assert_eq!(after.probe, Some(1));
    assert_eq!(after.also_at, vec!["Global.total".to_string()]);
    assert!(
        after.reason.contains(&format!("execution {}", n + 1))
            && after.reason.contains("settles by itself"),
        "{}",
        after.reason
    );
    // The race reversed with it is the same finding, not a deeper one of its own.
    assert!(
        doc.deeper.iter().all(|r| r.location != "Global.total"),
        "{:?}",
        doc.deeper
    );
    assert_eq!(doc.summary.harmful, first.summary.harmful + 1);
    assert_eq!(doc.summary.harmless, first.summary.harmless - 1);
}
