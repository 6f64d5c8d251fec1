//! Workloads of groups under an autoscaler: a LeaderWorkerSet's or kthena
//! ModelServing's groups, read as one job each by their readers, are tied to one
//! [`GroupSet`] that holds the autoscaler, group 0 and the reader's maker of
//! group `i`, so the engine can make and delete whole groups during the run.
//! Used by the HorizontalPodAutoscaler and KEDA readers ([`super::hpa`]) and by
//! kthena's AutoscalingPolicy ([`super::kthena_policy`]).

use super::ImportedJob;
use lahar_core::model::job::{GroupAutoscaler, GroupSet, JobSpec, MAX_PODS_PER_JOB};
use std::sync::Arc;

/// The group index a job's name would have in a workload of groups.
type NameIndex = fn(&JobSpec, &str) -> Option<u32>;
/// Makes a workload's group `i`.
type MakeGroup = fn(&GroupSet, u32) -> Option<JobSpec>;

/// The groups of LeaderWorkerSet or ModelServing `namespace/name` among
/// `jobs` by index, (index, position in `jobs`); an error unless group 0 is
/// one of them (lahar makes the others from it).
pub(super) fn members(
    jobs: &[ImportedJob],
    (namespace, kind, name): (&str, &str, &str),
) -> Result<Vec<(u32, usize)>, String> {
    let group_of = if kind == "LeaderWorkerSet" { super::lws::group_of } else { super::kthena::group_of };
    let mut members: Vec<(u32, usize)> = jobs
        .iter()
        .enumerate()
        .filter(|(_, j)| &*j.spec.namespace == namespace)
        .filter_map(|(k, j)| group_of(&j.spec).filter(|(n, _)| *n == name).map(|(_, i)| (i, k)))
        .collect();
    members.sort_unstable();
    if members.first().is_none_or(|&(i, _)| i != 0) {
        return Err(format!(
            "no {kind} {namespace}/{name} with schedulerName volcano and a group at the start in these files \
             (lahar makes an autoscaled {kind}'s groups from its first)"
        ));
    }
    Ok(members)
}

/// Gives LeaderWorkerSet or ModelServing `namespace/name` (its groups among
/// `jobs`) its `autoscaler`: each group is told the workload of groups it
/// belongs to, which holds every group up to the autoscaler's most replicas as
/// the controller would make it.
pub(super) fn attach(
    autoscaler: GroupAutoscaler,
    (namespace, kind, name): (&str, &str, &str),
    jobs: &mut [ImportedJob],
) -> Result<(), String> {
    let lws = kind == "LeaderWorkerSet";
    let members = members(jobs, (namespace, kind, name))?;
    let first = members[0].1;
    let max_replicas = match &autoscaler {
        GroupAutoscaler::Hpa(h) => h.max_replicas,
        GroupAutoscaler::Kthena(k) => k.max_replicas,
        GroupAutoscaler::KthenaHetero(h, i) => h.backends[*i].max,
        // Its groups stay as written; it scales the roles inside them.
        GroupAutoscaler::KthenaRoles(..) => 0,
    };
    let template = &jobs[first];
    // Every group the autoscaler may ask for, bounded as an object's pods are.
    let per_group: u32 = template.spec.tasks.iter().map(|t| t.replicas).sum::<u32>().max(1);
    let most = (max_replicas.max(0) as u32).max(members.len() as u32);
    if u64::from(most) * u64::from(per_group) > u64::from(MAX_PODS_PER_JOB) {
        return Err(format!(
            "{most} groups of {per_group} pods could make more than {MAX_PODS_PER_JOB} pods, the most an object makes"
        ));
    }
    let mut first_spec = template.spec.clone();
    first_spec.group = None;
    let (index_in_name, make): (NameIndex, MakeGroup) = if lws {
        (super::lws::index_in_name, super::lws::make_group)
    } else {
        (super::kthena::index_in_name, super::kthena::make_group)
    };
    // A group made later must not take the name of a job of these files.
    if let Some(other) = jobs.iter().find(|j| {
        &*j.spec.namespace == namespace
            && index_in_name(&first_spec, &j.spec.name).is_some_and(|i| i >= members.len() as u32 && i < most)
    }) {
        return Err(format!(
            "a group it would make is named {}/{}, as the {} of {} ({}) is",
            namespace, other.spec.name, other.spec.kind, other.file, other.doc
        ));
    }
    let set = Arc::new(GroupSet {
        namespace: Arc::clone(&template.spec.namespace),
        name: name.to_string(),
        kind: Arc::clone(&template.spec.kind),
        replicas: members.len() as u32,
        not_ready_first: !lws,
        autoscaler,
        first: first_spec,
        profile: template.profile.clone().map(Arc::new),
        most,
        origin: (template.file.clone(), template.doc.clone()),
        make,
    });
    for (i, k) in members {
        jobs[k].spec.group = Some((Arc::clone(&set), i));
    }
    Ok(())
}
