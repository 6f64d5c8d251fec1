//! Containers restarting in place: under `restartPolicy: OnFailure` the
//! kubelet restarts a container that failed, under `Always` one that exited
//! whatever its code (a VolcanoJob task's run time, read as its container
//! succeeding), after a back-off that doubles
//! at each exit (CrashLoopBackOff: 10 s, 20 s, 40 s… at most 300 s, back to
//! 10 s after an exit more than 600 s after the one before — `flowcontrol.Backoff`
//! as kuberuntime's `doBackOff` uses it), while its pod stays Running on its
//! node with a growing restart count. Volcano's job controller hears each of
//! the pod's updates (`updatePod`, phase Running) and raises `TaskFailed` once
//! the restarts of the task's Running and Pending pods reach the task's
//! `maxRetry` (`jobCache.TaskFailed`).

use super::controller::Lifecycle;
use super::{EndReason, Engine, Event};

use crate::model::ids::{JobId, PodId};
use crate::model::job::{JobEnd, JobPhase, PodStatus, PolicyEvent};
use crate::util::time::SimDuration;

/// The kubelet's first restart back-off.
const FIRST_BACKOFF: SimDuration = SimDuration::from_secs(10);
/// The kubelet's longest restart back-off (`MaxContainerBackOff`).
const MAX_BACKOFF: SimDuration = SimDuration::from_secs(300);

impl Engine {
    /// Pod `p`'s container exited and is restarted in place after the
    /// kubelet's back-off: the pod stays Running and holds its node, its job
    /// goes on only if its other pods reach its minimum and, when the container
    /// failed (exit code not 0), loses the work since its last checkpoint.
    pub(super) fn crashed_in_place(&mut self, p: PodId) {
        let now = self.now;
        let pod = &self.world.pods[p];
        let j = pod.job;
        let failed = self.world.jobs[j].spec.tasks[pod.task as usize].exits.is_none_or(|e| e.code != 0);
        // A container that succeeds at the instant its job's work ends leaves
        // the job done: it completes rather than wait for the restart.
        let job = &self.world.jobs[j];
        if !failed && job.is_progressing() && !job.spec.duration.is_unbounded() {
            self.credit(j);
            let job = &self.world.jobs[j];
            if job.progress.done >= job.spec.duration.micros() {
                return self.on(Lifecycle::WorkDone(j));
            }
        }
        let pod = &mut self.world.pods[p];
        // `flowcontrol.Backoff.Next`: a first exit, or one more than twice the
        // longest back-off after the last, starts again from the first.
        let fresh = pod.restarts == 0 || now.since(pod.last_crash) > SimDuration(MAX_BACKOFF.micros() * 2);
        pod.backoff = if fresh { 0 } else { (pod.backoff + 1).min(5) };
        let delay = SimDuration(FIRST_BACKOFF.micros() << pod.backoff).min(MAX_BACKOFF);
        pod.down = true;
        pod.last_crash = now;
        self.events.push(now.plus(delay), Event::ContainerRestart(p, now));
        self.stop_progress(j, failed);
        self.phase_due.push(j);
        self.refresh_job_keeping_phase(j);
        self.heard_in_place(p);
    }

    /// The kubelet restarted pod `p`'s container in place: it runs again from
    /// its start (its run time and exit count from now), one more restart.
    pub(super) fn container_restarted(&mut self, p: PodId) {
        let pod = &mut self.world.pods[p];
        pod.down = false;
        pod.restarts += 1;
        pod.up_since = self.now;
        let j = pod.job;
        self.time_task_pod(p);
        self.phase_due.push(j);
        self.refresh_job_keeping_phase(j);
        self.heard_in_place(p);
    }

    /// Job `j`'s Running pods whose container waits for its restart in place.
    pub(super) fn containers_down(&self, j: JobId) -> u32 {
        let job = &self.world.jobs[j];
        if !job.spec.tasks.iter().any(|t| t.exits.is_some_and(|e| e.in_place.is_some())) {
            return 0;
        }
        let down = |q: &&PodId| {
            let pod = &self.world.pods[**q];
            pod.down && pod.status == PodStatus::Running
        };
        job.pods.iter().filter(down).count() as u32
    }

    /// The job controller hears an update of pod `p`, Running, whose container
    /// exited or restarted. Volcano's (`updatePod`): `TaskFailed` once its
    /// task's Running and Pending pods have restarted their containers the
    /// task's `maxRetry` times in all (its policy acts, or the job is synced).
    /// Kubernetes' for a batch/v1 Job ([`Engine::past_backoff_on_failure`]).
    /// A job that ended, or whose PodGroup is deleted, hears nothing.
    fn heard_in_place(&mut self, p: PodId) {
        let pod = &self.world.pods[p];
        let (j, t) = (pod.job, pod.task as usize);
        let job = &self.world.jobs[j];
        if let Some(rules) = job.spec.batch {
            return self.past_backoff_on_failure(j, rules.backoff_limit);
        }
        let Some(limit) = job.spec.tasks[t].exits.and_then(|e| e.in_place).and_then(|i| i.task_max_retry) else {
            return;
        };
        if job.phase.is_terminal() || job.pg_deleted {
            return;
        }
        let of_task = |q: &&PodId| {
            let q = &self.world.pods[**q];
            q.task as usize == t && matches!(q.status, PodStatus::Running | PodStatus::Pending)
        };
        let retried: u64 = job.pods.iter().filter(of_task).map(|&q| u64::from(self.world.pods[q].restarts)).sum();
        if retried >= u64::from(limit) {
            self.raise(j, Some(p), Some(t), PolicyEvent::TaskFailed);
        }
    }

    /// Kubernetes' Job controller syncing batch/v1 Job `j` under `restartPolicy:
    /// OnFailure` (`pastBackoffLimitOnFailure`, pkg/controller/job): once its
    /// Running and Pending pods' containers have restarted `backoff_limit` times
    /// in all (once, for a limit of 0), the Job fails (`BackoffLimitExceeded`),
    /// its active pods deleted, as when too many of its pods failed.
    fn past_backoff_on_failure(&mut self, j: JobId, backoff_limit: u32) {
        let job = &self.world.jobs[j];
        if job.phase.is_terminal() {
            return;
        }
        let live = |q: &&PodId| matches!(self.world.pods[**q].status, PodStatus::Running | PodStatus::Pending);
        let restarts: u64 = job.pods.iter().filter(live).map(|&q| u64::from(self.world.pods[q].restarts)).sum();
        if restarts >= u64::from(backoff_limit.max(1)) {
            let restarts = u32::try_from(restarts).unwrap_or(u32::MAX);
            self.end_job(j, JobPhase::Failed, EndReason::Killed, JobEnd::BackoffOnFailure { restarts });
        }
    }
}
