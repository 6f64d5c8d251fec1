//! Ray Serve on KubeRay (issue 45, item 2: "Ray Serve's autoscaling where their
//! manifests specify them"): a RayService's Serve deployment sized by Serve's
//! controller from its ongoing requests, its replicas actors on the cluster's
//! pods, and KubeRay's in-tree autoscaler adding and removing worker pods.
//! Every decision below is checked by hand against Ray 2.60's policy.

use super::serving::run_scaling;
use super::*;

/// One worker group of 2-GPU pods (min 0, max 4, starting with 1), a head
/// with `num-cpus: 0` (no replica there), one deployment of 1-GPU replicas:
/// target 2 ongoing requests, `max_ongoing_requests` 5, min 1, max 8.
const SERVICE: &str = "apiVersion: ray.io/v1
kind: RayService
metadata:
  name: llm
  annotations: {lahar.io/duration: 2h}
spec:
  serveConfigV2: |
    applications:
      - name: chat
        import_path: chat:app
        deployments:
          - name: Model
            max_ongoing_requests: 5
            autoscaling_config: {min_replicas: 1, max_replicas: 8, target_ongoing_requests: 2}
            ray_actor_options: {num_gpus: 1, num_cpus: 1}
  rayClusterConfig:
    enableInTreeAutoscaling: true
    headGroupSpec:
      rayStartParams: {num-cpus: '0'}
      template: {spec: {containers: [{name: h, resources: {requests: {cpu: '2', memory: 4Gi}}}]}}
    workerGroupSpecs:
      - groupName: gpu
        replicas: 1
        minReplicas: 0
        maxReplicas: 4
        template: {spec: {containers: [{name: w, resources: {requests: {cpu: '4', memory: 16Gi}, limits: {nvidia.com/gpu: 2}}}]}}
";

fn files(service: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("svc.yaml"), service).unwrap();
    let scenario = "apiVersion: lahar.io/v1alpha1
kind: Scenario
metadata: {name: ray-serve}
spec:
  seed: 1
  horizon: 2h
  cluster:
    nodes:
      - {name: n0, cpu: '32', memory: 256Gi, gpus: 8, gpuModel: A100}
      - {name: n1, cpu: '32', memory: 256Gi, gpus: 8, gpuModel: A100}
  output: {sampleInterval: 1m}
  workload:
    - manifests: svc.yaml
  services:
    - workload: llm
      demand: {steps: [{at: 0s, rate: 10}, {at: 10m, rate: 40}, {at: 40m, rate: 5}]}
      capacity: 5
      startup: 60s
";
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, scenario).unwrap();
    (dir, p)
}

/// Demand 10 req/s, each replica serving 5 req/s at 5 in flight: 10 requests
/// ongoing (Little's law), 5 replicas at 2 each.
/// - 0 s: the first replica (the minimum) is placed on the worker, ready at
///   60 s. Nothing runs before: no cold start (the target is already 1).
/// - 60 s: one runs, 5 wanted from this tick; `upscale_delay_s` 30 → at 90 s
///   1 → 5. One new replica fits the worker's free GPU; three wait, and the
///   autoscaler (on its 5 s grid) adds two 2-GPU workers: 1 → 3.
/// - 600 s: demand 40. The pushes every 10 s average the last 30 s: 10 at
///   600 s (no change), 20 at 610 s (10 wanted: up from 610 s), 30, 40; at
///   640 s 40 ongoing propose 20, bounded to 8. One fits, two wait: 3 → 4.
/// - 2400 s: demand 5. The push at 2410 s still averages 28.3 (up), 2420 s
///   16.7 (up), 2430 s 5: 3 wanted, down from 2430 s; `downscale_delay_s`
///   600 → at 3030 s 8 → 3. Serve stops running replicas node by node (the
///   workers hold 2 each: the first two pods' four, then the third's newest),
///   so two workers are idle from 3030 s and go after 60 s: 4 → 2 at 3090 s.
#[test]
fn serve_and_kuberay_scale_step_by_step() {
    let (dir, p) = files(SERVICE);
    let out = dir.path().join("out");
    assert_eq!(
        run_scaling(&p, &out),
        "t_s,autoscaler,target,from,to,proposed,reason
90,ray-serve:chat/Model,RayService llm,1,5,5,ongoing requests above target
90,ray-autoscaler:gpu,RayService llm,1,3,3,3 Serve replica(s) wait for room
640,ray-serve:chat/Model,RayService llm,5,8,20,ongoing requests above target
640,ray-autoscaler:gpu,RayService llm,3,4,4,2 Serve replica(s) wait for room
3030,ray-serve:chat/Model,RayService llm,8,3,3,ongoing requests below target
3090,ray-autoscaler:gpu,RayService llm,4,2,2,idle for 60s
"
    );
    let mut rd = csv::Reader::from_path(out.join("services.csv")).unwrap();
    let h = rd.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|x| x == n).unwrap();
    let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    let at = |t: &str| rows.iter().find(|r| &r[col("t_s")] == t).unwrap_or_else(|| panic!("a sample at {t}"));
    let pick = |t: &str| {
        let r = at(t);
        ["capacity_rps", "replicas", "pending", "starting", "ready", "gpus"].map(|c| r[col(c)].to_string())
    };
    // At 120 s: 5 wanted, 1 ready, 4 starting (placed at 90 s, ready at
    // 150 s... the three on new workers once those run), 3 workers' 6 GPUs.
    assert_eq!(pick("120"), ["5", "5", "0", "4", "1", "6"].map(String::from));
    assert_eq!(pick("1200"), ["40", "8", "0", "0", "8", "8"].map(String::from));
    assert_eq!(pick("3600"), ["15", "3", "0", "0", "3", "4"].map(String::from));
}

/// Without in-tree autoscaling the cluster keeps its one worker: Serve still
/// asks for 5, and the replicas with no room wait (pending) for good.
#[test]
fn without_the_autoscaler_replicas_wait_for_room() {
    let (dir, p) = files(&SERVICE.replace("enableInTreeAutoscaling: true", "enableInTreeAutoscaling: false"));
    let out = dir.path().join("out");
    let scaling = run_scaling(&p, &out);
    assert!(!scaling.contains("ray-autoscaler"), "{scaling}");
    assert!(scaling.contains("90,ray-serve:chat/Model,RayService llm,1,5,5,"), "{scaling}");
    let services = std::fs::read_to_string(out.join("services.csv")).unwrap();
    // 20 min: 8 wanted, 2 ready on the worker's 2 GPUs, 6 waiting; 10 req/s served.
    assert!(services.contains("\n1200,llm,RayService,40,10,10,8,6,0,2,2,"), "{services}");
}

/// Two GPU deployments, Model autoscaled and Draft of one replica: Model
/// serves by default (the only one autoscaled), and the service may name the
/// one that serves (`deployment`), by `application/deployment` or by the
/// deployment alone. When none follows (both autoscaled), naming one that is
/// not there, or naming one for a workload that is not a RayService, the run
/// is refused before it starts (exit 2).
#[test]
fn the_serving_deployment_is_named_or_refused() {
    let two = SERVICE.replace(
        "            ray_actor_options: {num_gpus: 1, num_cpus: 1}\n",
        "            ray_actor_options: {num_gpus: 1, num_cpus: 1}\n          - name: Draft\n            num_replicas: 1\n            ray_actor_options: {num_gpus: 1}\n",
    );
    let (dir, p) = files(&two);
    let text = std::fs::read_to_string(&p).unwrap();
    let run = |extra: &str| {
        std::fs::write(&p, text.replace("      startup: 60s\n", &format!("      startup: 60s\n{extra}"))).unwrap();
        let out = lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(dir.path().join("out")).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).to_string())
    };
    for name in ["", "      deployment: chat/Model\n", "      deployment: Model\n"] {
        let (code, err) = run(name);
        assert_eq!(code, Some(0), "{err}");
        let scaling = std::fs::read_to_string(dir.path().join("out/scaling.csv")).unwrap();
        assert!(scaling.contains("\n90,ray-serve:chat/Model,RayService llm,1,5,5,"), "{scaling}");
    }
    // Draft serves: its one replica, never scaled (Model keeps its 1).
    let (code, err) = run("      deployment: Draft\n");
    assert_eq!(code, Some(0), "{err}");
    let services = std::fs::read_to_string(dir.path().join("out/services.csv")).unwrap();
    assert!(services.contains("\n1200,llm,RayService,40,5,5,1,0,0,1,2,"), "{services}");
    let (code, err) = run("      deployment: chat/Nope\n");
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("s.yaml:19:19: spec.services[0].deployment: RayService default/llm: expected one of its Serve deployments (chat/Model, chat/Draft), got `chat/Nope`"),
        "{err}"
    );
    // Both autoscaled: none follows.
    std::fs::write(dir.path().join("svc.yaml"), two.replace("num_replicas: 1\n", "num_replicas: auto\n")).unwrap();
    let (code, err) = run("");
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("s.yaml: spec.services[0].deployment: RayService default/llm has several Serve deployments (chat/Model, chat/Draft), none the only one asking for GPUs or autoscaled: name the one whose replicas serve the demand"),
        "{err}"
    );
    // Not a RayService.
    let dep = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: llm}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: llm}}\n  template:\n    metadata: {labels: {app: llm}}\n    spec: {schedulerName: volcano, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n";
    std::fs::write(dir.path().join("svc.yaml"), dep).unwrap();
    let (code, err) = run("      deployment: Model\n");
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "spec.services[0].deployment: default/llm is a Deployment, not a RayService with Serve deployments"
        ),
        "{err}"
    );
}

/// A worker group of two hosts a replica is not resized (Ray's autoscaler adds
/// and removes such replicas whole; lahar does not): a located warning, and
/// the group keeps its two pods while Serve's replicas wait for room.
#[test]
fn a_multi_host_group_keeps_its_workers() {
    let (dir, p) = files(&SERVICE.replace("        replicas: 1\n", "        replicas: 1\n        numOfHosts: 2\n"));
    let out = dir.path().join("out");
    let run = lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&out).assert().success();
    let err = String::from_utf8_lossy(&run.get_output().stderr).to_string();
    assert!(
        err.contains("svc.yaml:24:21: document 1: spec.rayClusterConfig.workerGroupSpecs[0].numOfHosts: 1 part of objects left out, the first: RayService default/llm: worker group gpu has 2 hosts a replica"),
        "{err}"
    );
    let scaling = std::fs::read_to_string(out.join("scaling.csv")).unwrap();
    assert!(!scaling.contains("ray-autoscaler"), "{scaling}");
    let services = std::fs::read_to_string(out.join("services.csv")).unwrap();
    // 20 min: 8 wanted, 4 ready on the two hosts' 4 GPUs, 4 waiting.
    assert!(services.contains("\n1200,llm,RayService,40,20,20,8,4,0,4,4,"), "{services}");
}

/// `autoscalerOptions.version: v2`: a worker group's own `idleTimeoutSeconds`
/// applies (120 s: the idle workers go at 3150 s, not 3090 s); under v1 it
/// does not. Another version is an error at its place.
#[test]
fn autoscaler_v2_reads_the_groups_idle_timeout() {
    let with = |version: &str| {
        SERVICE
            .replace(
                "    enableInTreeAutoscaling: true\n",
                &format!("    enableInTreeAutoscaling: true\n    autoscalerOptions: {{version: {version}}}\n"),
            )
            .replace("        maxReplicas: 4\n", "        maxReplicas: 4\n        idleTimeoutSeconds: 120\n")
    };
    for (version, row) in [
        ("v2", "3150,ray-autoscaler:gpu,RayService llm,4,2,2,idle for 120s"),
        ("v1", "3090,ray-autoscaler:gpu,RayService llm,4,2,2,idle for 60s"),
    ] {
        let (dir, p) = files(&with(version));
        let scaling = run_scaling(&p, &dir.path().join("out"));
        assert!(scaling.contains(row), "{version}: {scaling}");
        assert!(scaling.contains("\n90,ray-autoscaler:gpu,RayService llm,1,3,3,"), "{version}: {scaling}");
    }
    let (dir, p) = files(&with("v3"));
    let out = lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(dir.path().join("out")).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("spec.rayClusterConfig.autoscalerOptions.version: expected `v1` or `v2`, got `v3`"), "{err}");
}
