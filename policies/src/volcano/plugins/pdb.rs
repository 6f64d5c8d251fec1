//! `pdb` (Volcano's `plugins/pdb`): PodDisruptionBudgets limit the victims of
//! preempt, reclaim and shuffle. No arguments.
//!
//! Each session starts from every budget's `status.disruptionsAllowed`, which
//! lahar computes as the disruption controller would from the pods it simulates
//! when the session opens: the covered pods that are Running, less the number the
//! budget wants kept (`minAvailable`, or the covered pods less `maxUnavailable`;
//! percentages of the covered pods, rounded up). As in Volcano, every call starts
//! afresh from those numbers (evictions made earlier in the session are not
//! counted), and candidates are taken in order: each covered candidate uses one
//! disruption of every budget covering it, and a candidate that takes a budget
//! below zero is kept. A pod without labels is never a victim (Volcano drops it
//! before looking at budgets); pods of the jobs lahar builds itself carry Volcano's
//! job-controller labels. As a `VictimTasks` function (for shuffle), the plugin
//! answers with every Running pod of its input that the budgets allow: shuffle
//! with pdb evicts them all, as in Volcano.

use super::super::plugin::{Hooks, Plugin, PluginSpec};
use lahar_core::model::job::{PodId, PodStatus};
use lahar_core::session::Session;

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec = PluginSpec::new("pdb", |_| Box::new(Pdb::default()));

/// The plugin.
#[derive(Debug, Default)]
pub struct Pdb {
    /// Per budget: disruptions allowed when the session opened.
    allowed: Vec<i64>,
}

impl Pdb {
    /// Volcano's `pdbFilterFn` over `candidates`, in order.
    fn filter(&self, ssn: &Session<'_>, candidates: &[PodId]) -> Vec<PodId> {
        let mut left = self.allowed.clone();
        let mut out = Vec::new();
        for &c in candidates {
            let p = ssn.pod(c);
            if !ssn.job(p.job).spec.has_pod_labels(p.task as usize) {
                continue;
            }
            let mut violated = false;
            for (b, n) in left.iter_mut().enumerate() {
                if ssn.budget_jobs(b).get(&p.job).is_some_and(|tasks| tasks.contains(&p.task)) {
                    *n -= 1;
                    violated |= *n < 0;
                }
            }
            if !violated {
                out.push(c);
            }
        }
        out
    }
}

impl Plugin for Pdb {
    fn name(&self) -> &'static str {
        "pdb"
    }
    fn hooks(&self) -> Hooks {
        Hooks::PREEMPTABLE.and(Hooks::RECLAIMABLE).and(Hooks::RECLAIM_IGNORES_RECLAIMER).and(Hooks::VICTIM_TASKS)
    }
    fn open(&mut self, ssn: &mut Session<'_>) {
        self.allowed = (0..ssn.budgets().len())
            .map(|b| {
                let (mut healthy, mut expected) = (0u32, 0u32);
                for (&j, tasks) in ssn.budget_jobs(b) {
                    let job = ssn.job(j);
                    for &t in tasks {
                        healthy += job.task_count(t as usize, PodStatus::Running);
                        expected += job.spec.tasks[t as usize].replicas;
                    }
                }
                ssn.budgets()[b].allowed(healthy, expected) as i64
            })
            .collect();
    }
    fn preemptable(&self, ssn: &Session<'_>, _: PodId, candidates: &[PodId]) -> Option<Vec<PodId>> {
        Some(self.filter(ssn, candidates))
    }
    fn reclaimable(&self, ssn: &Session<'_>, _: PodId, candidates: &[PodId]) -> Option<Vec<PodId>> {
        Some(self.filter(ssn, candidates))
    }
    fn victim_tasks(&self, ssn: &Session<'_>, running: &[PodId]) -> Option<Vec<PodId>> {
        Some(self.filter(ssn, running))
    }
}
