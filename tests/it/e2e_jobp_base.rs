//! Replays of Volcano's e2e suites test/e2e/jobp (job_lifecycle.go, admission.go)
//! and test/e2e/schedulingbase (job_scheduling.go, k8s_job.go, sla.go) under
//! their `It(...)` names, over many sessions with the e2e conf on the CI cluster
//! (four workers of 3.9 free CPUs: `ClusterSize(OneCPU)` = 12; see
//! `e2e_jobseq.rs` for the restated helpers). Where the e2e's wait holds on an
//! initial state (`WaitJobStatePending`, `WaitTaskPhase(..., 0)`, a batch/v1
//! Job's `Active > 0`), the test checks what the code does instead and says so.

use super::e2e_jobseq::{e2e, intervals, iv, pg_rows, row, state};
use super::volcano::Out;

/// `ClusterSize(OneCPU)` on the CI cluster.
const R: u32 = 12;

/// A one-task VolcanoJob as `util.CreateJob` makes it: `replicas` pods asking
/// `cpu` ("" for none), `min` the job's `minAvailable`, the pods' template
/// annotations `run` ("" for nginx, which runs until the job's hour is up).
fn job(name: &str, min: u32, replicas: u32, cpu: &str, run: &str, extra: &str) -> String {
    let req = if cpu.is_empty() { String::new() } else { format!(", resources: {{requests: {{cpu: \"{cpu}\"}}}}") };
    let meta = if run.is_empty() { String::new() } else { format!("        metadata: {{annotations: {{{run}}}}}\n") };
    let restart = if run.contains("fail-after") { "Never" } else { "OnFailure" };
    format!(
        "---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: {name}\n  annotations: {{lahar.io/duration: 1h}}\nspec:\n  minAvailable: {min}\n{extra}  tasks:\n    - name: task\n      replicas: {replicas}\n      template:\n{meta}        spec:\n          restartPolicy: {restart}\n          terminationGracePeriodSeconds: 3\n          containers: [{{name: c, image: nginx{req}}}]\n"
    )
}

/// Pods of `job` that ran (a pods.csv row).
fn started(out: &Out, job: &str) -> usize {
    out.pods_of(job).len()
}

// ---------------------------------------------------------------------------
// test/e2e/jobp/job_lifecycle.go: each test deletes its job at the end and
// waits for the job, its PodGroup and its pods to be gone (a dated deleteJob).

#[test]
fn delete_job_that_is_pending_state() {
    // `Delete job that is pending state`: 10,000-CPU pods: overcommit never
    // admits the group, so no pod is made; the deletion ends it.
    let out =
        e2e(&job("pending-delete-job", 2, 2, "10000", "", ""), &["{at: 30s, deleteJob: pending-delete-job}"], "1m");
    assert!(out.pods.is_empty());
    assert!(pg_rows(&out, "pending-delete-job").is_empty(), "the group never leaves Pending");
    assert_eq!(state(&out, "pending-delete-job"), "Terminated,0,30");
}

#[test]
fn delete_job_that_is_running_state() {
    // `Delete job that is Running state`: two BestEffort pods run; the deletion
    // kills them (3 s grace).
    let out = e2e(&job("running-delete-job", 2, 2, "", "", ""), &["{at: 30s, deleteJob: running-delete-job}"], "1m");
    assert_eq!(intervals(&out, "running-delete-job-task-0"), [iv("0", "30", "killed")]);
    assert_eq!(state(&out, "running-delete-job"), "Terminated,0,30");
}

#[test]
fn delete_job_that_is_completed_state() {
    // `Delete job that is Completed state`: busybox `sleep 5`: Completed at 5 s;
    // deleting a finished job changes nothing.
    let out = e2e(
        &job("complete-delete-job", 2, 2, "", "lahar.io/duration: 5s", ""),
        &["{at: 30s, deleteJob: complete-delete-job}"],
        "1m",
    );
    assert_eq!(intervals(&out, "complete-delete-job-task-1"), [iv("0", "5", "completed")]);
    assert_eq!(state(&out, "complete-delete-job"), "Completed,0,5");
}

#[test]
fn delete_job_that_is_failed_job() {
    // `Delete job that is Failed job`: `sleep 10s && exit 3` under PodFailed →
    // AbortJob: [Pending, Running, Aborted] at 10 s.
    let policy = "  policies: [{event: PodFailed, action: AbortJob}]\n";
    let run = "lahar.io/fail-after: 10s, lahar.io/exit-code: \"3\"";
    let out = e2e(&job("failed-delete-job", 1, 1, "", run, policy), &["{at: 30s, deleteJob: failed-delete-job}"], "1m");
    assert_eq!(intervals(&out, "failed-delete-job-task-0"), [iv("0", "10", "exited")]);
    assert_eq!(state(&out, "failed-delete-job"), "Aborted,0,10");
}

#[test]
fn delete_job_that_is_terminated_job() {
    // `Delete job that is terminated job`: the same under PodFailed → TerminateJob.
    let policy = "  policies: [{event: PodFailed, action: TerminateJob}]\n";
    let run = "lahar.io/fail-after: 10s, lahar.io/exit-code: \"3\"";
    let out =
        e2e(&job("terminate-delete-job", 1, 1, "", run, policy), &["{at: 30s, deleteJob: terminate-delete-job}"], "1m");
    assert_eq!(state(&out, "terminate-delete-job"), "Terminated,0,10");
}

#[test]
fn create_and_delete_job_with_cpu_requirement() {
    // `Create and Delete job with CPU requirement`: one 1-CPU pod that sleeps 10 s
    // and exits 0: [Pending, Running, Completed] at 10 s.
    let policy = "  policies: [{event: PodFailed, action: TerminateJob}]\n";
    let out = e2e(
        &job("terminate-delete-job", 1, 1, "1", "lahar.io/duration: 10s", policy),
        &["{at: 30s, deleteJob: terminate-delete-job}"],
        "1m",
    );
    assert_eq!(state(&out, "terminate-delete-job"), "Completed,0,10");
}

// ---------------------------------------------------------------------------
// test/e2e/jobp/admission.go

#[test]
fn create_volcano_scheduler_pod() {
    // `Create volcano-scheduler pod`: a bare Pod of 1 CPU with schedulerName
    // volcano gets its own PodGroup (minMember 1) and runs.
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: pod-volcano-scheduler, annotations: {lahar.io/duration: 1h}}\nspec:\n  schedulerName: volcano\n  containers: [{name: c, image: nginx, resources: {requests: {cpu: \"1\"}, limits: {cpu: \"1\"}}}]\n";
    let out = e2e(pod, &[], "1m");
    assert_eq!(intervals(&out, "pod-volcano-scheduler"), [iv("0", "60", "running")]);
}

#[test]
fn create_volcano_pod_with_volcano_scheduler() {
    // `Create volcano pod with volcano scheduler`: PodGroup `running-pg` (minMember
    // 1, minResources 1 CPU) turns Inqueue before any pod exists; the pod created
    // after it (restated: at 10 s) runs in it.
    let objects = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: running-pg, annotations: {lahar.io/duration: 1h}}\nspec: {minMember: 1, minResources: {cpu: \"1\"}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: volcano-pod, annotations: {scheduling.k8s.io/group-name: running-pg}}\nspec:\n  schedulerName: volcano\n  containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m}, limits: {cpu: 500m}}}]\n";
    let out = e2e(objects, &[], "1m");
    let rows = pg_rows(&out, "running-pg");
    assert_eq!(rows[0], row("0", "Inqueue", "enqueue"));
    assert_eq!(intervals(&out, "volcano-pod"), [iv("0", "60", "running")]);
}

#[test]
fn allow_to_create_pod_when_podgroup_is_pending() {
    // `Allow to create pod when podgroup is Pending`: the e2e checks only that
    // both objects are accepted. Restated from the code: the group asks for 30
    // CPUs (more than the cluster's 15.6 × 1.2), overcommit never admits it, and
    // its pod stays Pending.
    let objects = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: pending-pg, annotations: {lahar.io/duration: 1h}}\nspec: {minMember: 1, minResources: {cpu: \"30\"}}\nstatus: {phase: Pending}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod-volcano, annotations: {scheduling.k8s.io/group-name: pending-pg}}\nspec:\n  schedulerName: volcano\n  containers: [{name: c, image: nginx, resources: {requests: {cpu: \"1\"}, limits: {cpu: \"1\"}}}]\n";
    let out = e2e(objects, &[], "1m");
    assert!(out.pods.is_empty() && pg_rows(&out, "pending-pg").is_empty());
    // Twin: the group asking for 1 CPU is admitted at once and its pod runs from
    // 0 to the 1-minute horizon.
    let out = e2e(&objects.replacen("cpu: \"30\"", "cpu: \"1\"", 1), &[], "1m");
    assert_eq!(pg_rows(&out, "pending-pg")[0], row("0", "Inqueue", "enqueue"));
    assert_eq!(intervals(&out, "pod-volcano"), [iv("0", "60", "running")]);
}

// ---------------------------------------------------------------------------
// test/e2e/schedulingbase/job_scheduling.go

#[test]
fn schedule_job() {
    // `Schedule Job`: R busybox pods that exit at once (a 1 s run), minAvailable
    // 2: at least 2 run.
    let out = e2e(&job("qj-1", 2, R, "1", "lahar.io/duration: 1s", ""), &[], "1m");
    assert!(started(&out, "qj-1") >= 2);
    assert_eq!(state(&out, "qj-1"), "Completed,0,1");
}

#[test]
fn schedule_multiple_jobs() {
    // `Schedule Multiple Jobs`: three such jobs (3R CPUs asked of R): each has
    // at least 2 pods run; pods that finish free the CPUs for the next.
    let jobs = ["mqj-1", "mqj-2", "mqj-3"].map(|n| job(n, 2, R, "1", "lahar.io/duration: 1s", "")).concat();
    let out = e2e(&jobs, &[], "1m");
    for n in ["mqj-1", "mqj-2", "mqj-3"] {
        assert!(started(&out, n) >= 2, "{n}");
        assert_eq!(out.job(n)["state"], "Completed", "{n}");
    }
}

#[test]
fn gang_scheduling_full_occupied() {
    // `Gang scheduling: Full Occupied`: job 1's R one-CPU pods fill the cluster;
    // job 2, the same, is never admitted (the e2e's `WaitJobStatePending` holds on
    // its initial phase; restated: no pod of it is ever made) and job 1 keeps
    // running.
    let jobs = format!("{}{}", job("gang-fq-qj1", R, R, "1", "", ""), job("gang-fq-qj2", R, R, "1", "", ""));
    let out = e2e(&jobs, &[], "5m");
    assert_eq!(out.pods_of("gang-fq-qj1").iter().filter(|p| p["reason_end"] == "running").count(), R as usize);
    assert_eq!(started(&out, "gang-fq-qj2"), 0);
    assert!(pg_rows(&out, "gang-fq-qj2").is_empty());
}

#[test]
fn gang_scheduling_contains_both_best_effort_pod_and_non_best_effort_pod() {
    // `Gang scheduling: Contains both best-effort pod and non-best-effort pod`:
    // task `best-effort` (the e2e's names are the wrong way round) asks 1 CPU for
    // R/2 pods, task `non-best-effort` nothing for R − R/2; minAvailable R: all run.
    let y = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: gang-both-best-effort-non-best-effort-pods, annotations: {lahar.io/duration: 1h}}\nspec:\n  minAvailable: 12\n  tasks:\n    - {name: best-effort, replicas: 6, template: {spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: \"1\"}}}]}}}\n    - {name: non-best-effort, replicas: 6, template: {spec: {containers: [{name: c, image: nginx}]}}}\n";
    let out = e2e(y, &[], "1m");
    let running = out.pods_of("gang-both-best-effort-non-best-effort-pods");
    assert_eq!(running.iter().filter(|p| p["start_s"] == "0").count(), 12);
}

#[test]
fn schedule_best_effort_job() {
    // `Schedule BestEffort Job`: R one-CPU pods and R/2 BestEffort ones,
    // minAvailable 4: all run (BestEffort pods by backfill).
    let y = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: test, annotations: {lahar.io/duration: 1h}}\nspec:\n  minAvailable: 4\n  tasks:\n    - {name: test-task-0, replicas: 12, template: {spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: \"1\"}}}]}}}\n    - {name: test-task-1, replicas: 6, template: {spec: {containers: [{name: c, image: nginx}]}}}\n";
    let out = e2e(y, &[], "1m");
    assert_eq!(started(&out, "test"), 18);
}

#[test]
fn statement() {
    // `Statement`: job 1 fills the cluster; job 2, the same, is unschedulable
    // (overcommit refuses it) and nothing of job 1 is evicted.
    let jobs = format!("{}{}", job("st-qj-1", R, R, "1", "", ""), job("st-qj-2", R, R, "1", "", ""));
    let out = e2e(&jobs, &[], "5m");
    assert!(out.of("evict").is_empty());
    assert_eq!(started(&out, "st-qj-2"), 0);
    assert_eq!(state(&out, "st-qj-1"), "Running,0,");
}

/// A batch/v1 Job with schedulerName volcano (`CreateSampleK8sJob` and the
/// v1.Job tests): `spec` lines, the container's template annotations `run`.
fn k8s_job(name: &str, spec: &str, restart: &str, cpu: &str, run: &str) -> String {
    let req = if cpu.is_empty() { String::new() } else { format!(", resources: {{requests: {{cpu: \"{cpu}\"}}}}") };
    let restart = if restart.is_empty() { String::new() } else { format!("      restartPolicy: {restart}\n") };
    format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: {name}}}\nspec:\n{spec}  template:\n    metadata: {{annotations: {{{run}}}}}\n    spec:\n      schedulerName: volcano\n{restart}      containers: [{{name: test-container, image: nginx{req}}}]\n"
    )
}

#[test]
fn schedule_v1_job_type_using_volcano_scheduler() {
    // `Schedule v1.Job type using Volcano scheduler`: parallelism 2, no
    // completions (read as 2). The e2e waits for `Active > 0`, which Pending pods
    // satisfy; restated: both pods run.
    let out = e2e(&k8s_job("job1", "  parallelism: 2\n", "Never", "", "lahar.io/duration: 1h"), &[], "1m");
    assert_eq!(started(&out, "job1"), 2);
}

#[test]
fn schedule_v1_job_type_using_volcano_scheduler_with_error_case() {
    // `Schedule v1.Job type using Volcano scheduler with error case`: without a
    // restartPolicy (Always, the default) Kubernetes rejects the Job; lahar
    // refuses it at its place. The valid Job then runs as above.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("j.yaml"), k8s_job("job1", "  parallelism: 2\n", "", "", "lahar.io/duration: 1h"))
        .expect("write");
    let s = "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  cluster:\n    nodes: [{name: n0, cpu: 4, memory: 8Gi}]\n  workload:\n    - manifests: j.yaml\n";
    std::fs::write(dir.path().join("s.yaml"), s).expect("write");
    let out = crate::lahar().arg("validate").arg(dir.path().join("s.yaml")).output().expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("spec.template.spec.restartPolicy") && err.contains("`Always`"), "{err}");
    // The valid Job: its pods have their own run time, so no run-time warning.
    std::fs::write(
        dir.path().join("j.yaml"),
        k8s_job("job1", "  parallelism: 2\n", "Never", "", "lahar.io/duration: 1h"),
    )
    .expect("write");
    let out = crate::lahar().arg("validate").arg(dir.path().join("s.yaml")).output().expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !err.contains("no run time"), "{err}");
    let out = e2e(&k8s_job("job1", "  parallelism: 2\n", "Never", "", "lahar.io/duration: 1h"), &[], "1m");
    assert_eq!(started(&out, "job1"), 2);
}

// test/e2e/schedulingbase/k8s_job.go

#[test]
fn pod_groups_phase_with_k8s_job_in_completed() {
    // `PodGroup's Phase with k8s Job in Completed`: one pod of 1 CPU that sleeps
    // 10 s; once it succeeded Volcano's group turns Completed at the next close.
    // Departure (docs/volcano.md): lahar derives no phase for the group of a job
    // that has ended, so its last row is Running; the Job's end is checked.
    let out = e2e(&k8s_job("job1", "", "OnFailure", "1", "lahar.io/duration: 10s"), &[], "1m");
    assert_eq!(state(&out, "job1"), "Completed,0,10");
    assert_eq!(pg_rows(&out, "job1").last(), Some(&row("0", "Running", "session-close")));
}

#[test]
fn pod_groups_phase_should_be_completed_when_job_fails() {
    // `PodGroup's Phase should be Completed when Job fails`: `sleep 10 && exit 1`,
    // Never, backoffLimit 0: the pod fails and the Job with it (its one failure
    // counted against the limit); Volcano's group then turns Completed (a Failed
    // pod counts as scheduled and completed). Departure as above: the Job's end
    // is checked.
    let out = e2e(
        &k8s_job("job1", "  backoffLimit: 0\n", "Never", "1", "lahar.io/duration: 1h, lahar.io/fail-after: 10s"),
        &[],
        "1m",
    );
    let pods = out.pods_of("job1");
    assert_eq!(pods.len(), 1);
    assert_eq!(
        (pods[0]["start_s"].as_str(), pods[0]["end_s"].as_str(), pods[0]["reason_end"].as_str()),
        ("0", "10", "exited")
    );
    assert_eq!(state(&out, "job1"), "Failed,1,10");
}

// test/e2e/schedulingbase/sla.go

#[test]
fn sla_permits_job_to_be_inqueue() {
    // `sla permits job to be inqueue`: 2R one-CPU pods can never fit, and
    // overcommit refuses the group; after its 3 s waiting time sla admits it and
    // the controller makes its 2R pods, which stay Pending (the gang never fits).
    let y = job("j1-overlarge", 2 * R, 2 * R, "1", "", "").replace(
        "annotations: {lahar.io/duration: 1h}\nspec:",
        "annotations: {lahar.io/duration: 1h, sla-waiting-time: 3s}\nspec:",
    );
    let out = e2e(&y, &[], "1m");
    assert_eq!(pg_rows(&out, "j1-overlarge").first(), Some(&row("3", "Inqueue", "enqueue")));
    assert_eq!(started(&out, "j1-overlarge"), 0);
}

#[test]
fn sla_adjusts_job_order() {
    // `sla adjusts job order`: j1 (2R pods, sla 3 s) is admitted at 3 s and holds
    // the cluster's room; j2 (sla 1 h) and j3 (sla 30 m), R pods each, wait. When
    // j1 is deleted (restated: at 60 s), sla's order puts j3 (deadline 30 m) before
    // j2 (1 h): j3 is admitted and runs, and j2's group stays Pending.
    let sla = |y: String, t: &str| {
        y.replace(
            "annotations: {lahar.io/duration: 1h}\nspec:",
            &format!("annotations: {{lahar.io/duration: 1h, sla-waiting-time: {t}}}\nspec:"),
        )
    };
    let jobs = [
        sla(job("j1-overlarge", 2 * R, 2 * R, "1", "", ""), "3s"),
        sla(job("j2-slow-sla", R, R, "1", "", ""), "1h"),
        sla(job("j3-fast-sla", R, R, "1", "", ""), "30m"),
    ]
    .concat();
    let out = e2e(&jobs, &["{at: 60s, deleteJob: j1-overlarge}"], "5m");
    assert_eq!(started(&out, "j3-fast-sla"), R as usize);
    assert_eq!(started(&out, "j2-slow-sla"), 0);
    assert!(pg_rows(&out, "j2-slow-sla").is_empty(), "{:?}", pg_rows(&out, "j2-slow-sla"));
}
