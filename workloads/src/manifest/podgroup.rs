//! What Volcano's scheduler itself sees: PodGroups, Pods and PriorityClasses. Pods of
//! one PodGroup become one job; pods already bound to a node start there at t=0.

use super::common::{self, Ck, JobHead, PodShape, PriorityClass, PriorityClasses};
use super::subgroup;
use super::yaml::{At, Doc, Node, Val};
use super::{Context, Diagnostic, ImportedJob};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{PodGroupPhase, TaskSpec};
use lahar_core::model::resource::PODS;
use std::collections::{BTreeMap, BTreeSet};

/// Reads one PriorityClass into `into`.
pub(crate) fn priority_class(d: &Doc, into: &mut PriorityClasses, errs: &mut Vec<Diagnostic>) {
    let mut ck = Ck::new(d, errs);
    let meta = common::meta(&mut ck, &d.root, "", true);
    let value = match d.root.get("value") {
        Some(v) => ck.int(v, "value", i64::from(i32::MIN)).map(|x| x as i32),
        None => {
            ck.err(d.root.at, "value", "a PriorityClass needs an integer `value`");
            None
        }
    };
    let global_default = ck.opt_bool(&d.root, "globalDefault", "").unwrap_or(false);
    let preemption_policy =
        ck.opt_str(&d.root, "preemptionPolicy", "").unwrap_or_else(|| "PreemptLowerPriority".into());
    if !["PreemptLowerPriority", "Never"].contains(&preemption_policy.as_str()) {
        ck.err(
            d.root.get("preemptionPolicy").and_then(|n| n.at),
            "preemptionPolicy",
            format!("expected `PreemptLowerPriority` or `Never`, got `{preemption_policy}`"),
        );
    }
    if let Some(v) = value
        && let Some((field, m)) = into.check(&meta.name, i64::from(v), global_default, &preemption_policy)
    {
        let (at, field) = match field {
            "name" => {
                (d.root.get("metadata").and_then(|m| m.get("name")).and_then(|n| n.at).or(d.root.at), "metadata.name")
            }
            f => (d.root.get(f).and_then(|n| n.at), f),
        };
        ck.err(at, field, m);
    }
    if let (true, Some(value)) = (ck.ok(), value) {
        into.by_name.insert(meta.name, PriorityClass { value, global_default, preemption_policy });
    }
}

struct Group {
    name: String,
    namespace: String,
    doc: Doc,
    min_member: u32,
    min_task: BTreeMap<String, u32>,
    queue: String,
    queue_at: At,
    priority_class: Option<String>,
    network_topology: Option<lahar_core::model::job::NetworkTopology>,
    /// `spec.subGroupPolicy`.
    sub_policies: Vec<subgroup::RawPolicy>,
    /// `status.phase`: the group's phase when the run starts.
    phase: Option<PodGroupPhase>,
    annotations: BTreeMap<String, (String, At)>,
    annotations_at: At,
    /// `volcano.sh/preemptable` (annotation, else label).
    preemptable: Option<bool>,
    /// `volcano.sh/jdb-min-available` / `-max-unavailable`.
    disruption: Option<lahar_core::model::budget::BudgetRule>,
    /// `volcano.sh/sla-waiting-time` (else `sla-waiting-time`).
    sla_waiting: Option<lahar_core::util::time::SimDuration>,
    ok: bool,
}

struct Pod {
    name: String,
    doc: Doc,
    shape: PodShape,
    /// Volcano's task role: `volcano.sh/task-spec`, annotation else label, else "".
    role: String,
    node: Option<(NodeId, String)>,
    /// Shadow PodGroup: a pod without the group-name annotation is its own job.
    bare: bool,
    /// Its sub-job under its group's `subGroupPolicy` (policy, match values);
    /// `None`: the default one.
    sub: Option<(u16, Vec<String>)>,
    /// A placed pod's vGPU cards (card, MiB, cores), by its
    /// `volcano.sh/vgpu-ids-new` annotation (none without it, when it asks for
    /// vGPU: Volcano's cache counts it on no card).
    vgpu: Option<lahar_core::devices::vgpu::CardTakes>,
    /// A placed pod's CPUs on a node with a NUMA topology, by the node's
    /// `podAllocations` (none without an entry: Volcano then sees only the
    /// node's free CPUs).
    numa: Option<lahar_core::devices::numa::CpuSet>,
    /// A placed pod's Ascend chips, by its `hami.io/<commonWord>-devices-allocated`
    /// annotations (none without them: Volcano's cache counts none).
    vnpu: lahar_core::devices::vnpu::NpuTakes,
}

/// PodGroups and Pods of one workload source, joined at the end.
#[derive(Default)]
pub(crate) struct Groups {
    groups: Vec<Group>,
    pods: BTreeMap<(String, String), Vec<Pod>>,
    bare: Vec<Pod>,
}

/// The annotation (or label) that names a pod's task role.
const TASK_SPEC: &str = "volcano.sh/task-spec";

const PHASES: [&str; 5] = ["Pending", "Inqueue", "Running", "Unknown", "Completed"];

impl Groups {
    pub fn add_group(&mut self, d: &Doc, cx: &Context<'_>, ck: &mut Ck<'_>) {
        let root = &d.root;
        let meta = common::meta(ck, root, "", true);
        let empty = Node { at: root.at, val: Val::Null };
        let spec = root.get("spec").unwrap_or(&empty);
        let min_member = ck.opt_int(spec, "minMember", "spec", 0).unwrap_or(1) as u32;
        let mut min_task = BTreeMap::new();
        for (k, v) in ck.map(spec, "minTaskMember", "spec") {
            if let Some(x) = ck.int(v, &format!("spec.minTaskMember.{k}"), 0) {
                min_task.insert(k.clone(), x as u32);
            }
        }
        let queue = ck.opt_str(spec, "queue", "spec").unwrap_or_else(|| "default".into());
        let nt = spec.get("networkTopology").map(|n| common::network_topology(ck, cx.tiers, n, "spec.networkTopology"));
        let sub_policies = subgroup::policies(ck, cx.tiers, spec);
        let mut phase = None;
        if let Some(st) = root.get("status")
            && let Some(p) = ck.opt_str(st, "phase", "status")
        {
            phase = match p.as_str() {
                "Pending" => Some(PodGroupPhase::Pending),
                "Inqueue" => Some(PodGroupPhase::Inqueue),
                "Running" => Some(PodGroupPhase::Running),
                "Unknown" => Some(PodGroupPhase::Unknown),
                "Completed" => Some(PodGroupPhase::Completed),
                _ => {
                    ck.err(
                        st.get("phase").and_then(|n| n.at),
                        "status.phase",
                        format!("unknown PodGroup phase `{p}`; expected one of: {}", PHASES.join(", ")),
                    );
                    None
                }
            };
        }
        if self.groups.iter().any(|g| g.name == meta.name && g.namespace == meta.namespace) {
            ck.err(root.at, "metadata.name", format!("PodGroup `{}/{}` is defined twice", meta.namespace, meta.name));
        }
        self.groups.push(Group {
            name: meta.name,
            namespace: meta.namespace,
            doc: d.clone(),
            min_member,
            min_task,
            queue,
            queue_at: spec.get("queue").and_then(|n| n.at).or(root.at),
            priority_class: ck.opt_str(spec, "priorityClassName", "spec"),
            network_topology: nt,
            sub_policies,
            phase,
            preemptable: common::group_preemptable(ck, &meta.labels, &meta.annotations, ""),
            disruption: common::group_disruption(ck, &meta.annotations, ""),
            sla_waiting: common::group_sla_waiting(ck, &meta.annotations, ""),
            annotations: meta.annotations,
            annotations_at: meta.at,
            ok: ck.ok(),
        });
    }

    pub fn add_pod(&mut self, d: &Doc, cx: &mut Context<'_>, ck: &mut Ck<'_>) {
        let root = &d.root;
        // pod_shape reads labels and annotations; only the name and namespace are left.
        let m = root.get("metadata");
        let mut name = m.and_then(|m| m.get("name")).and_then(Node::scalar).unwrap_or_default();
        if let (true, Some(prefix)) = (name.is_empty(), m.and_then(|m| m.get("generateName")).and_then(Node::scalar)) {
            name = common::generated_name(ck, &prefix);
        }
        if name.is_empty() {
            ck.err(m.and_then(|m| m.at).or(root.at), "metadata.name", "expected a non-empty name");
        }
        let namespace = m.and_then(|m| m.get("namespace")).and_then(Node::scalar).unwrap_or_else(|| "default".into());
        let mut shape = common::pod_shape(ck, cx, root, "");
        common::no_container_exit(ck, &shape, "");
        common::check_scheduler(
            ck,
            shape.scheduler_name.as_deref(),
            root.get("spec").and_then(|s| s.get("schedulerName")).and_then(|n| n.at),
            "spec.schedulerName",
        );
        let phase =
            root.get("status").and_then(|s| s.get("phase")).and_then(Node::scalar).unwrap_or_else(|| "Pending".into());
        match phase.as_str() {
            // Finished pods hold nothing and will not run again.
            "Succeeded" | "Failed" => return,
            "Pending" | "Running" | "Unknown" => {}
            other => {
                let at = root.get("status").and_then(|s| s.get("phase")).and_then(|n| n.at);
                ck.err(
                    at,
                    "status.phase",
                    format!("unknown pod phase `{other}`; expected Pending, Running, Succeeded, Failed or Unknown"),
                );
                return;
            }
        }
        let spec = root.get("spec");
        let node = match spec.and_then(|s| s.get("nodeName")) {
            Some(n) => {
                let name = n.scalar().unwrap_or_default();
                match cx.nodes.get(&name) {
                    Some(&id) => Some((id, name)),
                    None => {
                        ck.err(n.at, "spec.nodeName", format!("node `{name}` does not exist in the cluster"));
                        return;
                    }
                }
            }
            None if phase == "Running" => {
                ck.err(root.at, "spec.nodeName", "a Running pod needs `spec.nodeName` (the node it runs on)");
                return;
            }
            None => None,
        };
        if node.is_none()
            && let Some(spec) = spec
        {
            shape.node_label_in = common::placement_fields(ck, spec, "spec", false, true);
        }
        if node.is_some()
            && shape.hints.as_ref().is_some_and(|h| !h.scheduling_gates.is_empty())
            && let Some(g) = spec.and_then(|s| s.get("schedulingGates"))
        {
            let why = "a pod on a node has no scheduling gates (the API server refuses `nodeName` until every gate is removed)";
            ck.err(g.at, "spec.schedulingGates", why);
            return;
        }
        let role =
            shape.annotations.get(TASK_SPEC).or(shape.labels.get(TASK_SPEC)).map(|x| x.0.clone()).unwrap_or_default();
        if !ck.ok() {
            return;
        }
        let vgpu = match (&node, shape.annotations.get(lahar_core::devices::vgpu::VGPU_ASSIGNED)) {
            (Some((id, _)), Some((text, at))) => {
                let cards = cx.node_list.get(id.0 as usize).map_or(&[][..], |n| &n.vgpu[..]);
                match lahar_core::devices::vgpu::decode_assigned(text, cards) {
                    Ok(t) => Some(t),
                    Err(e) => {
                        ck.err(*at, &format!("metadata.annotations.{}", lahar_core::devices::vgpu::VGPU_ASSIGNED), e);
                        return;
                    }
                }
            }
            (Some(_), None) if shape.hints.as_ref().is_some_and(|h| h.vgpu.is_some()) => Some(Vec::new()),
            _ => None,
        };
        let mut vnpu = lahar_core::devices::vnpu::NpuTakes::new();
        let node_chips = node.as_ref().and_then(|(id, _)| cx.node_list.get(id.0 as usize)).map_or(&[][..], |n| &n.vnpu);
        for (i, nc) in node_chips.iter().enumerate() {
            let key = lahar_core::devices::vnpu::allocated_annotation(&nc.ty.common_word);
            let Some((text, at)) = shape.annotations.get(&key) else { continue };
            match lahar_core::devices::vnpu::decode_allocated(text, &nc.chips) {
                Ok(t) => vnpu.push((i as u32, t)),
                Err(e) => {
                    ck.err(*at, &format!("metadata.annotations.{key}"), e);
                    return;
                }
            }
        }
        let numa = node.as_ref().and_then(|(id, _)| cx.node_list.get(id.0 as usize)?.numa.as_deref()).map(|t| {
            let uid = m.and_then(|m| m.get("uid")).and_then(Node::scalar).unwrap_or_default();
            t.allocation_of(&uid, &namespace, &name).unwrap_or_default()
        });
        let pod = Pod { name, doc: d.clone(), shape, role, node, bare: false, sub: None, vgpu, numa, vnpu };
        match pod.shape.annotations.get("scheduling.k8s.io/group-name") {
            Some((g, _)) => self.pods.entry((namespace, g.clone())).or_default().push(pod),
            None => self.bare.push(Pod { bare: true, ..pod }),
        }
    }

    /// The jobs: each PodGroup with its Pods (or without: see [`podless`]), then
    /// each Pod without a group. `owners` are the (kind, namespace, name) of the
    /// controllers' objects imported from the same source.
    pub fn finish(
        mut self,
        cx: &mut Context<'_>,
        owners: &BTreeSet<(String, String, String)>,
        errs: &mut Vec<Diagnostic>,
    ) -> Vec<ImportedJob> {
        let mut out = Vec::new();
        for g in std::mem::take(&mut self.groups) {
            let mut pods = self.pods.remove(&(g.namespace.clone(), g.name.clone())).unwrap_or_default();
            for p in &mut pods {
                let labels: Vec<(String, String)> =
                    p.shape.labels.iter().map(|(k, (v, _))| (k.clone(), v.clone())).collect();
                p.sub = subgroup::pod_sub_job(&g.sub_policies, &labels);
            }
            let mut ck = Ck::new(&g.doc, errs);
            if !g.ok {
                continue;
            }
            let root = &g.doc.root;
            // A PodGroup a controller made (`ownerReferences`, as `kubectl get -o yaml`
            // shows it) whose owner is in these manifests: the owner is imported and
            // creates the pods, so the group is not a job of its own.
            let owner_here = root
                .get("metadata")
                .and_then(|m| m.get("ownerReferences"))
                .and_then(|o| if let Val::Seq(s) = &o.val { Some(s.as_slice()) } else { None })
                .unwrap_or_default()
                .iter()
                .any(|o| {
                    let f = |k: &str| o.get(k).and_then(Node::scalar).unwrap_or_default();
                    owners.contains(&(f("kind"), g.namespace.clone(), f("name")))
                });
            if pods.is_empty() && owner_here {
                continue;
            }
            let min_res = root.get("spec").and_then(|spec| ck.resource_vec(spec, "minResources", "spec", cx.names));
            if let (false, Some((_, at))) = (pods.is_empty(), g.annotations.get(REPLICAS)) {
                let n = pods.len();
                ck.err(*at, &format!("metadata.annotations.{REPLICAS}"), format!(
                    "the PodGroup has {n} Pods in the manifests; `{REPLICAS}` is for a PodGroup without Pods (it says how many its controller will create)"
                ));
            }
            let Grouped {
                mut tasks,
                initial,
                initial_vgpu,
                initial_vnpu,
                initial_numa,
                names,
                roles,
                role_names,
                subs,
            } = if pods.is_empty() { podless(&mut ck, &g, min_res.as_ref()) } else { group_tasks(&pods) };
            // Pods no controller owns are not made again once gone (Kubernetes
            // recreates nothing; the PodGroup controller makes groups, not pods).
            let unowned = !pods.is_empty() && pods.iter().all(|p| !has_owner(&p.doc.root));
            // The longest of its pods' grace periods (lahar keeps one a job).
            let grace = pods.iter().filter_map(|p| p.shape.grace).max();
            for (k, &m) in &g.min_task {
                match role_names.iter().position(|r| r == k) {
                    Some(lead) => tasks[lead].min_available = m,
                    None => ck.err(
                        root.at,
                        &format!("spec.minTaskMember.{k}"),
                        format!("no pod has the task role `{k}` (annotation or label {TASK_SPEC}; pods without it have the role \"\")"),
                    ),
                }
            }
            let total: u32 = tasks.iter().map(|t| t.replicas).sum();
            if g.min_member > total && !pods.is_empty() {
                ck.err(
                    root.at,
                    "spec.minMember",
                    format!("{} pods belong to the PodGroup, fewer than minMember {}", total, g.min_member),
                );
            }
            let q = common::queue(&mut ck, cx, &g.queue, g.queue_at, "spec.queue");
            let topology = super::vcjob::task_topology(&mut ck, &g.annotations, &tasks);
            let timing = common::timing(&mut ck, cx, &g.annotations, g.annotations_at, "");
            if let Some(t) = &timing
                && !initial.is_empty()
                && t.submit.0 != 0
            {
                ck.err(
                    root.at,
                    "metadata.annotations.lahar.io/submit-at",
                    "pods already running start at t=0: leave `lahar.io/submit-at` out",
                );
            }
            if !ck.ok() {
                continue;
            }
            let head = JobHead {
                name: g.name,
                namespace: g.namespace,
                kind: "PodGroup".into(),
                queue: q.expect("checked"),
                priority_class: g.priority_class,
                min_available: g.min_member,
                timing: timing.expect("checked"),
                grace,
            };
            let (mut j, profile) = common::assemble(head, tasks, cx);
            j.initial = initial;
            j.initial_vgpu = initial_vgpu;
            j.initial_vnpu = initial_vnpu;
            j.initial_numa = initial_numa;
            j.pod_names = (!pods.is_empty()).then(|| Box::new(names));
            j.roles = roles;
            j.start_phase = g.phase;
            j.orphan = unowned;
            j.preemptable = g.preemptable;
            j.disruption = g.disruption;
            j.sla_waiting = g.sla_waiting;
            j.network_topology = g.network_topology;
            j.task_topology = topology.map(Box::new);
            if !g.sub_policies.is_empty() {
                let keys: Vec<lahar_core::model::subgroup::TaskKey> =
                    subs.into_iter().map(lahar_core::model::subgroup::TaskKey::Whole).collect();
                let policies = g.sub_policies.into_iter().map(|p| p.policy).collect();
                j.sub_groups = Some(Box::new(lahar_core::model::subgroup::assemble(policies, &keys)));
            }
            // Volcano's scheduler reads a PodGroup's `minResources` as written: none
            // is nothing to reserve (`GetMinResources` of a nil list), not the
            // pods' requests.
            let mut r = min_res.unwrap_or_default();
            r.set(PODS, j.min_resources.get(PODS));
            j.min_resources = r;
            out.push(ImportedJob { spec: j, profile, file: g.doc.file.clone(), doc: g.doc.label(), at: root.at });
        }
        for ((ns, g), pods) in std::mem::take(&mut self.pods) {
            for p in pods {
                let mut ck = Ck::new(&p.doc, errs);
                ck.err(
                    p.doc.root.at,
                    "metadata.annotations.scheduling.k8s.io/group-name",
                    format!("PodGroup `{ns}/{g}` is not defined in this workload source"),
                );
            }
        }
        for p in std::mem::take(&mut self.bare) {
            debug_assert!(p.bare);
            let mut ck = Ck::new(&p.doc, errs);
            let root = &p.doc.root;
            let meta = common::meta(&mut ck, root, "", true);
            // Volcano's PodGroup controller gives the pod's shadow PodGroup the
            // queue of its `scheduling.volcano.sh/queue-name` annotation.
            let q = match meta.annotations.get(common::QUEUE_NAME_ANNOTATION) {
                Some((name, at)) => common::queue(
                    &mut ck,
                    cx,
                    name,
                    *at,
                    &format!("metadata.annotations.{}", common::QUEUE_NAME_ANNOTATION),
                ),
                None => common::queue(&mut ck, cx, "default", root.at, "metadata"),
            };
            let timing = common::timing(&mut ck, cx, &p.shape.annotations, meta.at, "");
            if !ck.ok() {
                continue;
            }
            if let Some(t) = &timing
                && p.node.is_some()
                && t.submit.0 != 0
            {
                ck.err(
                    meta.at,
                    "metadata.annotations.lahar.io/submit-at",
                    "pods already running start at t=0: leave `lahar.io/submit-at` out",
                );
                continue;
            }
            let Grouped { tasks, initial, initial_vgpu, initial_vnpu, initial_numa, names, .. } =
                group_tasks(std::slice::from_ref(&p));
            let head = JobHead {
                name: meta.name,
                namespace: meta.namespace,
                kind: "Pod".into(),
                queue: q.expect("checked"),
                priority_class: root.get("spec").and_then(|s| s.get("priorityClassName")).and_then(Node::scalar),
                min_available: 1,
                timing: timing.expect("checked"),
                grace: p.shape.grace,
            };
            // No controller owns it: once evicted or failed it is gone for good.
            let owned = has_owner(root);
            let (mut j, profile) = common::assemble(head, tasks, cx);
            // Its shadow PodGroup takes the pod's keys (the owner's, if any, are
            // not in the manifests).
            super::apps::controller_group(&mut ck, None, &p.shape, &mut j);
            j.orphan = !owned;
            j.initial = initial;
            j.initial_vgpu = initial_vgpu;
            j.initial_vnpu = initial_vnpu;
            j.initial_numa = initial_numa;
            j.pod_names = Some(Box::new(names));
            out.push(ImportedJob { spec: j, profile, file: p.doc.file.clone(), doc: p.doc.label(), at: root.at });
        }
        out
    }
}

/// The pods of a group as tasks.
struct Grouped {
    tasks: Vec<TaskSpec>,
    /// Pods already bound: (task, replica, node).
    initial: Vec<(usize, u32, NodeId)>,
    /// Their vGPU cards, where their annotation says (see `Pod::vgpu`).
    initial_vgpu: Vec<(usize, u32, lahar_core::devices::vgpu::CardTakes)>,
    /// Their Ascend chips, where their annotations say (see `Pod::vnpu`).
    initial_vnpu: Vec<(usize, u32, lahar_core::devices::vnpu::NpuTakes)>,
    /// Their CPUs, on nodes with a NUMA topology (see `Pod::numa`).
    initial_numa: Vec<(usize, u32, lahar_core::devices::numa::CpuSet)>,
    /// The pods' own names per task, in replica order.
    names: Vec<Vec<String>>,
    /// `JobSpec::roles`, when two tasks share a role.
    roles: Option<Box<[u16]>>,
    /// Each task's role; the first task of a role is where its minTaskMember goes.
    role_names: Vec<String>,
    /// Each task's sub-job (see `Pod::sub`).
    subs: Vec<Option<(u16, Vec<String>)>>,
}

/// Groups pods into tasks: pods of one role (`volcano.sh/task-spec`, else "")
/// with identical specs (requests, node selector and affinity, tolerations,
/// priority, preemptability, plugin hints) are one task, named after the role, or for the role ""
/// after the first pod without its trailing `-<n>`. Pods keep name order within a
/// task; bound pods become the job's initial placements. The gang checks count
/// roles, not tasks (`JobSpec::roles`), as Volcano counts pods by task-spec.
fn group_tasks(pods: &[Pod]) -> Grouped {
    let mut order: Vec<&Pod> = pods.iter().collect();
    order.sort_by_key(|p| natural(&p.name));
    let mut tasks: Vec<(TaskSpec, &str, Vec<&Pod>)> = Vec::new();
    for p in order {
        let same = |t: &TaskSpec| {
            t.requests == p.shape.requests
                && t.node_selector == p.shape.node_selector
                && t.node_label_in == p.shape.node_label_in
                && t.tolerations == p.shape.tolerations
                && t.priority == p.shape.priority
                && t.preemptable == p.shape.preemptable
                && t.never_preempts == p.shape.never_preempts
                && t.hints.as_deref().map(|h| (&h.scoring, h.cooldown, &h.vgpu, &h.numa, &h.vnpu))
                    == p.shape.hints.as_deref().map(|h| (&h.scoring, h.cooldown, &h.vgpu, &h.numa, &h.vnpu))
        };
        match tasks.iter_mut().find(|(t, role, m)| *role == p.role && m[0].sub == p.sub && same(t)) {
            Some((t, _, members)) => {
                t.replicas += 1;
                members.push(p);
            }
            None => {
                let name = if p.role.is_empty() { strip_index(&p.name) } else { p.role.clone() };
                tasks.push((common::task(&name, 1, 0, &p.shape), &p.role, vec![p]));
            }
        }
    }
    let (mut initial, mut initial_vgpu, mut initial_numa, mut initial_vnpu) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (ti, (_, _, members)) in tasks.iter().enumerate() {
        for (k, p) in members.iter().enumerate() {
            if let Some((n, _)) = &p.node {
                initial.push((ti, k as u32, *n));
                if let Some(v) = &p.vgpu {
                    initial_vgpu.push((ti, k as u32, v.clone()));
                }
                if let Some(c) = p.numa {
                    initial_numa.push((ti, k as u32, c));
                }
                if !p.vnpu.is_empty() {
                    initial_vnpu.push((ti, k as u32, p.vnpu.clone()));
                }
            }
        }
    }
    let role_names: Vec<String> = tasks.iter().map(|(_, r, _)| r.to_string()).collect();
    let lead: Vec<u16> =
        role_names.iter().map(|r| role_names.iter().position(|x| x == r).expect("its own role") as u16).collect();
    let shared = lead.iter().enumerate().any(|(i, &l)| l as usize != i);
    Grouped {
        subs: tasks.iter().map(|(_, _, members)| members[0].sub.clone()).collect(),
        names: tasks.iter().map(|(_, _, members)| members.iter().map(|p| p.name.clone()).collect()).collect(),
        tasks: tasks.into_iter().map(|(t, _, _)| t).collect(),
        initial,
        initial_vgpu,
        initial_vnpu,
        initial_numa,
        roles: shared.then(|| lead.into_boxed_slice()),
        role_names,
    }
}

/// The annotation that says how many pods a PodGroup's controller will create.
const REPLICAS: &str = "lahar.io/replicas";

/// A PodGroup without Pods: what the scheduler sees of a job before its controller
/// creates the pods. It takes part in enqueue with its `minMember` and
/// `minResources`. With `lahar.io/replicas: N` it gets N pods of the role "" (named
/// `<group>-pod-<i>`), each requesting `minResources / minMember` rounded up;
/// without it, no pod: it is admitted or not, and never runs.
fn podless(ck: &mut Ck<'_>, g: &Group, min_res: Option<&lahar_core::model::resource::Resources>) -> Grouped {
    let mut shape = PodShape {
        requests: lahar_core::model::resource::Resources::ZERO,
        written: lahar_core::model::resource::Resources::ZERO,
        node_selector: Vec::new(),
        node_label_in: Vec::new(),
        priority: 1,
        preemptable: true,
        never_preempts: false,
        tolerations: Vec::new(),
        hints: None,
        scheduler_name: None,
        labels: BTreeMap::new(),
        annotations: BTreeMap::new(),
        grace: None,
    };
    let mut replicas = 0;
    if let Some((n, at)) = g.annotations.get(REPLICAS) {
        let path = format!("metadata.annotations.{REPLICAS}");
        match (n.trim().parse::<u32>(), min_res) {
            (Ok(n), _) if n > lahar_core::model::job::MAX_PODS_PER_JOB => ck.err(
                *at,
                &path,
                format!(
                    "must be an integer from 1 to {} (pods of one job, at most), got {n}",
                    lahar_core::model::job::MAX_PODS_PER_JOB
                ),
            ),
            (Ok(n), Some(r)) if n >= g.min_member.max(1) && g.min_member >= 1 => {
                replicas = n;
                let per = g.min_member as i64;
                for d in 0..lahar_core::model::resource::DIMS {
                    shape.requests.set(d, (r.get(d) + per - 1).div_euclid(per));
                }
            }
            (Ok(_), None) => ck.err(
                *at,
                &path,
                "pods made for a PodGroup request `spec.minResources / minMember`: give `spec.minResources`",
            ),
            (Ok(n), Some(_)) if g.min_member == 0 => ck.err(
                *at,
                &path,
                format!("{n} pods need `spec.minMember` ≥ 1 (each requests minResources / minMember)"),
            ),
            (Ok(n), Some(_)) => ck.err(*at, &path, format!("{n} pods are fewer than minMember {}", g.min_member)),
            (Err(_), _) => ck.err(*at, &path, format!("expected an integer ≥ 1, got `{n}`")),
        }
    }
    shape.requests.set(PODS, 1);
    Grouped {
        tasks: vec![common::task("pod", replicas, 0, &shape)],
        initial: Vec::new(),
        initial_vgpu: Vec::new(),
        initial_vnpu: Vec::new(),
        initial_numa: Vec::new(),
        names: vec![Vec::new()],
        roles: None,
        role_names: vec![String::new()],
        subs: vec![None],
    }
}

/// `worker-10` sorts after `worker-9`.
fn natural(name: &str) -> (String, u64) {
    match name.rsplit_once('-') {
        Some((stem, n)) if n.parse::<u64>().is_ok() => (stem.to_string(), n.parse().unwrap_or(0)),
        _ => (name.to_string(), 0),
    }
}

fn strip_index(name: &str) -> String {
    natural(name).0
}

/// Whether a Pod names a controller (`metadata.ownerReferences`, not empty).
fn has_owner(root: &Node) -> bool {
    root.get("metadata")
        .and_then(|m| m.get("ownerReferences"))
        .is_some_and(|o| matches!(&o.val, Val::Seq(s) if !s.is_empty()))
}
