//! Vector clocks over a greedy chain decomposition (EventRacer §4.1.4).
//!
//! Every action is put on a *chain* (a set of actions totally ordered by happens-before) and
//! gets a clock with one `u16` entry per chain: entry `c` is the position of the latest action
//! of chain `c` that happens before it. `a ⪯ b` then costs one load and one compare.
//!
//! Layout: all clocks live in one flat `Vec<u16>`, node after node in id order, each trimmed
//! after its last non-zero entry. Chains are picked lowest-index first, so long-lived early
//! chains keep most clocks short; a clock is only as wide as the newest chain it has seen.
//! Chains are capped at [`CHAIN_CAP`] actions so an entry can never overflow.

/// Most actions one chain may hold: positions run from 1 to this, so they fit a `u16`.
pub const CHAIN_CAP: u16 = u16::MAX;

/// Finished clocks of a whole graph (or of the augmented graph used for coverage).
#[derive(Clone, Debug, Default)]
pub struct Clocks {
    chain: Vec<u32>,
    pos: Vec<u16>,
    off: Vec<usize>,
    data: Vec<u16>,
    chain_len: Vec<u16>,
}

impl Clocks {
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.chain.len()
    }

    /// True for an empty graph.
    pub fn is_empty(&self) -> bool {
        self.chain.is_empty()
    }

    /// Number of chains in the decomposition.
    pub fn chains(&self) -> usize {
        self.chain_len.len()
    }

    /// The chain of node `v`.
    pub fn chain_of(&self, v: u32) -> u32 {
        self.chain[v as usize]
    }

    /// The 1-based position of node `v` in its chain.
    pub fn pos_of(&self, v: u32) -> u16 {
        self.pos[v as usize]
    }

    /// The (trimmed) clock of node `v`; missing entries are 0.
    pub fn clock(&self, v: u32) -> &[u16] {
        let v = v as usize;
        &self.data[self.off[v]..self.off[v + 1]]
    }

    /// Entry `c` of `v`'s clock.
    #[inline]
    pub fn entry(&self, v: u32, c: u32) -> u16 {
        let v = v as usize;
        let at = self.off[v] + c as usize;
        if at < self.off[v + 1] {
            self.data[at]
        } else {
            0
        }
    }

    /// `a ⪯ b` on actions: equal, or a path `a → … → b`. Ids are a topological order, so a
    /// larger `a` never reaches a smaller `b`.
    #[inline]
    pub fn ordered(&self, a: u32, b: u32) -> bool {
        a == b
            || (a < b
                && (b as usize) < self.chain.len()
                && self.entry(b, self.chain[a as usize]) >= self.pos[a as usize])
    }

    /// Bytes held by the clock entries and the per-node tables.
    pub fn bytes(&self) -> usize {
        self.data.capacity() * 2
            + self.off.capacity() * std::mem::size_of::<usize>()
            + self.chain.capacity() * 4
            + self.pos.capacity() * 2
            + self.chain_len.capacity() * 2
    }

    /// Total number of stored entries (sum of trimmed clock widths).
    pub fn entries(&self) -> usize {
        self.data.len()
    }
}

/// Builds [`Clocks`] one node at a time, in id order: `begin`, any number of `join_*`, then one
/// of the `finish_*` calls. Queries against the clock under construction (`reaches`) let
/// callers derive arcs (timer FIFO) or answer coverage questions before the node is sealed.
#[derive(Debug)]
pub struct ClockBuilder {
    clocks: Clocks,
    /// The clock of the node under construction.
    cur: Scratch,
}

impl Default for ClockBuilder {
    fn default() -> Self {
        Self::new(0)
    }
}

/// `dst[i] = max(dst[i], src[i])`: the clock join, the analysis' hottest loop. Written as a
/// plain zip so it vectorises; on x86-64 with AVX2 (checked at run time, the build targets
/// baseline x86-64 whose SSE2 has no unsigned 16-bit max) it runs 16 lanes per `vpmaxuw`.
#[inline]
pub(crate) fn max_into(dst: &mut [u16], src: &[u16]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of
            // calling a `target_feature(enable = "avx2")` function.
            unsafe { max_into_avx2(dst, src) };
            return;
        }
    }
    max_into_plain(dst, src);
}

#[inline]
fn max_into_plain(dst: &mut [u16], src: &[u16]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = (*d).max(*s);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn max_into_avx2(dst: &mut [u16], src: &[u16]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = (*d).max(*s);
    }
}

impl ClockBuilder {
    /// A builder expecting about `nodes` nodes.
    pub fn new(nodes: usize) -> ClockBuilder {
        let mut off = Vec::with_capacity(nodes + 1);
        off.push(0);
        ClockBuilder {
            clocks: Clocks {
                chain: Vec::with_capacity(nodes),
                pos: Vec::with_capacity(nodes),
                off,
                data: Vec::with_capacity(nodes * 4),
                chain_len: Vec::new(),
            },
            cur: Scratch::default(),
        }
    }

    /// Id of the node under construction.
    pub fn current(&self) -> u32 {
        self.clocks.chain.len() as u32
    }

    /// The clocks sealed so far.
    pub fn sealed(&self) -> &Clocks {
        &self.clocks
    }

    /// Joins the clock of an already sealed node `p` into the current one.
    #[inline]
    pub fn join_node(&mut self, p: u32) {
        let p = p as usize;
        let (s, e) = (self.clocks.off[p], self.clocks.off[p + 1]);
        self.cur.join(&self.clocks.data[s..e]);
    }

    /// Joins a clock from another store (same chain numbering) into the current one.
    #[inline]
    pub fn join_slice(&mut self, src: &[u16]) {
        self.cur.join(src);
    }

    /// Whether the node at (`chain`, `pos`) happens before the node under construction, given
    /// what was joined so far.
    #[inline]
    pub fn reaches(&self, chain: u32, pos: u16) -> bool {
        self.cur.reaches(chain, pos)
    }

    /// Whether sealed node `a` of this store happens before the node under construction.
    #[inline]
    pub fn reaches_node(&self, a: u32) -> bool {
        self.reaches(self.clocks.chain[a as usize], self.clocks.pos[a as usize])
    }

    /// Seals the current node on the first chain whose last node reaches it, or on a new
    /// chain (greedy decomposition). Returns its chain.
    pub fn finish_greedy(&mut self) -> u32 {
        let mut pick = None;
        for c in 0..self.cur.width() {
            let len = self.clocks.chain_len[c];
            if self.cur.get(c) == len && len < CHAIN_CAP {
                pick = Some(c);
                break;
            }
        }
        let c = match pick {
            Some(c) => c,
            None => {
                self.clocks.chain_len.push(0);
                self.clocks.chain_len.len() - 1
            }
        };
        let pos = self.clocks.chain_len[c] + 1;
        self.clocks.chain_len[c] = pos;
        self.seal(c as u32, pos, true);
        c as u32
    }

    /// Seals the current node on a chain chosen elsewhere (reusing a decomposition of a
    /// subgraph: a chain of G is still a chain of any G' ⊇ G).
    pub fn finish_fixed(&mut self, chain: u32, pos: u16) {
        let c = chain as usize;
        if self.clocks.chain_len.len() <= c {
            self.clocks.chain_len.resize(c + 1, 0);
        }
        self.clocks.chain_len[c] = self.clocks.chain_len[c].max(pos);
        self.seal(chain, pos, true);
    }

    /// Seals the current node without marking its own position (for auxiliary clocks that
    /// describe "what was reached through something else", not reachability itself).
    pub fn finish_raw(&mut self, chain: u32, pos: u16) {
        let c = chain as usize;
        if self.clocks.chain_len.len() <= c {
            self.clocks.chain_len.resize(c + 1, 0);
        }
        self.seal(chain, pos, false);
    }

    fn seal(&mut self, chain: u32, pos: u16, own: bool) {
        if own {
            self.cur.set(chain as usize, pos);
        }
        self.clocks.data.extend_from_slice(self.cur.trimmed());
        self.clocks.off.push(self.clocks.data.len());
        self.clocks.chain.push(chain);
        self.clocks.pos.push(pos);
        self.cur.clear();
    }

    /// The finished clocks.
    pub fn build(mut self) -> Clocks {
        self.clocks.data.shrink_to_fit();
        self.clocks
    }
}

/// One clock under construction, detached from any store: join slices, query, then take the
/// trimmed result. Used by the streaming sweep, which keeps only the clocks later nodes need.
#[derive(Debug, Default)]
pub struct Scratch {
    buf: Vec<u16>,
    width: usize,
}

impl Scratch {
    /// `self ⊔= src`.
    #[inline]
    pub fn join(&mut self, src: &[u16]) {
        let w = src.len();
        if w > self.width {
            if self.buf.len() < w {
                self.buf.resize(w, 0);
            }
            self.width = w;
        }
        max_into(&mut self.buf[..w], src);
    }

    /// Makes room for chains `0..width` (before [`Scratch::raise`]).
    #[inline]
    pub fn widen(&mut self, width: usize) {
        if width > self.width {
            if self.buf.len() < width {
                self.buf.resize(width, 0);
            }
            self.width = width;
        }
    }

    /// `self[chain] = max(self[chain], pos)` (joining one entry of a sparse clock); `chain`
    /// must be below the width given to [`Scratch::widen`].
    #[inline]
    pub fn raise(&mut self, chain: u32, pos: u16) {
        debug_assert!((chain as usize) < self.width);
        let e = &mut self.buf[chain as usize];
        *e = (*e).max(pos);
    }

    /// Whether the node at (`chain`, `pos`) is below this clock.
    #[inline]
    pub fn reaches(&self, chain: u32, pos: u16) -> bool {
        let c = chain as usize;
        c < self.width && self.buf[c] >= pos
    }

    /// Entry `c`.
    #[inline]
    pub fn get(&self, c: usize) -> u16 {
        if c < self.width { self.buf[c] } else { 0 }
    }

    /// All entries, at least `len` of them (those beyond the width are 0): for loops that
    /// look up many chains without a bounds branch each.
    pub fn padded(&mut self, len: usize) -> &[u16] {
        if self.buf.len() < len {
            self.buf.resize(len, 0);
        }
        &self.buf
    }

    /// Current width (entries beyond are 0).
    pub fn width(&self) -> usize {
        self.width
    }

    /// Sets entry `c` to `v` (growing).
    pub fn set(&mut self, c: usize, v: u16) {
        if self.buf.len() <= c {
            self.buf.resize(c + 1, 0);
        }
        self.width = self.width.max(c + 1);
        self.buf[c] = v;
    }

    /// The trimmed clock.
    pub fn trimmed(&self) -> &[u16] {
        let mut w = self.width;
        while w > 0 && self.buf[w - 1] == 0 {
            w -= 1;
        }
        &self.buf[..w]
    }

    /// Back to all zeros.
    pub fn clear(&mut self) {
        self.buf[..self.width].fill(0);
        self.width = 0;
    }
}

/// Chain membership of every node and the length of every chain (the greedy decomposition,
/// without the clocks).
#[derive(Clone, Debug, Default)]
pub struct ChainTable {
    chain: Vec<u32>,
    pos: Vec<u16>,
    len: Vec<u16>,
    tail: Vec<u32>,
}

impl ChainTable {
    /// Puts the next node on a chain whose last node is below `clock` (the node's joined
    /// predecessors), or on a new chain; sets the node's own entry in `clock`. Among the
    /// possible chains, one whose last node is `dead` (no successor left to process) is
    /// preferred: taking a live chain would force that node's real successor onto a new chain
    /// (a leaf such as a one-shot timer would otherwise steal the user-event chain).
    pub fn assign_greedy(&mut self, clock: &mut Scratch, dead: impl Fn(u32) -> bool) -> (u32, u16) {
        let mut pick = None;
        // Chain c can take the node when the node's clock reaches its last node (entry c equals
        // the chain's length). On a page with ≈ 1 000 chains few entries do (most are 0), so
        // blocks of 8 chains without one are passed over with one vector compare.
        let w = clock.width().min(self.len.len());
        let (entries, lens) = (&clock.buf[..w], &self.len[..w]);
        let (eb, _) = entries.as_chunks::<8>();
        let (lb, _) = lens.as_chunks::<8>();
        let mut c = 0;
        while c < w {
            if c % 8 == 0
                && let (Some(e), Some(l)) = (eb.get(c / 8), lb.get(c / 8))
                && !e.iter().zip(l).fold(false, |m, (a, b)| m | (a == b))
            {
                c += 8;
                continue;
            }
            let len = lens[c];
            if entries[c] == len && len < CHAIN_CAP {
                if dead(self.tail[c]) {
                    pick = Some(c);
                    break;
                }
                if pick.is_none() {
                    pick = Some(c);
                }
            }
            c += 1;
        }
        let c = pick.unwrap_or_else(|| {
            self.len.push(0);
            self.tail.push(0);
            self.len.len() - 1
        });
        let pos = self.len[c] + 1;
        self.len[c] = pos;
        self.tail[c] = self.chain.len() as u32;
        self.chain.push(c as u32);
        self.pos.push(pos);
        clock.set(c, pos);
        (c as u32, pos)
    }

    /// Whether node `p` is the last node of its chain.
    pub fn is_tail(&self, p: u32) -> bool {
        self.tail[self.chain[p as usize] as usize] == p
    }

    /// Whether `p`'s chain can take another node.
    pub fn has_room(&self, p: u32) -> bool {
        self.len[self.chain[p as usize] as usize] < CHAIN_CAP
    }

    /// Puts the next node on `p`'s chain (`p` must be its tail and below `clock`).
    pub fn extend(&mut self, p: u32, clock: &mut Scratch) -> (u32, u16) {
        let c = self.chain[p as usize] as usize;
        let pos = self.len[c] + 1;
        self.len[c] = pos;
        self.tail[c] = self.chain.len() as u32;
        self.chain.push(c as u32);
        self.pos.push(pos);
        clock.set(c, pos);
        (c as u32, pos)
    }

    /// Chain of node `v`.
    #[inline]
    pub fn chain_of(&self, v: u32) -> u32 {
        self.chain[v as usize]
    }

    /// Position of node `v` in its chain.
    #[inline]
    pub fn pos_of(&self, v: u32) -> u16 {
        self.pos[v as usize]
    }

    /// Number of chains.
    pub fn chains(&self) -> usize {
        self.len.len()
    }

    /// Number of nodes assigned.
    pub fn nodes(&self) -> usize {
        self.chain.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chain [`ChainTable::assign_greedy`] picks, by the plain scan it replaces.
    fn plain_pick(t: &ChainTable, clock: &Scratch, dead: impl Fn(u32) -> bool) -> Option<usize> {
        let mut pick = None;
        for c in 0..clock.width() {
            let len = t.len[c];
            if clock.get(c) == len && len < CHAIN_CAP {
                if dead(t.tail[c]) {
                    return Some(c);
                }
                if pick.is_none() {
                    pick = Some(c);
                }
            }
        }
        pick
    }

    #[test]
    fn greedy_assignment_skips_blocks_as_the_plain_scan_picks() {
        let mut t = ChainTable::default();
        let mut x = 7u64;
        let mut rnd = move |m: u64| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) % m
        };
        for _ in 0..3_000 {
            // A clock over the chains so far: mostly 0, some entries at a chain's end, some
            // below it; sometimes narrower than the table.
            let mut clock = Scratch::default();
            let width = if t.chains() == 0 {
                0
            } else {
                rnd(t.chains() as u64 + 1) as usize
            };
            clock.widen(width);
            for c in 0..width {
                let len = t.len[c];
                match rnd(20) {
                    0 => clock.set(c, len),
                    1 if len > 1 => clock.set(c, len - 1),
                    _ => {}
                }
            }
            let dead_mod = 1 + rnd(4);
            let dead = |v: u32| u64::from(v) % dead_mod == 0;
            let want = plain_pick(&t, &clock, dead);
            let chains = t.chains();
            let (c, _) = t.assign_greedy(&mut clock, dead);
            assert_eq!(c as usize, want.unwrap_or(chains));
        }
        assert!(t.chains() > 100, "{} chains", t.chains());
    }

    /// Fig. 6 of the paper: 1→3, 2→3, 2→4 style diamond; checks chain reuse and queries.
    #[test]
    fn small_dag_reachability_and_chain_reuse() {
        // 0 → 1, 0 → 2, 1 → 3, 2 → 3
        let preds: Vec<Vec<u32>> = vec![vec![], vec![0], vec![0], vec![1, 2]];
        let mut b = ClockBuilder::new(4);
        for ps in &preds {
            for &p in ps {
                b.join_node(p);
            }
            b.finish_greedy();
        }
        let c = b.build();
        assert_eq!(c.chains(), 2);
        assert!(c.ordered(0, 3));
        assert!(c.ordered(1, 3));
        assert!(c.ordered(2, 3));
        assert!(!c.ordered(1, 2));
        assert!(!c.ordered(2, 1));
        assert!(!c.ordered(3, 0));
        assert!(c.ordered(2, 2));
    }

    #[test]
    fn chains_are_capped() {
        let n = CHAIN_CAP as u32 + 10;
        let mut b = ClockBuilder::new(n as usize);
        for v in 0..n {
            if v > 0 {
                b.join_node(v - 1);
            }
            b.finish_greedy();
        }
        let c = b.build();
        assert_eq!(c.chains(), 2);
        assert!(c.ordered(0, n - 1));
        assert!(c.ordered(CHAIN_CAP as u32 - 1, CHAIN_CAP as u32));
        assert!(!c.ordered(n - 1, 0));
    }
}
