//! Nodes of unequal speed: a node's `speed` is the compute speed of its GPUs
//! relative to the cluster's other nodes, for jobs whose runtime model does not
//! price compute by GPU model itself (jobs without a training model). A job runs
//! at the speed of its slowest node over the cluster's fastest, so its `duration`
//! is its run time on the fastest nodes. GPU nodes are compared with GPU nodes
//! and CPU nodes with CPU nodes: a job holding GPUs is slowed by the GPU nodes it
//! holds, a job without GPUs by all of its nodes.

use crate::model::cluster::Cluster;

use crate::model::ids::NodeId;
use crate::model::progress::FULL_SPEED_PPM;

/// Each node's speed relative to the fastest of its kind, in ppm; `None` when
/// every node of a kind has the same speed (nothing is slowed: the common case,
/// and outputs stay as they were without speeds).
#[derive(Clone, Debug, Default)]
pub struct NodeSpeeds {
    ppm: Option<Vec<u32>>,
}

impl NodeSpeeds {
    /// The speeds of `cluster`'s nodes.
    pub fn new(cluster: &Cluster) -> NodeSpeeds {
        let is_gpu: Vec<bool> = cluster.nodes.iter().map(|n| n.gpus() > 0).collect();
        let max = |gpu: bool| {
            cluster.nodes.iter().zip(&is_gpu).filter(|(_, g)| **g == gpu).map(|(n, _)| n.speed).fold(0.0, f64::max)
        };
        let (gpu_max, cpu_max) = (max(true), max(false));
        let ppm: Vec<u32> = cluster
            .nodes
            .iter()
            .zip(&is_gpu)
            .map(|(n, &g)| {
                let top = if g { gpu_max } else { cpu_max };
                ((n.speed / top) * FULL_SPEED_PPM as f64).round().clamp(1.0, FULL_SPEED_PPM as f64) as u32
            })
            .collect();
        NodeSpeeds { ppm: ppm.iter().any(|&s| s != FULL_SPEED_PPM).then_some(ppm) }
    }

    /// True when some node is slower than the fastest of its kind.
    pub fn uneven(&self) -> bool {
        self.ppm.is_some()
    }

    /// The speed (ppm) of a job on `nodes`: the slowest of the GPU nodes among
    /// them when it holds GPUs (`gpus`), else of all of them.
    pub fn of(&self, cluster: &Cluster, nodes: &[NodeId], gpus: bool) -> u32 {
        let Some(ppm) = &self.ppm else { return FULL_SPEED_PPM };
        nodes
            .iter()
            .filter(|n| !gpus || cluster.nodes[**n].gpus() > 0)
            .map(|n| ppm[n.0 as usize])
            .min()
            .unwrap_or(FULL_SPEED_PPM)
    }

    /// `speed` (ppm) slowed by `factor` (ppm), at least 1.
    pub fn apply(speed: u32, factor: u32) -> u32 {
        ((u64::from(speed) * u64::from(factor)) / u64::from(FULL_SPEED_PPM)).max(1) as u32
    }
}
