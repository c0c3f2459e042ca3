//! Where each live rule instance is looked for, per operation: groups of instances of one rule
//! (judged once for the group when the predicate reads no binding), and instances that name a
//! bound event, by that event.

use super::instances::{Inst, InstKey, Insts};
use super::matching::term_reads_vars;
use crate::ast::{Action, Op};
use crate::ir::{Rule, Subject};
use shepherd_trace::{ActionId, FastState};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

/// The instances of one rule whose predicate can match many actions. Instances of a rule
/// differ only in their bindings, so when the predicate reads none of them it is judged once
/// per operation for the whole group.
pub(super) struct Group<'a> {
    pub(super) rule: &'a Rule,
    /// The predicate reads no variable.
    pub(super) unbound: bool,
    /// Every active member does the same thing: the predicate reads no variable, the rule
    /// only dispatches, is not `once`, and its templates get only the matched event. Then one
    /// active member stands for all (WAITREC(u) for a thousand pending u on every fork).
    pub(super) uniform: bool,
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
    pub(super) waits_only: bool,
    /// The last action whose begin met the group (a `waits_only` group). Every live member
    /// not in `unsettled` waits for an action that reaches it: the member then ordered
    /// that action before it, or it was already before. An action `last` reaches needs
    /// nothing from those members (they wait for actions that reach it already).
    pub(super) last: Option<ActionId>,
    /// The members that may still order an action reached from `last`: added since, or
    /// added by an action that did not reach it; those waiting for an action that had not
    /// begun by then are in `pending` instead.
    pub(super) unsettled: Vec<usize>,
    /// Unsettled members by the action they wait for, first on top: each asynchronous
    /// operation not yet run has one, and a user event looks only at those whose action has
    /// begun (≈ 150 running timer loops and requests on the wide page, every one of which
    /// would otherwise be looked at by each of its 60 000 user events).
    pub(super) pending: BinaryHeap<Reverse<(ActionId, usize)>>,
}

impl Group<'_> {
    /// Remembers member `i` as unsettled (a `waits_only` group); members that wait for no
    /// single action order nothing and are not kept.
    pub(super) fn unsettle(&mut self, i: usize, wait: Option<ActionId>, v: ActionId) {
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
    pub(super) fn walk(&mut self, insts: &Insts, mut visit: impl FnMut(usize) -> bool) -> u64 {
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
pub(super) struct Index<'a> {
    pub(super) begin_groups: Vec<Group<'a>>,
    pub(super) fork_groups: Vec<Group<'a>>,
    /// Instances whose predicate names only bound events, by the event they name.
    pub(super) begin_at: HashMap<ActionId, Vec<usize>, FastState>,
    pub(super) fork_at: HashMap<ActionId, Vec<usize>, FastState>,
    /// Keys of the live instances added by the action being simulated. An extension's key
    /// names the action whose operation added it (`added_by`), so an equal instance can only
    /// come from the same action: the set starts empty for each, instead of holding every
    /// live instance (85 000 on a 115 000-action page, where probing it was a third of the
    /// simulation's time).
    pub(super) live: HashSet<InstKey<'a>, FastState>,
}

impl<'a> Index<'a> {
    pub(super) fn add(&mut self, i: usize, inst: &Inst<'a>) {
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

/// Removes instance `i` from the active set.
pub(super) fn kill<'a>(insts: &mut Insts<'a>, index: &mut Index<'a>, i: usize) {
    if !insts[i].removed {
        insts[i].removed = true;
        index.live.remove(&insts[i].key());
    }
}
