//! Services of groups (issue 45, item 2): a LeaderWorkerSet or a kthena
//! ModelServing sized by an autoscaler in groups, each group its own job and
//! PodGroup made and deleted whole, as their controllers do (the LWS controller
//! with its Volcano provider, kthena's model-serving controller); a group
//! serves once every pod of it has run its start-up.

use super::keda::run;
use super::serving::web_files;
use super::*;

/// A LeaderWorkerSet `vllm` of one group of a leader and a worker (one GPU
/// each), and an HPA on an External metric (10 per group, 1 to `max` groups).
fn lws_files(max: u32, services: &str) -> (tempfile::TempDir, PathBuf) {
    let manifests = format!(
        "apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {{name: vllm}}
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        schedulerName: volcano
        containers:
          - name: w
            resources: {{requests: {{cpu: '1', memory: 1Gi, nvidia.com/gpu: '1'}}}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: vllm}}
spec:
  scaleTargetRef: {{apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet, name: vllm}}
  minReplicas: 1
  maxReplicas: {max}
  metrics:
    - type: External
      external:
        metric: {{name: requests}}
        target: {{type: AverageValue, averageValue: '10'}}
"
    );
    web_files(tempfile::tempdir().unwrap(), &manifests, services)
}

/// summary.json's first service.
fn service(out: &Path) -> serde_json::Value {
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    summary["metrics"]["services"][0].clone()
}

const DEMAND: &str = "  services:
    - workload: vllm
      demand:
        steps: [{at: 0s, rate: 5}, {at: 10m, rate: 35}, {at: 40m, rate: 5}]
      capacity: 10
      startup: 60s
";

/// Step by step (syncs every 15 s from t = 0; a group serves 60 s after its pods
/// start):
/// - 0 s to 585 s: 5 req/s over 1 group, 0.5 of the target → 1 group, as now.
/// - 600 s: 35 req/s over 1 group → ceil(3.5) = 4 (with no `behavior`, a
///   scale-up allows max(2 × 1, 4) = 4): groups 1, 2 and 3 are made, each its own job
///   and PodGroup (`vllm-<i>-<revision>`, pods `vllm-<i>` and `vllm-<i>-1`).
/// - 2400 s: 5 req/s → 1, held by the 300 s scale-down window (4 was
///   recommended until 2385 s) until 2685 s: groups 3, 2 and 1 are deleted.
#[test]
fn an_autoscaled_leader_worker_set_is_sized_in_groups() {
    let (dir, p) = lws_files(4, DEMAND);
    let (out, scaling) = run(&dir, &p);
    assert_eq!(
        scaling,
        "t_s,autoscaler,target,from,to,proposed,reason
600,default/vllm,LeaderWorkerSet vllm,1,4,4,external metric requests above target
2685,default/vllm,LeaderWorkerSet vllm,4,1,1,All metrics below target
"
    );
    // Four groups, each a job of its own: the first runs to the end, the three
    // made at 600 s are deleted at 2685 s.
    let jobs = job_rows(&std::fs::read_to_string(out.join("jobs.csv")).unwrap());
    // Rows as the jobs end (the first runs to the end): by name here.
    let mut rows: Vec<Vec<&str>> = jobs.iter().map(|r| r.split(',').collect()).collect();
    rows.sort();
    assert_eq!(rows.len(), 4, "{jobs:?}");
    let revision = rows[0][0].rsplit('-').next().unwrap();
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r[0], format!("vllm-{i}-{revision}"), "{jobs:?}");
    }
    assert_eq!((rows[0][1], rows[0][2], rows[0][4]), ("0", "0", "Running"), "{jobs:?}");
    for r in &rows[1..] {
        assert_eq!((r[1], r[2], r[3], r[4]), ("600", "600", "2685", "Terminated"), "{jobs:?}");
    }
    let pods = std::fs::read_to_string(out.join("pods.csv")).unwrap();
    for name in ["vllm-0", "vllm-0-1", "vllm-3", "vllm-3-1"] {
        let pod = format!("default/{name}");
        assert!(pods.lines().any(|l| l.split(',').nth(1) == Some(pod.as_str())), "{name}: {pods}");
    }
    assert_eq!(pods.lines().count(), 1 + 8, "{pods}");
    // Served, by hand: offered 5 × 600 + 35 × 1800 + 5 × 1200 = 72,000;
    // unserved 5 × 60 (no group ready) + 25 × 60 (one group of the four) = 1,800.
    let s = &service(&out);
    assert_eq!(s["service"], "vllm");
    assert_eq!(s["kind"], "LeaderWorkerSet");
    assert_eq!(s["offered_requests"], 72_000.0);
    assert_eq!(s["unserved_requests"], 1_800.0);
    assert_eq!((s["scale_ups"].as_u64(), s["scale_downs"].as_u64()), (Some(1), Some(1)));
    assert_eq!((s["max_replicas"].as_u64(), s["pod_starts"].as_u64()), (Some(4), Some(8)));
    let svc = std::fs::read_to_string(out.join("services.csv")).unwrap();
    let at = |t: &str| svc.lines().find(|l| l.starts_with(&format!("{t},"))).unwrap().to_string();
    assert_eq!(at("900"), "900,vllm,LeaderWorkerSet,35,40,35,4,0,0,4,8,,,");
    assert_eq!(at("3600"), "3600,vllm,LeaderWorkerSet,5,10,5,1,0,0,1,2,,,");
}

/// KEDA's ScaledObject on a LeaderWorkerSet takes it to and from zero groups
/// (the steps of `keda::keda_scale_decisions_step_by_step`, in groups): a
/// group deleted and made again is a new job under the same name, as its new
/// PodGroup is a new object under the same name.
#[test]
fn keda_takes_a_leader_worker_set_to_and_from_zero_groups() {
    let (dir, p) = lws_files(4, DEMAND);
    let text = std::fs::read_to_string(dir.path().join("web.yaml")).unwrap();
    let lws = text.split("---\n").next().unwrap();
    let so = "apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: vllm}
spec:
  scaleTargetRef: {apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet, name: vllm}
  pollingInterval: 30
  cooldownPeriod: 120
  maxReplicaCount: 6
  triggers:
    - type: prometheus
      metadata: {serverAddress: 'http://prom:9090', query: 'sum(rate(x[1m]))', threshold: '10', activationThreshold: '2'}
";
    std::fs::write(dir.path().join("web.yaml"), format!("{lws}---\n{so}")).unwrap();
    let demand = "        steps: [{at: 0s, rate: 0}, {at: 10m, rate: 25}, {at: 30m, rate: 1}]";
    let s = std::fs::read_to_string(&p).unwrap();
    let s = s.replace("        steps: [{at: 0s, rate: 5}, {at: 10m, rate: 35}, {at: 40m, rate: 5}]", demand);
    std::fs::write(&p, s).unwrap();
    let (out, scaling) = run(&dir, &p);
    assert_eq!(
        scaling,
        "t_s,autoscaler,target,from,to,proposed,reason
0,default/vllm,LeaderWorkerSet vllm,1,0,-1,KEDAScaleTargetDeactivated: to minReplicaCount
600,default/vllm,LeaderWorkerSet vllm,0,1,-1,KEDAScaleTargetActivated: triggered by s0-prometheus
600,default/keda-hpa-vllm,LeaderWorkerSet vllm,1,3,3,external metric s0-prometheus above target
1890,default/vllm,LeaderWorkerSet vllm,3,0,-1,KEDAScaleTargetDeactivated: to minReplicaCount
"
    );
    let jobs = job_rows(&std::fs::read_to_string(out.join("jobs.csv")).unwrap());
    let mut rows: Vec<String> = jobs
        .iter()
        .map(|r| r.split_once('-').map(|(a, b)| format!("{a}-{}", &b[..1]) + &b[b.find(',').unwrap()..]).unwrap())
        .collect();
    rows.sort();
    assert_eq!(
        rows,
        [
            "vllm-0,0,,0,Terminated",
            "vllm-0,600,600,1890,Terminated",
            "vllm-1,600,600,1890,Terminated",
            "vllm-2,600,600,1890,Terminated"
        ],
        "{jobs:?}"
    );
    // Served as the Deployment's pods served: 25 × 60 + 1 × 1710 unserved.
    let s = &service(&out);
    assert_eq!((s["offered_requests"].as_f64(), s["unserved_requests"].as_f64()), (Some(31_800.0), Some(3_210.0)));
}

/// Each group is its own gang: a fifth group that the node cannot hold waits
/// whole (no pod of it placed), and the four placed serve.
#[test]
fn a_group_that_does_not_fit_waits_whole() {
    let demand = "        steps: [{at: 0s, rate: 5}, {at: 10m, rate: 45}, {at: 40m, rate: 5}]";
    let (dir, p) = lws_files(
        5,
        &DEMAND.replace("        steps: [{at: 0s, rate: 5}, {at: 10m, rate: 35}, {at: 40m, rate: 5}]", demand),
    );
    let (out, scaling) = run(&dir, &p);
    // 45 req/s: 5 groups, 4 at once (max(2 × 1, 4)), the fifth one sync later.
    assert!(scaling.contains("600,default/vllm,LeaderWorkerSet vllm,1,4,5,"), "{scaling}");
    assert!(scaling.contains("615,default/vllm,LeaderWorkerSet vllm,4,5,5,"), "{scaling}");
    let pods = std::fs::read_to_string(out.join("pods.csv")).unwrap();
    assert_eq!(pods.lines().count(), 1 + 8, "{pods}");
    assert!(!pods.contains("default/vllm-4"), "{pods}");
    let svc = std::fs::read_to_string(out.join("services.csv")).unwrap();
    let at = |t: &str| svc.lines().find(|l| l.starts_with(&format!("{t},"))).unwrap().to_string();
    // 45 offered, 4 groups serve 40; 5 asked for, 2 pods (the fifth group) pending.
    assert_eq!(at("900"), "900,vllm,LeaderWorkerSet,45,40,40,5,2,0,4,8,,,");
}

/// A LeaderWorkerSet the autoscaler cannot size is left out with a warning:
/// one with no group at the start, and one whose later group would take the
/// name of another object's job.
#[test]
fn lws_autoscaler_left_out_with_a_warning() {
    let warnings = |p: &Path| {
        let s = lahar::scenario::load_file(p).unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<String> = s.jobs().iter().map(|j| j.name.clone()).collect();
        (s.warnings.iter().map(|w| format!("{}: {}", w.kind, w.message)).collect::<Vec<_>>().join("\n"), names)
    };
    // Its group 3 named as a Deployment of the same files.
    let (dir, p) = lws_files(4, DEMAND);
    let (w, names) = warnings(&p);
    assert!(!w.contains("left out"), "{w}");
    let third = names[0].replacen("vllm-0-", "vllm-3-", 1);
    let f = dir.path().join("web.yaml");
    let text = std::fs::read_to_string(&f).unwrap();
    std::fs::write(&f, format!("{text}---\n{}", super::serving::WEB.replace("name: web", &format!("name: {third}"))))
        .unwrap();
    let (w, _) = warnings(&p);
    assert!(
        w.contains(&format!(
            "HorizontalPodAutoscaler default/vllm: a group it would make is named default/{third}, as the Deployment of"
        )) && w.contains("it is left out"),
        "{w}"
    );
    // A maxReplicas whose groups would make more pods than an object may: left
    // out; just within the bound, nothing is made before it is asked for.
    let (_dir, p) = lws_files(500_001, DEMAND);
    let (w, _) = warnings(&p);
    assert!(
        w.contains(
            "HorizontalPodAutoscaler default/vllm: 500001 groups of 2 pods could make more than 1000000 pods, \
             the most an object makes"
        ),
        "{w}"
    );
    let (_dir, p) = lws_files(500_000, DEMAND);
    let s = lahar::scenario::load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.jobs()[0].group.as_ref().map(|(g, _)| g.most), Some(500_000));
    // No group at the start: nothing to make groups from.
    let (dir, p) = lws_files(4, DEMAND);
    let f = dir.path().join("web.yaml");
    let text = std::fs::read_to_string(&f).unwrap().replacen("replicas: 1", "replicas: 0", 1);
    std::fs::write(&f, format!("{text}---\n{}", super::serving::WEB)).unwrap();
    let (w, _) = warnings(&p);
    assert!(
        w.contains(
            "no LeaderWorkerSet default/vllm with schedulerName volcano and a group at the start in these files"
        ),
        "{w}"
    );
}

/// A kthena ModelServing `chat` of one serving group of one role (an entry pod
/// and a worker, one GPU each), and an HPA on it as in [`lws_files`].
fn model_serving_files(services: &str) -> (tempfile::TempDir, PathBuf) {
    let manifests = "apiVersion: workload.serving.volcano.sh/v1alpha1
kind: ModelServing
metadata: {name: chat}
spec:
  replicas: 1
  template:
    roles:
      - name: leader
        replicas: 1
        workerReplicas: 1
        entryTemplate: {spec: {containers: [{name: e, resources: {requests: {cpu: '1', memory: 1Gi, nvidia.com/gpu: '1'}}}]}}
        workerTemplate: {spec: {containers: [{name: w, resources: {requests: {cpu: '1', memory: 1Gi, nvidia.com/gpu: '1'}}}]}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: chat}
spec:
  scaleTargetRef: {apiVersion: workload.serving.volcano.sh/v1alpha1, kind: ModelServing, name: chat}
  minReplicas: 1
  maxReplicas: 4
  metrics:
    - type: External
      external:
        metric: {name: requests}
        target: {type: AverageValue, averageValue: '10'}
";
    web_files(tempfile::tempdir().unwrap(), manifests, &services.replace("workload: vllm", "workload: chat"))
}

/// The LeaderWorkerSet's steps with a ModelServing: serving groups `chat-<i>`
/// (pods `chat-<i>-leader-0-0` and `-1`) made and deleted whole.
#[test]
fn an_autoscaled_model_serving_is_sized_in_serving_groups() {
    let (dir, p) = model_serving_files(DEMAND);
    let (out, scaling) = run(&dir, &p);
    assert_eq!(
        scaling,
        "t_s,autoscaler,target,from,to,proposed,reason
600,default/chat,ModelServing chat,1,4,4,external metric requests above target
2685,default/chat,ModelServing chat,4,1,1,All metrics below target
"
    );
    let mut jobs = job_rows(&std::fs::read_to_string(out.join("jobs.csv")).unwrap());
    jobs.sort();
    assert_eq!(
        jobs,
        [
            "chat-0,0,0,,Running",
            "chat-1,600,600,2685,Terminated",
            "chat-2,600,600,2685,Terminated",
            "chat-3,600,600,2685,Terminated"
        ]
    );
    let pods = std::fs::read_to_string(out.join("pods.csv")).unwrap();
    assert!(pods.contains(",default/chat-3-leader-0-0,") && pods.contains(",default/chat-3-leader-0-1,"), "{pods}");
    assert_eq!(service(&out)["unserved_requests"], 1_800.0);
}

/// A scale-down deletes a ModelServing's groups that do not serve first
/// (kthena's `scaleDownServingGroups`), where a LeaderWorkerSet deletes its
/// highest index: group 1, recreated at 2670 s after its entry pod was deleted,
/// is still starting at 2685 s when 25 req/s asks for 3 groups of the 4.
#[test]
fn a_model_serving_scale_down_deletes_groups_not_serving_first() {
    let demand = DEMAND.replace("{at: 40m, rate: 5}", "{at: 40m, rate: 25}");
    let timeline = "  timeline:\n    - {at: 2670s, deletePod: chat-1-leader-0-0}\n";
    let (dir, p) = model_serving_files(&format!("{demand}{timeline}"));
    let (out, scaling) = run(&dir, &p);
    assert!(scaling.contains("2685,default/chat,ModelServing chat,4,3,3,"), "{scaling}");
    let mut jobs = job_rows(&std::fs::read_to_string(out.join("jobs.csv")).unwrap());
    jobs.sort();
    let ended: Vec<&String> = jobs.iter().filter(|r| r.ends_with("Terminated")).collect();
    assert_eq!(ended, ["chat-1,600,600,2685,Terminated"], "{jobs:?}");
    // The LeaderWorkerSet under the same steps deletes group 3.
    let (dir, p) = lws_files(4, &format!("{demand}{}", timeline.replace("chat-1-leader-0-0", "vllm-1")));
    let (out, _) = run(&dir, &p);
    let jobs = job_rows(&std::fs::read_to_string(out.join("jobs.csv")).unwrap());
    let ended: Vec<&str> = jobs.iter().filter(|r| r.ends_with("Terminated")).map(|r| &r[..6]).collect();
    assert_eq!(ended, ["vllm-3"], "{jobs:?}");
}

/// The example runs from a clean clone: the HPA adds and removes whole
/// two-node groups over the day.
#[test]
fn the_lws_example_runs() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/serving-lws.yaml");
    let dir = tempfile::tempdir().unwrap();
    let (out, scaling) = run(&dir, &p);
    assert_eq!(
        scaling,
        "t_s,autoscaler,target,from,to,proposed,reason
28800,default/llama,LeaderWorkerSet llama,1,2,2,external metric vllm_requests_per_second above target
36000,default/llama,LeaderWorkerSet llama,2,3,3,external metric vllm_requests_per_second above target
57885,default/llama,LeaderWorkerSet llama,3,2,2,All metrics below target
72285,default/llama,LeaderWorkerSet llama,2,1,1,All metrics below target
"
    );
    // Each group two 8-GPU pods on two nodes: 16 GPUs a group.
    let svc = std::fs::read_to_string(out.join("services.csv")).unwrap();
    assert!(svc.lines().any(|l| l == "43200,llama,LeaderWorkerSet,52,60,52,3,0,0,3,48,,,"), "{svc}");
    assert_eq!(service(&out)["max_replicas"], 3);
}

/// kthena's own AutoscalingPolicy on the ModelServing of
/// [`model_serving_files`] (its HPA replaced): a Prometheus metric of 10 per
/// instance, tolerance 10%, 1 to 4 instances; scale-up 2 instances or 100% a
/// 15 s period, panic at 200% of the instances for 30 s with 200% a 5 s period;
/// scale-down 1 instance or 100% a 15 s period after a 60 s window.
const POLICY: &str = "apiVersion: workload.serving.volcano.sh/v1alpha1
kind: AutoscalingPolicy
metadata: {name: chat-policy}
spec:
  tolerancePercent: 10
  metrics:
    - {name: rps, targetValue: '10'}
  behavior:
    scaleDown: {period: 15s, stabilizationWindow: 60s, instances: 1, percent: 100, selectPolicy: Or}
    scaleUp:
      stablePolicy: {period: 15s, stabilizationWindow: 0s, instances: 2, percent: 100, selectPolicy: Or}
      panicPolicy: {period: 5s, percent: 200, panicThresholdPercent: 200, panicModeHold: 30s}
  homogeneousTarget:
    minReplicas: 1
    maxReplicas: 4
    target:
      targetRef: {kind: ModelServing, name: chat}
      metricSources:
        rps:
          prometheus: {serverURL: 'http://prom:9090', query: 'sum(rate(x[1m]))'}
";

/// By hand (syncs every 15 s from 0 s; [`DEMAND`]: 5, 35 from 600 s, 5 from 2400 s):
/// - until 585 s: 5 req/s → ceil(0.5) = 1, as now.
/// - 600 s: 35 → ceil(3.5) = 4, at least 200% of 1: panic mode until 630 s,
///   limited by the panic window's last count (1) + 200% = 3.
/// - 615 s: 35 over 3 → 4 (1.17, outside the tolerance), panic's limit 3 + 200%
///   = 9: 4.
/// - 2400 s: 5 → 1, but the 60 s window of recommendations holds the 4 of
///   2385 s until 2445 s; at 2460 s the limit from the period's corrected
///   counts (4) is `Or` of 4 − 1 and 4 − 100%, 0: down to 1, the highest
///   serving groups deleted (all serve).
///
/// Unserved, by hand: 5 × 60 (no group ready) + 25 × 60 (one of 4 needed) +
/// 5 × 15 (three, until group 3's start-up ends at 675 s) = 1,875.
#[test]
fn kthena_autoscaling_policy_sizes_a_model_serving() {
    let (dir, p) = model_serving_files(DEMAND);
    let f = dir.path().join("web.yaml");
    let text = std::fs::read_to_string(&f).unwrap();
    let ms = text.split("---\n").next().unwrap();
    std::fs::write(&f, format!("{ms}---\n{POLICY}")).unwrap();
    let (out, scaling) = run(&dir, &p);
    assert_eq!(
        scaling,
        "t_s,autoscaler,target,from,to,proposed,reason
600,default/chat-policy,ModelServing chat,1,3,4,kthena panic mode: metrics recommend 4
615,default/chat-policy,ModelServing chat,3,4,4,kthena panic mode: metrics recommend 4
2460,default/chat-policy,ModelServing chat,4,1,1,kthena stable mode: metrics recommend 1
"
    );
    let mut jobs = job_rows(&std::fs::read_to_string(out.join("jobs.csv")).unwrap());
    jobs.sort();
    assert_eq!(
        jobs,
        [
            "chat-0,0,0,,Running",
            "chat-1,600,600,2460,Terminated",
            "chat-2,600,600,2460,Terminated",
            "chat-3,615,615,2460,Terminated"
        ]
    );
    let s = service(&out);
    assert_eq!((s["offered_requests"].as_f64(), s["unserved_requests"].as_f64()), (Some(72_000.0), Some(1_875.0)));
}

/// The published AutoscalingPolicies read as kthena's webhook and CRD default
/// them: the serving-group policy sizes its ModelServing; the role-by-role
/// ones are left out with a warning, as is a second autoscaler of one
/// ModelServing; KEDA's published ScaledObject sizes its ModelServing.
#[test]
fn kthena_published_autoscaling_examples() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests/kthena");
    let load = |files: &[&str]| {
        let t = tempfile::tempdir().unwrap();
        let body: Vec<String> = files.iter().map(|f| std::fs::read_to_string(dir.join(f)).unwrap()).collect();
        std::fs::write(t.path().join("m.yaml"), body.join("\n---\n")).unwrap();
        let sc = scenario(
            "    nodes:\n      - {name: n0, cpu: 1000, memory: 8Ti, gpus: 16}\n",
            "  workload:\n    - manifests: m.yaml\n",
        );
        let s = lahar::scenario::load_str(&sc, "s.yaml", t.path()).unwrap_or_else(|e| panic!("{files:?}: {e}"));
        let w: Vec<String> = s.warnings.iter().map(|w| w.message.clone()).collect();
        (s.jobs(), w.join("\n"))
    };
    let (jobs, w) = load(&[
        "prometheus-autoscaler--podinfo-modelserving.yaml",
        "prometheus-autoscaler--servingGroup-autoscaler--autoscalerPolicy.yaml",
    ]);
    let (set, i) = jobs[0].group.clone().unwrap_or_else(|| panic!("no autoscaler: {w}"));
    assert_eq!((set.name.as_str(), i, set.replicas, set.most), ("podinfo-ms", 0, 1, 6));
    let lahar_core::model::job::GroupAutoscaler::Kthena(k) = &set.autoscaler else { panic!("{:?}", set.autoscaler) };
    use lahar_core::serving::kthena::{Panic, Select, Source, Stable};
    assert_eq!(
        (&*k.name, k.tolerance_percent, k.min_replicas, k.max_replicas),
        ("autoscale-demo/podinfo-prom-policy", 10, 1, 6)
    );
    assert_eq!(
        (k.metrics[0].name.as_str(), k.metrics[0].target_milli, k.metrics[0].source),
        ("podinfo_rps", 500, Some(Source::Prometheus))
    );
    assert_eq!(k.down, Stable { instances: 1, percent: 100, period_ms: 15_000, select: Select::Or, window_ms: 30_000 });
    assert_eq!(k.up, Stable { instances: 2, percent: 100, period_ms: 15_000, select: Select::Or, window_ms: 0 });
    assert_eq!(k.panic, Panic { percent: 200, period_ms: 5_000, threshold_percent: 200, hold_ms: 30_000 });
    // Group 5 as kthena names it.
    let fifth = set.group(5).unwrap();
    assert_eq!((fifth.name.as_str(), fifth.pod_name(0, 0)), ("podinfo-ms-5", "podinfo-ms-5-podinfo-0-0".to_string()));
    assert!(set.group(6).is_none(), "above maxReplicas");
    // kthena's role autoscaler (one role) and its P/D example (two roles
    // within a ratio), each on its ModelServing: room for every replica the
    // policy may ask of a role (podinfo up to 6; prefill 8, decode 16).
    for (ms, f, want) in [
        (
            "prometheus-autoscaler--podinfo-modelserving.yaml",
            "prometheus-autoscaler--role-autoscaler--autoscalerPolicy.yaml",
            vec![("podinfo", 1, 6)],
        ),
        (
            "prometheus-autoscaler--disaggregated-autoscaler--podinfo-disaggregated-modelserving.yaml",
            "prometheus-autoscaler--disaggregated-autoscaler--autoscalerPolicy.yaml",
            vec![("prefill", 1, 8), ("decode", 2, 16)],
        ),
    ] {
        let (jobs, w) = load(&[ms, f]);
        let (set, _) = jobs[0].group.clone().unwrap_or_else(|| panic!("{f}: no autoscaler: {w}"));
        let lahar_core::model::job::GroupAutoscaler::KthenaRoles(spec, layout) = &set.autoscaler else { panic!() };
        let got: Vec<(&str, u32, usize)> =
            layout.roles.iter().map(|r| (r.name.as_str(), r.replicas, r.slots.len())).collect();
        assert_eq!(got, want, "{f}");
        assert_eq!(jobs[0].total_replicas(), want.iter().map(|w| w.1).sum::<u32>(), "{f}: only the written pods");
        assert_eq!(spec.ratio.is_some(), want.len() == 2, "{f}");
    }
    // The P/D policy on a ModelServing without its roles: left out.
    let (jobs, w) = load(&[
        "prometheus-autoscaler--podinfo-modelserving.yaml",
        "prometheus-autoscaler--disaggregated-autoscaler--autoscalerPolicy.yaml",
    ]);
    assert!(jobs[0].group.is_none());
    assert!(w.contains("no ModelServing autoscale-demo/podinfo-pd-ms with schedulerName volcano"), "{w}");
    // Two autoscalers of one ModelServing: the policy after the HPA is left out.
    let (jobs, w) = load(&[
        "prometheus-autoscaler--podinfo-modelserving.yaml",
        "prometheus-autoscaler--servingGroup-autoscaler--autoscalerPolicy.yaml",
        "prometheus-autoscaler--servingGroup-autoscaler--autoscalerPolicy.yaml",
    ]);
    assert!(jobs[0].group.is_some());
    assert!(w.contains("another autoscaler scales ModelServing autoscale-demo/podinfo-ms too"), "{w}");
    let (jobs, w) = load(&["keda-autoscaling--modelserving.yaml", "keda-autoscaling--scaledobject.yaml"]);
    let (set, _) = jobs[0].group.clone().unwrap_or_else(|| panic!("no autoscaler: {w}"));
    let lahar_core::model::job::GroupAutoscaler::Hpa(h) = &set.autoscaler else { panic!() };
    assert_eq!((&*h.name, h.max_replicas, set.most), ("default/keda-hpa-modelserving-scaler", 5, 5));
}

/// The kthena example runs from a clean clone. The first burst, by hand (syncs
/// every 15 s; 60 req/s from 1800 s to 2400 s, 8 otherwise; 10 a group):
/// - 1800 s: 6 recommended, 600% of 1: panic mode; the panic period's smallest
///   count (1) + 300% = 4.
/// - 1830 s: the 1 of 1800 s has left the 15 s panic period: 4 + 300% → 6.
/// - 2580 s: 1 recommended, the 3-minute window's last 6 (2385 s) gone; the
///   30 s period's largest count 6, less `Or` of 1 instance and 50%: 3; then 2
///   at 2625 s and 1 at 2670 s as each count leaves the period.
#[test]
fn the_kthena_example_runs() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/serving-kthena.yaml");
    let dir = tempfile::tempdir().unwrap();
    let (out, scaling) = run(&dir, &p);
    let first: Vec<&str> = scaling.lines().skip(1).take(5).collect();
    assert_eq!(
        first,
        [
            "1800,default/qwen-policy,ModelServing qwen,1,4,6,kthena panic mode: metrics recommend 6",
            "1830,default/qwen-policy,ModelServing qwen,4,6,6,kthena panic mode: metrics recommend 6",
            "2580,default/qwen-policy,ModelServing qwen,6,3,1,kthena stable mode: metrics recommend 1",
            "2625,default/qwen-policy,ModelServing qwen,3,2,1,kthena stable mode: metrics recommend 1",
            "2670,default/qwen-policy,ModelServing qwen,2,1,1,kthena stable mode: metrics recommend 1",
        ],
        "{scaling}"
    );
    // Three bursts, the same each time.
    assert_eq!(scaling.lines().count(), 1 + 15, "{scaling}");
    assert_eq!(service(&out)["max_replicas"], 6);
}

/// Bad AutoscalingPolicies are refused where they are wrong, as kthena's CRD
/// and validating webhook refuse them.
#[test]
fn kthena_policy_bad_input_is_located() {
    let cases: [(&str, &str, &str); 7] = [
        ("tolerancePercent: 10", "tolerancePercent: 101", "spec.tolerancePercent: at most 100"),
        (
            "- {name: rps, targetValue: '10'}",
            "- {name: rps, targetValue: '10'}\n    - {name: rps, targetValue: '5'}",
            "duplicate metric name rps is not allowed",
        ),
        (
            "period: 15s, stabilizationWindow: 60s",
            "period: 31m, stabilizationWindow: 60s",
            "spec.behavior.scaleDown.period: must be between 0 and 30 minutes, got 31m",
        ),
        ("{period: 5s, percent: 200,", "{percent: 200,", "spec.behavior.scaleUp.panicPolicy.period: required"),
        (
            "      stablePolicy:",
            "      fooPolicy: {}\n      stablePolicy:",
            "spec.behavior.scaleUp.fooPolicy: unknown field",
        ),
        (
            "{kind: ModelServing, name: chat}",
            "{kind: Deployment, name: chat}",
            "targetRef.kind must be ModelServing, but got Deployment",
        ),
        ("    maxReplicas: 4", "    maxReplicas: 0", "spec.homogeneousTarget.maxReplicas"),
    ];
    for (from, to, want) in cases {
        let (dir, p) = model_serving_files(DEMAND);
        let f = dir.path().join("web.yaml");
        let text = std::fs::read_to_string(&f).unwrap();
        let ms = text.split("---\n").next().unwrap();
        assert!(POLICY.contains(from), "{from}");
        std::fs::write(&f, format!("{ms}---\n{}", POLICY.replacen(from, to, 1))).unwrap();
        let out = lahar().arg("validate").arg(&p).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(want), "{to}: {err}");
        assert!(err.contains("web.yaml:"), "the file is named: {err}");
    }
}
