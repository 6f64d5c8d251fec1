//! Host ports (Kubernetes' NodePorts filter, as Volcano's predicates plugin
//! runs it): which pods' ports each node holds, moved along every pod's status
//! change.
//!
//! Volcano's predicates plugin keeps a Kubernetes `NodeInfo` per node, made at
//! session open from the node's tasks (Allocated, Running, Releasing: a
//! terminating pod holds its ports until it is gone), and moved by the
//! session's events: an allocation or a pipelining adds the pod
//! (`AllocateFunc`), an eviction or a discarded placement removes it
//! (`DeallocateFunc`). So a pod evicted in a session frees its ports for the
//! rest of that session, and holds them again from the next session on while
//! it is Releasing.

use super::World;
use crate::cluster::NodeId;
use crate::job::{PodId, PodStatus};

impl World {
    /// Moves a pod with host ports between the nodes' ledgers along its status
    /// change: held from Allocated or Pipelined through Running and Releasing,
    /// except that an eviction (Running → Releasing) frees them until the next
    /// session opens ([`World::settle_ports`]).
    pub(super) fn move_ports(
        &mut self,
        pod: PodId,
        was: (PodStatus, Option<NodeId>),
        now: (PodStatus, Option<NodeId>),
    ) {
        let holds = |s: PodStatus| {
            matches!(s, PodStatus::Allocated | PodStatus::Pipelined | PodStatus::Running | PodStatus::Releasing)
        };
        if let Some(n) = was.1 {
            let ported = &mut self.nodes[n.0 as usize].ported;
            if let Ok(at) = ported.binary_search(&pod) {
                ported.remove(at);
            }
        }
        let Some(n) = now.1.filter(|_| holds(now.0)) else { return };
        if was.0 == PodStatus::Running && now.0 == PodStatus::Releasing {
            self.ports_released.push((n, pod));
            return;
        }
        let ported = &mut self.nodes[n.0 as usize].ported;
        if let Err(at) = ported.binary_search(&pod) {
            ported.insert(at, pod);
        }
    }

    /// A new session: pods evicted in an earlier one hold their ports again
    /// while they are still Releasing on their node.
    pub fn settle_ports(&mut self) {
        for (n, pod) in std::mem::take(&mut self.ports_released) {
            let p = &self.pods[pod.0 as usize];
            if p.status != PodStatus::Releasing || p.node != Some(n) {
                continue;
            }
            let ported = &mut self.nodes[n.0 as usize].ported;
            if let Err(at) = ported.binary_search(&pod) {
                ported.insert(at, pod);
            }
        }
    }

    /// True if a host port of `pod` is held on node `n` by another pod
    /// (Kubernetes' `fitsPorts`: same protocol and port, and the same address or
    /// `0.0.0.0` on either side).
    pub fn port_conflict(&self, pod: PodId, n: NodeId) -> bool {
        let ports_of = |p: PodId| {
            let p = &self.pods[p.0 as usize];
            self.jobs[p.job.0 as usize].spec.tasks[p.task as usize].host_ports()
        };
        let want = ports_of(pod);
        !want.is_empty()
            && self.nodes[n.0 as usize]
                .ported
                .iter()
                .filter(|&&q| q != pod)
                .any(|&q| ports_of(q).iter().any(|h| want.iter().any(|w| w.conflicts(h))))
    }
}
