//! `backfill`: places BestEffort pods (those that request nothing but a pod slot),
//! queue by queue, job by job, task by task, each on its best node, binding at once.

use super::super::framework::Framework;
use super::allocate::AllocState;
use super::{best_node, pending_tasks, predicate_nodes, queues_of};
use lahar_core::model::job::JobId;
use lahar_core::session::Session;

/// Runs the backfill action.
pub fn run(fw: &Framework, ssn: &mut Session<'_>, st: &mut AllocState) {
    ssn.set_action("backfill");
    // No Pending BestEffort pod anywhere: the walk below would find no job (the
    // exhaustive walk still makes it).
    if !ssn.is_exhaustive() && !ssn.any_pending_best_effort() {
        return;
    }
    let jobs: Vec<JobId> = ssn
        .admitted_jobs_with_pending()
        .into_iter()
        .filter(|&j| super::super::plugins::pending_best_effort(ssn, j) > 0 && fw.job_valid(ssn, j).is_ok())
        .collect();
    for q in queues_of(fw, ssn, &jobs) {
        let mut mine: Vec<JobId> = jobs.iter().copied().filter(|&j| ssn.job(j).spec.queue == q).collect();
        fw.sort_jobs(ssn, &mut mine);
        for j in mine {
            for pod in pending_tasks(fw, ssn, j, true) {
                let nodes = predicate_nodes(fw, ssn, pod, None, &mut st.next_start);
                let idle: Vec<_> = nodes.iter().copied().filter(|&n| ssn.fits_idle(pod, n)).collect();
                if ssn.explaining(pod) {
                    for &n in nodes.iter().filter(|n| !idle.contains(n)) {
                        let why = "fits only future-idle resources; backfill binds on idle resources";
                        ssn.explain(pod, Some(n), "backfill", Some(false), why, None);
                    }
                }
                match best_node(fw, ssn, pod, &idle) {
                    Some(n) => {
                        ssn.allocate_now(pod, n).expect("idle checked");
                        ssn.explain(pod, Some(n), "result", Some(true), "bound by backfill", None);
                    }
                    None => ssn.explain(pod, None, "result", Some(false), "backfill: no node with idle room", None),
                }
            }
        }
    }
}
