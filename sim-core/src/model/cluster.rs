//! The cluster: nodes with GPUs, CPU, memory, pod slots and labels; intra-node
//! fabric and NICs; and the HyperNode topology above them.

use crate::model::resource::{ResourceNames, Resources};
use crate::model::topology::Topology;
use crate::util::store::IdVec;
use std::collections::BTreeMap;

pub use crate::model::ids::NodeId;

/// How GPUs inside a node talk to each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IntraNode {
    /// All-to-all NVLink through NVSwitch (DGX/HGX H100, A100).
    #[default]
    NvSwitch,
    /// NVLink bridges between pairs of GPUs, PCIe otherwise.
    NvLinkPairs,
    /// PCIe only.
    Pcie,
    /// PCIe with the GPUs on two CPU sockets: a ring crosses the socket
    /// interconnect (NCCL's `SYS` path).
    PcieSys,
}

impl IntraNode {
    /// Parses the scenario spelling (`nvswitch`, `nvlink-pairs`, `pcie`, `pcie-sys`).
    pub fn parse(s: &str) -> Option<IntraNode> {
        match s {
            "nvswitch" => Some(IntraNode::NvSwitch),
            "nvlink-pairs" | "nvlink" => Some(IntraNode::NvLinkPairs),
            "pcie" => Some(IntraNode::Pcie),
            "pcie-sys" => Some(IntraNode::PcieSys),
            _ => None,
        }
    }
    /// The scenario spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            IntraNode::NvSwitch => "nvswitch",
            IntraNode::NvLinkPairs => "nvlink-pairs",
            IntraNode::Pcie => "pcie",
            IntraNode::PcieSys => "pcie-sys",
        }
    }
}

/// The network interfaces of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nics {
    /// Number of NICs (often one per GPU, rail-optimized).
    pub count: u32,
    /// Line rate of each NIC in Gbit/s.
    pub gbps: u32,
}

impl Default for Nics {
    fn default() -> Self {
        Nics { count: 1, gbps: 100 }
    }
}

/// Label carrying the GPU model, as NVIDIA's GPU feature discovery sets it.
pub const GPU_PRODUCT_LABEL: &str = "nvidia.com/gpu.product";

/// A node's static description.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Taints (`spec.taints` of a Kubernetes Node; a cordoned node carries
    /// `node.kubernetes.io/unschedulable:NoSchedule`, as Kubernetes marks it).
    pub taints: Vec<Taint>,
    /// Unique name.
    pub name: String,
    /// Labels (node selectors match these).
    pub labels: BTreeMap<String, String>,
    /// Allocatable resources, including `pods` capacity.
    pub allocatable: Resources,
    /// GPU model (e.g. `H100-SXM-80G`); empty without GPUs.
    pub gpu_model: String,
    /// Intra-node GPU fabric.
    pub intra_node: IntraNode,
    /// NICs.
    pub nics: Nics,
    /// Compute speed of its GPUs relative to the cluster's other nodes, for jobs
    /// without a training model (a job spanning nodes runs at the slowest one's;
    /// the fastest node runs a job in its `duration`). 1 by default.
    pub speed: f64,
    /// Cards Volcano's vGPU sharing sees (its `volcano.sh/node-vgpu-register`
    /// annotation); empty for most nodes.
    pub vgpu: Vec<crate::devices::vgpu::VgpuCard>,
    /// Ascend chips Volcano's vNPU sharing sees, type by type (its
    /// `hami.io/node-register-<commonWord>` annotations); empty for most nodes.
    pub vnpu: Vec<crate::devices::vnpu::NodeChips>,
    /// The NUMA topology Volcano's numa-aware plugin sees (the node's
    /// `Numatopology`); `None` for most nodes.
    pub numa: Option<std::sync::Arc<crate::devices::numa::NodeNuma>>,
}

/// A node taint. `NoSchedule` and `NoExecute` keep pods that do not tolerate them
/// off the node (Kubernetes' TaintToleration and NodeUnschedulable filters, run by
/// Volcano's `predicates`); `PreferNoSchedule` only steers scoring, which lahar does
/// not model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taint {
    /// Key.
    pub key: String,
    /// Value (may be empty).
    pub value: String,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
}

impl Taint {
    /// The taint a cordon (`spec.unschedulable: true`) puts on a node.
    pub const UNSCHEDULABLE: &'static str = "node.kubernetes.io/unschedulable";
    /// Whether it keeps untolerating pods off the node.
    pub fn repels(&self) -> bool {
        self.effect == "NoSchedule" || self.effect == "NoExecute"
    }
}

impl Node {
    /// A plain node: `allocatable` resources, GPUs of model `gpu_model` on an
    /// NVSwitch, default NICs, speed 1, no labels, taints or shared devices.
    pub fn plain(name: &str, allocatable: Resources, gpu_model: &str) -> Node {
        Node {
            taints: Vec::new(),
            name: name.into(),
            labels: BTreeMap::new(),
            allocatable,
            gpu_model: gpu_model.into(),
            intra_node: IntraNode::NvSwitch,
            nics: Nics::default(),
            speed: 1.0,
            vgpu: Vec::new(),
            vnpu: Vec::new(),
            numa: None,
        }
    }

    /// Whole GPUs on the node.
    pub fn gpus(&self) -> i64 {
        self.allocatable.gpus_ceil()
    }
}

/// The whole cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct Cluster {
    /// Nodes, indexed by [`NodeId`].
    pub nodes: IdVec<NodeId, Node>,
    /// Names of the resource dimensions.
    pub resource_names: ResourceNames,
    /// HyperNode tree.
    pub topology: Topology,
    by_name: BTreeMap<String, NodeId>,
    total: Resources,
    /// Some node has a taint that repels pods.
    tainted: bool,
    /// Taint and label edits so far (operators' steps, drains' cordons).
    filter_edits: u64,
}

impl Cluster {
    /// Assembles a cluster. Node names must be unique (checked by the scenario loader).
    pub fn new(nodes: Vec<Node>, resource_names: ResourceNames, topology: Topology) -> Cluster {
        let by_name = nodes.iter().enumerate().map(|(i, n)| (n.name.clone(), NodeId(i as u32))).collect();
        let total = nodes.iter().fold(Resources::ZERO, |acc, n| acc + n.allocatable);
        let tainted = nodes.iter().any(|n| n.taints.iter().any(Taint::repels));
        Cluster { nodes: nodes.into(), resource_names, topology, by_name, total, tainted, filter_edits: 0 }
    }
    /// How many times a node's taints or labels changed during the run: memos
    /// of node filter answers hold while it stays the same.
    pub fn filter_edits(&self) -> u64 {
        self.filter_edits
    }
    /// True if some node has a `NoSchedule` or `NoExecute` taint: node filters then
    /// depend on the pod's tolerations, not only on its node selector.
    pub fn has_taints(&self) -> bool {
        self.tainted
    }
    /// A node by id.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }
    /// A node by name.
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.by_name.get(name).copied()
    }
    /// Σ allocatable over all nodes.
    pub fn total(&self) -> Resources {
        self.total
    }
    /// Sets a node's allocatable (a fault takes capacity out, a repair gives
    /// it back), keeping the total.
    pub(crate) fn set_allocatable(&mut self, n: NodeId, allocatable: Resources) {
        let node = &mut self.nodes[n];
        self.total = self.total - node.allocatable + allocatable;
        node.allocatable = allocatable;
    }
    /// Cordons node `n` (the `node.kubernetes.io/unschedulable:NoSchedule`
    /// taint `kubectl cordon` sets) or uncordons it.
    pub(crate) fn set_cordoned(&mut self, n: NodeId, on: bool) {
        let cordoned = self.nodes[n].taints.iter().any(|t| t.key == Taint::UNSCHEDULABLE);
        match (on, cordoned) {
            (true, false) => self.put_taint(
                n,
                Taint { key: Taint::UNSCHEDULABLE.into(), value: String::new(), effect: "NoSchedule".into() },
            ),
            (false, true) => {
                self.remove_taints(n, Taint::UNSCHEDULABLE, None);
            }
            _ => {}
        }
    }
    /// Puts `taint` on node `n`, replacing one of the same key and effect.
    pub(crate) fn put_taint(&mut self, n: NodeId, taint: Taint) {
        let taints = &mut self.nodes[n].taints;
        taints.retain(|t| !(t.key == taint.key && t.effect == taint.effect));
        taints.push(taint);
        self.tainted = self.nodes.iter().any(|n| n.taints.iter().any(Taint::repels));
        self.filter_edits += 1;
    }
    /// Removes node `n`'s taints of `key` (of `effect`, when given); true if one went.
    pub(crate) fn remove_taints(&mut self, n: NodeId, key: &str, effect: Option<&str>) -> bool {
        let taints = &mut self.nodes[n].taints;
        let before = taints.len();
        taints.retain(|t| !(t.key == key && effect.is_none_or(|e| t.effect == e)));
        let removed = taints.len() != before;
        self.tainted = self.nodes.iter().any(|n| n.taints.iter().any(Taint::repels));
        self.filter_edits += u64::from(removed);
        removed
    }
    /// Sets node `n`'s label `key` to `value`, or removes it (`None`); true if
    /// the node's labels changed.
    pub(crate) fn set_label(&mut self, n: NodeId, key: &str, value: Option<&str>) -> bool {
        let labels = &mut self.nodes[n].labels;
        let changed = match value {
            Some(v) if labels.get(key).map(String::as_str) == Some(v) => false,
            Some(v) => {
                labels.insert(key.to_string(), v.to_string());
                true
            }
            None => labels.remove(key).is_some(),
        };
        self.filter_edits += u64::from(changed);
        changed
    }
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }
    /// True without nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
    /// The largest allocatable value of each dimension over all nodes (what one pod
    /// could ever get).
    pub fn max_node(&self) -> Resources {
        self.nodes.iter().fold(Resources::ZERO, |acc, n| acc.max(&n.allocatable))
    }
}
