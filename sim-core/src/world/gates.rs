//! Scheduling gates (`spec.schedulingGates`, Kubernetes' pod scheduling
//! readiness): a pod made with gates is Pending and counted as such everywhere
//! (its job's pod counts, the queue's request), but no action places it until
//! every gate is removed; meanwhile its request comes off its job's reservation
//! in the queues' sums (Volcano's `DeductSchGatedResources`, which proportion,
//! capacity and overcommit apply to every admitted job), unless Volcano's own
//! gate is the only one left (`GetSchGatedPodResources` skips those pods).

use super::{Job, World};
use crate::model::ids::{JobId, PodId};
use crate::model::resource::{PODS, Resources};

/// A job's gated pods.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Gating {
    /// How many of its pods are gated.
    pub pods: u32,
    /// The requests of those that carry a gate other than Volcano's own
    /// (without the pod slot: Volcano's task requests have no `pods`), which
    /// come off the job's reservations.
    pub deducted: Resources,
}

/// What Volcano deducts for a pod with `gates` left, `volcano_bit` being its
/// own gate's bit: the pod's request unless its only gate is Volcano's.
fn deductible(req: Resources, gates: u16, volcano_bit: u16) -> Resources {
    if gates == 0 || gates == volcano_bit {
        return Resources::ZERO;
    }
    let mut r = req;
    r.set(PODS, 0);
    r
}

impl World {
    /// The requests of job `j`'s gated pods that come off its reservations.
    pub fn deducted(&self, j: JobId) -> Resources {
        self.gating.get(&j).map_or(Resources::ZERO, |g| g.deducted)
    }

    /// Job `j`'s gated pods (none for most jobs).
    pub fn gating(&self, j: JobId) -> Option<&Gating> {
        self.gating.get(&j)
    }

    /// True if some job has gated pods.
    pub fn any_gated(&self) -> bool {
        !self.gating.is_empty()
    }

    /// Enters a pod just made with gates (see [`World::create_pod`]).
    pub(super) fn gate(&mut self, p: PodId) {
        let pod = &self.pods[p];
        let (j, req, gates) = (pod.job, pod.req, pod.gates);
        let bit = self.jobs[j].spec.tasks[pod.task as usize].volcano_gate_bit();
        let add = deductible(req, gates, bit);
        self.with_gating(j, |g| {
            g.pods += 1;
            g.deducted += add;
        });
    }

    /// Removes the gates `mask` selects (bit i: the task's gate i) from pod
    /// `p`; true if it had any of them. The pod is schedulable once none is
    /// left: nothing else changes (it was Pending, counted and listed as one all
    /// along, and its job's order and facts do not read its gates), but the
    /// job's reservations grow back by what was deducted.
    pub fn ungate(&mut self, p: PodId, mask: u16) -> bool {
        let stale = self.stale_gating_for_tests;
        let pod = &self.pods[p];
        let (j, req, old) = (pod.job, pod.req, pod.gates);
        if old & mask == 0 {
            return false;
        }
        let new = old & !mask;
        let bit = self.jobs[j].spec.tasks[pod.task as usize].volcano_gate_bit();
        let (before, after) = (deductible(req, old, bit), deductible(req, new, bit));
        self.pods[p].gates = new;
        self.revise(j);
        self.with_gating(j, |g| {
            g.pods -= (new == 0) as u32;
            if !stale {
                g.deducted = g.deducted - before + after;
            }
        });
        true
    }

    /// Runs `f` on job `j`'s gating record (made if missing, dropped once it
    /// holds no gated pod), moving the job's terms in its queue's sums.
    fn with_gating(&mut self, j: JobId, f: impl FnOnce(&mut Gating)) {
        let before = self.deducted(j);
        let stale = self.stale_gating_for_tests;
        let g = self.gating.entry(j).or_default();
        f(g);
        let after = g.deducted;
        if g.pods == 0 {
            debug_assert!(stale || g.deducted.is_zero(), "an empty gating record deducts {:?}", g.deducted);
            self.gating.remove(&j);
        }
        if before != after {
            let job: &Job = &self.jobs[j];
            let (old, new) = (super::queue_terms(job, before), super::queue_terms(job, after));
            self.queues[job.spec.queue].move_terms(old, new);
        }
    }

    /// The gating records as the pods say they should be (for the invariant
    /// check).
    pub(super) fn gating_from_pods(&self) -> std::collections::BTreeMap<JobId, Gating> {
        let mut out: std::collections::BTreeMap<JobId, Gating> = std::collections::BTreeMap::new();
        for pod in self.pods.iter().filter(|p| p.is_gated()) {
            let bit = self.jobs[pod.job].spec.tasks[pod.task as usize].volcano_gate_bit();
            let g = out.entry(pod.job).or_default();
            g.pods += 1;
            g.deducted += deductible(pod.req, pod.gates, bit);
        }
        out
    }
}
