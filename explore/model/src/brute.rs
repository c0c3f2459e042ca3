//! Brute force: every maximal event sequence of a [`Program`], for checking the explorer
//! (every final state it can reach, reached) and as the no-reduction baseline of counts.

use crate::program::{Final, Program, QueueModel, State};
use std::collections::BTreeSet;

/// What enumerating every interleaving found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Enumeration {
    /// Maximal sequences (each a complete run).
    pub sequences: u64,
    /// Distinct final states.
    pub finals: BTreeSet<Final>,
    /// True when `limit` stopped the enumeration early.
    pub truncated: bool,
}

/// Enumerates every maximal sequence, up to `limit` of them.
pub fn enumerate(prog: &Program, limit: u64) -> Enumeration {
    let mut out = Enumeration::default();
    let mut stack = vec![State::new(prog)];
    while let Some(st) = stack.pop() {
        let en = st.enabled();
        if en.is_empty() {
            out.sequences += 1;
            out.finals.insert(st.finish());
            if out.sequences >= limit {
                out.truncated = !stack.is_empty();
                break;
            }
            continue;
        }
        for &e in en.iter().rev() {
            let mut next = st.clone();
            next.run_one(e, QueueModel::Fifo);
            stack.push(next);
        }
    }
    out
}
