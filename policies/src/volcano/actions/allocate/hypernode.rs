//! allocate's path for jobs placed HyperNode by HyperNode (Volcano's
//! `allocateForJob`): jobs with a hard network topology (soft ones converted) or a
//! `subGroupPolicy`.
//!
//! The job's gradient (its tiers of HyperNodes; the cluster top for a job with
//! sub-groups but no topology of its own) is tried tier by tier. In each HyperNode
//! of a tier the job's sub-jobs are placed one after another (required ones first:
//! enough not-yet-ready sub-jobs of each policy to reach its `minSubGroups`; then
//! in sub-job order) until the job is ready; a sub-job is placed in the best
//! HyperNode of its own gradient within the job's HyperNode (dry runs, HyperNode
//! scores). The HyperNode of the tier whose sub-jobs' scores sum highest, among
//! those where the job ends ready or pipelined, wins; only if none does is the
//! next tier tried. A job without sub-groups is one sub-job, the whole job.

use super::super::super::explain;
use super::super::super::framework::Framework;
use super::super::worksheet::Worksheet;
use super::{AllocState, allocate_tasks};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodId, PodStatus};
use lahar_core::model::topology::HyperNodeId;
use lahar_core::session::{Session, Statement};
use std::collections::VecDeque;

/// Placements made by a dry run: (pod, node, on idle resources).
type Placements = Vec<(PodId, NodeId, bool)>;

/// The placements the pods of `pods` hold (Allocated or Pipelined on a node).
fn placements(ssn: &Session<'_>, pods: impl Iterator<Item = PodId>) -> Placements {
    pods.filter_map(|p| {
        let pod = ssn.pod(p);
        match pod.status {
            PodStatus::Allocated => pod.node.map(|n| (p, n, true)),
            PodStatus::Pipelined => pod.node.map(|n| (p, n, false)),
            _ => None,
        }
    })
    .collect()
}

/// Replays dry-run placements into a new statement.
fn replay(ssn: &mut Session<'_>, ops: &Placements) -> Statement {
    let mut stmt = ssn.statement();
    for &(p, n, idle) in ops {
        let r = if idle { ssn.allocate(&mut stmt, p, n) } else { ssn.pipeline(&mut stmt, p, n) };
        r.expect("replaying a dry run on the same state");
    }
    stmt
}

fn hn_name<'a>(ssn: &'a Session<'_>, h: HyperNodeId) -> &'a str {
    &ssn.cluster().topology.get(h).name
}

/// Sub-job `s`'s step in HyperNode `hn` (all nodes for the cluster top) on a copy
/// of its pods `tasks`: the statement (applied) and the pods left, or `None`.
fn try_in(
    fw: &Framework,
    ssn: &mut Session<'_>,
    st: &mut AllocState,
    j: JobId,
    s: u32,
    tasks: &VecDeque<PodId>,
    hn: HyperNodeId,
) -> Option<(Statement, VecDeque<PodId>)> {
    let h = ssn.cluster().topology.get(hn);
    let nodes: Option<Vec<NodeId>> = (!h.virtual_top).then(|| h.nodes.clone());
    if ssn.explaining_job(j) {
        let note = format!("dry run in HyperNode {} (tier {})", h.name, h.tier);
        explain::job_row(ssn, j, "network-topology-aware", true, &note);
    }
    let mut left = tasks.clone();
    let stmt = allocate_tasks(fw, ssn, st, j, s, &mut left, nodes.as_deref(), false)?;
    Some((stmt, left))
}

/// Volcano's `allocateForSubJob`: places sub-job `s` (its pods `tasks`) in the
/// best HyperNode of its gradient within `within`. Returns the statement and the
/// HyperNode's score; `tasks` keeps what is left.
fn allocate_sub_job(
    fw: &Framework,
    ssn: &mut Session<'_>,
    st: &mut AllocState,
    j: JobId,
    s: u32,
    tasks: &mut VecDeque<PodId>,
    within: HyperNodeId,
) -> Option<(Statement, f64)> {
    let pods: Vec<PodId> = tasks.iter().copied().collect();
    for tier in fw.sub_job_gradient(ssn, j, s, within, false) {
        // One HyperNode: it is the best if it works, and its score is the same
        // before its dry run as after the dry run is undone; keep the dry run
        // instead of undoing and replaying it.
        if let [hn] = tier[..] {
            let score = fw.hypernode_scores(ssn, j, s, &[hn])[0];
            let Some((stmt, left)) = try_in(fw, ssn, st, j, s, tasks, hn) else { continue };
            if stmt.is_empty() {
                ssn.discard(stmt);
                continue;
            }
            if ssn.explaining_job(j) {
                let note = format!("chosen HyperNode {} (the only one of its tier): HyperNode score", hn_name(ssn, hn));
                for p in ssn.explained_pods(j) {
                    ssn.explain(p, None, "network-topology-aware", Some(true), note.clone(), Some(score));
                }
            }
            *tasks = left;
            return Some((stmt, score));
        }
        let mut cands: Vec<(HyperNodeId, Placements, VecDeque<PodId>)> = Vec::new();
        for hn in tier {
            let Some((stmt, left)) = try_in(fw, ssn, st, j, s, tasks, hn) else { continue };
            let ops = placements(ssn, pods.iter().copied());
            ssn.discard(stmt);
            if !ops.is_empty() {
                cands.push((hn, ops, left));
            }
        }
        if cands.is_empty() {
            continue;
        }
        let hns: Vec<HyperNodeId> = cands.iter().map(|c| c.0).collect();
        let scores = fw.hypernode_scores(ssn, j, s, &hns);
        // The first of the best (Volcano picks one of them at random).
        let mut best = 0;
        for (i, &x) in scores.iter().enumerate() {
            if x > scores[best] {
                best = i;
            }
        }
        if ssn.explaining_job(j) {
            for (i, &h) in hns.iter().enumerate() {
                let note = format!("the pods fit HyperNode {}: HyperNode score", hn_name(ssn, h));
                for p in ssn.explained_pods(j) {
                    ssn.explain(p, None, "network-topology-aware", None, note.clone(), Some(scores[i]));
                }
            }
            let note = format!("chosen HyperNode {}", hn_name(ssn, hns[best]));
            explain::job_row(ssn, j, "network-topology-aware", true, &note);
        }
        let (_, ops, left) = cands.swap_remove(best);
        *tasks = left;
        return Some((replay(ssn, &ops), scores[best]));
    }
    None
}

/// Volcano's `allocateForJob`: places the job's sub-jobs from `ws` in the best
/// HyperNode of its gradient (see the module). Returns the statement when the
/// job ends ready or pipelined; `ws` keeps what is left.
pub(crate) fn allocate_for_job(
    fw: &Framework,
    ssn: &mut Session<'_>,
    st: &mut AllocState,
    j: JobId,
    ws: &mut Worksheet,
) -> Option<Statement> {
    let top = ssn.cluster().topology.top();
    let gradient = fw.hypernode_gradient(ssn, j).unwrap_or_else(|| vec![vec![top]]);
    let all: Vec<PodId> = ws.pods().collect();
    for tier in gradient {
        // (score, HyperNode, placements, worksheet left)
        let mut best: Option<(f64, HyperNodeId, Placements, Worksheet)> = None;
        let single = tier.len() == 1;
        for hn in tier {
            let mut left = ws.clone();
            let mut stmt = ssn.statement();
            let mut score = 0.0;
            // A sub-job that finds no place is dropped; one with pods left goes back.
            while let Some((s, mut tasks, req)) = left.pop(fw, ssn, j) {
                let Some((sub, x)) = allocate_sub_job(fw, ssn, st, j, s, &mut tasks, hn) else { continue };
                score += x;
                stmt.merge(sub);
                if !tasks.is_empty() {
                    left.put_back(s, tasks, req);
                }
                if fw.job_ready(ssn, j) {
                    break;
                }
            }
            let keep = !stmt.is_empty() && (fw.job_ready(ssn, j) || fw.job_pipelined(ssn, j));
            // The only HyperNode of its tier: kept as it is when it works.
            if keep && single {
                if ssn.explaining_job(j) {
                    let note = format!("the job's HyperNode: {}", hn_name(ssn, hn));
                    explain::job_row(ssn, j, "network-topology-aware", true, &note);
                }
                *ws = left;
                return Some(stmt);
            }
            let ops = placements(ssn, all.iter().copied());
            ssn.discard(stmt);
            if keep && best.as_ref().is_none_or(|b| score > b.0) {
                best = Some((score, hn, ops, left));
            }
        }
        if let Some((_, hn, ops, left)) = best {
            if ssn.explaining_job(j) {
                let note = format!("the job's HyperNode: {}", hn_name(ssn, hn));
                explain::job_row(ssn, j, "network-topology-aware", true, &note);
            }
            *ws = left;
            return Some(replay(ssn, &ops));
        }
    }
    if ssn.explaining_job(j) {
        explain::job_row(
            ssn,
            j,
            "network-topology-aware",
            false,
            "no HyperNode within the job's tier limit can hold it",
        );
    }
    None
}
