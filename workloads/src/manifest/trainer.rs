//! Kubeflow Trainer v2 (`trainer.kubeflow.org/v1alpha1`): a `TrainJob` runs on a
//! `TrainingRuntime` or `ClusterTrainingRuntime`, whose JobSet template lists
//! replicated jobs. With the runtime's `podGroupPolicy.volcano`, the Trainer's
//! Volcano plugin makes one PodGroup per TrainJob: `minMember` the pods of every
//! replicated job, `minResources` their requests, the queue from the
//! `scheduling.volcano.sh/queue-name` annotation the runtime's template (or a
//! runtime patch) propagates, the network topology from the policy.

use super::common::{self, Ck, JobHead, join};
use super::yaml::{At, Doc, Node, Val};
use super::{Context, ImportedJob};
use lahar_core::model::job::{Dependency, NetworkTopology, Until};
use lahar_core::model::resource::Resources;
use std::collections::{BTreeMap, BTreeSet};

const GROUP: &str = "trainer.kubeflow.org";
/// The label that marks a replicated job's role; `trainer` is the one whose
/// count is the number of nodes.
const ANCESTOR: &str = "trainer.kubeflow.org/trainjob-ancestor-step";
/// The container `resourcesPerNode` applies to.
const NODE_CONTAINER: &str = "node";
const DEFAULT_MANAGER: &str = "trainer.kubeflow.org/trainjob-controller";

/// A runtime's key: (kind, namespace — empty for a ClusterTrainingRuntime, name).
type Key = (String, String, String);

/// Runtimes by key.
pub(crate) type Runtimes<'d> = BTreeMap<Key, &'d Doc>;

fn is_runtime(d: &Doc) -> bool {
    let (api, k) = common::kind_of(&d.root);
    api.starts_with("trainer.kubeflow.org/") && (k == "TrainingRuntime" || k == "ClusterTrainingRuntime")
}

fn runtime_key(d: &Doc) -> Key {
    let kind = common::kind_of(&d.root).1;
    let (ns, name) = super::ns_name(d);
    (kind.clone(), if kind == "TrainingRuntime" { ns } else { String::new() }, name)
}

/// The runtimes among `docs`.
pub(crate) fn runtimes(docs: &[Doc]) -> Runtimes<'_> {
    docs.iter().filter(|d| is_runtime(d)).map(|d| (runtime_key(d), d)).collect()
}

/// The runtime a TrainJob names (kind defaulted as the CRD does).
fn reference(d: &Doc) -> Key {
    let r = d.root.get("spec").and_then(|s| s.get("runtimeRef"));
    let f = |k: &str| r.and_then(|r| r.get(k)).and_then(Node::scalar);
    let kind = f("kind").unwrap_or_else(|| "ClusterTrainingRuntime".into());
    let ns = if kind == "TrainingRuntime" { super::ns_name(d).0 } else { String::new() };
    (kind, ns, f("name").unwrap_or_default())
}

fn is_trainjob(d: &Doc) -> bool {
    let (api, k) = common::kind_of(&d.root);
    api.starts_with("trainer.kubeflow.org/") && k == "TrainJob"
}

/// The runtimes the TrainJobs among `docs` name.
pub fn used_runtimes(docs: &[Doc]) -> BTreeSet<Key> {
    docs.iter().filter(|d| is_trainjob(d)).map(reference).collect()
}

/// Why `d` makes no pods for Volcano, if it does not: a runtime no TrainJob of
/// `used` names, a suspended TrainJob, or one whose runtime has no Volcano
/// `podGroupPolicy` (its pods are not Volcano's).
pub fn trainer_skip(d: &Doc, docs: &[Doc], used: &BTreeSet<Key>) -> Option<String> {
    if is_runtime(d) && !used.contains(&runtime_key(d)) {
        let (api, kind) = common::kind_of(&d.root);
        return Some(format!("{kind} ({api}) no TrainJob names"));
    }
    if !is_trainjob(d) {
        return None;
    }
    let (api, _) = common::kind_of(&d.root);
    if d.root.get("spec").and_then(|s| s.get("suspend")).is_some_and(|n| n.val == Val::Bool(true)) {
        return Some(format!("TrainJob ({api}), suspended"));
    }
    let key = reference(d);
    let runtime = docs.iter().find(|r| is_runtime(r) && runtime_key(r) == key)?;
    let volcano = runtime.root.get("spec").and_then(|s| s.get("podGroupPolicy")).and_then(|p| p.get("volcano"));
    volcano.is_none().then(|| format!("TrainJob ({api}) of a runtime without a Volcano podGroupPolicy"))
}

/// `parent[key]` as a mutable map entry, made (an empty map) when missing.
fn entry<'n>(parent: &'n mut Node, key: &str) -> &'n mut Node {
    if !matches!(parent.val, Val::Map(_)) {
        parent.val = Val::Map(Vec::new());
    }
    let Val::Map(m) = &mut parent.val else { unreachable!("made a map") };
    let i = match m.iter().position(|(k, _)| k == key) {
        Some(i) => i,
        None => {
            m.push((key.to_string(), Node { at: parent.at, val: Val::Map(Vec::new()) }));
            m.len() - 1
        }
    };
    &mut m[i].1
}

/// Sets the entries of `over` (a map node) in `base` (made a map), as the
/// Trainer's `MergeResourceRequirements` overrides a container's requests and
/// limits with `resourcesPerNode`, and as a runtime patch merges `nodeSelector`.
fn merge_map(base: &mut Node, over: &Node) {
    let Val::Map(o) = &over.val else { return };
    if !matches!(base.val, Val::Map(_)) {
        base.val = Val::Map(Vec::new());
    }
    let Val::Map(b) = &mut base.val else { unreachable!("made a map") };
    for (k, v) in o {
        match b.iter_mut().find(|(bk, _)| bk == k) {
            Some(e) => e.1 = v.clone(),
            None => b.push((k.clone(), v.clone())),
        }
    }
}

/// What a TrainJob's runtime patches change: the propagated annotations and,
/// per replicated job, pod specs to merge.
struct Patches {
    annotations: BTreeMap<String, (String, At)>,
    /// Where the last patch that sets the queue annotation sets it.
    queue_path: String,
    pods: BTreeMap<String, Vec<Node>>,
}

fn patches(ck: &mut Ck<'_>, spec: &Node) -> Patches {
    let mut out = Patches { annotations: BTreeMap::new(), queue_path: String::new(), pods: BTreeMap::new() };
    for (i, p) in ck.seq(spec, "runtimePatches", "spec").iter().enumerate() {
        let pp = format!("spec.runtimePatches[{i}].trainingRuntimeSpec.template");
        let Some(t) = p.get("trainingRuntimeSpec").and_then(|s| s.get("template")) else { continue };
        if let Some(m) = t.get("metadata") {
            let a = ck.string_map(m, "annotations", &join(&pp, "metadata"));
            if a.contains_key(common::QUEUE_NAME_ANNOTATION) {
                out.queue_path = format!("{pp}.metadata.annotations.{}", common::QUEUE_NAME_ANNOTATION);
            }
            out.annotations.extend(a);
        }
        let rjobs = t.get("spec").map(|s| ck.seq(s, "replicatedJobs", &join(&pp, "spec"))).unwrap_or(&[]);
        for rj in rjobs {
            let pod = rj.get("template").and_then(|t| t.get("spec")).and_then(|s| s.get("template"));
            if let (Some(name), Some(ps)) = (rj.get("name").and_then(Node::scalar), pod.and_then(|t| t.get("spec"))) {
                out.pods.entry(name).or_default().push(ps.clone());
            }
        }
    }
    out
}

/// A runtime's pod sets for one TrainJob, read from the runtime with errors at
/// its own lines.
struct PodSets {
    tasks: Vec<lahar_core::model::job::TaskSpec>,
    /// The last replicated job's pod `priorityClassName` (the PodGroup's).
    class: Option<String>,
    /// The runtime template's annotations.
    annotations: BTreeMap<String, (String, At)>,
    topology: Option<NetworkTopology>,
    /// Each task's pod set count: the pods of one of its Jobs (JobSet makes
    /// `replicas` Jobs of a replicated job; the Trainer's PodGroup counts one).
    counts: Vec<u32>,
    /// The longest `terminationGracePeriodSeconds` of its pod templates.
    grace: Option<lahar_core::util::time::SimDuration>,
}

/// The TrainJob's view: its name, `trainer.numNodes` and `resourcesPerNode`, patches.
struct Overrides<'a> {
    name: &'a str,
    num_nodes: Option<u32>,
    per_node: Option<&'a Node>,
    patches: &'a Patches,
}

fn pod_sets(rck: &mut Ck<'_>, rt: &Doc, o: &Overrides<'_>, cx: &mut Context<'_>) -> PodSets {
    let empty = Node { at: rt.root.at, val: Val::Null };
    let rspec = rt.root.get("spec").unwrap_or(&empty);
    let ml = rspec.get("mlPolicy");
    let num_nodes = ml.and_then(|m| rck.opt_count(m, "numNodes", "spec.mlPolicy", 1)).unwrap_or(1) as u32;
    // The MPI policy sizes the `node` replicated job, not the trainer step (the
    // launcher); with `runLauncherAsNode` the launcher is one of the nodes.
    let mpi = ml.and_then(|m| m.get("mpi")).filter(|m| m.val != Val::Null);
    let launcher_as_node = mpi.and_then(|m| rck.opt_bool(m, "runLauncherAsNode", "spec.mlPolicy.mpi")).unwrap_or(false);
    let template = rspec.get("template").unwrap_or(&empty);
    let annotations = common::meta(rck, template, "spec.template", false).annotations;
    let jp = "spec.template.spec";
    let rjobs = template.get("spec").map(|s| rck.seq(s, "replicatedJobs", jp)).unwrap_or(&[]);
    if rjobs.is_empty() {
        rck.err(template.at.or(rt.root.at), &join(jp, "replicatedJobs"), "a runtime needs at least one replicated job");
    }
    let mut out =
        PodSets { tasks: Vec::new(), class: None, annotations, topology: None, counts: Vec::new(), grace: None };
    let mut names: Vec<String> = Vec::new();
    // Each replicated job's dependsOn: (name, status, where, its path).
    let mut depends: Vec<Vec<(String, Until, At, String)>> = Vec::new();
    for (i, rj) in rjobs.iter().enumerate() {
        let p = format!("{jp}.replicatedJobs[{i}]");
        let name = rck.opt_str(rj, "name", &p).unwrap_or_default();
        let jt = rj.get("template").unwrap_or(&empty);
        let jmeta = common::meta(rck, jt, &join(&p, "template"), false);
        let jspec = jt.get("spec").unwrap_or(&empty);
        let step = jmeta.labels.get(ANCESTOR).map(|(v, _)| v.as_str());
        let trainer_step = step == Some("trainer");
        // JobSet makes `replicas` Jobs of it; the Trainer's webhook admits one for
        // the trainer and initializer steps.
        let jobs = rck.opt_count(rj, "replicas", &p, 0).unwrap_or(1) as u32;
        if jobs != 1 && matches!(step, Some("trainer" | "dataset-initializer" | "model-initializer")) {
            let at = rj.get("replicas").and_then(|n| n.at);
            rck.err(
                at,
                &join(&p, "replicas"),
                format!(
                    "always must be 1 (the Trainer's webhook, for the {} step), got {jobs}",
                    step.unwrap_or_default()
                ),
            );
        }
        // The pod set's count: the Job's parallelism; the trainer's, the nodes.
        let mut count = rck.opt_int(jspec, "parallelism", &join(&p, "template.spec"), 0).unwrap_or(1) as u32;
        // The Trainer's counts (`trainingruntime.go` `NewInfo`, then each ML
        // plugin's `EnforceMLPolicy`): the trainer step has mlPolicy.numNodes,
        // overridden by the TrainJob's numNodes except under MPI, which instead
        // gives the `node` job numNodes (less the launcher if it runs as a node).
        let mpi_nodes = mpi.is_some() && name == "node";
        if trainer_step {
            if ml.is_some() {
                count = num_nodes;
            }
            if mpi.is_none() {
                count = o.num_nodes.unwrap_or(count);
            }
        }
        if let Some(n) = o.num_nodes.filter(|_| mpi_nodes) {
            count = if launcher_as_node { n.saturating_sub(1).max(1) } else { n };
        }
        let Some(pod) = jspec.get("template") else {
            rck.err(jspec.at, &join(&p, "template.spec.template"), "a replicated job needs a pod template");
            continue;
        };
        // The Trainer's webhook: each step has its container (the trainer's is
        // `node`, which resourcesPerNode and the ML plugins address).
        let wanted = match step {
            Some("trainer") => Some("node"),
            Some(s @ ("dataset-initializer" | "model-initializer")) => Some(s),
            _ => None,
        };
        let containers = pod.get("spec").and_then(|s| s.get("containers"));
        let cname = |c: &Node| c.get("name").and_then(Node::scalar);
        if let Some(w) = wanted
            && !matches!(containers.map(|c| &c.val), Some(Val::Seq(cs)) if cs.iter().any(|c| cname(c).as_deref() == Some(w)))
        {
            let at = containers.and_then(|c| c.at).or(pod.at);
            let why = format!(
                "must contain the required container for the ancestor: {} (a container named `{w}`; the Trainer's webhook)",
                step.unwrap_or_default()
            );
            rck.err(at, &join(&p, "template.spec.template.spec.containers"), why);
        }
        let mut pod = pod.clone();
        // resourcesPerNode: the trainer step's, and under MPI with the launcher
        // as a node, the `node` job's too.
        if let Some(r) = o.per_node.filter(|_| trainer_step || (mpi_nodes && launcher_as_node)) {
            let spec = entry(&mut pod, "spec");
            if let Val::Seq(cs) = &mut entry(spec, "containers").val
                && let Some(c) =
                    cs.iter_mut().find(|c| c.get("name").and_then(Node::scalar).as_deref() == Some(NODE_CONTAINER))
            {
                let res = entry(c, "resources");
                for k in ["requests", "limits"] {
                    if let Some(over) = r.get(k) {
                        merge_map(entry(res, k), over);
                    }
                }
            }
        }
        for patch in o.patches.pods.get(&name).into_iter().flatten() {
            let spec = entry(&mut pod, "spec");
            if let Some(ns) = patch.get("nodeSelector") {
                merge_map(entry(spec, "nodeSelector"), ns);
            }
            if let Some(t) = patch.get("tolerations") {
                *entry(spec, "tolerations") = t.clone();
            }
        }
        let pp = join(&p, "template.spec.template");
        let shape = common::pod_shape(rck, cx, &pod, &pp);
        common::no_container_exit(rck, &shape, &pp);
        let sched_at = pod.get("spec").and_then(|s| s.get("schedulerName")).and_then(|n| n.at);
        common::check_scheduler(rck, shape.scheduler_name.as_deref(), sched_at, &join(&pp, "spec.schedulerName"));
        if let Some(c) = pod.get("spec").and_then(|s| s.get("priorityClassName")).and_then(Node::scalar) {
            out.class = Some(c);
        }
        let mut task = common::task(&name, rck.pods(rj.at, &p, count, jobs), 0, &shape);
        out.grace = out.grace.max(shape.grace.filter(|_| task.replicas > 0));
        out.counts.push(count);
        task.run_time = common::task_run_time(rck, &shape, &pp);
        common::add_labels(
            &mut task,
            &[("jobset.sigs.k8s.io/jobset-name", o.name), ("jobset.sigs.k8s.io/replicatedjob-name", &name)],
        );
        out.tasks.push(task);
        names.push(name);
        depends.push(dependencies(rck, rj, &p, i));
    }
    // JobSet's dependsOn: a replicated job is created once those it names are
    // Ready or Complete (`dependencyReachedStatus`); the webhook admits only
    // earlier replicated jobs.
    for (t, deps) in depends.into_iter().enumerate() {
        for (dname, until, at, dp) in deps {
            match names[..t].iter().position(|n| *n == dname) {
                Some(k) => {
                    if until == Until::Complete && out.tasks[k].run_time.is_none() {
                        let why = format!(
                            "replicated job `{dname}` must be Complete first, but its pods have no run time: give its pod template (replicatedJobs[{k}].template.spec.template) the annotation `lahar.io/duration`"
                        );
                        rck.err(at, &dp, why);
                    }
                    out.tasks[t].depends_on.push(Dependency { task: k, until });
                }
                None if names.contains(&dname) => rck.err(
                    at,
                    &dp,
                    format!("replicated job `{}` cannot depend on the later replicated job `{dname}`", names[t]),
                ),
                None => rck.err(at, &dp, format!("replicated job `{dname}` is not in this runtime")),
            }
        }
    }
    let volcano = rspec.get("podGroupPolicy").and_then(|p| p.get("volcano"));
    out.topology = volcano
        .and_then(|v| v.get("networkTopology"))
        .map(|n| common::network_topology(rck, cx.tiers, n, "spec.podGroupPolicy.volcano.networkTopology"));
    out
}

/// A replicated job's `dependsOn` list as JobSet's API admits it: at most five
/// entries, each a `name` and a `status` of `Ready` or `Complete`; none on the
/// first replicated job.
fn dependencies(rck: &mut Ck<'_>, rj: &Node, p: &str, i: usize) -> Vec<(String, Until, At, String)> {
    let list = rck.seq(rj, "dependsOn", p);
    let lp = join(p, "dependsOn");
    if i == 0 && !list.is_empty() {
        rck.err(list[0].at, &lp, "the first replicated job cannot depend on another (JobSet's webhook)");
        return Vec::new();
    }
    if list.len() > 5 {
        rck.err(list[5].at, &lp, format!("at most 5 dependencies (JobSet's API), got {}", list.len()));
    }
    let mut out = Vec::new();
    for (k, dep) in list.iter().enumerate() {
        let dp = format!("{lp}[{k}]");
        // Both fields are required; a value of the wrong type is reported by `str`.
        let field = |rck: &mut Ck<'_>, key: &str, what: &str| match dep.get(key).filter(|n| n.val != Val::Null) {
            Some(n) => rck.str(n, &join(&dp, key)).map(|v| (v, n.at)),
            None => {
                rck.err(dep.at, &join(&dp, key), format!("a dependency needs {what}"));
                None
            }
        };
        let name = field(rck, "name", "the name of a replicated job");
        let status = field(rck, "status", "a status: `Ready` or `Complete`");
        let (Some((name, _)), Some((status, at))) = (name, status) else { continue };
        let until = match status.as_str() {
            "Ready" => Until::Ready,
            "Complete" => Until::Complete,
            o => {
                rck.err(at, &join(&dp, "status"), format!("expected `Ready` or `Complete`, got `{o}`"));
                continue;
            }
        };
        out.push((name, until, dep.at, dp));
    }
    out
}

pub(crate) fn job(d: &Doc, runtimes: &Runtimes<'_>, cx: &mut Context<'_>, ck: &mut Ck<'_>) -> Option<ImportedJob> {
    let root = &d.root;
    let meta = common::meta(ck, root, "", true);
    let empty = Node { at: root.at, val: Val::Null };
    let spec = root.get("spec").unwrap_or(&empty);
    ck.unmodelled(
        spec,
        "activeDeadlineSeconds",
        "spec",
        "fails the TrainJob once it has been active that long",
        "TrainJob",
    );
    let rr = spec.get("runtimeRef").unwrap_or(&empty);
    let rp = "spec.runtimeRef";
    if let Some(g) = ck.opt_str(rr, "apiGroup", rp).filter(|g| g != GROUP) {
        ck.err(rr.get("apiGroup").and_then(|n| n.at), &join(rp, "apiGroup"), format!("expected `{GROUP}`, got `{g}`"));
    }
    let kind = ck.opt_str(rr, "kind", rp).unwrap_or_else(|| "ClusterTrainingRuntime".into());
    if kind != "ClusterTrainingRuntime" && kind != "TrainingRuntime" {
        let at = rr.get("kind").and_then(|n| n.at);
        ck.err(at, &join(rp, "kind"), format!("expected `ClusterTrainingRuntime` or `TrainingRuntime`, got `{kind}`"));
    }
    let rname = ck.opt_str(rr, "name", rp).unwrap_or_default();
    if rname.is_empty() {
        ck.err(rr.at.or(spec.at), &join(rp, "name"), "a TrainJob names its runtime");
    }
    if let Some(m) = ck.opt_str(spec, "managedBy", "spec").filter(|m| m != DEFAULT_MANAGER) {
        ck.err(
            spec.get("managedBy").and_then(|n| n.at),
            "spec.managedBy",
            format!("managed by `{m}`, not the Trainer's controller (`{DEFAULT_MANAGER}`): lahar does not simulate it"),
        );
    }
    let trainer = spec.get("trainer");
    let tp = "spec.trainer";
    let num_nodes = trainer.and_then(|t| ck.opt_count(t, "numNodes", tp, 1)).map(|n| n as u32);
    // Checked here, at the TrainJob's lines, before they are merged into the runtime's pods.
    let per_node = trainer.and_then(|t| t.get("resourcesPerNode"));
    if let Some(r) = per_node {
        let p = join(tp, "resourcesPerNode");
        ck.resources(r, "requests", &p, cx.names);
        ck.resources(r, "limits", &p, cx.names);
    }
    let patches = patches(ck, spec);
    let timing = common::timing(ck, cx, &meta.annotations, meta.at, "");
    if !ck.ok() {
        return None;
    }
    let ns = if kind == "TrainingRuntime" { meta.namespace.clone() } else { String::new() };
    let Some(rt) = runtimes.get(&(kind.clone(), ns, rname.clone())) else {
        let scope =
            if kind == "TrainingRuntime" { format!(" in namespace `{}`", meta.namespace) } else { String::new() };
        ck.err(
            rr.get("name").and_then(|n| n.at).or(rr.at),
            &join(rp, "name"),
            format!("{kind} `{rname}`{scope} is not in the manifests; the TrainJob's pods come from it"),
        );
        return None;
    };
    let o = Overrides { name: &meta.name, num_nodes, per_node, patches: &patches };
    let mut rck = Ck::new(rt, &mut *ck.errs);
    let sets = pod_sets(&mut rck, rt, &o, cx);
    // The queue: a runtime patch's annotation, else the runtime template's (each
    // checked where it is written).
    let q = match patches.annotations.get(common::QUEUE_NAME_ANNOTATION) {
        Some(_) => None,
        None => {
            let (name, at) =
                sets.annotations.get(common::QUEUE_NAME_ANNOTATION).cloned().unwrap_or(("default".into(), rt.root.at));
            let path = format!("spec.template.metadata.annotations.{}", common::QUEUE_NAME_ANNOTATION);
            Some(common::queue(&mut rck, cx, &name, at, &path))
        }
    };
    let runtime_ok = rck.ok();
    let q = match q {
        Some(q) => q,
        None => {
            let (name, at) = patches.annotations[common::QUEUE_NAME_ANNOTATION].clone();
            common::queue(ck, cx, &name, at, &patches.queue_path)
        }
    };
    if !runtime_ok || !ck.ok() {
        return None;
    }
    // The Trainer's PodGroup: minMember and minResources over one Job of each
    // replicated job (its pod set count).
    let min_available = sets.counts.iter().sum();
    let min_resources =
        sets.tasks.iter().zip(&sets.counts).fold(Resources::ZERO, |a, (t, &c)| a + t.requests.times(i64::from(c)));
    let counts = sets.counts;
    let head = JobHead {
        name: meta.name,
        namespace: meta.namespace,
        kind: "TrainJob".into(),
        queue: q?,
        priority_class: sets.class,
        min_available,
        timing: timing?,
        grace: sets.grace,
    };
    let (mut j, profile) = common::assemble(head, sets.tasks, cx);
    j.network_topology = sets.topology;
    j.min_resources = min_resources;
    // JobSet's pods: `<jobset>-<replicated job>-<job index>-<pod index>` (the
    // random suffix left out).
    let pod_names: Vec<Vec<String>> = j
        .tasks
        .iter()
        .zip(&counts)
        .map(|(t, &c)| (0..t.replicas).map(|i| format!("{}-{}-{}-{}", j.name, t.name, i / c, i % c)).collect())
        .collect();
    j.pod_names = Some(Box::new(pod_names));
    Some(ImportedJob { spec: j, profile, file: d.file.clone(), doc: d.label(), at: root.at })
}
