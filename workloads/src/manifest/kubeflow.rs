//! Kubeflow training jobs (PyTorchJob, MPIJob, TFJob, PaddleJob, XGBoostJob, JAXJob) as the
//! training-operator (and mpi-operator) create a Volcano PodGroup for them: one task
//! per replica type, `minMember` = `runPolicy.schedulingPolicy.minAvailable`, else
//! the sum of all replicas; queue and PriorityClass from the scheduling policy.

use super::common::{self, Ck, JobHead, join};
use super::yaml::{Doc, Node, Val};
use super::{Context, ImportedJob};

/// (replica-specs field, replica types in the order the PodGroup's minResources
/// takes them: coordinator roles first).
fn layout(kind: &str) -> (&'static str, &'static [&'static str]) {
    match kind {
        "PyTorchJob" => ("pytorchReplicaSpecs", &["Master", "Worker"]),
        "MPIJob" => ("mpiReplicaSpecs", &["Launcher", "Worker"]),
        "TFJob" => ("tfReplicaSpecs", &["Chief", "Master", "PS", "Worker", "Evaluator"]),
        "PaddleJob" => ("paddleReplicaSpecs", &["Master", "Worker"]),
        "JAXJob" => ("jaxReplicaSpecs", &["Worker"]),
        _ => ("xgbReplicaSpecs", &["Master", "Worker"]),
    }
}

pub(crate) fn job(d: &Doc, kind: &str, cx: &mut Context<'_>, ck: &mut Ck<'_>) -> Option<ImportedJob> {
    let root = &d.root;
    let (api, _) = common::kind_of(root);
    let meta = common::meta(ck, root, "", true);
    let empty = Node { at: root.at, val: Val::Null };
    let spec = root.get("spec").unwrap_or(&empty);
    if let Some(r) = spec.get("runPolicy") {
        let what = "fails the job once it has been active that long";
        ck.unmodelled(r, "activeDeadlineSeconds", "spec.runPolicy", what, "job");
    }
    let (field, types) = layout(kind);
    let rp = format!("spec.{field}");
    let specs = ck.map(spec, field, "spec");
    if specs.is_empty() {
        ck.err(spec.at, &rp, format!("a {kind} needs `{field}` with at least one of: {}", types.join(", ")));
    }
    // The operators' defaulting turns replica type keys into their canonical case
    // (`worker` → `Worker`, `ps` → `PS`), so keys match case-insensitively.
    let canonical = |k: &str| types.iter().find(|t| t.eq_ignore_ascii_case(k)).copied();
    let mut seen: Vec<&str> = Vec::new();
    for (k, n) in specs {
        if let Some(t) = canonical(k) {
            if seen.contains(&t) {
                ck.err(
                    n.at,
                    &join(&rp, k),
                    format!("replica type `{t}` is given twice (keys match case-insensitively)"),
                );
            }
            seen.push(t);
        } else {
            ck.err(
                n.at,
                &join(&rp, k),
                format!("unknown replica type `{k}` for {kind}; expected one of: {}", types.join(", ")),
            );
        }
    }
    let (mut tasks, mut grace) = (Vec::new(), None);
    for ty in types {
        let Some((key, r)) = specs.iter().find(|(k, _)| canonical(k) == Some(*ty)) else { continue };
        let p = join(&rp, key);
        let replicas = ck.opt_count(r, "replicas", &p, 0).unwrap_or(1) as u32;
        let Some(tpl) = r.get("template") else {
            ck.err(r.at, &join(&p, "template"), "a replica spec needs a pod `template`");
            continue;
        };
        let shape = common::pod_shape(ck, cx, tpl, &join(&p, "template"));
        common::no_container_exit(ck, &shape, &join(&p, "template"));
        grace = grace.max(shape.grace.filter(|_| replicas > 0));
        let sched_at = tpl.get("spec").and_then(|s| s.get("schedulerName")).and_then(|n| n.at);
        common::check_scheduler(
            ck,
            shape.scheduler_name.as_deref(),
            sched_at,
            &join(&p, "template.spec.schedulerName"),
        );
        // The PodGroup has no minTaskMember: the gang counts pods of any role.
        let mut task = common::task(&ty.to_lowercase(), replicas, 0, &shape);
        // The training operator's labels: the job, and the replica type in lower case.
        common::add_labels(
            &mut task,
            &[
                ("training.kubeflow.org/job-name", &meta.name),
                ("training.kubeflow.org/replica-type", &ty.to_lowercase()),
            ],
        );
        tasks.push(task);
    }
    let total: u32 = tasks.iter().map(|t| t.replicas).sum();
    // MPIJob v2beta1 and the training-operator kinds keep the policy in spec.runPolicy.
    let sp = spec.get("runPolicy").and_then(|r| r.get("schedulingPolicy"));
    let spp = "spec.runPolicy.schedulingPolicy";
    let mut min_available = total;
    // A PyTorchJob's elasticPolicy (the operator's defaulting: a missing bound
    // takes the other's value, both missing the workers' replicas): the gang
    // needs the masters and minReplicas workers, and the job is elastic.
    let elastic = match (kind, spec.get("elasticPolicy")) {
        ("PyTorchJob", Some(e)) => {
            let ep = "spec.elasticPolicy";
            let workers = tasks.iter().find(|t| &*t.name == "worker").map_or(0, |t| t.replicas);
            let masters = total - workers;
            let lo = ck.opt_count(e, "minReplicas", ep, 1).map(|x| x as u32);
            let hi = ck.opt_count(e, "maxReplicas", ep, 1).map(|x| x as u32);
            let (lo, hi) = match (lo, hi) {
                (Some(l), Some(h)) => (l, h),
                (None, Some(h)) => (h, h),
                (Some(l), None) => (l, l),
                (None, None) => (workers, workers),
            };
            if lo > hi {
                ck.err(
                    e.get("minReplicas").and_then(|n| n.at),
                    &join(ep, "minReplicas"),
                    format!("must not exceed maxReplicas ({hi}), got {lo}"),
                );
            }
            if workers > hi {
                ck.err(
                    e.at,
                    &join(ep, "maxReplicas"),
                    format!("the Worker replicas ({workers}) exceed maxReplicas ({hi})"),
                );
            }
            min_available = masters + lo.min(workers);
            true
        }
        _ => false,
    };
    // Older training-operator releases read the queue from this annotation.
    let (mut queue, mut queue_at) = match meta.annotations.get(common::QUEUE_NAME_ANNOTATION) {
        Some((q, at)) => (q.clone(), *at),
        None => ("default".to_string(), root.at),
    };
    let mut class = None;
    let mut min_res = None;
    if let Some(s) = sp {
        if let Some(m) = ck.opt_int(s, "minAvailable", spp, 0) {
            if m as u32 > total {
                ck.err(
                    s.get("minAvailable").and_then(|n| n.at),
                    &join(spp, "minAvailable"),
                    format!("must not exceed the total replicas ({total}), got {m}"),
                );
            }
            min_available = m as u32;
        }
        if let Some(q) = ck.opt_str(s, "queue", spp).filter(|q| !q.is_empty()) {
            queue = q;
            queue_at = s.get("queue").and_then(|n| n.at);
        }
        class = ck.opt_str(s, "priorityClass", spp).filter(|c| !c.is_empty());
        min_res = ck.resource_vec(s, "minResources", spp, cx.names);
    }
    let q = common::queue(ck, cx, &queue, queue_at, &join(spp, "queue"));
    let timing = common::timing(ck, cx, &meta.annotations, meta.at, "");
    if !ck.ok() {
        return None;
    }
    let head = JobHead {
        name: meta.name,
        namespace: meta.namespace,
        kind: kind.to_string(),
        queue: q?,
        priority_class: class,
        min_available,
        timing: timing?,
        grace,
    };
    let (mut j, profile) = common::assemble(head, tasks, cx);
    // The training-operator (kubeflow.org/v1) makes no pod while Volcano's PodGroup
    // is Pending (`DelayPodCreationDueToPodGroup`); the MPI operator's v2beta1
    // MPIJob creates its pods at once.
    j.pods_once_admitted = !(kind == "MPIJob" && api == "kubeflow.org/v2beta1");
    if let Some(r) = min_res {
        j.min_resources = r;
    }
    if let Some(b) = spec.get("runPolicy").and_then(|r| ck.opt_int(r, "backoffLimit", "spec.runPolicy", 0)) {
        j.max_retry = b as u32;
    }
    if elastic && j.elastic.is_none() {
        j.elastic = Some(lahar_core::model::elastic::Elastic::default());
    }
    Some(ImportedJob { spec: j, profile, file: d.file.clone(), doc: d.label(), at: root.at })
}
