//! One executed event sequence and the relations R4's reorder phase needs on it: transitive
//! dependence `→τ` (happens-before plus conflicts, plus EM-DPOR's FIFO rule), the races that
//! can be made adjacent (the race-witness condition), and the witness sequences that reverse
//! them.
//!
//! The explorer never looks inside an event: everything comes from what one run observed —
//! the enabled set before and after every step, the orderings the platform imposed (a step
//! that made another one possible, the browser's own happens-before arcs, the user's order),
//! and which earlier steps touched a location this step touched with at least one write.

use crate::event::Ev;
use serde::{Deserialize, Serialize};

/// Where a step's event waits when it is a message on a FIFO queue (a `MessagePort`, a
/// worker's queue): events on one queue run in the order they were posted, so two of them can
/// only be reordered by reordering their posts (EM-DPOR).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fifo {
    /// The queue.
    pub queue: u32,
    /// The step that posted it; `None` when it was queued before the run started (then its
    /// place in the queue is fixed).
    pub poster: Option<u32>,
}

/// An executed sequence `τ = τ_0 … τ_{n-1}` with what the run observed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Execution {
    /// The events, in execution order.
    pub events: Vec<Ev>,
    /// `enabled[i]`: the events enabled before step `i` (sorted); `enabled[n]` after the last.
    pub enabled: Vec<Vec<Ev>>,
    /// Per step: earlier steps that happen before it because the platform orders them (the
    /// step that enabled it, the browser's arcs). Never reordered.
    pub hb: Vec<Vec<u32>>,
    /// Per step: earlier steps with a conflicting access (same location, one of them a write).
    pub dep: Vec<Vec<u32>>,
    /// Per step: a user event. User events keep their order among themselves.
    pub user: Vec<bool>,
    /// Per step: the FIFO queue it was delivered from, if any.
    pub fifo: Vec<Option<Fifo>>,
}

/// Why an execution is not well formed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecutionError {
    /// The per-step vectors disagree in length.
    #[error("per-step data of {field} has {got} entries for {steps} steps")]
    Length {
        /// Which vector.
        field: &'static str,
        /// Its length.
        got: usize,
        /// Number of steps.
        steps: usize,
    },
    /// An ordering names a step that is not earlier.
    #[error("step {step} is ordered after step {pred}, which is not earlier")]
    Order {
        /// The step.
        step: u32,
        /// The bad predecessor.
        pred: u32,
    },
}

impl Execution {
    /// Number of steps.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// True for the empty execution.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Checks the shape; every other method assumes it holds.
    pub fn validate(&self) -> Result<(), ExecutionError> {
        let n = self.events.len();
        let lens = [
            ("enabled", self.enabled.len(), n + 1),
            ("hb", self.hb.len(), n),
            ("dep", self.dep.len(), n),
            ("user", self.user.len(), n),
            ("fifo", self.fifo.len(), n),
        ];
        for (field, got, want) in lens {
            if got != want {
                return Err(ExecutionError::Length {
                    field,
                    got,
                    steps: n,
                });
            }
        }
        for lists in [&self.hb, &self.dep] {
            for (j, preds) in lists.iter().enumerate() {
                let step = j as u32;
                if let Some(&p) = preds.iter().find(|&&p| p >= step) {
                    return Err(ExecutionError::Order { step, pred: p });
                }
            }
        }
        for (j, f) in self.fifo.iter().enumerate() {
            if let Some(Fifo {
                poster: Some(p), ..
            }) = f
                && *p as usize >= j
            {
                return Err(ExecutionError::Order {
                    step: j as u32,
                    pred: *p,
                });
            }
        }
        Ok(())
    }

    /// Events disabled by step `i`: enabled before it, not after it, and not itself.
    pub fn disabled_by(&self, i: usize) -> Vec<Ev> {
        let after = &self.enabled[i + 1];
        self.enabled[i]
            .iter()
            .copied()
            .filter(|e| *e != self.events[i] && after.binary_search(e).is_err())
            .collect()
    }
}

/// A race the explorer can reverse: steps `first < second` conflict, the platform does not
/// order them, and some linearization of `→τ` puts them next to each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Race {
    /// The earlier step.
    pub first: u32,
    /// The later step.
    pub second: u32,
}

/// A sequence that reverses one race, to be replayed after the first `prefix` steps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness {
    /// Steps of the execution kept as they were.
    pub prefix: usize,
    /// The steps after the prefix, in their new order (step indices of the execution).
    pub steps: Vec<u32>,
    /// For a race between two messages of one FIFO queue (or a race that needs one of them
    /// first): the two posts that had to be swapped, `(moved later, moved earlier)`.
    pub posts: Option<(u32, u32)>,
}

/// Transitive dependence over one execution, as bit sets (one row per step).
pub struct Relations<'a> {
    exec: &'a Execution,
    words: usize,
    /// Row `j` holds bit `k` when `τ_k →τ τ_j`.
    reach: Vec<u64>,
    /// Direct orderings the platform imposes (hb, user order, FIFO), per step, sorted.
    ordered: Vec<Vec<u32>>,
    /// Direct predecessors of every kind (ordered plus conflicts), per step, sorted.
    preds: Vec<Vec<u32>>,
}

impl<'a> Relations<'a> {
    /// Computes `→τ`: the smallest transitive relation containing the platform's orderings,
    /// the user's order, every conflict (earlier to later) and EM-DPOR's FIFO rule (two
    /// messages of one queue are ordered when their posts are).
    pub fn new(exec: &'a Execution) -> Relations<'a> {
        let n = exec.len();
        let words = n.div_ceil(64).max(1);
        let mut reach = vec![0u64; n * words];
        let mut ordered: Vec<Vec<u32>> = Vec::with_capacity(n);
        let mut preds: Vec<Vec<u32>> = Vec::with_capacity(n);
        let mut last_user: Option<u32> = None;
        for j in 0..n {
            let mut o: Vec<u32> = exec.hb[j].clone();
            if exec.user[j] {
                if let Some(u) = last_user {
                    o.push(u);
                }
                last_user = Some(j as u32);
            }
            if let Some(f) = exec.fifo[j] {
                for i in 0..j {
                    let Some(g) = exec.fifo[i] else { continue };
                    if g.queue != f.queue {
                        continue;
                    }
                    // Posts in a known order (or of unknown order): the queue orders them.
                    let posted_in_order = match (g.poster, f.poster) {
                        (Some(pi), Some(pj)) => {
                            pi == pj || pi < pj && bit(&reach, words, pj as usize, pi as usize)
                        }
                        _ => true,
                    };
                    if posted_in_order {
                        o.push(i as u32);
                    }
                }
            }
            o.sort_unstable();
            o.dedup();
            let mut p = o.clone();
            p.extend_from_slice(&exec.dep[j]);
            p.sort_unstable();
            p.dedup();
            let (done, row) = reach.split_at_mut(j * words);
            let row = &mut row[..words];
            for &k in &p {
                let k = k as usize;
                row[k / 64] |= 1 << (k % 64);
                for w in 0..words {
                    row[w] |= done[k * words + w];
                }
            }
            ordered.push(o);
            preds.push(p);
        }
        Relations {
            exec,
            words,
            reach,
            ordered,
            preds,
        }
    }

    /// `τ_i →τ τ_j` (strictly).
    pub fn reaches(&self, i: usize, j: usize) -> bool {
        i < j && bit(&self.reach, self.words, j, i)
    }

    /// The races of the execution that can be made adjacent (R4's `findRaceWitness`
    /// condition): conflicting, not ordered by the platform or the user, and no step `k`
    /// between them with `τ_i →τ τ_k →τ τ_j`. These are EventRacer's uncovered races over
    /// the execution's steps.
    pub fn races(&self) -> Vec<Race> {
        let n = self.exec.len();
        // Conflict successors of each step.
        let mut succ: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (j, ds) in self.exec.dep.iter().enumerate() {
            for &i in ds {
                succ[i as usize].push(j as u32);
            }
        }
        let mut out = Vec::new();
        let mut desc = vec![0u64; self.words];
        for (i, js) in succ.iter_mut().enumerate() {
            if js.is_empty() {
                continue;
            }
            js.sort_unstable();
            js.dedup();
            desc.iter_mut().for_each(|w| *w = 0);
            for k in i + 1..n {
                if bit(&self.reach, self.words, k, i) {
                    desc[k / 64] |= 1 << (k % 64);
                }
            }
            for &j in js.iter() {
                let j = j as usize;
                if self.exec.user[i] && self.exec.user[j] {
                    continue;
                }
                if self.ordered[j].binary_search(&(i as u32)).is_ok() {
                    continue;
                }
                let row = &self.reach[j * self.words..(j + 1) * self.words];
                // Bits of `row` are < j and bits of `desc` are > i: any overlap is a k between.
                if row.iter().zip(&desc).all(|(a, b)| a & b == 0) {
                    out.push(Race {
                        first: i as u32,
                        second: j as u32,
                    });
                }
            }
        }
        out
    }

    /// Conflicting step pairs the platform does not order (two user events count as ordered):
    /// what reordering every racing pair, covered or not, would try — the naive baseline
    /// partial-order reduction is measured against.
    pub fn racing_pairs(&self) -> usize {
        let mut n = 0;
        for (j, ds) in self.exec.dep.iter().enumerate() {
            for &i in ds {
                let i = i as usize;
                if !(self.exec.user[i] && self.exec.user[j])
                    && self.ordered[j].binary_search(&(i as u32)).is_err()
                {
                    n += 1;
                }
            }
        }
        n
    }

    /// The sequence that reverses `race` with as little else changed as possible:
    /// `τ_p · λ · τ_j · τ_i · μ` with `λ` the steps between them that `τ_j` depends on and `μ`
    /// the rest in their old order. When `τ_j` (or a step of `λ`) waits behind `τ_i` on a FIFO
    /// queue, it can only go first if its post does: the witness then starts before `τ_i`'s
    /// post and moves the later post in front of it. `None` when no such order exists.
    pub fn witness(&self, race: Race) -> Option<Witness> {
        let (i, j) = (race.first as usize, race.second as usize);
        let front: Vec<usize> = (i + 1..j)
            .filter(|&k| self.reaches(k, j))
            .chain(std::iter::once(j))
            .collect();
        let mut forced: Vec<(usize, usize)> = vec![(j, i)];
        let mut start = i;
        let mut posts = None;
        if let Some(fi) = self.exec.fifo[i] {
            let blocked: Vec<usize> = front
                .iter()
                .copied()
                .filter(|&k| self.exec.fifo[k].is_some_and(|f| f.queue == fi.queue))
                .collect();
            if !blocked.is_empty() {
                let pi = fi.poster? as usize;
                for &k in &blocked {
                    let pk = self.exec.fifo[k].and_then(|f| f.poster)? as usize;
                    if pk <= pi || self.reaches(pi, pk) {
                        return None;
                    }
                    forced.push((pk, pi));
                    posts.get_or_insert((pi as u32, pk as u32));
                }
                start = pi;
            }
        }
        let steps = self.linearize(start, (i, j), &forced)?;
        Some(Witness {
            prefix: start,
            steps,
            posts,
        })
    }

    /// Steps `start..n` in a new order: the old order, except that every step is preceded by
    /// its (direct and forced) predecessors, the conflict `reversed` no longer orders its
    /// steps, and each `(a, b)` of `forced` puts `a` before `b`. `None` on a cycle.
    fn linearize(
        &self,
        start: usize,
        reversed: (usize, usize),
        forced: &[(usize, usize)],
    ) -> Option<Vec<u32>> {
        let n = self.exec.len();
        // 0 unplaced, 1 on the stack, 2 placed.
        let mut state = vec![0u8; n - start];
        let mut out = Vec::with_capacity(n - start);
        let preds_of = |x: usize| -> Vec<usize> {
            let mut p: Vec<usize> = self.preds[x]
                .iter()
                .map(|&k| k as usize)
                .filter(|&k| k >= start)
                .filter(|&k| {
                    !(x == reversed.1
                        && k == reversed.0
                        && self.ordered[x].binary_search(&(k as u32)).is_err())
                })
                .collect();
            p.extend(forced.iter().filter(|f| f.1 == x).map(|f| f.0));
            p.sort_unstable();
            p.dedup();
            p
        };
        for x in start..n {
            if state[x - start] == 2 {
                continue;
            }
            let mut stack: Vec<(usize, Vec<usize>, usize)> = vec![(x, preds_of(x), 0)];
            state[x - start] = 1;
            while let Some((node, ps, at)) = stack.last_mut() {
                if *at < ps.len() {
                    let p = ps[*at];
                    *at += 1;
                    match state[p - start] {
                        2 => {}
                        1 => return None,
                        _ => {
                            state[p - start] = 1;
                            let pp = preds_of(p);
                            stack.push((p, pp, 0));
                        }
                    }
                } else {
                    let node = *node;
                    state[node - start] = 2;
                    out.push(node as u32);
                    stack.pop();
                }
            }
        }
        Some(out)
    }
}

fn bit(reach: &[u64], words: usize, row: usize, k: usize) -> bool {
    reach[row * words + k / 64] >> (k % 64) & 1 == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(n: usize) -> Execution {
        Execution {
            events: (0..n as u32).map(Ev).collect(),
            enabled: vec![Vec::new(); n + 1],
            hb: vec![Vec::new(); n],
            dep: vec![Vec::new(); n],
            user: vec![false; n],
            fifo: vec![None; n],
        }
    }

    #[test]
    fn adjacent_races_only() {
        // 0 -dep-> 1 -dep-> 2 and 0 -dep-> 2: (0,2) is covered by 1.
        let mut x = exec(3);
        x.dep[1] = vec![0];
        x.dep[2] = vec![0, 1];
        x.validate().unwrap();
        let r = Relations::new(&x);
        assert!(r.reaches(0, 2));
        let races = r.races();
        assert_eq!(
            races,
            vec![
                Race {
                    first: 0,
                    second: 1
                },
                Race {
                    first: 1,
                    second: 2
                }
            ]
        );
    }

    #[test]
    fn platform_order_and_user_order_are_not_races() {
        let mut x = exec(3);
        x.hb[1] = vec![0];
        x.dep[1] = vec![0];
        x.user = vec![false, true, true];
        x.dep[2] = vec![1];
        assert!(Relations::new(&x).races().is_empty());
    }

    #[test]
    fn witness_moves_dependencies_of_the_later_step() {
        // 0 races with 3; 2 enables 3 (hb); 1 is independent.
        let mut x = exec(5);
        x.dep[3] = vec![0];
        x.hb[3] = vec![2];
        let r = Relations::new(&x);
        let w = r
            .witness(Race {
                first: 0,
                second: 3,
            })
            .unwrap();
        assert_eq!(w.prefix, 0);
        assert_eq!(w.steps, vec![2, 3, 0, 1, 4]);
        assert_eq!(w.posts, None);
    }

    #[test]
    fn fifo_messages_are_ordered_by_their_posts() {
        // 0 and 1 post a and b to queue 7 from unordered steps; 2 = a, 3 = b conflict.
        let mut x = exec(4);
        x.hb[2] = vec![0];
        x.hb[3] = vec![1];
        x.fifo[2] = Some(Fifo {
            queue: 7,
            poster: Some(0),
        });
        x.fifo[3] = Some(Fifo {
            queue: 7,
            poster: Some(1),
        });
        x.dep[3] = vec![2];
        let r = Relations::new(&x);
        assert_eq!(
            r.races(),
            vec![Race {
                first: 2,
                second: 3
            }]
        );
        let w = r
            .witness(Race {
                first: 2,
                second: 3,
            })
            .unwrap();
        // The post of b goes first, so b is ahead of a in the queue.
        assert_eq!(w.prefix, 0);
        assert_eq!(w.steps, vec![1, 0, 3, 2]);
        assert_eq!(w.posts, Some((0, 1)));
        // Posts in order (1 after 0 through a conflict): the queue orders the messages.
        x.dep[1] = vec![0];
        let r = Relations::new(&x);
        assert!(r.reaches(2, 3));
        assert!(!r.races().contains(&Race {
            first: 2,
            second: 3
        }));
    }

    #[test]
    fn validation_catches_bad_shapes() {
        let mut x = exec(2);
        x.dep[0] = vec![1];
        assert!(matches!(x.validate(), Err(ExecutionError::Order { .. })));
        let mut y = exec(2);
        y.user.pop();
        assert!(matches!(y.validate(), Err(ExecutionError::Length { .. })));
    }
}
