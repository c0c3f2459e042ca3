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
use crate::ir::{Expiry, Filter, Policy, Pred, Rule, Subject, Term};
use crate::kinds::{Kind, USER_TYPES};
use shepherd_trace::{ActionId, ActionKind, ActionType, ArcKind, FastState, Op as TOp, Trace};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::rc::Rc;
use std::sync::Arc;

#[cfg(test)]
mod oracle;

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

/// Work units (rule instances examined, graph nodes visited) after which
/// [`shipped_orderings`] gives a policy up, once for the simulation and once for the races'
/// questions: a safety net for shapes the simulation does not handle incrementally (user
/// events unordered among themselves each meet every WAITFOR rule). On the races bench's
/// 115 000-action pages, where the simulation that met every user event with every rule
/// needed ≈ 105 s for `init-user-plus` and for `async-user`, each of the five policies now
/// needs at most ≈ 0.32 M units to simulate (wide page) and ≈ 1.3 M to answer the default
/// report's 40 000 races; `--all` and `--html` ask about all 273 000 and still run out.
pub const SHIPPED_BUDGET: u64 = 5_000_000;

/// Happens-before plus the orderings of a policy over one trace.
#[derive(Clone, Debug)]
pub struct Augmented<'t> {
    /// The orderings the policies add that happens-before and the earlier orderings did not
    /// already imply.
    pub edges: Vec<PolicyEdge>,
    /// The simulation stopped at its work budget: `edges` is incomplete, so `orders` may say
    /// unordered where the policy orders.
    pub exhausted: bool,
    base: Arc<Base<'t>>,
    /// The policy edges by tail (their indices in `edges`), made when the simulation ends.
    extra_succ: Csr,
    /// The policy edges into x are `edges[pred_off[x]..pred_off[x + 1]]`: a simulation adds
    /// them in the order of their heads. While it runs, the list ends at the action being
    /// begun, whose edges run to the end of `edges`. Arrays instead of a map per direction
    /// (≈ 40 000 edges, each with its own small list): less memory and no hashing in the
    /// searches.
    pred_off: Vec<u32>,
}

/// What every policy's simulation reads from the trace alone: the actions as the policy
/// language sees them, the forks and the landmarks. It needs no happens-before graph, so a
/// caller can build it while the race analysis runs ([`shipped_orderings_deferred`]).
#[derive(Debug)]
pub struct TraceFacts<'t> {
    evs: Evs<'t>,
    forks: Csr,
    dcl: Option<u32>,
    load: Option<u32>,
    page: String,
}

impl<'t> TraceFacts<'t> {
    /// Reads `trace`.
    pub fn new(trace: &'t Trace) -> TraceFacts<'t> {
        let evs = describe(trace);
        let forks = fork_lists(trace, &evs);
        let (dcl, load) = landmarks(&evs);
        TraceFacts {
            evs,
            forks,
            dcl,
            load,
            page: trace.header.page.clone().unwrap_or_default(),
        }
    }
}

/// What every policy's simulation reads from one trace: its [`TraceFacts`] and the
/// happens-before graph. Worked out once for all the policies run over the trace.
#[derive(Debug)]
pub struct Base<'t> {
    facts: TraceFacts<'t>,
    succ: Csr,
    pred: Csr,
}

impl<'t> Base<'t> {
    /// Reads `trace`; `hb` are the happens-before arcs (tail, head) the race analysis used.
    pub fn new(trace: &'t Trace, hb: &[(u32, u32)]) -> Base<'t> {
        Base::with_facts(TraceFacts::new(trace), hb)
    }

    /// [`Base::new`] from facts read before.
    pub fn with_facts(facts: TraceFacts<'t>, hb: &[(u32, u32)]) -> Base<'t> {
        let n = facts.evs.len();
        let arcs = || {
            hb.iter()
                .copied()
                .filter(|&(t, h)| (t as usize) < n && (h as usize) < n && t < h)
        };
        let succ = Csr::new(n, arcs());
        let pred = Csr::new(n, arcs().map(|(t, h)| (h, t)));
        Base { facts, succ, pred }
    }
}

/// Adjacency lists of `n` nodes in one array (compressed sparse rows), each list in the
/// order its pairs came: a list per node was a quarter of the simulation's memory on a
/// 115 000-action trace, the rest of which is a few bytes per action.
#[derive(Clone, Debug, Default)]
struct Csr {
    /// `to[off[x]..off[x + 1]]` is node x's list.
    off: Vec<u32>,
    to: Vec<u32>,
}

impl Csr {
    /// The lists of `pairs` (from, to), every `from` below `n`.
    fn new(n: usize, pairs: impl Iterator<Item = (u32, u32)> + Clone) -> Csr {
        let mut off = vec![0u32; n + 1];
        for (x, _) in pairs.clone() {
            off[x as usize + 1] += 1;
        }
        for i in 0..n {
            off[i + 1] += off[i];
        }
        let mut next = off.clone();
        let mut to = vec![0u32; off[n] as usize];
        for (x, y) in pairs {
            let slot = &mut next[x as usize];
            to[*slot as usize] = y;
            *slot += 1;
        }
        Csr { off, to }
    }

    /// Node `x`'s list (empty past the last node).
    fn of(&self, x: u32) -> &[u32] {
        match (self.off.get(x as usize), self.off.get(x as usize + 1)) {
            (Some(&a), Some(&b)) => &self.to[a as usize..b as usize],
            _ => &[],
        }
    }

    /// Number of nodes.
    fn nodes(&self) -> usize {
        self.off.len().saturating_sub(1)
    }
}

/// What the simulation knows about one action, as predicates read it ([`Evs::get`]).
/// Its strings borrow the trace's.
#[derive(Clone, Copy, Debug, Default)]
struct Ev<'t> {
    /// DOM event type for `event:<type>` actions.
    dom_type: Option<&'t str>,
    kind: &'t str,
    user: bool,
    /// Target label class (`BUTTON`, `XMLHttpRequest`, `Window`) and the target's `#id`.
    target: Option<&'t str>,
    target_id: Option<&'t str>,
    url: Option<&'t str>,
    /// XHR events at readyState 4 (the response), per the events that follow.
    xhr_done: bool,
    creator: Option<ActionId>,
    delay: Option<u32>,
}

/// A rule instance's bindings: template parameter → action, sorted by name. Shared by the
/// rules of one template call and by the instance's key: a long trace makes a hundred
/// thousand instances, and a map of owned names per instance (cloned again for its key) was
/// most of the simulation's time and memory.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Env<'a>(Option<Rc<[(&'a str, ActionId)]>>);

impl<'a> Env<'a> {
    /// The bindings of `pairs` (a later binding of a name replaces an earlier one).
    fn of(pairs: impl IntoIterator<Item = (&'a str, ActionId)>) -> Env<'a> {
        let mut v: Vec<(&'a str, ActionId)> = Vec::new();
        for (k, a) in pairs {
            match v.iter_mut().find(|(x, _)| *x == k) {
                Some(slot) => slot.1 = a,
                None => v.push((k, a)),
            }
        }
        if v.is_empty() {
            return Env(None);
        }
        v.sort_unstable();
        Env(Some(v.into()))
    }

    fn get(&self, name: &str) -> Option<ActionId> {
        self.0
            .as_deref()
            .and_then(|v| v.iter().find(|(k, _)| *k == name))
            .map(|&(_, a)| a)
    }
}

/// No name ([`Names`]).
const NO_NAME: u32 = u32::MAX;

/// The texts predicates compare actions by (kinds, event types, target labels and ids, URLs),
/// each stored once: a page has a hundred thousand actions and a few hundred such texts.
#[derive(Debug, Default)]
struct Names<'t> {
    texts: Vec<&'t str>,
    ids: HashMap<&'t str, u32, FastState>,
}

impl<'t> Names<'t> {
    fn id(&mut self, s: Option<&'t str>) -> u32 {
        let Some(s) = s else { return NO_NAME };
        let texts = &mut self.texts;
        *self.ids.entry(s).or_insert_with(|| {
            texts.push(s);
            (texts.len() - 1) as u32
        })
    }

    fn get(&self, id: u32) -> Option<&'t str> {
        self.texts.get(id as usize).copied()
    }
}

/// An [`Ev`] as stored, its texts by [`Names`] id.
#[derive(Clone, Copy, Debug)]
struct Packed {
    dom_type: u32,
    kind: u32,
    target: u32,
    target_id: u32,
    url: u32,
    creator: Option<ActionId>,
    delay: Option<u32>,
    user: bool,
    xhr_done: bool,
}

/// Every action's [`Ev`], packed.
#[derive(Debug, Default)]
struct Evs<'t> {
    list: Vec<Packed>,
    names: Names<'t>,
}

impl<'t> Evs<'t> {
    fn len(&self) -> usize {
        self.list.len()
    }

    fn push(&mut self, e: &Ev<'t>) {
        let n = &mut self.names;
        let p = Packed {
            dom_type: n.id(e.dom_type),
            kind: n.id(Some(e.kind)),
            target: n.id(e.target),
            target_id: n.id(e.target_id),
            url: n.id(e.url),
            creator: e.creator,
            delay: e.delay,
            user: e.user,
            xhr_done: e.xhr_done,
        };
        self.list.push(p);
    }

    fn get(&self, v: ActionId) -> Option<Ev<'t>> {
        let p = self.list.get(v as usize)?;
        let n = &self.names;
        Some(Ev {
            dom_type: n.get(p.dom_type),
            kind: n.get(p.kind).unwrap_or(""),
            user: p.user,
            target: n.get(p.target),
            target_id: n.get(p.target_id),
            url: n.get(p.url),
            xhr_done: p.xhr_done,
            creator: p.creator,
            delay: p.delay,
        })
    }
}

struct Inst<'a> {
    rule: &'a Rule,
    policy: usize,
    env: Env<'a>,
    added_by: Option<ActionId>,
    removed: bool,
    /// Its expirations worked out once (set by the indexed simulation when it adds it).
    facts: Facts,
}

/// An instance's expirations as numbers: it is expired at operation `now` when
/// `arrive_by < arrived_to || parse_by < now`; `wait` is the action a postpone or discard
/// rule on begin waits for. Expirations never un-expire, so they are fixed at creation.
#[derive(Clone, Copy, Debug, Default)]
struct Facts {
    arrive_by: u32,
    parse_by: u32,
    wait: Option<ActionId>,
}

/// What makes two rule instances the same rule of the active set.
type InstKey<'a> = (usize, usize, Env<'a>, Option<ActionId>);

impl<'a> Inst<'a> {
    fn key(&self) -> InstKey<'a> {
        (
            self.rule as *const Rule as usize,
            self.policy,
            self.env.clone(),
            self.added_by,
        )
    }
}

/// The rule instances of a simulation, by index, in chunks of [`Insts::CHUNK`]: a policy that
/// makes one per asynchronous operation has 85 000 on the races bench's wide page, and a
/// vector of them doubled (and was copied) as it grew, holding up to three times their size
/// at once while the report was rendered beside it.
#[derive(Default)]
struct Insts<'a> {
    chunks: Vec<Vec<Inst<'a>>>,
    len: usize,
}

impl<'a> Insts<'a> {
    const CHUNK: usize = 4096;

    fn len(&self) -> usize {
        self.len
    }

    fn push(&mut self, inst: Inst<'a>) {
        match self.chunks.last_mut() {
            Some(c) if c.len() < Insts::CHUNK => c.push(inst),
            _ => {
                let mut c = Vec::with_capacity(Insts::CHUNK);
                c.push(inst);
                self.chunks.push(c);
            }
        }
        self.len += 1;
    }
}

impl<'a> std::ops::Index<usize> for Insts<'a> {
    type Output = Inst<'a>;

    fn index(&self, i: usize) -> &Inst<'a> {
        &self.chunks[i / Insts::CHUNK][i % Insts::CHUNK]
    }
}

impl std::ops::IndexMut<usize> for Insts<'_> {
    fn index_mut(&mut self, i: usize) -> &mut Self::Output {
        &mut self.chunks[i / Insts::CHUNK][i % Insts::CHUNK]
    }
}

/// The instances of one rule whose predicate can match many actions. Instances of a rule
/// differ only in their bindings, so when the predicate reads none of them it is judged once
/// per operation for the whole group.
struct Group<'a> {
    rule: &'a Rule,
    /// The predicate reads no variable.
    unbound: bool,
    /// Every active member does the same thing: the predicate reads no variable, the rule
    /// only dispatches, is not `once`, and its templates get only the matched event. Then one
    /// active member stands for all (WAITREC(u) for a thousand pending u on every fork).
    uniform: bool,
    /// Instance indices; removed instances are dropped lazily.
    members: Vec<usize>,
    /// `members[..start]` are all removed: instances tend to go in the order they came
    /// (WAITREC's expire as their events arrive), and a walk that stops at the first active
    /// member would otherwise step over the same dead ones on every operation.
    start: usize,
    /// A postpone or discard rule on begin whose only effect is the orderings it adds (no
    /// templates, not `once`, predicate reads no variable): WAITFOR's `discard user`. A
    /// policy adds one per asynchronous operation and every later user event meets all of
    /// them, so the group remembers which members are already settled ([`Group::last`]).
    waits_only: bool,
    /// The last action whose begin met the group (a `waits_only` group). Every live member
    /// not in `unsettled` waits for an action that reaches it: the member then ordered
    /// that action before it, or it was already before. An action `last` reaches needs
    /// nothing from those members (they wait for actions that reach it already).
    last: Option<ActionId>,
    /// The members that may still order an action reached from `last`: added since, or
    /// added by an action that did not reach it; those waiting for an action that had not
    /// begun by then are in `pending` instead.
    unsettled: Vec<usize>,
    /// Unsettled members by the action they wait for, first on top: each asynchronous
    /// operation not yet run has one, and a user event looks only at those whose action has
    /// begun (≈ 150 running timer loops and requests on the wide page, every one of which
    /// would otherwise be looked at by each of its 60 000 user events).
    pending: BinaryHeap<Reverse<(ActionId, usize)>>,
}

impl Group<'_> {
    /// Remembers member `i` as unsettled (a `waits_only` group); members that wait for no
    /// single action order nothing and are not kept.
    fn unsettle(&mut self, i: usize, wait: Option<ActionId>, v: ActionId) {
        match wait {
            Some(u) if u >= v => self.pending.push(Reverse((u, i))),
            Some(_) => self.unsettled.push(i),
            None => {}
        }
    }
}

impl Group<'_> {
    /// Walks the members for one operation: `visit` judges a live member and says whether
    /// the walk may stop. Returns the number of members looked at.
    fn walk(&mut self, insts: &Insts, mut visit: impl FnMut(usize) -> bool) -> u64 {
        let skipped = self.members[self.start..]
            .iter()
            .take_while(|&&i| insts[i].removed)
            .count();
        self.start += skipped;
        let (mut seen, mut gone) = (skipped, 0usize);
        for &i in &self.members[self.start..] {
            seen += 1;
            if insts[i].removed {
                gone += 1;
                continue;
            }
            if visit(i) {
                break;
            }
        }
        if (gone + self.start) * 2 > self.members.len() {
            self.members.retain(|&i| !insts[i].removed);
            self.start = 0;
        }
        seen as u64
    }
}

/// Where each live rule instance is looked for, per operation.
#[derive(Default)]
struct Index<'a> {
    begin_groups: Vec<Group<'a>>,
    fork_groups: Vec<Group<'a>>,
    /// Instances whose predicate names only bound events, by the event they name.
    begin_at: HashMap<ActionId, Vec<usize>, FastState>,
    fork_at: HashMap<ActionId, Vec<usize>, FastState>,
    /// Keys of the live instances added by the action being simulated. An extension's key
    /// names the action whose operation added it (`added_by`), so an equal instance can only
    /// come from the same action: the set starts empty for each, instead of holding every
    /// live instance (85 000 on a 115 000-action page, where probing it was a third of the
    /// simulation's time).
    live: HashSet<InstKey<'a>, FastState>,
}

impl<'a> Index<'a> {
    fn add(&mut self, i: usize, inst: &Inst<'a>) {
        let rule = inst.rule;
        let (groups, at) = match rule.op {
            Op::Begin => (&mut self.begin_groups, &mut self.begin_at),
            Op::Fork => (&mut self.fork_groups, &mut self.fork_at),
        };
        let only_vars = !rule.pred.is_empty()
            && rule
                .pred
                .iter()
                .all(|t| matches!(t.subject, Subject::Var(_)));
        if only_vars {
            let mut named: Vec<ActionId> = rule
                .pred
                .iter()
                .filter_map(|t| match &t.subject {
                    Subject::Var(x) => inst.env.get(x),
                    _ => None,
                })
                .collect();
            named.sort_unstable();
            named.dedup();
            for a in named {
                at.entry(a).or_default().push(i);
            }
            return;
        }
        match groups.iter_mut().find(|g| std::ptr::eq(g.rule, rule)) {
            Some(g) => {
                g.members.push(i);
                if g.waits_only {
                    g.unsettle(i, inst.facts.wait, 0);
                }
            }
            None => {
                let unbound = !rule.pred.iter().any(term_reads_vars);
                let only_bound = rule
                    .then
                    .iter()
                    .flat_map(|(_, args)| args)
                    .all(|a| rule.bind.as_deref() == Some(a.as_str()));
                let waits_only = unbound
                    && rule.op == Op::Begin
                    && rule.action != Action::Dispatch
                    && !rule.once
                    && rule.then.is_empty();
                let mut g = Group {
                    rule,
                    unbound,
                    uniform: unbound && !rule.once && rule.action == Action::Dispatch && only_bound,
                    members: vec![i],
                    start: 0,
                    waits_only,
                    last: None,
                    unsettled: Vec::new(),
                    pending: BinaryHeap::new(),
                };
                if waits_only {
                    g.unsettle(i, inst.facts.wait, 0);
                }
                groups.push(g);
            }
        }
    }
}

/// The trace facts every expiration and predicate is judged against.
struct World<'w, 't> {
    evs: &'w Evs<'t>,
    dcl: Option<u32>,
    load: Option<u32>,
    /// First action matching an `arrived(pattern)` (by the pattern's address), computed once.
    first_match: HashMap<*const Pred, Option<ActionId>>,
}

impl World<'_, '_> {
    /// Works out `inst`'s [`Facts`].
    fn facts(&mut self, inst: &Inst) -> Facts {
        let mut f = Facts {
            arrive_by: u32::MAX,
            parse_by: u32::MAX,
            wait: None,
        };
        for e in &inst.rule.until {
            match e {
                Expiry::Parsed => f.parse_by = f.parse_by.min(self.dcl.unwrap_or(u32::MAX)),
                Expiry::Loaded => f.parse_by = f.parse_by.min(self.load.unwrap_or(u32::MAX)),
                Expiry::ArrivedVar(x) => {
                    f.arrive_by = f.arrive_by.min(inst.env.get(x).unwrap_or(u32::MAX))
                }
                Expiry::ArrivedMatch(p) => {
                    f.arrive_by = f.arrive_by.min(self.first_match(p).unwrap_or(u32::MAX))
                }
                Expiry::After(_) | Expiry::Js(_) => {}
            }
        }
        if inst.rule.action != Action::Dispatch
            && inst.rule.op == Op::Begin
            && let [only] = inst.rule.until.as_slice()
        {
            f.wait = self.waits_for(only, &inst.env);
        }
        f
    }

    fn first_match(&mut self, p: &Pred) -> Option<ActionId> {
        let (evs, n) = (self.evs, self.evs.len());
        *self.first_match.entry(p as *const Pred).or_insert_with(|| {
            let none = Env::default();
            (0..n as u32).find(|&i| pred_matches(p, i, evs, &none))
        })
    }

    /// The action a rule with this single expiration waits for.
    fn waits_for(&mut self, e: &Expiry, env: &Env) -> Option<ActionId> {
        match e {
            Expiry::ArrivedVar(x) => env.get(x),
            Expiry::Parsed => self.dcl,
            Expiry::Loaded => self.load,
            Expiry::ArrivedMatch(p) => {
                let first = self.first_match(p)?;
                let none = Env::default();
                let second = (first + 1..self.evs.len() as u32)
                    .find(|&i| pred_matches(p, i, self.evs, &none));
                second.is_none().then_some(first)
            }
            Expiry::After(_) | Expiry::Js(_) => None,
        }
    }
}

/// A rule instance that met an operation: what the simulation does with it.
enum Met {
    /// Matches and is not expired: its extensions run, a `once` rule goes.
    Active,
    /// Matches, is expired, but can still order (a postpone or discard rule that waits for
    /// one action: in another order it would not have expired yet).
    Expired,
    /// No match.
    Skip,
    /// Expired and can neither order nor activate again (expirations never un-expire).
    Dead,
}

impl<'t> Augmented<'t> {
    /// Runs `policies` over `trace`; `hb` are the happens-before arcs (tail, head) the race
    /// analysis used (logged and derived).
    pub fn new(trace: &'t Trace, hb: &[(u32, u32)], policies: &[Policy]) -> Augmented<'t> {
        Augmented::over(Arc::new(Base::new(trace, hb)), policies, u64::MAX)
    }

    /// Runs `policies` over a trace read once into `base`; stops after `budget` work units
    /// (see [`Augmented::exhausted`]).
    pub fn over(base: Arc<Base<'t>>, policies: &[Policy], budget: u64) -> Augmented<'t> {
        let n = base.facts.evs.len();
        let mut aug = Augmented {
            edges: Vec::new(),
            exhausted: false,
            base: base.clone(),
            extra_succ: Csr::default(),
            pred_off: vec![0],
        };
        let (evs, forks) = (&base.facts.evs, &base.facts.forks);
        let mut world = World {
            evs,
            dcl: base.facts.dcl,
            load: base.facts.load,
            first_match: HashMap::new(),
        };
        let mut insts = Insts::default();
        let mut index = Index::default();
        for mut inst in initial_instances(&base.facts.page, policies) {
            inst.facts = world.facts(&inst);
            if index.live.insert(inst.key()) {
                index.add(insts.len(), &inst);
                insts.push(inst);
            }
        }
        // Initial instances (added by no action) are never extensions: nothing can equal them.
        index.live.clear();
        let mut work: u64 = 0;
        let mut back = Back::new(n);
        for v in 0..n as u32 {
            if work > budget {
                aug.exhausted = true;
                break;
            }
            // Only v's operations add instances from here on (see `Index::live`).
            if !index.live.is_empty() {
                index.live.clear();
            }
            // begin(v)
            let mut activated = Vec::new();
            // (waited-for action, instance) of the postpone and discard rules that met v.
            let mut waits: Vec<(u32, usize)> = Vec::new();
            // Killed after the walk over the index.
            let mut dead: Vec<usize> = Vec::new();
            let graph = aug.graph();
            for g in &mut index.begin_groups {
                // Judged first: a group is walked (and compacted) only for operations its
                // predicate can match.
                if g.unbound && !pred_matches(&g.rule.pred, v, evs, &Env::default()) {
                    continue;
                }
                if g.waits_only {
                    work += settle(g, &insts, v, evs, &mut back, graph, &mut waits, &mut dead);
                    continue;
                }
                let (unbound, uniform) = (g.unbound, g.uniform);
                work += g.walk(&insts, |i| {
                    let active = met(&insts, i, unbound, v, evs, &mut waits, &mut dead);
                    if active {
                        activated.push(i);
                    }
                    active && uniform
                });
            }
            if let Some(list) = index.begin_at.remove(&v) {
                work += list.len() as u64;
                for i in list {
                    if met(&insts, i, false, v, evs, &mut waits, &mut dead) {
                        activated.push(i);
                    }
                }
            }
            for i in dead {
                kill(&mut insts, &mut index, i);
            }
            if !waits.is_empty() {
                // A rule added by an action that does not reach v is absent in some
                // schedule, so it orders nothing.
                waits.retain(|&(_, i)| match insts[i].added_by {
                    None => true,
                    Some(a) => back.reaches(a, v, graph),
                });
                // Latest first: an edge from u makes everything that reaches u reach v, so
                // the earlier waits it implies add nothing.
                waits.sort_unstable_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
                waits.dedup_by_key(|w| w.0);
                for (u, i) in waits {
                    if back.reaches(u, v, aug.graph()) {
                        continue;
                    }
                    aug.edges.push(PolicyEdge {
                        from: u,
                        to: v,
                        rule: insts[i].rule.id.clone(),
                    });
                    back.add_source(u);
                }
            }
            work += back.take_visits();
            apply(
                &mut insts, &mut index, &mut world, &activated, policies, v, v,
            );
            // Forks made by v (v has begun: arrived(v) holds for them).
            for &w in forks.of(v) {
                let mut activated = Vec::new();
                let mut dead = Vec::new();
                for g in &mut index.fork_groups {
                    if g.unbound && !pred_matches(&g.rule.pred, w, evs, &Env::default()) {
                        continue;
                    }
                    let (unbound, uniform) = (g.unbound, g.uniform);
                    work += g.walk(&insts, |i| {
                        match meet(&insts[i], unbound, w, v, v + 1, evs) {
                            Met::Active => {
                                activated.push(i);
                                uniform
                            }
                            Met::Dead => {
                                dead.push(i);
                                false
                            }
                            Met::Expired | Met::Skip => false,
                        }
                    });
                }
                // Not taken out: an action with two creators is forked twice.
                if let Some(list) = index.fork_at.get(&w).cloned() {
                    work += list.len() as u64;
                    for i in list {
                        if insts[i].removed {
                            continue;
                        }
                        match meet(&insts[i], false, w, v, v + 1, evs) {
                            Met::Active => activated.push(i),
                            Met::Dead => dead.push(i),
                            Met::Expired | Met::Skip => {}
                        }
                    }
                }
                for i in dead {
                    kill(&mut insts, &mut index, i);
                }
                apply(
                    &mut insts, &mut index, &mut world, &activated, policies, w, v,
                );
            }
            aug.pred_off.push(aug.edges.len() as u32);
        }
        // Also after a stop at the budget: every action gets its (maybe empty) list.
        aug.pred_off.resize(n + 1, aug.edges.len() as u32);
        aug.extra_succ = Csr::new(
            n,
            aug.edges
                .iter()
                .enumerate()
                .map(|(i, e)| (e.from, i as u32)),
        );
        aug
    }

    /// Happens-before and the policy edges found so far, backwards.
    fn graph(&self) -> Graph<'_> {
        Graph {
            pred: &self.base.pred,
            edges: &self.edges,
            pred_off: &self.pred_off,
        }
    }

    /// The tails of the policy edges into `x`.
    fn policy_preds(&self, x: u32) -> impl Iterator<Item = u32> + '_ {
        Graph::policy_preds_of(&self.edges, &self.pred_off, x)
    }

    /// The policy edges out of `x`: head and index in `edges`.
    fn policy_succs(&self, x: u32) -> impl Iterator<Item = (u32, usize)> + '_ {
        self.extra_succ
            .of(x)
            .iter()
            .filter_map(|&i| self.edges.get(i as usize).map(|e| (e.to, i as usize)))
    }

    /// Whether `a ≤_P b`: a path from `a` to `b` through happens-before and policy edges.
    /// `Some(rules)` names the policy rules on the path found (empty when happens-before alone
    /// orders them); `None` when unordered.
    pub fn orders(&self, a: ActionId, b: ActionId) -> Option<Vec<String>> {
        let mut unlimited = u64::MAX;
        self.orders_within(a, b, &mut unlimited)
    }

    /// Whether `a` reaches `b` through happens-before, and the policy edges too when
    /// `with_policy`; `None` when `budget` (node visits, decremented) runs out. Searches
    /// forwards from `a` and backwards from `b` in turns until one meets the other or one
    /// runs out of actions: a race's two actions usually have few descendants before the
    /// second or few ancestors after the first, but rarely both many, and a breadth-first
    /// search from the first (as [`Augmented::orders`]) walks all its descendants. On a
    /// 115 000-action page every earlier timer reaches each user event through the policy
    /// edges, and 40 000 races took more than 5 M visits.
    fn reaches(
        &self,
        a: ActionId,
        b: ActionId,
        with_policy: bool,
        m: &mut Meeting,
        budget: &mut u64,
    ) -> Option<bool> {
        if a == b {
            return Some(true);
        }
        let n = self.base.succ.nodes();
        if a > b || (b as usize) >= n {
            return Some(false);
        }
        let s = m.start(n);
        m.fwd[a as usize] = s;
        m.bwd[b as usize] = s;
        m.fs.push(a);
        m.bs.push(b);
        loop {
            // A side with nothing left to search has found all it can reach.
            let Some(x) = m.fs.pop() else {
                return Some(false);
            };
            *budget = budget.checked_sub(1)?;
            let extra = self.policy_succs(x).filter(|_| with_policy);
            let succ = self.base.succ.of(x).iter().copied();
            let from = m.fs.len();
            for y in succ.chain(extra.map(|(y, _)| y)) {
                if y > b {
                    continue;
                }
                if m.bwd[y as usize] == s {
                    return Some(true);
                }
                if m.fwd[y as usize] != s {
                    m.fwd[y as usize] = s;
                    m.fs.push(y);
                }
            }
            // The latest on top: it gets nearest the second action soonest.
            m.fs[from..].sort_unstable();
            let Some(x) = m.bs.pop() else {
                return Some(false);
            };
            *budget = budget.checked_sub(1)?;
            let extra = self.policy_preds(x).filter(|_| with_policy);
            let from = m.bs.len();
            for p in self.base.pred.of(x).iter().copied().chain(extra) {
                if p < a {
                    continue;
                }
                if m.fwd[p as usize] == s {
                    return Some(true);
                }
                if m.bwd[p as usize] != s {
                    m.bwd[p as usize] = s;
                    m.bs.push(p);
                }
            }
            // The earliest on top, nearest the first action.
            m.bs[from..].sort_unstable_by(|x, y| y.cmp(x));
        }
    }

    /// [`Augmented::orders`] that spends at most `budget` node visits (decremented);
    /// `None` also when it runs out.
    fn orders_within(&self, a: ActionId, b: ActionId, budget: &mut u64) -> Option<Vec<String>> {
        if a == b {
            return Some(Vec::new());
        }
        if a > b || (b as usize) >= self.base.succ.nodes() {
            return None;
        }
        let mut prev: HashMap<u32, (u32, Option<usize>), FastState> = HashMap::default();
        let mut q = VecDeque::from([a]);
        while let Some(x) = q.pop_front() {
            *budget = budget.checked_sub(1)?;
            let base = self.base.succ.of(x).iter().map(|&y| (y, None));
            let extra = self.policy_succs(x).map(|(y, i)| (y, Some(i)));
            for (y, e) in base.chain(extra) {
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
}

/// Marks of the two searches of [`Augmented::reaches`], reused across questions.
#[derive(Default)]
struct Meeting {
    /// `fwd[x] == stamp`: the search from the first action reached x; `bwd[x] == stamp`: x
    /// reaches the second action.
    fwd: Vec<u32>,
    bwd: Vec<u32>,
    stamp: u32,
    fs: Vec<u32>,
    bs: Vec<u32>,
}

impl Meeting {
    /// Starts a question over `n` actions: a new stamp (the marks are cleared when the
    /// stamps run out).
    fn start(&mut self, n: usize) -> u32 {
        if self.fwd.len() != n || self.stamp == u32::MAX {
            self.fwd = vec![0; n];
            self.bwd = vec![0; n];
            self.stamp = 0;
        }
        self.stamp += 1;
        self.fs.clear();
        self.bs.clear();
        self.stamp
    }
}

/// Happens-before and the policy edges found so far, backwards.
#[derive(Clone, Copy)]
struct Graph<'g> {
    pred: &'g Csr,
    /// The policy edges so far and where each head's begin ([`Augmented::pred_off`]).
    edges: &'g [PolicyEdge],
    pred_off: &'g [u32],
}

impl Graph<'_> {
    fn preds(&self, x: u32) -> impl Iterator<Item = u32> + '_ {
        let more = Graph::policy_preds_of(self.edges, self.pred_off, x);
        self.pred.of(x).iter().copied().chain(more)
    }

    /// The tails of the policy edges into `x` ([`Augmented::pred_off`]).
    fn policy_preds_of<'e>(
        edges: &'e [PolicyEdge],
        pred_off: &[u32],
        x: u32,
    ) -> impl Iterator<Item = u32> + 'e {
        let at = |i: usize| pred_off.get(i).map_or(edges.len(), |&o| o as usize);
        let (lo, hi) = (at(x as usize), at(x as usize + 1));
        edges.get(lo..hi).unwrap_or(&[]).iter().map(|e| e.from)
    }
}

/// No action ([`Back`]).
const NONE: u32 = u32::MAX;

/// Which actions reach the action being begun (`at`), found as far back as questions need:
/// every arc goes forwards in the trace, so whether `x` reaches `at` only needs the ancestors
/// of `at` after `x`. A search of all of them for every user event was most of the time of a
/// policy that meets every user event (≈ 60 000 on a 115 000-action page).
struct Back {
    /// `mark[x] == s`: x reached action `s` when `s` was begun (`NONE`: never marked).
    mark: Vec<u32>,
    /// The action being begun (`NONE` before the first question).
    at: u32,
    /// Actions marked for `at` whose predecessors are not marked yet, latest on top.
    todo: BinaryHeap<u32>,
    /// Every earlier `at` from `chain_from` on reaches the current one, so a mark from one of
    /// them says the marked action reaches `at` too: user events one after the other each
    /// find what reached the previous one without a search.
    chain_from: u32,
    /// Predecessor lists read since [`Back::take_visits`] (work units).
    visits: u64,
}

impl Back {
    fn new(n: usize) -> Back {
        Back {
            mark: vec![NONE; n],
            at: NONE,
            todo: BinaryHeap::new(),
            chain_from: NONE,
            visits: 0,
        }
    }

    /// Starts the questions about action `v` (after those about an earlier action).
    fn open(&mut self, v: u32, g: Graph) {
        let prev = self.at;
        self.at = v;
        self.todo.clear();
        self.mark[v as usize] = v;
        self.todo.push(v);
        // The intervals between consecutive `at` do not overlap: this search costs at most
        // one visit per action over the whole trace.
        self.chain_from = if prev != NONE && self.expand_above(prev, g) {
            self.chain_from
        } else {
            v
        };
    }

    /// Marks the ancestors of `at` after `x`; says whether `x` is one.
    fn expand_above(&mut self, x: u32, g: Graph) -> bool {
        let at = self.at;
        while let Some(&y) = self.todo.peek() {
            if y <= x {
                break;
            }
            self.todo.pop();
            self.visits += 1;
            for p in g.preds(y) {
                let m = &mut self.mark[p as usize];
                if *m != at {
                    *m = at;
                    self.todo.push(p);
                }
            }
        }
        self.mark[x as usize] == at
    }

    /// Whether `x` reaches `v` through `g` (`v` included).
    fn reaches(&mut self, x: u32, v: u32, g: Graph) -> bool {
        if x == v {
            return true;
        }
        if x > v || (v as usize) >= self.mark.len() {
            return false;
        }
        if self.at != v {
            self.open(v, g);
        }
        let m = self.mark[x as usize];
        if m == v || (m != NONE && m >= self.chain_from && m < v) {
            return true;
        }
        self.expand_above(x, g)
    }

    /// `u` now reaches `at` (an edge to it was added): so does everything before `u`.
    fn add_source(&mut self, u: u32) {
        if self.mark[u as usize] != self.at {
            self.mark[u as usize] = self.at;
            self.todo.push(u);
        }
    }

    fn take_visits(&mut self) -> u64 {
        std::mem::take(&mut self.visits)
    }
}

/// Judges instance `i` on the begin of `v` (`judged`: its predicate already matched):
/// collects its wait and whether it dies; true when it is active.
fn met(
    insts: &Insts,
    i: usize,
    judged: bool,
    v: u32,
    evs: &Evs,
    waits: &mut Vec<(u32, usize)>,
    dead: &mut Vec<usize>,
) -> bool {
    let inst = &insts[i];
    if inst.removed {
        return false;
    }
    match meet(inst, judged, v, v, v, evs) {
        Met::Skip => false,
        Met::Dead => {
            dead.push(i);
            false
        }
        m => {
            if let Some(u) = inst.facts.wait
                && u < v
            {
                waits.push((u, i));
            }
            matches!(m, Met::Active)
        }
    }
}

/// A `waits_only` group meets the begin of `v` (its predicate matched): collects the waits
/// of its members that may order v, as [`met`] on every member would, less those waiting
/// for an action that already reaches v (they add nothing). When the group's last action
/// reaches v, only its unsettled members are looked at. Activation does nothing for such a
/// rule, so none is reported. Returns the work done.
#[allow(clippy::too_many_arguments)]
fn settle(
    g: &mut Group,
    insts: &Insts,
    v: u32,
    evs: &Evs,
    back: &mut Back,
    graph: Graph,
    waits: &mut Vec<(u32, usize)>,
    dead: &mut Vec<usize>,
) -> u64 {
    // Judges member i; true when it stays unsettled after v.
    let mut judge = |i: usize, back: &mut Back| -> bool {
        let inst = &insts[i];
        if inst.removed {
            return false;
        }
        match meet(inst, true, v, v, v, evs) {
            Met::Skip => true,
            Met::Dead => {
                dead.push(i);
                false
            }
            Met::Active | Met::Expired => match inst.facts.wait {
                // Orders nothing, ever.
                None => false,
                Some(u) if u >= v => true,
                Some(u) => {
                    let present = inst
                        .added_by
                        .is_none_or(|a| a == v || back.reaches(a, v, graph));
                    if present {
                        waits.push((u, i));
                    }
                    !present
                }
            },
        }
    };
    let settled_before = g.last.is_some_and(|l| back.reaches(l, v, graph));
    g.last = Some(v);
    let mut list = std::mem::take(&mut g.unsettled);
    let seen = if settled_before {
        while let Some(&Reverse((u, i))) = g.pending.peek()
            && u < v
        {
            g.pending.pop();
            list.push(i);
        }
        list.len() as u64
    } else {
        list.clear();
        g.pending.clear();
        g.walk(insts, |i| {
            list.push(i);
            false
        })
    };
    for i in list {
        if judge(i, back) {
            g.unsettle(i, insts[i].facts.wait, v);
        }
    }
    seen
}

/// How an instance meets operation `op` on action `at` (the begin of `at`, or its fork by
/// `now`); `judged`: its predicate already matched for its whole group.
fn meet(inst: &Inst, judged: bool, at: u32, now: u32, arrived_to: u32, evs: &Evs) -> Met {
    if !judged && !pred_matches(&inst.rule.pred, at, evs, &inst.env) {
        return Met::Skip;
    }
    let f = &inst.facts;
    if f.arrive_by >= arrived_to && f.parse_by >= now {
        return Met::Active;
    }
    if f.wait.is_some() {
        Met::Expired
    } else {
        Met::Dead
    }
}

/// The DOMContentLoaded action and the window's load action (`parsed`, `loaded`).
fn landmarks(evs: &Evs) -> (Option<u32>, Option<u32>) {
    let find = |f: &dyn Fn(&Ev) -> bool| {
        (0..evs.len() as u32).find(|&v| evs.get(v).is_some_and(|e| f(&e)))
    };
    (
        find(&|e| e.dom_type == Some("DOMContentLoaded")),
        find(&|e| e.dom_type == Some("load") && e.target == Some("Window")),
    )
}

/// An instance of every rule of the policies that apply to the trace's `page`.
fn initial_instances<'a>(page: &str, policies: &'a [Policy]) -> Vec<Inst<'a>> {
    policies
        .iter()
        .enumerate()
        .filter(|(_, p)| p.scopes.is_empty() || p.scopes.iter().any(|g| glob_matches(g, page)))
        .flat_map(|(pi, p)| {
            p.rules.iter().map(move |r| Inst {
                rule: r,
                policy: pi,
                env: Env::default(),
                added_by: None,
                removed: false,
                facts: Facts::default(),
            })
        })
        .collect()
}

/// The fork operations each action makes (an XHR's fork is the fork of its response; its
/// other events are not forks).
fn fork_lists(trace: &Trace, evs: &Evs) -> Csr {
    let n = evs.len();
    let forks = trace.arcs.iter().filter_map(|a| {
        if a.kind != ArcKind::Fork || (a.tail as usize) >= n {
            return None;
        }
        let e = evs.get(a.head)?;
        if e.target == Some("XMLHttpRequest") && !e.xhr_done {
            return None;
        }
        Some((a.tail, a.head))
    });
    Csr::new(n, forks)
}

/// Whether a term reads a bound variable (its subject or a `from` filter's).
fn term_reads_vars(t: &Term) -> bool {
    matches!(t.subject, Subject::Var(_))
        || t.filters.iter().any(|(_, f)| match f {
            Filter::From(inner) => term_reads_vars(inner),
            _ => false,
        })
}

/// The instances the extensions of `activated` add (`bound`: the matched event; `by`: the
/// action whose operation activated them).
fn extensions<'a>(
    insts: &(impl std::ops::Index<usize, Output = Inst<'a>> + ?Sized),
    activated: &[usize],
    policies: &'a [Policy],
    bound: ActionId,
    by: ActionId,
) -> Vec<Inst<'a>> {
    let mut added = Vec::new();
    for &i in activated {
        let inst = &insts[i];
        for (t, args) in &inst.rule.then {
            let Some(tpl) = policies[inst.policy].templates.get(t) else {
                continue;
            };
            let env = Env::of(tpl.params.iter().zip(args).filter_map(|(param, arg)| {
                let val = if inst.rule.bind.as_deref() == Some(arg.as_str()) {
                    Some(bound)
                } else {
                    inst.env.get(arg)
                };
                val.map(|v| (param.as_str(), v))
            }));
            for r in &tpl.rules {
                added.push(Inst {
                    rule: r,
                    policy: inst.policy,
                    env: env.clone(),
                    added_by: Some(by),
                    removed: false,
                    facts: Facts::default(),
                });
            }
        }
    }
    added
}

/// The paper's update: activated once-rules go, extensions of activated rules come. The
/// active rules are a set: an extension equal to a live instance (same rule, bindings and
/// adding action) adds nothing. Without this, every asynchronous operation forked while
/// several WAITREC instances are active would double them.
fn apply<'a>(
    insts: &mut Insts<'a>,
    index: &mut Index<'a>,
    world: &mut World,
    activated: &[usize],
    policies: &'a [Policy],
    bound: ActionId,
    by: ActionId,
) {
    let added = extensions(insts, activated, policies, bound, by);
    for &i in activated {
        if insts[i].rule.once {
            kill(insts, index, i);
        }
    }
    for mut inst in added {
        if index.live.insert(inst.key()) {
            inst.facts = world.facts(&inst);
            index.add(insts.len(), &inst);
            insts.push(inst);
        }
    }
}

/// Removes instance `i` from the active set.
fn kill<'a>(insts: &mut Insts<'a>, index: &mut Index<'a>, i: usize) {
    if !insts[i].removed {
        insts[i].removed = true;
        index.live.remove(&insts[i].key());
    }
}

fn pred_matches(p: &[Term], v: ActionId, evs: &Evs, env: &Env) -> bool {
    p.iter().any(|t| term_matches(t, v, evs, env))
}

fn term_matches(t: &Term, v: ActionId, evs: &Evs, env: &Env) -> bool {
    let Some(e) = evs.get(v) else {
        return false;
    };
    subject_matches(&t.subject, v, &e, env)
        && t.filters.iter().all(|(neg, f)| {
            let m = match f {
                Filter::On(sel) => selector_matches(sel, &e),
                Filter::Url(g) => e.url.is_some_and(|u| glob_matches(g, u)),
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

/// Whether action `v` (described by `e`) is the term subject `s`.
fn subject_matches(s: &Subject, v: ActionId, e: &Ev, env: &Env) -> bool {
    match s {
        Subject::Var(x) => env.get(x) == Some(v),
        Subject::Type(ty) => e.dom_type == Some(ty.as_str()),
        Subject::Kind(k) => match k {
            Kind::User => e.user && e.dom_type.is_some_and(|ty| USER_TYPES.contains(&ty)),
            Kind::Xhr => e.xhr_done,
            Kind::Script => {
                Kind::of_action(ActionKind::parse(e.kind)) == Some(Kind::Script) && e.url.is_some()
            }
            k => Kind::of_action(ActionKind::parse(e.kind)) == Some(*k),
        },
    }
}

/// Whether `policies` can order anything in `base`'s trace. Orderings come only from postpone
/// and discard rules meeting the begin of an action their predicate matches; a term naming a
/// bound event may match any action, the others are judged by their subject alone (filters
/// only narrow). A trace recorded without input has no user event, and three of the five
/// shipped policies postpone or discard nothing else: their simulations (most of the policy
/// step on a long page-load trace) cannot add an ordering.
fn may_order(base: &Base, policies: &[Policy]) -> bool {
    let none = Env::default();
    let evs = &base.facts.evs;
    let n = evs.len() as u32;
    policies
        .iter()
        .flat_map(|p| {
            p.rules
                .iter()
                .chain(p.templates.values().flat_map(|t| t.rules.iter()))
        })
        .filter(|r| r.action != Action::Dispatch && r.op == Op::Begin && can_wait(r, &base.facts))
        .flat_map(|r| r.pred.iter())
        .any(|t| match &t.subject {
            Subject::Var(_) => true,
            s => (0..n).any(|v| evs.get(v).is_some_and(|e| subject_matches(s, v, &e, &none))),
        })
}

/// Whether a postpone or discard rule on begin can wait for an action of this trace, as
/// [`World::facts`] works its wait out: only a rule with exactly one expiration waits, and
/// `parsed` and `loaded` name an action only when the trace has it (a trace cut before
/// DOMContentLoaded, like the races bench's synthetic pages, has neither). A rule that waits
/// for nothing orders nothing.
fn can_wait(r: &Rule, facts: &TraceFacts) -> bool {
    match r.until.as_slice() {
        [Expiry::Parsed] => facts.dcl.is_some(),
        [Expiry::Loaded] => facts.load.is_some(),
        [Expiry::ArrivedVar(_) | Expiry::ArrivedMatch(_)] => true,
        _ => false,
    }
}

/// Simple selectors judged from the trace: `tag`, `#id`, `tag#id`, `*`, `window`, `document`.
fn selector_matches(sel: &str, e: &Ev) -> bool {
    sel.split(',').map(str::trim).any(|s| {
        let tag = e.target.unwrap_or("");
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
                    && id.is_none_or(|id| e.target_id == Some(id))
            }
        }
    })
}

/// Reads what the policy language can ask about each action from its kind, stable id, first
/// scope label and the arcs into it.
fn describe(trace: &Trace) -> Evs<'_> {
    let s = &trace.strings;
    let mut evs = Evs {
        list: Vec::with_capacity(trace.actions.len()),
        names: Names::default(),
    };
    for e in trace.actions.iter().map(|a| {
        let kind = s.get(a.kind);
        let stable = s.get(a.stable);
        let label = trace.ops_of(a.id).iter().find_map(|op| match op {
            TOp::Enter { scope, .. } => Some(s.get(*scope)),
            _ => None,
        });
        let mut e = Ev {
            user: a.ty == ActionType::UserInterface,
            ..Ev::default()
        };
        let parsed = ActionKind::parse(kind);
        if let ActionKind::Event(t) = parsed {
            e.dom_type = Some(t);
            if let Some(l) = label.and_then(|l| l.split(" @ ").nth(1)) {
                e.target = Some(l.split('[').next().unwrap_or(""));
            }
        }
        let last = stable.rsplit('/').next().unwrap_or("");
        if let Some(at) = last.split_once('@').map(|(_, r)| r) {
            let path = at.rsplit_once('#').map_or(at, |(p, _)| p);
            if let Some(id) = path.strip_prefix('#') {
                e.target_id = Some(id.split('>').next().unwrap_or(id));
            }
        }
        match parsed {
            ActionKind::Script => {
                // `script:<async|defer|inserted|module|inline|external> <url-or-#n>`
                if let Some(l) = label.and_then(|l| l.strip_prefix("script:"))
                    && let Some((how, what)) = l.split_once(' ')
                    && matches!(how, "async" | "defer" | "inserted" | "module")
                    && !what.starts_with('#')
                {
                    e.url = Some(what);
                }
            }
            ActionKind::Fetch => e.url = label.and_then(|l| l.strip_prefix("fetch ")),
            _ => {}
        }
        if e.target == Some("XMLHttpRequest")
            && let Some(seg) = stable.split('/').find(|x| x.starts_with("xhr@"))
        {
            e.url = seg
                .strip_prefix("xhr@")
                .map(|r| r.rsplit_once('#').map_or(r, |(u, _)| u));
        }
        e.kind = kind;
        e
    }) {
        evs.push(&e);
    }
    for a in &trace.arcs {
        if a.kind == ArcKind::Fork
            && let Some(e) = evs.list.get_mut(a.head as usize)
        {
            e.creator = Some(a.tail);
            if a.delay_ms.is_some() {
                e.delay = a.delay_ms;
            }
        }
    }
    fn target<'t>(evs: &Evs<'t>, i: usize) -> Option<&'t str> {
        evs.get(i as u32).and_then(|e| e.target)
    }
    fn dom_type<'t>(evs: &Evs<'t>, i: usize) -> Option<&'t str> {
        evs.get(i as u32).and_then(|e| e.dom_type)
    }
    // The response of each XHR: its first load/error/abort/timeout event, and the
    // readystatechange right before it (readyState 4 fires first).
    let mut by_xhr: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, a) in trace.actions.iter().enumerate() {
        if target(&evs, i) == Some("XMLHttpRequest")
            && let Some(label) = trace.ops_of(a.id).iter().find_map(|op| match op {
                TOp::Enter { scope, .. } => Some(s.get(*scope)),
                _ => None,
            })
            && let Some(t) = label.split(" @ ").nth(1)
        {
            by_xhr.entry(t).or_default().push(i);
        }
    }
    for list in by_xhr.values() {
        if let Some(k) = list.iter().position(|&i| {
            matches!(
                dom_type(&evs, i),
                Some("load" | "error" | "abort" | "timeout")
            )
        }) {
            let head = if k > 0 && dom_type(&evs, list[k - 1]) == Some("readystatechange") {
                k - 1
            } else {
                k
            };
            if let Some(e) = evs.list.get_mut(list[head]) {
                e.xhr_done = true;
            }
        }
    }
    evs
}

/// What the shipped policies order among some pairs of actions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShippedOrderings {
    /// For `pairs[i]`: the shipped policies that order its first action before its second.
    pub by_pair: Vec<Vec<String>>,
    /// Shipped policies given up at [`SHIPPED_BUDGET`] (a long trace): they may order pairs
    /// `by_pair` does not list; `shepherd policy covers` runs one without a budget. A policy
    /// that can postpone or discard no action of the trace is decided without simulating it,
    /// so it is never listed.
    pub undecided: Vec<String>,
}

/// For each pair `(first, second)` of actions (a race's two sides), the shipped policies that
/// order `first` before `second`, within [`SHIPPED_BUDGET`] per policy.
pub fn shipped_orderings(
    trace: &Trace,
    hb: &[(u32, u32)],
    pairs: &[(ActionId, ActionId)],
) -> ShippedOrderings {
    orderings_within(
        TraceFacts::new(trace),
        hb,
        || pairs.to_vec(),
        SHIPPED_BUDGET,
    )
}

/// [`shipped_orderings`] from [`TraceFacts`] read before (they need no happens-before
/// graph, so a caller can read them on another core while the race analysis runs), asking
/// `pairs` for the pairs only when a simulation needs them: the simulations read only the
/// trace and happens-before, so a caller can start them (on another core) before it has
/// worked out which races it reports, and send the pairs when it has. `pairs` runs on
/// another thread than the caller's when there are two cores.
pub fn shipped_orderings_deferred(
    facts: TraceFacts,
    hb: &[(u32, u32)],
    pairs: impl FnOnce() -> Vec<(ActionId, ActionId)> + Send,
) -> ShippedOrderings {
    orderings_within(facts, hb, pairs, SHIPPED_BUDGET)
}

/// [`shipped_orderings`] with another budget per policy (for the simulation, and again for
/// the queries).
pub fn shipped_orderings_within(
    trace: &Trace,
    hb: &[(u32, u32)],
    pairs: &[(ActionId, ActionId)],
    budget: u64,
) -> ShippedOrderings {
    orderings_within(TraceFacts::new(trace), hb, || pairs.to_vec(), budget)
}

fn orderings_within(
    facts: TraceFacts,
    hb: &[(u32, u32)],
    pairs: impl FnOnce() -> Vec<(ActionId, ActionId)> + Send,
    budget: u64,
) -> ShippedOrderings {
    let base = Arc::new(Base::with_facts(facts, hb));
    let names: Vec<&str> = crate::SHIPPED.iter().map(|(name, _)| *name).collect();
    let mut answers = Answers::new(pairs);
    let mut found: Vec<Answer> = vec![Some(Vec::new()); names.len()];
    let pairs = if two_cores() {
        // The policies that make a rule instance per asynchronous operation are simulated
        // one after the other on this thread: two alive at once raised `shepherd races`' peak
        // on the races bench's wide page from 87 MB to 92-97 MB (their instances are ≈ 11 MB
        // there). The others are light; the second thread simulates them, then answers the
        // questions about each policy's edges as they come (while the next is simulated).
        let heavy = |k: &usize| PER_ASYNC_OPERATION.contains(&names[*k]);
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Simulated)>();
        std::thread::scope(|s| {
            let answerer = s.spawn(|| {
                let mut got = Vec::new();
                for k in (0..names.len()).filter(|k| !heavy(k)) {
                    got.push((k, answers.of(simulate(&base, names[k], budget), budget)));
                }
                for (k, sim) in rx {
                    got.push((k, answers.of(sim, budget)));
                }
                (got, answers.pairs().len())
            });
            for k in (0..names.len()).filter(heavy) {
                // Fails only when the answering thread is gone (it panicked): its join says why.
                if tx.send((k, simulate(&base, names[k], budget))).is_err() {
                    break;
                }
            }
            drop(tx);
            let (got, pairs) = answerer
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            for (k, answer) in got {
                found[k] = answer;
            }
            pairs
        })
    } else {
        for (k, name) in names.iter().enumerate() {
            found[k] = answers.of(simulate(&base, name, budget), budget);
        }
        answers.pairs().len()
    };
    let mut out = ShippedOrderings {
        by_pair: vec![Vec::new(); pairs],
        undecided: Vec::new(),
    };
    for (name, found) in names.iter().zip(found) {
        match found {
            Some(list) => {
                for i in list {
                    out.by_pair[i].push(name.to_string());
                }
            }
            None => out.undecided.push(name.to_string()),
        }
    }
    out
}

/// The shipped policies whose simulation keeps a rule instance for every asynchronous
/// operation (WAITFOR, WAITREC): the expensive ones, simulated one at a time.
const PER_ASYNC_OPERATION: [&str; 2] = ["init-user-plus", "async-user"];

/// Whether a second core is there for the policy step's questions.
fn two_cores() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
}

/// What simulating one shipped policy gave.
enum Simulated<'t> {
    /// It orders no pair of this trace.
    Nothing,
    /// Given up at the budget.
    Undecided,
    /// The policy's edges: it may order pairs.
    Graph(Augmented<'t>),
}

/// Simulates the shipped policy `name` within `budget`.
fn simulate<'t>(base: &Arc<Base<'t>>, name: &str, budget: u64) -> Simulated<'t> {
    let Ok(set) = crate::load(name) else {
        return Simulated::Nothing;
    };
    // Decided without the simulation (and so never given up at the budget).
    if !may_order(base, &set.policies) {
        return Simulated::Nothing;
    }
    let aug = Augmented::over(base.clone(), &set.policies, budget);
    if aug.exhausted {
        Simulated::Undecided
    } else if aug.edges.is_empty() {
        // Races are unordered by happens-before: without a policy edge nothing orders them.
        Simulated::Nothing
    } else {
        Simulated::Graph(aug)
    }
}

/// The answers given so far, by the edges they were asked of: policies that add the same
/// edges order the same pairs (which rule added an edge does not matter to that), so they
/// are asked once. On the races bench's pages `init-user-plus` and `async-user` add the same
/// 41 000 edges (the pages never finish parsing), and answering was ≈ 30 ms each.
struct Answers<F> {
    /// The pairs asked about, once known ([`Answers::pairs`]).
    pairs: Option<Vec<(ActionId, ActionId)>>,
    /// Gives the pairs the first time they are needed.
    source: Option<F>,
    by_edges: Vec<(Vec<(ActionId, ActionId)>, Answer)>,
}

/// The indices of the pairs a policy orders; `None` when it was given up at the budget.
type Answer = Option<Vec<usize>>;

impl<F: FnOnce() -> Vec<(ActionId, ActionId)>> Answers<F> {
    fn new(source: F) -> Answers<F> {
        Answers {
            pairs: None,
            source: Some(source),
            by_edges: Vec::new(),
        }
    }

    /// The pairs asked about (asked for the first time here).
    fn pairs(&mut self) -> &[(ActionId, ActionId)] {
        let source = &mut self.source;
        self.pairs
            .get_or_insert_with(|| source.take().map(|f| f()).unwrap_or_default())
    }

    /// The indices of the pairs that `sim` orders; `None` when the simulation or the
    /// questions ran out of `budget`.
    fn of(&mut self, sim: Simulated, budget: u64) -> Answer {
        let aug = match sim {
            Simulated::Nothing => return Some(Vec::new()),
            Simulated::Undecided => return None,
            Simulated::Graph(aug) => aug,
        };
        let edges: Vec<(ActionId, ActionId)> = aug.edges.iter().map(|e| (e.from, e.to)).collect();
        if let Some((_, found)) = self.by_edges.iter().find(|(e, _)| *e == edges) {
            return found.clone();
        }
        let found = ask(&aug, self.pairs(), budget);
        self.by_edges.push((edges, found.clone()));
        found
    }
}

/// The indices of the `pairs` that `aug` orders with a policy rule on the way; `None` when the
/// questions together need more than `budget` node visits.
fn ask(aug: &Augmented, pairs: &[(ActionId, ActionId)], budget: u64) -> Answer {
    let mut left = budget;
    let mut found = Vec::new();
    let mut m = Meeting::default();
    for (i, &(a, b)) in pairs.iter().enumerate() {
        // Ordered with a policy rule on the way: reached with the policy edges and not
        // without. Happens-before orders no race; for a pair it orders, whether the
        // path found names a rule is left to the search that finds it.
        let ordered = match aug.reaches(a, b, true, &mut m, &mut left) {
            Some(true) => match aug.reaches(a, b, false, &mut m, &mut left) {
                Some(false) => true,
                Some(true) => aug
                    .orders_within(a, b, &mut left)
                    .is_some_and(|rules| !rules.is_empty()),
                None => false,
            },
            _ => false,
        };
        if left == 0 {
            return None;
        }
        if ordered {
            found.push(i);
        }
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use shepherd_trace::TraceBuilder;

    /// The kinds of action the shipped policies tell apart, as the runtime labels them.
    const SHAPES: [(ActionType, &str, &str); 8] = [
        (
            ActionType::Unknown,
            "script",
            "script:inserted https://s.test/a.js",
        ),
        (
            ActionType::Unknown,
            "script",
            "script:async https://s.test/b.js",
        ),
        (ActionType::Timer, "timer", "timer"),
        (ActionType::Network, "fetch", "fetch https://s.test/api"),
        (
            ActionType::Network,
            "event:load",
            "event:load @ XMLHttpRequest[4]",
        ),
        (
            ActionType::UserInterface,
            "event:click",
            "event:click @ BUTTON[2]",
        ),
        (
            ActionType::Unknown,
            "event:DOMContentLoaded",
            "event:DOMContentLoaded @ Document[0]",
        ),
        (ActionType::Unknown, "event:load", "event:load @ Window[0]"),
    ];

    /// A trace of `shapes` (indices into [`SHAPES`]) with fork arcs `forks` (tail index taken
    /// modulo the head) and extra happens-before arcs `joins`.
    fn trace(
        shapes: &[usize],
        forks: &[(usize, bool)],
        joins: &[(usize, usize)],
    ) -> (Trace, Vec<(u32, u32)>) {
        let mut b = TraceBuilder::new();
        for (i, &s) in shapes.iter().enumerate() {
            let (ty, kind, label) = SHAPES[s % SHAPES.len()];
            b.begin(ty, kind, &format!("doc/{kind}@#{i}"));
            b.enter(label, None).exit();
            b.end();
        }
        let n = shapes.len();
        for (head, &(tail, yes)) in forks.iter().enumerate().take(n).skip(1) {
            if yes {
                b.fork((tail % head) as u32, head as u32);
            }
        }
        let t = b.finish();
        let mut hb: Vec<(u32, u32)> = t.arcs.iter().map(|a| (a.tail, a.head)).collect();
        for &(x, y) in joins {
            let (x, y) = (x % n, y % n);
            if x < y {
                hb.push((x as u32, y as u32));
            }
        }
        (t, hb)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(150))]

        /// The indexed simulation orders exactly what the plain one does, for every shipped
        /// policy and for all of them together.
        #[test]
        fn indexed_simulation_agrees_with_the_plain_one(
            shapes in proptest::collection::vec(0usize..8, 1..28),
            forks in proptest::collection::vec((0usize..64, proptest::bool::weighted(0.6)), 28),
            joins in proptest::collection::vec((0usize..28, 0usize..28), 0..6),
        ) {
            let (t, hb) = trace(&shapes, &forks, &joins);
            let mut sets: Vec<Vec<Policy>> = crate::SHIPPED
                .iter()
                .filter_map(|(name, _)| crate::load(name).ok().map(|s| s.policies))
                .collect();
            sets.push(sets.concat());
            for policies in &sets {
                let aug = Augmented::new(&t, &hb, policies);
                prop_assert!(!aug.exhausted);
                // What the shipped orderings skip orders nothing.
                if !may_order(&Base::new(&t, &hb), policies) {
                    prop_assert!(aug.edges.is_empty());
                }
                let want = oracle::closure(&t, &hb, policies);
                let n = t.actions.len() as u32;
                for a in 0..n {
                    for b in a..n {
                        prop_assert_eq!(
                            aug.orders(a, b).is_some(),
                            want[a as usize].contains(&b),
                            "{} -> {} under {:?}", a, b,
                            policies.iter().map(|p| p.name.clone()).collect::<Vec<_>>()
                        );
                    }
                }
            }
        }
    }

    /// Shapes where many asynchronous operations are forked and several user events meet
    /// them: the user events mostly one after the other (so a group's settled members are
    /// skipped), sometimes not (so it looks at all of them again), timers forked by user
    /// events, by timers and by scripts (so an adder reaches a user event only through an
    /// ordering the policy added). `async-user`, `init-user-plus` and all five together
    /// against the oracle.
    fn busy_trace(
        shapes: &[bool],
        forks: &[(usize, bool)],
        chain: &[bool],
        joins: &[(usize, usize)],
    ) -> (Trace, Vec<(u32, u32)>) {
        // true: a click; false: a timer, every fifth a script.
        let idx: Vec<usize> = shapes
            .iter()
            .enumerate()
            .map(|(i, &click)| {
                if click {
                    5
                } else if i % 5 == 4 {
                    1
                } else {
                    2
                }
            })
            .collect();
        let (t, mut hb) = trace(&idx, forks, joins);
        let users: Vec<u32> = (0..idx.len() as u32)
            .filter(|&i| idx[i as usize] == 5)
            .collect();
        for (k, w) in users.windows(2).enumerate() {
            if chain.get(k).copied().unwrap_or(false) {
                hb.push((w[0], w[1]));
            }
        }
        (t, hb)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// The user-event policies on many asynchronous operations agree with the oracle.
        #[test]
        fn user_event_policies_agree_with_the_oracle_on_busy_traces(
            shapes in proptest::collection::vec(proptest::bool::weighted(0.3), 2..36),
            forks in proptest::collection::vec((0usize..64, proptest::bool::weighted(0.85)), 36),
            chain in proptest::collection::vec(proptest::bool::weighted(0.75), 36),
            joins in proptest::collection::vec((0usize..36, 0usize..36), 0..4),
        ) {
            let (t, hb) = busy_trace(&shapes, &forks, &chain, &joins);
            let mut sets: Vec<Vec<Policy>> = ["async-user", "init-user-plus"]
                .iter()
                .filter_map(|name| crate::load(name).ok().map(|s| s.policies))
                .collect();
            let all: Vec<Policy> = crate::SHIPPED
                .iter()
                .filter_map(|(name, _)| crate::load(name).ok().map(|s| s.policies))
                .flatten()
                .collect();
            sets.push(all);
            // The shipped orderings' two-sided search against the search that names rules.
            let n = t.actions.len() as u32;
            let pairs: Vec<(u32, u32)> = (0..n).flat_map(|a| (a..n).map(move |b| (a, b))).collect();
            let by = shipped_orderings_within(&t, &hb, &pairs, u64::MAX);
            prop_assert!(by.undecided.is_empty());
            // Pairs given late (asked for once, on whichever thread answers) change nothing.
            let asked = std::sync::atomic::AtomicUsize::new(0);
            let late = shipped_orderings_deferred(TraceFacts::new(&t), &hb, || {
                asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                pairs.clone()
            });
            prop_assert_eq!(&late, &by);
            prop_assert_eq!(asked.load(std::sync::atomic::Ordering::Relaxed), 1);
            for (name, _) in crate::SHIPPED {
                let Ok(set) = crate::load(name) else { continue };
                let aug = Augmented::new(&t, &hb, &set.policies);
                for (k, &(a, b)) in pairs.iter().enumerate() {
                    prop_assert_eq!(
                        by.by_pair[k].iter().any(|x| x == name),
                        aug.orders(a, b).is_some_and(|rules| !rules.is_empty()),
                        "{} -> {} under {}", a, b, name
                    );
                }
            }
            for policies in &sets {
                let aug = Augmented::new(&t, &hb, policies);
                let want = oracle::closure(&t, &hb, policies);
                let n = t.actions.len() as u32;
                for a in 0..n {
                    for b in a..n {
                        prop_assert_eq!(
                            aug.orders(a, b).is_some(),
                            want[a as usize].contains(&b),
                            "{} -> {} under {:?}", a, b,
                            policies.iter().map(|p| p.name.clone()).collect::<Vec<_>>()
                        );
                    }
                }
            }
        }
    }

    /// A long session: async-user adds a rule per asynchronous operation and every click
    /// meets all of them. The budget stops the simulation and the policy is reported
    /// undecided instead of the analysis running for hours.
    /// The policies simulated one at a time are shipped ones (a misspelt name would let two
    /// of them run at once).
    #[test]
    fn the_heavy_policies_are_shipped() {
        for name in PER_ASYNC_OPERATION {
            assert!(crate::SHIPPED.iter().any(|(n, _)| *n == name), "{name}");
        }
    }

    #[test]
    fn a_policy_over_budget_is_undecided() {
        let mut shapes = Vec::new();
        for i in 0..3000 {
            shapes.push(if i % 10 == 9 { 5 } else { 2 });
        }
        let forks: Vec<(usize, bool)> = (0..shapes.len()).map(|i| (i + 7, true)).collect();
        let (t, hb) = trace(&shapes, &forks, &[]);
        let pairs = [(0, 9), (1, 19)];
        let unlimited = shipped_orderings_within(&t, &hb, &pairs, u64::MAX);
        assert!(unlimited.undecided.is_empty());
        let small = shipped_orderings_within(&t, &hb, &pairs, 10_000);
        assert!(
            small.undecided.contains(&"async-user".to_string()),
            "{small:?}"
        );
        for (i, names) in small.by_pair.iter().enumerate() {
            for name in names {
                assert!(unlimited.by_pair[i].contains(name), "{name} on pair {i}");
                assert!(!small.undecided.contains(name));
            }
        }
    }
}
