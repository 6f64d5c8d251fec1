//! Kubernetes `batch/v1` Jobs scheduled by Volcano (issue 40): Volcano's
//! PodGroup controller groups a Job's pods (`podgroup-<uid>`, `minMember` from
//! `scheduling.volcano.sh/group-min-member`, else 1); Kubernetes' Job controller
//! keeps `parallelism` pods active until `completions` have succeeded, replaces
//! pods that end without succeeding and fails the Job past `backoffLimit`.
//! Hand-checked through the binary.

use super::*;

/// A batch/v1 Job `name` of one-CPU pods that each run `duration`, with `spec`
/// more lines (2 spaces of indentation) and Job annotations `ann`.
fn job(name: &str, spec: &str, ann: &str) -> String {
    format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  annotations: {{lahar.io/duration: 1h{ann}}}\nspec:\n{spec}  template:\n    spec:\n      schedulerName: volcano\n      restartPolicy: Never\n      containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: \"1\"}}}}}}]\n"
    )
}

/// A CSV file's rows, split at commas.
type Rows = Vec<Vec<String>>;

/// Runs the manifests `objects` on `nodes` nodes of `cpu` CPUs, with
/// `timeline` entries; returns (decisions, pods, jobs) rows and stderr.
fn run(cpu: u32, nodes: u32, objects: &str, timeline: &str) -> (Rows, Rows, Rows, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.yaml"), objects).unwrap();
    let text = scenario(
        &format!("    nodeGroups:\n      - {{name: n, count: {nodes}, cpu: {cpu}, memory: 64Gi}}"),
        &format!("{timeline}  workload:\n    - manifests: m.yaml\n"),
    );
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let out = dir.path().join("o");
    let o = lahar().arg("run").arg(dir.path().join("s.yaml")).arg("--out").arg(&out).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let rows = |f: &str| -> Rows {
        std::fs::read_to_string(out.join(f))
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| l.split(',').map(str::to_string).collect())
            .collect()
    };
    (rows("decisions.csv"), rows("pods.csv"), rows("jobs.csv"), stderr)
}

/// Five completions, two at a time, on a node of 8 CPUs: pods start at 0, 0,
/// 1 h, 1 h and 2 h (each made as one succeeds), and the Job completes at 3 h.
/// The pods are named as the Job controller names them.
#[test]
fn parallelism_runs_completions_in_waves() {
    let (_, pods, jobs, _) = run(8, 1, &job("wave", "  parallelism: 2\n  completions: 5\n", ""), "");
    let mut starts: Vec<&str> = pods.iter().map(|r| r[6].as_str()).collect();
    starts.sort_by_key(|s| s.parse::<f64>().unwrap() as i64);
    assert_eq!(starts, ["0", "0", "3600", "3600", "7200"], "{pods:?}");
    assert!(
        pods.iter().all(|r| r[8] == "completed" && r[1].starts_with("default/wave-") && r[1].len() == 18),
        "{pods:?}"
    );
    assert_eq!((jobs[0][0].as_str(), jobs[0][6].as_str(), jobs[0][7].as_str()), ("wave", "10800", "Completed"));
    // Indexed: `<job>-<index>-<suffix>`.
    let (_, pods, _, _) =
        run(8, 1, &job("ix", "  completionMode: Indexed\n  completions: 2\n  parallelism: 2\n", ""), "");
    let mut names: Vec<&str> = pods.iter().map(|r| &r[1][..13]).collect();
    names.sort();
    assert_eq!(names, ["default/ix-0-", "default/ix-1-"], "{pods:?}");
}

/// `minMember` from the Job's annotation makes a gang: three pods at once on
/// two one-CPU nodes never start; with `minMember` 2 they run two at a time.
#[test]
fn group_min_member_gangs_the_jobs_pods() {
    let three = job("g", "  parallelism: 3\n  completions: 3\n", ", scheduling.volcano.sh/group-min-member: \"3\"");
    let (decisions, _, jobs, _) = run(1, 2, &three, "");
    assert!(decisions.iter().all(|r| r[3] != "bind"), "{decisions:?}");
    assert_eq!(jobs[0][7], "Pending", "{jobs:?}");
    let two = three.replace("group-min-member: \"3\"", "group-min-member: \"2\"");
    let (_, _, jobs, _) = run(1, 2, &two, "");
    assert_eq!((jobs[0][6].as_str(), jobs[0][7].as_str()), ("7200", "Completed"), "{jobs:?}");
}

/// A pod deleted before it succeeds is replaced and counted: with
/// `backoffLimit: 1` the second deletion fails the Job.
#[test]
fn backoff_limit_fails_the_job() {
    let j = job("b", "  backoffLimit: 1\n", "");
    let tl = "  timeline:\n    - {at: 10m, removeNodes: n-0}\n    - {at: 20m, addNodes: n-0}\n    - {at: 30m, removeNodes: n-0}\n    - {at: 40m, addNodes: n-0}\n";
    let (_, pods, jobs, _) = run(4, 1, &j, tl);
    let ends: Vec<(&str, &str)> = pods.iter().map(|r| (r[7].as_str(), r[8].as_str())).collect();
    assert_eq!(ends, [("600", "node-deleted"), ("1800", "node-deleted")], "{pods:?}");
    assert_eq!((jobs[0][7].as_str(), jobs[0][6].as_str()), ("Failed", "1800"), "{jobs:?}");
    // With the default backoffLimit (6) it goes on and completes 1 h after its
    // last replacement started (at 40 min).
    let (_, _, jobs, _) = run(4, 1, &job("b", "", ""), tl);
    assert_eq!((jobs[0][7].as_str(), jobs[0][6].as_str()), ("Completed", "6000"), "{jobs:?}");
}

/// One deletion counts once, however the pod goes. By hand, on two one-CPU
/// nodes: the pod (template grace 600 s) runs on `n-1` from 0; at 10 min a
/// `NoExecute` taint there deletes it (heard, counted: 1 of `backoffLimit` 1),
/// and at 15 min, within its grace, `n-1` itself is deleted. By default the
/// replacement was made at 10 min and starts on `n-0` at once (the Job completes
/// at 4,200 s); under `podReplacementPolicy: Failed` it waits for the pod to go,
/// at 15 min with its node, not 20 (completes at 4,500 s). One retry either way:
/// the node's deletion is no second failure.
#[test]
fn a_pod_whose_node_goes_during_its_grace_is_counted_once() {
    for (policy, start, end) in [("", "600", "4200"), ("  podReplacementPolicy: Failed\n", "900", "4500")] {
        let j = job("b", &format!("  backoffLimit: 1\n{policy}"), "")
            .replace("restartPolicy: Never\n", "restartPolicy: Never\n      terminationGracePeriodSeconds: 600\n");
        let tl = "  timeline:\n    - {at: 10m, taint: n-1, key: maint, effect: NoExecute}\n    - {at: 15m, removeNodes: n-1}\n";
        let (_, pods, jobs, _) = run(1, 2, &j, tl);
        let ends: Vec<[&str; 4]> =
            pods.iter().map(|r| [r[4].as_str(), r[6].as_str(), r[7].as_str(), r[8].as_str()]).collect();
        assert_eq!(ends, [["n-1", "0", "600", "evicted"], ["n-0", start, end, "completed"]], "{policy}: {pods:?}");
        // state, end, retries
        let row = &jobs[0];
        assert_eq!([row[7].as_str(), row[6].as_str(), row[15].as_str()], ["Completed", end, "1"], "{jobs:?}");
    }
}

/// `activeDeadlineSeconds` counts from the Job's creation (Kubernetes' Job
/// controller, `pastActiveDeadline`). On one 1-CPU node: `slow` (1 h of work,
/// deadline 30 min) runs from 0 and fails at 1,800 s, its pod deleted (`deadline`)
/// and gone after its 30 s grace; `waiting` (created at 1 s, deadline 15 min)
/// never gets the CPU and fails at 901 s without a pod; `quick` (created at 2 s,
/// deadline 3 h) starts at 1,830 s and completes at 5,430 s, within its deadline.
/// Two deadline misses; `deadline_s` in jobs.csv.
#[test]
fn active_deadline_fails_the_job_at_its_deadline() {
    let objects = [
        job("slow", "  activeDeadlineSeconds: 1800\n", ""),
        job("waiting", "  activeDeadlineSeconds: 900\n", ", lahar.io/submit-at: 1s"),
        job("quick", "  activeDeadlineSeconds: 10800\n", ", lahar.io/submit-at: 2s"),
    ]
    .join("---\n");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.yaml"), objects).unwrap();
    let text = scenario(
        "    nodeGroups:\n      - {name: n, count: 1, cpu: 1, memory: 64Gi}",
        "  workload:\n    - manifests: m.yaml\n",
    );
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let out = dir.path().join("o");
    lahar().arg("run").arg("-q").arg(dir.path().join("s.yaml")).arg("--out").arg(&out).assert().success();
    let csv = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
    let jobs = csv("jobs.csv");
    let col = |row: &str, name: &str| {
        let header: Vec<&str> = jobs.lines().next().unwrap().split(',').collect();
        let i = header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("{name}"));
        row.split(',').nth(i).unwrap().to_string()
    };
    let facts: Vec<[String; 5]> = jobs
        .lines()
        .skip(1)
        .map(|r| [col(r, "job"), col(r, "start_s"), col(r, "end_s"), col(r, "state"), col(r, "deadline_s")])
        .collect();
    let want = [
        ["waiting", "", "901", "Failed", "900"],
        ["slow", "0", "1800", "Failed", "1800"],
        ["quick", "1830", "5430", "Completed", "10800"],
    ];
    assert_eq!(facts, want.map(|r| r.map(str::to_string)), "{jobs}");
    let pods = csv("pods.csv");
    let ends: Vec<(&str, &str, &str)> = pods
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0], f[7], f[8])
        })
        .collect();
    assert_eq!(ends, [("slow", "1800", "deadline"), ("quick", "5430", "completed")], "{pods}");
    let summary: serde_json::Value = serde_json::from_str(&csv("summary.json")).unwrap();
    assert_eq!(summary["metrics"]["deadline_misses"], 2, "{summary}");
    // Without deadlines nothing fails: `slow` completes at 3,600 s.
    let (_, _, jobs, _) = run(1, 1, &job("slow", "", ""), "");
    assert_eq!((jobs[0][6].as_str(), jobs[0][7].as_str()), ("3600", "Completed"), "{jobs:?}");
}

/// Jobs for another scheduler and suspended Jobs are left out with a warning;
/// fields lahar does not model, unknown fields and bad values are refused at
/// their place.
#[test]
fn jobs_lahar_cannot_simulate_are_named() {
    // Beside a Job lahar runs, they are counted; alone, nothing would run.
    let other = job("k", "", "").replace("      schedulerName: volcano\n", "");
    let suspended = job("s", "  suspend: true\n", "");
    let (_, pods, _, stderr) = run(4, 1, &format!("{other}---\n{suspended}---\n{}", job("ok", "", "")), "");
    assert_eq!(pods.len(), 1, "{pods:?}");
    assert!(stderr.contains("Job (batch/v1) of schedulerName `default-scheduler`"), "{stderr}");
    assert!(stderr.contains("Job (batch/v1), suspended"), "{stderr}");
    let cases = [
        ("  activeDeadlineSeconds: -1\n", "spec.activeDeadlineSeconds: must be an integer ≥ 0, got -1"),
        ("  podFailurePolicy: {rules: []}\n", "spec.podFailurePolicy: `podFailurePolicy` decides"),
        ("  completionMode: Sometimes\n", "spec.completionMode: expected `NonIndexed` or `Indexed`, got `Sometimes`"),
        ("  paralelism: 2\n", "spec.paralelism: unknown field"),
        ("  parallelism: -1\n", "spec.parallelism"),
    ];
    for (spec, needle) in cases {
        let err = refused(&job("x", spec, ""));
        assert!(err.contains(needle), "error lacks {needle:?}:\n{err}");
    }
    let err = refused(&job("r", "", "").replace("restartPolicy: Never", "restartPolicy: Always"));
    assert!(
        err.contains("spec.template.spec.restartPolicy: a Job's pods restart `Never` or `OnFailure`, got `Always`"),
        "{err}"
    );
    // A value outside the API server's enum: one error, at its place.
    let err = refused(&job("r", "", "").replace("restartPolicy: Never", "restartPolicy: Sometimes"));
    let needle = "m.yaml:10:22: document 1: spec.template.spec.restartPolicy: expected `Always`, `OnFailure` or `Never`, got `Sometimes`";
    assert!(err.contains(needle) && err.matches("error:").count() == 1, "{err}");
}

/// A batch/v1 Job `name` (`spec` lines as for [`job`]) whose one-CPU pods run
/// `duration` and whose containers fail every `after` under `restartPolicy:
/// OnFailure`.
fn crashing(name: &str, spec: &str, duration: &str, after: &str) -> String {
    job(name, spec, "")
        .replace("lahar.io/duration: 1h", &format!("lahar.io/duration: {duration}"))
        .replace(
            "    spec:\n",
            &format!("    metadata: {{annotations: {{lahar.io/fail-after: {after}}}}}\n    spec:\n"),
        )
        .replace("restartPolicy: Never", "restartPolicy: OnFailure")
}

/// Under `restartPolicy: OnFailure` a failed container restarts in place and
/// Kubernetes' Job controller counts the restarts of its Running and Pending
/// pods against `backoffLimit` (`pastBackoffLimitOnFailure`). By hand, a pod
/// whose container fails every 4 min: exits at 240 s, restarted after the
/// kubelet's 10 s at 250 s (1 restart), exits at 490 s, restarted after 20 s at
/// 510 s (2), then 40, 80, 160 and 300 s (capped): restarts 3 to 6 at 790, 1,110,
/// 1,510 and 2,050 s. The Job fails at the restart that reaches its limit, its
/// pod deleted then (`killed`; one interval in pods.csv, kept on its node
/// through the loop); a limit of 0 fails it at the first. Two pods (parallelism
/// 2) restart together: with a limit of 3 the first pod's second restart, at
/// 510 s, makes 3. A container whose work ends before it fails (3 min) succeeds.
/// Failed pods are not retries (jobs.csv `retries` 0).
#[test]
fn on_failure_restarts_count_towards_the_backoff_limit() {
    let cases = [
        ("  backoffLimit: 2\n", "1h", 1, "510", "Failed"),
        ("  backoffLimit: 0\n", "1h", 1, "250", "Failed"),
        ("", "1h", 1, "2050", "Failed"),
        ("  backoffLimit: 3\n  parallelism: 2\n", "1h", 2, "510", "Failed"),
        ("", "3m", 1, "180", "Completed"),
    ];
    for (spec, duration, n, end, state) in cases {
        let (_, pods, jobs, _) = run(4, 1, &crashing("c", spec, duration, "4m"), "");
        let reason = if state == "Failed" { "killed" } else { "completed" };
        let want = vec![["n-0", "0", end, reason]; n];
        let got: Vec<[&str; 4]> =
            pods.iter().map(|r| [r[4].as_str(), r[6].as_str(), r[7].as_str(), r[8].as_str()]).collect();
        assert_eq!(got, want, "{spec}: {pods:?}");
        let row = &jobs[0];
        assert_eq!([row[6].as_str(), row[7].as_str(), row[15].as_str()], [end, state, "0"], "{spec}: {jobs:?}");
    }
}

/// `lahar validate`'s error (exit 2) on manifests `objects`.
fn refused(objects: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.yaml"), objects).unwrap();
    let text = scenario(
        "    nodeGroups:\n      - {name: n, count: 1, cpu: 4, memory: 8Gi}",
        "  workload:\n    - manifests: m.yaml\n",
    );
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let o = lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().code(2);
    String::from_utf8_lossy(&o.get_output().stderr).to_string()
}

/// Volcano's PodGroup controller gives the Job's PodGroup the Job's
/// `volcano.sh/*` annotations (`inheritUpperAnnotations`): under the e2e conf
/// (sla with no argument), on a 2-CPU node where `a` runs 0 → 1 h, `b` (2 CPUs,
/// at 10 s) with `volcano.sh/sla-waiting-time: 30s` is admitted when its
/// waiting time is over, at 40 s; the bare `sla-waiting-time` has no
/// `volcano.sh/` prefix and stays on the Job, so `b` waits for `a`'s end. The
/// template's network-topology annotations make the group's `networkTopology`
/// (a bad mode is refused at its place; Volcano reads it in any case).
#[test]
fn the_podgroup_takes_the_jobs_volcano_keys() {
    let pair = |ann: &str| {
        let a = job("a", "", "").replace("cpu: \"1\"", "cpu: \"2\"");
        let b = job("b", "", &format!(", lahar.io/submit-at: 10s{ann}")).replace("cpu: \"1\"", "cpu: \"2\"");
        format!("{a}---\n{b}")
    };
    for (ann, admitted) in [(", volcano.sh/sla-waiting-time: 30s", "40"), (", sla-waiting-time: 30s", "3600")] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.yaml"), pair(ann)).unwrap();
        std::fs::write(dir.path().join("ci.conf"), super::volcano_controller::e2e_conf()).unwrap();
        let text = scenario(
            "    nodes: [{name: n0, cpu: 2, memory: 4Gi}]",
            "  scheduler: {conf: ci.conf}\n  workload:\n    - manifests: m.yaml\n",
        );
        std::fs::write(dir.path().join("s.yaml"), text).unwrap();
        let out = super::volcano::run_file(&dir.path().join("s.yaml"));
        let inqueue: Vec<&str> = out
            .of("phase")
            .iter()
            .filter(|d| d["job"] == "b" && d["phase"] == "Inqueue")
            .map(|d| d["t_s"].as_str())
            .collect();
        assert_eq!(inqueue.first(), Some(&admitted), "{ann}: {inqueue:?}");
    }
    let topo = |mode: &str| {
        job("t", "", "").replace(
            "    spec:\n      schedulerName",
            &format!("    metadata:\n      annotations: {{volcano.sh/network-topology-mode: {mode}, volcano.sh/network-topology-highest-tier: \"1\"}}\n    spec:\n      schedulerName"),
        )
    };
    let err = refused(&format!("{}---\n{}", topo("Hard"), topo("loose").replace("name: t\n", "name: u\n")));
    assert!(
        err.contains("spec.template.metadata.annotations.volcano.sh/network-topology-mode: expected `hard` or `soft`, got `loose`"),
        "{err}"
    );
    assert_eq!(err.matches("network-topology-mode").count(), 1, "`Hard` is read as `hard`:\n{err}");
}
