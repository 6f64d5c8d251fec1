//! NUMA-aware CPU placement: Volcano's `numa-aware` plugin
//! (`pkg/scheduler/plugins/numaaware`) on the node topology its resource
//! exporter reports (a `Numatopology` object per node).
//!
//! A node with a topology has CPUs by id (NUMA node, socket, core), the
//! kubelet's CPU-manager and topology-manager policies, its free CPUs (the CPU
//! manager's shared pool) and reserved CPUs. A Guaranteed pod's containers with
//! whole CPU requests get exclusive CPUs: the fit ([`fit`]) asks the node's
//! topology-manager policy to admit each container from the CPU manager's NUMA
//! hints and picks its CPUs as Volcano does; the world keeps the CPUs each pod
//! holds ([`NumaUse`]).

mod cpuset;
mod policy;
#[cfg(test)]
mod tests;
mod topo;

pub use cpuset::{CpuSet, MAX_CPUS};
pub use policy::{TopologyPolicy, merge, provider_hints};
pub use topo::{CpuInfo, CpuTopology, Hint, MAX_NUMA_NODES, allocate, cpu_hints, iterate_masks, take_by_topology};

use crate::model::ids::PodId;

/// The pod annotation that names a pod's topology policy (Volcano's job
/// controller writes a task's `topologyPolicy` into it).
pub const NUMA_POLICY_ANNOTATION: &str = "volcano.sh/numa-topology-policy";

/// What Volcano knows of a node's NUMA topology (its `Numatopology`).
#[derive(Clone, Debug, PartialEq)]
pub struct NodeNuma {
    /// `policies.CPUManagerPolicy` is `static` (exclusive CPUs).
    pub cpu_static: bool,
    /// `policies.TopologyManagerPolicy` (`None`: empty or absent).
    pub topology: Option<TopologyPolicy>,
    /// The CPUs.
    pub topo: CpuTopology,
    /// `numares.cpu` exists (Volcano tells an absent CPU pool from an empty one).
    pub has_cpu: bool,
    /// `numares.cpu.allocatable`: the free CPUs when the run starts.
    pub allocatable: CpuSet,
    /// The CPUs `resReserved.cpu` keeps from pods: its whole count, taken by
    /// [`take_by_topology`] from all CPUs (none when that fails, as in Volcano).
    pub reserved: CpuSet,
    /// `podAllocations`: the CPUs the kubelet gave each pod (uid, namespace,
    /// name, CPUs), which a starting state's pods hold.
    pub pod_allocations: Vec<PodAllocation>,
}

/// One `podAllocations` entry: the CPUs of all a pod's containers.
#[derive(Clone, Debug, PartialEq)]
pub struct PodAllocation {
    /// `uid`.
    pub uid: String,
    /// `namespace`.
    pub namespace: String,
    /// `name`.
    pub name: String,
    /// The union of its containers' `cpu` allocations.
    pub cpus: CpuSet,
}

impl NodeNuma {
    /// The node's topology manager policy as `GetPolicy` picks it (anything but
    /// the four values is `none`).
    pub fn policy(&self) -> TopologyPolicy {
        self.topology.unwrap_or(TopologyPolicy::None)
    }
    /// The CPUs a pod of `namespace/name` (or `uid`) holds by `podAllocations`,
    /// as `CheckNumaPodAssigned` matches it.
    pub fn allocation_of(&self, uid: &str, namespace: &str, name: &str) -> Option<CpuSet> {
        self.pod_allocations
            .iter()
            .find(|a| (!uid.is_empty() && a.uid == uid) || (a.name == name && a.namespace == namespace))
            .map(|a| a.cpus)
    }
}

/// A container as the CPU manager sees it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NumaContainer {
    /// Its name (refusals name it).
    pub name: String,
    /// `guaranteedCPUs`: its CPU request when whole, 0 when not; `None` when it
    /// requests no CPU.
    pub cpus: Option<u32>,
}

/// What a pod asks of NUMA placement.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NumaAsk {
    /// Its QoS class is Guaranteed (only such pods are placed by NUMA).
    pub guaranteed: bool,
    /// `volcano.sh/numa-topology-policy`.
    pub policy: Option<TopologyPolicy>,
    /// Its containers (not init containers), in order.
    pub containers: Vec<NumaContainer>,
}

/// Why the numa-aware predicate refuses a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumaRefusal {
    /// `numa info is empty`: the node has no topology.
    NoInfo,
    /// `cpu manager policy isn't static`.
    NotStatic,
    /// `task topology policy[..] is different with node[..]`.
    Differs(TopologyPolicy, Option<TopologyPolicy>),
    /// `cpu allocatable map is empty`.
    CpuEmpty,
    /// `container <name> cannot be assigned by numa` (container index): the
    /// only refusal Volcano marks unresolvable.
    Container(usize),
}

impl NumaRefusal {
    /// Volcano's message.
    pub fn reason(&self, ask: &NumaAsk) -> String {
        match *self {
            NumaRefusal::NoInfo => "numa info is empty".into(),
            NumaRefusal::NotStatic => "cpu manager policy isn't static".into(),
            NumaRefusal::Differs(t, n) => format!(
                "task topology policy[{}] is different with node[{}]",
                t.as_str(),
                n.map_or("", TopologyPolicy::as_str)
            ),
            NumaRefusal::CpuEmpty => "cpu allocatable map is empty".into(),
            NumaRefusal::Container(i) => format!("container {} cannot be assigned by numa", ask.containers[i].name),
        }
    }
}

/// The predicate's answer for a pod on a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumaFit {
    /// The plugin does not look at this pod on this node.
    Skip,
    /// Admitted: the CPUs the pod's containers would take.
    Assign(CpuSet),
    /// Refused.
    Refuse(NumaRefusal),
}

/// Volcano's numa-aware predicate for a Guaranteed pod (`ask`) on a node
/// (`node`, `None` without a topology) whose free CPUs are `free`.
pub fn fit(node: Option<&NodeNuma>, free: &CpuSet, ask: &NumaAsk) -> NumaFit {
    if !ask.guaranteed {
        return NumaFit::Skip;
    }
    // `filterNodeByPolicy`.
    match ask.policy.filter(|&p| p != TopologyPolicy::None) {
        Some(p) => {
            let Some(n) = node else { return NumaFit::Refuse(NumaRefusal::NoInfo) };
            if !n.cpu_static {
                return NumaFit::Refuse(NumaRefusal::NotStatic);
            }
            if n.topology != Some(p) {
                return NumaFit::Refuse(NumaRefusal::Differs(p, n.topology));
            }
            if !n.has_cpu || free.is_empty() {
                return NumaFit::Refuse(NumaRefusal::CpuEmpty);
            }
        }
        None => match node {
            Some(n) if n.cpu_static && n.topology.is_some_and(|t| t != TopologyPolicy::None) => {}
            _ => return NumaFit::Skip,
        },
    }
    let n = node.expect("checked");
    let policy = n.policy();
    // The session's copy of the node's CPU pool: absent when the node reports
    // none, and present (maybe empty) once a container has taken from it.
    let mut avail: Option<CpuSet> = n.has_cpu.then_some(*free);
    let mut all = CpuSet::EMPTY;
    for (i, c) in ask.containers.iter().enumerate() {
        let request = c.cpus.unwrap_or(0) as usize;
        let hints = match avail {
            Some(a) if request > 0 => Some(cpu_hints(&n.topo, &a.minus(&n.reserved), request)),
            _ => None,
        };
        let (best, admit) = policy.predicate(&n.topo.numa_nodes, &[provider_hints(hints)]);
        if !admit {
            return NumaFit::Refuse(NumaRefusal::Container(i));
        }
        let pool = avail.unwrap_or_default();
        let assign = allocate(&n.topo, &pool.minus(&n.reserved), request, &best);
        all = all.union(&assign);
        avail = Some(pool.minus(&assign));
    }
    NumaFit::Assign(all)
}

/// The batch score: `(100 − 100 × count ÷ max) × weight` per node (integer
/// division; all 100 when every count is 0), count the NUMA nodes of each
/// node's assignment — Volcano's `NormalizeScore(100, reverse)`.
pub fn batch_scores(counts: &[u32], weight: i64) -> Vec<i64> {
    let max = counts.iter().copied().max().unwrap_or(0) as i64;
    counts.iter().map(|&c| if max == 0 { 100 } else { 100 - 100 * c as i64 / max } * weight).collect()
}

/// A pod's CPUs on a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuHold {
    /// The pod.
    pub pod: PodId,
    /// Its CPUs.
    pub cpus: CpuSet,
    /// Evicted in this session: its CPUs count as free until the session ends
    /// (Volcano's deallocate event), as held again after (the kubelet keeps them
    /// until the pod is gone).
    pub released: bool,
}

/// The CPUs of a node in use: by pods, and by what lahar does not place.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NumaUse {
    /// Pods holding CPUs.
    pub holders: Vec<CpuHold>,
    /// CPUs outside the pool when the run started that no pod of the run holds.
    pub foreign: CpuSet,
    /// The free CPUs (the pool the predicate sees).
    pub free: CpuSet,
}

impl NumaUse {
    /// The node's use when the run starts: everything but `allocatable` is
    /// foreign until a starting pod claims it.
    pub fn new(n: &NodeNuma) -> NumaUse {
        NumaUse { holders: Vec::new(), foreign: n.topo.all.minus(&n.allocatable), free: n.allocatable }
    }
    fn refresh(&mut self, all: &CpuSet) {
        let held = self.holders.iter().filter(|h| !h.released).fold(CpuSet::EMPTY, |a, h| a.union(&h.cpus));
        self.free = all.minus(&self.foreign).minus(&held);
    }
    /// `pod` takes `cpus`; `preset`: a starting pod's CPUs, already outside
    /// the pool (they stop being foreign).
    pub fn take(&mut self, all: &CpuSet, pod: PodId, cpus: CpuSet, preset: bool) {
        if preset {
            self.foreign = self.foreign.minus(&cpus);
        }
        self.holders.push(CpuHold { pod, cpus, released: false });
        self.refresh(all);
    }
    /// `pod` gives its CPUs back. True if it held some.
    pub fn give_back(&mut self, all: &CpuSet, pod: PodId) -> bool {
        let before = self.holders.len();
        self.holders.retain(|h| h.pod != pod);
        self.refresh(all);
        before != self.holders.len()
    }
    /// Marks `pod`'s CPUs released (free) or held again. True if it holds CPUs.
    pub fn set_released(&mut self, all: &CpuSet, pod: PodId, released: bool) -> bool {
        let Some(h) = self.holders.iter_mut().find(|h| h.pod == pod) else { return false };
        h.released = released;
        self.refresh(all);
        true
    }
    /// Holds every released pod's CPUs again (a new session). True if any was.
    pub fn settle(&mut self, all: &CpuSet) -> bool {
        let any = self.holders.iter().any(|h| h.released);
        if any {
            for h in &mut self.holders {
                h.released = false;
            }
            self.refresh(all);
        }
        any
    }
    /// The CPUs `pod` holds.
    pub fn of(&self, pod: PodId) -> Option<CpuSet> {
        self.holders.iter().find(|h| h.pod == pod).map(|h| h.cpus)
    }
}
