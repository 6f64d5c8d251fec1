//! The timeline's operators' actions ([`crate::timeline`]) as the engine carries
//! them out.

use super::controller::Lifecycle;
use super::{EndReason, Engine};

use crate::model::job::{JobEnd, JobPhase, PodGroupPhase, PodStatus, PolicyAction, PolicyEvent};

use crate::model::ids::{JobId, PodId};
use crate::record::{OperationRecord, Outcome};
use crate::timeline::Operation;
use crate::util::time::SimDuration;
use crate::world::Suspension;

impl Engine {
    /// Carries out the timeline's action `k`.
    pub(super) fn operate(&mut self, k: usize) {
        let step = self.cfg.timeline[k].clone();
        self.operated = k + 1;
        let cordon = matches!(step.op, Operation::Cordon(_));
        let acted = match step.op {
            Operation::DeletePod { namespace, name, grace } => match self.find_pod(&namespace, &name) {
                Some(p) => {
                    self.delete_pod(p, grace);
                    true
                }
                None => self.missed(format!("no pod {namespace}/{name} to delete")),
            },
            Operation::DeleteJob { namespace, name } => match self.find_job(&namespace, &name) {
                Some(j) => {
                    let live = self.live_pods(j);
                    self.end_job(j, JobPhase::Terminated, EndReason::Killed, JobEnd::Deleted);
                    self.done(deleted(live))
                }
                None => self.missed(format!("no job {namespace}/{name} to delete")),
            },
            Operation::SuspendJob { namespace, name } => match self.find_job(&namespace, &name) {
                Some(j) if !self.is_vcjob(j) => self.ignored(self.not_a_vcjob(j, "suspend")),
                Some(j) => match self.world.jobs[j].suspension {
                    Suspension::Aborted => self.ignored(format!("job {namespace}/{name} is already suspended")),
                    // Volcano's Restarting state kills the job whole for any command.
                    _ if self.world.jobs[j].phase == JobPhase::Restarting => {
                        self.apply_policy(j, None, None, Some(PolicyAction::AbortJob));
                        true
                    }
                    _ => {
                        let live = self.live_pods(j);
                        self.abort(j, JobEnd::Suspended);
                        self.done(deleted(live))
                    }
                },
                None => self.missed(format!("no job {namespace}/{name} to suspend")),
            },
            Operation::ResumeJob { namespace, name } => match self.find_job(&namespace, &name) {
                Some(j) if !self.is_vcjob(j) => self.ignored(self.not_a_vcjob(j, "resume")),
                Some(j) if self.world.jobs[j].suspension == Suspension::Aborted => {
                    self.resume(j);
                    true
                }
                // The Restarting state kills the job whole (`KillJob`).
                Some(j) if self.world.jobs[j].phase == JobPhase::Restarting => {
                    self.apply_policy(j, None, None, Some(PolicyAction::ResumeJob));
                    true
                }
                // Any other state syncs the job: nothing changes.
                Some(j) => {
                    let phase = self.world.jobs[j].phase.as_str();
                    self.ignored(format!("job {namespace}/{name} is {phase}, not Aborted: nothing to resume"))
                }
                None => self.missed(format!("no job {namespace}/{name} to resume")),
            },
            Operation::ScaleJob { namespace, name, task, replicas, task_min_available, min_available } => {
                match self.find_job(&namespace, &name) {
                    Some(j) => {
                        let sizes = (replicas, task_min_available, min_available);
                        match self.scale(j, task.as_deref(), sizes) {
                            Ok(()) => true,
                            Err(why) => self.ignored(format!("job {namespace}/{name}: {why}")),
                        }
                    }
                    None => self.missed(format!("no job {namespace}/{name} to scale")),
                }
            }
            Operation::Queue { queue, weight, state, reclaimable, capability } => {
                let spec = &mut self.world.queues[queue].spec;
                if let Some(w) = weight {
                    spec.weight = w;
                }
                if let Some(s) = state {
                    spec.state = s;
                }
                if let Some(r) = reclaimable {
                    spec.reclaimable = r;
                }
                if let Some(c) = capability {
                    spec.capability = c;
                }
                true
            }
            Operation::Taint { nodes, taint } => {
                let mut evicted = 0;
                for n in nodes {
                    self.world.put_taint(n, taint.clone());
                    if taint.effect == "NoExecute" {
                        evicted += self.evict_untolerating(n, &taint);
                    }
                }
                self.done(deleted(evicted))
            }
            Operation::Untaint { nodes, key, effect } => {
                let mut any = false;
                for n in nodes {
                    any |= self.world.remove_taints(n, &key, effect.as_deref());
                }
                any || self.missed(format!("no node of the pattern has a taint `{key}` to remove"))
            }
            Operation::Label { nodes, key, value } => {
                let mut any = false;
                for n in nodes {
                    any |= self.world.set_label(n, &key, value.as_deref());
                }
                match value {
                    _ if any => true,
                    Some(v) => self.ignored(format!("every node of the pattern has the label {key}={v} already")),
                    None => self.missed(format!("no node of the pattern has a label `{key}` to remove")),
                }
            }
            Operation::AddNodes(nodes) => {
                let mut any = false;
                for n in nodes {
                    any |= self.bring_in(n);
                }
                any || self.ignored("every node of the pattern is in the cluster already".into())
            }
            Operation::RemoveNodes(nodes) => {
                let (mut any, mut gone) = (false, 0);
                for n in nodes {
                    if let Some(k) = self.take_out(n) {
                        any = true;
                        gone += k;
                    }
                }
                if any {
                    self.done(deleted(gone))
                } else {
                    self.ignored("no node of the pattern is in the cluster".into())
                }
            }
            Operation::Ungate { namespace, name, job, gates } => {
                self.ungate((&namespace, &name), job, gates.as_deref())
            }
            Operation::Cordon(nodes) | Operation::Uncordon(nodes) => {
                for n in nodes {
                    self.operator_cordon(n, cordon);
                }
                true
            }
            Operation::Conf(i) => match self.reloads.get(i as usize).map(|make| make()) {
                Some(s) => {
                    self.reconfigure(s);
                    true
                }
                None => self.ignored(format!("no scheduler conf #{i} to reload")),
            },
        };
        // An action that found nothing changed nothing: no session for it.
        self.dirty |= acted;
        let (outcome, note) = self.step_note.take().unwrap_or((Outcome::Done, String::new()));
        let stated = || (step.place.clone(), format!("at {}s: {note}", self.now.secs_string()));
        match outcome {
            Outcome::Missed => self.stats.timeline_missed.push(stated()),
            Outcome::Ignored => self.stats.timeline_ignored.push(stated()),
            Outcome::Done => {}
        }
        let r =
            OperationRecord { t: self.now, step: step.place, action: step.action, target: step.target, outcome, note };
        match &mut self.recorder {
            Some(rec) => rec.operated(&self.world, &r),
            None => self.operations_out.push(r),
        }
    }

    /// The scheduler's conf edited: Volcano's scheduler reloads it
    /// (`watchSchedulerConf`, `loadSchedulerConf`) and its next `runOnce` opens
    /// its session with the new actions, plugins and arguments. Plugins are made
    /// anew each session in Volcano, so nothing of the old scheduler carries
    /// over: the new one starts with no memo of earlier sessions, and the
    /// World's journals of changed jobs start again (a scheduler that keeps its
    /// own view of the jobs walks them all at its first session). What the
    /// controllers read of the scheduler (gang's unschedulable marks) follows.
    fn reconfigure(&mut self, s: Box<dyn crate::session::Scheduler>) {
        self.marks_unschedulable = s.marks_unschedulable();
        self.admits_pod_groups = s.admits_pod_groups();
        self.scheduler = s;
        if !self.cfg.planted.kept_journals {
            self.world.restart_journals();
        }
    }

    /// Volcano's AbortJob (a policy's, or `vcctl job suspend`): the job's pods
    /// are killed and its PodGroup deleted (`killJob`, which keeps Succeeded and
    /// Failed pods). An Aborted job stays until resumed or deleted; lahar ends it
    /// (Aborting, then Aborted once its killed pods are gone, its row written
    /// then) unless a later step of the timeline resumes it, and otherwise holds
    /// it as [`Suspension::Aborted`].
    pub(super) fn abort(&mut self, j: JobId, cause: JobEnd) {
        if !self.resumed_later(j) {
            return self.end_job_when_gone(j, JobPhase::Aborted, cause);
        }
        self.stop_progress(j, true);
        self.kill_for_good(j, EndReason::Killed);
        self.set_phase(j, JobPhase::Restarting);
        let job = &mut self.world.jobs[j];
        job.suspension = Suspension::Aborted;
        job.restart_all = true;
        job.pg_deleted = true;
        job.version += 1;
        self.world.set_pg_phase(j, PodGroupPhase::Pending);
        self.dirty = true;
    }

    /// Whether job `j` is a VolcanoJob, the only kind `vcctl job suspend` and
    /// `resume` reach (their Command names a `batch.volcano.sh` Job).
    fn is_vcjob(&self, j: JobId) -> bool {
        &*self.world.jobs[j].spec.kind == "VolcanoJob"
    }

    /// Why `vcctl job {verb}` of job `j`, not a VolcanoJob, changes nothing.
    fn not_a_vcjob(&self, j: JobId, verb: &str) -> String {
        let s = &self.world.jobs[j].spec;
        format!("job {}/{} is a {}: `vcctl job {verb}` acts on VolcanoJobs only", s.namespace, s.name, s.kind)
    }

    /// True if a step of the timeline still to come resumes job `j`.
    fn resumed_later(&self, j: JobId) -> bool {
        let s = &self.world.jobs[j].spec;
        self.cfg.timeline[self.operated..].iter().any(|step| {
            matches!(&step.op, Operation::ResumeJob { namespace, name } if *namespace == s.namespace && *name == s.name)
        })
    }

    /// `vcctl job resume` of an Aborted job (Volcano's Aborted state): Restarting
    /// with one more retry — Failed if that reaches `maxRetry` — killed whole
    /// (`killJob` with `PodRetainPhaseSoft`: its Succeeded and Failed pods
    /// stay), with a new PodGroup at once and each pod it is missing made once
    /// its old one is gone and the group admitted ([`Engine::kill_whole`]).
    fn resume(&mut self, j: JobId) {
        self.world.jobs[j].suspension = Suspension::Resuming;
        if !self.count_retry(j) {
            return;
        }
        self.kill_whole(j, true, false);
    }

    /// A VolcanoJob's gang sizes edited (`sizes`: task `task`'s replicas and
    /// minAvailable, the job's minAvailable; `None` keeps one). Volcano's webhook
    /// checks the edit (`validateJobUpdate`: an error here, nothing changes); the
    /// controller's `updateJob` → `syncJob` updates the PodGroup (`minMember`,
    /// `minResources`) and, once the group has left Pending, makes the missing
    /// replicas and deletes those above the new count (each deletion heard as
    /// `PodEvicted`, as its `deletePod` handler raises it). While the group is
    /// Pending the new replicas are made at its admission.
    fn scale(
        &mut self,
        j: JobId,
        task: Option<&str>,
        sizes: (Option<u32>, Option<u32>, Option<u32>),
    ) -> Result<(), String> {
        let spec = &self.world.jobs[j].spec;
        if !self.is_vcjob(j) {
            return Err(format!("a {} is scaled by its own operator, which lahar does not model", spec.kind));
        }
        if spec.sub_groups.is_some() {
            return Err("a job with partitions or sub-groups is not rescaled by lahar".to_string());
        }
        let t = match task {
            Some(name) => {
                spec.tasks.iter().position(|t| &*t.name == name).ok_or_else(|| format!("no task `{name}`"))?
            }
            None if spec.tasks.len() == 1 => 0,
            None => return Err(format!("the job has {} tasks: name one with `task`", spec.tasks.len())),
        };
        let ts = &spec.tasks[t];
        let replicas = sizes.0.unwrap_or(ts.replicas);
        let task_min = sizes.1.unwrap_or(ts.min_available);
        let job_min = sizes.2.unwrap_or(spec.min_available);
        // The webhook's checks, with its messages.
        if task_min > replicas {
            return Err(format!("refused: 'minAvailable' must be <= 'replicas' in task: {}", ts.name));
        }
        let total: u64 =
            spec.tasks.iter().enumerate().map(|(u, x)| u64::from(if u == t { replicas } else { x.replicas })).sum();
        if u64::from(job_min) > total {
            return Err("refused: job 'minAvailable' must not be greater than total replicas".to_string());
        }
        if total > u64::from(crate::model::job::MAX_PODS_PER_JOB) {
            return Err(format!(
                "refused: {total} pods exceed the limit of {} per job",
                crate::model::job::MAX_PODS_PER_JOB
            ));
        }
        let old = ts.replicas;
        self.world.rescale(j, t, replicas, task_min, job_min);
        self.dirty = true;
        // A gang grown beyond the pods it runs waits for its new members without
        // losing its work: nothing of it stopped (its own pods' deletions below
        // lose work as any deletion does).
        let job = &self.world.jobs[j];
        let runs = job.count(PodStatus::Running) + job.count(PodStatus::Succeeded) >= job.spec.min_available.max(1);
        if job.is_progressing() && !runs {
            self.stop_progress(j, false);
            self.set_phase(j, JobPhase::Pending);
        }
        let job = &self.world.jobs[j];
        // A restart in progress, or a task not made yet, makes the new count.
        if job.phase == JobPhase::Restarting || !job.tasks[t].created {
            return Ok(());
        }
        if replicas > old {
            if self.holds_pods(j) {
                self.world.jobs[j].pods_missing += replicas - old;
            } else {
                for i in old..replicas {
                    let p = self.world.create_pod(j, t, i, self.now);
                    self.pod_made(p);
                }
            }
        }
        let above: Vec<PodId> = self.world.jobs[j]
            .pods
            .iter()
            .copied()
            .filter(|&p| {
                let pod = &self.world.pods[p];
                pod.task as usize == t && pod.index >= replicas
            })
            .collect();
        for p in above {
            // A deletion's policy may have restarted or ended the job, its pods
            // then gone or killed already.
            let job = &self.world.jobs[j];
            if job.phase.is_terminal() || job.phase == JobPhase::Restarting || !job.pods.contains(&p) {
                break;
            }
            match self.world.pods[p].status {
                PodStatus::Running | PodStatus::Pending => self.delete_pod(p, None),
                // Ended pods are deleted quietly: nothing runs, nothing is heard.
                PodStatus::Succeeded | PodStatus::Failed => {
                    self.delete_ended(p);
                    self.world.jobs[j].pods.retain(|&q| q != p);
                    self.forget_pod(p);
                }
                _ => {}
            }
        }
        self.refresh_job_keeping_phase(j);
        self.phase_due.push(j);
        Ok(())
    }

    /// Notes that the step changes nothing, as in Volcano (the
    /// `timeline-action-ignored` warning, its timeline.csv row); false.
    fn ignored(&mut self, what: String) -> bool {
        self.step_note = Some((Outcome::Ignored, what));
        false
    }

    /// Notes what a step done deleted or killed (its timeline.csv note, if
    /// not empty); true.
    fn done(&mut self, what: String) -> bool {
        if !what.is_empty() {
            self.step_note = Some((Outcome::Done, what));
        }
        true
    }

    /// Job `j`'s pods not ended yet (Pending, Pipelined or Running): what
    /// deleting or suspending it kills.
    fn live_pods(&self, j: JobId) -> usize {
        let job = &self.world.jobs[j];
        job.pods
            .iter()
            .filter(|&&p| {
                matches!(self.world.pods[p].status, PodStatus::Pending | PodStatus::Pipelined | PodStatus::Running)
            })
            .count()
    }

    /// Notes that the step found nothing to act on (the
    /// `timeline-target-missing` warning, its timeline.csv row); false.
    fn missed(&mut self, what: String) -> bool {
        self.step_note = Some((Outcome::Missed, what));
        false
    }

    /// The active job `namespace/name`, if one is submitted and not ended.
    fn find_job(&self, namespace: &str, name: &str) -> Option<JobId> {
        self.world.active.iter().copied().find(|&j| {
            let s = &self.world.jobs[j].spec;
            &*s.namespace == namespace && s.name == name
        })
    }

    /// The live pod `namespace/name` (not yet gone) of an active job.
    fn find_pod(&self, namespace: &str, name: &str) -> Option<PodId> {
        self.world.active.iter().find_map(|&j| {
            let job = &self.world.jobs[j];
            if &*job.spec.namespace != namespace {
                return None;
            }
            job.pods.iter().copied().find(|&p| {
                let pod = &self.world.pods[p];
                matches!(pod.status, PodStatus::Pending | PodStatus::Running)
                    && job.spec.pod_name(pod.task as usize, pod.index) == name
            })
        })
    }

    /// Removes scheduling gates (`gates`, or all) from the pod `namespace/name`,
    /// or from every live pod of the job of that name (`job`); true if one went.
    /// A target missing, or one with none of those gates, is a counted warning.
    fn ungate(&mut self, (namespace, name): (&str, &str), job: bool, gates: Option<&[String]>) -> bool {
        let what = if job { "job" } else { "pod" };
        let pods: Vec<PodId> = if job {
            match self.find_job(namespace, name) {
                Some(j) => self.world.jobs[j].pods.clone(),
                None => return self.missed(format!("no job {namespace}/{name} to ungate")),
            }
        } else {
            match self.find_pod(namespace, name) {
                Some(p) => vec![p],
                None => return self.missed(format!("no pod {namespace}/{name} to ungate")),
            }
        };
        let mut any = false;
        for p in pods {
            let pod = &self.world.pods[p];
            if pod.status != PodStatus::Pending || !pod.is_gated() {
                continue;
            }
            let task = &self.world.jobs[pod.job].spec.tasks[pod.task as usize];
            let mask = match gates {
                None => u16::MAX,
                Some(names) => task
                    .scheduling_gates()
                    .iter()
                    .enumerate()
                    .filter(|(_, g)| names.contains(g))
                    .fold(0u16, |m, (i, _)| m | 1 << i),
            };
            any |= self.world.ungate(p, mask);
        }
        let which = gates.map_or("scheduling gates".to_string(), |g| format!("the scheduling gates {}", g.join(", ")));
        let none = if job { "has no Pending pod with" } else { "is not a Pending pod with" };
        any || self.ignored(format!("{what} {namespace}/{name} {none} {which} to remove"))
    }

    /// A pod deleted by an operator: a Running pod leaves its node after its
    /// grace period, a Pending one at once; the job controller hears PodEvicted
    /// (Volcano's `deletePod` handler) and, without a policy, makes it again.
    pub(super) fn delete_pod(&mut self, p: PodId, grace: Option<SimDuration>) {
        let pod = &self.world.pods[p];
        let (j, task) = (pod.job, pod.task as usize);
        if pod.status == PodStatus::Running {
            return self.on(Lifecycle::PodDeleted(p, grace));
        }
        self.world.transition(p, PodStatus::Deleted, None);
        let quiet = self.serving.quiet.remove(&p);
        if self.world.jobs[j].phase != JobPhase::Restarting && !quiet {
            self.raise(j, Some(p), Some(task), PolicyEvent::PodEvicted);
        }
        self.refresh_job_keeping_phase(j);
        self.phase_due.push(j);
    }

    /// A `NoExecute` taint on node `n`: Kubernetes' taint manager deletes each
    /// pod there that does not tolerate it (a deletion, as [`Engine::delete_pod`]:
    /// the job controller hears PodEvicted). lahar's tolerations have no
    /// `tolerationSeconds`: a tolerating pod stays for good.
    fn evict_untolerating(&mut self, n: crate::model::ids::NodeId, taint: &crate::model::cluster::Taint) -> usize {
        let jobs = &self.world.jobs;
        let pods = self.world.pods_on(n, |pod| {
            let task = &jobs[pod.job].spec.tasks[pod.task as usize];
            pod.status == PodStatus::Running && !task.tolerations.iter().any(|t| t.tolerates(taint))
        });
        let count = pods.len();
        for p in pods {
            self.delete_pod(p, None);
        }
        count
    }

    /// Node `n` leaves the cluster (`kubectl delete node`, or absent from the
    /// start): the pod garbage collector deletes the pods still on it at once
    /// (`gcOrphaned`, no grace period; the job controller hears PodEvicted for
    /// each), and its capacity is out of the scheduler's view (the cluster's
    /// total shrinks). The pods deleted with it; `None` if it was out already.
    pub(super) fn take_out(&mut self, n: crate::model::ids::NodeId) -> Option<usize> {
        let i = n.0 as usize;
        if self.absent[i] {
            return None;
        }
        let pods = self.world.pods_on(n, |pod| matches!(pod.status, PodStatus::Running | PodStatus::Releasing));
        let count = pods.len();
        for p in pods {
            self.on(Lifecycle::PodDeletedWithNode(p));
        }
        self.absent[i] = true;
        self.absent_gpu_milli += self.world.nominal_allocatable(n).gpu_milli();
        self.set_service(n);
        self.dirty = true;
        Some(count)
    }

    /// Node `n` joins the cluster with its declared capacity (less what faults
    /// in force hold out). False if it was in already.
    fn bring_in(&mut self, n: crate::model::ids::NodeId) -> bool {
        let i = n.0 as usize;
        if !self.absent[i] {
            return false;
        }
        self.absent[i] = false;
        self.absent_gpu_milli -= self.world.nominal_allocatable(n).gpu_milli();
        self.set_service(n);
        true
    }

    /// An operator's cordon (`on`) or uncordon: a drain in force keeps its own
    /// cordon until it ends; an operator's cordon outlasts a drain's end.
    fn operator_cordon(&mut self, n: crate::model::ids::NodeId, on: bool) {
        let i = n.0 as usize;
        let drains = self.faults.cordons.get(i).copied().unwrap_or(0);
        if let Some(w) = self.faults.was_cordoned.get_mut(i) {
            *w = on;
        }
        if drains == 0 {
            self.world.set_cordoned(n, on);
        }
    }
}

/// A step's note for `n` pods it deleted or killed: empty for none.
fn deleted(n: usize) -> String {
    match n {
        0 => String::new(),
        1 => "1 pod deleted".to_string(),
        n => format!("{n} pods deleted"),
    }
}
