//! The constants of the collective cost model, kept as data.
//!
//! Every number the model uses lives in [`CommConstants`]. Its [`Default`] is built
//! from NCCL's own tuning tables (`src/graph/tuning.cc`, `topo.h`, v2.30.7) and from
//! the measured plateaus collected in `shared/reference/nccl-model.md`; the few
//! calibrated values say so in their docs and in `docs/nccl-model.md`. The tables
//! deserialize with `deny_unknown_fields`, and every struct defaults field by field,
//! so a scenario can override a single value (`launch_us_per_log2_rank: 3`) or a
//! single entry (`intra: { pcie-gen4: {...} }`, where the entry must be complete).

use super::CommError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// GPU generation, in NCCL's tuning buckets (keyed by the lowest compute capability
/// of the communicator: sm < 80 Volta, sm80–89 Ampere, sm90–99 Hopper, sm100+
/// Blackwell).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GpuGen {
    /// sm70–79 and older (V100, T4, P100).
    Volta,
    /// sm80–89 (A100, A800, A30, L40S, RTX 30/40).
    Ampere,
    /// sm90 (H100, H200, H800, H20, GH200).
    Hopper,
    /// sm100+ (B200, B300, GB200, RTX 50).
    Blackwell,
}

impl GpuGen {
    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            GpuGen::Volta => "volta",
            GpuGen::Ampere => "ampere",
            GpuGen::Hopper => "hopper",
            GpuGen::Blackwell => "blackwell",
        }
    }
}

/// How the GPUs of one node are connected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IntraLink {
    /// NVSwitch with NVLink 2 (DGX-2, V100).
    NvswitchNvlink2,
    /// NVSwitch with NVLink 3 (A100 HGX/DGX).
    NvswitchNvlink3,
    /// NVSwitch with NVLink 4 (H100, H200, H20 HGX/DGX).
    NvswitchNvlink4,
    /// NVSwitch with NVLink 5 (B200 HGX/DGX).
    NvswitchNvlink5,
    /// NVLink 2 hybrid cube mesh without NVSwitch (DGX-1V, p3dn).
    Nvlink2HybridCubeMesh,
    /// Pairs of GPUs joined by an NVLink bridge (NV12); PCIe between pairs.
    NvlinkBridgeNv12,
    /// PCIe Gen3 only.
    PcieGen3,
    /// PCIe Gen4 only.
    PcieGen4,
    /// PCIe Gen5 switches only.
    PcieGen5,
    /// PCIe across CPU sockets (traffic crosses the socket interconnect).
    PcieSys,
}

impl IntraLink {
    /// Every link type, in table order.
    pub const ALL: [IntraLink; 10] = [
        IntraLink::NvswitchNvlink2,
        IntraLink::NvswitchNvlink3,
        IntraLink::NvswitchNvlink4,
        IntraLink::NvswitchNvlink5,
        IntraLink::Nvlink2HybridCubeMesh,
        IntraLink::NvlinkBridgeNv12,
        IntraLink::PcieGen3,
        IntraLink::PcieGen4,
        IntraLink::PcieGen5,
        IntraLink::PcieSys,
    ];

    /// The calibration-CSV spelling (`nvswitch-nvlink4`...).
    pub fn as_str(self) -> &'static str {
        match self {
            IntraLink::NvswitchNvlink2 => "nvswitch-nvlink2",
            IntraLink::NvswitchNvlink3 => "nvswitch-nvlink3",
            IntraLink::NvswitchNvlink4 => "nvswitch-nvlink4",
            IntraLink::NvswitchNvlink5 => "nvswitch-nvlink5",
            IntraLink::Nvlink2HybridCubeMesh => "nvlink2-hybrid-cube-mesh",
            IntraLink::NvlinkBridgeNv12 => "nvlink-bridge-nv12",
            IntraLink::PcieGen3 => "pcie-gen3",
            IntraLink::PcieGen4 => "pcie-gen4",
            IntraLink::PcieGen5 => "pcie-gen5",
            IntraLink::PcieSys => "pcie-sys",
        }
    }

    /// Parses the calibration-CSV spelling; anything else is [`CommError::UnknownIntraLink`].
    pub fn parse(s: &str) -> Result<IntraLink, CommError> {
        let t = s.trim().to_ascii_lowercase();
        IntraLink::ALL.into_iter().find(|l| l.as_str() == t).ok_or_else(|| CommError::UnknownIntraLink(s.to_string()))
    }

    /// The PCIe link a node of generation `generation` falls back to between NVLink pairs.
    pub fn pcie_for(generation: GpuGen) -> IntraLink {
        match generation {
            GpuGen::Volta => IntraLink::PcieGen3,
            GpuGen::Ampere => IntraLink::PcieGen4,
            GpuGen::Hopper | GpuGen::Blackwell => IntraLink::PcieGen5,
        }
    }
}

/// The inter-node network technology (it sets efficiency and latency, not the rate:
/// the rate is the placement's NIC bandwidth per GPU).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NetFabric {
    /// InfiniBand (HDR, NDR, XDR), native verbs.
    #[default]
    Ib,
    /// RoCE v2.
    Roce,
    /// AWS EFA generations 1–3 (p3dn, p4d, p5), via aws-ofi-nccl.
    Efa,
    /// AWS EFA v4 (p6-b200).
    EfaV4,
    /// GCP GPUDirect-TCPXO (A3 Mega).
    Tcpxo,
    /// Plain TCP sockets.
    Tcp,
}

impl NetFabric {
    /// Every fabric, in table order.
    pub const ALL: [NetFabric; 6] =
        [NetFabric::Ib, NetFabric::Roce, NetFabric::Efa, NetFabric::EfaV4, NetFabric::Tcpxo, NetFabric::Tcp];

    /// Table spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            NetFabric::Ib => "ib",
            NetFabric::Roce => "roce",
            NetFabric::Efa => "efa",
            NetFabric::EfaV4 => "efa-v4",
            NetFabric::Tcpxo => "tcpxo",
            NetFabric::Tcp => "tcp",
        }
    }

    /// Parses a fabric name: `ib`, `ib-hdr`/`ib-ndr`/`ib-xdr`/`ib-edr`, `infiniband`,
    /// `roce`/`roce-v2`, `efa`/`efa-v2`/`efa-v3`, `efa-v4`, `tcpxo`, `tcp`/`socket`.
    pub fn parse(s: &str) -> Result<NetFabric, CommError> {
        let t = s.trim().to_ascii_lowercase();
        let f = match t.as_str() {
            "ib" | "ib-edr" | "ib-hdr" | "ib-ndr" | "ib-xdr" | "infiniband" => NetFabric::Ib,
            "roce" | "roce-v2" | "rocev2" => NetFabric::Roce,
            "efa" | "efa-v1" | "efa-v2" | "efa-v3" => NetFabric::Efa,
            "efa-v4" => NetFabric::EfaV4,
            "tcpxo" => NetFabric::Tcpxo,
            "tcp" | "socket" | "sockets" => NetFabric::Tcp,
            _ => return Err(CommError::UnknownFabric(s.to_string())),
        };
        Ok(f)
    }

    /// Parses the calibration CSV's `inter_link` column: `none` (single node) or
    /// free text `fabric NxRATE` whose first word names the fabric.
    pub fn parse_inter_link(s: &str) -> Result<Option<NetFabric>, CommError> {
        let t = s.trim();
        if t.is_empty() || t.eq_ignore_ascii_case("none") {
            return Ok(None);
        }
        let word = t.split_whitespace().next().unwrap_or("");
        NetFabric::parse(word).map(Some).map_err(|_| CommError::UnknownFabric(s.to_string()))
    }
}

/// Which row of NCCL's per-hop latency table a link uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkKind {
    /// NVLink (with or without NVSwitch).
    Nvlink,
    /// PCIe (and the CPU socket interconnect).
    Pci,
}

/// One latency per protocol (µs).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProtoLatency {
    /// LL.
    pub ll: f64,
    /// LL128.
    pub ll128: f64,
    /// Simple.
    pub simple: f64,
}

/// Latencies per algorithm (µs). NVLS, NVLSTree and PAT run Simple only.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AlgoLatency {
    /// Ring.
    pub ring: ProtoLatency,
    /// Tree.
    pub tree: ProtoLatency,
    /// NVLS (Simple).
    pub nvls: f64,
    /// NVLSTree (Simple).
    pub nvls_tree: f64,
    /// PAT (Simple).
    pub pat: f64,
}

/// NCCL's latency tables (`baseLat` and `hwLat`), in µs.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct LatencyTable {
    /// Per-call base latency `baseLat[algo][proto]`.
    pub base: AlgoLatency,
    /// Per-hop latency over NVLink.
    pub nvlink: AlgoLatency,
    /// Per-hop latency over PCIe.
    pub pci: AlgoLatency,
    /// Per-hop latency over the network (the fabric's own latency is added on top).
    pub net: AlgoLatency,
    /// PAT: the network hop latency is divided by this per tree level.
    pub pat_hop_divisor: f64,
    /// PAT: extra latency per rank (µs).
    pub pat_per_rank_us: f64,
}

impl Default for LatencyTable {
    fn default() -> Self {
        let p = |ll, ll128, simple| ProtoLatency { ll, ll128, simple };
        LatencyTable {
            base: AlgoLatency { ring: p(6.6, 14.0, 8.4), tree: p(6.8, 14.0, 8.4), nvls: 0.0, nvls_tree: 0.0, pat: 8.0 },
            nvlink: AlgoLatency {
                ring: p(0.6, 1.9, 3.4),
                tree: p(0.6, 1.25, 4.0),
                nvls: 25.0,
                nvls_tree: 25.0,
                pat: 4.0,
            },
            pci: AlgoLatency { ring: p(1.0, 2.5, 5.7), tree: p(1.0, 1.9, 4.0), nvls: 0.0, nvls_tree: 0.0, pat: 4.0 },
            net: AlgoLatency {
                ring: p(2.7, 4.0, 14.0),
                tree: p(5.0, 8.5, 14.0),
                nvls: 18.0,
                // NCCL uses 20.9; the measured 8-byte NVLSTree all-reduce on 2 IB
                // nodes (47.6 µs, nccl #1244) needs a lower hop cost. Set to the
                // Tree/Simple value.
                nvls_tree: 14.0,
                pat: 14.0,
            },
            pat_hop_divisor: 3.5,
            pat_per_rank_us: 2.8,
        }
    }
}

/// A value per node-count bucket (1 node, 2 nodes, 3 or more), as NCCL indexes its
/// per-channel bandwidth caps.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NodeBuckets {
    /// One node.
    pub one: f64,
    /// Two nodes.
    pub two: f64,
    /// Three or more nodes.
    pub many: f64,
}

impl NodeBuckets {
    /// The value for `nodes` nodes.
    pub fn get(&self, nodes: u32) -> f64 {
        match nodes {
            0 | 1 => self.one,
            2 => self.two,
            _ => self.many,
        }
    }
}

/// Constants of one GPU generation (NCCL `tuning.cc` tables).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ArchConstants {
    /// Channels (CTAs) a communicator uses; multiplies the per-channel caps.
    pub channels: u32,
    /// LL bus-bandwidth cap (GB/s) per node-count bucket (`llMaxBw`; the multi-node
    /// values are NCCL's Intel-host ones).
    pub ll_max_busbw_gbps: NodeBuckets,
    /// Ring LL128 per-channel cap (GB/s), `perChMaxRingLL128Bw`.
    pub ring_ll128_per_channel_gbps: f64,
    /// Tree LL128 per-channel cap (GB/s), `perChMaxTreeLL128Bw`.
    pub tree_ll128_per_channel_gbps: NodeBuckets,
    /// Tree Simple per-channel cap (GB/s), `perChMaxTreeBw`.
    pub tree_per_channel_gbps: NodeBuckets,
    /// NVLS efficiency of the NVLink bandwidth (`nvlsEfficiency`; 0 = no NVLS).
    pub nvls_efficiency: f64,
    /// Fewest GPUs of the job on one NVSwitch node for NVLS to be used.
    pub nvls_min_gpus: u32,
    /// Multi-node Ring/Simple all-reduce latency multiplier ("ring plateau").
    pub ring_plateau_factor: f64,
}

/// [`ArchConstants`] per generation.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ArchTable {
    /// Volta bucket.
    pub volta: ArchConstants,
    /// Ampere bucket.
    pub ampere: ArchConstants,
    /// Hopper bucket.
    pub hopper: ArchConstants,
    /// Blackwell bucket.
    pub blackwell: ArchConstants,
}

impl ArchTable {
    /// The entry of `generation`.
    pub fn get(&self, generation: GpuGen) -> &ArchConstants {
        match generation {
            GpuGen::Volta => &self.volta,
            GpuGen::Ampere => &self.ampere,
            GpuGen::Hopper => &self.hopper,
            GpuGen::Blackwell => &self.blackwell,
        }
    }
}

impl Default for ArchTable {
    fn default() -> Self {
        let b = |one, two, many| NodeBuckets { one, two, many };
        ArchTable {
            volta: ArchConstants {
                channels: 8,
                ll_max_busbw_gbps: b(39.0, 39.0, 20.4),
                ring_ll128_per_channel_gbps: 20.0,
                tree_ll128_per_channel_gbps: b(20.0, 20.0, 20.0),
                tree_per_channel_gbps: b(26.5, 18.5, 10.0),
                nvls_efficiency: 0.0,
                nvls_min_gpus: 0,
                ring_plateau_factor: 1.9,
            },
            ampere: ArchConstants {
                channels: 8,
                ll_max_busbw_gbps: b(87.7, 39.0, 20.4),
                ring_ll128_per_channel_gbps: 20.0,
                tree_ll128_per_channel_gbps: b(20.0, 20.0, 20.0),
                tree_per_channel_gbps: b(24.0, 23.6, 17.8),
                nvls_efficiency: 0.0,
                nvls_min_gpus: 0,
                ring_plateau_factor: 1.4,
            },
            hopper: ArchConstants {
                channels: 16,
                ll_max_busbw_gbps: b(141.0, 39.0, 20.4),
                ring_ll128_per_channel_gbps: 36.7,
                tree_ll128_per_channel_gbps: b(36.7, 36.7, 29.0),
                tree_per_channel_gbps: b(38.7, 41.4, 36.0),
                nvls_efficiency: 0.85,
                nvls_min_gpus: 5,
                ring_plateau_factor: 1.4,
            },
            blackwell: ArchConstants {
                channels: 16,
                ll_max_busbw_gbps: b(282.0, 39.0, 20.4),
                ring_ll128_per_channel_gbps: 40.0,
                tree_ll128_per_channel_gbps: b(55.6, 31.67, 20.0),
                tree_per_channel_gbps: b(70.0, 42.8, 24.0),
                nvls_efficiency: 0.74,
                nvls_min_gpus: 6,
                ring_plateau_factor: 1.4,
            },
        }
    }
}

/// Constants of one intra-node link type.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct IntraConstants {
    /// Latency-table row the link uses.
    pub kind: LinkKind,
    /// Per-GPU, per-direction link bandwidth NCCL's topology assumes (GB/s): the
    /// physical bound the model's implied link traffic must respect.
    pub link_gbps: f64,
    /// Measured large-message ring all-reduce busbw plateau on this link (GB/s).
    pub ring_busbw_gbps: f64,
    /// NVSwitch with SHARP (NVLS) available.
    pub nvls: bool,
    /// LL128 enabled on this path.
    pub ll128: bool,
    /// Only pairs of GPUs share the link; larger groups fall back to the
    /// generation's PCIe entry ([`IntraLink::pcie_for`]).
    pub pair_only: bool,
}

/// [`IntraConstants`] per link type; YAML keys are the CSV spellings.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct IntraTable {
    /// `nvswitch-nvlink2`.
    pub nvswitch_nvlink2: IntraConstants,
    /// `nvswitch-nvlink3`.
    pub nvswitch_nvlink3: IntraConstants,
    /// `nvswitch-nvlink4`.
    pub nvswitch_nvlink4: IntraConstants,
    /// `nvswitch-nvlink5`.
    pub nvswitch_nvlink5: IntraConstants,
    /// `nvlink2-hybrid-cube-mesh`.
    pub nvlink2_hybrid_cube_mesh: IntraConstants,
    /// `nvlink-bridge-nv12`.
    pub nvlink_bridge_nv12: IntraConstants,
    /// `pcie-gen3`.
    pub pcie_gen3: IntraConstants,
    /// `pcie-gen4`.
    pub pcie_gen4: IntraConstants,
    /// `pcie-gen5`.
    pub pcie_gen5: IntraConstants,
    /// `pcie-sys`.
    pub pcie_sys: IntraConstants,
}

impl IntraTable {
    /// The entry of `link`.
    pub fn get(&self, link: IntraLink) -> &IntraConstants {
        match link {
            IntraLink::NvswitchNvlink2 => &self.nvswitch_nvlink2,
            IntraLink::NvswitchNvlink3 => &self.nvswitch_nvlink3,
            IntraLink::NvswitchNvlink4 => &self.nvswitch_nvlink4,
            IntraLink::NvswitchNvlink5 => &self.nvswitch_nvlink5,
            IntraLink::Nvlink2HybridCubeMesh => &self.nvlink2_hybrid_cube_mesh,
            IntraLink::NvlinkBridgeNv12 => &self.nvlink_bridge_nv12,
            IntraLink::PcieGen3 => &self.pcie_gen3,
            IntraLink::PcieGen4 => &self.pcie_gen4,
            IntraLink::PcieGen5 => &self.pcie_gen5,
            IntraLink::PcieSys => &self.pcie_sys,
        }
    }
}

impl Default for IntraTable {
    fn default() -> Self {
        let nv = |link_gbps, ring_busbw_gbps, nvls| IntraConstants {
            kind: LinkKind::Nvlink,
            link_gbps,
            ring_busbw_gbps,
            nvls,
            ll128: true,
            pair_only: false,
        };
        let pci = |link_gbps, ring_busbw_gbps| IntraConstants {
            kind: LinkKind::Pci,
            link_gbps,
            ring_busbw_gbps,
            nvls: false,
            ll128: false,
            pair_only: false,
        };
        IntraTable {
            // V100: 6 links x 20 GB/s; no measured plateau here, A100's ratio assumed.
            nvswitch_nvlink2: nv(120.0, 116.0, false),
            // A100: 12 x 20; plateau 231.6 (R009).
            nvswitch_nvlink3: nv(240.0, 232.0, false),
            // H100/H200/H20: 18 x 20.6; plateau 365–368 (R029, R031, R040).
            nvswitch_nvlink4: nv(370.8, 367.0, true),
            // B200: 18 x 40.1; plateau 673–682 (R050, R052).
            nvswitch_nvlink5: nv(721.8, 680.0, true),
            nvlink2_hybrid_cube_mesh: nv(120.0, 116.0, false),
            // NV12 bridge (12 x 20); 208 measured between the pair (R098).
            nvlink_bridge_nv12: IntraConstants { pair_only: true, ..nv(240.0, 208.0, false) },
            // PCIe x16 per direction (Gen3 12, Gen4 24, Gen5 48). Rings through host
            // bridges are CPU/memory bound: 28 of 48 on Gen5 (R096); the same ratio
            // is assumed for Gen3/Gen4 (uncalibrated).
            pcie_gen3: pci(12.0, 7.0),
            pcie_gen4: pci(24.0, 14.0),
            pcie_gen5: pci(48.0, 28.0),
            // Socket interconnect (UPI class, NCCL 22 GB/s); uncalibrated plateau.
            pcie_sys: pci(22.0, 12.0),
        }
    }
}

/// Constants of one network fabric.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NetConstants {
    /// Fraction of the NIC line rate a ring/tree stream achieves (η_nic).
    pub efficiency: f64,
    /// Fraction of the line rate each GPU's own NIC achieves in all-to-all.
    pub alltoall_efficiency: f64,
    /// Latency added to every inter-node hop (µs), NCCL's plugin `latency`.
    pub latency_us: f64,
    /// Per-step host overhead of multi-node rings (µs; x3 for Simple), `netOverhead`.
    pub net_overhead_us: f64,
    /// Latency of one extra switch traversal (µs); crossing tier t adds 2(t−1) hops.
    pub switch_hop_us: f64,
    /// Cap of the pipeline ramp on multi-node transfers (µs); host-proxy transports
    /// need more data in flight than NVLink or native verbs before reaching line rate.
    pub ramp_cap_us: f64,
    /// All-to-all: issue cost per off-node peer (µs). Grouped sends keep many peers
    /// in flight, so this is far below a ring hop's latency.
    pub p2p_peer_us: f64,
    /// Extra latency per inter-node hop for LL128 and Simple (µs): they post large
    /// buffers through the transport, which host-proxy transports pay dearly for
    /// (NCCL adds the plugin latency a second time for Simple).
    pub simple_hop_us: f64,
}

/// [`NetConstants`] per fabric.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct NetTable {
    /// `ib`.
    pub ib: NetConstants,
    /// `roce`.
    pub roce: NetConstants,
    /// `efa`.
    pub efa: NetConstants,
    /// `efa-v4`.
    pub efa_v4: NetConstants,
    /// `tcpxo`.
    pub tcpxo: NetConstants,
    /// `tcp`.
    pub tcp: NetConstants,
}

impl NetTable {
    /// The entry of `fabric`.
    pub fn get(&self, fabric: NetFabric) -> &NetConstants {
        match fabric {
            NetFabric::Ib => &self.ib,
            NetFabric::Roce => &self.roce,
            NetFabric::Efa => &self.efa,
            NetFabric::EfaV4 => &self.efa_v4,
            NetFabric::Tcpxo => &self.tcpxo,
            NetFabric::Tcp => &self.tcp,
        }
    }
}

impl Default for NetTable {
    fn default() -> Self {
        NetTable {
            // ConnectX NDR/HDR: 46–49 of 50 GB/s, 24 of 25 (nccl-tests #267/#290, R100).
            ib: NetConstants {
                efficiency: 0.96,
                alltoall_efficiency: 0.90,
                latency_us: 1.0,
                net_overhead_us: 1.0,
                switch_hop_us: 0.5,
                ramp_cap_us: 100.0,
                p2p_peer_us: 0.5,
                simple_hop_us: 0.0,
            },
            roce: NetConstants {
                efficiency: 0.92,
                alltoall_efficiency: 0.85,
                latency_us: 2.0,
                net_overhead_us: 1.0,
                switch_hop_us: 1.0,
                ramp_cap_us: 100.0,
                p2p_peer_us: 0.7,
                simple_hop_us: 0.0,
            },
            // p5 32x100G: ring plateau 347–357 of 400 GB/s per node at 2–8 GiB,
            // all-to-all 0.84 of each GPU's 50 GB/s at 2 GiB (crazyguitar sweeps, the
            // source of R053–R079); latency from p3dn (R093, R095) and p5 32 MiB rows.
            efa: NetConstants {
                efficiency: 0.89,
                alltoall_efficiency: 0.84,
                latency_us: 55.0,
                net_overhead_us: 1.0,
                switch_hop_us: 2.0,
                ramp_cap_us: 400.0,
                p2p_peer_us: 1.0,
                simple_hop_us: 0.0,
            },
            // p6-b200 8x400G: 381.8 of 400 GB/s per node at 16 GiB (R049).
            efa_v4: NetConstants {
                efficiency: 0.955,
                alltoall_efficiency: 0.85,
                latency_us: 55.0,
                net_overhead_us: 1.0,
                switch_hop_us: 2.0,
                ramp_cap_us: 400.0,
                p2p_peer_us: 1.0,
                simple_hop_us: 0.0,
            },
            // A3 Mega 8x200G, 2 nodes (lessizzmore/create-a3mega-ztan-fork, not in
            // the CSV): 8 B in 123 µs; LL-bound up to 16 MiB; Simple pays ~880 µs
            // more than LL; 180.7 GB/s algbw at 8 GiB (NVLSTree at 0.92 of 0.98 x 200).
            tcpxo: NetConstants {
                efficiency: 0.98,
                alltoall_efficiency: 0.7,
                latency_us: 40.0,
                net_overhead_us: 2.0,
                switch_hop_us: 2.0,
                ramp_cap_us: 100.0,
                p2p_peer_us: 3.0,
                simple_hop_us: 310.0,
            },
            // Kernel sockets: uncalibrated guesses.
            tcp: NetConstants {
                efficiency: 0.7,
                alltoall_efficiency: 0.6,
                latency_us: 60.0,
                net_overhead_us: 2.0,
                switch_hop_us: 2.0,
                ramp_cap_us: 600.0,
                p2p_peer_us: 5.0,
                simple_hop_us: 100.0,
            },
        }
    }
}

/// All constants of the model. See the module docs and `docs/nccl-model.md`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct CommConstants {
    /// Fixed per-call host overhead (µs).
    pub launch_us: f64,
    /// Per-call overhead growing with log2(ranks) (µs): the call ends when the last
    /// rank's launch arrives, and the expected maximum of n launch delays grows like
    /// log n. Calibrated on small-message rows (R010, R092, R003, R012).
    pub launch_us_per_log2_rank: f64,
    /// Pipeline ramp: LL128 and Simple transfers pay `min(ramp_fraction · T_bw,
    /// cap)` on top of `T_bw` while their pipeline fills. Calibrated on the
    /// mid-size rows (R005, R014, R026).
    pub ramp_fraction: f64,
    /// Cap of the ramp on one node and native networks (µs).
    pub ramp_cap_us: f64,
    /// LL data efficiency (8 data bytes per 16-byte line).
    pub ll_efficiency: f64,
    /// Ring LL128 efficiency (NCCL: 0.92).
    pub ll128_efficiency: f64,
    /// Tree Simple efficiency (NCCL: 0.92).
    pub tree_efficiency: f64,
    /// Tree LL efficiency (NCCL: 1/3.8).
    pub tree_ll_efficiency: f64,
    /// Tree LL128 efficiency (NCCL: 120/128 on more than one node).
    pub tree_ll128_efficiency: f64,
    /// NVLSTree: fraction of min(NVLS, network) bandwidth achieved when both stages
    /// run at once on the same SMs (set to NCCL's tree efficiency; R055 and the
    /// p5 2-node sweep imply 0.91–0.95).
    pub nvls_tree_efficiency: f64,
    /// PAT bandwidth factor (NCCL: 0.75).
    pub pat_efficiency: f64,
    /// How much of an uplink's oversubscription r a crossing flow feels: its rate is
    /// divided by `1 + exposure · (r − 1)`. 1 = uplinks saturated by other traffic
    /// (static worst case); 0 = a lone job never feels it.
    pub oversubscription_exposure: f64,
    /// NCCL's latency tables.
    pub latency: LatencyTable,
    /// Per-generation constants.
    pub arch: ArchTable,
    /// Per-intra-link constants.
    pub intra: IntraTable,
    /// Per-fabric constants.
    pub net: NetTable,
    /// GPU model name prefixes (normalized: upper case, alphanumerics only, without a
    /// leading `NVIDIA`/`TESLA`/`GEFORCE`) to generation; the longest prefix wins.
    pub gpu_aliases: BTreeMap<String, GpuGen>,
}

impl Default for CommConstants {
    fn default() -> Self {
        let aliases: &[(&str, GpuGen)] = &[
            ("P100", GpuGen::Volta),
            ("V100", GpuGen::Volta),
            ("T4", GpuGen::Volta),
            ("A100", GpuGen::Ampere),
            ("A800", GpuGen::Ampere),
            ("A30", GpuGen::Ampere),
            ("A40", GpuGen::Ampere),
            ("A10", GpuGen::Ampere),
            ("L4", GpuGen::Ampere),
            ("L40", GpuGen::Ampere),
            ("RTX30", GpuGen::Ampere),
            ("RTX40", GpuGen::Ampere),
            ("RTXA", GpuGen::Ampere),
            ("H100", GpuGen::Hopper),
            ("H200", GpuGen::Hopper),
            ("H800", GpuGen::Hopper),
            ("H20", GpuGen::Hopper),
            ("GH200", GpuGen::Hopper),
            ("B100", GpuGen::Blackwell),
            ("B200", GpuGen::Blackwell),
            ("B300", GpuGen::Blackwell),
            ("GB200", GpuGen::Blackwell),
            ("GB300", GpuGen::Blackwell),
            ("RTX50", GpuGen::Blackwell),
            ("RTXPRO6000", GpuGen::Blackwell),
        ];
        CommConstants {
            launch_us: 0.0,
            launch_us_per_log2_rank: 5.0,
            ramp_fraction: 0.5,
            ramp_cap_us: 100.0,
            ll_efficiency: 0.5,
            ll128_efficiency: 0.92,
            tree_efficiency: 0.92,
            tree_ll_efficiency: 1.0 / 3.8,
            tree_ll128_efficiency: 120.0 / 128.0,
            nvls_tree_efficiency: 0.92,
            pat_efficiency: 0.75,
            oversubscription_exposure: 1.0,
            latency: LatencyTable::default(),
            arch: ArchTable::default(),
            intra: IntraTable::default(),
            net: NetTable::default(),
            gpu_aliases: aliases.iter().map(|(k, g)| (k.to_string(), *g)).collect(),
        }
    }
}

/// Upper case, alphanumerics only, without a leading vendor/brand word.
pub fn normalize_gpu_name(name: &str) -> String {
    let mut s: String = name.chars().filter(|c| c.is_ascii_alphanumeric()).map(|c| c.to_ascii_uppercase()).collect();
    for prefix in ["NVIDIA", "TESLA", "GEFORCE"] {
        if let Some(rest) = s.strip_prefix(prefix) {
            s = rest.to_string();
        }
    }
    s
}

impl CommConstants {
    /// The generation of a GPU model name (`A100-SXM4-80GB`, `NVIDIA-H100-80GB-HBM3`,
    /// `B200`...), by the longest matching alias prefix.
    pub fn gpu_gen(&self, model: &str) -> Result<GpuGen, CommError> {
        self.gpu_alias(model).map(|(_, g, _)| g).ok_or_else(|| CommError::UnknownGpu(model.to_string()))
    }

    /// The alias a GPU model name is read as (the longest alias prefix of its
    /// normalised name), its generation, and the rest of the normalised name.
    pub fn gpu_alias(&self, model: &str) -> Option<(&str, GpuGen, String)> {
        let norm = normalize_gpu_name(model);
        let (alias, g, len) = self
            .gpu_aliases
            .iter()
            .map(|(prefix, g)| (prefix, g, normalize_gpu_name(prefix)))
            .filter(|(_, _, p)| !p.is_empty() && norm.starts_with(p))
            .max_by_key(|(_, _, p)| p.len())
            .map(|(a, g, p)| (a.as_str(), *g, p.len()))?;
        Some((alias, g, norm[len..].to_string()))
    }

    /// Checks that every bandwidth is positive, every efficiency in (0, 1] (NVLS may
    /// be 0 = absent) and every latency non-negative and finite.
    pub fn validate(&self) -> Result<(), CommError> {
        let mut checks: Vec<(String, f64, Range)> = vec![
            ("launch_us".into(), self.launch_us, Range::NonNeg),
            ("launch_us_per_log2_rank".into(), self.launch_us_per_log2_rank, Range::NonNeg),
            ("ramp_fraction".into(), self.ramp_fraction, Range::NonNeg),
            ("ramp_cap_us".into(), self.ramp_cap_us, Range::NonNeg),
            ("ll_efficiency".into(), self.ll_efficiency, Range::Fraction),
            ("ll128_efficiency".into(), self.ll128_efficiency, Range::Fraction),
            ("tree_efficiency".into(), self.tree_efficiency, Range::Fraction),
            ("tree_ll_efficiency".into(), self.tree_ll_efficiency, Range::Fraction),
            ("tree_ll128_efficiency".into(), self.tree_ll128_efficiency, Range::Fraction),
            ("nvls_tree_efficiency".into(), self.nvls_tree_efficiency, Range::Fraction),
            ("pat_efficiency".into(), self.pat_efficiency, Range::Fraction),
            ("oversubscription_exposure".into(), self.oversubscription_exposure, Range::NonNeg),
            ("latency.pat_hop_divisor".into(), self.latency.pat_hop_divisor, Range::Positive),
            ("latency.pat_per_rank_us".into(), self.latency.pat_per_rank_us, Range::NonNeg),
        ];
        let lat = &self.latency;
        for (row, a) in [("base", &lat.base), ("nvlink", &lat.nvlink), ("pci", &lat.pci), ("net", &lat.net)] {
            for (algo, p) in [("ring", &a.ring), ("tree", &a.tree)] {
                for (proto, v) in [("ll", p.ll), ("ll128", p.ll128), ("simple", p.simple)] {
                    checks.push((format!("latency.{row}.{algo}.{proto}"), v, Range::NonNeg));
                }
            }
            for (algo, v) in [("nvls", a.nvls), ("nvls_tree", a.nvls_tree), ("pat", a.pat)] {
                checks.push((format!("latency.{row}.{algo}"), v, Range::NonNeg));
            }
        }
        for generation in [GpuGen::Volta, GpuGen::Ampere, GpuGen::Hopper, GpuGen::Blackwell] {
            let a = self.arch.get(generation);
            let g = generation.as_str();
            if a.channels == 0 {
                return Err(CommError::InvalidConstant { name: format!("arch.{g}.channels"), value: 0.0 });
            }
            for (name, b) in [
                ("ll_max_busbw_gbps", &a.ll_max_busbw_gbps),
                ("tree_ll128_per_channel_gbps", &a.tree_ll128_per_channel_gbps),
                ("tree_per_channel_gbps", &a.tree_per_channel_gbps),
            ] {
                for (bucket, v) in [("one", b.one), ("two", b.two), ("many", b.many)] {
                    checks.push((format!("arch.{g}.{name}.{bucket}"), v, Range::Positive));
                }
            }
            checks.push((
                format!("arch.{g}.ring_ll128_per_channel_gbps"),
                a.ring_ll128_per_channel_gbps,
                Range::Positive,
            ));
            checks.push((format!("arch.{g}.nvls_efficiency"), a.nvls_efficiency, Range::FractionOrZero));
            checks.push((format!("arch.{g}.ring_plateau_factor"), a.ring_plateau_factor, Range::Positive));
        }
        for link in IntraLink::ALL {
            let c = self.intra.get(link);
            let l = link.as_str();
            checks.push((format!("intra.{l}.link_gbps"), c.link_gbps, Range::Positive));
            checks.push((format!("intra.{l}.ring_busbw_gbps"), c.ring_busbw_gbps, Range::Positive));
            // The ring plateau is what a link delivers; it cannot exceed the link.
            if c.ring_busbw_gbps > c.link_gbps {
                return Err(CommError::InvalidConstant {
                    name: format!("intra.{l}.ring_busbw_gbps (above link_gbps)"),
                    value: c.ring_busbw_gbps,
                });
            }
        }
        for fabric in NetFabric::ALL {
            let c = self.net.get(fabric);
            let f = fabric.as_str();
            checks.push((format!("net.{f}.efficiency"), c.efficiency, Range::Fraction));
            checks.push((format!("net.{f}.alltoall_efficiency"), c.alltoall_efficiency, Range::Fraction));
            checks.push((format!("net.{f}.latency_us"), c.latency_us, Range::NonNeg));
            checks.push((format!("net.{f}.net_overhead_us"), c.net_overhead_us, Range::NonNeg));
            checks.push((format!("net.{f}.switch_hop_us"), c.switch_hop_us, Range::NonNeg));
            checks.push((format!("net.{f}.ramp_cap_us"), c.ramp_cap_us, Range::NonNeg));
            checks.push((format!("net.{f}.p2p_peer_us"), c.p2p_peer_us, Range::NonNeg));
            checks.push((format!("net.{f}.simple_hop_us"), c.simple_hop_us, Range::NonNeg));
        }
        for (name, value, range) in checks {
            let ok = value.is_finite()
                && match range {
                    Range::NonNeg => value >= 0.0,
                    Range::Positive => value > 0.0,
                    Range::Fraction => value > 0.0 && value <= 1.0,
                    Range::FractionOrZero => (0.0..=1.0).contains(&value),
                };
            if !ok {
                return Err(CommError::InvalidConstant { name, value });
            }
        }
        Ok(())
    }
}

#[derive(Clone, Copy)]
enum Range {
    NonNeg,
    Positive,
    Fraction,
    FractionOrZero,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        CommConstants::default().validate().unwrap();
    }

    #[test]
    fn gpu_names_map_to_generations() {
        let c = CommConstants::default();
        let cases = [
            ("A100-SXM4-80GB", GpuGen::Ampere),
            ("A100-80GB (NVLink-bridged pairs, no NVSwitch)", GpuGen::Ampere),
            ("H100-SXM-80G", GpuGen::Hopper),
            ("H100", GpuGen::Hopper),
            ("NVIDIA-H100-80GB-HBM3", GpuGen::Hopper),
            ("H200-SXM-141GB", GpuGen::Hopper),
            ("H20", GpuGen::Hopper),
            ("B200", GpuGen::Blackwell),
            ("V100-SXM2-32GB", GpuGen::Volta),
            ("Tesla-V100-SXM2-16GB", GpuGen::Volta),
            ("RTX5090", GpuGen::Blackwell),
            ("NVIDIA GeForce RTX 4090", GpuGen::Ampere),
        ];
        for (name, generation) in cases {
            assert_eq!(c.gpu_gen(name).unwrap(), generation, "{name}");
        }
        assert_eq!(c.gpu_gen("MI300X"), Err(CommError::UnknownGpu("MI300X".into())));
        assert_eq!(c.gpu_gen(""), Err(CommError::UnknownGpu(String::new())));
    }

    #[test]
    fn link_and_fabric_names() {
        for l in IntraLink::ALL {
            assert_eq!(IntraLink::parse(l.as_str()).unwrap(), l);
        }
        assert_eq!(IntraLink::parse("nvlink9"), Err(CommError::UnknownIntraLink("nvlink9".into())));
        assert_eq!(NetFabric::parse_inter_link("none").unwrap(), None);
        assert_eq!(NetFabric::parse_inter_link("efa 32x100G").unwrap(), Some(NetFabric::Efa));
        assert_eq!(NetFabric::parse_inter_link("efa-v4 8x400G").unwrap(), Some(NetFabric::EfaV4));
        assert_eq!(NetFabric::parse_inter_link("ib-ndr 8x400G").unwrap(), Some(NetFabric::Ib));
        assert_eq!(NetFabric::parse_inter_link("tcpxo 8x200G").unwrap(), Some(NetFabric::Tcpxo));
        assert_eq!(
            NetFabric::parse_inter_link("slingshot 4x200G"),
            Err(CommError::UnknownFabric("slingshot 4x200G".into()))
        );
    }

    /// A minimal self-describing value, so the serde shape can be tested without a
    /// format crate: numbers, strings and maps are all a scenario override needs.
    #[derive(Clone)]
    enum V {
        Num(f64),
        Str(&'static str),
        Map(Vec<(&'static str, V)>),
    }

    type DeError = serde::de::value::Error;

    impl<'de> serde::de::IntoDeserializer<'de, DeError> for V {
        type Deserializer = V;
        fn into_deserializer(self) -> V {
            self
        }
    }

    impl<'de> serde::Deserializer<'de> for V {
        type Error = DeError;
        fn deserialize_any<W: serde::de::Visitor<'de>>(self, v: W) -> Result<W::Value, DeError> {
            match self {
                V::Num(x) => v.visit_f64(x),
                V::Str(s) => v.visit_str(s),
                V::Map(entries) => v.visit_map(serde::de::value::MapDeserializer::new(entries.into_iter())),
            }
        }
        fn deserialize_u32<W: serde::de::Visitor<'de>>(self, v: W) -> Result<W::Value, DeError> {
            match self {
                V::Num(x) => v.visit_u32(x as u32),
                other => other.deserialize_any(v),
            }
        }
        fn deserialize_enum<W: serde::de::Visitor<'de>>(
            self,
            _: &'static str,
            _: &'static [&'static str],
            v: W,
        ) -> Result<W::Value, DeError> {
            match self {
                V::Str(s) => v.visit_enum(serde::de::IntoDeserializer::<DeError>::into_deserializer(s)),
                other => other.deserialize_any(v),
            }
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 u8 u16 u64 f32 f64 char str string bytes byte_buf option unit
            unit_struct newtype_struct seq tuple tuple_struct map struct identifier ignored_any
        }
    }

    fn parse(v: V) -> Result<CommConstants, DeError> {
        CommConstants::deserialize(v)
    }

    #[test]
    fn overrides_deserialize_and_reject_unknown_fields() {
        let efa = V::Map(vec![
            ("efficiency", V::Num(0.8)),
            ("alltoall_efficiency", V::Num(0.8)),
            ("latency_us", V::Num(30.0)),
            ("net_overhead_us", V::Num(1.0)),
            ("switch_hop_us", V::Num(1.0)),
            ("ramp_cap_us", V::Num(300.0)),
            ("p2p_peer_us", V::Num(1.0)),
            ("simple_hop_us", V::Num(0.0)),
        ]);
        let c = parse(V::Map(vec![
            ("launch_us_per_log2_rank", V::Num(3.0)),
            ("net", V::Map(vec![("efa", efa.clone())])),
            ("arch", V::Map(vec![])),
            ("gpu_aliases", V::Map(vec![("MI300", V::Str("hopper"))])),
        ]))
        .unwrap();
        assert_eq!(c.launch_us_per_log2_rank, 3.0);
        assert_eq!(c.net.efa.efficiency, 0.8);
        assert_eq!(c.net.ib, NetTable::default().ib);
        assert_eq!(c.intra, IntraTable::default());
        assert_eq!(c.arch, ArchTable::default());
        assert_eq!(c.gpu_gen("MI300X").unwrap(), GpuGen::Hopper);
        c.validate().unwrap();
        // Unknown fields and keys are rejected at every level.
        assert!(parse(V::Map(vec![("launch_typo", V::Num(3.0))])).is_err());
        assert!(parse(V::Map(vec![("intra", V::Map(vec![("nvlink9", V::Map(vec![]))]))])).is_err());
        let mut bad = match efa {
            V::Map(e) => e,
            _ => unreachable!(),
        };
        bad.push(("speed", V::Num(1.0)));
        assert!(parse(V::Map(vec![("net", V::Map(vec![("efa", V::Map(bad))]))])).is_err());
        // An entry must be complete.
        let partial = V::Map(vec![("efficiency", V::Num(0.8))]);
        assert!(parse(V::Map(vec![("net", V::Map(vec![("efa", partial)]))])).is_err());
        assert!(parse(V::Map(vec![("gpu_aliases", V::Map(vec![("X", V::Str("pascal"))]))])).is_err());
    }

    #[test]
    fn validate_rejects_bad_values() {
        let mut c = CommConstants::default();
        c.net.efa.efficiency = 1.5;
        assert!(matches!(c.validate(), Err(CommError::InvalidConstant { .. })));
        let mut c = CommConstants::default();
        c.intra.pcie_gen5.ring_busbw_gbps = 60.0;
        assert!(matches!(c.validate(), Err(CommError::InvalidConstant { .. })));
        let mut c = CommConstants::default();
        c.latency.net.ring.ll = f64::NAN;
        assert!(matches!(c.validate(), Err(CommError::InvalidConstant { .. })));
    }
}
