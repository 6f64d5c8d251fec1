//! The FGD paper's placement policies and its placement-only evaluation.
//!
//! Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with
//! Fragmentation Gradient Descent" (USENIX ATC '23), compare six ways of choosing a
//! node and GPU devices for a pod on a cluster whose GPUs are shared by fractional
//! pods: [`Policy`]. Its evaluation places a trace's pods one at a time, in arrival
//! order, none ever leaving, until the arrived GPU request is 130% of the cluster's
//! GPUs, and reports the allocation and fragmentation reached at each arrived
//! percentage. [`replay::Replay`] is that evaluation; [`demand::tune`] prunes or
//! re-samples the pod list to the requested demand first. The rules are those of
//! the paper's simulator (hkust-adsl/kubernetes-scheduler-simulator), read from its
//! source; docs/fragmentation.md gives the formulas and where lahar differs.

pub mod demand;
pub mod live;
pub mod replay;
pub mod score;

pub use replay::{Outcome, Replay, Row};

use lahar_core::frag::Demand;

/// Most GPU devices a node may have in a placement replay.
pub const MAX_DEVICES: usize = 16;

/// A node-and-device placement policy of the FGD paper.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Policy {
    /// A feasible node drawn uniformly; a share on a device drawn uniformly among
    /// those with room.
    Random,
    /// Tetris's dot product of free and requested resources.
    DotProduct,
    /// Pods asking for the same kind of GPU (share, 1, 2, … GPUs) together.
    GpuClustering,
    /// Shared devices first, then free devices of used nodes, then free nodes.
    GpuPacking,
    /// The node left with the least free CPU and GPU.
    BestFit,
    /// Fragmentation gradient descent: the node and device whose fragmentation
    /// grows least.
    Fgd,
}

impl Policy {
    /// Every policy, in the paper's order.
    pub const ALL: [Policy; 6] =
        [Policy::Random, Policy::DotProduct, Policy::GpuClustering, Policy::GpuPacking, Policy::BestFit, Policy::Fgd];

    /// The name a scenario uses (`scheduler: {baseline: NAME}`).
    pub fn name(self) -> &'static str {
        match self {
            Policy::Random => "random",
            Policy::DotProduct => "dot-product",
            Policy::GpuClustering => "gpu-clustering",
            Policy::GpuPacking => "gpu-packing",
            Policy::BestFit => "best-fit",
            Policy::Fgd => "fgd",
        }
    }

    /// The policy of a name.
    pub fn from_name(name: &str) -> Option<Policy> {
        Policy::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// Names of [`Policy::ALL`].
pub const NAMES: [&str; 6] = ["random", "dot-product", "gpu-clustering", "gpu-packing", "best-fit", "fgd"];

/// A node of a placement replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSpec {
    /// Millicores.
    pub cpu: i64,
    /// Bytes.
    pub memory: i64,
    /// GPU devices (at most [`MAX_DEVICES`]).
    pub gpus: u8,
    /// GPU model index (bit of [`lahar_core::frag::Models`]); `None` without GPUs.
    pub model: Option<u8>,
    /// Most pods it holds.
    pub pods: u32,
}

/// A pod of a placement replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pod {
    /// CPU, GPUs and accepted models.
    pub demand: Demand,
    /// Bytes of memory.
    pub memory: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (p, n) in Policy::ALL.into_iter().zip(NAMES) {
            assert_eq!(p.name(), n);
            assert_eq!(Policy::from_name(n), Some(p));
        }
        assert_eq!(Policy::from_name("binpack"), None);
    }
}
