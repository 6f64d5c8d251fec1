//! Sub-groups of a job's pods: Volcano's PodGroup `subGroupPolicy`, which a
//! VolcanoJob task's `partitionPolicy` becomes (one policy per partitioned task,
//! one sub-job per partition). Each sub-job is a gang of its own (`subGroupSize`
//! pods) that may carry its own network topology; a policy's `minSubGroups` of
//! them must be ready for the job to be.
//!
//! A pod's sub-job is fixed when the job is read: it follows from its task and
//! replica index, as the pod's labels (`volcano.sh/partition-id`, or whatever the
//! policy's `matchLabelKeys` name) do in Volcano.

use crate::model::topology::NetworkTopology;
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
}

/// Where a task's pods go, before sub-jobs are numbered.
pub enum TaskKey {
    /// Every pod in one sub-job (`None`: the default one).
    Whole(Option<(u16, Vec<String>)>),
    /// A VolcanoJob task's partitions under policy `policy`.
    Partitions {
        /// The task's policy.
        policy: u16,
        /// `totalPartitions`.
        total: u32,
        /// `partitionSize`.
        size: u32,
    },
}

/// Numbers the sub-jobs: the default one first (when a task has pods in it), then
/// each policy's, a VolcanoJob task's in partition order, a PodGroup's by Volcano's
/// own order (first value read as an integer, then the values).
pub fn assemble(policies: Vec<SubGroupPolicy>, tasks: &[TaskKey]) -> SubGroups {
    let index = |v: &[String]| v.first().and_then(|x| x.parse::<i64>().ok()).unwrap_or(0);
    let key = |p: u16, v: &[String]| format!("/{}-{}", policies[p as usize].name, v.join("-"));
    let mut sub_jobs: Vec<SubJobSpec> = Vec::new();
    if tasks.iter().any(|t| matches!(t, TaskKey::Whole(None))) {
        sub_jobs.push(SubJobSpec { policy: None, match_index: 0, key: String::new() });
    }
    let mut labelled: Vec<(u16, &Vec<String>)> =
        tasks.iter().filter_map(|t| if let TaskKey::Whole(Some((p, v))) = t { Some((*p, v)) } else { None }).collect();
    labelled.sort_by_key(|a| (a.0, index(a.1), key(a.0, a.1)));
    labelled.dedup();
    let mut out_tasks = Vec::with_capacity(tasks.len());
    let mut firsts: Vec<Option<u32>> = vec![None; tasks.len()];
    for p in 0..policies.len() as u16 {
        for &(q, v) in labelled.iter().filter(|(q, _)| *q == p) {
            sub_jobs.push(SubJobSpec { policy: Some(q), match_index: index(v), key: key(q, v) });
        }
        for (i, t) in tasks.iter().enumerate() {
            if let &TaskKey::Partitions { policy, total, .. } = t
                && policy == p
            {
                firsts[i] = Some(sub_jobs.len() as u32);
                for k in 0..total {
                    let v = [k.to_string()];
                    sub_jobs.push(SubJobSpec { policy: Some(p), match_index: i64::from(k), key: key(p, &v) });
                }
            }
        }
    }
    for (i, t) in tasks.iter().enumerate() {
        out_tasks.push(match t {
            TaskKey::Whole(None) => TaskSubJobs::Whole(0),
            TaskKey::Whole(Some((p, v))) => {
                let k = key(*p, v);
                let s = sub_jobs.iter().position(|s| s.policy == Some(*p) && s.key == k).expect("numbered above");
                TaskSubJobs::Whole(s as u32)
            }
            &TaskKey::Partitions { size, .. } => {
                TaskSubJobs::Partitions { first: firsts[i].expect("numbered above"), size }
            }
        });
    }
    SubGroups { policies, sub_jobs, tasks: out_tasks }
}

/// A VolcanoJob task's `partitionPolicy` (Volcano's `PartitionPolicySpec`), as
/// admitted: `total × size` is the task's replicas.
#[derive(Clone, Debug, PartialEq)]
pub struct Partition {
    /// `totalPartitions`.
    pub total: u32,
    /// `partitionSize`.
    pub size: u32,
    /// `minPartitions` (0 when absent).
    pub min: u32,
    /// `networkTopology`.
    pub network_topology: Option<NetworkTopology>,
}

/// The `subGroupPolicy` Volcano's job controller writes for a job's partitioned
/// tasks (`setPgSubGroupPolicy`), with its sub-jobs: one policy per such task,
/// named after it (`names`), with `subGroupSize: partitionSize` and
/// `minSubGroups: minPartitions`; its pods split by their
/// `volcano.sh/partition-id` label (index ÷ partitionSize). `None` when no task
/// is partitioned.
pub fn from_partitions(names: &[Arc<str>], parts: Vec<Option<Partition>>) -> Option<Box<SubGroups>> {
    if parts.iter().all(Option::is_none) {
        return None;
    }
    let mut policies = Vec::new();
    let mut keys = Vec::new();
    for (name, p) in names.iter().zip(parts) {
        keys.push(match p {
            None => TaskKey::Whole(None),
            Some(p) => {
                policies.push(SubGroupPolicy {
                    name: name.clone(),
                    size: Some(p.size),
                    min_groups: p.min,
                    network_topology: p.network_topology,
                });
                TaskKey::Partitions { policy: policies.len() as u16 - 1, total: p.total, size: p.size }
            }
        });
    }
    Some(Box::new(assemble(policies, &keys)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(name: &str) -> SubGroupPolicy {
        SubGroupPolicy { name: name.into(), size: Some(2), min_groups: 0, network_topology: None }
    }

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
        let job = NetworkTopology { hard: false, highest_tier_allowed: None };
        assert_eq!(g.network_topology(0, Some(&job)), Some(&job));
        assert_eq!(g.network_topology(2, Some(&job)).and_then(|t| t.highest_tier_allowed), Some(1));
    }
    #[test]
    fn sub_jobs_are_numbered_default_first_then_by_policy() {
        let tasks = [
            TaskKey::Partitions { policy: 1, total: 2, size: 2 },
            TaskKey::Whole(None),
            TaskKey::Whole(Some((0, vec!["b".into()]))),
            TaskKey::Whole(Some((0, vec!["a".into()]))),
            TaskKey::Whole(Some((0, vec!["a".into()]))),
        ];
        let g = assemble(vec![policy("x"), policy("worker")], &tasks);
        let keys: Vec<&str> = g.sub_jobs.iter().map(|s| s.key.as_str()).collect();
        assert_eq!(keys, ["", "/x-a", "/x-b", "/worker-0", "/worker-1"]);
        assert_eq!(
            g.tasks,
            [
                TaskSubJobs::Partitions { first: 3, size: 2 },
                TaskSubJobs::Whole(0),
                TaskSubJobs::Whole(2),
                TaskSubJobs::Whole(1),
                TaskSubJobs::Whole(1)
            ]
        );
        assert_eq!(g.sub_jobs[4].match_index, 1);
    }
}
