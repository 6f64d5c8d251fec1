//! Volcano's actions, run in the order of the conf's `actions` string.

pub mod allocate;
pub mod backfill;
pub mod barred;
pub mod carry;
pub mod enqueue;
mod fruitless;
pub mod gang_evict;
pub mod preempt;
mod reach;
pub mod reclaim;
pub mod shuffle;
mod victims;
pub mod waiting;
pub(crate) mod worksheet;

use super::framework::Framework;
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodId, PodStatus};
use lahar_core::model::queue::QueueId;
use lahar_core::session::Session;
use rand::RngExt;
use std::cmp::Ordering;

/// Inserts `x` into `v`, kept sorted by `cmp`, after equal elements.
pub(crate) fn insert_sorted<T: Copy>(v: &mut Vec<T>, x: T, mut cmp: impl FnMut(T, T) -> Ordering) -> usize {
    let pos = v.partition_point(|&y| cmp(y, x) != Ordering::Greater);
    v.insert(pos, x);
    pos
}

/// Sorts by a framework order (stable).
pub(crate) fn sort_by<T: Copy>(v: &mut [T], mut cmp: impl FnMut(T, T) -> Ordering) {
    v.sort_by(|&a, &b| cmp(a, b));
}

/// A job's pending pods in task order, gated ones left out (every action skips
/// a `SchGated` task); `best_effort` selects BestEffort pods (backfill's) or the
/// others (allocate's).
pub(crate) fn pending_tasks(fw: &Framework, ssn: &Session<'_>, j: JobId, best_effort: bool) -> Vec<PodId> {
    let mut v: Vec<PodId> = ssn
        .job(j)
        .pods
        .iter()
        .copied()
        .filter(|&p| {
            let pod = ssn.pod(p);
            pod.status == PodStatus::Pending && pod.best_effort == best_effort && !pod.is_gated()
        })
        .collect();
    sort_by(&mut v, |a, b| fw.task_order(ssn, a, b));
    v
}

/// Queues that have at least one of `jobs`, in queue order.
pub(crate) fn queues_of(fw: &Framework, ssn: &Session<'_>, jobs: &[JobId]) -> Vec<QueueId> {
    order_queues(fw, ssn, jobs.iter().map(|&j| ssn.job(j).spec.queue).collect())
}

/// `qs` without repeats, in queue order (ties by id).
pub(crate) fn order_queues(fw: &Framework, ssn: &Session<'_>, mut qs: Vec<QueueId>) -> Vec<QueueId> {
    qs.sort_unstable();
    qs.dedup();
    sort_by(&mut qs, |a, b| fw.queue_order(ssn, a, b));
    qs
}

/// Number of feasible nodes Volcano looks for before it stops searching
/// (`util/scheduler_helper.go`): all of them up to 100 nodes, then a percentage
/// that shrinks with cluster size, never fewer than 100.
pub fn nodes_to_find(n: usize) -> usize {
    if n <= 100 {
        return n;
    }
    let pct = (50 - n as i64 / 125).max(5) as usize;
    (n * pct / 100).max(100)
}

/// Feasible nodes for a pod: future-idle resources cover it and every predicate
/// passes. Over the whole cluster the free-resource index is scanned from a
/// rotating start and the search stops after [`nodes_to_find`] nodes, as Volcano
/// samples; within a HyperNode every node is checked.
pub(crate) fn predicate_nodes(
    fw: &Framework,
    ssn: &mut Session<'_>,
    pod: PodId,
    within: Option<&[NodeId]>,
    start: &mut usize,
) -> Vec<NodeId> {
    let out = search_nodes(fw, ssn, pod, within, start);
    if ssn.explaining(pod) {
        let note = format!(
            "feasible, but not examined: the search stops after {} feasible nodes",
            nodes_to_find(ssn.node_count())
        );
        super::explain::node_rows(fw, ssn, pod, within, &out, &note);
    }
    out
}

fn search_nodes(
    fw: &Framework,
    ssn: &Session<'_>,
    pod: PodId,
    within: Option<&[NodeId]>,
    start: &mut usize,
) -> Vec<NodeId> {
    let req = ssn.pod(pod).req;
    // GPU devices are checked with the resources, before the plugins' predicates.
    let trivial = fw.predicate_trivial(ssn, pod);
    let devices = ssn.gpu_devices_matter(pod);
    let ok = |n: NodeId| (!devices || ssn.gpu_fits(pod, n)) && (trivial || fw.predicate(ssn, pod, n).is_ok());
    if let Some(nodes) = within {
        return nodes.iter().copied().filter(|&n| req.fits_in(&ssn.future_idle(n)) && ok(n)).collect();
    }
    let total = ssn.node_count();
    if total == 0 {
        return Vec::new();
    }
    let want = nodes_to_find(total);
    let from = *start % total;
    // A busy cluster's search finds far fewer than `want` (about 31 of 357 in
    // a million-job run on 813 nodes, about 100 in a 30,000-job one): a list of
    // at most 256 (1 KiB) stays in the allocator's per-thread cache and rarely
    // grows (64 grew 52,723 times in 39,019 searches of the 30,000-job run).
    let mut out = Vec::with_capacity(want.min(total).min(256));
    let mut last = None;
    // Where the wrapped-around part (nodes below `from`) starts in `out`.
    let mut wrapped = 0;
    for (lo, hi) in [(from, total), (0, from)] {
        if lo == 0 {
            wrapped = out.len();
        }
        if out.len() >= want {
            break;
        }
        ssn.scan_fitting(&req, lo, hi, |n| {
            last = Some(n.0 as usize);
            if ok(n) {
                out.push(n);
            }
            out.len() < want
        });
    }
    if let Some(l) = last {
        *start = (l + 1) % total;
    }
    // Both parts are ascending and every wrapped node is below every other:
    // rotating sorts the list.
    out.rotate_left(wrapped);
    debug_assert!(out.is_sorted());
    out
}

/// Volcano's prioritizeNodes: nodes whose idle resources fit are preferred over
/// those that fit only future-idle resources; within the group, the highest
/// summed score wins, ties broken uniformly at random from the session's stream.
/// `nodes` are feasible: their future-idle room and GPU devices take the pod.
pub(crate) fn best_node(fw: &Framework, ssn: &mut Session<'_>, pod: PodId, nodes: &[NodeId]) -> Option<NodeId> {
    // With nothing releasing or pipelined anywhere, idle room is future-idle room:
    // every feasible node fits idle, and the filter would keep them all.
    let idle: Vec<NodeId> = if !ssn.is_exhaustive() && ssn.idle_is_future_idle() {
        Vec::new()
    } else {
        nodes.iter().copied().filter(|&n| ssn.fits_idle(pod, n)).collect()
    };
    let group: &[NodeId] = if idle.is_empty() { nodes } else { &idle };
    let (chosen, ties) = match group.len() {
        0 => (None, 0),
        1 => (Some(group[0]), 1),
        _ => {
            let scores = fw.node_scores_of(ssn, pod, group);
            let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            // The nodes at the top, counted, then the drawn one found: no list of them.
            let ties = scores.iter().filter(|&&s| s >= max).count();
            let k = if ties > 1 { ssn.rng().random_range(0..ties) } else { 0 };
            let best = group.iter().zip(&scores).filter(|(_, s)| **s >= max).nth(k).map(|(n, _)| *n);
            (Some(best.expect("a node at the top")), ties)
        }
    };
    if ssn.explaining(pod) {
        super::explain::score_rows(fw, ssn, pod, nodes, group, chosen, ties);
    }
    chosen
}

/// Victims' pop order (Volcano's `BuildVictimsPriorityQueue`).
pub(crate) fn victim_order(fw: &Framework, ssn: &Session<'_>, preemptor: PodId, l: PodId, r: PodId) -> Ordering {
    let (lj, rj) = (ssn.pod(l).job, ssn.pod(r).job);
    if lj == rj {
        return fw.task_order(ssn, r, l);
    }
    let (lq, rq) = (ssn.job(lj).spec.queue, ssn.job(rj).spec.queue);
    if lq != rq {
        let pq = ssn.job(ssn.pod(preemptor).job).spec.queue;
        return fw.victim_queue_order(ssn, lq, rq, pq);
    }
    fw.job_order(ssn, rj, lj).then_with(|| fw.task_order(ssn, r, l))
}
