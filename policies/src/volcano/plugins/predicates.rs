//! `predicates`: Kubernetes filters. lahar models node selectors (including the GPU
//! model label) and the pod-count limit (through the `pods` resource, checked with
//! the other resources by the actions). Taints, affinities, ports and volumes are
//! not part of lahar's model.

use super::super::framework::Plugin;
use lahar_core::cluster::NodeId;
use lahar_core::job::PodId;
use lahar_core::session::Session;

/// The predicates plugin.
pub struct Predicates;

impl Plugin for Predicates {
    fn name(&self) -> &'static str {
        "predicates"
    }
    fn has_predicate(&self) -> bool {
        true
    }
    fn predicate_passes_everywhere(&self, ssn: &Session<'_>, pod: PodId) -> bool {
        let p = ssn.pod(pod);
        ssn.job(p.job).spec.tasks[p.task as usize].node_selector.is_empty()
    }
    fn predicate(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Result<(), String>> {
        Some(if ssn.selector_matches(pod, node) {
            Ok(())
        } else {
            Err("node(s) didn't match Pod's node selector".into())
        })
    }
}
