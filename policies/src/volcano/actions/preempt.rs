//! `preempt`: within a queue, starving jobs take resources from other jobs' running
//! pods that the plugins agree are victims (priority, gang, drf, conformance).
//! Queues are visited once each, in queue order; each starving job (job order)
//! gets a statement committed only if the job ends pipelined. Then, for each still
//! starving job, its own lower-priority pods may be preempted by its pending ones.
//! Topology-constrained jobs never preempt.
//!
//! For a preemptor pod, nodes passing the predicates are tried best-scored first;
//! on a node, victims are evicted one at a time in victim order until the pod fits
//! (queue quota, future-idle resources and predicates), then the pod is pipelined
//! there. Node candidates are all nodes: preemption is rare and needs victims'
//! resources, which no free-resource index answers.

use super::super::explain;
use super::super::framework::Framework;
use super::super::plugins::network_topology::tier_limit;
use super::{pending_tasks, queues_of, sort_by, victim_order};
use lahar_core::cluster::NodeId;
use lahar_core::job::{JobId, PodGroupPhase, PodId, PodStatus};
use lahar_core::resource::Resources;
use lahar_core::session::{Session, Statement};

/// Tries to make room for `pod` by evicting victims that pass `filter`; on
/// success pipelines the pod and merges the evictions into `stmt`.
pub(crate) fn preempt_pod(
    fw: &Framework,
    ssn: &mut Session<'_>,
    stmt: &mut Statement,
    pod: PodId,
    filter: &dyn Fn(&Session<'_>, PodId) -> bool,
    reclaim: bool,
) -> bool {
    let req = ssn.pod(pod).req;
    let q = ssn.job(ssn.pod(pod).job).spec.queue;
    let mut nodes: Vec<NodeId> =
        (0..ssn.node_count() as u32).map(NodeId).filter(|&n| fw.predicate(ssn, pod, n).is_ok()).collect();
    if !reclaim {
        // Best-scored first (stable on node id).
        let mut scored: Vec<(f64, NodeId)> = nodes.iter().map(|&n| (fw.node_score(ssn, pod, n), n)).collect();
        scored.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal).then(a.1.cmp(&b.1)));
        nodes = scored.into_iter().map(|x| x.1).collect();
    }
    for n in nodes {
        let cands: Vec<PodId> = ssn
            .node_state(n)
            .pods
            .iter()
            .copied()
            .filter(|&v| ssn.pod(v).status == PodStatus::Running && ssn.pod(v).preemptable && filter(ssn, v))
            .collect();
        if cands.is_empty() {
            continue;
        }
        let mut victims = if reclaim { fw.reclaimable(ssn, pod, &cands) } else { fw.preemptable(ssn, pod, &cands) };
        let room = victims.iter().fold(ssn.future_idle(n), |a, &v| a + ssn.pod(v).req);
        if !req.fits_in(&room) {
            continue;
        }
        victims.sort_by(|&a, &b| victim_order(fw, ssn, pod, a, b));
        let mut node_stmt = ssn.statement();
        let fits = |ssn: &Session<'_>| {
            req.fits_in(&ssn.future_idle(n))
                && (reclaim || fw.allocatable(ssn, q, pod))
                && fw.predicate(ssn, pod, n).is_ok()
        };
        let mut it = victims.into_iter();
        while !fits(ssn) {
            let Some(v) = it.next() else { break };
            let reason = format!(
                "{} for {}",
                if reclaim { "reclaimed" } else { "preempted" },
                ssn.job(ssn.pod(pod).job).spec.pod_name(ssn.pod(pod).task as usize, ssn.pod(pod).index)
            );
            ssn.evict(&mut node_stmt, v, reason).expect("victims are running");
        }
        if fits(ssn) {
            ssn.pipeline(&mut node_stmt, pod, n).expect("fits checked");
            if ssn.explaining(pod) {
                let why = format!(
                    "pipelined after evicting {} victim(s); kept only if the job ends pipelined",
                    node_stmt.len() - 1
                );
                ssn.explain(pod, Some(n), ssn.action(), Some(true), why, None);
            }
            stmt.merge(node_stmt);
            return true;
        }
        ssn.discard(node_stmt);
    }
    if ssn.explaining(pod) {
        let why = "no node where the allowed victims' resources make room for the pod";
        ssn.explain(pod, None, ssn.action(), Some(false), why, None);
    }
    false
}

/// A preemptor job's pending pods in task order, BestEffort ones included: Volcano's
/// preempt and reclaim take every pending task of the job (`TaskStatusIndex[Pending]`);
/// only allocate leaves BestEffort pods to backfill. (Fix: lahar used to skip them, so a
/// BestEffort preemptor never preempted — Volcano's preempt_test case "BestEffort
/// high-priority pod preempt BestEffort low-priority pod in same queue".)
pub(crate) fn preemptor_tasks(fw: &Framework, ssn: &Session<'_>, j: JobId) -> Vec<PodId> {
    let mut v = pending_tasks(fw, ssn, j, false);
    v.extend(pending_tasks(fw, ssn, j, true));
    sort_by(&mut v, |a, b| fw.task_order(ssn, a, b));
    v
}

/// Runs the preempt action.
pub fn run(fw: &Framework, ssn: &mut Session<'_>) {
    ssn.set_action("preempt");
    let starving: Vec<JobId> = ssn
        .jobs_with_pending()
        .filter(|&j| {
            ssn.job(j).pg_phase != PodGroupPhase::Pending
                && fw.job_valid(ssn, j).is_ok()
                && tier_limit(ssn, j).is_none()
                && fw.job_starving(ssn, j)
        })
        .collect();
    for q in queues_of(fw, ssn, &starving) {
        let mut jobs: Vec<JobId> = starving.iter().copied().filter(|&j| ssn.job(j).spec.queue == q).collect();
        sort_by(&mut jobs, |a, b| fw.job_order(ssn, a, b));
        for &j in &jobs {
            let mut stmt = ssn.statement();
            let mut tasks = preemptor_tasks(fw, ssn, j).into_iter();
            let mut watched: Vec<(PodId, Option<NodeId>)> = Vec::new();
            while fw.job_starving(ssn, j) {
                let Some(pod) = tasks.next() else { break };
                let filter = move |s: &Session<'_>, v: PodId| {
                    let vj = s.pod(v).job;
                    vj != j && s.job(vj).spec.queue == q && !(s.pod(pod).best_effort && !s.pod(v).best_effort)
                };
                if preempt_pod(fw, ssn, &mut stmt, pod, &filter, false) && ssn.explaining(pod) {
                    watched.push((pod, ssn.pod(pod).node));
                }
            }
            let kept = fw.job_pipelined(ssn, j);
            if kept {
                ssn.commit(stmt);
            } else {
                ssn.discard(stmt);
            }
            explain::evict_outcome(ssn, &watched, kept);
        }
        // Intra-job preemption: a starving job's pending pods may evict its own
        // lower-priority pods.
        for &j in &jobs {
            if !fw.job_starving(ssn, j) {
                continue;
            }
            for pod in preemptor_tasks(fw, ssn, j) {
                let mut stmt = ssn.statement();
                let filter = move |s: &Session<'_>, v: PodId| {
                    s.pod(v).job == j && !(s.pod(pod).best_effort && !s.pod(v).best_effort)
                };
                if preempt_pod(fw, ssn, &mut stmt, pod, &filter, false) {
                    let node = ssn.pod(pod).node;
                    ssn.commit(stmt);
                    explain::evict_outcome(ssn, &[(pod, node)], true);
                } else {
                    ssn.discard(stmt);
                    break;
                }
            }
        }
    }
    let _ = Resources::ZERO;
}
