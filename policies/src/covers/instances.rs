//! Rule instances: a rule of a policy with its bindings, the action that added it and its
//! expirations worked out once; the initial ones of a trace and the extensions an activated
//! instance adds.

use super::matching::Env;
use crate::compile::glob_matches;
use crate::ir::{Policy, Rule};
use shepherd_trace::ActionId;

pub(super) struct Inst<'a> {
    pub(super) rule: &'a Rule,
    pub(super) policy: usize,
    pub(super) env: Env<'a>,
    pub(super) added_by: Option<ActionId>,
    pub(super) removed: bool,
    /// Its expirations worked out once (set by the indexed simulation when it adds it).
    pub(super) facts: Facts,
}

/// An instance's expirations as numbers: it is expired at operation `now` when
/// `arrive_by < arrived_to || parse_by < now`; `wait` is the action a postpone or discard
/// rule on begin waits for. Expirations never un-expire, so they are fixed at creation.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Facts {
    pub(super) arrive_by: u32,
    pub(super) parse_by: u32,
    pub(super) wait: Option<ActionId>,
}

/// What makes two rule instances the same rule of the active set.
pub(super) type InstKey<'a> = (usize, usize, Env<'a>, Option<ActionId>);

impl<'a> Inst<'a> {
    pub(super) fn key(&self) -> InstKey<'a> {
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
pub(super) struct Insts<'a> {
    chunks: Vec<Vec<Inst<'a>>>,
    len: usize,
}

impl<'a> Insts<'a> {
    const CHUNK: usize = 4096;

    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn push(&mut self, inst: Inst<'a>) {
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

/// An instance of every rule of the policies that apply to the trace's `page`.
pub(super) fn initial_instances<'a>(page: &str, policies: &'a [Policy]) -> Vec<Inst<'a>> {
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

/// The instances the extensions of `activated` add (`bound`: the matched event; `by`: the
/// action whose operation activated them).
pub(super) fn extensions<'a>(
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
