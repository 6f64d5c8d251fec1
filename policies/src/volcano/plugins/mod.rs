//! Volcano's plugins. Each module documents the extension points it registers and
//! its arguments.

pub mod binpack;
pub mod capacity;
pub mod conformance;
pub mod drf;
pub mod gang;
pub mod network_topology;
pub mod nodeorder;
pub mod overcommit;
pub mod predicates;
pub mod priority;
pub mod proportion;
pub mod sla;

use super::conf::PluginConf;
use super::framework::Plugin;
use lahar_core::job::{JobId, PodStatus};
use lahar_core::resource::{DIMS, PODS, Resources};
use lahar_core::session::Session;

/// Builds a plugin from its conf entry (names are validated by the conf loader).
pub fn build(pc: &PluginConf) -> Box<dyn Plugin> {
    match pc.name.as_str() {
        "priority" => Box::new(priority::Priority),
        "gang" => Box::new(gang::Gang),
        "conformance" => Box::new(conformance::Conformance),
        "drf" => Box::new(drf::Drf),
        "proportion" => Box::new(proportion::Proportion::default()),
        "capacity" => Box::new(capacity::Capacity::default()),
        "predicates" => Box::new(predicates::Predicates),
        "nodeorder" => Box::new(nodeorder::NodeOrder::new(&pc.args)),
        "binpack" => Box::new(binpack::Binpack::new(&pc.args)),
        "network-topology-aware" => Box::new(network_topology::NetworkTopologyAware::new(&pc.args)),
        "sla" => Box::new(sla::Sla::new(&pc.args)),
        "overcommit" => Box::new(overcommit::Overcommit::new(&pc.args)),
        other => unreachable!("conf loader accepted unknown plugin {other}"),
    }
}

/// Pods of a job that are not deleted (Volcano's `job.Tasks`).
pub(crate) fn live_pods(ssn: &Session<'_>, j: JobId) -> u32 {
    let job = ssn.job(j);
    job.pods.len() as u32 - job.count(PodStatus::Deleted)
}

/// Pending BestEffort pods of a job (they count toward readiness).
pub(crate) fn pending_best_effort(ssn: &Session<'_>, j: JobId) -> u32 {
    ssn.job(j).pods.iter().filter(|&&p| ssn.pod(p).status == PodStatus::Pending && ssn.pod(p).best_effort).count()
        as u32
}

/// A float resource vector (deserved shares are fractional in Volcano).
pub(crate) type FRes = [f64; DIMS];

/// Converts to floats.
pub(crate) fn f(r: &Resources) -> FRes {
    let mut o = [0.0; DIMS];
    for (d, v) in o.iter_mut().enumerate() {
        *v = r.get(d) as f64;
    }
    o
}

/// Volcano's `LessEqual` with its 0.1 epsilon, every dimension.
pub(crate) fn le(a: &FRes, b: &FRes) -> bool {
    (0..DIMS).all(|d| a[d] < b[d] || (a[d] - b[d]).abs() < 0.1)
}

/// `a ≤ b` on the dimensions `mask` requests (> 0), ignoring pods, no epsilon
/// (Volcano's `LessEqualWithDimension`).
pub(crate) fn le_on(a: &FRes, b: &FRes, mask: &Resources) -> bool {
    (0..DIMS).all(|d| d == PODS || mask.get(d) <= 0 || a[d] <= b[d])
}

/// Share: max over dimensions with `deserved ≥ 0.1` of allocated / deserved.
pub(crate) fn share(alloc: &FRes, deserved: &FRes) -> f64 {
    (0..DIMS).filter(|&d| deserved[d] >= 0.1).map(|d| alloc[d] / deserved[d]).fold(0.0, f64::max)
}
