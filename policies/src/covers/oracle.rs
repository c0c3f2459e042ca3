//! The first implementation of the simulation, kept as the oracle of the indexed one: every
//! rule instance is tried on every operation and every ordering is checked with a fresh
//! search, as the paper states the semantics. Quadratic; tests only.

use super::facts::{Evs, describe, fork_lists, landmarks};
use super::instances::{Inst, extensions, initial_instances};
use super::matching::{Env, pred_matches};
use crate::ast::{Action, Op};
use crate::ir::{Expiry, Policy};
use shepherd_trace::{ActionId, Trace};
use std::collections::{HashSet, VecDeque};

/// The closure of happens-before plus the policy's edges: `reach[a]` holds every action `a`
/// reaches.
pub(super) fn closure(trace: &Trace, hb: &[(u32, u32)], policies: &[Policy]) -> Vec<HashSet<u32>> {
    let n = trace.actions.len();
    let mut succ: Vec<Vec<u32>> = vec![Vec::new(); n];
    for &(t, h) in hb {
        if (t as usize) < n && (h as usize) < n && t < h {
            succ[t as usize].push(h);
        }
    }
    let reaches = |succ: &Vec<Vec<u32>>, a: u32, b: u32| -> bool {
        if a == b {
            return true;
        }
        let mut seen = HashSet::from([a]);
        let mut q = VecDeque::from([a]);
        while let Some(x) = q.pop_front() {
            for &y in &succ[x as usize] {
                if y == b {
                    return true;
                }
                if y < b && seen.insert(y) {
                    q.push_back(y);
                }
            }
        }
        false
    };
    let evs = describe(trace);
    let forks = fork_lists(trace, &evs);
    let (dcl, load) = landmarks(&evs);
    let mut insts = initial_instances(trace.header.page.as_deref().unwrap_or(""), policies);
    for v in 0..n as u32 {
        // (waited-for action, the action that added the rule) of the rules that may order v.
        let mut candidates = Vec::new();
        let mut activated = Vec::new();
        for (i, inst) in insts.iter().enumerate() {
            if inst.removed
                || inst.rule.op != Op::Begin
                || !pred_matches(&inst.rule.pred, v, &evs, &inst.env)
            {
                continue;
            }
            if !expired(&inst.rule.until, &inst.env, dcl, load, v, &evs) {
                activated.push(i);
            }
            if inst.rule.action == Action::Dispatch {
                continue;
            }
            if let [only] = inst.rule.until.as_slice()
                && let Some(u) = waits_for(only, &inst.env, dcl, load, &evs, n)
                && u < v
            {
                candidates.push((u, inst.added_by));
            }
        }
        // A rule is present in every schedule when it is initial or its adder reaches v; an
        // edge added to v may make another adder reach it.
        loop {
            let mut changed = false;
            candidates.retain(|&(u, added_by)| {
                let present = match added_by {
                    None => true,
                    Some(a) => reaches(&succ, a, v),
                };
                if present {
                    if !reaches(&succ, u, v) {
                        succ[u as usize].push(v);
                    }
                    changed = true;
                }
                !present
            });
            if !changed {
                break;
            }
        }
        apply_plain(&mut insts, &activated, policies, v, v);
        // v's forks happen while its handler runs: `arrived(v)` does not hold for them.
        for &w in forks.of(v) {
            let activated: Vec<usize> = insts
                .iter()
                .enumerate()
                .filter(|(_, inst)| {
                    !inst.removed
                        && inst.rule.op == Op::Fork
                        && pred_matches(&inst.rule.pred, w, &evs, &inst.env)
                        && !expired(&inst.rule.until, &inst.env, dcl, load, v, &evs)
                })
                .map(|(i, _)| i)
                .collect();
            apply_plain(&mut insts, &activated, policies, w, v);
        }
    }
    (0..n as u32)
        .map(|a| (a..n as u32).filter(|&b| reaches(&succ, a, b)).collect())
        .collect()
}

/// The action a single expiration waits for, when it names exactly one: the end of the
/// event it names (an XHR response's last event).
fn waits_for(
    e: &Expiry,
    env: &Env,
    dcl: Option<u32>,
    load: Option<u32>,
    evs: &Evs,
    n: usize,
) -> Option<ActionId> {
    match e {
        Expiry::ArrivedVar(x) => env.get(x).map(|u| evs.end(u)),
        Expiry::Parsed => dcl,
        Expiry::Loaded => load,
        Expiry::ArrivedMatch(p) => {
            let none = Env::default();
            let mut it = (0..n as u32).filter(|&i| pred_matches(p, i, evs, &none));
            let first = it.next()?;
            it.next().is_none().then(|| evs.end(first))
        }
        Expiry::After(_) | Expiry::Js(_) => None,
    }
}

/// Whether the rule is expired at an operation of action `now` (its begin, or a fork its
/// handler makes): an event has arrived once its last action ran, before `now`.
fn expired(
    until: &[Expiry],
    env: &Env,
    dcl: Option<u32>,
    load: Option<u32>,
    now: u32,
    evs: &Evs,
) -> bool {
    until.iter().any(|e| match e {
        Expiry::Parsed => dcl.is_some_and(|d| d < now),
        Expiry::Loaded => load.is_some_and(|d| d < now),
        Expiry::ArrivedVar(x) => env.get(x).is_some_and(|u| evs.end(u) < now),
        Expiry::ArrivedMatch(p) => {
            let none = Env::default();
            (0..now).any(|u| pred_matches(p, u, evs, &none) && evs.end(u) < now)
        }
        // Unknown in a trace: treated as not expired (the rule keeps adding what it adds).
        Expiry::After(_) | Expiry::Js(_) => false,
    })
}

/// The update with a linear search for an equal live instance (the active rules are a set).
fn apply_plain<'a>(
    insts: &mut Vec<Inst<'a>>,
    activated: &[usize],
    policies: &'a [Policy],
    bound: ActionId,
    by: ActionId,
) {
    let added = extensions(&**insts, activated, policies, bound, by);
    for &i in activated {
        if insts[i].rule.once {
            insts[i].removed = true;
        }
    }
    for inst in added {
        let same = |x: &Inst| {
            !x.removed
                && std::ptr::eq(x.rule, inst.rule)
                && x.policy == inst.policy
                && x.env == inst.env
                && x.added_by == inst.added_by
        };
        if !insts.iter().any(same) {
            insts.push(inst);
        }
    }
}
