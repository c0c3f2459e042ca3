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

use crate::clocks::{ClockBuilder, Clocks};
use crate::graph::{ArcOrigin, HbArc};
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
}

impl Default for FixOptions {
    fn default() -> Self {
        FixOptions {
            timers: true,
            ordering_keys: true,
            node_tree: true,
            auto_explore: true,
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
}

/// Classifies a location name.
pub fn classify(name: &str, opts: &FixOptions) -> Special {
    if opts.node_tree && name.starts_with("NodeTree:") {
        Special::NodeTree
    } else if opts.ordering_keys
        && (name.starts_with("ScriptRunner-") || name.starts_with("CachedResource-"))
    {
        Special::OrderingKey
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

/// A timer fire: the action it ran in, who registered it, with what delay.
#[derive(Clone, Copy, Debug)]
struct Fired {
    action: u32,
    registrar: u32,
    delay: u32,
}

/// Derives timer FIFO arcs during the clock pass. Feed it each timer-fired action before its
/// clock is sealed; it joins the earlier timers that must have fired first.
#[derive(Debug, Default)]
pub struct TimerFifo {
    fired: Vec<Fired>,
}

impl TimerFifo {
    /// Action `v` (under construction in `b`) is a timer registered by `registrar` with
    /// `delay`. Joins every earlier-fired timer A (among the last
    /// [`TIMER_WINDOW`](crate::sweep::TIMER_WINDOW)) with `delay_A ≤ delay` and
    /// `registrar_A ⪯ registrar` not already before `v`, and returns the arcs it added.
    pub fn on_fire(
        &mut self,
        b: &mut ClockBuilder,
        v: u32,
        registrar: u32,
        delay: u32,
        out: &mut Vec<HbArc>,
    ) {
        // Latest first: joining a late timer usually makes the earlier ones reachable, so they
        // are skipped by the cheap `reaches_node` test.
        let from = self.fired.len().saturating_sub(crate::sweep::TIMER_WINDOW);
        for i in (from..self.fired.len()).rev() {
            let a = self.fired[i];
            if a.delay > delay || b.reaches_node(a.action) {
                continue;
            }
            let clocks: &Clocks = b.sealed();
            if clocks.ordered(a.registrar, registrar) {
                b.join_node(a.action);
                out.push(HbArc {
                    tail: a.action,
                    head: v,
                    origin: ArcOrigin::TimerFifo,
                });
            }
        }
        self.fired.push(Fired {
            action: v,
            registrar,
            delay,
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
