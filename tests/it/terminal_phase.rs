//! A deleted pod's terminal phase: the kubelet moves a pod it stopped because
//! it was deleted to Failed (its container's exit code, 143 for SIGTERM) or
//! Succeeded (0) before the pod is gone, and Volcano's job controller hears
//! that update (`updatePod`: PodFailed, or TaskCompleted) before the deletion
//! (`deletePod`: PodEvicted). The situation of volcano-sh/volcano#5885: a job
//! with `PodFailed: TerminateJob` and `PodEvicted: RestartJob` is preempted and
//! ends Terminated, not restarted.

use super::volcano::Out;

/// Priority decides who preempts whom; gang does not vote on victims (as in
/// Volcano's e2e conf), and no plugin keeps the preemptor out of the queue
/// (the e2e conf's overcommit and proportion would: the node is full).
const CONF: &str = "actions: \"enqueue, allocate, preempt\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n    enablePreemptable: false\n  - name: conformance\n- plugins:\n  - name: predicates\n  - name: nodeorder\n";

/// Runs `objects` (manifests) on one 2-CPU node under [`CONF`].
fn run(objects: &str) -> Out {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("jobs.yaml"), objects).expect("write");
    std::fs::write(dir.path().join("preempt.conf"), CONF).expect("write");
    let text = "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  cluster:\n    nodes: [{name: n0, cpu: 2, memory: 8Gi}]\n  queues: [{name: default}]\n  scheduler: {conf: preempt.conf}\n  workload:\n    - manifests: [jobs.yaml]\n";
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, text).expect("write");
    super::volcano::run_file(&p)
}

/// The two PriorityClasses and the high-priority job that preempts: one pod of
/// 2 CPUs for 10 minutes, submitted at 60 s.
const HIGH: &str = "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 1\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: high\n  annotations: {lahar.io/duration: 10m, lahar.io/submit-at: 60s}\nspec:\n  priorityClassName: high\n  tasks:\n    - name: w\n      replicas: 1\n      template:\n        spec:\n          priorityClassName: high\n          containers: [{name: c, image: i, resources: {requests: {cpu: \"2\"}}}]\n";

/// The low-priority job of volcano#5885: a `master` and a `worker` of 1 CPU
/// each, `minAvailable: 2`, for an hour, with the job's `policies` (YAML list
/// items, each on its own line); `stop`: both templates'
/// `lahar.io/stop-exit-code`, if not empty.
fn low(policies: &str, stop: &str) -> String {
    let meta = if stop.is_empty() {
        String::new()
    } else {
        format!("        metadata: {{annotations: {{lahar.io/stop-exit-code: \"{stop}\"}}}}\n")
    };
    let task = |name: &str| {
        format!(
            "    - name: {name}\n      replicas: 1\n      template:\n{meta}        spec:\n          priorityClassName: low\n          containers: [{{name: c, image: i, resources: {{requests: {{cpu: \"1\"}}}}}}]\n"
        )
    };
    format!(
        "---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: low\n  annotations: {{lahar.io/duration: 1h}}\nspec:\n  priorityClassName: low\n  minAvailable: 2\n  maxRetry: 100\n  policies:\n{policies}  tasks:\n{}{}",
        task("master"),
        task("worker")
    )
}

/// A job's `submit,start,end,state,retries` in jobs.csv (start: its first).
fn row(out: &Out, job: &str) -> String {
    let j = out.job(job);
    [&j["submit_s"], &j["start_s"], &j["end_s"], &j["state"], &j["retries"]].map(|s| s.as_str()).join(",")
}

const ISSUE_5885: &str =
    "    - {event: PodFailed, action: TerminateJob}\n    - {event: PodEvicted, action: RestartJob}\n";

/// By hand: `low` runs from 0 on n0's two CPUs; `high` comes at 60 s and
/// preempt evicts both `low` pods (30 s grace). At 90 s they are gone: the
/// first one's terminal phase, Failed with 143, is heard before any deletion
/// and its PodFailed policy terminates the job, whose PodEvicted policy never
/// acts. `high` runs from 90 s to 690 s.
///
/// When the containers handle SIGTERM and exit 0 (`lahar.io/stop-exit-code`
/// on both templates), the terminal phase is Succeeded, which no policy of
/// `low` matches; the deletion's PodEvicted restarts the job (one retry), and
/// it runs its hour again once `high` is done: 690 s to 4,290 s.
#[test]
fn a_deleted_pods_terminal_phase_is_heard_first() {
    let out = run(&format!("{HIGH}{}", low(ISSUE_5885, "")));
    assert_eq!(row(&out, "low"), "0,0,90,Terminated,0");
    assert_eq!(row(&out, "high"), "60,90,690,Completed,0");

    let out = run(&format!("{HIGH}{}", low(ISSUE_5885, "0")));
    assert_eq!(row(&out, "low"), "0,0,4290,Completed,1");
}

/// An `exitCode` policy matches a stopped container's code: 143 by default, or
/// the template's. `low` with `exitCode: 143 → AbortJob` is Aborted at 90 s.
/// With `lahar.io/stop-exit-code: "137"` on both templates (containers that
/// ignore SIGTERM and are killed at the grace period's end) nothing matches,
/// neither the terminal phase nor the deletion: the pods are made again, no
/// retry counted, and `low` runs its hour once `high` is done.
#[test]
fn an_exit_code_policy_matches_a_stopped_container() {
    let abort = "    - {exitCode: 143, action: AbortJob}\n";
    let out = run(&format!("{HIGH}{}", low(abort, "")));
    assert_eq!(row(&out, "low"), "0,0,90,Aborted,0");

    let out = run(&format!("{HIGH}{}", low(abort, "137")));
    assert_eq!(row(&out, "low"), "0,0,4290,Completed,0");
}

/// The dummy success of volcano-sh/volcano#394: a container that exits 0 when
/// stopped leaves its pod Succeeded, and a task whose pods have all Succeeded
/// raises TaskCompleted: a `TaskCompleted: CompleteJob` policy (the usual MPI
/// job's, there on its launcher task) completes a job that was only preempted,
/// at 90 s. With the default 143 the same job is restarted by its deletion's
/// PodEvicted policy and runs its hour once `high` is done.
#[test]
fn a_stopped_container_that_exits_0_can_complete_its_task() {
    let policies = "    - {event: TaskCompleted, action: CompleteJob}\n    - {event: PodEvicted, action: RestartJob}\n";
    let out = run(&format!("{HIGH}{}", low(policies, "0")));
    assert_eq!(row(&out, "low"), "0,0,90,Completed,0");
    let out = run(&format!("{HIGH}{}", low(policies, "")));
    assert_eq!(row(&out, "low"), "0,0,4290,Completed,1");
}

/// Runs `lahar validate` on a scenario whose workload is `jobs.yaml` (=
/// `objects`) then `compact` (a `jobs:` list item, or empty); its exit code
/// and standard error.
fn validate(objects: &str, compact: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("jobs.yaml"), objects).expect("write");
    let compact = if compact.is_empty() { String::new() } else { format!("    - jobs:\n      - {compact}\n") };
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  cluster:\n    nodes: [{{name: n0, cpu: 2, memory: 8Gi}}]\n  workload:\n    - manifests: [jobs.yaml]\n{compact}"
    );
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, text).expect("write");
    let out = crate::lahar().arg("validate").arg(&p).output().expect("run");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// `lahar.io/stop-exit-code` takes 0–255 on a VolcanoJob's task templates,
/// and is refused, with its location, anywhere else (no other controller
/// hears a deleted pod's terminal phase); a compact task's `stopExitCode`
/// likewise.
#[test]
fn stop_exit_codes_are_checked() {
    let ok = format!("{HIGH}{}", low("    - {event: PodFailed, action: TerminateJob}\n", "0"));
    assert_eq!(validate(&ok, "").0, Some(0), "{}", validate(&ok, "").1);
    for bad in ["256", "-1", "x"] {
        let (code, err) =
            validate(&format!("{HIGH}{}", low("    - {event: PodFailed, action: TerminateJob}\n", bad)), "");
        assert_eq!(code, Some(2), "{err}");
        for w in [
            "jobs.yaml:42:59: document 4: ",
            "spec.tasks[0].template.metadata.annotations.lahar.io/stop-exit-code",
            &format!("expected an exit code from 0 to 255, got `{bad}`"),
        ] {
            assert!(err.contains(w), "{w}: {err}");
        }
    }
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: d}}\n  template:\n    metadata: {labels: {app: d}, annotations: {lahar.io/stop-exit-code: \"0\"}}\n    spec:\n      schedulerName: volcano\n      containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]\n";
    let batch = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: b}\nspec:\n  template:\n    metadata: {annotations: {lahar.io/stop-exit-code: \"0\"}}\n    spec:\n      schedulerName: volcano\n      restartPolicy: Never\n      containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]\n";
    for (objects, at) in [(deployment, "jobs.yaml:8:"), (batch, "jobs.yaml:6:")] {
        let (code, err) = validate(objects, "");
        assert_eq!(code, Some(2), "{err}");
        for w in [
            at,
            "spec.template.metadata.annotations.lahar.io/stop-exit-code",
            "`lahar.io/stop-exit-code` is read on a VolcanoJob's task templates only",
        ] {
            assert!(err.contains(w), "{w}: {err}");
        }
    }
    let task = |code: &str| {
        format!("{{name: c, duration: 1h, tasks: [{{name: w, replicas: 1, resources: {{cpu: 1}}{code}}}]}}")
    };
    assert_eq!(validate(&ok, &task(", stopExitCode: 0")).0, Some(0));
    for bad in ["256", "-3"] {
        let (code, err) = validate(&ok, &task(&format!(", stopExitCode: {bad}")));
        assert_eq!(code, Some(2), "{err}");
        for w in [
            "s.yaml:10:",
            "spec.workload[1].jobs[0].tasks[0].stopExitCode",
            &format!("expected an exit code from 0 to 255, got {bad}"),
        ] {
            assert!(err.contains(w), "{w}: {err}");
        }
    }
}

/// An operator's deletion is heard the same way, unless it gives no grace
/// period: a pod deleted with `gracePeriod: 0s` leaves the API server at once
/// and no kubelet reports its phase. The compact job's `PodFailed:
/// TerminateJob` ends it when its pod, deleted at 20 s with a 1 s grace, is
/// gone at 21 s; with a 0 s grace the pod is made again at once and the job
/// runs on (to the 2-minute horizon).
#[test]
fn a_deletion_without_a_grace_period_has_no_terminal_phase() {
    let text = |grace: &str| {
        format!(
            "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  horizon: 2m\n  cluster:\n    nodes: [{{name: n0, cpu: 4, memory: 8Gi}}]\n  workload:\n    - jobs:\n      - {{name: c, duration: 1h, tasks: [{{name: w, replicas: 1, resources: {{cpu: 1}}, policies: [{{event: PodFailed, action: TerminateJob}}]}}]}}\n  timeline:\n    - {{at: 20s, deletePod: default/c-w-0, gracePeriod: {grace}}}\n"
        )
    };
    let out = super::volcano::run_text(&text("1s"));
    assert_eq!(row(&out, "c"), "0,0,21,Terminated,0");
    let out = super::volcano::run_text(&text("0s"));
    assert_eq!(out.job("c")["state"], "Running");
}

/// `--explain` tells what the controller did: the pod's runs that ended
/// otherwise than with their job (preempted at 60 s), the job's end, and the
/// lifecycle policy that acted last, with the event it heard, the pod and the
/// exit code (the worker's terminal phase is heard first: its pod is released
/// first).
#[test]
fn explain_names_the_policy_that_ended_the_job() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("jobs.yaml"), format!("{HIGH}{}", low(ISSUE_5885, ""))).expect("write");
    std::fs::write(dir.path().join("preempt.conf"), CONF).expect("write");
    let text = "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  cluster:\n    nodes: [{name: n0, cpu: 2, memory: 8Gi}]\n  queues: [{name: default}]\n  scheduler: {conf: preempt.conf}\n  workload:\n    - manifests: [jobs.yaml]\n";
    std::fs::write(dir.path().join("s.yaml"), text).expect("write");
    let out = crate::lahar()
        .current_dir(dir.path())
        .args(["run", "s.yaml", "--out", "out", "--explain", "default/low-master-0"])
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    for w in [
        "explain: default/low-master-0: first bound to n0 at 0 s (after 0 s pending); its runs ended: preempted at 60 s;",
        "\n  Terminated at 90 s; the last lifecycle policy to act: TerminateJob on PodFailed for default/low-worker-0 (exit code 143) at 90 s\n",
    ] {
        assert!(stdout.contains(w), "{w}: {stdout}");
    }
    // docs/volcano.md shows these lines as the binary prints them.
    let pod = stdout.lines().find(|l| l.starts_with("explain: default/low-master-0:")).expect("the summary line");
    let job = stdout.lines().position(|l| l.starts_with("explain low ")).expect("the job's line");
    let lines: Vec<&str> = stdout.lines().collect();
    let block = format!("```\n{pod}\n\n{}\n{}\n```", lines[job], lines[job + 1]);
    let page = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/volcano.md"))
        .expect("docs/volcano.md");
    assert!(page.contains(&block), "docs/volcano.md should show:\n{block}");
}

/// A job failed by its `maxRetry` says so: `j` (`maxRetry: 1`, `PodEvicted:
/// RestartJob`) has its pod deleted at 60 s; at 90 s the pod is gone, its
/// terminal phase (143) matches nothing, its deletion restarts the job, and
/// that first retry reaches the limit: Failed at 90 s.
#[test]
fn explain_names_a_max_retry_failure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let job = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: j\n  annotations: {lahar.io/duration: 1h}\nspec:\n  maxRetry: 1\n  policies: [{event: PodEvicted, action: RestartJob}]\n  tasks:\n    - name: w\n      replicas: 1\n      template:\n        spec:\n          containers: [{name: c, image: i, resources: {requests: {cpu: \"1\"}}}]\n";
    std::fs::write(dir.path().join("jobs.yaml"), job).expect("write");
    let text = "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  cluster:\n    nodes: [{name: n0, cpu: 2, memory: 8Gi}]\n  workload:\n    - manifests: [jobs.yaml]\n  timeline:\n    - {at: 60s, deletePod: j-w-0}\n";
    std::fs::write(dir.path().join("s.yaml"), text).expect("write");
    let out = crate::lahar()
        .current_dir(dir.path())
        .args(["run", "s.yaml", "--out", "out", "--explain", "default/j-w-0"])
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let want = "\n  Failed at 90 s; its retries reached maxRetry 1; the last lifecycle policy to act: RestartJob on PodEvicted for default/j-w-0 at 90 s\n";
    assert!(stdout.contains(want), "{want}: {stdout}");
}
