//! Where the streaming sweep (`sweep/`) keeps the clocks later actions still need (each of its
//! two halves has a store of its own).
//!
//! Two things made the per-clock boxes this replaces grow far beyond the clocks they held
//! (≈ 190 MB resident for ≈ 30 MB of live entries on a 1 000-chain trace):
//!
//! - **Fragmentation.** Clocks live for very different times (a location's last writer for the
//!   whole trace, most others for a few actions) and grow wider as chains appear, so every
//!   clock had a slightly larger size than the ones freed before it: the allocator's pages
//!   for each size stayed pinned by a few survivors. Here clocks are blocks in fixed-size
//!   chunks, and when the freed blocks outweigh half the live ones the store slides the live
//!   blocks down (in place, in address order) and drops the chunks left empty. Resident
//!   memory stays within 1.5× the live entries plus one chunk, and each stored entry is
//!   copied at most twice on average.
//! - **Sparse clocks.** A happens-before clock names one position per chain, but on a page
//!   most chains (finished requests, one-shot timers, independent callbacks) are unordered
//!   with a given action: its entries are mostly 0 (≈ 5 % are set on the 1 000-chain trace).
//!   A clock is stored as `(chain, position)` pairs when that is smaller than the dense
//!   vector, so its size follows what it reaches, not how many chains exist. Clocks that
//!   include race arcs (`G⁺`) are dense (≈ 99 %) and stay vectors.
//!
//! Block layout: a 4-entry header (key, length with a sparse flag), then the payload: `len`
//! entries, or `len` pairs of (chain: two `u16`, position).

use crate::clocks::Scratch;

/// Entries per chunk (256 KiB; 1 KiB in unit tests, so sweeps over small traces compact
/// often). A block never spans chunks; a larger one gets a chunk of its own size.
const CHUNK: usize = if cfg!(test) { 1 << 9 } else { 1 << 17 };
/// Header: key (2 entries), payload length (2 entries, top bit = sparse).
const HEADER: usize = 4;
const SPARSE: u32 = 1 << 31;
/// Marks a freed block's key.
const FREED: u32 = u32::MAX;
const NOWHERE: u64 = u64::MAX;

/// A stored clock, borrowed.
#[derive(Clone, Copy, Debug)]
pub enum ClockRef<'a> {
    /// Entry per chain, trimmed after the last non-zero one.
    Dense(&'a [u16]),
    /// `(chain, position)` triples `[chain_lo, chain_hi, pos]`, by increasing chain.
    Sparse(&'a [u16]),
}

impl ClockRef<'_> {
    /// The empty clock.
    pub const EMPTY: ClockRef<'static> = ClockRef::Dense(&[]);

    /// Entry `c`.
    pub fn entry(self, c: u32) -> u16 {
        match self {
            ClockRef::Dense(d) => d.get(c as usize).copied().unwrap_or(0),
            ClockRef::Sparse(s) => {
                let pairs = s.len() / 3;
                let (mut lo, mut hi) = (0, pairs);
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    let k = chain_at(s, mid);
                    if k == c {
                        return s[3 * mid + 2];
                    }
                    if k < c {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                0
            }
        }
    }

    /// `into ⊔= self`.
    pub fn join_into(self, into: &mut Scratch) {
        match self {
            ClockRef::Dense(d) => into.join(d),
            ClockRef::Sparse(s) => {
                if let Some(last) = s.len().checked_sub(3) {
                    into.widen(chain_at(s, last / 3) as usize + 1);
                }
                for t in s.chunks_exact(3) {
                    into.raise(u32::from(t[0]) | (u32::from(t[1]) << 16), t[2]);
                }
            }
        }
    }
}

fn chain_at(s: &[u16], i: usize) -> u32 {
    u32::from(s[3 * i]) | (u32::from(s[3 * i + 1]) << 16)
}

/// Clocks by key (`0..keys`), in chunks, compacted as they are freed.
#[derive(Debug)]
pub struct ClockStore {
    chunks: Vec<Vec<u16>>,
    /// Per key: `chunk << 32 | offset` of its block, or [`NOWHERE`].
    at: Vec<u64>,
    /// Entries in live blocks (headers included).
    live: usize,
    /// Entries in freed blocks and chunk tails left unused.
    garbage: usize,
    /// Most entries held at once (live + garbage).
    peak: usize,
    /// Chunk size ([`CHUNK`]; smaller in tests, to compact often).
    chunk: usize,
    /// Chunks emptied by compaction, kept for the next ones: handing them back to the
    /// allocator and asking again costs a page fault and a page clear per 4 KiB.
    spare: Vec<Vec<u16>>,
}

impl ClockStore {
    /// A store for keys `0..keys`.
    pub fn new(keys: usize) -> ClockStore {
        Self::with_chunk(keys, CHUNK)
    }

    fn with_chunk(keys: usize, chunk: usize) -> ClockStore {
        ClockStore {
            chunks: Vec::new(),
            at: vec![NOWHERE; keys],
            live: 0,
            garbage: 0,
            peak: 0,
            chunk,
            spare: Vec::new(),
        }
    }

    /// Entries held by live blocks (headers included).
    pub fn live(&self) -> usize {
        self.live
    }

    /// Most entries held at once, freed blocks not yet compacted included.
    pub fn peak(&self) -> usize {
        self.peak
    }

    /// How many keys have a clock (counted: for checks, not hot paths).
    pub fn held(&self) -> usize {
        self.at.iter().filter(|&&at| at != NOWHERE).count()
    }

    /// Whether `key` has a clock.
    pub fn has(&self, key: u32) -> bool {
        self.at[key as usize] != NOWHERE
    }

    /// Stores `clock` (trimmed, dense) under `key`, replacing any clock it had; sparse when
    /// that is smaller.
    pub fn put(&mut self, key: u32, clock: &[u16]) {
        self.remove(key);
        let nz = count_nonzero(clock);
        let sparse = 3 * nz < clock.len();
        let payload = if sparse { 3 * nz } else { clock.len() };
        let size = HEADER + payload;
        let (ci, off) = self.reserve(size);
        let len = if sparse {
            nz as u32 | SPARSE
        } else {
            clock.len() as u32
        };
        let chunk = &mut self.chunks[ci];
        chunk.extend_from_slice(&[
            key as u16,
            (key >> 16) as u16,
            len as u16,
            (len >> 16) as u16,
        ]);
        if sparse {
            let start = chunk.len();
            chunk.resize(start + 3 * nz, 0);
            let mut t = start;
            for_each_nonzero(clock, |c, e| {
                chunk[t..t + 3].copy_from_slice(&[c as u16, (c >> 16) as u16, e]);
                t += 3;
            });
        } else {
            chunk.extend_from_slice(clock);
        }
        self.at[key as usize] = (ci as u64) << 32 | off as u64;
        self.live += size;
        self.peak = self.peak.max(self.live + self.garbage);
    }

    /// The clock under `key` (empty when there is none).
    pub fn get(&self, key: u32) -> ClockRef<'_> {
        let at = self.at[key as usize];
        if at == NOWHERE {
            return ClockRef::EMPTY;
        }
        let chunk = &self.chunks[(at >> 32) as usize];
        let off = at as u32 as usize;
        let (len, sparse) = block_len(chunk, off);
        let body = &chunk[off + HEADER..];
        if sparse {
            ClockRef::Sparse(&body[..3 * len])
        } else {
            ClockRef::Dense(&body[..len])
        }
    }

    /// Frees `key`'s clock, if any.
    pub fn remove(&mut self, key: u32) {
        let at = std::mem::replace(&mut self.at[key as usize], NOWHERE);
        if at == NOWHERE {
            return;
        }
        let chunk = &mut self.chunks[(at >> 32) as usize];
        let off = at as u32 as usize;
        let size = HEADER + payload_of(chunk, off);
        chunk[off] = FREED as u16;
        chunk[off + 1] = (FREED >> 16) as u16;
        self.live -= size;
        self.garbage += size;
        if self.garbage > self.live / 4 + self.chunk {
            self.compact();
        }
    }

    /// Room for a block of `size` entries at the end: `(chunk, offset)`.
    fn reserve(&mut self, size: usize) -> (usize, usize) {
        if let Some(last) = self.chunks.last() {
            if last.capacity() - last.len() >= size {
                return (self.chunks.len() - 1, last.len());
            }
            // The tail is left unused until the next compaction.
            self.garbage += last.capacity() - last.len();
        }
        let fresh = match self.spare.pop() {
            Some(c) if c.capacity() >= size => c,
            _ => Vec::with_capacity(size.max(self.chunk)),
        };
        self.chunks.push(fresh);
        (self.chunks.len() - 1, 0)
    }

    /// Slides live blocks down in address order (a block never moves up, so it can be copied
    /// in place) and drops the chunks left empty.
    fn compact(&mut self) {
        let (mut dc, mut doff) = (0usize, 0usize);
        for sc in 0..self.chunks.len() {
            let mut soff = 0;
            while soff < self.chunks[sc].len() {
                let chunk = &self.chunks[sc];
                let size = HEADER + payload_of(chunk, soff);
                let key = u32::from(chunk[soff]) | (u32::from(chunk[soff + 1]) << 16);
                if key != FREED {
                    if self.chunks[dc].capacity() - doff < size {
                        // Truncating `dc` when it is `sc` would cut the block being moved;
                        // but a block that fits nowhere before its own place is already
                        // there (`dc == sc` and `doff <= soff` means it fits).
                        self.chunks[dc].truncate(doff);
                        dc += 1;
                        doff = 0;
                    }
                    if dc == sc {
                        self.chunks[sc].copy_within(soff..soff + size, doff);
                    } else {
                        let (lo, hi) = self.chunks.split_at_mut(sc);
                        let dst = &mut lo[dc];
                        let src = &hi[0][soff..soff + size];
                        if dst.len() < doff + size {
                            dst.resize(doff + size, 0);
                        }
                        dst[doff..doff + size].copy_from_slice(src);
                    }
                    self.at[key as usize] = (dc as u64) << 32 | doff as u64;
                    doff += size;
                }
                soff += size;
            }
        }
        if let Some(c) = self.chunks.get_mut(dc) {
            c.truncate(doff);
        }
        // Keep a few emptied chunks (a quarter of those in use), give the rest back.
        let keep = (dc + 1) / 4 + 1;
        for mut c in self.chunks.drain((dc + 1).min(self.chunks.len())..) {
            if self.spare.len() < keep && c.capacity() == self.chunk {
                c.clear();
                self.spare.push(c);
            }
        }
        self.spare.truncate(keep);
        self.garbage = 0;
    }
}

/// Non-zero entries of `clock`. Counted in `u16` lanes over blocks short enough not to
/// overflow them, which vectorises (the plain filter-count did not, and was a fifth of the
/// sweep's instructions on the 1 000-chain page).
fn count_nonzero(clock: &[u16]) -> usize {
    clock
        .chunks(1 << 15)
        .map(|b| usize::from(b.iter().fold(0u16, |n, &e| n + u16::from(e != 0))))
        .sum()
}

/// Calls `f(index, entry)` for each non-zero entry in order, skipping zeros eight at a time:
/// on a page with ≈ 1 000 chains ≈ 95 % of a clock's entries are 0.
#[inline]
fn for_each_nonzero(clock: &[u16], mut f: impl FnMut(usize, u16)) {
    let (blocks, rest) = clock.as_chunks::<8>();
    for (k, b) in blocks.iter().enumerate() {
        // One 16-byte compare: the block's length is known here.
        if *b != [0; 8] {
            for (i, &e) in b.iter().enumerate() {
                if e != 0 {
                    f(8 * k + i, e);
                }
            }
        }
    }
    let base = 8 * blocks.len();
    for (i, &e) in rest.iter().enumerate() {
        if e != 0 {
            f(base + i, e);
        }
    }
}

fn block_len(chunk: &[u16], off: usize) -> (usize, bool) {
    let raw = u32::from(chunk[off + 2]) | (u32::from(chunk[off + 3]) << 16);
    ((raw & !SPARSE) as usize, raw & SPARSE != 0)
}

fn payload_of(chunk: &[u16], off: usize) -> usize {
    match block_len(chunk, off) {
        (len, true) => 3 * len,
        (len, false) => len,
    }
}

/// A running join of clocks (single coverage keeps two per location: of all its accesses and
/// of its writes). Like stored clocks, these reach few chains (≈ 16 % of the entries are set
/// on the 1 000-chain trace), so a join is a list of `chain << 16 | position` words until that
/// list would outweigh the dense vector (or names a chain past 65 535).
#[derive(Debug)]
pub enum RunningJoin {
    /// `chain << 16 | position` by increasing chain, positions non-zero.
    Sparse(Vec<u32>),
    /// Entry per chain, trimmed.
    Dense(Vec<u16>),
}

impl Default for RunningJoin {
    fn default() -> Self {
        RunningJoin::Sparse(Vec::new())
    }
}

/// Grows `v` to hold `len` items, by at least an eighth (widths creep up a chain at a time)
/// but without doubling: thousands of these stay alive at once.
fn grow_to<T>(v: &mut Vec<T>, len: usize) {
    if v.capacity() < len {
        v.reserve_exact((len - v.len()).max(v.len() / 8));
    }
}

/// The dense clock of `chain << 16 | position` words, `width` entries.
fn dense(words: &[u32], width: usize) -> Vec<u16> {
    let mut d = vec![0u16; width];
    for &w in words {
        d[(w >> 16) as usize] = w as u16;
    }
    d
}

impl RunningJoin {
    /// Size in clock entries (`u16`), for the sweep's accounting.
    pub fn entries(&self) -> usize {
        match self {
            RunningJoin::Sparse(v) => 2 * v.capacity(),
            RunningJoin::Dense(d) => d.capacity(),
        }
    }

    /// `into ⊔= self`.
    pub fn join_into(&self, into: &mut Scratch) {
        match self {
            RunningJoin::Sparse(v) => {
                if let Some(&last) = v.last() {
                    into.widen((last >> 16) as usize + 1);
                }
                for &w in v {
                    into.raise(w >> 16, w as u16);
                }
            }
            RunningJoin::Dense(d) => into.join(d),
        }
    }

    /// `self ⊔= clock` (dense, trimmed); `buf` is scratch space for merges.
    pub fn absorb(&mut self, clock: &[u16], buf: &mut Vec<u32>) {
        if clock.len() > 1 << 16
            && let RunningJoin::Sparse(v) = self
        {
            *self = RunningJoin::Dense(dense(v, clock.len()));
        }
        let v = match self {
            RunningJoin::Dense(d) => {
                if d.len() < clock.len() {
                    grow_to(d, clock.len());
                    d.resize(clock.len(), 0);
                }
                crate::clocks::max_into(&mut d[..clock.len()], clock);
                return;
            }
            RunningJoin::Sparse(v) => v,
        };
        buf.clear();
        let mut old = v.iter().copied().peekable();
        // Merge by chain; an old word at a chain the clock does not reach is copied when the
        // next reached chain (or the end) passes it.
        for_each_nonzero(clock, |c, e| {
            let c = c as u32;
            while let Some(&w) = old.peek()
                && w >> 16 < c
            {
                buf.push(w);
                old.next();
            }
            let mut e = e;
            if let Some(&w) = old.peek()
                && w >> 16 == c
            {
                e = e.max(w as u16);
                old.next();
            }
            buf.push(c << 16 | u32::from(e));
        });
        buf.extend(old);
        let width = buf.last().map_or(0, |&w| (w >> 16) as usize + 1);
        if 2 * buf.len() >= width && width > 0 {
            *self = RunningJoin::Dense(dense(buf, width));
        } else {
            v.clear();
            grow_to(v, buf.len());
            v.extend_from_slice(buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense(r: ClockRef<'_>, width: usize) -> Vec<u16> {
        (0..width as u32).map(|c| r.entry(c)).collect()
    }

    #[test]
    fn nonzero_scans_match_the_plain_loop() {
        // Lengths around the 8-entry blocks, zeros and values in blocks and in the remainder.
        for len in [0usize, 1, 7, 8, 9, 16, 23, 1_052] {
            for stride in [1usize, 3, 8, 13] {
                let c: Vec<u16> = (0..len)
                    .map(|i| if i % stride == 0 { (i as u16) | 1 } else { 0 })
                    .collect();
                let want: Vec<(usize, u16)> = c
                    .iter()
                    .enumerate()
                    .filter(|&(_, &e)| e != 0)
                    .map(|(i, &e)| (i, e))
                    .collect();
                let mut got = Vec::new();
                for_each_nonzero(&c, |i, e| got.push((i, e)));
                assert_eq!(got, want, "len {len} stride {stride}");
                assert_eq!(count_nonzero(&c), want.len());
            }
        }
        assert_eq!(count_nonzero(&vec![1u16; 70_000]), 70_000);
    }

    #[test]
    fn stores_sparse_and_dense_and_survives_compaction() {
        let mut s = ClockStore::with_chunk(2_000, 1_024);
        let mut want: Vec<Option<Vec<u16>>> = vec![None; 2_000];
        let mut most_live = 0;
        for k in 0..2_000u32 {
            // Every third clock is dense; the others reach two chains out of hundreds.
            let width = 50 + (k as usize * 7) % 700;
            let mut c = vec![0u16; width];
            if k % 3 == 0 {
                for (i, e) in c.iter_mut().enumerate() {
                    *e = (i as u16 + k as u16) | 1;
                }
            } else {
                c[k as usize % width] = 9;
                c[width - 1] = k as u16 + 1;
            }
            s.put(k, &c);
            most_live = most_live.max(s.live());
            want[k as usize] = Some(c);
            // Free most older clocks so compaction runs many times.
            if k >= 5 && k % 5 != 0 {
                s.remove(k - 5);
                want[k as usize - 5] = None;
            }
        }
        assert!(matches!(s.get(5), ClockRef::Sparse(_)));
        assert!(matches!(s.get(0), ClockRef::Dense(_)));
        for (k, w) in want.iter().enumerate() {
            match w {
                Some(c) => {
                    assert_eq!(dense(s.get(k as u32), c.len() + 5)[..c.len()], c[..]);
                    let mut sc = Scratch::default();
                    s.get(k as u32).join_into(&mut sc);
                    assert_eq!(sc.trimmed(), &c[..]);
                }
                None => assert!(!s.has(k as u32)),
            }
        }
        assert!(s.peak() <= most_live * 3 / 2 + 2 * 1_024);
    }

    #[test]
    fn oversized_blocks_get_their_own_chunk() {
        let mut s = ClockStore::with_chunk(4, 64);
        let big = vec![1u16; 100];
        s.put(0, &[3, 0, 4]);
        s.put(1, &big);
        s.put(2, &[0, 0, 7]);
        s.remove(0);
        s.compact();
        assert_eq!(s.get(1).entry(99), 1);
        assert_eq!(s.get(1).entry(100), 0);
        assert_eq!(s.get(2).entry(2), 7);
        assert_eq!(s.get(2).entry(1), 0);
        assert!(!s.has(0));
    }

    #[test]
    fn running_joins_agree_with_dense_joins() {
        let mut j = RunningJoin::default();
        let mut want: Vec<u16> = Vec::new();
        let mut buf = Vec::new();
        for k in 0..300usize {
            // Mostly short sparse clocks, now and then a wide dense one.
            let width = if k % 50 == 49 { 600 } else { 20 + k * 2 };
            let mut c = vec![0u16; width];
            if k % 50 == 49 {
                for (i, e) in c.iter_mut().enumerate() {
                    *e = (i % 7) as u16;
                }
            } else {
                c[(k * 13) % width] = k as u16 + 1;
                c[width - 1] = 3;
            }
            j.absorb(&c, &mut buf);
            if want.len() < c.len() {
                want.resize(c.len(), 0);
            }
            for (w, e) in want.iter_mut().zip(&c) {
                *w = (*w).max(*e);
            }
            let mut sc = Scratch::default();
            j.join_into(&mut sc);
            assert_eq!(
                sc.trimmed(),
                &want[..want.iter().rposition(|&e| e != 0).map_or(0, |i| i + 1)]
            );
            if k == 2 {
                assert!(matches!(j, RunningJoin::Sparse(_)));
            }
        }
        assert!(matches!(j, RunningJoin::Dense(_)));
    }
}
