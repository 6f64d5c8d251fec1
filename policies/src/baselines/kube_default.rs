//! `kube-default`: per-pod scheduling like the default Kubernetes scheduler, without
//! gang scheduling.
//!
//! Rules, in each session:
//! 1. Every job with Pending pods has its PodGroup admitted (Pending → Inqueue), as
//!    `gang-fifo` does; the PodGroup plays no other part.
//! 2. All Pending pods of all jobs form one queue ordered as kube-scheduler's
//!    `PrioritySort`: pod priority (high first), then creation time, then pod id
//!    (creation order).
//! 3. Each pod is placed on its own: the feasible nodes are those whose idle resources
//!    fit its requests and whose labels match its node selector; each is scored with
//!    `NodeResourcesFit`'s `LeastAllocated` strategy, and the pod is bound to the best
//!    score, ties going to the lowest node id. The binding is committed at once,
//!    whatever happens to the job's other pods.
//! 4. A pod with no feasible node stays Pending. Within one session, a later pod with
//!    the same requests and node selector is not tried again (nothing frees up during
//!    a session).
//!
//! `LeastAllocated` score of node *n* for a pod: for each scored resource *r* of which
//! the node has a non-zero allocatable amount, `(allocatable − used − request) × 100 /
//! allocatable` in integer arithmetic, averaged (integer division) over those resources
//! with weight 1 each. The scored resources are CPU, memory and `nvidia.com/gpu`;
//! kube-scheduler's default scores only CPU and memory, lahar adds GPUs because they
//! are the contested resource of a GPU cluster. Only this score is used (no
//! `BalancedAllocation`, affinity, taints or image locality) and nothing is preempted.
//!
//! **The FGD paper's policies in time** (`scheduler: {baseline: fgd}` and the other
//! five names of [`Policy`], in a scenario without `spec.placement`) are this
//! scheduler with the policy's node score in place of `LeastAllocated`
//! ([`crate::placement::live`]): the feasible node with the highest score, ties to
//! the first node of a tie order drawn once per run (`placement/ties`), as in a
//! placement replay; `random` draws a feasible node uniformly (`placement/nodes`).
//! Where a pod's share of one GPU goes is the policy's too (the world's share rule).
//!
//! A lahar job makes progress only while at least `minAvailable` of its pods run, so
//! this policy exhibits **partial allocation** (pods holding GPUs while their job
//! cannot start) and **resource deadlock** (two gangs each holding part of the cluster
//! that the other needs: neither ever runs).

use super::gang::{self, Mode};
use crate::placement::Policy;
use crate::placement::live::Live;
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodId};
use lahar_core::model::resource::{CPU, GPU, MEMORY, Resources};
use lahar_core::session::{Scheduler, Session};
use lahar_core::util::rng::{RngStreams, StreamRng};
use rand::RngExt;
use std::cmp::Reverse;

/// Resources scored by `LeastAllocated`.
const SCORED: [usize; 3] = [CPU, MEMORY, GPU];

/// Per-pod placement with a node score (LeastAllocated, or a policy of the FGD
/// paper) and no gang.
#[derive(Debug, Default)]
pub struct KubeDefault {
    /// The paper's policy scoring nodes, and `random`'s draws; `None`: LeastAllocated.
    paper: Option<(Live, StreamRng)>,
}

impl KubeDefault {
    /// A scheduler.
    pub fn new() -> Self {
        KubeDefault::default()
    }

    /// Per-pod placement by the FGD paper's `policy`, its ties and draws from `streams`.
    pub fn placement(policy: Policy, streams: RngStreams) -> Self {
        KubeDefault { paper: Some((Live::new(policy, streams), streams.stream("placement/nodes", 0))) }
    }

    /// The name of the node score.
    fn score_name(&self) -> &'static str {
        self.paper.as_ref().map_or("least-allocated", |(l, _)| l.policy().name())
    }

    /// Pod `p`'s score on feasible node `n`.
    fn score(&self, ssn: &Session<'_>, p: PodId, n: NodeId) -> i64 {
        match &self.paper {
            Some((live, _)) => live.score(ssn, p, n),
            None => Self::least_allocated_score(ssn, n, &ssn.pod(p).req),
        }
    }

    /// `LeastAllocated` score (0..=100) of placing `req` on node `n`.
    pub fn least_allocated_score(ssn: &Session<'_>, n: NodeId, req: &Resources) -> i64 {
        let alloc = ssn.node(n).allocatable;
        let idle = ssn.idle(n);
        let (mut sum, mut count) = (0i128, 0i128);
        for d in SCORED {
            let cap = alloc.get(d) as i128;
            if cap <= 0 {
                continue;
            }
            let left = (idle.get(d) as i128 - req.get(d) as i128).max(0);
            sum += left * 100 / cap;
            count += 1;
        }
        if count == 0 { 0 } else { (sum / count) as i64 }
    }

    /// `--explain` rows: each node's fit, the score of every feasible node and the
    /// choice.
    fn explain_scores(&self, ssn: &mut Session<'_>, p: PodId, choice: Option<NodeId>) {
        let scores: Vec<(NodeId, i64)> = (0..ssn.node_count() as u32)
            .map(NodeId)
            .filter(|&n| ssn.fits_idle(p, n) && ssn.fits_filters(p, n))
            .map(|n| (n, self.score(ssn, p, n)))
            .collect();
        gang::explain_nodes(ssn, p, Mode::Allocate);
        let name = self.score_name();
        for (n, s) in scores {
            ssn.explain(p, Some(n), name, None, "", Some(s as f64));
        }
        let ties = if self.paper.is_some() {
            "highest score (ties: first in the run's tie order)"
        } else {
            "highest score (ties: first node)"
        };
        match choice {
            Some(n) => ssn.explain(p, Some(n), "best-node", Some(true), ties, None),
            None => ssn.explain(p, None, "best-node", Some(false), "no node fits", None),
        }
    }

    /// The feasible node with the best score for the pod (ties: lowest node id,
    /// or the first in a paper policy's tie order; `random`: a uniform draw).
    fn best_node(&mut self, ssn: &Session<'_>, pod: PodId) -> Option<NodeId> {
        let req = ssn.pod(pod).req;
        let feasible = ssn.fitting_nodes(&req).filter(|&n| ssn.fits_idle(pod, n) && ssn.fits_filters(pod, n));
        match &mut self.paper {
            None => {
                let mut best: Option<(i64, NodeId)> = None;
                for n in feasible {
                    let s = Self::least_allocated_score(ssn, n, &req);
                    // Nodes come in ascending id order: only a strictly better score wins.
                    if best.is_none_or(|(b, _)| s > b) {
                        best = Some((s, n));
                    }
                }
                best.map(|(_, n)| n)
            }
            Some((live, rng)) if live.policy() == Policy::Random => {
                let nodes: Vec<NodeId> = feasible.collect();
                (!nodes.is_empty()).then(|| nodes[rng.random_range(0..nodes.len())])
            }
            Some((live, _)) => {
                let mut best: Option<(i64, std::cmp::Reverse<u32>, NodeId)> = None;
                for n in feasible {
                    let key = (live.score(ssn, pod, n), std::cmp::Reverse(live.rank(ssn, n)), n);
                    if best.is_none_or(|b| (key.0, key.1) > (b.0, b.1)) {
                        best = Some(key);
                    }
                }
                best.map(|b| b.2)
            }
        }
    }
}

impl Scheduler for KubeDefault {
    fn name(&self) -> &str {
        self.paper.as_ref().map_or("kube-default", |(l, _)| l.policy().name())
    }

    fn schedule(&mut self, ssn: &mut Session<'_>) {
        ssn.set_action("allocate");
        let jobs: Vec<JobId> = ssn.jobs_with_pending().collect();
        let mut pods: Vec<PodId> = Vec::new();
        for &j in &jobs {
            gang::admit(ssn, j, "admitted (no gang)");
            pods.extend(ssn.pending_pods(j));
        }
        pods.sort_by_key(|&p| {
            let pod = ssn.pod(p);
            (Reverse(pod.priority), pod.created, p)
        });
        // Pods that found no node in this session: (requests, job, task, no selector).
        // A later pod cannot fit either if it has the same requests and is of the same
        // task, or if the failed pod had no node selector.
        let mut failed: Vec<(Resources, JobId, u16, bool)> = Vec::new();
        for p in pods {
            let (req, job, task) = {
                let pod = ssn.pod(p);
                (pod.req, pod.job, pod.task)
            };
            let unselective = !ssn.job(job).spec.tasks[task as usize].has_node_filter()
                && !ssn.cluster().has_taints()
                && !ssn.affinity_on();
            if failed.iter().any(|&(r, fj, ft, any_node)| r == req && (any_node || (fj == job && ft == task))) {
                let why = "skipped: an earlier pod with the same requests found no node in this session";
                ssn.explain(p, None, "allocate", Some(false), why, None);
                continue;
            }
            let choice = self.best_node(ssn, p);
            if ssn.explaining(p) {
                self.explain_scores(ssn, p, choice);
            }
            match choice {
                Some(n) => {
                    // best_node checked idle resources: the allocation cannot fail.
                    let _ = ssn.allocate_now(p, n);
                }
                None => failed.push((req, job, task, unselective)),
            }
        }
    }
}
