//! Kubernetes manifests in a scenario: `spec.queues: PATH`, `spec.cluster.hyperNodes:
//! PATH` and `- manifests: PATH_OR_GLOB` workload sources (see docs/manifests.md).

use super::{At, OBJECTS_SKIPPED, Source, Targets, V, fits_somewhere, largest};
use crate::scenario::Diagnostic;
use crate::scenario::raw::{RawCluster, RawSource};
use lahar_core::comm::runtime::JobProfile;
use lahar_core::model::budget::DisruptionBudget;
use lahar_core::model::cluster::Node;
use lahar_core::model::job::JobSpec;
use lahar_core::model::queue::Queue;
use lahar_core::model::topology::HyperNodeDecl;
use lahar_workloads::manifest::{self, Doc, PriorityClasses};
use serde_saphyr::Spanned;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

/// The errors of a manifest reader, located in their own files.
pub(super) fn report(v: &mut V<'_>, errs: Vec<Diagnostic>) {
    v.errors.extend(errs);
}

/// Reads a path or pattern; errors that concern the pattern itself point at the
/// scenario field.
fn read(v: &mut V<'_>, pattern: &str, at: At, field: &str, base: &Path) -> Vec<Doc> {
    match manifest::read(base, pattern) {
        Ok(d) => d,
        Err(errs) => {
            for e in errs {
                if e.path.is_empty() && e.at.is_none() && e.file == pattern {
                    v.err(at, field, e.message);
                } else {
                    v.errors.push(e);
                }
            }
            Vec::new()
        }
    }
}

/// `spec.queues: PATH`: the Queues of those files, and Volcano's `default` queue
/// after them when they define none of that name (Volcano's scheduler creates it
/// in every cluster: `newDefaultAndRootQueue`).
pub(super) fn queues(v: &mut V<'_>, pattern: &str, at: At, base: &Path) -> Vec<Queue> {
    let docs = read(v, pattern, at, "spec.queues", base);
    let mut errs = Vec::new();
    let mut q = manifest::queues(&docs, &mut v.names, &mut errs);
    report(v, errs);
    if q.is_empty() && v.errors.is_empty() {
        v.err(at, "spec.queues", format!("`{pattern}` defines no Queue"));
    }
    if !q.is_empty() && !q.iter().any(|q| q.name == "default") {
        q.push(Queue::new("default"));
    }
    q
}

/// `spec.cluster.hyperNodes: PATH`.
pub(super) fn hypernodes(
    v: &mut V<'_>,
    pattern: &str,
    at: At,
    base: &Path,
    c: &RawCluster,
    nodes: &[Node],
) -> Option<Vec<HyperNodeDecl>> {
    if c.fabric.is_some() {
        v.err(at, "spec.cluster.hyperNodes", "give either `fabric` or `hyperNodes`, not both");
    }
    let docs = read(v, pattern, at, "spec.cluster.hyperNodes", base);
    let refs: Vec<manifest::NodeRef<'_>> =
        nodes.iter().map(|n| manifest::NodeRef { name: &n.name, labels: &n.labels }).collect();
    let mut errs = Vec::new();
    let out = manifest::hypernodes(&docs, &refs, &mut errs);
    report(v, errs);
    Some(out)
}

/// The documents of every `manifests:` source (by source index) and the
/// PriorityClasses: those given to [`read_sources`] plus those among the documents.
pub(super) struct Sources {
    pub docs: BTreeMap<usize, Vec<Doc>>,
    pub classes: PriorityClasses,
    /// Sources with a file that could not be read (reported already): that they
    /// yield no job follows, and is not reported again.
    pub unread: BTreeSet<usize>,
}

pub(super) fn read_sources<'a>(
    v: &mut V<'_>,
    workload: impl Iterator<Item = &'a Spanned<RawSource>>,
    base: &Path,
    classes: PriorityClasses,
) -> Sources {
    let mut out = Sources { docs: BTreeMap::new(), classes, unread: BTreeSet::new() };
    for (s, src) in workload.enumerate() {
        let RawSource::Manifests(m) = &src.value else { continue };
        let mut docs = Vec::new();
        let errors_before = v.errors.len();
        if m.0.is_empty() {
            v.err(super::at(src), format!("spec.workload[{s}].manifests"), "list at least one path or glob");
        }
        for (k, p) in m.0.iter().enumerate() {
            let field = if m.0.len() == 1 {
                format!("spec.workload[{s}].manifests")
            } else {
                format!("spec.workload[{s}].manifests[{k}]")
            };
            docs.extend(read(v, p, super::at(src), &field, base));
        }
        if v.errors.len() > errors_before {
            out.unread.insert(s);
        }
        let mut errs = Vec::new();
        manifest::priority_classes(&docs, &mut out.classes, &mut errs);
        report(v, errs);
        out.docs.insert(s, docs);
    }
    out
}

/// Warning kind: parts of manifest objects lahar leaves out (an Argo container
/// step nothing waits for).
pub(crate) const PARTS_LEFT_OUT: &str = "manifest-parts-left-out";

/// The jobs of one `manifests:` source, checked against the cluster.
/// A job read from the manifests, its training profile and where it came from.
type Imported = (JobSpec, Option<JobProfile>, super::Origin);

fn jobs(v: &mut V<'_>, docs: &[Doc], classes: &PriorityClasses, t: &Targets<'_>) -> (Vec<Imported>, Option<String>) {
    let mut errs = Vec::new();
    let mut cx = manifest::Context {
        queues: t.queues,
        nodes: t.node_ids,
        node_list: t.nodes,
        names: &mut v.names,
        priority_classes: classes,
        default_duration: v.default_duration,
        clock_start: v.clock_start,
        horizon: v.horizon,
        tiers: t.tiers,
        left_out: Vec::new(),
        serving_roles: Vec::new(),
        vnpu: t.vnpu,
    };
    let imported = manifest::jobs(docs, &mut cx, &mut errs);
    let left_out = std::mem::take(&mut cx.left_out);
    report(v, errs);
    // Why the manifests may yield no job, for that error.
    let why_none = left_out.first().map(|d| d.message.clone());
    if let Some(first) = left_out.first() {
        let n = left_out.len();
        v.warn_in(crate::scenario::Warning {
            kind: PARTS_LEFT_OUT,
            count: n as u64,
            file: first.file.clone(),
            at: first.at,
            path: first.path.clone(),
            message: format!(
                "{n} part{} of objects left out, the first: {}",
                if n == 1 { "" } else { "s" },
                first.message
            ),
            first_of_many: false,
        });
    }
    let mut out = Vec::new();
    for ij in imported {
        let j = ij.spec;
        let push = |v: &mut V<'_>, m: String| {
            v.errors.push(Diagnostic { file: ij.file.clone(), at: ij.at, path: ij.doc.clone(), message: m })
        };
        let mut ok = true;
        let unschedulable = |v: &mut V<'_>, message: String| {
            v.warn_in(crate::scenario::Warning {
                kind: super::UNSCHEDULABLE,
                count: 1,
                file: ij.file.clone(),
                at: ij.at,
                path: ij.doc.clone(),
                message,
                first_of_many: true,
            })
        };
        if let Some(task) = j.tasks.iter().find(|task| task.replicas > 0 && !fits_somewhere(v, t.nodes, task)) {
            let why = if !task.has_label_filter() { "" } else { " with a matching nodeSelector" };
            let message = format!(
                "{} `{}` task `{}`: a pod requests {} GPUs, {} CPU, {} bytes of memory, but no node{why} can hold it (largest node: {}); the job stays pending",
                j.kind,
                j.name,
                task.name,
                task.requests.gpu_milli() as f64 / 1000.0,
                task.requests.cpu() as f64 / 1000.0,
                task.requests.memory(),
                largest(&v.names, t.nodes, &task.requests)
            );
            unschedulable(v, message);
        }
        if let Some(why) = super::ports_bound_the_gang(v, t.nodes, &j) {
            unschedulable(v, format!("{} `{}`: {why}; the job stays pending", j.kind, j.name));
        }
        if let Some(p) = &ij.profile
            && let Err(m) = p.check(j.total_gpus().max(0) as u32)
        {
            push(v, format!("{} `{}`: lahar.io/model: {m}", j.kind, j.name));
            ok = false;
        }
        if ok {
            out.push((j, ij.profile, super::Origin { file: ij.file, at: ij.at, path: ij.doc }));
        }
    }
    (out, why_none)
}

/// Queue objects in `manifests:` sources (KubeRay's samples write one beside the
/// RayCluster) are queues of the scenario, after its own. Only the implicit
/// `default` queue (no `spec.queues`) may be redefined by one.
pub(super) fn workload_queues(v: &mut V<'_>, sources: &Sources, queues: &mut Vec<Queue>, implicit_default: bool) {
    let docs: Vec<Doc> = sources.docs.values().flatten().filter(|d| manifest::is_queue(d)).cloned().collect();
    if docs.is_empty() {
        return;
    }
    let mut errs = Vec::new();
    let more = manifest::queues(&docs, &mut v.names, &mut errs);
    report(v, errs);
    for q in more {
        match queues.iter().position(|x| x.name == q.name) {
            Some(i) if implicit_default && q.name == "default" => queues[i] = q,
            Some(_) => {
                let d = docs.iter().find(|d| manifest::object_name(d) == q.name).expect("read from these documents");
                v.errors.push(Diagnostic {
                    file: d.file.clone(),
                    at: d.root.at,
                    path: d.label(),
                    message: format!("queue `{}` is defined twice (in spec.queues and here)", q.name),
                });
            }
            None => queues.push(q),
        }
    }
}

/// PodDisruptionBudgets of the `manifests:` sources and the snapshot (`extra`).
pub(super) fn budgets(v: &mut V<'_>, sources: &Sources, extra: &[Doc]) -> Vec<DisruptionBudget> {
    let docs: Vec<Doc> =
        sources.docs.values().flatten().chain(extra).filter(|d| manifest::is_budget(d)).cloned().collect();
    let mut errs = Vec::new();
    let out = manifest::budgets(&docs, &mut errs);
    report(v, errs);
    out
}

/// A `manifests:` source: its jobs. A source of PriorityClasses only is a class
/// source; any other source that yields no job (empty files, comments only) is a
/// mistake.
pub(super) fn source(
    v: &mut V<'_>,
    docs: &[Doc],
    classes: &PriorityClasses,
    t: &Targets<'_>,
    at: At,
    path: &str,
    unread: bool,
) -> Source {
    let errors_before = v.errors.len();
    // Queues were taken already (`jobs` passes them over); objects that make no
    // pods are skipped and counted.
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    let mut first_skipped: Option<&Doc> = None;
    let all = docs;
    let used = manifest::used_templates(all);
    let used_wft = manifest::used_workflow_templates(all);
    let runtimes = manifest::used_runtimes(all);
    let skip = |d: &Doc| {
        manifest::support_object(d)
            .or_else(|| {
                manifest::is_unused_template(d, &used)
                    .then(|| "JobTemplate (flow.volcano.sh/v1alpha1) no JobFlow names".into())
            })
            .or_else(|| {
                manifest::is_unused_workflow_template(d, &used_wft).then(|| {
                    let f = |k: &str| d.root.get(k).and_then(manifest::Node::scalar).unwrap_or_default();
                    format!("{} ({}) no Workflow names", f("kind"), f("apiVersion"))
                })
            })
            .or_else(|| manifest::trainer_skip(d, all, &runtimes))
    };
    let docs: Vec<Doc> = all
        .iter()
        .filter(|d| match skip(d) {
            Some(kind) => {
                *skipped.entry(kind).or_default() += 1;
                first_skipped.get_or_insert(d);
                false
            }
            None => true,
        })
        .cloned()
        .collect();
    if let Some(first) = first_skipped {
        let n: usize = skipped.values().sum();
        let kinds: Vec<String> = skipped.iter().map(|(k, c)| format!("{c} {k}")).collect();
        v.warnings.push(crate::scenario::Warning {
            kind: OBJECTS_SKIPPED,
            count: n as u64,
            file: first.file.clone(),
            at: first.root.at,
            path: format!("{path}.manifests"),
            message: match n {
                1 => format!("1 object that makes no pods for Volcano was skipped: {}", kinds.join(", ")),
                _ => format!("{n} objects that make no pods for Volcano were skipped: {}", kinds.join(", ")),
            },
            first_of_many: false,
        });
    }
    let docs = &docs[..];
    let (jobs, why_none) = jobs(v, docs, classes, t);
    // A source of classes, queues or budgets (beside objects that make no pods) is
    // fine.
    let classes_only = !all.is_empty()
        && all.iter().all(|d| {
            manifest::is_queue(d)
                || manifest::is_budget(d)
                || skip(d).is_some()
                || d.root.get("kind").and_then(|k| k.scalar()).as_deref() == Some("PriorityClass")
        })
        && all.len() > skipped.values().sum::<usize>();
    if jobs.is_empty() && !classes_only && !unread && v.errors.len() == errors_before {
        let n: usize = skipped.values().sum();
        let kinds: Vec<String> = skipped.iter().map(|(k, c)| format!("{c} {k}")).collect();
        let read = format!("{} object{} read", all.len(), if all.len() == 1 { "" } else { "s" });
        let message = match (n, docs.is_empty()) {
            (0, _) => match why_none {
                Some(why) => format!("the manifests yield no job ({read}; left out: {why})"),
                None => format!("the manifests yield no job ({read})"),
            },
            (_, true) => {
                format!(
                    "the manifests yield no job: {read}, all skipped as making no pods for Volcano ({})",
                    kinds.join(", ")
                )
            }
            (_, false) => format!(
                "the manifests yield no job ({read}; skipped as making no pods for Volcano: {})",
                kinds.join(", ")
            ),
        };
        v.err(at, format!("{path}.manifests"), message);
    }
    let (jobs, origins) = jobs.into_iter().map(|(j, p, o)| ((j, p.map(Arc::new)), o)).unzip();
    Source::Jobs { jobs, origins, compact: false }
}
