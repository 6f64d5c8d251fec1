//! `--explain` names why a job ended, beside its phase: each cause recorded
//! where the job reached its terminal phase (`JobEnd`), through the binary.

/// A VolcanoJob `name` with `spec` lines and `tasks` (each a task entry).
fn vcjob(name: &str, spec: &str, tasks: &[String]) -> String {
    format!(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: {name}\n  annotations: {{lahar.io/duration: 1h}}\nspec:\n{spec}  tasks:\n{}",
        tasks.concat()
    )
}

/// A task `name` of `replicas` 1-CPU pods with template annotations `ann`.
fn task(name: &str, replicas: u32, min: u32, ann: &str) -> String {
    format!(
        "    - name: {name}\n      replicas: {replicas}\n      minAvailable: {min}\n      template:\n        metadata: {{annotations: {{{ann}}}}}\n        spec:\n          restartPolicy: Never\n          containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: \"1\"}}}}}}]\n"
    )
}

/// Runs `objects` on one 16-CPU node with `timeline` entries, explaining
/// `pods`; returns stdout.
fn explain(objects: &[String], timeline: &str, pods: &[&str]) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("jobs.yaml"), objects.join("---\n")).expect("write");
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  cluster:\n    nodes: [{{name: n0, cpu: 16, memory: 64Gi}}]\n  workload:\n    - manifests: [jobs.yaml]\n{timeline}"
    );
    std::fs::write(dir.path().join("s.yaml"), text).expect("write");
    let mut cmd = crate::lahar();
    cmd.current_dir(dir.path()).args(["run", "s.yaml", "--out", "out"]);
    for p in pods {
        cmd.args(["--explain", p]);
    }
    let out = cmd.output().expect("run");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The line under job `label`'s explain line.
fn fate<'a>(stdout: &'a str, label: &str) -> &'a str {
    let lines: Vec<&str> = stdout.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with(&format!("explain {label} ")) || l.starts_with(&format!("explain {label}:")))
        .unwrap_or_else(|| panic!("no line for {label}: {stdout}"));
    lines.get(at + 1).map_or("", |l| l.trim())
}

/// By hand, on one 16-CPU node, every pod runs from 0:
/// - `ms` (`minSuccess: 2`; task `a`: 2 pods of 10 s, task `b`: 1 pod of 1 h):
///   both `a` pods succeed at 10 s, 2 ≥ 2: Completed at 10 s, `b` killed.
/// - `miss` (`minSuccess: 3`, 2 pods of 5 s): both succeed at 5 s and every pod
///   has ended with 2 < 3: Failed at 5 s.
/// - `short` (task `a`: 2 pods failing at 5 s, `minAvailable: 1`; task `b`:
///   2 pods of 10 s, `minAvailable: 1`; the job's minAvailable 2 = the tasks'
///   sum): every pod has ended at 10 s, `a` has 0 successes < 1: Failed at 10 s.
/// - `few` (job `minAvailable: 2`, under its tasks' sum 3, so no task check;
///   task `f`: 2 pods failing at 5 s, task `s`: 1 pod of 10 s): every pod has
///   ended at 10 s, 1 succeeded < 2: Failed at 10 s.
/// - `done` (1 pod of 10 s): its work is done at 10 s: Completed, no cause
///   beside the phase.
/// - `dl` (a batch/v1 Job of 1 h, `activeDeadlineSeconds: 30`): Failed at 30 s.
/// - `gone` deleted by the timeline at 20 s; `sus` suspended at 20 s (Aborted
///   once its pod is gone after its 30 s grace: at 50 s).
#[test]
fn explain_names_why_each_job_ended() {
    let secs = |s: u32| format!("lahar.io/duration: {s}s");
    let fail = "lahar.io/fail-after: 5s, lahar.io/exit-code: \"3\"";
    let objects = [
        vcjob("ms", "  minSuccess: 2\n", &[task("a", 2, 1, &secs(10)), task("b", 1, 1, &secs(3600))]),
        vcjob("miss", "  minSuccess: 3\n", &[task("w", 2, 2, &secs(5))]),
        vcjob("short", "", &[task("a", 2, 1, fail), task("b", 2, 1, &secs(10))]),
        vcjob("few", "  minAvailable: 2\n", &[task("f", 2, 2, fail), task("s", 1, 1, &secs(10))]),
        vcjob("done", "", &[task("w", 1, 1, &secs(10))]),
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: dl\n  annotations: {lahar.io/duration: 1h}\nspec:\n  activeDeadlineSeconds: 30\n  template:\n    spec:\n      schedulerName: volcano\n      restartPolicy: Never\n      containers: [{name: c, image: busybox, resources: {requests: {cpu: \"1\"}}}]\n".to_string(),
        vcjob("gone", "", &[task("w", 1, 1, "")]),
        vcjob("sus", "", &[task("w", 1, 1, "")]),
    ];
    let timeline = "  timeline:\n    - {at: 20s, deleteJob: gone}\n    - {at: 20s, suspendJob: sus}\n";
    let pods = ["ms-b-0", "miss-w-0", "short-a-0", "few-s-0", "done-w-0", "dl", "gone-w-0", "sus-w-0"];
    let stdout = explain(&objects, timeline, &pods);
    let cases = [
        ("ms", "Completed at 10 s; its succeeded pods reached minSuccess 2; its others were killed"),
        ("miss", "Failed at 5 s; its 2 pods all ended, 2 succeeded: fewer than minSuccess 3"),
        ("short", "Failed at 10 s; its 4 pods all ended; task a had 0 succeeded: fewer than its minAvailable 1"),
        ("few", "Failed at 10 s; its 3 pods all ended, 1 succeeded: fewer than minAvailable 2"),
        ("done", "Completed at 10 s"),
        ("dl", "Failed at 30 s; its activeDeadlineSeconds (30 s) passed: DeadlineExceeded"),
        ("gone", "Terminated at 20 s; an operator deleted it (the timeline's deleteJob)"),
        ("sus", "Aborted at 50 s; an operator suspended it (the timeline's suspendJob) and nothing resumed it"),
    ];
    for (job, want) in cases {
        assert_eq!(fate(&stdout, job), want, "{job}: {stdout}");
    }
}

/// The causes other controllers record. By hand, on one 16-CPU node:
/// - `bo` (a batch/v1 Job, `restartPolicy: OnFailure`, `backoffLimit: 1`, its
///   container failing after 5 s): the container restarts in place after the
///   kubelet's 10 s back-off, at 15 s, and that restart reaches the limit:
///   Failed at 15 s.
/// - `bare` (a Pod without a controller) deleted at 20 s: no pod of it is left
///   alive and nothing replaces it: Terminated at 20 s.
/// - CronJob `c` (`*/5`, Replace, runs of 7 min): run `c-5` replaced by `c-10`
///   at 600 s.
#[test]
fn explain_names_other_controllers_ends() {
    let objects = [
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: bo\n  annotations: {lahar.io/duration: 1h}\nspec:\n  backoffLimit: 1\n  template:\n    metadata: {annotations: {lahar.io/fail-after: 5s}}\n    spec:\n      schedulerName: volcano\n      restartPolicy: OnFailure\n      containers: [{name: c, image: busybox, resources: {requests: {cpu: \"1\"}}}]\n".to_string(),
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bare\n  annotations: {lahar.io/duration: 1h}\nspec:\n  schedulerName: volcano\n  containers: [{name: c, image: i, resources: {requests: {cpu: \"1\"}}}]\n".to_string(),
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: CronJob\nmetadata: {name: c, annotations: {lahar.io/duration: 7m}}\nspec:\n  schedule: \"*/5 * * * *\"\n  concurrencyPolicy: Replace\n  jobTemplate:\n    spec:\n      tasks: [{replicas: 1, name: t, template: {spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}}}]\n".to_string(),
    ];
    let timeline = "  horizon: 12m\n  timeline:\n    - {at: 20s, deletePod: bare}\n";
    let stdout = explain(&objects, timeline, &["bo", "bare", "c-5-t-0"]);
    let cases = [
        (
            "bo",
            "Failed at 15 s; its containers restarted 1 time under restartPolicy OnFailure, reaching backoffLimit 1: BackoffLimitExceeded",
        ),
        ("bare", "Terminated at 20 s; no pod of it was left alive (pods without a controller are not replaced)"),
        ("c-5", "Terminated at 600 s; its CronJob's next run replaced it (concurrencyPolicy: Replace)"),
    ];
    for (job, want) in cases {
        assert_eq!(fate(&stdout, job), want, "{job}: {stdout}");
    }
}
