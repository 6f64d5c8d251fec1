//! Job run time from the communication model.
//!
//! A job with a model profile runs iterations of `compute + (1 − overlap) · T_allreduce`
//! where `T_allreduce` is the NCCL-like estimate of one all-reduce of the model's
//! gradient bytes over the job's GPUs, as placed. A job's traced or configured
//! `duration` is its run time under the best placement (its GPUs packed on the
//! fewest nodes under one leaf), so its speed is
//! `ideal iteration time / actual iteration time` and a spread placement stretches
//! the run. Estimates are memoized per (profile, placement).

use super::{AdapterOptions, AlgoChoice, Collective, CommModel, GpuGen, Placement};
use crate::cluster::NodeId;
use crate::engine::{FULL_SPEED_PPM, RuntimeModel};
use crate::job::{JobId, PodStatus};
use crate::world::World;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// A training model's communication and compute profile.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelProfile {
    /// Catalog name.
    pub name: &'static str,
    /// Bytes all-reduced per iteration (data-parallel gradients).
    pub grad_bytes: u64,
    /// Compute time of one iteration on one A100, µs.
    pub a100_step_us: f64,
    /// Share of communication hidden behind compute.
    pub overlap: f64,
}

/// Built-in catalog (shared/reference/nccl-model.md §6.2).
/// - resnet-50: 25.6 M params, fp32 gradients 102 MB; 104 ms per 256-image AMP step
///   on A100 (NVIDIA DeepLearningExamples RN50 README).
/// - bert-large: 340 M params, fp16 gradients 0.68 GB; ~441 ms per 256-sequence
///   micro-step on A100 (NVIDIA DeepLearningExamples BERT README).
/// - gpt2-xl: 1.56 B params, bf16 gradients 3.1 GB; 6·N·16,384 tokens per GPU step at
///   45% of A100's 312 TFLOP/s ≈ 1.09 s.
/// - llama-7b / llama-13b / llama-70b: 13.4 / 26 / 130 GB bf16 gradients; 16,384 tokens
///   per GPU step at the LLaMA paper's 3,370 / 2,055 / 380 tokens/s/GPU on A100
///   (4.86 s / 7.97 s / 43.1 s; the published rates include communication, so these
///   slightly overstate compute).
pub const CATALOG: &[ModelProfile] = &[
    ModelProfile { name: "resnet-50", grad_bytes: 102_000_000, a100_step_us: 104_000.0, overlap: 0.5 },
    ModelProfile { name: "bert-large", grad_bytes: 680_000_000, a100_step_us: 441_000.0, overlap: 0.5 },
    ModelProfile { name: "gpt2-xl", grad_bytes: 3_100_000_000, a100_step_us: 1_090_000.0, overlap: 0.5 },
    ModelProfile { name: "llama-7b", grad_bytes: 13_400_000_000, a100_step_us: 4_860_000.0, overlap: 0.5 },
    ModelProfile { name: "llama-13b", grad_bytes: 26_000_000_000, a100_step_us: 7_970_000.0, overlap: 0.5 },
    ModelProfile { name: "llama-70b", grad_bytes: 130_000_000_000, a100_step_us: 43_100_000.0, overlap: 0.5 },
];

/// A catalog entry by name.
pub fn lookup(name: &str) -> Option<&'static ModelProfile> {
    CATALOG.iter().find(|p| p.name == name)
}

/// Practical training speed of a GPU generation relative to A100 (bf16 dense
/// TFLOP/s at typical MFU: V100 ~0.4x, H100 ~2.5x, B200 ~4x).
pub fn relative_speed(generation: GpuGen) -> f64 {
    match generation {
        GpuGen::Volta => 0.4,
        GpuGen::Ampere => 1.0,
        GpuGen::Hopper => 2.5,
        GpuGen::Blackwell => 4.0,
    }
}

/// A [`RuntimeModel`] backed by the collective cost model.
pub struct CommRuntime {
    model: CommModel,
    opts: AdapterOptions,
    /// Profile per job id (`None`: the job runs at its ideal speed anywhere).
    profiles: Vec<Option<&'static ModelProfile>>,
    cache: Mutex<BTreeMap<(usize, Placement), u32>>,
}

impl CommRuntime {
    /// A runtime for jobs with the given profiles (indexed by job id).
    pub fn new(model: CommModel, profiles: Vec<Option<&'static ModelProfile>>) -> CommRuntime {
        CommRuntime { model, opts: AdapterOptions::default(), profiles, cache: Mutex::new(BTreeMap::new()) }
    }

    fn iteration_us(&self, p: &ModelProfile, placement: &Placement) -> Option<f64> {
        let comm = if placement.ranks <= 1 {
            0.0
        } else {
            self.model.estimate(Collective::AllReduce, p.grad_bytes, placement, AlgoChoice::Auto).ok()?.time_us
        };
        Some(p.a100_step_us / relative_speed(placement.gpu) + (1.0 - p.overlap) * comm)
    }

    /// Speed (ppm of ideal) of a profile on a placement, where the ideal packs the
    /// same GPUs on the fewest nodes of `node_gpus` GPUs under one leaf.
    pub fn speed_for(&self, p: &ModelProfile, actual: &Placement, node_gpus: u32) -> u32 {
        let per_node = node_gpus.max(1).min(actual.ranks.max(1));
        let ideal_nodes = actual.ranks.div_ceil(per_node);
        let ideal = Placement {
            nodes: ideal_nodes,
            min_gpus_per_node: per_node,
            tier: if ideal_nodes > 1 { 1 } else { 0 },
            oversubscription_milli: 1000,
            ..*actual
        };
        match (self.iteration_us(p, &ideal), self.iteration_us(p, actual)) {
            (Some(i), Some(a)) if a > 0.0 => ((i / a) * FULL_SPEED_PPM as f64).clamp(1.0, FULL_SPEED_PPM as f64) as u32,
            _ => FULL_SPEED_PPM,
        }
    }
}

impl RuntimeModel for CommRuntime {
    fn speed_ppm(&self, world: &World, job: JobId, _nodes: &[NodeId]) -> u32 {
        let Some(Some(p)) = self.profiles.get(job.0 as usize) else { return FULL_SPEED_PPM };
        let mut per_node: BTreeMap<NodeId, u32> = BTreeMap::new();
        for &pod in &world.jobs[job.0 as usize].pods {
            let pod = &world.pods[pod.0 as usize];
            if let (PodStatus::Running, Some(n)) = (pod.status, pod.node) {
                *per_node.entry(n).or_default() += pod.req.gpus_ceil() as u32;
            }
        }
        let node_gpus = per_node.keys().map(|&n| world.cluster.node(n).gpus() as u32).max().unwrap_or(1);
        let alloc: Vec<(NodeId, u32)> = per_node.into_iter().collect();
        let Ok(placement) = self.model.placement(&world.cluster, &alloc, &self.opts) else { return FULL_SPEED_PPM };
        let idx = CATALOG.iter().position(|c| c.name == p.name).unwrap_or(usize::MAX);
        if let Ok(cache) = self.cache.lock() {
            if let Some(&s) = cache.get(&(idx, placement)) {
                return s;
            }
        }
        let s = self.speed_for(p, &placement, node_gpus);
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert((idx, placement), s);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm::{IntraLink, NetFabric};

    fn rt() -> CommRuntime {
        CommRuntime::new(CommModel::default(), vec![])
    }

    #[test]
    fn packed_placement_runs_at_full_speed_and_spread_is_slower() {
        let p = lookup("llama-7b").unwrap();
        let packed =
            Placement::uniform(GpuGen::Hopper, IntraLink::NvswitchNvlink4, 8, 4, 400.0, NetFabric::Ib).crossing(1, 1.0);
        assert_eq!(rt().speed_for(p, &packed, 8), FULL_SPEED_PPM);
        let spread = Placement::uniform(GpuGen::Hopper, IntraLink::NvswitchNvlink4, 2, 16, 400.0, NetFabric::Ib)
            .crossing(1, 1.0);
        let over =
            Placement::uniform(GpuGen::Hopper, IntraLink::NvswitchNvlink4, 8, 4, 400.0, NetFabric::Ib).crossing(2, 4.0);
        let (s_spread, s_over) = (rt().speed_for(p, &spread, 8), rt().speed_for(p, &over, 8));
        assert!(s_spread < FULL_SPEED_PPM, "{s_spread}");
        assert!(s_over < FULL_SPEED_PPM, "{s_over}");
        // A small model barely notices.
        let r = lookup("resnet-50").unwrap();
        assert!(rt().speed_for(r, &over, 8) > s_over);
    }

    #[test]
    fn catalog_names_resolve() {
        for m in ["resnet-50", "bert-large", "gpt2-xl", "llama-7b", "llama-13b", "llama-70b"] {
            assert!(lookup(m).is_some(), "{m}");
        }
        assert!(lookup("gpt-5").is_none());
    }
}
