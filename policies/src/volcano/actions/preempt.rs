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
use super::super::plugins::network_topology::contains_topology;
use super::barred::Barred;
use super::carry::Carry;
use super::reach::{Action, Reach, not_set_aside_of};
use super::victims::{FailMemo, VictimFilter, preempt_pod};
use super::{order_queues, pending_tasks, sort_by};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodId, PodStatus};
use lahar_core::model::queue::QueueId;
use lahar_core::session::{Session, Statement};
use lahar_core::world::VictimKey;

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

/// A pending pod whose `preemptionPolicy` is `Never`: preempt and reclaim pass it
/// over as a preemptor (Volcano's `taskEligibleToPreempt` and reclaim's check).
pub(crate) fn never_preempts(ssn: &Session<'_>, p: PodId) -> bool {
    let pod = ssn.pod(p);
    ssn.job(pod.job).spec.tasks[pod.task as usize].never_preempts
}

/// Volcano's `taskEligibleToPreempt` for a pod that may otherwise preempt
/// (its `preemptionPolicy` is not `Never`): a pod nominated to a node by an
/// earlier preemption is not eligible while the predicates (resources aside)
/// pass it there — "the nominated node is already schedulable" — nor while a
/// lower-priority pod evicted by the scheduler is still terminating there; a
/// refusal there that evicting cannot resolve makes it eligible again. Returns
/// why the pod is barred, if it is.
fn nomination_bars(fw: &Framework, ssn: &Session<'_>, p: PodId) -> Option<&'static str> {
    let pod = ssn.pod(p);
    let n = pod.nominated?;
    match fw.predicate_refusal(ssn, p, n) {
        None => Some("the predicates accept the pod there (resources aside), so Volcano deems it schedulable"),
        Some(true) => None,
        Some(false) => ssn
            .node_state(n)
            .pods
            .iter()
            .any(|&v| {
                let v = ssn.pod(v);
                v.status == PodStatus::Releasing && v.disrupted && v.priority < pod.priority
            })
            .then_some("a lower-priority pod evicted by the scheduler is still terminating there"),
    }
}

/// The `--explain` row of a pod [`nomination_bars`] keeps from preempting.
/// `pass` names preempt's second, intra-job pass.
fn explain_nominated(ssn: &mut Session<'_>, p: PodId, why: &str, pass: &str) {
    if ssn.explaining(p) {
        let n = ssn.pod(p).nominated;
        let why = format!(
            "{pass}not eligible to preempt (Volcano's taskEligibleToPreempt): nominated to this node, and {why}"
        );
        ssn.explain(p, n, "preempt", Some(false), why, None);
    }
}

/// False when no pending pod of job `j` may preempt in this action: each is
/// `Never` or barred by its nomination for the whole action. Such a job does
/// nothing in either pass (the first skips each of its pods, the intra-job pass
/// ends at its first), so it is left out before the out-of-reach rule, the
/// starving checks and the sort — a backlog of preemptors waiting on their
/// nominated nodes costs a walk of their pods, not the passes. Not in
/// exhaustive mode, nor for a job `--explain` watches (its rows). A job found
/// so is remembered across sessions until it changes ([`Barred`]).
fn may_preempt(fw: &Framework, ssn: &Session<'_>, barred: &mut Barred, j: JobId) -> bool {
    if ssn.explaining_job(j) {
        return true;
    }
    if ssn.planted.wrong_nomination {
        let job = ssn.job(j);
        let first =
            job.pods.iter().copied().find(|&p| ssn.pod(p).status == PodStatus::Pending && !ssn.pod(p).is_gated());
        return first.is_some_and(|p| !never_preempts(ssn, p) && nomination_bars(fw, ssn, p).is_none());
    }
    // Only a bar no placement of this action can lift counts: a nominated pod
    // whose predicates pass on every node, whatever the nodes hold (without
    // affinity terms in the run, nothing placed changes that). A bar read from
    // the nominated node (host ports, affinity) may lift when an earlier job of
    // the action pipelines onto it, so such a pod keeps its job in.
    if ssn.affinity_in_play() {
        return true;
    }
    if barred.known(ssn, j) {
        return false;
    }
    let may = may_preempt_walk(fw, ssn, j);
    barred.record(ssn, j, !may);
    may
}

/// [`may_preempt`]'s walk of job `j`'s pending pods.
fn may_preempt_walk(fw: &Framework, ssn: &Session<'_>, j: JobId) -> bool {
    let job = ssn.job(j);
    let mut trivial: Vec<(u16, bool)> = Vec::new();
    let mut barred = |p: PodId| {
        if ssn.pod(p).nominated.is_none() {
            return false;
        }
        let t = ssn.pod(p).task;
        match trivial.iter().find(|e| e.0 == t) {
            Some(&(_, v)) => v,
            None => {
                let v = fw.predicate_trivial(ssn, p);
                trivial.push((t, v));
                v
            }
        }
    };
    // Newest pods last: walk back until every pending pod has been seen.
    let mut left = job.count(PodStatus::Pending);
    for &p in job.pods.iter().rev() {
        if left == 0 {
            break;
        }
        if ssn.pod(p).status != PodStatus::Pending {
            continue;
        }
        left -= 1;
        if !ssn.pod(p).is_gated() && !never_preempts(ssn, p) && !barred(p) {
            return true;
        }
    }
    false
}

/// Drops the starving jobs of queue `q` for which both of preempt's passes are
/// no-ops, before they are sorted. When no pending pod of the queue may choose a
/// victim (every group of other jobs' pods is ruled out by priority or by the
/// plugins), a search can only pipeline a pod onto future-idle room without
/// evicting anything, so searches never free room for later ones: a job none of
/// whose pending pods fits any node's future-idle room (the free-resource index
/// says so) fails every search now and for the rest of the pass. Such a job is
/// dropped when it has no Running pod either (the intra-job pass then has no
/// candidate) and no watched pod.
fn drop_hopeless(fw: &Framework, ssn: &Session<'_>, q: QueueId, jobs: &mut Vec<JobId>) {
    let pending = |j: JobId| {
        let candidate = |&p: &PodId| ssn.pod(p).status == PodStatus::Pending && !ssn.pod(p).is_gated();
        ssn.job(j).pods.iter().copied().filter(candidate)
    };
    // The plugins' group rules read a preemptor only through its job's priority:
    // one answer per priority (a backlog has thousands of pending pods and a few
    // priorities).
    let mut known: Vec<(i32, bool)> = Vec::new();
    let mut no_victim = |p: PodId| {
        let prio = ssn.job(ssn.pod(p).job).spec.priority;
        if let Some(&(_, v)) = known.iter().find(|&&(pr, _)| pr == prio) {
            return v;
        }
        let rule = fw.victim_rule(ssn, p, false, false);
        let below = rule.below_priority(fw);
        let v = !ssn.victim_groups().iter().any(|g| {
            let k = g.0;
            k.queue == q && (!below || k.priority < prio) && rule.may_choose(fw, ssn, k)
        });
        known.push((prio, v));
        v
    };
    if !jobs.iter().all(|&j| pending(j).all(&mut no_victim)) {
        return;
    }
    jobs.retain(|&j| {
        ssn.explaining_job(j)
            || ssn.job(j).count(PodStatus::Running) > 0
            || pending(j).any(|p| ssn.first_fit(&ssn.pod(p).req, 0).is_some())
    });
}

/// True if preempt's search for `pod` would find no victim group the plugins
/// may choose from among the session's (other jobs' pods of its queue, by the
/// victim rule made for the pod), as the search's possible groups are listed.
fn no_victim(fw: &Framework, ssn: &Session<'_>, pod: PodId) -> bool {
    let job = ssn.job(ssn.pod(pod).job);
    let (q, p) = (job.spec.queue, job.spec.priority);
    let mut rule = None;
    !ssn.victim_groups().iter().any(|g| {
        let k = g.0;
        k.queue == q && {
            let (rule, below) = rule.get_or_insert_with(|| {
                let rule = fw.victim_rule(ssn, pod, false, true);
                let below = rule.below_priority(fw);
                (rule, below)
            });
            (!*below || k.priority < p) && rule.may_choose(fw, ssn, k)
        }
    })
}

/// One starving job's attempt in preempt's first pass: its pods, in task
/// order while the job starves, each search for victims of other jobs of queue
/// `q` into one statement. Returns the statement (the caller commits it if the
/// job ends pipelined), the pods whose searches were made or known to fail,
/// and the watched pods placed.
#[allow(clippy::type_complexity)]
fn attempt(
    fw: &Framework,
    ssn: &mut Session<'_>,
    q: QueueId,
    j: JobId,
    memo: &mut FailMemo,
    carry: &mut Carry,
) -> (Statement, Vec<PodId>, Vec<(PodId, Option<NodeId>)>) {
    let mut stmt = ssn.statement();
    let mut tasks = preemptor_tasks(fw, ssn, j).into_iter();
    let mut tried: Vec<PodId> = Vec::new();
    let mut watched: Vec<(PodId, Option<NodeId>)> = Vec::new();
    while fw.job_starving(ssn, j) {
        let Some(pod) = tasks.next() else { break };
        // Not eligible: Volcano's preempt fails for it and goes on.
        if never_preempts(ssn, pod) {
            continue;
        }
        if memo.known_failure(ssn, pod) {
            tried.push(pod);
            continue;
        }
        if let Some(why) = nomination_bars(fw, ssn, pod) {
            explain_nominated(ssn, pod, why, "");
            continue;
        }
        tried.push(pod);
        let filter = move |s: &Session<'_>, v: PodId| {
            let vj = s.pod(v).job;
            vj != j && s.job(vj).spec.queue == q && (!s.pod(pod).best_effort || s.pod(v).best_effort)
        };
        let p = ssn.job(j).spec.priority;
        // Victims of other jobs have a lower job priority when priority
        // answers after every possible start of each tier's intersection.
        // Made when a group is first asked (a search the carry skips asks none),
        // in the state the search starts from.
        let rule = std::cell::OnceCell::new();
        let victim = |s: &Session<'_>, k: VictimKey| {
            let (rule, below) = rule.get_or_init(|| {
                let rule = fw.victim_rule(s, pod, false, true);
                let below = rule.below_priority(fw);
                (rule, below)
            });
            k.queue == q && (!*below || k.priority < p) && rule.may_choose(fw, s, k)
        };
        let candidate = move |_: &Session<'_>, k: VictimKey| k.queue == q;
        let victims = VictimFilter { pod: &filter, candidate: &candidate, victim: &victim, nodes: None };
        let placed = preempt_pod(fw, ssn, &mut stmt, pod, &victims, false, None, Some(&mut *carry));
        memo.record(ssn, pod, placed);
        if placed && ssn.explaining(pod) {
            watched.push((pod, ssn.pod(pod).node));
        }
    }
    (stmt, tried, watched)
}

/// Runs the preempt action; `carry` keeps failed searches across sessions,
/// `barred` the jobs none of whose pods may preempt.
pub fn run(fw: &Framework, ssn: &mut Session<'_>, carry: &mut Carry, barred: &mut Barred) {
    ssn.set_action("preempt");
    let mut reach = Reach::new(fw, Action::Preempt)
        .with_pairs(carry.lend_pairs(ssn, false))
        .with_buffers(carry.lend_buffers(false));
    let exhaustive = ssn.is_exhaustive();
    barred.sync(ssn);
    // Where `asked` reads the memo (below), the jobs it drops until their
    // revision moves are not even looked up: only the jobs the last walk had
    // to ask and those the World's log names since ([`Barred::to_walk`]).
    let memo_read = !exhaustive && !ssn.explaining_any() && !ssn.affinity_in_play();
    if !exhaustive {
        ssn.follow_admitted_log();
    }
    let pos = ssn.admitted_log_end();
    // The fruitless jobs that may succeed now are walked again; the others
    // stay out of the walk until the action's first commit.
    let eligible = |ssn: &Session<'_>, j: JobId| {
        fw.job_valid(ssn, j).is_ok() && !contains_topology(ssn, j) && fw.job_starving(ssn, j)
    };
    let mut memo = FailMemo::new(fw);
    let mut released = carry.defer(ssn, |ssn, pod| no_victim(fw, ssn, pod));
    // A class left to a trial: one job's attempt, made now and undone,
    // answers for all (an ineligible job makes none, nor do the others).
    for (class, j) in carry.trials(ssn) {
        let mut fruitless = true;
        if eligible(ssn, j) {
            let (stmt, _, _) = attempt(fw, ssn, ssn.job(j).spec.queue, j, &mut memo, carry);
            // Not kept, and nothing for the close to nominate: a no-op.
            fruitless = !fw.job_pipelined(ssn, j) && !ssn.nominates(&stmt);
            if !stmt.is_empty() {
                memo.clear();
            }
            ssn.retract(stmt);
        }
        released.extend(carry.settle(ssn, class, fruitless));
    }
    released.sort_unstable();
    released.dedup();
    // Listed only when the rule does not set every job aside first.
    let mut last = barred.take_walked();
    if let Some((open, _)) = last.as_mut().filter(|_| !released.is_empty()) {
        open.extend(released);
        open.sort_unstable();
        open.dedup();
    }
    let among = |ssn: &Session<'_>| if memo_read { Barred::to_walk(last.as_ref(), ssn) } else { None };
    let starving_of_job = fw.starving_reads_job();
    // The jobs the next walk must ask: those kept, and those dropped for a
    // reason that may change while their revision does not.
    let mut again: Vec<JobId> = Vec::new();
    // A job that is not starving is dropped below whatever the rule says: it is
    // not asked (but for a watched one, whose rows the rule writes). A job found
    // barred at its current revision is dropped whether it starves or not, so
    // the memo is read first: a backlog waiting on its nominations then costs
    // no starving vote, which reads each job's counts. A deferred job is not
    // asked either: its class says when it must be.
    let deferred = &*carry;
    let mut asked = |ssn: &Session<'_>, j: JobId, rev: Option<u64>| {
        if deferred.deferred(ssn, j, rev) {
            return false;
        }
        if !ssn.explaining_job(j) && !ssn.affinity_in_play() && barred.known_at(ssn, j, rev) {
            return false;
        }
        if !ssn.explaining_job(j) && !fw.job_starving(ssn, j) {
            if !starving_of_job {
                again.push(j);
            }
            return false;
        }
        let may = may_preempt(fw, ssn, barred, j);
        if may || !barred.known_at(ssn, j, rev) {
            again.push(j);
        }
        may
    };
    let walk = not_set_aside_of(fw, ssn, &mut reach, among, |ssn, j, rev| exhaustive || asked(ssn, j, rev));
    carry.keep_reach(reach.into_parts(), false);
    if !exhaustive {
        // Nothing asked: the memo is as it was, and so is what the next walk needs.
        barred.walked(if walk.is_some() { Some((again, pos)) } else { last });
    }
    let mut starving = walk.unwrap_or_default();
    starving.retain(|&j| eligible(ssn, j));
    // Set at the action's first commit: the deferred jobs are no longer known
    // to fail, and each pass takes its queue's back.
    let mut committed = false;
    // The action's commits so far: what names the session's state for the
    // deferred jobs' verdicts asked again after them.
    let mut commits = 0u64;
    let mut queues: Vec<QueueId> = starving.iter().map(|&j| ssn.job(j).spec.queue).collect();
    let deferred_queues = carry.deferred_queues();
    queues.extend(deferred_queues.iter().copied());
    for q in order_queues(fw, ssn, queues) {
        let own: Vec<JobId> = starving.iter().copied().filter(|&j| ssn.job(j).spec.queue == q).collect();
        // The queue's jobs in pass order: with its deferred jobs that are still
        // eligible (`back`), as the walk would have listed them (ascending).
        let order = |ssn: &Session<'_>, carry: &Carry, back: bool| {
            let mut jobs = own.clone();
            if back {
                jobs.extend(carry.deferred_of(ssn, q).into_iter().filter(|&j| eligible(ssn, j)));
                jobs.sort_unstable();
            }
            if !ssn.is_exhaustive() {
                drop_hopeless(fw, ssn, q, &mut jobs);
            }
            fw.sort_jobs(ssn, &mut jobs);
            jobs
        };
        // Deferred jobs of this queue wait for the first commit.
        let mut waiting = !committed && deferred_queues.contains(&q);
        let mut jobs = order(ssn, carry, committed && !ssn.planted.wrong_deferral);
        let mut i = 0;
        while let Some(&j) = jobs.get(i) {
            i += 1;
            // A deferred job back after a commit: skipped while its class is
            // still fruitless in the state the commits left.
            if carry.still_deferred(ssn, j, commits, |ssn, pod| no_victim(fw, ssn, pod)) {
                continue;
            }
            let tries = |p: PodId| !never_preempts(ssn, p) && nomination_bars(fw, ssn, p).is_none();
            // Every pod's search is known to fail: the attempt would change nothing.
            if memo.job_known_to_fail(ssn, j, tries) {
                carry.note_fruitless(ssn, j, || {
                    let mut v = pending_tasks(fw, ssn, j, false);
                    v.extend(pending_tasks(fw, ssn, j, true));
                    v.retain(|&p| !never_preempts(ssn, p));
                    v
                });
                continue;
            }
            let (mut stmt, mut tried, mut watched) = attempt(fw, ssn, q, j, &mut memo, carry);
            let mut kept = fw.job_pipelined(ssn, j);
            if kept && waiting && !ssn.planted.wrong_deferral {
                // The action's first commit: the deferred jobs come back. Every
                // job before this one in the pass order with them failed in
                // the state the pass began with, as they did (or would have);
                // the attempt is made again in that state, and the pass goes on
                // from its place in that order.
                ssn.retract(stmt);
                memo.clear();
                jobs = order(ssn, carry, true);
                i = jobs.iter().position(|&x| x == j).map_or(jobs.len(), |at| at + 1);
                (stmt, tried, watched) = attempt(fw, ssn, q, j, &mut memo, carry);
                kept = fw.job_pipelined(ssn, j);
            }
            if kept {
                ssn.commit(stmt);
                committed = true;
                commits += 1;
                waiting = false;
            } else {
                let placed = !stmt.is_empty();
                ssn.discard(stmt);
                if placed {
                    memo.clear();
                }
                carry.note_fruitless(ssn, j, || tried);
            }
            explain::evict_outcome(ssn, &watched, kept);
        }
        // Intra-job preemption: a starving job's pending pods may evict its own
        // lower-priority pods.
        for &j in &jobs {
            // A job with no Running pod has no candidate: its first search
            // fails and ends its pass (only a watched pod's rows would show it).
            if !ssn.is_exhaustive() && !ssn.explaining_job(j) && ssn.job(j).count(PodStatus::Running) == 0 {
                continue;
            }
            if !fw.job_starving(ssn, j) {
                continue;
            }
            for pod in preemptor_tasks(fw, ssn, j) {
                // The only nodes with a candidate: those running the job's pods.
                let held = ssn.job_nodes(j);
                // Not eligible: the pod is not assigned, which ends the job's pass.
                if never_preempts(ssn, pod) {
                    break;
                }
                if let Some(why) = nomination_bars(fw, ssn, pod) {
                    explain_nominated(ssn, pod, why, "intra-job pass: ");
                    break;
                }
                let mut stmt = ssn.statement();
                let filter = move |s: &Session<'_>, v: PodId| {
                    s.pod(v).job == j && (!s.pod(pod).best_effort || s.pod(v).best_effort)
                };
                let p = ssn.job(j).spec.priority;
                // Only the job's own Running pods can be candidates here.
                let candidate = move |s: &Session<'_>, k: VictimKey| {
                    s.job(j).count(PodStatus::Running) > 0 && k.queue == q && k.priority == p
                };
                let rule = fw.victim_rule(ssn, pod, false, true);
                let victim = |s: &Session<'_>, k: VictimKey| candidate(s, k) && rule.may_choose(fw, s, k);
                let victims = VictimFilter { pod: &filter, candidate: &candidate, victim: &victim, nodes: Some(&held) };
                if preempt_pod(fw, ssn, &mut stmt, pod, &victims, false, None, None) {
                    memo.clear();
                    let node = ssn.pod(pod).node;
                    ssn.commit(stmt);
                    committed = true;
                    commits += 1;
                    explain::evict_outcome(ssn, &[(pod, node)], true);
                } else {
                    ssn.discard(stmt);
                    break;
                }
            }
        }
    }
}
