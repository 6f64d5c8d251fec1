//! Sub-groups: a PodGroup's `spec.subGroupPolicy` and a VolcanoJob task's
//! `partitionPolicy`, which Volcano's job controller turns into one
//! `subGroupPolicy` per partitioned task (labelSelector `volcano.sh/task-spec:
//! <task>`, matchLabelKeys `[volcano.sh/partition-id]`, the pod's partition being
//! its index ÷ `partitionSize`).

use super::common::{self, Ck, join};
use super::yaml::Node;
use lahar_core::model::budget::LabelSelector;
use lahar_core::model::subgroup::{Partition, SubGroupPolicy};
use std::collections::BTreeMap;

/// Reads task `t`'s `partitionPolicy` (at `tp`), checked as Volcano's webhook
/// checks it against the task's `replicas` and the `minAvailable` it gives.
pub(crate) fn partition(
    ck: &mut Ck<'_>,
    tiers: &BTreeMap<String, u32>,
    t: &Node,
    tp: &str,
    replicas: u32,
    min_given: Option<u32>,
) -> Option<Partition> {
    let n = t.get("partitionPolicy")?;
    let pp = join(tp, "partitionPolicy");
    let at = |k: &str| n.get(k).and_then(|f| f.at).or(n.at);
    let whole = |ck: &mut Ck<'_>, key: &str| -> Option<u32> {
        match ck.opt_int(n, key, &pp, i64::MIN) {
            Some(x) if x >= 1 => Some(x as u32),
            Some(x) => {
                ck.err(at(key), &join(&pp, key), format!("must be greater than 0, got {x}"));
                None
            }
            None if n.get(key).is_some() => None,
            None => {
                ck.err(n.at, &join(&pp, key), "required: an integer greater than 0");
                None
            }
        }
    };
    let total = whole(ck, "totalPartitions");
    let size = whole(ck, "partitionSize");
    let min = ck.opt_int(n, "minPartitions", &pp, 0).map_or(0, |m| m as u32);
    let network_topology =
        n.get("networkTopology").map(|x| common::network_topology(ck, tiers, x, &join(&pp, "networkTopology")));
    let (total, size) = (total?, size?);
    if u64::from(total) * u64::from(size) != u64::from(replicas) {
        ck.err(
            at("totalPartitions"),
            &pp,
            format!(
                "replicas ({replicas}) must equal totalPartitions × partitionSize ({total} × {size} = {})",
                u64::from(total) * u64::from(size)
            ),
        );
        return None;
    }
    if min > total {
        ck.err(
            at("minPartitions"),
            &join(&pp, "minPartitions"),
            format!("must not exceed totalPartitions ({total}), got {min}"),
        );
        return None;
    }
    if let Some(m) = min_given.filter(|&m| min > 0 && min * size != m) {
        ck.err(
            at("minPartitions"),
            &pp,
            format!(
                "the task's minAvailable ({m}) must equal minPartitions × partitionSize ({min} × {size} = {})",
                min * size
            ),
        );
        return None;
    }
    Some(Partition { total, size, min, network_topology })
}

/// One `subGroupPolicy` entry of a PodGroup, with what picks its pods.
pub(crate) struct RawPolicy {
    /// The policy.
    pub policy: SubGroupPolicy,
    /// `labelSelector`: the pods it covers (all when absent).
    pub selector: Option<LabelSelector>,
    /// `matchLabelKeys`: the labels whose values split them into sub-jobs.
    pub keys: Vec<String>,
}

/// A PodGroup's `spec.subGroupPolicy` (an empty list: none).
pub(crate) fn policies(ck: &mut Ck<'_>, tiers: &BTreeMap<String, u32>, spec: &Node) -> Vec<RawPolicy> {
    let mut out: Vec<RawPolicy> = Vec::new();
    for (i, p) in ck.seq(spec, "subGroupPolicy", "spec").iter().enumerate() {
        let pp = format!("spec.subGroupPolicy[{i}]");
        let name = ck.opt_str(p, "name", &pp).unwrap_or_default();
        if out.iter().any(|o| *o.policy.name == *name) {
            ck.err(
                p.get("name").and_then(|n| n.at).or(p.at),
                &join(&pp, "name"),
                format!("policy `{name}` is defined twice"),
            );
        }
        // The CRD's defaults: subGroupSize 1, minSubGroups 0.
        let size = ck.opt_int(p, "subGroupSize", &pp, 1).map_or(1, |x| x as u32);
        let min_groups = ck.opt_int(p, "minSubGroups", &pp, 0).map_or(0, |x| x as u32);
        let network_topology =
            p.get("networkTopology").map(|x| common::network_topology(ck, tiers, x, &join(&pp, "networkTopology")));
        let selector = p.get("labelSelector").map(|s| super::pdb::selector(ck, s, &join(&pp, "labelSelector")));
        let mut keys = Vec::new();
        for (k, key) in ck.seq(p, "matchLabelKeys", &pp).iter().enumerate() {
            if let Some(key) = ck.str(key, &format!("{pp}.matchLabelKeys[{k}]")) {
                keys.push(key);
            }
        }
        out.push(RawPolicy {
            policy: SubGroupPolicy { name: name.into(), size: Some(size), min_groups, network_topology },
            selector,
            keys,
        });
    }
    out
}

/// A pod's sub-job under `policies`, as Volcano's `getOrCreateSubJob` finds it: the
/// first policy whose selector takes the pod's labels and whose `matchLabelKeys`
/// all have non-empty values on it, with those values; `None` (the default
/// sub-job) when none does. A policy without `matchLabelKeys` takes no pod.
pub(crate) fn pod_sub_job(policies: &[RawPolicy], labels: &[(String, String)]) -> Option<(u16, Vec<String>)> {
    for (i, p) in policies.iter().enumerate() {
        if p.selector.as_ref().is_some_and(|s| !s.matches(labels)) {
            continue;
        }
        let values: Option<Vec<String>> = p
            .keys
            .iter()
            .map(|k| labels.iter().find(|(l, _)| l == k).map(|(_, v)| v.clone()).filter(|v| !v.is_empty()))
            .collect();
        if let Some(v) = values.filter(|v| !v.is_empty()) {
            return Some((i as u16, v));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(name: &str) -> SubGroupPolicy {
        SubGroupPolicy { name: name.into(), size: Some(2), min_groups: 0, network_topology: None }
    }

    #[test]
    fn pods_match_as_volcano_reads_the_policies() {
        let l = |p: &[(&str, &str)]| -> Vec<(String, String)> {
            p.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        let sel =
            LabelSelector { labels: vec![("volcano.sh/task-spec".into(), "worker".into())], ..Default::default() };
        let ps = vec![
            RawPolicy { policy: policy("nokeys"), selector: None, keys: vec![] },
            RawPolicy { policy: policy("worker"), selector: Some(sel), keys: vec!["volcano.sh/partition-id".into()] },
        ];
        let worker = l(&[("volcano.sh/task-spec", "worker"), ("volcano.sh/partition-id", "3")]);
        assert_eq!(pod_sub_job(&ps, &worker), Some((1, vec!["3".to_string()])));
        // The selector refuses the master; an empty value matches nothing.
        assert_eq!(pod_sub_job(&ps, &l(&[("volcano.sh/task-spec", "master"), ("volcano.sh/partition-id", "0")])), None);
        assert_eq!(pod_sub_job(&ps, &l(&[("volcano.sh/task-spec", "worker"), ("volcano.sh/partition-id", "")])), None);
    }
}
