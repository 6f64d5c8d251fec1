//! `nodeorder`: Kubernetes' node scores, each 0..100 times its weight, summed.
//! Arguments (integers): `leastrequested.weight` (1), `mostrequested.weight` (0),
//! `balancedresource.weight` (1), `podaffinity.weight` (2); the node affinity,
//! taint, image and spread weights are accepted but add the same constant to
//! every node in lahar's model, so they do not change a ranking and are left out
//! of the score.
//!
//! - LeastRequested (cpu, memory): `(alloc − requested) · 100 / alloc`, integer,
//!   averaged; requested = node's used + the pod (a pod without cpu or memory
//!   requests counts 100m / 200Mi, as Kubernetes does).
//! - MostRequested: `min(requested, alloc) · 100 / alloc`, averaged.
//! - BalancedAllocation (cpu, memory, nvidia.com/gpu where allocatable > 0):
//!   `⌊(1 − std(fractions)) · 100⌋`, fractions capped at 1; 0 for BestEffort pods.
//! - InterPodAffinity: the raw domain sums of `lahar_core::world`'s affinity
//!   module, normalized over the candidate nodes (Volcano's `BatchNodeOrderFn`:
//!   `⌊100 · (s − min) / (max − min)⌋`, 0 when all are equal); nothing while no
//!   pod's preferred terms (or the incoming pod's) touch any domain.

use super::super::args::{ArgSpec, ArgType, Args};
use super::super::plugin::{Hooks, Plugin, PluginSpec};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::PodId;
use lahar_core::model::resource::{CPU, GPU, MEMORY, Resources};
use lahar_core::session::Session;

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec = PluginSpec::new("nodeorder", |pc| Box::new(NodeOrder::new(&pc.args))).args(&[
    ArgSpec::new("leastrequested.weight", ArgType::Int, "1", "least-requested score weight"),
    ArgSpec::new("mostrequested.weight", ArgType::Int, "0", "most-requested score weight"),
    ArgSpec::new("balancedresource.weight", ArgType::Int, "1", "balanced-resource score weight"),
    ArgSpec::new("podaffinity.weight", ArgType::Int, "2", "inter-pod affinity score weight"),
    ArgSpec::new("nodeaffinity.weight", ArgType::Int, "", "accepted; constant across nodes in lahar's model"),
    ArgSpec::new("tainttoleration.weight", ArgType::Int, "", "accepted; constant across nodes in lahar's model"),
    ArgSpec::new("imagelocality.weight", ArgType::Int, "", "accepted; constant across nodes in lahar's model"),
    ArgSpec::new("podtopologyspread.weight", ArgType::Int, "", "accepted; constant across nodes in lahar's model"),
]);

/// The nodeorder plugin.
pub struct NodeOrder {
    least: i64,
    most: i64,
    balanced: i64,
    pod_affinity: i64,
}

impl NodeOrder {
    /// Reads the weights.
    pub fn new(args: &Args) -> Self {
        NodeOrder {
            least: args.int("leastrequested.weight", 1),
            most: args.int("mostrequested.weight", 0),
            balanced: args.int("balancedresource.weight", 1),
            pod_affinity: args.int("podaffinity.weight", 2),
        }
    }
}

fn non_zero(req: &Resources) -> (i64, i64) {
    let cpu = if req.cpu() == 0 { 100 } else { req.cpu() };
    let mem = if req.memory() == 0 { 200 * 1024 * 1024 } else { req.memory() };
    (cpu, mem)
}

/// Kubernetes LeastAllocated score.
pub fn least_requested(alloc: &Resources, used: &Resources, req: &Resources) -> i64 {
    let (c, m) = non_zero(req);
    let s = |cap: i64, r: i64| if cap == 0 || r > cap { 0 } else { (cap - r) * 100 / cap };
    (s(alloc.cpu(), used.cpu() + c) + s(alloc.memory(), used.memory() + m)) / 2
}

/// Kubernetes MostAllocated score.
pub fn most_requested(alloc: &Resources, used: &Resources, req: &Resources) -> i64 {
    let (c, m) = non_zero(req);
    let s = |cap: i64, r: i64| if cap == 0 { 0 } else { r.min(cap) * 100 / cap };
    (s(alloc.cpu(), used.cpu() + c) + s(alloc.memory(), used.memory() + m)) / 2
}

/// Kubernetes BalancedAllocation score.
pub fn balanced(alloc: &Resources, used: &Resources, req: &Resources) -> i64 {
    if req.is_best_effort() {
        return 0;
    }
    // A fixed array, not a Vec: this runs for every (pod, feasible node) pair.
    let mut buf = [0.0f64; 3];
    let mut k = 0;
    for d in [CPU, MEMORY, GPU] {
        if alloc.get(d) > 0 {
            buf[k] = ((used.get(d) + req.get(d)) as f64 / alloc.get(d) as f64).min(1.0);
            k += 1;
        }
    }
    let fr = &buf[..k];
    let std = match fr.len() {
        0 | 1 => 0.0,
        2 => (fr[0] - fr[1]).abs() / 2.0,
        n => {
            let mean = fr.iter().sum::<f64>() / n as f64;
            (fr.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64).sqrt()
        }
    };
    ((1.0 - std) * 100.0) as i64
}

impl Plugin for NodeOrder {
    fn name(&self) -> &'static str {
        "nodeorder"
    }
    fn hooks(&self) -> Hooks {
        Hooks::NODE_SCORE.and(Hooks::BATCH_SCORE)
    }
    fn node_score(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<f64> {
        let alloc = ssn.node(node).allocatable;
        let used = ssn.node_state(node).used;
        let req = ssn.pod(pod).req;
        let mut s = 0;
        if self.least != 0 {
            s += self.least * least_requested(&alloc, &used, &req);
        }
        if self.most != 0 {
            s += self.most * most_requested(&alloc, &used, &req);
        }
        if self.balanced != 0 {
            s += self.balanced * balanced(&alloc, &used, &req);
        }
        Some(s as f64)
    }
    fn score_by_node(&self, ssn: &Session<'_>, _pod: PodId) -> bool {
        // The affinity score reads other nodes' pods and the other candidates.
        self.pod_affinity == 0 || !ssn.affinity_on()
    }
    fn add_node_scores(&self, ssn: &Session<'_>, pod: PodId, nodes: &[NodeId], sums: &mut [f64]) {
        let affinity = if self.pod_affinity != 0 { ssn.affinity_scores(pod, nodes) } else { None };
        let affinity = affinity.map(|raw| lahar_core::world::normalize_affinity(&raw));
        for (i, (sum, &n)) in sums.iter_mut().zip(nodes).enumerate() {
            let own = self.node_score(ssn, pod, n).expect("nodeorder scores every node");
            let extra = affinity.as_ref().map_or(0, |a| a[i] * self.pod_affinity);
            *sum += own + extra as f64;
        }
    }
}
