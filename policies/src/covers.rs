//! The augmented happens-before ≤_P (EventRaceCommander §V-C): a policy P orders `u` before
//! `v` when P would postpone or discard `v` until `u` has run. This module runs P over a
//! recorded trace (the trace's actions are the events; fork arcs are the fork operations) and
//! collects those orderings as extra edges, so a caller can ask, for each race of the trace,
//! whether P orders its two actions.
//!
//! An edge `u → v` is added when a postpone or discard rule matches `begin(v)` and expires
//! exactly when `u` has run (`arrived(u)`; `parsed`: the DOMContentLoaded action; `loaded`:
//! the window load action; `arrived(pattern)` when one action of the trace matches it), and
//! the rule is present in every schedule: it is an initial rule, or the action that added it
//! is ordered before `v` (by happens-before and the edges found so far). Whether the rule had
//! already expired when `v` ran in this trace does not matter: in another order it would not
//! have. Time limits and `js` expirations order nothing. Two approximations: the order of
//! fork operations in unordered actions is taken from the trace (it decides which fork a
//! `once` rule sees first), and CSS selectors are judged from the trace's target labels
//! (`tag`, `#id`, `tag#id`; others never match, so no ordering is claimed from them).

use crate::ast::{Action, Cmp, Op};
use crate::compile::glob_matches;
use crate::ir::{Expiry, Filter, Policy, Rule, Subject, Term};
use crate::kinds::{Kind, USER_TYPES};
use shepherd_trace::{ActionId, ActionType, ArcKind, Op as TOp, Trace};
use std::collections::{HashMap, HashSet, VecDeque};

/// One ordering a policy adds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyEdge {
    /// Runs first.
    pub from: ActionId,
    /// Waits for `from`.
    pub to: ActionId,
    /// The rule that makes it wait (`policy:line`).
    pub rule: String,
}

/// Happens-before plus the orderings of a policy over one trace.
#[derive(Clone, Debug)]
pub struct Augmented {
    /// The orderings the policies add.
    pub edges: Vec<PolicyEdge>,
    succ: Vec<Vec<(u32, Option<usize>)>>,
}

/// What the simulation knows about one action.
#[derive(Clone, Debug, Default)]
struct Ev {
    /// DOM event type for `event:<type>` actions.
    dom_type: Option<String>,
    kind: String,
    user: bool,
    /// Target label class (`BUTTON`, `XMLHttpRequest`, `Window`) and the target's `#id`.
    target: Option<String>,
    target_id: Option<String>,
    url: Option<String>,
    /// XHR events at readyState 4 (the response), per the events that follow.
    xhr_done: bool,
    creator: Option<ActionId>,
    delay: Option<u32>,
}

struct Inst<'a> {
    rule: &'a Rule,
    policy: usize,
    env: HashMap<String, ActionId>,
    added_by: Option<ActionId>,
    removed: bool,
}

impl Augmented {
    /// Runs `policies` over `trace`; `hb` are the happens-before arcs (tail, head) the race
    /// analysis used (logged and derived).
    pub fn new(trace: &Trace, hb: &[(u32, u32)], policies: &[Policy]) -> Augmented {
        let n = trace.actions.len();
        let mut succ: Vec<Vec<(u32, Option<usize>)>> = vec![Vec::new(); n];
        for &(t, h) in hb {
            if (t as usize) < n && (h as usize) < n && t < h {
                succ[t as usize].push((h, None));
            }
        }
        let evs = describe(trace);
        let mut forks: Vec<Vec<ActionId>> = vec![Vec::new(); n];
        for a in &trace.arcs {
            if a.kind == ArcKind::Fork && (a.head as usize) < n {
                let e = &evs[a.head as usize];
                // An XHR's fork is the fork of its response; its other events are not forks.
                if e.target.as_deref() == Some("XMLHttpRequest") && !e.xhr_done {
                    continue;
                }
                forks[a.tail as usize].push(a.head);
            }
        }
        let dcl = (0..n)
            .find(|&i| evs[i].dom_type.as_deref() == Some("DOMContentLoaded"))
            .map(|i| i as u32);
        let load = (0..n)
            .find(|&i| {
                evs[i].dom_type.as_deref() == Some("load")
                    && evs[i].target.as_deref() == Some("Window")
            })
            .map(|i| i as u32);
        let mut aug = Augmented {
            edges: Vec::new(),
            succ,
        };
        let mut insts: Vec<Inst> = Vec::new();
        for (pi, p) in policies.iter().enumerate() {
            if !p.scopes.is_empty() {
                let page = trace.header.page.as_deref().unwrap_or("");
                if !p.scopes.iter().any(|g| glob_matches(g, page)) {
                    continue;
                }
            }
            for r in &p.rules {
                insts.push(Inst {
                    rule: r,
                    policy: pi,
                    env: HashMap::new(),
                    added_by: None,
                    removed: false,
                });
            }
        }
        let mut arrived: HashSet<ActionId> = HashSet::new();
        for v in 0..n as u32 {
            // begin(v)
            let mut new_edges = Vec::new();
            let mut activated = Vec::new();
            for (i, inst) in insts.iter().enumerate() {
                if inst.removed
                    || inst.rule.op != Op::Begin
                    || !pred_matches(&inst.rule.pred, v, &evs, &inst.env)
                {
                    continue;
                }
                if !expired(&inst.rule.until, &inst.env, &arrived, dcl, load, v, &evs) {
                    activated.push(i);
                }
                if inst.rule.action == Action::Dispatch {
                    continue;
                }
                let present = match inst.added_by {
                    None => true,
                    Some(a) => aug.reaches(a, v),
                };
                if !present {
                    continue;
                }
                if let [only] = inst.rule.until.as_slice()
                    && let Some(u) = waits_for(only, &inst.env, dcl, load, &evs, n)
                    && u < v
                {
                    new_edges.push(PolicyEdge {
                        from: u,
                        to: v,
                        rule: inst.rule.id.clone(),
                    });
                }
            }
            for e in new_edges {
                if !aug.reaches(e.from, e.to) {
                    let idx = aug.edges.len();
                    aug.succ[e.from as usize].push((e.to, Some(idx)));
                }
                aug.edges.push(e);
            }
            apply(&mut insts, &activated, policies, v, v);
            arrived.insert(v);
            // Forks made by v.
            for &w in &forks[v as usize] {
                let activated: Vec<usize> = insts
                    .iter()
                    .enumerate()
                    .filter(|(_, inst)| {
                        !inst.removed
                            && inst.rule.op == Op::Fork
                            && pred_matches(&inst.rule.pred, w, &evs, &inst.env)
                            && !expired(&inst.rule.until, &inst.env, &arrived, dcl, load, v, &evs)
                    })
                    .map(|(i, _)| i)
                    .collect();
                apply(&mut insts, &activated, policies, w, v);
            }
        }
        aug
    }

    /// Whether `a ≤_P b`: a path from `a` to `b` through happens-before and policy edges.
    /// `Some(rules)` names the policy rules on the path found (empty when happens-before alone
    /// orders them); `None` when unordered.
    pub fn orders(&self, a: ActionId, b: ActionId) -> Option<Vec<String>> {
        if a == b {
            return Some(Vec::new());
        }
        if a > b || (b as usize) >= self.succ.len() {
            return None;
        }
        let mut prev: HashMap<u32, (u32, Option<usize>)> = HashMap::new();
        let mut q = VecDeque::from([a]);
        while let Some(x) = q.pop_front() {
            for &(y, e) in &self.succ[x as usize] {
                if y > b || y == a || prev.contains_key(&y) {
                    continue;
                }
                prev.insert(y, (x, e));
                if y == b {
                    let mut rules = Vec::new();
                    let mut cur = b;
                    while cur != a {
                        let (p, e) = prev[&cur];
                        if let Some(i) = e {
                            rules.push(self.edges[i].rule.clone());
                        }
                        cur = p;
                    }
                    rules.reverse();
                    rules.dedup();
                    return Some(rules);
                }
                q.push_back(y);
            }
        }
        None
    }

    fn reaches(&self, a: u32, b: u32) -> bool {
        self.orders(a, b).is_some()
    }
}

/// The action a single expiration waits for, when it names exactly one.
fn waits_for(
    e: &Expiry,
    env: &HashMap<String, ActionId>,
    dcl: Option<u32>,
    load: Option<u32>,
    evs: &[Ev],
    n: usize,
) -> Option<ActionId> {
    match e {
        Expiry::ArrivedVar(x) => env.get(x).copied(),
        Expiry::Parsed => dcl,
        Expiry::Loaded => load,
        Expiry::ArrivedMatch(p) => {
            let none = HashMap::new();
            let mut it = (0..n as u32).filter(|&i| pred_matches(p, i, evs, &none));
            let first = it.next()?;
            it.next().is_none().then_some(first)
        }
        Expiry::After(_) | Expiry::Js(_) => None,
    }
}

/// Whether the rule is expired when operation at `now` happens (`arrived` excludes `now`).
fn expired(
    until: &[Expiry],
    env: &HashMap<String, ActionId>,
    arrived: &HashSet<ActionId>,
    dcl: Option<u32>,
    load: Option<u32>,
    now: u32,
    evs: &[Ev],
) -> bool {
    until.iter().any(|e| match e {
        Expiry::Parsed => dcl.is_some_and(|d| d < now),
        Expiry::Loaded => load.is_some_and(|d| d < now),
        Expiry::ArrivedVar(x) => env.get(x).is_some_and(|u| arrived.contains(u)),
        Expiry::ArrivedMatch(p) => {
            let none = HashMap::new();
            arrived.iter().any(|&u| pred_matches(p, u, evs, &none))
        }
        // Unknown in a trace: treated as not expired (the rule keeps adding what it adds).
        Expiry::After(_) | Expiry::Js(_) => false,
    })
}

/// The paper's update: activated once-rules go, extensions of activated rules come.
fn apply<'a>(
    insts: &mut Vec<Inst<'a>>,
    activated: &[usize],
    policies: &'a [Policy],
    bound: ActionId,
    by: ActionId,
) {
    let mut added = Vec::new();
    for &i in activated {
        let inst = &insts[i];
        for (t, args) in &inst.rule.then {
            let Some(tpl) = policies[inst.policy].templates.get(t) else {
                continue;
            };
            let mut env = HashMap::new();
            for (param, arg) in tpl.params.iter().zip(args) {
                let val = if inst.rule.bind.as_deref() == Some(arg.as_str()) {
                    Some(bound)
                } else {
                    inst.env.get(arg).copied()
                };
                if let Some(v) = val {
                    env.insert(param.clone(), v);
                }
            }
            for r in &tpl.rules {
                added.push(Inst {
                    rule: r,
                    policy: inst.policy,
                    env: env.clone(),
                    added_by: Some(by),
                    removed: false,
                });
            }
        }
    }
    for &i in activated {
        if insts[i].rule.once {
            insts[i].removed = true;
        }
    }
    insts.extend(added);
}

fn pred_matches(p: &[Term], v: ActionId, evs: &[Ev], env: &HashMap<String, ActionId>) -> bool {
    p.iter().any(|t| term_matches(t, v, evs, env))
}

fn term_matches(t: &Term, v: ActionId, evs: &[Ev], env: &HashMap<String, ActionId>) -> bool {
    let Some(e) = evs.get(v as usize) else {
        return false;
    };
    let subject = match &t.subject {
        Subject::Var(x) => env.get(x) == Some(&v),
        Subject::Type(ty) => e.dom_type.as_deref() == Some(ty.as_str()),
        Subject::Kind(k) => match k {
            Kind::User => {
                e.user
                    && e.dom_type
                        .as_deref()
                        .is_some_and(|ty| USER_TYPES.contains(&ty))
            }
            Kind::Timer => e.kind == "timer",
            Kind::Interval => e.kind == "interval",
            Kind::AnimationFrame => e.kind == "raf",
            Kind::IdleCallback => e.kind == "idle",
            Kind::Fetch => e.kind == "fetch" || e.kind == "body",
            Kind::Xhr => e.xhr_done,
            Kind::Script => e.kind == "script" && e.url.is_some(),
        },
    };
    subject
        && t.filters.iter().all(|(neg, f)| {
            let m = match f {
                Filter::On(sel) => selector_matches(sel, e),
                Filter::Url(g) => e.url.as_deref().is_some_and(|u| glob_matches(g, u)),
                Filter::State(s) => *s == 4 && e.xhr_done,
                Filter::From(inner) => e.creator.is_some_and(|c| term_matches(inner, c, evs, env)),
                Filter::Delay(c, ms) => e.delay.is_some_and(|d| {
                    let d = u64::from(d);
                    match c {
                        Cmp::Lt => d < *ms,
                        Cmp::Le => d <= *ms,
                        Cmp::Gt => d > *ms,
                        Cmp::Ge => d >= *ms,
                        Cmp::Eq => d == *ms,
                    }
                }),
            };
            m != *neg
        })
}

/// Simple selectors judged from the trace: `tag`, `#id`, `tag#id`, `*`, `window`, `document`.
fn selector_matches(sel: &str, e: &Ev) -> bool {
    sel.split(',').map(str::trim).any(|s| {
        let tag = e.target.as_deref().unwrap_or("");
        match s {
            "window" => tag == "Window",
            "document" => tag == "Document",
            "*" => e.target.is_some(),
            _ => {
                let (t, id) = match s.split_once('#') {
                    Some((t, id)) => (t, Some(id)),
                    None => (s, None),
                };
                let simple = |x: &str| {
                    x.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                };
                if !simple(t) || !id.is_none_or(simple) {
                    return false;
                }
                (t.is_empty() || t.eq_ignore_ascii_case(tag))
                    && id.is_none_or(|id| e.target_id.as_deref() == Some(id))
            }
        }
    })
}

/// Reads what the policy language can ask about each action from its kind, stable id, first
/// scope label and the arcs into it.
fn describe(trace: &Trace) -> Vec<Ev> {
    let s = &trace.strings;
    let mut evs: Vec<Ev> = trace
        .actions
        .iter()
        .map(|a| {
            let kind = s.get(a.kind).to_string();
            let stable = s.get(a.stable);
            let label = trace.ops_of(a.id).iter().find_map(|op| match op {
                TOp::Enter { scope, .. } => Some(s.get(*scope)),
                _ => None,
            });
            let mut e = Ev {
                user: a.ty == ActionType::UserInterface,
                ..Ev::default()
            };
            if let Some(t) = kind.strip_prefix("event:") {
                e.dom_type = Some(t.to_string());
                if let Some(l) = label.and_then(|l| l.split(" @ ").nth(1)) {
                    e.target = Some(l.split('[').next().unwrap_or("").to_string());
                }
            }
            let last = stable.rsplit('/').next().unwrap_or("");
            if let Some(at) = last.split_once('@').map(|(_, r)| r) {
                let path = at.rsplit_once('#').map_or(at, |(p, _)| p);
                if let Some(id) = path.strip_prefix('#') {
                    e.target_id = Some(id.split('>').next().unwrap_or(id).to_string());
                }
            }
            match kind.as_str() {
                "script" => {
                    // `script:<async|defer|inserted|module|inline|external> <url-or-#n>`
                    if let Some(l) = label.and_then(|l| l.strip_prefix("script:"))
                        && let Some((how, what)) = l.split_once(' ')
                        && matches!(how, "async" | "defer" | "inserted" | "module")
                        && !what.starts_with('#')
                    {
                        e.url = Some(what.to_string());
                    }
                }
                "fetch" => {
                    e.url = label
                        .and_then(|l| l.strip_prefix("fetch "))
                        .map(str::to_string)
                }
                _ => {}
            }
            if e.target.as_deref() == Some("XMLHttpRequest")
                && let Some(seg) = stable.split('/').find(|x| x.starts_with("xhr@"))
            {
                e.url = seg
                    .strip_prefix("xhr@")
                    .map(|r| r.rsplit_once('#').map_or(r, |(u, _)| u).to_string());
            }
            e.kind = kind;
            e
        })
        .collect();
    for a in &trace.arcs {
        if a.kind == ArcKind::Fork && (a.head as usize) < evs.len() {
            evs[a.head as usize].creator = Some(a.tail);
            if a.delay_ms.is_some() {
                evs[a.head as usize].delay = a.delay_ms;
            }
        }
    }
    // The response of each XHR: its first load/error/abort/timeout event, and the
    // readystatechange right before it (readyState 4 fires first).
    let mut by_xhr: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, a) in trace.actions.iter().enumerate() {
        if evs[i].target.as_deref() == Some("XMLHttpRequest")
            && let Some(label) = trace.ops_of(a.id).iter().find_map(|op| match op {
                TOp::Enter { scope, .. } => Some(s.get(*scope)),
                _ => None,
            })
            && let Some(t) = label.split(" @ ").nth(1)
        {
            by_xhr.entry(t.to_string()).or_default().push(i);
        }
    }
    for list in by_xhr.values() {
        if let Some(k) = list.iter().position(|&i| {
            matches!(
                evs[i].dom_type.as_deref(),
                Some("load" | "error" | "abort" | "timeout")
            )
        }) {
            let head = if k > 0 && evs[list[k - 1]].dom_type.as_deref() == Some("readystatechange")
            {
                k - 1
            } else {
                k
            };
            evs[list[head]].xhr_done = true;
        }
    }
    evs
}

/// For each pair `(first, second)` of actions (a race's two sides), the shipped policies that
/// order `first` before `second` (`repairs[i]` for `pairs[i]`).
pub fn shipped_orderings(
    trace: &Trace,
    hb: &[(u32, u32)],
    pairs: &[(ActionId, ActionId)],
) -> Vec<Vec<String>> {
    let mut out = vec![Vec::new(); pairs.len()];
    for (name, _) in crate::SHIPPED {
        let Ok(set) = crate::load(name) else { continue };
        let aug = Augmented::new(trace, hb, &set.policies);
        for (i, &(a, b)) in pairs.iter().enumerate() {
            if aug.orders(a, b).is_some_and(|rules| !rules.is_empty()) {
                out[i].push(name.to_string());
            }
        }
    }
    out
}
