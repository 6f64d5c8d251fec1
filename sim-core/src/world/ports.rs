//! Host ports (Kubernetes' NodePorts filter, as Volcano's predicates plugin
//! runs it): which pods' ports each node holds, in the predicates' view of the
//! nodes (`view.rs`): a pod evicted in a session frees its ports for the rest
//! of that session, and holds them again from the next session on while it is
//! Releasing.

use super::World;
use crate::model::ids::NodeId;
use crate::model::ids::PodId;
use crate::model::job::PodStatus;

impl World {
    /// Moves a pod with host ports between the nodes' ledgers along its status
    /// change (see `view.rs`).
    pub(super) fn move_ports(
        &mut self,
        pod: PodId,
        was: (PodStatus, Option<NodeId>),
        now: (PodStatus, Option<NodeId>),
    ) {
        self.ports.shift(pod, was, now);
    }

    /// A new session: pods evicted in an earlier one hold their ports again
    /// while they are still Releasing on their node.
    pub fn settle_ports(&mut self) {
        let pods = &self.pods;
        self.ports.settle(|p, n| {
            let p = &pods[p];
            p.status == PodStatus::Releasing && p.node == Some(n)
        });
    }

    /// True if a host port of `pod` is held on node `n` by another pod
    /// (Kubernetes' `fitsPorts`: same protocol and port, and the same address or
    /// `0.0.0.0` on either side).
    pub fn port_conflict(&self, pod: PodId, n: NodeId) -> bool {
        let ports_of = |p: PodId| {
            let p = &self.pods[p];
            self.jobs[p.job].spec.tasks[p.task as usize].host_ports()
        };
        let want = ports_of(pod);
        !want.is_empty()
            && self
                .ports
                .on(n)
                .iter()
                .filter(|&&q| q != pod)
                .any(|&q| ports_of(q).iter().any(|h| want.iter().any(|w| w.conflicts(h))))
    }
}
