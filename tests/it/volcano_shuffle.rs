//! The `shuffle` action with its victim plugins: `pdb` (Volcano's pdb_test.go
//! replayed, with budgets whose status lahar computes from the pods; budgets over
//! several sessions; PodDisruptionBudget input through the binary) and
//! `rescheduling` (lowNodeUtilization over sessions, computed by hand).

use super::volcano::{Out, run_file};

/// Two Running pods `default/test-pod1` and `-2` of 1 cpu on a 2-cpu node, each
/// labelled `volcano.sh/job-name: job-1` (pdb_test.go's tasks), and `extra`. They
/// name their controller (`ownerReferences`), which re-creates an evicted pod; a
/// bare Pod would be gone for good.
fn pods(extra: &str) -> String {
    let pod = |n: u32| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: test-pod{n}\n  namespace: default\n  labels: {{volcano.sh/job-name: job-1}}\n  annotations: {{lahar.io/duration: 1h}}\n  ownerReferences: [{{apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: job-1, uid: u1}}]\nspec:\n  nodeName: n1\n  containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]\nstatus: {{phase: Running}}\n---\n"
        )
    };
    format!("{}{}{extra}", pod(1), pod(2))
}

/// A budget over job-1's pods.
fn budget(rule: &str) -> String {
    format!(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: test-pdb, namespace: default}}\nspec:\n  {rule}\n  selector:\n    matchLabels: {{volcano.sh/job-name: job-1}}\n---\n"
    )
}

fn run(conf: &str, sessions: Option<u32>, manifests: &str) -> Out {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = String::from(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: pdb}\nspec:\n  cluster:\n    nodes:\n      - {name: n1, cpu: 2, memory: 8Gi}\n  scheduler:\n    inline: |\n",
    );
    for l in conf.lines() {
        s += &format!("      {l}\n");
    }
    if let Some(n) = sessions {
        s += &format!("  sessions: {n}\n");
    }
    s += "  workload:\n    - manifests: objects.yaml\n";
    std::fs::write(dir.path().join("scenario.yaml"), s).expect("write");
    std::fs::write(dir.path().join("objects.yaml"), manifests).expect("write");
    run_file(&dir.path().join("scenario.yaml"))
}

const SHUFFLE: &str = "actions: \"shuffle\"\ntiers:\n- plugins:\n  - name: pdb\n";

/// `TestPreemptableAndReclaimableFn`'s `VictimTasks` expectations, through
/// shuffle in one session: without a budget both labelled pods are victims; with
/// a budget that allows no disruption (minAvailable 2 of 2 healthy), none; with
/// one that allows one (minAvailable 1), the first.
#[test]
fn preemptable_and_reclaimable_fn_victim_tasks() {
    assert_eq!(run(SHUFFLE, Some(1), &pods("")).evictions(), ["default/test-pod1", "default/test-pod2"]);
    assert!(run(SHUFFLE, Some(1), &pods(&budget("minAvailable: 2"))).evictions().is_empty());
    assert_eq!(run(SHUFFLE, Some(1), &pods(&budget("minAvailable: 1"))).evictions(), ["default/test-pod1"]);
    // maxUnavailable and percentages, as the disruption controller reads them:
    // 50% of 2 unavailable is 1.
    assert_eq!(run(SHUFFLE, Some(1), &pods(&budget("maxUnavailable: 50%"))).evictions(), ["default/test-pod1"]);
    assert!(run(SHUFFLE, Some(1), &pods(&budget("maxUnavailable: 0"))).evictions().is_empty());
}

/// The same test's `Preemptable` expectations, through preempt: a high-priority
/// pod of 2 cpus needs both victims. Without a budget both go (the preemptor
/// starts when they are released, 30 s later); with one disruption allowed the
/// plugin offers one victim, too little, and nothing is evicted; a 1-cpu
/// preemptor then takes exactly the allowed one.
#[test]
fn preemptable_and_reclaimable_fn_preemptable() {
    let conf = "actions: \"enqueue, allocate, preempt\"\ntiers:\n- plugins:\n  - name: priority\n  - name: pdb\n";
    let hi = |cpus: u32| {
        format!(
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: high}}\nvalue: 100\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: hi\n  namespace: default\n  annotations: {{lahar.io/duration: 1h, lahar.io/submit-at: 60s}}\nspec:\n  priorityClassName: high\n  containers: [{{name: c, resources: {{requests: {{cpu: \"{cpus}\"}}}}}}]\n---\n"
        )
    };
    let o = run(conf, None, &pods(&hi(2)));
    let mut e = o.evictions();
    e.sort();
    assert_eq!(e, ["default/test-pod1", "default/test-pod2"]);
    assert_eq!(o.jobs.iter().find(|j| j["job"] == "hi").expect("hi")["start_s"], "90");
    let o = run(conf, None, &pods(&format!("{}{}", budget("minAvailable: 1"), hi(2))));
    assert!(o.evictions().is_empty());
    let o = run(conf, None, &pods(&format!("{}{}", budget("minAvailable: 1"), hi(1))));
    assert_eq!(o.evictions(), ["default/test-pod1"]);
}

/// Over sessions, the budget follows the pods. With allocate and shuffle and a
/// budget of minAvailable 1 over the two pods: at 0 s one disruption is allowed
/// and test-pod1 is evicted; while it is released and re-created (30 s grace) one
/// pod is healthy and nothing more may go — test-pod2 never does; once test-pod1
/// runs again, at 30 s, the budget allows one again and shuffle takes it again
/// (Volcano's shuffle evicts whatever the victim functions name, every session).
#[test]
fn budgets_follow_the_pods_across_sessions() {
    let conf = "actions: \"allocate, shuffle\"\ntiers:\n- plugins:\n  - name: pdb\n";
    let o = run(conf, Some(7), &pods(&budget("minAvailable: 1")));
    let evicted: Vec<String> = o.of("evict").iter().map(|d| format!("{} {}", d["t_s"], d["pod"])).collect();
    assert_eq!(evicted, ["0 default/test-pod1", "30 default/test-pod1", "60 default/test-pod1"]);
}

/// A pod without labels is never a victim of pdb (Volcano drops it first).
#[test]
fn pods_without_labels_are_never_victims() {
    let text = pods("").replace("  labels: {volcano.sh/job-name: job-1}\n", "");
    assert!(run(SHUFFLE, Some(1), &text).evictions().is_empty());
    // Twin: only test-pod1 loses its labels; test-pod2 keeps them and is still
    // pdb's victim (no budget selects it).
    let text = pods("").replacen("  labels: {volcano.sh/job-name: job-1}\n", "", 1);
    assert_eq!(run(SHUFFLE, Some(1), &text).evictions(), ["default/test-pod2"]);
}

/// A bad budget is refused at its place, exit 2; budgets without the pdb plugin
/// are read and said to change nothing.
#[test]
fn budget_input_through_the_binary() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  cluster:\n    nodes: [{name: n1, cpu: 2, memory: 8Gi}]\n  workload:\n    - manifests: objects.yaml\n";
    std::fs::write(dir.path().join("s.yaml"), scenario).expect("write");
    std::fs::write(dir.path().join("objects.yaml"), pods(&budget("minAvailable: most"))).expect("write");
    let out = super::lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("objects.yaml:31:17:")
            && err.contains("spec.minAvailable: expected an integer ≥ 0 or a percentage such as `50%`"),
        "{err}"
    );
    std::fs::write(dir.path().join("objects.yaml"), pods(&budget("minAvailable: 1"))).expect("write");
    let out = super::lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("1 PodDisruptionBudget(s) read (the first: default/test-pdb), but no `pdb` plugin"), "{err}");
}

/// Pods carry their controller's labels: a VolcanoJob's pods are selected by
/// `volcano.sh/job-name` (Volcano's job controller sets it), and so are the pods of
/// a compact job (lahar's own VolcanoJob form); a budget of maxUnavailable 1 over
/// either job's 2 pods lets shuffle evict one. The budgets sit in a source of
/// their own.
#[test]
fn controller_labels_are_selected() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: pdb}\nspec:\n  sessions: 3\n  cluster:\n    nodes:\n      - {name: n1, cpu: 4, memory: 8Gi}\n  scheduler:\n    inline: |\n      actions: \"allocate, shuffle\"\n      tiers:\n      - plugins:\n        - name: pdb\n  workload:\n    - manifests: budgets.yaml\n    - manifests: job.yaml\n    - jobs:\n      - {name: compact, duration: 1h, tasks: [{name: w, replicas: 2, resources: {cpu: 1}}]}\n";
    std::fs::write(dir.path().join("s.yaml"), s).expect("write");
    let b = |job: &str| {
        format!(
            "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: {job}}}\nspec:\n  maxUnavailable: 1\n  selector: {{matchLabels: {{volcano.sh/job-name: {job}}}}}\n---\n"
        )
    };
    std::fs::write(dir.path().join("budgets.yaml"), b("web") + &b("compact")).expect("write");
    let job = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: web, annotations: {lahar.io/duration: 1h}}\nspec:\n  tasks:\n    - replicas: 2\n      name: w\n      template:\n        spec:\n          containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]\n";
    std::fs::write(dir.path().join("job.yaml"), job).expect("write");
    let o = run_file(&dir.path().join("s.yaml"));
    let mut e = o.evictions();
    e.sort();
    assert_eq!(e, ["default/compact-w-0", "default/web-w-0"]);
}

// ---------------------------------------------------------------------------
// rescheduling (Volcano has no unit test for it: scenarios computed by hand)

/// Four Running pods of 2 cpus and 2Gi on n1 (priorities 1–4), n2 empty; both
/// nodes 10 cpus and 10Gi; rescheduling's `args` and nodeorder to place pods. Each
/// names a ReplicaSet (`ownerReferences`), which re-creates it once evicted.
fn rescheduling(args: &str) -> Out {
    let pod = |n: u32| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p{n}\n  namespace: default\n  annotations: {{lahar.io/duration: 1h}}\n  ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: rs{n}, uid: u{n}}}]\nspec:\n  nodeName: n1\n  priority: {n}\n  containers: [{{name: c, resources: {{requests: {{cpu: \"2\", memory: 2Gi}}}}}}]\nstatus: {{phase: Running}}\n---\n"
        )
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = String::from(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: rs}\nspec:\n  horizon: 20m\n  cluster:\n    nodes:\n      - {name: n1, cpu: 10, memory: 10Gi}\n      - {name: n2, cpu: 10, memory: 10Gi}\n  scheduler:\n    inline: |\n      actions: \"allocate, shuffle\"\n      tiers:\n      - plugins:\n        - name: rescheduling\n",
    );
    for l in args.lines() {
        s += &format!("          {l}\n");
    }
    s += "      - plugins:\n        - name: nodeorder\n  workload:\n    - manifests: objects.yaml\n";
    std::fs::write(dir.path().join("scenario.yaml"), s).expect("write");
    std::fs::write(dir.path().join("objects.yaml"), (1..=4).map(pod).collect::<String>()).expect("write");
    run_file(&dir.path().join("scenario.yaml"))
}

const LOW_NODE: &str = "arguments:\n  interval: 5m\n  strategies:\n  - name: lowNodeUtilization\n    params:\n      thresholds: {cpu: 20, memory: 20}\n      targetThresholds: {cpu: 50, memory: 50}\n";

/// n1 is at 80% (above the 50% target: high), n2 at 0% (below 20%: low). The
/// room up to n2's target is 5 cpus and 5Gi. The first session after 5 minutes
/// (300 s and 1 µs) takes n1's pods lowest priority first while n1 is still at
/// or above 50%: p1 (80% → 60%, room 3), p2 (60% → 40%, room 1), then stops.
/// The evicted pods are made again and placed on n2 (nodeorder prefers the idle
/// node) once released, 30 s later. At the next run (600 s) both nodes are at
/// 40%: no node is low, nothing moves.
#[test]
fn low_node_utilization_moves_pods_to_idle_nodes() {
    let o = rescheduling(LOW_NODE);
    let e: Vec<String> = o.of("evict").iter().map(|d| format!("{} {}", d["t_s"], d["pod"])).collect();
    assert_eq!(e, ["300.000001 default/p1", "300.000001 default/p2"]);
    let b: Vec<String> = o.of("bind").iter().map(|d| format!("{} {} {}", d["t_s"], d["pod"], d["node"])).collect();
    assert_eq!(b, ["330.000001 default/p1 n2", "330.000001 default/p2 n2"]);
}

/// Volcano's defaults (thresholds and targets of 100%) never find a high node:
/// nothing moves; nor does anything before the first interval has passed.
#[test]
fn rescheduling_defaults_and_interval() {
    assert!(rescheduling("arguments: {interval: 5m}\n").evictions().is_empty());
    let late = LOW_NODE.replace("interval: 5m", "interval: 30m");
    assert!(rescheduling(&late).evictions().is_empty());
}

/// A float threshold (Volcano panics on one) and an unknown strategy are refused
/// at their place; the design's other strategy names load.
#[test]
fn rescheduling_bad_arguments_are_refused() {
    let err = super::conf_errors(
        "actions: \"shuffle\"\ntiers:\n- plugins:\n  - name: rescheduling\n    arguments:\n      strategies:\n      - name: offlineOnly\n      - name: highNodeUtilization\n      - name: lowNodeUtilization\n        params: {thresholds: {cpu: 20.5}}\n",
    );
    for want in [
        "arguments.strategies[1].name: unknown strategy `highNodeUtilization`",
        "arguments.strategies[2].params.thresholds.cpu: expected an integer percent",
    ] {
        assert!(err.contains(want), "{want} not in {err}");
    }
    assert!(!err.contains("strategies[0]"), "{err}");
}

/// A snapshot's PodDisruptionBudgets are read (`kubectl get ...,poddisruptionbudgets`):
/// with shuffle and pdb, a budget of minAvailable 1 keeps the one web pod, one of
/// 0 lets it go; without the plugin the budget is said to change nothing.
#[test]
fn snapshot_budgets() {
    let dir = tempfile::tempdir().expect("tempdir");
    let snapshot = |min: u32| {
        format!(
            "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {{name: n1}}\n  status: {{allocatable: {{cpu: \"4\", memory: 8Gi, pods: \"110\"}}}}\n- apiVersion: v1\n  kind: Pod\n  metadata: {{name: web-0, namespace: prod, labels: {{app: web}}, annotations: {{lahar.io/duration: 1h}}}}\n  spec: {{schedulerName: volcano, nodeName: n1, containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]}}\n  status: {{phase: Running}}\n- apiVersion: policy/v1\n  kind: PodDisruptionBudget\n  metadata: {{name: web, namespace: prod}}\n  spec: {{minAvailable: {min}, selector: {{matchLabels: {{app: web}}}}}}\n  status: {{currentHealthy: 1, desiredHealthy: 1, disruptionsAllowed: 0, expectedPods: 1, observedGeneration: 1}}\n"
        )
    };
    std::fs::write(dir.path().join("s.conf"), SHUFFLE).expect("write");
    let run = |min: u32| {
        std::fs::write(dir.path().join("cluster.yaml"), snapshot(min)).expect("write");
        let out = dir.path().join(format!("out{min}"));
        super::lahar()
            .args(["run", "-q", "--sessions", "1", "--snapshot"])
            .arg(dir.path().join("cluster.yaml"))
            .arg("--conf")
            .arg(dir.path().join("s.conf"))
            .arg("--out")
            .arg(&out)
            .assert()
            .success();
        std::fs::read_to_string(out.join("decisions.csv")).expect("decisions").contains(",shuffle,evict,")
    };
    assert!(!run(1));
    assert!(run(0));
    let out = super::lahar().arg("validate").arg("--snapshot").arg(dir.path().join("cluster.yaml")).assert().success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("1 PodDisruptionBudget(s) read (the first: prod/web)"), "{err}");
}
