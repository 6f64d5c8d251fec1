//! Priority classes in compact jobs: `spec.priorityClasses` and
//! `jobs[].priorityClassName`, one registry with Kubernetes' built-in classes and the
//! manifests' PriorityClass objects, and the located errors.

use super::*;
use lahar::scenario::{Scenario, load_file};

const NODES: &str = "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi, gpus: 8}";

/// Writes `files` and a scenario whose spec continues with `rest` into a temp dir and
/// loads it.
fn load(files: &[(&str, &str)], rest: &str) -> Result<Scenario, String> {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let p = dir.path().join("scenario.yaml");
    std::fs::write(&p, scenario(NODES, rest)).unwrap();
    load_file(&p).map_err(|e| e.to_string())
}

const JOBS: &str = "  workload:\n    - jobs:\n";

fn job(name: &str, attrs: &str) -> String {
    format!(
        "      - {{name: {name}, duration: 1h, {attrs}tasks: [{{name: w, replicas: 1, resources: {{cpu: 1}}}}, {{name: p, replicas: 1, priority: 3, resources: {{cpu: 1}}}}]}}\n"
    )
}

const PC: &str = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: from-manifest}\nvalue: 77\n";
const POD: &str = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: solo, annotations: {lahar.io/duration: 1h}}\nspec: {priorityClassName: batch, containers: [{name: c}]}\n";

/// Job priority: the class's value (built-in, scenario or manifest class), else
/// `priority`, else the global default, else 0; pods without their own priority get
/// the class's value (else the global default, else 1).
#[test]
fn compact_jobs_take_the_value_of_their_priority_class() {
    let rest = format!(
        "  priorityClasses:\n    - {{name: batch, value: 1000}}\n    - {{name: normal, value: 10, globalDefault: true, preemptionPolicy: Never}}\n{JOBS}{}{}{}{}{}    - manifests: pc.yaml\n",
        job("a", "priorityClassName: batch, "),
        job("b", "priorityClassName: system-node-critical, "),
        job("c", "priorityClassName: from-manifest, "),
        job("d", ""),
        job("e", "priority: 5, "),
    );
    let s = load(&[("pc.yaml", &format!("{PC}{POD}"))], &rest).unwrap_or_else(|e| panic!("{e}"));
    let jobs = s.jobs();
    let got: Vec<(&str, Option<&str>, i32, i32, i32)> = jobs
        .iter()
        .map(|j| {
            (
                j.name.as_str(),
                j.priority_class.as_deref(),
                j.priority,
                j.tasks[0].priority,
                j.tasks[j.tasks.len() - 1].priority,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("a", Some("batch"), 1000, 1000, 3),
            ("b", Some("system-node-critical"), 2_000_001_000, 2_000_001_000, 3),
            ("c", Some("from-manifest"), 77, 77, 3),
            ("d", None, 10, 10, 3),
            ("e", None, 5, 10, 3),
            // A manifest Pod names the scenario's class (its shadow PodGroup takes it).
            ("solo", Some("batch"), 1000, 1000, 1000),
        ]
    );
}

#[test]
fn priority_class_errors_are_located() {
    let pcs = "  priorityClasses:\n    - {name: batch, value: 1000}\n";
    // The same name in the scenario list and in a manifest.
    let err = load(
        &[("pc.yaml", &PC.replace("from-manifest", "batch"))],
        &format!("{pcs}  workload:\n    - manifests: pc.yaml\n"),
    )
    .unwrap_err();
    assert!(err.contains("pc.yaml:3:18: document 1: metadata.name: PriorityClass `batch` is defined twice"), "{err}");
    // Twice in the scenario list; a reserved name; a value over 1e9; two defaults.
    let err = load(
        &[],
        "  priorityClasses:\n    - {name: batch, value: 1000}\n    - {name: batch, value: 1}\n    - {name: system-custom, value: 1}\n    - {name: huge, value: 2000000000}\n    - {name: d1, value: 1, globalDefault: true}\n    - {name: d2, value: 2, globalDefault: true}\n    - {name: n, value: 1, preemptionPolicy: Sometimes}\n    - {name: system-node-critical, value: 5}\n",
    )
    .unwrap_err();
    for needle in [
        "scenario.yaml:10:14: spec.priorityClasses[1].name: PriorityClass `batch` is defined twice",
        "scenario.yaml:11:14: spec.priorityClasses[2].name: PriorityClass names starting with `system-` are reserved for Kubernetes, got `system-custom`",
        "scenario.yaml:12:27: spec.priorityClasses[3].value: a PriorityClass value must be at most 1000000000",
        "scenario.yaml:14:43: spec.priorityClasses[5].globalDefault: PriorityClass `d1` is already the global default",
        "scenario.yaml:15:45: spec.priorityClasses[6].preemptionPolicy: expected `PreemptLowerPriority` or `Never`, got `Sometimes`",
        "scenario.yaml:16:14: spec.priorityClasses[7].name: PriorityClass `system-node-critical` is built into Kubernetes (value 2000001000, preemptionPolicy PreemptLowerPriority, not the global default) and cannot be redefined",
    ] {
        assert!(err.contains(needle), "lacks {needle:?}:\n{err}");
    }
    // A job naming an unknown class, or a class and a priority.
    let err = load(
        &[],
        &format!(
            "{pcs}{JOBS}{}{}",
            job("a", "priorityClassName: gold, "),
            job("b", "priority: 3, priorityClassName: batch, ")
        ),
    )
    .unwrap_err();
    assert!(
        err.contains("spec.workload[0].jobs[0].priorityClassName: PriorityClass `gold` does not exist; defined classes: batch, system-cluster-critical, system-node-critical"),
        "{err}"
    );
    assert!(
        err.contains(
            "spec.workload[0].jobs[1].priorityClassName: give either `priority` or `priorityClassName`, not both"
        ),
        "{err}"
    );
}
