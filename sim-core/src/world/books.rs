//! The books the world keeps beside its resource sums, each moved along every
//! pod's status change through one interface, [`Book`]: the devices a pod holds
//! (GPU memory on a card, vGPU cards, vNPU chips, exclusive NUMA CPUs, whole
//! GPUs by index) and what its presence means to others (host ports, pod
//! affinity). [`World::transition`] hands each change to every book in [`BOOKS`]
//! the run keeps; a new device model is one more `Book` and one more line there.
//! Each book owns its rule of when a pod holds (from Allocated or Pipelined
//! through Running, with or without Releasing): those differ as Volcano's
//! `NodeInfo.AddTask` does per device.

use super::World;
use crate::model::ids::{JobId, NodeId, PodId};
use crate::model::job::PodStatus;
use crate::model::resource::{GPU, Resources};

/// A pod's status change, as every book sees it (after the world's resource
/// sums have taken it).
pub(super) struct PodMove {
    /// The pod.
    pub pod: PodId,
    /// Its job.
    pub job: JobId,
    /// Its task's index in the job.
    pub task: usize,
    /// What it asks.
    pub req: Resources,
    /// Status and node before.
    pub was: (PodStatus, Option<NodeId>),
    /// Status and node after.
    pub now: (PodStatus, Option<NodeId>),
}

/// One book: a device model's (or a placement rule's) per-node holdings.
pub(super) trait Book: Sync {
    /// Whether this run keeps the book (a model the scenario does not use costs
    /// one test per change).
    fn kept(&self, w: &World, m: &PodMove) -> bool;
    /// Moves the pod's holding along its change.
    fn moved(&self, w: &mut World, m: &PodMove);
}

/// Every book, in the order a change reaches them (each touches only its own
/// state; the order is fixed so the world's epochs count the same on every run).
pub(super) const BOOKS: [&dyn Book; 7] = [&GpuMemory, &Vgpu, &Vnpu, &Numa, &HostPorts, &Affinity, &WholeGpus];

/// `volcano.sh/gpu-memory`: MiB on one card of the node, held from Allocated (or
/// Pipelined, in its session: Volcano's allocate event charges both) through
/// Running, not when Releasing (`NodeInfo.AddTask` adds no device for a
/// Releasing pod), so an evicted pod's memory is free on the card at once.
struct GpuMemory;

impl Book for GpuMemory {
    fn kept(&self, w: &World, m: &PodMove) -> bool {
        w.memory_dim.is_some_and(|d| m.req.get(d) > 0)
    }

    fn moved(&self, w: &mut World, m: &PodMove) {
        let Some(dim) = w.memory_dim else { return };
        let holds = |s: PodStatus| matches!(s, PodStatus::Allocated | PodStatus::Pipelined | PodStatus::Running);
        let before = m.was.1.filter(|_| holds(m.was.0));
        let after = m.now.1.filter(|_| holds(m.now.0));
        if before == after {
            return;
        }
        let mib = m.req.get(dim) / 1000;
        if let Some(n) = before {
            let card = w.pods[m.pod].memory_card.take();
            w.nodes[n].gpu_memory.give_back(mib, card);
        }
        if let Some(n) = after {
            w.pods[m.pod].memory_card = w.nodes[n].gpu_memory.take(mib);
        }
    }
}

/// vGPU cards (deviceshare's vGPU mode): [`World::move_vgpu`].
struct Vgpu;

impl Book for Vgpu {
    fn kept(&self, w: &World, _: &PodMove) -> bool {
        w.vgpu_policy.is_some()
    }

    fn moved(&self, w: &mut World, m: &PodMove) {
        w.move_vgpu(m.pod, m.job, m.task, m.was, m.now);
    }
}

/// Ascend vNPU chips: [`World::move_vnpu`].
struct Vnpu;

impl Book for Vnpu {
    fn kept(&self, w: &World, _: &PodMove) -> bool {
        w.vnpu_policy.is_some()
    }

    fn moved(&self, w: &mut World, m: &PodMove) {
        w.move_vnpu(m.pod, m.job, m.task, m.was, m.now);
    }
}

/// Exclusive CPUs of a NUMA topology (numa-aware): [`World::move_numa`].
struct Numa;

impl Book for Numa {
    fn kept(&self, w: &World, _: &PodMove) -> bool {
        w.numa
    }

    fn moved(&self, w: &mut World, m: &PodMove) {
        w.move_numa(m.pod, m.job, m.task, m.was, m.now);
    }
}

/// Host ports taken on a node: kept only when some job's pods hold ports.
struct HostPorts;

impl Book for HostPorts {
    fn kept(&self, w: &World, m: &PodMove) -> bool {
        w.ported_jobs && !w.jobs[m.job].spec.tasks[m.task].host_ports().is_empty()
    }

    fn moved(&self, w: &mut World, m: &PodMove) {
        w.move_ports(m.pod, m.was, m.now);
    }
}

/// The pods other pods' (anti-)affinity terms look for, per node and domain.
struct Affinity;

impl Book for Affinity {
    fn kept(&self, w: &World, _: &PodMove) -> bool {
        w.affinity.is_some()
    }

    fn moved(&self, w: &mut World, m: &PodMove) {
        w.move_affine(m.pod, m.was, m.now);
    }
}

/// Whole GPUs by index, held from Allocated through Running to Releasing on
/// the same node; a pod placed takes the GPUs the run's share rule picks.
struct WholeGpus;

impl Book for WholeGpus {
    fn kept(&self, _: &World, m: &PodMove) -> bool {
        m.req.get(GPU) > 0
    }

    fn moved(&self, w: &mut World, m: &PodMove) {
        let holds = |s: PodStatus| matches!(s, PodStatus::Allocated | PodStatus::Running | PodStatus::Releasing);
        let before = m.was.1.filter(|_| holds(m.was.0));
        let after = m.now.1.filter(|_| holds(m.now.0));
        if before == after {
            return;
        }
        let (pod, req) = (m.pod, m.req);
        if let Some(n) = before {
            let mask = std::mem::take(&mut w.pods[pod].gpu_devices);
            let was = w.nodes[n].gpus.partial;
            w.nodes[n].gpus.give_back(req.get(GPU), mask);
            w.partial_devices = w.partial_devices + w.nodes[n].gpus.partial - was;
        }
        if let Some(n) = after {
            // The node's free CPU before this pod: the resource sums have charged it already.
            let free_cpu = w.idle(n).get(crate::model::resource::CPU) + req.get(crate::model::resource::CPU);
            let ns = &w.nodes[n];
            let model = w.node_models[n];
            let cpu = req.get(crate::model::resource::CPU);
            let share = w.share_rule.pick(&w.frag_target, free_cpu, model, &ns.gpus, cpu, req.get(GPU));
            let was = w.nodes[n].gpus.partial;
            w.pods[pod].gpu_devices = w.nodes[n].gpus.take(req.get(GPU), share);
            w.partial_devices = w.partial_devices + w.nodes[n].gpus.partial - was;
        }
    }
}
