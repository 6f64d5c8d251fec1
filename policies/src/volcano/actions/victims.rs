//! The victim search preempt and reclaim share: for one preemptor pod, find the
//! first node (best-scored first for preempt, node order for reclaim) where
//! evicting victims the plugins allow makes room, evict them and pipeline the pod.
//!
//! Three shortcuts keep the search cheap without changing any decision (each is off
//! in exhaustive mode, the reference the equivalence tests compare against):
//! - **Room bound.** A node where evicting every Running preemptable pod of the
//!   groups the plugins may take victims from — the caller's queues, for
//!   preempt under a conf whose every victim-choosing tier has `priority`, lower job
//!   priorities, and the groups whose pods a plugin's rule for this search
//!   refuses (drf refuses lone pods, whose jobs hold nothing once they are
//!   taken, to any preemptor with a share: `Plugin::victim_group_ok_now`) —
//!   would still leave too little room is skipped before its
//!   predicates run (victims are a subset of those pods;
//!   [`lahar_core::world::NodeState::victims`] keeps their sums per victim
//!   group, [`lahar_core::world::VictimKey`]). With no candidate victim in the whole cluster, the search fails at
//!   once (a node with a candidate may take the pod with no victim at all).
//! - **Pre-check before scoring** (preempt). A node whose allowed victims cannot
//!   make room can only be skipped by the walk, and failed attempts leave the
//!   session as they found it; so the victims of every node are computed first (in
//!   the same state) and only the nodes that pass are scored and sorted. The nodes
//!   tried, and their order, are those of the exhaustive walk. Reclaim does not
//!   score: its walk takes the first node in node order whose victims make room,
//!   computing each node's victims (from the cache) as it reaches it.
//! - **Failure memo** ([`FailMemo`]): a search that failed is not repeated for a pod
//!   whose search has the same inputs, until something changes the session; for
//!   reclaim, when no victim-choosing plugin looks at the reclaimer, each node's
//!   victims for a queue are computed once until then ([`VictimCache`]).

use super::super::framework::Framework;
use super::carry::{Carry, holds};
use super::victim_order;
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodId, PodStatus};
use lahar_core::model::queue::QueueId;
use lahar_core::model::resource::Resources;
use lahar_core::session::{Session, Statement};
use lahar_core::world::VictimKey;
use rustc_hash::FxHashMap;

/// Which pods the caller accepts as victims.
pub(crate) struct VictimFilter<'a> {
    /// The exact filter on a candidate victim.
    pub pod: &'a dyn Fn(&Session<'_>, PodId) -> bool,
    /// A necessary condition for passing `pod`, on the candidate's (queue, job
    /// priority) group. A node without such a pod is skipped by the walk.
    pub candidate: &'a dyn Fn(&Session<'_>, VictimKey) -> bool,
    /// A necessary condition for being chosen by the plugins too (for the room
    /// bound). A node can still take the pod with no victim at all, on its
    /// future-idle room, as long as it has a candidate.
    pub victim: &'a dyn Fn(&Session<'_>, VictimKey) -> bool,
    /// Nodes, ascending, that include every node holding a pod passing `pod`,
    /// when the caller knows them (a job's own pods): no other node has a
    /// candidate, so no other node can take the preemptor.
    pub nodes: Option<&'a [NodeId]>,
}

/// The victims the plugins allow on node `n`, if evicting them all makes room for
/// the pod. With a cache (reclaim, when no plugin looks at the reclaimer), a node's
/// victims for the reclaimer's queue are computed once until the session changes.
fn victims_on(
    fw: &Framework,
    ssn: &Session<'_>,
    pod: PodId,
    n: NodeId,
    filter: &VictimFilter<'_>,
    reclaim: bool,
    cache: Option<&mut VictimCache>,
) -> Option<Vec<PodId>> {
    let choose = || {
        let mut cands: Vec<PodId> = ssn
            .node_state(n)
            .pods
            .iter()
            .copied()
            .filter(|&v| ssn.pod(v).status == PodStatus::Running && ssn.pod(v).preemptable && (filter.pod)(ssn, v))
            .collect();
        if cands.is_empty() {
            return None;
        }
        // capacity takes reclaim victims one by one, each lowering its queue's
        // running allocation, in Volcano's victim order
        // (`BuildVictimsPriorityQueue`); the other plugins' order is Go's map order
        // in Volcano, for which pod order stands in.
        if reclaim && fw.reclaim_in_victim_order() {
            cands.sort_by(|&a, &b| victim_order(fw, ssn, pod, a, b));
        }
        let victims = if reclaim { fw.reclaimable(ssn, pod, &cands) } else { fw.preemptable(ssn, pod, &cands) };
        let freed = victims.iter().fold(Resources::ZERO, |a, &v| a + ssn.pod(v).req);
        Some((victims, freed))
    };
    let fits = |freed: &Resources| ssn.pod(pod).req.fits_in(&(ssn.future_idle(n) + *freed));
    match cache {
        Some(c) => {
            let q = ssn.job(ssn.pod(pod).job).spec.queue;
            let entry = c.by_node.entry((n, q)).or_insert_with(choose);
            entry.as_ref().filter(|(_, freed)| fits(freed)).map(|(v, _)| v.clone())
        }
        None => choose().filter(|(_, freed)| fits(freed)).map(|(v, _)| v),
    }
}

/// Each node's reclaim victims per reclaimer queue, with what evicting them frees,
/// valid while the session is unchanged (owned and cleared by [`FailMemo`]).
#[derive(Default)]
pub(crate) struct VictimCache {
    by_node: FxHashMap<(NodeId, QueueId), Option<Chosen>>,
}

/// A node's victims and what evicting them frees.
type Chosen = (Vec<PodId>, Resources);

/// Tries to make room for `pod` by evicting victims that pass `filter`; on
/// success pipelines the pod and merges the evictions into `stmt`.
/// With `carry` (preempt's first pass), a search whose inputs failed before
/// looks only at the nodes that changed since ([`Carry`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn preempt_pod(
    fw: &Framework,
    ssn: &mut Session<'_>,
    stmt: &mut Statement,
    pod: PodId,
    filter: &VictimFilter<'_>,
    reclaim: bool,
    mut cache: Option<&mut VictimCache>,
    mut carry: Option<&mut Carry>,
) -> bool {
    // A search the carry knows looks at no node fails as it did.
    if carry.as_deref().is_some_and(|c| c.known_fruitless(ssn, pod)) {
        return failed(ssn, pod);
    }
    let req = ssn.pod(pod).req;
    let q = ssn.job(ssn.pod(pod).job).spec.queue;
    let exhaustive = ssn.is_exhaustive();
    // No candidate anywhere: every node would be skipped.
    if !exhaustive && !ssn.victim_groups().iter().any(|g| (filter.candidate)(ssn, g.0)) {
        if let Some(c) = carry {
            c.note_bare(ssn, pod, false);
        }
        return failed(ssn, pod);
    }
    // The victim groups the caller and the plugins allow (few: queues × job
    // priorities × over-minAvailable), decided once for the search.
    let allowed: Vec<VictimKey> = if exhaustive {
        Vec::new()
    } else {
        ssn.victim_groups().iter().map(|g| g.0).filter(|&k| (filter.victim)(ssn, k)).collect()
    };
    if allowed.is_empty()
        && !exhaustive
        && let Some(c) = carry.as_deref_mut()
    {
        c.note_bare(ssn, pod, true);
    }
    // The nodes whose future-idle room plus the allowed groups' pods hold the pod
    // (the room bound), in node order: from a list known to hold every node that
    // can pass — the caller's (the nodes of its candidates), or, for a search
    // whose inputs failed before, the nodes changed since (every other node fails
    // as it did) —, else listed by the victim index, or, with no possible victim
    // anywhere, by the free-resource index. Exhaustive mode walks every node.
    let listed = filter.nodes.map(<[NodeId]>::to_vec).or_else(|| carry.as_deref_mut()?.nodes(ssn, pod, &allowed));
    let all: Vec<NodeId> = if exhaustive {
        (0..ssn.node_count() as u32).map(NodeId).collect()
    } else if let Some(listed) = listed {
        listed.into_iter().filter(|&n| req.fits_in(&ssn.victim_bound(n, &allowed))).collect()
    } else if allowed.is_empty() {
        ssn.fitting_nodes(&req).collect()
    } else {
        let mut v = Vec::new();
        ssn.victim_nodes(&allowed, &req, &mut v);
        v
    };
    // Candidates by the predicates evicting cannot help (Volcano's
    // `PredicateForPreemptAction`); preempt asks every predicate again after each
    // eviction (`preemptorFitsOnNode`: a fragmented vGPU node may need several).
    let trivial = fw.predicate_for_preempt_trivial(ssn, pod);
    let pass = |ssn: &Session<'_>, n: NodeId| trivial || fw.predicate_for_preempt(ssn, pod, n).is_ok();
    let all_trivial = fw.predicate_trivial(ssn, pod);
    let pass_all = |ssn: &Session<'_>, n: NodeId| all_trivial || fw.predicate(ssn, pod, n).is_ok();
    let nodes = all.into_iter();
    // Where each node's score stands alone, preempt too scores the nodes the
    // predicates pass and asks each node's victims as its walk reaches it, best
    // first (as Volcano does): the order of the nodes whose victims make room
    // is the same, and a search that succeeds stops asking at its node.
    let lazy = !exhaustive && !reclaim && fw.scores_node_by_node(ssn, pod);
    // (node, its victims when pre-checked). Reclaim walks nodes in node order and
    // the first node whose victims make room takes the pod, so its victims are
    // computed as the walk reaches each node: no further node is looked at.
    let mut order: Vec<(NodeId, Option<Vec<PodId>>)> = if exhaustive || reclaim || lazy {
        nodes.filter(|&n| pass(ssn, n)).map(|n| (n, None)).collect()
    } else {
        nodes
            .filter(|&n| pass(ssn, n))
            .filter_map(|n| victims_on(fw, ssn, pod, n, filter, reclaim, cache.as_deref_mut()).map(|v| (n, Some(v))))
            .collect()
    };
    // The deliberately wrong lazy walk of the equivalence tests keeps node order.
    let unsorted = lazy && ssn.planted.wrong_lazy_victims;
    if !reclaim && !unsorted {
        // Best-scored first (stable on node id).
        let nodes: Vec<NodeId> = order.iter().map(|(n, _)| *n).collect();
        let scores = fw.node_scores_of(ssn, pod, &nodes);
        let mut scored: Vec<(f64, NodeId, Option<Vec<PodId>>)> =
            order.into_iter().zip(scores).map(|((n, v), s)| (s, n, v)).collect();
        scored.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal).then(a.1.cmp(&b.1)));
        order = scored.into_iter().map(|(_, n, v)| (n, v)).collect();
    }
    // The nodes whose victims made room: a failed search re-checks them next time.
    let mut tried: Vec<NodeId> = Vec::new();
    for (n, pre) in order {
        let cache = cache.as_deref_mut();
        let Some(mut victims) = pre.or_else(|| victims_on(fw, ssn, pod, n, filter, reclaim, cache)) else { continue };
        if carry.is_some() {
            tried.push(n);
        }
        victims.sort_by(|&a, &b| victim_order(fw, ssn, pod, a, b));
        let mut node_stmt = ssn.statement();
        let fits = |ssn: &Session<'_>| {
            req.fits_in(&ssn.future_idle(n))
                && if reclaim { pass(ssn, n) } else { fw.allocatable(ssn, q, pod) && pass_all(ssn, n) }
        };
        let mut it = victims.into_iter();
        while !fits(ssn) {
            let Some(v) = it.next() else { break };
            let reason = format!(
                "{} for {}",
                if reclaim { "reclaimed" } else { "preempted" },
                ssn.job(ssn.pod(pod).job).spec.pod_name(ssn.pod(pod).task as usize, ssn.pod(pod).index)
            );
            let for_job = ssn.pod(pod).job;
            ssn.evict_for(&mut node_stmt, v, for_job, reason).expect("victims are running");
        }
        if fits(ssn) {
            let evicted = !node_stmt.is_empty();
            ssn.pipeline_after_evictions(&mut node_stmt, pod, n, evicted).expect("fits checked");
            if ssn.explaining(pod) {
                let why = format!(
                    "pipelined after evicting {} victim(s); kept only if the job ends pipelined",
                    node_stmt.len() - 1
                );
                ssn.explain(pod, Some(n), ssn.action(), Some(true), why, None);
            }
            stmt.merge(node_stmt);
            if let Some(c) = carry {
                c.record(ssn, pod, &allowed, None);
            }
            return true;
        }
        ssn.discard(node_stmt);
    }
    if let Some(c) = carry {
        c.record(ssn, pod, &allowed, Some(tried));
    }
    failed(ssn, pod)
}

/// A search that found no node: explains it for a watched pod.
fn failed(ssn: &mut Session<'_>, pod: PodId) -> bool {
    if ssn.explaining(pod) {
        let why = "no node where the allowed victims' resources make room for the pod";
        ssn.explain(pod, None, ssn.action(), Some(false), why, None);
    }
    false
}

/// What a search's outcome depends on, besides the session's state: the
/// preemptor's queue, job priority, pod priority, BestEffort-ness and request, and
/// either its job (when the job holds pods, which the victim filter, drf's share and
/// topology scores read) or nothing more (a job that holds nothing is, to every
/// built-in plugin except task-topology and hierarchical drf, just its queue and
/// priority).
type MemoKey = (QueueId, i32, i32, bool, Resources, Option<JobId>);

/// Searches that failed in the current state of the session. A failed search
/// leaves the session unchanged, so another pod with the same inputs fails the
/// same way until a search succeeds or a statement is discarded, which is when the
/// owner calls [`FailMemo::clear`]. The pod's node selector is an input too: an
/// entry keeps the pods whose selectors it has seen (with the same key).
#[derive(Default)]
pub(crate) struct FailMemo {
    failed: FxHashMap<MemoKey, Vec<PodId>>,
    /// Set when task-topology (its scores read the job's tasks) or hierarchical drf
    /// (its victims depend on the job's total request) is configured.
    per_job: bool,
    /// Set when an extender is configured: its answers may depend on anything
    /// about the pod, so no search stands for another's.
    off: bool,
    /// Reclaim victims per node, when they do not depend on the reclaimer.
    cache: Option<VictimCache>,
}

impl FailMemo {
    /// A memo for a framework (task-topology keys every entry by job).
    pub fn new(fw: &Framework) -> FailMemo {
        FailMemo {
            failed: FxHashMap::default(),
            per_job: fw.victims_read_job(),
            off: fw.victims_read_anything(),
            cache: None,
        }
    }

    /// A memo for reclaim, which also keeps each node's victims when no plugin
    /// choosing them looks at the reclaimer.
    pub fn for_reclaim(fw: &Framework, ssn: &Session<'_>) -> FailMemo {
        let cache = (!ssn.is_exhaustive() && fw.reclaim_victims_ignore_reclaimer()).then(VictimCache::default);
        FailMemo { cache, ..FailMemo::new(fw) }
    }

    /// The victim cache, when there is one.
    pub fn cache(&mut self) -> Option<&mut VictimCache> {
        self.cache.as_mut()
    }

    fn key(&self, ssn: &Session<'_>, pod: PodId) -> MemoKey {
        let p = ssn.pod(pod);
        let job = ssn.job(p.job);
        let owner = (holds(job) || self.per_job).then_some(p.job);
        // The deliberately wrong key of the equivalence tests forgets the request.
        let req = if ssn.planted.wrong_skip { Resources::ZERO } else { p.req };
        (job.spec.queue, job.spec.priority, p.priority, p.best_effort, req, owner)
    }

    /// The two pods pass the same nodes' filters (selectors and tolerations) and
    /// the plugins read the same of them as preemptors: their preemptability and
    /// hints (tdm's victims and predicate read both: a revocable zone; inter-pod
    /// affinity reads the labels and terms there, and the namespace).
    fn same_selector(ssn: &Session<'_>, a: PodId, b: PodId) -> bool {
        let task = |p: PodId| &ssn.job(ssn.pod(p).job).spec.tasks[ssn.pod(p).task as usize];
        let ns = |p: PodId| &ssn.job(ssn.pod(p).job).spec.namespace;
        if ssn.affinity_on() && ns(a) != ns(b) {
            return false;
        }
        task(a).node_selector == task(b).node_selector
            && task(a).node_label_in == task(b).node_label_in
            && task(a).tolerations == task(b).tolerations
            && task(a).preemptable == task(b).preemptable
            && task(a).hints == task(b).hints
    }

    /// True if a search for `pod` is known to fail (never in exhaustive mode, nor
    /// for a pod watched by `--explain`, whose rows must be written).
    pub fn known_failure(&self, ssn: &Session<'_>, pod: PodId) -> bool {
        if self.off || ssn.is_exhaustive() || ssn.explaining(pod) {
            return false;
        }
        self.failed.get(&self.key(ssn, pod)).is_some_and(|seen| seen.iter().any(|&s| Self::same_selector(ssn, s, pod)))
    }

    /// True if every pending pod of job `j` that `tries` would search for is known
    /// to fail: the job's searches would all be skipped, so the job can be.
    /// Pods of one task share every input of the memo's key, so the first pod
    /// of each task that `tries` keeps answers for all of them (unless
    /// `--explain` watches pods: a watched pod's search is never skipped);
    /// `tries` itself may differ between them (a nominated pod may not preempt).
    pub fn job_known_to_fail(&self, ssn: &Session<'_>, j: JobId, tries: impl Fn(PodId) -> bool) -> bool {
        if self.off || self.failed.is_empty() {
            return false;
        }
        let per_task = !ssn.explaining_any();
        let mut seen: Vec<u16> = Vec::new();
        ssn.job(j)
            .pods
            .iter()
            .filter(|&&p| ssn.pod(p).status == PodStatus::Pending && !ssn.pod(p).is_gated())
            .filter(|&&p| tries(p))
            .filter(|&&p| {
                let t = ssn.pod(p).task;
                !per_task
                    || !seen.contains(&t) && {
                        seen.push(t);
                        true
                    }
            })
            .all(|&p| self.known_failure(ssn, p))
    }

    /// Records the outcome of a search for `pod`: a success changes the session,
    /// so everything known is forgotten.
    pub fn record(&mut self, ssn: &Session<'_>, pod: PodId, placed: bool) {
        if placed {
            self.clear();
        } else if !ssn.is_exhaustive() {
            let key = self.key(ssn, pod);
            let seen = self.failed.entry(key).or_default();
            if !seen.iter().any(|&s| Self::same_selector(ssn, s, pod)) {
                seen.push(pod);
            }
        }
    }

    /// Forgets every failure and cached victim (the session changed).
    pub fn clear(&mut self) {
        self.failed.clear();
        if let Some(c) = self.cache.as_mut() {
            c.by_node.clear();
        }
    }
}
