//! The simulation (EventRaceCommander §V-C): the policies' rule instances run over the trace's
//! operations in order (the begin of each action, then the forks it makes), and every
//! postpone or discard rule that meets a begin and waits for one earlier action adds an edge.
//! Also whether a policy set can order anything in a trace at all, decided without simulating.

use super::augmented::{Augmented, Graph, PolicyEdge};
use super::back::Back;
use super::csr::Csr;
use super::facts::{Base, Evs, TraceFacts};
use super::index::{Group, Index, kill};
use super::instances::{Facts, Inst, Insts, extensions, initial_instances};
use super::matching::{Env, pred_matches, subject_matches};
use crate::ast::{Action, Op};
use crate::ir::{Expiry, Policy, Pred, Rule, Subject};
use shepherd_trace::{ActionId, Trace};
use std::cmp::Reverse;
use std::collections::HashMap;
use std::sync::Arc;

/// The trace facts every expiration and predicate is judged against.
struct World<'w, 't> {
    evs: &'w Evs<'t>,
    dcl: Option<u32>,
    load: Option<u32>,
    /// First action matching an `arrived(pattern)` and the earliest end of one (by the
    /// pattern's address), computed once.
    first_match: HashMap<*const Pred, Option<(ActionId, ActionId)>>,
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
                    let end = inst.env.get(x).map(|u| self.evs.end(u));
                    f.arrive_by = f.arrive_by.min(end.unwrap_or(u32::MAX))
                }
                Expiry::ArrivedMatch(p) => {
                    f.arrive_by = f.arrive_by.min(self.first_end(p).unwrap_or(u32::MAX))
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

    /// The first action matching `p` and the earliest end ([`Evs::end`]) of one: an
    /// `arrived(p)` holds once some matching event ran to its end.
    fn first_match(&mut self, p: &Pred) -> Option<(ActionId, ActionId)> {
        let (evs, n) = (self.evs, self.evs.len());
        *self.first_match.entry(p as *const Pred).or_insert_with(|| {
            let none = Env::default();
            let mut matches = (0..n as u32).filter(|&i| pred_matches(p, i, evs, &none));
            let first = matches.next()?;
            let end = matches.fold(evs.end(first), |m, i| m.min(evs.end(i)));
            Some((first, end))
        })
    }

    fn first_end(&mut self, p: &Pred) -> Option<ActionId> {
        self.first_match(p).map(|(_, end)| end)
    }

    /// The action a rule with this single expiration waits for: the end of the event it
    /// names.
    fn waits_for(&mut self, e: &Expiry, env: &Env) -> Option<ActionId> {
        match e {
            Expiry::ArrivedVar(x) => env.get(x).map(|u| self.evs.end(u)),
            Expiry::Parsed => self.dcl,
            Expiry::Loaded => self.load,
            Expiry::ArrivedMatch(p) => {
                let (first, _) = self.first_match(p)?;
                let none = Env::default();
                let second = (first + 1..self.evs.len() as u32)
                    .find(|&i| pred_matches(p, i, self.evs, &none));
                second.is_none().then(|| self.evs.end(first))
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
                add_waits(&mut aug, &mut back, &insts, v, waits);
            }
            work += back.take_visits();
            apply(
                &mut insts, &mut index, &mut world, &activated, policies, v, v,
            );
            // Forks made by v. v's handler is still running: `arrived(v)` does not hold for
            // them yet (EventRaceCommander expires an observer after the awaited event's
            // handler, so the forks of that handler are seen).
            for &w in forks.of(v) {
                let mut activated = Vec::new();
                let mut dead = Vec::new();
                for g in &mut index.fork_groups {
                    if g.unbound && !pred_matches(&g.rule.pred, w, evs, &Env::default()) {
                        continue;
                    }
                    let (unbound, uniform) = (g.unbound, g.uniform);
                    work += g.walk(&insts, |i| match meet(&insts[i], unbound, w, v, v, evs) {
                        Met::Active => {
                            activated.push(i);
                            uniform
                        }
                        Met::Dead => {
                            dead.push(i);
                            false
                        }
                        Met::Expired | Met::Skip => false,
                    });
                }
                // Not taken out: an action with two creators is forked twice.
                if let Some(list) = index.fork_at.get(&w).cloned() {
                    work += list.len() as u64;
                    for i in list {
                        if insts[i].removed {
                            continue;
                        }
                        match meet(&insts[i], false, w, v, v, evs) {
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
}

/// Adds the edges of the `waits` (waited-for action, instance) that met the begin of `v`. A
/// rule added by an action that does not reach v is absent in some schedule, so it orders
/// nothing; but an edge added here may make its adder reach v (init-user's `postpone user
/// until parsed` orders a click after the parse that forked the timer a WAITFOR waits for),
/// so the absent ones are judged again until no edge comes.
fn add_waits(
    aug: &mut Augmented,
    back: &mut Back,
    insts: &Insts,
    v: u32,
    mut pending: Vec<(u32, usize)>,
) {
    loop {
        let (mut present, absent): (Vec<_>, Vec<_>) =
            pending
                .into_iter()
                .partition(|&(_, i)| match insts[i].added_by {
                    None => true,
                    Some(a) => back.reaches(a, v, aug.graph()),
                });
        // Latest first: an edge from u makes everything that reaches u reach v, so the
        // earlier waits it implies add nothing.
        present.sort_unstable_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
        present.dedup_by_key(|w| w.0);
        let mut added = false;
        for (u, i) in present {
            if back.reaches(u, v, aug.graph()) {
                continue;
            }
            aug.edges.push(PolicyEdge {
                from: u,
                to: v,
                rule: insts[i].rule.id.clone(),
            });
            back.add_source(u);
            added = true;
        }
        if !added || absent.is_empty() {
            return;
        }
        pending = absent;
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
/// for an action that already reaches v (they add nothing). A member whose adder does not
/// reach v yet stays unsettled, and its wait is collected too (an edge to v may make the
/// adder reach it, [`add_waits`]). When the group's last action reaches v, only its
/// unsettled members are looked at. Activation does nothing for such a rule, so none is
/// reported. Returns the work done.
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
                    waits.push((u, i));
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

/// Whether `policies` can order anything in `base`'s trace. Orderings come only from postpone
/// and discard rules meeting the begin of an action their predicate matches; a term naming a
/// bound event may match any action, the others are judged by their subject alone (filters
/// only narrow). A trace recorded without input has no user event, and three of the five
/// shipped policies postpone or discard nothing else: their simulations (most of the policy
/// step on a long page-load trace) cannot add an ordering.
pub(super) fn may_order(base: &Base, policies: &[Policy]) -> bool {
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
