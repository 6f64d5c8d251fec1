//! Manifest import: Kubernetes objects (VolcanoJob, Kubeflow jobs, PodGroup + Pods,
//! PriorityClass, Queue, HyperNode) turned into lahar jobs, queues and HyperNodes the
//! way their controllers would create PodGroups and Pods. The mapping per kind is
//! documented in docs/manifests.md.
//!
//! Every problem is collected as a [`Diagnostic`] naming the file, the line and
//! column, the document (1-based) and the field path.

mod affinity;
mod apps;
mod argo;
mod batchjob;
mod ck;
mod common;
mod devices;
mod groups;
mod hpa;
mod hyperjob;
mod jobflow;
mod keda;
mod kthena;
mod kthena_policy;
mod kubeflow;
mod lws;
mod numa;
mod pdb;
mod podgroup;
mod ray;
mod ray_serve;
mod recurring;
mod schema;
mod snapshot;
mod spark;
mod subgroup;
mod trainer;
mod vcjob;
mod vnpu;
mod volcano;
pub mod yaml;

pub use argo::{is_unused_workflow_template, used_workflow_templates};
pub use common::{
    BUILTIN_PRIORITY_CLASSES, Context, HIGHEST_USER_PRIORITY, ImportedJob, PriorityClass, PriorityClasses,
};
/// The resources Volcano's vNPU sharing leaves out of the resource check: each
/// chip type's memory and core resources.
pub fn vnpu_ignored(config: &lahar_core::devices::vnpu::VnpuConfig) -> Vec<String> {
    vnpu::ignored(config)
}
pub use devices::{DEVICE_CONFIG_KEY, config_map_id, device_config, vnpu_chips};
pub use jobflow::{is_unused_template, used_templates};
pub use pdb::{budgets, is_budget};
pub use snapshot::{NpuRegistration, Snapshot, snapshot};
pub use trainer::{trainer_skip, used_runtimes};
pub use volcano::{NodeRef, hypernodes, queues};
pub use yaml::{At, Doc, Node, Val};

use lahar_core::model::job::MAX_PODS_PER_JOB;
use std::path::{Path, PathBuf};

pub(crate) use lahar_core::util::diag::Diagnostic;

/// Expands a path or a pattern (`*` and `?` in the last path component) relative to
/// `base` into the matching files, sorted by name. A pattern that matches nothing
/// is an error, as is a plain path that does not exist.
pub fn expand(base: &Path, pattern: &str) -> Result<Vec<PathBuf>, String> {
    let full = lahar_core::util::files::join(base, pattern);
    let Some(last) = full.file_name().map(|s| s.to_string_lossy().into_owned()) else {
        return Err(format!("`{pattern}` does not name a file"));
    };
    let dir = full.parent().map(Path::to_path_buf).unwrap_or_default();
    if dir.to_string_lossy().contains(['*', '?', '[']) {
        return Err(format!("`{pattern}`: wildcards are only supported in the file name, not in folders"));
    }
    if !last.contains(['*', '?']) {
        return match std::fs::metadata(&full) {
            Ok(m) if m.is_file() => Ok(vec![full]),
            Ok(m) if m.is_dir() => Err(format!(
                "cannot read `{}`: a folder, not a file (name its files: `{pattern}/*.yaml`)",
                full.display()
            )),
            Ok(_) => Err(format!(
                "cannot read `{}`: not a regular file (a pipe, /dev/stdin or a device); write it to a file first (e.g. `kubectl get ... -o yaml > snapshot.yaml`)",
                full.display()
            )),
            Err(_) => Err(format!("cannot read `{}`: no such file", full.display())),
        };
    }
    let entries = std::fs::read_dir(if dir.as_os_str().is_empty() { Path::new(".") } else { &dir })
        .map_err(|e| format!("cannot list `{}`: {e}", dir.display()))?;
    let mut out: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .filter(|e| lahar_core::util::text::wildcard_match(&last, &e.file_name().to_string_lossy()))
        .map(|e| dir.join(e.file_name()))
        .collect();
    out.sort();
    if out.is_empty() {
        return Err(format!("`{pattern}` matches no file in `{}`", dir.display()));
    }
    Ok(out)
}

/// Reads every document of the files a path or pattern names (files in name order,
/// documents in file order). `shown` turns a path into the name used in messages.
pub fn read(base: &Path, pattern: &str) -> Result<Vec<Doc>, Vec<Diagnostic>> {
    let files = expand(base, pattern)
        .map_err(|m| vec![Diagnostic { file: pattern.to_string(), at: None, path: String::new(), message: m }])?;
    let mut docs = Vec::new();
    let mut errs = Vec::new();
    for f in files {
        let name = f.display().to_string();
        match lahar_core::util::files::read_to_string(&f) {
            Ok(text) => match yaml::parse_documents(&text, &name) {
                Ok(d) => docs.extend(d.into_iter().flat_map(|d| list_items(d, &mut errs))),
                Err((at, message)) => errs.push(Diagnostic { file: name, at, path: String::new(), message }),
            },
            Err(e) => errs.push(Diagnostic { file: name, at: None, path: String::new(), message: e.to_string() }),
        }
    }
    if errs.is_empty() { Ok(docs) } else { Err(errs) }
}

/// A document as objects: a `kind: List` (what `kubectl get -o yaml` prints for
/// several objects) becomes its `items`, each located as `document N: items[K]`;
/// any other document is one object.
fn list_items(d: Doc, errs: &mut Vec<Diagnostic>) -> Vec<Doc> {
    let (api, kind) = common::kind_of(&d.root);
    if kind != "List" || !(api == "v1" || api.is_empty()) {
        return vec![d];
    }
    match d.root.get("items").map(|n| &n.val) {
        Some(yaml::Val::Seq(items)) => items
            .iter()
            .enumerate()
            .map(|(k, root)| Doc {
                file: d.file.clone(),
                index: d.index,
                item: Some(k),
                root: root.clone(),
                text: d.text.clone(),
            })
            .collect(),
        Some(yaml::Val::Null) | None => Vec::new(),
        Some(_) => {
            let at = d.root.get("items").and_then(|n| n.at);
            errs.push(Diagnostic {
                file: d.file.clone(),
                at,
                path: format!("{}: items", d.label()),
                message: "a List's `items` must be a list of objects".into(),
            });
            Vec::new()
        }
    }
}

/// Whether `d` is a Volcano Queue.
pub fn is_queue(d: &Doc) -> bool {
    let (api, kind) = common::kind_of(&d.root);
    kind == "Queue" && api.starts_with("scheduling.volcano.sh/")
}

/// `metadata.name` of an object (empty when it has none).
pub fn object_name(d: &Doc) -> String {
    d.root.get("metadata").and_then(|m| m.get("name")).and_then(Node::scalar).unwrap_or_default()
}

/// `(metadata.namespace, metadata.name)` of an object, the namespace `default`
/// when it names none (objects that name others in their namespace).
pub(crate) fn ns_name(d: &Doc) -> (String, String) {
    let ns = d.root.get("metadata").and_then(|m| m.get("namespace")).and_then(Node::scalar);
    (ns.unwrap_or_else(|| "default".into()), object_name(d))
}

/// `Kind (apiVersion)` when `d` is an object a workload file may hold beside its jobs
/// that makes no pods for the scheduler — configuration, networking, storage,
/// access control, autoscaling, workloads whose pods another scheduler places,
/// DaemonSets — and is skipped (and counted), not an error.
pub fn support_object(d: &Doc) -> Option<String> {
    let (api, kind) = common::kind_of(&d.root);
    let group = if api.contains('/') { api.split('/').next().unwrap_or_default() } else { "" };
    let kubeflow_other = if group == "kubeflow.org" { kubeflow_scheduler(d) } else { None };
    let known = match group {
        "" => matches!(
            kind.as_str(),
            "ConfigMap"
                | "Secret"
                | "Service"
                | "ServiceAccount"
                | "Endpoints"
                | "PersistentVolumeClaim"
                | "PersistentVolume"
                | "Namespace"
                | "LimitRange"
                | "ResourceQuota"
        ),
        "rbac.authorization.k8s.io" => {
            matches!(kind.as_str(), "Role" | "RoleBinding" | "ClusterRole" | "ClusterRoleBinding")
        }
        "networking.k8s.io" => matches!(kind.as_str(), "Ingress" | "IngressClass" | "NetworkPolicy"),
        "storage.k8s.io" => kind == "StorageClass",
        // Workloads whose pods another scheduler places (Volcano never sees them),
        // and DaemonSets, whose one pod per node lahar does not simulate.
        "apps" if kind == "DaemonSet" => true,
        "apps" if matches!(kind.as_str(), "Deployment" | "ReplicaSet" | "StatefulSet") => {
            let scheduler = apps::scheduler_of(d);
            if scheduler != "volcano" {
                return Some(format!("{kind} ({api}) of schedulerName `{scheduler}`"));
            }
            false
        }
        "workload.serving.volcano.sh" if matches!(kind.as_str(), "ModelServing" | "ModelBooster") => {
            let scheduler = kthena::scheduler_of(d, &kind);
            if scheduler != "volcano" {
                return Some(format!("{kind} ({api}) of schedulerName `{scheduler}`"));
            }
            false
        }
        // kthena's AutoscalingPolicyBinding (before kthena v0.4, the binding named the
        // target; lahar reads AutoscalingPolicies with their own) and its router's objects, KEDA's
        // credentials and Prometheus' monitors, the Gateway API inference extension's pools: no pods.
        "workload.serving.volcano.sh" => kind == "AutoscalingPolicyBinding",
        "networking.serving.volcano.sh" => true,
        "keda.sh" if kind == "ScaledJob" => {
            // Its Jobs' pods: another scheduler's are skipped; Volcano's are refused
            // where the kind is read.
            let scheduler = d
                .root
                .get("spec")
                .and_then(|s| s.get("jobTargetRef"))
                .and_then(|j| j.get("template"))
                .and_then(|t| t.get("spec"))
                .and_then(|s| s.get("schedulerName"))
                .and_then(yaml::Node::scalar)
                .unwrap_or_else(|| "default-scheduler".into());
            if scheduler != "volcano" {
                return Some(format!("{kind} ({api}) of schedulerName `{scheduler}`"));
            }
            false
        }
        "keda.sh" => matches!(kind.as_str(), "TriggerAuthentication" | "ClusterTriggerAuthentication"),
        "monitoring.coreos.com" => matches!(kind.as_str(), "ServiceMonitor" | "PodMonitor" | "PrometheusRule"),
        "inference.networking.k8s.io" | "inference.networking.x-k8s.io" => true,
        "leaderworkerset.x-k8s.io" if kind == "LeaderWorkerSet" => {
            if let Some(Ok(scheduler)) = lws::scheduler_of(d).filter(|s| s.as_ref().is_ok_and(|s| s != "volcano")) {
                return Some(format!("{kind} ({api}) of schedulerName `{scheduler}`"));
            }
            false
        }
        "batch" if kind == "CronJob" => {
            let template = d.root.get("spec").and_then(|s| s.get("jobTemplate"));
            let scheduler = template.map(apps::scheduler_of_spec).unwrap_or_else(|| "default-scheduler".into());
            if scheduler != "volcano" {
                return Some(format!("{kind} ({api}) of schedulerName `{scheduler}`"));
            }
            if d.root.get("spec").and_then(|s| s.get("suspend")).is_some_and(|n| n.val == yaml::Val::Bool(true)) {
                return Some(format!("{kind} ({api}), suspended"));
            }
            false
        }
        "batch" if kind == "Job" => {
            let scheduler = apps::scheduler_of(d);
            if scheduler != "volcano" {
                return Some(format!("{kind} ({api}) of schedulerName `{scheduler}`"));
            }
            // A suspended Job makes no pods until resumed.
            if d.root.get("spec").and_then(|s| s.get("suspend")).is_some_and(|n| n.val == yaml::Val::Bool(true)) {
                return Some(format!("{kind} ({api}), suspended"));
            }
            false
        }
        // A training job whose every pod template names another scheduler (a
        // TFJob for scheduler-plugins' coscheduling): Volcano never sees its pods.
        "kubeflow.org" if kubeflow_other.is_some() => {
            let s = kubeflow_other.unwrap_or_default();
            return Some(format!("{kind} ({api}) of schedulerName `{s}`"));
        }
        // scheduler-plugins' gangs and quotas (coscheduling, capacity scheduling):
        // another scheduler's objects; Volcano's PodGroup is scheduling.volcano.sh.
        "scheduling.x-k8s.io" => matches!(kind.as_str(), "PodGroup" | "ElasticQuota"),
        // A suspended training job makes no pods until resumed.
        "kubeflow.org"
            if d.root
                .get("spec")
                .and_then(|s| s.get("runPolicy"))
                .and_then(|r| r.get("suspend"))
                .is_some_and(|n| n.val == yaml::Val::Bool(true)) =>
        {
            return Some(format!("{kind} ({api}), suspended"));
        }
        "discovery.k8s.io" => kind == "EndpointSlice",
        // Gateway API routing, kustomize's build file: no pods.
        "gateway.networking.k8s.io" => true,
        "kustomize.config.k8s.io" => true,
        // KAI scheduler's queues: another scheduler's objects.
        "scheduling.run.ai" => kind == "Queue",
        // A RayJob on an existing RayCluster adds no pod to the cluster's gang (its
        // submitter pod is not simulated; docs/manifests.md).
        "ray.io"
            if kind == "RayJob"
                && d.root
                    .get("spec")
                    .is_some_and(|s| s.get("clusterSelector").is_some() && s.get("rayClusterSpec").is_none()) =>
        {
            return Some(format!("{kind} ({api}) on an existing RayCluster (clusterSelector)"));
        }
        // A suspended recurring object makes no runs.
        "batch.volcano.sh" | "ray.io" | "sparkoperator.k8s.io"
            if matches!(kind.as_str(), "CronJob" | "RayCronJob" | "ScheduledSparkApplication")
                && d.root
                    .get("spec")
                    .and_then(|s| s.get("suspend"))
                    .is_some_and(|n| n.val == yaml::Val::Bool(true)) =>
        {
            return Some(format!("{kind} ({api}), suspended"));
        }
        // Ray objects another scheduler places: KubeRay's per-object scheduler
        // label, else the labels YuniKorn's and KAI's integrations read.
        "ray.io" if matches!(kind.as_str(), "RayCluster" | "RayJob" | "RayService") => {
            if let Some(other) = ray_scheduler(d) {
                return Some(format!("{kind} ({api}) of {other}"));
            }
            false
        }
        // A SparkApplication for another batch scheduler (absent: the operator's
        // default, Volcano).
        "sparkoperator.k8s.io" if kind == "SparkApplication" => {
            let s = d.root.get("spec").and_then(|s| s.get("batchScheduler")).and_then(yaml::Node::scalar);
            if let Some(s) = s.filter(|s| s != "volcano") {
                return Some(format!("{kind} ({api}) of batchScheduler `{s}`"));
            }
            false
        }
        _ => false,
    };
    known.then(|| format!("{kind} ({api})"))
}

/// The scheduler every pod template of a Kubeflow training job names
/// (`spec.<kind>ReplicaSpecs.<type>.template.spec.schedulerName`) when they all
/// name the same one and it is not Volcano. A template without one is the
/// operator's choice (Volcano with its gang scheduler set): `None`.
fn kubeflow_scheduler(d: &Doc) -> Option<String> {
    let yaml::Val::Map(spec) = &d.root.get("spec")?.val else { return None };
    let mut names = spec
        .iter()
        .filter(|(k, _)| k.ends_with("ReplicaSpecs"))
        .filter_map(|(_, v)| match &v.val {
            yaml::Val::Map(types) => Some(types),
            _ => None,
        })
        .flatten()
        .map(|(_, r)| {
            r.get("template").and_then(|t| t.get("spec")).and_then(|s| s.get("schedulerName")).and_then(Node::scalar)
        });
    let first = names.next()??;
    let all_same = names.all(|n| n.as_deref() == Some(first.as_str()));
    (all_same && first != "volcano").then_some(first)
}

/// The scheduler a Ray object names when it is not Volcano: `ray.io/scheduler-name`
/// other than `volcano`, else YuniKorn's (`yunikorn.apache.org/app-id` or
/// `/queue`) or KAI's (`kai.scheduler/queue`) labels.
fn ray_scheduler(d: &Doc) -> Option<String> {
    let labels = d.root.get("metadata").and_then(|m| m.get("labels"));
    let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(yaml::Node::scalar);
    match label("ray.io/scheduler-name") {
        Some(s) if s == "volcano" => None,
        Some(s) => Some(format!("scheduler `{s}` (label ray.io/scheduler-name)")),
        None => ["yunikorn.apache.org/app-id", "yunikorn.apache.org/queue", "kai.scheduler/queue"]
            .into_iter()
            .find(|k| label(k).is_some())
            .map(|k| format!("another scheduler (label {k})")),
    }
}

/// The PriorityClasses among `docs` (other kinds are skipped).
pub fn priority_classes(docs: &[Doc], into: &mut PriorityClasses, errs: &mut Vec<Diagnostic>) {
    for d in docs {
        if common::kind_of(&d.root).1 == "PriorityClass" {
            podgroup::priority_class(d, into, errs);
        }
    }
}

/// The jobs among `docs`: one per workload object, and one per PodGroup (with its
/// Pods) or per Pod without a PodGroup. PriorityClasses and Volcano Queues are
/// skipped (read them with [`priority_classes`] and [`queues`]: a workload file may
/// hold its queue beside its job, as KubeRay's samples do); HyperNodes are errors
/// here.
pub fn jobs(docs: &[Doc], cx: &mut Context<'_>, errs: &mut Vec<Diagnostic>) -> Vec<ImportedJob> {
    let mut out = Vec::new();
    let mut groups = podgroup::Groups::default();
    let mut owners = std::collections::BTreeSet::new();
    let templates = jobflow::templates(docs);
    let workflow_templates = argo::templates(docs);
    let runtimes = trainer::runtimes(docs);
    let mut templates_reported = std::collections::BTreeSet::new();
    let mut hpas = Vec::new();
    let mut policies = Vec::new();
    for d in docs {
        let (api, kind) = common::kind_of(&d.root);
        let group = api.split('/').next().unwrap_or_default();
        let before = out.len();
        let mut ck = common::Ck::new(d, errs);
        schema::check(d, &mut ck);
        match (group, kind.as_str()) {
            (_, "") => ck.err(d.root.at, "kind", "expected `apiVersion` and `kind` (a Kubernetes object)"),
            ("batch.volcano.sh", "Job") => out.extend(vcjob::job(d, cx, &mut ck)),
            ("kubeflow.org", "PyTorchJob" | "MPIJob" | "TFJob" | "PaddleJob" | "XGBoostJob" | "JAXJob") => {
                out.extend(kubeflow::job(d, &kind, cx, &mut ck))
            }
            ("ray.io", "RayJob" | "RayCluster" | "RayService") => out.extend(ray::job(d, &kind, cx, &mut ck)),
            ("apps", "Deployment" | "ReplicaSet" | "StatefulSet") => out.extend(apps::job(d, &kind, cx, &mut ck)),
            ("batch", "Job") => out.extend(batchjob::job(d, cx, &mut ck)),
            ("leaderworkerset.x-k8s.io", "LeaderWorkerSet") => out.extend(lws::jobs(d, cx, &mut ck)),
            ("training.volcano.sh", "HyperJob") => out.extend(hyperjob::jobs(d, cx, &mut ck)),
            ("workload.serving.volcano.sh", "ModelServing") => out.extend(kthena::model_serving(d, cx, &mut ck)),
            ("workload.serving.volcano.sh", "ModelBooster") => out.extend(kthena::model_booster(d, cx, &mut ck)),
            ("sparkoperator.k8s.io", "SparkApplication") => out.extend(spark::job(d, cx, &mut ck)),
            ("flow.volcano.sh", "JobFlow") => {
                out.extend(jobflow::jobs(d, &templates, &mut templates_reported, cx, &mut ck))
            }
            // Read by the JobFlows that name them.
            ("flow.volcano.sh", "JobTemplate") => {}
            ("argoproj.io", "Workflow") => {
                drop(ck);
                out.extend(argo::jobs(d, &workflow_templates, cx, errs));
            }
            // Read by the Workflows that name them.
            ("argoproj.io", "WorkflowTemplate" | "ClusterWorkflowTemplate") => {}
            ("trainer.kubeflow.org", "TrainJob") => out.extend(trainer::job(d, &runtimes, cx, &mut ck)),
            // Read by the TrainJobs that name them.
            ("trainer.kubeflow.org", "TrainingRuntime" | "ClusterTrainingRuntime") => {}
            ("batch", "CronJob") => out.extend(recurring::jobs(d, recurring::BATCH_CRON_JOB, cx, &mut ck)),
            ("batch.volcano.sh", "CronJob")
            | ("ray.io", "RayCronJob")
            | ("sparkoperator.k8s.io", "ScheduledSparkApplication") => {
                out.extend(recurring::jobs(d, &kind, cx, &mut ck))
            }
            ("autoscaling", "HorizontalPodAutoscaler") => hpas.extend(hpa::read(d, cx, &mut ck)),
            ("keda.sh", "ScaledObject") => hpas.extend(keda::read(d, cx, &mut ck)),
            ("workload.serving.volcano.sh", "AutoscalingPolicy") => {
                policies.extend(kthena_policy::read(d, cx, &mut ck))
            }
            ("keda.sh", "ScaledJob") => ck.err(
                d.root.get("kind").and_then(|k| k.at),
                "kind",
                "a KEDA ScaledJob of schedulerName `volcano` is not simulated (it makes Jobs as events arrive, \
                 which lahar does not model); write its Jobs as batch/v1 Jobs, or leave it out",
            ),
            ("scheduling.volcano.sh", "PodGroup") => groups.add_group(d, cx, &mut ck),
            ("v1", "Pod") => groups.add_pod(d, cx, &mut ck),
            ("scheduling.k8s.io", "PriorityClass") => {}
            ("scheduling.volcano.sh", "Queue") => {}
            // Read with [`budgets`].
            ("policy", "PodDisruptionBudget") => {}
            ("topology.volcano.sh", "HyperNode") => ck.err(
                d.root.get("kind").and_then(|k| k.at),
                "kind",
                "HyperNode objects are read from `spec.cluster.hyperNodes: PATH`, not from workload manifests",
            ),
            _ => ck.err(
                d.root.get("kind").and_then(|k| k.at),
                "kind",
                format!(
                    "unknown kind `{kind}` of apiVersion `{api}`; expected a batch.volcano.sh Job, kubeflow.org \
                     PyTorchJob/MPIJob/TFJob/PaddleJob/XGBoostJob/JAXJob, ray.io RayJob/RayCluster/RayService/RayCronJob, \
                     apps/v1 Deployment/ReplicaSet/StatefulSet, leaderworkerset.x-k8s.io LeaderWorkerSet, workload.serving.volcano.sh ModelServing/ModelBooster, training.volcano.sh HyperJob, batch/v1 Job/CronJob, batch.volcano.sh CronJob, flow.volcano.sh JobFlow/JobTemplate, argoproj.io Workflow/WorkflowTemplate/ClusterWorkflowTemplate, trainer.kubeflow.org TrainJob/TrainingRuntime/ClusterTrainingRuntime, sparkoperator.k8s.io \
                     SparkApplication/ScheduledSparkApplication, scheduling.volcano.sh PodGroup, v1 Pod or \
                     scheduling.k8s.io PriorityClass"
                ),
            ),
        }
        // Each count is bounded where it is read; their sum is bounded here, for
        // every kind, before anything is built per pod.
        if let Some(j) = out[before..].iter().find(|j| j.spec.total_pods() > u64::from(MAX_PODS_PER_JOB)) {
            let (name, pods) = (j.spec.name.clone(), j.spec.total_pods());
            out.truncate(before);
            common::Ck::new(d, errs).err(
                d.root.at,
                "spec",
                format!("{kind} `{name}` has {pods} pods over its tasks; a job has at most {MAX_PODS_PER_JOB}"),
            );
            continue;
        }
        if out.len() > before {
            let m = d.root.get("metadata");
            let f = |k: &str| m.and_then(|m| m.get(k)).and_then(yaml::Node::scalar);
            owners.insert((kind, f("namespace").unwrap_or_else(|| "default".into()), f("name").unwrap_or_default()));
        }
    }
    out.extend(groups.finish(cx, &owners, errs));
    hpa::attach(hpas, docs, &mut out, cx);
    kthena_policy::attach(policies, &mut out, cx);
    out
}

#[cfg(test)]
mod kind_tests {
    use super::*;
    use lahar_core::model::cluster::NodeId;
    use lahar_core::model::job::PodGroupPhase;
    use lahar_core::model::queue::QueueId;
    use lahar_core::model::resource::{ResourceNames, Resources};
    use std::collections::BTreeMap;

    const GI: i64 = 1 << 30;

    /// Converts `text`; returns the jobs, or the errors as `line:col path: message`.
    fn convert(text: &str) -> Result<Vec<ImportedJob>, Vec<String>> {
        let docs = yaml::parse_documents(text, "t.yaml").map_err(|e| vec![e.1])?;
        let queues: BTreeMap<String, QueueId> =
            [("default".to_string(), QueueId(0)), ("q".to_string(), QueueId(1))].into();
        let nodes: BTreeMap<String, NodeId> = [("n0".to_string(), NodeId(0)), ("n1".to_string(), NodeId(1))].into();
        let mut names = ResourceNames::default();
        let tiers: BTreeMap<String, u32> = [("leaf".to_string(), 1), ("spine".to_string(), 2)].into();
        let mut errs = Vec::new();
        let mut classes = PriorityClasses::default();
        priority_classes(&docs, &mut classes, &mut errs);
        let mut cx = Context {
            queues: &queues,
            nodes: &nodes,
            node_list: &[],
            names: &mut names,
            priority_classes: &classes,
            default_duration: None,
            clock_start: 0,
            horizon: Some(lahar_core::util::time::SimTime(3_600_000_000)),
            tiers: &tiers,
            left_out: Vec::new(),
            serving_roles: Vec::new(),
            vnpu: None,
        };
        let jobs = jobs(&docs, &mut cx, &mut errs);
        if errs.is_empty() {
            Ok(jobs)
        } else {
            Err(errs.iter().map(|e| format!("{:?} {}: {}", e.at, e.path, e.message)).collect())
        }
    }

    const CLASSES: &str = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: hi}\nvalue: 100\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: lo}\nvalue: 5\n---\n";

    #[test]
    fn vcjob_defaults_and_pod_requests() {
        let text = format!(
            "{CLASSES}apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: j, annotations: {{lahar.io/duration: 1h, lahar.io/submit-at: 2m}}}}
spec:
  priorityClassName: hi
  queue: q
  tasks:
    - name: a
      replicas: 3
      minAvailable: 1
      template:
        metadata: {{annotations: {{volcano.sh/preemptable: \"false\"}}}}
        spec:
          priorityClassName: lo
          initContainers: [{{name: i, resources: {{requests: {{cpu: \"6\"}}}}}}]
          containers:
            - {{name: c1, resources: {{requests: {{cpu: 500m}}, limits: {{cpu: \"1\", memory: 1Gi}}}}}}
            - {{name: c2, resources: {{limits: {{nvidia.com/gpu: 2}}}}}}
    - replicas: 2
      template:
        metadata: {{annotations: {{volcano.sh/task-priority: \"7\"}}}}
        spec:
          nodeSelector: {{zone: a}}
          containers: [{{name: c}}]
"
        );
        let jobs = convert(&text).unwrap();
        assert_eq!(jobs.len(), 1);
        let j = &jobs[0].spec;
        assert_eq!((j.queue, j.priority, j.min_available), (QueueId(1), 100, 1 + 2));
        assert_eq!(j.submit.0, 120_000_000);
        let a = &j.tasks[0];
        // Containers: cpu 500m (request wins over limit) + 0, memory from the limit,
        // GPUs from the limit; the init container raises cpu to 6.
        assert_eq!(a.requests, Resources::new(6000, GI, 2000, 1));
        assert_eq!((a.priority, a.preemptable, a.min_available), (5, false, 1));
        let b = &j.tasks[1];
        assert_eq!((&*b.name, b.min_available, b.priority), ("default1", 2, 7));
        assert_eq!(b.node_selector, [("zone".to_string(), "a".to_string())]);
        assert_eq!(b.requests, Resources::new(0, 0, 0, 1));
    }

    #[test]
    fn kubeflow_default_gang_is_every_replica() {
        let text = "apiVersion: kubeflow.org/v1
kind: PaddleJob
metadata: {name: p, annotations: {lahar.io/duration: 10m}}
spec:
  paddleReplicaSpecs:
    Worker: {replicas: 4, template: {spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]}}}
    Master: {template: {spec: {containers: [{name: c}]}}}
";
        let j = &convert(text).unwrap()[0].spec;
        let t: Vec<(&str, u32)> = j.tasks.iter().map(|t| (&*t.name, t.replicas)).collect();
        assert_eq!(t, [("master", 1), ("worker", 4)]);
        assert_eq!((&*j.kind, j.min_available, j.priority), ("PaddleJob", 5, 0));
        let j = &convert(
            &text.replace("lahar.io/duration: 10m", "lahar.io/duration: 10m, scheduling.volcano.sh/queue-name: q"),
        )
        .unwrap()[0]
            .spec;
        assert_eq!(j.queue, QueueId(1));
        let err = convert(&text.replace("Master:", "Chief:")).unwrap_err();
        assert!(err[0].contains("spec.paddleReplicaSpecs.Chief: unknown replica type `Chief`"), "{err:?}");
    }

    #[test]
    fn kubeflow_replica_types_match_case_insensitively() {
        let text = "apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: t, annotations: {lahar.io/duration: 10m}}
spec:
  tfReplicaSpecs:
    worker: {replicas: 3, template: {spec: {containers: [{name: c}]}}}
    Ps: {replicas: 1, template: {spec: {containers: [{name: c, resources: {limits: {cpu: 2}}}]}}}
";
        let j = &convert(text).unwrap()[0].spec;
        let t: Vec<(&str, u32, i64)> = j.tasks.iter().map(|t| (&*t.name, t.replicas, t.requests.cpu())).collect();
        assert_eq!(t, [("ps", 1, 2000), ("worker", 3, 0)]);
        assert_eq!(j.min_available, 4);
        let err =
            convert(&text.replace("Ps:", "PS: {replicas: 1, template: {spec: {containers: [{name: c}]}}}\n    ps:"))
                .unwrap_err();
        assert!(err[0].contains("spec.tfReplicaSpecs.ps: replica type `PS` is given twice"), "{err:?}");
    }

    #[test]
    fn ray_topology_labels_and_suspended_groups() {
        let text = "apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: r
  labels: {volcano.sh/network-topology-mode: soft, volcano.sh/network-topology-highest-tier-allowed: \"2\"}
  annotations: {lahar.io/duration: 1h}
spec:
  headGroupSpec: {template: {spec: {containers: [{name: h}]}}}
  workerGroupSpecs:
    - {groupName: a, replicas: 2, template: {spec: {containers: [{name: w}]}}}
    - {groupName: b, replicas: 4, suspend: true, template: {spec: {containers: [{name: w}]}}}
";
        let j = &convert(text).unwrap()[0].spec;
        let nt = j.network_topology.as_ref().unwrap();
        assert_eq!((nt.hard, nt.highest_tier_allowed), (false, Some(2)));
        let t: Vec<(&str, u32)> = j.tasks.iter().map(|t| (&*t.name, t.replicas)).collect();
        assert_eq!(t, [("head", 1), ("a", 2)]);
        assert_eq!(j.min_available, 3);
        let j = &convert(&text.replace("volcano.sh/network-topology-mode: soft, ", "")).unwrap()[0].spec;
        assert!(j.network_topology.is_none(), "the tier label alone sets nothing");
        let err = convert(&text.replace("\"2\"", "two")).unwrap_err();
        assert!(
            err[0].contains(
                "metadata.labels.volcano.sh/network-topology-highest-tier-allowed: expected an integer ≥ 0, got `two`"
            ),
            "{err:?}"
        );
    }

    #[test]
    fn spark_overhead_factor_and_dynamic_allocation() {
        const MI: i64 = 1 << 20;
        let text = "apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: s, annotations: {lahar.io/duration: 1m}}
spec:
  type: Python
  batchScheduler: volcano
  driver: {cores: 1, coreLimit: 1200m, memory: 2g}
  executor: {instances: 1, cores: 2, memory: 512m}
  dynamicAllocation: {enabled: true, initialExecutors: 2, minExecutors: 3, maxExecutors: 5}
";
        let j = &convert(text).unwrap()[0].spec;
        // Python: 40% overhead (819.2 MiB on 2 GiB), the 384 MiB minimum on 512 MiB.
        assert_eq!(j.tasks[0].requests, Resources::new(1000, 2048 * MI + 858_993_459, 0, 1));
        assert_eq!(j.tasks[1].requests, Resources::new(2000, 896 * MI, 0, 1));
        // Elastic up to maxExecutors; minResources count what Spark starts with,
        // max(minExecutors, initialExecutors, instances) = 3.
        assert_eq!(j.tasks[1].replicas, 5);
        assert!(j.elastic.is_some());
        assert_eq!(j.min_resources, j.tasks[0].requests + j.tasks[1].requests.times(3));
        let fixed = &convert(&text.replace(", maxExecutors: 5", "")).unwrap()[0].spec;
        assert_eq!((fixed.tasks[1].replicas, fixed.elastic.is_some()), (3, false));
        let j = &convert(&text.replace("type: Python", "memoryOverheadFactor: \"0.25\"")).unwrap()[0].spec;
        assert_eq!(j.tasks[0].requests.get(lahar_core::model::resource::MEMORY), 2560 * MI);
        let err = convert(&text.replace("type: Python", "memoryOverheadFactor: lots")).unwrap_err();
        assert!(err[0].contains("spec.memoryOverheadFactor: expected a non-negative number"), "{err:?}");
    }

    /// `v1beta1` SparkApplications (Volcano's kubecon sample) give `cores` as a
    /// number: 0.1 cores is 100 millicores; `v1beta2` wants an integer.
    #[test]
    fn spark_v1beta1_fractional_cores() {
        let text = "apiVersion: sparkoperator.k8s.io/v1beta1
kind: SparkApplication
metadata: {name: s, annotations: {lahar.io/duration: 1m}}
spec:
  type: Scala
  batchScheduler: volcano
  driver: {cores: 0.1, memory: 512m}
  executor: {instances: 1, cores: 1, memory: 512m}
";
        let j = &convert(text).unwrap()[0].spec;
        assert_eq!((j.tasks[0].requests.cpu(), j.tasks[1].requests.cpu()), (100, 1000));
        let err = convert(&text.replace("v1beta1", "v1beta2")).unwrap_err();
        assert!(err[0].contains("spec.driver.cores"), "{err:?}");
        let err = convert(&text.replace("cores: 0.1", "cores: -0.5")).unwrap_err();
        assert!(err[0].contains("spec.driver.cores: expected a number of cores above 0"), "{err:?}");
    }

    #[test]
    fn pods_group_by_task_spec_or_identical_spec() {
        let pod = |name: &str, extra: &str, node: &str| {
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, annotations: {{scheduling.k8s.io/group-name: g{extra}}}}}\nspec:\n  {node}containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]\n---\n"
            )
        };
        let text = format!(
            "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {{name: g, annotations: {{lahar.io/duration: 1h}}}}\nspec: {{minMember: 3, queue: q, minResources: {{cpu: \"2\"}}}}\n---\n{}{}{}{}",
            pod("w-10", "", ""),
            pod("w-9", "", "nodeName: n1\n  "),
            pod("w-0", "", ""),
            pod("ps-0", ", volcano.sh/task-spec: ps", "nodeName: n0\n  "),
        );
        let jobs = convert(&text).unwrap();
        let j = &jobs[0].spec;
        let t: Vec<(&str, u32)> = j.tasks.iter().map(|t| (&*t.name, t.replicas)).collect();
        // Name order with numeric suffixes: ps-0, w-0, w-9, w-10.
        assert_eq!(t, [("ps", 1), ("w", 3)]);
        assert_eq!(j.initial, [(0, 0, NodeId(0)), (1, 1, NodeId(1))]);
        assert_eq!((&*j.kind, j.queue, j.min_available), ("PodGroup", QueueId(1), 3));
        assert_eq!(j.min_resources.cpu(), 2000);
    }

    #[test]
    fn a_podgroup_without_pods_is_a_job_unless_its_owner_is_here() {
        let pg = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata:\n  name: g\n  ownerReferences: [{apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: g, uid: x}]\nspec: {minMember: 1}\nstatus: {phase: Inqueue}\n";
        // Alone: what the scheduler sees before the controller creates pods.
        let jobs = convert(pg).unwrap();
        let j = &jobs[0].spec;
        assert_eq!((&*j.kind, j.tasks[0].replicas, j.start_phase), ("PodGroup", 0, Some(PodGroupPhase::Inqueue)));
        // Beside its owner, the owner is the job (and makes the pods).
        let owner = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: g}\nspec: {tasks: [{replicas: 1, template: {spec: {containers: [{name: c}]}}}]}\n---\n";
        let jobs = convert(&format!("{owner}{pg}")).unwrap();
        assert_eq!(jobs.iter().map(|j| &*j.spec.kind).collect::<Vec<_>>(), ["VolcanoJob"]);
    }

    #[test]
    fn bad_inputs_name_document_and_field() {
        let err = convert("kind: Job\napiVersion: batch.volcano.sh/v1alpha1\nmetadata: {name: j, annotations: {lahar.io/duration: 2x}}\nspec: {tasks: [{replicas: 1, template: {spec: {containers: [{name: c}]}}}]}\n").unwrap_err();
        assert_eq!(err.len(), 1);
        assert!(
            err[0].starts_with("Some((3, 54)) document 1: metadata.annotations.lahar.io/duration: bad duration `2x`"),
            "{err:?}"
        );
        let err = convert("apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {lahar.io/duration: 1h}}\nspec: {containers: [{name: c}], priorityClassName: gold}\n").unwrap_err();
        assert!(err[0].contains("document 1: spec.priorityClassName: PriorityClass `gold` does not exist"), "{err:?}");
        let err = convert("apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {lahar.io/duration: 1h, lahar.io/iterations: \"10\"}}\nspec: {containers: [{name: c}]}\n").unwrap_err();
        assert!(err.iter().any(|e| e.contains("`lahar.io/iterations` needs `lahar.io/model`")), "{err:?}");
        // A Queue beside a job is no job (it is read by `queues`).
        let jobs = convert("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {lahar.io/duration: 1h}}\nspec: {containers: [{name: c}]}\n").unwrap();
        assert_eq!(jobs.len(), 1);
        let err =
            convert("apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: h}\n").unwrap_err();
        assert!(
            err[0].contains("document 1: kind: HyperNode objects are read from `spec.cluster.hyperNodes: PATH`"),
            "{err:?}"
        );
    }
}
