//! `enqueue`: admits PodGroups from Pending to Inqueue, queue by queue in queue
//! order and job by job in job order, when every enqueue vote permits (overcommit,
//! proportion/capacity, sla). A rejected job stays Pending; its queue goes on.

use super::super::explain;
use super::super::framework::Framework;
use super::waiting::{OrderKey, WaitingOrder};
use super::{order_queues, queues_of};
use lahar_core::model::job::{JobId, PodGroupPhase};
use lahar_core::model::queue::QueueState;
use lahar_core::model::resource::Resources;
use lahar_core::session::Session;
use lahar_core::world::WaitingShape;
use std::collections::BTreeSet;

/// Runs the enqueue action.
pub fn run(fw: &mut Framework, ssn: &mut Session<'_>, order: &mut WaitingOrder) {
    ssn.set_action("enqueue");
    let by_shape = !ssn.is_exhaustive() && !ssn.explaining_any() && fw.enqueue_votes_by_shape();
    if by_shape && order.sync(fw, ssn) {
        return from_heads(fw, ssn, order);
    }
    // Votes only tighten as groups are admitted within a session (reservations grow,
    // capacities do not), so a job rejected now stays rejected: filter before sorting.
    let mut pending: Vec<JobId> = Vec::new();
    let mut refused: Vec<JobId> = Vec::new();
    if by_shape {
        // Every vote depends only on the queue and minResources: one vote per group
        // of waiting PodGroups decides the whole group (no job of it is touched).
        for group in ssn.waiting_admission_by_shape() {
            let first = *group.first().expect("groups are not empty");
            if ssn.job(first).spec.min_resources.is_zero() || fw.job_enqueueable(ssn, first) {
                pending.extend(group.iter().copied());
            }
        }
        pending.sort_unstable();
    }
    let scan = if by_shape { Vec::new() } else { ssn.jobs_waiting_admission() };
    for j in scan {
        if ssn.job(j).spec.min_resources.is_zero() || fw.job_enqueueable(ssn, j) {
            pending.push(j);
        } else if ssn.explaining_job(j) {
            refused.push(j);
        }
    }
    for j in refused {
        rejected(fw, ssn, j);
    }
    for q in queues_of(fw, ssn, &pending) {
        let mut jobs: Vec<JobId> = pending.iter().copied().filter(|&j| ssn.job(j).spec.queue == q).collect();
        fw.sort_jobs(ssn, &mut jobs);
        for j in jobs {
            if ssn.job(j).spec.min_resources.is_zero() || fw.job_enqueueable(ssn, j) {
                fw.job_enqueued(ssn, j);
                ssn.set_pod_group_phase(j, PodGroupPhase::Inqueue, "enqueued");
                explain::job_row(ssn, j, "enqueue", true, "PodGroup admitted: Pending → Inqueue");
            } else {
                rejected(fw, ssn, j);
            }
        }
    }
}

/// enqueue from the standing order: the groups whose vote passes now, queue by
/// queue in queue order; within a queue, the job first in job order among the
/// groups' heads is voted on next. A group whose job is rejected is done: votes
/// only tighten within a session, so every later job of it would be rejected too
/// (and a rejection changes nothing but `--explain` rows, which this path never
/// writes). The jobs admitted, and their order, are those of the sorted walk.
fn from_heads(fw: &mut Framework, ssn: &mut Session<'_>, order: &WaitingOrder) {
    // A group's (queue, minResources) decides its vote: no job of it is read.
    let passing: Vec<(&WaitingShape, &BTreeSet<(OrderKey, JobId)>)> = order
        .groups
        .iter()
        .filter(|(shape, _)| {
            let minr = Resources(shape.1);
            minr.is_zero() || fw.shape_enqueueable(ssn, shape.0, &minr)
        })
        .collect();
    // A group's jobs are of its queue: the groups name the queues.
    let queues = order_queues(fw, ssn, passing.iter().map(|(shape, _)| shape.0).collect());
    let mut live = Vec::new();
    for q in queues {
        live.clear();
        live.extend(passing.iter().filter(|(shape, _)| shape.0 == q).map(|(_, set)| set.iter().peekable()));
        loop {
            let next =
                live.iter_mut().enumerate().filter_map(|(i, it)| it.peek().map(|h| (i, h))).min_by(|a, b| a.1.cmp(b.1));
            let Some((i, &&(_, j))) = next else { break };
            if ssn.job(j).spec.min_resources.is_zero() || fw.job_enqueueable(ssn, j) {
                fw.job_enqueued(ssn, j);
                ssn.set_pod_group_phase(j, PodGroupPhase::Inqueue, "enqueued");
                live[i].next();
            } else {
                let _ = live.swap_remove(i);
            }
        }
    }
}

/// Records why a watched job's PodGroup stays Pending.
fn rejected(fw: &Framework, ssn: &mut Session<'_>, j: JobId) {
    if ssn.explaining_job(j) {
        let q = ssn.queue(ssn.job(j).spec.queue);
        let qname = q.spec.name.clone();
        let open = q.spec.state == QueueState::Open;
        let mut why: Vec<String> = fw
            .enqueue_rejecters(ssn, j)
            .into_iter()
            .map(|(p, numbers)| match (p, numbers) {
                ("overcommit", _) => {
                    "overcommit: minResources exceed the cluster's overcommitted idle resources".to_string()
                }
                _ if !open => format!("{p}: queue {qname} is not open"),
                (_, Some(n)) => format!("{p}: minResources exceed what queue {qname} may still admit: {n}"),
                _ => format!("{p}: minResources exceed what queue {qname} may still admit"),
            })
            .collect();
        if why.is_empty() {
            why.push("the plugins' votes".to_string());
        }
        let why = format!("PodGroup stays Pending: enqueue rejected ({})", why.join("; "));
        explain::job_row(ssn, j, "enqueue", false, &why);
    }
}
