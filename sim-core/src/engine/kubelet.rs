//! What the kubelet reports of a pod it stops because the pod was deleted by
//! someone other than its job's controller (preempt, reclaim, an operator, a
//! drain, the taint manager): the pod's terminal phase, before it is gone.
//!
//! Since Kubernetes 1.27 the kubelet moves such a pod to a terminal phase
//! before the API server removes it (`generateAPIPodStatus` with
//! `podIsTerminal`, `getPhase`): Succeeded when its containers exited 0, else
//! Failed — whatever its `restartPolicy`. A container that does not handle
//! SIGTERM exits 143 (128 + 15). Volcano's job controller hears that update
//! (`updatePod`): `PodFailedEvent` with the exit code, which `PodFailed`,
//! `exitCode` and `*` policies match; for Succeeded, `TaskCompletedEvent` when
//! every pod of the task has Succeeded (`jobCache.TaskCompleted`), else an
//! out-of-sync request, a sync. Only then does it hear the deletion
//! (`deletePod`: `PodEvictedEvent`). A pod the controller killed itself was
//! patched out of sync first (`killPods`), so neither request is heard as an
//! event: lahar raises the terminal phase only for pods whose deletion the
//! controller will hear ([`crate::world::Pod::evicted_when_gone`]). A pod
//! deleted with no grace period is removed from the API server at once, before
//! any kubelet could report it.

use super::Engine;

use crate::model::ids::PodId;
use crate::model::job::{PodStatus, PolicyEvent};

impl Engine {
    /// Pod `p`, Releasing, reaches the end of its grace period: if its job's
    /// controller hears a deleted pod's terminal phase
    /// ([`crate::model::job::JobSpec::hears_terminal_phase`]) and will hear
    /// its deletion as an event, it hears the phase first, from the task's
    /// stop exit code ([`crate::model::job::TaskSpec::stop_code`]).
    pub(super) fn report_terminal_phase(&mut self, p: PodId) {
        let pod = &self.world.pods[p];
        if !pod.evicted_when_gone || pod.replace_on_release || pod.replaced {
            return;
        }
        // Deleted with no grace period (`gracePeriodSeconds: 0`, its own or
        // the deletion's), the pod left the API server at once: no kubelet
        // reports it.
        if pod.evicted_at == Some(self.now) {
            return;
        }
        let (j, task) = (pod.job, pod.task as usize);
        let job = &self.world.jobs[j];
        if !job.spec.hears_terminal_phase() || job.phase.is_terminal() || job.pg_deleted {
            return;
        }
        let t = &job.spec.tasks[task];
        match t.stop_code {
            // Succeeded: TaskCompleted once the task's pods, this one with
            // them, have all succeeded; else a sync that finds it terminating.
            0 => {
                if job.task_count(task, PodStatus::Succeeded) + 1 >= t.replicas {
                    self.raise_terminal(j, p, PolicyEvent::TaskCompleted, None);
                }
            }
            code => self.raise_terminal(j, p, PolicyEvent::PodFailed, Some(code)),
        }
    }
}
