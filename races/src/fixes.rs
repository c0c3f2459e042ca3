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
//!
//! The timer and queue FIFO rules need reachability, so they run inside the clock pass: see
//! `fifo.rs`.

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
