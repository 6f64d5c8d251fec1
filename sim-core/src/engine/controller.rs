//! The job controller: the only code outside a session that creates, kills or
//! deletes pods and changes a job's phase, its PodGroup phase or its retries.

use super::{EndReason, Engine, Event};

use crate::job::{JobId, JobPhase, PodGroupPhase, PodId, PodStatus, PolicyAction, PolicyEvent};
use crate::session::{Decision, DecisionKind};
use std::borrow::Cow;

impl Engine {
    pub(super) fn arrive(&mut self, j: JobId) {
        self.world.activate(j);
        if let Some(r) = &mut self.recorder {
            r.job_submitted(&self.world, j);
        }
        self.create_initial_pods(j);
        let initial = self.world.jobs[j.0 as usize].spec.initial.clone();
        if !initial.is_empty() {
            // A starting state: these pods were bound before the run; no decisions.
            for (task, index, node) in initial {
                let pod = self.world.jobs[j.0 as usize].pods.iter().copied().find(|&p| {
                    let pod = &self.world.pods[p.0 as usize];
                    pod.task as usize == task && pod.index == index && pod.status == PodStatus::Pending
                });
                if let Some(p) = pod {
                    let spec = &self.world.jobs[j.0 as usize].spec;
                    if let Some(v) = spec.initial_vgpu.iter().find(|v| v.0 == task && v.1 == index) {
                        let takes = v.2.clone();
                        self.world.preset_vgpu(takes);
                    }
                    let spec = &self.world.jobs[j.0 as usize].spec;
                    if let Some(cpus) = spec.initial_numa.iter().find(|v| v.0 == task && v.1 == index).map(|v| v.2) {
                        self.world.preset_numa(cpus);
                    }
                    self.world.transition(p, PodStatus::Running, Some(node));
                    self.world.pods[p.0 as usize].started = self.now;
                    self.started(p);
                }
            }
            let job = &self.world.jobs[j.0 as usize];
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
        } else if let Some(p) = self.world.jobs[j.0 as usize].spec.start_phase.filter(|&p| p != PodGroupPhase::Pending)
        {
            // A starting state without running pods (an Inqueue PodGroup keeps its
            // admission) until the next session closes.
            self.world.set_pg_phase(j, p);
            self.phase_due.push(j);
        }
        self.dirty = true;
    }

    pub(super) fn create_initial_pods(&mut self, j: JobId) {
        let ntasks = self.world.jobs[j.0 as usize].spec.tasks.len();
        for t in 0..ntasks {
            let job = &mut self.world.jobs[j.0 as usize];
            job.tasks[t].created = false;
            if job.spec.tasks[t].depends_on.is_empty() {
                self.create_task_pods(j, t);
            }
        }
    }

    pub(super) fn create_task_pods(&mut self, j: JobId, t: usize) {
        let job = &mut self.world.jobs[j.0 as usize];
        job.tasks[t].created = true;
        let replicas = job.spec.tasks[t].replicas;
        for i in 0..replicas {
            self.world.create_pod(j, t, i, self.now);
        }
        self.dirty = true;
    }

    /// A task is ready (for dependsOn) when at least its minAvailable pods are
    /// Running or Succeeded.
    pub(super) fn task_ready(&self, j: JobId, t: usize) -> bool {
        let job = &self.world.jobs[j.0 as usize];
        job.tasks[t].created
            && job.task_count(t, PodStatus::Running) + job.task_count(t, PodStatus::Succeeded)
                >= job.spec.tasks[t].min_available.max(1)
    }

    pub(super) fn create_dependent_pods(&mut self, j: JobId) {
        let ntasks = self.world.jobs[j.0 as usize].spec.tasks.len();
        for t in 0..ntasks {
            let job = &self.world.jobs[j.0 as usize];
            if job.tasks[t].created || job.phase.is_terminal() || job.phase == JobPhase::Restarting {
                continue;
            }
            let deps = &job.spec.tasks[t].depends_on;
            let any = job.spec.tasks[t].depends_any;
            let ready = if any {
                deps.iter().any(|&d| self.task_ready(j, d))
            } else {
                deps.iter().all(|&d| self.task_ready(j, d))
            };
            if ready {
                self.create_task_pods(j, t);
            }
        }
    }

    /// A committed eviction: end the interval, schedule the release, apply policies.
    pub(super) fn on_evicted(&mut self, p: PodId, reason: EndReason, session: u64) {
        self.record_pod_end(p, reason);
        let pod = &mut self.world.pods[p.0 as usize];
        pod.evicted_at = Some(self.now);
        let j = pod.job;
        let task = pod.task as usize;
        let job = &mut self.world.jobs[j.0 as usize];
        if job.last_preempt_session != Some(session) {
            job.last_preempt_session = Some(session);
            job.preemptions += 1;
        }
        let grace = job.spec.termination_grace;
        let phase = job.phase;
        self.events.push(self.now.plus(grace), Event::PodReleased(p));
        // A job already restarting or ended ignores further evictions, as the
        // controller's Restarting/terminal states do.
        if phase == JobPhase::Restarting || phase.is_terminal() {
            return;
        }
        let action = self.policy_for(j, task, PolicyEvent::PodEvicted);
        self.apply_policy(j, Some(p), task, action);
    }

    pub(super) fn policy_for(&self, j: JobId, task: usize, ev: PolicyEvent) -> Option<PolicyAction> {
        let spec = &self.world.jobs[j.0 as usize].spec;
        spec.tasks[task].policies.iter().chain(spec.policies.iter()).find(|p| p.event.matches(ev)).map(|p| p.action)
    }

    pub(super) fn apply_policy(&mut self, j: JobId, pod: Option<PodId>, task: usize, action: Option<PolicyAction>) {
        match action {
            None | Some(PolicyAction::RestartPod) => {
                if let Some(p) = pod {
                    self.world.pods[p.0 as usize].replace_on_release = true;
                }
            }
            Some(PolicyAction::RestartTask) => {
                let pods: Vec<PodId> = self.world.jobs[j.0 as usize].pods.clone();
                for q in pods {
                    if self.world.pods[q.0 as usize].task as usize == task {
                        self.kill_pod(q, EndReason::Restarted);
                        self.world.pods[q.0 as usize].replace_on_release = true;
                    }
                }
            }
            Some(PolicyAction::RestartJob) => {
                let job = &mut self.world.jobs[j.0 as usize];
                job.retries += 1;
                if job.retries >= job.spec.max_retry {
                    self.end_job(j, JobPhase::Failed, EndReason::Killed);
                } else {
                    self.stop_progress(j, true);
                    self.set_phase(j, JobPhase::Restarting);
                    let pods: Vec<PodId> = self.world.jobs[j.0 as usize].pods.clone();
                    for q in pods {
                        self.kill_pod(q, EndReason::Restarted);
                    }
                    self.maybe_restart(j);
                }
            }
            Some(PolicyAction::AbortJob) => self.end_job(j, JobPhase::Aborted, EndReason::Killed),
            Some(PolicyAction::TerminateJob) => self.end_job(j, JobPhase::Terminated, EndReason::Killed),
            Some(PolicyAction::CompleteJob) => self.end_job(j, JobPhase::Completed, EndReason::Killed),
        }
    }

    /// Running → Releasing (interval ends now), Pending → Deleted.
    pub(super) fn kill_pod(&mut self, p: PodId, reason: EndReason) {
        let pod = &self.world.pods[p.0 as usize];
        match pod.status {
            PodStatus::Running => {
                let node = pod.node;
                let grace = self.world.jobs[pod.job.0 as usize].spec.termination_grace;
                self.record_pod_end(p, reason);
                self.world.transition(p, PodStatus::Releasing, node);
                self.world.pods[p.0 as usize].evicted_at = Some(self.now);
                self.events.push(self.now.plus(grace), Event::PodReleased(p));
            }
            PodStatus::Pending => self.world.transition(p, PodStatus::Deleted, None),
            _ => {}
        }
    }

    pub(super) fn end_job(&mut self, j: JobId, phase: JobPhase, reason: EndReason) {
        let newly_done = !self.world.jobs[j.0 as usize].phase.is_terminal();
        self.stop_progress(j, phase != JobPhase::Completed);
        let pods: Vec<PodId> = self.world.jobs[j.0 as usize].pods.clone();
        for p in pods {
            self.kill_pod(p, reason);
            self.world.pods[p.0 as usize].replace_on_release = false;
        }
        self.set_phase(j, phase);
        self.world.jobs[j.0 as usize].end = Some(self.now);
        self.world.deactivate(j);
        self.jobs_done += usize::from(newly_done);
        self.dirty = true;
        if newly_done {
            self.ended(j);
        }
        self.maybe_retire(j);
    }

    pub(super) fn maybe_restart(&mut self, j: JobId) {
        let job = &mut self.world.jobs[j.0 as usize];
        if job.phase == JobPhase::Restarting && job.count(PodStatus::Releasing) == 0 {
            for p in std::mem::take(&mut job.pods) {
                self.forget_pod(p);
            }
            self.set_phase(j, JobPhase::Pending);
            self.create_initial_pods(j);
        }
    }

    pub(super) fn released(&mut self, p: PodId) {
        if self.world.pods[p.0 as usize].status != PodStatus::Releasing {
            return;
        }
        self.world.transition(p, PodStatus::Deleted, None);
        self.dirty = true;
        let pod = &self.world.pods[p.0 as usize];
        let (j, task, index, replace) = (pod.job, pod.task as usize, pod.index, pod.replace_on_release);
        let phase = self.world.jobs[j.0 as usize].phase;
        if replace && !phase.is_terminal() && phase != JobPhase::Restarting {
            let job = &mut self.world.jobs[j.0 as usize];
            job.pods.retain(|&q| q != p);
            self.forget_pod(p);
            self.world.create_pod(j, task, index, self.now);
        }
        self.maybe_restart(j);
        self.maybe_retire(j);
    }

    /// Re-evaluates a job after its pods changed: start, stop or re-speed its
    /// progress, create dependent tasks, update its PodGroup phase.
    pub(super) fn refresh_job(&mut self, j: JobId) {
        if self.refresh_job_keeping_phase(j) {
            self.update_pod_group_phase(j);
        }
    }

    /// [`Engine::refresh_job`] but the PodGroup phase; false for a finished job.
    pub(super) fn refresh_job_keeping_phase(&mut self, j: JobId) -> bool {
        let Some(job) = self.world.jobs.get(j.0 as usize) else { return false };
        if job.phase.is_terminal() {
            return false;
        }
        let runnable = job.count(PodStatus::Running) + job.count(PodStatus::Succeeded) >= job.spec.min_available.max(1)
            && job.phase != JobPhase::Restarting;
        match (job.is_progressing(), runnable) {
            (false, true) => self.start_progress(j),
            (true, false) => {
                self.stop_progress(j, true);
                self.set_phase(j, JobPhase::Pending);
            }
            (true, true) => {
                // Placement may have changed: credit, then continue at the new speed.
                self.stop_progress(j, false);
                self.start_progress(j);
            }
            (false, false) => {}
        }
        self.create_dependent_pods(j);
        true
    }

    pub(super) fn update_pod_group_phase(&mut self, j: JobId) {
        let job = &self.world.jobs[j.0 as usize];
        let scheduled = job.count(PodStatus::Running)
            + job.count(PodStatus::Succeeded)
            + job.count(PodStatus::Failed)
            + job.count(PodStatus::Releasing);
        let new = if scheduled >= job.spec.min_available.max(1) {
            if job.count(PodStatus::Running) + job.count(PodStatus::Releasing) == 0 {
                PodGroupPhase::Completed
            } else {
                PodGroupPhase::Running
            }
        } else if job.pg_phase != PodGroupPhase::Inqueue {
            PodGroupPhase::Pending
        } else {
            PodGroupPhase::Inqueue
        };
        if new != job.pg_phase {
            self.world.set_pg_phase(j, new);
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
        }
    }

    pub(super) fn set_phase(&mut self, j: JobId, phase: JobPhase) {
        self.world.jobs[j.0 as usize].phase = phase;
    }

    pub(super) fn complete(&mut self, j: JobId) {
        self.credit(j);
        let job = &mut self.world.jobs[j.0 as usize];
        job.progress.done = job.spec.duration.micros();
        job.progress.since = None;
        job.progress.generation += 1;
        self.effective_milli_ppm -= std::mem::take(&mut job.progress.effective_term);
        self.running_jobs -= 1;
        self.reprice_due |= self.runtime.coupled();
        let pods: Vec<PodId> = job.pods.clone();
        for p in pods {
            match self.world.pods[p.0 as usize].status {
                PodStatus::Running => {
                    self.record_pod_end(p, EndReason::Completed);
                    let node = self.world.pods[p.0 as usize].node;
                    self.world.transition(p, PodStatus::Succeeded, node);
                }
                PodStatus::Pending => self.world.transition(p, PodStatus::Deleted, None),
                _ => {}
            }
            self.world.pods[p.0 as usize].replace_on_release = false;
        }
        self.set_phase(j, JobPhase::Completed);
        self.world.jobs[j.0 as usize].end = Some(self.now);
        self.world.set_pg_phase(j, PodGroupPhase::Completed);
        self.world.deactivate(j);
        self.jobs_done += 1;
        self.dirty = true;
        self.ended(j);
        self.maybe_retire(j);
    }

    /// Tells the recorder that job `j` ended, and its recurring object's controller.
    pub(super) fn ended(&mut self, j: JobId) {
        if let Some(r) = &mut self.recorder {
            r.job_ended(&self.world, j);
        }
        let job = &self.world.jobs[j.0 as usize];
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
        let job = &self.world.jobs[j.0 as usize];
        if let Some(f) = job.spec.flow.as_deref().filter(|_| job.phase == JobPhase::Completed) {
            for k in self.flows.completed(&f.clone()) {
                self.events.push(self.now, Event::Create(k));
            }
        }
    }
}
