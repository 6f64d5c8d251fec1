//! The job controller: what Volcano's job controller does over a job's life
//! outside sessions — creating its pods, applying its lifecycle policies (with
//! `policies.rs`) when a pod ends, fails or is evicted, its retries, restarts and
//! phases. Three other places change a job outside a session: `World::activate`
//! makes a submitted job Pending, `running.rs` marks it Running when its gang
//! runs (the phase Volcano's controller derives from its pods' counts), and
//! `operate.rs` carries out what operators do to a live cluster (delete pods;
//! abort, resume and scale jobs; cordon and taint nodes).
//!
//! It hears about the world through [`Lifecycle`] inputs, one per kind of
//! change, and applies the job's lifecycle policies the way Volcano's job
//! controller does: the task's policies, then the job's, first match wins.

use super::{EndReason, Engine, Event};

use crate::model::job::{Dependency, JobEnd, JobPhase, PodGroupPhase, PodStatus, PolicyEvent, Until};

use crate::model::ids::{JobId, PodId};
use crate::session::{Decision, DecisionKind, Evictor};
use crate::util::time::SimDuration;
use std::borrow::Cow;

/// What the job controller hears about.
#[derive(Clone, Debug)]
pub(super) enum Lifecycle {
    /// A job's submit time came, or its controller (CronJob, JobFlow) created it.
    JobArrived(JobId),
    /// A recurring object's newer run replaced this one (concurrency Replace).
    JobReplaced(JobId),
    /// A job's finish event came: its work is done.
    WorkDone(JobId),
    /// A session's bind was committed: the pod runs on its node.
    PodBound(PodId),
    /// A session's eviction was committed in session `session`, for job
    /// `for_job` when the action named one.
    PodEvicted { pod: PodId, by: Evictor, session: u64, for_job: Option<JobId> },
    /// A pod's grace period ended: it is gone from its node.
    PodReleased(PodId),
    /// A pod of a task with its own run time has run it.
    PodSucceeded(PodId),
    /// A drain's deadline came with the pod still Running: it is evicted
    /// (graceful, `PodEvicted`), not counted as a preemption.
    PodDrained(PodId),
    /// An operator deleted a Running pod: as a drain's eviction, with the
    /// deletion's own grace period if it gives one.
    PodDeleted(PodId, Option<SimDuration>),
    /// The capacity under a Running or Releasing pod failed: the pod is gone
    /// at once, and its job loses the work since its last checkpoint.
    PodFailed(PodId),
    /// A Running pod's container exited with a failure (`lahar.io/fail-after`,
    /// `restartPolicy: Never`): the pod is Failed, its node's resources free, its
    /// job loses the work since its last checkpoint, and the job controller hears
    /// `PodFailed` with the exit code.
    PodExited(PodId),
    /// The kubelet restarted in place a Running pod's container that had
    /// exited ([`Engine::container_restarted`]).
    ContainerRestarted(PodId),
    /// A Running or Releasing pod's node was deleted: the pod garbage collector
    /// deletes it at once (no grace), its job loses the work since its last
    /// checkpoint, and the job controller hears `PodEvicted`.
    PodDeletedWithNode(PodId),
    /// A session closed: these jobs' pods changed (ascending, distinct after
    /// the controller sorts them).
    SessionClosed(Vec<JobId>),
    /// The controller syncs a job after the instant's pod updates.
    JobSync(JobId),
    /// A job's deadline (`JobSpec::deadline`, after its creation) came.
    Deadline(JobId),
}

/// How a pod went at once ([`Engine::gone_at_once`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Gone {
    /// The capacity under it failed.
    Fault,
    /// Its container exited with a failure, with this exit code.
    Exit(i32),
    /// Its node was deleted.
    NodeDeleted,
}

impl Engine {
    /// The controller's single entry point.
    pub(super) fn on(&mut self, ev: Lifecycle) {
        match ev {
            Lifecycle::JobArrived(j) => self.arrive(j),
            Lifecycle::JobReplaced(j) => self.end_job(j, JobPhase::Terminated, EndReason::Killed, JobEnd::Replaced),
            Lifecycle::WorkDone(j) => self.complete(j),
            Lifecycle::PodBound(p) => self.bound(p),
            Lifecycle::PodEvicted { pod, by, session, for_job } => {
                let reason = match by {
                    Evictor::Preempt => EndReason::Preempted,
                    Evictor::Reclaim => EndReason::Reclaimed,
                    Evictor::Other => EndReason::Evicted,
                };
                if let Some(f) = for_job {
                    self.evicted_for(pod, f);
                }
                self.world.pods[pod].disrupted = true;
                self.on_evicted(pod, reason, Some(session), None)
            }
            Lifecycle::PodDrained(p) => self.on(Lifecycle::PodDeleted(p, None)),
            Lifecycle::PodDeleted(p, grace) => {
                let node = self.world.pods[p].node;
                self.world.transition(p, PodStatus::Releasing, node);
                self.on_evicted(p, EndReason::Evicted, None, grace);
                self.refresh_job_keeping_phase(self.world.pods[p].job);
                self.phase_due.push(self.world.pods[p].job);
            }
            Lifecycle::PodReleased(p) => self.released(p),
            Lifecycle::PodFailed(p) => self.gone_at_once(p, Gone::Fault),
            Lifecycle::PodExited(p) => {
                let pod = &self.world.pods[p];
                let exits = self.world.jobs[pod.job].spec.tasks[pod.task as usize].exits;
                match exits {
                    Some(e) if e.in_place.is_some() => self.crashed_in_place(p),
                    _ => self.gone_at_once(p, Gone::Exit(exits.map_or(1, |e| e.code))),
                }
            }
            Lifecycle::ContainerRestarted(p) => self.container_restarted(p),
            Lifecycle::PodDeletedWithNode(p) => self.gone_at_once(p, Gone::NodeDeleted),
            Lifecycle::PodSucceeded(p) => self.succeeded(p),
            Lifecycle::JobSync(j) => self.sync_job(j),
            Lifecycle::Deadline(j) => self.past_deadline(j),
            Lifecycle::SessionClosed(mut touched) => {
                // Starting phases are re-derived at the first session's close.
                touched.append(&mut self.phase_due);
                touched.sort_unstable();
                touched.dedup();
                // Volcano re-derives every PodGroup's phase at a session's close
                // (`JobUpdater.UpdateAll`, `jobStatus`). A phase is a function of
                // the job's pod counts, its `minMember` and its phase: those of the
                // jobs whose pods changed or whose gang was reshaped since the last
                // close are re-derived, after the jobs the session touched; the
                // exhaustive mode walks every active job.
                let mut changed = std::mem::take(&mut self.world.phase_changes);
                if self.cfg.exhaustive {
                    changed = self.world.active.iter().copied().collect();
                }
                changed.sort_unstable();
                changed.dedup();
                for &j in &touched {
                    self.refresh_job(j);
                }
                for &j in &changed {
                    if touched.binary_search(&j).is_err() {
                        self.rederive_phase(j);
                    }
                }
                // A group leaves Pending only in a session (enqueue, or allocate
                // without it), so the jobs it touched are the ones whose controller
                // may now make the pods it held back.
                if self.admits_pod_groups {
                    let dirty = self.dirty;
                    // The exhaustive mode asks every active job.
                    let held = if self.cfg.exhaustive { self.world.active.iter().copied().collect() } else { touched };
                    for j in held {
                        self.close_changed |= self.make_held_pods(j);
                        // The sync of a job restarting whole whose group left Pending.
                        if self.world.jobs.get(j).is_some_and(|job| job.restart_all) {
                            self.maybe_restart(j);
                        }
                    }
                    // The engine asks for the next session (Engine::follow_up).
                    self.dirty = dirty;
                }
            }
        }
    }

    /// A committed bind: the pod runs.
    fn bound(&mut self, p: PodId) {
        let node = self.world.pods[p].node;
        self.world.transition(p, PodStatus::Running, node);
        let pod = &mut self.world.pods[p];
        pod.started = self.now;
        pod.up_since = self.now;
        pod.nominated = None;
        self.started(p);
        self.time_task_pod(p);
    }

    /// A pod of a task with its own run time ends once it has run it; one whose
    /// container fails exits after its `fail-after` (the earlier of the two acts).
    pub(super) fn time_task_pod(&mut self, p: PodId) {
        let pod = &self.world.pods[p];
        let task = &self.world.jobs[pod.job].spec.tasks[pod.task as usize];
        let exits = task.exits.filter(|e| task.run_time.is_none_or(|d| e.after < d));
        if let Some(d) = task.run_time.filter(|_| exits.is_none()) {
            self.events.push(self.now.plus(d), Event::PodDone(p, pod.up_since));
        }
        if let Some(e) = exits {
            self.events.push(self.now.plus(e.after), Event::PodExit(p, pod.up_since));
        }
    }

    /// A pod of a task with its own run time has run it: it Succeeds and
    /// leaves its node. When its task's pods all have, the task is complete
    /// and its `TaskCompleted` policy applies; when all the job's pods have,
    /// the job is Completed, as Volcano's job controller finds it. A job
    /// restarting a task hears TaskCompleted too (`updatePod` raises it whatever
    /// the job's state; the Restarting state runs its action), but is not
    /// completed by it, nor is one restarting whole by its new pods.
    fn succeeded(&mut self, p: PodId) {
        let pod = &self.world.pods[p];
        let (node, j, task) = (pod.node, pod.job, pod.task as usize);
        self.record_pod_end(p, EndReason::Completed);
        self.world.transition(p, PodStatus::Succeeded, node);
        self.dirty = true;
        let job = &self.world.jobs[j];
        if job.phase.is_terminal() || job.pg_deleted {
            return;
        }
        let task_done = job.task_count(task, PodStatus::Succeeded) == job.spec.tasks[task].replicas;
        if job.phase == JobPhase::Restarting {
            if task_done {
                self.raise(j, Some(p), Some(task), PolicyEvent::TaskCompleted);
            }
            return;
        }
        if job.spec.batch.is_some() {
            self.next_completions(j, task);
        }
        if task_done {
            self.raise(j, Some(p), Some(task), PolicyEvent::TaskCompleted);
        }
        let Some(job) = self.world.jobs.get(j) else { return };
        if job.phase.is_terminal() {
            return;
        }
        if job.spec.min_success.is_some() || job.count(PodStatus::Failed) > 0 {
            // Counted once the instant's other pods have ended too; the sync also
            // ends a job whose pods all ended (some stay Failed: their containers
            // exited).
            self.events.push(self.now, Event::JobSync(j));
        } else if job.count(PodStatus::Succeeded) == job.spec.total_replicas() && job.is_progressing() {
            self.complete(j);
            return;
        }
        self.refresh_job_keeping_phase(j);
        self.phase_due.push(j);
    }

    /// A batch/v1 Job's controller after a pod of task `t` succeeded: it makes
    /// the next completions' pods while fewer than `parallelism` are active
    /// (Kubernetes' `syncJob`: `wantActive = min(parallelism, completions −
    /// succeeded)`), each the next index.
    fn next_completions(&mut self, j: JobId, t: usize) {
        let job = &self.world.jobs[j];
        let Some(rules) = job.spec.batch else { return };
        let replicas = job.spec.tasks[t].replicas;
        let mut made = 0u32;
        let mut active = 0u32;
        for &p in &job.pods {
            let pod = &self.world.pods[p];
            if pod.task as usize != t {
                continue;
            }
            made = made.max(pod.index + 1);
            active += !matches!(pod.status, PodStatus::Succeeded | PodStatus::Failed | PodStatus::Deleted) as u32;
        }
        while made < replicas && active < rules.parallelism {
            let p = self.world.create_pod(j, t, made, self.now);
            self.pod_made(p);
            made += 1;
            active += 1;
        }
    }

    /// The job's `SyncJob` after the instant's pod updates. Restarting: the pods
    /// it held back are made if its group has left Pending, and it is Pending
    /// again once it may be ([`Engine::maybe_restart`]). Running: with a
    /// `minSuccess`, Completed once that many pods succeeded (its other pods
    /// killed), Failed if every pod ended with fewer; without one, see
    /// [`Engine::sync_all_ended`].
    fn sync_job(&mut self, j: JobId) {
        let Some(job) = self.world.jobs.get(j) else { return };
        if job.phase == JobPhase::Restarting {
            self.make_held_pods(j);
            return self.maybe_restart(j);
        }
        if job.spec.min_success.is_none() && !job.phase.is_terminal() {
            return self.sync_all_ended(j);
        }
        let Some(min) = job.spec.min_success.filter(|_| !job.phase.is_terminal()) else { return };
        let succeeded = job.count(PodStatus::Succeeded);
        if succeeded >= min {
            self.end_job(j, JobPhase::Completed, EndReason::Killed, JobEnd::MinSuccess);
        } else if succeeded + job.count(PodStatus::Failed) == job.spec.total_replicas() {
            self.end_job(j, JobPhase::Failed, EndReason::Killed, JobEnd::MinSuccessMissed { succeeded });
        }
    }

    /// The Running state's `SyncJob` once every replica has ended (a pod whose
    /// container failed stays Failed; state/running.go): Failed if a task with a
    /// `minAvailable` has fewer Succeeded pods, when the job's `minAvailable` is at
    /// least the sum of its tasks' (`TotalTaskMinAvailable`, a task's defaulting
    /// to its replicas); else Completed once `minAvailable` pods succeeded, Failed
    /// if fewer did.
    fn sync_all_ended(&mut self, j: JobId) {
        let job = &self.world.jobs[j];
        let total = job.spec.total_replicas();
        let succeeded = job.count(PodStatus::Succeeded);
        if total == 0 || succeeded + job.count(PodStatus::Failed) != total {
            return;
        }
        let task_min: u32 = job.spec.tasks.iter().map(|t| t.min_available).sum();
        let short_task = (job.spec.min_available >= task_min)
            .then(|| {
                (0..job.spec.tasks.len())
                    .find(|&t| job.task_count(t, PodStatus::Succeeded) < job.spec.tasks[t].min_available)
            })
            .flatten();
        let (phase, cause) = match short_task {
            Some(t) => {
                let succeeded = job.task_count(t, PodStatus::Succeeded);
                (JobPhase::Failed, JobEnd::TaskShort { task: t as u16, succeeded })
            }
            None if succeeded >= job.spec.min_available => (JobPhase::Completed, JobEnd::PodsEnded { succeeded }),
            None => (JobPhase::Failed, JobEnd::PodsEnded { succeeded }),
        };
        self.end_job(j, phase, EndReason::Killed, cause);
    }

    /// Kubernetes' Job controller at a Job's `activeDeadlineSeconds`
    /// (`pastActiveDeadline` in `syncJob`): a Job still active fails with reason
    /// `DeadlineExceeded`, and its active pods are deleted (each with its grace
    /// period; a Pending one at once).
    fn past_deadline(&mut self, j: JobId) {
        let Some(job) = self.world.jobs.get(j) else { return };
        if job.phase.is_terminal() {
            return;
        }
        self.end_job(j, JobPhase::Failed, EndReason::Deadline, JobEnd::Deadline);
    }

    fn arrive(&mut self, j: JobId) {
        self.world.activate(j);
        self.serving_arrived(j);
        let job = &mut self.world.jobs[j];
        job.pg_created = job.spec.submit;
        // The Job's start time is its creation: its deadline counts from now.
        if let Some(d) = job.spec.deadline {
            self.events.push(self.now.plus(d), Event::Deadline(j));
        }
        if let Some(r) = &mut self.recorder {
            r.job_submitted(&self.world, j);
        }
        // A group that arrives admitted or with running pods had its pods made.
        let spec = &self.world.jobs[j].spec;
        let admitted = !spec.initial.is_empty() || spec.start_phase.is_some_and(|p| p != PodGroupPhase::Pending);
        self.create_initial_pods(j, !admitted && self.holds_pods(j));
        let initial = self.world.jobs[j].spec.initial.clone();
        if !initial.is_empty() {
            // A starting state: these pods were bound before the run; no decisions.
            for (task, index, node) in initial {
                let pod = self.world.jobs[j].pods.iter().copied().find(|&p| {
                    let pod = &self.world.pods[p];
                    pod.task as usize == task && pod.index == index && pod.status == PodStatus::Pending
                });
                if let Some(p) = pod {
                    let spec = &self.world.jobs[j].spec;
                    if let Some(v) = spec.initial_vgpu.iter().find(|v| v.0 == task && v.1 == index) {
                        let takes = v.2.clone();
                        self.world.preset_vgpu(takes);
                    }
                    let spec = &self.world.jobs[j].spec;
                    if spec.tasks[task].hints.as_ref().is_some_and(|h| h.vnpu.is_some()) {
                        let takes = spec.initial_vnpu.iter().find(|v| v.0 == task && v.1 == index);
                        let takes = takes.map(|v| v.2.clone()).unwrap_or_default();
                        self.world.preset_vnpu(takes);
                    }
                    let spec = &self.world.jobs[j].spec;
                    if let Some(cpus) = spec.initial_numa.iter().find(|v| v.0 == task && v.1 == index).map(|v| v.2) {
                        self.world.preset_numa(cpus);
                    }
                    self.world.transition(p, PodStatus::Running, Some(node));
                    self.world.pods[p].started = self.now;
                    self.world.pods[p].up_since = self.now;
                    self.started(p);
                    self.time_task_pod(p);
                }
            }
            let job = &self.world.jobs[j];
            let running = job.count(PodStatus::Running);
            match job.spec.start_phase {
                // The group's own phase stands until the next session closes (Volcano
                // re-derives it in jobStatus then).
                Some(p) => {
                    self.world.set_pg_phase(j, p);
                    self.refresh_job_keeping_phase(j);
                    self.phase_due.push(j);
                }
                None => {
                    let min = job.spec.min_available.max(1);
                    let phase = if running >= min { PodGroupPhase::Running } else { PodGroupPhase::Inqueue };
                    self.world.set_pg_phase(j, phase);
                    self.refresh_job(j);
                }
            }
        } else if let Some(p) = self.world.jobs[j].spec.start_phase.filter(|&p| p != PodGroupPhase::Pending) {
            // A starting state without running pods (an Inqueue PodGroup keeps its
            // admission) until the next session closes.
            self.world.set_pg_phase(j, p);
            self.phase_due.push(j);
        }
        self.dirty = true;
    }

    /// A new incarnation's pods: every task starts uncreated; those without
    /// dependencies are made now, unless the controller `held` them back (then
    /// [`Engine::make_held_pods`] makes them once the group is admitted).
    pub(super) fn create_initial_pods(&mut self, j: JobId, held: bool) {
        let ntasks = self.world.jobs[j].spec.tasks.len();
        for t in 0..ntasks {
            let job = &mut self.world.jobs[j];
            job.tasks[t].created = false;
            if !held && job.spec.tasks[t].depends_on.is_empty() {
                self.create_task_pods(j, t);
            }
        }
    }

    /// Makes task `t`'s pods, but for replicas a pod stands for (syncJob makes
    /// only the missing names: a resumed job's Succeeded and Failed pods stay, a
    /// restarted job's killed pods are made again as each goes).
    fn create_task_pods(&mut self, j: JobId, t: usize) {
        let job = &mut self.world.jobs[j];
        job.tasks[t].created = true;
        // A batch/v1 Job starts `parallelism` of its completions.
        let replicas = job.spec.tasks[t].replicas.min(job.spec.batch.map_or(u32::MAX, |b| b.parallelism));
        let have = if job.pods.is_empty() { Vec::new() } else { self.made_indices(j, t, replicas) };
        for i in 0..replicas {
            if !have.get(i as usize).copied().unwrap_or(false) {
                let p = self.world.create_pod(j, t, i, self.now);
                self.pod_made(p);
            }
        }
        self.dirty = true;
    }

    /// Which of task `t`'s first `n` replica indices a pod of job `j` stands for.
    fn made_indices(&self, j: JobId, t: usize, n: u32) -> Vec<bool> {
        let mut have = vec![false; n as usize];
        for &p in &self.world.jobs[j].pods {
            let pod = &self.world.pods[p];
            if pod.task as usize == t
                && let Some(h) = have.get_mut(pod.index as usize)
            {
                *h = true;
            }
        }
        have
    }

    /// Whether job `j`'s controller holds its pods back now: it makes them only
    /// once the PodGroup has left Pending ([`crate::model::job::JobSpec::pods_once_admitted`];
    /// Volcano's `syncJob`, the training-operator's `DelayPodCreationDueToPodGroup`),
    /// under a scheduler that admits groups before placing them.
    pub(super) fn holds_pods(&self, j: JobId) -> bool {
        let job = &self.world.jobs[j];
        self.admits_pod_groups && job.spec.pods_once_admitted && job.pg_phase == PodGroupPhase::Pending
    }

    /// The controller's sync of job `j` once its group is admitted: the pods it
    /// held back are made (tasks never created whose dependencies allow them,
    /// replicas that went while the group was Pending). True if it made any.
    fn make_held_pods(&mut self, j: JobId) -> bool {
        let Some(job) = self.world.jobs.get(j) else { return false };
        if !job.spec.pods_once_admitted
            || self.holds_pods(j)
            || job.phase.is_terminal()
            || job.pg_deleted
            || (job.pods_missing == 0 && job.tasks.iter().all(|t| t.created))
        {
            return false;
        }
        let before = job.pods.len();
        for t in 0..job.spec.tasks.len() {
            let job = &self.world.jobs[j];
            if job.tasks[t].created {
                if job.pods_missing > 0 {
                    // The replicas of the task that no pod stands for (syncJob makes
                    // every missing index).
                    let have = self.made_indices(j, t, job.spec.tasks[t].replicas);
                    for (i, _) in have.iter().enumerate().filter(|(_, h)| !**h) {
                        let p = self.world.create_pod(j, t, i as u32, self.now);
                        self.pod_made(p);
                    }
                }
            } else if job.spec.tasks[t].depends_on.is_empty() {
                self.create_task_pods(j, t);
            }
        }
        self.world.jobs[j].pods_missing = 0;
        self.create_dependent_pods(j);
        self.world.jobs[j].pods.len() != before
    }

    /// Whether a dependency is met: its task's pods exist and are as far as it
    /// asks.
    fn dependency_met(&self, j: JobId, d: Dependency) -> bool {
        let job = &self.world.jobs[j];
        let t = d.task;
        let succeeded = job.task_count(t, PodStatus::Succeeded);
        let up = job.task_count(t, PodStatus::Running) + succeeded;
        let task = &job.spec.tasks[t];
        job.tasks[t].created
            && match d.until {
                Until::Running => up >= task.min_available.max(1),
                Until::Available => up >= task.min_available,
                Until::Ready => up >= task.replicas,
                Until::Complete => succeeded >= task.replicas,
            }
    }

    fn create_dependent_pods(&mut self, j: JobId) {
        if self.holds_pods(j) {
            return;
        }
        let ntasks = self.world.jobs[j].spec.tasks.len();
        for t in 0..ntasks {
            let job = &self.world.jobs[j];
            if job.tasks[t].created || job.phase.is_terminal() || job.phase == JobPhase::Restarting {
                continue;
            }
            let deps = &job.spec.tasks[t].depends_on;
            let any = job.spec.tasks[t].depends_any;
            let ready = if any {
                deps.iter().any(|&d| self.dependency_met(j, d))
            } else {
                deps.iter().all(|&d| self.dependency_met(j, d))
            };
            if ready {
                self.create_task_pods(j, t);
            }
        }
    }

    /// A committed eviction: end the interval, schedule the release, apply policies.
    fn on_evicted(&mut self, p: PodId, reason: EndReason, session: Option<u64>, grace: Option<SimDuration>) {
        self.record_pod_end(p, reason);
        let pod = &mut self.world.pods[p];
        pod.evicted_at = Some(self.now);
        let j = pod.job;
        let task = pod.task as usize;
        let job = &mut self.world.jobs[j];
        if session.is_some() && job.last_preempt_session != session {
            job.last_preempt_session = session;
            job.preemptions += 1;
        }
        let grace = grace.unwrap_or(job.spec.termination_grace);
        let (phase, outdated) = (job.phase, job.pg_deleted);
        self.events.push(self.now.plus(grace), Event::PodReleased(p));
        // An ended job ignores further evictions, as do the controller's
        // terminal states, and so does one whose group was deleted (its pods'
        // requests are outdated); the Restarting state hears a pod made since
        // its kill (a restart's killed pods are Releasing already).
        // A pod its controller deleted on purpose is no event (forgotten either way).
        let quiet = self.serving.quiet.remove(&p);
        if outdated || phase.is_terminal() || quiet {
            return;
        }
        if self.world.jobs[j].spec.hears_deletion_when_gone() {
            // Volcano's `deletePod` hears it once it is gone ([`Engine::released`]).
            self.world.pods[p].evicted_when_gone = true;
            return;
        }
        self.raise(j, Some(p), Some(task), PolicyEvent::PodEvicted);
    }

    /// Recreates pod `p` (same task and replica) once it is gone: at its
    /// release if it is releasing (now, for a controller that replaces
    /// terminating pods), now if it is already gone (failed, or a Pending pod
    /// just deleted).
    pub(super) fn replace_when_gone(&mut self, p: PodId) {
        match self.world.pods[p].status {
            PodStatus::Releasing if self.world.jobs[self.world.pods[p].job].spec.replaces_terminating_pods() => {
                self.replace(p)
            }
            PodStatus::Releasing => self.world.pods[p].replace_on_release = true,
            PodStatus::Failed | PodStatus::Deleted => self.replace(p),
            _ => {}
        }
    }

    /// A new Pending pod in place of `p`, which its job forgets (a Releasing `p`
    /// keeps its node until its grace ends, [`Engine::released`]); while the
    /// controller holds pods back, the replica waits for the group's admission.
    pub(super) fn replace(&mut self, p: PodId) {
        let pod = &self.world.pods[p];
        let (j, task, index) = (pod.job, pod.task as usize, pod.index);
        self.world.jobs[j].pods.retain(|&q| q != p);
        if pod.status == PodStatus::Releasing {
            self.world.pods[p].replaced = true;
        } else {
            self.delete_ended(p);
            self.forget_pod(p);
        }
        // A replica above the task's count (the job was scaled down) is not made
        // again: `syncJob` makes only the replicas below it. An autoscaled
        // workload's ReplicaSet or StatefulSet makes one while its active pods
        // are fewer than its replicas (its indices are names, not ranks); so
        // does KubeRay for a RayService's worker group, which its autoscaler sizes.
        let job = &self.world.jobs[j];
        let over = if job.spec.autoscaler.is_some() || job.spec.ray_serve.is_some() {
            let active = job
                .pods
                .iter()
                .filter(|&&q| {
                    let pod = &self.world.pods[q];
                    pod.task as usize == task && matches!(pod.status, PodStatus::Pending | PodStatus::Running)
                })
                .count();
            active as u32 >= job.spec.tasks[task].replicas
        } else {
            index >= job.spec.tasks[task].replicas
        };
        // A dependent task of a job restarted whole waits for its dependencies.
        if over || !job.tasks[task].created {
            self.dirty = true;
            return;
        }
        if self.holds_pods(j) {
            self.world.jobs[j].pods_missing += 1;
        } else {
            let p = self.world.create_pod(j, task, index, self.now);
            self.pod_made(p);
        }
        self.dirty = true;
    }

    /// A Succeeded or Failed pod's object is deleted (a controller deletes it to
    /// make another, with its job's restart, or above a scaled-down count): it
    /// leaves its job's counts.
    pub(super) fn delete_ended(&mut self, p: PodId) {
        if matches!(self.world.pods[p].status, PodStatus::Succeeded | PodStatus::Failed) {
            self.world.transition(p, PodStatus::Deleted, None);
        }
    }

    /// Running → Releasing (interval ends now), Pending → Deleted.
    pub(super) fn kill_pod(&mut self, p: PodId, reason: EndReason) {
        let pod = &self.world.pods[p];
        match pod.status {
            PodStatus::Running => {
                let node = pod.node;
                let grace = self.world.jobs[pod.job].spec.termination_grace;
                self.record_pod_end(p, reason);
                self.world.transition(p, PodStatus::Releasing, node);
                self.world.pods[p].evicted_at = Some(self.now);
                self.events.push(self.now.plus(grace), Event::PodReleased(p));
            }
            PodStatus::Pending => self.world.transition(p, PodStatus::Deleted, None),
            _ => {}
        }
    }

    /// Ends job `j` in `phase` for `cause`, its pods killed with `reason`.
    pub(super) fn end_job(&mut self, j: JobId, phase: JobPhase, reason: EndReason, cause: JobEnd) {
        let newly_done = !self.world.jobs[j].phase.is_terminal();
        self.note_end_cause(j, phase, cause);
        self.stop_progress(j, phase != JobPhase::Completed);
        self.kill_for_good(j, reason);
        self.set_phase(j, phase);
        if self.world.jobs[j].ending {
            // Its end waits for its pods; this phase is the last word.
            return;
        }
        self.world.jobs[j].end = Some(self.now);
        self.world.deactivate(j);
        self.jobs_done += usize::from(newly_done);
        self.dirty = true;
        if newly_done {
            self.ended(j);
        }
        self.maybe_retire(j);
    }

    /// Volcano's Aborting, Terminating and Completing states (an AbortJob,
    /// TerminateJob or CompleteJob action; a suspension no step resumes): the
    /// job's pods are killed (Succeeded and Failed ones stay) and it is over at
    /// once for the scheduler and the controller, but it is Aborted, Terminated
    /// or Completed only once none of its pods is left terminating
    /// (state/completing.go: no pod terminating, pending or running): its end,
    /// its row and what waits for it (a JobFlow's next step, a CronJob's next
    /// run) come then.
    pub(super) fn end_job_when_gone(&mut self, j: JobId, phase: JobPhase, cause: JobEnd) {
        if self.world.jobs[j].phase.is_terminal() {
            return self.end_job(j, phase, EndReason::Killed, cause);
        }
        self.note_end_cause(j, phase, cause);
        self.stop_progress(j, phase != JobPhase::Completed);
        self.kill_for_good(j, EndReason::Killed);
        self.set_phase(j, phase);
        self.world.deactivate(j);
        self.dirty = true;
        self.world.jobs[j].ending = true;
        self.finish_ending(j, false);
    }

    /// Records why job `j` heads for terminal `phase`: the first end's cause
    /// stays unless a later one moves it to another phase.
    fn note_end_cause(&mut self, j: JobId, phase: JobPhase, cause: JobEnd) {
        let job = &mut self.world.jobs[j];
        if !job.phase.is_terminal() || job.phase != phase || job.end_cause.is_none() {
            job.end_cause = Some(cause);
        }
    }

    /// An ending job ([`Engine::end_job_when_gone`]) ends once its last pod is
    /// gone, or with the run (`at_run_end`).
    pub(super) fn finish_ending(&mut self, j: JobId, at_run_end: bool) {
        let Some(job) = self.world.jobs.get_mut(j) else { return };
        if !job.ending || (job.count(PodStatus::Releasing) > 0 && !at_run_end) {
            return;
        }
        job.ending = false;
        job.end = Some(self.now);
        self.jobs_done += 1;
        self.ended(j);
        self.maybe_retire(j);
    }

    /// Kills every pod of job `j` (Running ones leave after their grace), none
    /// to be made again when it goes.
    pub(super) fn kill_for_good(&mut self, j: JobId, reason: EndReason) {
        let pods: Vec<PodId> = self.world.jobs[j].pods.clone();
        for p in pods {
            self.kill_pod(p, reason);
            self.world.pods[p].replace_on_release = false;
        }
    }

    /// A Running or Releasing pod is gone at once (no grace period): its
    /// capacity failed (Failed, `PodFailed`, the lost work counted as lost to
    /// faults), its container exited with a failure (Failed, `PodFailed` with the
    /// exit code) or its node was deleted (`PodEvicted`; a Releasing pod then
    /// goes as at the end of its grace, [`Engine::released`]). A Running pod's
    /// job loses the work since its last checkpoint.
    fn gone_at_once(&mut self, p: PodId, how: Gone) {
        let pod = &self.world.pods[p];
        let (status, node, j, task, replaced) = (pod.status, pod.node, pod.job, pod.task as usize, pod.replaced);
        let failed = how != Gone::NodeDeleted;
        let reason = match how {
            Gone::Fault => EndReason::Failed,
            Gone::Exit(_) => EndReason::Exited,
            Gone::NodeDeleted => EndReason::NodeDeleted,
        };
        match status {
            PodStatus::Running => self.record_pod_end(p, reason),
            // Its deletion was under way and heard as such: the node's deletion
            // (or any end of a pod made again already) only ends its grace
            // period now (one deletion, heard and made again once, as a
            // batch/v1 Job counts it once against its `backoffLimit`).
            PodStatus::Releasing if how == Gone::NodeDeleted || replaced => {
                return self.released(p);
            }
            PodStatus::Releasing => {}
            _ => return,
        }
        let end = if failed { PodStatus::Failed } else { PodStatus::Deleted };
        self.world.transition(p, end, if failed { node } else { None });
        self.world.pods[p].replace_on_release = false;
        self.world.pods[p].exited = matches!(how, Gone::Exit(_));
        self.dirty = true;
        let job = &self.world.jobs[j];
        if job.phase.is_terminal() {
            self.finish_ending(j, false);
            self.maybe_retire(j);
            return;
        }
        if job.pg_deleted || (job.phase == JobPhase::Restarting && status == PodStatus::Releasing) {
            // A pod killed by a restart (or deleted before it) that failed
            // before its grace ended: the restart goes on without it, made again
            // now unless its whole group is made anew at the end. A pod the
            // restart left or made is heard below, as in any other phase.
            if !job.pg_deleted {
                self.replace(p);
            }
            self.maybe_restart(j);
            return;
        }
        if status == PodStatus::Running {
            let lost = self.stop_progress(j, true);
            if how == Gone::Fault {
                let job = &mut self.world.jobs[j];
                job.progress.lost_to_faults_gpu_us += lost as u128 * job.spec.total_gpus().max(0) as u128;
            }
            self.phase_due.push(j);
        }
        let event = if failed { PolicyEvent::PodFailed } else { PolicyEvent::PodEvicted };
        let code = match how {
            Gone::Exit(code) => Some(code),
            _ => None,
        };
        self.raise_with_exit(j, Some(p), Some(task), event, code);
        // Whatever is left of the job goes on at its new size, or waits; an
        // elastic job's survivors meet again first (its resize overhead).
        let job = &mut self.world.jobs[j];
        if let Some(e) = &job.spec.elastic {
            job.progress.resume_at = Some(self.now.plus(e.resize_overhead));
        }
        self.refresh_job_keeping_phase(j);
        // Below its minimum it waits: starting again later is no resize.
        if let Some(job) = self.world.jobs.get_mut(j).filter(|job| !job.is_progressing()) {
            job.progress.resume_at = None;
        }
    }

    /// A Releasing pod's grace period ended: its terminal phase is heard by a
    /// controller that hears it ([`Engine::report_terminal_phase`]), then it is
    /// gone from its node (Deleted), made again if its job asked, and heard as
    /// `PodEvicted` by a controller that hears deletions once they are done.
    fn released(&mut self, p: PodId) {
        if self.world.pods[p].status != PodStatus::Releasing {
            return;
        }
        // The kubelet's report of its terminal phase comes first; what its
        // policy does may mark the pod to be made again.
        self.report_terminal_phase(p);
        self.world.transition(p, PodStatus::Deleted, None);
        self.dirty = true;
        let pod = &mut self.world.pods[p];
        let (j, task, replace) = (pod.job, pod.task as usize, pod.replace_on_release);
        if pod.replaced {
            // Made again when its deletion started: its job forgot it then.
            self.forget_pod(p);
            self.finish_ending(j, false);
            self.maybe_retire(j);
            return;
        }
        let heard = std::mem::take(&mut pod.evicted_when_gone);
        let job = &self.world.jobs[j];
        if replace && !job.phase.is_terminal() && !job.pg_deleted {
            self.replace(p);
        }
        // A job that ended or lost its group meanwhile treats it as outdated (a
        // sync); a pod a restart killed again while it was going was marked out
        // of sync (`killPods` patches every pod it kills) and was made again above.
        let job = &self.world.jobs[j];
        if heard && !replace && !job.phase.is_terminal() && !job.pg_deleted {
            self.raise(j, Some(p), Some(task), PolicyEvent::PodEvicted);
            if self.world.jobs.get(j).is_none() {
                return;
            }
        }
        self.maybe_restart(j);
        self.finish_ending(j, false);
        self.maybe_retire(j);
    }

    /// Re-evaluates a job after its pods changed: start, stop or re-speed its
    /// progress, create dependent tasks, update its PodGroup phase.
    fn refresh_job(&mut self, j: JobId) {
        if self.refresh_job_keeping_phase(j) {
            self.update_pod_group_phase(j);
        }
    }

    /// [`Engine::refresh_job`] but the PodGroup phase; false for a finished job.
    pub(super) fn refresh_job_keeping_phase(&mut self, j: JobId) -> bool {
        let Some(job) = self.world.jobs.get(j) else { return false };
        if job.phase.is_terminal() {
            return false;
        }
        // A pod whose container waits for its restart in place works not.
        let up = job.count(PodStatus::Running) - self.containers_down(j);
        let job = &self.world.jobs[j];
        let runnable =
            up + job.count(PodStatus::Succeeded) >= job.spec.min_available.max(1) && job.phase != JobPhase::Restarting;
        match (job.is_progressing(), runnable) {
            (false, true) => {
                self.world.jobs[j].progress.started_at = Some(self.now);
                self.start_progress(j)
            }
            (true, false) => {
                self.stop_progress(j, true);
                self.set_phase(j, JobPhase::Pending);
            }
            (true, true) => {
                // Placement may have changed: credit, then continue at the new speed.
                // An elastic job whose workers changed pauses for its re-rendezvous,
                // unless it started at this instant (the new workers join the start).
                let resize = job
                    .spec
                    .elastic
                    .as_ref()
                    .map(|e| e.resize_overhead)
                    .filter(|_| job.count(PodStatus::Running) != job.progress.workers)
                    .filter(|_| job.progress.started_at != Some(self.now));
                // A pause under way goes on.
                let pausing = job.progress.resume_at.filter(|&r| r > self.now);
                self.stop_progress(j, false);
                let resume = resize.map(|pause| self.now.plus(pause)).or(pausing);
                self.world.jobs[j].progress.resume_at = resume;
                self.start_progress(j);
            }
            (false, false) => {}
        }
        self.create_dependent_pods(j);
        true
    }

    /// [`Engine::update_pod_group_phase`] of a job that still runs.
    fn rederive_phase(&mut self, j: JobId) {
        if self.world.jobs.get(j).is_some_and(|job| !job.phase.is_terminal()) {
            self.update_pod_group_phase(j);
        }
    }

    /// Volcano's `getPodGroupPhase` at a session's close: Unknown for a job with
    /// Running pods the scheduler marked unschedulable; Running (or Completed)
    /// once `minMember` pods were scheduled (Running, Succeeded, Failed, or
    /// Releasing on a node; not those this session bound, still Binding in
    /// Volcano's cache); else Pending, unless the group is Inqueue. A group
    /// turning Unknown raises the controller's `JobUnknown` event.
    fn update_pod_group_phase(&mut self, j: JobId) {
        let job = &self.world.jobs[j];
        if job.pg_deleted {
            // Its PodGroup was deleted (an operator's group restart, a suspension).
            return;
        }
        // Pods this session bound are Binding in Volcano's cache until the next
        // close: neither Running nor scheduled yet (`ScheduledStatus`).
        let binding = self.binding.binary_search_by_key(&j, |&(j, _)| j).map_or(0, |k| self.binding[k].1);
        let running = job.count(PodStatus::Running).saturating_sub(binding);
        let releasing = job.count(PodStatus::Releasing);
        let scheduled = running + job.count(PodStatus::Succeeded) + job.count(PodStatus::Failed);
        let min = job.spec.min_available;
        let new = if running > 0 && self.marks_unschedulable && self.unschedulable(j) {
            PodGroupPhase::Unknown
        } else if scheduled + releasing >= min.max(1) {
            if running + releasing == 0 { PodGroupPhase::Completed } else { PodGroupPhase::Running }
        } else if job.pg_phase != PodGroupPhase::Inqueue {
            PodGroupPhase::Pending
        } else {
            PodGroupPhase::Inqueue
        };
        let old = job.pg_phase;
        if new != old {
            // A close that moves a phase changes what the next session finds, so
            // a session follows it (`Engine::close_changed`). A group back at
            // Pending (its scheduled pods under `minMember` again) is enqueue's
            // candidate again. With a period, any move counts: an Inqueue group
            // whose pods this session's predecessor bound holds overcommit's
            // reservation beside their requests until this close turns it
            // Running, so the next tick may admit a group this one refused.
            // Without one, that session's arrivals were all seen by the session
            // before the binds, with the same room: only the move to Pending
            // can change a decision. The controller's own moves to Pending (a
            // PodGroup made anew, a suspension) come with events that ask one.
            self.close_changed |= new == PodGroupPhase::Pending || self.cfg.schedule_period.is_some();
            self.world.set_pg_phase(j, new);
            // A job restarting whole hears its new group's move (its sync may
            // make its pods and end the restart).
            if self.world.jobs[j].restart_all {
                self.events.push(self.now, Event::JobSync(j));
            }
            self.emit(Decision {
                session: self.stats.sessions,
                t: self.now,
                action: "session-close",
                kind: DecisionKind::Phase,
                job: j,
                pod: None,
                node: None,
                phase: Some(new),
                reason: Cow::Borrowed(""),
            });
            // The request names no task (only the job's own policies apply) and
            // carries job version 0: after the job's first kill it is outdated.
            let job = &self.world.jobs[j];
            if new == PodGroupPhase::Unknown && job.version == 0 {
                self.raise(j, None, None, PolicyEvent::JobUnknown);
            }
        }
    }

    /// Whether gang's close marks job `j` unschedulable: not ready
    /// (`ReadyTaskNum + PendingBestEffortTaskNum < MinAvailable`), unless its only
    /// unfinished pods are releasing on their nodes and they, with the scheduled
    /// ones, reach its minimum (`shouldSkipUnschedulableForReleasing`). A job with
    /// no pods is skipped.
    fn unschedulable(&self, j: JobId) -> bool {
        let job = &self.world.jobs[j];
        let min = job.spec.min_available;
        if job.pods.is_empty() || job.ready_count() + job.pending_best_effort >= min {
            return false;
        }
        let releasing = job.count(PodStatus::Releasing);
        let open = job.count(PodStatus::Pending) + job.count(PodStatus::Pipelined);
        let scheduled = job.count(PodStatus::Running) + job.count(PodStatus::Succeeded) + job.count(PodStatus::Failed);
        !(releasing > 0 && open == 0 && scheduled + releasing >= min)
    }

    pub(super) fn set_phase(&mut self, j: JobId, phase: JobPhase) {
        self.world.jobs[j].phase = phase;
    }

    fn complete(&mut self, j: JobId) {
        self.credit(j);
        self.world.job_changed(j);
        let job = &mut self.world.jobs[j];
        job.progress.done = job.spec.duration.micros();
        job.progress.since = None;
        job.progress.generation += 1;
        self.effective_milli_ppm -= std::mem::take(&mut job.progress.effective_term);
        self.running_milli -= std::mem::take(&mut job.progress.running_term);
        self.running_jobs -= 1;
        self.reprice_due |= self.runtime.coupled();
        let pods: Vec<PodId> = job.pods.clone();
        for p in pods {
            match self.world.pods[p].status {
                PodStatus::Running => {
                    self.record_pod_end(p, EndReason::Completed);
                    let node = self.world.pods[p].node;
                    self.world.transition(p, PodStatus::Succeeded, node);
                }
                PodStatus::Pending => self.world.transition(p, PodStatus::Deleted, None),
                _ => {}
            }
            self.world.pods[p].replace_on_release = false;
        }
        self.set_phase(j, JobPhase::Completed);
        self.world.jobs[j].end_cause = Some(JobEnd::WorkDone);
        self.world.jobs[j].end = Some(self.now);
        self.world.set_pg_phase(j, PodGroupPhase::Completed);
        self.world.deactivate(j);
        self.jobs_done += 1;
        self.dirty = true;
        self.ended(j);
        self.maybe_retire(j);
    }

    /// Tells the recorder that job `j` ended, and its recurring object's controller.
    fn ended(&mut self, j: JobId) {
        if let Some(r) = &mut self.recorder {
            r.job_ended(&self.world, j);
        }
        let job = &self.world.jobs[j];
        // Volcano's CronJob controller counts an Aborted run as still active (it
        // may be resumed): only Completed, Failed and Terminated end one.
        if let Some(r) = job.spec.recurrence.as_deref().filter(|_| job.phase != JobPhase::Aborted) {
            let (start, dropped) = self.recurring.ended(j, &r.clone(), self.now);
            if let Some(h) = start {
                self.events.push(self.now, Event::Create(h));
            }
            if let Some(d) = dropped {
                self.drop_run(d);
            }
        }
        let job = &self.world.jobs[j];
        if let Some(f) = job.spec.flow.as_deref().filter(|_| job.phase == JobPhase::Completed) {
            for k in self.flows.completed(&f.clone()) {
                self.events.push(self.now, Event::Create(k));
            }
        }
    }
}
