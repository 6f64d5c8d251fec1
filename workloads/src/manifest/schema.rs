//! Unknown fields in manifests, as `kubectl apply --validate=strict` finds them: every
//! field of a Volcano, Kubeflow, KubeRay or Spark object, a Pod or a PriorityClass
//! must be one its kind's published schema has. A typo (`minAvailabel`, `queeu`,
//! `replica`) is an error at its line and column with a "did you mean" — never a
//! silently ignored field that turns a 4-pod gang into a 1-pod job. Fields the
//! schema has but the scheduler does not read (`command`, `env`, `volumes`,
//! `status`...) are accepted without a word.
//!
//! The field lists (`schemas/k8s-fields.json`) are derived from the projects' own
//! CustomResourceDefinitions by `schemas/extract.py`; the file records each CRD's
//! repository, commit and path. Kinds or versions it does not list are not checked.

use super::common::Ck;
use super::yaml::{Doc, Node, Val};
use lahar_core::util::text::edit_distance as distance;
use serde_json::Value;
use std::sync::OnceLock;

static FIELDS: &str = include_str!("../../schemas/k8s-fields.json");

fn fields() -> &'static Value {
    static PARSED: OnceLock<Value> = OnceLock::new();
    PARSED.get_or_init(|| serde_json::from_str(FIELDS).expect("schemas/k8s-fields.json is valid JSON (tested)"))
}

/// The field tree of `apiVersion kind`, if the schemas list it.
fn kind_tree(api_version: &str, kind: &str) -> Option<&'static Value> {
    fields().get("kinds")?.get(format!("{api_version} {kind}"))
}

/// Follows `{"$ref": id}` into the shared definitions.
fn resolve(t: &'static Value) -> &'static Value {
    let mut t = t;
    while let Some(id) = t.get("$ref").and_then(Value::as_str) {
        t = &fields()["defs"][id];
    }
    t
}

/// The repository a kind's schema comes from, for messages.
fn source_of(api_version: &str) -> &'static str {
    match api_version.split('/').next().unwrap_or_default() {
        "batch.volcano.sh"
        | "scheduling.volcano.sh"
        | "topology.volcano.sh"
        | "flow.volcano.sh"
        | "training.volcano.sh" => "Volcano's CRD",
        "kubeflow.org" => "the Kubeflow CRD",
        "trainer.kubeflow.org" => "the Kubeflow Trainer CRD",
        "ray.io" => "KubeRay's CRD",
        "sparkoperator.k8s.io" => "the Spark operator's CRD",
        "argoproj.io" => "Argo Workflows' CRD",
        "leaderworkerset.x-k8s.io" => "the LeaderWorkerSet CRD",
        "workload.serving.volcano.sh" => "kthena's CRD",
        _ => "the Kubernetes API",
    }
}

/// The one known field close to `key` (same letters in another case, or at most
/// two edits for names of five letters or more, one below).
fn near(key: &str, known: &serde_json::Map<String, Value>) -> Option<String> {
    let limit = if key.chars().count() >= 5 { 2 } else { 1 };
    let mut best: Vec<(usize, &String)> = known
        .keys()
        .map(|k| (if k.eq_ignore_ascii_case(key) { 0 } else { distance(k, key) }, k))
        .filter(|&(d, _)| d <= limit)
        .collect();
    best.sort();
    match best.as_slice() {
        [] => {}
        [(d, k), rest @ ..] if rest.first().is_none_or(|(d2, _)| d2 > d) => return Some((*k).clone()),
        _ => return None,
    }
    // A shortened or lengthened name (`priorityClass` for `priorityClassName`).
    if key.len() < 5 {
        return None;
    }
    let longer: Vec<&String> = known.keys().filter(|k| k.starts_with(key)).collect();
    let shorter: Vec<&String> = known.keys().filter(|k| k.len() >= 5 && key.starts_with(k.as_str())).collect();
    match (longer.as_slice(), shorter.as_slice()) {
        ([k], _) | ([], [k]) => Some((*k).clone()),
        _ => None,
    }
}

fn walk(n: &Node, t: &'static Value, path: &str, what: &str, ck: &mut Ck<'_>) {
    let t = resolve(t);
    match (&n.val, t) {
        (Val::Seq(items), _) => {
            for (i, it) in items.iter().enumerate() {
                walk(it, t, &format!("{path}[{i}]"), what, ck);
            }
        }
        (Val::Map(m), Value::Object(known)) => {
            for (k, v) in m {
                let here = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                match known.get(k) {
                    Some(sub) => walk(v, sub, &here, what, ck),
                    None => {
                        let hint = near(k, known).map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
                        // The key's own position: the value's, less nothing better known.
                        ck.err(v.at, &here, format!("unknown field `{k}` (not in {what}){hint}"));
                    }
                }
            }
        }
        // "*" (anything), 0 (a scalar: its type is checked by the importer), or a
        // scalar where the schema has an object (the importer reports the type).
        _ => {}
    }
}

/// Checks every field of `d` against its kind's schema; errors go to `ck`.
pub(crate) fn check(d: &Doc, ck: &mut Ck<'_>) {
    let scalar = |k: &str| d.root.get(k).and_then(Node::scalar).unwrap_or_default();
    let (api, kind) = (scalar("apiVersion"), scalar("kind"));
    let Some(t) = kind_tree(&api, &kind) else { return };
    let what = format!("the {kind} schema of {} ({api})", source_of(&api));
    walk(&d.root, t, "", &what, ck);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::yaml::parse_documents;

    fn errors(text: &str) -> Vec<String> {
        let docs = parse_documents(text, "m.yaml").unwrap();
        let mut errs = Vec::new();
        for d in &docs {
            let mut ck = Ck::new(d, &mut errs);
            check(d, &mut ck);
        }
        errs.iter().map(|e| format!("{}:{:?}: {}: {}", e.file, e.at, e.path, e.message)).collect()
    }

    #[test]
    fn the_field_lists_load_and_name_their_sources() {
        let f = fields();
        assert!(f["sources"].as_array().unwrap().len() >= 10);
        for k in ["batch.volcano.sh/v1alpha1 Job", "kubeflow.org/v1 PyTorchJob", "ray.io/v1 RayCluster", "v1 Pod"] {
            assert!(kind_tree(k.split(' ').next().unwrap(), k.split(' ').nth(1).unwrap()).is_some(), "{k}");
        }
    }

    #[test]
    fn typos_are_located_with_a_suggestion() {
        let text = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j, labels: {any: thing}}\nspec:\n  minAvailabel: 4\n  queeu: q\n  tasks:\n    - replica: 4\n      name: w\n      template:\n        spec:\n          containers:\n            - name: c\n              command: [sleep]\n              resources: {request: {cpu: 1}, limits: {nvidia.com/gpu: 1}}\nstatus: {state: {phase: Running}}\n";
        let e = errors(text);
        assert_eq!(
            e,
            [
                "m.yaml:Some((5, 17)): document 1: spec.minAvailabel: unknown field `minAvailabel` (not in the Job schema of Volcano's CRD (batch.volcano.sh/v1alpha1)); did you mean `minAvailable`?",
                "m.yaml:Some((6, 10)): document 1: spec.queeu: unknown field `queeu` (not in the Job schema of Volcano's CRD (batch.volcano.sh/v1alpha1)); did you mean `queue`?",
                "m.yaml:Some((8, 16)): document 1: spec.tasks[0].replica: unknown field `replica` (not in the Job schema of Volcano's CRD (batch.volcano.sh/v1alpha1)); did you mean `replicas`?",
                "m.yaml:Some((15, 36)): document 1: spec.tasks[0].template.spec.containers[0].resources.request: unknown field `request` (not in the Job schema of Volcano's CRD (batch.volcano.sh/v1alpha1)); did you mean `requests`?",
            ]
        );
        // A shortened name is suggested too (Volcano's own kubecon-2019 example has it).
        let pod =
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {priorityClass: high, containers: [{name: c}]}\n";
        assert_eq!(
            errors(pod),
            [
                "m.yaml:Some((4, 23)): document 1: spec.priorityClass: unknown field `priorityClass` (not in the Pod schema of the Kubernetes API (v1)); did you mean `priorityClassName`?"
            ]
        );
        // Unknown kinds and versions are not checked.
        assert!(errors("apiVersion: example.com/v9\nkind: Thing\nspec: {anything: 1}\n").is_empty());
    }
}
