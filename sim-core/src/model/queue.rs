//! Volcano Queues.

use crate::model::resource::ResourceList;

pub use crate::model::ids::QueueId;

/// Queue state (`status.state`). Proportion's and capacity's votes refuse
/// admission and allocation to a queue that is not Open, as Volcano's do; other
/// confs and the baselines ignore it (docs/volcano.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum QueueState {
    /// Accepting and scheduling jobs.
    #[default]
    Open,
    /// Closing: no new jobs; existing ones finish.
    Closing,
    /// Closed.
    Closed,
}

/// A queue as the scheduler sees it (`scheduling.volcano.sh/v1beta1` Queue spec).
#[derive(Clone, Debug, PartialEq)]
pub struct Queue {
    /// Name.
    pub name: String,
    /// Weight (proportion plugin), ≥ 1 by webhook default.
    pub weight: u32,
    /// Upper bound on allocation; dimensions not given are unlimited.
    pub capability: ResourceList,
    /// Resources reserved for this queue (`guarantee.resource`).
    pub guarantee: ResourceList,
    /// Deserved share (capacity plugin).
    pub deserved: ResourceList,
    /// Whether other queues may reclaim from it.
    pub reclaimable: bool,
    /// Parent queue (capacity hierarchy); `None` means `root` or flat.
    pub parent: Option<String>,
    /// Queue priority: higher is scheduled first and is a victim last.
    pub priority: i32,
    /// State.
    pub state: QueueState,
    /// `volcano.sh/hierarchy` annotation (hierarchical DRF).
    pub hierarchy: Option<String>,
    /// `volcano.sh/hierarchy-weights` annotation.
    pub hierarchy_weights: Option<String>,
    /// `spec.affinity`: node groups its jobs may, should, must not and should not
    /// use (the `nodegroup` plugin). `None` when the queue has no `affinity`.
    pub node_groups: Option<NodeGroupAffinity>,
    /// The `volcano.sh/nodegroup-resource-limits` annotation: per node group, the
    /// most the queue's pods may hold there, on the dimensions given.
    pub node_group_limits: Vec<(String, ResourceList)>,
}

/// A queue's `spec.affinity` (Volcano's `Affinity`): node group names, by the
/// node label `volcano.sh/nodegroup-name`, in the order given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeGroupAffinity {
    /// `nodeGroupAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    pub required: Vec<String>,
    /// `nodeGroupAffinity.preferredDuringSchedulingIgnoredDuringExecution`.
    pub preferred: Vec<String>,
    /// `nodeGroupAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    pub anti_required: Vec<String>,
    /// `nodeGroupAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution`.
    pub anti_preferred: Vec<String>,
}

impl NodeGroupAffinity {
    /// No group in any list (Volcano's "affinity not specified").
    pub fn is_empty(&self) -> bool {
        self.required.is_empty()
            && self.preferred.is_empty()
            && self.anti_required.is_empty()
            && self.anti_preferred.is_empty()
    }
}

impl Queue {
    /// A queue with Volcano's defaults (weight 1, reclaimable, open, no limits).
    pub fn new(name: impl Into<String>) -> Queue {
        Queue {
            name: name.into(),
            weight: 1,
            capability: ResourceList::default(),
            guarantee: ResourceList::default(),
            deserved: ResourceList::default(),
            reclaimable: true,
            parent: None,
            priority: 0,
            state: QueueState::Open,
            hierarchy: None,
            hierarchy_weights: None,
            node_groups: None,
            node_group_limits: Vec::new(),
        }
    }
}
