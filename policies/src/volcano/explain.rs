//! `--explain` rows for the Volcano actions. Some functions here are called for
//! every job or pod and write rows only for watched ones (`Session::explain` and
//! `explained_pods` filter); none changes what a decision reads or draws from the
//! session's random stream, so explaining cannot change a decision.

use super::framework::Framework;
use lahar_core::explain::{GPU_DEVICES_FULL, insufficient};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodId, PodStatus};
use lahar_core::session::Session;

/// One row per node (every node of `within`, or of the cluster): the resource fit
/// against future-idle resources (`resources`), then the first failing predicate
/// (named by its plugin), or `predicates` passed. A feasible node that is not in
/// `considered` (the node search stopped before it, or the pod is nominated
/// elsewhere) passes with `unconsidered` as its note.
pub(crate) fn node_rows(
    fw: &Framework,
    ssn: &mut Session<'_>,
    pod: PodId,
    within: Option<&[NodeId]>,
    considered: &[NodeId],
    unconsidered: &str,
) {
    let req = ssn.pod(pod).req;
    let all: Vec<NodeId> = match within {
        Some(w) => w.to_vec(),
        None => (0..ssn.node_count() as u32).map(NodeId).collect(),
    };
    let mut rows: Vec<(NodeId, &'static str, bool, String)> = Vec::with_capacity(all.len());
    for n in all {
        if let Some(r) = insufficient(&ssn.cluster().resource_names, &req, &ssn.future_idle(n)) {
            rows.push((n, "resources", false, r));
        } else if !ssn.gpu_fits(pod, n) {
            rows.push((n, "gpu-devices", false, GPU_DEVICES_FULL.to_string()));
        } else if let Some((plugin, r)) = fw.predicate_failure(ssn, pod, n) {
            rows.push((n, plugin, false, r));
        } else if considered.contains(&n) {
            rows.push((n, "predicates", true, String::new()));
        } else {
            rows.push((n, "predicates", true, unconsidered.to_string()));
        }
    }
    for (n, plugin, passed, reason) in rows {
        ssn.explain(pod, Some(n), plugin, Some(passed), reason, None);
    }
}

/// Rows for Volcano's prioritizeNodes: nodes of `nodes` outside `group` (they fit
/// only future-idle resources while others fit idle ones), each scoring plugin's
/// score and the total for every node of `group`, and the chosen node with how it
/// won (`ties`: nodes sharing the highest total).
pub(crate) fn score_rows(
    fw: &Framework,
    ssn: &mut Session<'_>,
    pod: PodId,
    nodes: &[NodeId],
    group: &[NodeId],
    chosen: Option<NodeId>,
    ties: usize,
) {
    let behind: Vec<NodeId> = nodes.iter().copied().filter(|n| !group.contains(n)).collect();
    for n in behind {
        let why = "fits only future-idle resources; nodes whose idle resources fit come first";
        ssn.explain(pod, Some(n), "prioritize", Some(false), why, None);
    }
    let all = fw.node_scores(ssn, pod, group);
    for (&n, scores) in group.iter().zip(all) {
        let total: f64 = scores.iter().map(|s| s.1).sum();
        for (plugin, s) in scores {
            let note = fw.score_note(ssn, pod, n, plugin).unwrap_or_default();
            ssn.explain(pod, Some(n), plugin, None, note, Some(s));
        }
        ssn.explain(pod, Some(n), "total", None, "", Some(total));
    }
    if let Some(c) = chosen {
        let why = match (group.len(), ties) {
            (1, _) => "the only candidate node".to_string(),
            (_, 0 | 1) => "highest total score".to_string(),
            (_, k) => format!("highest total score, tied with {} other node(s): picked at random", k - 1),
        };
        ssn.explain(pod, Some(c), "best-node", Some(true), why, None);
    }
}

/// A pod-level row for every watched pod of job `j` (used for job-level outcomes).
pub(crate) fn job_row(ssn: &mut Session<'_>, j: JobId, plugin: &'static str, passed: bool, reason: &str) {
    for p in ssn.explained_pods(j) {
        if ssn.pod(p).status == PodStatus::Pending {
            ssn.explain(p, None, plugin, Some(passed), reason, None);
        }
    }
}

/// A row for every watched pod of job `j` that is still gated: the gates left,
/// and that no action tries it until they go.
pub(crate) fn gated_rows(ssn: &mut Session<'_>, j: JobId) {
    for p in ssn.explained_pods(j) {
        let pod = ssn.pod(p);
        if pod.status != PodStatus::Pending || !pod.is_gated() {
            continue;
        }
        let task = &ssn.job(j).spec.tasks[pod.task as usize];
        let left: Vec<&str> = task
            .scheduling_gates()
            .iter()
            .enumerate()
            .filter(|&(i, _)| pod.gates >> i & 1 == 1)
            .map(|(_, g)| g.as_str())
            .collect();
        let why =
            format!("scheduling gated ({}): no action tries the pod until its gates are removed", left.join(", "));
        ssn.explain(p, None, "scheduling-gates", Some(false), why, None);
    }
}

/// Why the gang of `j` is not ready, in numbers.
pub(crate) fn gang_shortfall(ssn: &Session<'_>, j: JobId) -> String {
    let job = ssn.job(j);
    format!(
        "job not ready: {} placed + {} pipelined of minAvailable {}",
        job.ready_count(),
        job.waiting_count(),
        job.spec.min_available
    )
}

/// After preempt or reclaim decided a job's statement: for each watched pod the
/// action pipelined (with its node), whether the evictions stand (`kept`: the job
/// is pipelined) or were undone, and whether the pod is nominated to the node
/// (only a pipeline that followed evictions nominates, kept or not).
pub(crate) fn evict_outcome(ssn: &mut Session<'_>, pipelined: &[(PodId, Option<NodeId>)], kept: bool) {
    let action = ssn.action();
    for &(p, node) in pipelined {
        let nominated = node.is_some() && ssn.nominated_at_close(p) == node;
        let why = match (kept, nominated) {
            (true, true) => {
                format!("{action}: the job is pipelined; the evictions stand and the pod waits nominated to this node")
            }
            (true, false) => format!(
                "{action}: the job is pipelined; the pod waits for this node's room, which needed no eviction (it is not nominated)"
            ),
            (false, true) => format!(
                "{action}: the job would not be pipelined; the evictions are undone, but the pod stays nominated to this node (Volcano keeps the discarded pipeline's reason), which bars it from preempting while the predicates accept it there"
            ),
            (false, false) => format!("{action}: the job would not be pipelined; the pod's placement is undone"),
        };
        ssn.explain(p, node, "result", Some(kept), why, None);
    }
}
