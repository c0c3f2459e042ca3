//! The access log of an action: the first read and the first write of each location, whatever
//! form names it (`r`, `b`, `W`, `X`, `Y`, globals, array cells by number or string), and each
//! location's name defined once across actions; the accesses of an object's fields logged late
//! while one action alone has touched it, and put back in place by the trace reader. The
//! rendered runtime (record mode) runs in node (`tests/first_access.js`) over three timer
//! actions.

// Test code: a panic in a helper is a failed test, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;

use serde_json::Value;
use shepherd_trace::{Op, read_jsonl};

/// Each action's accesses of the page's locations as `r <name>` / `w <name>`, in order, keyed
/// by the action's number, as the trace reader places them (late ones where they happened);
/// every string the uploads define, in order; and how many late records they hold.
fn accesses(text: &[u8]) -> (BTreeMap<u64, Vec<String>>, Vec<String>, usize) {
    let trace = read_jsonl(text).unwrap();
    let mut by_action: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for a in 0..trace.actions.len() as u32 {
        for op in trace.ops_of(a) {
            let (tag, loc) = match *op {
                Op::Read { loc, .. } => ("r", loc),
                Op::Write { loc, .. } => ("w", loc),
                _ => continue,
            };
            let name = trace.strings.get(loc);
            if name.starts_with("Timer:") {
                continue; // a timer's own location: written by setTimeout, read by its callback
            }
            by_action
                .entry(u64::from(a))
                .or_default()
                .push(format!("{tag} {name}"));
        }
    }
    let mut defined = Vec::new();
    let mut late = 0;
    for line in std::str::from_utf8(text).unwrap().lines() {
        if !line.starts_with('[') {
            continue;
        }
        let r: Value = serde_json::from_str(line).unwrap();
        match r[0].as_str().unwrap() {
            "s" => defined.push(r[2].as_str().unwrap().to_owned()),
            "R" | "W" => late += 1,
            _ => {}
        }
    }
    (by_action, defined, late)
}

#[test]
fn an_action_logs_each_location_once_per_kind_and_names_it_once() {
    let text = common::run_with_runtime("first_access.js");
    let (by_action, defined, late) = accesses(&text);
    // The three timer actions, in order: the only ones with accesses.
    let acts: Vec<&Vec<String>> = by_action.values().collect();
    assert_eq!(acts.len(), 3, "three actions with accesses: {by_action:#?}");
    // The names the runtime gave the locations (object numbers are its business).
    let name = |a: usize, ends: &str| -> String {
        acts[a]
            .iter()
            .map(|s| &s[2..])
            .find(|n| n.ends_with(ends))
            .unwrap_or_else(|| panic!("no access of …{ends} in action {a}: {by_action:#?}"))
            .to_owned()
    };
    let (oa, cell, len) = (name(0, "].a"), name(0, "$[0]"), name(0, "$LEN"));
    let g = name(0, "Global.shared");
    let fresh = name(1, "].t");
    let count = name(1, "].count");
    assert!(count.starts_with("Scope["), "{count}");
    assert!(
        oa.starts_with("Object[") && cell.starts_with("Array["),
        "{oa} {cell}"
    );
    assert_ne!(fresh, oa);
    let expect = |v: &[(&str, &String)]| -> Vec<String> {
        v.iter().map(|(t, n)| format!("{t} {n}")).collect()
    };
    // Action 1's accesses of `o` and `arr` went between the same two logged operations (the
    // array's logged late in the order of its entries): each location's own order is exact.
    let of = |a: usize, n: &String| -> Vec<String> {
        acts[a].iter().filter(|s| s[2..] == **n).cloned().collect()
    };
    assert_eq!(
        acts[0][..2],
        expect(&[("r", &oa), ("w", &oa)]),
        "action 1: each location read and written by several forms: {by_action:#?}"
    );
    let mut cells = acts[0][2..5].to_vec();
    cells.sort();
    let mut want = expect(&[("r", &cell), ("r", &len), ("w", &len)]);
    want.sort();
    assert_eq!(cells, want, "{by_action:#?}");
    assert_eq!(of(0, &len), expect(&[("r", &len), ("w", &len)]));
    assert_eq!(acts[0][5..], expect(&[("r", &g), ("w", &g), ("w", &count)]));
    assert_eq!(
        *acts[1],
        expect(&[
            ("r", &oa),
            ("r", &cell),
            ("r", &g),
            ("r", &count),
            ("r", &fresh),
            ("w", &fresh)
        ]),
        "action 2: the same locations again, and a fresh object's field"
    );
    assert_eq!(
        *acts[2],
        expect(&[("w", &oa), ("r", &oa), ("r", &fresh)]),
        "action 3: write first; an object of its own not logged"
    );
    // Action 1's accesses of `o`, `arr` and the captured variable (6) and action 2's of the
    // fresh object (2) were logged late, when the next action touched them; nothing else was.
    assert_eq!(late, 8, "{}", String::from_utf8_lossy(&text));
    assert!(
        !defined.iter().any(|d| d.ends_with("].m")),
        "a field or variable only one action touched is never named: {defined:?}"
    );
    // Every location's name is defined once, however many actions touch it.
    for n in [&oa, &cell, &len, &g, &fresh] {
        let times = defined.iter().filter(|d| *d == n).count();
        assert_eq!(times, 1, "{n} defined {times} times: {defined:?}");
    }
}
