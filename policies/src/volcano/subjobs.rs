//! A job's sub-jobs as Volcano's scheduler sees them (`SubJobInfo`): the sub-jobs
//! of its `subGroupPolicy` (see `lahar_core::model::subgroup`), or, for a job without
//! one, a single sub-job that is the whole job (Volcano's default sub-job, whose
//! gang is the job's `minAvailable` and whose topology is the job's).

use lahar_core::model::job::{JobId, NetworkTopology, PodId, PodStatus};
use lahar_core::model::resource::Resources;
use lahar_core::session::Session;

/// True if the job has a `subGroupPolicy` (Volcano's `ContainsSubJobPolicy`).
pub fn has_policy(ssn: &Session<'_>, j: JobId) -> bool {
    ssn.job(j).spec.sub_groups.is_some()
}

/// How many sub-jobs the job has (1 without a policy).
pub fn count(ssn: &Session<'_>, j: JobId) -> u32 {
    ssn.job(j).spec.sub_groups.as_ref().map_or(1, |g| g.sub_jobs.len() as u32)
}

/// The sub-job of pod `p`.
pub fn of_pod(ssn: &Session<'_>, p: PodId) -> u32 {
    let pod = ssn.pod(p);
    ssn.job(pod.job).sub_job_of(pod.task as usize, pod.index)
}

/// Sub-job `s`'s gang (`MinAvailable`).
pub fn min_available(ssn: &Session<'_>, j: JobId, s: u32) -> u32 {
    let job = ssn.job(j);
    job.spec.sub_groups.as_ref().map_or(job.spec.min_available, |g| g.min_available(s))
}

/// Sub-job `s`'s network topology as written (the default sub-job's is the job's).
pub fn topology<'a>(ssn: &'a Session<'_>, j: JobId, s: u32) -> Option<&'a NetworkTopology> {
    let spec = &ssn.job(j).spec;
    match &spec.sub_groups {
        Some(g) => g.network_topology(s, spec.network_topology.as_ref()),
        None => spec.network_topology.as_ref(),
    }
}

/// Pods of sub-job `s` in `st`.
pub fn status_count(ssn: &Session<'_>, j: JobId, s: u32, st: PodStatus) -> u32 {
    let job = ssn.job(j);
    if job.sub_jobs.is_empty() { job.count(st) } else { job.sub_count(s, st) }
}

/// `ReadyTaskNum` of sub-job `s`: Allocated + Running + Succeeded.
pub fn ready_count(ssn: &Session<'_>, j: JobId, s: u32) -> u32 {
    let job = ssn.job(j);
    if job.sub_jobs.is_empty() { job.ready_count() } else { job.sub_ready_count(s) }
}

/// The pods of sub-job `s` (current incarnation), in creation order.
pub fn pods<'a>(ssn: &'a Session<'_>, j: JobId, s: u32) -> impl Iterator<Item = PodId> + 'a {
    let job = ssn.job(j);
    let all = job.sub_jobs.is_empty();
    job.pods.iter().copied().filter(move |&p| {
        let pod = ssn.pod(p);
        all || job.sub_job_of(pod.task as usize, pod.index) == s
    })
}

/// Pending BestEffort pods of sub-job `s`.
pub fn pending_best_effort(ssn: &Session<'_>, j: JobId, s: u32) -> u32 {
    if ssn.job(j).pending_best_effort == 0 {
        return 0;
    }
    pods(ssn, j, s).filter(|&p| ssn.pod(p).status == PodStatus::Pending && ssn.pod(p).best_effort).count() as u32
}

/// Volcano's `SubJobInfo.IsReady`: ready + pending BestEffort ≥ its gang.
pub fn is_ready(ssn: &Session<'_>, j: JobId, s: u32) -> bool {
    ready_count(ssn, j, s) + pending_best_effort(ssn, j, s) >= min_available(ssn, j, s)
}

/// Volcano's `SubJobInfo.IsPipelined`: pipelined + ready + pending BestEffort ≥ its gang.
pub fn is_pipelined(ssn: &Session<'_>, j: JobId, s: u32) -> bool {
    status_count(ssn, j, s, PodStatus::Pipelined) + ready_count(ssn, j, s) + pending_best_effort(ssn, j, s)
        >= min_available(ssn, j, s)
}

/// Sub-job `s`'s pods in the scheduler's cache (every status but Deleted).
pub fn live_count(ssn: &Session<'_>, j: JobId, s: u32) -> u32 {
    let job = ssn.job(j);
    if job.sub_jobs.is_empty() { job.live_count() } else { job.sub_live_count(s) }
}

/// Volcano's `SubJobInfo.Priority`: the highest priority of its pods' tasks.
pub fn priority(ssn: &Session<'_>, j: JobId, s: u32) -> i32 {
    let job = ssn.job(j);
    let Some(g) = &job.spec.sub_groups else {
        return job.spec.tasks.iter().filter(|t| t.replicas > 0).map(|t| t.priority).max().unwrap_or(0);
    };
    let mut best: Option<i32> = None;
    for (t, task) in job.spec.tasks.iter().enumerate() {
        let holds = match g.tasks[t] {
            lahar_core::model::subgroup::TaskSubJobs::Whole(x) => x == s && task.replicas > 0,
            lahar_core::model::subgroup::TaskSubJobs::Partitions { first, size } => {
                s >= first && (s - first) * size.max(1) < task.replicas
            }
        };
        if holds {
            best = Some(best.map_or(task.priority, |b| b.max(task.priority)));
        }
    }
    best.unwrap_or(0)
}

/// Volcano's `SubJobInfo.GetMinResources`: Σ requests of its pending pods.
pub fn min_resources(ssn: &Session<'_>, j: JobId, s: u32) -> Resources {
    pods(ssn, j, s)
        .filter(|&p| ssn.pod(p).status == PodStatus::Pending)
        .fold(Resources::ZERO, |a, p| a + ssn.pod(p).req)
}

/// Volcano's default order of sub-jobs when no plugin decides: `MatchIndex`, then UID.
pub fn default_order(ssn: &Session<'_>, j: JobId, l: u32, r: u32) -> std::cmp::Ordering {
    match &ssn.job(j).spec.sub_groups {
        None => std::cmp::Ordering::Equal,
        Some(g) => {
            let (a, b) = (&g.sub_jobs[l as usize], &g.sub_jobs[r as usize]);
            a.match_index.cmp(&b.match_index).then_with(|| a.key.cmp(&b.key))
        }
    }
}
