//! The placement-only replay: pods placed one at a time, never leaving, each on
//! the node its policy scores highest. Ties go to the node first in a random
//! order of the nodes drawn once per run, as in the paper's simulator (its
//! scheduler takes the lexicographically smallest node name among the best,
//! and it prefixes every node's name with a random permutation index); `random`
//! draws a feasible node uniformly for every pod.
//!
//! Nodes in the same state (free CPU, memory, pod slots, each device's free
//! milli-GPUs in device order, model, and for `gpu-clustering` the kinds of GPU
//! pods held) score alike, so the replay keeps nodes grouped by state: a pod is
//! scored once per occupied state, not once per node, and a node's fragmentation
//! is computed once per state it enters. `fgd`'s scores, the one costly rule,
//! are also kept per (state, pod shape): a state never changes, so neither does
//! its score. [`Replay::candidates`] scores every node on its own, from scratch:
//! the exhaustive rule the tests check each grouped decision against.

use super::score::{self, Devices, NodeView};
use super::{MAX_DEVICES, NodeSpec, Pod, Policy};
use lahar_core::frag::{Demand, Free, Target};
use lahar_core::util::rng::{RngStreams, StreamRng};
use rand::RngExt;
use rustc_hash::FxHashMap;

/// A node state: what every scoring rule and the feasibility check read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    cpu: i64,
    memory: i64,
    pods: u32,
    model: Option<u8>,
    devices: u8,
    gpus: [u16; MAX_DEVICES],
    kinds: u32,
}

impl Key {
    fn gpus(&self) -> &[u16] {
        &self.gpus[..usize::from(self.devices)]
    }
    fn view(&self) -> NodeView<'_> {
        NodeView { cpu: self.cpu, model: self.model, gpus: self.gpus(), kinds: self.kinds }
    }
    fn free(&self) -> Free<'_> {
        Free { cpu: self.cpu, model: self.model, gpus: self.gpus() }
    }
    /// The node filters: resources, pod slots, model, devices.
    fn admits(&self, p: &Pod) -> bool {
        let d = &p.demand;
        self.cpu >= d.cpu
            && self.memory >= p.memory
            && self.pods > 0
            && (!d.wants_gpu() || (d.models.accepts(self.model) && d.fits_devices(self.gpus())))
    }
}

/// Nodes sharing one state.
#[derive(Debug)]
struct Class {
    key: Key,
    /// Weighted fragmented milli-GPUs of one node in this state.
    frag: i64,
    /// The ranks of its nodes in the tie order, ascending.
    members: Vec<u32>,
}

/// The tie order of `nodes` nodes: a uniform permutation (Fisher–Yates on the
/// draws of `streams`' `placement/ties`), node indices by rank.
pub fn tie_order(nodes: usize, streams: &RngStreams) -> Vec<u32> {
    let mut by_rank: Vec<u32> = (0..nodes as u32).collect();
    let mut tie_rng = streams.stream("placement/ties", 0);
    for i in (1..by_rank.len()).rev() {
        by_rank.swap(i, tie_rng.random_range(0..=i));
    }
    by_rank
}

/// Where a pod went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// On `node` (index), holding the devices of bit mask `devices`.
    Placed {
        /// Node index.
        node: u32,
        /// Bit d: device d.
        devices: u16,
    },
    /// No node could take it.
    Unplaced,
}

/// The state of the cluster at one arrived demand (a row of fragmentation.csv).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    /// Arrived GPU request, % of the cluster's GPUs (rounded, halves up).
    pub demand_pct: u32,
    /// Allocated milli-GPUs, % of the cluster's (shares counted).
    pub gpu_alloc_pct: f64,
    /// Fragmented GPUs over the target workload.
    pub frag_gpus: f64,
    /// Fragmented share of the free GPUs, %.
    pub frag_ratio_pct: f64,
}

const NONE: u32 = u32::MAX;

/// A placement replay in progress.
#[derive(Debug)]
pub struct Replay<'t> {
    policy: Policy,
    target: &'t Target,
    class_of: Vec<u32>,
    /// Each node's place in the tie order, and the node at each place.
    rank: Vec<u32>,
    by_rank: Vec<u32>,
    classes: Vec<Class>,
    index: FxHashMap<Key, u32>,
    occupied: Vec<u32>,
    occupied_pos: Vec<u32>,
    shapes: FxHashMap<Demand, u32>,
    memo: FxHashMap<u64, (i64, Devices)>,
    ties: Vec<(u32, Devices)>,
    /// `random`'s draws of a node.
    node_rng: StreamRng,
    device_rng: StreamRng,
    capacity: i64,
    allocated: i64,
    /// Σ over nodes of their weighted fragmented milli-GPUs.
    frag: i64,
}

impl<'t> Replay<'t> {
    /// An empty cluster of `nodes` under `policy`, measured (and, for `fgd`,
    /// scored) against `target`; draws the tie order from `streams`'
    /// `placement/ties`, and `random`'s nodes and devices from `placement/nodes`
    /// and `placement/devices`.
    ///
    /// # Panics
    /// If a node has more than [`MAX_DEVICES`] GPUs (validated by the caller).
    pub fn new(policy: Policy, nodes: &[NodeSpec], target: &'t Target, streams: &RngStreams) -> Replay<'t> {
        let mut r = Replay {
            policy,
            target,
            class_of: Vec::with_capacity(nodes.len()),
            rank: Vec::new(),
            by_rank: Vec::new(),
            classes: Vec::new(),
            index: FxHashMap::default(),
            occupied: Vec::new(),
            occupied_pos: Vec::new(),
            shapes: FxHashMap::default(),
            memo: FxHashMap::default(),
            ties: Vec::new(),
            node_rng: streams.stream("placement/nodes", 0),
            device_rng: streams.stream("placement/devices", 0),
            capacity: 0,
            allocated: 0,
            frag: 0,
        };
        let by_rank = tie_order(nodes.len(), streams);
        r.rank = vec![0; nodes.len()];
        for (k, &n) in by_rank.iter().enumerate() {
            r.rank[n as usize] = k as u32;
        }
        r.by_rank = by_rank;
        for (i, n) in nodes.iter().enumerate() {
            assert!(usize::from(n.gpus) <= MAX_DEVICES, "node {i} has more than {MAX_DEVICES} GPUs");
            let mut gpus = [0u16; MAX_DEVICES];
            gpus[..usize::from(n.gpus)].fill(1000);
            let key =
                Key { cpu: n.cpu, memory: n.memory, pods: n.pods, model: n.model, devices: n.gpus, gpus, kinds: 0 };
            r.capacity += 1000 * i64::from(n.gpus);
            let c = r.intern(key);
            r.class_of.push(NONE);
            r.join(i as u32, c);
            r.frag += r.classes[c as usize].frag;
        }
        r
    }

    /// The exhaustive rule: every node scored on its own state, its
    /// fragmentation computed afresh, nothing kept. Returns the best score and
    /// the nodes that have it with the devices each would give the pod, first in
    /// the tie order first (empty when no node admits it); [`Replay::place`]
    /// takes the first (`random`: any of them).
    pub fn candidates(&self, pod: &Pod) -> (i64, Vec<(u32, Devices)>) {
        let mut best = i64::MIN;
        let mut out = Vec::new();
        for node in 0..self.class_of.len() as u32 {
            let key = &self.classes[self.class_of[node as usize] as usize].key;
            if !key.admits(pod) {
                continue;
            }
            let fresh = Class { key: *key, frag: self.target.node(key.free()), members: Vec::new() };
            let (s, dev) = score_of(self.policy, &fresh, &pod.demand, self.target);
            if s > best {
                best = s;
                out.clear();
            }
            if s == best {
                out.push((node, dev));
            }
        }
        out.sort_by_key(|&(n, _)| self.rank[n as usize]);
        (best, out)
    }

    /// Places one pod.
    pub fn place(&mut self, pod: &Pod) -> Outcome {
        let shape = match self.policy {
            Policy::Fgd => {
                let next = self.shapes.len() as u32;
                *self.shapes.entry(pod.demand).or_insert(next)
            }
            _ => 0,
        };
        self.ties.clear();
        let mut best = i64::MIN;
        let mut total = 0usize;
        // The best so far: (first rank among the ties, its class and devices).
        let mut first: Option<(u32, u32, Devices)> = None;
        for &c in &self.occupied {
            let class = &self.classes[c as usize];
            if !class.key.admits(pod) {
                continue;
            }
            let (s, dev) = match self.policy {
                Policy::Fgd => {
                    let k = u64::from(c) << 32 | u64::from(shape);
                    *self.memo.entry(k).or_insert_with(|| score_of(self.policy, class, &pod.demand, self.target))
                }
                p => score_of(p, class, &pod.demand, self.target),
            };
            if s > best {
                best = s;
                self.ties.clear();
                total = 0;
                first = None;
            }
            if s == best {
                if self.policy == Policy::Random {
                    self.ties.push((c, dev));
                    total += class.members.len();
                }
                let head = class.members[0];
                if first.is_none_or(|f| head < f.0) {
                    first = Some((head, c, dev));
                }
            }
        }
        let Some((head, c, dev)) = first else { return Outcome::Unplaced };
        if self.policy != Policy::Random {
            return self.apply(self.by_rank[head as usize], c, dev, pod);
        }
        // `random`: the r-th feasible node, counting each state's nodes in turn.
        let mut r = self.node_rng.random_range(0..total);
        let mut found = None;
        for &(c, dev) in &self.ties {
            let m = &self.classes[c as usize].members;
            if r < m.len() {
                found = Some((c, dev, self.by_rank[m[r] as usize]));
                break;
            }
            r -= m.len();
        }
        let (c, dev, node) = found.expect("the draw is below the feasible nodes' count");
        self.apply(node, c, dev, pod)
    }

    fn apply(&mut self, node: u32, c: u32, dev: Devices, pod: &Pod) -> Outcome {
        let d = &pod.demand;
        let mut key = self.classes[c as usize].key;
        key.cpu -= d.cpu;
        key.memory -= pod.memory;
        key.pods -= 1;
        if self.policy == Policy::GpuClustering {
            key.kinds |= score::kind(d);
        }
        let n = usize::from(key.devices);
        let mut devices = 0u16;
        let mut share = |key: &mut Key, i: usize| {
            key.gpus[i] -= d.gpu_milli;
            devices |= 1 << i;
        };
        match dev {
            Devices::None => {}
            Devices::Share(i) => share(&mut key, usize::from(i)),
            Devices::RandomShare => {
                let room = key.gpus[..n].iter().filter(|&&g| g >= d.gpu_milli).count();
                let mut k = self.device_rng.random_range(0..room);
                let i = (0..n)
                    .find(|&i| {
                        key.gpus[i] >= d.gpu_milli && {
                            let hit = k == 0;
                            k = k.wrapping_sub(1);
                            hit
                        }
                    })
                    .expect("a device with room");
                share(&mut key, i);
            }
            Devices::FirstFree => {
                let mut need = d.gpus;
                for i in 0..n {
                    if need == 0 {
                        break;
                    }
                    if key.gpus[i] >= d.gpu_milli && key.gpus[i] == 1000 {
                        share(&mut key, i);
                        need -= 1;
                    }
                }
            }
        }
        let before = self.classes[c as usize].frag;
        self.leave(node);
        let c2 = self.intern(key);
        self.join(node, c2);
        self.frag += self.classes[c2 as usize].frag - before;
        self.allocated += d.total_milli();
        Outcome::Placed { node, devices }
    }

    fn intern(&mut self, key: Key) -> u32 {
        if let Some(&c) = self.index.get(&key) {
            return c;
        }
        let c = self.classes.len() as u32;
        let frag = self.target.node(key.free());
        self.classes.push(Class { key, frag, members: Vec::new() });
        self.occupied_pos.push(NONE);
        self.index.insert(key, c);
        c
    }

    fn join(&mut self, node: u32, c: u32) {
        let class = &mut self.classes[c as usize];
        if class.members.is_empty() {
            self.occupied_pos[c as usize] = self.occupied.len() as u32;
            self.occupied.push(c);
        }
        let rank = self.rank[node as usize];
        let at = class.members.partition_point(|&r| r < rank);
        class.members.insert(at, rank);
        self.class_of[node as usize] = c;
    }

    fn leave(&mut self, node: u32) {
        let c = self.class_of[node as usize];
        let class = &mut self.classes[c as usize];
        let rank = self.rank[node as usize];
        let at = class.members.partition_point(|&r| r < rank);
        class.members.remove(at);
        if class.members.is_empty() {
            let at = self.occupied_pos[c as usize] as usize;
            self.occupied.swap_remove(at);
            if let Some(&moved) = self.occupied.get(at) {
                self.occupied_pos[moved as usize] = at as u32;
            }
            self.occupied_pos[c as usize] = NONE;
        }
    }

    /// Each device's free milli-GPUs on `node`.
    pub fn devices(&self, node: u32) -> &[u16] {
        self.classes[self.class_of[node as usize] as usize].key.gpus()
    }

    /// Free millicores and bytes of memory on `node`.
    pub fn free_cpu_memory(&self, node: u32) -> (i64, i64) {
        let k = &self.classes[self.class_of[node as usize] as usize].key;
        (k.cpu, k.memory)
    }

    /// The cluster's milli-GPUs.
    pub fn capacity_milli(&self) -> i64 {
        self.capacity
    }

    /// Milli-GPUs held by placed pods.
    pub fn allocated_milli(&self) -> i64 {
        self.allocated
    }

    /// The cluster's fragmented GPUs.
    pub fn frag_gpus(&self) -> f64 {
        self.frag as f64 / (self.target.weight().max(1) as f64 * 1000.0)
    }

    /// The state as a row of fragmentation.csv at `demand_pct`.
    pub fn row(&self, demand_pct: u32) -> Row {
        let idle = self.capacity - self.allocated;
        let pct = |num: f64, den: f64| if den > 0.0 { 100.0 * num / den } else { 0.0 };
        Row {
            demand_pct,
            gpu_alloc_pct: pct(self.allocated as f64, self.capacity as f64),
            frag_gpus: self.frag_gpus(),
            frag_ratio_pct: pct(self.frag as f64, idle as f64 * self.target.weight() as f64),
        }
    }

    /// Distinct node states entered so far (a measure of the grouping's gain).
    pub fn states(&self) -> usize {
        self.classes.len()
    }
}

fn score_of(policy: Policy, class: &Class, d: &Demand, target: &Target) -> (i64, Devices) {
    let v = class.key.view();
    match policy {
        Policy::Random => score::random(&v, d),
        Policy::DotProduct => score::dot_product(&v, d),
        Policy::GpuClustering => score::gpu_clustering(&v, d),
        Policy::GpuPacking => score::gpu_packing(&v, d),
        Policy::BestFit => score::best_fit_node(&v, d),
        Policy::Fgd => score::fgd(&v, d, target, class.frag),
    }
}

/// Arrived demand, in percent of the cluster's GPUs, as arrivals come.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    capacity: i64,
    arrived: i64,
    next: u32,
}

impl Progress {
    /// Nothing arrived yet on a cluster of `capacity_milli`.
    pub fn new(capacity_milli: i64) -> Progress {
        Progress { capacity: capacity_milli, arrived: 0, next: 0 }
    }

    /// The percentages reached now, before any arrival: `0..1` (also on a
    /// cluster without GPUs, where no arrival reaches any other).
    pub fn start(&mut self) -> std::ops::Range<u32> {
        self.next = self.next.max(1);
        0..1
    }

    /// A pod asking `milli` milli-GPUs arrived: the percentages (of the cluster's
    /// GPUs, rounded, halves up) that the arrived request reaches for the first
    /// time.
    pub fn arrive(&mut self, milli: i64) -> std::ops::Range<u32> {
        self.arrived += milli;
        if self.capacity <= 0 {
            return 0..0;
        }
        let reached = ((200 * i128::from(self.arrived) + i128::from(self.capacity)) / (2 * i128::from(self.capacity)))
            .clamp(0, i128::from(u32::MAX - 1)) as u32;
        let from = self.next;
        if reached + 1 > from {
            self.next = reached + 1;
            from..reached + 1
        } else {
            from..from
        }
    }
}

/// Runs a whole replay: places `pods` in order, calls `on_pod` with each
/// outcome, and returns the rows of fragmentation.csv (one per arrived percent,
/// from 0 to the last reached).
pub fn run(replay: &mut Replay<'_>, pods: impl IntoIterator<Item = Pod>, mut on_pod: impl FnMut(Outcome)) -> Vec<Row> {
    let mut progress = Progress::new(replay.capacity_milli());
    let mut rows: Vec<Row> = progress.start().map(|p| replay.row(p)).collect();
    for pod in pods {
        let out = replay.place(&pod);
        on_pod(out);
        for p in progress.arrive(pod.demand.total_milli()) {
            rows.push(replay.row(p));
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use lahar_core::frag::Models;

    fn node(gpus: u8) -> NodeSpec {
        NodeSpec { cpu: 32_000, memory: 1 << 40, gpus, model: Some(0), pods: 110 }
    }
    fn pod(gpu_milli: u16, gpus: u8) -> Pod {
        Pod { demand: Demand { cpu: 1000, gpu_milli, gpus, models: Models::ANY }, memory: 1 << 30 }
    }

    #[test]
    fn progress_rounds_halves_up() {
        let mut p = Progress::new(1000);
        assert_eq!(p.start(), 0..1);
        assert_eq!(p.arrive(4), 1..1, "0.4% rounds to 0");
        assert_eq!(p.arrive(1), 1..2, "0.5% rounds to 1");
        assert_eq!(p.arrive(20), 2..4, "2.5% → 3: two percentages at once");
        assert_eq!(p.arrive(0), 4..4);
        let mut none = Progress::new(0);
        assert_eq!(none.start(), 0..1);
        assert!(none.arrive(500).is_empty(), "no GPUs: nothing is ever reached");
    }

    /// No node at all: every pod unplaced, the one row at 0%, no division by zero.
    #[test]
    fn an_empty_cluster() {
        let t = Target::typical([(pod(500, 1).demand, 1)], 100);
        let mut r = Replay::new(Policy::Fgd, &[], &t, &RngStreams::new(1));
        let rows = run(&mut r, [pod(500, 1), pod(0, 0)], |o| assert_eq!(o, Outcome::Unplaced));
        assert_eq!(rows, [Row { demand_pct: 0, gpu_alloc_pct: 0.0, frag_gpus: 0.0, frag_ratio_pct: 0.0 }]);
    }

    /// Two 2-GPU nodes. Best fit puts 0.5 on node A's device 0, then 0.5 again
    /// on the same device (tightest), then a whole GPU on A's device 1 (A has the
    /// least left), then 2 whole GPUs on B. A fifth pod finds no device.
    #[test]
    fn best_fit_packs_by_hand() {
        let t = Target::typical([(pod(500, 1).demand, 1)], 100);
        let mut r = Replay::new(Policy::BestFit, &[node(2), node(2)], &t, &RngStreams::new(1));
        let first = r.place(&pod(500, 1));
        let Outcome::Placed { node: a, devices: 1 } = first else { panic!("{first:?}") };
        assert_eq!(r.place(&pod(500, 1)), Outcome::Placed { node: a, devices: 1 });
        assert_eq!(r.place(&pod(1000, 1)), Outcome::Placed { node: a, devices: 2 });
        assert_eq!(r.place(&pod(1000, 2)), Outcome::Placed { node: 1 - a, devices: 3 });
        assert_eq!(r.place(&pod(100, 1)), Outcome::Unplaced);
        assert_eq!(r.allocated_milli(), 4000);
        assert_eq!(r.row(100).gpu_alloc_pct, 100.0);
        assert_eq!(r.devices(a), &[0, 0]);
    }

    /// One 4-GPU node, target 0.6-GPU pods: after 0.6 on device 0 the 0.4 left
    /// is a fragment: 400 milli (0.4 GPUs) of 3.4 free → 11.76%.
    #[test]
    fn fragmentation_rows_by_hand() {
        let t = Target::typical([(pod(600, 1).demand, 3)], 100);
        let mut r = Replay::new(Policy::Fgd, &[node(4)], &t, &RngStreams::new(1));
        let rows = run(&mut r, [pod(600, 1)], |_| {});
        assert_eq!(rows.len(), 16, "0..=15 % (600 of 4000 milli)");
        assert_eq!(rows[0], Row { demand_pct: 0, gpu_alloc_pct: 0.0, frag_gpus: 0.0, frag_ratio_pct: 0.0 });
        let last = rows[15];
        assert_eq!(last.gpu_alloc_pct, 15.0);
        assert!((last.frag_gpus - 0.4).abs() < 1e-12);
        assert!((last.frag_ratio_pct - 100.0 * 0.4 / 3.4).abs() < 1e-9);
    }
}
