//! `deviceshare` (Volcano's `plugins/deviceshare`), GPU-number mode: with
//! `deviceshare.GPUNumberEnable: true` a pod asking for `volcano.sh/gpu-number: k`
//! (the resource Volcano's device plugin advertises with `--gpu-strategy=number`)
//! needs k GPUs of the node that no pod holds now — Volcano's
//! `checkNodeGPUNumberPredicate`, on the devices' current state, so GPUs a
//! releasing pod still holds do not count (the resource check alone would count
//! them as future-idle). Refusal: `GpuNumber no enough gpu number on node <name>`,
//! with Volcano's `Unschedulable` code: preempt and reclaim may still make room on
//! the node (only "unresolvable" refusals keep them off a node), so the predicate
//! passes during those actions.
//! The number mode scores nothing (`GPUDevices.ScoreNode` is 0), so
//! `deviceshare.SchedulePolicy` and `deviceshare.ScheduleWeight` change nothing
//! here; `deviceshare.NodeLockEnable` locks nodes while binding, which changes no
//! decision.
//!
//! GPU sharing by memory (`deviceshare.GPUSharingEnable`), vGPU
//! (`deviceshare.VGPUEnable`), Ascend vNPU (`deviceshare.AscendMindClusterVNPUEnable`,
//! `deviceshare.AscendHAMiVNPUEnable`) and `deviceshare.GPUExclusiveRules` need
//! per-device memory and core accounting lahar does not model: the conf loader
//! refuses them when set.

use super::super::conf::Args;
use super::super::framework::Plugin;
use lahar_core::cluster::NodeId;
use lahar_core::job::PodId;
use lahar_core::session::Session;
use std::cell::OnceCell;

/// The resource of GPU-number mode.
pub const GPU_NUMBER: &str = "volcano.sh/gpu-number";

/// The plugin.
#[derive(Debug)]
pub struct DeviceShare {
    number: bool,
    /// The dimension of `volcano.sh/gpu-number`, if the run has it.
    dim: OnceCell<Option<usize>>,
}

impl DeviceShare {
    /// Reads validated arguments.
    pub fn new(args: &Args) -> DeviceShare {
        DeviceShare { number: args.bool("deviceshare.GPUNumberEnable", false), dim: OnceCell::new() }
    }

    fn dim(&self, ssn: &Session<'_>) -> Option<usize> {
        *self.dim.get_or_init(|| ssn.cluster().resource_names.dim(GPU_NUMBER))
    }
}

impl Plugin for DeviceShare {
    fn name(&self) -> &'static str {
        "deviceshare"
    }
    fn has_predicate(&self) -> bool {
        self.number
    }
    fn predicate(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Result<(), String>> {
        if !self.number || matches!(ssn.action(), "preempt" | "reclaim" | "gangpreempt" | "gangreclaim") {
            return None;
        }
        let d = self.dim(ssn)?;
        let want = ssn.pod(pod).req.get(d);
        if want <= 0 {
            return Some(Ok(()));
        }
        let idle = ssn.node(node).allocatable.get(d) - ssn.node_state(node).used.get(d);
        Some(if want <= idle {
            Ok(())
        } else {
            Err(format!("GpuNumber no enough gpu number on node {}", ssn.node(node).name))
        })
    }
    fn predicate_passes_everywhere(&self, ssn: &Session<'_>, pod: PodId) -> bool {
        !self.number
            || matches!(ssn.action(), "preempt" | "reclaim" | "gangpreempt" | "gangreclaim")
            || self.dim(ssn).is_none_or(|d| ssn.pod(pod).req.get(d) <= 0)
    }
}
