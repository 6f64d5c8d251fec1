//! From a lahar [`Cluster`] and a job's GPUs per node to a model [`Placement`].
//!
//! Rules (see `docs/nccl-model.md`):
//! - GPU generation: from each node's `gpu_model` via the alias table; the lowest
//!   generation when nodes differ (NCCL tunes for the minimum compute capability).
//! - Intra link: [`IntraNode`] plus generation (NVSwitch → `nvswitch-nvlinkN` of the
//!   generation, NVLink pairs → `nvlink-bridge-nv12`, PCIe → `pcie-gen3/4/5`); the
//!   slowest one (lowest ring plateau) when nodes differ.
//! - NIC per GPU: `nics.count x nics.gbps / GPUs of the node` (the node's NICs are
//!   shared by all its GPUs; a job gets the share of the GPUs it holds); the minimum
//!   over the job's nodes.
//! - Tier: `topology.highest_tier(nodes)`. Oversubscription: product of the
//!   oversubscriptions of the fabric tiers strictly below that tier, because a flow
//!   to a node under another tier-h group climbs through the uplinks of every tier
//!   below h (for a leaf/spine fabric this is the leaf tier's value). Topologies
//!   without fabric tiers (HyperNode manifests) count as non-blocking.

use super::model::Placement;
use super::{CommError, CommModel, GpuGen, IntraLink, NetFabric};
use crate::model::cluster::{Cluster, IntraNode};
use crate::model::ids::NodeId;
use std::collections::BTreeMap;

/// What the cluster description does not say about the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdapterOptions {
    /// Fabric technology of the cluster's NICs.
    pub net: NetFabric,
    /// Whether NICs are wired rail-optimized.
    pub rail_optimized: bool,
}

impl Default for AdapterOptions {
    fn default() -> Self {
        AdapterOptions { net: NetFabric::Ib, rail_optimized: true }
    }
}

/// The link a node of generation `generation` with fabric `intra` uses.
fn intra_link(intra: IntraNode, generation: GpuGen) -> IntraLink {
    match (intra, generation) {
        (IntraNode::NvSwitch, GpuGen::Volta) => IntraLink::NvswitchNvlink2,
        (IntraNode::NvSwitch, GpuGen::Ampere) => IntraLink::NvswitchNvlink3,
        (IntraNode::NvSwitch, GpuGen::Hopper) => IntraLink::NvswitchNvlink4,
        (IntraNode::NvSwitch, GpuGen::Blackwell) => IntraLink::NvswitchNvlink5,
        (IntraNode::NvLinkPairs, _) => IntraLink::NvlinkBridgeNv12,
        (IntraNode::Pcie, g) => IntraLink::pcie_for(g),
        (IntraNode::PcieSys, _) => IntraLink::PcieSys,
    }
}

impl CommModel {
    /// The placement of a job holding `alloc` = (node, GPUs on it) in `cluster`.
    /// Repeated nodes are summed and zero entries dropped; the result does not depend
    /// on the order of `alloc`.
    pub fn placement(
        &self,
        cluster: &Cluster,
        alloc: &[(NodeId, u32)],
        opts: &AdapterOptions,
    ) -> Result<Placement, CommError> {
        let mut per_node: BTreeMap<NodeId, u64> = BTreeMap::new();
        for &(id, gpus) in alloc {
            if gpus > 0 {
                *per_node.entry(id).or_default() += u64::from(gpus);
            }
        }
        if per_node.is_empty() {
            return Err(CommError::InvalidPlacement("the job holds no GPUs".into()));
        }
        let mut generation: Option<GpuGen> = None;
        let mut links: Vec<(IntraNode, GpuGen)> = Vec::new();
        let mut nic_mbps = u64::MAX;
        let mut ranks = 0u64;
        let mut min_gpus = u64::MAX;
        for (&id, &gpus) in &per_node {
            let node = cluster
                .nodes
                .get(id)
                .ok_or_else(|| CommError::InvalidPlacement(format!("node #{} is not in the cluster", id.0)))?;
            let node_gpus = u64::try_from(node.gpus()).unwrap_or(0);
            if gpus > node_gpus {
                return Err(CommError::InvalidPlacement(format!(
                    "node `{}` has {} GPUs, the job holds {}",
                    node.name, node_gpus, gpus
                )));
            }
            let g = self.constants().gpu_gen(&node.gpu_model)?;
            generation = Some(generation.map_or(g, |cur| cur.min(g)));
            links.push((node.intra_node, g));
            let total = u64::from(node.nics.count) * u64::from(node.nics.gbps) * 1000;
            nic_mbps = nic_mbps.min(total / node_gpus);
            ranks += gpus;
            min_gpus = min_gpus.min(gpus);
        }
        let generation = generation.unwrap_or(GpuGen::Volta);
        // The slowest node's link bounds the ring; ties keep the first node's.
        let mut intra = intra_link(links[0].0, links[0].1);
        for &(kind, g) in &links[1..] {
            let l = intra_link(kind, g);
            if self.constants().intra.get(l).ring_busbw_gbps < self.constants().intra.get(intra).ring_busbw_gbps {
                intra = l;
            }
        }
        let nodes: Vec<NodeId> = per_node.keys().copied().collect();
        let tier = cluster.topology.highest_tier(&nodes);
        let mut oversub = 1.0f64;
        for t in cluster.topology.fabric.iter().filter(|t| t.tier >= 1 && t.tier < tier) {
            if !t.oversubscription.is_finite() {
                return Err(CommError::InvalidPlacement(format!(
                    "fabric tier `{}` has oversubscription {}",
                    t.name, t.oversubscription
                )));
            }
            oversub *= t.oversubscription.max(1.0);
        }
        let too_big = |what: &str, v: u64| CommError::InvalidPlacement(format!("{what} {v} does not fit in 32 bits"));
        let multi = nodes.len() > 1;
        let p = Placement {
            gpu: generation,
            intra,
            net: opts.net,
            ranks: u32::try_from(ranks).map_err(|_| too_big("ranks", ranks))?,
            nodes: u32::try_from(nodes.len()).map_err(|_| too_big("nodes", nodes.len() as u64))?,
            min_gpus_per_node: u32::try_from(min_gpus).map_err(|_| too_big("GPUs per node", min_gpus))?,
            nic_mbps_per_gpu: if multi { u32::try_from(nic_mbps).unwrap_or(u32::MAX) } else { 0 },
            rail_optimized: opts.rail_optimized,
            tier,
            oversubscription_milli: if multi {
                (oversub * 1000.0).round().min(f64::from(u32::MAX)) as u32
            } else {
                1000
            },
        };
        p.validate()?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm::{AlgoChoice, Collective};
    use crate::model::cluster::{Nics, Node};
    use crate::model::resource::{ResourceNames, Resources};
    use crate::model::topology::{FabricTier, Topology};

    fn node(name: &str, model: &str, gpus: i64, intra: IntraNode, nics: Nics) -> Node {
        Node {
            name: name.into(),
            labels: Default::default(),
            allocatable: Resources::new(64_000, 1 << 40, gpus * 1000, 110),
            gpu_model: model.into(),
            intra_node: intra,
            taints: Vec::new(),
            nics,
            speed: 1.0,
            vgpu: Vec::new(),
            vnpu: Vec::new(),
            numa: None,
        }
    }

    fn cluster() -> Cluster {
        let nics = Nics { count: 8, gbps: 400 };
        let nodes = (0..16).map(|i| node(&format!("n{i}"), "H100-SXM-80G", 8, IntraNode::NvSwitch, nics)).collect();
        let fabric = vec![
            FabricTier { tier: 1, name: "leaf".into(), fanout: 4, oversubscription: 1.0 },
            FabricTier { tier: 2, name: "spine".into(), fanout: 2, oversubscription: 2.0 },
        ];
        Cluster::new(nodes, ResourceNames::default(), Topology::from_fabric(16, &fabric).unwrap())
    }

    #[test]
    fn derives_placements() {
        let m = CommModel::default();
        let c = cluster();
        let o = AdapterOptions::default();
        let one = m.placement(&c, &[(NodeId(0), 8)], &o).unwrap();
        assert_eq!(one, Placement::single_node(GpuGen::Hopper, IntraLink::NvswitchNvlink4, 8));
        let leaf = m.placement(&c, &[(NodeId(1), 8), (NodeId(0), 8)], &o).unwrap();
        assert_eq!((leaf.ranks, leaf.nodes, leaf.tier, leaf.oversubscription_milli), (16, 2, 1, 1000));
        assert_eq!(leaf.nic_mbps_per_gpu, 400_000);
        let spine = m.placement(&c, &[(NodeId(0), 8), (NodeId(4), 8)], &o).unwrap();
        assert_eq!((spine.tier, spine.oversubscription_milli), (2, 1000));
        // Crossing the top passes the leaf (1:1) and spine (2:1) uplinks.
        let top = m.placement(&c, &[(NodeId(0), 8), (NodeId(8), 8)], &o).unwrap();
        assert_eq!((top.tier, top.oversubscription_milli), (3, 2000));
        let uneven = m.placement(&c, &[(NodeId(0), 7), (NodeId(1), 1), (NodeId(0), 0)], &o).unwrap();
        assert_eq!((uneven.ranks, uneven.min_gpus_per_node, uneven.max_gpus_per_node()), (8, 1, 7));
        // Order does not matter; repeats are summed.
        let a = m.placement(&c, &[(NodeId(2), 4), (NodeId(3), 4), (NodeId(2), 4)], &o).unwrap();
        let b = m.placement(&c, &[(NodeId(3), 4), (NodeId(2), 8)], &o).unwrap();
        assert_eq!(a, b);
        // A lone job's spread costs more than consolidation.
        let t = |p: &Placement| m.estimate(Collective::AllReduce, 1 << 28, p, AlgoChoice::Auto).unwrap().time_us;
        assert!(t(&top) > t(&spine) && t(&spine) >= t(&leaf));
    }

    #[test]
    fn rejects_bad_jobs() {
        let m = CommModel::default();
        let c = cluster();
        let o = AdapterOptions::default();
        assert!(m.placement(&c, &[], &o).is_err());
        assert!(m.placement(&c, &[(NodeId(0), 0)], &o).is_err());
        assert!(m.placement(&c, &[(NodeId(99), 1)], &o).is_err());
        assert!(m.placement(&c, &[(NodeId(0), 9)], &o).is_err());
        let mut c2 = cluster();
        c2.nodes[0].gpu_model = "MI300X".into();
        assert_eq!(m.placement(&c2, &[(NodeId(0), 1)], &o), Err(CommError::UnknownGpu("MI300X".into())));
        c2.nodes[0].gpu_model = String::new();
        assert!(m.placement(&c2, &[(NodeId(0), 1)], &o).is_err());
    }

    #[test]
    fn mixed_nodes_take_the_weakest() {
        let m = CommModel::default();
        let nodes = vec![
            node("a", "H100-SXM-80G", 8, IntraNode::NvSwitch, Nics { count: 8, gbps: 400 }),
            node("b", "A100-SXM4-80GB", 8, IntraNode::NvSwitch, Nics { count: 4, gbps: 200 }),
            node("c", "A100-PCIE-40GB", 4, IntraNode::Pcie, Nics { count: 1, gbps: 100 }),
        ];
        let c = Cluster::new(nodes, ResourceNames::default(), Topology::flat(3));
        let o = AdapterOptions::default();
        let ab = m.placement(&c, &[(NodeId(0), 8), (NodeId(1), 8)], &o).unwrap();
        assert_eq!((ab.gpu, ab.intra, ab.nic_mbps_per_gpu), (GpuGen::Ampere, IntraLink::NvswitchNvlink3, 100_000));
        let bc = m.placement(&c, &[(NodeId(1), 2), (NodeId(2), 2)], &o).unwrap();
        assert_eq!((bc.intra, bc.nic_mbps_per_gpu, bc.tier), (IntraLink::PcieGen4, 25_000, 1));
    }
}
