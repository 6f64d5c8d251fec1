//! `priority`: job order and task order by priority, preemption of lower-priority
//! jobs, and "starving" while a job is not fully placed.

use super::super::plugin::{EvictKind, Hooks, Plugin, PluginSpec};
use super::super::subjobs;
use lahar_core::model::job::{JobId, PodId};
use lahar_core::session::Session;
use lahar_core::world::{ReachFacts, VictimKey};
use std::cmp::Ordering;

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec = PluginSpec::new("priority", |_| Box::new(Priority));

/// The priority plugin (no arguments).
pub struct Priority;

impl Plugin for Priority {
    fn name(&self) -> &'static str {
        "priority"
    }
    fn hooks(&self) -> Hooks {
        Hooks::JOB_ORDER.and(Hooks::PREEMPTABLE).and(Hooks::NEVER_ABSTAINS)
    }
    fn job_order_key(&self, ssn: &Session<'_>, j: JobId) -> Option<f64> {
        // Higher priority first.
        Some(-(ssn.job(j).spec.priority as f64))
    }
    fn job_order_key_of_facts(&self, ssn: &Session<'_>, f: &ReachFacts) -> Option<f64> {
        // The facts carry the spec's priority. (The deliberately wrong key of the
        // equivalence tests puts lower priorities first.)
        if ssn.planted.wrong_fact_keys {
            return Some(f.priority as f64);
        }
        Some(-(f.priority as f64))
    }
    fn job_order(&self, ssn: &Session<'_>, l: JobId, r: JobId) -> Option<Ordering> {
        Some(ssn.job(r).spec.priority.cmp(&ssn.job(l).spec.priority))
    }
    fn sub_job_order(&self, ssn: &Session<'_>, j: JobId, l: u32, r: u32) -> Option<Ordering> {
        // Higher sub-job priority (its highest task priority) first.
        Some(subjobs::priority(ssn, j, r).cmp(&subjobs::priority(ssn, j, l)))
    }
    fn task_order(&self, ssn: &Session<'_>, l: PodId, r: PodId) -> Option<Ordering> {
        Some(ssn.pod(r).priority.cmp(&ssn.pod(l).priority))
    }
    fn victim_group_ok(&self, ssn: &Session<'_>, preemptor: PodId, reclaim: bool, key: VictimKey) -> Option<bool> {
        // Other jobs' pods of lower job priority, or the preemptor's own job's pods.
        (!reclaim).then(|| key.priority <= ssn.job(ssn.pod(preemptor).job).spec.priority)
    }
    fn unified_evictable(&self, ssn: &Session<'_>, kind: EvictKind, job: JobId, cands: &[PodId]) -> Option<Vec<PodId>> {
        // Reclaim is about queues' shares: priority lets every candidate go.
        if kind == EvictKind::GangReclaim {
            return Some(cands.to_vec());
        }
        let p = ssn.job(job).spec.priority;
        Some(cands.iter().copied().filter(|&c| ssn.job(ssn.pod(c).job).spec.priority < p).collect())
    }
    fn preemptable(&self, ssn: &Session<'_>, preemptor: PodId, cands: &[PodId]) -> Option<Vec<PodId>> {
        let p = ssn.pod(preemptor);
        let pj = ssn.job(p.job).spec.priority;
        Some(
            cands
                .iter()
                .copied()
                .filter(|&c| {
                    let v = ssn.pod(c);
                    if v.job != p.job { ssn.job(v.job).spec.priority < pj } else { v.priority < p.priority }
                })
                .collect(),
        )
    }
    fn job_starving(&self, ssn: &Session<'_>, j: JobId) -> Option<bool> {
        let job = ssn.job(j);
        Some(job.ready_count() + job.waiting_count() < job.live_count())
    }
}
