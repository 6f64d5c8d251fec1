//! `gangpreempt` and `gangreclaim` (Volcano's `actions/gangpreempt`,
//! `actions/gangreclaim` and `actions/utils`): gang-aware eviction that plans a
//! starving job's whole set of pending pods at once.
//!
//! Queues are visited once each in queue order (gangreclaim skips an overused
//! queue); each starving job of the queue, in job order, is tried once. Its
//! pending pods (BestEffort ones aside) must all fit. Victim candidates are the
//! Running preemptable pods of other jobs — gangpreempt: of the same queue with a
//! lower job priority; gangreclaim: of other, reclaimable queues — whose PodGroup
//! is not marked `volcano.sh/preemptable: "false"`. Each victim job's candidates
//! form a safe and a whole bundle (module `bundle`); the plugins' `UnifiedEvictable`
//! functions (gang, priority, conformance, capacity) filter them; bundles are
//! taken in order, cumulatively, and once the domain's idle and releasing
//! resources plus the victims' cover the need, a dry run evicts every chosen
//! victim and places each pending pod (queue quota, future-idle room,
//! predicates, best node). The first dry run that leaves the job pipelined is
//! kept; it is committed only if the job ends pipelined, as Volcano does.
//!
//! The domain is the whole cluster, but for a job with a hard network topology:
//! its domains are the HyperNodes of the network-topology-aware plugin's eviction
//! gradient (widest first, at most `maxDomains`), tried in order; in each, the
//! dry run tries the HyperNodes of the gradient under the domain, widest first,
//! and places every pod within one of them.

mod bundle;

use super::super::args::Args;
use super::super::explain;
use super::super::framework::Framework;
use super::super::plugin::EvictKind;
use super::super::subjobs;
use super::worksheet::Worksheet;
use super::{best_node, predicate_nodes, queues_of, sort_by};
use bundle::{Bundle, Gang, Task};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodId, PodStatus};
use lahar_core::model::queue::QueueId;
use lahar_core::model::resource::Resources;
use lahar_core::model::topology::HyperNodeId;
use lahar_core::session::{Session, Statement};
use lahar_core::world::VictimKey;
use std::collections::BTreeMap;

/// The arguments of a gang-eviction action (`configurations:`), fixed at conf load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GangArgs {
    /// `maxDomains` (default 8): HyperNode domains tried per job (only a
    /// hard-topology job has more than one).
    pub max_domains: u32,
    /// `allowWholeBundle` (default true): victims may include pods whose eviction
    /// breaks their gang.
    pub allow_whole: bool,
}

impl GangArgs {
    /// The arguments under `configurations: - name: <action>`.
    pub fn from_conf(args: Option<&Args>) -> GangArgs {
        let d = Args::default();
        let a = args.unwrap_or(&d);
        GangArgs { max_domains: a.int("maxDomains", 8) as u32, allow_whole: a.bool("allowWholeBundle", true) }
    }
}

fn action_name(kind: EvictKind) -> &'static str {
    match kind {
        EvictKind::GangPreempt => "gangpreempt",
        EvictKind::GangReclaim => "gangreclaim",
    }
}

/// Watched pods placed by a plan, with their nodes (for `--explain`).
type Placed = Vec<(PodId, Option<NodeId>)>;

/// Runs gangpreempt or gangreclaim.
pub fn run(fw: &Framework, ssn: &mut Session<'_>, kind: EvictKind, args: GangArgs) {
    ssn.set_action(action_name(kind));
    let mut starving = ssn.admitted_jobs_with_pending();
    starving.retain(|&j| fw.job_valid(ssn, j).is_ok() && fw.job_starving(ssn, j));
    for q in queues_of(fw, ssn, &starving) {
        if kind == EvictKind::GangReclaim && fw.overused(ssn, q) {
            continue;
        }
        let mut jobs: Vec<JobId> = starving.iter().copied().filter(|&j| ssn.job(j).spec.queue == q).collect();
        fw.sort_jobs(ssn, &mut jobs);
        for j in jobs {
            let mut stmt = ssn.statement();
            let placed = match evict_for_job(fw, ssn, kind, args, q, j, &mut stmt) {
                Ok(placed) => placed,
                Err(why) => {
                    for p in ssn.explained_pods(j) {
                        if ssn.pod(p).status == PodStatus::Pending {
                            ssn.explain(p, None, ssn.action(), Some(false), why.clone(), None);
                        }
                    }
                    Vec::new()
                }
            };
            let kept = fw.job_pipelined(ssn, j);
            if kept {
                ssn.commit(stmt);
            } else {
                ssn.discard(stmt);
            }
            explain::evict_outcome(ssn, &placed, kept);
        }
    }
}

/// The job's pending pods the action places (Volcano's eviction worksheet and
/// `CollectPendingTasksForGangEviction`): all but BestEffort and gated ones
/// (Volcano leaves out pods that request nothing and `SchGated` ones), by sub-job in the order they are planned,
/// each in task order; of a job already ready, only the first sub-job's.
fn pending(fw: &Framework, ssn: &Session<'_>, j: JobId) -> Vec<(u32, Vec<PodId>)> {
    let mut v: Vec<PodId> = ssn
        .job(j)
        .pods
        .iter()
        .copied()
        .filter(|&p| ssn.pod(p).status == PodStatus::Pending && !ssn.pod(p).best_effort && !ssn.pod(p).is_gated())
        .collect();
    sort_by(&mut v, |a, b| fw.task_order(ssn, a, b));
    let mut subs = Worksheet::new(fw, ssn, j, &v).in_order(fw, ssn, j);
    if fw.job_ready(ssn, j) {
        subs.truncate(1);
    }
    subs
}

/// Tries to make room for job `j`; on success the dry run's evictions and
/// placements are merged into `stmt`. Returns the watched pods it placed, or why
/// nothing was tried or kept (for `--explain`).
fn evict_for_job(
    fw: &Framework,
    ssn: &mut Session<'_>,
    kind: EvictKind,
    args: GangArgs,
    q: QueueId,
    j: JobId,
    stmt: &mut Statement,
) -> Result<Placed, String> {
    let subs = pending(fw, ssn, j);
    if subs.is_empty() {
        return Ok(Vec::new());
    }
    let need = subs.iter().flat_map(|(_, v)| v).fold(Resources::ZERO, |a, &p| a + ssn.pod(p).req);
    if kind == EvictKind::GangReclaim && !fw.preemptive_for(ssn, q, &need) {
        return Err("the queue may not reclaim for the job's pending pods (preemptive)".into());
    }
    let p = ssn.job(j).spec.priority;
    let group_ok = |ssn: &Session<'_>, k: VictimKey| match kind {
        EvictKind::GangPreempt => k.queue == q && k.priority < p,
        EvictKind::GangReclaim => k.queue != q && ssn.queue(k.queue).spec.reclaimable,
    };
    // No Running preemptable pod anywhere that could be a candidate: no bundle,
    // nothing to try (the exhaustive walk finds the same after looking).
    let none = match kind {
        EvictKind::GangPreempt => "no victim: no Running preemptable pod of a lower-priority job in the queue",
        EvictKind::GangReclaim => "no victim: no Running preemptable pod in another, reclaimable queue",
    };
    if !ssn.is_exhaustive() && !ssn.victim_groups().iter().any(|g| group_ok(ssn, g.0)) {
        return Err(none.into());
    }
    let hard = ssn.job(j).spec.network_topology.as_ref().is_some_and(|t| t.hard);
    let top = ssn.cluster().topology.top();
    // Volcano's GetCandidateDomains: the eviction gradient's HyperNodes in order,
    // at most `maxDomains`; the cluster for a job without a hard topology.
    let gradient = fw.hypernode_gradient_evict(ssn, j, top).unwrap_or_default();
    let domains = pick_domains(&gradient, args.max_domains as usize, (!hard).then_some(top));
    if domains.is_empty() {
        return Err("no HyperNode domain: the network-topology-aware plugin's eviction gradient has none for the job's hard topology".into());
    }
    let mut why = String::new();
    for domain in domains {
        let nodes: Option<Vec<NodeId>> = hard.then(|| ssn.cluster().topology.get(domain).nodes.clone());
        match evict_in_domain(fw, ssn, kind, args, (q, j), &subs, &need, nodes.as_deref(), domain, &group_ok) {
            Ok((plan, placed)) => {
                stmt.merge(plan);
                return Ok(placed);
            }
            Err(e) => {
                why = if hard { format!("in HyperNode `{}`: {e}", ssn.cluster().topology.get(domain).name) } else { e };
            }
        }
    }
    Err(match why.is_empty() {
        true => format!("{none} whose job and the plugins allow it (whole bundles allowed: {})", args.allow_whole),
        false => why,
    })
}

/// Volcano's `PickDomainsFromGradients`: the gradient's HyperNodes in order,
/// each once, at most `max` (0: no cap); none: the fallback, if any.
fn pick_domains<T: Copy + PartialEq>(gradient: &[Vec<T>], max: usize, fallback: Option<T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for &h in gradient.iter().flatten() {
        if !out.contains(&h) {
            out.push(h);
            if max > 0 && out.len() >= max {
                return out;
            }
        }
    }
    if out.is_empty() {
        out.extend(fallback);
    }
    out
}

/// One domain of [`evict_for_job`] (`within`: its nodes; `None`, the cluster):
/// its bundles, taken cumulatively until a dry run places the job.
#[allow(clippy::too_many_arguments)]
fn evict_in_domain(
    fw: &Framework,
    ssn: &mut Session<'_>,
    kind: EvictKind,
    args: GangArgs,
    (q, j): (QueueId, JobId),
    subs: &[(u32, Vec<PodId>)],
    need: &Resources,
    within: Option<&[NodeId]>,
    domain: HyperNodeId,
    group_ok: &dyn Fn(&Session<'_>, VictimKey) -> bool,
) -> Result<(Statement, Placed), String> {
    let bundles = domain_bundles(fw, ssn, kind, args, q, j, need, within, group_ok);
    if bundles.is_empty() {
        return Err(String::new());
    }
    // What the domain has idle or releasing.
    let add = |a: Resources, n: NodeId| a + ssn.idle(n) + ssn.node_state(n).releasing;
    let room = match within {
        Some(nodes) => nodes.iter().fold(Resources::ZERO, |a, &n| add(a, n)),
        None => (0..ssn.node_count() as u32).map(NodeId).fold(Resources::ZERO, add),
    };
    let mut victims: Vec<PodId> = Vec::new();
    let mut freed = Resources::ZERO;
    for b in &bundles {
        victims.extend(b.tasks.iter().map(|t| t.pod));
        freed += b.local;
        if !need.fits_in(&(room + freed)) {
            continue;
        }
        if let Some(done) = dry_run(fw, ssn, kind, (q, j), subs, &victims, domain) {
            return Ok(done);
        }
    }
    Err(if need.fits_in(&(room + freed)) {
        format!("no plan evicting up to {} allowed victim(s) placed every pending pod of the job", victims.len())
    } else {
        format!("the {} allowed victim(s) and the idle room together are too little for the job", victims.len())
    })
}

/// Volcano's `selectDomainBundles`: the candidates' bundles, filtered by the
/// plugins, in the order they are taken.
#[allow(clippy::too_many_arguments)]
fn domain_bundles(
    fw: &Framework,
    ssn: &Session<'_>,
    kind: EvictKind,
    args: GangArgs,
    q: QueueId,
    j: JobId,
    need: &Resources,
    within: Option<&[NodeId]>,
    group_ok: &dyn Fn(&Session<'_>, VictimKey) -> bool,
) -> Vec<Bundle> {
    let exhaustive = ssn.is_exhaustive();
    let mut by_job: BTreeMap<JobId, Vec<Task>> = BTreeMap::new();
    let mut visit = |n: NodeId| {
        let ns = ssn.node_state(n);
        if !exhaustive && !ns.victims.iter().any(|v| group_ok(ssn, v.0)) {
            return;
        }
        for &v in &ns.pods {
            let pod = ssn.pod(v);
            if pod.status != PodStatus::Running || !pod.preemptable || pod.job == j {
                continue;
            }
            let spec = &ssn.job(pod.job).spec;
            let key = VictimKey { queue: spec.queue, priority: spec.priority, over_min: false, lone: false };
            if !group_ok(ssn, key) || spec.preemptable == Some(false) {
                continue;
            }
            let role = spec.role_lead(pod.task as usize) as u16;
            let sub = ssn.job(pod.job).sub_job_of(pod.task as usize, pod.index);
            let task = Task { pod: v, priority: pod.priority, uid: String::new(), role, sub, req: pod.req };
            by_job.entry(pod.job).or_default().push(task);
        }
    };
    // Two plain loops, not one chained iterator: every starving job walks every
    // node here.
    match within {
        Some(nodes) => nodes.iter().for_each(|&n| visit(n)),
        None => (0..ssn.node_count() as u32).map(NodeId).for_each(visit),
    }
    let mut bundles: Vec<Bundle> = by_job
        .into_iter()
        .flat_map(|(vj, mut tasks)| {
            // Names order a job's candidates (after priority): needed only for two
            // or more.
            if tasks.len() > 1 {
                for t in &mut tasks {
                    let p = ssn.pod(t.pod);
                    t.uid = ssn.job(vj).spec.pod_name(p.task as usize, p.index);
                }
            }
            bundle::job_bundles(&gang(ssn, vj), tasks)
        })
        .collect();
    if bundles.is_empty() {
        return bundles;
    }
    // Victim jobs in reverse job order (Volcano's `!JobOrderFn`; job order is
    // total), victim queues in victim-queue order: each ranked once.
    let mut order: Vec<u32> = match kind {
        EvictKind::GangPreempt => bundles.iter().map(|b| b.job.0).collect(),
        EvictKind::GangReclaim => bundles.iter().map(|b| b.queue.0).collect(),
    };
    order.sort_unstable();
    order.dedup();
    match kind {
        EvictKind::GangPreempt => {
            let mut jobs: Vec<JobId> = order.iter().map(|&j| JobId(j)).collect();
            fw.sort_jobs(ssn, &mut jobs);
            jobs.reverse();
            order = jobs.iter().map(|j| j.0).collect();
        }
        EvictKind::GangReclaim => {
            let mut qs: Vec<QueueId> = order.iter().map(|&q| QueueId(q)).collect();
            qs.sort_by(|&l, &r| fw.victim_queue_order(ssn, l, r, q));
            order = qs.iter().map(|q| q.0).collect();
        }
    }
    let mut rank: Vec<(u32, usize)> = order.iter().enumerate().map(|(i, &x)| (x, i)).collect();
    rank.sort_unstable();
    let rank_of = |x: u32| rank.binary_search_by_key(&x, |r| r.0).map_or(0, |i| rank[i].1);
    let sort = |bundles: &mut Vec<Bundle>| match kind {
        EvictKind::GangPreempt => bundle::sort_for_preempt(bundles, need, Some(&|j: JobId| rank_of(j.0))),
        EvictKind::GangReclaim => bundle::sort_for_reclaim(bundles, need, Some(&|q: QueueId| rank_of(q.0))),
    };
    sort(&mut bundles);
    let flat: Vec<PodId> = bundles.iter().flat_map(|b| b.tasks.iter().map(|t| t.pod)).collect();
    let mut allowed = fw.unified_evictable(ssn, kind, j, &flat);
    if allowed.is_empty() {
        return Vec::new();
    }
    allowed.sort_unstable();
    let mut valid = bundle::apply_allowed(bundles, &allowed);
    sort(&mut valid);
    valid.retain(|b| args.allow_whole || b.kind == bundle::Kind::Safe);
    valid
}

/// A victim job's gang facts: ready pods, minAvailable, and each role's ready
/// pods and minimum when the gang covers the roles' minimums (as gang checks).
fn gang(ssn: &Session<'_>, j: JobId) -> Gang {
    let job = ssn.job(j);
    let spec = &job.spec;
    let ready_of = |t: usize| {
        [PodStatus::Allocated, PodStatus::Running, PodStatus::Succeeded]
            .iter()
            .map(|&s| job.task_count(t, s))
            .sum::<u32>()
    };
    let best_effort_pending = |t: usize| {
        if spec.tasks[t].requests.is_best_effort() { job.task_count(t, PodStatus::Pending) } else { 0 }
    };
    let covered = spec.min_available >= spec.tasks.iter().map(|t| t.min_available).sum::<u32>();
    let roles = covered.then(|| {
        (0..spec.tasks.len())
            .filter(|&t| spec.role_lead(t) == t && spec.tasks[t].min_available > 0)
            .map(|t| {
                let ready = spec.role_tasks(t).map(|u| ready_of(u) + best_effort_pending(u)).sum();
                (t as u16, ready, spec.tasks[t].min_available)
            })
            .collect()
    });
    let total = job.pods.iter().fold(Resources::ZERO, |a, &p| a + ssn.pod(p).req);
    // Volcano enforces every sub-group policy, `minSubGroups: 0` included; the
    // default sub-job is a group of its own, with no minimum.
    let subs = spec.sub_groups.as_ref().map(|g| {
        let n = g.policies.len();
        let sub_jobs = (0..g.sub_jobs.len() as u32)
            .map(|s| {
                (subjobs::live_count(ssn, j, s) > 0).then(|| {
                    let grp = g.sub_jobs[s as usize].policy.map_or(n, |p| p as usize);
                    (grp, subjobs::is_ready(ssn, j, s))
                })
            })
            .collect();
        let min = g.policies.iter().map(|p| i64::from(p.min_groups)).chain([0]).collect();
        bundle::SubGangs { sub_jobs, min }
    });
    Gang {
        job: j,
        uid: format!("{}/{}", spec.namespace, spec.name),
        queue: spec.queue,
        ready: job.ready_count(),
        min_available: spec.min_available,
        roles,
        total,
        subs,
    }
}

/// Volcano's `BuildNominationPlanInDomain`: evicts every victim, then plans the
/// sub-jobs in order, each in the first HyperNode of its eviction gradient under
/// `domain` (the domain itself for a sub-job without a hard topology) where all
/// its pods are placed and it ends ready or pipelined, until the job is
/// pipelined (or, for a job already ready, after its first sub-job). A sub-job
/// with no such HyperNode fails the plan; a failed plan is undone.
fn dry_run(
    fw: &Framework,
    ssn: &mut Session<'_>,
    kind: EvictKind,
    (q, j): (QueueId, JobId),
    subs: &[(u32, Vec<PodId>)],
    victims: &[PodId],
    domain: HyperNodeId,
) -> Option<(Statement, Placed)> {
    let was_ready = fw.job_ready(ssn, j);
    let mut stmt = ssn.statement();
    let reason = format!("{} for {}", action_name(kind), ssn.job(j).spec.name);
    for &v in victims {
        ssn.evict_for(&mut stmt, v, j, reason.clone()).expect("candidates are running");
    }
    let mut watched = Vec::new();
    for (s, pods) in subs {
        let mut won = None;
        for h in fw.sub_job_gradient(ssn, j, *s, domain, true).into_iter().flatten() {
            let hn = ssn.cluster().topology.get(h);
            let nodes: Option<Vec<NodeId>> = (!hn.virtual_top).then(|| hn.nodes.clone());
            if let Some(t) = trial(fw, ssn, (q, j, *s), pods, victims.len(), nodes.as_deref()) {
                won = Some(t);
                break;
            }
        }
        let Some((t, w)) = won else {
            ssn.discard(stmt);
            return None;
        };
        stmt.merge(t);
        watched.extend(w);
        if was_ready || fw.job_pipelined(ssn, j) {
            break;
        }
    }
    if !fw.job_pipelined(ssn, j) {
        ssn.discard(stmt);
        return None;
    }
    Some((stmt, watched))
}

/// Volcano's `runSimulateTrialAtHyperNode`: places each of sub-job `s`'s pending
/// pods in task order (queue quota, predicates on future-idle room, best node;
/// on `within` only, when given); succeeds only if every pod is placed and the
/// sub-job ends ready or pipelined. A failed trial is undone.
fn trial(
    fw: &Framework,
    ssn: &mut Session<'_>,
    (q, j, s): (QueueId, JobId, u32),
    pods: &[PodId],
    victims: usize,
    within: Option<&[NodeId]>,
) -> Option<(Statement, Placed)> {
    let mut stmt = ssn.statement();
    let mut start = 0;
    let mut watched = Vec::new();
    for &pod in pods {
        let node = if fw.allocatable(ssn, q, pod) {
            let nodes = predicate_nodes(fw, ssn, pod, within, &mut start);
            best_node(fw, ssn, pod, &nodes)
        } else {
            if ssn.explaining(pod) {
                ssn.explain(pod, None, ssn.action(), Some(false), "the queue's quota refuses the pod", None);
            }
            None
        };
        // Volcano's `victimsPresent`: a plan with victims nominates its pods.
        let Some(n) = node.filter(|&n| ssn.pipeline_after_evictions(&mut stmt, pod, n, victims > 0).is_ok()) else {
            ssn.discard(stmt);
            return None;
        };
        if ssn.explaining(pod) {
            let why = format!("pipelined in a plan that evicts {victims} victim(s)");
            ssn.explain(pod, Some(n), ssn.action(), Some(true), why, None);
            watched.push((pod, Some(n)));
        }
    }
    if stmt.is_empty() || !(fw.sub_job_ready(ssn, j, s) || fw.sub_job_pipelined(ssn, j, s)) {
        ssn.discard(stmt);
        return None;
    }
    Some((stmt, watched))
}

#[cfg(test)]
mod tests {
    use super::pick_domains;

    /// Volcano's TestPickDomainsFromGradients_MaxDomainsAndDedup and
    /// TestPickDomainsFromGradients_Fallback (gangpreempt and gangreclaim), and
    /// util_test.go's TestGetCandidateDomains_EmptyGradient_* (a hard topology
    /// has no fallback).
    #[test]
    fn test_pick_domains_from_gradients() {
        let g = vec![vec!["d1", "d2"], vec!["d2", "d3"]];
        assert_eq!(pick_domains(&g, 2, None), ["d1", "d2"]);
        assert_eq!(pick_domains::<&str>(&[], 8, Some("<cluster-top-hypernode>")), ["<cluster-top-hypernode>"]);
        assert!(pick_domains::<&str>(&[], 8, None).is_empty());
    }
}
