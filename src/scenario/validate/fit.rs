//! Whether a job can fit the cluster at all, checked before the run: some node
//! holds each pod, a gang whose pods hold host ports has nodes enough, and, when
//! not, the largest node in words for the warning.

use super::V;
use lahar_core::model::cluster::Node;
use lahar_core::model::resource::{FIRST_EXTENDED, ResourceNames, Resources};

/// Whether some node can hold a pod. Pods "fit" a cluster that had errors (its node
/// list is incomplete: the cluster's own errors say what is wrong) and a cluster
/// without nodes (its one warning says no pod can be placed).
pub(crate) fn fits_somewhere(v: &V<'_>, nodes: &[Node], task: &lahar_core::model::job::TaskSpec) -> bool {
    fits_somewhere_with(v, nodes, &task.requests, |n| task.labels_fit(n))
}

/// Why a job whose pods hold host ports can never start: its gang needs more
/// pods than can be placed when each task's pods with host ports take a node
/// each (an upper bound: pods of different tasks may conflict too). `None`
/// when the bound allows it, or when the cluster is not known.
pub(crate) fn ports_bound_the_gang(v: &V<'_>, nodes: &[Node], j: &lahar_core::model::job::JobSpec) -> Option<String> {
    if v.cluster_broken || nodes.is_empty() || j.tasks.iter().all(|t| t.host_ports().is_empty()) {
        return None;
    }
    let hosts = |t: &lahar_core::model::job::TaskSpec| {
        nodes.iter().filter(|n| t.requests.fits_in(&n.allocatable) && t.labels_fit(n)).count() as u32
    };
    let mut placeable = 0u32;
    for t in &j.tasks {
        let ports = t.host_ports();
        if ports.is_empty() {
            placeable = placeable.saturating_add(t.replicas);
            continue;
        }
        let n = hosts(t);
        let list = ports.iter().map(|p| p.port.to_string()).collect::<Vec<_>>().join(", ");
        if t.min_available > n {
            return Some(format!(
                "task `{}` needs {} pods at once, but its pods hold host port {list}, one pod per node, and {n} node(s) can hold them",
                t.name, t.min_available
            ));
        }
        placeable = placeable.saturating_add(t.replicas.min(n));
    }
    let need = j.min_available.max(1);
    (placeable < need).then(|| {
        format!("its gang needs {need} pods at once, but at most {placeable} can be placed: pods with host ports take a node each")
    })
}

/// [`fits_somewhere`] for requests `req` on nodes whose labels pass `labels_ok`.
pub(crate) fn fits_somewhere_with(
    v: &V<'_>,
    nodes: &[Node],
    req: &Resources,
    labels_ok: impl Fn(&Node) -> bool,
) -> bool {
    v.cluster_broken || nodes.is_empty() || nodes.iter().any(|n| req.fits_in(&n.allocatable) && labels_ok(n))
}

/// The largest node's resources, dimension by dimension, in words, and each
/// extended resource of `req` (`google.com/tpu`...) more than any node has,
/// which those words leave out.
pub(crate) fn largest(names: &ResourceNames, nodes: &[Node], req: &Resources) -> String {
    let m = nodes.iter().fold(Resources::ZERO, |a, n| a.max(&n.allocatable));
    let mut out = format!(
        "{} GPUs, {} CPU, {} bytes of memory, {} pods",
        m.gpus_ceil(),
        m.cpu() as f64 / 1000.0,
        m.memory(),
        m.pods()
    );
    let scaled = |d: usize, x: i64| x as f64 / ResourceNames::scale(d) as f64;
    let short: Vec<String> = (FIRST_EXTENDED..names.len())
        .filter(|&d| req.get(d) > m.get(d))
        .map(|d| format!("{} {} (at most {} on a node)", scaled(d, req.get(d)), names.name(d), scaled(d, m.get(d))))
        .collect();
    if !short.is_empty() {
        out.push_str(&format!("; it asks for {}", short.join(", ")));
    }
    out
}
