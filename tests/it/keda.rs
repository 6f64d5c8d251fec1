//! KEDA's ScaledObject (issue 45, item 2): the HPA it makes and KEDA's own loop
//! to and from zero, step by step by hand; every bad input through the binary;
//! what lahar cannot follow left out with a warning.

use super::serving::{WEB, web_files};
use super::*;

/// A Deployment `web` of one-GPU pods (1 replica as written) and a ScaledObject
/// on it: a Prometheus trigger, 10 requests/s per replica, active above 2,
/// 0 to 6 replicas, polled every 30 s, cooling down 120 s; `so_extra` continues
/// its `spec`, `more` follows it in the file.
fn files(so_extra: &str, more: &str, services: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let manifests = format!(
        "{WEB}---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {{name: web}}
spec:
  scaleTargetRef: {{name: web}}
  pollingInterval: 30
  cooldownPeriod: 120
  maxReplicaCount: 6
  triggers:
    - type: prometheus
      metadata: {{serverAddress: 'http://prom:9090', query: 'sum(rate(x[1m]))', threshold: '10', activationThreshold: '2'}}
{so_extra}{more}"
    );
    web_files(dir, &manifests, services)
}

const DEMAND: &str = "  services:
    - workload: web
      demand:
        steps: [{at: 0s, rate: 0}, {at: 10m, rate: 25}, {at: 30m, rate: 1}]
      capacity: 10
      startup: 60s
";

/// Step by step (KEDA polls every 30 s from t = 0, before the HPA it made,
/// which syncs every 15 s):
/// - 0 s: 0 requests/s is not above the activation threshold (2): inactive,
///   with replicas above `minReplicaCount` (0) and never active: past the
///   initial cooldown (0 s), KEDA sets the Deployment to 0. The HPA
///   (`keda-hpa-web`, minReplicas 1) then finds 0 replicas: scaling disabled.
/// - 600 s: 25 requests/s: active at 0 replicas → KEDA sets 1; the HPA, in the
///   same instant after it: an External AverageValue metric, 25 / (10 × 1) =
///   2.5 → ceil(25 / 10) = 3 (within max(2 × 1, 4)).
/// - 615 s on: 25 / 30 = 0.83 is outside the tolerance but ceil(2.5) = 3: no change.
/// - 1800 s: 1 request/s, inactive; last active at the 1770 s poll. The HPA
///   would go to 1 but keeps 3 for its 300 s downscale window; KEDA's cooldown
///   (120 s) ends first: at 1890 s it sets 0.
#[test]
fn keda_scale_decisions_step_by_step() {
    let (dir, p) = files("", "", DEMAND);
    let (out, scaling) = run(&dir, &p);
    assert_eq!(
        scaling,
        "t_s,autoscaler,target,from,to,proposed,reason
0,default/web,Deployment web,1,0,-1,KEDAScaleTargetDeactivated: to minReplicaCount
600,default/web,Deployment web,0,1,-1,KEDAScaleTargetActivated: triggered by s0-prometheus
600,default/keda-hpa-web,Deployment web,1,3,3,external metric s0-prometheus above target
1890,default/web,Deployment web,3,0,-1,KEDAScaleTargetDeactivated: to minReplicaCount
"
    );
    // Served, by hand: offered 25 × 1200 + 1 × 1800 = 31,800; unserved 25 × 60
    // (no pod ready before 660 s) + 1 × 1710 (none after 1890 s) = 3,210.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let s = &summary["metrics"]["services"][0];
    assert_eq!(s["offered_requests"], 31_800.0);
    assert_eq!(s["unserved_requests"], 3_210.0);
    assert_eq!((s["scale_ups"].as_u64(), s["scale_downs"].as_u64()), (Some(2), Some(2)));
    // Held at zero replicas until 600 s, it asked for no pods: its wait counts
    // from KEDA's scale-up, and its first pod ran at once.
    let jobs = std::fs::read_to_string(out.join("jobs.csv")).unwrap();
    // Back at zero replicas at the end: Pending, as a workload without pods is.
    assert_eq!(job_rows(&jobs), ["web,0,600,,Pending"], "{jobs}");
    let wait = jobs.lines().nth(1).unwrap().split(',').nth(9).unwrap().to_string();
    assert_eq!(wait, "0", "{jobs}");
    assert_eq!(summary["metrics"]["wait_s"]["max"], 0.0);
    // The pod written in the Deployment was deleted at 0 s before it ran; three
    // made at 600 s ran until 1890 s.
    let pods = std::fs::read_to_string(out.join("pods.csv")).unwrap();
    let rows: Vec<Vec<&str>> = pods.lines().skip(1).map(|l| l.split(',').collect()).collect();
    let ran: Vec<(&str, &str)> = rows.iter().filter(|r| !r[6].is_empty()).map(|r| (r[6], r[7])).collect();
    assert_eq!(ran, [("600", "1890"); 3], "{pods}");
}

/// `minReplicaCount` above 0 is the HPA's minimum and KEDA's floor: it never
/// goes to zero, and a paused direction is a Disabled HPA policy.
#[test]
fn keda_minimum_and_paused_scale_in() {
    let (dir, p) = files("  minReplicaCount: 2\n", "", DEMAND);
    let (_, scaling) = run(&dir, &p);
    // 0 s: inactive below `minReplicaCount` without an idle count: KEDA raises
    // the written 1 to 2; 600 s: the HPA, 3; 2085 s: the last recommendation of
    // 3 (the 1785 s sync) is one downscale window old, so the HPA's proposal of
    // 1 holds — bounded by its minReplicas, 2 (not below).
    assert_eq!(
        scaling,
        "t_s,autoscaler,target,from,to,proposed,reason
0,default/web,Deployment web,1,2,-1,ScaleTarget set to minReplicaCount
600,default/keda-hpa-web,Deployment web,2,3,3,external metric s0-prometheus above target
2085,default/keda-hpa-web,Deployment web,3,2,1,All metrics below target
"
    );
    let (dir, p) = files("", "", DEMAND);
    annotate(&dir, "autoscaling.keda.sh/paused-scale-in: 'true'");
    let (_, scaling) = run(&dir, &p);
    // Never to zero (the written replica stays until activity), never down.
    assert_eq!(
        scaling,
        "t_s,autoscaler,target,from,to,proposed,reason
600,default/keda-hpa-web,Deployment web,1,3,3,external metric s0-prometheus above target
"
    );
}

#[test]
fn keda_bad_input_is_located() {
    let cases: [(&str, &str); 8] = [
        (
            "  advanced: {horizontalPodAutoscalerConfig: {behavior: {scaleUp: {selectPolicy: Fastest}}}}\n",
            "spec.advanced.horizontalPodAutoscalerConfig.behavior.scaleUp.selectPolicy: expected Max, Min or Disabled",
        ),
        ("  minReplicaCount: 9\n", "spec.minReplicaCount: MinReplicaCount=9 must be less than MaxReplicaCount=6"),
        ("  minReplicaCount: 1\n  idleReplicaCount: 1\n", "IdleReplicaCount=1 must be less than MinReplicaCount=1"),
        ("  pollingIntervall: 10\n", "spec.pollingIntervall: unknown field"),
        ("  initialCooldownPeriod: -5\n", "spec.initialCooldownPeriod"),
        (
            "    - type: prometheus\n      metadata: {query: q}\n",
            "spec.triggers[1].metadata.threshold: required by the prometheus scaler",
        ),
        (
            "    - type: prometheus\n      metricType: Utilization\n      metadata: {threshold: '3'}\n",
            "spec.triggers[1].metricType: expected AverageValue or Value",
        ),
        (
            "    - type: kafka\n      metadata: {lagThreshold: lots}\n",
            "spec.triggers[1].metadata.lagThreshold: expected a quantity",
        ),
    ];
    for (extra, want) in cases {
        // A trigger continues the list; anything else is a field of `spec`.
        let (so, more) = if extra.starts_with("    -") {
            (extra.to_string(), String::new())
        } else {
            (String::new(), extra.to_string())
        };
        let (_dir, p) = files(&so, &more, DEMAND);
        let out = lahar().arg("validate").arg(&p).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(want), "{extra}: {err}");
        assert!(err.contains("web.yaml:"), "the file is named: {err}");
    }
    let (dir, p) = files("", "", DEMAND);
    annotate(&dir, "autoscaling.keda.sh/paused-replicas: many");
    let out = lahar().arg("validate").arg(&p).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("autoscaling.keda.sh/paused-replicas: expected a replica count"), "{err}");
}

/// Runs the scenario `p` into `dir`/out: the output directory and scaling.csv.
pub(super) fn run(dir: &tempfile::TempDir, p: &Path) -> (PathBuf, String) {
    let out = dir.path().join("out");
    lahar().args(["run", "-q"]).arg(p).arg("--out").arg(&out).assert().success();
    let scaling = std::fs::read_to_string(out.join("scaling.csv")).unwrap();
    (out, scaling)
}

/// Gives the ScaledObject of `files` the annotation `ann` (`key: value`).
fn annotate(dir: &tempfile::TempDir, ann: &str) {
    let f = dir.path().join("web.yaml");
    let text = std::fs::read_to_string(&f).unwrap().replace(
        "metadata: {name: web}\nspec:\n  scaleTargetRef",
        &format!("metadata: {{name: web, annotations: {{{ann}}}}}\nspec:\n  scaleTargetRef"),
    );
    std::fs::write(f, text).unwrap();
}

/// What lahar cannot follow is left out with a warning, never silently.
#[test]
fn keda_left_out_with_a_warning() {
    let warnings = |so: &str, more: &str| {
        let (_dir, p) = files(so, more, DEMAND);
        let s = lahar::scenario::load_file(&p).unwrap_or_else(|e| panic!("{e}"));
        s.warnings.iter().map(|w| format!("{}: {}", w.kind, w.message)).collect::<Vec<_>>().join("\n")
    };
    let w = warnings("    - type: cpu\n      metricType: Utilization\n      metadata: {value: '60'}\n", "");
    assert!(w.contains("ScaledObject default/web: a cpu trigger (a Resource metric of `cpu` use"), "{w}");
    let w = warnings("    - type: kubernetes-workload\n      metadata: {podSelector: 'app=x', value: '2'}\n", "");
    assert!(w.contains("a `kubernetes-workload` trigger is left out"), "{w}");
    let w = warnings("", "  fallback: {failureThreshold: 3, replicas: 6}\n");
    assert!(w.contains("fallback (the replicas KEDA sets once its scalers keep failing"), "{w}");
    let w = warnings("", "  advanced: {scalingModifiers: {formula: 's0 * 2', target: '4'}}\n");
    assert!(w.contains("scalingModifiers (a formula over the triggers) is not modelled"), "{w}");
    // An HPA on the same Deployment: Kubernetes scales neither.
    let hpa = "---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 4
  metrics: [{type: External, external: {metric: {name: q}, target: {type: Value, value: '5'}}}]
";
    let w = warnings("", hpa);
    assert!(
        w.contains("ScaledObject default/web: another HPA or ScaledObject scales Deployment default/web too"),
        "{w}"
    );
    assert!(w.contains("2 parts of objects left out"), "both are left out: {w}");
    // Paused: the replicas stay as written.
    let (dir, p) = files("", "", DEMAND);
    annotate(&dir, "autoscaling.keda.sh/paused: 'true'");
    let s = lahar::scenario::load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    assert!(s.warnings.iter().any(|w| w.message.contains("ScaledObject default/web is paused")), "{:?}", s.warnings);
}

/// A `cron` trigger: KEDA's next-start/next-end rule on the simulated clock
/// (UTC from `spec.startTime`, here 0), its metric `desiredReplicas` within the
/// window and 0 outside, averaged over the replicas at a target of 1.
/// - 0 s: next start 600 s (minute 10), next end 2400 s (minute 40): outside;
///   the Prometheus trigger reads 0: inactive → KEDA sets 0.
/// - 600 s: next start 4200 s, next end 2400 s: within → KEDA sets 1; the HPA
///   (4 / 1 = 4 → ceil 4, within max(2, 4)) sets 4.
/// - 2400 s: outside; last active at the 2370 s poll, cooldown 120 s → at
///   2490 s KEDA sets 0 (the HPA would keep 4 until 2700 s).
#[test]
fn keda_cron_trigger_windows() {
    let cron = "    - type: cron\n      metadata: {timezone: Etc/UTC, start: 10 * * * *, end: 40 * * * *, desiredReplicas: '4'}\n";
    let zero = "  services:\n    - workload: web\n      demand: {constant: 0}\n      capacity: 10\n";
    let (dir, p) = files(cron, "", zero);
    let (_, scaling) = run(&dir, &p);
    assert_eq!(
        scaling,
        "t_s,autoscaler,target,from,to,proposed,reason
0,default/web,Deployment web,1,0,-1,KEDAScaleTargetDeactivated: to minReplicaCount
600,default/web,Deployment web,0,1,-1,KEDAScaleTargetActivated: triggered by s1-cron-Etc-UTC-10xxxx-40xxxx
600,default/keda-hpa-web,Deployment web,1,4,4,external metric s1-cron-Etc-UTC-10xxxx-40xxxx above target
2490,default/web,Deployment web,4,0,-1,KEDAScaleTargetDeactivated: to minReplicaCount
"
    );
    // Its metadata checked as KEDA checks it.
    for (meta, want) in [
        (
            "{timezone: UTC, start: 0 8 * * *, end: 0 8 * * *, desiredReplicas: '4'}",
            "start and end can not have exactly same time input",
        ),
        (
            "{timezone: UTC, start: 0 8 * * *, end: 0 18 * * *, desiredReplicas: '0'}",
            "metadata.desiredReplicas: expected a replica count ≥ 1",
        ),
        (
            "{timezone: Mars/Olympus, start: 0 8 * * *, end: 0 18 * * *, desiredReplicas: '2'}",
            "metadata.timezone: unknown time zone",
        ),
        (
            "{timezone: UTC, start: '@hourly', end: 0 18 * * *, desiredReplicas: '2'}",
            "metadata.start: expected five cron fields",
        ),
        (
            "{timezone: UTC, start: 0 25 * * *, end: 0 18 * * *, desiredReplicas: '2'}",
            "metadata.start: error parsing start schedule",
        ),
        (
            "{start: 0 8 * * *, end: 0 18 * * *, desiredReplicas: '2'}",
            "spec.triggers[1].metadata.timezone: required by the cron scaler",
        ),
    ] {
        let (_dir, p) = files(&format!("    - type: cron\n      metadata: {meta}\n"), "", zero);
        let out = lahar().arg("validate").arg(&p).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(want), "{meta}: {err}");
    }
}

/// `advanced.horizontalPodAutoscalerConfig` names the HPA and gives its
/// behavior: a scale-up of at most one pod per minute.
#[test]
fn keda_advanced_hpa_config() {
    let advanced = "  advanced:
    horizontalPodAutoscalerConfig:
      name: web-hpa
      behavior: {scaleUp: {policies: [{type: Pods, value: 1, periodSeconds: 60}]}}
";
    let (dir, p) = files("", advanced, DEMAND);
    let (_, scaling) = run(&dir, &p);
    // 600 s: KEDA 0 → 1, the HPA one pod a minute: 2 at 600 s, 3 at 660 s.
    let hpa: Vec<&str> = scaling.lines().filter(|l| l.contains("default/web-hpa")).collect();
    assert_eq!(
        hpa,
        [
            "600,default/web-hpa,Deployment web,1,2,3,external metric s0-prometheus above target",
            "660,default/web-hpa,Deployment web,2,3,3,external metric s0-prometheus above target",
        ],
        "{scaling}"
    );
}

/// `autoscaling.keda.sh/paused-replicas: N` holds the target at N.
#[test]
fn keda_paused_replicas_hold_the_target() {
    let (dir, p) = files("", "", DEMAND);
    annotate(&dir, "autoscaling.keda.sh/paused-replicas: '4'");
    let (_, scaling) = run(&dir, &p);
    assert_eq!(
        scaling,
        "t_s,autoscaler,target,from,to,proposed,reason
0,default/keda-hpa-web,Deployment web,1,4,-1,Current number of replicas below Spec.MinReplicas
"
    );
}

/// The example runs from a clean clone: KEDA takes the service to zero at night.
#[test]
fn the_keda_example_runs() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/serving-keda.yaml");
    let dir = tempfile::tempdir().unwrap();
    lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(dir.path()).assert().success();
    let scaling = std::fs::read_to_string(dir.path().join("scaling.csv")).unwrap();
    let keda: Vec<&str> = scaling.lines().filter(|l| l.contains(",default/summarize,")).collect();
    assert_eq!(
        keda,
        [
            "0,default/summarize,Deployment summarize,1,0,-1,KEDAScaleTargetDeactivated: to minReplicaCount",
            "25200,default/summarize,Deployment summarize,0,1,-1,KEDAScaleTargetActivated: triggered by s0-prometheus",
            "68670,default/summarize,Deployment summarize,1,0,-1,KEDAScaleTargetDeactivated: to minReplicaCount",
        ],
        "{scaling}"
    );
    // Held at zero until 07:00, the service did not wait (a headline queueing
    // delay of 7 h before the rule of `Job::asked_at`).
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["metrics"]["wait_s"]["max"], 0.0);
}

/// KEDA's own sample ScaledObject (kedacore/keda `config/samples`, commit
/// 8b4f083) loads as written, its example trigger left out with a warning; a
/// ScaledJob is skipped when another scheduler runs its Jobs and refused when
/// Volcano would.
#[test]
fn keda_published_samples() {
    let dir = tempfile::tempdir().unwrap();
    let sample = "apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: example-scaledobject
spec:
  scaleTargetRef:
    name: example-deployment
  pollingInterval: 30
  cooldownPeriod: 300
  minReplicaCount: 0
  maxReplicaCount: 100
  triggers:
    - type: example-trigger
      metadata:
        property: example-property
";
    let deployment = WEB.replace("name: web", "name: example-deployment");
    let job = |scheduler: &str| {
        format!(
            "---
apiVersion: keda.sh/v1alpha1
kind: ScaledJob
metadata: {{name: scaledjob-sample}}
spec:
  jobTargetRef:
    parallelism: 1
    template:
      spec:
        schedulerName: {scheduler}
        containers: [{{name: c, image: busybox}}]
  pollingInterval: 30
  triggers: [{{type: example-trigger, metadata: {{property: example-property}}}}]
"
        )
    };
    let (dir, p) = web_files(dir, &format!("{deployment}---\n{sample}{}", job("default-scheduler")), "");
    let s = lahar::scenario::load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    let w: Vec<String> = s.warnings.iter().map(|w| format!("{}: {}", w.kind, w.message)).collect();
    assert!(w.iter().any(|w| w.contains("a `example-trigger` trigger is left out")), "{w:?}");
    assert!(w.iter().any(|w| w.contains("ScaledJob")), "the ScaledJob is counted: {w:?}");
    std::fs::write(dir.path().join("web.yaml"), format!("{deployment}{}", job("volcano"))).unwrap();
    let out = lahar().arg("validate").arg(&p).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("a KEDA ScaledJob of schedulerName `volcano` is not simulated"), "{err}");
}
