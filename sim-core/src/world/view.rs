//! The pods each node holds in the view of Volcano's predicates plugin, which
//! host ports and inter-pod affinity both read.
//!
//! The plugin keeps a Kubernetes `NodeInfo` per node, made at session open
//! from the node's tasks (Allocated, Running, Releasing: a terminating pod is
//! on its node until it is gone), and moved by the session's events: an
//! allocation or a pipelining adds the pod (`AllocateFunc`), an eviction or a
//! discarded placement removes it (`DeallocateFunc`). So a pod evicted in a
//! session leaves the view for the rest of that session, and is in it again
//! from the next session on while it is Releasing.

use crate::model::ids::NodeId;
use crate::model::ids::PodId;
use crate::model::job::PodStatus;

/// Per node, the pods in the view (pod-id order), and the pods evicted since
/// the session opened.
#[derive(Debug, Default)]
pub(super) struct NodeView {
    listed: Vec<Vec<PodId>>,
    released: Vec<(NodeId, PodId)>,
}

fn holds(s: PodStatus) -> bool {
    matches!(s, PodStatus::Allocated | PodStatus::Pipelined | PodStatus::Running | PodStatus::Releasing)
}

fn add(list: &mut Vec<PodId>, pod: PodId) {
    if let Err(at) = list.binary_search(&pod) {
        list.insert(at, pod);
    }
}

impl NodeView {
    /// A view of `nodes` empty nodes.
    pub(super) fn sized(nodes: usize) -> NodeView {
        NodeView::of(vec![Vec::new(); nodes])
    }

    /// A view of the given lists (between sessions: the nodes' pods).
    pub(super) fn of(listed: Vec<Vec<PodId>>) -> NodeView {
        NodeView { listed, released: Vec::new() }
    }

    /// The pods in node `n`'s view.
    pub(super) fn on(&self, n: NodeId) -> &[PodId] {
        &self.listed[n.0 as usize]
    }

    /// Every pod in the view with its node, in node order.
    pub(super) fn all(&self) -> impl Iterator<Item = (NodeId, PodId)> + '_ {
        self.listed.iter().enumerate().flat_map(|(n, ps)| ps.iter().map(move |&p| (NodeId(n as u32), p)))
    }

    /// Moves `pod` along its status change; true if it is in the view after it
    /// (an eviction, Running → Releasing, leaves it out until [`NodeView::settle`]).
    pub(super) fn shift(
        &mut self,
        pod: PodId,
        was: (PodStatus, Option<NodeId>),
        now: (PodStatus, Option<NodeId>),
    ) -> bool {
        if let Some(n) = was.1 {
            let list = &mut self.listed[n.0 as usize];
            if let Ok(at) = list.binary_search(&pod) {
                list.remove(at);
            }
        }
        let Some(n) = now.1.filter(|_| holds(now.0)) else { return false };
        if was.0 == PodStatus::Running && now.0 == PodStatus::Releasing {
            self.released.push((n, pod));
            return false;
        }
        add(&mut self.listed[n.0 as usize], pod);
        true
    }

    /// A new session: the pods evicted in an earlier one that `still` finds
    /// Releasing on their node are in the view again; returns them.
    pub(super) fn settle(&mut self, still: impl Fn(PodId, NodeId) -> bool) -> Vec<PodId> {
        let mut back = Vec::new();
        for (n, pod) in std::mem::take(&mut self.released) {
            if still(pod, n) {
                add(&mut self.listed[n.0 as usize], pod);
                back.push(pod);
            }
        }
        back
    }
}
