//! LeaderWorkerSet (issue 45, item 1): each group a PodGroup of its leader and
//! workers, as the LWS controller's Volcano provider makes it. The published
//! examples (examples/manifests/lws/) are read as published, and again with
//! `schedulerName: volcano` added to every pod template, counted here from the
//! files by hand.

use super::*;
use lahar_core::model::job::{Dependency, PolicyAction, PolicyEvent};
use lahar_core::model::resource::Resources;

const GI: i64 = 1 << 30;

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests/lws")
}

#[test]
fn the_published_examples_load_as_published() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests/lws-scenario.yaml");
    let s = lahar::scenario::load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    let jobs = s.jobs();
    // Only lws-sample-volcano names Volcano: 2 groups of size 4.
    let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names.len(), 2);
    for (i, j) in jobs.iter().enumerate() {
        assert!(j.name.starts_with(&format!("lws-sample-volcano-{i}-")), "{}", j.name);
        assert_eq!((&*j.kind, &*j.namespace, j.min_available), ("LeaderWorkerSet", "default", 4));
        let t: Vec<(&str, u32, u32, Resources)> =
            j.tasks.iter().map(|t| (&*t.name, t.replicas, t.min_available, t.requests)).collect();
        let pod = Resources::new(50, 0, 0, 1);
        assert_eq!(t, [("leader", 1, 0, pod), ("worker", 3, 0, pod)]);
        assert_eq!(j.min_resources, Resources::new(200, 0, 0, 4));
        assert_eq!(j.pod_name(0, 0), format!("lws-sample-volcano-{i}"));
        assert_eq!(j.pod_name(1, 2), format!("lws-sample-volcano-{i}-3"));
        let labels = j.pod_labels(1, "default");
        for (k, v) in [
            ("leaderworkerset.sigs.k8s.io/name", "lws-sample-volcano".to_string()),
            ("leaderworkerset.sigs.k8s.io/group-index", i.to_string()),
        ] {
            assert!(labels.iter().any(|(a, b)| a == k && *b == v), "{k}: {labels:?}");
        }
        // The default restartPolicy recreates the group.
        assert!(j.policies.iter().any(|p| p.event == PolicyEvent::PodEvicted && p.action == PolicyAction::RestartJob));
    }
    assert_ne!(jobs[0].name, jobs[1].name);
    assert!(
        s.warnings.iter().any(|w| w
            .message
            .contains("11 LeaderWorkerSet (leaderworkerset.x-k8s.io/v1) of schedulerName `default-scheduler`")),
        "{:?}",
        s.warnings
    );
    // The sample's HorizontalPodAutoscaler scales a LeaderWorkerSet on CPU use,
    // neither of which lahar autoscales: its metric and itself are left out.
    assert!(
        s.warnings.iter().any(|w| w.kind == "manifest-parts-left-out"
            && w.count == 2
            && w.message.contains("HorizontalPodAutoscaler default/lws-hpa: a Resource metric (`cpu` use)")),
        "{:?}",
        s.warnings
    );
    // And it runs: both groups at once on the two 250m nodes.
    let dir = tempfile::tempdir().unwrap();
    lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(dir.path()).assert().success();
    let pods = std::fs::read_to_string(dir.path().join("pods.csv")).unwrap();
    assert_eq!(pods.lines().count(), 1 + 8, "{pods}");
}

/// `text` with `schedulerName: volcano` beside every `containers:` key (each pod
/// template's spec), as the LWS guide for Volcano asks.
fn as_volcano(text: &str) -> String {
    if text.contains("schedulerName:") {
        return text.to_string();
    }
    let mut out = String::new();
    for line in text.lines() {
        let body = line.trim_start();
        if body.starts_with("containers:") {
            let indent = &line[..line.len() - body.len()];
            out.push_str(&format!("{indent}schedulerName: volcano\n"));
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Loads one example file, made Volcano's, on a cluster big enough for it.
fn load_as_volcano(file: &str) -> Result<lahar::scenario::Scenario, String> {
    let text = std::fs::read_to_string(examples().join(file)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(file), as_volcano(&text)).unwrap();
    let sc = scenario(
        "    nodes:\n      - {name: n0, cpu: 1000, memory: 8Ti, gpus: 16}\n",
        &format!("  workload:\n    - manifests: {file}\n"),
    );
    lahar::scenario::load_str(&sc, "s.yaml", dir.path()).map_err(|e| e.to_string())
}

#[test]
fn every_published_example_reads_right_as_volcano() {
    // (file, groups, pods per group, leader's and workers' milli-GPUs, CPU and
    // memory per pod), read off the files.
    let cases: [(&str, u32, u32, i64, i64, i64); 11] = [
        ("llamacpp.yaml", 1, 5, 0, 0, 0),
        ("sample-volcano.yaml", 2, 4, 0, 50, 0),
        ("sample-multi-template.yaml", 3, 4, 0, 50, 0),
        ("sample-restart-policy.yaml", 3, 4, 0, 50, 0),
        ("sample-rollout-strategy.yaml", 4, 4, 0, 50, 0),
        ("sample-volume-claim-templates.yaml", 2, 2, 0, 0, 0),
        ("sample.yaml", 3, 4, 0, 50, 0),
        ("sglang.yaml", 2, 2, 1000, 0, 0),
        ("tensorrt-llm.yaml", 1, 2, 8000, 0, 0),
        ("vllm-gpu.yaml", 2, 2, 8000, 125_000, 1124 * GI),
        ("vllm-tpu.yaml", 2, 4, 0, 0, 0),
    ];
    for (file, groups, size, gpu, cpu, mem) in cases {
        let s = load_as_volcano(file).unwrap_or_else(|e| panic!("{file}: {e}"));
        let jobs = s.jobs();
        assert_eq!(jobs.len() as u32, groups, "{file}");
        for j in &jobs {
            let pods: u32 = j.tasks.iter().map(|t| t.replicas).sum();
            assert_eq!((pods, j.min_available), (size, size), "{file}");
            for t in &j.tasks {
                assert_eq!(
                    (t.requests.gpu_milli(), t.requests.cpu(), t.requests.memory()),
                    (gpu, cpu, mem),
                    "{file} {}",
                    t.name
                );
            }
            assert_eq!(j.min_resources.gpu_milli(), gpu * i64::from(size), "{file}");
        }
        if file == "vllm-tpu.yaml" {
            let tpu = s.cluster.resource_names.dim("google.com/tpu").expect("registered");
            assert!(jobs.iter().all(|j| j.tasks.iter().all(|t| t.requests.get(tpu) == 4000)));
            assert_eq!(
                jobs[0].tasks[0].node_selector,
                [
                    ("cloud.google.com/gke-tpu-accelerator".to_string(), "tpu-v5-lite-podslice".to_string()),
                    ("cloud.google.com/gke-tpu-topology".to_string(), "4x4".to_string())
                ]
            );
        }
    }
    // Exclusive placement: the workers wait for the leader's node, which lahar
    // does not model; refused at the annotation.
    let e = load_as_volcano("sample-exclusive-placement.yaml").unwrap_err();
    assert!(
        e.contains("metadata.annotations.leaderworkerset.sigs.k8s.io/exclusive-topology: exclusive placement"),
        "{e}"
    );
}

fn lws(spec: &str) -> String {
    format!(
        "apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: llm
  annotations: {{scheduling.volcano.sh/queue-name: serve, volcano.sh/preemptable: \"false\", lahar.io/duration: 1h}}
spec:
{spec}"
    )
}

const LEADER: &str = "    leaderTemplate:
      spec:
        schedulerName: volcano
        containers: [{name: l, resources: {requests: {cpu: 2, memory: 4Gi}}}]
";
const WORKER: &str = "    workerTemplate:
      spec:
        schedulerName: volcano
        containers: [{name: w, resources: {limits: {nvidia.com/gpu: 4}}}]
";

/// One 8-GPU node, queues `default` and `serve`, the workload `m.yaml`.
fn serving_scenario() -> String {
    scenario(
        "    nodes:\n      - {name: n0, cpu: 64, memory: 256Gi, gpus: 8}\n",
        "  queues: [{name: default, weight: 1}, {name: serve, weight: 1}]\n  workload:\n    - manifests: m.yaml\n",
    )
}

fn load(manifest: &str) -> Result<Vec<lahar_core::model::job::JobSpec>, String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.yaml"), manifest).unwrap();
    let sc = serving_scenario();
    lahar::scenario::load_str(&sc, "s.yaml", dir.path()).map(|s| s.jobs()).map_err(|e| e.to_string())
}

#[test]
fn leader_ready_makes_a_gang_of_one_and_workers_after_it() {
    let jobs = load(&lws(&format!(
        "  replicas: 2\n  startupPolicy: LeaderReady\n  leaderWorkerTemplate:\n    size: 3\n    restartPolicy: None\n{LEADER}{WORKER}"
    )))
    .unwrap();
    assert_eq!(jobs.len(), 2);
    let j = &jobs[1];
    assert_eq!(j.min_available, 1);
    // minResources stays the whole group's: the leader and two workers.
    assert_eq!(j.min_resources, Resources::new(2000, 4 * GI, 8000, 3));
    assert_eq!(j.tasks[1].depends_on, [Dependency::running(0)]);
    assert_eq!(j.queue.0, 1);
    assert_eq!(j.preemptable, Some(false));
    assert!(j.policies.is_empty(), "restartPolicy None restarts pods alone");
    assert_eq!(j.pod_name(1, 1), "llm-1-2");
    // And the run: each leader first, its workers once it runs.
    let dir = tempfile::tempdir().unwrap();
    let text = lws(&format!(
        "  replicas: 1\n  startupPolicy: LeaderReady\n  leaderWorkerTemplate:\n    size: 3\n{LEADER}{WORKER}"
    ));
    std::fs::write(dir.path().join("m.yaml"), text).unwrap();
    let sc = serving_scenario();
    std::fs::write(dir.path().join("s.yaml"), sc).unwrap();
    let out = dir.path().join("out");
    lahar().args(["run", "-q"]).arg(dir.path().join("s.yaml")).arg("--out").arg(&out).assert().success();
    let pods = std::fs::read_to_string(out.join("pods.csv")).unwrap();
    let mut names: Vec<&str> = pods.lines().skip(1).map(|l| l.split(',').nth(1).unwrap()).collect();
    names.sort();
    assert_eq!(names, ["default/llm-0", "default/llm-0-1", "default/llm-0-2"]);
}

#[test]
fn bad_leaderworkersets_are_refused_where_they_are_wrong() {
    let cases = [
        (
            lws(&format!("  leaderWorkerTemplate:\n    size: 0\n{WORKER}")),
            "spec.leaderWorkerTemplate.size: must be an integer ≥ 1",
        ),
        (
            lws(&format!("  startupPolicy: Eager\n  leaderWorkerTemplate:\n{WORKER}")),
            "spec.startupPolicy: expected `LeaderCreated` or `LeaderReady`",
        ),
        (
            lws(&format!("  leaderWorkerTemplate:\n    restartPolicy: Always\n{WORKER}")),
            "spec.leaderWorkerTemplate.restartPolicy: expected",
        ),
        (
            lws("  leaderWorkerTemplate:\n    size: 2\n"),
            "spec.leaderWorkerTemplate.workerTemplate: a LeaderWorkerSet needs a `workerTemplate`",
        ),
        (
            lws(&format!("  leaderWorkerTemplate:\n    size: 5\n    subGroupPolicy: {{subGroupSize: 3}}\n{WORKER}")),
            "size (5) or size − 1 must be divisible by subGroupSize 3",
        ),
        (
            lws(&format!("  leaderWorkerTemplate:\n    sise: 4\n{WORKER}")),
            "unknown field `sise` (not in the LeaderWorkerSet schema of the LeaderWorkerSet CRD (leaderworkerset.x-k8s.io/v1)); did you mean `size`?",
        ),
        (
            lws(&format!("  replicas: 1000\n  leaderWorkerTemplate:\n    size: 5000\n{WORKER}")),
            "1000 × 5000 = 5000000 pods",
        ),
        (
            lws(&format!(
                "  leaderWorkerTemplate:\n    size: 2\n    leaderTemplate:\n      spec:\n        schedulerName: other\n        containers: [{{name: l}}]\n{WORKER}"
            )),
            "leaderTemplate.spec.schedulerName: the leader's pods name scheduler `other`",
        ),
        // Its pods run in StatefulSets, which the API server rejects otherwise.
        (
            lws(&format!(
                "  leaderWorkerTemplate:\n{}",
                WORKER.replace("schedulerName: volcano", "schedulerName: volcano\n        restartPolicy: Never")
            )),
            "spec.leaderWorkerTemplate.workerTemplate.spec.restartPolicy: a LeaderWorkerSet's pods restart `Always`, got `Never` (Kubernetes rejects the StatefulSet LeaderWorkerSet makes from the template)",
        ),
        (
            lws(&format!(
                "  leaderWorkerTemplate:\n{}{WORKER}",
                LEADER.replace("schedulerName: volcano", "schedulerName: volcano\n        restartPolicy: OnFailure")
            )),
            "spec.leaderWorkerTemplate.leaderTemplate.spec.restartPolicy: a LeaderWorkerSet's pods restart `Always`, got `OnFailure`",
        ),
    ];
    for (text, want) in cases {
        let e = load(&text).unwrap_err();
        assert!(e.contains(want), "want {want:?} in\n{e}");
    }
    // `Always`, said or left out, is what a StatefulSet's pods do.
    let always = WORKER.replace("schedulerName: volcano", "schedulerName: volcano\n        restartPolicy: Always");
    assert_eq!(load(&lws(&format!("  leaderWorkerTemplate:\n{LEADER}{always}"))).unwrap().len(), 1);
    // Another scheduler's LeaderWorkerSet is skipped, not refused.
    let other = lws("  leaderWorkerTemplate:\n    workerTemplate: {spec: {containers: [{name: w}]}}\n");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("m.yaml"),
        format!(
            "{other}---\n{}",
            lws(&format!("  leaderWorkerTemplate:\n{WORKER}")).replace("name: llm", "name: llm2")
        ),
    )
    .unwrap();
    let sc = serving_scenario();
    let s = lahar::scenario::load_str(&sc, "s.yaml", dir.path()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.jobs().len(), 1);
    assert!(s.warnings.iter().any(|w| {
        w.message.contains("1 LeaderWorkerSet (leaderworkerset.x-k8s.io/v1) of schedulerName `default-scheduler`")
    }));
}
