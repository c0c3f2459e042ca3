//! The FIFO rules among derived happens-before arcs (the static ones are in `fixes.rs`): orders
//! that depend on reachability, so they are derived inside the clock pass, each new fire or
//! delivery checked against a window of recent ones.
//!
//! - **Timer FIFO.** A timer registered by an action ordered before (or equal to) the registrar of
//!   a second timer, with a delay no longer than the second's, fires first. Needs reachability,
//!   so [`TimerFifo`] runs inside the clock pass (`chains.rs`).
//! - **Queue FIFO** (EM-DPOR's FIFO rule). An action that reads `Queue:<name>` is a delivery
//!   from that FIFO queue (a `MessagePort`, a worker's message queue, the window's posted
//!   messages, animation frames), posted by the tail of its fork arc. When the post of an
//!   earlier delivery is ordered before (or in the same action as) the post of a later one of
//!   the same queue, the earlier delivery happens first. Deliveries whose posts are unordered
//!   stay unordered: their posts can swap. The location itself never races. Same pass as the
//!   timer rule (a timer is a queue whose order also depends on the delay).

use crate::clocks::{ClockBuilder, Clocks};
use crate::fixes::FixOptions;
use crate::graph::{ArcOrigin, HbArc};
use shepherd_trace::{ArcKind, Trace};

/// How many recent timer fires and queue deliveries the FIFO rules look back over. EventRacer searches the whole
/// graph; a bounded window keeps the pass linear. A missed FIFO arc can only add races (the
/// order is weaker), never hide one.
pub const TIMER_WINDOW: usize = 256;

/// What makes an action part of a FIFO order: a timer (its delay) or a delivery from a queue
/// (the `Queue:` location's string id).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FifoKind {
    /// A timer fire with this delay (ms).
    Timer(u32),
    /// A delivery from the queue with this name (string id).
    Queue(u32),
}

impl FifoKind {
    /// Whether a fire of kind `self` registered no later than one of kind `later` must run
    /// first: timers with no longer delay, deliveries of the same queue.
    pub fn precedes(self, later: FifoKind) -> bool {
        match (self, later) {
            (FifoKind::Timer(a), FifoKind::Timer(b)) => a <= b,
            (FifoKind::Queue(a), FifoKind::Queue(b)) => a == b,
            _ => false,
        }
    }

    /// The arc origin of the rule.
    pub fn origin(self) -> ArcOrigin {
        match self {
            FifoKind::Timer(_) => ArcOrigin::TimerFifo,
            FifoKind::Queue(_) => ArcOrigin::QueueFifo,
        }
    }
}

/// Registrar (timer) or poster (queue delivery) and kind of each action in a FIFO order:
/// the first fork arc into it (timed for timers), and for deliveries the first `Queue:`
/// location it reads (`queues[v]`, `u32::MAX` for none; empty when the trace has none).
pub fn fifo_members(
    trace: &Trace,
    queues: &[u32],
    opts: &FixOptions,
) -> Vec<Option<(u32, FifoKind)>> {
    let n = trace.actions.len() as u32;
    let mut out: Vec<Option<(u32, FifoKind)>> = Vec::new();
    if !opts.timers && queues.is_empty() {
        return out;
    }
    for a in &trace.arcs {
        if a.kind != ArcKind::Fork || a.head >= n || a.tail >= a.head {
            continue;
        }
        let kind = match (a.delay_ms, queues.get(a.head as usize)) {
            (Some(d), _) if opts.timers => FifoKind::Timer(d),
            (None, Some(&q)) if q != u32::MAX => FifoKind::Queue(q),
            _ => continue,
        };
        if out.is_empty() {
            out = vec![None; n as usize];
        }
        let slot = &mut out[a.head as usize];
        if slot.is_none() {
            *slot = Some((a.tail, kind));
        }
    }
    out
}

/// A fire: the action it ran in, who registered (posted) it, its FIFO kind.
#[derive(Clone, Copy, Debug)]
struct Fired {
    action: u32,
    registrar: u32,
    kind: FifoKind,
}

/// Derives timer and queue FIFO arcs during the clock pass. Feed it each timer-fired or
/// queue-delivered action before its clock is sealed; it joins the earlier fires that must
/// have run first.
#[derive(Debug, Default)]
pub struct TimerFifo {
    fired: Vec<Fired>,
}

impl TimerFifo {
    /// Action `v` (under construction in `b`) was registered by `registrar` with FIFO kind
    /// `kind`. Joins every earlier fire A (among the last
    /// [`TIMER_WINDOW`]) whose kind precedes `kind`
    /// ([`FifoKind::precedes`]) and with `registrar_A ⪯ registrar`, not already before `v`,
    /// and returns the arcs it added.
    pub fn on_fire(
        &mut self,
        b: &mut ClockBuilder,
        v: u32,
        registrar: u32,
        kind: FifoKind,
        out: &mut Vec<HbArc>,
    ) {
        // Latest first: joining a late timer usually makes the earlier ones reachable, so they
        // are skipped by the cheap `reaches_node` test.
        let from = self.fired.len().saturating_sub(TIMER_WINDOW);
        for i in (from..self.fired.len()).rev() {
            let a = self.fired[i];
            if !a.kind.precedes(kind) || b.reaches_node(a.action) {
                continue;
            }
            let clocks: &Clocks = b.sealed();
            if clocks.ordered(a.registrar, registrar) {
                b.join_node(a.action);
                out.push(HbArc {
                    tail: a.action,
                    head: v,
                    origin: kind.origin(),
                });
            }
        }
        self.fired.push(Fired {
            action: v,
            registrar,
            kind,
        });
    }
}
