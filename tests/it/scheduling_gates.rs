//! Scheduling gates (issue 40): a pod made with `spec.schedulingGates` is
//! Pending and no action tries it until `spec.timeline`'s `ungatePod` or
//! `ungateJob` removes its gates (Volcano's `TaskInfo.SchGated`); meanwhile its
//! request comes off its job's reservation in enqueue's sums
//! (`DeductSchGatedResources`), unless Volcano's own queue-allocation gate is
//! the only one left. Volcano's e2e tests replayed under their `It` names with
//! the e2e conf, hand-checked cases, and bad input through the binary.

use super::volcano::Out;
use super::volcano_controller::e2e_conf;

/// Runs `objects` on `nodes` (one flow mapping each) under the e2e conf, with
/// `queues` (flow mappings) and the operators' `timeline` (one entry each).
fn run(nodes: &[&str], queues: &str, objects: &str, timeline: &[&str]) -> Out {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("objects.yaml"), objects).expect("write");
    std::fs::write(dir.path().join("ci.conf"), e2e_conf()).expect("write");
    let nodes: String = nodes.iter().map(|n| format!("      - {n}\n")).collect();
    let steps: String = timeline.iter().map(|s| format!("    - {s}\n")).collect();
    let timeline = if steps.is_empty() { String::new() } else { format!("  timeline:\n{steps}") };
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  horizon: 10h\n  cluster:\n    nodes:\n{nodes}  queues: [{queues}]\n  scheduler: {{conf: ci.conf}}\n  workload:\n    - manifests: [objects.yaml]\n{timeline}"
    );
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, text).expect("write");
    super::volcano::run_file(&p)
}

/// A VolcanoJob `name` in `queue` of `replicas` pods (all needed) of `cpu` CPUs
/// and `cpu` GiB for an hour, submitted at `at`, whose pods carry `gates` (a
/// YAML flow list of names, `[]` for none).
fn job(name: &str, queue: &str, replicas: u32, cpu: u32, at: &str, gates: &str) -> String {
    let gates: String = match gates {
        "[]" => String::new(),
        g => {
            let names: Vec<String> = g
                .trim_matches(|c| c == '[' || c == ']')
                .split(',')
                .map(|n| format!("{{name: {}}}", n.trim()))
                .collect();
            format!("          schedulingGates: [{}]\n", names.join(", "))
        }
    };
    format!(
        "---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: {name}\n  annotations: {{lahar.io/duration: 1h, lahar.io/submit-at: {at}}}\nspec:\n  queue: {queue}\n  minAvailable: {replicas}\n  tasks:\n    - name: t\n      replicas: {replicas}\n      template:\n        spec:\n{gates}          containers: [{{name: c, image: i, resources: {{requests: {{cpu: \"{cpu}\", memory: {cpu}Gi}}}}}}]\n"
    )
}

/// jobs.csv's `submit,start,end,state` of a job.
fn row(out: &Out, name: &str) -> String {
    let r = out.jobs.iter().find(|r| r["job"] == name).unwrap_or_else(|| panic!("no job {name}"));
    ["submit_s", "start_s", "end_s", "state"].map(|k| r[k].as_str()).join(",")
}

/// (t, phase) of a job's PodGroup phase rows.
fn phases<'a>(out: &'a Out, job: &str) -> Vec<(&'a str, &'a str)> {
    out.of("phase").iter().filter(|d| d["job"] == job).map(|d| (d["t_s"].as_str(), d["phase"].as_str())).collect()
}

/// `Scheduling gates block vcjob. vcjob allocated after removed.`
/// (test/e2e/schedulingaction/allocate.go): four nodes of 2 CPUs and 2 GiB, a
/// job of two 2-CPU pods whose template carries the gate `example.com/g1`. The
/// job is admitted but stays unscheduled while its pods are gated (the e2e's
/// `WaitJobUnschedulable`); `RemovePodSchGates`, restated as an `ungateJob` at
/// 10 min, lets both pods bind in that instant's session (`WaitJobStateReady`).
#[test]
fn scheduling_gates_block_vcjob_vcjob_allocated_after_removed() {
    let nodes = ["{name: n0, cpu: 2, memory: 2Gi}"; 4].map(|n| n.to_string());
    let nodes: Vec<String> = nodes.iter().enumerate().map(|(i, n)| n.replace("n0", &format!("n{i}"))).collect();
    let nodes: Vec<&str> = nodes.iter().map(String::as_str).collect();
    let j = job("j1-q1", "q1", 2, 2, "0s", "[example.com/g1]").replace("memory: 2Gi", "memory: 2048Mi");
    let out = run(&nodes, "{name: q1}", &j, &["{at: 10m, ungateJob: j1-q1}"]);
    assert_eq!(phases(&out, "j1-q1"), [("0", "Inqueue"), ("600", "Running")]);
    let binds: Vec<&str> = out.of("bind").iter().map(|d| d["t_s"].as_str()).collect();
    assert_eq!(binds, ["600", "600"], "both pods bind once their gates are gone");
    assert_eq!(row(&out, "j1-q1"), "0,600,4200,Completed");
}

/// `Scheduling gates block Deployment. Deployment allocated after removed.`
/// (test/e2e/schedulingaction/allocate.go): a Deployment of four 2-CPU replicas
/// whose pods carry the gate `g1` on four 2-CPU nodes. Volcano's PodGroup
/// controller makes its PodGroup, which enqueue admits (`WaitPodGroupPhase
/// Inqueue`: the gated pods' requests come off its reservation); the e2e's
/// patch of every pod's `schedulingGates` to `[]` is an `ungateJob` of the
/// Deployment at 5 min, after which every replica binds and the PodGroup is
/// Running.
#[test]
fn scheduling_gates_block_deployment_deployment_allocated_after_removed() {
    let nodes: Vec<String> = (0..4).map(|i| format!("{{name: n{i}, cpu: 2, memory: 2Gi}}")).collect();
    let nodes: Vec<&str> = nodes.iter().map(String::as_str).collect();
    let dep = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: dep-gated\nspec:\n  replicas: 4\n  selector: {matchLabels: {app: dep-gated}}\n  template:\n    metadata: {labels: {app: dep-gated}}\n    spec:\n      schedulerName: volcano\n      schedulingGates: [{name: g1}]\n      containers: [{name: c, image: nginx, resources: {requests: {cpu: \"2\", memory: 2048Mi}}}]\n";
    let out = run(&nodes, "{name: default}", dep, &["{at: 5m, ungateJob: dep-gated}"]);
    let jobs: Vec<&str> = out.jobs.iter().map(|r| r["job"].as_str()).collect();
    assert_eq!(jobs.len(), 1, "one PodGroup for the Deployment: {jobs:?}");
    let pg = jobs[0];
    assert_eq!(phases(&out, pg), [("0", "Inqueue"), ("300", "Running")]);
    let binds: Vec<&str> = out.of("bind").iter().map(|d| d["t_s"].as_str()).collect();
    assert_eq!(binds, ["300"; 4]);
}

/// The gated pods' requests come off their job's reservation (proportion's and
/// overcommit's inqueue sums), so a gated job does not keep others out. One
/// 4-CPU node; `a` (two 2-CPU pods, gated) at 0, `b` (the same, ungated) at
/// 10 s. Overcommit's room is 4 × 1.2 = 4.8 CPUs and proportion's capability
/// the node's 4: with `a`'s 4 CPUs deducted, `b` is admitted and runs 10 s →
/// 3610 s; `a`, ungated at 20 min, waits for the node and runs 3610 → 7210 s.
/// Had its only gate been Volcano's own, nothing is deducted: `a` reserves its
/// 4 CPUs, `b` is refused admission, `a` (ungated at 20 min) runs first.
#[test]
fn gated_pods_leave_their_queue_room_unless_only_volcanos_gate_holds_them() {
    let node = ["{name: n0, cpu: 4, memory: 8Gi}"];
    let objects = job("a", "default", 2, 2, "0s", "[example.com/wait]") + &job("b", "default", 2, 2, "10s", "[]");
    let out = run(&node, "{name: default}", &objects, &["{at: 20m, ungateJob: a}"]);
    assert_eq!(row(&out, "b"), "10,10,3610,Completed");
    assert_eq!(row(&out, "a"), "0,3610,7210,Completed");
    let volcano = "[scheduling.volcano.sh/queue-allocation-gate]";
    let objects = job("a", "default", 2, 2, "0s", volcano) + &job("b", "default", 2, 2, "10s", "[]");
    let out = run(&node, "{name: default}", &objects, &["{at: 20m, ungateJob: a}"]);
    assert_eq!(row(&out, "a"), "0,1200,4800,Completed");
    assert_eq!(row(&out, "b"), "10,4800,8400,Completed");
    // Without the ungating, Volcano's gate alone holds `a` for ever (the alpha
    // feature that lifts it is off), and its reservation keeps `b` out.
    let out = run(&node, "{name: default}", &objects, &[]);
    assert_eq!(row(&out, "a"), "0,,,Pending");
    assert_eq!(row(&out, "b"), "10,,,Pending");
}

/// Gates go one by one: removing one of two leaves the pod gated; the second
/// removal releases it. A pod named by `ungatePod` is released alone.
#[test]
fn gates_go_one_by_one_and_pod_by_pod() {
    let node = ["{name: n0, cpu: 4, memory: 8Gi}"];
    let objects = job("a", "default", 1, 1, "0s", "[example.com/x, example.com/y]")
        + &job("b", "default", 2, 1, "0s", "[example.com/x]").replace("minAvailable: 2", "minAvailable: 1");
    let steps = [
        "{at: 10m, ungateJob: a, gates: [example.com/x]}",
        "{at: 20m, ungateJob: a, gates: [example.com/y]}",
        "{at: 30m, ungatePod: b-t-1}",
    ];
    let out = run(&node, "{name: default}", &objects, &steps);
    assert_eq!(row(&out, "a"), "0,1200,4800,Completed");
    let b: Vec<(&str, &str)> =
        out.of("bind").iter().filter(|d| d["job"] == "b").map(|d| (d["t_s"].as_str(), d["pod"].as_str())).collect();
    assert_eq!(b, [("1800", "default/b-t-1")], "b-t-0 keeps its gate");
    assert_eq!(row(&out, "b"), "0,1800,5400,Completed");
}

/// Under a baseline a job whose gang needs gated pods neither starts nor holds
/// the head of the queue: `fifo` runs `b` (submitted later) first, then `a`
/// once an operator removes its gates.
#[test]
fn a_gated_job_does_not_block_fifo() {
    let node = "    nodes: [{name: n0, cpu: 4, memory: 8Gi}]";
    let dir = tempfile::tempdir().expect("tempdir");
    let objects = job("a", "default", 2, 2, "0s", "[example.com/wait]") + &job("b", "default", 2, 2, "10s", "[]");
    std::fs::write(dir.path().join("objects.yaml"), objects).expect("write");
    let text = crate::scenario(
        node,
        "  scheduler: {baseline: fifo}\n  workload:\n    - manifests: [objects.yaml]\n  timeline:\n    - {at: 20m, ungateJob: a}\n",
    );
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, text).expect("write");
    let out = super::volcano::run_file(&p);
    assert_eq!(row(&out, "b"), "10,10,3610,Completed");
    assert_eq!(row(&out, "a"), "0,3610,7210,Completed");
}

/// `--explain` names the gates that hold a pod.
#[test]
fn explain_names_the_gates_left() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("objects.yaml"), job("a", "default", 1, 1, "0s", "[example.com/x, example.com/y]"))
        .expect("write");
    let text = crate::scenario(
        "    nodes: [{name: n0, cpu: 4, memory: 8Gi}]",
        "  workload:\n    - manifests: [objects.yaml]\n  timeline:\n    - {at: 10m, ungatePod: a-t-0, gates: [example.com/x]}\n",
    );
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, text).expect("write");
    let out = dir.path().join("o");
    crate::lahar().args(["run", "-q", "--explain", "a-t-0", "--out"]).arg(&out).arg(&p).assert().success();
    let explain = std::fs::read_to_string(out.join("explain.csv")).expect("explain.csv");
    assert!(explain.contains("scheduling gated (example.com/x, example.com/y)"), "{explain}");
    assert!(explain.contains("scheduling gated (example.com/y)"), "after the first removal: {explain}");
}

/// Bad gates and ungating steps are errors at their place (exit 2); a target
/// missing or without gates is a counted warning after the run.
#[test]
fn bad_gates_and_ungating_steps_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = |objects: &str, steps: &str| {
        std::fs::write(dir.path().join("objects.yaml"), objects).expect("write");
        let timeline = if steps.is_empty() { String::new() } else { format!("  timeline:\n{steps}") };
        let text = crate::scenario(
            "    nodes: [{name: n0, cpu: 4, memory: 8Gi}]",
            &format!("  workload:\n    - manifests: [objects.yaml]\n{timeline}"),
        );
        let p = dir.path().join("s.yaml");
        std::fs::write(&p, text).expect("write");
        p
    };
    let plain = job("a", "default", 1, 1, "0s", "[]");
    let many: Vec<String> = (0..17).map(|i| format!("example.com/g{i}")).collect();
    for (objects, steps, needle) in [
        (job("a", "default", 1, 1, "0s", "[example.com/x, example.com/x]"), "", "scheduling gate `example.com/x` is given twice"),
        (job("a", "default", 1, 1, "0s", "[-bad]"), "", "`-bad` is not a qualified name"),
        (job("a", "default", 1, 1, "0s", "[Bad_Domain/x]"), "", "the prefix of `Bad_Domain/x`"),
        (job("a", "default", 1, 1, "0s", &format!("[{}]", many.join(", "))), "", "17 scheduling gates; lahar reads at most 16 per pod"),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  schedulerName: volcano\n  nodeName: n0\n  schedulingGates: [{name: example.com/x}]\n  containers: [{name: c, image: i, resources: {requests: {cpu: \"1\"}}}]\nstatus: {phase: Running}\n".to_string(),
            "",
            "spec.schedulingGates: a pod on a node has no scheduling gates",
        ),
        (plain.clone(), "    - {at: 1m, cordon: n0, gates: [x]}\n", "spec.timeline[0].gates: `gates` names scheduling gates"),
        (plain.clone(), "    - {at: 1m, ungateJob: a, gates: []}\n", "spec.timeline[0].gates: give the gates to remove"),
        (plain.clone(), "    - {at: 1m, ungatePod: a-t-0, gates: [\"a b\"]}\n", "spec.timeline[0].gates[0]: `a b` is not a qualified name"),
        (plain.clone(), "    - {at: 1m, ungatePod: a/b/c}\n", "spec.timeline[0].ungatePod: expected `name` or `namespace/name`"),
        (plain.clone(), "    - {at: 1m, ungatePod: a-t-0, ungateJob: a}\n", "got ungatePod, ungateJob"),
    ] {
        let p = scenario(&objects, steps);
        let out = crate::lahar().arg("validate").arg(&p).assert().code(2).get_output().stderr.clone();
        let err = String::from_utf8_lossy(&out);
        assert!(err.contains(needle), "{needle}: {err}");
    }
    let p = scenario(&plain, "    - {at: 1m, ungateJob: nope}\n    - {at: 2m, ungatePod: a-t-0}\n");
    let out = crate::lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(dir.path().join("o")).assert().success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("no job default/nope to ungate"), "{err}");
    assert!(err.contains("pod default/a-t-0 is not a Pending pod with scheduling gates to remove"), "{err}");
}
