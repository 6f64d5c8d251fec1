//! `allocate`: queues in queue order, one job step at a time. A step places a
//! job's pending pods (task order; queue quota, predicates, best node) until the
//! gang is ready; a ready job is committed and, if it has more pending pods, goes
//! back into its queue for one more pod per later step. A job whose step fails is
//! dropped for this session; a queue found overused is dropped for the rest of the
//! action. A job that is only pipelined keeps its tentative placements until the
//! session ends (Volcano neither commits nor discards it).
//!
//! Jobs constrained by `networkTopology` or split into sub-groups are placed
//! HyperNode by HyperNode (`hypernode.rs`).

mod hypernode;
mod line;
mod lone;

use super::super::explain;
use super::super::framework::Framework;
use super::super::plugins::network_topology::placed_by_hypernode;
use super::super::subjobs;
use super::reach::{Action, Reach, ReachBuffers, set_aside};
use super::worksheet::Worksheet;
use super::{best_node, insert_sorted, order_queues, pending_tasks, predicate_nodes};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodGroupPhase, PodId, PodStatus};
use lahar_core::model::queue::QueueId;
use lahar_core::session::{Session, Statement};
use lahar_core::world::ReachFacts;
use line::{Line, Run, Tasks};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Per-scheduler state the allocate action keeps across sessions.
#[derive(Default, Debug)]
pub struct AllocState {
    /// Rotating start of the node search.
    pub next_start: usize,
    /// The out-of-reach rule's lists, from one session to the next.
    reach: ReachBuffers,
}

/// Should the step go on after a pod of `failed` roles of sub-job `s` found no
/// node (Volcano's `NeedContinueAllocating`)?
fn need_continue(ssn: &Session<'_>, j: JobId, s: u32, failed: &BTreeSet<u16>) -> bool {
    let job = ssn.job(j);
    let total = job.live_count();
    let min = job.spec.min_available;
    if min >= total {
        return false;
    }
    if subjobs::has_policy(ssn, j) {
        return subjobs::min_available(ssn, j, s) < subjobs::live_count(ssn, j, s);
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
        let lead = job.spec.role_lead(t as usize);
        let placed: u32 = job
            .spec
            .role_tasks(lead)
            .map(|u| {
                job.task_count(u, PodStatus::Allocated)
                    + job.task_count(u, PodStatus::Running)
                    + job.task_count(u, PodStatus::Succeeded)
            })
            .sum();
        let min = job.spec.tasks[lead].min_available;
        min > 0 && placed < min
    })
}

/// One step of sub-job `sub` of job `j` (for a job without sub-groups, sub-job 0
/// is the job) over `within` nodes (all nodes when `None`), consuming pods from
/// the front of its task queue (`tasks` persists across the job's steps in a
/// session, as in Volcano: a pod that found no node is not retried). Returns the
/// statement when the sub-job ends ready or pipelined; otherwise discards it.
/// `unfiled`: the caller knows the step will be discarded
/// ([`Session::unfiled_statement`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn allocate_tasks(
    fw: &Framework,
    ssn: &mut Session<'_>,
    st: &mut AllocState,
    j: JobId,
    sub: u32,
    tasks: &mut VecDeque<PodId>,
    within: Option<&[NodeId]>,
    unfiled: bool,
) -> Option<Statement> {
    let mut stmt = if unfiled { ssn.unfiled_statement() } else { ssn.statement() };
    let q = ssn.job(j).spec.queue;
    let mut failed: BTreeSet<u16> = BTreeSet::new();
    // Watched pods this step looked at (for `--explain`; empty otherwise).
    let mut tried: Vec<PodId> = Vec::new();
    while let Some(pod) = tasks.pop_front() {
        if ssn.explaining(pod) {
            tried.push(pod);
        }
        if !fw.allocatable(ssn, q, pod) {
            if ssn.explaining(pod) {
                let why = format!(
                    "queue {} cannot take the pod: rejected by {}",
                    ssn.queue(q).spec.name,
                    fw.allocatable_rejecters(ssn, q, pod).join(", ")
                );
                ssn.explain(pod, None, "allocatable", Some(false), why, None);
            }
            continue;
        }
        let role = ssn.pod(pod).task;
        if failed.contains(&role) {
            if ssn.explaining(pod) {
                let why = format!(
                    "skipped: a pod of task {} found no node earlier in this step",
                    ssn.job(j).spec.tasks[role as usize].name
                );
                ssn.explain(pod, None, "allocate", Some(false), why, None);
            }
            continue;
        }
        let req = ssn.pod(pod).req;
        let nominated =
            ssn.pod(pod).nominated.filter(|&n| within.is_none_or(|w| w.contains(&n))).filter(|&n| {
                req.fits_in(&ssn.future_idle(n)) && ssn.gpu_fits(pod, n) && fw.predicate(ssn, pod, n).is_ok()
            });
        let nodes = match nominated {
            Some(n) => {
                if ssn.explaining(pod) {
                    let note = "feasible, but not examined: the pod is nominated to another node";
                    explain::node_rows(fw, ssn, pod, within, &[n], note);
                }
                vec![n]
            }
            None => predicate_nodes(fw, ssn, pod, within, &mut st.next_start),
        };
        let Some(best) = best_node(fw, ssn, pod, &nodes) else {
            failed.insert(role);
            let go_on = need_continue(ssn, j, sub, &failed);
            if ssn.explaining(pod) {
                let why = format!(
                    "no feasible node; {}",
                    if go_on { "the step goes on with other tasks" } else { "the job's step ends" }
                );
                ssn.explain(pod, None, "allocate", Some(false), why, None);
            }
            if go_on {
                continue;
            }
            break;
        };
        if ssn.fits_idle(pod, best) {
            ssn.allocate(&mut stmt, pod, best).expect("idle checked");
        } else {
            ssn.pipeline(&mut stmt, pod, best).expect("future idle checked");
        }
        if fw.sub_job_ready(ssn, j, sub) {
            break;
        }
    }
    if fw.sub_job_ready(ssn, j, sub) || fw.sub_job_pipelined(ssn, j, sub) {
        Some(stmt)
    } else {
        if !tried.is_empty() {
            let why = format!("{}; the step's placements are discarded", explain::gang_shortfall(ssn, j));
            for p in tried {
                ssn.explain(p, None, "gang", Some(false), why.clone(), None);
            }
        }
        ssn.discard(stmt);
        None
    }
}

/// True if some pending pod of job `j` (facts `f`) that requests resources fits
/// some node's future-idle resources: a job none of whose pending pods does can
/// only fail its step, which changes nothing. Outside exhaustive mode the facts
/// say which task to ask about when only one has such pods (one free-resource
/// index query per pod shape, cached in `Reach`, not the job's spec and counts).
fn any_fits(ssn: &Session<'_>, reach: &mut Reach, j: JobId, f: &ReachFacts) -> bool {
    if !ssn.is_exhaustive() && f.pending_tasks <= 1 {
        return f.pending_tasks == 1 && reach.fits_somewhere(ssn, f.shape);
    }
    let job = ssn.job(j);
    job.spec.tasks.iter().enumerate().any(|(t, task)| {
        job.task_count(t, PodStatus::Pending) > 0
            && !task.requests.is_best_effort()
            && ssn.first_fit(&task.requests, 0).is_some()
    })
}

/// Whether queue `q` is overused at allocate's start, asked once per queue.
fn queue_overused(fw: &Framework, ssn: &Session<'_>, known: &mut Vec<(QueueId, bool)>, q: QueueId) -> bool {
    if let Some(&(_, o)) = known.iter().find(|(qq, _)| *qq == q) {
        return o;
    }
    let o = fw.overused(ssn, q);
    known.push((q, o));
    o
}

/// True if allocate's intake (below) would take no admitted job: each group of
/// jobs with the same facts ([`Session::admitted_groups`]) fits nowhere, belongs
/// to an overused queue or is out of reach, decided by one job of the group where
/// the facts decide and job by job where they do not ([`Reach::asked`]). A backlog waiting for room then costs one check per group, not one per
/// job and a copy of the list. False in exhaustive and explaining sessions.
fn takes_none(fw: &Framework, ssn: &Session<'_>, reach: &mut Reach, overused: &mut Vec<(QueueId, bool)>) -> bool {
    if ssn.explaining_any() {
        return false;
    }
    let Some(groups) = ssn.admitted_groups() else { return false };
    groups.iter().all(|(f, jobs)| {
        reach.asked(f, jobs).all(|j| {
            !any_fits(ssn, reach, j, f)
                || queue_overused(fw, ssn, overused, f.queue)
                || reach.out_of_reach(fw, ssn, j, f)
        })
    })
}

/// Allocate's intake by groups of admitted jobs with the same facts
/// ([`Session::admitted_groups`]), per queue, when the facts decide each job's
/// turn and job-order keys: one task with pending pods that request resources,
/// placed over all nodes, no gated pods in the session, validity asked at the
/// turn ([`Framework::job_valid_reads_job`]), every key from the facts
/// ([`Framework::order_keys_of_facts`]). A group is taken or left whole by the
/// same tests the per-job intake makes, which read only the facts: room for
/// its request, its queue's overuse, the out-of-reach rule. `None` when some
/// group's jobs must be taken one by one (and in exhaustive and explaining
/// sessions).
fn group_runs(
    fw: &Framework,
    ssn: &Session<'_>,
    reach: &mut Reach,
    overused: &mut Vec<(QueueId, bool)>,
) -> Option<BTreeMap<QueueId, Vec<Run>>> {
    if ssn.planted.no_runs || ssn.explaining_any() || ssn.any_gated() || !fw.job_valid_reads_job() {
        return None;
    }
    let groups = ssn.admitted_groups()?;
    let gang_binds = fw.gang_binds();
    let mut out: BTreeMap<QueueId, Vec<Run>> = BTreeMap::new();
    for (f, jobs) in groups {
        // No pending pod that requests resources: never taken.
        let Some(&(_, first)) = jobs.first().filter(|_| f.pending_tasks > 0) else { continue };
        if queue_overused(fw, ssn, overused, f.queue) {
            continue;
        }
        // Room is asked job by job for several tasks with pending pods.
        if f.pending_tasks > 1 {
            return None;
        }
        if !reach.fits_somewhere(ssn, f.shape) || reach.out_of_reach(fw, ssn, first, f) {
            continue;
        }
        // Taken: its jobs' turns and keys must follow from the facts.
        if !f.plain {
            return None;
        }
        let keys = fw.order_keys_of_facts(ssn, f)?;
        let run = Run::new(ssn, f, gang_binds, keys, jobs.iter().copied().collect());
        out.entry(f.queue).or_default().push(run);
    }
    Some(out)
}

/// Runs the allocate action. `promote_pending`: no enqueue action is configured, so
/// allocate admits Pending PodGroups itself.
pub fn run(fw: &Framework, ssn: &mut Session<'_>, st: &mut AllocState, promote_pending: bool) {
    ssn.set_action("allocate");
    // Per queue: its jobs in job order, each with its pods still to place.
    // Boxed: a map's node of lines would be too big for the allocator's
    // per-thread cache, and each session makes one.
    let mut per_queue: BTreeMap<QueueId, Box<Line>> = BTreeMap::new();
    // Per queue at intake: its jobs, their facts (when in step with the job) and pods.
    let mut intake: BTreeMap<QueueId, Intake> = BTreeMap::new();
    let mut reach = Reach::new(fw, Action::Allocate).with_buffers(std::mem::take(&mut st.reach));
    // Per queue: overused at intake (asked once per queue, not per job).
    let mut overused: Vec<(QueueId, bool)> = Vec::new();
    ssn.sync_groups();
    if !promote_pending && takes_none(fw, ssn, &mut reach, &mut overused) {
        st.reach = reach.into_parts().1;
        return;
    }
    // Where the facts decide every admitted job's turn and keys, whole groups
    // of jobs are taken without reading the jobs.
    let runs = if promote_pending { None } else { group_runs(fw, ssn, &mut reach, &mut overused) };
    let candidates: Vec<(JobId, ReachFacts)> = if runs.is_some() {
        Vec::new()
    } else if promote_pending {
        // Every Pending PodGroup is admitted, pods or not (a controller may wait
        // for this to make them), in creation order as the rows were before.
        for j in ssn.jobs_waiting_admission() {
            ssn.set_pod_group_phase(j, PodGroupPhase::Inqueue, "no enqueue action: admitted by allocate");
        }
        ssn.jobs_with_pending().map(|j| (j, lahar_core::world::reach_facts(ssn.job(j)))).collect()
    } else {
        ssn.admitted_with_facts()
    };
    // The facts of the admitted list are in step with each job (not so for the
    // jobs allocate admits itself, whose facts are made here before their phase moved).
    let facts_in_step = !promote_pending;
    // A job taken in whole has its validity asked at its turn, when what the
    // plugins read of it is as it was here (its pods move only in its own
    // steps): jobs drained for lack of room are never asked.
    let valid_at_turn = fw.job_valid_reads_job();
    let gang_binds = fw.gang_binds();
    for (j, f) in candidates {
        if ssn.explaining_job(j) {
            explain::gated_rows(ssn, j);
        }
        // A job none of whose pending pods fits any node's future-idle resources
        // can only fail its step, which changes nothing: skip it without sorting
        // its pods (an O(1) index query per pod shape). This is what keeps sessions
        // cheap while a backlog waits for a full cluster. Outside exhaustive mode
        // the job's out-of-reach facts say which task to ask about when only one
        // has such pods (one small record per job, not its spec and counts).
        let any_fits = any_fits(ssn, &mut reach, j, &f);
        // A queue overused now stays overused while allocate only adds to it, so
        // its jobs are never stepped (the loop below drops the queue at its first
        // turn): leave them out of the sort. Watched jobs stay, for their rows.
        let over = queue_overused(fw, ssn, &mut overused, f.queue);
        if over && !ssn.explaining_job(j) {
            continue;
        }
        if any_fits && set_aside(fw, ssn, &mut reach, (j, f)) {
            continue;
        }
        if !any_fits {
            for p in ssn.explained_pods(j) {
                if ssn.pod(p).status == PodStatus::Pending && !ssn.pod(p).best_effort {
                    explain::node_rows(fw, ssn, p, None, &[], "");
                    let why = "not tried: no pending pod of the job fits any node's future-idle resources";
                    ssn.explain(p, None, "allocate", Some(false), why, None);
                }
            }
            continue;
        }
        let hypernode = placed_by_hypernode(ssn, j);
        let later = !hypernode && !ssn.is_exhaustive() && !ssn.explaining_job(j) && ssn.gating(j).is_none();
        if !(later && valid_at_turn)
            && let Err(e) = fw.job_valid(ssn, j)
        {
            explain::job_row(ssn, j, "job-valid", false, &e);
            continue;
        }
        let tasks = if hypernode {
            let tasks = pending_tasks(fw, ssn, j, false);
            if tasks.is_empty() {
                continue;
            }
            Tasks::Sheet(Worksheet::new(fw, ssn, j, &tasks))
        } else if later {
            // Without gated pods, the job has pods to step when it has pending
            // pods that are not BestEffort; they are listed at its first turn.
            let job = ssn.job(j);
            if job.count(PodStatus::Pending) == job.pending_best_effort {
                continue;
            }
            // The facts name the only task with such pods, when there is one,
            // and (where gang's votes bind) whether the gang is short.
            Tasks::later(&f, gang_binds)
        } else {
            let tasks = pending_tasks(fw, ssn, j, false);
            if tasks.is_empty() {
                continue;
            }
            Tasks::Plain(tasks.into())
        };
        let entry = intake.entry(f.queue).or_default();
        entry.jobs.push(j);
        entry.facts.push(f);
        entry.tasks.push(Some(tasks));
    }
    // Requests found with no room this action: room only shrinks between steps.
    let mut dead: Vec<u32> = Vec::new();
    for (q, mut taken) in intake {
        let facts = &taken.facts;
        let keys = fw.order_keys(ssn, &taken.jobs, |i| facts_in_step.then(|| &facts[i]));
        let jobs = per_queue.entry(q).or_default();
        match keys {
            // Put in order as turns need them (not for `--explain`, whose rows
            // follow the order of whole lists).
            Some(keys) if !ssn.explaining_any() => {
                let tasks = taken.tasks.into_iter().map(|t| t.expect("each job once")).collect();
                jobs.take_unordered(keys, taken.jobs, tasks, &dead);
            }
            keys => {
                for i in fw.permute(ssn, &taken.jobs, keys.as_ref()) {
                    jobs.push_back(taken.jobs[i], taken.tasks[i].take().expect("each job once"), &dead);
                }
            }
        }
    }
    for (q, runs) in runs.into_iter().flatten() {
        per_queue.entry(q).or_default().take_runs(runs, &dead);
    }
    let mut queues = order_queues(fw, ssn, per_queue.iter().filter(|(_, l)| !l.is_empty()).map(|(&q, _)| q).collect());
    // The requests of `dead` each line has been told of.
    let mut told = 0;
    while !queues.is_empty() {
        let q = queues.remove(0);
        if fw.overused(ssn, q) {
            // Only with --explain: otherwise this would walk the queue's jobs for nothing.
            let waiting: Vec<JobId> = if ssn.explaining_any() {
                per_queue.get(&q).into_iter().flat_map(|l| l.jobs()).filter(|&j| ssn.explaining_job(j)).collect()
            } else {
                Vec::new()
            };
            for j in waiting {
                let why = format!(
                    "not tried: queue {} is overused ({}); its remaining jobs wait",
                    ssn.queue(q).spec.name,
                    fw.overused_by(ssn, q).join(", ")
                );
                explain::job_row(ssn, j, "overused", false, &why);
            }
            continue;
        }
        tell_dead(&mut per_queue, &dead, &mut told);
        let wrong = ssn.planted.wrong_idle_line;
        // A line whose every turn would fail for lack of room leaves with them.
        let Some(jobs) = per_queue.get_mut(&q) else { continue };
        if jobs.is_empty() || jobs.all_idle(wrong) {
            continue;
        }
        // The turn goes to the first valid job: one found invalid would not
        // have been listed had its validity been asked at intake.
        let mut next = None;
        while let Some((j, turn)) = jobs.pop_front(ssn, &dead) {
            if valid_at_turn && matches!(turn, Tasks::Later(..)) && fw.job_valid(ssn, j).is_err() {
                continue;
            }
            next = Some((j, turn));
            break;
        }
        let Some((j, mut turn)) = next else { continue };
        let watched: Vec<PodId> =
            ssn.explained_pods(j).into_iter().filter(|&p| ssn.pod(p).status == PodStatus::Pending).collect();
        // A step the queue's quota leaves short is not run, in both modes (a
        // deviation: Volcano would place pods and discard them).
        let rule_short = reach.quota_short(fw, ssn, j);
        // The audit of the tests runs the step all the same.
        let short = rule_short && !ssn.planted.audit_quota_short;
        if short && !watched.is_empty() {
            quota_rows(fw, ssn, j, &watched);
        }
        // A step certain to be discarded whose only trace is the search start
        // (`lone.rs`): the start is moved and the step not run (the audit of the
        // tests runs it and checks).
        let lone = if short || !watched.is_empty() { None } else { lone::lone_node(fw, ssn, j, &turn) };
        // Where the skip leaves the start (the deliberately wrong skip of the
        // equivalence tests leaves it where it was).
        let lone_start = lone.map(|m| match ssn.planted.wrong_lone_node {
            false => (m.0 as usize + 1) % ssn.node_count(),
            true => st.next_start,
        });
        let audit_lone = ssn.planted.audit_lone_node;
        let skip = lone.is_some() && !audit_lone;
        if let Some(start) = lone_start.filter(|_| skip) {
            st.next_start = start;
        }
        // A step certain to be discarded is run unfiled (`lone.rs`).
        let mut unfiled = false;
        if !short
            && !skip
            && let Tasks::Later(shape, _) = turn
            && !finds_no_room(fw, ssn, j, shape, &mut dead)
        {
            unfiled = shape.is_some_and(|s| lone::certain_discard(fw, ssn, j, s));
            turn = Tasks::Plain(pending_tasks(fw, ssn, j, false).into());
        }
        // The stream's position before the step, for the audit.
        let drawn = audit_lone.then(|| ssn.rng().get_word_pos());
        let stmt = match &mut turn {
            _ if short || skip => None,
            Tasks::Sheet(ws) => hypernode::allocate_for_job(fw, ssn, st, j, ws),
            Tasks::Plain(tasks) => allocate_tasks(fw, ssn, st, j, 0, tasks, None, unfiled),
            // The step could only fail, leaving everything as it was.
            Tasks::Later(..) => None,
        };
        let stepped = stmt.is_some();
        if ssn.planted.audit_quota_short && rule_short && stepped {
            panic!("allocate's quota rule would skip a step that ends ready or pipelined");
        }
        if audit_lone && let Some(start) = lone_start {
            let drew = Some(ssn.rng().get_word_pos()) != drawn;
            if stepped || st.next_start != start || drew {
                panic!(
                    "allocate's lone-node skip is wrong for job {}: kept {stepped}, start {} (the skip's {start}), drew {drew}",
                    ssn.job(j).spec.name,
                    st.next_start
                );
            }
        }
        let mut committed = false;
        if let Some(stmt) = stmt {
            if fw.job_ready(ssn, j) {
                committed = true;
                ssn.commit(stmt);
            } else {
                // Pipelined but not ready: neither committed nor discarded; its
                // placements hold resources until the session closes.
                drop(stmt);
            }
        }
        if !watched.is_empty() && !short {
            step_outcome(ssn, &watched, &turn, stepped, committed);
        }
        // (A skipped step was a failed one in Volcano: its job's turn is over.)
        let stayed_later = !stepped && !skip && matches!(turn, Tasks::Later(..));
        // A ready job with pods left goes back into its queue's list.
        if committed && !turn.is_empty() {
            let jobs = per_queue.get_mut(&q).expect("queue present");
            let at = jobs.position(ssn, &dead, |y| fw.job_order(ssn, y, j).is_le());
            jobs.insert(at, j, turn, &dead);
        }
        let at = insert_sorted(&mut queues, q, |a, b| fw.queue_order(ssn, a, b));
        // A step that stayed `Later` found no room and changed nothing, so the
        // queue's later turns that would find none either are taken here while
        // the queue is back at the front (its order and overuse unchanged):
        // each would fail the same way and put it back there.
        if at == 0 && stayed_later {
            let jobs = per_queue.get_mut(&q).expect("queue present");
            while let Some(&(next, Tasks::Later(shape, _))) = jobs.front(ssn, &dead)
                && finds_no_room(fw, ssn, next, shape, &mut dead)
            {
                jobs.pop_front(ssn, &dead);
            }
        }
    }
    st.reach = reach.into_parts().1;
}

/// `--explain` rows for the `watched` pending pods of job `j`, whose step the
/// queue's quota leaves short ([`Reach::quota_short`]): per task, the pods the
/// quota admits one after another get their nodes' fit and predicates (no step
/// scores them), the first it refuses gets the plugins' numbers with the pods
/// before it counted, and every watched pod the gang's shortfall.
fn quota_rows(fw: &Framework, ssn: &mut Session<'_>, j: JobId, watched: &[PodId]) {
    let job = ssn.job(j);
    let q = job.spec.queue;
    let (name, min) = (ssn.queue(q).spec.name.clone(), job.spec.min_available);
    let base = job.ready_count() + job.waiting_count() + super::super::plugins::pending_best_effort(ssn, j);
    let mut admitted = 0;
    // Per watched pod: `None` for one the quota admits, the refusal for the first it refuses.
    let mut rows: Vec<(PodId, Option<String>)> = Vec::new();
    // The pods in the order the step would take them.
    let order = pending_tasks(fw, ssn, j, false);
    for t in 0..job.spec.tasks.len() {
        let pending: Vec<PodId> = order.iter().copied().filter(|&p| ssn.pod(p).task as usize == t).collect();
        if pending.is_empty() {
            continue;
        }
        let k = fw.allocatable_copies(ssn, q, ssn.shape(job.tasks[t].shape), pending.len() as u32);
        admitted += k;
        for (i, &p) in pending.iter().enumerate().filter(|&(i, p)| i as u32 <= k && watched.contains(p)) {
            let refused = (i as u32 == k).then(|| {
                let before = if k > 0 { format!(" after the {k} before it") } else { String::new() };
                let by = fw.allocatable_rejecters_after(ssn, q, p, k).join(", ");
                format!("queue {name} cannot take the pod{before}: rejected by {by}")
            });
            rows.push((p, refused));
        }
    }
    let why = format!(
        "not tried: the gang needs {min} pods (minAvailable) and has {base} placed, pipelined or pending BestEffort; queue {name}'s quota admits {admitted} more of its pending pods, one after another: the step could only be discarded"
    );
    for (p, refused) in rows {
        match refused {
            None => explain::node_rows(fw, ssn, p, None, &[], ""),
            Some(r) => ssn.explain(p, None, "allocatable", Some(false), r, None),
        }
    }
    for &p in watched {
        ssn.explain(p, None, "gang", Some(false), why.clone(), None);
    }
}

/// Tells every line of the requests found dead since `told` of them were.
fn tell_dead(per_queue: &mut BTreeMap<QueueId, Box<Line>>, dead: &[u32], told: &mut usize) {
    for &s in &dead[*told..] {
        for line in per_queue.values_mut() {
            line.died(s);
        }
    }
    *told = dead.len();
}

/// True if job `j`'s first step of the session (over all nodes, sub-job 0) can
/// only fail and leave the session as it found it: the job is neither ready nor
/// pipelined, and no node's future-idle room holds a pod of any task with
/// pending pods. Each of the step's pods then finds no node (the nominated node
/// too: it must have the room), so the search reads no node, moves no rotating
/// start and draws nothing, and the step is discarded with nothing in it — a
/// backlog whose room earlier jobs of the session took costs one index query
/// per task, not a list of its pods and a walk of them. Asked only outside
/// exhaustive mode and for jobs `--explain` does not watch (their rows).
/// `shape`: the request of the job's only task with such pods, when the job's
/// facts name one (they are its facts at intake, unchanged until its first turn).
/// `dead` holds the requests found with no room earlier in the action: the room
/// only shrinks between steps (a kept step takes some, a discarded one gives
/// back what it took), so they are not asked again.
fn finds_no_room(fw: &Framework, ssn: &Session<'_>, j: JobId, shape: Option<u32>, dead: &mut Vec<u32>) -> bool {
    let mut no_room = |shape: u32| {
        if dead.contains(&shape) {
            return true;
        }
        let req = *ssn.shape(shape);
        // The deliberately wrong check of the equivalence tests asks for twice
        // the request.
        let req = if ssn.planted.wrong_room_skip { req + req } else { req };
        let none = req.is_best_effort() || ssn.first_fit(&req, 0).is_none();
        if none {
            dead.push(shape);
        }
        none
    };
    let room = match shape {
        Some(s) => !no_room(s),
        None => {
            let job = ssn.job(j);
            (0..job.tasks.len()).any(|t| job.task_count(t, PodStatus::Pending) > 0 && !no_room(job.tasks[t].shape))
        }
    };
    !room && !fw.sub_job_ready(ssn, j, 0) && !fw.sub_job_pipelined(ssn, j, 0)
}

/// Allocate's intake for one queue: its jobs, their facts and pods to place.
#[derive(Default)]
struct Intake {
    jobs: Vec<JobId>,
    facts: Vec<ReachFacts>,
    tasks: Vec<Option<Tasks>>,
}

/// `--explain` rows for the watched pods of a job after its step.
fn step_outcome(ssn: &mut Session<'_>, watched: &[PodId], left: &Tasks, stepped: bool, committed: bool) {
    for &p in watched {
        let node = ssn.pod(p).node;
        let (passed, why) = match ssn.pod(p).status {
            PodStatus::Allocated if committed => {
                (true, "allocated: the job is ready and its statement is committed (bound at session end)")
            }
            // Neither committed nor discarded: never bound (Volcano binds on commit).
            PodStatus::Allocated => (
                true,
                "allocated, not bound: the job is pipelined but not ready; the placement holds until the session ends",
            ),
            PodStatus::Pipelined if committed => {
                (true, "pipelined: committed with the ready job; the pod waits nominated to this node")
            }
            PodStatus::Pipelined => {
                (true, "pipelined: the job is pipelined but not ready; the placement holds until the session ends")
            }
            // The job is back in its queue's list: the pod is tried in a later step.
            PodStatus::Pending if left.contains(p) && committed => continue,
            PodStatus::Pending if left.contains(p) && stepped => {
                (false, "not tried: the job is pipelined, not ready; its other pods wait for a later session")
            }
            PodStatus::Pending if left.contains(p) => (false, "not tried: the job's step failed before this pod"),
            _ => continue,
        };
        ssn.explain(p, node, "result", Some(passed), why, None);
    }
}
