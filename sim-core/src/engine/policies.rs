//! A job's lifecycle policies: which one an event finds, what its action does,
//! and actions that wait for a `timeout` (Volcano's delayed actions:
//! `applyPolicies`, `AddDelayActionForJob`, `CleanPodDelayActionsIfNeed`,
//! `cleanupDelayActions` in pkg/controllers/job).

use super::{EndReason, Engine, Event};

use crate::model::job::{JobEnd, JobPhase, PodStatus, Policy, PolicyActed, PolicyAction, PolicyEvent};

use crate::model::ids::{JobId, PodId};
use crate::util::time::SimTime;

/// An action waiting for its policy's timeout.
#[derive(Clone, Copy, Debug)]
pub(super) struct Delayed {
    job: JobId,
    /// The pod the event was about, with its task and replica (its name).
    pod: Option<(PodId, u16, u32)>,
    task: Option<usize>,
    event: PolicyEvent,
    /// The exit code the event carried.
    exit: Option<i32>,
    action: PolicyAction,
    /// When the event came.
    since: SimTime,
    /// When it acts: a slot freed by a cancellation may be taken again before
    /// its old `PolicyDue` event comes, which then finds another due time.
    due: SimTime,
}

impl Delayed {
    /// The job whose policy it is.
    pub(super) fn job(&self) -> JobId {
        self.job
    }
}

/// What an action acts on, for cancelling the delayed actions of its kind
/// (`GetActionType`): the whole job, one task, one pod (by name) or one partition.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    Job,
    Task(Option<usize>),
    Pod(Option<(u16, u32)>),
    Partition(Option<u32>),
}

impl Engine {
    /// The policy job `j` applies to `ev` about a pod of task `task`: the task's
    /// policies, then the job's, the first that names the event (or `*`); a
    /// PodPending event finds only policies with a timeout (`applyPolicies`,
    /// `shouldConfigureTimeout`).
    fn policy_for(&self, j: JobId, task: Option<usize>, ev: PolicyEvent, exit: Option<i32>) -> Option<Policy> {
        let spec = &self.world.jobs[j].spec;
        let of_task = task.map(|t| spec.tasks[t].policies.as_slice()).unwrap_or_default();
        // Each policy in turn: its events, then its exit code (a failed pod's).
        let fires = |p: &&Policy| {
            (p.event.matches(ev) && !(ev == PolicyEvent::PodPending && p.timeout.is_none()))
                || exit.is_some_and(|c| p.event == PolicyEvent::ExitCode(c))
        };
        of_task.iter().chain(spec.policies.iter()).find(fires).copied()
    }

    /// The controller hears `ev` about job `j` (and its pod `pod` of task `task`):
    /// the policy it finds acts now, or after its timeout; without one the job is
    /// synced (an evicted or failed pod is made again once gone).
    pub(super) fn raise(&mut self, j: JobId, pod: Option<PodId>, task: Option<usize>, ev: PolicyEvent) {
        self.raise_with_exit(j, pod, task, ev, None)
    }

    /// [`Engine::raise`] for a pod that failed with exit code `exit` (which
    /// `exitCode` policies match).
    pub(super) fn raise_with_exit(
        &mut self,
        j: JobId,
        pod: Option<PodId>,
        task: Option<usize>,
        ev: PolicyEvent,
        exit: Option<i32>,
    ) {
        // A batch/v1 Job counts each pod that ended without succeeding against
        // its `backoffLimit` (its max_retry is one more): past it, the Job fails.
        if self.world.jobs[j].spec.batch.is_some()
            && matches!(ev, PolicyEvent::PodFailed | PolicyEvent::PodEvicted)
            && !self.count_retry(j)
        {
            return;
        }
        self.raise_about(j, pod, task, ev, exit, false)
    }

    /// The controller hears the kubelet's report of pod `p`'s terminal phase
    /// while its deletion is under way ([`Engine::report_terminal_phase`]):
    /// `ev` (PodFailed with exit code `exit`, or TaskCompleted). The pod is not
    /// missing yet: the sync of a request without a policy (or whose policy
    /// waits) finds it terminating and changes nothing; the deletion, heard
    /// next, syncs the job.
    pub(super) fn raise_terminal(&mut self, j: JobId, p: PodId, ev: PolicyEvent, exit: Option<i32>) {
        let task = Some(self.world.pods[p].task as usize);
        self.raise_about(j, Some(p), task, ev, exit, true)
    }

    /// [`Engine::raise_with_exit`] past a batch/v1 Job's count; `going`: the
    /// pod's deletion is under way and it is not made again by this request.
    fn raise_about(
        &mut self,
        j: JobId,
        pod: Option<PodId>,
        task: Option<usize>,
        ev: PolicyEvent,
        exit: Option<i32>,
        going: bool,
    ) {
        let policy = self.policy_for(j, task, ev, exit);
        // Most requests find no policy: the pod's name is looked up for one.
        let named = |e: &Self| pod.map(|p| e.pod_name(p));
        let Some(Policy { timeout: Some(after), action, .. }) = policy else {
            if going && policy.is_none() {
                return;
            }
            if let Some(p) = policy {
                self.acted(j, named(self), ev, p.action, exit);
            }
            return self.apply_policy(j, pod, task, policy.map(|p| p.action));
        };
        let named = named(self);
        let d =
            Delayed { job: j, pod: named, task, event: ev, exit, action, since: self.now, due: self.now.plus(after) };
        // One delayed action per pod name and action (a second is not added).
        let key = |x: &Delayed| (x.job, x.pod.map(|(_, t, i)| (t, i)), x.action);
        if self.delayed.iter().flatten().any(|x| key(x) == key(&d)) {
            return;
        }
        // Until it acts the job is synced as without a policy: an evicted or failed
        // pod is made again once gone (a departure: Volcano leaves it to the job's
        // next sync).
        if ev != PolicyEvent::PodPending && !going {
            self.apply_policy(j, pod, task, None);
        }
        let slot = match self.delayed.iter().position(Option::is_none) {
            Some(i) => {
                self.delayed[i] = Some(d);
                i
            }
            None => {
                self.delayed.push(Some(d));
                self.delayed.len() - 1
            }
        };
        self.events.push(d.due, Event::PolicyDue(slot as u32));
    }

    /// A pod was created: the controller hears PodPending (`addPod`).
    pub(super) fn pod_made(&mut self, p: PodId) {
        let pod = &self.world.pods[p];
        let (j, task) = (pod.job, pod.task as usize);
        let spec = &self.world.jobs[j].spec;
        // Most jobs have no policy at all.
        if spec.policies.is_empty() && spec.tasks[task].policies.is_empty() {
            return;
        }
        if self.policy_for(j, Some(task), PolicyEvent::PodPending, None).is_some() {
            self.raise(j, Some(p), Some(task), PolicyEvent::PodPending);
        }
    }

    /// A delayed action's timeout has come: it acts unless it was cancelled — its
    /// pod left Pending (PodPending), a pod of its name runs again since the event
    /// (PodEvicted, PodFailed), or the job ended or has no PodGroup (an
    /// operator's group restart, a suspension). Volcano runs it on the job's
    /// state as it finds it (`st.Execute`, no version check): a job restarting
    /// whole is killed whole again, or its target killed.
    pub(super) fn policy_due(&mut self, slot: u32) {
        let now = self.now;
        let Some(d) = self.delayed.get_mut(slot as usize).and_then(|x| x.take_if(|d| d.due == now)) else { return };
        let Some(job) = self.world.jobs.get(d.job) else { return };
        if job.phase.is_terminal() || job.pg_deleted {
            return;
        }
        let cancelled = match (d.event, d.pod) {
            (PolicyEvent::PodPending, Some((p, _, _))) => {
                !job.pods.contains(&p) || self.world.pods[p].status != PodStatus::Pending
            }
            (PolicyEvent::PodEvicted | PolicyEvent::PodFailed, Some((_, t, i))) => job.pods.iter().any(|&q| {
                let q = &self.world.pods[q];
                q.task == t && q.index == i && q.status == PodStatus::Running && q.started >= d.since
            }),
            _ => false,
        };
        if cancelled {
            return;
        }
        // The pod it names may be gone: a task or job action still acts.
        let pod = d.pod.map(|(p, _, _)| p).filter(|p| job.pods.contains(p));
        self.acted(d.job, d.pod, d.event, d.action, d.exit);
        self.apply_policy(d.job, pod, d.task, Some(d.action));
    }

    /// Keeps what a policy that acts now on job `j` was about, for `--explain`.
    fn acted(
        &mut self,
        j: JobId,
        pod: Option<(PodId, u16, u32)>,
        event: PolicyEvent,
        action: PolicyAction,
        exit: Option<i32>,
    ) {
        let pod = pod.map(|(_, t, i)| (t, i));
        let acted = PolicyActed { at: self.now, event, action, pod, exit };
        self.world.jobs[j].last_policy = Some(Box::new(acted));
    }

    /// After an action acted on job `j`, the delayed actions of its kind on the
    /// same scope are dropped (`cleanupDelayActions`).
    fn cancel_delayed(&mut self, j: JobId, scope: Scope) {
        if self.delayed.is_empty() {
            return;
        }
        let job = &self.world.jobs[j];
        for slot in self.delayed.iter_mut() {
            if slot.is_some_and(|d| d.job == j && Scope::of(d.action, d.pod, d.task, job) == scope) {
                *slot = None;
            }
        }
    }

    /// Applies a lifecycle policy's action (`None`: no policy matched) to job
    /// `j`, whose pod `pod` of task `task` the event was about (neither for an
    /// event of the whole job: RestartTask, RestartPod and RestartPartition then
    /// kill nothing, as Volcano's `killTarget` with an empty target, but the first
    /// two count a retry).
    pub(super) fn apply_policy(
        &mut self,
        j: JobId,
        pod: Option<PodId>,
        task: Option<usize>,
        action: Option<PolicyAction>,
    ) {
        if let Some(a) = action {
            let name = pod.map(|p| self.pod_name(p));
            let scope = Scope::of(a, name, task, &self.world.jobs[j]);
            self.cancel_delayed(j, scope);
        }
        // Volcano's Restarting state runs what a current request asks
        // (state/restarting.go): RestartTask, RestartPod and RestartPartition
        // kill their target, any other action the whole job (`KillJob`: an
        // AbortJob, TerminateJob or CompleteJob does not end it), neither
        // counting a retry; no policy syncs the job (an evicted or failed pod is
        // made again). Every request re-checks whether the restart is over.
        let restarting = self.world.jobs[j].phase == JobPhase::Restarting;
        if restarting {
            self.events.push(self.now, Event::JobSync(j));
        }
        let action = match action {
            Some(
                PolicyAction::ResumeJob
                | PolicyAction::AbortJob
                | PolicyAction::TerminateJob
                | PolicyAction::CompleteJob,
            ) if restarting => Some(PolicyAction::RestartJob),
            a => a,
        };
        match action {
            // No policy (or ResumeJob, which syncs a job that is not Aborted): the
            // pod is recreated once it is gone (Volcano's SyncJob creates the
            // replicas that are missing), unless no controller owns it: then it is
            // gone for good and its job ends.
            None | Some(PolicyAction::ResumeJob) => match pod {
                // A pod whose container failed stays Failed: a VolcanoJob's syncJob
                // makes only missing replicas (a batch/v1 Job's controller makes a
                // new pod for it); the job ends once every replica has.
                Some(p) if self.world.pods[p].exited && self.world.jobs[j].spec.batch.is_none() => {
                    self.events.push(self.now, Event::JobSync(j));
                }
                Some(p) if self.world.jobs[j].spec.orphan => {
                    let failed = self.world.pods[p].status == PodStatus::Failed;
                    let job = &self.world.jobs[j];
                    let alive = |q: &PodId| {
                        *q != p
                            && matches!(
                                self.world.pods[*q].status,
                                PodStatus::Pending | PodStatus::Pipelined | PodStatus::Running | PodStatus::Releasing
                            )
                    };
                    if !job.pods.iter().any(alive) {
                        let phase = if failed { JobPhase::Failed } else { JobPhase::Terminated };
                        self.end_job(j, phase, EndReason::Killed, JobEnd::PodsGone);
                    }
                }
                Some(p) => self.replace_when_gone(p),
                None => {}
            },
            // Volcano's KillTarget: the pod, the task's or the partition's pods are
            // killed and recreated, the job counts a retry and restarts.
            Some(a @ (PolicyAction::RestartPod | PolicyAction::RestartTask | PolicyAction::RestartPartition)) => {
                let targets = self.targets(j, a, pod, task);
                // A partition target with no partition kills nothing and changes
                // nothing (`killPods` returns before the status update).
                if a == PolicyAction::RestartPartition && targets.is_none() {
                    return;
                }
                if !restarting && !self.count_retry(j) {
                    return;
                }
                self.stop_progress(j, true);
                self.set_phase(j, JobPhase::Restarting);
                for q in targets.unwrap_or_default() {
                    self.kill_pod(q, EndReason::Restarted);
                    self.replace_when_gone(q);
                }
                // The Restarting state's next sync may find it Pending again: after
                // the instant's other pod updates (a job already restarting has
                // that sync asked above).
                if !restarting {
                    self.events.push(self.now, Event::JobSync(j));
                }
            }
            Some(PolicyAction::RestartJob) => {
                if !restarting && !self.count_retry(j) {
                    return;
                }
                self.stop_progress(j, true);
                self.set_phase(j, JobPhase::Restarting);
                self.kill_whole(j, false, restarting);
            }
            Some(PolicyAction::AbortJob) => self.abort(j, JobEnd::Policy),
            Some(PolicyAction::TerminateJob) => self.end_job_when_gone(j, JobPhase::Terminated, JobEnd::Policy),
            Some(PolicyAction::CompleteJob) => self.end_job_when_gone(j, JobPhase::Completed, JobEnd::Policy),
        }
    }

    /// The pods a targeted restart kills; `None` for a partition restart of a
    /// pod with no partition.
    fn targets(&self, j: JobId, a: PolicyAction, pod: Option<PodId>, task: Option<usize>) -> Option<Vec<PodId>> {
        let job = &self.world.jobs[j];
        let of = |keep: &dyn Fn(&crate::world::Pod) -> bool| -> Vec<PodId> {
            job.pods.iter().copied().filter(|&q| keep(&self.world.pods[q])).collect()
        };
        Some(match (a, pod, task) {
            (PolicyAction::RestartPod, Some(p), _) => vec![p],
            (PolicyAction::RestartPartition, p, _) => {
                job.spec.sub_groups.as_ref()?;
                let p = &self.world.pods[p?];
                let sub = job.sub_job_of(p.task as usize, p.index);
                of(&|q| job.sub_job_of(q.task as usize, q.index) == sub)
            }
            (PolicyAction::RestartTask, _, Some(t)) => of(&|q| q.task as usize == t),
            _ => Vec::new(),
        })
    }

    fn pod_name(&self, p: PodId) -> (PodId, u16, u32) {
        let q = &self.world.pods[p];
        (p, q.task, q.index)
    }

    /// Counts a retry of job `j`; a job whose retries reach `maxRetry` fails
    /// (Volcano's Restarting state checks it first): false then.
    pub(super) fn count_retry(&mut self, j: JobId) -> bool {
        let job = &mut self.world.jobs[j];
        job.retries += 1;
        if job.retries >= job.spec.max_retry {
            self.end_job(j, JobPhase::Failed, EndReason::Killed, JobEnd::MaxRetry);
            return false;
        }
        true
    }
}

impl Scope {
    /// The scope action `a` works on, for a request about the pod `pod` (its id,
    /// task and replica) of task `task` of `job`.
    fn of(a: PolicyAction, pod: Option<(PodId, u16, u32)>, task: Option<usize>, job: &crate::world::Job) -> Scope {
        match a {
            PolicyAction::RestartTask => Scope::Task(task),
            PolicyAction::RestartPod => Scope::Pod(pod.map(|(_, t, i)| (t, i))),
            PolicyAction::RestartPartition => Scope::Partition(pod.map(|(_, t, i)| job.sub_job_of(t as usize, i))),
            _ => Scope::Job,
        }
    }
}
