//! The cost model proper: placements, candidates per (algorithm, protocol), and the
//! choice of the fastest.

use super::constants::{ArchConstants, IntraConstants, LinkKind, NetConstants};
use super::{Algo, AlgoChoice, Collective, CommConstants, CommError, GpuGen, IntraLink, NetFabric, Proto};

/// Where a communicator's ranks sit. Small, `Copy` and totally ordered, so it can
/// key a memo table ([`super::CommCache`]); rates are integers for that reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Placement {
    /// GPU generation (the lowest one when nodes differ, as NCCL does).
    pub gpu: GpuGen,
    /// Intra-node link (the slowest one when nodes differ).
    pub intra: IntraLink,
    /// Network fabric (ignored on one node).
    pub net: NetFabric,
    /// Total ranks (GPUs) of the communicator.
    pub ranks: u32,
    /// Nodes spanned.
    pub nodes: u32,
    /// Fewest ranks on any one node: it bounds the node's NIC bandwidth and NVLS.
    pub min_gpus_per_node: u32,
    /// NIC line rate available per GPU, Mbit/s (0 on one node).
    pub nic_mbps_per_gpu: u32,
    /// Rail-optimized fabric: all-to-all traffic changes rail over NVLink (PXN)
    /// before leaving the node, so it crosses NVLink once more.
    pub rail_optimized: bool,
    /// Highest switch tier crossed: 0 = one node, 1 = one leaf, 2 = spine...
    pub tier: u32,
    /// Oversubscription of the uplinks crossed, in thousandths (1000 = 1:1).
    pub oversubscription_milli: u32,
}

/// Rounds a rate or ratio to thousandths; NaN and negatives become 0 (which
/// [`Placement::validate`] rejects where it matters).
fn milli(x: f64) -> u32 {
    // `as` saturates and maps NaN to 0.
    (x * 1000.0).round() as u32
}

impl Placement {
    /// `gpus` GPUs on one node.
    pub fn single_node(gpu: GpuGen, intra: IntraLink, gpus: u32) -> Placement {
        Placement {
            gpu,
            intra,
            net: NetFabric::default(),
            ranks: gpus,
            nodes: 1,
            min_gpus_per_node: gpus,
            nic_mbps_per_gpu: 0,
            rail_optimized: true,
            tier: 0,
            oversubscription_milli: 1000,
        }
    }

    /// `gpus_per_node` GPUs on each of `nodes` nodes under one leaf switch, with
    /// `nic_gbps_per_gpu` Gbit/s of NIC per GPU.
    pub fn uniform(
        gpu: GpuGen,
        intra: IntraLink,
        gpus_per_node: u32,
        nodes: u32,
        nic_gbps_per_gpu: f64,
        net: NetFabric,
    ) -> Placement {
        Placement {
            gpu,
            intra,
            net,
            ranks: gpus_per_node.saturating_mul(nodes),
            nodes,
            min_gpus_per_node: gpus_per_node,
            nic_mbps_per_gpu: milli(nic_gbps_per_gpu),
            rail_optimized: true,
            tier: u32::from(nodes > 1),
            oversubscription_milli: 1000,
        }
    }

    /// The same placement crossing switch tier `tier` whose uplinks are
    /// `oversubscription`:1 oversubscribed.
    pub fn crossing(self, tier: u32, oversubscription: f64) -> Placement {
        Placement { tier, oversubscription_milli: milli(oversubscription), ..self }
    }

    /// The same placement on a rail-optimized fabric or not.
    pub fn with_rail_optimized(self, rail_optimized: bool) -> Placement {
        Placement { rail_optimized, ..self }
    }

    /// The most ranks any one node can hold.
    pub fn max_gpus_per_node(&self) -> u32 {
        let others = u64::from(self.min_gpus_per_node) * u64::from(self.nodes.saturating_sub(1));
        u64::from(self.ranks).saturating_sub(others).max(1).min(u64::from(u32::MAX)) as u32
    }

    /// NIC line rate per GPU, GB/s.
    pub fn nic_gbytes_per_gpu(&self) -> f64 {
        f64::from(self.nic_mbps_per_gpu) / 8000.0
    }

    /// Oversubscription ratio r (≥ 1).
    pub fn oversubscription(&self) -> f64 {
        f64::from(self.oversubscription_milli) / 1000.0
    }

    /// Rejects placements that cannot exist.
    pub fn validate(&self) -> Result<(), CommError> {
        let bad = |m: String| Err(CommError::InvalidPlacement(m));
        if self.ranks == 0 || self.nodes == 0 || self.min_gpus_per_node == 0 {
            return bad(format!(
                "ranks ({}), nodes ({}) and GPUs per node ({}) must be at least 1",
                self.ranks, self.nodes, self.min_gpus_per_node
            ));
        }
        if u64::from(self.min_gpus_per_node) * u64::from(self.nodes) > u64::from(self.ranks) {
            return bad(format!(
                "{} nodes with at least {} GPUs each hold more than {} ranks",
                self.nodes, self.min_gpus_per_node, self.ranks
            ));
        }
        if self.nodes == 1 && self.ranks != self.min_gpus_per_node {
            return bad(format!(
                "one node holds all {} ranks but its GPU count is {}",
                self.ranks, self.min_gpus_per_node
            ));
        }
        if self.nodes > 1 && self.nic_mbps_per_gpu == 0 {
            return bad(format!("{} nodes but no NIC bandwidth per GPU", self.nodes));
        }
        if self.oversubscription_milli < 1000 {
            return bad(format!("oversubscription {} is below 1:1", self.oversubscription()));
        }
        Ok(())
    }
}

/// The model's price of one collective call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// The collective.
    pub collective: Collective,
    /// Message size (nccl-tests convention).
    pub bytes: u64,
    /// Ranks.
    pub ranks: u32,
    /// Algorithm chosen.
    pub algo: Algo,
    /// Protocol chosen.
    pub proto: Proto,
    /// Total time, µs.
    pub time_us: f64,
    /// Launch overhead plus the algorithm's latency, µs.
    pub latency_us: f64,
    /// Transfer time including the pipeline ramp, µs.
    pub transfer_us: f64,
    /// nccl-tests algorithm bandwidth `bytes / time`, GB/s.
    pub algbw_gbps: f64,
    /// nccl-tests bus bandwidth `algbw x factor`, GB/s.
    pub busbw_gbps: f64,
    /// Average traffic one GPU puts on its intra-node link during the call
    /// (per direction, protocol overhead included), GB/s.
    pub intra_load_gbps: f64,
    /// Average traffic one GPU's NIC share carries during the call, GB/s.
    pub nic_load_gbps: f64,
}

/// Physical per-GPU, per-direction link capacities of a placement (GB/s): the bound
/// [`Estimate::intra_load_gbps`] and [`Estimate::nic_load_gbps`] never exceed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capacity {
    /// Intra-node link (NVLink or PCIe) per GPU.
    pub intra_gbps: f64,
    /// NIC line rate per GPU (0 on one node).
    pub nic_gbps: f64,
}

/// The collective cost model: constants plus the pricing rules.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CommModel {
    constants: CommConstants,
}

/// A priced (algorithm, protocol) before the totals are formed.
struct Cand {
    algo: Algo,
    proto: Proto,
    lat: f64,
    t_bw: f64,
    ramp: bool,
    intra_bytes: f64,
    nic_bytes: f64,
}

/// Everything about a placement the candidates need, resolved once.
struct Ctx<'a> {
    c: &'a CommConstants,
    arch: &'a ArchConstants,
    intra: IntraConstants,
    net: &'a NetConstants,
    coll: Collective,
    s: f64,
    n: f64,
    k: f64,
    nodes: u32,
    g: f64,
    ppn_max: f64,
    /// Intra-node ring bus bandwidth (GB/s).
    b_intra: f64,
    /// Node network bandwidth per direction available to the job (GB/s), after
    /// efficiency and oversubscription; infinite on one node.
    b_net: f64,
    /// Each GPU's own NIC rate in all-to-all (GB/s).
    a2a_nic: f64,
    /// Fabric latency added to each inter-node hop (µs).
    inter_extra: f64,
    launch: f64,
    ramp_cap: f64,
    protos: &'a [Proto],
    nvls: bool,
    rail: bool,
}

const PROTOS_ALL: [Proto; 3] = [Proto::Ll, Proto::Ll128, Proto::Simple];
const PROTOS_NO_LL128: [Proto; 2] = [Proto::Ll, Proto::Simple];

/// Bytes on the wire per data byte.
fn wire(p: Proto) -> f64 {
    match p {
        Proto::Ll => 2.0,
        Proto::Ll128 => 128.0 / 120.0,
        Proto::Simple => 1.0,
    }
}

fn pick(l: &super::ProtoLatency, p: Proto) -> f64 {
    match p {
        Proto::Ll => l.ll,
        Proto::Ll128 => l.ll128,
        Proto::Simple => l.simple,
    }
}

/// GB/s to bytes per µs.
const GB: f64 = 1e3;

impl CommModel {
    /// A model over `constants`, which must pass [`CommConstants::validate`].
    pub fn new(constants: CommConstants) -> Result<CommModel, CommError> {
        constants.validate()?;
        Ok(CommModel { constants })
    }

    /// The constants in use.
    pub fn constants(&self) -> &CommConstants {
        &self.constants
    }

    /// The intra-node link a placement really uses: NVLink pairs fall back to the
    /// generation's PCIe when more than two GPUs of a node take part.
    fn effective_intra(&self, p: &Placement) -> (IntraLink, IntraConstants) {
        let c = *self.constants.intra.get(p.intra);
        if c.pair_only && p.max_gpus_per_node() > 2 {
            let l = IntraLink::pcie_for(p.gpu);
            (l, *self.constants.intra.get(l))
        } else {
            (p.intra, c)
        }
    }

    /// Physical link capacities of `placement`.
    pub fn capacity(&self, placement: &Placement) -> Result<Capacity, CommError> {
        placement.validate()?;
        let (_, intra) = self.effective_intra(placement);
        let nic = if placement.nodes > 1 { placement.nic_gbytes_per_gpu() } else { 0.0 };
        Ok(Capacity { intra_gbps: intra.link_gbps, nic_gbps: nic })
    }

    /// Prices `coll` of `bytes` on `placement`: the fastest applicable algorithm and
    /// protocol, or the fastest protocol of a forced algorithm.
    pub fn estimate(
        &self,
        coll: Collective,
        bytes: u64,
        placement: &Placement,
        choice: AlgoChoice,
    ) -> Result<Estimate, CommError> {
        let all = self.candidates(coll, bytes, placement)?;
        let trivial = all.len() == 1 && all[0].algo == Algo::None;
        let mut best: Option<Estimate> = None;
        for e in all {
            let allowed = match choice {
                AlgoChoice::Auto => true,
                AlgoChoice::Force(a) => trivial || e.algo == a,
            };
            // Strict `<`: ties keep the earlier candidate, so the choice is stable.
            if allowed && best.is_none_or(|b| e.time_us < b.time_us) {
                best = Some(e);
            }
        }
        best.ok_or_else(|| match choice {
            AlgoChoice::Force(a) => CommError::AlgorithmUnavailable {
                algo: a.as_str(),
                collective: coll.as_str(),
                reason: unavailable_reason(coll, a),
            },
            AlgoChoice::Auto => CommError::AlgorithmUnavailable {
                algo: "auto",
                collective: coll.as_str(),
                reason: "no algorithm applies",
            },
        })
    }

    /// Every applicable (algorithm, protocol) priced, in the fixed order Ring, Tree,
    /// NVLS, NVLSTree, PAT, P2P x LL, LL128, Simple. One rank or zero bytes give a
    /// single zero-time estimate with algorithm [`Algo::None`].
    pub fn candidates(&self, coll: Collective, bytes: u64, placement: &Placement) -> Result<Vec<Estimate>, CommError> {
        placement.validate()?;
        let c = &self.constants;
        let p = placement;
        let factor = coll.busbw_factor(p.ranks);
        if p.ranks == 1 || bytes == 0 {
            return Ok(vec![Estimate {
                collective: coll,
                bytes,
                ranks: p.ranks,
                algo: Algo::None,
                proto: Proto::Simple,
                time_us: 0.0,
                latency_us: 0.0,
                transfer_us: 0.0,
                algbw_gbps: 0.0,
                busbw_gbps: 0.0,
                intra_load_gbps: 0.0,
                nic_load_gbps: 0.0,
            }]);
        }
        let (_, intra) = self.effective_intra(p);
        let arch = c.arch.get(p.gpu);
        let net = c.net.get(p.net);
        let n = f64::from(p.ranks);
        let g = f64::from(p.min_gpus_per_node);
        let multi = p.nodes > 1;
        // Uplinks shared with other traffic divide a crossing flow's rate.
        let divisor = 1.0 + c.oversubscription_exposure * (p.oversubscription() - 1.0).max(0.0);
        let nic = p.nic_gbytes_per_gpu();
        let (b_net, a2a_nic) = if multi {
            (g * nic * net.efficiency / divisor, nic * net.alltoall_efficiency / divisor)
        } else {
            (f64::INFINITY, f64::INFINITY)
        };
        // Leaf hop is in the fabric latency; every tier above adds an up and a down hop.
        let inter_extra = net.latency_us + 2.0 * f64::from(p.tier.max(1) - 1) * net.switch_hop_us;
        let ctx = Ctx {
            c,
            arch,
            intra,
            net,
            coll,
            s: bytes as f64,
            n,
            k: f64::from(p.nodes),
            nodes: p.nodes,
            g,
            ppn_max: f64::from(p.max_gpus_per_node()),
            b_intra: intra.ring_busbw_gbps,
            b_net,
            a2a_nic,
            inter_extra,
            launch: c.launch_us + c.launch_us_per_log2_rank * n.log2(),
            ramp_cap: if multi { c.ramp_cap_us.max(net.ramp_cap_us) } else { c.ramp_cap_us },
            protos: if intra.ll128 { &PROTOS_ALL } else { &PROTOS_NO_LL128 },
            nvls: intra.nvls && arch.nvls_efficiency > 0.0 && p.min_gpus_per_node >= arch.nvls_min_gpus,
            rail: p.rail_optimized,
        };
        let mut cands = Vec::with_capacity(12);
        match coll {
            Collective::AllReduce => {
                ctx.ring(&mut cands);
                if multi {
                    ctx.tree(&mut cands);
                }
                if ctx.nvls {
                    if multi {
                        ctx.nvls_tree(&mut cands);
                    } else {
                        ctx.nvls_single(&mut cands);
                    }
                }
            }
            Collective::AllGather | Collective::ReduceScatter => {
                ctx.ring(&mut cands);
                if multi && p.max_gpus_per_node() == 1 {
                    ctx.pat(&mut cands);
                }
            }
            Collective::Broadcast => ctx.ring(&mut cands),
            Collective::AllToAll => ctx.p2p(&mut cands),
        }
        Ok(cands
            .into_iter()
            .map(|k| {
                let ramp = if k.ramp { (c.ramp_fraction * k.t_bw).min(ctx.ramp_cap) } else { 0.0 };
                let latency = ctx.launch + k.lat;
                let transfer = k.t_bw + ramp;
                let time = latency + transfer;
                let algbw = ctx.s / (time * GB);
                Estimate {
                    collective: coll,
                    bytes,
                    ranks: p.ranks,
                    algo: k.algo,
                    proto: k.proto,
                    time_us: time,
                    latency_us: latency,
                    transfer_us: transfer,
                    algbw_gbps: algbw,
                    busbw_gbps: algbw * factor,
                    intra_load_gbps: k.intra_bytes / (time * GB),
                    nic_load_gbps: k.nic_bytes / (time * GB),
                }
            })
            .collect())
    }

    /// An nccl-tests-like sweep: sizes `min_bytes`, `min_bytes·factor`, ... up to
    /// `max_bytes` (at most 64 rows), each priced with `choice`.
    pub fn sweep(
        &self,
        coll: Collective,
        placement: &Placement,
        choice: AlgoChoice,
        min_bytes: u64,
        max_bytes: u64,
        factor: u64,
    ) -> Result<Vec<Estimate>, CommError> {
        if factor < 2 || min_bytes == 0 || max_bytes < min_bytes {
            return Err(CommError::InvalidSweep(format!(
                "sweep needs 0 < min ({min_bytes}) <= max ({max_bytes}) and factor ({factor}) >= 2"
            )));
        }
        let mut rows = Vec::new();
        let mut size = Some(min_bytes);
        while let Some(s) = size.filter(|s| *s <= max_bytes && rows.len() < 64) {
            rows.push(self.estimate(coll, s, placement, choice)?);
            size = s.checked_mul(factor);
        }
        Ok(rows)
    }
}

fn unavailable_reason(coll: Collective, a: Algo) -> &'static str {
    match (coll, a) {
        (Collective::AllToAll, _) => "all-to-all only runs point-to-point (p2p)",
        (_, Algo::P2p) => "p2p only runs all-to-all",
        (Collective::AllReduce, Algo::Tree) => "tree needs two or more nodes",
        (Collective::AllReduce, Algo::Nvls) => {
            "NVLS needs one NVSwitch node (Hopper or newer) with enough GPUs of the job"
        }
        (Collective::AllReduce, Algo::NvlsTree) => {
            "NVLSTree needs two or more NVSwitch nodes (Hopper or newer) with enough GPUs of the job on each"
        }
        (Collective::AllGather | Collective::ReduceScatter, Algo::Pat) => {
            "PAT needs two or more nodes with one GPU each"
        }
        (Collective::Broadcast, _) => "broadcast only runs ring",
        _ => "the algorithm does not implement this collective",
    }
}

impl Ctx<'_> {
    fn lat_row(&self) -> &super::AlgoLatency {
        match self.intra.kind {
            LinkKind::Nvlink => &self.c.latency.nvlink,
            LinkKind::Pci => &self.c.latency.pci,
        }
    }

    fn multi(&self) -> bool {
        self.nodes > 1
    }

    /// Latency added to an inter-node hop on top of NCCL's table, for protocol `p`.
    fn hop_extra(&self, p: Proto) -> f64 {
        self.inter_extra + if p == Proto::Ll { 0.0 } else { self.net.simple_hop_us }
    }

    /// Flat ring; also broadcast (a pipelined chain over the same ring order).
    fn ring(&self, out: &mut Vec<Cand>) {
        let c = self.c;
        let (n, k) = (self.n, self.k);
        let ar = self.coll == Collective::AllReduce;
        let (nsteps, ninter) = if ar { (2.0 * (n - 1.0), 2.0 * (k - 1.0)) } else { (n - 1.0, k - 1.0) };
        // Bytes each rank sends (and receives).
        let per_rank = self.s * self.coll.busbw_factor(self.n as u32);
        let b = self.b_intra.min(self.b_net);
        let ll_cap = self.arch.ll_max_busbw_gbps.get(self.nodes);
        let channels = f64::from(self.arch.channels);
        for &p in self.protos {
            let intra_lat = pick(&self.lat_row().ring, p);
            let overhead =
                if self.multi() { self.net.net_overhead_us * if p == Proto::Simple { 3.0 } else { 1.0 } } else { 0.0 };
            let inter_lat = pick(&c.latency.net.ring, p) + self.hop_extra(p);
            let mut lat =
                pick(&c.latency.base.ring, p) + (nsteps - ninter) * intra_lat.max(overhead) + ninter * inter_lat;
            if ar && p == Proto::Simple && self.multi() && self.s / (channels * n) >= 64.0 {
                lat *= self.arch.ring_plateau_factor;
            }
            let busbw = match p {
                Proto::Ll => ll_cap.min(c.ll_efficiency * b),
                Proto::Ll128 => (c.ll128_efficiency * b).min(channels * self.arch.ring_ll128_per_channel_gbps),
                Proto::Simple => b,
            };
            out.push(Cand {
                algo: Algo::Ring,
                proto: p,
                lat,
                t_bw: per_rank / (busbw * GB),
                ramp: p != Proto::Ll,
                intra_bytes: per_rank * wire(p),
                nic_bytes: if self.multi() { per_rank * wire(p) / self.g } else { 0.0 },
            });
        }
    }

    /// Double binary tree across nodes, chain inside: per node S (2 nodes) or 2S (more)
    /// crosses the NICs; each GPU of the chain sends 2S over its intra link.
    fn tree(&self, out: &mut Vec<Cand>) {
        let c = self.c;
        let per_node = if self.nodes == 2 { 1.0 } else { 2.0 };
        let phys = (self.b_intra / 2.0).min(self.b_net / per_node);
        let nbus = 2.0 * phys;
        let channels = f64::from(self.arch.channels);
        let ll_cap = self.arch.ll_max_busbw_gbps.get(self.nodes);
        for &p in self.protos {
            let lat = pick(&c.latency.base.tree, p)
                + 2.0
                    * ((self.ppn_max - 1.0) * pick(&self.lat_row().tree, p)
                        + self.k.log2() * (pick(&c.latency.net.tree, p) + self.hop_extra(p)));
            let algbw = 0.5
                * match p {
                    Proto::Ll => (nbus * c.tree_ll_efficiency).min(ll_cap),
                    Proto::Ll128 => (nbus * c.tree_ll128_efficiency)
                        .min(channels * self.arch.tree_ll128_per_channel_gbps.get(self.nodes)),
                    Proto::Simple => {
                        (nbus * c.tree_efficiency).min(channels * self.arch.tree_per_channel_gbps.get(self.nodes))
                    }
                };
            out.push(Cand {
                algo: Algo::Tree,
                proto: p,
                lat,
                t_bw: self.s / (algbw * GB),
                ramp: p != Proto::Ll,
                intra_bytes: 2.0 * self.s * wire(p),
                nic_bytes: per_node * self.s * wire(p) / self.g,
            });
        }
    }

    /// NVLS all-reduce bandwidth inside one node of `g` GPUs: each GPU moves
    /// S(g+1)/g per direction through the switch.
    fn nvls_algbw(&self) -> f64 {
        let link = self.intra.link_gbps * self.arch.nvls_efficiency;
        self.g * link / (self.g + 1.0)
    }

    fn nvls_single(&self, out: &mut Vec<Cand>) {
        let c = self.c;
        out.push(Cand {
            algo: Algo::Nvls,
            proto: Proto::Simple,
            lat: c.latency.base.nvls + self.lat_row().nvls,
            t_bw: self.s / (self.nvls_algbw() * GB),
            ramp: true,
            intra_bytes: self.s * (self.g + 1.0) / self.g,
            nic_bytes: 0.0,
        });
    }

    /// NVLS inside each node, tree of per-GPU shards (S/g) across nodes; both stages
    /// run at once and share the SMs.
    fn nvls_tree(&self, out: &mut Vec<Cand>) {
        let c = self.c;
        let per_node = if self.nodes == 2 { 1.0 } else { 2.0 };
        let algbw = c.nvls_tree_efficiency * self.nvls_algbw().min(self.b_net / per_node);
        out.push(Cand {
            algo: Algo::NvlsTree,
            proto: Proto::Simple,
            lat: c.latency.base.nvls_tree
                + self.lat_row().nvls_tree
                + 2.0 * self.k.log2() * (c.latency.net.nvls_tree + self.hop_extra(Proto::Simple)),
            t_bw: self.s / (algbw * GB),
            ramp: true,
            intra_bytes: self.s * (self.g + 1.0) / self.g,
            nic_bytes: per_node * self.s / self.g,
        });
    }

    /// PAT all-gather/reduce-scatter, one GPU per node.
    fn pat(&self, out: &mut Vec<Cand>) {
        let c = self.c;
        let lat = c.latency.base.pat
            + self.k.log2() * (c.latency.net.pat + self.hop_extra(Proto::Simple)) / c.latency.pat_hop_divisor
            + c.latency.pat_per_rank_us * self.n;
        let busbw = c.pat_efficiency * self.b_intra.min(self.b_net);
        let per_rank = self.s * (self.n - 1.0) / self.n;
        out.push(Cand {
            algo: Algo::Pat,
            proto: Proto::Simple,
            lat,
            t_bw: per_rank / (busbw * GB),
            ramp: true,
            intra_bytes: 0.0,
            nic_bytes: per_rank,
        });
    }

    /// All-to-all as grouped sends: off-node bytes leave through each GPU's own NIC
    /// (no aggregation), on-node bytes over the intra link. Many peers are in flight
    /// at once: the call pays one hop per kind of link, then an issue cost per
    /// off-node peer rather than a hop each.
    fn p2p(&self, out: &mut Vec<Cand>) {
        let c = self.c;
        let (n, g) = (self.n, self.g);
        let off = self.s * (n - g) / n;
        let on = self.s * (g - 1.0) / n;
        let pxn = if self.rail && self.multi() { off * (g - 1.0) / g } else { 0.0 };
        let nic_rate = self.a2a_nic.min(self.b_intra);
        let t_nic = if self.multi() { off / (nic_rate * GB) } else { 0.0 };
        // On PCIe nodes the NIC traffic shares the GPU's only port with the peers'.
        let port_bytes = match self.intra.kind {
            LinkKind::Pci => on + pxn + off,
            LinkKind::Nvlink => on + pxn,
        };
        let t_port = port_bytes / (self.b_intra * GB);
        let simple = Proto::Simple;
        // One hop over each kind of link used, plus an issue cost per off-node peer.
        let mut lat = pick(&c.latency.base.ring, simple);
        if self.ppn_max > 1.0 {
            lat += pick(&self.lat_row().ring, simple);
        }
        if self.multi() {
            lat += pick(&c.latency.net.ring, simple) + self.hop_extra(simple) + (n - g) * self.net.p2p_peer_us;
        }
        out.push(Cand {
            algo: Algo::P2p,
            proto: simple,
            lat,
            t_bw: t_nic.max(t_port),
            ramp: true,
            intra_bytes: port_bytes,
            nic_bytes: off,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100(g: u32, k: u32) -> Placement {
        Placement::uniform(GpuGen::Hopper, IntraLink::NvswitchNvlink4, g, k, 400.0, NetFabric::Ib)
    }

    #[test]
    fn busbw_factor_matches_nccl_tests() {
        assert_eq!(Collective::AllReduce.busbw_factor(8), 1.75);
        assert_eq!(Collective::AllGather.busbw_factor(8), 0.875);
        assert_eq!(Collective::Broadcast.busbw_factor(8), 1.0);
        assert_eq!(Collective::AllToAll.busbw_factor(4), 0.75);
    }

    #[test]
    fn nvls_needs_enough_gpus_on_hopper() {
        let m = CommModel::default();
        let big = 8u64 << 30;
        let e8 = m.estimate(Collective::AllReduce, big, &h100(8, 1), AlgoChoice::Auto).unwrap();
        assert_eq!(e8.algo, Algo::Nvls);
        let e4 = m.estimate(Collective::AllReduce, big, &h100(4, 1), AlgoChoice::Auto).unwrap();
        assert_eq!(e4.algo, Algo::Ring);
        let a100 = Placement::single_node(GpuGen::Ampere, IntraLink::NvswitchNvlink3, 8);
        let ea = m.estimate(Collective::AllReduce, big, &a100, AlgoChoice::Auto).unwrap();
        assert_eq!(ea.algo, Algo::Ring);
        let err = m.estimate(Collective::AllReduce, big, &a100, AlgoChoice::Force(Algo::Nvls)).unwrap_err();
        assert!(matches!(err, CommError::AlgorithmUnavailable { algo: "nvls", .. }));
    }

    #[test]
    fn small_messages_pick_ll_large_pick_simple() {
        let m = CommModel::default();
        let a100 = Placement::single_node(GpuGen::Ampere, IntraLink::NvswitchNvlink3, 8);
        let small = m.estimate(Collective::AllReduce, 8192, &a100, AlgoChoice::Auto).unwrap();
        assert_eq!((small.algo, small.proto), (Algo::Ring, Proto::Ll));
        let large = m.estimate(Collective::AllReduce, 1 << 30, &a100, AlgoChoice::Auto).unwrap();
        assert_eq!((large.algo, large.proto), (Algo::Ring, Proto::Simple));
        assert!((large.busbw_gbps - 232.0).abs() < 10.0, "{large:?}");
    }

    #[test]
    fn forced_ring_ignores_faster_algorithms() {
        let m = CommModel::default();
        let e = m.estimate(Collective::AllReduce, 8 << 30, &h100(8, 1), AlgoChoice::Force(Algo::Ring)).unwrap();
        assert_eq!(e.algo, Algo::Ring);
        assert!((e.busbw_gbps - 367.0).abs() < 5.0);
    }

    #[test]
    fn trivial_calls_cost_nothing() {
        let m = CommModel::default();
        let one = h100(1, 1);
        let e = m.estimate(Collective::AllReduce, 1 << 20, &one, AlgoChoice::Auto).unwrap();
        assert_eq!((e.algo, e.time_us), (Algo::None, 0.0));
        let e = m.estimate(Collective::AllReduce, 0, &h100(8, 2), AlgoChoice::Force(Algo::Ring)).unwrap();
        assert_eq!(e.time_us, 0.0);
    }

    #[test]
    fn invalid_placements_are_errors() {
        let m = CommModel::default();
        let mut p = h100(8, 2);
        p.nic_mbps_per_gpu = 0;
        assert!(matches!(
            m.estimate(Collective::AllReduce, 1, &p, AlgoChoice::Auto),
            Err(CommError::InvalidPlacement(_))
        ));
        let p = h100(0, 1);
        assert!(m.estimate(Collective::AllReduce, 1, &p, AlgoChoice::Auto).is_err());
        let p = h100(8, 2).crossing(2, 0.5);
        assert!(m.estimate(Collective::AllReduce, 1, &p, AlgoChoice::Auto).is_err());
        let mut p = h100(8, 1);
        p.ranks = 9;
        assert!(m.estimate(Collective::AllReduce, 1, &p, AlgoChoice::Auto).is_err());
    }

    #[test]
    fn nvlink_pairs_fall_back_to_pcie_beyond_two_gpus() {
        let m = CommModel::default();
        let pair = Placement::single_node(GpuGen::Ampere, IntraLink::NvlinkBridgeNv12, 2);
        let quad = Placement::single_node(GpuGen::Ampere, IntraLink::NvlinkBridgeNv12, 4);
        let e2 = m.estimate(Collective::AllReduce, 1 << 30, &pair, AlgoChoice::Auto).unwrap();
        let e4 = m.estimate(Collective::AllReduce, 1 << 30, &quad, AlgoChoice::Auto).unwrap();
        assert!(e2.busbw_gbps > 150.0 && e4.busbw_gbps < 20.0, "{e2:?} {e4:?}");
        assert_eq!(m.capacity(&quad).unwrap().intra_gbps, 24.0);
    }

    #[test]
    fn every_collective_prices() {
        let m = CommModel::default();
        for coll in Collective::ALL {
            for p in [h100(8, 1), h100(8, 4), h100(1, 4)] {
                let e = m.estimate(coll, 1 << 24, &p, AlgoChoice::Auto).unwrap();
                assert!(e.time_us.is_finite() && e.time_us > 0.0, "{coll:?} {p:?} {e:?}");
            }
        }
        let pat = m.estimate(Collective::AllGather, 1 << 16, &h100(1, 8), AlgoChoice::Force(Algo::Pat)).unwrap();
        assert_eq!(pat.algo, Algo::Pat);
    }

    #[test]
    fn sweep_doubles_sizes() {
        let m = CommModel::default();
        let rows = m.sweep(Collective::AllReduce, &h100(8, 1), AlgoChoice::Auto, 8, 8 << 30, 2).unwrap();
        assert_eq!(rows.len(), 31);
        assert_eq!(rows.last().unwrap().bytes, 8 << 30);
        assert!(rows.windows(2).all(|w| w[0].time_us <= w[1].time_us));
        assert!(m.sweep(Collective::AllReduce, &h100(8, 1), AlgoChoice::Auto, 8, 4, 2).is_err());
        assert!(m.sweep(Collective::AllReduce, &h100(8, 1), AlgoChoice::Auto, 8, 64, 1).is_err());
        let huge = m.sweep(Collective::AllReduce, &h100(8, 1), AlgoChoice::Auto, 1, u64::MAX, 2).unwrap();
        assert_eq!(huge.len(), 64);
    }
}
