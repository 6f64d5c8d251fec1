//! GPU fragmentation as the FGD paper measures it (Weng et al., "Beware of
//! Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient
//! Descent", USENIX ATC '23; definitions as in its simulator,
//! hkust-adsl/kubernetes-scheduler-simulator, `pkg/utils/frag.go`).
//!
//! A node's free GPU capacity is *fragmented with respect to a pod shape* when a
//! pod of that shape cannot use it: all of the node's free milli-GPUs when the pod
//! does not fit at all (too little CPU, a GPU model it does not accept, too few
//! devices with room, or no GPU asked for: a CPU pod uses none of them), and the
//! free milli-GPUs of the devices too small for one of its GPUs when it does fit.
//! The *target workload* is the trace's pods by shape and popularity
//! ([`Target::typical`]); a node's fragmentation is the popularity-weighted sum
//! over its shapes, the cluster's the sum over nodes, and the fragmentation ratio
//! the cluster's fragmentation over its free milli-GPUs. docs/fragmentation.md
//! has the formulas with worked examples.
//!
//! Everything here is an exact integer: a node's fragmentation is kept as
//! Σ_shape count × milli-GPUs ("weighted milli-GPUs"); divide by
//! [`Target::weight`] × 1000 for GPUs.

use crate::model::cluster::{GPU_PRODUCT_LABEL, Node};
use crate::model::job::TaskSpec;
use crate::model::resource::{CPU, GPU};

/// A set of GPU models, bit `i` standing for model `i` of a cluster's model table;
/// the empty set means any model will do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Models(pub u64);

impl Models {
    /// Any model.
    pub const ANY: Models = Models(0);

    /// True if a node with GPU model `model` (an index; `None` for a node
    /// without a model) is acceptable.
    pub fn accepts(self, model: Option<u8>) -> bool {
        match model {
            _ if self.0 == 0 => true,
            Some(m) => m < 64 && self.0 & (1 << m) != 0,
            None => false,
        }
    }
}

/// A pod's demand in the paper's terms: CPU, and `gpus` devices with `gpu_milli`
/// free milli-GPUs each (a share of one device when below 1000).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Demand {
    /// Millicores.
    pub cpu: i64,
    /// Milli-GPUs per device, 0 for a pod without GPUs.
    pub gpu_milli: u16,
    /// Devices.
    pub gpus: u8,
    /// GPU models accepted.
    pub models: Models,
}

impl Demand {
    /// Milli-GPUs in all.
    pub fn total_milli(&self) -> i64 {
        i64::from(self.gpu_milli) * i64::from(self.gpus)
    }

    /// True for a pod asking for GPUs.
    pub fn wants_gpu(&self) -> bool {
        self.gpu_milli > 0 && self.gpus > 0
    }

    /// True if `free` (each device's free milli-GPUs) has `gpus` devices with
    /// `gpu_milli` free each.
    pub fn fits_devices(&self, free: &[u16]) -> bool {
        let room = free.iter().filter(|&&g| g >= self.gpu_milli).count();
        room >= usize::from(self.gpus)
    }
}

/// A node's free resources as the measure sees them.
#[derive(Clone, Copy, Debug)]
pub struct Free<'a> {
    /// Free millicores.
    pub cpu: i64,
    /// The node's GPU model (index in the cluster's model table).
    pub model: Option<u8>,
    /// Free milli-GPUs of each device.
    pub gpus: &'a [u16],
}

impl Free<'_> {
    /// Free milli-GPUs of all devices.
    pub fn gpu_milli(&self) -> i64 {
        self.gpus.iter().map(|&g| i64::from(g)).sum()
    }

    /// Milli-GPUs of this node fragmented for a pod of shape `d`.
    pub fn fragmented_for(&self, d: &Demand) -> i64 {
        let idle = self.gpu_milli();
        if idle == 0 {
            return 0;
        }
        if !d.wants_gpu() || !d.models.accepts(self.model) || self.cpu < d.cpu || !d.fits_devices(self.gpus) {
            return idle;
        }
        // It fits: the devices too small for one of its GPUs are fragments.
        self.gpus.iter().filter(|&&g| g < d.gpu_milli).map(|&g| i64::from(g)).sum()
    }
}

/// Share of all pods that the typical shapes cover, as the paper's simulator
/// chooses them (`podPopularityThreshold: 95`).
pub const POPULARITY_PCT: u64 = 95;

/// The target workload: the most popular pod shapes with their counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Target {
    shapes: Vec<(Demand, u64)>,
    weight: u64,
}

impl Target {
    /// The typical shapes of a workload given as (shape, count) pairs: shapes by
    /// decreasing count (ties by increasing shape), taken one at a time until
    /// they cover `pct` % of all pods; each is weighted by its count. CPU pods
    /// are shapes like any other (`isInvolvedCpuPods: true`).
    pub fn typical(counts: impl IntoIterator<Item = (Demand, u64)>, pct: u64) -> Target {
        let mut all: Vec<(Demand, u64)> = Vec::new();
        let mut merged: std::collections::BTreeMap<Demand, u64> = std::collections::BTreeMap::new();
        for (d, n) in counts {
            *merged.entry(d).or_default() += n;
        }
        all.extend(merged.into_iter().filter(|s| s.1 > 0));
        let total: u64 = all.iter().map(|s| s.1).sum();
        all.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut weight = 0u64;
        let mut taken = 0;
        while taken < all.len() && u128::from(weight) * 100 < u128::from(total) * u128::from(pct) {
            weight += all[taken].1;
            taken += 1;
        }
        all.truncate(taken);
        Target { shapes: all, weight }
    }

    /// The shapes with their counts, most popular first.
    pub fn shapes(&self) -> &[(Demand, u64)] {
        &self.shapes
    }

    /// Σ counts: a node's fragmentation in GPUs is its weighted milli-GPUs over
    /// `weight() × 1000`.
    pub fn weight(&self) -> u64 {
        self.weight
    }

    /// A node's fragmented milli-GPUs, each shape's weighted by its count.
    pub fn node(&self, free: Free<'_>) -> i64 {
        let idle = free.gpu_milli();
        if idle == 0 {
            return 0;
        }
        self.shapes.iter().map(|(d, n)| *n as i64 * free.fragmented_for(d)).sum()
    }
}

/// FGD's device for a share of one GPU (`milli` below 1000, with `cpu` millicores)
/// on a node in state `free` whose weighted fragmentation is `before`
/// ([`Target::node`]): the device with room whose use scores highest by
/// [`sigmoid_score`] of the fragmentation's fall, the lowest-numbered on ties
/// (the paper's simulator, `open_gpu_share.go`). Returns the score and device;
/// `None` when no device has room.
pub fn fgd_share(target: &Target, free: Free<'_>, before: i64, cpu: i64, milli: u16) -> Option<(i64, u8)> {
    let mut gpus = [0u16; 64];
    let gpus = &mut gpus[..free.gpus.len().min(64)];
    gpus.copy_from_slice(&free.gpus[..gpus.len()]);
    let weight = target.weight();
    let mut best: Option<(i64, u8)> = None;
    for i in 0..gpus.len() {
        if gpus[i] < milli {
            continue;
        }
        gpus[i] -= milli;
        let after = target.node(Free { cpu: free.cpu - cpu, model: free.model, gpus });
        gpus[i] += milli;
        let s = sigmoid_score(before - after, weight);
        if best.is_none_or(|(b, _)| s > b) {
            best = Some((s, i as u8));
        }
    }
    best
}

/// `⌊100 × σ(x)⌋` with `x = delta / (weight × 1000)` GPUs, found against the
/// table of `ln(k / (100 − k))` (σ(x) ≥ k/100 exactly when x is at least that),
/// so the score never depends on a platform's `exp`.
pub fn sigmoid_score(delta: i64, weight: u64) -> i64 {
    if weight == 0 {
        return 50;
    }
    let x = delta as f64 / (weight as f64 * 1000.0);
    LOGIT.partition_point(|&t| x >= t) as i64
}

/// `ln(k / (100 − k))` for k = 1..=99.
const LOGIT: [f64; 99] = [
    -4.59511985013459,
    -3.891820298110627,
    -3.4760986898352733,
    -3.1780538303479458,
    -2.9444389791664407,
    -2.751535313041949,
    -2.5866893440979424,
    -2.4423470353692043,
    -2.3136349291806306,
    -2.1972245773362196,
    -2.0907410969337694,
    -1.9924301646902063,
    -1.900958761193047,
    -1.8152899666382492,
    -1.7346010553881064,
    -1.6582280766035324,
    -1.5856272637403819,
    -1.5163474893680884,
    -1.4500101755059984,
    -1.3862943611198906,
    -1.3249254147435987,
    -1.2656663733312759,
    -1.2083112059245342,
    -1.1526795099383855,
    -1.0986122886681098,
    -1.0459685551826876,
    -0.9946225751440622,
    -0.9444616088408514,
    -0.8953840470548413,
    -0.8472978603872037,
    -0.8001193001121132,
    -0.7537718023763802,
    -0.7081850579244858,
    -0.6632942174102642,
    -0.6190392084062235,
    -0.5753641449035618,
    -0.5322168137473082,
    -0.4895482253187058,
    -0.4473122180436648,
    -0.40546510810816444,
    -0.3639653772014116,
    -0.322773392263051,
    -0.2818511521409877,
    -0.2411620568168881,
    -0.2006706954621511,
    -0.16034265007517937,
    -0.12014431184206321,
    -0.08004270767353637,
    -0.04000533461369913,
    0.0,
    0.040005334613699206,
    0.08004270767353636,
    0.12014431184206321,
    0.16034265007517948,
    0.20067069546215124,
    0.24116205681688804,
    0.28185115214098766,
    0.322773392263051,
    0.3639653772014116,
    0.4054651081081644,
    0.44731221804366483,
    0.4895482253187058,
    0.5322168137473082,
    0.5753641449035618,
    0.6190392084062235,
    0.6632942174102642,
    0.7081850579244858,
    0.7537718023763802,
    0.8001193001121131,
    0.8472978603872037,
    0.8953840470548413,
    0.9444616088408515,
    0.994622575144062,
    1.0459685551826878,
    1.0986122886681098,
    1.1526795099383853,
    1.2083112059245342,
    1.2656663733312759,
    1.3249254147435985,
    1.3862943611198906,
    1.4500101755059984,
    1.5163474893680884,
    1.5856272637403819,
    1.6582280766035324,
    1.7346010553881064,
    1.8152899666382492,
    1.900958761193047,
    1.992430164690206,
    2.0907410969337694,
    2.1972245773362196,
    2.3136349291806306,
    2.4423470353692043,
    2.586689344097943,
    2.751535313041949,
    2.9444389791664403,
    3.1780538303479458,
    3.4760986898352733,
    3.8918202981106265,
    4.59511985013459,
];

/// The GPU models of a cluster by index, as [`Models`] and [`Free::model`] count
/// them: the distinct `nvidia.com/gpu.product` labels of its GPU nodes (what node
/// selectors match), sorted. A [`Models`] set tells 64 apart: models past the
/// 64th in that order get no index (their nodes count as having no model).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelTable {
    names: Vec<String>,
}

/// The most models a [`Models`] set tells apart.
pub const MAX_MODELS: usize = 64;

impl ModelTable {
    /// The models of `nodes`' GPU nodes.
    pub fn of_nodes<'a>(nodes: impl IntoIterator<Item = &'a Node>) -> ModelTable {
        let names: std::collections::BTreeSet<&str> = nodes
            .into_iter()
            .filter(|n| n.allocatable.get(GPU) > 0)
            .filter_map(|n| n.labels.get(GPU_PRODUCT_LABEL).map(String::as_str))
            .filter(|m| !m.is_empty())
            .collect();
        ModelTable { names: names.into_iter().take(MAX_MODELS).map(str::to_string).collect() }
    }

    /// The index of model `name`.
    pub fn index(&self, name: &str) -> Option<u8> {
        self.names.binary_search_by(|x| x.as_str().cmp(name)).ok().map(|i| i as u8)
    }

    /// The model index of `node` (`None` without GPUs or a known model).
    pub fn node(&self, node: &Node) -> Option<u8> {
        if node.allocatable.get(GPU) <= 0 {
            return None;
        }
        node.labels.get(GPU_PRODUCT_LABEL).and_then(|m| self.index(m))
    }

    /// A pod of `task` in the measure's terms. Its GPU request becomes devices as
    /// the cluster's [`GpuDevices`](crate::world::GpuDevices) hold it: below one
    /// GPU a share of one device, k whole GPUs k devices; a count above one that is
    /// not whole (which Kubernetes' integer `nvidia.com/gpu` never asks for) is
    /// taken as the next whole count. Its models are those its node selector and
    /// required `In` expressions on `nvidia.com/gpu.product` allow; a pod that asks
    /// for GPU models no node has fits nowhere.
    pub fn demand(&self, task: &TaskSpec) -> Demand {
        let milli = task.requests.get(GPU);
        let (gpu_milli, gpus) = match milli {
            ..=0 => (0, 0),
            1..=999 => (milli as u16, 1),
            _ => (1000, (milli + 999) / 1000),
        };
        let mut allowed: Option<u64> = None;
        let mut restrict = |values: &mut dyn Iterator<Item = &String>| {
            let set = values.filter_map(|v| self.index(v)).fold(0u64, |a, i| a | 1 << i);
            allowed = Some(allowed.map_or(set, |a| a & set));
        };
        for (k, v) in &task.node_selector {
            if k == GPU_PRODUCT_LABEL {
                restrict(&mut std::iter::once(v));
            }
        }
        for (k, vs) in &task.node_label_in {
            if k == GPU_PRODUCT_LABEL {
                restrict(&mut vs.iter());
            }
        }
        // No model it accepts is on a node: it fits nowhere (no node has 255 devices).
        let gpus = if allowed == Some(0) { u8::MAX } else { gpus.min(i64::from(u8::MAX)) as u8 };
        Demand { cpu: task.requests.get(CPU), gpu_milli, gpus, models: Models(allowed.unwrap_or(0)) }
    }

    /// The target workload of `tasks` (each with its replica count): their typical
    /// shapes at the paper's [`POPULARITY_PCT`].
    pub fn target<'a>(&self, tasks: impl IntoIterator<Item = &'a TaskSpec>) -> Target {
        Target::typical(tasks.into_iter().map(|t| (self.demand(t), u64::from(t.replicas))), POPULARITY_PCT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(cpu: i64, gpu_milli: u16, gpus: u8) -> Demand {
        Demand { cpu, gpu_milli, gpus, models: Models::ANY }
    }

    /// A node with 4 GPUs, 0.5, 0.2, 0.2 and 1.0 of them free, and plenty of CPU. A 0.3-GPU pod fits; the two 0.2 devices (400 milli) are
    /// fragments for it. A 2-GPU pod does not fit (one whole device): all 1.9
    /// GPUs are. A CPU pod uses no GPU: all of them are.
    #[test]
    fn a_node_fragmented_for_each_shape() {
        let free = Free { cpu: 64_000, model: Some(0), gpus: &[500, 200, 200, 1000] };
        assert_eq!(free.fragmented_for(&d(1000, 300, 1)), 400);
        assert_eq!(free.fragmented_for(&d(1000, 1000, 2)), 1900);
        assert_eq!(free.fragmented_for(&d(1000, 0, 0)), 1900);
        assert_eq!(free.fragmented_for(&d(1000, 1000, 1)), 900, "the three partial devices");
        // Too little CPU: all of it.
        assert_eq!(free.fragmented_for(&d(65_000, 300, 1)), 1900);
        // A model it does not accept: all of it.
        let other = Demand { models: Models(0b10), ..d(1000, 300, 1) };
        assert_eq!(free.fragmented_for(&other), 1900);
        let either = Demand { models: Models(0b11), ..d(1000, 300, 1) };
        assert_eq!(free.fragmented_for(&either), 400);
        // A node without free GPUs has no fragments.
        let full = Free { cpu: 64_000, model: Some(0), gpus: &[0, 0] };
        assert_eq!(full.fragmented_for(&d(0, 0, 0)), 0);
    }

    /// Weighted by counts: 3 × 400 + 1 × 1900 over the two shapes.
    #[test]
    fn a_node_over_the_target() {
        let t = Target::typical([(d(1000, 300, 1), 3), (d(1000, 1000, 2), 1)], 100);
        assert_eq!(t.weight(), 4);
        let free = Free { cpu: 64_000, model: Some(0), gpus: &[500, 200, 200, 1000] };
        assert_eq!(t.node(free), 3 * 400 + 1900);
    }

    /// Shapes by popularity until 95% of pods: 60 + 30 + 4 = 94 < 95 of 100, so
    /// one of the two shapes of 3 pods is taken (the smaller shape on a tie) and
    /// the other left out; repeated shapes merge.
    #[test]
    fn typical_shapes_cover_the_popularity_threshold() {
        let t = Target::typical(
            [(d(1, 100, 1), 30), (d(2, 100, 1), 4), (d(3, 1000, 1), 60), (d(4, 0, 0), 3), (d(5, 0, 0), 3)],
            POPULARITY_PCT,
        );
        let shapes: Vec<_> = t.shapes().iter().map(|s| (s.0.cpu, s.1)).collect();
        assert_eq!(shapes, [(3, 60), (1, 30), (2, 4), (4, 3)]);
        assert_eq!(t.weight(), 97);
        let merged = Target::typical([(d(1, 0, 0), 1), (d(1, 0, 0), 2)], 100);
        assert_eq!(merged.shapes(), &[(d(1, 0, 0), 3)]);
    }

    fn gpu_node(model: &str, gpus: i64) -> Node {
        let mut labels = std::collections::BTreeMap::new();
        labels.insert(GPU_PRODUCT_LABEL.to_string(), model.to_string());
        Node {
            taints: Vec::new(),
            name: format!("{model}-{gpus}"),
            labels,
            allocatable: crate::model::resource::Resources::new(8000, 1 << 30, gpus * 1000, 110),
            gpu_model: model.to_string(),
            intra_node: crate::model::cluster::IntraNode::Pcie,
            nics: crate::model::cluster::Nics::default(),
            speed: 1.0,
            vgpu: Vec::new(),
            vnpu: Vec::new(),
            numa: None,
        }
    }

    /// Models are the GPU nodes' labels, sorted (a CPU node's label does not
    /// count); a task's GPU request becomes devices, its selector and `In`
    /// expressions on the model label a set; models no node has fit nowhere.
    #[test]
    fn tasks_in_the_measure_s_terms() {
        let nodes = [gpu_node("V100", 8), gpu_node("T4", 2), gpu_node("A10", 0)];
        let table = ModelTable::of_nodes(&nodes);
        assert_eq!((table.index("T4"), table.index("V100"), table.index("A10")), (Some(0), Some(1), None));
        assert_eq!(table.node(&nodes[1]), Some(0));
        assert_eq!(table.node(&nodes[2]), None, "no GPUs");
        let task = |gpu_milli: i64| TaskSpec {
            requests: crate::model::resource::Resources::new(2000, 0, gpu_milli, 1),
            ..TaskSpec::default()
        };
        assert_eq!(table.demand(&task(0)), d(2000, 0, 0));
        assert_eq!(table.demand(&task(300)), d(2000, 300, 1));
        assert_eq!(table.demand(&task(4000)), d(2000, 1000, 4));
        assert_eq!(table.demand(&task(2500)), d(2000, 1000, 3), "the next whole count");
        let mut t4 = task(1000);
        t4.node_selector.push((GPU_PRODUCT_LABEL.to_string(), "T4".to_string()));
        assert_eq!(table.demand(&t4).models, Models(0b01));
        let mut either = task(1000);
        either.node_label_in.push((GPU_PRODUCT_LABEL.to_string(), vec!["V100".into(), "H100".into(), "T4".into()]));
        assert_eq!(table.demand(&either).models, Models(0b11));
        // Both: the intersection.
        either.node_selector.push((GPU_PRODUCT_LABEL.to_string(), "V100".to_string()));
        assert_eq!(table.demand(&either).models, Models(0b10));
        // Another label key does not count.
        let mut pool = task(1000);
        pool.node_selector.push(("pool".to_string(), "T4".to_string()));
        assert_eq!(table.demand(&pool).models, Models::ANY);
        let mut h100 = task(1000);
        h100.node_selector.push((GPU_PRODUCT_LABEL.to_string(), "H100".to_string()));
        let free = Free { cpu: 8000, model: Some(1), gpus: &[1000; 8] };
        assert_eq!(free.fragmented_for(&table.demand(&h100)), 8000, "fits nowhere");
        let mut tasks = vec![task(500), task(1000)];
        tasks[0].replicas = 3;
        let target = table.target(&tasks);
        assert_eq!(target.shapes(), &[(d(2000, 500, 1), 3), (d(2000, 1000, 1), 1)]);
    }

    #[test]
    fn models_accept() {
        assert!(Models::ANY.accepts(None));
        assert!(Models::ANY.accepts(Some(3)));
        assert!(Models(0b1000).accepts(Some(3)));
        assert!(!Models(0b1000).accepts(Some(2)));
        assert!(!Models(0b1000).accepts(None));
    }
}
