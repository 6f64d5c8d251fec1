//! kthena's heterogeneous target (issue 45, item 2: "kthena's autoscaling
//! where their manifests specify them"): one AutoscalingPolicy sizing two
//! ModelServings of one model on A100 and H100 nodes by kthena's cost
//! optimiser, the cheaper backend filled first, and one service served by both.

use super::serving::{refused_with, run_scaling, scenario_files};
use super::*;

/// The A100 backend (cost 6, 1 to 4 groups) and the H100 one (cost 10, 0 to
/// 4), one 1-GPU serving group each at the start; one Prometheus metric of 10
/// requests/s per group; rate limits wide and windows zero, so that each sync
/// takes the recommendation; a cost expansion of 100%: one block a backend.
const BACKEND: &str = r#"apiVersion: workload.serving.volcano.sh/v1alpha1
kind: ModelServing
metadata: {name: qwen-GPU, namespace: default}
spec:
  schedulerName: volcano
  replicas: 1
  template:
    roles:
      - name: server
        replicas: 1
        workerReplicas: 0
        entryTemplate:
          spec:
            nodeSelector: {gpu: GPU}
            containers:
              - name: vllm
                resources:
                  requests: {cpu: "8", memory: 64Gi, nvidia.com/gpu: "1"}
                  limits: {nvidia.com/gpu: "1"}
"#;

const POLICY: &str = r#"apiVersion: workload.serving.volcano.sh/v1alpha1
kind: AutoscalingPolicy
metadata: {name: qwen-policy, namespace: default}
spec:
  tolerancePercent: 10
  metrics:
    - name: router_rps
      targetValue: "10"
  behavior:
    scaleDown: {period: 15s, stabilizationWindow: 0s, instances: 10, percent: 100}
    scaleUp:
      stablePolicy: {period: 15s, stabilizationWindow: 0s, instances: 10, percent: 1000}
  heterogeneousTarget:
    costExpansionRatePercent: 100
    params:
      - target:
          targetRef: {kind: ModelServing, name: qwen-a100}
          metricSources:
            router_rps: {prometheus: {serverURL: "http://prometheus:9090", query: "sum(rate(requests[1m]))"}}
        cost: 6
        minReplicas: 1
        maxReplicas: 4
      - target:
          targetRef: {kind: ModelServing, name: qwen-h100}
        cost: 10
        minReplicas: 0
        maxReplicas: 4
"#;

fn manifests() -> String {
    format!("{}---\n{}---\n{POLICY}", BACKEND.replace("GPU", "a100"), BACKEND.replace("GPU", "h100"))
}

const SCENARIO: &str = r#"apiVersion: lahar.io/v1alpha1
kind: Scenario
metadata: {name: kthena-hetero}
spec:
  seed: 1
  horizon: 1h
  cluster:
    nodes:
      - {name: a100-0, gpus: 8, gpuModel: A100, cpu: "64", memory: 512Gi, labels: {gpu: a100}}
      - {name: h100-0, gpus: 8, gpuModel: H100, cpu: "64", memory: 512Gi, labels: {gpu: h100}}
  output: {sampleInterval: 1m}
  workload:
    - manifests: ms.yaml
  services:
    - workload: qwen-a100
      demand: {steps: [{at: 0s, rate: 5}, {at: 10m, rate: 60}, {at: 40m, rate: 5}]}
      capacity: 10
      capacityByGpuModel: {H100: 20}
      startup: 60s
"#;

fn files(manifests: &str) -> (tempfile::TempDir, PathBuf) {
    scenario_files(SCENARIO, manifests)
}

/// kthena's sync every 15 s from the first backend's arrival, reading both
/// backends as one (2 groups at the start; the sums of the bounds: 1 to 8):
/// - 0 s: demand 5 requests/s → 0.5 groups wanted, 1 after the bounds; the
///   split gives the A100 backend its minimum 1 and the H100 one 0: H100 1 → 0.
/// - 600 s: demand 60 → 6 groups; past the minimums (1 + 0) the A100 block (3
///   more) fills first, then 2 of the H100's: A100 1 → 4, H100 0 → 2.
/// - 2400 s: demand 5 → 1: A100 4 → 1, H100 2 → 0.
///
/// The service is the A100 backend's; the H100 groups serve it too, each its
/// node's 20 requests/s (`capacityByGpuModel`) once started (60 s): from
/// 660 s, 4 × 10 + 2 × 20 = 80 requests/s, 6 groups ready; the H100 backend's
/// own row counts its own (40, 2).
#[test]
fn kthena_heterogeneous_target_scales_cheapest_first() {
    let (dir, p) = files(&manifests());
    let out = dir.path().join("out");
    assert_eq!(
        run_scaling(&p, &out),
        "t_s,autoscaler,target,from,to,proposed,reason
0,default/qwen-policy,ModelServing qwen-h100,1,0,1,kthena stable mode: metrics recommend 1 in all
600,default/qwen-policy,ModelServing qwen-a100,1,4,6,kthena stable mode: metrics recommend 6 in all
600,default/qwen-policy,ModelServing qwen-h100,0,2,6,kthena stable mode: metrics recommend 6 in all
2400,default/qwen-policy,ModelServing qwen-a100,4,1,1,kthena stable mode: metrics recommend 1 in all
2400,default/qwen-policy,ModelServing qwen-h100,2,0,1,kthena stable mode: metrics recommend 1 in all
"
    );
    let services = std::fs::read_to_string(out.join("services.csv")).unwrap();
    for row in [
        "\n660,qwen-a100,ModelServing,60,80,60,4,0,0,6,4,",
        "\n660,qwen-h100,ModelServing,,40,,2,0,0,2,2,",
        "\n1200,qwen-a100,ModelServing,60,80,60,4,0,0,6,4,",
        "\n2460,qwen-a100,ModelServing,5,10,5,1,0,0,1,1,",
        "\n2460,qwen-h100,ModelServing,,0,,0,0,0,0,0,",
    ] {
        assert!(services.contains(row), "{row} in {services}");
    }
}

/// The policy is read as kthena's CRD and webhook read it: a backend named
/// twice, `maxReplicas` below `minReplicas`, no params are errors at their
/// place; a backend not in the files leaves the whole policy out (kthena
/// sizes none of them while one is missing), a located warning.
#[test]
fn a_heterogeneous_policy_is_checked_and_left_out_whole() {
    let refused = |manifests: String, want: &str| refused_with(SCENARIO, &manifests, want);
    refused(
        manifests().replace("name: qwen-h100}\n        cost: 10", "name: qwen-a100}\n        cost: 10"),
        "spec.heterogeneousTarget.params[1].target.targetRef: ModelServing default/qwen-a100 is params[0]'s target too",
    );
    refused(
        manifests().replace("minReplicas: 0\n        maxReplicas: 4", "minReplicas: 3\n        maxReplicas: 2"),
        "spec.heterogeneousTarget.params[1].maxReplicas: below minReplicas (3)",
    );
    let no_params = manifests().split("  heterogeneousTarget:").next().unwrap().to_string()
        + "  heterogeneousTarget: {params: []}\n";
    refused(
        no_params,
        "spec.heterogeneousTarget.params: at least one param (a ModelServing and its bounds) is required",
    );
    let (dir, p) = files(&manifests().replace("name: qwen-h100}", "name: qwen-l40}"));
    let out = dir.path().join("out");
    let run = lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&out).assert().success();
    let err = String::from_utf8_lossy(&run.get_output().stderr).to_string();
    assert!(
        err.contains("spec.heterogeneousTarget.params: 1 part of objects left out, the first: AutoscalingPolicy default/qwen-policy: no ModelServing default/qwen-l40"),
        "{err}"
    );
    // Left out whole: neither backend is sized.
    let scaling = std::fs::read_to_string(out.join("scaling.csv")).unwrap_or_default();
    assert!(!scaling.contains("qwen-policy"), "{scaling}");
}
