//! `spec.faults` through the binary: the example's outputs, a scenario with an
//! empty fault plan against the same without, and every bad input refused
//! with its location.

use super::*;

fn run_to(scenario: &Path, out: &Path) {
    lahar().arg("run").arg(scenario).arg("--out").arg(out).assert().success();
}

fn read(dir: &Path, f: &str) -> String {
    std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"))
}

/// The example replays its incident as written (the trace's rows at their
/// times, on their targets) among its random failures, twice the same.
#[test]
fn failures_example_writes_its_fault_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/faults/failures.yaml");
    run_to(&ex, &dir.path().join("a"));
    let events = read(&dir.path().join("a"), "events.csv");
    let mut lines = events.lines();
    assert_eq!(lines.next(), Some("t_s,event,scope,target,nodes,gpus,pods,cause"));
    let rows: Vec<Vec<&str>> = events.lines().skip(1).map(|l| l.split(',').collect()).collect();
    let traced: Vec<String> = rows
        .iter()
        .filter(|r| r[7].starts_with("trace:"))
        .map(|r| format!("{} {} {} {} {}", r[0], r[1], r[2], r[3], r[7]))
        .collect();
    assert_eq!(
        traced,
        [
            "360000 fail switch leaf-3 trace:4",
            "361800 fail node h100-25 trace:5",
            "361800 fail node h100-26 trace:6",
            "361800 repair switch leaf-3 trace:4",
            "405000 repair node h100-25 trace:5",
            "405000 repair node h100-26 trace:6",
            "1080000 fail gpu h100-40 trace:7",
            "1087200 repair gpu h100-40 trace:7",
        ]
    );
    // The switch takes its 8 nodes (64 GPUs); at its repair the two hosts that
    // failed under it keep 16 of them out.
    let leaf = rows.iter().filter(|r| r[3] == "leaf-3").map(|r| (r[4], r[5])).collect::<Vec<_>>();
    assert_eq!(leaf, [("8", "64"), ("8", "48")]);
    for cause in ["gpu-faults", "host-failures", "drains[0]"] {
        assert!(rows.iter().any(|r| r[7] == cause), "no {cause} row");
    }
    let ts = read(&dir.path().join("a"), "timeseries.csv");
    assert!(ts.lines().next().unwrap().ends_with(",gpus_unavailable"));
    assert!(ts.lines().skip(1).any(|l| l.ends_with(",64")), "the switch's 64 GPUs appear as unavailable");
    let summary: serde_json::Value = serde_json::from_str(&read(&dir.path().join("a"), "summary.json")).unwrap();
    let f = &summary["metrics"]["faults"];
    let failures = rows.iter().filter(|r| r[1] == "fail").count() as u64;
    assert_eq!(f["failures"].as_u64(), Some(failures));
    assert_eq!(f["drains"].as_u64(), Some(1));
    assert!(f["gpu_hours_lost_to_failures"].as_f64().unwrap() > 0.0);
    assert!(f["goodput"].as_f64().unwrap() < 1.0);
    let pods = read(&dir.path().join("a"), "pods.csv");
    let killed = pods.lines().filter(|l| l.ends_with(",failed")).count() as u64;
    assert_eq!(f["pods_killed"].as_u64(), Some(killed));
    run_to(&ex, &dir.path().join("b"));
    for file in ["events.csv", "pods.csv", "jobs.csv", "timeseries.csv", "decisions.csv"] {
        assert_eq!(read(&dir.path().join("a"), file), read(&dir.path().join("b"), file), "{file}");
    }
}

const NODES: &str = "    nodes:\n      - {name: n0, gpus: 8, cpu: 64, memory: 256Gi}\n      - {name: n1, gpus: 8, cpu: 64, memory: 256Gi}";
const JOBS: &str = "  workload:\n    - jobs:\n        - {name: a, duration: 1h, tasks: [{name: w, replicas: 2, resources: {nvidia.com/gpu: 8}}]}\n        - {name: b, submitAt: 10m, duration: 30m, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 4}}]}\n";

/// `faults: {}` fails nothing: every output but the new column and file is
/// byte for byte the run without faults; without `faults` there is no events.csv.
#[test]
fn an_empty_fault_plan_changes_nothing_but_the_columns() {
    let (d1, plain) = write_scenario(&scenario(NODES, JOBS));
    let (d2, empty) = write_scenario(&scenario(NODES, &format!("{JOBS}  faults: {{}}\n")));
    run_to(&plain, &d1.path().join("out"));
    run_to(&empty, &d2.path().join("out"));
    let (a, b) = (d1.path().join("out"), d2.path().join("out"));
    for f in ["jobs.csv", "pods.csv", "decisions.csv"] {
        assert_eq!(read(&a, f), read(&b, f), "{f}");
    }
    assert!(!a.join("events.csv").exists());
    assert_eq!(read(&b, "events.csv"), "t_s,event,scope,target,nodes,gpus,pods,cause\n");
    for (x, y) in read(&a, "timeseries.csv").lines().zip(read(&b, "timeseries.csv").lines()) {
        let (head, last) = y.rsplit_once(',').unwrap();
        assert_eq!(x, head);
        assert!(last == "gpus_unavailable" || last == "0");
    }
    let s: serde_json::Value = serde_json::from_str(&read(&a, "summary.json")).unwrap();
    assert!(s["metrics"].get("faults").is_none());
}

/// A failure of n1 at 20m for 1h, from a trace, kills `a`'s pod there: `a`
/// loses its 20 minutes (16 GPUs). Its replacement pod finds no node, so at that
/// session's close gang marks `a` unschedulable with a pod still Running: its
/// PodGroup turns Unknown (Volcano's `getPodGroupPhase`), and overcommit stops
/// reserving its unallocated minimum (it counts Inqueue and Running groups only).
/// `b` (4 GPUs, at 10m) waits until n1 is back at 80m (8 GPUs in use, 19.2
/// overcommitted: 4 fit); then drf orders `b` (share 0) before `a` (share ½): `b`
/// runs on n1 80m → 110m, and `a` reruns its hour 110m → 170m. (Before PodGroups
/// could turn Unknown, `a` held its claim and ran first: 80m → 140m, `b` after.)
#[test]
fn a_traced_node_failure_delays_the_gang_by_its_repair() {
    let text = scenario(NODES, &format!("{JOBS}  faults: {{trace: f.csv}}\n"));
    let (d, p) = write_scenario(&text);
    std::fs::write(d.path().join("f.csv"), "time,target,duration,kind\n20m,n1,1h,node\n").unwrap();
    run_to(&p, &d.path().join("out"));
    let jobs = read(&d.path().join("out"), "jobs.csv");
    let a = jobs.lines().find(|l| l.starts_with("a,")).unwrap();
    let cols: Vec<&str> = a.split(',').collect();
    // start 0, end 170m = 10200 s, lost 20 m × 16 GPUs = 19200 GPU·s.
    assert_eq!((cols[5], cols[6], cols[7], cols[16]), ("0", "10200", "Completed", "19200"));
    let b = jobs.lines().find(|l| l.starts_with("b,")).unwrap();
    assert_eq!(b.split(',').nth(5), Some("4800"));
    assert_eq!(b.split(',').nth(6), Some("6600"));
}

fn refused_with(text: &str, files: &[(&str, &str)], want: &[&str]) {
    let (d, p) = write_scenario(text);
    for (name, body) in files {
        std::fs::write(d.path().join(name), body).unwrap();
    }
    let out = lahar().arg("validate").arg(&p).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    for w in want {
        assert!(err.contains(w), "missing {w:?} in:\n{err}");
    }
    // `lahar run` refuses it the same way, before any output.
    lahar().arg("run").arg(&p).arg("--out").arg(d.path().join("out")).assert().code(2);
    assert!(!d.path().join("out").join("jobs.csv").exists());
}

/// The same run's GPU time, by hand (16 GPUs × 170 min = 2,720 GPU·min): `a`
/// progresses on 16 GPUs 0 → 20 m and 110 → 170 m (1,280), its pod on n0 holds
/// 8 GPUs without progress from the failure at 20 m until the rerun at 110 m
/// (720), `b` runs 4 GPUs 80 → 110 m (120); the 20 minutes `a` lost on 16 GPUs
/// (320) were progressing then; no pod held n1 in 20 → 80 m nor the rest (600).
/// The summary, summary.csv, the goodput and the timeseries' samples agree.
#[test]
fn gpu_time_counts_a_gang_waiting_for_its_replacement() {
    let text = scenario(NODES, &format!("{JOBS}  faults: {{trace: f.csv}}\n  output: {{sampleInterval: 10m}}\n"));
    let (d, p) = write_scenario(&text);
    std::fs::write(d.path().join("f.csv"), "time,target,duration,kind\n20m,n1,1h,node\n").unwrap();
    let out = d.path().join("out");
    run_to(&p, &out);
    let summary: serde_json::Value = serde_json::from_str(&read(&out, "summary.json")).unwrap();
    let m = &summary["metrics"];
    let share = |k: &str| m["gpu_time"][k].as_f64().unwrap_or_else(|| panic!("gpu_time.{k}"));
    let close = |got: f64, want: f64, what: &str| assert!((got - want).abs() < 1e-12, "{what}: {got} != {want}");
    for (k, want) in
        [("useful", 1080.0), ("lost", 320.0), ("slowed", 0.0), ("stalled", 720.0), ("releasing", 0.0), ("idle", 600.0)]
    {
        close(share(k), want / 2720.0, k);
    }
    close(m["gpu_effective_utilization"].as_f64().unwrap(), 1080.0 / 2720.0, "effective");
    close(m["gpu_allocation_rate"].as_f64().unwrap(), 2120.0 / 2720.0, "allocation");
    close(m["faults"]["goodput"].as_f64().unwrap(), 1080.0 / 2120.0, "goodput: useful over held");
    close(m["queues"]["default"]["gpu_hours_stalled"].as_f64().unwrap(), 12.0, "720 GPU·min");
    let csv = read(&out, "summary.csv");
    let mut rd = csv::Reader::from_reader(csv.as_bytes());
    let col = rd.headers().unwrap().iter().position(|h| h == "gpu_hours_stalled").expect("column");
    let all = rd.records().next().unwrap().unwrap();
    close(all[col].parse().unwrap(), 12.0, "summary.csv");
    // Samples every 10 minutes: 8 GPUs stalled from the sample after 20 m to the
    // one at 110 m, where `a` reruns (the sample sees the state after the instant).
    let ts = read(&out, "timeseries.csv");
    let head: Vec<&str> = ts.lines().next().unwrap().split(',').collect();
    let (c_alloc, c_stall) = (
        head.iter().position(|&h| h == "gpus_allocated").unwrap(),
        head.iter().position(|&h| h == "gpus_stalled").unwrap(),
    );
    let stalled: Vec<(String, String, String)> = ts
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|r| r[c_stall] != "0")
        .map(|r| (r[0].to_string(), r[c_alloc].to_string(), r[c_stall].to_string()))
        .collect();
    let want: Vec<(String, String, String)> = [20, 30, 40, 50, 60, 70, 80, 90, 100]
        .iter()
        .map(|m| {
            let alloc = if (80..110).contains(m) { "12" } else { "8" };
            ((m * 60).to_string(), alloc.to_string(), "8".to_string())
        })
        .collect();
    assert_eq!(stalled, want);
}

#[test]
fn bad_faults_are_refused_with_their_location() {
    let s = |faults: &str| scenario(NODES, &format!("{JOBS}  faults:\n{faults}"));
    let dist = "between: {distribution: exponential, mean: 10d}, repair: {distribution: fixed, value: 1h}";
    refused_with(&s("    randm: []\n"), &[], &["unknown field `randm`"]);
    refused_with(
        &s(&format!("    random:\n      - {{scope: host, {dist}}}\n")),
        &[],
        &["spec.faults.random[0].scope", "`host`: expected node, gpu or switch"],
    );
    refused_with(
        &s(&format!("    random:\n      - {{nodes: \"x-*\", {dist}}}\n")),
        &[],
        &["spec.faults.random[0].nodes", "`x-*` matches no node"],
    );
    refused_with(
        &s(
            "    random:\n      - {between: {distribution: weibull, mean: 1d}, repair: {distribution: fixed, value: 1h}}\n",
        ),
        &[],
        &[
            "spec.faults.random[0].between.mean",
            "has no meaning for a weibull distribution",
            "spec.faults.random[0].between.shape",
        ],
    );
    refused_with(
        &s(
            "    random:\n      - {between: {distribution: gamma, mean: 1d}, repair: {distribution: fixed, value: 0s}}\n",
        ),
        &[],
        &[
            "`gamma`: expected fixed, exponential, weibull or lognormal",
            "spec.faults.random[0].repair.value",
            "must be longer than 0",
        ],
    );
    refused_with(
        &s(&format!("    random:\n      - {{scope: switch, {dist}}}\n")),
        &[],
        &["spec.faults.random[0].tier", "needs the `tier`"],
    );
    refused_with(
        &s(&format!("    random:\n      - {{scope: switch, tier: 2, {dist}}}\n")),
        &[],
        &["no HyperNode of tier 2"],
    );
    refused_with(
        &s(&format!("    random:\n      - {{name: x, {dist}}}\n      - {{name: x, {dist}}}\n")),
        &[],
        &["`x` names two rules"],
    );
    refused_with(
        &s(&format!("    random:\n      - {{scope: node, gpus: 2, {dist}}}\n")),
        &[],
        &["spec.faults.random[0].gpus", "only a `scope: gpu` rule"],
    );
    refused_with(
        &s("    drains:\n      - {at: 1h, nodes: \"q*\", duration: 1h}\n"),
        &[],
        &["spec.faults.drains[0].nodes", "matches no node"],
    );
    refused_with(&s("    trace: missing.csv\n"), &[], &["spec.faults.trace", "cannot read"]);
    refused_with(
        &s("    trace: f.csv\n"),
        &[("f.csv", "when,target,duration,kind\n")],
        &["f.csv", "expected the columns `time,target,duration,kind,gpus,deadline`"],
    );
    refused_with(
        &s("    trace: f.csv\n"),
        &[(
            "f.csv",
            "time,target,duration,kind,gpus\n1h,n0,1h,node,\n2h,n9,1h,node,\n3h,n0,1x,gpu,0\n4h,n0,1h,crash,\n",
        )],
        &[
            "f.csv:3:1: target: `n9` matches no node",
            "f.csv:4:1: duration:",
            "f.csv:4:1: gpus: `0`: expected a whole number of GPUs ≥ 1",
            "f.csv:5:1: kind: `crash`: expected node, gpu, switch or drain",
        ],
    );
    // HyperNodes are known once the rest is valid (the topology is built then).
    refused_with(
        &s("    trace: f.csv\n"),
        &[("f.csv", "time,target,duration,kind\n5h,leaf-7,1h,switch\n")],
        &["f.csv:2:1: target: `leaf-7` is no HyperNode of the cluster"],
    );
    let placement = "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  cluster:\n    nodes: [{name: n0, gpus: 8, cpu: 64, memory: 256Gi}]\n  scheduler: {baseline: fgd}\n  placement: {demand: 0.5}\n  faults: {}\n";
    refused_with(placement, &[], &["spec.faults", "has no meaning in placement mode"]);
}

/// A compact elastic job through the binary: 2 pods of 8 GPUs, minAvailable 1,
/// 1 h of work with both; one node is busy for 30 min, so it runs on one pod
/// (half speed: 15 min of work), resizes at 30 min (a 1-minute pause) and does
/// the 45 minutes left at full speed: ends at 76 min = 4560 s.
#[test]
fn a_compact_elastic_job_grows_when_room_frees() {
    let jobs = "  workload:\n    - jobs:\n        - {name: blocker, duration: 30m, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 8}}]}\n        - {name: e, minAvailable: 1, scaling: linear, resizeOverhead: 1m, duration: 1h, tasks: [{name: w, replicas: 2, resources: {nvidia.com/gpu: 8}}]}\n";
    let (d, p) = write_scenario(&scenario(NODES, jobs));
    run_to(&p, &d.path().join("out"));
    let out = read(&d.path().join("out"), "jobs.csv");
    let e = out.lines().find(|l| l.starts_with("e,")).unwrap();
    assert_eq!(e.split(',').nth(6), Some("4560"), "{e}");
}

#[test]
fn bad_elastic_settings_are_refused_with_their_location() {
    let job = |extra: &str| {
        format!(
            "  workload:\n    - jobs:\n        - {{name: e, minAvailable: 1, duration: 1h, {extra}, tasks: [{{name: w, replicas: 2, resources: {{nvidia.com/gpu: 8}}}}]}}\n"
        )
    };
    refused_with(
        &scenario(NODES, &job("scaling: \"2:0.5, 1:1\"")),
        &[],
        &["spec.workload[0].jobs[0].scaling", "worker counts must ascend"],
    );
    refused_with(
        &scenario(NODES, &job("scaling: quadratic")),
        &[],
        &["spec.workload[0].jobs[0].scaling", "`quadratic`"],
    );
    refused_with(&scenario(NODES, &job("resizeOverhead: 5")), &[], &["spec.workload[0].jobs[0].resizeOverhead"]);
    let syn = "  workload:\n    - synthetic:\n        jobs: 3\n        arrival: {poisson: {ratePerHour: 1}}\n        gpus: {16: 1}\n        gpusPerPod: 8\n        duration: {lognormal: {median: 1h, sigma: 0.1, min: 1m, max: 2h}}\n        elastic: {minFraction: 1.5}\n";
    refused_with(
        &scenario(NODES, syn),
        &[],
        &["spec.workload[0].synthetic.elastic.minFraction", "expected a number above 0 and at most 1, got 1.5"],
    );
}

/// A task's own run time through the binary. A VolcanoJob in the shape of
/// Volcano's MPI example, whose launcher's pods say `lahar.io/duration: 3m`:
/// its `TaskCompleted → CompleteJob` ends the 1-hour job at 3 minutes, Completed
/// once the workers it kills are gone (30 s grace): 210 s. A compact job's task
/// `duration` does the same.
#[test]
fn task_completed_fires_through_the_binary() {
    let mpi = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: mpi\n  annotations: {lahar.io/duration: 1h}\nspec:\n  minAvailable: 3\n  schedulerName: volcano\n  tasks:\n    - replicas: 1\n      name: mpimaster\n      policies: [{event: TaskCompleted, action: CompleteJob}]\n      template:\n        metadata: {annotations: {lahar.io/duration: 3m}}\n        spec: {restartPolicy: OnFailure, containers: [{name: m, image: x, resources: {requests: {cpu: 1}}}]}\n    - replicas: 2\n      name: mpiworker\n      template:\n        spec: {containers: [{name: w, image: x, resources: {requests: {cpu: 1}}}]}\n";
    let (d, p) = write_scenario(&scenario(NODES, "  workload:\n    - manifests: mpi.yaml\n"));
    std::fs::write(d.path().join("mpi.yaml"), mpi).unwrap();
    run_to(&p, &d.path().join("out"));
    let jobs = read(&d.path().join("out"), "jobs.csv");
    let row: Vec<&str> = jobs.lines().nth(1).unwrap().split(',').collect();
    assert_eq!((row[0], row[6], row[7]), ("mpi", "210", "Completed"));
    let pods = read(&d.path().join("out"), "pods.csv");
    let mut ends: Vec<&str> = pods.lines().skip(1).map(|l| l.rsplit(',').next().unwrap()).collect();
    ends.sort();
    assert_eq!(ends, ["completed", "killed", "killed"]);
    let compact = "  workload:\n    - jobs:\n        - {name: c, duration: 1h, policies: [{event: TaskCompleted, action: CompleteJob}], tasks: [{name: launcher, replicas: 1, duration: 3m, resources: {cpu: 1}}, {name: w, replicas: 2, resources: {cpu: 1}}]}\n";
    let (d, p) = write_scenario(&scenario(NODES, compact));
    run_to(&p, &d.path().join("out"));
    let jobs = read(&d.path().join("out"), "jobs.csv");
    assert_eq!(jobs.lines().nth(1).unwrap().split(',').nth(6), Some("210"));
    let bad = "  workload:\n    - jobs:\n        - {name: c, duration: 1h, tasks: [{name: l, replicas: 1, duration: 0s, resources: {cpu: 1}}]}\n";
    refused_with(&scenario(NODES, bad), &[], &["spec.workload[0].jobs[0].tasks[0].duration", "must be longer than 0"]);
}

/// Volcano's reclaim takes an elastic job's pods above its minimum only. Queue
/// `a`'s elastic job (4 pods × 4 GPUs, minAvailable 1, 10 h with all four,
/// 30 s resizes) fills both nodes; queue `b`'s gang (2 × 4 GPUs, 1 h) arrives
/// at 10 min and reclaims two of its pods: they are released at 630 s and `b`
/// runs until 4230 s. The elastic job did 600 s of work on four pods, pauses
/// until 630, does (4230 − 630) × ½ = 1800 s on two, grows back at 4230,
/// pauses until 4260 and does the 33,600 s left: ends at 37,860 s.
#[test]
fn reclaim_takes_an_elastic_job_down_to_its_minimum_at_most() {
    let conf = "actions: \"enqueue, allocate, reclaim\"\ntiers:\n- plugins: [{name: priority}, {name: gang}, {name: conformance}]\n- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]\n";
    let jobs = "  queues:\n    - {name: a, weight: 1}\n    - {name: b, weight: 1}\n  scheduler: {conf: s.conf}\n  workload:\n    - jobs:\n        - {name: e, queue: a, minAvailable: 1, scaling: linear, duration: 10h, tasks: [{name: w, replicas: 4, resources: {nvidia.com/gpu: 4}}]}\n        - {name: g, queue: b, submitAt: 10m, duration: 1h, tasks: [{name: w, replicas: 2, resources: {nvidia.com/gpu: 4}}]}\n";
    let (d, p) = write_scenario(&scenario(NODES, jobs));
    std::fs::write(d.path().join("s.conf"), conf).unwrap();
    run_to(&p, &d.path().join("out"));
    let jobs = read(&d.path().join("out"), "jobs.csv");
    let e: Vec<&str> = jobs.lines().find(|l| l.starts_with("e,")).unwrap().split(',').collect();
    let g: Vec<&str> = jobs.lines().find(|l| l.starts_with("g,")).unwrap().split(',').collect();
    assert_eq!((g[5], g[6]), ("630", "4230"));
    assert_eq!((e[6], e[7]), ("37860", "Completed"));
    let pods = read(&d.path().join("out"), "pods.csv");
    let reclaimed = pods.lines().filter(|l| l.starts_with("e,") && l.ends_with(",600,reclaimed")).count();
    assert_eq!(reclaimed, 2, "{pods}");
}
