//! The happens-before pass: logged + static derived arcs → graph, then one sweep in id order
//! that derives timer and queue FIFO arcs and assigns chains and clocks (greedy chain decomposition,
//! EventRacer §4.1.4 and §4.4: each node goes on the first chain whose last node reaches it).

use crate::accesses::Scan;
use crate::clocks::{ClockBuilder, Clocks};
use crate::fifo::{self, TimerFifo};
use crate::fixes::{self, FixOptions};
use crate::graph::{GraphError, HbGraph};
use shepherd_trace::{ActionType, Trace};

/// The happens-before graph before the timer and queue FIFO arcs (which need clocks): logged
/// arcs, the static derived ones, and the auto-explore fix. Shared with the streaming sweep.
pub(crate) fn static_graph(
    trace: &Trace,
    scan: &Scan,
    opts: &FixOptions,
) -> Result<HbGraph, GraphError> {
    let mut arcs = HbGraph::logged_arcs(trace);
    arcs.extend_from_slice(&scan.derived);
    if opts.auto_explore {
        let ui: Vec<bool> = trace
            .actions
            .iter()
            .map(|a| a.ty == ActionType::UserInterface)
            .collect();
        fixes::fix_auto_explore(&mut arcs, &scan.auto, &ui);
    }
    HbGraph::new(trace.actions.len() as u32, arcs)
}

/// Builds the final happens-before graph (including timer and queue FIFO arcs) and its
/// clocks, from the trace and its access scan (static derived arcs, auto-explored actions,
/// queue deliveries).
pub fn build(
    trace: &Trace,
    scan: &Scan,
    opts: &FixOptions,
) -> Result<(HbGraph, Clocks), GraphError> {
    let n = trace.actions.len() as u32;
    let graph = static_graph(trace, scan, opts)?;

    let fifo_of = fifo::fifo_members(trace, &scan.queues, opts);

    let mut b = ClockBuilder::new(n as usize);
    let mut fifo = TimerFifo::default();
    let mut extra = Vec::new();
    for v in 0..n {
        for p in graph.preds(v) {
            b.join_node(p);
        }
        if let Some(Some((reg, kind))) = fifo_of.get(v as usize) {
            fifo.on_fire(&mut b, v, *reg, *kind, &mut extra);
        }
        b.finish_greedy();
    }
    let clocks = b.build();
    let graph = if extra.is_empty() {
        graph
    } else {
        let mut all = graph.arcs().to_vec();
        all.extend(extra);
        HbGraph::new(n, all)?
    };
    Ok((graph, clocks))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accesses::scan;
    use shepherd_trace::TraceBuilder;

    #[test]
    fn timer_fifo_orders_equal_delay_timers_from_ordered_registrars() {
        let mut b = TraceBuilder::new();
        let s0 = b.begin(ActionType::Unknown, "script", "s0");
        b.end();
        let s1 = b.begin(ActionType::Unknown, "script", "s1");
        b.end();
        let t0 = b.begin(ActionType::Timer, "timer", "t0");
        b.end();
        let t1 = b.begin(ActionType::Timer, "timer", "t1");
        b.end();
        let t2 = b.begin(ActionType::Timer, "timer", "t2");
        b.end();
        b.fork(s0, s1);
        b.fork_delay(s0, t0, 10);
        b.fork_delay(s1, t1, 10); // s0 ⪯ s1, 10 ≤ 10: t0 → t1
        b.fork_delay(s0, t2, 5); // shorter than t0/t1: no arc into t2
        let t = b.finish();
        let o = FixOptions::default();
        let s = scan(&t, &o).unwrap();
        let (g, c) = build(&t, &s, &o).unwrap();
        assert!(c.ordered(t0, t1));
        assert!(!c.ordered(t0, t2));
        assert!(!c.ordered(t1, t2));
        assert!(g.arcs().iter().any(|a| a.tail == t0
            && a.head == t1
            && a.origin == crate::graph::ArcOrigin::TimerFifo));
        let off = FixOptions { timers: false, ..o };
        let (_, c2) = build(&t, &s, &off).unwrap();
        assert!(!c2.ordered(t0, t1));
    }
}
