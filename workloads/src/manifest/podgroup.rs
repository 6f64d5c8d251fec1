//! What Volcano's scheduler itself sees: PodGroups, Pods and PriorityClasses. Pods of
//! one PodGroup become one job; pods already bound to a node start there at t=0.

use super::common::{self, Ck, JobHead, PodShape, PriorityClass, PriorityClasses};
use super::yaml::{At, Doc, Node, Val};
use super::{Context, ImportedJob, ManifestError};
use lahar_core::cluster::NodeId;
use lahar_core::job::TaskSpec;
use lahar_core::resource::PODS;
use std::collections::BTreeMap;

/// Reads one PriorityClass into `into`.
pub(crate) fn priority_class(d: &Doc, into: &mut PriorityClasses, errs: &mut Vec<ManifestError>) {
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
        && let Some((field, m)) = into.check(&meta.name, i64::from(v), global_default)
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
    network_topology: Option<lahar_core::job::NetworkTopology>,
    annotations: BTreeMap<String, (String, At)>,
    annotations_at: At,
    ok: bool,
}

struct Pod {
    name: String,
    doc: Doc,
    shape: PodShape,
    task: Option<String>,
    node: Option<(NodeId, String)>,
    /// Shadow PodGroup: a pod without the group-name annotation is its own job.
    bare: bool,
}

/// PodGroups and Pods of one workload source, joined at the end.
#[derive(Default)]
pub(crate) struct Groups {
    groups: Vec<Group>,
    pods: BTreeMap<(String, String), Vec<Pod>>,
    bare: Vec<Pod>,
}

const PHASES: [&str; 5] = ["Pending", "Inqueue", "Running", "Unknown", "Completed"];

impl Groups {
    pub fn add_group(&mut self, d: &Doc, ck: &mut Ck<'_>) {
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
        let nt = spec.get("networkTopology").map(|n| common::network_topology(ck, n, "spec.networkTopology"));
        if let Some(st) = root.get("status")
            && let Some(p) = ck.opt_str(st, "phase", "status")
            && !PHASES.contains(&p.as_str())
        {
            ck.err(
                st.get("phase").and_then(|n| n.at),
                "status.phase",
                format!("unknown PodGroup phase `{p}`; expected one of: {}", PHASES.join(", ")),
            );
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
            annotations: meta.annotations,
            annotations_at: meta.at,
            ok: ck.ok(),
        });
    }

    pub fn add_pod(&mut self, d: &Doc, cx: &mut Context<'_>, ck: &mut Ck<'_>) {
        let root = &d.root;
        // pod_shape reads labels and annotations; only the name and namespace are left.
        let m = root.get("metadata");
        let name = m.and_then(|m| m.get("name")).and_then(Node::scalar).unwrap_or_default();
        if name.is_empty() {
            ck.err(m.and_then(|m| m.at).or(root.at), "metadata.name", "expected a non-empty name");
        }
        let namespace = m.and_then(|m| m.get("namespace")).and_then(Node::scalar).unwrap_or_else(|| "default".into());
        let shape = common::pod_shape(ck, cx, root, "");
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
        let task = shape
            .annotations
            .get("volcano.sh/task-spec")
            .or(shape.labels.get("volcano.sh/task-spec"))
            .map(|x| x.0.clone());
        if !ck.ok() {
            return;
        }
        let pod = Pod { name, doc: d.clone(), shape, task, node, bare: false };
        match pod.shape.annotations.get("scheduling.k8s.io/group-name") {
            Some((g, _)) => self.pods.entry((namespace, g.clone())).or_default().push(pod),
            None => self.bare.push(Pod { bare: true, ..pod }),
        }
    }

    pub fn finish(mut self, cx: &mut Context<'_>, errs: &mut Vec<ManifestError>) -> Vec<ImportedJob> {
        let mut out = Vec::new();
        for g in std::mem::take(&mut self.groups) {
            let pods = self.pods.remove(&(g.namespace.clone(), g.name.clone())).unwrap_or_default();
            let mut ck = Ck::new(&g.doc, errs);
            if !g.ok {
                continue;
            }
            let root = &g.doc.root;
            // A PodGroup a controller made (`ownerReferences`, as `kubectl get -o yaml`
            // shows it) whose Pods are not in the manifests: its owner creates the
            // Pods, so there is nothing here to schedule; lahar imports the owner.
            let owned = root
                .get("metadata")
                .and_then(|m| m.get("ownerReferences"))
                .is_some_and(|o| matches!(&o.val, Val::Seq(s) if !s.is_empty()));
            if pods.is_empty() && owned {
                continue;
            }
            if pods.is_empty() {
                ck.err(
                    root.at,
                    "",
                    format!(
                        "PodGroup `{}/{}` has no pods; give its Pods the annotation `scheduling.k8s.io/group-name: {}`",
                        g.namespace, g.name, g.name
                    ),
                );
                continue;
            }
            let (mut tasks, initial, names) = group_tasks(&pods);
            for t in &mut tasks {
                t.min_available = g.min_task.get(&*t.name).copied().unwrap_or(0);
            }
            for k in g.min_task.keys() {
                if !tasks.iter().any(|t| *t.name == **k) {
                    ck.err(
                        root.at,
                        &format!("spec.minTaskMember.{k}"),
                        format!("no pod of task `{k}` (annotation volcano.sh/task-spec)"),
                    );
                }
            }
            let total: u32 = tasks.iter().map(|t| t.replicas).sum();
            if g.min_member > total {
                ck.err(
                    root.at,
                    "spec.minMember",
                    format!("{} pods belong to the PodGroup, fewer than minMember {}", total, g.min_member),
                );
            }
            let min_res = root.get("spec").and_then(|spec| ck.resource_vec(spec, "minResources", "spec", cx.names));
            let q = common::queue(&mut ck, cx, &g.queue, g.queue_at, "spec.queue");
            let timing = common::timing(&mut ck, &g.annotations, g.annotations_at, "");
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
            };
            let (mut j, profile) = common::assemble(head, tasks, cx);
            j.initial = initial;
            j.pod_names = Some(Box::new(names));
            j.network_topology = g.network_topology;
            if let Some(r) = min_res {
                let mut r = r;
                r.set(PODS, j.min_resources.get(PODS));
                j.min_resources = r;
            }
            out.push(ImportedJob { spec: j, profile, file: g.doc.file.clone(), doc: g.doc.index, at: root.at });
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
            let q = common::queue(&mut ck, cx, "default", root.at, "metadata");
            let timing = common::timing(&mut ck, &p.shape.annotations, meta.at, "");
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
            let (tasks, initial, names) = group_tasks(std::slice::from_ref(&p));
            let head = JobHead {
                name: meta.name,
                namespace: meta.namespace,
                kind: "Pod".into(),
                queue: q.expect("checked"),
                priority_class: root.get("spec").and_then(|s| s.get("priorityClassName")).and_then(Node::scalar),
                min_available: 1,
                timing: timing.expect("checked"),
            };
            let (mut j, profile) = common::assemble(head, tasks, cx);
            j.initial = initial;
            j.pod_names = Some(Box::new(names));
            out.push(ImportedJob { spec: j, profile, file: p.doc.file.clone(), doc: p.doc.index, at: root.at });
        }
        out
    }
}

/// Tasks, initial placements (task, replica, node) and pod names per task.
type Grouped = (Vec<TaskSpec>, Vec<(usize, u32, NodeId)>, Vec<Vec<String>>);

/// Groups pods into tasks: by `volcano.sh/task-spec`, else by identical spec (named
/// after the first pod without its trailing `-<n>`). Pods keep name order within a
/// task; bound pods become the job's initial placements. Also returns the pods' own
/// names per task, in replica order: outputs show the user's names.
fn group_tasks(pods: &[Pod]) -> Grouped {
    let mut order: Vec<&Pod> = pods.iter().collect();
    order.sort_by_key(|p| natural(&p.name));
    let mut tasks: Vec<(TaskSpec, Vec<&Pod>)> = Vec::new();
    for p in order {
        let same = |t: &TaskSpec| match &p.task {
            Some(n) => *t.name == **n,
            None => {
                t.requests == p.shape.requests
                    && t.node_selector == p.shape.node_selector
                    && t.priority == p.shape.priority
                    && t.preemptable == p.shape.preemptable
            }
        };
        match tasks.iter_mut().find(|(t, members)| same(t) && (p.task.is_some() == members[0].task.is_some())) {
            Some((t, members)) => {
                t.replicas += 1;
                members.push(p);
            }
            None => {
                let name = p.task.clone().unwrap_or_else(|| strip_index(&p.name));
                tasks.push((common::task(&name, 1, 0, &p.shape), vec![p]));
            }
        }
    }
    let mut initial = Vec::new();
    for (ti, (_, members)) in tasks.iter().enumerate() {
        for (k, p) in members.iter().enumerate() {
            if let Some((n, _)) = &p.node {
                initial.push((ti, k as u32, *n));
            }
        }
    }
    let names = tasks.iter().map(|(_, members)| members.iter().map(|p| p.name.clone()).collect()).collect();
    (tasks.into_iter().map(|(t, _)| t).collect(), initial, names)
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
