//! Sub-groups of a job's pods: Volcano's PodGroup `subGroupPolicy`, which a
//! VolcanoJob task's `partitionPolicy` becomes (one policy per partitioned task,
//! one sub-job per partition). Each sub-job is a gang of its own (`subGroupSize`
//! pods) that may carry its own network topology; a policy's `minSubGroups` of
//! them must be ready for the job to be.
//!
//! A pod's sub-job is fixed when the job is read: it follows from its task and
//! replica index, as the pod's labels (`volcano.sh/partition-id`, or whatever the
//! policy's `matchLabelKeys` name) do in Volcano.

use crate::job::NetworkTopology;
use std::sync::Arc;

/// A job's sub-groups: its policies, its sub-jobs and which pods are in which.
#[derive(Clone, Debug, PartialEq)]
pub struct SubGroups {
    /// The PodGroup's `subGroupPolicy` entries, in order.
    pub policies: Vec<SubGroupPolicy>,
    /// Every sub-job (in Volcano's UID order: the default one, when some pod
    /// matches no policy, first).
    pub sub_jobs: Vec<SubJobSpec>,
    /// Per task of the job: the sub-jobs of its pods.
    pub tasks: Vec<TaskSubJobs>,
}

/// One `subGroupPolicy` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct SubGroupPolicy {
    /// `name` (a partitioned task's name).
    pub name: Arc<str>,
    /// `subGroupSize`: the sub-job's gang (`None`: 1, as Volcano reads a missing size).
    pub size: Option<u32>,
    /// `minSubGroups`: sub-jobs of this policy that must be ready (0: none).
    pub min_groups: u32,
    /// The sub-jobs' own `networkTopology`.
    pub network_topology: Option<NetworkTopology>,
}

/// One sub-job.
#[derive(Clone, Debug, PartialEq)]
pub struct SubJobSpec {
    /// Its policy; `None` for the default sub-job (pods no policy matches).
    pub policy: Option<u16>,
    /// Volcano's `MatchIndex`: the first match value read as an integer (a
    /// partition's id), else 0.
    pub match_index: i64,
    /// The rest of Volcano's sub-job UID after `<namespace>/<job>`: `""` for the
    /// default sub-job, `/<policy>-<values joined by ->` for the others. Sub-jobs
    /// that tie on every other key are ordered by it.
    pub key: String,
}

/// Where a task's pods go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskSubJobs {
    /// Every pod of the task is in this sub-job.
    Whole(u32),
    /// Pod `i` is in sub-job `first + i / size` (a VolcanoJob task's partitions).
    Partitions {
        /// The sub-job of the first partition.
        first: u32,
        /// `partitionSize`.
        size: u32,
    },
}

impl SubGroups {
    /// The sub-job of replica `index` of task `task`.
    pub fn of(&self, task: usize, index: u32) -> u32 {
        match self.tasks[task] {
            TaskSubJobs::Whole(s) => s,
            TaskSubJobs::Partitions { first, size } => first + index / size.max(1),
        }
    }
    /// Sub-job `s`'s gang: its policy's `subGroupSize`, else 1 (Volcano's
    /// `NewSubJobInfo` default, which the default sub-job of a job with
    /// policies keeps).
    pub fn min_available(&self, s: u32) -> u32 {
        self.sub_jobs[s as usize].policy.and_then(|p| self.policies[p as usize].size).unwrap_or(1)
    }
    /// Sub-job `s`'s network topology: its policy's, or for the default sub-job
    /// the job's (`job`).
    pub fn network_topology<'a>(&'a self, s: u32, job: Option<&'a NetworkTopology>) -> Option<&'a NetworkTopology> {
        match self.sub_jobs[s as usize].policy {
            Some(p) => self.policies[p as usize].network_topology.as_ref(),
            None => job,
        }
    }
    /// Sub-jobs per policy (the default sub-job in none).
    pub fn per_policy(&self) -> Vec<u32> {
        let mut n = vec![0; self.policies.len()];
        for sj in &self.sub_jobs {
            if let Some(p) = sj.policy {
                n[p as usize] += 1;
            }
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups() -> SubGroups {
        SubGroups {
            policies: vec![SubGroupPolicy {
                name: "worker".into(),
                size: Some(2),
                min_groups: 1,
                network_topology: Some(NetworkTopology { hard: true, highest_tier_allowed: Some(1) }),
            }],
            sub_jobs: vec![
                SubJobSpec { policy: None, match_index: 0, key: String::new() },
                SubJobSpec { policy: Some(0), match_index: 0, key: "/worker-0".into() },
                SubJobSpec { policy: Some(0), match_index: 1, key: "/worker-1".into() },
            ],
            tasks: vec![TaskSubJobs::Whole(0), TaskSubJobs::Partitions { first: 1, size: 2 }],
        }
    }

    #[test]
    fn pods_go_to_their_partition() {
        let g = groups();
        assert_eq!(g.of(0, 0), 0);
        assert_eq!([g.of(1, 0), g.of(1, 1), g.of(1, 2), g.of(1, 3)], [1, 1, 2, 2]);
        assert_eq!([g.min_available(0), g.min_available(1)], [1, 2]);
        assert_eq!(g.per_policy(), [2]);
        let job = NetworkTopology { hard: false, highest_tier_allowed: None };
        assert_eq!(g.network_topology(0, Some(&job)), Some(&job));
        assert_eq!(g.network_topology(2, Some(&job)).and_then(|t| t.highest_tier_allowed), Some(1));
    }
}
