//! `predicates`: Kubernetes filters. lahar models node selectors and required
//! node affinity `In` terms (NodeAffinity, including the GPU model label), taints
//! and tolerations (TaintToleration, and NodeUnschedulable through the cordon
//! taint), host ports (NodePorts), inter-pod affinity and anti-affinity
//! (InterPodAffinity, see `lahar_core::world`'s affinity module) and the
//! pod-count limit (through the `pods` resource, checked with the other
//! resources by the actions). Topology spread and volumes are not part of
//! lahar's model.
//!
//! A host-port conflict and an anti-affinity refusal (the pod's or an existing
//! pod's) are Kubernetes' `Unschedulable` (evicting the pod that holds the port
//! or matches the term resolves it): preempt and reclaim keep such a node as a
//! candidate, and preempt asks again after each eviction. Node affinity, taints
//! and the pod's required affinity are `UnschedulableAndUnresolvable`.

use super::super::args::{ArgSpec, ArgType};
use super::super::plugin::{Hooks, Plugin, PluginSpec};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::PodId;
use lahar_core::session::Session;

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec = PluginSpec::new("predicates", |pc| Box::new(Predicates::new(&pc.args)))
    .args(&[
        ArgSpec::new("predicate.NodeAffinityEnable", ArgType::Bool, "true", "switches its filter"),
        ArgSpec::new("predicate.NodePortsEnable", ArgType::Bool, "true", "switches its filter"),
        ArgSpec::new("predicate.TaintTolerationEnable", ArgType::Bool, "true", "switches its filter"),
        ArgSpec::new("predicate.PodAffinityEnable", ArgType::Bool, "true", "switches its filter"),
        ArgSpec::new(
            "predicate.NodeVolumeLimitsEnable",
            ArgType::Bool,
            "true",
            "accepted; what it switches is not modelled",
        ),
        ArgSpec::new("predicate.VolumeZoneEnable", ArgType::Bool, "true", "accepted; what it switches is not modelled"),
        ArgSpec::new(
            "predicate.PodTopologySpreadEnable",
            ArgType::Bool,
            "true",
            "accepted; what it switches is not modelled",
        ),
        ArgSpec::new(
            "predicate.VolumeBindingEnable",
            ArgType::Bool,
            "true",
            "accepted; what it switches is not modelled",
        ),
        ArgSpec::new(
            "predicate.DynamicResourceAllocationEnable",
            ArgType::Bool,
            "true",
            "accepted; what it switches is not modelled",
        ),
        ArgSpec::new("predicate.CacheEnable", ArgType::Bool, "true", "accepted; what it switches is not modelled"),
        ArgSpec::new("volumebinding.shape", ArgType::List, "", "accepted; volumes are not modelled"),
        ArgSpec::new("volumebinding.weight", ArgType::Int, "", "accepted; volumes are not modelled"),
        ArgSpec::new("volumebinding.bindTimeoutSeconds", ArgType::Int, "", "accepted; volumes are not modelled"),
        ArgSpec::new(
            "dynamicresources.filterTimeoutSeconds",
            ArgType::Int,
            "",
            "accepted; resource claims are not modelled",
        ),
    ])
    .retired(RETIRED);

/// Arguments that older Volcano user guides publish and Volcano no longer reads,
/// with what Volcano does with them now.
const RETIRED: &[(&str, &str)] = &[
    (
        "predicate.GPUSharingEnable",
        "GPU sharing moved to the deviceshare plugin (`deviceshare.GPUSharingEnable`) in Volcano v1.10; the predicates plugin no longer reads it, so it is ignored",
    ),
    (
        "predicate.GPUNumberEnable",
        "whole-GPU counting moved to the deviceshare plugin (`deviceshare.GPUNumberEnable`) in Volcano v1.10; the predicates plugin no longer reads it, so it is ignored",
    ),
    (
        "predicate.ProportionalEnable",
        "the proportional predicate moved to the resource-strategy-fit plugin (its `proportional` argument) in Volcano v1.13; the predicates plugin no longer reads it, so it is ignored",
    ),
    (
        "predicate.resources",
        "the proportional predicate's resources moved to the resource-strategy-fit plugin (`proportional.resources`) in Volcano v1.13; the predicates plugin no longer reads them, so they are ignored",
    ),
];

/// The predicates plugin.
pub struct Predicates {
    /// `predicate.NodeAffinityEnable` (default true): filter nodes by the pods'
    /// node selectors and required node affinity.
    labels: bool,
    /// `predicate.NodePortsEnable` (default true): filter nodes by host ports.
    ports: bool,
    /// `predicate.TaintTolerationEnable` (default true): filter nodes by taints.
    taints: bool,
    /// `predicate.PodAffinityEnable` (default true): filter nodes by inter-pod
    /// affinity and anti-affinity.
    affinity: bool,
}

/// Kubernetes' NodePorts reason.
pub const PORTS_TAKEN: &str = "node(s) didn't have free ports for the requested pod ports";

impl Predicates {
    /// From the plugin's arguments.
    pub fn new(args: &crate::volcano::args::Args) -> Predicates {
        Predicates {
            labels: args.bool("predicate.NodeAffinityEnable", true),
            ports: args.bool("predicate.NodePortsEnable", true),
            taints: args.bool("predicate.TaintTolerationEnable", true),
            affinity: args.bool("predicate.PodAffinityEnable", true),
        }
    }

    /// The filters evicting cannot resolve: the cordon, taints and node affinity
    /// (Kubernetes' messages).
    fn unresolvable(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Result<(), String> {
        match ssn.untolerated_taint(pod, node).filter(|_| self.taints) {
            Some(t) if t.key == lahar_core::model::cluster::Taint::UNSCHEDULABLE => {
                Err("node(s) were unschedulable".into())
            }
            Some(t) => Err(format!("node(s) had untolerated taint {{{}: {}}}", t.key, t.value)),
            None if self.labels && !ssn.labels_match(pod, node) => {
                Err("node(s) didn't match Pod's node selector".into())
            }
            None => match self.affinity.then(|| ssn.affinity_refusal(pod, node)).flatten() {
                Some(r) if !r.resolvable() => Err(r.reason().into()),
                _ => Ok(()),
            },
        }
    }
}

impl Plugin for Predicates {
    fn name(&self) -> &'static str {
        "predicates"
    }
    fn hooks(&self) -> Hooks {
        Hooks::PREDICATE
    }
    fn predicate_passes_everywhere(&self, ssn: &Session<'_>, pod: PodId) -> bool {
        let p = ssn.pod(pod);
        let task = &ssn.job(p.job).spec.tasks[p.task as usize];
        self.unresolvable_passes_everywhere(ssn, pod)
            && (!self.ports || task.host_ports().is_empty())
            && (!self.affinity || !ssn.affinity_may_refuse(pod))
    }
    fn predicate(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Result<(), String>> {
        Some(self.unresolvable(ssn, pod, node).and_then(|()| {
            if self.ports && ssn.port_conflict(pod, node) {
                return Err(PORTS_TAKEN.into());
            }
            match self.affinity.then(|| ssn.affinity_refusal(pod, node)).flatten() {
                Some(r) => Err(r.reason().into()),
                None => Ok(()),
            }
        }))
    }
    fn predicate_unresolvable(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Result<(), String>> {
        Some(self.unresolvable(ssn, pod, node))
    }
    fn unresolvable_passes_everywhere(&self, ssn: &Session<'_>, pod: PodId) -> bool {
        let p = ssn.pod(pod);
        let task = &ssn.job(p.job).spec.tasks[p.task as usize];
        (!self.labels || !task.has_label_filter())
            && (!self.taints || !ssn.cluster().has_taints())
            && (!self.affinity || !ssn.affinity_unresolvable_possible(pod))
    }
}
