//! The CLI's streamed reports (`text::write` and `json::write` over a `ReportPlan`) against
//! `text::render` and `json::render` of the whole `RaceReport`, all given the same repairing
//! policies and explorer verdicts.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use shepherd_races::Analysis;
use shepherd_races::report::{self, Explored, NoSources, RaceReport, RaceView, ReportPlan};
use shepherd_trace::Trace;

/// A verdict for two races in three (by id), none for the third.
pub fn verdict(r: &RaceView) -> Option<Explored> {
    let verdict = match r.id % 3 {
        0 => "harmful",
        1 => "harmless",
        _ => return None,
    };
    Some(Explored {
        verdict: verdict.to_owned(),
        reason: format!("reason of race {}", r.id),
        sequence: r.id.is_multiple_of(2).then_some(r.id as u64),
    })
}

/// Asserts that the streamed reports equal the ones `render` gives for the whole report built
/// by [`RaceReport::new`] (as the HTML report is), and returns the text.
pub fn assert_streams_as_rendered(trace: &Trace, an: &Analysis, all: bool) -> String {
    let policies = |k: usize| vec![format!("policy-{}", k % 3)];
    let mut whole = RaceReport::new(trace, an, all);
    for (k, r) in whole.races.iter_mut().enumerate() {
        r.repaired_by = policies(k);
    }
    whole.summary.policies_undecided = vec!["async-user".to_string()];
    whole.attach_explored(verdict);
    let want = report::text::render(&whole);
    let mut plan = ReportPlan::new(trace, an, all);
    let by = (0..plan.action_pairs(an).len()).map(policies).collect();
    plan.set_repaired_by(by, vec!["async-user".to_string()]);
    plan.attach_explored(trace, an, verdict);
    let mut streamed = Vec::new();
    report::text::write(&mut streamed, trace, an, &plan, &NoSources).unwrap();
    let streamed = String::from_utf8(streamed).unwrap();
    assert_eq!(streamed, want);
    let mut json = Vec::new();
    report::json::write(&mut json, trace, an, &plan, &NoSources).unwrap();
    assert_eq!(
        String::from_utf8(json).unwrap(),
        report::json::render(&whole)
    );
    assert!(streamed.contains("has none): async-user\n"), "{streamed}");
    streamed
}
