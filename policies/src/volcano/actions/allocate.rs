//! `allocate`: queues in queue order, one job step at a time. A step places a
//! job's pending pods (task order; queue quota, predicates, best node) until the
//! gang is ready; a ready job is committed and, if it has more pending pods, goes
//! back into its queue for one more pod per later step. A job whose step fails is
//! dropped for this session; a queue found overused is dropped for the rest of the
//! action. A job that is only pipelined keeps its tentative placements until the
//! session ends (Volcano neither commits nor discards it).
//!
//! Jobs constrained by `networkTopology` are placed inside one HyperNode: every
//! HyperNode of the lowest tier in the job's gradient is tried (dry run), the best
//! scoring one that makes the job ready or pipelined wins; only if no HyperNode of
//! that tier works is the next tier tried.

use super::super::framework::Framework;
use super::super::plugins::network_topology::tier_limit;
use super::{best_node, insert_sorted, pending_tasks, predicate_nodes, queues_of, sort_by};
use lahar_core::cluster::NodeId;
use lahar_core::job::{JobId, PodGroupPhase, PodId, PodStatus};
use lahar_core::queue::QueueId;
use lahar_core::session::{Session, Statement};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Per-scheduler state the allocate action keeps across sessions.
#[derive(Default, Debug)]
pub struct AllocState {
    /// Rotating start of the node search.
    pub next_start: usize,
}

/// Should the step go on after a pod of `failed` roles found no node?
fn need_continue(ssn: &Session<'_>, j: JobId, failed: &BTreeSet<u16>) -> bool {
    let job = ssn.job(j);
    let total = super::super::plugins::live_pods(ssn, j);
    let min = job.spec.min_available;
    if min >= total {
        return false;
    }
    let sum_task_min: u32 = job.spec.tasks.iter().map(|t| t.min_available).sum();
    if min < sum_task_min {
        let pending_ok = job
            .pods
            .iter()
            .filter(|&&p| ssn.pod(p).status == PodStatus::Pending && !failed.contains(&ssn.pod(p).task))
            .count() as u32;
        return job.ready_count() + pending_ok >= min;
    }
    !failed.iter().any(|&t| {
        let task = &job.spec.tasks[t as usize];
        let placed = job.task_count(t as usize, PodStatus::Allocated)
            + job.task_count(t as usize, PodStatus::Running)
            + job.task_count(t as usize, PodStatus::Succeeded);
        task.min_available > 0 && placed < task.min_available
    })
}

/// One job step over `within` nodes (all nodes when `None`), consuming pods from
/// the front of the job's task queue (`tasks` persists across the job's steps in a
/// session, as in Volcano: a pod that found no node is not retried). Returns the
/// statement when the job ends ready or pipelined; otherwise discards it.
pub(crate) fn allocate_tasks(
    fw: &Framework,
    ssn: &mut Session<'_>,
    st: &mut AllocState,
    j: JobId,
    tasks: &mut VecDeque<PodId>,
    within: Option<&[NodeId]>,
) -> Option<Statement> {
    let mut stmt = ssn.statement();
    let q = ssn.job(j).spec.queue;
    let mut failed: BTreeSet<u16> = BTreeSet::new();
    while let Some(pod) = tasks.pop_front() {
        if !fw.allocatable(ssn, q, pod) {
            continue;
        }
        let role = ssn.pod(pod).task;
        if failed.contains(&role) {
            continue;
        }
        let req = ssn.pod(pod).req;
        let nominated =
            ssn.pod(pod).nominated.filter(|&n| within.is_none_or(|w| w.contains(&n))).filter(|&n| {
                req.fits_in(&ssn.future_idle(n)) && ssn.gpu_fits(pod, n) && fw.predicate(ssn, pod, n).is_ok()
            });
        let nodes = match nominated {
            Some(n) => vec![n],
            None => predicate_nodes(fw, ssn, pod, within, &mut st.next_start),
        };
        let Some(best) = best_node(fw, ssn, pod, &nodes) else {
            failed.insert(role);
            if need_continue(ssn, j, &failed) {
                continue;
            }
            break;
        };
        if ssn.fits_idle(pod, best) {
            ssn.allocate(&mut stmt, pod, best).expect("idle checked");
        } else {
            ssn.pipeline(&mut stmt, pod, best).expect("future idle checked");
        }
        if fw.job_ready(ssn, j) {
            break;
        }
    }
    if fw.job_ready(ssn, j) || fw.job_pipelined(ssn, j) {
        Some(stmt)
    } else {
        ssn.discard(stmt);
        None
    }
}

/// Places a topology-constrained job inside the best HyperNode of the lowest tier
/// that can hold it.
fn allocate_for_job(
    fw: &Framework,
    ssn: &mut Session<'_>,
    st: &mut AllocState,
    j: JobId,
    tasks: &mut VecDeque<PodId>,
) -> Option<Statement> {
    let Some(gradient) = fw.hypernode_gradient(ssn, j) else { return allocate_tasks(fw, ssn, st, j, tasks, None) };
    let pods: Vec<PodId> = tasks.iter().copied().collect();
    for tier in gradient {
        // (score, hypernode, placements, tasks left)
        let mut best: Option<(f64, usize, Vec<(PodId, NodeId, bool)>, VecDeque<PodId>)> = None;
        for hn in tier {
            let h = ssn.cluster().topology.get(hn);
            let nodes: Option<Vec<NodeId>> = (!h.virtual_top).then(|| h.nodes.clone());
            let mut left = tasks.clone();
            let Some(stmt) = allocate_tasks(fw, ssn, st, j, &mut left, nodes.as_deref()) else { continue };
            let ops: Vec<(PodId, NodeId, bool)> = pods
                .iter()
                .filter_map(|&p| {
                    let pod = ssn.pod(p);
                    match pod.status {
                        PodStatus::Allocated => pod.node.map(|n| (p, n, true)),
                        PodStatus::Pipelined => pod.node.map(|n| (p, n, false)),
                        _ => None,
                    }
                })
                .collect();
            ssn.discard(stmt);
            let score = fw.hypernode_score(ssn, j, &pods, hn);
            if best.as_ref().is_none_or(|b| score > b.0) {
                best = Some((score, hn.0 as usize, ops, left));
            }
        }
        if let Some((_, _, ops, left)) = best {
            *tasks = left;
            let mut stmt = ssn.statement();
            for (p, n, idle) in ops {
                let r = if idle { ssn.allocate(&mut stmt, p, n) } else { ssn.pipeline(&mut stmt, p, n) };
                r.expect("replaying a dry run on the same state");
            }
            return Some(stmt);
        }
    }
    None
}

/// Runs the allocate action. `promote_pending`: no enqueue action is configured, so
/// allocate admits Pending PodGroups itself.
pub fn run(fw: &Framework, ssn: &mut Session<'_>, st: &mut AllocState, promote_pending: bool) {
    ssn.set_action("allocate");
    let mut per_queue: BTreeMap<QueueId, Vec<JobId>> = BTreeMap::new();
    let mut task_queues: BTreeMap<JobId, VecDeque<PodId>> = BTreeMap::new();
    let candidates: Vec<JobId> = ssn.jobs_with_pending().collect();
    for j in candidates {
        if ssn.job(j).pg_phase == PodGroupPhase::Pending {
            if !promote_pending {
                continue;
            }
            ssn.set_pod_group_phase(j, PodGroupPhase::Inqueue, "no enqueue action: admitted by allocate");
        }
        // A job none of whose pending pods fits any node's future-idle resources
        // can only fail its step, which changes nothing: skip it without sorting
        // its pods (an O(1) index query per pod shape). This is what keeps sessions
        // cheap while a backlog waits for a full cluster.
        let job = ssn.job(j);
        let any_fits = job.spec.tasks.iter().enumerate().any(|(t, task)| {
            job.task_count(t, PodStatus::Pending) > 0
                && !task.requests.is_best_effort()
                && ssn.first_fit(&task.requests, 0).is_some()
        });
        if !any_fits {
            continue;
        }
        let tasks = pending_tasks(fw, ssn, j, false);
        if fw.job_valid(ssn, j).is_err() || tasks.is_empty() {
            continue;
        }
        task_queues.insert(j, tasks.into());
        per_queue.entry(ssn.job(j).spec.queue).or_default().push(j);
    }
    for jobs in per_queue.values_mut() {
        sort_by(jobs, |a, b| fw.job_order(ssn, a, b));
    }
    let all: Vec<JobId> = per_queue.values().flatten().copied().collect();
    let mut queues = queues_of(fw, ssn, &all);
    while !queues.is_empty() {
        let q = queues.remove(0);
        if fw.overused(ssn, q) {
            continue;
        }
        let Some(jobs) = per_queue.get_mut(&q).filter(|v| !v.is_empty()) else { continue };
        let j = jobs.remove(0);
        let tasks = task_queues.get_mut(&j).expect("task queue built at intake");
        let stmt = if tier_limit(ssn, j).is_some() {
            allocate_for_job(fw, ssn, st, j, tasks)
        } else {
            allocate_tasks(fw, ssn, st, j, tasks, None)
        };
        if let Some(stmt) = stmt {
            if fw.job_ready(ssn, j) {
                ssn.commit(stmt);
                if !task_queues[&j].is_empty() {
                    let jobs = per_queue.get_mut(&q).expect("queue present");
                    insert_sorted(jobs, j, |a, b| fw.job_order(ssn, a, b));
                }
            } else {
                // Pipelined but not ready: neither committed nor discarded; its
                // placements hold resources until the session closes.
                drop(stmt);
            }
        }
        insert_sorted(&mut queues, q, |a, b| fw.queue_order(ssn, a, b));
    }
}
