//! The papers' example programs as [`Program`]s, and the counts that compare DPOR with queues
//! as shared objects against EM-DPOR's dependence-covering exploration (posts independent,
//! FIFO happens-before) on the same program, with brute force as the baseline.

use crate::brute;
use crate::program::{EventDef, Program, QueueModel, RunError, Stmt};

fn ev(name: &str, queue: Option<u32>, body: Vec<Stmt>) -> EventDef {
    EventDef {
        name: name.to_string(),
        user: false,
        queue,
        body,
    }
}

fn user(name: &str, body: Vec<Stmt>) -> EventDef {
    EventDef {
        name: name.to_string(),
        user: true,
        queue: None,
        body,
    }
}

/// EM-DPOR Fig. 1: threads `t2` and `t3` post `e1` and `e2` to `t1`; `e1`'s handler posts `e3`
/// to `t1`; `e2` writes `y`, `e3` writes `x`. No two handlers of `t1` conflict, so one
/// interleaving is enough; with queues as shared objects DPOR explores every order of the
/// posts.
pub fn em_fig1() -> Program {
    // 0 t2 task, 1 t3 task, 2 e1, 3 e2, 4 e3 (queue 1 = t1)
    Program {
        events: vec![
            ev("t2:post-e1", Some(2), vec![Stmt::Post(2)]),
            ev("t3:post-e2", Some(3), vec![Stmt::Post(3)]),
            ev("t1:e1", Some(1), vec![Stmt::Post(4)]),
            ev("t1:e2", Some(1), vec![Stmt::Write(1, 1)]),
            ev("t1:e3", Some(1), vec![Stmt::Write(0, 1)]),
        ],
        initial: vec![0, 1],
        vars: 2,
    }
}

/// EM-DPOR Fig. 3: `e1` (posted to `t1` by `t2`) writes `x`; `e2` (posted to `t1` by `t3`)
/// posts `e4` to `t4`, which reads `x` (and notes in `y` that it saw it unset). Reading `x` before the write needs `e2` before `e1` on
/// `t1`, which needs the two posts reversed although `e1` and `e2` do not conflict.
pub fn em_fig3() -> Program {
    // 0 t2 task, 1 t3 task, 2 e1, 3 e2, 4 e4
    Program {
        events: vec![
            ev("t2:post-e1", Some(2), vec![Stmt::Post(2)]),
            ev("t3:post-e2", Some(3), vec![Stmt::Post(3)]),
            ev("t1:e1", Some(1), vec![Stmt::Write(0, 1)]),
            ev("t1:e2", Some(1), vec![Stmt::Post(4)]),
            ev(
                "t4:e4",
                Some(4),
                vec![Stmt::IfEq(0, 0, vec![Stmt::Write(1, 1)])],
            ),
        ],
        initial: vec![0, 1],
        vars: 2,
    }
}

/// `n` threads each post one message to the same queue; the handlers touch nothing shared.
/// With posts dependent DPOR explores all `n!` orders; EM-DPOR explores one.
pub fn fan_in(n: usize) -> Program {
    let mut events = Vec::new();
    for k in 0..n {
        events.push(ev(
            &format!("t{k}:post"),
            Some(100 + k as u32),
            vec![Stmt::Post(n + k)],
        ));
    }
    for k in 0..n {
        events.push(ev(
            &format!("main:m{k}"),
            Some(1),
            vec![Stmt::Write(k as u32, 1)],
        ));
    }
    Program {
        events,
        initial: (0..n).collect(),
        vars: n as u32,
    }
}

/// `fan_in(n)` where messages `0` and `n - 1` conflict: both orders of those two must be
/// explored, nothing else.
pub fn fan_in_conflict(n: usize) -> Program {
    let mut p = fan_in(n);
    p.events[n].body = vec![Stmt::Write(0, 1)];
    p.events[2 * n - 1].body = vec![Stmt::Write(0, 2)];
    p
}

/// R4 Fig. 1, the slide show: two image loads push to `queue`, two user clicks call
/// `showNextImage` (poll with a timer while the queue is empty, else take an image), and a
/// deferred statistics script that touches nothing shared.
pub fn r4_slideshow() -> Program {
    // 0 img2 load, 1 click1, 2 click2, 3 img3 load, 4 stats, 5 timer (click1), 6 timer (click2),
    // 7 timer retry (of 5), 8 timer retry (of 6); var 0 = queue length, 1 = shown
    let show = |timer: usize| vec![Stmt::IfEq(0, 0, vec![Stmt::Post(timer)]), Stmt::Inc(1)];
    Program {
        events: vec![
            ev("img2:load", None, vec![Stmt::Inc(0)]),
            user("click1", show(5)),
            user("click2", show(6)),
            ev("img3:load", None, vec![Stmt::Inc(0)]),
            ev("stats.js", None, vec![Stmt::Write(2, 1)]),
            ev("timer:click1", None, show(7)),
            ev("timer:click2", None, show(8)),
            ev("timer:retry1", None, vec![Stmt::Read(0)]),
            ev("timer:retry2", None, vec![Stmt::Read(0)]),
        ],
        initial: vec![0, 1, 2, 3, 4],
        vars: 3,
    }
}

/// Counts for one program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counts {
    /// Every maximal interleaving (no reduction).
    pub brute: u64,
    /// Distinct final states over all interleavings.
    pub brute_finals: usize,
    /// Sequences explored with queues as shared objects (posts dependent).
    pub shared_object: u64,
    /// Final states that exploration reached.
    pub shared_object_finals: usize,
    /// Sequences explored with FIFO happens-before (posts independent).
    pub fifo: u64,
    /// Final states that exploration reached.
    pub fifo_finals: usize,
}

/// Explores `prog` without a bound under both queue models, and enumerates it.
pub fn compare(prog: &Program, limit: u64) -> Result<Counts, RunError> {
    let all = brute::enumerate(prog, limit);
    let so = prog.explore(u32::MAX, QueueModel::SharedObject, limit)?;
    let ff = prog.explore(u32::MAX, QueueModel::Fifo, limit)?;
    Ok(Counts {
        brute: all.sequences,
        brute_finals: all.finals.len(),
        shared_object: so.sequences,
        shared_object_finals: so.finals.len(),
        fifo: ff.sequences,
        fifo_finals: ff.finals.len(),
    })
}

/// The shapes with their names, as the benchmark and tests iterate them.
pub fn all() -> Vec<(&'static str, Program)> {
    vec![
        ("em-dpor fig. 1", em_fig1()),
        ("em-dpor fig. 3", em_fig3()),
        ("fan-in 4", fan_in(4)),
        ("fan-in 5, one conflict", fan_in_conflict(5)),
        ("r4 fig. 1 slide show", r4_slideshow()),
    ]
}
