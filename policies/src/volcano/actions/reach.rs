//! The out-of-reach rule: at the start of allocate, preempt and reclaim, a job
//! whose gang could not end ready or pipelined even if each of its pending pods
//! took any free slot is set aside for the action (a deviation from Volcano, the
//! same in both modes; docs/volcano.md § Scale).
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

use super::super::framework::Framework;
use super::super::plugins::pending_best_effort;
use lahar_core::job::{JobId, PodStatus};
use lahar_core::queue::QueueId;
use lahar_core::resource::Resources;
use lahar_core::session::Session;
use rustc_hash::FxHashMap;

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
    below: bool,
    /// Per request: (the cap it was counted up to, the count).
    slots: FxHashMap<Resources, (u32, u32)>,
    /// Per (queue, job priority): whether some victim group could be taken from.
    victims: FxHashMap<(QueueId, i32), bool>,
}

impl Reach {
    /// The rule for `action` under the framework's conf.
    pub fn new(fw: &Framework, action: Action) -> Reach {
        Reach {
            action,
            gang_binds: fw.gang_binds(),
            below: fw.victims_below_priority(),
            slots: FxHashMap::default(),
            victims: FxHashMap::default(),
        }
    }

    /// Σ nodes' FutureIdle copies of `req`, up to `cap`.
    fn slots(&mut self, ssn: &Session<'_>, req: &Resources, cap: u32) -> u32 {
        if let Some(&(c, v)) = self.slots.get(req) {
            // Below its cap the count was exact; at its cap it is a lower bound.
            if v < c || cap <= c {
                return v.min(cap);
            }
        }
        let v = ssn.slots_up_to(req, cap);
        self.slots.insert(*req, (cap, v));
        v
    }

    /// True if some victim group could give room to a pod of job `j`.
    fn may_have_victims(&mut self, fw: &Framework, ssn: &Session<'_>, j: JobId) -> bool {
        let job = ssn.job(j);
        let (q, prio) = (job.spec.queue, job.spec.priority);
        if self.action == Action::Allocate {
            return false;
        }
        // The job's own Running pods are preempt's victims in its intra-job pass.
        if self.action == Action::Preempt && job.count(PodStatus::Running) > 0 {
            return true;
        }
        let Some(&pod) = job.pods.iter().find(|&&p| ssn.pod(p).status == PodStatus::Pending) else { return false };
        let (action, below) = (self.action, self.below);
        *self.victims.entry((q, prio)).or_insert_with(|| {
            // The plugins' group rules read the preemptor only through its job's
            // priority, so one pending pod speaks for all.
            ssn.victim_groups().iter().map(|g| g.0).any(|k| match action {
                Action::Preempt => k.0 == q && (!below || k.1 < prio) && fw.may_choose_victims_in(ssn, pod, false, k),
                Action::Reclaim => {
                    k.0 != q && ssn.queue(k.0).spec.reclaimable && fw.may_choose_victims_in(ssn, pod, true, k)
                }
                Action::Allocate => false,
            })
        })
    }

    /// The queue-quota vote for a pod of task `t` (allocate and preempt ask
    /// `allocatable`, reclaim `preemptive`). A pod the quota refuses adds nothing.
    fn quota_admits(&self, fw: &Framework, ssn: &Session<'_>, j: JobId, t: usize) -> bool {
        let job = ssn.job(j);
        let q = job.spec.queue;
        let pod = job
            .pods
            .iter()
            .copied()
            .find(|&p| ssn.pod(p).task as usize == t && ssn.pod(p).status == PodStatus::Pending);
        pod.is_none_or(|p| match self.action {
            Action::Allocate | Action::Preempt => fw.allocatable(ssn, q, p),
            Action::Reclaim => fw.preemptive(ssn, q, p),
        })
    }

    /// True if the action sets job `j` aside (see the module's documentation).
    pub fn out_of_reach(&mut self, fw: &Framework, ssn: &Session<'_>, j: JobId) -> bool {
        if !self.gang_binds {
            return false;
        }
        let job = ssn.job(j);
        let min = job.spec.min_available;
        let mut best = job.ready_count() + job.waiting_count() + pending_best_effort(ssn, j);
        for (t, task) in job.spec.tasks.iter().enumerate() {
            if best >= min {
                return false;
            }
            let pending = job.task_count(t, PodStatus::Pending);
            if pending == 0 || task.requests.is_best_effort() || !self.quota_admits(fw, ssn, j, t) {
                continue;
            }
            best += self.slots(ssn, &task.requests, pending.min(min - best));
        }
        best < min && !self.may_have_victims(fw, ssn, j)
    }
}
