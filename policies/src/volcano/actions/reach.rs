//! The out-of-reach rule: at the start of allocate, preempt and reclaim, a job
//! whose gang could not end ready or pipelined even if each of its pending pods
//! took any free slot is set aside for the action (a deviation from Volcano, the
//! same in both modes; docs/volcano.md § Deviations from Volcano).
//!
//! The count, for a conf where gang's votes bind ([`Framework::gang_binds`]): the
//! job's pods placed or waiting, plus its pending BestEffort pods, plus, per task,
//! `min(pending pods, Σ nodes' FutureIdle copies of the task's request)` — or
//! nothing for a task whose pod the queue's quota refuses (`allocatable`, or
//! `preemptive` for reclaim). If that stays below `minAvailable`, no step of the
//! action can make the job ready or pipelined: predicates, GPU devices and the
//! step's own earlier pods only lower the count, the queue's allocation only grows
//! during allocate and reclaim, and for preempt and reclaim the job must have no possible
//! victim (no group of Running preemptable pods the action and the plugins could
//! take from) — evictions are the only other source of room. Such a step could only
//! be discarded. Volcano would still run it: allocate's would move the rotating
//! node-search start and draw tie-breaks from the session's stream, and every step
//! takes a queue turn. Setting the job aside at the action's start in both modes
//! keeps the fast and the exhaustive walk deciding alike.

use super::super::explain;
use super::super::framework::Framework;
use super::super::plugins::pending_best_effort;
use lahar_core::model::job::{JobId, PodId, PodStatus};
use lahar_core::model::queue::QueueId;
use lahar_core::session::Session;
use lahar_core::world::{Filed, ReachFacts};
use std::collections::BTreeSet;

/// Which action asks: the victims that could add room differ.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Action {
    /// No victims.
    Allocate,
    /// Other jobs' pods of the same queue (and the job's own, for a job that
    /// has Running pods).
    Preempt,
    /// Pods of other, reclaimable queues.
    Reclaim,
}

/// The rule for one action, evaluated on the state at the action's start. Free
/// slots per request are counted once per action.
pub(crate) struct Reach {
    action: Action,
    gang_binds: bool,
    /// Per request ([`Session::shape`] index): (the cap it was counted up to, the
    /// count). A few requests per action: a short list.
    slots: Vec<(u32, u32, u32)>,
    /// Per (queue, job priority): whether some victim group could be taken from.
    victims: Vec<(QueueId, i32, bool)>,
    /// Per (queue, request index): the queue-quota vote.
    quota: Vec<(QueueId, u32, bool)>,
    /// Preempt and reclaim: the last outcome counted from facts, with its facts
    /// but the task index. Their walk reads one unchanging state, on which the
    /// outcome is a function of these facts (its three inputs are cached by
    /// queue, priority, request and cap, all part of them) — but for preempt's
    /// jobs with Running pods, whose own pods count and which are not kept here.
    /// A backlog's neighbours are often alike: this cuts the walk's cost by 40%.
    /// Allocate evaluates the rule between placements, so it keeps none.
    last: Option<(FactsKey, bool)>,
    /// The action's answers on victims per (queue, job priority), kept across
    /// sessions when the caller lends them ([`Reach::with_pairs`]).
    kept: Option<PairMemo>,
    /// The plugins' group-rule stamp at the action's start, once asked
    /// ([`Framework::victim_group_stamp`]).
    stamp: Option<Vec<u64>>,
    /// The list the stamp is written into when asked.
    spare_stamp: Vec<u64>,
}

/// The lists a [`Reach`] fills during one action, kept by the caller from one
/// session to the next so that the action does not allocate them again (each
/// emptied when lent: [`Reach::with_buffers`]).
#[derive(Default, Debug)]
pub(crate) struct ReachBuffers {
    slots: Vec<(u32, u32, u32)>,
    victims: Vec<(QueueId, i32, bool)>,
    quota: Vec<(QueueId, u32, bool)>,
    stamp: Vec<u64>,
}

/// Preempt's or reclaim's answers to "could some victim group give room to a
/// pod of a job of this (queue, job priority)?", kept across sessions while
/// the session's victim groups ([`Session::victim_groups_version`]) and what
/// the plugins' group rules read besides them
/// ([`Framework::victim_group_stamp`]: for reclaim, the queues proportion
/// finds above their deserved share) stay the same. Lent to the rule only
/// where every plugin is a known one (the Carry's list, flat drf), whose
/// group rule reads nothing more: the answer is then a function of those.
#[derive(Default)]
pub(crate) struct PairMemo {
    /// The victim groups' version the answers were found at.
    version: u64,
    /// The plugins' group-rule stamp they were found at.
    stamp: Vec<u64>,
    answers: Vec<(QueueId, i32, bool)>,
}

/// [`ReachFacts`] without the task index (queue, priority, min, base, running,
/// pending tasks, pending, request).
type FactsKey = (QueueId, i32, u32, u32, u32, u32, u32, u32);

impl Reach {
    /// The rule for `action` under the framework's conf.
    pub fn new(fw: &Framework, action: Action) -> Reach {
        Reach {
            action,
            gang_binds: fw.gang_binds(),
            slots: Vec::new(),
            victims: Vec::new(),
            quota: Vec::new(),
            last: None,
            kept: None,
            stamp: None,
            spare_stamp: Vec::new(),
        }
    }

    /// The rule filling the caller's lists, emptied first.
    pub fn with_buffers(mut self, mut b: ReachBuffers) -> Reach {
        b.slots.clear();
        b.victims.clear();
        b.quota.clear();
        b.stamp.clear();
        (self.slots, self.victims, self.quota, self.spare_stamp) = (b.slots, b.victims, b.quota, b.stamp);
        self
    }

    /// The lists, given back to the caller with the answers kept across
    /// sessions ([`Reach::with_pairs`]).
    pub fn into_parts(self) -> (Option<PairMemo>, ReachBuffers) {
        let stamp = self.stamp.unwrap_or(self.spare_stamp);
        (self.kept, ReachBuffers { slots: self.slots, victims: self.victims, quota: self.quota, stamp })
    }

    /// The rule with the action's answers on victims kept across sessions,
    /// when the caller has them ([`PairMemo`]).
    pub fn with_pairs(mut self, kept: Option<PairMemo>) -> Reach {
        self.kept = kept;
        self
    }

    /// Σ nodes' FutureIdle copies of the request of index `shape`, up to `cap`.
    fn slots(&mut self, ssn: &Session<'_>, shape: u32, cap: u32) -> u32 {
        let at = self.slots.iter().position(|&(s, _, _)| s == shape);
        // Below its cap the count was exact; at its cap it is a lower bound.
        if let Some(&(_, c, v)) = at.map(|i| &self.slots[i])
            && (v < c || cap <= c)
        {
            return v.min(cap);
        }
        let v = ssn.slots_up_to(ssn.shape(shape), cap);
        match at {
            Some(i) => self.slots[i] = (shape, cap, v),
            None => self.slots.push((shape, cap, v)),
        }
        v
    }

    /// True if some node's future-idle room holds a pod of request index `shape`
    /// (allocate's intake test, from the same counts).
    pub fn fits_somewhere(&mut self, ssn: &Session<'_>, shape: u32) -> bool {
        self.slots(ssn, shape, 1) >= 1
    }

    /// True if some victim group could give room to a pod of job `j`.
    fn may_have_victims(&mut self, fw: &Framework, ssn: &Session<'_>, j: JobId) -> bool {
        let job = ssn.job(j);
        let running = job.count(PodStatus::Running);
        self.may_have_victims_of(fw, ssn, j, (job.spec.queue, job.spec.priority), running)
    }

    /// [`Reach::may_have_victims`] for job `j` of (queue, job priority) `group`
    /// with `running` Running pods.
    fn may_have_victims_of(
        &mut self,
        fw: &Framework,
        ssn: &Session<'_>,
        j: JobId,
        group: (QueueId, i32),
        running: u32,
    ) -> bool {
        let (q, prio) = group;
        if self.action == Action::Allocate {
            return false;
        }
        let job = ssn.job(j);
        let pending = || job.pods.iter().copied().find(|&p| ssn.pod(p).status == PodStatus::Pending);
        // The job's own Running pods are preempt's candidates in its intra-job
        // pass, as their group (queue, priority, above minAvailable) allows.
        if self.action == Action::Preempt && running > 0 {
            let own = job.victim_key();
            if pending().is_some_and(|pod| fw.may_choose_victims_in(ssn, pod, false, own)) {
                return true;
            }
        }
        if let Some(&(_, _, v)) = self.victims.iter().find(|&&(qq, pp, _)| qq == q && pp == prio) {
            return v;
        }
        // The plugins' group rules read the preemptor only through its job's
        // priority, so one pending pod speaks for all. A job without one has
        // no search, and its answer (none) is not kept: it says nothing of the
        // pair's other jobs.
        let Some(pod) = pending() else { return false };
        // Kept from an earlier session with the same victim groups and stamp
        // (the deliberately stale memos of the equivalence tests ignore the
        // stamp, or the stamp and the groups).
        // (None is lent in exhaustive sessions: `Carry::lend_pairs`.)
        let action = self.action;
        if let Some(m) = self.kept.as_mut() {
            let spare = &mut self.spare_stamp;
            let stamp = self.stamp.get_or_insert_with(|| {
                let mut stamp = std::mem::take(spare);
                fw.victim_group_stamp(ssn, action == Action::Reclaim, &mut stamp);
                stamp
            });
            let stamp_moved = m.stamp != *stamp && !ssn.planted.stale_pair_stamp;
            if (m.version != ssn.victim_groups_version() || stamp_moved) && !ssn.planted.stale_victim_pairs {
                m.version = ssn.victim_groups_version();
                m.stamp.clone_from(stamp);
                m.answers.clear();
            }
            if let Some(&(_, _, v)) = m.answers.iter().find(|&&(qq, pp, _)| qq == q && pp == prio) {
                self.victims.push((q, prio, v));
                return v;
            }
        }
        // The rule is built for the first group the action could take from.
        let mut rule = None;
        let v = ssn.victim_groups().iter().map(|g| g.0).any(|k| {
            let candidate = match action {
                Action::Preempt => k.queue == q,
                Action::Reclaim => k.queue != q && ssn.queue(k.queue).spec.reclaimable,
                Action::Allocate => false,
            };
            if !candidate {
                return false;
            }
            let (rule, below) = rule.get_or_insert_with(|| {
                let rule = fw.victim_rule(ssn, pod, action == Action::Reclaim, false);
                let below = action == Action::Preempt && rule.below_priority(fw);
                (rule, below)
            });
            (!*below || k.priority < prio) && rule.may_choose(fw, ssn, k)
        });
        self.victims.push((q, prio, v));
        if let Some(m) = self.kept.as_mut() {
            m.answers.push((q, prio, v));
        }
        v
    }

    /// The queue-quota vote for a pod of task `t` (allocate and preempt ask
    /// `allocatable`, reclaim `preemptive`). A pod the quota refuses adds nothing.
    /// The plugins that vote (proportion, capacity) read the pod only through its
    /// request, so one vote per (queue, request) serves the action's intake. `q` is
    /// the job's queue and `shape` the task's request index.
    fn quota_admits(&mut self, fw: &Framework, ssn: &Session<'_>, j: JobId, t: usize, q: QueueId, shape: u32) -> bool {
        let action = self.action;
        if let Some(&(_, _, ok)) = self.quota.iter().find(|&&(qq, s, _)| qq == q && s == shape) {
            return ok;
        }
        let ok = pending_pod(ssn, j, t).is_none_or(|p| match action {
            Action::Allocate | Action::Preempt => fw.allocatable(ssn, q, p),
            Action::Reclaim => fw.preemptive(ssn, q, p),
        });
        self.quota.push((q, shape, ok));
        ok
    }

    /// True if the action sets job `j` aside (see the module's documentation).
    /// Outside exhaustive mode the count is made from the job's
    /// [`lahar_core::world::ReachFacts`] when at most one task has pending pods
    /// that request resources: the same terms, read from one record.
    pub fn out_of_reach(&mut self, fw: &Framework, ssn: &Session<'_>, j: JobId, f: &ReachFacts) -> bool {
        if !self.gang_binds {
            return false;
        }
        if ssn.is_exhaustive() || f.pending_tasks > 1 {
            return self.out_of_reach_walk(fw, ssn, j);
        }
        // The deliberately wrong count of the equivalence tests asks for one pod
        // more than minAvailable (a gang that exactly fits is set aside).
        let min = f.min + ssn.planted.wrong_reach as u32;
        if f.base >= min {
            return false;
        }
        if self.action == Action::Allocate || (self.action == Action::Preempt && f.running > 0) {
            return self.out_of_reach_facts(fw, ssn, j, f, min);
        }
        let (q, p) = if ssn.planted.wrong_memo { (QueueId(0), 0) } else { (f.queue, f.priority) };
        let key = (q, p, f.min, f.base, f.running, f.pending_tasks, f.pending, f.shape);
        if let Some((k, out)) = self.last
            && k == key
        {
            return out;
        }
        let out = self.out_of_reach_facts(fw, ssn, j, f, min);
        self.last = Some((key, out));
        out
    }

    /// [`Reach::out_of_reach`] counted from the facts (at most one task with
    /// pending pods that request resources; `min` the gang's minimum).
    fn out_of_reach_facts(&mut self, fw: &Framework, ssn: &Session<'_>, j: JobId, f: &ReachFacts, min: u32) -> bool {
        let mut best = f.base;
        if f.pending_tasks == 1 && self.quota_admits(fw, ssn, j, f.task as usize, f.queue, f.shape) {
            best += self.slots(ssn, f.shape, f.pending.min(min - best));
        }
        best < min && !self.may_have_victims_of(fw, ssn, j, (f.queue, f.priority), f.running)
    }

    /// True if the queue's quota alone leaves job `j`'s gang short at the start
    /// of its allocate step (where gang's votes bind): its pods placed or
    /// waiting and its pending BestEffort pods, plus, per task with pending pods
    /// that request resources, as many of them as the quota admits one after
    /// another ([`Framework::allocatable_copies`]; each task counted on its own,
    /// an upper bound), stay below minAvailable. Allocate only adds to the
    /// queue's allocation, so each pod of the step beyond that count is refused:
    /// the step could only be discarded. The rule's intake asks the quota once
    /// per action; a step asks it as earlier steps left it.
    pub fn quota_short(&self, fw: &Framework, ssn: &Session<'_>, j: JobId) -> bool {
        if !self.gang_binds || self.action != Action::Allocate {
            return false;
        }
        let job = ssn.job(j);
        // The deliberately wrong count of the equivalence tests asks for one pod
        // more than minAvailable.
        let min = job.spec.min_available + ssn.planted.wrong_quota_count as u32;
        let mut best = job.ready_count() + job.waiting_count() + pending_best_effort(ssn, j);
        for (t, task) in job.spec.tasks.iter().enumerate() {
            if best >= min {
                return false;
            }
            let pending = job.task_count(t, PodStatus::Pending);
            if pending == 0 || task.requests.is_best_effort() {
                continue;
            }
            let shape = ssn.shape(job.tasks[t].shape);
            best += fw.allocatable_copies(ssn, job.spec.queue, shape, pending.min(min - best));
        }
        best < min
    }

    /// [`Reach::out_of_reach`] from the job's spec and counts, task by task.
    fn out_of_reach_walk(&mut self, fw: &Framework, ssn: &Session<'_>, j: JobId) -> bool {
        let job = ssn.job(j);
        let min = job.spec.min_available;
        let mut best = job.ready_count() + job.waiting_count() + pending_best_effort(ssn, j);
        for (t, task) in job.spec.tasks.iter().enumerate() {
            if best >= min {
                return false;
            }
            let pending = job.task_count(t, PodStatus::Pending);
            let (q, shape) = (job.spec.queue, job.tasks[t].shape);
            if pending == 0 || task.requests.is_best_effort() || !self.quota_admits(fw, ssn, j, t, q, shape) {
                continue;
            }
            best += self.slots(ssn, shape, pending.min(min - best));
        }
        best < min && !self.may_have_victims(fw, ssn, j)
    }
}

impl Reach {
    /// True if the rule sets every admitted waiting job aside, decided group by
    /// group of jobs with the same facts ([`Session::admitted_groups`]): one job
    /// speaks for its group where the facts decide (the rule's memo of the last
    /// facts rests on the same ground), and each job of the group is asked where
    /// they do not (several tasks with pending pods; preempt's jobs with Running
    /// pods, whose own pods count). False when some job may be kept, and in
    /// exhaustive and explaining sessions, which walk the list.
    pub fn sets_all_aside(&mut self, fw: &Framework, ssn: &Session<'_>) -> bool {
        if !self.gang_binds || ssn.explaining_any() {
            return false;
        }
        if self.digest_sets_all_aside(fw, ssn) {
            return true;
        }
        let Some(groups) = ssn.admitted_groups() else { return false };
        groups.iter().all(|(f, jobs)| self.asked(f, jobs).all(|j| self.out_of_reach(fw, ssn, j, f)))
    }

    /// True if the groups' [`Digest`](lahar_core::world::Digest) shows that
    /// preempt's or reclaim's rule sets every group aside: no group is kept on
    /// its facts or asked job by job for several tasks, no (queue, priority)
    /// pair has a victim, per request the group fewest pods short of
    /// minAvailable cannot find them in the free slots (slots only fall short
    /// more for groups further short; a group with fewer pending pods than it
    /// is short cannot reach it at all; the queue's quota vote, left out, only
    /// lowers the count), and for preempt each job of a group with Running
    /// pods, asked on its own, has none of its own pods to take either. The
    /// walk over the groups would answer the same from the same cached terms;
    /// false sends the caller to that walk. Not in exhaustive or explaining
    /// sessions, nor with the rule's count planted wrong.
    fn digest_sets_all_aside(&mut self, fw: &Framework, ssn: &Session<'_>) -> bool {
        if !self.gang_binds || self.action == Action::Allocate || ssn.planted.wrong_reach || ssn.explaining_any() {
            return false;
        }
        let (Some(d), Some(groups)) = (ssn.admitted_digest(), ssn.admitted_groups()) else { return false };
        if d.others > 0 {
            return false;
        }
        // The nearest group of each request comes first in the digest's order
        // (the deliberately wrong digest of the equivalence tests asks one pod more).
        let mut last = None;
        for &(shape, short) in d.short.keys() {
            if last == Some(shape) {
                continue;
            }
            last = Some(shape);
            let short = short + ssn.planted.wrong_digest as u32;
            if self.slots(ssn, shape, short) >= short {
                return false;
            }
        }
        d.pairs.keys().all(|&(q, prio)| {
            let from = ReachFacts { queue: q, priority: prio, ..ReachFacts::default() };
            let Some((f, jobs)) = groups.range(from..).next() else { return false };
            let Some(&(_, j)) = jobs.first() else { return false };
            (f.queue, f.priority) == (q, prio) && !self.may_have_victims_of(fw, ssn, j, (q, prio), 0)
        }) && (self.action != Action::Preempt
            || d.running
                .iter()
                .all(|f| groups.get(f).is_some_and(|jobs| jobs.iter().all(|e| self.out_of_reach(fw, ssn, e.1, f)))))
    }

    /// The jobs of a group with facts `f` to ask: each where its own pods count,
    /// else the first, which speaks for all (see [`Reach::sets_all_aside`]).
    pub fn asked<'a>(&self, f: &ReachFacts, jobs: &'a BTreeSet<Filed>) -> impl Iterator<Item = JobId> + use<'a> {
        jobs.iter().take(if self.per_job(f) { jobs.len() } else { 1 }).map(|e| e.1)
    }

    /// True if jobs with facts `f` must be asked one by one.
    fn per_job(&self, f: &ReachFacts) -> bool {
        f.pending_tasks > 1 || (self.action == Action::Preempt && f.running > 0)
    }

    /// The `--explain` reason for a job set aside: the count, term by term, as
    /// [`Reach::out_of_reach`] made it.
    fn why(&mut self, fw: &Framework, ssn: &Session<'_>, j: JobId) -> String {
        let job = ssn.job(j);
        let mut terms = Vec::new();
        for (t, task) in job.spec.tasks.iter().enumerate() {
            let pending = job.task_count(t, PodStatus::Pending);
            if pending == 0 || task.requests.is_best_effort() {
                continue;
            }
            let (q, shape) = (job.spec.queue, job.tasks[t].shape);
            let slots = if self.quota_admits(fw, ssn, j, t, q, shape) {
                format!("free slots {}", self.slots(ssn, shape, pending))
            } else {
                // Allocate and preempt ask `allocatable`, which gives its numbers.
                let by = pending_pod(ssn, j, t)
                    .filter(|_| self.action != Action::Reclaim)
                    .map(|p| fw.allocatable_rejecters(ssn, q, p))
                    .filter(|r| !r.is_empty())
                    .map(|r| format!(": rejected by {}", r.join(", ")))
                    .unwrap_or_default();
                format!("refused by the queue's quota{by}")
            };
            terms.push(format!("task {}: {pending} pending, {slots}", task.name));
        }
        let evict = if self.action == Action::Allocate { "" } else { "; and no pod it could evict" };
        format!(
            "not tried: the gang cannot be ready or pipelined even if every pending pod took any free slot ({} placed + {} pipelined + {} pending BestEffort; {}; minAvailable {}){evict}",
            job.ready_count(),
            job.waiting_count(),
            pending_best_effort(ssn, j),
            terms.join(", "),
            job.spec.min_available
        )
    }
}

/// The first Pending pod of task `t` of job `j`: the one a quota vote asks about.
fn pending_pod(ssn: &Session<'_>, j: JobId, t: usize) -> Option<PodId> {
    ssn.job(j).pods.iter().copied().find(|&p| ssn.pod(p).task as usize == t && ssn.pod(p).status == PodStatus::Pending)
}

/// The out-of-reach rule of [`Reach`], with its `--explain` row.
pub(crate) fn set_aside(fw: &Framework, ssn: &mut Session<'_>, reach: &mut Reach, (j, f): (JobId, ReachFacts)) -> bool {
    if !reach.out_of_reach(fw, ssn, j, &f) {
        return false;
    }
    if ssn.explaining_job(j) {
        let why = reach.why(fw, ssn, j);
        explain::job_row(ssn, j, ssn.action(), false, &why);
    }
    true
}

/// The admitted waiting jobs the rule keeps for the action, in the list's order
/// (with the `--explain` rows of the explained jobs it sets aside, in the same
/// order): one read of the World's list, not a copy of it. Outside exhaustive
/// and explaining sessions the rule is asked group by group of jobs with the
/// same facts, one job speaking for its group where the facts decide (as
/// [`Reach::sets_all_aside`] asks), and the jobs kept are put back in the
/// list's order.
pub(crate) fn not_set_aside(fw: &Framework, ssn: &mut Session<'_>, reach: &mut Reach) -> Vec<JobId> {
    if reach.gang_binds && !ssn.is_exhaustive() && !ssn.explaining_any() {
        ssn.sync_groups();
        let ssn: &Session<'_> = ssn;
        if reach.digest_sets_all_aside(fw, ssn) {
            return Vec::new();
        }
        if let Some(groups) = ssn.admitted_groups() {
            let mut kept = Vec::new();
            for (f, jobs) in groups {
                if reach.per_job(f) {
                    kept.extend(jobs.iter().map(|e| e.1).filter(|&j| !reach.out_of_reach(fw, ssn, j, f)));
                } else if reach.asked(f, jobs).all(|j| !reach.out_of_reach(fw, ssn, j, f)) {
                    kept.extend(jobs.iter().map(|e| e.1));
                }
            }
            kept.sort_unstable();
            return kept;
        }
    }
    not_set_aside_of(fw, ssn, reach, |_| None, |_, _, _| true).unwrap_or_default()
}

/// [`not_set_aside`] of the jobs `useful` keeps: a job it drops is not asked
/// the rule (`useful` must keep every job `--explain` watches, whose rows the
/// rule writes). `useful` is given each job's revision when the World's list
/// carries it ([`Session::admitted_revisions`]; not in exhaustive mode).
/// `among`: the only admitted jobs `useful` may keep, ascending, when the
/// caller knows them (the others are not looked up); `None`: every job. Asked
/// only when there is a walk.
/// `None` when the rule sets every job aside without a walk (nothing asked).
pub(crate) fn not_set_aside_of(
    fw: &Framework,
    ssn: &mut Session<'_>,
    reach: &mut Reach,
    among: impl FnOnce(&Session<'_>) -> Option<Vec<JobId>>,
    mut useful: impl FnMut(&Session<'_>, JobId, Option<u64>) -> bool,
) -> Option<Vec<JobId>> {
    // The common case of a backlog that waits for room: nothing to walk.
    ssn.sync_groups();
    if reach.sets_all_aside(fw, ssn) {
        return None;
    }
    let mut kept = Vec::new();
    let mut explained = Vec::new();
    let mut ask = |ssn: &Session<'_>, j: JobId, f: &ReachFacts, rev: Option<u64>| {
        if !useful(ssn, j, rev) {
            return;
        }
        if !reach.out_of_reach(fw, ssn, j, f) {
            kept.push(j);
        } else if ssn.explaining_job(j) {
            explained.push(j);
        }
    };
    match among(ssn) {
        Some(jobs) => {
            for j in jobs {
                if let Some((f, rev)) = ssn.admitted_entry(j) {
                    ask(ssn, j, &f, Some(rev));
                }
            }
        }
        None => {
            let revs = ssn.admitted_revisions();
            for (i, (j, f)) in ssn.admitted_facts().iter().enumerate() {
                ask(ssn, *j, f, revs.map(|r| r[i]));
            }
        }
    }
    for j in explained {
        let why = reach.why(fw, ssn, j);
        explain::job_row(ssn, j, ssn.action(), false, &why);
    }
    Some(kept)
}
