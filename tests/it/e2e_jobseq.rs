//! Replays of Volcano's e2e suite test/e2e/jobseq (job_error_handling.go,
//! queue_job_status.go), under their `It(...)` names, over many sessions with
//! the e2e suites' conf (`tests/volcano/e2e/volcano-scheduler-ci.conf`).
//!
//! Restated as Volcano's e2e helpers build them (test/e2e/util): `CreateJob` gives
//! every pod template `restartPolicy: OnFailure` unless the test says otherwise and
//! a 3 s grace period; the webhook sets every task's `minAvailable` to its replicas
//! and `maxRetry` to 3. The CI cluster is four kind workers of 4 CPUs (about
//! 100m used by kindnet on each: 3 one-CPU slots a worker); its control plane is
//! tainted and takes no test pod, so it is left out. A container the e2e runs with
//! `sleep 10s && xxx` (exit 127) or `sleep 10s && exit 3` is a template with
//! `lahar.io/fail-after: 10s` and `lahar.io/exit-code`; busybox's `sleep 5` is a
//! task run time (`lahar.io/duration: 5s`); nginx runs until the job's
//! `lahar.io/duration`. `kubectl delete pod` is a dated `deletePod`.
//!
//! `WaitJobPhases` matches phases as a subsequence from the job's state when the
//! watch opens, so its leading `Pending` holds on the job's initial phase: each
//! test below checks what the phases mean instead (pods bound, pods killed by a
//! restart, the job's end state, the PodGroup's rows), at hand-computed instants.

use super::volcano::{Out, run_file};
use super::volcano_controller::e2e_conf;

/// How a task's container behaves.
#[derive(Clone, Copy)]
enum Run {
    /// nginx: runs until its job ends.
    Forever,
    /// busybox `sleep N`: succeeds after N seconds.
    Succeeds(u32),
    /// `sleep N && xxx` (or `exit C`) with `restartPolicy: Never`: fails after N
    /// seconds with exit code C.
    Fails(u32, u32),
    /// The same under `restartPolicy: OnFailure`: the kubelet restarts the
    /// container in place after each exit.
    CrashLoops(u32, u32),
}

struct Task<'a> {
    name: &'a str,
    replicas: u32,
    run: Run,
    /// A task's own `policies` (YAML flow list), or "".
    policies: &'a str,
    /// A CPU request ("" for none: nginx's e2e pods ask for nothing).
    cpu: &'a str,
}

fn task<'a>(name: &'a str, replicas: u32, run: Run) -> Task<'a> {
    Task { name, replicas, run, policies: "", cpu: "" }
}

/// A VolcanoJob as `util.CreateJob` makes it.
fn vcjob(name: &str, min: u32, policies: &str, tasks: &[Task<'_>]) -> String {
    let mut y = format!(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: {name}\n  annotations: {{lahar.io/duration: 1h}}\nspec:\n  minAvailable: {min}\n  maxRetry: 3\n"
    );
    if !policies.is_empty() {
        y += &format!("  policies: {policies}\n");
    }
    y += "  tasks:\n";
    for t in tasks {
        y += &format!("    - name: {}\n      replicas: {}\n", t.name, t.replicas);
        if !t.policies.is_empty() {
            y += &format!("      policies: {}\n", t.policies);
        }
        let (notes, restart) = match t.run {
            Run::Forever => (String::new(), "OnFailure"),
            Run::Succeeds(s) => (format!("lahar.io/duration: {s}s"), "OnFailure"),
            Run::Fails(s, code) => (format!("lahar.io/fail-after: {s}s, lahar.io/exit-code: \"{code}\""), "Never"),
            Run::CrashLoops(s, code) => {
                (format!("lahar.io/fail-after: {s}s, lahar.io/exit-code: \"{code}\""), "OnFailure")
            }
        };
        y += "      template:\n";
        if !notes.is_empty() {
            y += &format!("        metadata: {{annotations: {{{notes}}}}}\n");
        }
        let req =
            if t.cpu.is_empty() { String::new() } else { format!(", resources: {{requests: {{cpu: \"{}\"}}}}", t.cpu) };
        y += &format!(
            "        spec:\n          restartPolicy: {restart}\n          terminationGracePeriodSeconds: 3\n          containers: [{{name: c, image: nginx{req}}}]\n"
        );
    }
    y
}

/// Runs `manifests` (one YAML stream) on the CI cluster under the e2e conf until
/// `horizon`, with `timeline` entries (YAML flow maps) if any.
pub(super) fn e2e(manifests: &str, timeline: &[&str], horizon: &str) -> Out {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("jobs.yaml"), manifests).expect("write");
    std::fs::write(dir.path().join("ci.conf"), e2e_conf()).expect("write");
    let nodes: String = (1..=4).map(|i| format!("      - {{name: worker-{i}, cpu: 3900m, memory: 16Gi}}\n")).collect();
    let timeline: String = timeline.iter().map(|t| format!("    - {t}\n")).collect();
    let timeline = if timeline.is_empty() { String::new() } else { format!("  timeline:\n{timeline}") };
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: e2e}}\nspec:\n  horizon: {horizon}\n  cluster:\n    nodes:\n{nodes}  queues: [{{name: default}}]\n  scheduler: {{conf: ci.conf}}\n  workload:\n    - manifests: [jobs.yaml]\n{timeline}"
    );
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, text).expect("write");
    run_file(&p)
}

/// A pod's intervals in pods.csv: (start_s, end_s, reason_end).
pub(super) fn intervals(out: &Out, pod: &str) -> Vec<(String, String, String)> {
    let pod = format!("default/{pod}");
    out.pods
        .iter()
        .filter(|p| p["pod"] == pod)
        .map(|p| (p["start_s"].clone(), p["end_s"].clone(), p["reason_end"].clone()))
        .collect()
}

pub(super) fn iv(start: &str, end: &str, reason: &str) -> (String, String, String) {
    (start.to_string(), end.to_string(), reason.to_string())
}

/// A job's `state,retries,end_s` in jobs.csv.
pub(super) fn state(out: &Out, job: &str) -> String {
    let j = out.job(job);
    [&j["state"], &j["retries"], &j["end_s"]].map(|s| s.as_str()).join(",")
}

/// (t, phase, action) of a job's PodGroup phase rows.
pub(super) fn pg_rows(out: &Out, job: &str) -> Vec<(String, String, String)> {
    out.of("phase")
        .iter()
        .filter(|d| d["job"] == job)
        .map(|d| (d["t_s"].clone(), d["phase"].clone(), d["action"].clone()))
        .collect()
}

pub(super) fn row(t: &str, phase: &str, action: &str) -> (String, String, String) {
    (t.to_string(), phase.to_string(), action.to_string())
}

/// The e2e's job of two `success` nginx pods and two pods that fail after 10 s.
fn success_and_fail<'a>(fail_policies: &'a str) -> [Task<'a>; 2] {
    [task("success", 2, Run::Forever), Task { policies: fail_policies, ..task("fail", 2, Run::Fails(10, 127)) }]
}

/// The e2e's job of two `success` and two `delete` nginx pods.
fn success_and_delete<'a>(delete_policies: &'a str) -> [Task<'a>; 2] {
    [task("success", 2, Run::Forever), Task { policies: delete_policies, ..task("delete", 2, Run::Forever) }]
}

/// A restart at 10 s: `fail-0` exits (its container failed), the policy's
/// RestartJob kills the other three (3 s grace) and deletes it, and the next
/// sync makes the PodGroup anew: Pending at 10 s, admitted at once (the three
/// terminating pods are short of its minMember 4). `fail-0` is made again then,
/// the others once gone, at 13 s, when the four run.
/// `WaitJobPhases([Pending, Running, Restarting])`.
fn assert_restarted_at_10(out: &Out, job: &str) {
    assert_eq!(intervals(out, &format!("{job}-fail-0"))[0], iv("0", "10", "exited"));
    for p in ["success-0", "success-1", "fail-1"] {
        assert_eq!(intervals(out, &format!("{job}-{p}"))[0], iv("0", "10", "restarted"), "{p}");
    }
    let rows = pg_rows(out, job);
    assert_eq!(
        rows[..4],
        [
            row("0", "Inqueue", "enqueue"),
            row("0", "Running", "session-close"),
            row("10", "Pending", "job-controller"),
            row("10", "Inqueue", "enqueue"),
        ]
    );
    // The new pods run from 13 s.
    assert_eq!(intervals(out, &format!("{job}-success-0"))[1].0, "13");
}

/// `job level LifecyclePolicy, Event: TaskFailed; Action: TerminateJob`: a task
/// `success` of two `sleep 5` pods and a task `failed` of two `sleep 10s &&
/// xxx` pods (`maxRetry: 3`). The e2e writes a restart count of 4 into one
/// pod's status; restated, the kubelet restarts the failing containers in place
/// for real (`restartPolicy: OnFailure`). By hand: both exit at 10 s and are
/// restarted 10 s later (CrashLoopBackOff), at 20 s (restarts 1 + 1), exit again
/// at 30 s and are restarted 20 s later, at 50 s: the first restart brings the
/// task's restarts to 3 = `maxRetry`, `updatePod` raises TaskFailed, and
/// TerminateJob kills the pods (3 s grace): Terminated at 53 s. The pods never
/// left their nodes: each has one interval, 0 → 50 s.
/// `WaitJobPhases([Terminating, Terminated])`.
#[test]
fn job_level_lifecycle_policy_event_task_failed_action_terminate_job() {
    let tasks = [task("success", 2, Run::Succeeds(5)), task("failed", 2, Run::CrashLoops(10, 127))];
    let job = vcjob("task-failed-terminate-job", 4, "[{event: TaskFailed, action: TerminateJob}]", &tasks);
    let out = e2e(&job, &[], "5m");
    assert_eq!(state(&out, "task-failed-terminate-job"), "Terminated,0,53");
    for p in ["failed-0", "failed-1"] {
        assert_eq!(intervals(&out, &format!("task-failed-terminate-job-{p}")), [iv("0", "50", "killed")], "{p}");
    }
    assert_eq!(intervals(&out, "task-failed-terminate-job-success-0"), [iv("0", "5", "completed")]);
}

#[test]
fn job_level_lifecycle_policy_event_pod_failed_action_restart_job() {
    // `job level LifecyclePolicy, Event: PodFailed; Action: RestartJob`
    let job = vcjob("failed-restart-job", 4, "[{event: PodFailed, action: RestartJob}]", &success_and_fail(""));
    let out = e2e(&job, &[], "15s");
    assert_restarted_at_10(&out, "failed-restart-job");
    assert_eq!(state(&out, "failed-restart-job"), "Running,1,");
}

/// Each restart costs a retry: the pods fail again 10 s after each start (13 s,
/// 26 s), and the restart at 36 s is the third: `maxRetry` 3 reached, the job is
/// Failed (jobs.csv ends a job at the action that ends it, not when its killed
/// pods are gone).
#[test]
fn a_job_that_keeps_failing_fails_at_max_retry() {
    let job = vcjob("failed-restart-job", 4, "[{event: PodFailed, action: RestartJob}]", &success_and_fail(""));
    let out = e2e(&job, &[], "2m");
    let fail0: Vec<_> = intervals(&out, "failed-restart-job-fail-0");
    assert_eq!(fail0, [iv("0", "10", "exited"), iv("13", "23", "exited"), iv("26", "36", "exited")]);
    assert_eq!(state(&out, "failed-restart-job"), "Failed,3,36");
}

#[test]
fn job_level_lifecycle_policy_event_pod_failed_action_terminate_job() {
    // `job level LifecyclePolicy, Event: PodFailed; Action: TerminateJob`:
    // [Pending, Running, Terminating, Terminated]: Terminating at 10 s, Terminated
    // once its killed pods are gone, 3 s later (state/terminating.go).
    let job = vcjob("failed-terminate-job", 4, "[{event: PodFailed, action: TerminateJob}]", &success_and_fail(""));
    let out = e2e(&job, &[], "1m");
    assert_eq!(intervals(&out, "failed-terminate-job-fail-0"), [iv("0", "10", "exited")]);
    assert_eq!(intervals(&out, "failed-terminate-job-success-0"), [iv("0", "10", "killed")]);
    assert_eq!(state(&out, "failed-terminate-job"), "Terminated,0,13");
}

#[test]
fn job_level_lifecycle_policy_event_pod_failed_action_abort_job() {
    // `job level LifecyclePolicy, Event: PodFailed; Action: AbortJob`:
    // [Pending, Running, Aborting, Aborted]: Aborted once the pods killed at 10 s
    // are gone (state/aborting.go).
    let job = vcjob("failed-abort-job", 4, "[{event: PodFailed, action: AbortJob}]", &success_and_fail(""));
    let out = e2e(&job, &[], "1m");
    assert_eq!(intervals(&out, "failed-abort-job-fail-0"), [iv("0", "10", "exited")]);
    assert_eq!(intervals(&out, "failed-abort-job-success-1"), [iv("0", "10", "killed")]);
    assert_eq!(state(&out, "failed-abort-job"), "Aborted,0,13");
}

#[test]
fn job_level_lifecycle_policy_event_pod_failed_action_restart_pod_event_pod_evicted_action_terminate_job_timeout_5m() {
    // `job level LifecyclePolicy, Event: PodFailed, Action: RestartPod; Event
    // PodEvicted, Action: TerminateJob, Timeout: 5m`: [Pending, Running,
    // Restarting, Running]. Only the failed pod is made again (the restart kills
    // it, which raises no PodEvicted), so the TerminateJob never comes; the pod
    // fails again 10 s after each start, each time a retry, until maxRetry.
    let tasks = [task("success", 2, Run::Forever), task("fail", 1, Run::Fails(10, 127))];
    let policies = "[{event: PodFailed, action: RestartPod}, {event: PodEvicted, action: TerminateJob, timeout: 5m}]";
    let out = e2e(&vcjob("failed-restart-job", 3, policies, &tasks), &[], "1m");
    // The failed pod is remade at once (it is already off its node) and bound by
    // the same instant's session: Running again at 10 s.
    let fail0 = intervals(&out, "failed-restart-job-fail-0");
    assert_eq!(fail0, [iv("0", "10", "exited"), iv("10", "20", "exited"), iv("20", "30", "exited")]);
    // success pods ran throughout: only the failed pod is restarted.
    assert_eq!(intervals(&out, "failed-restart-job-success-0")[0], iv("0", "30", "killed"));
    assert_eq!(state(&out, "failed-restart-job"), "Failed,3,30");
}

/// The pod deleted at 20 s (`kubectl delete pod`, 3 s grace) raises PodEvicted
/// once it is gone, at 23 s (the job controller's `deletePod` handler).
const DELETE_AT_20: &str = "{at: 20s, deletePod: default/JOB-delete-0}";

fn delete(job: &str) -> String {
    DELETE_AT_20.replace("JOB", job)
}

/// A restart once the deleted pod is gone (23 s): the other three pods killed
/// and the PodGroup made anew then, the job running again once they are gone
/// (26 s). `WaitJobPhases([Restarting, Pending, Running])`.
fn assert_restarted_after_delete(out: &Out, job: &str) {
    assert_eq!(intervals(out, &format!("{job}-delete-0"))[0], iv("0", "20", "evicted"));
    assert_eq!(intervals(out, &format!("{job}-success-0"))[0], iv("0", "23", "restarted"));
    let rows = pg_rows(out, job);
    assert!(rows.contains(&row("23", "Pending", "job-controller")), "{rows:?}");
    assert_eq!(rows.last(), Some(&row("26", "Running", "session-close")), "{rows:?}");
    assert_eq!(intervals(out, &format!("{job}-delete-0"))[1].0, "26");
    assert_eq!(state(out, job), "Running,1,");
}

#[test]
fn job_level_lifecycle_policy_event_pod_evicted_action_restart_job() {
    // `job level LifecyclePolicy, Event: PodEvicted; Action: RestartJob`
    let job = "evicted-restart-job";
    let out = e2e(
        &vcjob(job, 4, "[{event: PodEvicted, action: RestartJob}]", &success_and_delete("")),
        &[&delete(job)],
        "1m",
    );
    assert_restarted_after_delete(&out, job);
}

#[test]
fn job_level_lifecycle_policy_event_pod_evicted_action_terminate_job() {
    // `job level LifecyclePolicy, Event: PodEvicted; Action: TerminateJob`
    let job = "evicted-terminate-job";
    let out = e2e(
        &vcjob(job, 4, "[{event: PodEvicted, action: TerminateJob}]", &success_and_delete("")),
        &[&delete(job)],
        "1m",
    );
    assert_eq!(intervals(&out, "evicted-terminate-job-success-1"), [iv("0", "23", "killed")]);
    assert_eq!(state(&out, job), "Terminated,0,26");
}

#[test]
fn job_level_lifecycle_policy_event_pod_evicted_action_abort_job() {
    // `job level LifecyclePolicy, Event: PodEvicted; Action: AbortJob`
    let job = "evicted-abort-job";
    let out =
        e2e(&vcjob(job, 4, "[{event: PodEvicted, action: AbortJob}]", &success_and_delete("")), &[&delete(job)], "1m");
    assert_eq!(intervals(&out, "evicted-abort-job-success-1"), [iv("0", "23", "killed")]);
    assert_eq!(state(&out, job), "Aborted,0,26");
}

#[test]
fn job_level_lifecycle_policy_event_any_action_restart_job() {
    // `job level LifecyclePolicy, Event: Any; Action: RestartJob`
    let job = "any-restart-job";
    let out =
        e2e(&vcjob(job, 4, "[{event: \"*\", action: RestartJob}]", &success_and_delete("")), &[&delete(job)], "1m");
    assert_restarted_after_delete(&out, job);
}

/// busybox `sleep 5` pods succeed at 5 s; their task complete, CompleteJob kills
/// the nginx pods (3 s grace): Completing at 5 s, Completed once they are gone at
/// 8 s (state/completing.go), the busybox pods Succeeded.
fn assert_completed_at_5(out: &Out) {
    assert_eq!(intervals(out, "any-complete-job-completed-task-0"), [iv("0", "5", "completed")]);
    assert_eq!(intervals(out, "any-complete-job-terminating-task-1"), [iv("0", "5", "killed")]);
    assert_eq!(state(out, "any-complete-job"), "Completed,0,8");
}

#[test]
fn job_level_lifecycle_policy_event_task_completed_action_completed_job() {
    // `job level LifecyclePolicy, Event: TaskCompleted; Action: CompletedJob`:
    // [Pending, Completed].
    let tasks = [task("completed-task", 2, Run::Succeeds(5)), task("terminating-task", 2, Run::Forever)];
    let out = e2e(&vcjob("any-complete-job", 4, "[{event: TaskCompleted, action: CompleteJob}]", &tasks), &[], "1m");
    assert_completed_at_5(&out);
}

#[test]
fn job_level_lifecycle_policy_error_code_3_action_restart_job() {
    // `job level LifecyclePolicy, error code: 3; Action: RestartJob`: the failed
    // pod's exit code matches the policy. [Pending, Running, Restarting].
    let tasks = [task("success", 1, Run::Forever), task("fail", 1, Run::Fails(10, 3))];
    let out = e2e(&vcjob("errorcode-restart-job", 2, "[{exitCode: 3, action: RestartJob}]", &tasks), &[], "15s");
    assert_eq!(intervals(&out, "errorcode-restart-job-fail-0")[0], iv("0", "10", "exited"));
    assert_eq!(intervals(&out, "errorcode-restart-job-success-0")[0], iv("0", "10", "restarted"));
    assert_eq!(state(&out, "errorcode-restart-job"), "Running,1,");
}

/// Another exit code matches no policy: the failed pod stays Failed (the job
/// controller makes only missing replicas), the job is not ready with a pod
/// Running, and its PodGroup turns Unknown at the session after the failure.
#[test]
fn an_exit_code_no_policy_names_leaves_the_pod_failed() {
    let tasks = [task("success", 1, Run::Forever), task("fail", 1, Run::Fails(10, 2))];
    let out = e2e(&vcjob("errorcode-restart-job", 2, "[{exitCode: 3, action: RestartJob}]", &tasks), &[], "1m");
    assert_eq!(intervals(&out, "errorcode-restart-job-fail-0"), [iv("0", "10", "exited")]);
    assert_eq!(intervals(&out, "errorcode-restart-job-success-0"), [iv("0", "60", "running")]);
    assert_eq!(pg_rows(&out, "errorcode-restart-job").last(), Some(&row("10", "Unknown", "session-close")));
    assert_eq!(state(&out, "errorcode-restart-job"), "Running,0,");
}

/// Without a policy, a job whose every pod ended is Completed when `minAvailable`
/// pods succeeded, else Failed (the Running state's SyncJob).
#[test]
fn a_job_whose_pods_all_ended_completes_or_fails_by_its_minimum() {
    let tasks = [task("ok", 2, Run::Succeeds(5)), task("bad", 1, Run::Fails(8, 1))];
    let out = e2e(&vcjob("ends", 2, "", &tasks), &[], "1m");
    // minAvailable 2 of 3 replicas: 2 succeeded.
    assert_eq!(state(&out, "ends"), "Completed,0,8");
    let mut failing = tasks;
    failing[0].run = Run::Fails(5, 1);
    failing[1].run = Run::Succeeds(8);
    let out = e2e(&vcjob("ends", 2, "", &failing), &[], "1m");
    assert_eq!(state(&out, "ends"), "Failed,0,8");
}

#[test]
fn job_level_lifecycle_policy_event_pod_evicted_pod_failed_action_terminate_job() {
    // `job level LifecyclePolicy, Event[]: PodEvicted, PodFailed; Action: TerminateJob`
    let job = "evicted-terminate-job";
    let policies = "[{events: [PodEvicted, PodFailed, PodEvicted], action: TerminateJob}]";
    let out = e2e(&vcjob(job, 4, policies, &success_and_delete("")), &[&delete(job)], "1m");
    assert_eq!(state(&out, job), "Terminated,0,26");
}

#[test]
fn task_level_lifecycle_policy_event_pod_failed_action_restart_job() {
    // `Task level LifecyclePolicy, Event: PodFailed; Action: RestartJob`
    let tasks = success_and_fail("[{event: PodFailed, action: RestartJob}]");
    let out = e2e(&vcjob("failed-restart-job", 4, "", &tasks), &[], "15s");
    assert_restarted_at_10(&out, "failed-restart-job");
}

#[test]
fn task_level_lifecycle_policy_event_pod_evicted_action_restart_job() {
    // `Task level LifecyclePolicy, Event: PodEvicted; Action: RestartJob`
    let job = "evicted-restart-job";
    let tasks = success_and_delete("[{event: PodEvicted, action: RestartJob}]");
    let out = e2e(&vcjob(job, 4, "", &tasks), &[&delete(job)], "1m");
    assert_restarted_after_delete(&out, job);
}

#[test]
fn task_level_lifecycle_policy_event_pod_evicted_action_terminate_job() {
    // `Task level LifecyclePolicy, Event: PodEvicted; Action: TerminateJob`
    let job = "evicted-terminate-job";
    let tasks = success_and_delete("[{event: PodEvicted, action: TerminateJob}]");
    let out = e2e(&vcjob(job, 4, "", &tasks), &[&delete(job)], "1m");
    assert_eq!(state(&out, job), "Terminated,0,26");
}

#[test]
fn task_level_lifecycle_policy_event_task_completed_action_completed_job() {
    // `Task level LifecyclePolicy, Event: TaskCompleted; Action: CompletedJob`
    let tasks = [
        Task {
            policies: "[{event: TaskCompleted, action: CompleteJob}]",
            ..task("completed-task", 2, Run::Succeeds(5))
        },
        task("terminating-task", 2, Run::Forever),
    ];
    let out = e2e(&vcjob("any-complete-job", 4, "", &tasks), &[], "1m");
    assert_completed_at_5(&out);
}

#[test]
fn job_level_lifecycle_policy_event_pod_failed_action_abort_job_and_task_level_lifecycle_policy_event_pod_failed_action_restart_job()
 {
    // `job level LifecyclePolicy, Event: PodFailed; Action: AbortJob and Task level
    // lifecyclePolicy, Event : PodFailed; Action: RestartJob`: the task's policy
    // comes first, so the job restarts, not aborts.
    let tasks = success_and_fail("[{event: PodFailed, action: RestartJob}]");
    let out = e2e(&vcjob("failed-restart-job", 4, "[{event: PodFailed, action: AbortJob}]", &tasks), &[], "15s");
    assert_restarted_at_10(&out, "failed-restart-job");
}

/// `Task Priority`: a job of two tasks of `nodecount` pods each (`rep/nodecount −
/// 1` = 2 CPUs: one a worker), `minAvailable` = `nodecount`, both tasks of class
/// `master-pri`; exactly `nodecount` pods run. Volcano's gang takes the job's
/// `minAvailable` below the tasks' sum, so the per-task minimums are not asked.
#[test]
fn task_priority() {
    let mut y = vcjob(
        "task-priority-job",
        4,
        "",
        &[
            Task { cpu: "2", ..task("higherprioritytask", 4, Run::Forever) },
            Task { cpu: "2", ..task("lowerprioritytask", 4, Run::Forever) },
        ],
    );
    y = y.replace(
        "terminationGracePeriodSeconds: 3\n",
        "terminationGracePeriodSeconds: 3\n          priorityClassName: master-pri\n",
    );
    let classes = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: master-pri}\nvalue: 100\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: worker-pri}\nvalue: -50\n---\n";
    let out = e2e(&format!("{classes}{y}"), &[], "1m");
    let running = out.pods_of("task-priority-job").iter().filter(|p| p["reason_end"] == "running").count();
    assert_eq!(running, 4);
}

/// `Transform from running to unknown after a member is gone should succeed`
/// (queue_job_status.go): a PodGroup of `minMember` 2 and two bare half-CPU pods
/// (`restartPolicy: Never`) run; one is force-deleted (`gracePeriodSeconds: 0`, a
/// dated `deletePod` with `gracePeriod: 0s`). No controller owns the pods, so
/// nothing makes it again; the group has one pod Running of its two, gang marks
/// it unschedulable, and it turns Unknown.
#[test]
fn transform_from_running_to_unknown_after_a_member_is_gone_should_succeed() {
    let pg = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata:\n  name: queue-podgroup-status-transition-unknown\n  annotations: {lahar.io/duration: 1h}\nspec: {minMember: 2, queue: default}\n";
    let pod = |i: u32| {
        format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: queue-podgroup-status-transition-{i}\n  annotations: {{scheduling.k8s.io/group-name: queue-podgroup-status-transition-unknown}}\nspec:\n  schedulerName: volcano\n  restartPolicy: Never\n  containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: 500m}}}}}}]\n"
        )
    };
    let manifests = format!("{pg}{}{}", pod(0), pod(1));
    let out =
        e2e(&manifests, &["{at: 20s, deletePod: default/queue-podgroup-status-transition-0, gracePeriod: 0s}"], "1m");
    let rows = pg_rows(&out, "queue-podgroup-status-transition-unknown");
    assert!(rows.contains(&row("0", "Running", "session-close")), "{rows:?}");
    assert_eq!(rows.last(), Some(&row("20", "Unknown", "session-close")), "{rows:?}");
}

/// `Transform from running to pending should succeed` (queue_job_status.go): two
/// jobs, each of `ClusterSize(HalfCPU)` half-CPU pods with that `minAvailable`
/// (28: seven a worker), so one runs at a time; every pod of job-0 is deleted.
/// The e2e then waits for a Pending PodGroup in the queue, which the waiting
/// job-1's group already is (vacuous there); restated from the code: job-0's
/// deleted pods are remade at once (no policy) but its group, with no pod
/// scheduled at the next close, turns Pending, and job-1's stays Pending too
/// (overcommit: the cluster's room is job-0's reservation).
#[test]
fn transform_from_running_to_pending_should_succeed() {
    let job = |i: u32| {
        vcjob(
            &format!("queue-job-status-transition-test-job-{i}"),
            28,
            "",
            &[Task { cpu: "500m", ..task("queue-job", 28, Run::Forever) }],
        )
    };
    let deletes: Vec<String> = (0..28)
        .map(|k| format!("{{at: 20s, deletePod: default/queue-job-status-transition-test-job-0-queue-job-{k}}}"))
        .collect();
    let deletes: Vec<&str> = deletes.iter().map(String::as_str).collect();
    let out = e2e(&format!("{}---\n{}", job(0), job(1)), &deletes, "1m");
    let j0 = pg_rows(&out, "queue-job-status-transition-test-job-0");
    assert!(j0.contains(&row("0", "Running", "session-close")), "{j0:?}");
    let j1 = pg_rows(&out, "queue-job-status-transition-test-job-1");
    assert!(j1.iter().all(|r| r.1 != "Running"), "job-1 never runs beside job-0: {j1:?}");
    assert!(j0.iter().any(|r| r.1 == "Pending"), "job-0's group turns Pending: {j0:?}");
}

/// Failing containers and exit-code policies, bad input through the binary: each
/// refusal names its field and says what was expected (exit 2); the webhook's
/// policy checks (`validatePolicies`) with Volcano's messages.
#[test]
fn failing_containers_and_exit_code_policies_bad_input() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = dir.path().join("s.yaml");
    let text = "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  cluster:\n    nodes: [{name: n0, cpu: 4, memory: 8Gi}]\n  workload:\n    - manifests: [job.yaml]\n    - jobs:\n      - {name: c, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 1}COMPACT}]}\n  timeline:\n    - {at: 10s, deletePod: default/c-w-0GRACE}\n";
    let job = vcjob(
        "j",
        2,
        "[{exitCode: 3, action: RestartJob}]",
        &[task("ok", 1, Run::Forever), task("bad", 1, Run::Fails(10, 3))],
    );
    let check = |job: &str, compact: &str, grace: &str, want: &[&str]| {
        std::fs::write(dir.path().join("job.yaml"), job).expect("write");
        std::fs::write(&scenario, text.replace("COMPACT", compact).replace("GRACE", grace)).expect("write");
        let out = crate::lahar().arg("validate").arg(&scenario).output().expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        if want.is_empty() {
            assert_eq!(out.status.code(), Some(0), "{err}");
        } else {
            assert_eq!(out.status.code(), Some(2), "{want:?}: {err}");
            for w in want {
                assert!(err.contains(w), "{w}: {err}");
            }
        }
    };
    check(&job, ", failAfter: 30s, exitCode: 7", ", gracePeriod: 0s", &[]);
    // A VolcanoJob's containers restart in place under `OnFailure` and `Always`
    // (the default); without a horizon, something must end the restarts: a
    // `TaskFailed` policy that ends or restarts the job. A task's `maxRetry` is
    // read, from -1 (no limit) up.
    let endless = ["spec.tasks[1]: its containers fail every 10 s and restart in place", "set `spec.horizon`"];
    check(&job.replace("restartPolicy: Never", "restartPolicy: OnFailure"), "", "", &endless);
    check(&job.replace("          restartPolicy: Never\n", ""), "", "", &endless);
    let bounded = job.replace("action: RestartJob}]", "action: RestartJob}, {event: TaskFailed, action: AbortJob}]");
    check(&bounded.replace("          restartPolicy: Never\n", ""), "", "", &[]);
    let resumed = job.replace("action: RestartJob}]", "action: RestartJob}, {event: TaskFailed, action: ResumeJob}]");
    check(&resumed.replace("          restartPolicy: Never\n", ""), "", "", &endless);
    check(
        &job.replace("      replicas: 1\n      template", "      replicas: 1\n      maxRetry: -1\n      template"),
        "",
        "",
        &[],
    );
    check(
        &job.replace("      replicas: 1\n      template", "      replicas: 1\n      maxRetry: -2\n      template"),
        "",
        "",
        &["spec.tasks[0].maxRetry"],
    );
    check(
        &job.replace("exit-code: \"3\"", "exit-code: \"256\""),
        "",
        "",
        &[
            "spec.tasks[1].template.metadata.annotations.lahar.io/exit-code",
            "expected an exit code from 1 to 255, got `256`",
        ],
    );
    check(&job.replace("lahar.io/fail-after: 10s, ", ""), "", "", &["an exit code needs `lahar.io/fail-after`"]);
    check(&job.replace("fail-after: 10s", "fail-after: 0s"), "", "", &["expected a duration above 0"]);
    check(
        &job.replace("{exitCode: 3, action", "{exitCode: 0, action"),
        "",
        "",
        &["spec.policies[0].exitCode", "0 is not a valid error code"],
    );
    check(
        &job.replace("{exitCode: 3, action", "{event: PodFailed, exitCode: 3, action"),
        "",
        "",
        &["must not specify event and exitCode simultaneously"],
    );
    check(
        &job.replace(
            "[{exitCode: 3, action: RestartJob}]",
            "[{exitCode: 3, action: RestartJob}, {exitCode: 3, action: AbortJob}]",
        ),
        "",
        "",
        &["spec.policies[1].exitCode", "duplicate exitCode 3"],
    );
    check(&job.replace("{exitCode: 3, action", "{action"), "", "", &["either event and exitCode should be specified"]);
    // A kind that does not read it refuses it rather than ignoring it.
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: d}}\n  template:\n    metadata: {labels: {app: d}, annotations: {lahar.io/fail-after: 10s}}\n    spec:\n      schedulerName: volcano\n      containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]\n";
    check(
        deployment,
        "",
        "",
        &[
            "spec.template.metadata.annotations.lahar.io/fail-after",
            "is read on a VolcanoJob's task templates and a batch/v1 Job's template only",
        ],
    );
    check(&job, ", exitCode: 7", "", &["spec.workload[1].jobs[0].tasks[0].exitCode", "an exit code needs `failAfter`"]);
    check(&job, ", failAfter: 0s", "", &["spec.workload[1].jobs[0].tasks[0].failAfter", "must be longer than 0"]);
    check(&job, "", ", gracePeriod: soon", &["spec.timeline[0].gracePeriod"]);
    let moved = text.replace("deletePod: default/c-w-0GRACE", "cordon: n0, gracePeriod: 0s");
    std::fs::write(&scenario, moved.replace("COMPACT", "")).expect("write");
    std::fs::write(dir.path().join("job.yaml"), &job).expect("write");
    let out = crate::lahar().arg("validate").arg(&scenario).output().expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code() == Some(2) && err.contains("it goes with `deletePod`"), "{err}");
}

/// A compact task's `failAfter` and `exitCode` work as the annotations do, and a
/// timeline deletion's `gracePeriod` replaces the pod's: the pod deleted at 20 s
/// with a 0 s grace is remade at once, and its replacement fails 10 s after it
/// starts with the code a policy matches.
#[test]
fn compact_failing_tasks_and_a_deletions_grace() {
    let text = "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  horizon: 2m\n  cluster:\n    nodes: [{name: n0, cpu: 4, memory: 8Gi}]\n  workload:\n    - jobs:\n      - {name: c, duration: 1h, minAvailable: 1, tasks: [{name: w, replicas: 1, resources: {cpu: 1}, failAfter: 45s, exitCode: 9, policies: [{event: PodFailed, action: TerminateJob}]}]}\n  timeline:\n    - {at: 20s, deletePod: default/c-w-0, gracePeriod: 0s}\n";
    let out = super::volcano::run_text(text);
    let p = intervals(&out, "c-w-0");
    assert_eq!(p, [iv("0", "20", "evicted"), iv("20", "65", "exited")]);
    assert_eq!(state(&out, "c"), "Terminated,0,65");
}
