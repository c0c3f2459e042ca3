//! Adjacency lists in one array (compressed sparse rows): the happens-before graph both ways,
//! the forks each action makes and the policy edges by tail are all read through them.

/// Adjacency lists of `n` nodes in one array (compressed sparse rows), each list in the
/// order its pairs came: a list per node was a quarter of the simulation's memory on a
/// 115 000-action trace, the rest of which is a few bytes per action.
#[derive(Clone, Debug, Default)]
pub(super) struct Csr {
    /// `to[off[x]..off[x + 1]]` is node x's list.
    off: Vec<u32>,
    to: Vec<u32>,
}

impl Csr {
    /// The lists of `pairs` (from, to), every `from` below `n`.
    pub(super) fn new(n: usize, pairs: impl Iterator<Item = (u32, u32)> + Clone) -> Csr {
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
    pub(super) fn of(&self, x: u32) -> &[u32] {
        match (self.off.get(x as usize), self.off.get(x as usize + 1)) {
            (Some(&a), Some(&b)) => &self.to[a as usize..b as usize],
            _ => &[],
        }
    }

    /// Lets `f` reorder node `x`'s list in place.
    pub(super) fn reorder(&mut self, x: u32, f: impl FnOnce(&mut [u32])) {
        if let (Some(&a), Some(&b)) = (self.off.get(x as usize), self.off.get(x as usize + 1)) {
            f(&mut self.to[a as usize..b as usize]);
        }
    }

    /// Number of nodes.
    pub(super) fn nodes(&self) -> usize {
        self.off.len().saturating_sub(1)
    }
}
