//! Kubeflow Trainer v2 (issue 13, item 5): a TrainJob on a runtime with Volcano's
//! `podGroupPolicy` becomes one PodGroup of every replicated job's pods, as the
//! Trainer's Volcano plugin builds it; other TrainJobs are not Volcano's.

use super::*;
use lahar::scenario::load_str;
use lahar_core::resource::Resources;

const GI: i64 = 1 << 30;

/// The published examples (examples/manifests/trainer/), field by field.
#[test]
fn published_trainjobs_load_as_they_are() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests/trainer-scenario.yaml");
    let s = lahar::scenario::load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    let jobs = s.jobs();
    // 01-multi-node runs on torch-distributed, which has no Volcano policy.
    assert_eq!(jobs.len(), 1);
    let j = &jobs[0];
    assert_eq!(
        (j.name.as_str(), &*j.kind, &*j.namespace, j.min_available),
        ("volcano-example", "TrainJob", "default", 4)
    );
    // trainer.numNodes 4 overrides the runtime's mlPolicy.numNodes 1;
    // resourcesPerNode's requests are the `node` container's.
    let t: Vec<(&str, u32, u32, Resources)> =
        j.tasks.iter().map(|t| (&*t.name, t.replicas, t.min_available, t.requests)).collect();
    assert_eq!(t, [("node", 4, 0, Resources::new(1000, 2 * GI, 0, 1))]);
    assert_eq!(j.min_resources, Resources::new(4000, 8 * GI, 0, 4));
    assert_eq!(j.duration, lahar_core::time::SimDuration::from_secs(1200));
    assert_eq!(j.pod_name(0, 3), "volcano-example-node-0-3");
    let labels = j.pod_labels(0, "default");
    for (k, v) in
        [("jobset.sigs.k8s.io/jobset-name", "volcano-example"), ("jobset.sigs.k8s.io/replicatedjob-name", "node")]
    {
        assert!(labels.iter().any(|(a, b)| a == k && b == v), "{k}: {labels:?}");
    }
    assert!(j.network_topology.is_none());
    assert!(s.warnings.iter().any(|w| w.message
        == "1 object that makes no pods for Volcano was skipped: 1 TrainJob (trainer.kubeflow.org/v1alpha1) of a runtime without a Volcano podGroupPolicy"));
}

const QUEUES: &str = "  queues:\n    - {name: default, weight: 1}\n    - {name: research, weight: 1}\n";

fn runtime(kind: &str, extra_policy: &str, meta_extra: &str) -> String {
    format!(
        "apiVersion: trainer.kubeflow.org/v1alpha1
kind: {kind}
metadata: {{name: rt{meta_extra}}}
spec:
  mlPolicy: {{numNodes: 2, torch: {{}}}}
  podGroupPolicy:
    volcano: {{{extra_policy}}}
  template:
    metadata:
      annotations: {{scheduling.volcano.sh/queue-name: research}}
    spec:
      replicatedJobs:
        - name: dataset-initializer
          template:
            metadata: {{labels: {{trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}}}}
            spec:
              template:
                spec:
                  containers: [{{name: dataset-initializer, resources: {{requests: {{cpu: 500m}}}}}}]
        - name: node
          dependsOn: [{{name: dataset-initializer, status: Complete}}]
          template:
            metadata: {{labels: {{trainer.kubeflow.org/trainjob-ancestor-step: trainer}}}}
            spec:
              template:
                spec:
                  containers:
                    - {{name: node, resources: {{requests: {{cpu: 2, memory: 4Gi}}, limits: {{nvidia.com/gpu: 1}}}}}}
                    - {{name: sidecar, resources: {{requests: {{cpu: 100m}}}}}}
---
"
    )
}

fn trainjob(extra: &str) -> String {
    format!(
        "apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {{name: tj, annotations: {{lahar.io/duration: 1h}}}}
spec:
  runtimeRef: {{name: rt}}
{extra}"
    )
}

fn load(manifest: &str) -> lahar::scenario::Scenario {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.yaml"), manifest).unwrap();
    let text = scenario(
        "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi, gpus: 8, labels: {pool: train}}",
        &format!("{QUEUES}  workload:\n    - manifests: m.yaml\n"),
    );
    load_str(&text, "s.yaml", dir.path()).unwrap_or_else(|e| panic!("{e}"))
}

/// A runtime with an initializer: the PodGroup counts every replicated job's pods,
/// the queue comes from the runtime template's annotation, the trainer count from
/// mlPolicy when the TrainJob gives none, and the node container's requests merge
/// with `resourcesPerNode` key by key.
#[test]
fn runtimes_replicated_jobs_and_overrides() {
    let s = load(&format!("{}{}", runtime("ClusterTrainingRuntime", "", ""), trainjob("")));
    let j = &s.jobs()[0];
    let t: Vec<(&str, u32, Resources)> = j.tasks.iter().map(|t| (&*t.name, t.replicas, t.requests)).collect();
    assert_eq!(
        t,
        [("dataset-initializer", 1, Resources::new(500, 0, 0, 1)), ("node", 2, Resources::new(2100, 4 * GI, 1000, 1))]
    );
    let queue = |s: &lahar::scenario::Scenario, j: &lahar_core::job::JobSpec| s.queues[j.queue.0 as usize].name.clone();
    assert_eq!((j.min_available, queue(&s, j).as_str()), (3, "research"));
    assert_eq!(j.tasks[1].depends_on, [0]);
    assert_eq!(j.min_resources, Resources::new(500 + 2 * 2100, 8 * GI, 2000, 3));
    // numNodes and resourcesPerNode from the TrainJob; runtime patches add a
    // nodeSelector and move the queue.
    let patched = trainjob(
        "  trainer:
    numNodes: 3
    resourcesPerNode: {requests: {cpu: 4}, limits: {nvidia.com/gpu: 2}}
  runtimePatches:
    - manager: example.io/platform
      trainingRuntimeSpec:
        template:
          metadata: {annotations: {scheduling.volcano.sh/queue-name: default}}
          spec:
            replicatedJobs:
              - name: node
                template: {spec: {template: {spec: {nodeSelector: {pool: train}}}}}
",
    );
    let s = load(&format!("{}{}", runtime("ClusterTrainingRuntime", "", ""), patched));
    let j = &s.jobs()[0];
    let node = &j.tasks[1];
    assert_eq!((node.replicas, node.requests), (3, Resources::new(4100, 4 * GI, 2000, 1)));
    assert_eq!(node.node_selector, [("pool".to_string(), "train".to_string())]);
    assert_eq!((j.min_available, queue(&s, j).as_str()), (4, "default"));
    // A namespaced TrainingRuntime, and Volcano's network topology.
    let s = load(&format!(
        "{}{}",
        runtime("TrainingRuntime", "networkTopology: {mode: hard, highestTierAllowed: 1}", ", namespace: ml"),
        trainjob("")
            .replace("{name: tj,", "{name: tj, namespace: ml,")
            .replace("{name: rt}", "{name: rt, kind: TrainingRuntime}")
    ));
    let nt = s.jobs()[0].network_topology.clone().unwrap();
    assert_eq!((nt.hard, nt.highest_tier_allowed), (true, Some(1)));
}

/// Bad TrainJobs and runtimes are located errors (exit 2), at the object that has
/// the problem.
#[test]
fn bad_trainjobs_are_located_errors() {
    let rt = runtime("ClusterTrainingRuntime", "", "");
    let cases: Vec<(String, &str)> = vec![
        (
            trainjob(""),
            "m.yaml:5:22: document 1: spec.runtimeRef.name: ClusterTrainingRuntime `rt` is not in the manifests",
        ),
        (
            format!("{rt}{}", trainjob("  managedBy: kueue.x-k8s.io/multikueue\n")),
            "document 2: spec.managedBy: managed by `kueue.x-k8s.io/multikueue`, not the Trainer's controller",
        ),
        (
            format!("{rt}{}", trainjob("").replace("{name: rt}", "{name: rt, apiGroup: kubeflow.org}")),
            "document 2: spec.runtimeRef.apiGroup: expected `trainer.kubeflow.org`, got `kubeflow.org`",
        ),
        (
            format!("{rt}{}", trainjob("  trainer: {resourcesPerNode: {requests: {cpu: lots}}}\n")),
            "document 2: spec.trainer.resourcesPerNode.requests.cpu",
        ),
        (
            format!("{}{}", rt.replace("name: dataset-initializer, status", "name: data, status"), trainjob("")),
            "document 1: spec.template.spec.replicatedJobs[1].dependsOn: replicated job `data` is not in this runtime",
        ),
        (
            format!("{}{}", rt.replace("queue-name: research", "queue-name: nowhere"), trainjob("")),
            "document 1: spec.template.metadata.annotations.scheduling.volcano.sh/queue-name: queue `nowhere` does not exist",
        ),
        (format!("{rt}{}", trainjob("  trainer: {numNodez: 2}\n")), "spec.trainer.numNodez: unknown field `numNodez`"),
        (
            format!(
                "{rt}{}",
                trainjob(
                    "  runtimePatches:\n    - {manager: m, trainingRuntimeSpec: {template: {metadata: {annotations: {scheduling.volcano.sh/queue-name: q9}}}}}\n"
                )
            ),
            "document 2: spec.runtimePatches[0].trainingRuntimeSpec.template.metadata.annotations.scheduling.volcano.sh/queue-name: queue `q9` does not exist",
        ),
    ];
    for (manifest, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.yaml"), manifest).unwrap();
        let text = scenario(
            "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi, gpus: 8}",
            &format!("{QUEUES}  workload:\n    - manifests: m.yaml\n"),
        );
        std::fs::write(dir.path().join("s.yaml"), text).unwrap();
        let out = lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(want), "{want}\n{err}");
    }
}
