//! `spec.placement`: the FGD paper's placement-only evaluation of a scenario.
//!
//! The scenario's openb pod list is pruned or re-sampled (seeded by `spec.seed`)
//! until its GPU request is `demand` × the cluster's GPUs, then its pods are placed
//! one at a time in list order (copies after the list), never leaving, by the
//! placement policy `spec.scheduler.baseline` names
//! ([`lahar_policies::placement`]). The run writes `fragmentation.csv` (the
//! allocation and fragmentation reached at each arrived percent), `placements.csv`
//! (where each pod went) and `summary.json`; docs/fragmentation.md describes the
//! mode and docs/outputs.md the files.

use lahar_core::frag::{Demand, Models, POPULARITY_PCT, Target};
use lahar_core::model::cluster::Node;
use lahar_core::model::resource::{CPU, GPU, MEMORY, PODS};
use lahar_core::util::rng::RngStreams;
use lahar_policies::placement::demand::{self, Arrival};
use lahar_policies::placement::replay::{self, Outcome, Row};
use lahar_policies::placement::{MAX_DEVICES, NodeSpec, Pod, Policy, Replay};
use lahar_reports::RunMeta;
use lahar_traces::openb::OpenbPod;
use std::collections::BTreeSet;
use std::path::PathBuf;

pub mod run;

/// The order the pods of the list arrive in (`spec.placement.order`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Order {
    /// A random order drawn from the seed, as the paper's evaluation runs
    /// (`--shuffle-pod=true`); the default.
    #[default]
    Shuffled,
    /// The list's own order.
    Trace,
}

/// A validated `spec.placement`.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    /// Arrived GPU request to reach, as a multiple of the cluster's GPUs.
    pub demand: f64,
    /// The order the list's pods arrive in (copies drawn to add demand come
    /// after them).
    pub order: Order,
    /// The placement policy.
    pub policy: Policy,
    /// The pod list, in the order of the scenario's sources and their files.
    pub pods: Vec<OpenbPod>,
}

/// Nodes and pods in the replay's terms.
#[derive(Clone, Debug)]
pub struct Setup {
    /// Node specs, in cluster order.
    pub nodes: Vec<NodeSpec>,
    /// Pods of the list, in order.
    pub pods: Vec<Pod>,
    /// The target workload: the list's typical shapes.
    pub target: Target,
    /// GPU models by index (sorted).
    pub models: Vec<String>,
}

/// Why a cluster or pod list cannot be replayed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// A node with more devices than a replay models.
    #[error("node `{0}` has {1} GPUs; placement mode models at most {MAX_DEVICES} per node")]
    TooManyDevices(String, i64),
    /// A node whose GPUs are not whole.
    #[error("node `{0}` has {1} milli-GPUs, not a whole number of GPU devices")]
    PartialDevice(String, i64),
    /// More GPU models than a model set holds.
    #[error("{0} GPU models among the nodes and pods; placement mode tells at most 64 apart")]
    TooManyModels(usize),
}

impl Setup {
    /// The replay's view of `nodes` and `pods`.
    pub fn new(nodes: &[Node], pods: &[OpenbPod]) -> Result<Setup, SetupError> {
        let names: BTreeSet<&str> = nodes
            .iter()
            .map(|n| n.gpu_model.as_str())
            .filter(|m| !m.is_empty())
            .chain(pods.iter().flat_map(|p| p.gpu_spec.iter().map(String::as_str)))
            .collect();
        if names.len() > 64 {
            return Err(SetupError::TooManyModels(names.len()));
        }
        let models: Vec<String> = names.into_iter().map(str::to_string).collect();
        let index = |m: &str| models.binary_search_by(|x| x.as_str().cmp(m)).ok().map(|i| i as u8);
        let mut specs = Vec::with_capacity(nodes.len());
        for n in nodes {
            let milli = n.allocatable.get(GPU);
            if milli % 1000 != 0 {
                return Err(SetupError::PartialDevice(n.name.clone(), milli));
            }
            if milli / 1000 > MAX_DEVICES as i64 {
                return Err(SetupError::TooManyDevices(n.name.clone(), milli / 1000));
            }
            let gpus = (milli / 1000) as u8;
            specs.push(NodeSpec {
                cpu: n.allocatable.get(CPU),
                memory: n.allocatable.get(MEMORY),
                gpus,
                model: if gpus > 0 { index(&n.gpu_model) } else { None },
                pods: u32::try_from(n.allocatable.get(PODS).max(0)).unwrap_or(u32::MAX),
            });
        }
        let pods: Vec<Pod> = pods
            .iter()
            .map(|p| {
                let models = p.gpu_spec.iter().filter_map(|m| index(m)).fold(0u64, |a, i| a | 1 << i);
                Pod {
                    demand: Demand {
                        cpu: p.cpu_milli,
                        gpu_milli: p.gpu_milli as u16,
                        // Above 255 devices a pod is as unplaceable as at 255 (a
                        // node has at most 16).
                        gpus: p.num_gpu.min(u32::from(u8::MAX)) as u8,
                        models: Models(models),
                    },
                    memory: p.memory_bytes,
                }
            })
            .collect();
        let target = Target::typical(pods.iter().map(|p| (p.demand, 1)), POPULARITY_PCT);
        Ok(Setup { nodes: specs, pods, target, models })
    }

    /// The cluster's milli-GPUs.
    pub fn capacity_milli(&self) -> i64 {
        self.nodes.iter().map(|n| 1000 * i64::from(n.gpus)).sum()
    }

    /// The arrivals at `demand` × the cluster's GPUs: the list in `order`, then
    /// pruned or re-sampled from `seed`'s `placement/demand` stream (the
    /// shuffle draws from `placement/order`).
    pub fn arrivals(&self, demand: f64, order: Order, seed: u64) -> Vec<Arrival> {
        let streams = RngStreams::new(seed);
        let mut list = demand::list(&self.pods);
        if order == Order::Shuffled {
            demand::shuffle(&mut list, &mut streams.stream("placement/order", 0));
        }
        let target = (demand * self.capacity_milli() as f64).round() as i64;
        demand::tune(&self.pods, list, target, &mut streams.stream("placement/demand", 0))
    }

    /// Replays `arrivals` under `policy`; `on_pod` sees each arrival's outcome.
    pub fn replay(
        &self,
        policy: Policy,
        seed: u64,
        arrivals: &[Arrival],
        on_pod: impl FnMut(Outcome),
    ) -> (Vec<Row>, Replay<'_>) {
        let mut r = Replay::new(policy, &self.nodes, &self.target, &RngStreams::new(seed));
        let rows = replay::run(&mut r, arrivals.iter().map(|a| self.pods[a.pod as usize]), on_pod);
        (rows, r)
    }
}

/// What a placement run produced.
#[derive(Clone, Debug)]
pub struct PlacementReport {
    /// fragmentation.csv's rows.
    pub rows: Vec<Row>,
    /// Pods that arrived (the list after pruning or re-sampling).
    pub arrived: usize,
    /// Of which placed.
    pub placed: usize,
    /// Facts about the run.
    pub meta: RunMeta,
    /// Where the files went.
    pub out_dir: PathBuf,
    /// The final state.
    pub last: Row,
}

/// The table `lahar run` prints after a placement run.
pub fn table(r: &PlacementReport) -> String {
    let at = |pct: u32| r.rows.iter().find(|x| x.demand_pct == pct);
    let mut out = format!(
        "placement: {} pods arrived, {} placed, {} unplaced ({} policy, seed {})\n",
        r.arrived,
        r.placed,
        r.arrived - r.placed,
        r.meta.scheduler,
        r.meta.seed
    );
    out.push_str("arrived GPU %   allocated GPU %   fragmented GPUs   fragmentation %\n");
    let mut shown: Vec<u32> = [50, 80, 90, 100, 110, 120, 130].into_iter().filter(|p| at(*p).is_some()).collect();
    if !shown.contains(&r.last.demand_pct) {
        shown.push(r.last.demand_pct);
    }
    for p in shown {
        let x = at(p).expect("shown rows exist");
        out.push_str(&format!(
            "{:>13}   {:>15.2}   {:>15.1}   {:>15.2}\n",
            x.demand_pct, x.gpu_alloc_pct, x.frag_gpus, x.frag_ratio_pct
        ));
    }
    out.push_str(&format!("outputs: {}", r.out_dir.display()));
    out
}
