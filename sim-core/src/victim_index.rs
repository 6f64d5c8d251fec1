//! The victim index: for a set of victim groups, which nodes could host a pod if
//! every Running preemptable pod of those groups on the node were evicted.
//!
//! Preempt and reclaim bound a node by `FutureIdle + Σ victims of the allowed
//! groups` (`NodeState::victim_room` in the World) before running its
//! predicates. Walking every node for that bound, for every preemptor pod in
//! every session, was most of a contended run (docs/PERFORMANCE.md § Preemption
//! at scale). The index keeps, per distinct set of allowed groups, a
//! [`NodeIndex`] over that bound, so the nodes that pass are listed in node order
//! by a descent that skips every subtree whose bound cannot cover the pod
//! (about O(log n) a node; more when per-dimension maxima mislead).
//!
//! The trees are caches of the World's state, brought up to date lazily: the
//! World logs every node whose future-idle room or victim sums change
//! ([`VictimIndex::touch`]); a tree, when asked, recomputes the leaves of the
//! nodes logged since it was last asked (or rebuilds itself when the log was cut
//! after it last looked). A leaf is recomputed from the node's current state, so
//! the log needs no order or de-duplication and an undone change is just another
//! change. The answers are exactly the nodes the linear walk's bound passes: the
//! equivalence property compares runs against `--exhaustive`, which walks every
//! node, and `a_wrong_victim_index_is_caught` shows it notices a stale tree.

use crate::index::NodeIndex;
use crate::model::ids::NodeId;
use crate::model::ids::QueueId;
use crate::model::resource::Resources;

/// A group of possible victims: what the plugins' group rules
/// (`victim_group_ok`) read of a Running preemptable pod's job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VictimKey {
    /// The job's queue.
    pub queue: QueueId,
    /// The job's priority.
    pub priority: i32,
    /// The job has more ready pods than its minAvailable (gang lets only such
    /// jobs lose pods).
    pub over_min: bool,
    /// The job holds nothing but the pod: it has one Allocated or Running pod
    /// and none pipelined, so its allocation as drf counts it is the pod's
    /// request, and drf's share test reads an allocation of zero once the pod
    /// is taken away.
    pub lone: bool,
}

/// At most this many trees are kept (least recently used dropped first): one
/// per distinct set of allowed groups, which is a few per queue and priority.
const MAX_TREES: usize = 32;

/// One tree: the bound for one set of allowed groups.
#[derive(Clone, Debug)]
struct Tree {
    /// The allowed groups, ascending.
    keys: Vec<VictimKey>,
    /// Per node: FutureIdle + Σ victims of `keys`.
    index: NodeIndex,
    /// Absolute log position up to which the leaves are current.
    synced: u64,
    /// When it was last asked (for dropping the least recently used).
    used: u64,
}

/// The trees and the log of changed nodes they read (owned by the World).
#[derive(Clone, Debug, Default)]
pub struct VictimIndex {
    trees: Vec<Tree>,
    /// Nodes changed since absolute position `base`.
    log: Vec<NodeId>,
    base: u64,
    /// The log is cut beyond this many entries.
    log_limit: usize,
    /// Queries answered (the clock of `Tree::used`).
    clock: u64,
    /// Someone reads the log besides the trees (preempt's carried failures).
    followed: bool,
    /// Nodes of a job whose pods changed are not logged (tests only): see
    /// `PlantedBugs::wrong_carry`.
    pub(crate) skip_job_nodes_for_tests: bool,
    /// Leaves go stale on purpose (tests only): see
    /// `PlantedBugs::wrong_victim_index`.
    pub(crate) wrong_for_tests: bool,
}

impl VictimIndex {
    /// Records that node `n`'s future-idle room or victim sums changed. Nothing
    /// is logged while no tree exists (a tree is built from the current state).
    pub fn touch(&mut self, n: NodeId) {
        if !self.logging() || self.wrong_for_tests {
            return;
        }
        self.log.push(n);
        // A long log is cut; readers that had not read it start afresh (a tree
        // rebuilds, a carried failure is forgotten).
        if self.log.len() > self.log_limit {
            self.base += self.log.len() as u64;
            self.log.clear();
        }
    }

    /// True while someone reads the log.
    pub fn logging(&self) -> bool {
        self.followed || !self.trees.is_empty()
    }

    /// Starts logging for a reader other than the trees; `nodes` sizes the log.
    pub fn follow(&mut self, nodes: usize) {
        self.followed = true;
        self.log_limit = self.log_limit.max(4 * nodes.max(1024));
    }

    /// The absolute position after the last logged change.
    pub fn end(&self) -> u64 {
        self.base + self.log.len() as u64
    }

    /// The nodes logged since absolute position `pos` (repeats possible), or
    /// `None` when the log was cut after `pos`.
    pub fn since(&self, pos: u64) -> Option<&[NodeId]> {
        (pos >= self.base && pos <= self.end()).then(|| &self.log[(pos - self.base) as usize..])
    }

    /// Every node (in node order) whose `bound` — FutureIdle plus the Running
    /// preemptable pods of `keys` (ascending) — covers `req`, into `out`.
    /// `bound(n, keys)` computes a node's value from the current state.
    pub fn fitting(
        &mut self,
        keys: &[VictimKey],
        req: &Resources,
        nodes: usize,
        bound: impl Fn(NodeId, &[VictimKey]) -> Resources,
        out: &mut Vec<NodeId>,
    ) {
        self.clock += 1;
        let end = self.base + self.log.len() as u64;
        let at = match self.trees.iter().position(|t| t.keys == keys) {
            Some(i) => i,
            None => {
                if self.trees.len() >= MAX_TREES {
                    let lru = (0..self.trees.len()).min_by_key(|&i| self.trees[i].used).unwrap_or(0);
                    self.trees.swap_remove(lru);
                }
                let leaves: Vec<Resources> = (0..nodes as u32).map(|n| bound(NodeId(n), keys)).collect();
                let index = NodeIndex::new(&leaves);
                self.log_limit = self.log_limit.max(4 * nodes.max(1024));
                self.trees.push(Tree { keys: keys.to_vec(), index, synced: end, used: 0 });
                self.trees.len() - 1
            }
        };
        let t = &mut self.trees[at];
        t.used = self.clock;
        if t.synced < self.base {
            // The log was cut after this tree last looked: rebuild it.
            let leaves: Vec<Resources> = (0..nodes as u32).map(|n| bound(NodeId(n), keys)).collect();
            t.index = NodeIndex::new(&leaves);
        } else {
            for &n in &self.log[(t.synced - self.base) as usize..] {
                t.index.update(n, bound(n, &t.keys));
            }
        }
        t.synced = end;
        out.extend(t.index.fitting(req));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // Nodes of (free GPUs, victims' GPUs per group); the bound is free plus the
    // victims of the allowed groups. After random changes (each touched), the
    // index lists exactly the nodes a linear walk finds.
    proptest! {
        #[test]
        fn lists_the_nodes_a_walk_finds(
            start in proptest::collection::vec((0i64..8, 0i64..8, 0i64..8), 1..200),
            steps in proptest::collection::vec((0usize..200, 0i64..8, 0i64..8, 0i64..8, any::<bool>(), 0i64..9), 1..40),
        ) {
            let key = |priority, over_min| VictimKey { queue: QueueId(0), priority, over_min, lone: false };
            let keys = [key(0, false), key(1, true)];
            let mut nodes = start.clone();
            let mut idx = VictimIndex::default();
            let bound = |nodes: &[(i64, i64, i64)], n: NodeId, ks: &[VictimKey]| {
                let (free, a, b) = nodes[n.0 as usize];
                let mut g = free;
                if ks.contains(&keys[0]) { g += a; }
                if ks.contains(&keys[1]) { g += b; }
                Resources::new(0, 0, g, 0)
            };
            for (n, free, a, b, both, want) in steps {
                let n = n % nodes.len();
                nodes[n] = (free, a, b);
                idx.touch(NodeId(n as u32));
                let ks: &[VictimKey] = if both { &keys } else { &keys[..1] };
                let req = Resources::new(0, 0, want, 0);
                let mut got = Vec::new();
                idx.fitting(ks, &req, nodes.len(), |m, k| bound(&nodes, m, k), &mut got);
                let walk: Vec<NodeId> = (0..nodes.len() as u32)
                    .map(NodeId)
                    .filter(|&m| req.fits_in(&bound(&nodes, m, ks)))
                    .collect();
                prop_assert_eq!(got, walk);
            }
        }
    }
}
