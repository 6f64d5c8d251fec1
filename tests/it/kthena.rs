//! Volcano's kthena (issue 45, item 1): a ModelServing's serving groups, each
//! one PodGroup of its roles' entry and worker pods with a sub-group per role,
//! as kthena's controller makes them; a ModelBooster as the ModelServing its
//! controller builds. Every published example (examples/manifests/kthena/) is
//! loaded, its groups, pods, gang and GPUs counted here from the files by hand.

use super::*;
use lahar_core::model::job::{JobSpec, PolicyAction, PolicyEvent};
use lahar_core::model::resource::Resources;
use lahar_core::model::subgroup::TaskSubJobs;
use lahar_core::util::time::SimDuration;

const GI: i64 = 1 << 30;

/// Loads one example (or `text`, when given) on one big node; the jobs and
/// the warnings' text.
fn load(file: &str, text: Option<&str>) -> Result<(Vec<JobSpec>, String), String> {
    let dir = tempfile::tempdir().unwrap();
    let body = match text {
        Some(t) => t.to_string(),
        None => {
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests/kthena").join(file))
                .unwrap()
        }
    };
    std::fs::write(dir.path().join(file), body).unwrap();
    let sc = scenario(
        "    nodes:\n      - {name: n0, cpu: 1000, memory: 8Ti, gpus: 16}\n",
        &format!(
            "  queues: [{{name: default, weight: 1}}, {{name: serve, weight: 1}}]\n  workload:\n    - manifests: {file}\n"
        ),
    );
    let s = lahar::scenario::load_str(&sc, "s.yaml", dir.path()).map_err(|e| e.to_string())?;
    let warnings = s.warnings.iter().map(|w| w.message.clone()).collect::<Vec<_>>().join("\n");
    Ok((s.jobs(), warnings))
}

#[test]
fn every_published_example_reads_right() {
    // (file, kind, first group's name, groups, pods per group, minMember,
    // milli-GPUs per group), read off the files.
    let cases: [(&str, &str, &str, usize, u32, u32, i64); 23] = [
        ("keda-autoscaling--modelserving.yaml", "ModelServing", "test-model-0", 1, 4, 4, 0),
        ("kthena-router--ModelServing-ds1.5b-pd-disaggregation.yaml", "ModelServing", "deepseek-r1-1-5b-0", 1, 2, 2, 0),
        ("model-booster--Qwen2.5-0.5B-Instruct.yaml", "ModelBooster", "demo-backend1-0", 1, 1, 1, 0),
        (
            "model-booster--Qwen2.5-Coder-32B-Instruct.yaml",
            "ModelBooster",
            "qwen25-qwen25-coder-32b-server-0",
            1,
            1,
            1,
            0,
        ),
        (
            "model-booster--lmcache-pd-disaggregation.yaml",
            "ModelBooster",
            "qwen-lmcache-pd-qwen-lmcache-0",
            1,
            2,
            2,
            2000,
        ),
        ("model-booster--nixl-pd-disaggregation.yaml", "ModelBooster", "qwen-nixl-pd-qwen-nixl-0", 1, 2, 2, 2000),
        (
            "model-booster--prefill-decode-disaggregation.yaml",
            "ModelBooster",
            "deepseek-v2-lite-deepseek-v2-lite-0",
            1,
            2,
            2,
            0,
        ),
        ("model-serving--data-parallel-deployment.yaml", "ModelServing", "my-model-0", 1, 2, 2, 2000),
        ("model-serving--gangPolicy.yaml", "ModelServing", "sample-0", 1, 8, 6, 0),
        ("model-serving--gpu-kvcache-aware-sglang.yaml", "ModelServing", "sglang-qwen-06b-0", 1, 1, 1, 1000),
        ("model-serving--gpu-kvcache-aware.yaml", "ModelServing", "vllm-qwen-06b-0", 1, 1, 1, 1000),
        ("model-serving--gpu-pd-disaggregation.yaml", "ModelServing", "vllm-qwen-06b-0", 1, 2, 2, 2000),
        ("model-serving--multi-node.yaml", "ModelServing", "llama-multinode-0", 1, 4, 2, 32000),
        ("model-serving--network-topology.yaml", "ModelServing", "sample-0", 1, 4, 4, 0),
        ("model-serving--prefill-decode-disaggregation.yaml", "ModelServing", "deepseek-v2-lite-0", 1, 2, 2, 0),
        ("model-serving--role-rollingupdate.yaml", "ModelServing", "sample-0", 2, 4, 4, 0),
        ("model-serving--rollingupdate.yaml", "ModelServing", "sample-0", 4, 4, 4, 0),
        ("model-serving--sample.yaml", "ModelServing", "sample-0", 1, 8, 8, 0),
        ("model-serving--sglang-pd-disaggregation.yaml", "ModelServing", "sglang-qwen-06b-0", 1, 2, 2, 2000),
        ("model-serving--vllm-pd-multinode.yaml", "ModelServing", "vllm-pd-multinode-0", 1, 4, 4, 4000),
        ("models--deepseek-v4-flash--modelserving.yaml", "ModelServing", "deepseekv4-pd-0", 1, 2, 2, 0),
        (
            "prometheus-autoscaler--disaggregated-autoscaler--podinfo-disaggregated-modelserving.yaml",
            "ModelServing",
            "podinfo-pd-ms-0",
            1,
            3,
            3,
            0,
        ),
        ("prometheus-autoscaler--podinfo-modelserving.yaml", "ModelServing", "podinfo-ms-0", 1, 1, 1, 0),
    ];
    for (file, kind, first, groups, pods, min, gpus) in cases {
        let (jobs, _) = load(file, None).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(jobs.len(), groups, "{file}");
        assert_eq!((&*jobs[0].kind, jobs[0].name.as_str()), (kind, first), "{file}");
        for j in &jobs {
            let n: u32 = j.tasks.iter().map(|t| t.replicas).sum();
            let g: i64 = j.tasks.iter().map(|t| t.requests.gpu_milli() * i64::from(t.replicas)).sum();
            assert_eq!((n, j.min_available, g), (pods, min, gpus), "{file} {}", j.name);
        }
    }
    // The default scheduler's ModelServings are skipped and counted.
    for file in [
        "kube-scheduler-pod-affinity--modelserving-host-affinity.yaml",
        "kube-scheduler-pod-affinity--role-host-affinity.yaml",
        "kube-scheduler-pod-affinity--servinggroup-host-affinity.yaml",
        "kube-scheduler-pod-affinity--servinggroup-zone-affinity.yaml",
    ] {
        let e = load(file, None).unwrap_err();
        assert!(
            e.contains("1 ModelServing (workload.serving.volcano.sh/v1alpha1) of schedulerName `default-scheduler`"),
            "{file}: {e}"
        );
    }
}

#[test]
fn a_serving_group_is_one_gang_with_a_sub_group_per_role() {
    // gangPolicy.yaml: prefill 2 replicas (min 2), decode 2 (min 1), each an
    // entry and one worker of 100m.
    let (jobs, _) = load("model-serving--gangPolicy.yaml", None).unwrap();
    let j = &jobs[0];
    let tasks: Vec<(&str, u32)> = j.tasks.iter().map(|t| (&*t.name, t.replicas)).collect();
    assert_eq!(
        tasks,
        [
            ("prefill-0", 1),
            ("prefill-0", 1),
            ("prefill-1", 1),
            ("prefill-1", 1),
            ("decode-0", 1),
            ("decode-0", 1),
            ("decode-1", 1),
            ("decode-1", 1)
        ]
    );
    assert_eq!(j.pod_name(0, 0), "sample-0-prefill-0-0");
    assert_eq!(j.pod_name(1, 0), "sample-0-prefill-0-1");
    assert_eq!(j.pod_name(7, 0), "sample-0-decode-1-1");
    // minResources: the pods of 2 prefill and 1 decode replicas, 100m each.
    assert_eq!(j.min_resources, Resources::new(600, 0, 0, 0));
    let sg = j.sub_groups.as_deref().expect("sub-groups");
    let policies: Vec<(&str, Option<u32>, u32)> =
        sg.policies.iter().map(|p| (&*p.name, p.size, p.min_groups)).collect();
    assert_eq!(policies, [("prefill", Some(2), 2), ("decode", Some(2), 1)]);
    assert_eq!(sg.sub_jobs.len(), 4);
    assert_eq!(
        sg.tasks,
        [0, 0, 1, 1, 2, 2, 3, 3].map(TaskSubJobs::Whole),
        "each role replica's entry and worker in one sub-job"
    );
    // The entry and worker of a role replica are one Volcano task.
    assert_eq!(j.roles.as_deref(), Some(&[0u16, 0, 2, 2, 4, 4, 6, 6][..]));
    // RoleRecreate (the default) rebuilds the role replica: a deleted pod at
    // once, a failed one after restartGracePeriodSeconds (60).
    let policies: Vec<(PolicyEvent, PolicyAction, Option<SimDuration>)> =
        j.policies.iter().map(|p| (p.event, p.action, p.timeout)).collect();
    assert_eq!(
        policies,
        [
            (PolicyEvent::PodEvicted, PolicyAction::RestartPartition, None),
            (PolicyEvent::PodFailed, PolicyAction::RestartPartition, Some(SimDuration::from_secs(60)))
        ]
    );
    let labels = j.pod_labels(2, "default");
    for (k, v) in [("modelserving.volcano.sh/role-id", "prefill-1"), ("modelserving.volcano.sh/group-name", "sample-0")]
    {
        assert!(labels.iter().any(|(a, b)| a == k && b == v), "{k}: {labels:?}");
    }
}

#[test]
fn min_resources_are_the_requests_as_written() {
    // multi-node.yaml: GPUs and memory in limits only, CPU 125 in requests;
    // minRoleReplicas 1 of 2 replicas of an entry and a worker.
    let (jobs, _) = load("model-serving--multi-node.yaml", None).unwrap();
    let j = &jobs[0];
    assert_eq!(j.tasks[0].requests.gpu_milli(), 8000, "the pods ask for their limits");
    assert_eq!(j.tasks[0].requests.memory(), 1124 * GI);
    assert_eq!((j.min_resources.cpu(), j.min_resources.gpu_milli(), j.min_resources.memory()), (250_000, 0, 0));
    // A booster's worker: requests cpu 2 / memory 4Gi under limits 4 / 8Gi.
    let (jobs, _) = load("model-booster--Qwen2.5-0.5B-Instruct.yaml", None).unwrap();
    assert_eq!(jobs[0].tasks[0].requests, Resources::new(2000, 4 * GI, 0, 1));
    assert_eq!(jobs[0].min_resources, Resources::new(2000, 4 * GI, 0, 0));
    assert_eq!(jobs[0].pod_name(0, 0), "demo-backend1-0-leader-0-0");
}

const MS: &str = "apiVersion: workload.serving.volcano.sh/v1alpha1
kind: ModelServing
metadata: {name: llm, annotations: {scheduling.volcano.sh/queue-name: serve}}
spec:
  replicas: 2
  recoveryPolicy: ServingGroupRecreate
  template:
    networkTopology:
      groupPolicy: {mode: hard, highestTierAllowed: 1}
    roles:
      - name: p
        replicas: 1
        workerReplicas: 2
        entryTemplate: {spec: {containers: [{name: e, resources: {requests: {nvidia.com/gpu: 2}}}]}}
        workerTemplate: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 4}}}]}}
";

#[test]
fn queue_topology_and_recovery_come_from_the_model_serving() {
    let (jobs, _) = load("m.yaml", Some(MS)).unwrap();
    assert_eq!(jobs.len(), 2);
    let j = &jobs[1];
    assert_eq!((j.name.as_str(), j.queue.0, j.min_available), ("llm-1", 1, 3));
    assert!(j.network_topology.is_some());
    assert!(j.policies.iter().all(|p| p.action == PolicyAction::RestartJob) && !j.policies.is_empty());
    // The entry's 2 GPUs are written; the workers' 4 are limits only.
    assert_eq!(j.min_resources.gpu_milli(), 2000);
    assert_eq!(j.tasks.iter().map(|t| t.requests.gpu_milli() * i64::from(t.replicas)).sum::<i64>(), 10_000);
}

#[test]
fn bad_model_servings_are_refused_where_they_are_wrong() {
    let cases = [
        (MS.replace("replicas: 1\n        workerReplicas: 2", "replicas: 1"), "roles[0].workerReplicas: required"),
        (
            MS.replace(
                "        workerTemplate: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 4}}}]}}\n",
                "",
            ),
            "workerTemplate is required when workerReplicas is greater than 0",
        ),
        (MS.replace("name: p", "name: Prefill"), "role name `Prefill` must be a DNS-1035 label"),
        (MS.replace("name: p", "name: prefill-decode-x"), "longer than 12 characters"),
        (MS.replace("recoveryPolicy: ServingGroupRecreate", "recoveryPolicy: Always"), "spec.recoveryPolicy: expected"),
        (
            MS.replace("    networkTopology:", "    gangPolicy: {minRoleReplicas: {p: 2, q: 1}}\n    networkTopology:"),
            "minRoleReplicas (2) for role p cannot exceed replicas (1)",
        ),
        (
            MS.replace("    networkTopology:", "    gangPolicy: {minRoleReplicas: {q: 1}}\n    networkTopology:"),
            "role q does not exist in template.roles",
        ),
        (
            MS.replace("workerReplicas: 2", "workerReplicas: 2\n        workerReplicaz: 2"),
            "unknown field `workerReplicaz`",
        ),
        (
            MS.replace("replicas: 2\n  recovery", "replicas: 1000000\n  recovery"),
            "1000000 serving groups × 3 pods = 3000000 pods",
        ),
    ];
    for (text, want) in cases {
        let e = load("m.yaml", Some(&text)).unwrap_err();
        assert!(e.contains(want), "want {want:?} in\n{e}");
    }
    let booster = "apiVersion: workload.serving.volcano.sh/v1alpha1
kind: ModelBooster
metadata: {name: m}
spec:
  backend:
    name: b
    type: vLLMDisaggregated
    modelURI: hf://x/y
    replicas: 1
    workers:
      - {type: prefill, replicas: 1, pods: 1, resources: {limits: {nvidia.com/gpu: 1}}}
";
    let e = load("b.yaml", Some(booster)).unwrap_err();
    assert!(e.contains("decode worker not found in backend"), "{e}");
    let e = load("b.yaml", Some(&booster.replace("type: vLLMDisaggregated", "type: SGLang"))).unwrap_err();
    assert!(e.contains("spec.backend.type: "), "{e}");
    let both = format!(
        "{booster}      - {{type: decode, replicas: 1, pods: 1, resources: {{limits: {{nvidia.com/gpu: x}}}}}}\n"
    );
    let e = load("b.yaml", Some(&both)).unwrap_err();
    assert!(e.contains("spec.backend.workers[1].resources.limits.nvidia.com/gpu"), "{e}");
}

/// `text` as the controller's Go client would send it: without the top-level
/// `spec.topologySpreadConstraints` block (a field the model-booster's template
/// writes that the ModelServing type does not have, dropped when the object is
/// built), and with the test data's `envfrom` spelt `envFrom` (Go's decoder
/// matches field names without regard to case; the API server's strict check
/// does not).
fn without_unknown_spec_fields(text: &str) -> String {
    let text = text.replace("envfrom:", "envFrom:");
    let mut out = String::new();
    let mut skipping = false;
    for line in text.lines() {
        if line.starts_with("  topologySpreadConstraints:") {
            skipping = true;
            continue;
        }
        if skipping && (line.starts_with("   ") || line.starts_with("  -")) {
            continue;
        }
        skipping = false;
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// kthena's convert test `TestCreateModelServingResources`: each ModelBooster
/// input read as lahar reads a ModelBooster gives the jobs of the ModelServing
/// the test expects the controller to build, read as lahar reads a ModelServing
/// (names, tasks, requests, gang, minResources, pod names, sub-groups).
#[test]
fn replay_test_create_model_serving_resources() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kthena");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    for (case, input, expected) in [
        ("CacheVolume_HuggingFace_HostPath", "input-model.yaml", "expected-model-serving.yaml"),
        ("PD disaggregation NPU", "input-pd-disaggregated-model-npu.yaml", "expected-disaggregated-model-serving.yaml"),
        (
            "PD disaggregation Mooncake",
            "input-pd-disaggregated-model-mooncake.yaml",
            "expected-disaggregated-model-serving-mooncake.yaml",
        ),
    ] {
        let got = load("b.yaml", Some(&read(input)));
        let want = load("s.yaml", Some(&without_unknown_spec_fields(&read(expected))));
        // The first case's backend has `replicas: 0`: no serving group, so
        // neither manifest yields a job.
        if case == "CacheVolume_HuggingFace_HostPath" {
            for r in [got, want] {
                let e = r.err().unwrap_or_default();
                assert!(e.contains("the manifests yield no job (1 object read)"), "{case}: {e}");
            }
            continue;
        }
        let ((got, _), (want, _)) =
            (got.unwrap_or_else(|e| panic!("{case}: {e}")), want.unwrap_or_else(|e| panic!("{case}: {e}")));
        let view = |jobs: &[JobSpec]| -> Vec<String> {
            jobs.iter()
                .map(|j| {
                    let tasks: Vec<String> = j
                        .tasks
                        .iter()
                        .enumerate()
                        .map(|(i, t)| format!("{}x{} {:?} {}", t.name, t.replicas, t.requests, j.pod_name(i, 0)))
                        .collect();
                    let sg = j.sub_groups.as_deref().map(|s| {
                        s.policies
                            .iter()
                            .map(|p| format!("{}:{:?}:{}", p.name, p.size, p.min_groups))
                            .collect::<Vec<_>>()
                    });
                    format!(
                        "{}/{} min {} {:?} tasks {tasks:?} sub-groups {sg:?} roles {:?}",
                        j.namespace, j.name, j.min_available, j.min_resources, j.roles
                    )
                })
                .collect()
        };
        assert_eq!(view(&got), view(&want), "{case}");
        assert_eq!(got.len(), 1, "{case}: one serving group");
    }
}
