//! Nodes joining and leaving a live cluster (issue 40): a node declared
//! `absent: true` is out of the cluster until `spec.timeline`'s `addNodes`
//! brings it in; `removeNodes` is `kubectl delete node`: the pod garbage
//! collector deletes the node's pods at once and the job controller hears
//! `PodEvicted`. The cluster's total follows (enqueue admits only what the
//! present nodes can hold), and `gpu_time.absent` counts the GPU time of nodes
//! out of the cluster. Hand-checked through the binary.

use super::*;

/// Two nodes present (`a-0`, `a-1`) and two absent (`b-0`, `b-1`) of 8 GPUs; a
/// gang of four 8-GPU pods running 2 h; `timeline` entries.
fn scenario_with(timeline: &str) -> String {
    scenario(
        "    nodeGroups:\n      - {name: a, count: 2, gpus: 8, cpu: 64, memory: 512Gi}\n      - {name: b, count: 2, gpus: 8, cpu: 64, memory: 512Gi, absent: true}",
        &format!(
            "  timeline:\n{timeline}  workload:\n    - jobs:\n        - {{name: big, duration: 2h, tasks: [{{name: worker, replicas: 4, resources: {{nvidia.com/gpu: 8}}}}]}}\n"
        ),
    )
}

/// A CSV's rows (its header skipped), each split at its commas.
pub(super) fn rows(csv: &str) -> Vec<Vec<String>> {
    csv.lines().skip(1).map(|l| l.split(',').map(str::to_string).collect()).collect()
}

/// By hand (32 GPUs declared, 4.5 h): the gang of 32 GPUs cannot be admitted
/// while only 16 are in the cluster; at 1 h `b-*` join and it binds. At 2 h
/// `a-0` is deleted with its pod (`node-deleted`, the gang's work since 1 h
/// lost: no checkpoint), the controller makes the pod again, and the gang
/// waits with three pods held (stalled) until `a-0` is back at 2.5 h; it then
/// runs its 2 h from the start and completes at 4.5 h.
///
/// GPU time, of 32 × 4.5 = 144 GPU·h: absent 16 (`b-*` for 1 h) + 4 (`a-0` for
/// 0.5 h) = 20; held 32 + 12 + 64 = 108, of which progressing 32 + 64 = 96,
/// lost 32, so useful 64 and stalled 12; idle 144 − 108 − 20 = 16 (`a-*` for
/// the first hour).
#[test]
fn nodes_join_and_leave_a_live_cluster() {
    let tl = "    - {at: 1h, addNodes: \"b-*\"}\n    - {at: 2h, removeNodes: a-0}\n    - {at: 150m, addNodes: a-0}\n";
    let (dir, path) = write_scenario(&scenario_with(tl));
    let out = dir.path().join("o");
    lahar().arg("run").arg("-q").arg(&path).arg("--out").arg(&out).assert().success();
    let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
    let decisions = rows(&read("decisions.csv"));
    let enqueued: Vec<&str> =
        decisions.iter().filter(|r| r[3] == "phase" && r[7] == "Inqueue").map(|r| r[1].as_str()).collect();
    assert_eq!(enqueued, ["3600"], "admitted once the nodes joined");
    let binds: Vec<(String, String, String)> =
        decisions.iter().filter(|r| r[3] == "bind").map(|r| (r[1].clone(), r[5].clone(), r[6].clone())).collect();
    assert_eq!(binds.len(), 5, "{binds:?}");
    assert!(binds[..4].iter().all(|b| b.0 == "3600"), "{binds:?}");
    assert_eq!(binds[4], ("9000".to_string(), "default/big-worker-3".to_string(), "a-0".to_string()));
    let pods = rows(&read("pods.csv"));
    let on_a0: Vec<(&str, &str, &str)> =
        pods.iter().filter(|r| r[4] == "a-0").map(|r| (r[6].as_str(), r[7].as_str(), r[8].as_str())).collect();
    assert_eq!(on_a0, [("3600", "7200", "node-deleted"), ("9000", "16200", "completed")]);
    let jobs = rows(&read("jobs.csv"));
    assert_eq!(jobs[0][6], "16200", "{jobs:?}");
    let summary: serde_json::Value = serde_json::from_str(&read("summary.json")).unwrap();
    let t = &summary["metrics"]["gpu_time"];
    let close = |k: &str, want: f64| {
        let got = t[k].as_f64().unwrap_or_else(|| panic!("no {k} in {t}"));
        assert!((got - want).abs() < 1e-9, "{k}: {got} against {want}");
    };
    close("absent", 20.0 / 144.0);
    close("useful", 64.0 / 144.0);
    close("lost", 32.0 / 144.0);
    close("stalled", 12.0 / 144.0);
    close("idle", 16.0 / 144.0);
    close("slowed", 0.0);
}

/// Without absent nodes `gpu_time` has no `absent` key; a removal of a node out
/// of the cluster and an addition of one in it change nothing and are counted
/// warnings.
#[test]
fn actions_that_change_nothing_warn() {
    let tl = "    - {at: 1h, addNodes: a-0}\n    - {at: 2h, removeNodes: \"b-*\"}\n    - {at: 3h, addNodes: \"b-*\"}\n";
    let (dir, path) = write_scenario(&scenario_with(tl));
    let out = dir.path().join("o");
    let o = lahar().arg("run").arg(&path).arg("--out").arg(&out).assert().success();
    let err = String::from_utf8_lossy(&o.get_output().stderr).to_string();
    assert!(
        err.contains("spec.timeline[0]: 2 timeline actions changed nothing, as in Volcano (the first, at 3600s: every node of the pattern is in the cluster already)"),
        "{err}"
    );
    let (dir, path) = write_scenario(&scenario(
        "    nodeGroups:\n      - {name: a, count: 4, gpus: 8, cpu: 64, memory: 512Gi}",
        "  workload:\n    - jobs:\n        - {name: j, duration: 1h, tasks: [{name: worker, replicas: 1, resources: {nvidia.com/gpu: 8}}]}\n",
    ));
    let out = dir.path().join("o");
    lahar().arg("run").arg("-q").arg(&path).arg("--out").arg(&out).assert().success();
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert!(summary["metrics"]["gpu_time"].get("absent").is_none());
}

/// A pod of the starting state cannot run on a node absent at the start; a
/// pattern that matches no node is refused at its place.
#[test]
fn absent_nodes_hold_no_starting_pods_and_patterns_must_match() {
    let bad = scenario(
        "    nodeGroups:\n      - {name: b, count: 1, gpus: 8, cpu: 64, memory: 512Gi, absent: true}",
        "  workload:\n    - jobs:\n        - {name: j, duration: 1h, running: {worker: [b-0]}, tasks: [{name: worker, replicas: 1, resources: {nvidia.com/gpu: 8}}]}\n",
    );
    let (_dir, path) = write_scenario(&bad);
    let o = lahar().arg("validate").arg(&path).assert().code(2);
    let err = String::from_utf8_lossy(&o.get_output().stderr).to_string();
    assert!(err.contains("spec.workload[0].jobs[0].running.worker[0]: node `b-0` does not exist"), "{err}");
    let (_dir, path) = write_scenario(&scenario_with("    - {at: 1h, removeNodes: \"c-*\"}\n"));
    let o = lahar().arg("validate").arg(&path).assert().code(2);
    let err = String::from_utf8_lossy(&o.get_output().stderr).to_string();
    assert!(err.contains("spec.timeline[0].removeNodes: `c-*` matches no node"), "{err}");
}

/// A node out of the cluster is neither idle nor fragmented: a run with a node
/// absent throughout measures fragmentation exactly as the same run on the
/// cluster without that node (both the summary and each timeseries sample; the
/// in-process summary too, which replays the run's facts). Before, the absent
/// node's 8 GPUs counted as idle and diluted the rate. The workload's typical
/// shapes (1-GPU and 3-GPU pods) fragment the 8-GPU nodes the jobs leave.
#[test]
fn absent_nodes_are_neither_idle_nor_fragmented() {
    let jobs = "  workload:\n    - jobs:\n        - {name: a, duration: 3h, tasks: [{name: w, replicas: 3, resources: {nvidia.com/gpu: 3}}]}\n        - {name: b, submitAt: 10m, duration: 1h, tasks: [{name: w, replicas: 5, resources: {nvidia.com/gpu: 1}}]}\n        - {name: c, submitAt: 20m, duration: 2h, tasks: [{name: w, replicas: 2, resources: {nvidia.com/gpu: 3}}]}\n";
    let with_absent = scenario(
        "    nodeGroups:\n      - {name: a, count: 2, gpus: 8, cpu: 64, memory: 512Gi}\n      - {name: b, count: 1, gpus: 8, cpu: 64, memory: 512Gi, absent: true}",
        jobs,
    );
    let without = scenario("    nodeGroups:\n      - {name: a, count: 2, gpus: 8, cpu: 64, memory: 512Gi}", jobs);
    let summary = |text: &str| {
        let (dir, path) = write_scenario(text);
        let out = dir.path().join("out");
        lahar().arg("run").arg("-q").arg(&path).arg("--out").arg(&out).assert().success();
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        let ts = std::fs::read_to_string(out.join("timeseries.csv")).unwrap();
        let header: Vec<String> = ts.lines().next().unwrap().split(',').map(str::to_string).collect();
        let col = |name: &str| header.iter().position(|h| h == name).unwrap_or_else(|| panic!("{name}: {header:?}"));
        let (fr, fg) = (col("fragmentation"), col("gpus_fragmented"));
        let frag: Vec<(String, String)> = rows(&ts).into_iter().map(|r| (r[fr].clone(), r[fg].clone())).collect();
        let m = &s["metrics"];
        (m["fragmentation"].as_f64().unwrap(), m["fragmented_gpus_mean"].as_f64().unwrap(), frag)
    };
    let (a, b) = (summary(&with_absent), summary(&without));
    assert_eq!(a, b);
    assert!(a.0 > 0.0, "the case fragments: {a:?}");
    let in_process = |text: &str| {
        let s = lahar::scenario::load_str(text, "t.yaml", std::path::Path::new("")).unwrap_or_else(|e| panic!("{e}"));
        let r = lahar::run(s, &lahar::RunOptions { no_write: true, ..Default::default() }).expect("run");
        (r.summary.fragmentation, r.summary.fragmented_gpus_mean)
    };
    assert_eq!(in_process(&with_absent), (a.0, a.1));
    assert_eq!(in_process(&without), (b.0, b.1));
}
