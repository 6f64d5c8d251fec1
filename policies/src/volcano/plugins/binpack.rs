//! `binpack`: prefer fuller nodes. Arguments: `binpack.weight` (1; 0 disables),
//! `binpack.cpu` (1), `binpack.memory` (1), `binpack.resources` (comma-separated
//! extra resource names, e.g. `nvidia.com/gpu`) and `binpack.resources.<name>` (1;
//! negative means 1). For every resource the pod requests that has a weight:
//! `score += w · (used + request) / allocatable`; a resource the node lacks adds its
//! weight to the denominator only; any resource that would overflow makes the score
//! 0. Result: `score / Σw · 100 · binpack.weight`.

use super::super::args::{ArgSpec, ArgType, Args};
use super::super::plugin::{Hooks, Plugin, PluginSpec};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::PodId;
use lahar_core::model::resource::{CPU, MEMORY, Resources};
use lahar_core::session::Session;

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec = PluginSpec::new("binpack", |pc| Box::new(Binpack::new(&pc.args))).args(&[
    ArgSpec::new("binpack.weight", ArgType::Int, "1", "the plugin's weight"),
    ArgSpec::new("binpack.cpu", ArgType::Int, "1", "CPU's weight"),
    ArgSpec::new("binpack.memory", ArgType::Int, "1", "memory's weight"),
    ArgSpec::new("binpack.resources", ArgType::Str, "", "extended resources to weigh, comma-separated"),
    ArgSpec::new("binpack.resources.<name>", ArgType::Int, "1", "that resource's weight"),
]);

/// The binpack plugin.
pub struct Binpack {
    weight: i64,
    /// (resource name, weight)
    weights: ResourceWeights,
}

/// Weighted resources by name, resolved to the cluster's resource dimensions on
/// first use (names the cluster does not have are left out, as Volcano skips them).
#[derive(Debug, Default)]
pub struct ResourceWeights {
    names: Vec<(String, i64)>,
    dims: std::cell::OnceCell<Vec<(usize, i64)>>,
}

impl ResourceWeights {
    /// The (dimension, weight) pairs in conf order, resolved against the session's cluster.
    pub fn dims(&self, ssn: &Session<'_>) -> &[(usize, i64)] {
        self.dims.get_or_init(|| {
            let names = &ssn.cluster().resource_names;
            self.names.iter().filter_map(|(n, w)| names.dim(n).map(|d| (d, *w))).collect()
        })
    }
}

/// Weighted resources from `<prefix>cpu`, `<prefix>memory`, `<prefix>resources`.
pub fn resource_weights(args: &Args, prefix: &str) -> ResourceWeights {
    let mut w = vec![
        ("cpu".to_string(), args.int(&format!("{prefix}cpu"), 1)),
        ("memory".to_string(), args.int(&format!("{prefix}memory"), 1)),
    ];
    if let Some(list) = args.str(&format!("{prefix}resources")) {
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let v = args.int(&format!("{prefix}resources.{name}"), 1);
            w.push((name.to_string(), if v < 0 { 1 } else { v }));
        }
    }
    ResourceWeights { names: w, dims: std::cell::OnceCell::new() }
}

/// Binpack fraction (0..1) of putting `req` on top of `used` within `alloc`.
pub fn binpack_fraction(
    ssn: &Session<'_>,
    weights: &ResourceWeights,
    alloc: &Resources,
    used: &Resources,
    req: &Resources,
) -> f64 {
    let (mut score, mut total) = (0.0, 0i64);
    for &(d, w) in weights.dims(ssn) {
        if req.get(d) <= 0 {
            continue;
        }
        if alloc.get(d) == 0 || w == 0 {
            total += w;
            continue;
        }
        let u = used.get(d) + req.get(d);
        if u > alloc.get(d) {
            return 0.0;
        }
        score += w as f64 * u as f64 / alloc.get(d) as f64;
        total += w;
    }
    if total == 0 { 0.0 } else { score / total as f64 }
}

impl Binpack {
    /// Reads the arguments.
    pub fn new(args: &Args) -> Self {
        Binpack { weight: args.int("binpack.weight", 1), weights: resource_weights(args, "binpack.") }
    }
}

impl Plugin for Binpack {
    fn name(&self) -> &'static str {
        "binpack"
    }
    fn hooks(&self) -> Hooks {
        Hooks::NODE_SCORE
    }
    fn node_score(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<f64> {
        if self.weight == 0 {
            return None;
        }
        let _ = (CPU, MEMORY);
        let alloc = ssn.node(node).allocatable;
        let used = ssn.node_state(node).used;
        Some(binpack_fraction(ssn, &self.weights, &alloc, &used, &ssn.pod(pod).req) * 100.0 * self.weight as f64)
    }
}
