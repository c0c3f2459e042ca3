//! R4's reorder phase: the stateless model checker of Jensen et al., Algorithms 1–4.
//!
//! - `T` and `V` (Algorithm 1) are maps from prefixes (event sequences from the start) to sets:
//!   the pending conflict-reversal sequences `T_seq` (Algorithm 3: whole sequences, so a
//!   reversal is replayed with the rest of its parent kept) and the events already explored
//!   there. Prefixes are keyed by a hash of their events, so results of parallel runs can be
//!   folded in in any order; exploring depth first (the deepest prefix of the latest execution
//!   first) is R4's "maximal prefix match".
//! - Every execution adds, for each step `τ_i` (Algorithm 2): the events `τ_i` disabled, each
//!   followed by the rest of the execution, and for each race that can be made adjacent its
//!   witness `λ · τ_j · τ_i · μ` ([`Relations::witness`]).
//! - The shared-prefix corner case (Algorithm 3): a pending `p · q` whose prefix `p` was just
//!   explored by another sequence `p · r` moves down to the prefix `… · p`, so `q` is still
//!   explored.
//! - Conflict-reversal bounding (Algorithm 4): sequences found in an execution of depth `d`
//!   have depth `d + 1`; nothing deeper than the bound is stored. `V` and the duplicate check
//!   keep the least depth an event or sequence was explored at, and the shallowest waiting
//!   sequence of a prefix goes first: an event explored there only by a deeper sequence (one
//!   with fewer reversals left) is explored again by a shallower one, so a larger bound
//!   reaches every final state a smaller one does.
//! - Approximate replay (the executor's job): a sequence is executed event by event, skipping
//!   events that are not enabled, then extended until nothing is enabled. Stored sequences are
//!   normalised the same way: leading events not enabled at their prefix are dropped.

use crate::event::Ev;
use crate::execution::{Execution, Relations};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Why a sequence was scheduled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum OriginKind {
    /// It reverses a race of the parent: step `second` (event `second_event`) before step
    /// `first`.
    Reversal {
        /// Earlier step of the race in the parent.
        first: u32,
        /// Later step of the race in the parent.
        second: u32,
        /// Its event.
        first_event: Ev,
        /// Its event.
        second_event: Ev,
        /// FIFO races: the posts swapped to make it possible (steps of the parent).
        posts: Option<(u32, u32)>,
    },
    /// Step `step` of the parent disabled `event`: it runs first instead.
    Disabled {
        /// The disabling step.
        step: u32,
        /// The disabling step's event.
        by: Ev,
        /// The event it disabled.
        event: Ev,
    },
}

/// A scheduled sequence's provenance.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// The execution it was found in (the one it is compared with).
    pub parent: u32,
    /// What it changes.
    pub kind: OriginKind,
}

/// One explored execution.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunInfo {
    /// Conflict reversals from the initial execution.
    pub depth: u32,
    /// Why it ran (`None` for the initial execution).
    pub origin: Option<u32>,
    /// Steps it executed.
    pub steps: u32,
}

/// A sequence to execute: `prefix` exactly, then `seq` by approximate replay, then anything.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// Events executed as they are (all enabled when reached).
    pub prefix: Vec<Ev>,
    /// Events replayed approximately after the prefix.
    pub seq: Vec<Ev>,
    /// Conflict-reversal depth of the result.
    pub depth: u32,
    /// Index into [`Explorer::origin`].
    pub origin: Option<u32>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Entry {
    seq: u32,
    start: u32,
    depth: u32,
    origin: u32,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Frame {
    /// Pool sequence and length holding this prefix.
    prefix: (u32, u32),
    /// Events enabled here.
    enabled: u32,
    /// `V`: explored (or dispatched) first events, sorted, each with the least
    /// conflict-reversal depth it was explored at.
    visited: Vec<(Ev, u32)>,
    /// `T_seq`: pending sequences.
    entries: Vec<Entry>,
    /// Hashes of the stored sequences (no duplicates), sorted, each with the least depth it
    /// was stored at.
    seen: Vec<(u64, u32)>,
}

/// Counters of one exploration.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    /// Races found that could be made adjacent (one reversal each).
    pub races: u64,
    /// Races whose reversal exceeded the bound (found at the last level).
    pub beyond_bound: u64,
    /// Events disabled by a step (one sequence each).
    pub disabled: u64,
    /// Sequences stored (after normalisation and duplicate removal).
    pub stored: u64,
    /// Races without a witness (a cycle: cannot be reversed).
    pub no_witness: u64,
}

/// The exploration state. Serialisable, so a run can stop and resume.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Explorer {
    bound: u32,
    pool: Vec<Vec<Ev>>,
    frames: HashMap<u64, Frame>,
    stack: Vec<u64>,
    runs: Vec<RunInfo>,
    origins: Vec<Origin>,
    stats: Stats,
    /// States reached by executions outside the reorder phase (triage's probes and their
    /// references), by prefix hash: (events enabled, events explored from it). Kept apart
    /// from `frames` so that nothing the reorder phase schedules depends on them; they count
    /// only for [`Explorer::pruned_fraction`], which covers every state the exploration
    /// reached.
    #[serde(default)]
    external: HashMap<u64, (u32, Vec<Ev>)>,
}

impl Explorer {
    /// An explorer that reverses at most `bound` conflicts from the initial execution.
    pub fn new(bound: u32) -> Explorer {
        Explorer {
            bound,
            pool: Vec::new(),
            frames: HashMap::new(),
            stack: Vec::new(),
            runs: Vec::new(),
            origins: Vec::new(),
            stats: Stats::default(),
            external: HashMap::new(),
        }
    }

    /// The conflict-reversal bound.
    pub fn bound(&self) -> u32 {
        self.bound
    }

    /// Changes the bound (a resumed exploration may go deeper).
    pub fn set_bound(&mut self, bound: u32) {
        self.bound = bound;
    }

    /// Executions recorded so far, in order (index = run id).
    pub fn runs(&self) -> &[RunInfo] {
        &self.runs
    }

    /// Provenance `o` (from [`RunInfo::origin`] / [`Job::origin`]).
    pub fn origin(&self, o: u32) -> Option<&Origin> {
        self.origins.get(o as usize)
    }

    /// Counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Folds in an execution: the initial one (`job: None`) or the result of a job.
    /// Returns its run id.
    pub fn record(&mut self, exec: &Execution, job: Option<&Job>) -> u32 {
        let run = self.runs.len() as u32;
        let depth = job.map_or(0, |j| j.depth);
        let n = exec.len();
        self.runs.push(RunInfo {
            depth,
            origin: job.and_then(|j| j.origin),
            steps: n as u32,
        });
        let seq = self.pool.len() as u32;
        self.pool.push(exec.events.clone());
        let mut hashes = Vec::with_capacity(n + 1);
        let mut h = PREFIX_SEED;
        hashes.push(h);
        for e in &exec.events {
            h = mix(h, e.0);
            hashes.push(h);
        }
        for (i, &h) in hashes.iter().enumerate() {
            let enabled = exec.enabled.get(i).map_or(0, Vec::len) as u32;
            self.frames.entry(h).or_insert_with(|| Frame {
                prefix: (seq, i as u32),
                enabled,
                visited: Vec::new(),
                entries: Vec::new(),
                seen: Vec::new(),
            });
        }
        // updateVisited
        for (i, e) in exec.events.iter().enumerate() {
            if let Some(f) = self.frames.get_mut(&hashes[i]) {
                mark_visited(&mut f.visited, *e, depth);
            }
        }
        // updatePersistentSets (Algorithm 2), bounded (Algorithm 4)
        let rel = Relations::new(exec);
        let races = rel.races();
        let disabled: Vec<(usize, Vec<Ev>)> = (0..n)
            .map(|i| (i, exec.disabled_by(i)))
            .filter(|(_, d)| !d.is_empty())
            .collect();
        if depth < self.bound {
            for (i, events) in disabled {
                for e in events {
                    self.stats.disabled += 1;
                    let mut s = vec![e];
                    s.extend_from_slice(&exec.events[i..]);
                    let origin = self.push_origin(Origin {
                        parent: run,
                        kind: OriginKind::Disabled {
                            step: i as u32,
                            by: exec.events[i],
                            event: e,
                        },
                    });
                    self.insert(hashes[i], &exec.enabled[i], s, depth + 1, origin);
                }
            }
            for race in races {
                self.stats.races += 1;
                let Some(w) = rel.witness(race) else {
                    self.stats.no_witness += 1;
                    continue;
                };
                let s: Vec<Ev> = w.steps.iter().map(|&k| exec.events[k as usize]).collect();
                let origin = self.push_origin(Origin {
                    parent: run,
                    kind: OriginKind::Reversal {
                        first: race.first,
                        second: race.second,
                        first_event: exec.events[race.first as usize],
                        second_event: exec.events[race.second as usize],
                        posts: w.posts,
                    },
                });
                self.insert(
                    hashes[w.prefix],
                    &exec.enabled[w.prefix],
                    s,
                    depth + 1,
                    origin,
                );
            }
        } else {
            self.stats.beyond_bound += races.len() as u64;
        }
        // The shared-prefix corner case (Algorithm 3, updatePersistentSets_seq).
        for i in 0..n {
            let moved: Vec<Entry> = match self.frames.get(&hashes[i]) {
                Some(f) => f
                    .entries
                    .iter()
                    .filter(|en| {
                        let s = &self.pool[en.seq as usize];
                        (en.start as usize) + 1 < s.len() && s[en.start as usize] == exec.events[i]
                    })
                    .cloned()
                    .collect(),
                None => Vec::new(),
            };
            for en in moved {
                self.insert_shared(hashes[i + 1], &exec.enabled[i + 1], en);
            }
        }
        // Deepest prefix on top: depth-first.
        self.stack.extend(hashes.iter().copied());
        run
    }

    /// Registers an execution that is not part of the reorder phase (a triage probe): it gets
    /// a run id, and nothing is derived from it; the states it reached and the events it
    /// explored from them count for [`Explorer::pruned_fraction`].
    pub fn record_external(&mut self, exec: &Execution, depth: u32) -> u32 {
        let run = self.runs.len() as u32;
        self.runs.push(RunInfo {
            depth,
            origin: None,
            steps: exec.len() as u32,
        });
        let mut h = PREFIX_SEED;
        for (i, e) in exec.events.iter().enumerate() {
            let enabled = exec.enabled.get(i).map_or(0, Vec::len) as u32;
            let state = self.external.entry(h).or_insert((enabled, Vec::new()));
            insert_sorted(&mut state.1, *e);
            h = mix(h, e.0);
        }
        let enabled = exec.enabled.get(exec.len()).map_or(0, Vec::len) as u32;
        self.external.entry(h).or_insert((enabled, Vec::new()));
        run
    }

    /// The next sequence to execute (depth first), marked explored so it is handed out once;
    /// `None` when everything within the bound is done.
    pub fn next_job(&mut self) -> Option<Job> {
        while let Some(&h) = self.stack.last() {
            let bound = self.bound;
            let pool = &self.pool;
            let Some(f) = self.frames.get_mut(&h) else {
                self.stack.pop();
                continue;
            };
            // The shallowest waiting sequence first: what it finds may still reverse races
            // that a deeper one starting with the same event could not (the bound).
            let pick = f
                .entries
                .iter()
                .enumerate()
                .filter(|(_, en)| en.depth <= bound && waits(&f.visited, pool, en))
                .min_by_key(|(k, en)| (en.depth, *k))
                .map(|(k, _)| k);
            let Some(k) = pick else {
                self.stack.pop();
                continue;
            };
            let en = f.entries[k].clone();
            let seq = pool[en.seq as usize][en.start as usize..].to_vec();
            mark_visited(&mut f.visited, seq[0], en.depth);
            let (p, len) = f.prefix;
            let prefix = pool[p as usize][..len as usize].to_vec();
            return Some(Job {
                prefix,
                seq,
                depth: en.depth,
                origin: Some(en.origin),
            });
        }
        None
    }

    /// Sequences waiting (within the bound, first event not explored yet).
    pub fn pending(&self) -> usize {
        self.frames
            .values()
            .map(|f| {
                f.entries
                    .iter()
                    .filter(|en| en.depth <= self.bound && waits(&f.visited, &self.pool, en))
                    .count()
            })
            .sum()
    }

    /// R4's partial-order-reduction measure (§5.6): over every state reached (by the reorder
    /// phase and by triage's probes alike), the share of enabled events never explored from
    /// it, averaged. `None` before any state with an enabled event.
    pub fn pruned_fraction(&self) -> Option<f64> {
        mean(
            self.state_counts().map(|(enabled, explored)| {
                1.0 - f64::from(explored.min(enabled)) / f64::from(enabled)
            }),
        )
    }

    /// The most [`Explorer::pruned_fraction`] could be over the same states: at most one
    /// event explored from each, as a single execution does. What the measure can reach
    /// depends on the page (how many events are enabled at once), not only on the explorer:
    /// a page whose states each enable two events has a ceiling of 50 %.
    pub fn pruned_ceiling(&self) -> Option<f64> {
        mean(
            self.state_counts()
                .map(|(enabled, explored)| 1.0 - f64::from(explored.min(1)) / f64::from(enabled)),
        )
    }

    /// Every reached state with an enabled event: (events enabled, events explored from it).
    fn state_counts(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let reordered = self.frames.iter().map(|(h, f)| {
            let explored = match self.external.get(h) {
                Some((_, ext)) => ext
                    .iter()
                    .filter(|e| f.visited.binary_search_by_key(e, |v| &v.0).is_err())
                    .count(),
                None => 0,
            };
            (f.enabled, (f.visited.len() + explored) as u32)
        });
        let external = self
            .external
            .iter()
            .filter(|(h, _)| !self.frames.contains_key(h))
            .map(|(_, (enabled, explored))| (*enabled, explored.len() as u32));
        reordered
            .chain(external)
            .filter(|&(enabled, _)| enabled > 0)
    }

    fn push_origin(&mut self, o: Origin) -> u32 {
        self.origins.push(o);
        (self.origins.len() - 1) as u32
    }

    /// Stores `seq` at prefix `h`, dropping leading events not enabled there (approximate
    /// replay would skip them) and duplicates.
    fn insert(&mut self, h: u64, enabled: &[Ev], seq: Vec<Ev>, depth: u32, origin: u32) {
        if depth > self.bound {
            return;
        }
        let Some(skip) = self.admit(h, enabled, &seq, depth) else {
            return;
        };
        let id = self.pool.len() as u32;
        self.pool.push(seq);
        self.push_entry(h, id, skip as u32, depth, origin);
        self.stats.stored += 1;
    }

    /// Moves the tail of a pending entry down one prefix (the shared-prefix case); the tail
    /// stays in the pool where it is.
    fn insert_shared(&mut self, h: u64, enabled: &[Ev], en: Entry) {
        let start = en.start as usize + 1;
        let tail = &self.pool[en.seq as usize][start..];
        let key = normalised(enabled, tail);
        let Some(skip) = key.and_then(|(skip, key)| self.claim(h, key, en.depth).then_some(skip))
        else {
            return;
        };
        self.push_entry(h, en.seq, (start + skip) as u32, en.depth, en.origin);
    }

    /// Where `seq` starts once normalised at `h`, if it is new there at `depth` (and then
    /// claims it).
    fn admit(&mut self, h: u64, enabled: &[Ev], seq: &[Ev], depth: u32) -> Option<usize> {
        let (skip, key) = normalised(enabled, seq)?;
        self.claim(h, key, depth).then_some(skip)
    }

    /// Records sequence hash `key` at `h` and `depth`; false when it was there already at
    /// that depth or a shallower one (or no frame). The same sequence found again at a
    /// shallower depth is stored again: from there the bound leaves more reversals to it.
    fn claim(&mut self, h: u64, key: u64, depth: u32) -> bool {
        let Some(f) = self.frames.get_mut(&h) else {
            return false;
        };
        match f.seen.binary_search_by_key(&key, |s| s.0) {
            Ok(at) if f.seen[at].1 <= depth => false,
            Ok(at) => {
                f.seen[at].1 = depth;
                true
            }
            Err(at) => {
                f.seen.insert(at, (key, depth));
                true
            }
        }
    }

    fn push_entry(&mut self, h: u64, seq: u32, start: u32, depth: u32, origin: u32) {
        if let Some(f) = self.frames.get_mut(&h) {
            f.entries.push(Entry {
                seq,
                start,
                depth,
                origin,
            });
        }
    }
}

/// Approximate replay's view of `seq` at a prefix where `enabled` is enabled: the leading
/// events that are not enabled are skipped. `(skipped, hash of the rest)`, or `None` when
/// nothing is left.
fn normalised(enabled: &[Ev], seq: &[Ev]) -> Option<(usize, u64)> {
    let skip = seq.iter().position(|e| enabled.binary_search(e).is_ok())?;
    Some((skip, seq_hash(&seq[skip..])))
}

/// The mean of `values`, `None` when there are none.
fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

const PREFIX_SEED: u64 = 0x5eed_cafe_f00d_d00d;

/// One more event on a prefix hash (splitmix64 finaliser over the combination).
fn mix(h: u64, e: u32) -> u64 {
    let mut z = h ^ (e as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = z.rotate_left(29).wrapping_add(0x632b_e59b_d9b4_e019);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn seq_hash(s: &[Ev]) -> u64 {
    s.iter()
        .fold(PREFIX_SEED ^ s.len() as u64, |h, e| mix(h, e.0))
}

/// Whether pending entry `en` still waits: its first event was not explored at its prefix,
/// or only at a greater depth (with fewer reversals left under the bound than `en` has).
fn waits(visited: &[(Ev, u32)], pool: &[Vec<Ev>], en: &Entry) -> bool {
    let first = pool[en.seq as usize][en.start as usize];
    match visited.binary_search_by_key(&first, |v| v.0) {
        Ok(at) => visited[at].1 > en.depth,
        Err(_) => true,
    }
}

/// Marks `e` explored at `depth` (keeping the least depth).
fn mark_visited(v: &mut Vec<(Ev, u32)>, e: Ev, depth: u32) {
    match v.binary_search_by_key(&e, |x| x.0) {
        Ok(at) => v[at].1 = v[at].1.min(depth),
        Err(at) => v.insert(at, (e, depth)),
    }
}

fn insert_sorted(v: &mut Vec<Ev>, e: Ev) {
    if let Err(at) = v.binary_search(&e) {
        v.insert(at, e);
    }
}
