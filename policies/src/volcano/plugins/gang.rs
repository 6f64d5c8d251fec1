//! `gang`: all-or-nothing by `minAvailable` (and per-task `minTaskMember`).
//! Jobs that are not ready come first; victims never take a job below its
//! `minAvailable`.

use super::super::plugin::{EvictKind, Hooks, Plugin, PluginSpec, Vote};
use super::super::subjobs;
use super::pending_best_effort;
use lahar_core::model::job::{JobId, PodId, PodStatus};
use lahar_core::session::Session;
use lahar_core::world::{ReachFacts, VictimKey};
use std::cmp::Ordering;

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec = PluginSpec::new("gang", |_| Box::new(Gang));

/// The gang plugin (no arguments).
pub struct Gang;

fn roles_checked(ssn: &Session<'_>, j: JobId) -> bool {
    let spec = &ssn.job(j).spec;
    spec.min_available >= spec.tasks.iter().map(|t| t.min_available).sum::<u32>()
}

/// Pods of task `t`'s role (every task of it, see `JobSpec::roles`) in `statuses`.
fn role_count(ssn: &Session<'_>, j: JobId, t: usize, statuses: &[PodStatus]) -> u32 {
    let job = ssn.job(j);
    job.spec.role_tasks(t).map(|u| statuses.iter().map(|&s| job.task_count(u, s)).sum::<u32>()).sum()
}

/// Each role holds its `minTaskMember` in `statuses` or as pending BestEffort
/// pods (Volcano's `getJobAllocatedRoles`: a Pending pod with an empty request
/// counts), when the gang covers all roles' minimums (`CheckTaskReady`,
/// `CheckTaskPipelined`).
fn roles_hold(ssn: &Session<'_>, j: JobId, statuses: &[PodStatus]) -> bool {
    let job = ssn.job(j);
    !roles_checked(ssn, j)
        || (0..job.spec.tasks.len()).all(|t| {
            let best_effort = job
                .spec
                .role_tasks(t)
                .filter(|&u| job.spec.tasks[u].requests.is_best_effort())
                .map(|u| job.task_count(u, PodStatus::Pending))
                .sum::<u32>();
            role_count(ssn, j, t, statuses) + best_effort >= job.spec.tasks[t].min_available
        })
}

/// Gang readiness (`CheckTaskReady && CheckSubJobReady && IsReady`): `Ready +
/// pending BestEffort ≥ minAvailable`, each role's `minTaskMember`, and each
/// sub-group policy's `minSubGroups` ready sub-jobs.
pub fn ready(ssn: &Session<'_>, j: JobId) -> bool {
    let job = ssn.job(j);
    if job.ready_count() + pending_best_effort(ssn, j) < job.spec.min_available {
        return false;
    }
    roles_hold(ssn, j, &[PodStatus::Allocated, PodStatus::Running, PodStatus::Succeeded])
        && sub_jobs_reach(ssn, j, subjobs::is_ready)
}

/// Gang's pipelined vote (`CheckTaskPipelined && CheckSubJobPipelined &&
/// IsPipelined`): waiting + ready + pending BestEffort pods reach `minAvailable`,
/// each role its `minTaskMember` counting pipelined pods too, and with sub-group
/// policies `minSubGroups` pipelined sub-jobs per policy. tdm's vote is
/// `IsPipelined` alone ([`pipelined_count`]).
pub fn pipelined(ssn: &Session<'_>, j: JobId) -> bool {
    pipelined_count(ssn, j)
        && roles_hold(ssn, j, &[PodStatus::Allocated, PodStatus::Running, PodStatus::Succeeded, PodStatus::Pipelined])
        && sub_jobs_reach(ssn, j, subjobs::is_pipelined)
}

/// Volcano's `JobInfo.IsPipelined`: waiting + ready + pending BestEffort pods
/// reach `minAvailable`.
pub fn pipelined_count(ssn: &Session<'_>, j: JobId) -> bool {
    let job = ssn.job(j);
    job.waiting_count() + job.ready_count() + pending_best_effort(ssn, j) >= job.spec.min_available
}

/// Volcano's `checkSubJobCondition`: each policy with `minSubGroups` > 0 has that
/// many sub-jobs meeting `cond`.
fn sub_jobs_reach(ssn: &Session<'_>, j: JobId, cond: fn(&Session<'_>, JobId, u32) -> bool) -> bool {
    let Some(g) = &ssn.job(j).spec.sub_groups else { return true };
    let mut met = vec![0u32; g.policies.len()];
    for (s, sj) in g.sub_jobs.iter().enumerate() {
        if let Some(p) = sj.policy.filter(|&p| g.policies[p as usize].min_groups > 0)
            && subjobs::live_count(ssn, j, s as u32) > 0
            && cond(ssn, j, s as u32)
        {
            met[p as usize] += 1;
        }
    }
    g.policies.iter().zip(&met).all(|(p, &m)| m >= p.min_groups)
}

impl Plugin for Gang {
    fn name(&self) -> &'static str {
        "gang"
    }
    fn hooks(&self) -> Hooks {
        Hooks::JOB_ORDER
            .and(Hooks::PREEMPTABLE)
            .and(Hooks::RECLAIMABLE)
            .and(Hooks::RECLAIM_IGNORES_RECLAIMER)
            .and(Hooks::NEVER_ABSTAINS)
    }
    fn job_valid(&self, ssn: &Session<'_>, j: JobId) -> Option<Result<(), String>> {
        let job = ssn.job(j);
        if roles_checked(ssn, j) {
            let st = [
                PodStatus::Allocated,
                PodStatus::Running,
                PodStatus::Succeeded,
                PodStatus::Pipelined,
                PodStatus::Pending,
            ];
            for (t, task) in job.spec.tasks.iter().enumerate() {
                if job.tasks[t].created && role_count(ssn, j, t, &st) < task.min_available {
                    return Some(Err(format!(
                        "NotEnoughPodsOfTask: task {} has fewer than {} pods",
                        task.name, task.min_available
                    )));
                }
            }
        }
        // Volcano's `CheckSubJobValid`: each policy has `minSubGroups` sub-jobs
        // (a sub-job exists while one of its pods does).
        if let Some(g) = &job.spec.sub_groups {
            let mut n = vec![0u32; g.policies.len()];
            for (s, sj) in g.sub_jobs.iter().enumerate() {
                if let Some(p) = sj.policy
                    && subjobs::live_count(ssn, j, s as u32) > 0
                {
                    n[p as usize] += 1;
                }
            }
            if let Some((p, &have)) = g.policies.iter().zip(&n).find(|(p, have)| **have < p.min_groups) {
                return Some(Err(format!(
                    "NotEnoughPodsOfTask: sub-group policy {} has {have} sub-groups, fewer than minSubGroups {}",
                    p.name, p.min_groups
                )));
            }
        }
        if job.valid_count() < job.spec.min_available {
            return Some(Err(format!(
                "NotEnoughTasks: {} valid pods, minAvailable {}",
                job.valid_count(),
                job.spec.min_available
            )));
        }
        Some(Ok(()))
    }
    fn job_order_key(&self, ssn: &Session<'_>, j: JobId) -> Option<f64> {
        // Not ready (0) before ready (1).
        Some(ready(ssn, j) as u8 as f64)
    }
    fn job_order_key_of_facts(&self, _: &Session<'_>, f: &ReachFacts) -> Option<f64> {
        // Ready pods and pending BestEffort ones are within `base`: below
        // minAvailable, the job is not ready.
        (f.base < f.min).then_some(0.0)
    }
    fn job_order(&self, ssn: &Session<'_>, l: JobId, r: JobId) -> Option<Ordering> {
        // Not ready before ready.
        Some(ready(ssn, l).cmp(&ready(ssn, r)))
    }
    fn job_ready(&self, ssn: &Session<'_>, j: JobId) -> Option<bool> {
        Some(ready(ssn, j))
    }
    fn job_pipelined(&self, ssn: &Session<'_>, j: JobId) -> Option<Vote> {
        Some(if pipelined(ssn, j) { 1 } else { -1 })
    }
    fn sub_job_ready(&self, ssn: &Session<'_>, j: JobId, s: u32) -> Option<bool> {
        Some(subjobs::is_ready(ssn, j, s))
    }
    fn sub_job_pipelined(&self, ssn: &Session<'_>, j: JobId, s: u32) -> Option<Vote> {
        Some(if subjobs::is_pipelined(ssn, j, s) { 1 } else { -1 })
    }
    fn sub_job_order(&self, ssn: &Session<'_>, j: JobId, l: u32, r: u32) -> Option<Ordering> {
        // Not ready before ready.
        Some(subjobs::is_ready(ssn, j, l).cmp(&subjobs::is_ready(ssn, j, r)))
    }
    fn job_starving(&self, ssn: &Session<'_>, j: JobId) -> Option<bool> {
        let job = ssn.job(j);
        Some(job.waiting_count() + job.ready_count() < job.spec.min_available)
    }
    fn victim_group_ok(&self, _: &Session<'_>, _: PodId, _: bool, key: VictimKey) -> Option<bool> {
        // Only jobs with more ready pods than minAvailable lose pods.
        Some(key.over_min)
    }
    fn preemptable(&self, ssn: &Session<'_>, _preemptor: PodId, cands: &[PodId]) -> Option<Vec<PodId>> {
        Some(protect_min_available(ssn, cands))
    }
    fn reclaimable(&self, ssn: &Session<'_>, _reclaimer: PodId, cands: &[PodId]) -> Option<Vec<PodId>> {
        Some(protect_min_available(ssn, cands))
    }
    fn unified_evictable(&self, _: &Session<'_>, _: EvictKind, _: JobId, cands: &[PodId]) -> Option<Vec<PodId>> {
        // The gang actions' bundles keep gangs whole or take them whole.
        Some(cands.to_vec())
    }
}

fn protect_min_available(ssn: &Session<'_>, cands: &[PodId]) -> Vec<PodId> {
    // Per job, its ready pods left.
    let mut left: Vec<(JobId, u32)> = Vec::new();
    let mut out = Vec::new();
    for &c in cands {
        let j = ssn.pod(c).job;
        let n = super::per_job(&mut left, j, || ssn.job(j).ready_count());
        if *n > ssn.job(j).spec.min_available {
            *n -= 1;
            out.push(c);
        }
    }
    out
}
