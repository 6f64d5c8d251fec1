//! Manifest import: the examples of the Volcano, Kubeflow, KubeRay and Spark operator
//! docs (examples/manifests/) become the expected jobs, queues and HyperNodes, pods
//! given as running start on their nodes, and every bad input is a located error.

use super::*;
use lahar::scenario::{Scenario, load_file};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{Dependency, JobSpec, PodGroupPhase, PolicyAction, PolicyEvent};
use lahar_core::model::queue::QueueId;
use lahar_core::model::resource::{CPU, GPU, Resources};
use lahar_core::util::time::{SimDuration, SimTime};

const GI: i64 = 1 << 30;
const MI: i64 = 1 << 20;

fn example() -> Scenario {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests/scenario.yaml");
    load_file(&p).unwrap_or_else(|e| panic!("{e}"))
}

fn job(s: &Scenario, name: &str) -> JobSpec {
    s.jobs().into_iter().find(|j| j.name == name).unwrap_or_else(|| panic!("no job {name}"))
}

fn res(cpu_milli: i64, memory: i64, gpu_milli: i64) -> Resources {
    Resources::new(cpu_milli, memory, gpu_milli, 1)
}

#[test]
fn queues_and_hypernodes_from_manifests() {
    let s = example();
    let names: Vec<&str> = s.queues.iter().map(|q| q.name.as_str()).collect();
    assert_eq!(names, ["default", "test", "research"]);
    let test = &s.queues[1];
    assert_eq!((test.weight, test.reclaimable), (1, false));
    assert!(test.capability.has(CPU) && !test.capability.has(GPU));
    assert_eq!(test.capability.values.get(CPU), 2000);
    let r = &s.queues[2];
    assert_eq!((r.weight, r.priority, r.reclaimable), (2, 10, true));
    assert_eq!(r.capability.values.get(GPU), 16000);
    assert_eq!(r.deserved.values.get(GPU), 8000);
    assert_eq!(r.guarantee.values.get(GPU), 4000);
    let topo = &s.cluster.topology;
    let leaf0 = topo.get(topo.find("leaf-0").unwrap());
    let leaf1 = topo.get(topo.find("leaf-1").unwrap());
    let spine = topo.get(topo.find("spine").unwrap());
    assert_eq!(leaf0.nodes, [NodeId(0), NodeId(1)]);
    assert_eq!(leaf1.nodes, [NodeId(2), NodeId(3)]); // exactMatch node-2 + labelMatch rack=r3
    assert_eq!((leaf0.tier, spine.tier), (1, 2));
    assert_eq!(spine.nodes, [NodeId(0), NodeId(1), NodeId(2), NodeId(3)]);
}

#[test]
fn volcano_job_from_the_docs() {
    let s = example();
    let j = job(&s, "test-job");
    assert_eq!((&*j.kind, &*j.namespace), ("VolcanoJob", "default"));
    assert_eq!(j.queue, QueueId(0));
    assert_eq!((j.priority_class.as_deref(), j.priority), (Some("high-priority"), 1000));
    assert_eq!((j.min_available, j.max_retry), (3, 5));
    assert_eq!((j.submit, j.duration), (SimTime(30_000_000), SimDuration::from_secs(600)));
    assert_eq!(j.policies.len(), 1);
    assert_eq!((j.policies[0].event, j.policies[0].action), (PolicyEvent::PodEvicted, PolicyAction::RestartJob));
    assert_eq!(j.tasks.len(), 1);
    let t = &j.tasks[0];
    assert_eq!((&*t.name, t.replicas, t.min_available), ("default-nginx", 6, 6));
    assert_eq!(t.requests, res(1000, 0, 0));
    // The template has no PriorityClass: the controller gives pods the job's.
    assert_eq!(t.priority, 1000);
    // minResources: the first 3 pods.
    assert_eq!(j.min_resources, Resources::new(3000, 0, 0, 3));

    let j = job(&s, "llm-train");
    assert_eq!((&*j.namespace, j.queue, j.min_available), ("research", QueueId(2), 2));
    assert_eq!(j.priority, 10); // global-default PriorityClass
    assert_eq!(j.checkpoint_interval, Some(SimDuration::from_secs(600)));
    let nt = j.network_topology.as_ref().unwrap();
    assert_eq!((nt.hard, nt.highest_tier_allowed), (true, Some(1)));
    assert_eq!((&*j.tasks[0].name, j.tasks[0].replicas), ("worker", 2));
    assert_eq!(j.tasks[0].requests, res(8000, 64 * GI, 8000)); // GPU from limits
    assert_eq!((&*j.tasks[1].name, &j.tasks[1].depends_on), ("master", &vec![Dependency::available(0)]));
    let i = s.jobs().iter().position(|x| x.name == "llm-train").unwrap();
    let models = s.models();
    let p = models[i].as_ref().unwrap();
    assert_eq!((p.name.as_str(), p.iterations), ("gpt2-xl", Some(2000)));
    assert!(j.duration > SimDuration::ZERO, "priced from the model");
}

#[test]
fn kubeflow_jobs() {
    let s = example();
    let j = job(&s, "pytorch-dist-mnist-gloo");
    assert_eq!((&*j.kind, j.queue, j.priority, j.min_available), ("PyTorchJob", QueueId(2), 1000, 2));
    let t: Vec<(&str, u32, u32)> = j.tasks.iter().map(|t| (&*t.name, t.replicas, t.min_available)).collect();
    assert_eq!(t, [("master", 1, 0), ("worker", 3, 0)]);
    assert_eq!(j.tasks[1].requests, res(0, 0, 1000));
    assert_eq!(j.min_resources, Resources::new(0, 0, 2000, 2));

    let j = job(&s, "tensorflow-benchmarks");
    assert_eq!((&*j.kind, j.queue, j.priority, j.min_available), ("MPIJob", QueueId(0), 10, 3));
    let t: Vec<(&str, u32)> = j.tasks.iter().map(|t| (&*t.name, t.replicas)).collect();
    assert_eq!(t, [("launcher", 1), ("worker", 2)]);
    assert_eq!(j.tasks[0].requests, res(0, 0, 0));
    assert_eq!(j.submit, SimTime(120_000_000));

    let j = job(&s, "dist-mnist-for-e2e-test");
    let t: Vec<(&str, u32)> = j.tasks.iter().map(|t| (&*t.name, t.replicas)).collect();
    assert_eq!(t, [("ps", 2), ("worker", 4)]);
    assert_eq!((&*j.kind, j.min_available), ("TFJob", 6));
}

#[test]
fn ray_and_spark() {
    let s = example();
    let j = job(&s, "test-cluster-0");
    assert_eq!((&*j.kind, j.min_available), ("RayCluster", 3));
    let t: Vec<(&str, u32)> = j.tasks.iter().map(|t| (&*t.name, t.replicas)).collect();
    assert_eq!(t, [("head", 1), ("worker", 2)]);
    assert_eq!(j.tasks[0].requests, res(1000, 2 * GI, 0));
    assert_eq!(j.tasks[1].requests, res(1000, GI, 1000));

    // Autoscaling: the gang is the head plus each group's minReplicas (1); the
    // group has the replicas KubeRay starts with (3, not maxReplicas 5: the
    // autoscaler's demand-driven growth is not simulated), elastic.
    let j = job(&s, "rayjob-sample");
    assert_eq!((&*j.kind, j.min_available, j.tasks[1].replicas), ("RayJob", 2, 3));
    assert!(j.elastic.is_some());

    let j = job(&s, "spark-pi");
    assert_eq!((&*j.kind, j.min_available), ("SparkApplication", 1));
    // 512m + the 384 MiB minimum overhead.
    assert_eq!(j.tasks[0].requests, res(1000, 896 * MI, 0));
    assert_eq!(
        (&*j.tasks[1].name, j.tasks[1].replicas, &j.tasks[1].depends_on),
        ("executor", 2, &vec![Dependency::running(0)])
    );
    assert_eq!(j.min_resources, Resources::new(3000, 3 * 896 * MI, 0, 3));
}

#[test]
fn podgroup_and_running_pods_are_the_starting_state() {
    let s = example();
    let j = job(&s, "resnet");
    assert_eq!((&*j.kind, j.min_available, j.priority), ("PodGroup", 2, 1000));
    assert_eq!((j.submit, j.duration), (SimTime::ZERO, SimDuration::from_secs(2700)));
    assert_eq!(j.tasks.len(), 1);
    let t = &j.tasks[0];
    assert_eq!((&*t.name, t.replicas, t.min_available, t.priority), ("worker", 2, 2, 1000));
    assert_eq!(t.requests, res(4000, 32 * GI, 4000));
    assert_eq!(j.initial, [(0, 0, NodeId(0)), (0, 1, NodeId(1))]);

    let j = job(&s, "notebook");
    assert_eq!((&*j.tasks[0].name, j.tasks[0].replicas, j.tasks[0].min_available), ("notebook", 1, 0));
    assert_eq!(j.tasks[0].requests, res(500, 2 * GI, 1000));
    assert_eq!(j.tasks[0].priority, 10); // no class on the pod: the global default
    assert!(j.initial.is_empty());
}

#[test]
fn running_pods_end_where_they_started() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests/scenario.yaml");
    let status = assert_cmd::Command::new(env!("CARGO_BIN_EXE_lahar"))
        .args(["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let pods = std::fs::read_to_string(out.join("pods.csv")).unwrap();
    assert!(pods.contains("resnet,default/resnet-worker-0,worker,0,node-0,4,0,2700,completed"), "{pods}");
    assert!(pods.contains("resnet,default/resnet-worker-1,worker,1,node-1,4,0,2700,completed"), "{pods}");
    let decisions = std::fs::read_to_string(out.join("decisions.csv")).unwrap();
    assert!(!decisions.lines().any(|l| l.contains("bind") && l.contains("resnet")), "{decisions}");
}

/// Writes `files` into a temp dir with a scenario whose spec continues with `rest`,
/// loads it and returns the error text.
fn rejects(files: &[(&str, &str)], rest: &str, needles: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let text = scenario("    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi, gpus: 8}", rest);
    let p = dir.path().join("scenario.yaml");
    std::fs::write(&p, text).unwrap();
    let err = match load_file(&p) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    };
    for n in needles {
        assert!(err.contains(n), "error lacks {n:?}:\n{err}");
    }
    err
}

const VCJOB: &str = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: j\n  annotations: {lahar.io/duration: 1h}\nspec:\n  tasks:\n    - replicas: 2\n      template:\n        spec:\n          containers:\n            - name: c\n              resources: {requests: {cpu: \"1\"}}\n";

#[test]
fn manifests_load_through_globs_in_name_order() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("jobs")).unwrap();
    std::fs::write(dir.path().join("jobs/b.yaml"), VCJOB.replace("name: j", "name: b")).unwrap();
    std::fs::write(
        dir.path().join("jobs/a.yaml"),
        format!("{}---\n{}", VCJOB.replace("name: j", "name: a1"), VCJOB.replace("name: j", "name: a2")),
    )
    .unwrap();
    std::fs::write(dir.path().join("jobs/notes.txt"), "not yaml: [").unwrap();
    let text = scenario(
        "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi}",
        "  workload:\n    - manifests: jobs/*.yaml\n",
    );
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let s = load_file(&dir.path().join("s.yaml")).unwrap_or_else(|e| panic!("{e}"));
    let jobs = s.jobs();
    let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["a1", "a2", "b"]);
    // Unnamed task: the webhook's `default0`; minAvailable: Σ task minAvailable.
    assert_eq!((&*s.jobs()[0].tasks[0].name, s.jobs()[0].min_available), ("default0", 2));
}

#[test]
fn bad_manifests_are_located_errors() {
    let w = "  workload:\n    - manifests: m.yaml\n";
    rejects(
        &[("m.yaml", "apiVersion: apps/v1\nkind: ControllerRevision\nmetadata: {name: d}\n")],
        w,
        &["m.yaml:2:7: document 1: kind: unknown kind `ControllerRevision` of apiVersion `apps/v1`"],
    );
    rejects(
        &[("m.yaml", &VCJOB.replace("lahar.io/duration: 1h", "lahar.io/duration: soon"))],
        w,
        &["m.yaml:5:36: document 1: metadata.annotations.lahar.io/duration: bad duration `soon`"],
    );
    rejects(
        &[("m.yaml", &VCJOB.replace("cpu: \"1\"", "cpu: 1x"))],
        w,
        &["m.yaml:13:43: document 1: spec.tasks[0].template.spec.containers[0].resources.requests.cpu"],
    );
    rejects(
        &[("jobs/readme.txt", "no jobs yet")],
        "  workload:\n    - manifests: jobs/*.yaml\n",
        &["scenario.yaml:9:7: spec.workload[0].manifests: `jobs/*.yaml` matches no file"],
    );
    rejects(&[], "  workload:\n    - manifests: jobs/*.yaml\n", &["spec.workload[0].manifests: cannot list"]);
    rejects(&[], "  workload:\n    - manifests: missing.yaml\n", &["spec.workload[0].manifests", "no such file"]);
    rejects(&[("m.yaml", "a: [1\n")], w, &["m.yaml:", "invalid YAML"]);
    rejects(
        &[("m.yaml", &VCJOB.replacen("spec:\n", "spec:\n  queue: nope\n", 1))],
        w,
        &["spec.queue: queue `nope` does not exist"],
    );
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: {lahar.io/duration: 1h}\nspec:\n  nodeName: n9\n  containers: [{name: c}]\nstatus: {phase: Running}\n";
    rejects(&[("m.yaml", pod)], w, &["m.yaml:7:13: document 1: spec.nodeName: node `n9` does not exist"]);
    let late = pod.replace("nodeName: n9", "nodeName: n0").replace(
        "kind: Pod\nmetadata:\n  name: p\n  annotations: {lahar.io/duration: 1h}",
        "kind: Pod\nmetadata:\n  name: p\n  annotations: {scheduling.k8s.io/group-name: g}",
    );
    let pg = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata:\n  name: g\n  annotations: {lahar.io/duration: 1h, lahar.io/submit-at: 5m}\nspec: {minMember: 1}\n---\n";
    rejects(&[("m.yaml", &format!("{pg}{late}"))], w, &["document 1: metadata.annotations.lahar.io/submit-at", "t=0"]);
    // A pod no node can hold is a warning, not an error: the job stays pending.
    {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.yaml"), VCJOB.replace("cpu: \"1\"", "cpu: \"100\"")).unwrap();
        let p = dir.path().join("scenario.yaml");
        std::fs::write(&p, scenario("    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi, gpus: 8}", w)).unwrap();
        let s = load_file(&p).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.jobs().len(), 1);
        let warning = s.warnings.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n");
        assert!(
            warning.contains("m.yaml:1:1: document 1: VolcanoJob `j` task `default0`: a pod requests 0 GPUs, 100 CPU"),
            "{warning}"
        );
        assert!(warning.contains("no node can hold it"), "{warning}");
    }
    rejects(
        &[("q.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")],
        "  queues: q.yaml\n",
        &["q.yaml:2:7: document 1: kind: expected a scheduling.volcano.sh Queue, got kind `Pod` of apiVersion `v1`"],
    );
    rejects(
        &[(
            "q.yaml",
            "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: a}\nspec: {weight: 0}\n",
        )],
        "  queues: q.yaml\n",
        &["q.yaml:4:16: document 1: spec.weight: must be an integer ≥ 1, got 0"],
    );
}

#[test]
fn hypernode_selector_that_matches_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let h = "apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: h}\nspec:\n  tier: 1\n  members:\n    - {type: Node, selector: {regexMatch: {pattern: '^gpu-'}}}\n";
    std::fs::write(dir.path().join("h.yaml"), h).unwrap();
    let text = scenario("    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi}\n    hyperNodes: h.yaml", "");
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let err = load_file(&dir.path().join("s.yaml")).unwrap_err().to_string();
    assert!(err.contains("h.yaml:7:30: document 1: spec.members[0].selector: the selector matches nothing"), "{err}");
}

/// Two selectors of one HyperNode matching the same node are one member (Volcano
/// merges the matches: its 1.11 release notes); a node in two HyperNodes is an
/// error that names the node.
#[test]
fn hypernode_selectors_matching_one_node_twice() {
    let dir = tempfile::tempdir().unwrap();
    let hn = |name: &str, members: &str| {
        format!(
            "apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {{name: {name}}}\nspec:\n  tier: 1\n  members:\n{members}---\n"
        )
    };
    let both = "    - {type: Node, selector: {exactMatch: {name: n0}}}\n    - {type: Node, selector: {regexMatch: {pattern: '^n'}}}\n";
    std::fs::write(dir.path().join("h.yaml"), hn("h", both)).unwrap();
    let nodes = "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi}\n      - {name: n1, cpu: 16, memory: 64Gi}\n    hyperNodes: h.yaml";
    std::fs::write(dir.path().join("s.yaml"), scenario(nodes, "")).unwrap();
    let s = load_file(&dir.path().join("s.yaml")).unwrap_or_else(|e| panic!("{e}"));
    let t = &s.cluster.topology;
    assert_eq!(t.get(t.find("h").unwrap()).nodes.len(), 2);
    let two = hn("h", both) + &hn("g", "    - {type: Node, selector: {exactMatch: {name: n1}}}\n");
    std::fs::write(dir.path().join("h.yaml"), two).unwrap();
    let err = load_file(&dir.path().join("s.yaml")).unwrap_err().to_string();
    assert!(err.contains("node `n1` is a member of both `h` and `g`; a member may have one parent"), "{err}");
}

/// A VolcanoJob's task-topology annotations become the job's task topology; an
/// unknown task name in them is a located error.
#[test]
fn vcjob_task_topology_annotations() {
    let two_tasks = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: tf\n  annotations:\n    lahar.io/duration: 1h\n    volcano.sh/task-topology-affinity: \"ps,worker;chief\"\n    volcano.sh/task-topology-anti-affinity: \"ps\"\n    volcano.sh/task-topology-task-order: \"ps,worker,chief\"\nspec:\n  tasks:\n    - {name: ps, replicas: 1, template: {spec: {containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]}}}\n    - {name: worker, replicas: 2, template: {spec: {containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]}}}\n    - {name: chief, replicas: 1, template: {spec: {containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]}}}\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.yaml"), two_tasks).unwrap();
    let text = scenario(
        "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi, gpus: 8}",
        "  workload:\n    - manifests: m.yaml\n",
    );
    let p = dir.path().join("scenario.yaml");
    std::fs::write(&p, &text).unwrap();
    let s = load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    let t = job(&s, "tf").task_topology.expect("task topology");
    let v =
        |x: &[&[&str]]| -> Vec<Vec<String>> { x.iter().map(|g| g.iter().map(|n| n.to_string()).collect()).collect() };
    assert_eq!(t.affinity, v(&[&["ps", "worker"], &["chief"]]));
    assert_eq!(t.anti_affinity, v(&[&["ps"]]));
    assert_eq!(t.task_order, ["ps", "worker", "chief"]);
    rejects(
        &[("m.yaml", &two_tasks.replace("\"ps\"\n", "\"pz\"\n"))],
        "  workload:\n    - manifests: m.yaml\n",
        &["m.yaml:8:", "metadata.annotations.volcano.sh/task-topology-anti-affinity: unknown task `pz`"],
    );
}

/// A PodGroup given as a manifest carries the same task-topology annotations
/// (Volcano's plugin reads the PodGroup's), over its pods' roles
/// (`volcano.sh/task-spec`); they were read on VolcanoJobs only.
#[test]
fn podgroup_task_topology_annotations() {
    let pod = |name: &str, role: &str| {
        format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, annotations: {{scheduling.k8s.io/group-name: tf, volcano.sh/task-spec: {role}}}}}\nspec:\n  schedulerName: volcano\n  containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]\n"
        )
    };
    let group = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata:\n  name: tf\n  annotations:\n    lahar.io/duration: 1h\n    volcano.sh/task-topology-affinity: \"ps,worker\"\n    volcano.sh/task-topology-task-order: \"worker,ps\"\nspec:\n  minMember: 3\n";
    let text =
        format!("{group}{}{}{}", pod("tf-ps-0", "ps"), pod("tf-worker-0", "worker"), pod("tf-worker-1", "worker"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.yaml"), &text).unwrap();
    let p = dir.path().join("scenario.yaml");
    std::fs::write(
        &p,
        scenario("    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi}", "  workload:\n    - manifests: m.yaml\n"),
    )
    .unwrap();
    let s = load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    let t = job(&s, "tf").task_topology.expect("task topology");
    assert_eq!(t.affinity, [["ps".to_string(), "worker".to_string()]]);
    assert!(t.anti_affinity.is_empty());
    assert_eq!(t.task_order, ["worker", "ps"]);
    rejects(
        &[("m.yaml", &text.replace("\"worker,ps\"", "\"worker,pz\""))],
        "  workload:\n    - manifests: m.yaml\n",
        &[
            "m.yaml:8:",
            "metadata.annotations.volcano.sh/task-topology-task-order: unknown task `pz`; the job's tasks are: ps, worker",
        ],
    );
}

/// The published examples under examples/manifests/docs/ (each file names its
/// source repository and path), loaded as they are: kind, namespace, queue, gang,
/// tasks with replicas, per-task minimum and pod requests.
#[test]
fn documentation_examples_load_as_they_are() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests/docs-scenario.yaml");
    let s = load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    let queues: Vec<&str> = s.queues.iter().map(|q| q.name.as_str()).collect();
    assert_eq!(queues, ["default", "kuberay-test-queue", "test"]);
    assert_eq!(s.queues[1].capability.values.get(CPU), 4000);
    type Task<'a> = (&'a str, u32, u32, Resources);
    // (name, kind, namespace, queue, minAvailable, tasks)
    type Expected<'a> = (&'a str, &'a str, &'a str, QueueId, u32, Vec<Task<'a>>);
    let zero = res(0, 0, 0);
    #[rustfmt::skip]
    let expected: Vec<Expected> = vec![
        // elasticPolicy: the gang needs minReplicas (1) of its 2 workers.
        ("elastic-example-echo", "PyTorchJob", "default", QueueId(0), 1, vec![("worker", 2, 0, zero)]),
        ("pi", "MPIJob", "default", QueueId(0), 3,
            vec![("launcher", 1, 0, res(1000, GI, 0)), ("worker", 2, 0, res(1000, GI, 0))]),
        ("tensorflow-mnist", "MPIJob", "kubeflow", QueueId(0), 3,
            vec![("launcher", 1, 0, res(1000, 2 * GI, 0)), ("worker", 2, 0, res(2000, 4 * GI, 0))]),
        ("paddle-simple-gpu", "PaddleJob", "kubeflow", QueueId(0), 2, vec![("worker", 2, 0, res(0, 0, 2000))]),
        ("pytorch-simple", "PyTorchJob", "kubeflow", QueueId(0), 2, vec![("master", 1, 0, zero), ("worker", 1, 0, zero)]),
        ("jaxjob-simple", "JAXJob", "kubeflow", QueueId(0), 2, vec![("worker", 2, 0, zero)]),
        ("jaxjob-mnist", "JAXJob", "kubeflow", QueueId(0), 2, vec![("worker", 2, 0, zero)]),
        // RayService: the RayCluster of rayClusterConfig, head + 1 worker (replicas 1).
        // A Deployment of schedulerName volcano: one PodGroup of minMember 1 in the
        // pod template's queue.
        ("deploy-with-volcano", "Deployment", "default", QueueId(2), 1, vec![("deploy-with-volcano", 1, 0, res(300, 0, 0))]),
        ("rayservice-sample", "RayService", "default", QueueId(0), 2,
            vec![("head", 1, 1, res(2000, 2 * GI, 0)), ("small-group", 1, 0, res(500, 2 * GI, 0))]),
        ("tfjob-simple", "TFJob", "kubeflow", QueueId(0), 2, vec![("worker", 2, 0, zero)]),
        ("xgboost-dist-iris-test-train", "XGBoostJob", "default", QueueId(0), 3,
            vec![("master", 1, 0, zero), ("worker", 2, 0, zero)]),
        ("test-cluster-0", "RayCluster", "default", QueueId(1), 3,
            vec![("head", 1, 1, res(1000, 2 * GI, 0)), ("worker", 2, 0, res(1000, GI, 0))]),
        ("test-cluster-network-topology", "RayCluster", "default", QueueId(0), 3,
            vec![("head", 1, 1, res(1000, 2 * GI, 0)), ("worker", 2, 0, res(1000, GI, 0))]),
        // Dynamic allocation: up to maxExecutors (5) executors, elastic.
        ("spark-pi-dynamic-allocation", "SparkApplication", "default", QueueId(0), 1,
            vec![("driver", 1, 1, res(1000, 896 * MI, 0)), ("executor", 5, 0, res(1000, 896 * MI, 0))]),
        ("spark-pi-volcano", "SparkApplication", "default", QueueId(0), 1,
            vec![("driver", 1, 1, res(1000, 896 * MI, 0)), ("executor", 2, 0, res(1000, 896 * MI, 0))]),
        ("lm-mpi-job", "VolcanoJob", "default", QueueId(0), 3,
            vec![("mpimaster", 1, 1, zero), ("mpiworker", 2, 2, zero)]),
        ("ray-cluster-job", "VolcanoJob", "default", QueueId(0), 3, vec![("head", 1, 1, zero), ("worker", 2, 2, zero)]),
        ("job", "VolcanoJob", "default", QueueId(0), 1,
            vec![("preempt-task", 1, 1, res(1000, 0, 0)), ("non-preempt-task", 1, 1, res(1000, 0, 0))]),
        ("test-job", "VolcanoJob", "default", QueueId(0), 3, vec![("default-nginx", 6, 6, res(1000, 0, 0))]),
        ("mindspore-cpu", "VolcanoJob", "default", QueueId(0), 1, vec![("pod", 8, 8, res(1000, 0, 0))]),
        ("tensorflow-dist-mnist", "VolcanoJob", "default", QueueId(0), 3,
            vec![("ps", 1, 1, zero), ("worker", 2, 2, zero)]),
        // A PodGroup whose owner and Pods are not in the manifests: what the scheduler
        // sees before the controller creates pods (no pod; it takes part in enqueue).
        ("test", "PodGroup", "default", QueueId(0), 1, vec![("pod", 0, 0, zero)]),
    ];
    // One job per file, files in name order, then by submission time.
    let jobs = s.jobs();
    let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
    #[rustfmt::skip]
    assert_eq!(names, [
        "jaxjob-simple", "jaxjob-mnist",
        "pi", "tensorflow-mnist", "paddle-simple-gpu", "elastic-example-echo", "pytorch-simple", "tfjob-simple",
        "xgboost-dist-iris-test-train", "test-cluster-network-topology", "test-cluster-0", "rayservice-sample", "spark-pi-volcano", "deploy-with-volcano",
        "ray-cluster-job", "tensorflow-dist-mnist", "job", "test-job", "mindspore-cpu", "test",
        "spark-pi-dynamic-allocation", "lm-mpi-job",
    ]);
    for (name, kind, ns, queue, min, tasks) in &expected {
        let j = job(&s, name);
        let elastic = ["elastic-example-echo", "spark-pi-dynamic-allocation"].contains(name);
        assert_eq!(j.elastic.is_some(), elastic, "{name}");
        assert_eq!((&*j.kind, &*j.namespace, j.queue, j.min_available), (*kind, *ns, *queue, *min), "{name}");
        // Only `job` names an existing PriorityClass (test-job's `high-priority` is not
        // in the manifests: the scheduler's default, 0).
        assert_eq!(j.priority, if *name == "job" { 1 } else { 0 }, "{name}");
        let got: Vec<Task> = j.tasks.iter().map(|t| (&*t.name, t.replicas, t.min_available, t.requests)).collect();
        assert_eq!(&got, tasks, "{name}");
    }
    // What the fields beyond the tasks became.
    let j = job(&s, "tensorflow-dist-mnist");
    assert_eq!((j.policies[0].event, j.policies[0].action), (PolicyEvent::PodEvicted, PolicyAction::RestartJob));
    let p = &j.tasks[1].policies[0];
    assert_eq!((p.event, p.action), (PolicyEvent::TaskCompleted, PolicyAction::CompleteJob));
    assert_eq!(j.duration, SimDuration::from_secs(1200));
    assert_eq!(job(&s, "lm-mpi-job").submit, SimTime(60_000_000));
    assert_eq!(job(&s, "pi").max_retry, 0); // runPolicy.backoffLimit
    assert_eq!(job(&s, "tensorflow-mnist").min_resources, Resources::new(5000, 10 * GI, 0, 3));
    assert_eq!(job(&s, "paddle-simple-gpu").min_resources, Resources::new(0, 0, 4000, 2));
    assert_eq!(job(&s, "spark-pi-volcano").min_resources, Resources::new(3000, 3 * 896 * MI, 0, 3));
    // Pods named as their controllers name them (issue 12, item 1): Spark's driver and
    // executors (Spark's random prefix left out), KubeRay's head and workers (the
    // random suffix replaced by the index), Kubeflow's `<job>-<replica-type>-<i>`.
    let names = |name: &str| {
        let j = job(&s, name);
        let mut v = Vec::new();
        for (t, task) in j.tasks.iter().enumerate() {
            v.extend((0..task.replicas).map(|i| j.pod_name(t, i)));
        }
        v
    };
    assert_eq!(
        names("spark-pi-volcano"),
        ["spark-pi-volcano-driver", "spark-pi-volcano-exec-1", "spark-pi-volcano-exec-2"]
    );
    assert_eq!(names("jaxjob-simple"), ["jaxjob-simple-worker-0", "jaxjob-simple-worker-1"]);
    // KubeRay names a RayService's cluster `<service>-<5 random characters>`; lahar
    // derives the characters from the file.
    let ray_service = names("rayservice-sample");
    let cluster = ray_service[0].strip_suffix("-head").expect("head first");
    assert!(cluster.starts_with("rayservice-sample-") && cluster.len() == "rayservice-sample-".len() + 5, "{cluster}");
    assert_eq!(ray_service[1], format!("{cluster}-small-group-worker-0"));
    assert_eq!(
        names("test-cluster-0"),
        ["test-cluster-0-head", "test-cluster-0-worker-worker-0", "test-cluster-0-worker-worker-1"]
    );
    assert_eq!(names("pytorch-simple")[..2], ["pytorch-simple-master-0", "pytorch-simple-worker-0"]);
    assert_eq!(job(&s, "spark-pi-volcano").tasks[1].depends_on, [Dependency::running(0)]);
    assert_eq!(job(&s, "spark-pi-dynamic-allocation").submit, SimTime(30_000_000));
    // Task priorities: the task's own class, else the job's.
    let j = job(&s, "job");
    assert_eq!((j.tasks[0].priority, j.tasks[1].priority), (10, 1));
    assert_eq!((job(&s, "test-job").max_retry, job(&s, "test-job").tasks[0].priority), (5, 1));
    // The website's PodGroup snapshot (owned by Job `test`, which is not here; no
    // Pods): a job without pods, its minResources as written, its phase Running.
    let t = job(&s, "test");
    assert_eq!((t.min_resources, t.start_phase), (Resources::new(3000, 2048 * MI, 0, 0), Some(PodGroupPhase::Running)));
    assert!(t.duration.is_unbounded());
    // KubeRay copies the RayCluster's topology labels into the PodGroup.
    let nt = job(&s, "test-cluster-network-topology").network_topology.unwrap();
    assert_eq!((nt.hard, nt.highest_tier_allowed), (true, Some(2)));
    assert!(job(&s, "test-cluster-0").network_topology.is_none());
}

/// `scenario.yaml` in `dir`: one 8-GPU node and the workload `m.yaml`.
fn one_node_scenario(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("scenario.yaml");
    let text = scenario(
        "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi, gpus: 8}",
        "  workload:\n    - manifests: m.yaml\n",
    );
    std::fs::write(&p, text).unwrap();
    p
}

/// Typos in manifests are located errors with a suggestion (exit 2 through the
/// binary), checked against the kinds' published CRD schemas; fields the schema has
/// but the scheduler ignores are accepted.
#[test]
fn manifest_typos_are_errors_with_a_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    let job = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: j\n  annotations: {lahar.io/duration: 1h}\nspec:\n  minAvailabel: 4\n  queeu: default\n  tasks:\n    - replica: 4\n      name: w\n      template:\n        spec:\n          containers:\n            - name: c\n              image: busybox\n              command: [sleep, \"3600\"]\n              env: [{name: A, value: b}]\n              resources:\n                request: {nvidia.com/gpu: 1}\n          volumes: [{name: v, emptyDir: {}}]\nstatus: {state: {phase: Pending}}\n";
    std::fs::write(dir.path().join("m.yaml"), job).unwrap();
    let p = one_node_scenario(dir.path());
    let out = lahar().arg("validate").arg(&p).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{err}");
    let m = dir.path().join("m.yaml").display().to_string();
    for needle in [
        format!(
            "{m}:7:17: document 1: spec.minAvailabel: unknown field `minAvailabel` (not in the Job schema of Volcano's CRD (batch.volcano.sh/v1alpha1)); did you mean `minAvailable`?"
        ),
        format!("{m}:8:10: document 1: spec.queeu: unknown field `queeu`"),
        format!("{m}:10:16: document 1: spec.tasks[0].replica: unknown field `replica`"),
        "did you mean `replicas`?".to_string(),
        format!(
            "{m}:20:26: document 1: spec.tasks[0].template.spec.containers[0].resources.request: unknown field `request`"
        ),
        "did you mean `requests`?".to_string(),
    ] {
        assert!(err.contains(&needle), "lacks {needle:?}:\n{err}");
    }
    assert!(
        !err.contains("`command`") && !err.contains("`env`") && !err.contains("`volumes`") && !err.contains("`status`"),
        "{err}"
    );
    // Fixed, the same file loads: the ignored fields stay accepted.
    let fixed = job
        .replace("minAvailabel", "minAvailable")
        .replace("queeu", "queue")
        .replace("replica:", "replicas:")
        .replace("request:", "requests:");
    std::fs::write(dir.path().join("m.yaml"), fixed).unwrap();
    lahar().arg("validate").arg(&p).assert().success();
}

/// Pods read from Pod manifests keep their own names in every output and for
/// `--explain` (issue 12, item 1): lahar does not rename them `<group>-<task>-<i>`.
#[test]
fn pod_manifests_keep_their_names() {
    let dir = tempfile::tempdir().unwrap();
    let pod = |name: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: ml\n  annotations: {{scheduling.k8s.io/group-name: trainers}}\nspec:\n  containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: 1}}}}}}]\n---\n"
        )
    };
    let pg = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata:\n  name: trainers\n  namespace: ml\n  annotations: {lahar.io/duration: 1h}\nspec: {minMember: 2}\n---\n";
    std::fs::write(dir.path().join("m.yaml"), format!("{pg}{}{}", pod("alice"), pod("bob"))).unwrap();
    let p = one_node_scenario(dir.path());
    let out = dir.path().join("o");
    lahar()
        .arg("run")
        .arg(&p)
        .arg("--out")
        .arg(&out)
        .args(["--explain", "ml/bob"])
        .assert()
        .success()
        .stdout(predicates::str::contains("explain: ml/bob: first bound to n0 at 0 s"));
    let pods = std::fs::read_to_string(out.join("pods.csv")).unwrap();
    assert!(pods.contains(",ml/alice,") && pods.contains(",ml/bob,"), "{pods}");
    let decisions = std::fs::read_to_string(out.join("decisions.csv")).unwrap();
    assert!(decisions.contains("ml/alice") && decisions.contains("ml/bob"), "{decisions}");
    assert!(!decisions.contains("trainers-"), "{decisions}");
    let explain = std::fs::read_to_string(out.join("explain.csv")).unwrap();
    // bob's rows, and those of alice, the other pod of its PodGroup (a gang is
    // explained whole), each under its own name.
    assert!(explain.lines().skip(1).all(|l| l.contains(",ml/bob,") || l.contains(",ml/alice,")), "{explain}");
    assert!(explain.contains(",ml/bob,n0,predicates,true,"), "{explain}");
}

/// A HyperNode of tier 0 is valid (Volcano's CRD allows tier ≥ 0; issue 12, item 4):
/// a gang limited to `highestTierAllowed: 0` spans the two nodes of one tier-0
/// HyperNode, and jobs.csv reports the tier it spans as 0.
#[test]
fn a_hypernode_of_tier_0() {
    let dir = tempfile::tempdir().unwrap();
    let hn = |name: &str, tier: u32, members: &str| {
        format!(
            "apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {{name: {name}}}\nspec:\n  tier: {tier}\n  members:\n{members}---\n"
        )
    };
    let node = |n: &str| format!("    - {{type: Node, selector: {{exactMatch: {{name: {n}}}}}}}\n");
    let hns = hn("nvl-0", 0, &(node("n0") + &node("n1")))
        + &hn("nvl-1", 0, &(node("n2") + &node("n3")))
        + &hn(
            "leaf",
            1,
            "    - {type: HyperNode, selector: {exactMatch: {name: nvl-0}}}\n    - {type: HyperNode, selector: {exactMatch: {name: nvl-1}}}\n",
        );
    std::fs::write(dir.path().join("hn.yaml"), hns).unwrap();
    let job = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j, annotations: {lahar.io/duration: 1h}}\nspec:\n  minAvailable: 2\n  networkTopology: {mode: hard, highestTierAllowed: 0}\n  tasks:\n    - replicas: 2\n      name: w\n      template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: 8}}}]}}\n";
    std::fs::write(dir.path().join("m.yaml"), job).unwrap();
    let nodes: String = (0..4).map(|i| format!("      - {{name: n{i}, cpu: 16, memory: 64Gi, gpus: 8}}\n")).collect();
    // network-topology-aware enforces the job's constraint.
    let conf = "  scheduler:\n    inline: |\n      actions: \"enqueue, allocate\"\n      tiers:\n      - plugins: [{name: gang}]\n      - plugins: [{name: predicates}, {name: network-topology-aware}]\n";
    let text = scenario(
        &format!("    nodes:\n{nodes}    hyperNodes: hn.yaml"),
        &format!("{conf}  workload:\n    - manifests: m.yaml\n"),
    );
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let s = load_file(&dir.path().join("s.yaml")).unwrap_or_else(|e| panic!("{e}"));
    let t = &s.cluster.topology;
    assert_eq!(t.get(t.find("nvl-0").unwrap()).tier, 0);
    assert_eq!(t.tier_names()[0], "tier 0");
    let out = dir.path().join("o");
    lahar().arg("run").arg(dir.path().join("s.yaml")).arg("--out").arg(&out).assert().success();
    let jobs = std::fs::read_to_string(out.join("jobs.csv")).unwrap();
    let row: Vec<&str> = jobs.lines().nth(1).unwrap().split(',').collect();
    // state, nodes_spanned, highest_tier
    assert_eq!((row[7], row[13], row[14]), ("Completed", "2", "0"), "{jobs}");
}

/// Workload files as people write them (issue 13, item 4): a RayCluster beside its
/// ConfigMap, Service and RBAC objects loads, the others skipped with one counted
/// warning; a Queue written beside it is a queue of the scenario (KubeRay's
/// `*volcano-scheduler-queue.yaml` samples); `metadata.generateName` without a name
/// gets a deterministic name (the same on every run and machine).
#[test]
fn workload_files_as_people_write_them() {
    let dir = tempfile::tempdir().unwrap();
    let support = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: b}\n---\n\
                   apiVersion: v1\nkind: Service\nmetadata: {name: head-svc}\nspec: {ports: [{port: 6379}]}\n---\n\
                   apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: r}\nrules: []\n---\n";
    let queue = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: kuberay-test-queue}\nspec: {weight: 1, capability: {cpu: 4}}\n---\n";
    let job = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {generateName: sweep-, annotations: {lahar.io/duration: 1h}}\nspec:\n  queue: kuberay-test-queue\n  tasks:\n    - replicas: 1\n      name: w\n      template: {spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}}\n";
    std::fs::write(dir.path().join("m.yaml"), format!("{support}{queue}{job}")).unwrap();
    let p = one_node_scenario(dir.path());
    let s = load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.queues.iter().map(|q| q.name.as_str()).collect::<Vec<_>>(), ["default", "kuberay-test-queue"]);
    assert_eq!(s.jobs().len(), 1);
    let name = s.jobs()[0].name.clone();
    assert!(name.starts_with("sweep-") && name.len() == 11, "{name}");
    assert_eq!(s.jobs()[0].queue, QueueId(1));
    assert_eq!(load_file(&p).unwrap().jobs()[0].name, name, "the generated name is deterministic");
    let w = &s.warnings[0];
    assert_eq!((w.kind, w.count), ("manifest-objects-skipped", 3));
    assert!(w.message.contains("3 objects that make no pods for Volcano were skipped: 1 ConfigMap (v1), 1 Role (rbac.authorization.k8s.io/v1), 1 Service (v1)"), "{}", w.message);
    // A RayJob on an existing RayCluster (KubeRay's
    // ray-job.use-existing-raycluster.yaml) adds no pod: skipped and counted.
    let ray = "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: rayjob-use-existing-raycluster}\nspec:\n  entrypoint: python -c \"import ray\"\n  clusterSelector:\n    ray.io/cluster: ray-cluster-kuberay\n---\n";
    std::fs::write(dir.path().join("m.yaml"), format!("{ray}{queue}{job}")).unwrap();
    let s = load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.jobs().len(), 1);
    assert!(
        s.warnings[0].message.contains("1 RayJob (ray.io/v1) on an existing RayCluster (clusterSelector)"),
        "{}",
        s.warnings[0].message
    );
    // An unknown kind is still an error (a typo must not be skipped).
    std::fs::write(dir.path().join("m.yaml"), job.replace("kind: Job", "kind: Jbo")).unwrap();
    let e = load_file(&p).unwrap_err().to_string();
    assert!(e.contains("unknown kind `Jbo`"), "{e}");
}

/// Another scheduler's objects are skipped and counted, as a Deployment of another
/// scheduler is (the published corpus's KubeRay YuniKorn and KAI samples, the
/// Spark operator's YuniKorn sample), and so are objects that make no pods
/// (Gateway API routes, kustomize's build file, KAI's Queues): the Volcano job
/// beside them loads.
#[test]
fn other_schedulers_objects_are_skipped_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let others = "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata:\n  name: test-yunikorn-0\n  labels: {ray.io/gang-scheduling-enabled: \"true\", yunikorn.apache.org/app-id: test-yunikorn-0, yunikorn.apache.org/queue: root.test}\nspec: {}\n---\n\
                  apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: kai, labels: {kai.scheduler/queue: team-a}}\nspec: {}\n---\n\
                  apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: rj, labels: {ray.io/scheduler-name: scheduler-plugins}}\nspec: {}\n---\n\
                  apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team-a}\nspec: {}\n---\n\
                  apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: spark-pi-yunikorn}\nspec: {batchScheduler: yunikorn}\n---\n\
                  apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: ray-gateway}\nspec: {}\n---\n\
                  apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: ray-route}\nspec: {}\n---\n\
                  apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n---\n";
    let job = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j, annotations: {lahar.io/duration: 1h}}\nspec:\n  tasks:\n    - replicas: 1\n      name: w\n      template: {spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}}\n";
    std::fs::write(dir.path().join("m.yaml"), format!("{others}{job}")).unwrap();
    let p = one_node_scenario(dir.path());
    let s = load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.jobs().iter().map(|j| j.name.as_str()).collect::<Vec<_>>(), ["j"]);
    let w = &s.warnings[0];
    assert_eq!((w.kind, w.count), ("manifest-objects-skipped", 8));
    assert_eq!(
        w.message,
        "8 objects that make no pods for Volcano were skipped: 1 Gateway (gateway.networking.k8s.io/v1), 1 HTTPRoute (gateway.networking.k8s.io/v1), 1 Kustomization (kustomize.config.k8s.io/v1beta1), 1 Queue (scheduling.run.ai/v2), 1 RayCluster (ray.io/v1) of another scheduler (label kai.scheduler/queue), 1 RayCluster (ray.io/v1) of another scheduler (label yunikorn.apache.org/app-id), 1 RayJob (ray.io/v1) of scheduler `scheduler-plugins` (label ray.io/scheduler-name), 1 SparkApplication (sparkoperator.k8s.io/v1beta2) of batchScheduler `yunikorn`"
    );
}

/// scheduler-plugins' objects (issue 45): a TFJob whose every pod template names
/// scheduler-plugins' scheduler and a coscheduling PodGroup (scheduling.x-k8s.io)
/// are skipped and counted; a training job whose templates name Volcano for some
/// pods and another scheduler for others is still refused at the odd template.
#[test]
fn scheduler_plugins_objects_are_skipped_and_a_mixed_job_refused() {
    let dir = tempfile::tempdir().unwrap();
    let tpl = |s: &str| {
        format!(
            "{{spec: {{schedulerName: {s}, containers: [{{name: tensorflow, image: tf, resources: {{requests: {{cpu: 1}}}}}}]}}}}"
        )
    };
    let tfjob = |name: &str, ps: &str, worker: &str| {
        format!(
            "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {{name: {name}, annotations: {{lahar.io/duration: 1h}}}}\nspec:\n  tfReplicaSpecs:\n    PS:\n      replicas: 1\n      template: {}\n    Worker:\n      replicas: 2\n      template: {}\n",
            tpl(ps),
            tpl(worker)
        )
    };
    let podgroup = "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: tf-smoke-gpu}\nspec: {scheduleTimeoutSeconds: 10, minMember: 3}\n";
    let job = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j, annotations: {lahar.io/duration: 1h}}\nspec:\n  tasks:\n    - replicas: 1\n      name: w\n      template: {spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}}\n";
    let others = tfjob("tf-smoke-gpu", "scheduler-plugins-scheduler", "scheduler-plugins-scheduler");
    std::fs::write(dir.path().join("m.yaml"), format!("{others}---\n{podgroup}---\n{job}")).unwrap();
    let p = one_node_scenario(dir.path());
    let s = load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.jobs().iter().map(|j| j.name.as_str()).collect::<Vec<_>>(), ["j"]);
    let w = &s.warnings[0];
    assert_eq!((w.kind, w.count), ("manifest-objects-skipped", 2));
    assert_eq!(
        w.message,
        "2 objects that make no pods for Volcano were skipped: 1 PodGroup (scheduling.x-k8s.io/v1alpha1), 1 TFJob (kubeflow.org/v1) of schedulerName `scheduler-plugins-scheduler`"
    );
    // Volcano for the PS, another scheduler for the workers: refused where it says so.
    std::fs::write(dir.path().join("m.yaml"), tfjob("mixed", "volcano", "scheduler-plugins-scheduler")).unwrap();
    let Err(e) = load_file(&p) else { panic!("a mixed job is refused") };
    let e = e.to_string();
    assert!(e.contains("spec.tfReplicaSpecs.Worker.template.spec.schedulerName: schedulerName `scheduler-plugins-scheduler`: lahar simulates Volcano"), "{e}");
}

/// A source that yields no job says why: the objects skipped are listed even when
/// another object read (here the TrainJob's runtime) is neither a job nor skipped;
/// a file that is not YAML is one error, not two.
#[test]
fn sources_without_jobs_say_why_once() {
    let dir = tempfile::tempdir().unwrap();
    let p = one_node_scenario(dir.path());
    let rt = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainingRuntime\nmetadata: {name: rt}\nspec:\n  mlPolicy: {numNodes: 1, torch: {}}\n  template:\n    spec:\n      replicatedJobs:\n        - name: node\n          template:\n            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}\n            spec: {template: {spec: {containers: [{name: node}]}}}\n---\napiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: tj}\nspec:\n  runtimeRef: {name: rt, kind: TrainingRuntime}\n";
    std::fs::write(dir.path().join("m.yaml"), rt).unwrap();
    let out = lahar().arg("validate").arg(&p).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("spec.workload[0].manifests: the manifests yield no job (2 objects read; skipped as making no pods for Volcano: 1 TrainJob (trainer.kubeflow.org/v1alpha1) of a runtime without a Volcano podGroupPolicy)"),
        "{err}"
    );
    std::fs::write(dir.path().join("m.yaml"), "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - image: {IMAGE_REGISTRY}/spark:3\n      name: c\n").unwrap();
    let out = lahar().arg("validate").arg(&p).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("invalid YAML"), "{err}");
    assert!(!err.contains("yield no job"), "{err}");
}

/// `spec.queues: PATH` (Queue objects) gives the cluster Volcano's `default`
/// queue too when the files define none (Volcano creates it at start,
/// `newDefaultAndRootQueue`), after theirs: a job without a queue goes there.
#[test]
fn queue_files_keep_volcanos_default_queue() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("q.yaml"),
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: test}\nspec: {weight: 1, reclaimable: false}\n",
    )
    .unwrap();
    let text = scenario(
        "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi}",
        "  queues: q.yaml\n  workload:\n    - jobs:\n        - {name: j, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 1}}]}\n",
    );
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let s = load_file(&dir.path().join("s.yaml")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.queues.iter().map(|q| q.name.as_str()).collect::<Vec<_>>(), ["test", "default"]);
    assert_eq!(s.jobs()[0].queue, QueueId(1));
}

/// Admission as Volcano's job webhook does it (issue 13, item 6): Volcano's own
/// `example/invalid_jobs/duplicatedPolicyEvent-webhook-deny.yaml` (volcano-sh/volcano,
/// Apache-2.0, reproduced as published) is refused, with the line of the second
/// `PodFailed`; a `*` policy beside another event is refused too.
#[test]
fn duplicated_policy_events_are_refused_as_the_webhook_does() {
    const DENY: &str = "apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: test-job-webhook-disallow
spec:
  schedulerName: volcano
  minAvailable: 1
  tasks:
    - replicas: 2
      name: task-1
      template:
        metadata:
          name: web-1
        spec:
          containers:
            - image: nginx
              imagePullPolicy: IfNotPresent
              name: nginx
              resources:
                requests:
                  cpu: \"1\"
          restartPolicy: OnFailure
  policies:
    - event: PodFailed
      action: RestartJob
    - event: PodFailed  ## this job will be rejected because one event should not have different action
      action: AbortJob
";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.yaml"), DENY).unwrap();
    let p = one_node_scenario(dir.path());
    let e = load_file(&p).unwrap_err().to_string();
    assert!(e.contains("m.yaml:26:14: document 1: spec.policies[1].event: event `PodFailed` is already handled by an earlier policy"), "{e}");
    let star = DENY.replace("    - event: PodFailed  ## this", "    - event: \"*\"  ## this");
    std::fs::write(dir.path().join("m.yaml"), star).unwrap();
    let e = load_file(&p).unwrap_err().to_string();
    assert!(e.contains("spec.policies[1].event: with a `*` policy no other event may be given"), "{e}");
    // One policy naming an event twice is fine (the webhook drops the repeat).
    let twice = DENY.replace("    - event: PodFailed  ## this job will be rejected because one event should not have different action\n      action: AbortJob\n", "    - events: [PodEvicted, PodEvicted]\n      action: AbortJob\n");
    std::fs::write(dir.path().join("m.yaml"), twice).unwrap();
    assert!(load_file(&p).is_ok());
}

/// The new kinds' bad input through the binary: exit 2, each problem at its place.
#[test]
fn bad_workload_kinds_exit_2_with_their_place() {
    let deploy = |ann: &str, replicas: u32| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations: {{lahar.io/duration: 1h{ann}}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata:\n      labels: {{app: web}}\n      annotations: {{scheduling.volcano.sh/queue-name: nope}}\n    spec:\n      schedulerName: volcano\n      containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]\n"
        )
    };
    let ray_service = "apiVersion: ray.io/v1\nkind: RayService\nmetadata: {name: svc, annotations: {lahar.io/duration: 1h}}\nspec:\n  suspend: true\n  rayClusterConfig: {headGroupSpec: {template: {spec: {containers: [{name: h}]}}}}\n---\napiVersion: ray.io/v1\nkind: RayService\nmetadata: {name: svc2}\nspec: {serveConfigV2: x}\n";
    // A type error quotes what was written (not the number read back).
    let replicas = |v: &str| deploy("", 2).replace("  replicas: 2\n", &format!("  replicas: {v}\n"));
    // Kubernetes keeps a controller's pods running: `Always` only.
    let restart = |p: &str| {
        deploy("", 2).replace("      schedulerName", &format!("      restartPolicy: {p}\n      schedulerName"))
    };
    let cases: [(String, &[&str]); 9] = [
        (
            restart("OnFailure"),
            &[
                "m.yaml:14:22: document 1: spec.template.spec.restartPolicy: a Deployment's pods restart `Always`, got `OnFailure` (Kubernetes rejects the Deployment)",
            ],
        ),
        (
            restart("never"),
            &[
                "m.yaml:14:22: document 1: spec.template.spec.restartPolicy: expected `Always`, `OnFailure` or `Never`, got `never`",
            ],
        ),
        (
            replicas("99999999999999999999"),
            &["m.yaml:7:13: document 1: spec.replicas: expected an integer ≥ 0, got `99999999999999999999`"],
        ),
        (replicas("2.50  # two and a half"), &["spec.replicas: expected an integer ≥ 0, got `2.50`\n"]),
        (replicas("two"), &["spec.replicas: expected an integer ≥ 0, got the string `two`"]),
        // A quoted number is a string, which the API server refuses here.
        (
            replicas("\"2\""),
            &[
                "m.yaml:7:13: document 1: spec.replicas: expected an integer ≥ 0, got the string `2` (write it without quotes)",
            ],
        ),
        (
            deploy(", scheduling.volcano.sh/group-min-member: many", 2),
            &[
                "m.yaml:5:80: document 1: metadata.annotations.scheduling.volcano.sh/group-min-member: expected an integer ≥ 0, got `many`",
                "m.yaml:12:55: document 1: spec.template.metadata.annotations.scheduling.volcano.sh/queue-name: queue `nope` does not exist",
            ],
        ),
        (
            deploy(", scheduling.volcano.sh/group-min-member: \"3\"", 2),
            &["group-min-member: must not exceed the replicas (2), got 3"],
        ),
        (
            ray_service.to_string(),
            &[
                "m.yaml:5:12: document 1: spec.suspend: a suspended RayService has no RayCluster",
                "m.yaml:11:7: document 2: spec.rayClusterConfig: a RayService needs `rayClusterConfig`",
            ],
        ),
    ];
    for (text, needles) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.yaml"), &text).unwrap();
        let s =
            scenario("    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi}", "  workload:\n    - manifests: m.yaml\n");
        std::fs::write(dir.path().join("s.yaml"), s).unwrap();
        let out = lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        for n in needles {
            assert!(err.contains(n), "error lacks {n:?}:\n{err}");
        }
    }
}

/// A RayService's Ray Serve deployments are read as Ray 2.60 reads them
/// (defaults: 1 CPU a replica, `max_ongoing_requests` 5; `num_replicas: auto`
/// is min 1, max 100, target 2), the serving deployment is the only one asking
/// for GPUs, each worker group is a node type of the in-tree autoscaler, and a
/// second autoscaled deployment (which lahar keeps at its initial replicas) is
/// a located warning. A `serveConfigV2` that is not YAML, a field Ray does not
/// know, `num_replicas` beside `autoscaling_config`, or `initial_replicas`
/// outside the bounds is an error at its line in the file.
#[test]
fn ray_serve_deployments_are_read_as_ray_reads_them() {
    let service = |serve: &str| {
        format!(
            "apiVersion: ray.io/v1
kind: RayService
metadata: {{name: llm, annotations: {{lahar.io/duration: 1h}}}}
spec:
  serveConfigV2: |
{serve}  rayClusterConfig:
    enableInTreeAutoscaling: true
    headGroupSpec: {{template: {{spec: {{containers: [{{name: h, resources: {{requests: {{cpu: '1'}}}}}}]}}}}}}
    workerGroupSpecs:
      - {{groupName: gpu, minReplicas: 1, maxReplicas: 4, template: {{spec: {{containers: [{{name: w, resources: {{requests: {{cpu: '1'}}}}}}]}}}}}}
"
        )
    };
    let serve = "    applications:
      - name: chat
        import_path: app:build
        deployments:
          - name: Router
            num_replicas: 2
          - name: Model
            num_replicas: auto
            ray_actor_options: {num_gpus: 1}
      - name: embed
        import_path: embed:app
        deployments:
          - name: Embedder
            autoscaling_config: {min_replicas: 1, max_replicas: 8, target_ongoing_requests: 4}
";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.yaml"), service(serve)).unwrap();
    let text =
        scenario("    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi}", "  workload:\n    - manifests: m.yaml\n");
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let s = lahar::scenario::load_file(&dir.path().join("s.yaml")).unwrap_or_else(|e| panic!("{e}"));
    let rs = s.jobs()[0].ray_serve.clone().expect("a Serve spec");
    use lahar_core::serving::ray::{Bundle, Sizing};
    let names: Vec<&str> = rs.deployments.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["chat/Router", "chat/Model", "embed/Embedder"]);
    assert_eq!(rs.deployments[0].sizing, Sizing::Fixed(2));
    assert_eq!(rs.deployments[0].bundle, Bundle { cpu_milli: 1000, gpu_milli: 0, memory: 0 });
    assert_eq!(rs.deployments[0].max_ongoing, 5);
    let Sizing::Auto(model) = &rs.deployments[1].sizing else { panic!("auto") };
    assert_eq!((model.min, model.max, model.target_milli), (1, 100, 2000));
    assert_eq!(rs.deployments[1].bundle.gpu_milli, 1000);
    let Sizing::Auto(embed) = &rs.deployments[2].sizing else { panic!("auto") };
    assert_eq!((embed.min, embed.max, embed.target_milli), (1, 8, 4000));
    assert_eq!(rs.serving, Some(1), "the only deployment asking for GPUs");
    // The head's and the group's Ray nodes: the pods' requests.
    assert_eq!(rs.nodes, vec![Bundle { cpu_milli: 1000, ..Default::default() }; 2]);
    let auto = rs.autoscaler.as_ref().expect("in-tree autoscaling");
    assert_eq!((auto.groups[0].task, auto.groups[0].min, auto.groups[0].max), (1, 1, 4));
    assert_eq!((auto.idle_timeout.micros(), auto.upscaling_speed), (60_000_000, 1000));
    let left: Vec<_> = s.warnings.iter().filter(|w| w.kind == "manifest-parts-left-out").collect();
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(
        left[0].message.contains("RayService default/llm: Ray Serve autoscales deployments chat/Model, embed/Embedder; lahar sizes only the one that serves"),
        "{left:?}"
    );
    // At the config's first line in the file.
    assert_eq!(left[0].at, Some((6, 5)), "{left:?}");
    let refused = |serve: &str, want: &str| {
        std::fs::write(dir.path().join("m.yaml"), service(serve)).unwrap();
        let out = lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(want), "want {want}, got {err}");
    };
    let one = |dep: &str| {
        format!(
            "    applications:\n      - name: a\n        import_path: a:b\n        deployments:\n          - {dep}\n"
        )
    };
    refused(
        &one("{name: M, autoscaling_config: {max_replica: 3}}"),
        "m.yaml:10:57: document 1: spec.serveConfigV2.applications[0].deployments[0].autoscaling_config.max_replica: unknown field; expected one of: min_replicas",
    );
    refused(
        &one("{name: M, num_replicas: 2, autoscaling_config: {max_replicas: 3}}"),
        "spec.serveConfigV2.applications[0].deployments[0].autoscaling_config: `num_replicas` and `autoscaling_config` cannot both be set",
    );
    refused(
        &one("{name: M, autoscaling_config: {min_replicas: 2, max_replicas: 3, initial_replicas: 5}}"),
        "autoscaling_config.initial_replicas: must be within min_replicas (2) and max_replicas (3), got 5",
    );
    // Not YAML: located in the file, under the field.
    std::fs::write(dir.path().join("m.yaml"), service("    applications: [\n")).unwrap();
    let out = lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    // Line 6, column 19 of the file: the text's `[` that never closes.
    assert!(
        err.contains("m.yaml:6:19: document 1: spec.serveConfigV2: Ray Serve's config is not YAML: invalid YAML: unclosed bracket"),
        "{err}"
    );
}

/// Pod spec fields that change where a pod may run and that lahar does not
/// model (issue 40), or inter-pod affinity terms the API server refuses or lahar
/// cannot read (a namespaceSelector by labels), are refused at their place
/// through the binary (exit 2), in templates and in Pods still to be placed; a
/// Pod already on its node keeps its placement fields (nothing is placed for it).
#[test]
fn unmodelled_placement_fields_are_refused_at_their_place() {
    let tpl = |extra: &str| VCJOB.replace("          containers:\n", &format!("{extra}          containers:\n"));
    let na = |req: &str| tpl(&format!("          affinity: {{nodeAffinity: {req}}}\n"));
    let cases: Vec<(String, &str)> = vec![
        (tpl("          nodeName: n0\n"), "m.yaml:11:21: document 1: spec.tasks[0].template.spec.nodeName: a template's `nodeName` binds every pod"),
        (
            tpl("          affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {}}]}}\n"),
            "m.yaml:11:89: document 1: spec.tasks[0].template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: a pod affinity term needs a non-empty `topologyKey`",
        ),
        (
            na("{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: NotIn, values: [a]}]}]}}"),
            "spec.tasks[0].template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: operator `NotIn`: lahar models `In` only",
        ),
        (
            na("{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}, {matchFields: []}]}}"),
            "nodeSelectorTerms: 2 terms (any one may match)",
        ),
        (
            na("{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n0]}]}]}}"),
            "nodeSelectorTerms[0].matchFields: `matchFields` selects nodes by their fields",
        ),
        (
            na("{preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference: {}}]}"),
            "affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution: a preferred node affinity changes node scores",
        ),
        (na("{requiredDuringScheduling: {}}"), "affinity.nodeAffinity.requiredDuringScheduling: unknown field"),
        (
            tpl("          topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]\n"),
            "spec.tasks[0].template.spec.topologySpreadConstraints: `topologySpreadConstraints` changes",
        ),
        // Scheduling gates are read (tests/it/scheduling_gates.rs); a duplicate is refused.
        (
            tpl("          schedulingGates: [{name: wait}, {name: wait}]\n"),
            "spec.tasks[0].template.spec.schedulingGates[1].name: scheduling gate `wait` is given twice",
        ),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {lahar.io/duration: 1h}}\nspec:\n  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: zone, namespaceSelector: {matchLabels: {team: a}}}]}}\n  containers: [{name: c}]\n".to_string(),
            "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaceSelector: a namespaceSelector that selects by labels needs the namespaces' labels",
        ),
    ];
    let run = |text: &str, args: &[&str]| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.yaml"), text).unwrap();
        let nodes = "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi, labels: {zone: a}}\n      - {name: n1, cpu: 16, memory: 64Gi, labels: {zone: b}}";
        std::fs::write(dir.path().join("s.yaml"), scenario(nodes, "  workload:\n    - manifests: m.yaml\n")).unwrap();
        let mut cmd = lahar();
        cmd.args(args).arg(dir.path().join("s.yaml"));
        if args[0] == "run" {
            cmd.arg("--out").arg(dir.path().join("out"));
        }
        let out = cmd.assert();
        let pods = std::fs::read_to_string(dir.path().join("out/pods.csv")).unwrap_or_default();
        (out, pods)
    };
    for (text, needle) in cases {
        let out = run(&text, &["validate"]).0.code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(needle), "error lacks {needle:?}:\n{err}");
    }
    let running = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeName: n0\n  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: zone}]}}\n  containers: [{name: c}]\nstatus: {phase: Running}\n";
    run(running, &["validate"]).0.success();
    // A required node affinity of `In` expressions is a predicate: both pods go
    // to n1 (zone b), though n0 comes first and fits them.
    let zone_b = na(
        "{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [b, c]}]}]}}",
    );
    let (out, pods) = run(&zone_b, &["run", "-q"]);
    out.success();
    assert_eq!(pods.lines().count(), 3, "{pods}");
    assert!(pods.lines().skip(1).all(|l| l.contains(",n1,")) && !pods.contains(",n0,"), "{pods}");
}

/// `activeDeadlineSeconds` fails a pod or a job at a time lahar does not model
/// but for a `batch/v1` Job (tests/it/batch_jobs.rs): in a pod template, a Pod,
/// a Kubeflow job's `runPolicy`, a RayJob and a TrainJob it is refused at its
/// place (exit 2), never ignored. A Kubeflow job with `runPolicy.suspend`
/// makes no pods: skipped with a warning, as suspended Jobs are.
#[test]
fn deadlines_lahar_does_not_model_are_refused_and_suspended_training_jobs_skipped() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests");
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    // The first `spec:` line at column 0 of a document gets `extra` after it.
    let after_spec = |text: String, from: &str, extra: &str| {
        let at = text.find(from).expect(from);
        let spec = at + text[at..].find("\nspec:\n").expect("spec") + "\nspec:\n".len();
        format!("{}{extra}{}", &text[..spec], &text[spec..])
    };
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {lahar.io/duration: 1h}}\nspec:\n  activeDeadlineSeconds: 60\n  containers: [{name: c}]\n";
    let trainer =
        after_spec(read("trainer/04-volcano-integration.yaml"), "kind: TrainJob", "  activeDeadlineSeconds: 60\n");
    let cases: Vec<(String, &str)> = vec![
        (
            VCJOB.replace("          containers:\n", "          activeDeadlineSeconds: 60\n          containers:\n"),
            "m.yaml:11:34: document 1: spec.tasks[0].template.spec.activeDeadlineSeconds: `activeDeadlineSeconds` fails the pod once it has run that long, and lahar does not model it",
        ),
        (pod.to_string(), "m.yaml:5:26: document 1: spec.activeDeadlineSeconds: `activeDeadlineSeconds` fails the pod"),
        (
            after_spec(
                read("docs/kubeflow-pytorch-simple.yaml"),
                "kind: PyTorchJob",
                "  runPolicy: {activeDeadlineSeconds: 60}\n",
            ),
            "spec.runPolicy.activeDeadlineSeconds: `activeDeadlineSeconds` fails the job once it has been active that long",
        ),
        (
            after_spec(read("jobs/30-ray-spark.yaml"), "kind: RayJob", "  activeDeadlineSeconds: 60\n"),
            "spec.activeDeadlineSeconds: `activeDeadlineSeconds` fails the RayJob once it has been active that long",
        ),
        (
            trainer,
            "spec.activeDeadlineSeconds: `activeDeadlineSeconds` fails the TrainJob once it has been active that long",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let nodes = "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi, gpus: 8}";
    std::fs::write(dir.path().join("s.yaml"), scenario(nodes, "  workload:\n    - manifests: m.yaml\n")).unwrap();
    for (text, needle) in cases {
        std::fs::write(dir.path().join("m.yaml"), &text).unwrap();
        let out = lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(needle), "error lacks {needle:?}:\n{err}");
    }
    // Suspended: skipped with a warning beside a job that runs.
    let suspended =
        after_spec(read("docs/kubeflow-pytorch-simple.yaml"), "kind: PyTorchJob", "  runPolicy: {suspend: true}\n");
    std::fs::write(
        dir.path().join("m.yaml"),
        format!("{suspended}---\n{pod}").replace("  activeDeadlineSeconds: 60\n", ""),
    )
    .unwrap();
    let out =
        lahar().arg("run").arg("-q").arg(dir.path().join("s.yaml")).arg("--out").arg(dir.path().join("o")).assert();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("1 PyTorchJob (kubeflow.org/v1), suspended"), "{err}");
    let jobs = std::fs::read_to_string(dir.path().join("o/jobs.csv")).unwrap();
    assert_eq!(jobs.lines().skip(1).map(|l| l.split(',').next().unwrap()).collect::<Vec<_>>(), ["p"], "{jobs}");
}

/// Volcano's CRD gives a task's `replicas` no default: a task without it has
/// no pod (and the job's minAvailable counts none of it), with a warning.
#[test]
fn a_volcano_job_task_without_replicas_has_no_pod() {
    let text = "apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: j, annotations: {lahar.io/duration: 10m}}
spec:
  tasks:
    - {name: ps, template: {spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}}}
    - {name: worker, replicas: 2, template: {spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}}}
";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("j.yaml"), text).unwrap();
    let sc =
        scenario("    nodes:\n      - {name: n0, cpu: 8, memory: 16Gi}\n", "  workload:\n    - manifests: j.yaml\n");
    let s = lahar::scenario::load_str(&sc, "s.yaml", dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let j = &s.jobs()[0];
    let t: Vec<(&str, u32, u32)> = j.tasks.iter().map(|t| (&*t.name, t.replicas, t.min_available)).collect();
    assert_eq!(t, [("ps", 0, 0), ("worker", 2, 2)]);
    assert_eq!(j.min_available, 2);
    assert!(
        s.warnings.iter().any(|w| w.message.contains("task `ps` has no `replicas`, so it has no pod")),
        "{:?}",
        s.warnings
    );
}
