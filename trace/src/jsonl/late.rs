//! Late operations (`["R",A,I,…]`, `["W",A,I,…]`, version 5): reads and writes of an action
//! that the runtime logs after the action has ended. The runtime holds back the accesses of
//! an object's fields while one action alone has touched the object (they cannot race), and
//! logs them when a second action touches it (`docs/trace-format.md`, "Late operations").
//! Each names the number of operations its action had logged before it, so the reader puts
//! it back where it happened: inside the same scopes, before the same exceptions.

use crate::model::{ActionId, Op, Trace};

/// A late operation as read: not yet placed into its action.
#[derive(Clone, Copy, Debug)]
pub(super) struct Late {
    pub(super) action: ActionId,
    /// How many of the action's own (not late) operations came before it.
    pub(super) index: u32,
    pub(super) op: Op,
}

/// Places `late` into the actions of `trace` (whose operations tile `trace.ops` in action
/// order, as the readers build them), each after the first `index` operations its action
/// logged, late operations at the same place in the order they were read.
pub(super) fn place(trace: &mut Trace, mut late: Vec<Late>) {
    if late.is_empty() {
        return;
    }
    // Stable: the order of the file among late operations at one place.
    late.sort_by_key(|l| (l.action, l.index));
    let old = std::mem::take(&mut trace.ops);
    let mut ops = Vec::with_capacity(old.len() + late.len());
    let mut pending = late.into_iter().peekable();
    for (a, action) in trace.actions.iter_mut().enumerate() {
        let a = a as ActionId;
        let (s, e) = (action.ops.start as usize, action.ops.end as usize);
        let own = old.get(s..e).unwrap_or_default();
        let start = ops.len() as u32;
        for (i, op) in own.iter().enumerate() {
            while let Some(l) = pending.next_if(|l| l.action == a && l.index as usize <= i) {
                ops.push(l.op);
            }
            ops.push(*op);
        }
        while let Some(l) = pending.next_if(|l| l.action == a) {
            ops.push(l.op);
        }
        action.ops = start..ops.len() as u32;
    }
    trace.ops = ops;
}
