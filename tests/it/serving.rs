//! Services and their HorizontalPodAutoscalers (issue 45, item 2): a hand-checked
//! run whose every scale decision follows Kubernetes' documented algorithm, the
//! served and unserved requests counted by hand, the deletion order of a
//! ReplicaSet, and every bad input through the binary.

use super::*;

/// A Deployment `web` of one-GPU pods with an HPA on a Pods metric (10 per pod,
/// 1 to 6 replicas, no `behavior`), and `rest` after `spec.services`.
fn files(hpa_extra: &str, services: &str) -> (tempfile::TempDir, PathBuf) {
    files_in(tempfile::tempdir().unwrap(), hpa_extra, services)
}

/// [`files`] in `dir`.
fn files_in(dir: tempfile::TempDir, hpa_extra: &str, services: &str) -> (tempfile::TempDir, PathBuf) {
    web_files(dir, &web_with_hpa("qps", 10, hpa_extra), services)
}

/// [`WEB`] and its HPA on a Pods metric `metric` of `per_pod` per pod (1 to 6
/// replicas), `hpa_extra` after its spec.
pub(super) fn web_with_hpa(metric: &str, per_pod: u32, hpa_extra: &str) -> String {
    format!(
        "{WEB}---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: web}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}
  minReplicas: 1
  maxReplicas: 6
  metrics:
    - type: Pods
      pods:
        metric: {{name: {metric}}}
        target: {{type: AverageValue, averageValue: '{per_pod}'}}
{hpa_extra}"
    )
}

/// A Deployment `web` of 1 one-GPU pod.
pub(super) const WEB: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  template:
    spec:
      schedulerName: volcano
      containers:
        - name: s
          resources: {requests: {cpu: '1', memory: 1Gi, nvidia.com/gpu: '1'}}
";

/// `manifests` as web.yaml in `dir`, and a scenario of an hour on one 8-GPU node
/// running them, `services` after it.
pub(super) fn web_files(dir: tempfile::TempDir, manifests: &str, services: &str) -> (tempfile::TempDir, PathBuf) {
    std::fs::write(dir.path().join("web.yaml"), manifests).unwrap();
    let text = scenario(
        "    nodes: [{name: n0, gpus: 8, cpu: 32, memory: 256Gi}]",
        &format!("  horizon: 1h\n  workload:\n    - manifests: web.yaml\n{services}"),
    );
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, text).unwrap();
    (dir, p)
}

const DEMAND: &str = "  services:
    - workload: web
      demand:
        steps: [{at: 0s, rate: 5}, {at: 10m, rate: 45}, {at: 40m, rate: 5}]
      capacity: 10
      startup: 60s
";

/// Step by step (syncs every 15 s from t = 0; the pod serves from 60 s):
/// - 0–45 s: no pod serves, the Pods metric has no value: nothing changes.
/// - 60 s–585 s: 5 req/s on one pod, ratio 0.5 → 1 wanted, as now.
/// - 600 s: 45 req/s on one pod → ceil(4.5) = 5, limited to max(2 × 1, 4) = 4.
/// - 615 s: 1 ready pod at 45, 3 starting (no metric: on a scale-up they count
///   0): 45 / 4 = 11.25 → ratio 1.125 → ceil(1.125 × 4) = 5 (within max(8, 4)).
/// - 630 s on: 45 over 5 pods = 9 → within the tolerance, or the direction
///   would flip: 5 stays.
/// - 2400 s: 5 req/s → 1 wanted, but 5 was recommended within the last 300 s
///   (until 2385 s): the scale-down waits until 2685 s, then 5 → 1.
#[test]
fn hpa_scale_decisions_step_by_step() {
    let (dir, p) = files("", DEMAND);
    let out = dir.path().join("out");
    assert_eq!(run_scaling(&p, &out), step_by_step_scaling("qps"));
    // Served, by hand: offered 5 × 600 + 45 × 1800 + 5 × 1200 = 90,000; unserved
    // 5 × 60 (no pod ready) + 35 × 60 (one of 5 needed) + 5 × 15 (four) = 2,475;
    // short 135 s of 3,600; replicas short 60 + 4 × 60 + 15 = 315 replica-s.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let s = &summary["metrics"]["services"][0];
    assert_eq!(s["service"], "web");
    assert_eq!(s["offered_requests"], 90_000.0);
    assert_eq!(s["served_requests"], 87_525.0);
    assert_eq!(s["unserved_requests"], 2_475.0);
    assert_eq!(s["slo_attainment"], 1.0 - 135.0 / 3600.0);
    assert_eq!(s["replica_hours_short"], 315.0 / 3600.0);
    assert_eq!(s["catch_up_s"]["max"], 75.0);
    assert_eq!(s["catch_up_s"]["mean"], 67.5);
    assert_eq!((s["scale_ups"].as_u64(), s["scale_downs"].as_u64()), (Some(2), Some(1)));
    assert_eq!((s["max_replicas"].as_u64(), s["pod_starts"].as_u64()), (Some(5), Some(5)));
    // The ReplicaSet deleted (`evicted`, as any deletion) the four pods made at 600 s and 615 s (ready less
    // long ago: 2^40 ns buckets against the first pod's 2^41), newest first; the
    // first pod runs to the end, and none was made again.
    let pods = std::fs::read_to_string(out.join("pods.csv")).unwrap();
    let rows: Vec<Vec<&str>> = pods.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 5, "{pods}");
    let ends: Vec<(&str, &str, &str)> = rows.iter().map(|r| (r[3], r[6], r[8])).collect();
    assert_eq!(
        ends,
        [
            ("0", "0", "running"),
            ("1", "600", "evicted"),
            ("2", "600", "evicted"),
            ("3", "600", "evicted"),
            ("4", "615", "evicted"),
        ],
        "{pods}"
    );
    assert!(rows.iter().all(|r| r[6] == "0" || r[7] == "2685"), "{pods}");
    let svc = std::fs::read_to_string(out.join("services.csv")).unwrap();
    let at = |t: &str| svc.lines().find(|l| l.starts_with(&format!("{t},"))).unwrap().to_string();
    // A sample sees its instant after the instant's changes (as timeseries.csv):
    // at 0 s the pod was placed and starts.
    assert_eq!(at("0"), "0,web,Deployment,5,0,0,1,0,1,0,1,,,");
    assert_eq!(at("600"), "600,web,Deployment,45,10,10,4,0,3,1,4,,,");
    assert_eq!(at("900"), "900,web,Deployment,45,50,45,5,0,0,5,5,,,");
    assert_eq!(at("3600"), "3600,web,Deployment,5,10,5,1,0,0,1,1,,,");
}

/// Runs scenario `p` into `out`: its scaling.csv.
/// A scenario `s.yaml` beside its manifests `ms.yaml`, in a new directory.
pub(super) fn scenario_files(scenario: &str, manifests: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ms.yaml"), manifests).unwrap();
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, scenario).unwrap();
    (dir, p)
}

/// The run of [`scenario_files`] is refused before it starts (exit 2), its
/// error saying `want`.
pub(super) fn refused_with(scenario: &str, manifests: &str, want: &str) {
    let (dir, p) = scenario_files(scenario, manifests);
    let out = lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(dir.path().join("out")).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(want), "want {want}, got {err}");
}

pub(super) fn run_scaling(p: &Path, out: &Path) -> String {
    lahar().args(["run", "-q"]).arg(p).arg("--out").arg(out).assert().success();
    std::fs::read_to_string(out.join("scaling.csv")).unwrap()
}

/// The scaling.csv of [`hpa_scale_decisions_step_by_step`], its Pods metric
/// named `metric`.
pub(super) fn step_by_step_scaling(metric: &str) -> String {
    format!(
        "t_s,autoscaler,target,from,to,proposed,reason
600,default/web,Deployment web,1,4,5,pods metric {metric} above target
615,default/web,Deployment web,4,5,5,pods metric {metric} above target
2685,default/web,Deployment web,5,1,1,All metrics below target
"
    )
}

/// With `behavior`: a scale-up policy of 1 pod per 60 s and a scale-down window of
/// 0 s with 1 pod per 30 s.
#[test]
fn hpa_behavior_limits_each_step() {
    let extra = "  behavior:
    scaleUp:
      policies: [{type: Pods, value: 1, periodSeconds: 60}]
    scaleDown:
      stabilizationWindowSeconds: 0
      policies: [{type: Pods, value: 1, periodSeconds: 30}]
";
    let (dir, p) = files(extra, DEMAND);
    let out = dir.path().join("out");
    lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&out).assert().success();
    let scaling = std::fs::read_to_string(out.join("scaling.csv")).unwrap();
    let rows: Vec<(String, String, String)> = scaling
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].to_string(), f[3].to_string(), f[4].to_string())
        })
        .collect();
    // Up one pod a minute from 600 s (4 steps to 5), down one per 30 s from 2400 s.
    let want: Vec<(String, String, String)> = [
        ("600", "1", "2"),
        ("660", "2", "3"),
        ("720", "3", "4"),
        ("780", "4", "5"),
        ("2400", "5", "4"),
        ("2430", "4", "3"),
        ("2460", "3", "2"),
        ("2490", "2", "1"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    assert_eq!(rows, want, "{scaling}");
}

#[test]
fn a_service_without_autoscaler_is_measured() {
    let dir = tempfile::tempdir().unwrap();
    let text = scenario(
        "    nodes: [{name: n0, gpus: 8, cpu: 32, memory: 256Gi}]",
        "  horizon: 10m
  workload:
    - jobs: [{name: api, tasks: [{name: s, replicas: 2, resources: {nvidia.com/gpu: 1}}]}]
  services:
    - workload: api
      demand: {bursts: {base: 4, peak: 30, every: 5m, lasting: 1m, first: 2m}}
      capacity: 10
",
    );
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, text).unwrap();
    let out = dir.path().join("out");
    lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&out).assert().success();
    // Two pods at 10 from 0 s: 20 against 4, and 30 in the bursts 2–3 and 7–8 min.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let s = &summary["metrics"]["services"][0];
    assert_eq!(s["offered_requests"], 4.0 * 480.0 + 30.0 * 120.0);
    assert_eq!(s["unserved_requests"], 10.0 * 120.0);
    assert_eq!(s["catch_up_s"]["p50"], 60.0);
    assert!(!out.join("scaling.csv").exists());
}

#[test]
fn services_bad_input_is_located() {
    let cases: [(&str, &str); 9] = [
        (
            "  services:\n    - {workload: web, demand: {constant: -1}, capacity: 10}\n",
            "spec.services[0].demand.constant",
        ),
        ("  autoscaling: {syncPeriod: 100ms}\n", "spec.autoscaling.syncPeriod: must be at least 1s"),
        ("  autoscaling: {tolerance: 1.5}\n", "spec.autoscaling.tolerance: must be a fraction from 0 up to 1"),
        (
            "  services:\n    - {workload: web, demand: {constant: 1, bursts: {base: 1, peak: 2, every: 1m, lasting: 1m}}, capacity: 10}\n",
            "expected exactly one of constant, steps, diurnal, bursts, trace",
        ),
        ("  services:\n    - {workload: web, demand: {constant: 1}, capacity: 0}\n", "spec.services[0].capacity"),
        (
            "  services:\n    - {workload: web, demand: {steps: [{at: 2m, rate: 1}, {at: 1m, rate: 2}]}, capacity: 1}\n",
            "must be later than the step before",
        ),
        (
            "  services:\n    - {workload: web, demand: {diurnal: {requestsPerSecond: [1, 2]}}, capacity: 1}\n",
            "expected 24 rates",
        ),
        (
            "  services:\n    - {workload: web, demand: {constant: 1}, capacity: 1, capacityByGpuModel: {B200: 3}}\n",
            "no node has GPU model `B200`",
        ),
        ("  services:\n    - {workload: web, demand: {constant: 1}, capacity: 1, replicas: 3}\n", "replicas"),
    ];
    for (services, want) in cases {
        let (_dir, p) = files("", services);
        let out = lahar().arg("validate").arg(&p).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(want), "{services}: {err}");
    }
}

#[test]
fn hpa_bad_input_is_located() {
    let cases: [(&str, &str); 5] = [
        (
            "  behavior: {scaleUp: {selectPolicy: Fastest}}\n",
            "spec.behavior.scaleUp.selectPolicy: expected Max, Min or Disabled",
        ),
        (
            "  behavior: {scaleDown: {policies: [{type: Pods, value: 1, periodSeconds: 4000}]}}\n",
            "periodSeconds: must be from 1 to 1800",
        ),
        ("  behavior: {scaleDown: {policies: []}}\n", "must specify at least one policy"),
        (
            "  behavior: {scaleUp: {stabilisationWindowSeconds: 10}}\n",
            "spec.behavior.scaleUp.stabilisationWindowSeconds: unknown field",
        ),
        ("  behavior: {scaleUp: {stabilizationWindowSeconds: 7200}}\n", "must be at most 3600"),
    ];
    for (extra, want) in cases {
        let (_dir, p) = files(extra, DEMAND);
        let out = lahar().arg("validate").arg(&p).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(want), "{extra}: {err}");
        assert!(err.contains("web.yaml:"), "the file is named: {err}");
    }
}

/// An HPA lahar cannot follow is left out with a warning, never silently.
#[test]
fn hpa_left_out_with_a_warning() {
    let cpu =
        "    - type: Resource\n      resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}\n";
    let (_dir, p) = files(cpu, DEMAND);
    let s = lahar::scenario::load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        s.warnings
            .iter()
            .any(|w| w.kind == "manifest-parts-left-out" && w.message.contains("a Resource metric (`cpu` use)")),
        "{:?}",
        s.warnings
    );
    // A target not among the files.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("h.yaml"),
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\nspec:\n  scaleTargetRef: {kind: Deployment, name: nowhere}\n  maxReplicas: 3\n  metrics: [{type: External, external: {metric: {name: q}, target: {type: Value, value: '5'}}}]\n",
    )
    .unwrap();
    let text = scenario("    nodes: [{name: n0, cpu: 4, memory: 4Gi}]", "  workload:\n    - manifests: h.yaml\n");
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, text).unwrap();
    // With nothing else in the files, the source yields no job: an error saying why.
    let out = lahar().arg("validate").arg(&p).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("no Deployment default/nowhere with schedulerName volcano in these files"), "{err}");
}

/// A service whose workload never arrives is a warning after the run.
#[test]
fn a_service_of_nothing_is_a_warning() {
    let services = "  services:\n    - {workload: other/web, demand: {constant: 3}, capacity: 1}\n";
    let (dir, p) = files("", services);
    let out = lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(dir.path().join("o")).assert().success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("no workload other/web arrived"), "{err}");
}

/// The example runs from a clean clone and serves most of its day.
#[test]
fn the_serving_example_runs() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/serving-scenario.yaml");
    let dir = tempfile::tempdir().unwrap();
    lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(dir.path()).assert().success();
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap()).unwrap();
    let s = &summary["metrics"]["services"][0];
    assert!(s["slo_attainment"].as_f64().unwrap() > 0.9, "{s}");
    assert!(s["scale_ups"].as_u64().unwrap() >= 3, "{s}");
}

/// A request trace is a demand: the Azure LLM inference trace's hour, counted per
/// second, offers exactly its 19,366 requests.
#[test]
fn a_request_trace_is_a_demand() {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/traces/azure-llm/AzureLLMInferenceTrace_conv.csv");
    let services = format!(
        "  services:\n    - workload: web\n      demand: {{trace: {{path: {}, bin: 1s}}}}\n      capacity: 10\n",
        trace.display()
    );
    let (dir, p) = files("", &services);
    let out = dir.path().join("out");
    lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&out).assert().success();
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let s = &summary["metrics"]["services"][0];
    assert_eq!(s["offered_requests"], 19_366.0, "{s}");
    // Repeated: three copies, every 2 hours, offer three times as many.
    let again = services.replace("bin: 1s}", "bin: 1s, repeat: 3, every: 2h}");
    let text = std::fs::read_to_string(&p).unwrap().replace(&services, &again).replace("horizon: 1h", "horizon: 6h");
    std::fs::write(&p, text).unwrap();
    lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&out).arg("--force").assert().success();
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["metrics"]["services"][0]["offered_requests"], 3.0 * 19_366.0, "{summary}");
    assert_eq!(summary["metrics"]["serving"]["offered_requests"], 3.0 * 19_366.0, "{summary}");
    // Copies that would overlap, and no copy at all, are refused where written.
    for (bad, field, why) in [
        ("bin: 1s, repeat: 2, every: 30m}", "demand.trace.every", "the copies would overlap"),
        ("bin: 1s, repeat: 0}", "demand.trace.repeat", "expected 1 to 10000000 copies, got 0"),
        ("bin: 1s, every: 2h}", "demand.trace.every", "with one copy it does nothing"),
    ] {
        std::fs::write(&p, std::fs::read_to_string(&p).unwrap().replace(&again, &services.replace("bin: 1s}", bad)))
            .unwrap();
        let o = lahar().arg("validate").arg(&p).assert().code(2);
        let err = String::from_utf8_lossy(&o.get_output().stderr).to_string();
        assert!(err.contains(&format!("spec.services[0].{field}")) && err.contains(why), "{err}");
        std::fs::write(&p, std::fs::read_to_string(&p).unwrap().replace(&services.replace("bin: 1s}", bad), &again))
            .unwrap();
    }
    std::fs::write(&p, std::fs::read_to_string(&p).unwrap().replace(&again, &services)).unwrap();
    lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&out).arg("--force").assert().success();
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let s = &summary["metrics"]["services"][0];
    // The HPA followed the demand (about 5.5 requests/s: one pod at 10 serves it,
    // with bursts above).
    assert!(s["served_requests"].as_f64().unwrap() > 15_000.0, "{s}");
    // A bad trace is located before the run.
    std::fs::write(dir.path().join("bad.csv"), "TIMESTAMP,ContextTokens\n2023-11-16 18:15:46,1\n").unwrap();
    let bad = "  services:\n    - workload: web\n      demand: {trace: {path: bad.csv, format: azure-llm}}\n      capacity: 10\n";
    let text = std::fs::read_to_string(&p).unwrap().replace(&services, bad);
    std::fs::write(&p, text).unwrap();
    let o = lahar().arg("validate").arg(&p).assert().code(2);
    let err = String::from_utf8_lossy(&o.get_output().stderr).to_string();
    assert!(err.contains("spec.services[0].demand.trace.path") && err.contains("no `GeneratedTokens` column"), "{err}");
}

/// `lahar trace inspect` knows the request traces.
#[test]
fn trace_inspect_reads_a_request_trace() {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/traces/azure-llm/AzureLLMInferenceTrace_conv.csv");
    let o = lahar().args(["trace", "inspect", "--json"]).arg(&trace).assert().success();
    let v: serde_json::Value = serde_json::from_slice(&o.get_output().stdout).unwrap();
    assert_eq!(v["format"], "azure-llm");
    assert_eq!(
        (v["rows_read"].as_u64(), v["requests"].as_u64(), v["skipped"].as_u64()),
        (Some(19_366), Some(19_366), Some(0))
    );
    // 18:15:46.680590 to 19:14:08.402527.
    assert_eq!(v["span_s"], 3501.721937);
    let o = lahar().args(["trace", "convert", "--format", "burstgpt", "--out", "x.csv"]).arg(&trace).assert().code(2);
    let err = String::from_utf8_lossy(&o.get_output().stderr).to_string();
    assert!(err.contains("is a request trace"), "{err}");
}

/// Mooncake's JSON-lines trace: its format guessed from the published file
/// name, every figure counted independently from the sample (Python's json).
#[test]
fn trace_inspect_reads_a_mooncake_trace() {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/traces/mooncake/conversation_trace.jsonl");
    let o = lahar().args(["trace", "inspect", "--json"]).arg(&trace).assert().success();
    let v: serde_json::Value = serde_json::from_slice(&o.get_output().stdout).unwrap();
    assert_eq!(v["format"], "mooncake");
    assert_eq!(
        (v["rows_read"].as_u64(), v["requests"].as_u64(), v["skipped"].as_u64()),
        (Some(1_750), Some(1_750), Some(0))
    );
    // 0 ms to 597,000 ms; 1,749 gaps over 597 s; the busiest minute 217 requests.
    assert_eq!(v["span_s"], 597.0);
    assert_eq!(v["mean_rps"], 1749.0 / 597.0);
    assert_eq!((v["peak_rps_1m"].as_f64().unwrap() * 60.0).round(), 217.0);
    let tokens = |k: &str| ["p50", "p90", "p99", "max"].map(|p| v[k][p].as_u64().unwrap());
    assert_eq!(tokens("input_tokens"), [8036, 30183, 99934, 123192]);
    assert_eq!(tokens("output_tokens"), [364, 610, 1047, 2000]);
    // Their throughput, summed independently (Python's json over the sample).
    // 24,486,514 input and 619,615 output tokens; the busiest minute 2,838,405
    // input and 71,589 output tokens (minutes from the first request).
    assert_eq!(
        (v["input_tokens"]["sum"].as_u64(), v["output_tokens"]["sum"].as_u64()),
        (Some(24_486_514), Some(619_615))
    );
    assert!((v["output_tokens"]["mean_per_s"].as_f64().unwrap() - 619_615.0 / 597.0).abs() < 1e-9, "{v}");
    assert_eq!(v["input_tokens"]["peak_per_s_1m"].as_f64(), Some(2_838_405.0 / 60.0));
    assert_eq!(v["output_tokens"]["peak_per_s_1m"].as_f64(), Some(71_589.0 / 60.0));
    // As a demand: ten one-minute bins, the first's rate its count / 60.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&trace, dir.path().join("conversation_trace.jsonl")).unwrap();
    let services = "  services:\n    - workload: web\n      demand: {trace: {path: conversation_trace.jsonl}}\n      capacity: 2\n";
    let (dir, p) = files_in(dir, "", services);
    let out = dir.path().join("out");
    lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&out).assert().success();
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    // Offered: every request of the ten minutes, once — each bin's rate rounded
    // to a milli-request per second (Python: the ten minutes' counts × 1000 / 60,
    // rounded, × 60 / 1000, summed: 1,750.02).
    let offered = summary["metrics"]["services"][0]["offered_requests"].as_f64().unwrap();
    assert!((offered - 1750.02).abs() < 1e-9, "{offered}");
    // A bad line: counted, or with --strict named with its line (exit 2).
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n{\"timestamp\": \"soon\"}\n")
        .unwrap();
    let o = lahar().args(["trace", "inspect", "--json", "--format", "mooncake"]).arg(&bad).assert().success();
    let v: serde_json::Value = serde_json::from_slice(&o.get_output().stdout).unwrap();
    assert_eq!((v["rows_read"].as_u64(), v["skipped"].as_u64()), (Some(2), Some(1)));
    let o = lahar().args(["trace", "inspect", "--strict", "--format", "mooncake"]).arg(&bad).assert().code(2);
    let err = String::from_utf8_lossy(&o.get_output().stderr).to_string();
    assert!(err.contains("bad.jsonl: line 2, row 2: malformed: `timestamp`: expected milliseconds"), "{err}");
}

/// Two hours, a reclaimable `training` queue beside `serving`, and a conf with
/// reclaim; `gang` holds gang's arguments (lines after its name).
fn reclaim_setup(gang: &str) -> String {
    format!(
        "  horizon: 2h
  queues:
    - {{name: training, weight: 1, reclaimable: true}}
    - {{name: serving, weight: 1}}
  scheduler:
    inline: |
      actions: \"enqueue, allocate, backfill, reclaim\"
      tiers:
      - plugins:
        - name: priority
        - name: gang{gang}
        - name: conformance
      - plugins:
        - name: drf
        - name: predicates
        - name: proportion
        - name: nodeorder
"
    )
}

/// A one-GPU Deployment `web` in the `serving` queue, submitted at `at`.
fn serving_web(at: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations: {{lahar.io/submit-at: {at}}}
spec:
  replicas: 1
  template:
    metadata:
      annotations: {{scheduling.volcano.sh/queue-name: serving}}
    spec:
      schedulerName: volcano
      containers:
        - name: s
          resources: {{requests: {{cpu: '1', memory: 1Gi, nvidia.com/gpu: '1'}}}}
"
    )
}

/// A service's pods are Volcano's like any other: its first replica (the
/// PodGroup's `minMember`, 1 for a Deployment) reclaims a GPU from a reclaimable
/// training queue, but the replicas its HPA adds later never do — the job is not
/// starving (gang's `JobStarving`: waiting + ready < minAvailable), so reclaim and
/// preempt pass it by, and the new pods wait for GPUs the training job frees.
#[test]
fn scale_ups_beyond_the_gang_do_not_reclaim() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("web.yaml"),
        serving_web("10m")
            + "---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 4
  metrics:
    - type: Pods
      pods:
        metric: {name: qps}
        target: {type: AverageValue, averageValue: '10'}
",
    )
    .unwrap();
    let text = scenario(
        "    nodes: [{name: n0, gpus: 8, cpu: 32, memory: 256Gi}]",
        &(reclaim_setup("") + "  workload:
    - jobs:
        - {name: train, queue: training, minAvailable: 1, duration: 10h, tasks: [{name: w, replicas: 8, minAvailable: 1, resources: {nvidia.com/gpu: 1}}]}
    - manifests: web.yaml
  services:
    - workload: web
      demand: {steps: [{at: 0s, rate: 5}, {at: 30m, rate: 35}]}
      capacity: 10
      startup: 60s
"),
    );
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, text).unwrap();
    let out = dir.path().join("out");
    lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&out).assert().success();
    let scaling = std::fs::read_to_string(out.join("scaling.csv")).unwrap();
    assert_eq!(scaling.lines().nth(1), Some("1800,default/web,Deployment web,1,4,4,pods metric qps above target"));
    let decisions = std::fs::read_to_string(out.join("decisions.csv")).unwrap();
    let evictions: Vec<&str> = decisions.lines().filter(|l| l.contains(",evict,")).collect();
    assert_eq!(evictions.len(), 1, "{evictions:?}");
    assert!(evictions[0].starts_with("3,600,reclaim,evict,train,"), "{evictions:?}");
    let svc = std::fs::read_to_string(out.join("services.csv")).unwrap();
    let last = svc.lines().last().unwrap();
    assert_eq!(last, "7200,web,Deployment,35,10,10,4,3,0,1,1,,,", "{last}");
    // What the service took from training: the one pod reclaimed at 600 s, one
    // preemption of `train`, which goes on with 7 pods (above its minAvailable
    // of 1) and so loses no work; the service held 1 GPU from 630 s (the
    // victim's 30 s grace period) to 7200 s.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let v = &summary["metrics"]["serving"];
    assert_eq!(v["batch_pods_evicted"], 1, "{v}");
    assert_eq!(v["batch_preemptions"], 1, "{v}");
    assert_eq!(v["batch_gpu_hours_lost"], 0.0, "{v}");
    assert_eq!(v["gpu_hours"], 6570.0 / 3600.0, "{v}");
    assert_eq!(v["services"], 1, "{v}");
    assert_eq!(v["pods_evicted"], 0, "{v}");
    // timeseries.csv splits the allocated GPUs by class: the service's one GPU
    // from the first sample after 630 s (the 8 GPUs are all held but while the
    // victim's grace runs).
    let ts = std::fs::read_to_string(out.join("timeseries.csv")).unwrap();
    let head: Vec<&str> = ts.lines().next().unwrap().split(',').collect();
    let (a, sv) = (
        head.iter().position(|c| *c == "gpus_allocated").unwrap(),
        head.iter().position(|c| *c == "gpus_serving").unwrap(),
    );
    assert_eq!(sv, head.len() - 1, "{head:?}");
    let rows: Vec<(String, String, String)> = ts
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].to_string(), f[a].to_string(), f[sv].to_string())
        })
        .collect();
    assert_eq!(rows[0], ("0".into(), "8".into(), "0".into()), "{rows:?}");
    assert_eq!(rows[2], ("600".into(), "7".into(), "0".into()), "{rows:?}");
    assert_eq!(rows[3], ("900".into(), "8".into(), "1".into()), "{rows:?}");
}

/// An eviction for a service that stops a training gang counts the work the
/// gang loses: `train` (4 pods, minAvailable 4, checkpoints every 20 min) has
/// run 50 min when the service's first pod reclaims one of its GPUs at 50 min:
/// 10 min of work since its 40-min checkpoint × 4 GPUs = 40 GPU-minutes.
#[test]
fn work_lost_to_a_service_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("web.yaml"), serving_web("50m")).unwrap();
    let text = scenario(
        "    nodes: [{name: n0, gpus: 4, cpu: 32, memory: 256Gi}]",
        &(reclaim_setup("\n          enablePreemptable: false") + "  workload:
    - jobs:
        - {name: train, queue: training, minAvailable: 4, duration: 10h, checkpointInterval: 20m, tasks: [{name: w, replicas: 4, resources: {nvidia.com/gpu: 1}}]}
    - manifests: web.yaml
  services:
    - workload: web
      demand: {constant: 5}
      capacity: 10
"),
    );
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, text).unwrap();
    let out = dir.path().join("out");
    lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&out).assert().success();
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let v = &summary["metrics"]["serving"];
    assert_eq!(v["batch_pods_evicted"], 1, "{v}");
    assert_eq!(v["batch_preemptions"], 1, "{v}");
    assert_eq!(v["batch_gpu_hours_lost"], 40.0 / 60.0, "{v}");
    // The run's own count of lost work agrees (the only stop is this one).
    assert_eq!(summary["metrics"]["gpu_hours_lost"], 40.0 / 60.0, "{summary}");
}
