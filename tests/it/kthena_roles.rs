//! kthena's disaggregated target (issue 45, item 2: "kthena's autoscaling
//! where their manifests specify them"): one AutoscalingPolicy scaling the
//! prefill and decode roles inside the serving groups of one ModelServing,
//! each on its own metric, then within a prefill/decode ratio.

use super::serving::{refused_with, run_scaling, scenario_files};
use super::*;

/// Two serving groups of one prefill and one decode replica (1 GPU each);
/// prefill 1–4 at 40 requests/s a replica, decode 1–8 at 10; prefill/decode
/// within [0.5, 1]; rate limits wide and windows zero.
const MANIFESTS: &str = r#"apiVersion: workload.serving.volcano.sh/v1alpha1
kind: ModelServing
metadata: {name: llm-pd, namespace: default}
spec:
  schedulerName: volcano
  replicas: 2
  template:
    roles:
      - name: prefill
        replicas: 1
        workerReplicas: 0
        entryTemplate:
          spec:
            containers:
              - name: vllm
                resources:
                  requests: {cpu: "8", memory: 64Gi, nvidia.com/gpu: "1"}
                  limits: {nvidia.com/gpu: "1"}
      - name: decode
        replicas: 1
        workerReplicas: 0
        entryTemplate:
          spec:
            containers:
              - name: vllm
                resources:
                  requests: {cpu: "8", memory: 64Gi, nvidia.com/gpu: "1"}
                  limits: {nvidia.com/gpu: "1"}
---
apiVersion: workload.serving.volcano.sh/v1alpha1
kind: AutoscalingPolicy
metadata: {name: pd-policy, namespace: default}
spec:
  tolerancePercent: 10
  behavior:
    scaleDown: {period: 15s, stabilizationWindow: 0s, instances: 10, percent: 100}
    scaleUp:
      stablePolicy: {period: 15s, stabilizationWindow: 0s, instances: 10, percent: 1000}
  disaggregatedTarget:
    targetRef: {kind: ModelServing, name: llm-pd}
    roles:
      prefill:
        minReplicas: 1
        maxReplicas: 4
        metrics: [{name: rps, targetValue: "40"}]
        metricSources:
          rps: {prometheus: {serverURL: "http://prometheus:9090", query: "sum(rate(requests[1m]))"}}
      decode:
        minReplicas: 1
        maxReplicas: 8
        metrics: [{name: rps, targetValue: "10"}]
        metricSources:
          rps: {prometheus: {serverURL: "http://prometheus:9090", query: "sum(rate(requests[1m]))"}}
    ratioConstraint: {numeratorRole: prefill, denominatorRole: decode, minRatio: "0.5", maxRatio: "1"}
"#;

const SCENARIO: &str = r#"apiVersion: lahar.io/v1alpha1
kind: Scenario
metadata: {name: kthena-pd}
spec:
  seed: 1
  horizon: 1h
  cluster:
    nodes:
      - {name: n0, gpus: 8, gpuModel: H100, cpu: "128", memory: 1024Gi}
      - {name: n1, gpus: 8, gpuModel: H100, cpu: "128", memory: 1024Gi}
  output: {sampleInterval: 1m}
  workload:
    - manifests: ms.yaml
  services:
    - workload: llm-pd
      demand: {steps: [{at: 0s, rate: 5}, {at: 10m, rate: 60}, {at: 40m, rate: 5}]}
      capacity: 30
      startup: 60s
"#;

fn files(manifests: &str) -> (tempfile::TempDir, PathBuf) {
    scenario_files(SCENARIO, manifests)
}

/// kthena's sync every 15 s from the first group's arrival, each role read
/// over both groups (by hand):
/// - 0 s: 5 requests/s: decode ⌈0.5⌉ = 1, prefill ⌈0.125⌉ = 1, as they are.
/// - 600 s: 60 requests/s: decode 60 / 10 = 6, prefill ⌈1.5⌉ = 2; 2 / 6 =
///   0.33 is below 0.5: prefill raised to ⌈0.5 × 6⌉ = 3 (its maximum 4 allows).
///   Each group then asks for 3 + 6 = 9 pods (its PodGroup's minMember 9):
///   16 GPUs hold one group whole (9) and the other's first 2; its 7 new pods
///   wait for the gang.
/// - 2400 s: 5 requests/s: both roles back to 1; the waiting pods go, each
///   group's PodGroup back to 2.
///
/// With `capacity` (30 requests/s a group once all its pods have started) the
/// groups serve as they did: role counts change the pods to place, not a
/// group's capacity (`capacityByRole` below does).
#[test]
fn kthena_disaggregated_target_scales_roles_within_the_ratio() {
    let (dir, p) = files(MANIFESTS);
    let out = dir.path().join("out");
    assert_eq!(
        run_scaling(&p, &out),
        "t_s,autoscaler,target,from,to,proposed,reason
600,default/pd-policy,ModelServing llm-pd role decode,1,6,6,kthena stable mode: metrics recommend 6
600,default/pd-policy,ModelServing llm-pd role prefill,1,3,2,kthena stable mode: metrics recommend 2; the role ratio raised 2 to 3
2400,default/pd-policy,ModelServing llm-pd role decode,6,1,1,kthena stable mode: metrics recommend 1
2400,default/pd-policy,ModelServing llm-pd role prefill,3,1,1,kthena stable mode: metrics recommend 1
"
    );
    let services = std::fs::read_to_string(out.join("services.csv")).unwrap();
    for row in [
        "\n600,llm-pd,ModelServing,60,60,60,2,7,7,2,11,",
        "\n1200,llm-pd,ModelServing,60,60,60,2,7,0,2,11,",
        "\n2460,llm-pd,ModelServing,5,60,5,2,0,0,2,4,",
    ] {
        assert!(services.contains(row), "{row} in {services}");
    }
    // The new role replicas under kthena's names: group 0's ran from 600 s
    // until the scale-down deleted them (the highest ordinals: all ran);
    // group 1's never started.
    let pods = std::fs::read_to_string(out.join("pods.csv")).unwrap();
    for row in [
        "llm-pd-0,default/llm-pd-0-prefill-0-0,prefill-0,0,n0,1,0,3600,running",
        "llm-pd-0,default/llm-pd-0-prefill-2-0,prefill-2,0,n1,1,600,2400,evicted",
        "llm-pd-0,default/llm-pd-0-decode-5-0,decode-5,0,n1,1,600,2400,evicted",
    ] {
        assert!(pods.contains(row), "{row} in {pods}");
    }
    assert_eq!(pods.matches("\nllm-pd-1,").count(), 2, "{pods}");
    // The controller removed those role replicas: no recovery follows, not
    // even a whole group's (`ServingGroupRecreate` would restart the group).
    let whole = MANIFESTS
        .replace("  schedulerName: volcano\n", "  schedulerName: volcano\n  recoveryPolicy: ServingGroupRecreate\n");
    let (dir, p) = files(&whole);
    let out = dir.path().join("out");
    run_scaling(&p, &out);
    let pods = std::fs::read_to_string(out.join("pods.csv")).unwrap();
    assert!(pods.contains("llm-pd-0,default/llm-pd-0-prefill-0-0,prefill-0,0,n0,1,0,3600,running"), "{pods}");
    assert!(!pods.contains("prefill-3-0"), "no fourth prefill replica was asked for");
}

/// The policy is read as kthena's CRD and webhook read it; a role the
/// ModelServing does not have leaves the policy out (kthena's sync fails
/// then: nothing is scaled), a located warning.
#[test]
fn a_disaggregated_policy_is_checked_and_left_out_whole() {
    let refused = |manifests: String, want: &str| refused_with(SCENARIO, &manifests, want);
    refused(
        MANIFESTS.replace("minRatio: \"0.5\", maxRatio: \"1\"", "minRatio: \"2\", maxRatio: \"1\""),
        "spec.disaggregatedTarget.ratioConstraint.minRatio: minRatio must be <= maxRatio",
    );
    refused(
        MANIFESTS.replace("denominatorRole: decode", "denominatorRole: prefill"),
        "spec.disaggregatedTarget.ratioConstraint.denominatorRole: numeratorRole and denominatorRole must differ",
    );
    refused(
        MANIFESTS.replace("minReplicas: 1\n        maxReplicas: 4", "minReplicas: 0\n        maxReplicas: 4"),
        "spec.disaggregatedTarget.ratioConstraint: ratio roles must be scalable-to-zero together",
    );
    refused(
        MANIFESTS.replace("minReplicas: 1\n        maxReplicas: 4", "minReplicas: 5\n        maxReplicas: 4"),
        "spec.disaggregatedTarget.roles.prefill.minReplicas: minReplicas must be <= maxReplicas",
    );
    refused(
        MANIFESTS.replacen("        metricSources:\n          rps: {prometheus: {serverURL: \"http://prometheus:9090\", query: \"sum(rate(requests[1m]))\"}}\n", "", 1),
        "spec.disaggregatedTarget.roles.prefill.metricSources: metricSources must be set on every non-fixed role when metrics are configured",
    );
    let (dir, p) = files(
        &MANIFESTS
            .replace("      decode:\n        minReplicas", "      decoder:\n        minReplicas")
            .replace("denominatorRole: decode", "denominatorRole: decoder"),
    );
    let out = dir.path().join("out");
    let run = lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&out).assert().success();
    let err = String::from_utf8_lossy(&run.get_output().stderr).to_string();
    assert!(
        err.contains("AutoscalingPolicy default/pd-policy: role decoder not found in model serving default/llm-pd: it is left out"),
        "{err}"
    );
    let scaling = std::fs::read_to_string(out.join("scaling.csv")).unwrap_or_default();
    assert!(!scaling.contains("pd-policy"), "{scaling}");
}

/// `capacityByRole`: a serving group serves the least over its roles of its
/// ready replicas × the role's (prefill 40 requests/s, decode 10), by hand:
/// - 0–60 s: nothing ready (60 s start-up); then each group 1 prefill (40)
///   and 1 decode (10): 10 each, 20 in all.
/// - 600 s: 60 requests/s; the roles grow (3 prefill, 6 decode a group);
///   group 0's 7 new pods start at 600 s and serve at 660 s: min(3 × 40,
///   6 × 10) = 60, group 1 still 10: 70. Group 1's new pods wait (the gang).
/// - 2400 s: back to 1 + 1 a group: 20.
///
/// Unserved: 5 × 60 (0–60 s) + (60 − 20) × 60 (600–660 s) = 2,700 requests.
/// Role replicas short (each role's ⌈demand ÷ its capacity⌉ less its ready
/// replicas over both groups): 0–60 s prefill 1 + decode 1 for 60 s; 600–660
/// s decode 6 − 2 = 4 for 60 s (prefill 2 wanted, 2 ready): 360 s, 0.1 h.
#[test]
fn capacity_by_role_serves_the_least_role_of_each_group() {
    let sc = SCENARIO.replace("      capacity: 30\n", "      capacityByRole: {prefill: 40, decode: 10}\n");
    let (dir, p) = scenario_files(&sc, MANIFESTS);
    let out = dir.path().join("out");
    lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&out).assert().success();
    let services = std::fs::read_to_string(out.join("services.csv")).unwrap();
    for row in [
        "\n60,llm-pd,ModelServing,5,20,5,2,0,0,2,4,",
        "\n600,llm-pd,ModelServing,60,20,20,2,7,7,2,11,",
        "\n660,llm-pd,ModelServing,60,70,60,2,7,0,2,11,",
        "\n2460,llm-pd,ModelServing,5,20,5,2,0,0,2,4,",
    ] {
        assert!(services.contains(row), "{row} in {services}");
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let s = &summary["metrics"]["services"][0];
    assert_eq!((s["unserved_requests"].as_f64(), s["replica_hours_short"].as_f64()), (Some(2700.0), Some(0.1)));
}

/// `capacityByRole` is checked before the run: not with `capacity`; each
/// role one of the ModelServing's; only for a ModelServing an autoscaler
/// sizes (a serving group named alone is not one).
#[test]
fn capacity_by_role_is_checked_up_front() {
    let refused = |scenario: String, manifests: &str, want: &str| refused_with(&scenario, manifests, want);
    let with = |roles: &str| SCENARIO.replace("      capacity: 30\n", &format!("      capacityByRole: {roles}\n"));
    refused(
        SCENARIO.replace("      capacity: 30\n", "      capacity: 30\n      capacityByRole: {prefill: 40}\n"),
        MANIFESTS,
        "spec.services[0].capacity: give `capacity` (what a replica serves) or `capacityByRole`",
    );
    refused(
        with("{prefil: 40, decode: 10}"),
        MANIFESTS,
        "spec.services[0].capacityByRole.prefil: ModelServing default/llm-pd has no role prefil; its roles: prefill, decode",
    );
    let alone = MANIFESTS.split("---").next().unwrap();
    refused(
        with("{prefill: 40}").replace("workload: llm-pd", "workload: llm-pd-0"),
        alone,
        "spec.services[0].capacityByRole: default/llm-pd-0 is a ModelServing serving group without an autoscaler",
    );
    refused(SCENARIO.replace("      capacity: 30\n", ""), MANIFESTS, "spec.services[0].capacity: required");
}
