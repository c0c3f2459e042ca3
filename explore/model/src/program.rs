//! A small event-driven program model and its interpreter: the trace-level executor used to
//! test the explorer against brute force, to count what DPOR variants explore on the papers'
//! example shapes, and in benchmarks — no browser involved.
//!
//! A program has shared variables and events. Each event's handler runs atomically and may
//! read and write variables, post events (enable them), cancel pending ones (disable them) and
//! branch on a variable. Events wait either in the multiset of the main loop (R4's model: any
//! pending one may run next) or in a FIFO queue (a worker's or a `MessagePort`'s: only the
//! oldest may run). User events are pending from the start and run in their declared order
//! (the program cannot post them). Every event runs at most once, so
//! every program terminates.
//!
//! Each run reports exactly what R4 assumes the browser reports: the events executed, the
//! enabled set before every step, the platform order (the poster of each event), and the
//! conflicts (enabling and disabling are writes of a shadow location of the event, which the
//! event reads when it runs).

use crate::event::{Ev, EventTable};
use crate::execution::{Execution, Fifo};
use std::collections::BTreeSet;

/// A statement of a handler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stmt {
    /// Read variable `v`.
    Read(u32),
    /// Write constant `c` to variable `v`.
    Write(u32, i64),
    /// `v += 1` (a read and a write).
    Inc(u32),
    /// Make event `e` pending (no effect when it was already posted).
    Post(usize),
    /// Drop event `e` if it is pending.
    Cancel(usize),
    /// If variable `v` equals `c`, run the statements.
    IfEq(u32, i64, Vec<Stmt>),
}

/// One event of a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventDef {
    /// Its name (the event identity the explorer sees).
    pub name: String,
    /// A user event (never reordered with other user events).
    pub user: bool,
    /// The FIFO queue it is delivered from (`None`: the main loop's multiset).
    pub queue: Option<u32>,
    /// The handler.
    pub body: Vec<Stmt>,
}

/// How an explorer is told about queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueModel {
    /// Queues are shared objects: every post to a queue writes it, so any two posts to one
    /// queue are dependent (classic DPOR, EM-DPOR's baseline).
    SharedObject,
    /// Posts are independent; messages of one queue are ordered when their posts are
    /// (EM-DPOR's FIFO happens-before and dependence-covering sets).
    Fifo,
}

/// A whole program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// The events; an index is an event's identity in [`Stmt`].
    pub events: Vec<EventDef>,
    /// System events pending at the start, in posting order (user events always are).
    pub initial: Vec<usize>,
    /// Number of shared variables (all start at 0).
    pub vars: u32,
}

/// The state a run ends in.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Final {
    /// Variable values.
    pub vars: Vec<i64>,
    /// Events that ran, sorted.
    pub ran: Vec<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    NotPosted,
    Pending,
    Ran,
    Cancelled,
}

/// A program's state during a run.
#[derive(Clone, Debug)]
pub struct State<'p> {
    prog: &'p Program,
    vars: Vec<i64>,
    status: Vec<Status>,
    /// Pending events in posting order (queue order for FIFO events).
    order: Vec<usize>,
    poster: Vec<Option<u32>>,
    /// The user events in their order.
    users: Vec<usize>,
    /// Steps run so far.
    steps: u32,
}

/// What one step touched.
#[derive(Default)]
struct Effects {
    reads: BTreeSet<String>,
    writes: BTreeSet<String>,
}

impl<'p> State<'p> {
    /// The start state.
    pub fn new(prog: &'p Program) -> State<'p> {
        let n = prog.events.len();
        let mut s = State {
            prog,
            vars: vec![0; prog.vars as usize],
            status: vec![Status::NotPosted; n],
            order: Vec::new(),
            poster: vec![None; n],
            users: Vec::new(),
            steps: 0,
        };
        // User events are the user's script: all pending from the start, in their order.
        let users = (0..n).filter(|&e| prog.events[e].user);
        for e in prog.initial.iter().copied().chain(users) {
            if e < n && s.status[e] == Status::NotPosted {
                s.status[e] = Status::Pending;
                s.order.push(e);
                if prog.events[e].user {
                    s.users.push(e);
                }
            }
        }
        s
    }

    /// Events that may run now, ascending.
    pub fn enabled(&self) -> Vec<usize> {
        let mut out = Vec::new();
        let mut heads: BTreeSet<u32> = BTreeSet::new();
        let mut user_seen = false;
        for &e in &self.order {
            let def = &self.prog.events[e];
            if def.user {
                if !user_seen {
                    out.push(e);
                    user_seen = true;
                }
            } else if let Some(q) = def.queue {
                if heads.insert(q) {
                    out.push(e);
                }
            } else {
                out.push(e);
            }
        }
        out.sort_unstable();
        out
    }

    /// The final state (meaningful once nothing is enabled).
    pub fn finish(&self) -> Final {
        let mut ran: Vec<usize> = (0..self.status.len())
            .filter(|&e| self.status[e] == Status::Ran)
            .collect();
        ran.sort_unstable();
        Final {
            vars: self.vars.clone(),
            ran,
        }
    }

    /// Runs event `e`, which must be enabled (brute force).
    pub fn run_one(&mut self, e: usize, model: QueueModel) {
        let _ = self.step(e, model);
    }

    /// Runs pending event `e`; returns what it touched.
    fn step(&mut self, e: usize, model: QueueModel) -> Effects {
        let mut fx = Effects::default();
        self.order.retain(|&x| x != e);
        self.status[e] = Status::Ran;
        fx.reads.insert(format!("en:{e}"));
        // Taking a message off its queue reads the queue's order (which a cancel of a message
        // behind it writes: in another order the cancelled one would have reached the head).
        if let Some(q) = self.prog.events[e].queue {
            fx.reads.insert(format!("D:{q}"));
        }
        // A user event is what lets every later one run (R4: enabling is a write of the
        // enabled event's shadow location, which a system event that disables it also
        // writes), whether or not a later one is still pending here.
        if self.prog.events[e].user {
            let at = self
                .users
                .iter()
                .position(|&u| u == e)
                .unwrap_or(self.users.len());
            for u in &self.users[at + 1..] {
                fx.writes.insert(format!("en:{u}"));
            }
        }
        let body = self.prog.events[e].body.clone();
        self.exec(&body, model, &mut fx);
        self.steps += 1;
        fx
    }

    fn exec(&mut self, body: &[Stmt], model: QueueModel, fx: &mut Effects) {
        for st in body {
            match st {
                Stmt::Read(v) => {
                    fx.reads.insert(format!("v{v}"));
                }
                Stmt::Write(v, c) => {
                    fx.writes.insert(format!("v{v}"));
                    if let Some(x) = self.vars.get_mut(*v as usize) {
                        *x = *c;
                    }
                }
                Stmt::Inc(v) => {
                    fx.reads.insert(format!("v{v}"));
                    fx.writes.insert(format!("v{v}"));
                    if let Some(x) = self.vars.get_mut(*v as usize) {
                        *x += 1;
                    }
                }
                // Posting and cancelling write the event's shadow location even when they
                // change nothing here: in another order they would (R4's model requires a
                // write wherever an event may be enabled or disabled).
                Stmt::Post(t) => {
                    let t = *t;
                    if t >= self.status.len() {
                        continue;
                    }
                    fx.writes.insert(format!("en:{t}"));
                    if self.status[t] == Status::NotPosted && !self.prog.events[t].user {
                        self.status[t] = Status::Pending;
                        self.order.push(t);
                        self.poster[t] = Some(self.steps);
                        if let (QueueModel::SharedObject, Some(q)) =
                            (model, self.prog.events[t].queue)
                        {
                            fx.writes.insert(format!("Q:{q}"));
                        }
                    }
                }
                Stmt::Cancel(t) => {
                    let t = *t;
                    if t >= self.status.len() {
                        continue;
                    }
                    fx.writes.insert(format!("en:{t}"));
                    if let Some(q) = self.prog.events[t].queue {
                        fx.writes.insert(format!("D:{q}"));
                    }
                    if self.status[t] == Status::Pending {
                        self.status[t] = Status::Cancelled;
                        self.order.retain(|&x| x != t);
                    }
                }
                Stmt::IfEq(v, c, inner) => {
                    fx.reads.insert(format!("v{v}"));
                    if self.vars.get(*v as usize) == Some(c) {
                        self.exec(inner, model, fx);
                    }
                }
            }
        }
    }
}

/// Why a run could not follow its job.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// A prefix event was not enabled when reached.
    #[error("prefix event {0} is not enabled at step {1}")]
    PrefixNotEnabled(String, usize),
}

impl Program {
    /// The event table naming this program's events (index `i` is `Ev(i)`).
    pub fn table(&self) -> EventTable {
        let mut t = EventTable::default();
        for e in &self.events {
            t.intern(&e.name);
        }
        t
    }

    /// Executes `prefix` exactly, `seq` approximately (events not enabled are skipped), then
    /// runs the lowest enabled event until nothing is enabled. Events are `Ev(index)`.
    pub fn run(
        &self,
        prefix: &[Ev],
        seq: &[Ev],
        model: QueueModel,
    ) -> Result<(Execution, Final), RunError> {
        let mut st = State::new(self);
        let mut rec = Recorder::default();
        for (i, e) in prefix.iter().enumerate() {
            let e = e.0 as usize;
            let en = st.enabled();
            if !en.contains(&e) {
                let name = self.events.get(e).map_or("?", |d| d.name.as_str());
                return Err(RunError::PrefixNotEnabled(name.to_string(), i));
            }
            rec.step(&mut st, e, en, model);
        }
        for e in seq {
            let e = e.0 as usize;
            let en = st.enabled();
            if en.contains(&e) {
                rec.step(&mut st, e, en, model);
            }
        }
        loop {
            let en = st.enabled();
            let Some(&e) = en.first() else { break };
            rec.step(&mut st, e, en, model);
        }
        let last = st.enabled();
        Ok((rec.finish(self, last), st.finish()))
    }
}

/// Builds the [`Execution`] of a run step by step.
#[derive(Default)]
struct Recorder {
    events: Vec<Ev>,
    enabled: Vec<Vec<Ev>>,
    hb: Vec<Vec<u32>>,
    dep: Vec<Vec<u32>>,
    user: Vec<bool>,
    fifo: Vec<Option<Fifo>>,
    effects: Vec<Effects>,
}

impl Recorder {
    fn step(&mut self, st: &mut State<'_>, e: usize, en: Vec<usize>, model: QueueModel) {
        let j = self.events.len() as u32;
        let poster = st.poster[e];
        let def = &st.prog.events[e];
        self.events.push(Ev(e as u32));
        self.enabled
            .push(en.into_iter().map(|x| Ev(x as u32)).collect());
        self.hb.push(poster.into_iter().collect());
        self.user.push(def.user);
        // Shared-object queues: a thread handles its messages in program order (the order of
        // the posts, which are dependent); FIFO: in post order only when the posts are ordered.
        self.fifo.push(match (model, def.queue) {
            (QueueModel::Fifo, Some(q)) => Some(Fifo { queue: q, poster }),
            (QueueModel::SharedObject, Some(q)) => Some(Fifo {
                queue: q,
                poster: None,
            }),
            _ => None,
        });
        let fx = st.step(e, model);
        let mut deps = Vec::new();
        for (i, old) in self.effects.iter().enumerate() {
            let conflict = fx
                .writes
                .iter()
                .any(|l| old.reads.contains(l) || old.writes.contains(l))
                || fx.reads.iter().any(|l| old.writes.contains(l));
            if conflict {
                deps.push(i as u32);
            }
        }
        debug_assert!(deps.iter().all(|&d| d < j));
        self.dep.push(deps);
        self.effects.push(fx);
    }

    fn finish(mut self, _prog: &Program, last: Vec<usize>) -> Execution {
        self.enabled
            .push(last.into_iter().map(|x| Ev(x as u32)).collect());
        Execution {
            events: self.events,
            enabled: self.enabled,
            hb: self.hb,
            dep: self.dep,
            user: self.user,
            fifo: self.fifo,
        }
    }
}

/// What a trace-level exploration did.
#[derive(Clone, Debug)]
pub struct Explored {
    /// Executions run (the initial one included).
    pub sequences: u64,
    /// Distinct final states reached.
    pub finals: BTreeSet<Final>,
    /// Every execution, in the order run (with the job that produced it).
    pub runs: Vec<(Option<crate::dpor::Job>, Execution)>,
    /// The explorer's final state (counters, pruning).
    pub explorer: crate::dpor::Explorer,
}

impl Program {
    /// Explores the program with R4's algorithm: the initial execution runs the lowest enabled
    /// event at every step; reversals up to `bound`; at most `limit` executions.
    pub fn explore(&self, bound: u32, model: QueueModel, limit: u64) -> Result<Explored, RunError> {
        let mut ex = crate::dpor::Explorer::new(bound);
        let (first, fin) = self.run(&[], &[], model)?;
        ex.record(&first, None);
        let mut finals = BTreeSet::new();
        finals.insert(fin);
        let mut runs = vec![(None, first)];
        let mut sequences = 1;
        while sequences < limit {
            let Some(job) = ex.next_job() else { break };
            let (x, fin) = self.run(&job.prefix, &job.seq, model)?;
            ex.record(&x, Some(&job));
            finals.insert(fin);
            runs.push((Some(job), x));
            sequences += 1;
        }
        Ok(Explored {
            sequences,
            finals,
            runs,
            explorer: ex,
        })
    }
}
