//! The `G⁺` half of the sweep: the clocks with race arcs folded in, and the coverage answers
//! they give (Def. 3.2 and the initialisation-race condition), played on a thread of its own.
//!
//! Everything that needs `G` is decided by the happens-before half (`mod.rs`): which pairs
//! race, which race arcs add something, which clocks a later action still needs. What the
//! `G⁺` half has to do with those decisions does not feed back into them, so it is written as
//! a stream of commands and played here, in the same order as one fused pass would do it: the
//! answers and the clocks held at each step are the same. On the 1 000-chain bench page
//! `G⁺` is a third of the pass (≈ 90 of 260 ms), and it now runs beside the rest.
//!
//! Actions that neither ask a question nor keep their `G⁺` clock (most leaves) send nothing.

use crate::graph::HbGraph;
use crate::store::ClockStore;
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};

/// `BEGIN v k f₁…f_k`: start `v`'s clock from its predecessors and its `k` timer FIFO tails.
const BEGIN: u32 = 0;
/// `ASK slot read n (chain pos)ⁿ`: one access's new races, by the position of their first
/// action; `read` is 1 when the access is a read by an action that made none of the
/// location's minimal writes (otherwise the initialisation condition cannot hold). Locations
/// go by their slot, their number among the locations that can race (`mod.rs`, `Slots`).
const ASK: u32 = 1;
/// `FOLD a`: join `a`'s `G⁺` clock (a race arc that adds something).
const FOLD: u32 = 2;
/// `SEAL chain pos`: set `v`'s own entry and keep its clock (a later action needs it).
const SEAL: u32 = 3;
/// `FREE a`: nothing needs `a`'s `G⁺` clock any more.
const FREE: u32 = 4;
/// `MINIMAL slot chain pos`: a new minimal write of the location.
const MINIMAL: u32 = 5;
/// `FORGET slot`: nothing asks about the location again.
const FORGET: u32 = 6;

/// Words per batch handed to the other thread (64 KiB; 64 words in unit tests, so that small
/// traces cross many batches).
const BATCH: usize = if cfg!(test) { 64 } else { 1 << 14 };
/// Batches in flight at most: the producer waits beyond that, so the stream's memory stays
/// bounded whichever half is slower.
const IN_FLIGHT: usize = 4;

/// The `G⁺` state: the clocks later actions need, the clock under construction and the
/// answers so far.
pub(super) struct PlusHalf<'g> {
    graph: &'g HbGraph,
    clocks: ClockStore,
    cur: crate::clocks::Scratch,
    /// The action whose clock is under construction.
    v: u32,
    /// Minimal writes of each location (by slot) still asked about: `(chain, pos)`.
    minimal: Vec<Vec<(u32, u16)>>,
    answers: Answers,
}

/// What the `G⁺` half found.
pub(super) struct Answers {
    /// Def. 3.2 coverage, per race in the order asked.
    pub covered: Vec<bool>,
    /// The initialisation-race condition, per race.
    pub uninit: Vec<bool>,
    /// Most clock entries held at once.
    pub peak: usize,
    /// Clocks still held at the end (those of the timer window's last fires, which nothing
    /// frees), for checking that the halves agree on which clocks are kept.
    pub held_at_end: usize,
    /// Locations whose minimal writes were never forgotten (0 when the stream is right).
    pub minimal_left: usize,
}

impl<'g> PlusHalf<'g> {
    /// State for the actions of `graph` and `locations` locations that can race (slots).
    pub(super) fn new(graph: &'g HbGraph, locations: usize) -> PlusHalf<'g> {
        PlusHalf {
            graph,
            clocks: ClockStore::new(graph.nodes() as usize),
            cur: crate::clocks::Scratch::default(),
            v: 0,
            minimal: vec![Vec::new(); locations],
            answers: Answers {
                covered: Vec::new(),
                uninit: Vec::new(),
                peak: 0,
                held_at_end: 0,
                minimal_left: 0,
            },
        }
    }

    /// The answers; the clocks are dropped here, on the thread that allocated them (with
    /// mimalloc, pages freed by another thread are only handed back to the owner's heap: with
    /// the clocks dropped by the caller after the thread had exited, the wide bench page's
    /// median peak was 2 MB higher over eight interleaved runs).
    pub(super) fn into_answers(mut self) -> Answers {
        self.answers.held_at_end = self.clocks.held();
        self.answers.minimal_left = self.minimal.iter().filter(|m| !m.is_empty()).count();
        self.answers
    }

    /// Plays a batch of commands. Every batch holds whole commands.
    fn play(&mut self, words: &[u32]) {
        let mut i = 0;
        while i < words.len() {
            match words[i] {
                BEGIN => {
                    let (v, k) = (words[i + 1], words[i + 2] as usize);
                    self.v = v;
                    self.cur.clear();
                    for p in self.graph.preds(v) {
                        self.clocks.get(p).join_into(&mut self.cur);
                    }
                    for &f in &words[i + 3..i + 3 + k] {
                        self.clocks.get(f).join_into(&mut self.cur);
                    }
                    i += 3 + k;
                }
                ASK => {
                    let (loc, read, n) = (words[i + 1] as usize, words[i + 2], words[i + 3]);
                    let mut i_first = i + 4;
                    // Whether no minimal write reaches the read: asked at most once.
                    let mut unreached = None;
                    for _ in 0..n {
                        let (c, pos) = (words[i_first], words[i_first + 1] as u16);
                        i_first += 2;
                        let cov = self.cur.reaches(c, pos);
                        self.answers.covered.push(cov);
                        let un = !cov
                            && read == 1
                            && *unreached.get_or_insert_with(|| {
                                self.minimal[loc]
                                    .iter()
                                    .all(|&(mc, mp)| !self.cur.reaches(mc, mp))
                            });
                        self.answers.uninit.push(un);
                    }
                    i = i_first;
                }
                FOLD => {
                    self.clocks.get(words[i + 1]).join_into(&mut self.cur);
                    i += 2;
                }
                SEAL => {
                    self.cur.set(words[i + 1] as usize, words[i + 2] as u16);
                    self.clocks.put(self.v, self.cur.trimmed());
                    self.answers.peak = self.answers.peak.max(self.clocks.live());
                    i += 3;
                }
                FREE => {
                    self.clocks.remove(words[i + 1]);
                    i += 2;
                }
                MINIMAL => {
                    let loc = words[i + 1] as usize;
                    self.minimal[loc].push((words[i + 2], words[i + 3] as u16));
                    i += 4;
                }
                FORGET => {
                    self.minimal[words[i + 1] as usize] = Vec::new();
                    i += 2;
                }
                op => unreachable!("the sweep wrote command {op}, which has no meaning"),
            }
        }
    }
}

/// Where the commands go: played at once on this thread, or sent to the `G⁺` thread.
enum Route<'s, 'g> {
    Here(&'s mut PlusHalf<'g>),
    Thread {
        to: SyncSender<Vec<u32>>,
        back: Receiver<Vec<u32>>,
    },
}

/// The happens-before half's side of the stream.
pub(super) struct Commands<'s, 'g> {
    words: Vec<u32>,
    route: Route<'s, 'g>,
    /// Whether the current action's `BEGIN` was written.
    begun: bool,
}

impl<'s, 'g> Commands<'s, 'g> {
    /// Commands played on this thread as they are written (one batch behind).
    pub(super) fn here(half: &'s mut PlusHalf<'g>) -> Commands<'s, 'g> {
        Commands {
            words: Vec::with_capacity(BATCH + 64),
            route: Route::Here(half),
            begun: false,
        }
    }

    /// Commands played by `half` on a thread of `scope`, which answers once [`Commands::finish`]
    /// has closed the stream.
    pub(super) fn thread<'scope, 'env>(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        mut half: PlusHalf<'g>,
    ) -> (
        Commands<'s, 'g>,
        std::thread::ScopedJoinHandle<'scope, Answers>,
    )
    where
        'g: 'scope,
    {
        let (to, from) = sync_channel::<Vec<u32>>(IN_FLIGHT);
        let (give_back, back) = sync_channel::<Vec<u32>>(IN_FLIGHT + 1);
        let handle = scope.spawn(move || {
            for mut batch in from {
                half.play(&batch);
                batch.clear();
                // The producer may be gone (finished): the batch is simply dropped.
                let _ = give_back.try_send(batch);
            }
            half.into_answers()
        });
        let commands = Commands {
            words: Vec::with_capacity(BATCH + 64),
            route: Route::Thread { to, back },
            begun: false,
        };
        (commands, handle)
    }

    fn flush(&mut self) {
        match &mut self.route {
            Route::Here(half) => {
                half.play(&self.words);
                self.words.clear();
            }
            Route::Thread { to, back } => {
                let fresh = match back.try_recv() {
                    Ok(b) => b,
                    Err(TryRecvError::Empty | TryRecvError::Disconnected) => {
                        Vec::with_capacity(BATCH + 64)
                    }
                };
                let full = std::mem::replace(&mut self.words, fresh);
                // A closed channel means the `G⁺` thread panicked: joining it re-raises that.
                let _ = to.send(full);
            }
        }
    }

    /// Ends a command: hands the batch over once it is full.
    #[inline]
    fn end(&mut self) {
        if self.words.len() >= BATCH {
            self.flush();
        }
    }

    /// Starts action `v`'s clock, once, before its first question or fold; `fifo` are the
    /// timer FIFO tails it joins.
    #[inline]
    fn begin(&mut self, v: u32, fifo: &[u32]) {
        if !self.begun {
            self.begun = true;
            self.words.extend_from_slice(&[BEGIN, v, fifo.len() as u32]);
            self.words.extend_from_slice(fifo);
        }
    }

    /// One access's new races (at the location in `slot`), by their first actions'
    /// `(chain, pos)`.
    pub(super) fn ask(
        &mut self,
        v: u32,
        fifo: &[u32],
        slot: u32,
        read_uninit: bool,
        firsts: impl ExactSizeIterator<Item = (u32, u16)>,
    ) {
        self.begin(v, fifo);
        self.words
            .extend_from_slice(&[ASK, slot, u32::from(read_uninit), firsts.len() as u32]);
        for (c, p) in firsts {
            self.words.extend_from_slice(&[c, u32::from(p)]);
        }
        self.end();
    }

    /// Joins `a`'s clock into `v`'s.
    pub(super) fn fold(&mut self, v: u32, fifo: &[u32], a: u32) {
        self.begin(v, fifo);
        self.words.extend_from_slice(&[FOLD, a]);
        self.end();
    }

    /// Ends action `v`: keeps its clock, at (`chain`, `pos`), when a later action needs it.
    pub(super) fn seal(&mut self, v: u32, fifo: &[u32], chain: u32, pos: u16, keep: bool) {
        if keep {
            self.begin(v, fifo);
            self.words.extend_from_slice(&[SEAL, chain, u32::from(pos)]);
            self.end();
        }
        self.begun = false;
    }

    /// `a`'s clock is not needed any more.
    pub(super) fn free(&mut self, a: u32) {
        self.words.extend_from_slice(&[FREE, a]);
        self.end();
    }

    /// A new minimal write of the location in `slot`, at (`chain`, `pos`).
    pub(super) fn minimal(&mut self, slot: u32, chain: u32, pos: u16) {
        self.words
            .extend_from_slice(&[MINIMAL, slot, chain, u32::from(pos)]);
        self.end();
    }

    /// Nothing asks about the location in `slot` again.
    pub(super) fn forget(&mut self, slot: u32) {
        self.words.extend_from_slice(&[FORGET, slot]);
        self.end();
    }

    /// Hands over what is left; on a thread, closes the stream.
    pub(super) fn finish(mut self) {
        if !self.words.is_empty() {
            self.flush();
        }
    }
}
