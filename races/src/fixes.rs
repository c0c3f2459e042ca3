//! Derived happens-before arcs: orderings the browser guarantees that the log does not state,
//! after EventRacer's graph fixer and timer graph, mapped onto our names:
//!
//! - **Ordering keys.** Browser-internal queues (`ScriptRunner-*`, `CachedResource-*` in
//!   `ER_actionlog` files) are not shared state but FIFO orders: successive users of one key are
//!   chained and the key never races. Deferred and module scripts (`script:defer …`,
//!   `script:module …` scopes) run in document order, so their actions are chained too.
//! - **Node existence.** `NodeTree:<node>` is written when a node is created and read before an
//!   event fires at it; the reader gets an arc from the last writer and both accesses move to
//!   `NodeTree:<node>-<writer>` so they never race.
//! - **Auto exploration.** Auto-explored UI events (`auto:` scopes) are not ordered among
//!   themselves; each hangs off the last real UI event before it.
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
use crate::graph::{ArcOrigin, HbArc};
use shepherd_trace::{ArcKind, Trace};
use std::collections::HashMap;

/// Which fixes to apply (all on by default; turning one off is for comparisons).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixOptions {
    /// Timer FIFO arcs.
    pub timers: bool,
    /// Ordering-key and deferred-script chains.
    pub ordering_keys: bool,
    /// `NodeTree:` writer → reader arcs and renaming.
    pub node_tree: bool,
    /// Auto-explored UI events re-hung.
    pub auto_explore: bool,
    /// Queue FIFO arcs (`Queue:` locations).
    pub queues: bool,
}

impl Default for FixOptions {
    fn default() -> Self {
        FixOptions {
            timers: true,
            ordering_keys: true,
            node_tree: true,
            auto_explore: true,
            queues: true,
        }
    }
}

/// How a location name is treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    /// Ordinary shared state.
    Plain,
    /// Node existence (`NodeTree:`).
    NodeTree,
    /// A browser ordering key: becomes arcs, never races.
    OrderingKey,
    /// A FIFO queue the action is a delivery of: becomes queue FIFO arcs, never races.
    Queue,
}

/// Classifies a location name.
pub fn classify(name: &str, opts: &FixOptions) -> Special {
    if opts.node_tree && name.starts_with("NodeTree:") {
        Special::NodeTree
    } else if opts.ordering_keys
        && (name.starts_with("ScriptRunner-") || name.starts_with("CachedResource-"))
    {
        Special::OrderingKey
    } else if opts.queues && name.starts_with("Queue:") {
        Special::Queue
    } else {
        Special::Plain
    }
}

/// Chains successive users of each key in trace order.
#[derive(Debug, Default)]
pub struct KeyChain {
    last: HashMap<u32, u32>,
}

impl KeyChain {
    /// `action` uses `key`; returns the arc from the previous user, if any.
    pub fn touch(&mut self, key: u32, action: u32, origin: ArcOrigin) -> Option<HbArc> {
        match self.last.insert(key, action) {
            Some(prev) if prev < action => Some(HbArc {
                tail: prev,
                head: action,
                origin,
            }),
            _ => None,
        }
    }
}

/// True for a scope label that marks a deferred or module script execution.
pub fn is_ordered_script_scope(label: &str) -> bool {
    label.starts_with("script:defer") || label.starts_with("script:module")
}

/// True for a scope label that marks an auto-explored event.
pub fn is_auto_scope(label: &str) -> bool {
    label.starts_with("auto:")
}

/// Re-hangs auto-explored UI actions: arcs between two auto actions are dropped and each auto
/// action gets an arc from the last non-auto UI action before it. `auto[v]` marks auto
/// actions, `ui[v]` UI actions.
pub fn fix_auto_explore(arcs: &mut Vec<HbArc>, auto: &[bool], ui: &[bool]) {
    if !auto.iter().any(|&a| a) {
        return;
    }
    let is_auto = |v: u32| auto.get(v as usize).copied().unwrap_or(false);
    arcs.retain(|a| !(is_auto(a.tail) && is_auto(a.head)));
    let mut last_real = None;
    for (v, &is) in auto.iter().enumerate() {
        if is {
            if let Some(t) = last_real {
                arcs.push(HbArc {
                    tail: t,
                    head: v as u32,
                    origin: ArcOrigin::AutoExplore,
                });
            }
        } else if ui.get(v).copied().unwrap_or(false) {
            last_real = Some(v as u32);
        }
    }
}

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
    /// [`TIMER_WINDOW`](crate::sweep::TIMER_WINDOW)) whose kind precedes `kind`
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
        let from = self.fired.len().saturating_sub(crate::sweep::TIMER_WINDOW);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_explore_rehangs() {
        // 0 real UI, 1 auto, 2 auto (logged 1→2), 3 real UI, 4 auto
        let mut arcs = vec![HbArc {
            tail: 1,
            head: 2,
            origin: ArcOrigin::Join,
        }];
        let auto = [false, true, true, false, true];
        let ui = [true, true, true, true, true];
        fix_auto_explore(&mut arcs, &auto, &ui);
        let pairs: Vec<_> = arcs.iter().map(|a| (a.tail, a.head)).collect();
        assert_eq!(pairs, vec![(0, 1), (0, 2), (3, 4)]);
    }

    #[test]
    fn classify_names() {
        let o = FixOptions::default();
        assert_eq!(classify("NodeTree:7", &o), Special::NodeTree);
        assert_eq!(classify("ScriptRunner-0x1-0x2", &o), Special::OrderingKey);
        assert_eq!(classify("Global.x", &o), Special::Plain);
        let off = FixOptions {
            node_tree: false,
            ..o
        };
        assert_eq!(classify("NodeTree:7", &off), Special::Plain);
    }
}
