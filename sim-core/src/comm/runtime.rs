//! Job run time from the communication model.
//!
//! A job with a model profile runs iterations of
//!
//! ```text
//! t_iter = compute · (1 + bubble) + (1 − overlap) · T_dp + T_tp + T_pp
//! ```
//!
//! on its GPUs laid out as Megatron-LM lays out ranks (tensor-parallel ranks
//! innermost, then data-parallel, pipeline stages outermost; ranks fill the job's
//! nodes in order):
//! - `compute`: the profile's per-GPU step time on an A100 over the GPU generation's
//!   relative speed. Each GPU does the same work whatever the parallelism (the
//!   global batch grows with the GPU count).
//! - `T_dp`: one all-reduce of the gradients each rank holds
//!   (`grad_bytes / (tp · pp)`) over a data-parallel group, the slowest group.
//! - `T_tp`: Megatron's tensor-parallel all-reduces, four per layer per micro-batch
//!   (two forward, two backward) of one micro-batch's activations
//!   (`seq_len · hidden · 2` bytes), over the slowest tensor-parallel group; they
//!   sit on the critical path and are not overlapped.
//! - pipeline (1F1B): a bubble of `(pp − 1) / m` of the compute for `m` micro-batches
//!   per replica, and `2 (m + pp − 1)` point-to-point activation transfers
//!   (`seq_len · hidden · 2 / tp` bytes each, scattered over the tensor ranks) across
//!   the slowest stage boundary.
//!
//! A job's traced or configured `duration` is its run time under the best placement:
//! its GPUs packed on the fewest nodes of the cluster's fastest node kind under one
//! leaf ([`CommRuntime::reference_iteration_us`]), so its speed is
//! `ideal t_iter / actual t_iter` and a spread placement, or slower GPUs, stretch
//! the run (a job spanning two GPU generations computes at the slower). A job given
//! a number of `iterations` instead does `iterations · t_iter` of work priced on
//! that same ideal.
//!
//! With link sharing on ([`CommRuntime::with_link_sharing`]), jobs that cross the
//! same oversubscribed uplink share it max-min fairly, so a job's speed also depends
//! on its neighbours (see [`max_min_shares`]). Estimates of data-parallel-only jobs
//! are memoized per (profile, placement).

pub use super::profile::{CATALOG, JobProfile, ModelProfile};
use super::{AdapterOptions, AlgoChoice, Collective, CommError, CommModel, GpuGen, Placement};
use crate::model::cluster::Cluster;
use crate::model::ids::HyperNodeId;
use crate::model::ids::JobId;
use crate::model::ids::NodeId;
use crate::model::job::PodStatus;
use crate::model::progress::FULL_SPEED_PPM;
use crate::runtime_model::RuntimeModel;
use crate::world::World;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

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

/// How fast `p` computes on GPU model `gpu` relative to an A100: the published
/// throughput of its catalog model on that GPU ([`super::throughput::published`]),
/// else `generation`'s [`relative_speed`].
pub fn compute_speed(p: &JobProfile, gpu: &str, generation: GpuGen) -> f64 {
    super::throughput::published(&p.name, gpu).unwrap_or_else(|| relative_speed(generation))
}

/// Bytes per activation element (bf16).
const ACT_BYTES: u64 = 2;

/// The distinct communicator placements of a job: every data-parallel group,
/// tensor-parallel group and pipeline stage boundary (two ranks), deduplicated.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Communicators {
    /// Data-parallel groups (empty when the degree is 1).
    pub dp: Vec<Placement>,
    /// Tensor-parallel groups (empty when the degree is 1).
    pub tp: Vec<Placement>,
    /// Stage boundaries (empty when there is one stage).
    pub pp: Vec<Placement>,
}

/// Megatron-LM's rank layout on nodes holding `per_node` GPUs each (ranks fill the
/// nodes in order): calls `make` with (node index, ranks on it) for every group and
/// boundary and collects the distinct placements.
pub fn communicators<F>(per_node: &[u32], tp: u32, pp: u32, mut make: F) -> Result<Communicators, CommError>
where
    F: FnMut(&[(usize, u32)]) -> Result<Placement, CommError>,
{
    let node_of: Vec<usize> =
        per_node.iter().enumerate().flat_map(|(i, &g)| std::iter::repeat_n(i, g as usize)).collect();
    let g = node_of.len() as u64;
    let (t, s) = (u64::from(tp.max(1)), u64::from(pp.max(1)));
    if g == 0 || !g.is_multiple_of(t * s) {
        return Err(CommError::InvalidPlacement(format!("{g} ranks do not split into tp {t} x pp {s}")));
    }
    let d = g / (t * s);
    let rank = |ti: u64, di: u64, si: u64| (ti + t * (di + d * si)) as usize;
    let mut group = |ranks: &mut dyn Iterator<Item = usize>, set: &mut BTreeSet<Placement>| {
        let mut counts: BTreeMap<usize, u32> = BTreeMap::new();
        for r in ranks {
            *counts.entry(node_of[r]).or_default() += 1;
        }
        let sub: Vec<(usize, u32)> = counts.into_iter().collect();
        make(&sub).map(|p| {
            set.insert(p);
        })
    };
    let (mut dps, mut tps, mut pps) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for si in 0..s {
        for ti in 0..t {
            if d > 1 {
                group(&mut (0..d).map(|di| rank(ti, di, si)), &mut dps)?;
            }
        }
        for di in 0..d {
            if t > 1 {
                group(&mut (0..t).map(|ti| rank(ti, di, si)), &mut tps)?;
            }
            if si + 1 < s {
                for ti in 0..t {
                    group(&mut [rank(ti, di, si), rank(ti, di, si + 1)].into_iter(), &mut pps)?;
                }
            }
        }
    }
    Ok(Communicators { dp: dps.into_iter().collect(), tp: tps.into_iter().collect(), pp: pps.into_iter().collect() })
}

/// Time of one iteration of `p` whose communicators are `c`, on GPUs that compute
/// `speed` times as fast as an A100 ([`compute_speed`]).
pub fn iteration_us(model: &CommModel, p: &JobProfile, speed: f64, c: &Communicators) -> Result<f64, CommError> {
    let worst = |coll: Collective, bytes: u64, ps: &[Placement]| -> Result<f64, CommError> {
        let mut w = 0.0f64;
        for pl in ps {
            w = w.max(model.estimate(coll, bytes, pl, AlgoChoice::Auto)?.time_us);
        }
        Ok(w)
    };
    let (t, s) = (u64::from(p.tensor_parallel.max(1)), u64::from(p.pipeline_parallel.max(1)));
    let compute = p.a100_step_us / speed;
    let mut it = compute + (1.0 - p.overlap) * worst(Collective::AllReduce, p.grad_bytes / (t * s), &c.dp)?;
    let seq = u64::from(p.seq_len.max(1));
    let act = seq * u64::from(p.hidden) * ACT_BYTES;
    if t > 1 {
        let calls = 4 * u64::from(p.layers) * t * p.tokens_per_step / seq;
        it += calls as f64 * worst(Collective::AllReduce, act, &c.tp)?;
    }
    if s > 1 {
        let m = (t * s * p.tokens_per_step / seq).max(1);
        it += compute * (s - 1) as f64 / m as f64;
        it += (2 * (m + s - 1)) as f64 * worst(Collective::Broadcast, act / t, &c.pp)?;
    }
    Ok(it)
}

/// One node's kind as a one-node placement template (its generation, intra-node
/// link and NIC rate per GPU), for pricing layouts that exist only on paper.
fn template(model: &CommModel, cluster: &Cluster, node: NodeId, opts: &AdapterOptions) -> Option<(Placement, u32)> {
    let n = cluster.nodes.get(node)?;
    let gpus = u32::try_from(n.gpus()).ok().filter(|&g| g > 0)?;
    let mut p = model.placement(cluster, &[(node, gpus)], opts).ok()?;
    p.nic_mbps_per_gpu = (u64::from(n.nics.count) * u64::from(n.nics.gbps) * 1000 / u64::from(gpus)) as u32;
    Some((p, gpus))
}

/// Communicators of `gpus` GPUs packed on nodes like `tpl` (of `node_gpus` GPUs)
/// under one leaf with 1:1 uplinks: the best placement those GPUs can have.
fn packed(p: &JobProfile, tpl: &Placement, node_gpus: u32, gpus: u32) -> Result<Communicators, CommError> {
    let per = node_gpus.max(1);
    let mut per_node = vec![per; (gpus / per) as usize];
    if !gpus.is_multiple_of(per) {
        per_node.push(gpus % per);
    }
    communicators(&per_node, p.tensor_parallel, p.pipeline_parallel, |sub| {
        let ranks: u32 = sub.iter().map(|x| x.1).sum();
        let nodes = sub.len() as u32;
        let q = Placement {
            ranks,
            nodes,
            min_gpus_per_node: sub.iter().map(|x| x.1).min().unwrap_or(1),
            tier: u32::from(nodes > 1),
            oversubscription_milli: 1000,
            nic_mbps_per_gpu: if nodes > 1 { tpl.nic_mbps_per_gpu } else { 0 },
            ..*tpl
        };
        q.validate().map(|_| q)
    })
}

/// The node kind `iterations` jobs are priced on ([`CommRuntime::reference`]).
#[derive(Clone, Debug)]
pub struct ReferenceNode {
    tpl: Placement,
    node_gpus: u32,
    /// The cluster's GPU models with their generations (distinct, sorted).
    gpus: Vec<(String, GpuGen)>,
}

impl ReferenceNode {
    /// Ideal iteration time of `p` on `gpus` GPUs packed on nodes of this kind,
    /// computing as fast as the cluster's fastest GPU for `p`.
    pub fn iteration_us(&self, model: &CommModel, p: &JobProfile, gpus: u32) -> Result<f64, CommError> {
        iteration_us(model, p, fastest(p, &self.gpus), &packed(p, &self.tpl, self.node_gpus, gpus)?)
    }
}

/// The GPU models of `cluster`'s GPU nodes whose generation is known, with it.
fn gpu_models(model: &CommModel, cluster: &Cluster) -> Vec<(String, GpuGen)> {
    let mut out: Vec<(String, GpuGen)> = cluster
        .nodes
        .iter()
        .filter(|n| n.gpus() > 0)
        .filter_map(|n| model.constants().gpu_gen(&n.gpu_model).ok().map(|g| (n.gpu_model.clone(), g)))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The compute speed of `p` on the fastest of `gpus` for it (1 when none).
fn fastest(p: &JobProfile, gpus: &[(String, GpuGen)]) -> f64 {
    gpus.iter().map(|(m, g)| compute_speed(p, m, *g)).reduce(f64::max).unwrap_or(1.0)
}

/// A [`RuntimeModel`] backed by the collective cost model.
pub struct CommRuntime {
    model: CommModel,
    opts: AdapterOptions,
    /// Distinct profiles.
    profiles: Vec<JobProfile>,
    /// Profile index per job id (`None`: the job runs at its ideal speed anywhere).
    job_profile: Vec<Option<u32>>,
    /// The cluster's fastest node kind (prices `iterations` jobs' ideal), with its GPUs.
    reference: Option<(Placement, u32)>,
    /// Each node's GPU model: an index into the cluster's distinct GPU models
    /// (`None` without GPUs or a known generation).
    node_gpu: Vec<Option<u16>>,
    /// The cluster's GPU models with their generations (distinct, sorted).
    gpus: Vec<(String, GpuGen)>,
    /// Per distinct profile: its compute speed on each of `gpus`, and the fastest.
    speeds: Vec<(Vec<f64>, f64)>,
    /// Max-min sharing of oversubscribed uplinks between jobs.
    sharing: bool,
    /// Effective oversubscription (milli) each running job sees under sharing.
    shares: Mutex<BTreeMap<JobId, u32>>,
    /// Speeds by (profile, placement, bits of the slowest GPU's compute speed):
    /// placements of one generation may hold GPU models of different speeds.
    cache: Mutex<BTreeMap<(u32, Placement, u64), u32>>,
}

impl CommRuntime {
    /// A runtime for jobs with the given profiles (indexed by job id) on `cluster`.
    pub fn new(model: CommModel, cluster: &Cluster, profiles: Vec<Option<Arc<JobProfile>>>) -> CommRuntime {
        let opts = AdapterOptions::default();
        let reference = Self::reference_node(&model, cluster, &opts);
        let gpus = gpu_models(&model, cluster);
        let node_gpu = cluster
            .nodes
            .iter()
            .map(|n| gpus.binary_search_by(|(m, _)| m.as_str().cmp(&n.gpu_model)).ok().map(|i| i as u16))
            .collect();
        let mut rt = CommRuntime {
            node_gpu,
            gpus,
            speeds: Vec::new(),
            model,
            opts,
            profiles: Vec::new(),
            job_profile: Vec::new(),
            reference,
            sharing: false,
            shares: Mutex::new(BTreeMap::new()),
            cache: Mutex::new(BTreeMap::new()),
        };
        rt.job_profile = profiles.into_iter().map(|p| p.map(|p| rt.distinct(p))).collect();
        rt
    }

    /// The index of `p` among the distinct profiles, added (with its compute
    /// speed on each of the cluster's GPU models) when new.
    fn distinct(&mut self, p: Arc<JobProfile>) -> u32 {
        match self.profiles.iter().position(|d| *d == *p) {
            Some(i) => i as u32,
            None => {
                let on: Vec<f64> = self.gpus.iter().map(|(m, g)| compute_speed(&p, m, *g)).collect();
                let top = fastest(&p, &self.gpus);
                self.speeds.push((on, top));
                self.profiles.push(Arc::unwrap_or_clone(p));
                self.profiles.len() as u32 - 1
            }
        }
    }

    /// Turns max-min sharing of oversubscribed uplinks on or off.
    pub fn with_link_sharing(mut self, on: bool) -> CommRuntime {
        self.sharing = on;
        self
    }

    /// The node kind with the fastest GPUs (then the most GPUs; then the first).
    fn reference_node(model: &CommModel, cluster: &Cluster, opts: &AdapterOptions) -> Option<(Placement, u32)> {
        let mut best: Option<(Placement, u32)> = None;
        for i in 0..cluster.nodes.len() {
            if let Some((p, g)) = template(model, cluster, NodeId(i as u32), opts) {
                let better = best.as_ref().is_none_or(|(b, bg)| {
                    (relative_speed(p.gpu), g) > (relative_speed(b.gpu), *bg)
                        || (relative_speed(p.gpu) == relative_speed(b.gpu)
                            && g == *bg
                            && p.nic_mbps_per_gpu > b.nic_mbps_per_gpu)
                });
                if better {
                    best = Some((p, g));
                }
            }
        }
        best
    }

    /// Ideal iteration time of `p` on `gpus` GPUs packed on the cluster's fastest
    /// node kind: an `iterations` job's work is `iterations` times this.
    pub fn reference_iteration_us(
        model: &CommModel,
        cluster: &Cluster,
        p: &JobProfile,
        gpus: u32,
    ) -> Result<f64, CommError> {
        Self::reference(model, cluster)?.iteration_us(model, p, gpus)
    }

    /// The cluster's fastest node kind, which prices `iterations` jobs (found once
    /// for many jobs: the search visits every node).
    pub fn reference(model: &CommModel, cluster: &Cluster) -> Result<ReferenceNode, CommError> {
        let (tpl, node_gpus) = Self::reference_node(model, cluster, &AdapterOptions::default()).ok_or_else(|| {
            CommError::InvalidPlacement("the cluster has no node with GPUs and a known GPU model".into())
        })?;
        Ok(ReferenceNode { tpl, node_gpus, gpus: gpu_models(model, cluster) })
    }

    /// Speed (ppm of ideal) of `p` on the job's `alloc` (node, GPUs), where `share`
    /// caps the oversubscription the job's groups see (sharing mode).
    fn speed(&self, world: &World, idx: u32, alloc: &[(NodeId, u32)], share: Option<u32>) -> Option<u32> {
        let p = &self.profiles[idx as usize];
        let cluster = &world.cluster;
        let whole = self.model.placement(cluster, alloc, &self.opts).ok()?;
        let per_node: Vec<u32> = alloc.iter().map(|a| a.1).collect();
        let actual = communicators(&per_node, p.tensor_parallel, p.pipeline_parallel, |sub| {
            let a: Vec<(NodeId, u32)> = sub.iter().map(|&(i, g)| (alloc[i].0, g)).collect();
            let mut q = self.model.placement(cluster, &a, &self.opts)?;
            if let Some(s) = share.filter(|_| q.nodes > 1) {
                q.oversubscription_milli = q.oversubscription_milli.min(s).max(1000);
            }
            Ok(q)
        })
        .ok()?;
        let a = iteration_us(&self.model, p, self.slowest(idx, alloc)?, &actual).ok()?;
        let ranks = whole.ranks;
        // Ideal: packed on the cluster's fastest node kind, computing as fast as its
        // fastest GPU for `p`, so a job on slower GPUs (or spanning a slower one)
        // runs slower than its `duration`.
        let (tpl, g) = self.reference.as_ref()?;
        let ideal = iteration_us(&self.model, p, self.speeds[idx as usize].1, &packed(p, tpl, *g, ranks).ok()?).ok()?;
        (a > 0.0).then(|| ((ideal / a) * FULL_SPEED_PPM as f64).clamp(1.0, FULL_SPEED_PPM as f64) as u32)
    }

    /// The compute speed of profile `idx` on the slowest GPU of `alloc` (`None` if
    /// a node's GPU generation is unknown).
    fn slowest(&self, idx: u32, alloc: &[(NodeId, u32)]) -> Option<f64> {
        let on = &self.speeds[idx as usize].0;
        let mut s: Option<f64> = None;
        for &(n, _) in alloc {
            let x = on[usize::from((*self.node_gpu.get(n.0 as usize)?)?)];
            s = Some(s.map_or(x, |a| a.min(x)));
        }
        s
    }

    /// The job's (node, GPUs) of its running pods, by node.
    fn alloc(world: &World, job: JobId) -> Vec<(NodeId, u32)> {
        let mut per_node: BTreeMap<NodeId, u32> = BTreeMap::new();
        for &pod in &world.jobs[job].pods {
            let pod = &world.pods[pod];
            if let (PodStatus::Running, Some(n)) = (pod.status, pod.node) {
                *per_node.entry(n).or_default() += pod.req.gpus_ceil() as u32;
            }
        }
        per_node.into_iter().filter(|x| x.1 > 0).collect()
    }

    fn profile_of(&self, job: JobId) -> Option<(u32, &JobProfile)> {
        let i = (*self.job_profile.get(job.0 as usize)?)?;
        Some((i, &self.profiles[i as usize]))
    }
}

/// One oversubscribed uplink: the uplink of a HyperNode of a fabric tier whose
/// oversubscription exceeds 1.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedLink {
    /// The group whose uplink this is.
    pub group: HyperNodeId,
    /// Capacity, Gbit/s: the NIC line rate of the group's nodes over the tier's oversubscription.
    pub capacity_gbps: f64,
    /// (job, its demand on the link in Gbit/s), by job id.
    pub demands: Vec<(JobId, f64)>,
}

/// Max-min fair shares by progressive filling: every job's rate is a fraction
/// `x ≤ 1` of its demand on all its links; all fractions rise together, and when a
/// link fills, the jobs on it freeze at the level it allows (the fullest link first;
/// ties to the lowest group id). Returns `x` per job, in job order.
pub fn max_min_shares(links: &[SharedLink]) -> BTreeMap<JobId, f64> {
    let mut x: BTreeMap<JobId, Option<f64>> = BTreeMap::new();
    for l in links {
        for &(j, _) in &l.demands {
            x.insert(j, None);
        }
    }
    loop {
        let mut best: Option<(f64, usize)> = None;
        for (i, l) in links.iter().enumerate() {
            let (mut frozen, mut open) = (0.0, 0.0);
            for &(j, d) in &l.demands {
                match x[&j] {
                    Some(f) => frozen += f * d,
                    None => open += d,
                }
            }
            if open > 0.0 {
                let level = ((l.capacity_gbps - frozen) / open).max(0.0);
                if best.is_none_or(|(b, _)| level < b) {
                    best = Some((level, i));
                }
            }
        }
        match best {
            Some((level, i)) if level < 1.0 => {
                for &(j, _) in &links[i].demands {
                    x.entry(j).and_modify(|f| {
                        f.get_or_insert(level);
                    });
                }
            }
            _ => break,
        }
    }
    x.into_iter().map(|(j, f)| (j, f.unwrap_or(1.0))).collect()
}

impl CommRuntime {
    /// The oversubscribed uplinks the running `jobs` cross, with their demands: a
    /// job crossing tier `h` uses the uplink of each of its groups below `h`, and
    /// puts on it the line rate of the NIC share of its GPUs in that group.
    pub fn shared_links(world: &World, jobs: &[JobId]) -> Vec<SharedLink> {
        let topo = &world.cluster.topology;
        let oversub: BTreeMap<u32, f64> = topo.fabric.iter().map(|t| (t.tier, t.oversubscription)).collect();
        let mut links: BTreeMap<HyperNodeId, Vec<(JobId, f64)>> = BTreeMap::new();
        for &j in jobs {
            let alloc = Self::alloc(world, j);
            let nodes: Vec<NodeId> = alloc.iter().map(|a| a.0).collect();
            let h = topo.highest_tier(&nodes);
            let mut demand: BTreeMap<HyperNodeId, f64> = BTreeMap::new();
            for &(n, g) in &alloc {
                let node = world.cluster.node(n);
                let rate =
                    f64::from(node.nics.count) * f64::from(node.nics.gbps) * f64::from(g) / node.gpus().max(1) as f64;
                for &grp in topo.chain(n) {
                    let t = topo.get(grp).tier;
                    if t < h && oversub.get(&t).is_some_and(|&o| o > 1.0) {
                        *demand.entry(grp).or_default() += rate;
                    }
                }
            }
            for (grp, d) in demand {
                links.entry(grp).or_default().push((j, d));
            }
        }
        links
            .into_iter()
            .map(|(group, demands)| {
                let hn = topo.get(group);
                let nic: f64 = hn
                    .nodes
                    .iter()
                    .map(|&n| {
                        let node = world.cluster.node(n);
                        f64::from(node.nics.count) * f64::from(node.nics.gbps)
                    })
                    .sum();
                let o = oversub.get(&hn.tier).copied().unwrap_or(1.0).max(1.0);
                SharedLink { group, capacity_gbps: nic / o, demands }
            })
            .collect()
    }
}

impl RuntimeModel for CommRuntime {
    fn admit(&mut self, job: JobId, profile: Option<Arc<JobProfile>>) {
        let i = job.0 as usize;
        if self.job_profile.len() <= i {
            self.job_profile.resize(i + 1, None);
        }
        self.job_profile[i] = profile.map(|p| self.distinct(p));
    }

    fn speed_ppm(&self, world: &World, job: JobId, _nodes: &[NodeId]) -> u32 {
        let Some((idx, p)) = self.profile_of(job) else { return FULL_SPEED_PPM };
        let alloc = Self::alloc(world, job);
        if alloc.is_empty() {
            return FULL_SPEED_PPM;
        }
        let share = if self.sharing {
            // A job not yet priced by `reprice` sees no contention until it is.
            Some(self.shares.lock().ok().and_then(|s| s.get(&job).copied()).unwrap_or(1000))
        } else {
            None
        };
        if !p.data_parallel_only() {
            return self.speed(world, idx, &alloc, share).unwrap_or(FULL_SPEED_PPM);
        }
        let Ok(mut key) = self.model.placement(&world.cluster, &alloc, &self.opts) else { return FULL_SPEED_PPM };
        if let Some(s) = share.filter(|_| key.nodes > 1) {
            key.oversubscription_milli = key.oversubscription_milli.min(s).max(1000);
        }
        let slow = self.slowest(idx, &alloc).map_or(0, f64::to_bits);
        if let Some(&s) = self.cache.lock().ok().as_ref().and_then(|c| c.get(&(idx, key, slow))) {
            return s;
        }
        let s = self.speed(world, idx, &alloc, share).unwrap_or(FULL_SPEED_PPM);
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert((idx, key, slow), s);
        }
        s
    }

    fn coupled(&self) -> bool {
        self.sharing
    }

    fn prices_compute(&self, job: JobId) -> bool {
        self.profile_of(job).is_some()
    }

    fn reprice(&self, world: &World, running: &[JobId]) -> Vec<(JobId, u32)> {
        if !self.sharing {
            return Vec::new();
        }
        let jobs: Vec<JobId> = running.iter().copied().filter(|&j| self.profile_of(j).is_some()).collect();
        let x = max_min_shares(&Self::shared_links(world, &jobs));
        let new: BTreeMap<JobId, u32> =
            x.iter().map(|(&j, &f)| (j, (1000.0 / f.max(1e-3)).round().min(f64::from(u32::MAX)) as u32)).collect();
        let old = match self.shares.lock() {
            Ok(mut s) => std::mem::replace(&mut *s, new.clone()),
            Err(_) => return Vec::new(),
        };
        // Jobs whose share changed (or that gained or lost one) get a new speed.
        let running: BTreeSet<JobId> = running.iter().copied().collect();
        let changed: BTreeSet<JobId> =
            old.keys().chain(new.keys()).copied().filter(|j| old.get(j) != new.get(j) && running.contains(j)).collect();
        changed.into_iter().map(|j| (j, self.speed_ppm(world, j, &[]))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm::{IntraLink, NetFabric};

    fn h100(nodes: u32, gpn: u32) -> Placement {
        Placement::uniform(GpuGen::Hopper, IntraLink::NvswitchNvlink4, gpn, nodes, 400.0, NetFabric::Ib)
    }

    /// Builds sub-placements as uniform H100 groups: one node → NVLink only.
    fn make(sub: &[(usize, u32)]) -> Result<Placement, CommError> {
        let ranks: u32 = sub.iter().map(|x| x.1).sum();
        Ok(if sub.len() == 1 {
            Placement::single_node(GpuGen::Hopper, IntraLink::NvswitchNvlink4, ranks)
        } else {
            Placement { ranks, min_gpus_per_node: sub.iter().map(|x| x.1).min().unwrap(), ..h100(sub.len() as u32, 1) }
        })
    }

    #[test]
    fn megatron_layout_puts_tensor_groups_inside_nodes() {
        // 2 nodes x 8, tp 8: two tensor groups, one per node; eight data-parallel
        // groups of one rank per node (all alike).
        let c = communicators(&[8, 8], 8, 1, make).unwrap();
        assert_eq!(c.tp, vec![Placement::single_node(GpuGen::Hopper, IntraLink::NvswitchNvlink4, 8)]);
        assert_eq!(c.dp.len(), 1);
        assert_eq!((c.dp[0].ranks, c.dp[0].nodes), (2, 2));
        assert!(c.pp.is_empty());
        // tp 4 x pp 2: ranks 0-7 are stage 0 (node 0), 8-15 stage 1 (node 1); data
        // groups {t, t+4} stay on a node; every stage boundary crosses nodes.
        let c = communicators(&[8, 8], 4, 2, make).unwrap();
        assert_eq!(c.tp, vec![Placement::single_node(GpuGen::Hopper, IntraLink::NvswitchNvlink4, 4)]);
        assert_eq!(c.dp, vec![Placement::single_node(GpuGen::Hopper, IntraLink::NvswitchNvlink4, 2)]);
        assert_eq!(c.pp.len(), 1);
        assert_eq!((c.pp[0].ranks, c.pp[0].nodes), (2, 2));
        // Uneven nodes (6 + 2), tp 4: the second tensor group straddles both nodes.
        let c = communicators(&[6, 2], 4, 1, make).unwrap();
        assert_eq!(c.tp.len(), 2);
        assert!(c.tp.iter().any(|p| p.nodes == 2));
        assert!(communicators(&[8, 8], 3, 1, make).is_err());
    }

    #[test]
    fn iteration_time_adds_the_parallelism_terms() {
        let m = CommModel::default();
        let base = JobProfile::from_catalog(lookup("llama-7b").unwrap());
        let ar =
            |bytes: u64, p: &Placement| m.estimate(Collective::AllReduce, bytes, p, AlgoChoice::Auto).unwrap().time_us;
        let compute = 4_860_000.0 / 2.5;
        // Pure data parallel on one node: compute + (1 - 0.5) x all-reduce(13.4 GB).
        let one = Placement::single_node(GpuGen::Hopper, IntraLink::NvswitchNvlink4, 8);
        let c = communicators(&[8], 1, 1, make).unwrap();
        let t = iteration_us(&m, &base, 2.5, &c).unwrap();
        assert_eq!(t, compute + 0.5 * ar(13_400_000_000, &one));
        // tp 8 on one node: 4 x 32 layers x 8 x 16384/4096 = 4096 all-reduces of one
        // 4096-token micro-batch's activations (4096 x 4096 x 2 B = 32 MiB); no data parallelism.
        let tp8 = JobProfile { tensor_parallel: 8, ..base.clone() };
        let c = communicators(&[8], 8, 1, make).unwrap();
        let t = iteration_us(&m, &tp8, 2.5, &c).unwrap();
        assert_eq!(t, compute + 4096.0 * ar(32 << 20, &one));
        // pp 2 on one node: m = 2 x 16384/4096 = 8 micro-batches, bubble 1/8 of the
        // compute, 2 x (8 + 1) = 18 transfers of 32 MiB, data groups of 4.
        let pp2 = JobProfile { pipeline_parallel: 2, ..base.clone() };
        let c = communicators(&[8], 1, 2, make).unwrap();
        let two = Placement::single_node(GpuGen::Hopper, IntraLink::NvswitchNvlink4, 2);
        let four = Placement::single_node(GpuGen::Hopper, IntraLink::NvswitchNvlink4, 4);
        let p2p = m.estimate(Collective::Broadcast, 32 << 20, &two, AlgoChoice::Auto).unwrap().time_us;
        let t = iteration_us(&m, &pp2, 2.5, &c).unwrap();
        let want = compute + 0.5 * ar(6_700_000_000, &four) + compute / 8.0 + 18.0 * p2p;
        assert!((t - want).abs() < 1e-6, "{t} vs {want}");
    }

    #[test]
    fn tensor_parallel_across_nodes_is_slower_than_inside() {
        let m = CommModel::default();
        let tp8 = JobProfile { tensor_parallel: 8, ..JobProfile::from_catalog(lookup("llama-13b").unwrap()) };
        let inside = iteration_us(&m, &tp8, 2.5, &communicators(&[8, 8], 8, 1, make).unwrap()).unwrap();
        let split = iteration_us(&m, &tp8, 2.5, &communicators(&[4, 4, 4, 4], 8, 1, make).unwrap()).unwrap();
        // NVLS inside a node against a two-node tree for each of the 5,120 calls.
        assert!(split > 1.1 * inside, "{split} vs {inside}");
    }

    #[test]
    fn profiles_are_checked() {
        let base = JobProfile::from_catalog(lookup("llama-7b").unwrap());
        assert!(base.check(8).is_ok());
        assert!(JobProfile { tensor_parallel: 3, ..base.clone() }.check(8).unwrap_err().contains("multiple"));
        assert!(JobProfile { pipeline_parallel: 64, ..base.clone() }.check(64).unwrap_err().contains("layers"));
        assert!(JobProfile { overlap: 1.5, ..base.clone() }.check(8).is_err());
        let rn = JobProfile { tensor_parallel: 2, ..JobProfile::from_catalog(lookup("resnet-50").unwrap()) };
        assert!(rn.check(8).unwrap_err().contains("transformer"));
    }

    #[test]
    fn max_min_freezes_the_fullest_link_first() {
        let (a, b, c) = (JobId(1), JobId(2), JobId(3));
        // Link 0 (cap 10) carries a and b (8 each): level 10/16. Link 1 (cap 100)
        // carries b and c: after b freezes at 0.625, c gets its whole demand.
        let links = vec![
            SharedLink { group: HyperNodeId(0), capacity_gbps: 10.0, demands: vec![(a, 8.0), (b, 8.0)] },
            SharedLink { group: HyperNodeId(1), capacity_gbps: 100.0, demands: vec![(b, 8.0), (c, 8.0)] },
        ];
        let x = max_min_shares(&links);
        assert_eq!(x.into_iter().collect::<Vec<_>>(), vec![(a, 0.625), (b, 0.625), (c, 1.0)]);
        // Unequal demands get the same fraction: every NIC flow gets the same rate.
        let links = vec![SharedLink { group: HyperNodeId(0), capacity_gbps: 10.0, demands: vec![(a, 4.0), (b, 16.0)] }];
        assert_eq!(max_min_shares(&links).into_iter().collect::<Vec<_>>(), vec![(a, 0.5), (b, 0.5)]);
        // Room for everyone: full rate.
        let links = vec![SharedLink { group: HyperNodeId(0), capacity_gbps: 30.0, demands: vec![(a, 4.0), (b, 16.0)] }];
        assert_eq!(max_min_shares(&links).into_iter().collect::<Vec<_>>(), vec![(a, 1.0), (b, 1.0)]);
        // Two links in series for c: the tighter one decides.
        let links = vec![
            SharedLink { group: HyperNodeId(0), capacity_gbps: 6.0, demands: vec![(a, 4.0), (c, 8.0)] },
            SharedLink { group: HyperNodeId(1), capacity_gbps: 4.0, demands: vec![(c, 8.0)] },
        ];
        // Link 1: 4/8 = 0.5 < link 0: 6/12 = 0.5 (tie: lower group first, link 0):
        // a and c at 0.5.
        assert_eq!(max_min_shares(&links).into_iter().collect::<Vec<_>>(), vec![(a, 0.5), (c, 0.5)]);
    }
}
