//! `apps/v1` Deployment, ReplicaSet and StatefulSet whose pods name
//! `schedulerName: volcano`, as Volcano's PodGroup controller groups them: one
//! PodGroup per controlling owner (`podgroup-<owner uid>`: a Deployment's
//! ReplicaSet, a ReplicaSet, a StatefulSet), holding every replica; `minMember` =
//! the owner's `scheduling.volcano.sh/group-min-member` annotation (a Deployment's
//! annotations reach its ReplicaSet), else 1; `minResources` = `minMember` pods'
//! requests; the queue of the pod template's `scheduling.volcano.sh/queue-name`
//! annotation (else `default`) and the template's `priorityClassName`.
//!
//! Pods are named as their controllers name them: a StatefulSet's
//! `<name>-<ordinal>` (from `spec.ordinals.start`), a ReplicaSet's
//! `<name>-<5 characters>`, a Deployment's `<name>-<10 characters>-<5 characters>`
//! (the pod-template hash and the random suffix, derived from the file here).
//! Every replica exists from the start: a StatefulSet's `OrderedReady` creation,
//! one pod after the one before runs, is not modelled (docs/manifests.md).

use super::common::{self, Ck, JobHead, join};
use super::yaml::{Doc, Node, Val};
use super::{Context, ImportedJob};

/// The annotation of an owner that sets its PodGroup's `minMember`.
pub const GROUP_MIN_MEMBER: &str = "scheduling.volcano.sh/group-min-member";

/// The scheduler a workload's pod template names (`default-scheduler` when none).
pub fn scheduler_of(d: &Doc) -> String {
    scheduler_of_spec(&d.root)
}

/// The `schedulerName` of the pod template under `obj`'s `spec.template`
/// (`default-scheduler` when absent).
pub fn scheduler_of_spec(obj: &Node) -> String {
    obj.get("spec")
        .and_then(|s| s.get("template"))
        .and_then(|t| t.get("spec"))
        .and_then(|s| s.get("schedulerName"))
        .and_then(Node::scalar)
        .unwrap_or_else(|| "default-scheduler".into())
}

pub(crate) fn job(d: &Doc, kind: &str, cx: &mut Context<'_>, ck: &mut Ck<'_>) -> Option<ImportedJob> {
    let root = &d.root;
    let meta = common::meta(ck, root, "", true);
    let empty = Node { at: root.at, val: Val::Null };
    let spec = root.get("spec").unwrap_or(&empty);
    let replicas = ck.opt_count(spec, "replicas", "spec", 0).unwrap_or(1) as u32;
    let Some(tpl) = spec.get("template") else {
        ck.err(spec.at, "spec.template", format!("a {kind} needs a pod `template`"));
        return None;
    };
    let shape = common::pod_shape(ck, cx, tpl, "spec.template");
    common::no_container_exit(ck, &shape, "spec.template");
    // The controller keeps its pods running.
    common::restarts_always(ck, tpl, "spec.template", &format!("a {kind}'s"), &format!("the {kind}"));
    let min_member = group_min_member(ck, &meta, replicas, format!("the replicas ({replicas})"));
    let q = template_queue(ck, cx, &shape, root);
    let class = tpl.get("spec").and_then(|s| ck.opt_str(s, "priorityClassName", "spec.template.spec"));
    let timing = common::timing(ck, cx, &meta.annotations, meta.at, "");
    let start = match kind {
        "StatefulSet" => {
            spec.get("ordinals").and_then(|o| ck.opt_int(o, "start", &join("spec", "ordinals"), 0)).unwrap_or(0) as u32
        }
        _ => 0,
    };
    if !ck.ok() {
        return None;
    }
    let head = JobHead {
        name: meta.name.clone(),
        namespace: meta.namespace.clone(),
        kind: kind.to_string(),
        queue: q?,
        priority_class: class,
        min_available: min_member,
        timing: timing?,
        grace: shape.grace,
    };
    let task = common::task(&meta.name, replicas, 0, &shape);
    let (mut j, profile) = common::assemble(head, vec![task], cx);
    controller_group(ck, Some(&meta), &shape, &mut j);
    // Volcano's CalTaskRequests: minMember pods' requests.
    j.min_resources = shape.requests.times(i64::from(min_member));
    let names = pod_names(ck, kind, &meta.name, start, replicas);
    j.pod_names = Some(Box::new(vec![names]));
    Some(ImportedJob { spec: j, profile, file: d.file.clone(), doc: d.label(), at: root.at })
}

/// The names of a workload's first `count` pods, as its controller names them:
/// a StatefulSet's ordinals from `start`, a ReplicaSet's and a Deployment's
/// derived suffixes (the same for the same file, document and index).
pub(crate) fn pod_names(ck: &Ck<'_>, kind: &str, name: &str, start: u32, count: u32) -> Vec<String> {
    match kind {
        "StatefulSet" => (0..count).map(|i| format!("{name}-{}", u64::from(start) + u64::from(i))).collect(),
        "ReplicaSet" => {
            (0..count).map(|i| format!("{name}-{}", common::derived_chars(ck, &i.to_string(), 5))).collect()
        }
        _ => {
            let hash = common::derived_chars(ck, "pod-template-hash", 10);
            (0..count).map(|i| format!("{name}-{hash}-{}", common::derived_chars(ck, &i.to_string(), 5))).collect()
        }
    }
}

/// The PodGroup's `minMember` (Volcano's `getMinMemberFromUpperRes`): the
/// owner's [`GROUP_MIN_MEMBER`] annotation, else 1; more than `most` (the pods
/// the owner runs at once, `what` in words) or not an integer is an error
/// (Volcano falls back to 1).
pub(crate) fn group_min_member(ck: &mut Ck<'_>, meta: &common::Meta, most: u32, what: String) -> u32 {
    let Some((v, at)) = meta.annotations.get(GROUP_MIN_MEMBER) else { return 1 };
    let p = format!("metadata.annotations.{GROUP_MIN_MEMBER}");
    match v.trim().parse::<u32>() {
        Ok(m) if m <= most => m,
        Ok(m) => {
            ck.err(*at, &p, format!("must not exceed {what}, got {m}: the group could never start"));
            1
        }
        Err(_) => {
            ck.err(*at, &p, format!("expected an integer ≥ 0, got `{v}` (Volcano falls back to 1)"));
            1
        }
    }
}

/// The queue the PodGroup controller gives an owner's pods: the pod
/// template's `scheduling.volcano.sh/queue-name` annotation, else `default`.
pub(crate) fn template_queue(
    ck: &mut Ck<'_>,
    cx: &Context<'_>,
    shape: &common::PodShape,
    root: &Node,
) -> Option<lahar_core::model::queue::QueueId> {
    let (qname, qat, qpath) = match shape.annotations.get(common::QUEUE_NAME_ANNOTATION) {
        Some((q, at)) => {
            (q.clone(), *at, format!("spec.template.metadata.annotations.{}", common::QUEUE_NAME_ANNOTATION))
        }
        None => ("default".to_string(), root.at, "spec.template.metadata".to_string()),
    };
    common::queue(ck, cx, &qname, qat, &qpath)
}

/// What Volcano's PodGroup controller puts on the PodGroup it makes for an
/// owner's pods, or for a Pod alone (`buildPodGroupFromPod`): the owner's
/// `volcano.sh/*` annotations (`inheritUpperAnnotations`), then the pod's
/// `volcano.sh/preemptable` (annotation and label) and `volcano.sh/jdb-*`
/// annotations over them, and the `networkTopology` of the pod's
/// `volcano.sh/network-topology-mode` and `-highest-tier` annotations. The
/// scheduler reads the group's preemptability (gangpreempt, gangreclaim, tdm),
/// disruption budget (tdm) and sla waiting time from it.
pub(crate) fn controller_group(
    ck: &mut Ck<'_>,
    owner: Option<&common::Meta>,
    shape: &common::PodShape,
    j: &mut lahar_core::model::job::JobSpec,
) {
    type Keys = std::collections::BTreeMap<String, (String, super::yaml::At)>;
    let mut annotations: Keys = owner
        .map(|m| {
            m.annotations
                .iter()
                .filter(|(k, _)| k.starts_with("volcano.sh/"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    const PREEMPTABLE: &str = "volcano.sh/preemptable";
    const JDB: [&str; 2] = ["volcano.sh/jdb-min-available", "volcano.sh/jdb-max-unavailable"];
    if let Some(v) = shape.annotations.get(PREEMPTABLE) {
        annotations.insert(PREEMPTABLE.to_string(), v.clone());
    }
    // The pod's min-available, else its max-unavailable, replaces the owner's.
    if let Some(k) = JDB.iter().find(|k| shape.annotations.contains_key(**k)) {
        for other in JDB {
            annotations.remove(other);
        }
        annotations.insert(k.to_string(), shape.annotations[*k].clone());
    }
    let labels: Keys =
        shape.labels.iter().filter(|(k, _)| *k == PREEMPTABLE).map(|(k, v)| (k.clone(), v.clone())).collect();
    j.preemptable = common::group_preemptable(ck, &labels, &annotations, "");
    j.disruption = common::group_disruption(ck, &annotations, "");
    j.sla_waiting = common::group_sla_waiting(ck, &annotations, "");
    const MODE: &str = "volcano.sh/network-topology-mode";
    const TIER: &str = "volcano.sh/network-topology-highest-tier";
    let (mode, tier) = (shape.annotations.get(MODE), shape.annotations.get(TIER));
    if mode.is_none() && tier.is_none() {
        return;
    }
    let tier_value = tier.and_then(|(t, at)| match t.trim().parse::<i64>() {
        Ok(x) => Some(x),
        Err(_) => {
            ck.err(
                *at,
                &format!("spec.template.metadata.annotations.{TIER}"),
                format!("expected an integer ≥ 0, got `{t}`"),
            );
            None
        }
    });
    // Volcano reads the mode in any case (`strings.ToLower`).
    let lower = mode.map(|(m, _)| m.to_lowercase());
    let (nt, errors) = lahar_core::model::job::NetworkTopology::parse(lower.as_deref(), tier_value);
    for (field, m) in errors {
        let (key, at) = if field == "mode" { (MODE, mode.and_then(|x| x.1)) } else { (TIER, tier.and_then(|x| x.1)) };
        ck.err(at, &format!("spec.template.metadata.annotations.{key}"), m);
    }
    j.network_topology = Some(nt);
}
