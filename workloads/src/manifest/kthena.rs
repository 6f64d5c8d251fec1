//! Volcano's kthena (`workload.serving.volcano.sh/v1alpha1`): ModelServing, as
//! its controller makes pods and PodGroups (volcano-sh/kthena
//! `pkg/model-serving-controller`), and ModelBooster, as its controller turns a
//! model backend into one ModelServing (`pkg/model-booster-controller/convert`).
//!
//! A ModelServing runs `spec.replicas` serving groups `<ms>-<i>`. A group holds
//! each role's `replicas` role replicas `<role>-<r>`, each an entry pod
//! `<group>-<role>-<r>-0` and `workerReplicas` worker pods `…-1`, `…-2`, all
//! with the ModelServing's `schedulerName` (default `volcano`; the templates'
//! own is replaced). With Volcano, the controller makes one PodGroup per group
//! (`createPodGroup`): `minMember` = Σ over roles of (1 + `workerReplicas`) ×
//! min(`gangPolicy.minRoleReplicas[role]`, `replicas`) (every replica without
//! the policy), `minResources` the same pods' containers' `requests` as written
//! (`aggregateResources`: no limit stands in, init containers left out), one
//! `subGroupPolicy` per role (its pods, split by their role id; `subGroupSize`
//! 1 + `workerReplicas`; `minSubGroups` the role's minimum; the template's
//! `networkTopology.rolePolicy`), the group's `networkTopology.groupPolicy`, the
//! queue of the ModelServing's `scheduling.volcano.sh/queue-name` annotation and
//! no PriorityClass. Each pod's Volcano task is its role replica (the
//! `volcano.sh/task-spec` annotation `<role>-<r>`).
//!
//! `recoveryPolicy` (default `RoleRecreate`): `RoleRecreate` recreates the failed
//! pod's role replica (lahar's `RestartPartition` on its sub-job),
//! `ServingGroupRecreate` the whole group (`RestartJob`), both without a retry
//! limit; `None` recreates the pod alone. A deleted pod is rebuilt at once; a
//! failed one after `restartGracePeriodSeconds` (default 0), unless it runs
//! again by then.

use super::common::{self, Ck, JobHead, PodShape, join};
use super::yaml::{At, Doc, Node, Val};
use super::{Context, ImportedJob};
use lahar_core::model::job::{JobSpec, NetworkTopology, Policy, PolicyAction, PolicyEvent};
use lahar_core::model::resource::Resources;
use lahar_core::model::subgroup::{SubGroupPolicy, TaskKey};
use lahar_core::serving::kthena_roles::{ServingTemplate, TemplateRole};

/// The label prefix of the ModelServing controller's pod labels.
const LABEL: &str = "modelserving.volcano.sh";

/// One role of a serving group.
struct Role {
    name: String,
    replicas: u32,
    entry: PodShape,
    workers: u32,
    /// The workers' template (the entry's when there are no workers).
    worker: Option<PodShape>,
}

/// How a failed pod is recovered (`recoveryPolicy`).
#[derive(Clone, Copy)]
enum Recovery {
    Group,
    Role,
    Pod,
}

/// A ModelServing as its controller reads it: from a ModelServing object, or
/// the one a ModelBooster's controller builds.
struct Serving {
    kind: &'static str,
    /// The ModelServing's name.
    name: String,
    replicas: u32,
    roles: Vec<Role>,
    /// `gangPolicy.minRoleReplicas`, checked against the roles.
    min_roles: Vec<(String, u32)>,
    group_topology: Option<NetworkTopology>,
    role_topology: Option<NetworkTopology>,
    recovery: Recovery,
    /// `restartGracePeriodSeconds`: how long the controller waits before it
    /// deletes a failed pod that has not recovered (and so rebuilds).
    grace: lahar_core::util::time::SimDuration,
    /// The PodGroups' queue.
    queue: lahar_core::model::queue::QueueId,
}

/// The scheduler of a ModelServing's pods (`spec.schedulerName`, default
/// `volcano`), or of the ModelServing a ModelBooster makes
/// (`spec.backend.schedulerName`; empty gives the ModelServing's default).
pub fn scheduler_of(d: &Doc, kind: &str) -> String {
    let spec = d.root.get("spec");
    let name = match kind {
        "ModelBooster" => spec.and_then(|s| s.get("backend")).and_then(|b| b.get("schedulerName")),
        _ => spec.and_then(|s| s.get("schedulerName")),
    };
    name.and_then(Node::scalar).filter(|s| !s.is_empty()).unwrap_or_else(|| "volcano".into())
}

pub(crate) fn model_serving(d: &Doc, cx: &mut Context<'_>, ck: &mut Ck<'_>) -> Vec<ImportedJob> {
    let root = &d.root;
    let meta = common::meta(ck, root, "", true);
    let empty = Node { at: root.at, val: Val::Null };
    let spec = root.get("spec").unwrap_or(&empty);
    let replicas = ck.opt_count(spec, "replicas", "spec", 0).unwrap_or(1) as u32;
    let recovery = match ck.opt_str(spec, "recoveryPolicy", "spec").as_deref() {
        None | Some("RoleRecreate") => Recovery::Role,
        Some("ServingGroupRecreate") => Recovery::Group,
        Some("None") => Recovery::Pod,
        Some(other) => {
            let at = spec.get("recoveryPolicy").and_then(|n| n.at);
            let msg = format!("expected `ServingGroupRecreate`, `RoleRecreate` or `None`, got `{other}`");
            ck.err(at, "spec.recoveryPolicy", msg);
            Recovery::Role
        }
    };
    let Some(tpl) = spec.get("template").filter(|t| t.val != Val::Null) else {
        ck.err(spec.at, "spec.template", "a ModelServing needs a serving group `template`");
        return Vec::new();
    };
    let tp = "spec.template";
    let grace = ck.opt_secs(tpl, "restartGracePeriodSeconds", tp).unwrap_or_default();
    let mut roles = Vec::new();
    let list = ck.seq(tpl, "roles", tp);
    if list.is_empty() {
        ck.err(tpl.at, &join(tp, "roles"), "roles must be specified: a serving group needs at least one role");
    }
    for (i, r) in list.iter().enumerate() {
        let rp = format!("{tp}.roles[{i}]");
        let name = ck.opt_str(r, "name", &rp).unwrap_or_default();
        if let Some(why) = role_name_problem(&name) {
            ck.err(r.get("name").and_then(|n| n.at).or(r.at), &join(&rp, "name"), why);
        }
        let count = ck.opt_count(r, "replicas", &rp, 0).unwrap_or(1) as u32;
        let workers = match r.get("workerReplicas") {
            Some(_) => ck.opt_count(r, "workerReplicas", &rp, 0).unwrap_or(0) as u32,
            None => {
                ck.err(r.at, &join(&rp, "workerReplicas"), "required: the number of worker pods of each role replica");
                0
            }
        };
        let Some(et) = r.get("entryTemplate").filter(|t| t.val != Val::Null) else {
            ck.err(r.at, &join(&rp, "entryTemplate"), "a role needs an `entryTemplate` (its entry pod)");
            continue;
        };
        let entry = common::pod_shape(ck, cx, et, &join(&rp, "entryTemplate"));
        common::no_container_exit(ck, &entry, &join(&rp, "entryTemplate"));
        let worker = match r.get("workerTemplate").filter(|t| t.val != Val::Null) {
            Some(wt) if workers > 0 => {
                let s = common::pod_shape(ck, cx, wt, &join(&rp, "workerTemplate"));
                common::no_container_exit(ck, &s, &join(&rp, "workerTemplate"));
                Some(s)
            }
            Some(_) => None,
            None if workers > 0 => {
                let msg = "workerTemplate is required when workerReplicas is greater than 0";
                ck.err(r.at, &join(&rp, "workerTemplate"), msg);
                None
            }
            None => None,
        };
        roles.push(Role { name, replicas: count, entry, workers, worker });
    }
    if list.len() > 4 {
        ck.err(tpl.get("roles").and_then(|n| n.at), &join(tp, "roles"), format!("at most 4 roles, got {}", list.len()));
    }
    let mut names: Vec<&str> = roles.iter().map(|r| r.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        ck.err(tpl.get("roles").and_then(|n| n.at), &join(tp, "roles"), format!("role `{}` is named twice", w[0]));
    }
    let min_roles = gang_policy(ck, tpl, tp, &roles);
    let nt = tpl.get("networkTopology").filter(|n| n.val != Val::Null);
    let ntp = join(tp, "networkTopology");
    let topology = |ck: &mut Ck<'_>, key: &str| {
        nt.and_then(|n| n.get(key))
            .filter(|n| n.val != Val::Null)
            .map(|n| common::network_topology(ck, cx.tiers, n, &join(&ntp, key)))
    };
    let (group_topology, role_topology) = (topology(ck, "groupPolicy"), topology(ck, "rolePolicy"));
    for r in &roles {
        let generated = format!("{}-{replicas}-{}-{}-{}", meta.name, r.name, r.replicas, r.workers);
        if let Some(why) = dns1035_problem(&generated) {
            let at = root.get("metadata").and_then(|m| m.get("name")).and_then(|n| n.at);
            ck.err(at, "metadata.name", format!("the names it generates (`{generated}`) are invalid: {why}"));
        }
    }
    let queue = common::owner_queue(ck, cx, &meta);
    let timing = common::timing(ck, cx, &meta.annotations, meta.at, "");
    let (Some(queue), Some(timing)) = (queue, timing) else { return Vec::new() };
    let s = Serving {
        kind: "ModelServing",
        name: meta.name.clone(),
        replicas,
        roles,
        min_roles,
        group_topology,
        role_topology,
        recovery,
        grace,
        queue,
    };
    build(d, cx, ck, &s, &meta.namespace, timing)
}

/// `gangPolicy.minRoleReplicas`, checked as kthena's webhook checks it.
fn gang_policy(ck: &mut Ck<'_>, tpl: &Node, tp: &str, roles: &[Role]) -> Vec<(String, u32)> {
    let Some(g) = tpl.get("gangPolicy").filter(|g| g.val != Val::Null) else { return Vec::new() };
    let gp = join(&join(tp, "gangPolicy"), "minRoleReplicas");
    let mut out = Vec::new();
    for (role, n) in ck.map(g, "minRoleReplicas", &join(tp, "gangPolicy")) {
        let p = format!("{gp}.{role}");
        let Some(min) = ck.int(n, &p, 0) else { continue };
        match roles.iter().find(|r| r.name == *role) {
            None => ck.err(n.at, &p, format!("role {role} does not exist in template.roles")),
            Some(r) if min > i64::from(r.replicas) => ck.err(
                n.at,
                &p,
                format!("minRoleReplicas ({min}) for role {role} cannot exceed replicas ({})", r.replicas),
            ),
            Some(_) => out.push((role.clone(), min as u32)),
        }
    }
    out
}

/// Why a role name is refused (kthena's CRD and webhook: a DNS-1035 label of at
/// most 12 characters).
fn role_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("a role needs a name".into());
    }
    if name.chars().count() > 12 {
        return Some(format!("role name `{name}` is longer than 12 characters"));
    }
    dns1035_problem(name).map(|w| format!("role name `{name}` must be a DNS-1035 label: {w}"))
}

/// Why `s` is not a DNS-1035 label (lower-case letters, digits and `-`, at most
/// 63, starting with a letter and ending with a letter or digit).
fn dns1035_problem(s: &str) -> Option<String> {
    if !s.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Some("it must start with a lower-case letter".into());
    }
    lahar_core::util::text::dns_label_problem(s)
}

/// The jobs of one ModelServing: one per serving group.
fn build(
    d: &Doc,
    cx: &mut Context<'_>,
    ck: &mut Ck<'_>,
    s: &Serving,
    namespace: &str,
    timing: common::Timing,
) -> Vec<ImportedJob> {
    // Every pod of the object at once, bounded as any job's pods are.
    let per_group = s.roles.iter().fold(0u64, |n, r| n + u64::from(r.replicas) * (1 + u64::from(r.workers)));
    let total = u64::from(s.replicas) * per_group;
    if total > u64::from(lahar_core::model::job::MAX_PODS_PER_JOB) {
        let msg = format!(
            "{} serving groups × {per_group} pods = {total} pods; an object makes at most {}",
            s.replicas,
            lahar_core::model::job::MAX_PODS_PER_JOB
        );
        ck.err(d.root.at, "spec.replicas", msg);
    }
    if !ck.ok() || total == 0 {
        return Vec::new();
    }
    let revision = common::derived_chars(ck, "revision", 10);
    let min_of = |r: &Role| s.min_roles.iter().find(|(n, _)| *n == r.name).map_or(r.replicas, |m| m.1.min(r.replicas));
    let min_member: u32 = s.roles.iter().map(|r| (1 + r.workers) * min_of(r)).sum();
    let min_resources = s.roles.iter().fold(Resources::ZERO, |acc, r| {
        let worker = r.worker.as_ref().map_or(Resources::ZERO, |w| w.written.times(i64::from(r.workers)));
        acc + (r.entry.written + worker).times(i64::from(min_of(r)))
    });
    let policies: Vec<SubGroupPolicy> = s
        .roles
        .iter()
        .map(|r| SubGroupPolicy {
            name: lahar_core::util::text::shared(&r.name),
            size: Some(1 + r.workers),
            min_groups: min_of(r),
            network_topology: s.role_topology.clone(),
        })
        .collect();
    cx.serving_roles.push(ServingTemplate {
        namespace: namespace.to_string(),
        name: s.name.clone(),
        roles: s
            .roles
            .iter()
            .map(|r| {
                let worker = r.worker.as_ref().map_or(Resources::ZERO, |w| w.written.times(i64::from(r.workers)));
                lahar_core::serving::kthena_roles::TemplateRole {
                    name: r.name.clone(),
                    replicas: r.replicas,
                    workers: r.workers,
                    min_role: s.min_roles.iter().find(|(n, _)| *n == r.name).map(|m| m.1),
                    written: r.entry.written + worker,
                    slots: Vec::new(),
                }
            })
            .collect(),
    });
    // The longest grace period of the pods a group has.
    let grace = (s.roles.iter().filter(|r| r.replicas > 0))
        .flat_map(|r| [Some(&r.entry), r.worker.as_ref().filter(|_| r.workers > 0)])
        .flatten()
        .filter_map(|p| p.grace)
        .max();
    let mut out = Vec::with_capacity(s.replicas as usize);
    for g in 0..s.replicas {
        let group = format!("{}-{g}", s.name);
        let (mut tasks, mut names, mut keys, mut roles) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (ri, r) in s.roles.iter().enumerate() {
            for k in 0..r.replicas {
                let role_id = format!("{}-{k}", r.name);
                let labels = |entry: bool| {
                    let mut l = vec![
                        (format!("{LABEL}/name"), s.name.clone()),
                        (format!("{LABEL}/group-name"), group.clone()),
                        (format!("{LABEL}/role"), r.name.clone()),
                        (format!("{LABEL}/role-id"), role_id.clone()),
                        (format!("{LABEL}/revision"), revision.clone()),
                    ];
                    if entry {
                        l.push((format!("{LABEL}/entry"), "true".to_string()));
                    }
                    l
                };
                let lead = tasks.len() as u16;
                let mut entry = common::task(&role_id, 1, 0, &r.entry);
                let l = labels(true);
                common::add_labels(&mut entry, &l.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect::<Vec<_>>());
                tasks.push(entry);
                names.push(vec![format!("{group}-{role_id}-0")]);
                keys.push(TaskKey::Whole(Some((ri as u16, vec![role_id.clone()]))));
                roles.push(lead);
                if let (Some(w), true) = (&r.worker, r.workers > 0) {
                    let mut t = common::task(&role_id, r.workers, 0, w);
                    let l = labels(false);
                    common::add_labels(&mut t, &l.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect::<Vec<_>>());
                    tasks.push(t);
                    names.push((1..=r.workers).map(|w| format!("{group}-{role_id}-{w}")).collect());
                    keys.push(TaskKey::Whole(Some((ri as u16, vec![role_id.clone()]))));
                    roles.push(lead);
                }
            }
        }
        let head = JobHead {
            name: group.clone(),
            namespace: namespace.to_string(),
            kind: s.kind.to_string(),
            queue: s.queue,
            priority_class: None,
            min_available: min_member,
            timing: timing.clone(),
            grace,
        };
        let shared_roles = roles.iter().enumerate().any(|(i, &l)| l as usize != i);
        let (mut j, profile) = common::assemble(head, tasks, cx);
        j.min_resources = min_resources;
        j.network_topology = s.group_topology.clone();
        j.sub_groups = Some(Box::new(lahar_core::model::subgroup::assemble(policies.clone(), &keys)));
        j.roles = shared_roles.then(|| roles.into_boxed_slice());
        j.pod_names = Some(Box::new(names));
        let action = match s.recovery {
            Recovery::Group => Some(PolicyAction::RestartJob),
            Recovery::Role => Some(PolicyAction::RestartPartition),
            Recovery::Pod => None,
        };
        // A deleted pod is rebuilt at once (`handleDeletedPod`); a failed one
        // after the grace period, unless it runs again by then
        // (`handlePodAfterGraceTime`).
        if let Some(action) = action {
            let failed = (s.grace.micros() > 0).then_some(s.grace);
            j.policies = vec![
                Policy { event: PolicyEvent::PodEvicted, action, timeout: None },
                Policy { event: PolicyEvent::PodFailed, action, timeout: failed },
            ];
            j.max_retry = u32::MAX;
        }
        out.push(ImportedJob { spec: j, profile, file: d.file.clone(), doc: d.label(), at: d.root.at });
    }
    out
}

/// Serving group `job` of a ModelServing with template roles `roles`, given
/// room for `room[i]` replicas of role `i` (at least its count as written):
/// the tasks of the ordinals not made yet are added after each role's, with
/// no pods (copies of its ordinal 0, renamed and relabelled as kthena names
/// role replica `<role>-<r>`); returns the roles with their tasks' places.
/// `None` when a role to grow has no replica to copy.
pub(crate) fn make_room(job: &mut JobSpec, roles: &[TemplateRole], room: &[u32]) -> Option<Vec<TemplateRole>> {
    let group = job.name.clone();
    let old = std::mem::take(&mut job.tasks);
    let old_names = job.pod_names.take().map(|b| *b).unwrap_or_default();
    let policies = job.sub_groups.take().map(|g| g.policies).unwrap_or_default();
    let (mut tasks, mut names, mut keys, mut leads) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut laid = roles.to_vec();
    let mut k = 0;
    for (ri, r) in roles.iter().enumerate() {
        let per = 1 + usize::from(r.workers > 0);
        let first = k;
        let most = room[ri].max(r.replicas);
        if most > r.replicas && r.replicas == 0 {
            return None;
        }
        for o in 0..most {
            let role_id = format!("{}-{o}", r.name);
            let lead = tasks.len() as u16;
            let mut slot = (lead, None);
            for x in 0..per {
                let (mut t, n) = if o < r.replicas {
                    (old.get(k)?.clone(), old_names.get(k)?.clone())
                } else {
                    let mut t = old.get(first + x)?.clone();
                    t.name = role_id.as_str().into();
                    t.replicas = 0;
                    t.min_available = 0;
                    let pods = if x == 0 { 0..1 } else { 1..r.workers + 1 };
                    (t, pods.map(|w| format!("{group}-{role_id}-{w}")).collect())
                };
                if o >= r.replicas {
                    common::add_labels(&mut t, &[(&format!("{LABEL}/role-id"), role_id.as_str())]);
                }
                if o < r.replicas {
                    k += 1;
                }
                if x == 1 {
                    slot.1 = Some(tasks.len() as u16);
                }
                tasks.push(t);
                names.push(n);
                keys.push(TaskKey::Whole(Some((ri as u16, vec![role_id.clone()]))));
                leads.push(lead);
            }
            laid[ri].slots.push(slot);
        }
    }
    let shared = leads.iter().enumerate().any(|(i, &l)| l as usize != i);
    job.tasks = tasks;
    job.pod_names = Some(Box::new(names));
    job.sub_groups = Some(Box::new(lahar_core::model::subgroup::assemble(policies, &keys)));
    job.roles = shared.then(|| leads.into_boxed_slice());
    Some(laid)
}

/// The ModelServing and serving-group index of a job this module made.
pub(crate) fn group_of(job: &JobSpec) -> Option<(&str, u32)> {
    if &*job.kind != "ModelServing" {
        return None;
    }
    let name = common::pod_label(job, LABEL, "name")?;
    Some((name, job.name.strip_prefix(name)?.strip_prefix('-')?.parse().ok()?))
}

/// Serving group `i` of a ModelServing, as its controller makes it, from its
/// group `first`: the same pods, the group `<ms>-<i>` and its pods
/// `<ms>-<i>-<role>-<r>-<w>` (`GenerateServingGroupName`), labelled with it.
pub(crate) fn group_like(first: &JobSpec, i: u32) -> Option<JobSpec> {
    let (name, g) = group_of(first)?;
    let (from, to) = (format!("{name}-{g}"), format!("{name}-{i}"));
    let mut j = first.clone();
    for t in &mut j.tasks {
        common::add_labels(t, &[(&format!("{LABEL}/group-name"), to.as_str())]);
    }
    let names = j.pod_names.as_mut()?;
    for n in names.iter_mut().flatten() {
        *n = format!("{to}{}", n.strip_prefix(&from)?);
    }
    j.name = to;
    j.group = None;
    Some(j)
}

/// Serving group `i` of an autoscaled ModelServing (see [`group_like`]).
pub(crate) fn make_group(set: &lahar_core::model::job::GroupSet, i: u32) -> Option<JobSpec> {
    group_like(&set.first, i)
}

/// The serving-group index a job named `name` would have among the groups of
/// the ModelServing whose group is `first` (`<ms>-<i>`).
pub(crate) fn index_in_name(first: &JobSpec, name: &str) -> Option<u32> {
    let (ms, _) = group_of(first)?;
    name.strip_prefix(ms)?.strip_prefix('-')?.parse().ok()
}

/// A ModelBooster, as its controller builds its one ModelServing
/// (`BuildModelServing`): named `<booster>-<backend name>`, `replicas` the
/// backend's; a `vLLM` backend is one role `leader` of the `server` worker's
/// `replicas`, each with `pods − 1` workers; a `vLLMDisaggregated` backend two
/// roles `prefill` and `decode` of their workers' `replicas`, without workers.
/// Every pod takes its worker's `resources`, `affinity` and `tolerations` (the
/// runtime sidecar and the model downloader ask for nothing), and the gang
/// policy asks every role replica. The ModelServing carries no annotation, so
/// its PodGroups are in queue `default`.
pub(crate) fn model_booster(d: &Doc, cx: &mut Context<'_>, ck: &mut Ck<'_>) -> Vec<ImportedJob> {
    let root = &d.root;
    let meta = common::meta(ck, root, "", true);
    let empty = Node { at: root.at, val: Val::Null };
    let spec = root.get("spec").unwrap_or(&empty);
    let Some(backend) = spec.get("backend").filter(|b| b.val != Val::Null) else {
        ck.err(spec.at, "spec.backend", "a ModelBooster needs a `backend`");
        return Vec::new();
    };
    let bp = "spec.backend";
    let backend_name = ck.opt_str(backend, "name", bp).unwrap_or_default();
    if backend_name.is_empty() {
        ck.err(backend.at, &join(bp, "name"), "required: the backend's name");
    }
    let replicas = match backend.get("replicas") {
        Some(_) => ck.opt_count(backend, "replicas", bp, 0).unwrap_or(0) as u32,
        None => {
            ck.err(backend.at, &join(bp, "replicas"), "required: the backend's number of serving groups");
            0
        }
    };
    let kind = ck.opt_str(backend, "type", bp).unwrap_or_default();
    let type_at = backend.get("type").and_then(|n| n.at).or(backend.at);
    let mut workers: Vec<(String, usize, &Node)> = Vec::new();
    for (i, w) in ck.seq(backend, "workers", bp).iter().enumerate() {
        let t = ck.opt_str(w, "type", &format!("{bp}.workers[{i}]")).unwrap_or_else(|| "server".into());
        workers.push((t, i, w));
    }
    // The controller's map keeps the last worker of each type.
    let find = |t: &str| workers.iter().rev().find(|(x, _, _)| x == t).map(|&(_, i, w)| (i, w));
    let mut roles = Vec::new();
    let mut role = |ck: &mut Ck<'_>, name: &str, (i, w): (usize, &Node), with_workers: bool| {
        let wp = format!("{bp}.workers[{i}]");
        let count = ck.opt_count(w, "replicas", &wp, 0).unwrap_or(0) as u32;
        let pods = ck.opt_count(w, "pods", &wp, 0).unwrap_or(0) as u32;
        let shape = worker_pod(ck, cx, w, &wp);
        let extra = if with_workers { pods.saturating_sub(1) } else { 0 };
        roles.push(Role {
            name: name.to_string(),
            replicas: count,
            worker: (extra > 0).then(|| shape.clone()),
            entry: shape,
            workers: extra,
        });
    };
    match kind.as_str() {
        "vLLM" => match find("server") {
            Some(w) => role(ck, "leader", w, true),
            None => ck.err(
                backend.get("workers").and_then(|n| n.at).or(backend.at),
                &join(bp, "workers"),
                format!("server worker not found in backend: {backend_name} (the controller builds no ModelServing)"),
            ),
        },
        "vLLMDisaggregated" => match (find("prefill"), find("decode")) {
            (Some(p), Some(dc)) => {
                role(ck, "prefill", p, false);
                role(ck, "decode", dc, false);
            }
            (p, _) => {
                let which = if p.is_none() { "prefill" } else { "decode" };
                let at = backend.get("workers").and_then(|n| n.at).or(backend.at);
                ck.err(
                    at,
                    &join(bp, "workers"),
                    format!("{which} worker not found in backend (the controller builds no ModelServing)"),
                );
            }
        },
        other => ck.err(type_at, &join(bp, "type"), format!("expected `vLLM` or `vLLMDisaggregated`, got `{other}`")),
    }
    let name = if backend_name.is_empty() { meta.name.clone() } else { format!("{}-{backend_name}", meta.name) };
    let queue = common::queue(ck, cx, "default", meta.at, "metadata");
    let timing = common::timing(ck, cx, &meta.annotations, meta.at, "");
    let (Some(queue), Some(timing)) = (queue, timing) else { return Vec::new() };
    let min_roles = roles.iter().map(|r| (r.name.clone(), r.replicas)).collect();
    let s = Serving {
        kind: "ModelBooster",
        name,
        replicas,
        roles,
        min_roles,
        group_topology: None,
        role_topology: None,
        recovery: Recovery::Role,
        // The booster's templates set `restartGracePeriodSeconds: 60`.
        grace: lahar_core::util::time::SimDuration::from_secs(60),
        queue,
    };
    build(d, cx, ck, &s, &meta.namespace, timing)
}

/// A ModelBooster worker's pod: its `resources` in the engine container, its
/// `affinity` and `tolerations`, read as a pod template (errors name the
/// worker's own fields).
fn worker_pod(ck: &mut Ck<'_>, cx: &mut Context<'_>, w: &Node, wp: &str) -> PodShape {
    let at: At = w.at;
    let node = |val: Val| Node { at, val };
    let mut engine = vec![("name".to_string(), node(Val::Str("engine".into())))];
    if let Some(r) = w.get("resources") {
        engine.push(("resources".to_string(), r.clone()));
    }
    let mut spec = vec![("containers".to_string(), node(Val::Seq(vec![node(Val::Map(engine))])))];
    for key in ["affinity", "tolerations"] {
        if let Some(v) = w.get(key) {
            spec.push((key.to_string(), v.clone()));
        }
    }
    let tpl = node(Val::Map(vec![("spec".to_string(), node(Val::Map(spec)))]));
    let saved = std::mem::take(&mut ck.rewrite);
    ck.rewrite = vec![
        ("booster.spec.containers[0].resources", join(wp, "resources")),
        ("booster.spec.affinity", join(wp, "affinity")),
        ("booster.spec.tolerations", join(wp, "tolerations")),
        ("booster.spec", wp.to_string()),
    ];
    let shape = common::pod_shape(ck, cx, &tpl, "booster");
    ck.rewrite = saved;
    shape
}
