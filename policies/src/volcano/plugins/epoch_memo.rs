//! Per-node answers remembered at the node's epoch: for plugins whose predicate
//! or score reads only the node's static facts, a ledger of the node that moves
//! its epoch on every change (`World::bump_node`), and the pod's ask.

use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::PodId;
use lahar_core::session::Session;

/// Answers already computed. An answer made at the node's current epoch is the
/// answer. Asks are numbered by content (tasks of equal asks share a number),
/// so pods of different jobs with the same ask share answers.
#[derive(Debug)]
pub(crate) struct EpochMemo<A, V> {
    /// Per job, per task: the ask's number + 1 (0: not numbered yet).
    by_task: Vec<Vec<u32>>,
    /// The distinct asks, by number.
    asks: Vec<A>,
    /// Per node: (epoch, ask number, answer).
    nodes: Vec<Vec<(u64, u32, V)>>,
}

impl<A, V> Default for EpochMemo<A, V> {
    fn default() -> Self {
        EpochMemo { by_task: Vec::new(), asks: Vec::new(), nodes: Vec::new() }
    }
}

impl<A: PartialEq + Clone, V: Copy> EpochMemo<A, V> {
    /// The answer for `pod` (whose task asks `ask`) on `node`: the one made at
    /// the node's current epoch, else `compute`'s, remembered. (The equivalence
    /// tests' stale mode reuses an answer of any epoch.)
    pub fn get(&mut self, ssn: &Session<'_>, pod: PodId, ask: &A, node: NodeId, compute: impl FnOnce() -> V) -> V {
        let p = ssn.pod(pod);
        let (j, t) = (p.job.0 as usize, p.task as usize);
        if self.by_task.len() <= j {
            self.by_task.resize_with(j + 1, Vec::new);
        }
        if self.by_task[j].len() <= t {
            self.by_task[j].resize(ssn.job(p.job).spec.tasks.len().max(t + 1), 0);
        }
        if self.by_task[j][t] == 0 {
            let id = match self.asks.iter().position(|a| a == ask) {
                Some(i) => i,
                None => {
                    self.asks.push(ask.clone());
                    self.asks.len() - 1
                }
            };
            self.by_task[j][t] = id as u32 + 1;
        }
        let id = self.by_task[j][t] - 1;
        if self.nodes.len() < ssn.node_count() {
            self.nodes.resize_with(ssn.node_count(), Vec::new);
        }
        let epoch = ssn.node_used_epoch(node);
        let entries = &mut self.nodes[node.0 as usize];
        let stale = ssn.planted.stale_scores;
        if let Some(&(_, _, v)) = entries.iter().find(|e| (e.0 == epoch || stale) && e.1 == id) {
            return v;
        }
        entries.retain(|e| e.0 == epoch);
        let v = compute();
        entries.push((epoch, id, v));
        v
    }
}
