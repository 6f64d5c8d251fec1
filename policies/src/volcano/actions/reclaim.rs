//! `reclaim`: across queues, a starving job of a queue that is not overused and may
//! reclaim (`preemptive`) takes back resources from running pods of other,
//! reclaimable queues, which the plugins agree are victims (proportion: queues
//! above their deserved share; gang; conformance). Nodes are tried in predicate
//! order (no scoring); victims are evicted in victim order until the pod fits, then
//! the pod is pipelined. A job's statement is committed only if it ends pipelined.

use super::super::explain;
use super::super::framework::Framework;
use super::carry::Carry;
use super::preempt::{never_preempts, preemptor_tasks};
use super::reach::{Action, Reach, not_set_aside};
use super::victims::{FailMemo, VictimFilter, preempt_pod};
use super::{insert_sorted, queues_of};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodId};
use lahar_core::model::queue::QueueId;
use lahar_core::session::Session;
use lahar_core::world::VictimKey;
use std::collections::BTreeMap;

/// Runs the reclaim action; `carry` keeps the out-of-reach rule's answers on
/// victims across sessions.
pub fn run(fw: &Framework, ssn: &mut Session<'_>, carry: &mut Carry) {
    ssn.set_action("reclaim");
    let mut reach =
        Reach::new(fw, Action::Reclaim).with_pairs(carry.lend_pairs(ssn, true)).with_buffers(carry.lend_buffers(true));
    let mut starving = not_set_aside(fw, ssn, &mut reach);
    carry.keep_reach(reach.into_parts(), true);
    starving.retain(|&j| fw.job_valid(ssn, j).is_ok() && fw.job_starving(ssn, j));
    let mut per_queue: BTreeMap<QueueId, Vec<JobId>> = BTreeMap::new();
    for &j in &starving {
        per_queue.entry(ssn.job(j).spec.queue).or_default().push(j);
    }
    for jobs in per_queue.values_mut() {
        fw.sort_jobs(ssn, jobs);
    }
    let mut queues = queues_of(fw, ssn, &starving);
    let mut memo = FailMemo::for_reclaim(fw, ssn);
    while !queues.is_empty() {
        let q = queues.remove(0);
        if fw.overused(ssn, q) {
            continue;
        }
        let Some(jobs) = per_queue.get_mut(&q).filter(|v| !v.is_empty()) else { continue };
        let j = jobs.remove(0);
        // Every pod the loop below would search for is known to fail: skip the job.
        let skip = memo.job_known_to_fail(ssn, j, |p| !never_preempts(ssn, p) && fw.preemptive(ssn, q, p));
        let mut stmt = ssn.statement();
        // BestEffort pending pods included, as in Volcano (see `preemptor_tasks`).
        let mut tasks = if skip { Vec::new() } else { preemptor_tasks(fw, ssn, j) }.into_iter();
        let mut watched: Vec<(PodId, Option<NodeId>)> = Vec::new();
        while fw.job_starving(ssn, j) {
            let Some(pod) = tasks.next() else { break };
            if never_preempts(ssn, pod) || !fw.preemptive(ssn, q, pod) || memo.known_failure(ssn, pod) {
                continue;
            }
            let victim_queue = move |s: &Session<'_>, vq: QueueId| vq != q && s.queue(vq).spec.reclaimable;
            let filter = move |s: &Session<'_>, v: PodId| victim_queue(s, s.job(s.pod(v).job).spec.queue);
            let candidate = move |s: &Session<'_>, k: VictimKey| victim_queue(s, k.queue);
            let rule = fw.victim_rule(ssn, pod, true, false);
            let victim = |s: &Session<'_>, k: VictimKey| candidate(s, k) && rule.may_choose(fw, s, k);
            let victims = VictimFilter { pod: &filter, candidate: &candidate, victim: &victim, nodes: None };
            let placed = preempt_pod(fw, ssn, &mut stmt, pod, &victims, true, memo.cache(), None);
            memo.record(ssn, pod, placed);
            if placed && ssn.explaining(pod) {
                watched.push((pod, ssn.pod(pod).node));
            }
        }
        let kept = fw.job_pipelined(ssn, j);
        if kept {
            ssn.commit(stmt);
        } else {
            if !stmt.is_empty() {
                memo.clear();
            }
            ssn.discard(stmt);
        }
        explain::evict_outcome(ssn, &watched, kept);
        if per_queue.get(&q).is_some_and(|v| !v.is_empty()) {
            insert_sorted(&mut queues, q, |a, b| fw.queue_order(ssn, a, b));
        }
    }
}
