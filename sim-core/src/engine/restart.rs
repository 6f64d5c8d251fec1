//! Restarts of a whole job and the end of every restart: Volcano's `killJob`
//! without a target (RestartJob, a resumption), the PodGroup it deletes and the
//! Restarting state's next sync makes again, and `restartingUpdateStatus`, which
//! finds a restarting job Pending again (pkg/controllers/job/state/restarting.go,
//! `killPods` and `syncJob` in job_controller_actions.go). The other operators
//! lahar restarts whole (a LeaderWorkerSet's group, a kthena ServingGroup) make
//! the group again once every killed pod is gone.

use super::{EndReason, Engine};

use crate::model::ids::JobId;
use crate::model::job::{JobPhase, PodGroupPhase, PodStatus};
use crate::session::{Decision, DecisionKind};
use crate::world::Suspension;
use std::borrow::Cow;

impl Engine {
    /// Kills job `j` whole for a restart (its phase already Restarting): every
    /// pod, its Succeeded and Failed ones too unless the job is `resumed`
    /// (`killJob` with `PodRetainPhaseNone` for RestartJob and for any action the
    /// Restarting state runs but a targeted restart, `PodRetainPhaseSoft` for
    /// ResumeJob), none of them counted on again. `again`: the job was
    /// restarting already (the Restarting state's own kill, whose status update
    /// is `restartingUpdateStatus`; the Running, Pending and Aborted states'
    /// kills make the job Restarting whatever its counts).
    ///
    /// Volcano's job controller deletes the PodGroup and its next sync makes it
    /// anew, Pending, at once: enqueue admits it again and the job orders from
    /// now — unless the old pods still terminating on their nodes reach its
    /// `minMember` first, which makes it Running at the next close
    /// (`getPodGroupPhase` counts Releasing pods that were scheduled). Each
    /// killed pod is made again once it is gone and the group has left Pending
    /// (`syncJob` makes each missing name; a name still terminating waits), a
    /// dependent task once its dependencies are met again.
    pub(super) fn kill_whole(&mut self, j: JobId, resumed: bool, again: bool) {
        let job = &mut self.world.jobs[j];
        job.restart_all = true;
        job.version += 1;
        if !job.spec.remakes_group_at_once() {
            // The group's PodGroup goes; a new one comes once every pod has.
            job.pg_deleted = true;
            self.world.set_pg_phase(j, PodGroupPhase::Pending);
            for q in self.world.jobs[j].pods.clone() {
                self.kill_pod(q, EndReason::Restarted);
            }
            return self.maybe_restart(j);
        }
        self.new_pod_group(j, resumed);
        let job = &mut self.world.jobs[j];
        for t in 0..job.tasks.len() {
            if !job.spec.tasks[t].depends_on.is_empty() {
                job.tasks[t].created = false;
            }
        }
        let mut terminating = 0u32;
        for q in self.world.jobs[j].pods.clone() {
            let status = self.world.pods[q].status;
            if resumed && matches!(status, PodStatus::Succeeded | PodStatus::Failed) {
                continue;
            }
            // Its deletion, if heard later, is an outdated request (a sync).
            self.world.pods[q].evicted_when_gone = false;
            terminating += u32::from(status != PodStatus::Deleted);
            self.kill_pod(q, EndReason::Restarted);
            match self.world.pods[q].status {
                PodStatus::Releasing => self.world.pods[q].replace_on_release = true,
                _ => self.replace(q),
            }
        }
        let job = &self.world.jobs[j];
        if again && job.spec.total_replicas().saturating_sub(terminating) >= job.spec.min_available {
            self.restart_done(j);
        }
        self.phase_due.push(j);
        self.dirty = true;
    }

    /// Job `j`'s PodGroup is made anew by its controller, Pending: created now
    /// (the job order's last key, sla's waiting time), its move a row of
    /// decisions.csv naming the RestartJob or, if `resumed`, the ResumeJob.
    fn new_pod_group(&mut self, j: JobId, resumed: bool) {
        let why = if resumed { "PodGroup made anew after ResumeJob" } else { "PodGroup made anew after RestartJob" };
        let job = &mut self.world.jobs[j];
        job.pg_created = self.now;
        job.pg_deleted = false;
        self.world.set_pg_phase(j, PodGroupPhase::Pending);
        self.emit(Decision {
            session: self.stats.sessions,
            t: self.now,
            action: "job-controller",
            kind: DecisionKind::Phase,
            job: j,
            pod: None,
            node: None,
            phase: Some(PodGroupPhase::Pending),
            reason: Cow::Borrowed(why),
        });
    }

    /// A restarting job is Pending again (Volcano's `restartingUpdateStatus`)
    /// once the replicas not terminating reach its `minAvailable` (`replicas −
    /// terminating ≥ minAvailable`), at once after a targeted restart whose
    /// surviving pods do — they keep their nodes and the job goes on with them.
    /// After a restart of the whole job, Volcano's controller counts the
    /// terminating pods only in a sync that finds the new PodGroup out of
    /// Pending (before, its status keeps the count of its kill), so the job
    /// waits for that too. An operator's group restart ends once every killed
    /// pod is gone, with its PodGroup and pods made anew (after a resume, those
    /// it is missing: its Succeeded and Failed pods stay).
    pub(super) fn maybe_restart(&mut self, j: JobId) {
        let job = &self.world.jobs[j];
        if job.phase != JobPhase::Restarting || job.suspension == Suspension::Aborted {
            return;
        }
        let releasing = job.count(PodStatus::Releasing);
        let enough = job.spec.total_replicas().saturating_sub(releasing) >= job.spec.min_available;
        let done = match (job.restart_all, job.pg_deleted) {
            (true, true) => releasing == 0,
            (true, false) => enough && job.pg_phase != PodGroupPhase::Pending,
            (false, _) => enough,
        };
        if done {
            self.restart_done(j);
        }
    }

    /// Job `j`'s restart is over: Pending again.
    fn restart_done(&mut self, j: JobId) {
        let job = &mut self.world.jobs[j];
        let resumed = std::mem::take(&mut job.suspension) == Suspension::Resuming;
        job.restart_all = false;
        let regroup = std::mem::take(&mut job.pg_deleted);
        self.set_phase(j, JobPhase::Pending);
        if regroup {
            self.new_pod_group(j, resumed);
            // RestartJob's kill deletes every pod, the Succeeded and Failed ones
            // too: none of them counts for the new ones (a Succeeded one kept
            // would complete the job early). A suspension's keeps those: they
            // count on, and the resumed job's sync makes only the missing pods.
            let mut kept = Vec::new();
            for p in std::mem::take(&mut self.world.jobs[j].pods) {
                if resumed && matches!(self.world.pods[p].status, PodStatus::Succeeded | PodStatus::Failed) {
                    kept.push(p);
                    continue;
                }
                self.delete_ended(p);
                self.forget_pod(p);
            }
            self.world.jobs[j].pods = kept;
            self.world.jobs[j].pods_missing = 0;
            self.create_initial_pods(j, self.holds_pods(j));
        } else {
            // Its pods may run it now (the Pending state's sync finds it Running
            // once `minAvailable` pods are).
            self.refresh_job_keeping_phase(j);
            self.phase_due.push(j);
        }
        self.dirty = true;
    }
}
