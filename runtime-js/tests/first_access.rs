//! The access log of an action: the first read and the first write of each location, whatever
//! form names it (`r`, `b`, `W`, `X`, `Y`, globals, array cells by number or string), and each
//! location's name defined once across actions. The rendered runtime (record mode) runs in
//! node (`tests/first_access.js`) over three timer actions.

// Test code: a panic in a helper is a failed test, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

/// Each action's accesses of the page's locations as `r <name>` / `w <name>`, in order, keyed
/// by the action's number; and every defined string, in order.
fn accesses(records: &[Value]) -> (BTreeMap<u64, Vec<String>>, Vec<String>) {
    let mut strings: HashMap<u64, String> = HashMap::new();
    let mut defined = Vec::new();
    let mut by_action: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    let mut cur = None;
    for r in records {
        let tag = r[0].as_str().unwrap();
        match tag {
            "s" => {
                let text = r[2].as_str().unwrap().to_owned();
                strings.insert(r[1].as_u64().unwrap(), text.clone());
                defined.push(text);
            }
            "b" => cur = r[1].as_u64(),
            "n" => cur = None,
            "r" | "w" if r.as_array().unwrap().len() > 1 => {
                let name = &strings[&r[1].as_u64().unwrap()];
                if name.starts_with("Timer:") {
                    continue; // a timer's own location: written by setTimeout, read by its callback
                }
                let a = cur.expect("an access inside an action");
                by_action
                    .entry(a)
                    .or_default()
                    .push(format!("{tag} {name}"));
            }
            _ => {}
        }
    }
    (by_action, defined)
}

#[test]
fn an_action_logs_each_location_once_per_kind_and_names_it_once() {
    let records: Vec<Value> =
        serde_json::from_slice(&common::run_with_runtime("first_access.js")).unwrap();
    let (by_action, defined) = accesses(&records);
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
    assert!(
        oa.starts_with("Object[") && cell.starts_with("Array["),
        "{oa} {cell}"
    );
    assert_ne!(fresh, oa);
    let expect = |v: &[(&str, &String)]| -> Vec<String> {
        v.iter().map(|(t, n)| format!("{t} {n}")).collect()
    };
    assert_eq!(
        *acts[0],
        expect(&[
            ("r", &oa),
            ("w", &oa),
            ("r", &cell),
            ("r", &len),
            ("w", &len),
            ("r", &g),
            ("w", &g),
        ]),
        "action 1: each location read and written by several forms"
    );
    assert_eq!(
        *acts[1],
        expect(&[
            ("r", &oa),
            ("r", &cell),
            ("r", &g),
            ("r", &fresh),
            ("w", &fresh)
        ]),
        "action 2: the same locations again, and a fresh object's field"
    );
    assert_eq!(
        *acts[2],
        expect(&[("w", &oa), ("r", &oa)]),
        "action 3: write first"
    );
    // Every location's name is defined once, however many actions touch it.
    for n in [&oa, &cell, &len, &g, &fresh] {
        let times = defined.iter().filter(|d| *d == n).count();
        assert_eq!(times, 1, "{n} defined {times} times: {defined:?}");
    }
}
