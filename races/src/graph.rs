//! The happens-before graph: one node per action, arcs logged in the trace plus the arcs the
//! analysis derives (`fixes`). Stored as a CSR of predecessors (what clock computation walks)
//! with successors built on demand (for BFS and neighbourhood drawings).

use shepherd_trace::{ArcKind, Trace};

/// Why an arc is in the graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ArcOrigin {
    /// Logged fork (the tail caused the head).
    Fork,
    /// Logged join (ordering without causation).
    Join,
    /// Timer FIFO: a timer registered earlier with no longer delay fires first.
    TimerFifo,
    /// Queue FIFO: a delivery posted earlier to the same queue runs first (EM-DPOR).
    QueueFifo,
    /// Successive users of one browser ordering key (`ScriptRunner-*`, `CachedResource-*`) or
    /// successive deferred/module scripts.
    OrderingKey,
    /// A node exists before events fire at it (`NodeTree:` writer → reader).
    NodeTree,
    /// Auto-explored UI events hang off the last real UI event.
    AutoExplore,
}

impl ArcOrigin {
    /// Short name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            ArcOrigin::Fork => "fork",
            ArcOrigin::Join => "join",
            ArcOrigin::TimerFifo => "timer-fifo",
            ArcOrigin::QueueFifo => "queue-fifo",
            ArcOrigin::OrderingKey => "ordering-key",
            ArcOrigin::NodeTree => "node-tree",
            ArcOrigin::AutoExplore => "auto-explore",
        }
    }

    /// True for arcs the analysis added (not logged).
    pub fn derived(self) -> bool {
        !matches!(self, ArcOrigin::Fork | ArcOrigin::Join)
    }
}

/// One arc `tail → head` (`tail < head`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HbArc {
    /// Head (sort key first: arcs are grouped by head).
    pub head: u32,
    /// Tail.
    pub tail: u32,
    /// Why the arc exists.
    pub origin: ArcOrigin,
}

/// `arcs` in their order (head, tail, origin); every head is below `nodes`. A counting sort
/// by head, then each head's few arcs compared: a comparison sort of the 200 000 arcs of a
/// 115 000-action page was 4 % of its analysis.
fn sort_by_head(nodes: u32, arcs: Vec<HbArc>) -> Vec<HbArc> {
    let Some(&first) = arcs.first() else {
        return arcs;
    };
    let mut next = vec![0u32; nodes as usize + 1];
    for a in &arcs {
        next[a.head as usize + 1] += 1;
    }
    for i in 0..nodes as usize {
        next[i + 1] += next[i];
    }
    let mut sorted = vec![first; arcs.len()];
    for a in &arcs {
        let slot = &mut next[a.head as usize];
        sorted[*slot as usize] = *a;
        *slot += 1;
    }
    // `next[h]` is now where head h's arcs end (and h + 1's begin).
    let mut start = 0;
    for &end in &next[..nodes as usize] {
        let group = &mut sorted[start..end as usize];
        if group.len() > 1 {
            group.sort_unstable();
        }
        start = end as usize;
    }
    sorted
}

/// Why a graph could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GraphError {
    /// An arc does not go forward in execution order, or names an action that never began.
    #[error(
        "arc {tail} -> {head} is invalid ({nodes} actions; arcs must go from a smaller to a larger id)"
    )]
    BadArc {
        /// Tail as given.
        tail: u32,
        /// Head as given.
        head: u32,
        /// Number of actions.
        nodes: u32,
    },
}

/// The happens-before graph.
#[derive(Clone, Debug, Default)]
pub struct HbGraph {
    nodes: u32,
    /// Sorted by (head, tail); one entry per distinct pair (the first origin wins).
    arcs: Vec<HbArc>,
    pred_off: Vec<u32>,
}

impl HbGraph {
    /// A graph with `nodes` nodes and the given arcs (validated, sorted, deduplicated).
    pub fn new(nodes: u32, arcs: Vec<HbArc>) -> Result<HbGraph, GraphError> {
        if let Some(a) = arcs.iter().find(|a| a.tail >= a.head || a.head >= nodes) {
            return Err(GraphError::BadArc {
                tail: a.tail,
                head: a.head,
                nodes,
            });
        }
        let mut arcs = sort_by_head(nodes, arcs);
        arcs.dedup_by(|b, a| a.head == b.head && a.tail == b.tail);
        let mut pred_off = vec![0u32; nodes as usize + 1];
        for a in &arcs {
            pred_off[a.head as usize + 1] += 1;
        }
        for i in 0..nodes as usize {
            pred_off[i + 1] += pred_off[i];
        }
        Ok(HbGraph {
            nodes,
            arcs,
            pred_off,
        })
    }

    /// The logged arcs of `trace` as graph arcs.
    pub fn logged_arcs(trace: &Trace) -> Vec<HbArc> {
        trace
            .arcs
            .iter()
            .map(|a| HbArc {
                tail: a.tail,
                head: a.head,
                origin: match a.kind {
                    ArcKind::Fork => ArcOrigin::Fork,
                    ArcKind::Join => ArcOrigin::Join,
                },
            })
            .collect()
    }

    /// Number of nodes.
    pub fn nodes(&self) -> u32 {
        self.nodes
    }

    /// All arcs, sorted by (head, tail).
    pub fn arcs(&self) -> &[HbArc] {
        &self.arcs
    }

    /// The arcs, giving the graph up (to rebuild it with more arcs without a copy).
    pub fn into_arcs(self) -> Vec<HbArc> {
        self.arcs
    }

    /// Arcs into `v`.
    pub fn arcs_into(&self, v: u32) -> &[HbArc] {
        let v = v as usize;
        &self.arcs[self.pred_off[v] as usize..self.pred_off[v + 1] as usize]
    }

    /// Predecessors of `v`.
    pub fn preds(&self, v: u32) -> impl Iterator<Item = u32> + '_ {
        self.arcs_into(v).iter().map(|a| a.tail)
    }

    /// Successor lists (CSR), built on demand.
    pub fn successors(&self) -> Successors {
        let n = self.nodes as usize;
        let mut off = vec![0u32; n + 1];
        for a in &self.arcs {
            off[a.tail as usize + 1] += 1;
        }
        for i in 0..n {
            off[i + 1] += off[i];
        }
        let mut fill = off.clone();
        let mut to = vec![0u32; self.arcs.len()];
        for a in &self.arcs {
            let slot = &mut fill[a.tail as usize];
            to[*slot as usize] = a.head;
            *slot += 1;
        }
        Successors { off, to }
    }
}

/// Successors of every node (CSR).
#[derive(Clone, Debug)]
pub struct Successors {
    off: Vec<u32>,
    to: Vec<u32>,
}

impl Successors {
    /// Successors of `v`.
    pub fn of(&self, v: u32) -> &[u32] {
        let v = v as usize;
        &self.to[self.off[v] as usize..self.off[v + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arc(tail: u32, head: u32) -> HbArc {
        HbArc {
            tail,
            head,
            origin: ArcOrigin::Fork,
        }
    }

    #[test]
    fn rejects_backward_and_dangling_arcs() {
        assert!(HbGraph::new(3, vec![arc(2, 1)]).is_err());
        assert!(HbGraph::new(3, vec![arc(1, 1)]).is_err());
        assert!(HbGraph::new(3, vec![arc(1, 3)]).is_err());
    }

    #[test]
    fn dedups_and_indexes() {
        let g = HbGraph::new(4, vec![arc(0, 2), arc(1, 2), arc(0, 2), arc(2, 3)]).unwrap();
        assert_eq!(g.preds(2).collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(g.preds(0).count(), 0);
        let s = g.successors();
        assert_eq!(s.of(0), &[2]);
        assert_eq!(s.of(2), &[3]);
    }

    #[test]
    fn counting_sort_matches_a_comparison_sort() {
        // Shuffled arcs with repeated heads, duplicate pairs and every origin.
        let origins = [ArcOrigin::Fork, ArcOrigin::Join, ArcOrigin::TimerFifo];
        let mut arcs = Vec::new();
        let mut x = 12345u32;
        for _ in 0..2_000 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let head = 1 + (x >> 8) % 199;
            let tail = (x >> 4) % head;
            arcs.push(HbArc {
                tail,
                head,
                origin: origins[(x % 3) as usize],
            });
        }
        let mut want = arcs.clone();
        want.sort_unstable();
        assert_eq!(sort_by_head(200, arcs), want);
        assert!(sort_by_head(5, Vec::new()).is_empty());
    }
}
