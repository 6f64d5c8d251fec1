//! `enqueue`: admits PodGroups from Pending to Inqueue, queue by queue in queue
//! order and job by job in job order, when every enqueue vote permits (overcommit,
//! proportion/capacity, sla). A rejected job stays Pending; its queue goes on.

use super::super::framework::Framework;
use super::{queues_of, sort_by};
use lahar_core::job::{JobId, PodGroupPhase};
use lahar_core::session::Session;

/// Runs the enqueue action.
pub fn run(fw: &mut Framework, ssn: &mut Session<'_>) {
    ssn.set_action("enqueue");
    // Votes only tighten as groups are admitted within a session (reservations grow,
    // capacities do not), so a job rejected now stays rejected: filter before sorting.
    let pending: Vec<JobId> = ssn
        .jobs()
        .filter(|&j| ssn.job(j).pg_phase == PodGroupPhase::Pending)
        .filter(|&j| ssn.job(j).spec.min_resources.is_zero() || fw.job_enqueueable(ssn, j))
        .collect();
    for q in queues_of(fw, ssn, &pending) {
        let mut jobs: Vec<JobId> = pending.iter().copied().filter(|&j| ssn.job(j).spec.queue == q).collect();
        sort_by(&mut jobs, |a, b| fw.job_order(ssn, a, b));
        for j in jobs {
            if ssn.job(j).spec.min_resources.is_zero() || fw.job_enqueueable(ssn, j) {
                fw.job_enqueued(ssn, j);
                ssn.set_pod_group_phase(j, PodGroupPhase::Inqueue, "enqueued");
            }
        }
    }
}
