//! `predicates`: Kubernetes filters. lahar models node selectors (including the GPU
//! model label), taints and tolerations (TaintToleration, and NodeUnschedulable
//! through the cordon taint), and the pod-count limit (through the `pods` resource,
//! checked with the other resources by the actions). Affinities, ports and volumes
//! are not part of lahar's model.

use super::super::framework::Plugin;
use lahar_core::cluster::NodeId;
use lahar_core::job::PodId;
use lahar_core::session::Session;

/// The predicates plugin.
pub struct Predicates {
    /// `predicate.TaintTolerationEnable` (default true): filter nodes by taints.
    taints: bool,
}

impl Predicates {
    /// From the plugin's arguments.
    pub fn new(args: &crate::volcano::conf::Args) -> Predicates {
        Predicates { taints: args.bool("predicate.TaintTolerationEnable", true) }
    }
}

impl Plugin for Predicates {
    fn name(&self) -> &'static str {
        "predicates"
    }
    fn has_predicate(&self) -> bool {
        true
    }
    fn predicate_passes_everywhere(&self, ssn: &Session<'_>, pod: PodId) -> bool {
        let p = ssn.pod(pod);
        !ssn.job(p.job).spec.tasks[p.task as usize].has_label_filter() && (!self.taints || !ssn.cluster().has_taints())
    }
    fn predicate(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Result<(), String>> {
        // Kubernetes' messages (NodeUnschedulable, TaintToleration, NodeAffinity).
        Some(match ssn.untolerated_taint(pod, node).filter(|_| self.taints) {
            Some(t) if t.key == lahar_core::cluster::Taint::UNSCHEDULABLE => Err("node(s) were unschedulable".into()),
            Some(t) => Err(format!("node(s) had untolerated taint {{{}: {}}}", t.key, t.value)),
            None if ssn.labels_match(pod, node) => Ok(()),
            None => Err("node(s) didn't match Pod's node selector".into()),
        })
    }
}
