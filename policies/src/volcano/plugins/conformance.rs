//! `conformance`: never evict system-critical pods (priority classes
//! `system-cluster-critical`, `system-node-critical`) or pods in `kube-system`.

use super::super::plugin::{EvictKind, Hooks, Plugin, PluginSpec};
use lahar_core::model::job::{JobId, PodId};
use lahar_core::session::Session;

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec = PluginSpec::new("conformance", |_| Box::new(Conformance));

/// The conformance plugin (no arguments).
pub struct Conformance;

fn evictable(ssn: &Session<'_>, p: PodId) -> bool {
    let spec = &ssn.job(ssn.pod(p).job).spec;
    let critical = matches!(spec.priority_class.as_deref(), Some("system-cluster-critical" | "system-node-critical"));
    !critical && &*spec.namespace != "kube-system"
}

impl Plugin for Conformance {
    fn name(&self) -> &'static str {
        "conformance"
    }
    fn hooks(&self) -> Hooks {
        Hooks::PREEMPTABLE.and(Hooks::RECLAIMABLE).and(Hooks::RECLAIM_IGNORES_RECLAIMER).and(Hooks::NEVER_ABSTAINS)
    }
    fn preemptable(&self, ssn: &Session<'_>, _: PodId, cands: &[PodId]) -> Option<Vec<PodId>> {
        Some(cands.iter().copied().filter(|&c| evictable(ssn, c)).collect())
    }
    fn reclaimable(&self, ssn: &Session<'_>, _: PodId, cands: &[PodId]) -> Option<Vec<PodId>> {
        Some(cands.iter().copied().filter(|&c| evictable(ssn, c)).collect())
    }
    fn unified_evictable(&self, ssn: &Session<'_>, _: EvictKind, _: JobId, cands: &[PodId]) -> Option<Vec<PodId>> {
        Some(cands.iter().copied().filter(|&c| evictable(ssn, c)).collect())
    }
}
