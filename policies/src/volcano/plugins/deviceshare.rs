//! `deviceshare` (Volcano's `plugins/deviceshare`), GPU-number mode: with
//! `deviceshare.GPUNumberEnable: true` a pod asking for `volcano.sh/gpu-number: k`
//! (the resource Volcano's device plugin advertises with `--gpu-strategy=number`)
//! needs k GPUs of the node that no Allocated or Running pod holds — Volcano's
//! `checkNodeGPUNumberPredicate` on its devices' pods, which leave out Releasing
//! and Pipelined ones (`NodeInfo.AddTask` adds no device for them): an evicted
//! pod's GPUs are free for the device check at once (the resource check still
//! counts them as releasing). Refusal: `GpuNumber no enough gpu number on node <name>`,
//! with Volcano's `Unschedulable` code: preempt and reclaim may still make room on
//! the node (only "unresolvable" refusals keep them off a node), so the predicate
//! passes during those actions.
//! The number mode scores nothing (`GPUDevices.ScoreNode` is 0), so
//! `deviceshare.SchedulePolicy` and `deviceshare.ScheduleWeight` change nothing
//! here; `deviceshare.NodeLockEnable` locks nodes while binding, which changes no
//! decision.
//!
//! GPU sharing by memory (`deviceshare.GPUSharingEnable: true`): a pod asking for
//! `volcano.sh/gpu-memory: m` (MiB) needs one card of the node with m MiB idle —
//! each card has the node's `volcano.sh/gpu-memory` over its
//! `volcano.sh/gpu-number`, and the Allocated and Running pods of the node hold
//! memory on one card each (the world's `MemoryCards`, the lowest fitting card
//! taken when a pod is placed, as Volcano's `Allocate` takes
//! `predicateGPUbyMemory`'s first; an evicted pod's memory is free at once).
//! Refusal: `GpuShare no enough gpu memory on node <name>`, `Unschedulable` like
//! the number mode's. The sharing mode scores nothing either.
//!
//! vGPU (`deviceshare.VGPUEnable`), Ascend vNPU
//! (`deviceshare.AscendMindClusterVNPUEnable`, `deviceshare.AscendHAMiVNPUEnable`)
//! and `deviceshare.GPUExclusiveRules` need per-device core accounting and
//! device geometries lahar does not model: the conf loader refuses them when set.

use super::super::conf::Args;
use super::super::framework::Plugin;
use lahar_core::cluster::NodeId;
use lahar_core::devices::GPU_MEMORY;
use lahar_core::job::PodId;
use lahar_core::session::Session;
use std::cell::OnceCell;

/// The resource of GPU-number mode.
pub use lahar_core::devices::GPU_NUMBER;

/// The plugin.
#[derive(Debug)]
pub struct DeviceShare {
    number: bool,
    sharing: bool,
    /// The dimension of `volcano.sh/gpu-number`, if the run has it.
    dim: OnceCell<Option<usize>>,
    /// The dimension of `volcano.sh/gpu-memory`, if the run has it.
    memory_dim: OnceCell<Option<usize>>,
}

impl DeviceShare {
    /// Reads validated arguments.
    pub fn new(args: &Args) -> DeviceShare {
        DeviceShare {
            number: args.bool("deviceshare.GPUNumberEnable", false),
            sharing: args.bool("deviceshare.GPUSharingEnable", false),
            dim: OnceCell::new(),
            memory_dim: OnceCell::new(),
        }
    }

    fn dim(&self, ssn: &Session<'_>) -> Option<usize> {
        *self.dim.get_or_init(|| ssn.cluster().resource_names.dim(GPU_NUMBER))
    }

    fn memory_dim(&self, ssn: &Session<'_>) -> Option<usize> {
        *self.memory_dim.get_or_init(|| ssn.cluster().resource_names.dim(GPU_MEMORY))
    }

    /// Volcano's `checkNodeGPUSharingPredicate`: a card with the pod's memory idle.
    fn sharing_fits(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Result<(), String>> {
        let d = self.memory_dim(ssn)?;
        let mib = ssn.pod(pod).req.get(d) / 1000;
        if mib <= 0 {
            return None;
        }
        Some(if ssn.node_state(node).gpu_memory.fitting(mib).next().is_some() {
            Ok(())
        } else {
            Err(format!("GpuShare no enough gpu memory on node {}", ssn.node(node).name))
        })
    }

    /// Volcano's `checkNodeGPUNumberPredicate`.
    fn number_fits(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Result<(), String>> {
        let d = self.dim(ssn)?;
        let want = ssn.pod(pod).req.get(d);
        if want <= 0 {
            return None;
        }
        // Releasing pods hold no device in Volcano's view (`NodeInfo.AddTask` adds
        // none for them): their GPUs count as idle.
        let ns = ssn.node_state(node);
        let idle = ssn.node(node).allocatable.get(d) - ns.used.get(d) + ns.releasing.get(d);
        Some(if want <= idle {
            Ok(())
        } else {
            Err(format!("GpuNumber no enough gpu number on node {}", ssn.node(node).name))
        })
    }
}

impl Plugin for DeviceShare {
    fn name(&self) -> &'static str {
        "deviceshare"
    }
    fn has_predicate(&self) -> bool {
        self.number || self.sharing
    }
    fn predicate(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Result<(), String>> {
        if matches!(ssn.action(), "preempt" | "reclaim" | "gangpreempt" | "gangreclaim") {
            return None;
        }
        // Sharing first, then number, as Volcano's FilterNode checks them.
        if let Some(Err(e)) = self.sharing.then(|| self.sharing_fits(ssn, pod, node)).flatten() {
            return Some(Err(e));
        }
        if let Some(Err(e)) = self.number.then(|| self.number_fits(ssn, pod, node)).flatten() {
            return Some(Err(e));
        }
        Some(Ok(()))
    }
    fn predicate_passes_everywhere(&self, ssn: &Session<'_>, pod: PodId) -> bool {
        let asks = |d: Option<usize>| d.is_some_and(|d| ssn.pod(pod).req.get(d) > 0);
        matches!(ssn.action(), "preempt" | "reclaim" | "gangpreempt" | "gangreclaim")
            || !((self.number && asks(self.dim(ssn))) || (self.sharing && asks(self.memory_dim(ssn))))
    }
}
