//! Kubeflow Trainer v2 (issue 13, item 5): a TrainJob on a runtime with Volcano's
//! `podGroupPolicy` becomes one PodGroup of every replicated job's pods, as the
//! Trainer's Volcano plugin builds it; other TrainJobs are not Volcano's.

use super::*;
use lahar::scenario::load_str;
use lahar_core::model::job::{Dependency, Until};
use lahar_core::model::resource::Resources;
use lahar_core::util::time::SimDuration;

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
    assert_eq!(j.duration, SimDuration::from_secs(1200));
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
                metadata: {{annotations: {{lahar.io/duration: 5m}}}}
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
    let queue =
        |s: &lahar::scenario::Scenario, j: &lahar_core::model::job::JobSpec| s.queues[j.queue.0 as usize].name.clone();
    assert_eq!((j.min_available, queue(&s, j).as_str()), (3, "research"));
    assert_eq!(j.tasks[1].depends_on, [Dependency { task: 0, until: Until::Complete }]);
    assert_eq!((j.tasks[0].run_time, j.tasks[1].run_time), (Some(SimDuration::from_secs(300)), None));
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
            "m.yaml:22:23: document 1: spec.template.spec.replicatedJobs[1].dependsOn[0]: replicated job `data` is not in this runtime",
        ),
        // JobSet's API: a status of Ready or Complete, both fields given, at most
        // five entries, none on the first replicated job, only earlier ones named.
        (
            format!("{}{}", rt.replace("status: Complete", "status: Done"), trainjob("")),
            "m.yaml:22:59: document 1: spec.template.spec.replicatedJobs[1].dependsOn[0].status: expected `Ready` or `Complete`, got `Done`",
        ),
        (
            format!("{}{}", rt.replace(", status: Complete", ""), trainjob("")),
            "m.yaml:22:23: document 1: spec.template.spec.replicatedJobs[1].dependsOn[0].status: a dependency needs a status: `Ready` or `Complete`",
        ),
        (
            format!("{}{}", rt.replace("name: dataset-initializer, status: Complete", "status: Ready"), trainjob("")),
            "m.yaml:22:23: document 1: spec.template.spec.replicatedJobs[1].dependsOn[0].name: a dependency needs the name of a replicated job",
        ),
        (
            format!(
                "{}{}",
                rt.replace(
                    "        - name: dataset-initializer\n",
                    "        - name: dataset-initializer\n          dependsOn: [{name: node, status: Ready}]\n"
                ),
                trainjob("")
            ),
            "document 1: spec.template.spec.replicatedJobs[0].dependsOn: the first replicated job cannot depend on another (JobSet's webhook)",
        ),
        (
            format!(
                "{}{}",
                rt.replace(
                    "dependsOn: [{name: dataset-initializer, status: Complete}]",
                    "dependsOn: [{name: node, status: Ready}]"
                ),
                trainjob("")
            ),
            "document 1: spec.template.spec.replicatedJobs[1].dependsOn[0]: replicated job `node` cannot depend on the later replicated job `node`",
        ),
        (
            format!(
                "{}{}",
                rt.replace(
                    "{name: dataset-initializer, status: Complete}",
                    &["{name: dataset-initializer, status: Ready}"; 6].join(", ")
                ),
                trainjob("")
            ),
            "document 1: spec.template.spec.replicatedJobs[1].dependsOn: at most 5 dependencies (JobSet's API), got 6",
        ),
        // The Trainer's webhook: one Job for the trainer and initializer steps.
        (
            format!(
                "{}{}",
                rt.replace("        - name: node\n", "        - name: node\n          replicas: 2\n"),
                trainjob("")
            ),
            "m.yaml:22:21: document 1: spec.template.spec.replicatedJobs[1].replicas: always must be 1 (the Trainer's webhook, for the trainer step), got 2",
        ),
        (
            format!("{}{}", rt.replace("{name: node, resources", "{name: trainer, resources"), trainjob("")),
            "document 1: spec.template.spec.replicatedJobs[1].template.spec.template.spec.containers: must contain the required container for the ancestor: trainer (a container named `node`; the Trainer's webhook)",
        ),
        // A Complete dependency needs the pods to end: a run time, checked up front.
        (
            format!(
                "{}{}",
                rt.replace("metadata: {annotations: {lahar.io/duration: 5m}}", "metadata: {}"),
                trainjob("")
            ),
            "m.yaml:22:23: document 1: spec.template.spec.replicatedJobs[1].dependsOn[0]: replicated job `dataset-initializer` must be Complete first, but its pods have no run time: give its pod template (replicatedJobs[0].template.spec.template) the annotation `lahar.io/duration`",
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

/// JobSet's `dependsOn` in time, through the binary. The runtime's initializer
/// (1 pod, `lahar.io/duration: 5m`) and 2 trainer nodes; the TrainJob runs 1 h.
/// Under a conf without `gang`:
/// - `status: Complete`: the initializer runs 0–300 s; the nodes are created when
///   it has succeeded, bound at 300 s, and the job's hour runs 300–3900 s.
/// - `status: Ready`: the nodes are created once the initializer runs (t = 0),
///   so the job runs 0–3600 s while the initializer still ends at 300 s.
///
/// Under Volcano's default conf (with `gang`) the PodGroup needs all 3 pods and
/// only the initializer exists: nothing ever runs, and the load says so.
#[test]
fn jobset_dependencies_in_time() {
    let rt = runtime("ClusterTrainingRuntime", "", "");
    let conf = "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins: [{name: priority}, {name: conformance}]\n- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]\n";
    let run = |manifest: &str, sched: &str| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.yaml"), manifest).unwrap();
        std::fs::write(dir.path().join("s.conf"), conf).unwrap();
        let text = scenario(
            "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi, gpus: 8}",
            &format!("{QUEUES}{sched}  workload:\n    - manifests: m.yaml\n"),
        );
        std::fs::write(dir.path().join("s.yaml"), text).unwrap();
        let out = dir.path().join("out");
        let cmd = lahar().arg("run").arg(dir.path().join("s.yaml")).arg("--out").arg(&out).assert().success();
        let stderr = String::from_utf8_lossy(&cmd.get_output().stderr).to_string();
        let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
        let pods: Vec<String> =
            read("pods.csv").lines().skip(1).map(|l| l.split(',').skip(2).collect::<Vec<_>>().join(",")).collect();
        let job: Vec<String> = read("jobs.csv").lines().nth(1).unwrap().split(',').map(String::from).collect();
        (pods, (job[5].clone(), job[6].clone(), job[7].clone()), stderr)
    };
    let gangless = "  scheduler: {conf: s.conf}\n";
    let (pods, job, _) = run(&format!("{rt}{}", trainjob("")), gangless);
    assert_eq!(
        pods,
        [
            "dataset-initializer,0,n0,0,0,300,completed",
            "node,0,n0,1,300,3900,completed",
            "node,1,n0,1,300,3900,completed"
        ]
    );
    assert_eq!(job, ("300".into(), "3900".into(), "Completed".into()));
    let ready = rt.replace("status: Complete", "status: Ready");
    let (pods, job, _) = run(&format!("{ready}{}", trainjob("")), gangless);
    assert_eq!(
        pods,
        ["dataset-initializer,0,n0,0,0,300,completed", "node,0,n0,1,0,3600,completed", "node,1,n0,1,0,3600,completed"]
    );
    assert_eq!(job, ("0".into(), "3600".into(), "Completed".into()));
    let (pods, job, stderr) = run(&format!("{rt}{}", trainjob("")), "");
    assert!(pods.is_empty(), "{pods:?}");
    assert_eq!(job, ("".into(), "".into(), "Pending".into()));
    assert!(
        stderr.contains("1 job(s) can never start (the first `default/tj`: its gang needs 3 pods, and only 1 exist before a task dependency (dependsOn) is met)"),
        "{stderr}"
    );
}

/// An MPI runtime in the shape of the Trainer's published `deepspeed-distributed`
/// (a `node` job, then a `launcher` labelled as the trainer step that waits for the
/// nodes to be Ready), with Volcano's podGroupPolicy. The MPI plugin sizes the
/// `node` job from the TrainJob's numNodes — one less with `runLauncherAsNode`, the
/// launcher being a node — and the launcher keeps mlPolicy.numNodes (1);
/// `resourcesPerNode` reaches the launcher and, with the launcher as a node, the
/// node job's `node` container too.
#[test]
fn mpi_runtimes_size_the_node_job() {
    let rt = |as_node: bool| {
        format!(
            "apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {{name: rt}}
spec:
  mlPolicy: {{numNodes: 1, mpi: {{numProcPerNode: 1, mpiImplementation: OpenMPI, runLauncherAsNode: {as_node}}}}}
  podGroupPolicy: {{volcano: {{}}}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            spec:
              template:
                spec:
                  containers: [{{name: node, resources: {{requests: {{cpu: 1}}}}}}]
        - name: launcher
          dependsOn: [{{name: node, status: Ready}}]
          template:
            metadata: {{labels: {{trainer.kubeflow.org/trainjob-ancestor-step: trainer}}}}
            spec:
              template:
                spec:
                  containers: [{{name: node, resources: {{requests: {{cpu: 1}}}}}}]
---
"
        )
    };
    let tj = trainjob("  trainer:\n    numNodes: 4\n    resourcesPerNode: {limits: {nvidia.com/gpu: 1}}\n");
    let tasks = |s: &lahar::scenario::Scenario| -> Vec<(String, u32, Resources)> {
        s.jobs()[0].tasks.iter().map(|t| (t.name.to_string(), t.replicas, t.requests)).collect()
    };
    let s = load(&format!("{}{tj}", rt(true)));
    let gpu = Resources::new(1000, 0, 1000, 1);
    assert_eq!(tasks(&s), [("node".into(), 3, gpu), ("launcher".into(), 1, gpu)]);
    assert_eq!(s.jobs()[0].min_available, 4);
    assert_eq!(s.jobs()[0].tasks[1].depends_on, [Dependency { task: 0, until: Until::Ready }]);
    let s = load(&format!("{}{tj}", rt(false)));
    assert_eq!(tasks(&s), [("node".into(), 4, Resources::new(1000, 0, 0, 1)), ("launcher".into(), 1, gpu)]);
    // JobSet makes `replicas` Jobs of a replicated job, while the Trainer's
    // PodGroup counts one Job's pods (its pod set count).
    let two = rt(false).replace(
        "        - name: node\n          template:",
        "        - name: node\n          replicas: 2\n          template:",
    );
    let s = load(&format!("{two}{tj}"));
    let j = &s.jobs()[0];
    assert_eq!(tasks(&s), [("node".into(), 8, Resources::new(1000, 0, 0, 1)), ("launcher".into(), 1, gpu)]);
    assert_eq!((j.min_available, j.min_resources), (5, Resources::new(5000, 0, 1000, 5)));
    assert_eq!(
        (j.pod_name(0, 3), j.pod_name(0, 4), j.pod_name(1, 0)),
        ("tj-node-0-3".into(), "tj-node-1-0".into(), "tj-launcher-0-0".into())
    );
    // Volcano's gang plugin needs all 5 pods while the launcher waits for the
    // nodes: the job can never start (kubeflow/mpi-operator#608 describes the
    // same deadlock), and the load says so.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.yaml"), format!("{}{tj}", rt(false))).unwrap();
    let text = scenario(
        "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi, gpus: 8}",
        &format!("{QUEUES}  workload:\n    - manifests: m.yaml\n"),
    );
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let out = lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("its gang needs 5 pods, and only 4 exist before a task dependency"), "{err}");
}
