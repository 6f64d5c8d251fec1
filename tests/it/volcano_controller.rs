//! Volcano's job controller over many sessions (issue 40): its end-to-end tests
//! (test/e2e) replayed as scenarios under their own `It(...)` names, with the e2e
//! suites' conf (`tests/volcano/e2e/volcano-scheduler-ci.conf`, copied from
//! Volcano). Where an e2e test acts on the live cluster in a way a scenario writes
//! otherwise, the test says how it is restated.

use super::volcano::Out;

/// The e2e conf, read from the fixture.
pub(super) fn e2e_conf() -> String {
    let p: std::path::PathBuf =
        [env!("CARGO_MANIFEST_DIR"), "tests", "volcano", "e2e", "volcano-scheduler-ci.conf"].iter().collect();
    std::fs::read_to_string(p).expect("the e2e conf")
}

/// Runs a scenario over `nodes` (one line each) with the VolcanoJob `job` (a
/// manifest) and `faults` (the `spec.faults` body, or empty) under the e2e conf.
fn run(nodes: &[&str], job: &str, faults: &str) -> Out {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("job.yaml"), job).expect("write");
    std::fs::write(dir.path().join("ci.conf"), e2e_conf()).expect("write");
    let nodes: String = nodes.iter().map(|n| format!("      - {n}\n")).collect();
    let faults = if faults.is_empty() { String::new() } else { format!("  faults:\n{faults}") };
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  cluster:\n    nodes:\n{nodes}  queues: [{{name: default}}]\n  scheduler: {{conf: ci.conf}}\n  workload:\n    - manifests: [job.yaml]\n{faults}"
    );
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, text).expect("write");
    super::volcano::run_file(&p)
}

/// (t, phase) of a job's PodGroup phase rows.
fn phases<'a>(out: &'a Out, job: &str) -> Vec<(&'a str, &'a str)> {
    out.of("phase").iter().filter(|d| d["job"] == job).map(|d| (d["t_s"].as_str(), d["phase"].as_str())).collect()
}

/// The phases of the drained job below: admitted and running at 0, Unknown at
/// 40 s (its replacement pod unschedulable, a pod still Running). At 70 s the
/// replacement is bound; at that session's close Volcano's cache holds it Binding,
/// so one pod is scheduled of the two and the Unknown group turns Pending
/// (`getPodGroupPhase`); the next session's enqueue leaves it Pending (overcommit:
/// the full cluster has 0.4 CPU of room for its 2), and at that close both pods
/// are scheduled: Running.
const UNKNOWN_THEN_RUNNING: [(&str, &str); 5] =
    [("0", "Inqueue"), ("0", "Running"), ("40", "Unknown"), ("70", "Pending"), ("70", "Running")];

/// A VolcanoJob of `replicas` one-CPU pods, all in its gang, running for `duration`,
/// whose job-level policy reacts to `event` with `action`.
fn policy_job(name: &str, replicas: u32, duration: &str, event: &str, action: &str) -> String {
    format!(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: {name}\n  annotations: {{lahar.io/duration: {duration}}}\nspec:\n  policies:\n    - {{event: {event}, action: {action}}}\n  tasks:\n    - name: test\n      replicas: {replicas}\n      minAvailable: {replicas}\n      template:\n        spec:\n          containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: \"1\"}}}}}}]\n"
    )
}

const TWO_ONE_CPU_NODES: &[&str] = &["{name: n0, cpu: 1, memory: 4Gi}", "{name: n1, cpu: 1, memory: 4Gi}"];

/// `Job error handling: Restart job when job is unschedulable`
/// (test/e2e/jobseq/job_error_handling.go). The e2e fills the cluster with the
/// job (`ClusterSize` one-CPU pods), taints every node and deletes one pod; the
/// controller recreates it, no node takes it, gang marks the job unschedulable at
/// the session's close and, with a pod still Running, its PodGroup turns Unknown
/// (`getPodGroupPhase`); the `Unknown` policy restarts the job; once the taints
/// are gone it runs again.
///
/// Restated: the taint and the deletion are a drain of `n0` at 10 s (cordoned,
/// its pod evicted at once, uncordoned at 70 s); `n1` is full with the job's other
/// pod, so no node takes the replacement either. By hand: at 10 s the evicted pod
/// releases for its 30 s grace (Running 1 + Releasing 1 reach the minimum 2: gang
/// skips the job, `shouldSkipUnschedulableForReleasing`); at 40 s it is gone and
/// recreated Pending, the session cannot place it, the job is not ready with a pod
/// Running: Unknown → RestartJob kills `n1`'s pod (30 s grace) and deletes the
/// Pending one; at 70 s it is gone, `n0` is uncordoned, the job has two new pods
/// and both run.
#[test]
fn job_error_handling_restart_job_when_job_is_unschedulable() {
    let job = policy_job("job-restart-when-unschedulable", 2, "1h", "Unknown", "RestartJob");
    let out = run(TWO_ONE_CPU_NODES, &job, "    drains: [{at: 10s, nodes: n0, deadline: 0s, duration: 60s}]\n");
    // RestartJob deleted the PodGroup (killJob) and the next sync made it anew:
    // Pending at 40 s. Enqueue cannot admit it while `n1`'s pod terminates (the
    // full cluster's room, 0.4 CPU, is under its 2), nor does that one pod reach
    // its minMember of 2 (`getPodGroupPhase` counts a terminating pod that was
    // scheduled). At 70 s enqueue admits it, the controller makes the pods, the
    // next session runs them.
    let restarted = [
        ("0", "Inqueue"),
        ("0", "Running"),
        ("40", "Unknown"),
        ("40", "Pending"),
        ("70", "Inqueue"),
        ("70", "Running"),
    ];
    assert_eq!(phases(&out, "job-restart-when-unschedulable"), restarted);
    assert_eq!(row(&out, "job-restart-when-unschedulable"), "0,0,3670,Completed,1");
}

/// After a job's first kill its `Unknown` policy no longer acts: the PodGroup's
/// Unknown request carries job version 0, which `applyPolicies` finds outdated
/// once `killPods` has raised the job's version. The restart above, then the
/// same drain again at 1000 s: the pod on n0 is gone at 1030 s and made again,
/// no node takes it, the group turns Unknown — and nothing more happens (a
/// second RestartJob would count retry 2 and kill n1's pod). At 1060 s n0 is
/// uncordoned, the pod runs, and the job (no checkpoint: its work since 70 s
/// lost) runs its hour from there, to 4660 s, with one retry.
#[test]
fn the_unknown_policy_is_outdated_after_a_restart() {
    let job = policy_job("job-restart-when-unschedulable", 2, "1h", "Unknown", "RestartJob");
    let drains = "    drains: [{at: 10s, nodes: n0, deadline: 0s, duration: 60s}, {at: 1000s, nodes: n0, deadline: 0s, duration: 60s}]\n";
    let out = run(TWO_ONE_CPU_NODES, &job, drains);
    let p = phases(&out, "job-restart-when-unschedulable");
    assert_eq!(p[6..], [("1030", "Unknown"), ("1060", "Pending"), ("1060", "Running")], "{p:?}");
    assert_eq!(row(&out, "job-restart-when-unschedulable"), "0,0,4660,Completed,1");
}

/// `Job error handling: Abort job when job is unschedulable`
/// (test/e2e/jobseq/job_error_handling.go): the same situation, restated the same
/// way, with the `Unknown` policy AbortJob: the job is Aborting at 40 s, when its
/// PodGroup turns Unknown, Aborted at 70 s, when the pod it killed on `n1` is
/// gone (30 s grace), and never runs again.
#[test]
fn job_error_handling_abort_job_when_job_is_unschedulable() {
    let job = policy_job("job-abort-when-unschedulable", 2, "1h", "Unknown", "AbortJob");
    let out = run(TWO_ONE_CPU_NODES, &job, "    drains: [{at: 10s, nodes: n0, deadline: 0s, duration: 60s}]\n");
    let p = phases(&out, "job-abort-when-unschedulable");
    assert_eq!(p.last(), Some(&("40", "Unknown")), "{p:?}");
    assert_eq!(row(&out, "job-abort-when-unschedulable"), "0,0,70,Aborted,0");
}

/// Without a policy for it, an Unknown PodGroup changes nothing but its phase
/// (the controller's default action, SyncJob): the replacement pod waits for the
/// uncordon and the job goes on. Its rows: Unknown at 40 s, Pending then Running
/// at 70 s. (Its one policy is for an event that does not come: a PodFailed
/// one would hear the drained pod's terminal phase at 40 s.)
#[test]
fn an_unknown_podgroup_without_a_policy_waits() {
    let job = policy_job("no-policy", 2, "1h", "TaskCompleted", "RestartJob");
    let out = run(TWO_ONE_CPU_NODES, &job, "    drains: [{at: 10s, nodes: n0, deadline: 0s, duration: 60s}]\n");
    assert_eq!(phases(&out, "no-policy"), UNKNOWN_THEN_RUNNING);
}

/// A job's `submit,start,end,state,retries` in jobs.csv (start: its first).
fn row(out: &Out, job: &str) -> String {
    let j = out.job(job);
    [&j["submit_s"], &j["start_s"], &j["end_s"], &j["state"], &j["retries"]].map(|s| s.as_str()).join(",")
}

/// `Min Success` (test/e2e/jobp/min_success.go): `minSuccess: 2`, a task `short`
/// of 3 pods that sleep 3 s (`minAvailable: 1`) and a task `log` of 2 pods that
/// sleep 100000 s (`minAvailable: 1`). The e2e waits for the job to run, for two
/// pods to succeed, then for the job to be Completed. By hand: all five pods run
/// at 0 (five CPUs free); the short pods succeed at 3 s; the controller counts 3
/// succeeded ≥ 2 and completes the job at 3 s, killing the two `log` pods.
#[test]
fn min_success() {
    let task = |name: &str, reps: u32, secs: u32| {
        format!(
            "    - name: {name}\n      replicas: {reps}\n      minAvailable: 1\n      template:\n        metadata: {{annotations: {{lahar.io/duration: {secs}s}}}}\n        spec:\n          restartPolicy: OnFailure\n          containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: \"1\"}}}}}}]\n"
        )
    };
    let job = format!(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: min-success-job\nspec:\n  minSuccess: 2\n  tasks:\n{}{}",
        task("short", 3, 3),
        task("log", 2, 100000)
    );
    let out = run(&["{name: n0, cpu: 8, memory: 16Gi}"], &job, "");
    assert_eq!(row(&out, "min-success-job"), "0,0,3,Completed,0");
    let ends: Vec<(String, String, String)> =
        out.pods.iter().map(|p| (p["pod"].clone(), p["end_s"].clone(), p["reason_end"].clone())).collect();
    for (pod, end, reason) in &ends {
        let want = if pod.contains("-short-") { "completed" } else { "killed" };
        assert_eq!((end.as_str(), reason.as_str()), ("3", want), "{pod}: {ends:?}");
    }
    assert_eq!(ends.len(), 5);
}

/// `minSuccess` above what can succeed: the job Fails when its last pod has
/// ended (the Running state's SyncJob: every pod ended, fewer succeeded).
#[test]
fn min_success_not_reached_fails_the_job() {
    let job = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: short\nspec:\n  minSuccess: 3\n  tasks:\n    - name: w\n      replicas: 2\n      template:\n        metadata: {annotations: {lahar.io/duration: 5s}}\n        spec:\n          restartPolicy: OnFailure\n          containers: [{name: c, image: busybox, resources: {requests: {cpu: \"1\"}}}]\n";
    let out = run(&["{name: n0, cpu: 8, memory: 16Gi}"], job, "");
    assert_eq!(row(&out, "short"), "0,0,5,Failed,0");
}

/// A task short of its own `minAvailable` successes fails the job once every
/// pod has ended, when the job's `minAvailable` is at least the sum of its
/// tasks' (state/running.go, `TotalTaskMinAvailable`), not only when it is every
/// replica. Task `a`: 2 pods whose container exits 3 at 5 s (`minAvailable: 1`);
/// task `b`: 2 pods that succeed at 10 s (`minAvailable: 1`). By hand, with the
/// job's `minAvailable` left to the webhook (1 + 1 = 2, under the 4 replicas):
/// every pod has ended at 10 s, 2 succeeded ≥ 2, but `a` has 0 successes < 1:
/// Failed. With `minAvailable: 1` (below the tasks' sum) the task check does not
/// run: 2 ≥ 1, Completed.
#[test]
fn a_task_short_of_its_min_available_fails_the_job() {
    let task = |name: &str, run: &str| {
        format!(
            "    - name: {name}\n      replicas: 2\n      minAvailable: 1\n      template:\n        metadata: {{annotations: {{{run}}}}}\n        spec:\n          restartPolicy: Never\n          containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: \"1\"}}}}}}]\n"
        )
    };
    for (min, want) in [("", "0,0,10,Failed,0"), ("  minAvailable: 1\n", "0,0,10,Completed,0")] {
        let job = format!(
            "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: j\n  annotations: {{lahar.io/duration: 10s}}\nspec:\n{min}  tasks:\n{}{}",
            task("a", "lahar.io/fail-after: 5s, lahar.io/exit-code: \"3\""),
            task("b", "lahar.io/duration: 10s")
        );
        let out = run(&["{name: n0, cpu: 8, memory: 16Gi}"], &job, "");
        assert_eq!(row(&out, "j"), want, "minAvailable {min:?}");
    }
}

/// A Pod no controller owns (no PodGroup annotation, no `ownerReferences`) is
/// gone once evicted, as in Kubernetes. Two 4-CPU nodes each run a low-priority
/// Pod of 3 CPUs from 0; a high-priority Pod of 2 CPUs arrives at 10 s (proportion
/// admits it: 6 + 2 ≤ 8), allocate finds no node with 2 CPUs free, preempt evicts
/// one low Pod, which releases for its 30 s grace; the preemptor binds at 40 s and
/// runs its minute to 100 s. The bare victim's job ends Terminated at its eviction
/// (10 s) and never runs again. The same Pods with an owner (a controller lahar was
/// not given) are recreated at 40 s; the victim's replacement waits for 3 free
/// CPUs and runs 100 s → 3700 s.
#[test]
fn a_bare_pod_is_gone_once_evicted() {
    let pod = |name: &str, class: &str, at: &str, dur: &str, cpu: u32, owner: &str| {
        format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  annotations: {{lahar.io/submit-at: {at}, lahar.io/duration: {dur}}}\n{owner}spec:\n  schedulerName: volcano\n  priorityClassName: {class}\n  containers: [{{name: c, image: i, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}]\n"
        )
    };
    let classes = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 1\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 100\n";
    let owner = "  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u}]\n";
    for (owned, want_victim) in [(false, "0,0,10,Terminated,0"), (true, "0,0,3700,Completed,0")] {
        let o = if owned { owner } else { "" };
        let objects = format!(
            "{classes}{}{}{}",
            pod("low-a", "low", "0s", "1h", 3, o),
            pod("low-b", "low", "0s", "1h", 3, o),
            pod("preemptor", "high", "10s", "1m", 2, "")
        );
        let out = run(&["{name: n0, cpu: 4, memory: 4Gi}", "{name: n1, cpu: 4, memory: 4Gi}"], &objects, "");
        let evicted = out.evictions();
        assert_eq!(evicted.len(), 1, "owned: {owned}: {evicted:?}");
        let victim = evicted[0].trim_start_matches("default/");
        let other = if victim == "low-a" { "low-b" } else { "low-a" };
        assert_eq!(row(&out, victim), want_victim, "owned: {owned}");
        assert_eq!(row(&out, other), "0,0,3600,Completed,0", "owned: {owned}");
        assert_eq!(row(&out, "preemptor"), "10,40,100,Completed,0", "owned: {owned}");
    }
}

/// Gang's per-role readiness counts a role's pending BestEffort pods (Volcano's
/// `getJobAllocatedRoles`: a Pending pod with an empty request counts, in
/// `CheckTaskReady` and `CheckTaskPipelined`). A job of a BestEffort `ps` (no
/// requests, `minAvailable` 1) and a 1-CPU `worker` (`minAvailable` 1), gang 2,
/// under `enqueue, allocate` (no backfill: allocate never places BestEffort pods):
/// the worker's step makes the job ready (1 allocated + 1 pending BestEffort, and
/// each role holds its minimum), so the worker binds at 0. Counting only placed
/// pods per role, the ps role never holds its minimum and nothing binds.
#[test]
fn gang_roles_count_pending_best_effort_pods() {
    let text = "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  cluster:\n    nodes: [{name: n0, cpu: 4, memory: 4Gi}]\n  scheduler:\n    inline: |\n      actions: \"enqueue, allocate\"\n      tiers:\n      - plugins: [{name: priority}, {name: gang}]\n      - plugins: [{name: predicates}, {name: proportion}]\n  workload:\n    - jobs:\n      - {name: j, duration: 1h, minAvailable: 2, tasks: [{name: ps, replicas: 1, minAvailable: 1, resources: {}}, {name: worker, replicas: 1, minAvailable: 1, resources: {cpu: 1}}]}\n";
    let out = super::volcano::run_text(text);
    assert_eq!(out.bind_order(), ["default/j-worker-0"]);
}

/// A job's own `sla-waiting-time` annotation (Volcano's
/// `JobInfo.extractWaitingTime`; the job controller gives the PodGroup the job's
/// annotations), under the e2e conf, whose sla plugin has no argument. On a 2-CPU
/// node `a` runs 0 → 1 h; `b` (2 CPUs, at 10 s) is refused by overcommit and
/// proportion until its waiting time of 30 s is over: at 40 s sla's permit in the
/// first tier admits it (Inqueue at 40 s), though it runs only when `a` ends.
/// Without the annotation `b` is admitted when `a` ends, at 1 h.
#[test]
fn a_job_sla_waiting_time_admits_it_when_overdue() {
    let job = |name: &str, at: &str, ann: &str| {
        format!(
            "---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: {name}\n  annotations: {{lahar.io/duration: 1h, lahar.io/submit-at: {at}{ann}}}\nspec:\n  tasks:\n    - name: w\n      replicas: 1\n      template:\n        spec:\n          containers: [{{name: c, image: i, resources: {{requests: {{cpu: \"2\"}}}}}}]\n"
        )
    };
    for (ann, admitted) in [(", sla-waiting-time: 30s", "40"), ("", "3600")] {
        let objects = format!("{}{}", job("a", "0s", ""), job("b", "10s", ann));
        let out = run(&["{name: n0, cpu: 2, memory: 4Gi}"], &objects, "");
        let p = phases(&out, "b");
        assert_eq!(p.first(), Some(&(admitted, "Inqueue")), "{ann}: {p:?}");
        assert_eq!(row(&out, "b"), "10,3600,7200,Completed,0", "{ann}");
    }
    // A waiting time that is not a Go duration above 0 is refused at its place.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("job.yaml"), job("a", "0s", ", volcano.sh/sla-waiting-time: soon")).unwrap();
    let s = "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  cluster:\n    nodes: [{name: n0, cpu: 2, memory: 4Gi}]\n  workload:\n    - manifests: [job.yaml]\n";
    std::fs::write(dir.path().join("s.yaml"), s).unwrap();
    let out = super::lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("job.yaml:6:93: document 1: ")
            && err.contains(
                "metadata.annotations.volcano.sh/sla-waiting-time: expected a Go duration above 0 (`30m`, `1h30m`), got `soon`"
            ),
        "{err}"
    );
}

/// A VolcanoJob has no pods until enqueue admits its PodGroup (`syncJob` creates
/// them only once the group has left Pending), so a queue whose jobs all wait for
/// admission requests nothing from proportion. Under the e2e conf on one 4-CPU
/// node, with queues `q1` and `q2` of weight 1: `a` (q1, 2 × 1 CPU) runs from 0;
/// `c` (q2, 4 × 1 CPU) at 1 s is refused by overcommit (4 > 4 × 1.2 − 2); `d` (q1,
/// 2 × 1 CPU) at 2 s is admitted. With `c` podless, q2 requests nothing, q1
/// deserves the whole node, and `d` runs at 2 s (its pods made after the session
/// that admitted it, placed by the next one at the same instant). With `c` a
/// PodGroup given with its pods (a compact job), q2 requests 4 CPUs, each queue
/// deserves 2, q1 is overused and `d` waits for `a` to end at 1 h.
#[test]
fn a_waiting_volcano_job_asks_its_queue_for_nothing() {
    let vcjob = |name: &str, queue: &str, at: &str, n: u32| {
        format!(
            "---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: {name}\n  annotations: {{lahar.io/duration: 1h, lahar.io/submit-at: {at}}}\nspec:\n  queue: {queue}\n  minAvailable: {n}\n  tasks:\n    - name: w\n      replicas: {n}\n      template:\n        spec:\n          containers: [{{name: c, image: i, resources: {{requests: {{cpu: \"1\"}}}}}}]\n"
        )
    };
    let compact_c = "    - jobs:\n      - {name: c, queue: q2, submitAt: 1s, duration: 1h, tasks: [{name: w, replicas: 4, resources: {cpu: 1}}]}\n";
    for (c_as_vcjob, d_row) in [(true, "2,2,3602,Completed,0"), (false, "2,3600,7200,Completed,0")] {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut objects = vcjob("a", "q1", "0s", 2) + &vcjob("d", "q1", "2s", 2);
        if c_as_vcjob {
            objects += &vcjob("c", "q2", "1s", 4);
        }
        std::fs::write(dir.path().join("jobs.yaml"), objects).expect("write");
        std::fs::write(dir.path().join("ci.conf"), e2e_conf()).expect("write");
        let text = format!(
            "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  cluster:\n    nodes: [{{name: n0, cpu: 4, memory: 16Gi}}]\n  queues: [{{name: q1}}, {{name: q2}}]\n  scheduler: {{conf: ci.conf}}\n  workload:\n    - manifests: [jobs.yaml]\n{}",
            if c_as_vcjob { "" } else { compact_c }
        );
        let p = dir.path().join("s.yaml");
        std::fs::write(&p, text).expect("write");
        let out = super::volcano::run_file(&p);
        assert_eq!(row(&out, "a"), "0,0,3600,Completed,0", "c as a VolcanoJob: {c_as_vcjob}");
        assert_eq!(row(&out, "d"), d_row, "c as a VolcanoJob: {c_as_vcjob}");
    }
}

/// RestartJob deletes the PodGroup (Volcano's `killJob`); the controller makes a
/// new one, Pending, once the job's pods are gone, and it orders the job by its
/// new creation time. On one 1-CPU node: `r` (1 CPU, from 0, a `PodEvicted`
/// policy of RestartJob) and `w` (1 CPU) submitted at 10 s, waiting. A drain of
/// the node at 20 s (deadline 0, for 10 s) evicts `r`'s pod; it is gone at 50 s
/// (30 s grace), when the restart ends with a new PodGroup created at 50 s: `w`,
/// created at 10 s, comes first in job order and takes the node; `r` runs after
/// it. Keeping the old PodGroup (created at 0), `r` would go first.
#[test]
fn a_restarted_job_queues_behind_older_jobs() {
    let job = |name: &str, at: &str, policy: &str| {
        format!(
            "---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: {name}\n  annotations: {{lahar.io/duration: 1h, lahar.io/submit-at: {at}}}\nspec:\n{policy}  tasks:\n    - name: w\n      replicas: 1\n      template:\n        spec:\n          containers: [{{name: c, image: i, resources: {{requests: {{cpu: \"1\"}}}}}}]\n"
        )
    };
    let objects = job("r", "0s", "  policies: [{event: PodEvicted, action: RestartJob}]\n") + &job("w", "10s", "");
    let out = run(
        &["{name: n0, cpu: 1, memory: 4Gi}"],
        &objects,
        "    drains: [{at: 20s, nodes: n0, deadline: 0s, duration: 10s}]\n",
    );
    assert_eq!(row(&out, "w"), "10,50,3650,Completed,0");
    assert_eq!(row(&out, "r"), "0,0,7250,Completed,1");
    let r = phases(&out, "r");
    assert_eq!(r, [("0", "Inqueue"), ("0", "Running"), ("50", "Pending"), ("3650", "Inqueue"), ("3650", "Running")]);
}

/// A PodPending policy acts after its `timeout` if the pod is still Pending then
/// (Volcano's delayed action; `applyPolicies` skips a PodPending policy without
/// one), and not once the pod runs. On a 2-CPU node `a` runs 0 → 1 h; `b` (2 CPUs)
/// is submitted at 10 s with its pod made at once (a compact job):
/// - AbortJob after 10 min: `b` is Aborted at 610 s;
/// - RestartPod after 10 min, `maxRetry` 3: the pod is made anew at 610 s (retry 1)
///   and 1210 s (retry 2); at 1810 s the third retry reaches `maxRetry` and `b`
///   fails;
/// - AbortJob after 2 h: the pod runs from 3600 s, the timeout at 7210 s finds it
///   Running and does nothing; `b` completes at 7200 s;
/// - without a timeout the policy never acts.
#[test]
fn a_pod_pending_policy_acts_after_its_timeout() {
    for (policy, want) in [
        ("{event: PodPending, action: AbortJob, timeout: 10m}", "10,,610,Aborted,0"),
        ("{event: PodPending, action: RestartPod, timeout: 10m}", "10,,1810,Failed,3"),
        ("{event: PodPending, action: AbortJob, timeout: 2h}", "10,3600,7200,Completed,0"),
        ("{event: PodPending, action: AbortJob}", "10,3600,7200,Completed,0"),
    ] {
        let text = format!(
            "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  cluster:\n    nodes: [{{name: n0, cpu: 2, memory: 4Gi}}]\n  scheduler:\n    inline: |\n      actions: \"enqueue, allocate\"\n      tiers:\n      - plugins: [{{name: priority}}, {{name: gang}}]\n      - plugins: [{{name: predicates}}, {{name: proportion}}]\n  workload:\n    - jobs:\n      - {{name: a, duration: 1h, tasks: [{{name: w, replicas: 1, resources: {{cpu: 2}}}}]}}\n      - {{name: b, submitAt: 10s, duration: 1h, policies: [{policy}], tasks: [{{name: w, replicas: 1, resources: {{cpu: 2}}}}]}}\n"
        );
        let out = super::volcano::run_text(&text);
        assert_eq!(row(&out, "b"), want, "{policy}");
        assert_eq!(row(&out, "a"), "0,0,3600,Completed,0", "{policy}");
    }
}

/// The policy events and actions Volcano's admission webhook allows are read
/// (`policyEventMap`, `policyActionMap`): PodPending with a timeout, TaskFailed,
/// JobUpdated, RestartPartition and ResumeJob, in a VolcanoJob and in a compact
/// job; a timeout that is not a duration is an error at its place.
#[test]
fn every_allowed_policy_event_and_action_is_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let job = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j, annotations: {lahar.io/duration: 1h}}\nspec:\n  policies:\n    - {event: PodPending, action: RestartJob, timeout: 5m}\n    - {event: TaskFailed, action: RestartPartition}\n    - {events: [JobUpdated], action: ResumeJob}\n  tasks:\n    - name: w\n      replicas: 1\n      template:\n        spec:\n          containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]\n";
    std::fs::write(dir.path().join("job.yaml"), job).expect("write");
    let scenario = |policies: &str| {
        format!(
            "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  cluster:\n    nodes: [{{name: n0, cpu: 2, memory: 4Gi}}]\n  workload:\n    - manifests: job.yaml\n    - jobs:\n      - {{name: c, duration: 1h, policies: {policies}, tasks: [{{name: w, replicas: 1, resources: {{cpu: 1}}}}]}}\n"
        )
    };
    let good = dir.path().join("good.yaml");
    std::fs::write(&good, scenario("[{event: PodPending, action: AbortJob, timeout: 90s}, {event: TaskFailed, action: RestartPartition}, {event: JobUpdated, action: ResumeJob}]")).expect("write");
    crate::lahar().arg("validate").arg(&good).assert().success();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, scenario("[{event: PodPending, action: AbortJob, timeout: soon}]")).expect("write");
    let out = crate::lahar().arg("validate").arg(&bad).assert().code(2).get_output().stderr.clone();
    let err = String::from_utf8_lossy(&out);
    assert!(err.contains("spec.workload[1].jobs[0].policies[0].timeout"), "{err}");
    std::fs::write(dir.path().join("job.yaml"), job.replace("timeout: 5m", "timeout: 5 minutes")).expect("write");
    let out = crate::lahar().arg("validate").arg(&good).assert().code(2).get_output().stderr.clone();
    let err = String::from_utf8_lossy(&out);
    assert!(err.contains("spec.policies[0].timeout") && err.contains("expected a Go duration"), "{err}");
}

/// Runs VolcanoJob manifests `objects` on `nodes` under the e2e conf with the
/// operators' `timeline` (the `spec.timeline` list's entries, one per line).
fn run_timeline(nodes: &[&str], objects: &str, timeline: &[&str]) -> Out {
    run_timeline_with(nodes, objects, timeline, "")
}

/// [`run_timeline`] with `spec` (lines under the scenario's `spec`, each ending in
/// a newline) besides.
pub(super) fn run_timeline_with(nodes: &[&str], objects: &str, timeline: &[&str], spec: &str) -> Out {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("jobs.yaml"), objects).expect("write");
    std::fs::write(dir.path().join("ci.conf"), e2e_conf()).expect("write");
    let nodes: String = nodes.iter().map(|n| format!("      - {n}\n")).collect();
    let steps: String = timeline.iter().map(|s| format!("    - {s}\n")).collect();
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n{spec}  cluster:\n    nodes:\n{nodes}  queues: [{{name: default}}]\n  scheduler: {{conf: ci.conf}}\n  workload:\n    - manifests: [jobs.yaml]\n  timeline:\n{steps}"
    );
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, text).expect("write");
    super::volcano::run_file(&p)
}

/// A one-pod VolcanoJob of 1 CPU for an hour, submitted at `at`, with `policies`.
pub(super) fn one_pod(name: &str, at: &str, policies: &str) -> String {
    format!(
        "---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: {name}\n  annotations: {{lahar.io/duration: 1h, lahar.io/submit-at: {at}}}\nspec:\n{policies}  tasks:\n    - name: w\n      replicas: 1\n      template:\n        spec:\n          containers: [{{name: c, image: i, resources: {{requests: {{cpu: \"1\"}}}}}}]\n"
    )
}

/// An operator deletes a running pod at 10 min (`kubectl delete pod`, as the e2e
/// suites' `DeletePod` does): it leaves its node after its 30 s grace, the job
/// controller hears PodEvicted and, without a policy, makes the pod again; the
/// job has lost its work (no checkpoint) and runs its hour from 630 s. With a
/// `PodEvicted: AbortJob` policy the job is Aborted at 630 s, when the pod is
/// gone: the controller's `deletePod` handler hears the deletion then.
#[test]
fn timeline_deletes_a_pod() {
    let node = ["{name: n0, cpu: 1, memory: 4Gi}"];
    let out = run_timeline(&node, &one_pod("j", "0s", ""), &["{at: 10m, deletePod: default/j-w-0}"]);
    assert_eq!(row(&out, "j"), "0,0,4230,Completed,0");
    let abort = "  policies: [{event: PodEvicted, action: AbortJob}]\n";
    let out = run_timeline(&node, &one_pod("j", "0s", abort), &["{at: 10m, deletePod: j-w-0}"]);
    assert_eq!(row(&out, "j"), "0,0,630,Aborted,0");
}

/// The job controller hears a deleted pod once it is gone (`deletePod`, the
/// informer's delete after the grace period), so a `PodEvicted` policy's
/// `timeout` counts from there. By hand: `j` runs on n0 from 0; at 10 min n0 is
/// cordoned and the pod deleted; it is gone at 630 s (30 s grace), when the
/// controller hears PodEvicted: the AbortJob waits its minute while the pod made
/// again cannot run (n0 is cordoned), and acts at 690 s (at 660 s if the event
/// came with the deletion). A LeaderWorkerSet's pod controller acts on the
/// deletion timestamp instead: its group of two (RecreateGroupOnPodRestart, a
/// RestartJob) has its leader killed when the worker's deletion starts, at
/// 600 s; the same group as a VolcanoJob with `PodEvicted: RestartJob` has it
/// killed when the worker is gone, at 630 s.
#[test]
fn pod_evicted_is_heard_when_the_pod_is_gone() {
    let node = ["{name: n0, cpu: 1, memory: 4Gi}"];
    let abort = "  policies: [{event: PodEvicted, action: AbortJob, timeout: 1m}]\n";
    let steps = ["{at: 10m, cordon: n0}", "{at: 10m, deletePod: j-w-0}"];
    let out = run_timeline(&node, &one_pod("j", "0s", abort), &steps);
    assert_eq!(row(&out, "j"), "0,0,690,Aborted,0");

    let nodes = ["{name: n0, cpu: 2, memory: 4Gi}"];
    let lws = "---\napiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: g, annotations: {lahar.io/duration: 1h}}\nspec:\n  replicas: 1\n  leaderWorkerTemplate:\n    size: 2\n    workerTemplate:\n      spec:\n        schedulerName: volcano\n        containers: [{name: c, resources: {requests: {cpu: 1}}}]\n";
    let out = run_timeline(&nodes, lws, &["{at: 10m, deletePod: g-0-1}"]);
    let leader = super::e2e_jobseq::intervals(&out, "g-0");
    assert_eq!(leader[0], super::e2e_jobseq::iv("0", "600", "restarted"), "{leader:?}");
    let vcjob = "---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: v\n  annotations: {lahar.io/duration: 1h}\nspec:\n  policies: [{event: PodEvicted, action: RestartJob}]\n  tasks:\n    - name: w\n      replicas: 2\n      template:\n        spec:\n          containers: [{name: c, image: i, resources: {requests: {cpu: \"1\"}}}]\n";
    let out = run_timeline(&nodes, vcjob, &["{at: 10m, deletePod: v-w-1}"]);
    let other = super::e2e_jobseq::intervals(&out, "v-w-0");
    assert_eq!(other[0], super::e2e_jobseq::iv("0", "630", "restarted"), "{other:?}");
}

/// RestartJob deletes every pod, Succeeded ones too (`killJob` with
/// `PodRetainPhaseNone`), and the new incarnation counts none of the old. By
/// hand, two 1-CPU nodes, `minAvailable` 2, `PodFailed: RestartJob`, `maxRetry`
/// 3: task `a` succeeds 10 min after it starts, task `b` fails 20 min after it
/// starts. Both start at 0; `a` succeeds at 600 s; `b` fails at 1,200 s (retry
/// 1), the job restarts and both start again at 1,200 s; `a` succeeds at
/// 1,800 s, which must not complete the job (the old `a` is gone); `b` fails at
/// 2,400 s (retry 2), then again at 3,600 s (retry 3): the job is Failed there.
#[test]
fn a_job_restarted_whole_counts_none_of_its_old_pods() {
    let task = |name: &str, ann: &str| {
        format!(
            "    - name: {name}\n      replicas: 1\n      template:\n        metadata: {{annotations: {{{ann}}}}}\n        spec: {{restartPolicy: Never, containers: [{{name: c, resources: {{requests: {{cpu: 1}}}}}}]}}\n"
        )
    };
    let job = format!(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: r, annotations: {{lahar.io/duration: 1h}}}}\nspec:\n  minAvailable: 2\n  maxRetry: 3\n  policies: [{{event: PodFailed, action: RestartJob}}]\n  tasks:\n{}{}",
        task("a", "lahar.io/duration: 10m"),
        task("b", "lahar.io/fail-after: 20m")
    );
    let nodes = ["{name: n0, cpu: 1, memory: 4Gi}", "{name: n1, cpu: 1, memory: 4Gi}"];
    let out = run(&nodes, &job, "");
    assert_eq!(row(&out, "r"), "0,0,3600,Failed,3");
    let a = super::e2e_jobseq::intervals(&out, "r-a-0");
    let want =
        [("0", "600"), ("1200", "1800"), ("2400", "3000")].map(|(s, e)| super::e2e_jobseq::iv(s, e, "completed"));
    assert_eq!(a, want, "{a:?}");
}

/// A job restarting a task is Pending again as soon as the replicas not
/// terminating reach its `minAvailable` (`restartingUpdateStatus`: `replicas −
/// terminating ≥ minAvailable`), not once every killed pod is gone. By hand:
/// task `w` of two 1-CPU pods, `minAvailable` 1, `PodEvicted: RestartTask`, on a
/// 3-CPU node. `rt-w-0` is deleted at 10 min and gone at 630 s (30 s grace; the
/// job runs on with `rt-w-1`). Then RestartTask counts a retry, the job loses its
/// work (no checkpoint) and `rt-w-1` is killed (Releasing until 660 s); 2 − 1
/// terminating ≥ 1, so the job is Pending at once: `rt-w-0` is made again and
/// bound at 630 s, and the job runs its hour from there, to 4230 s; `rt-w-1`
/// runs again from 660 s. Waiting for every killed pod would start it at 660 s.
#[test]
fn a_task_restart_ends_once_enough_replicas_are_not_terminating() {
    let node = ["{name: n0, cpu: 3, memory: 4Gi}"];
    let job = "---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: rt\n  annotations: {lahar.io/duration: 1h}\nspec:\n  tasks:\n    - name: w\n      replicas: 2\n      minAvailable: 1\n      policies: [{event: PodEvicted, action: RestartTask}]\n      template:\n        spec:\n          containers: [{name: c, image: i, resources: {requests: {cpu: \"1\"}}}]\n";
    let out = run_timeline(&node, job, &["{at: 10m, deletePod: rt-w-0}"]);
    use super::e2e_jobseq::{intervals, iv};
    assert_eq!(intervals(&out, "rt-w-0"), [iv("0", "600", "evicted"), iv("630", "4230", "completed")]);
    assert_eq!(intervals(&out, "rt-w-1"), [iv("0", "630", "restarted"), iv("660", "4230", "completed")]);
    assert_eq!(row(&out, "rt"), "0,0,4230,Completed,1");
}

/// A VolcanoJob of one 1-CPU pod whose container fails after `after` under
/// `restartPolicy: OnFailure` (restarted in place), its task's `maxRetry`
/// `max_retry`, `TaskFailed: TerminateJob`, a 3 s grace.
fn crash_looping(after: &str, max_retry: i32) -> String {
    format!(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: c\n  annotations: {{lahar.io/duration: 1h}}\nspec:\n  policies: [{{event: TaskFailed, action: TerminateJob}}]\n  tasks:\n    - name: w\n      replicas: 1\n      maxRetry: {max_retry}\n      template:\n        metadata: {{annotations: {{lahar.io/fail-after: {after}}}}}\n        spec:\n          restartPolicy: OnFailure\n          terminationGracePeriodSeconds: 3\n          containers: [{{name: c, image: i, resources: {{requests: {{cpu: \"1\"}}}}}}]\n"
    )
}

/// The kubelet restarts a failing container in place after a back-off that
/// doubles (10 s, 20 s, 40 s…) up to 300 s, and starts again from 10 s after an
/// exit more than 600 s after the one before (`flowcontrol.Backoff`); Volcano
/// raises `TaskFailed` once the task's restarts reach its `maxRetry`. By hand,
/// exits every 60 s of running: at 60 s, restarted at 70 s; 130 → 150; 210 →
/// 250; 310 → 390; 450 → 610; 670 → 970 (320 s capped at 300); 1030 → 1330, the
/// seventh restart: with `maxRetry: 7` the job is Terminated once its pod is
/// gone, 1333 s, and the pod ran on its node throughout. Exits every 11 min
/// are 670 s apart, each back-off 10 s again: 660 → 670, 1330 → 1340, the
/// second restart (`maxRetry: 2`), Terminated at 1343 s. With `maxRetry: -1`
/// nothing is raised: the job, its pod failing every minute, never completes
/// its hour and is Running at the 3 h horizon.
#[test]
fn a_container_restarts_in_place_after_the_kubelets_back_off() {
    let node = ["{name: n0, cpu: 1, memory: 4Gi}"];
    let out = run_timeline(&node, &crash_looping("1m", 7), &[]);
    assert_eq!(row(&out, "c"), "0,0,1333,Terminated,0");
    use super::e2e_jobseq::{intervals, iv};
    assert_eq!(intervals(&out, "c-w-0"), [iv("0", "1330", "killed")]);
    let out = run_timeline(&node, &crash_looping("11m", 2), &[]);
    assert_eq!(row(&out, "c"), "0,0,1343,Terminated,0");
    let out = run_timeline_with(&node, &crash_looping("1m", -1), &[], "  horizon: 3h\n");
    assert_eq!(row(&out, "c"), "0,0,,Running,0");
}

/// A VolcanoJob whose task runs 5 min (`lahar.io/duration` on its template)
/// under `restartPolicy` `restart` (empty: the default, `Always`), in a job of
/// `job` (job annotations) with `more` lines under its spec and task `maxRetry`
/// `max_retry`.
fn succeeding(restart: &str, job: &str, more: &str, max_retry: u32) -> String {
    let restart = if restart.is_empty() { String::new() } else { format!("          restartPolicy: {restart}\n") };
    format!(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: s\n  annotations: {{{job}}}\nspec:\n{more}  tasks:\n    - name: w\n      replicas: 1\n      maxRetry: {max_retry}\n      template:\n        metadata: {{annotations: {{lahar.io/duration: 5m}}}}\n        spec:\n{restart}          containers: [{{name: c, image: i, resources: {{requests: {{cpu: \"1\"}}}}}}]\n"
    )
}

/// Under `restartPolicy: Always` (the default) the kubelet restarts a container
/// that succeeded too: a task's run time ends each run of its container, not its
/// pod, which stays Running and ends with its job; the restarts count towards
/// the task's `maxRetry` as failures do. By hand, a task of 5 min in a job of
/// 1 h: runs 0–300, 310–610, 630–930, 970–1270, 1350–1650, 1810–2110, then
/// every 300 s of back-off (capped) 2410–2710 … 5410–5710: twelve runs of 300 s,
/// the job's hour done at 5,710 s (the twelfth exit, at that instant, no
/// restart), the job's work paused while its container waits. Under
/// `OnFailure` the pod succeeds at 300 s, completing the job. With `maxRetry: 2`
/// and `TaskFailed: TerminateJob` the second restart (630 s) terminates the job,
/// its pod gone after its 30 s grace (660 s). With no job run time, no horizon
/// and no such policy nothing would end the pod: refused (exit 2).
#[test]
fn a_container_that_succeeds_restarts_under_always() {
    use super::e2e_jobseq::{intervals, iv};
    let node = ["{name: n0, cpu: 1, memory: 4Gi}"];
    let out = run_timeline(&node, &succeeding("", "lahar.io/duration: 1h", "", 3), &[]);
    assert_eq!(row(&out, "s"), "0,0,5710,Completed,0");
    assert_eq!(intervals(&out, "s-w-0"), [iv("0", "5710", "completed")]);
    let out = run_timeline(&node, &succeeding("Always", "lahar.io/duration: 1h", "", 3), &[]);
    assert_eq!(row(&out, "s"), "0,0,5710,Completed,0");
    let out = run_timeline(&node, &succeeding("OnFailure", "lahar.io/duration: 1h", "", 3), &[]);
    assert_eq!(row(&out, "s"), "0,0,300,Completed,0");
    let terminate = "  policies: [{event: TaskFailed, action: TerminateJob}]\n";
    let out = run_timeline(&node, &succeeding("", "", terminate, 2), &[]);
    assert_eq!(row(&out, "s"), "0,0,660,Terminated,0");
    assert_eq!(intervals(&out, "s-w-0"), [iv("0", "630", "killed")]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("job.yaml"), succeeding("", "", "", 3)).unwrap();
    let text = crate::scenario(
        "    nodes:\n      - {name: n0, cpu: 1, memory: 4Gi}",
        "  workload:\n    - manifests: job.yaml\n",
    );
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let o = crate::lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().code(2);
    let err = String::from_utf8_lossy(&o.get_output().stderr).to_string();
    let needle = "job.yaml:8:7: document 1: spec.tasks[0]: its containers succeed after their run time (300 s) and the kubelet restarts them in place (`restartPolicy: Always`, the default)";
    assert!(err.contains(needle), "{err}");
}

/// A VolcanoJob restarted whole (RestartJob) has its PodGroup made anew at
/// once, not when its killed pods are gone: `killPods` deletes the group and the
/// Restarting state's next sync, at the pods' own updates, makes it again
/// (`syncJob` → `initOnJobUpdate` → `createOrUpdatePodGroup`). The group's
/// creation time is the job order's last key, so the restarted job orders from
/// its kill. By hand: a 2-CPU node; `r` (two 1-CPU pods, `PodEvicted:
/// RestartJob`) runs from 0; `r-w-0` is deleted at 600 s and gone at 630 s,
/// where RestartJob kills `r-w-1` (Releasing to 660 s) and the group is made
/// anew, Pending (enqueue cannot admit it beside the terminating pod: 2.4 CPU
/// of room less 1 in use is under its 2). `x` (two 1-CPU pods) comes at 640 s.
/// At 660 s both wait; `r`'s group, created at 630 s, orders first: enqueue
/// admits it and no longer has room for `x`; `r` runs its hour to 4260 s, `x`
/// then. Made at 660 s, the group would order after `x`, which would run first.
#[test]
fn a_restarted_jobs_podgroup_is_made_at_its_kill() {
    let two = |name: &str, ann: &str, policies: &str| {
        format!(
            "---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: {name}\n  annotations: {{lahar.io/duration: 1h{ann}}}\nspec:\n{policies}  tasks:\n    - name: w\n      replicas: 2\n      template:\n        spec:\n          containers: [{{name: c, image: i, resources: {{requests: {{cpu: \"1\"}}}}}}]\n"
        )
    };
    let jobs = two("r", "", "  policies: [{event: PodEvicted, action: RestartJob}]\n")
        + &two("x", ", lahar.io/submit-at: 640s", "");
    let out = run_timeline(&["{name: n0, cpu: 2, memory: 4Gi}"], &jobs, &["{at: 10m, deletePod: r-w-0}"]);
    assert_eq!(made_anew_at(&out), ["630"]);
    assert_eq!(phases(&out, "r")[2..], [("630", "Pending"), ("660", "Inqueue"), ("660", "Running")]);
    assert_eq!(row(&out, "r"), "0,0,4260,Completed,1");
    assert_eq!(row(&out, "x"), "640,4260,7860,Completed,0");
}

/// A restarted job's killed pods, terminating on their nodes, keep its new
/// PodGroup running: `getPodGroupPhase` counts a Releasing pod that was
/// scheduled (`ReleasingScheduledTaskNum`), so with as many as its `minMember`
/// the group made anew is Running at the next close, without enqueue. Its
/// controller then makes the pods whose names are free (`syncJob`, the group
/// out of Pending), and the rest as each old one goes; the job is Restarting
/// until `replicas − terminating ≥ minAvailable` (`restartingUpdateStatus`,
/// counted in that sync). By hand: a 3-CPU node; `r` (three 1-CPU pods,
/// `minAvailable: 2`, `PodEvicted: RestartJob`). `r-w-0`, deleted at 600 s, is
/// gone at 630 s: RestartJob kills the other two (Releasing to 660 s), the group
/// is made anew (Pending) and at that session's close is Running (2 terminating
/// ≥ 2); `r-w-0` is made then but waits, alone short of the gang. At 660 s the
/// others are gone and made again, the job is Pending, and the three are bound
/// (Binding at that close: the group is Pending for one session, then Running).
#[test]
fn terminating_pods_keep_a_restarted_group_running() {
    let job = "---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: r\n  annotations: {lahar.io/duration: 1h}\nspec:\n  minAvailable: 2\n  policies: [{event: PodEvicted, action: RestartJob}]\n  tasks:\n    - name: w\n      replicas: 3\n      template:\n        spec:\n          containers: [{name: c, image: i, resources: {requests: {cpu: \"1\"}}}]\n";
    let out = run_timeline(&["{name: n0, cpu: 3, memory: 4Gi}"], job, &["{at: 10m, deletePod: r-w-0}"]);
    let want = [
        ("0", "Inqueue"),
        ("0", "Running"),
        ("630", "Pending"),
        ("630", "Running"),
        ("660", "Pending"),
        ("660", "Running"),
    ];
    assert_eq!(phases(&out, "r"), want);
    use super::e2e_jobseq::{intervals, iv};
    assert_eq!(intervals(&out, "r-w-0"), [iv("0", "600", "evicted"), iv("660", "4260", "completed")]);
    assert_eq!(intervals(&out, "r-w-2"), [iv("0", "630", "restarted"), iv("660", "4260", "completed")]);
    assert_eq!(row(&out, "r"), "0,0,4260,Completed,1");
}

/// A job restarting a task hears its other pods' events, as Volcano's
/// Restarting state executes what a current request asks (state/restarting.go).
/// By hand: a 4-CPU node, job `rs` of three 1-CPU pods (`a` ×2 with `PodEvicted:
/// RestartTask`, `b` ×1), `minAvailable: 3`. `rs-a-0` is deleted at 600 s and
/// gone at 630 s: RestartTask counts retry 1 and kills `rs-a-1` (Releasing to
/// 660 s); 3 − 1 terminating < 3, so the job is Restarting until 660 s.
/// `rs-b-0`, deleted at 620 s, is gone at 650 s, inside that window:
/// - no policy for it: the sync makes it again (before this was heard, the
///   restart dropped it and the job, short of its gang, never ran again); all
///   three bind when `rs-a-1` is gone, 660 s, and run the hour to 4260 s;
/// - a job-level `PodEvicted: AbortJob`: the Restarting state kills the whole
///   job instead (`KillJob`; it is not aborted and counts no retry), its
///   PodGroup made anew at once (650 s); the same run, from 660 s, when its
///   last killed pod is gone;
/// - `PodEvicted: RestartPod` on `b`: its pod is made again and no retry is
///   counted (retries stay 1).
#[test]
fn a_restarting_job_hears_its_other_pods_events() {
    let restart_pod = "      policies: [{event: PodEvicted, action: RestartPod}]\n";
    let abort = "  policies: [{event: PodEvicted, action: AbortJob}]\n";
    let steps = ["{at: 10m, deletePod: rs-a-0}", "{at: 620s, deletePod: rs-b-0}"];
    for (job_policy, b_policy, made_anew) in [("", "", false), (abort, "", true), ("", restart_pod, false)] {
        let job = restarting_job(job_policy, b_policy);
        let out = run_timeline(&["{name: n0, cpu: 4, memory: 16Gi}"], &job, &steps);
        let case = format!("job policy {job_policy:?}, b's {b_policy:?}");
        assert_eq!(row(&out, "rs"), "0,0,4260,Completed,1", "{case}");
        use super::e2e_jobseq::{intervals, iv};
        assert_eq!(intervals(&out, "rs-a-0"), [iv("0", "600", "evicted"), iv("660", "4260", "completed")], "{case}");
        assert_eq!(intervals(&out, "rs-a-1"), [iv("0", "630", "restarted"), iv("660", "4260", "completed")], "{case}");
        assert_eq!(intervals(&out, "rs-b-0"), [iv("0", "620", "evicted"), iv("660", "4260", "completed")], "{case}");
        assert_eq!(made_anew_at(&out), if made_anew { vec!["650"] } else { vec![] }, "{case}");
    }
}

/// Job `rs` of [`a_restarting_job_hears_its_other_pods_events`]: task `a` (two
/// 1-CPU pods, `PodEvicted: RestartTask`) and task `b` (one, `b_policy`), a gang
/// of 3, with `job_policy` (lines under `spec`).
fn restarting_job(job_policy: &str, b_policy: &str) -> String {
    restarting_job_with(job_policy, b_policy, "")
}

/// [`restarting_job`] with `b_meta` (lines under task `b`'s template) besides.
fn restarting_job_with(job_policy: &str, b_policy: &str, b_meta: &str) -> String {
    let task = |name: &str, n: u32, policies: &str, meta: &str| {
        format!(
            "    - name: {name}\n      replicas: {n}\n{policies}      template:\n{meta}        spec:\n          restartPolicy: OnFailure\n          containers: [{{name: c, image: i, resources: {{requests: {{cpu: \"1\"}}}}}}]\n"
        )
    };
    let restart_task = "      policies: [{event: PodEvicted, action: RestartTask}]\n";
    format!(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: rs\n  annotations: {{lahar.io/duration: 1h}}\nspec:\n  minAvailable: 3\n{job_policy}  tasks:\n{}{}",
        task("a", 2, restart_task, ""),
        task("b", 1, b_policy, b_meta)
    )
}

/// A task completing while its job restarts another task is heard: Volcano's
/// `updatePod` raises TaskCompleted whatever the job's state, and the Restarting
/// state runs its action (state/restarting.go). The job of
/// [`a_restarting_job_hears_its_other_pods_events`], its task restart at 630 s,
/// is Restarting to 660 s; task `b`'s one pod runs its own 640 s, and succeeds
/// inside the restart. With `TaskCompleted: CompleteJob` the Restarting state
/// kills the job whole (`KillJob`, no retry counted), its PodGroup made anew
/// then; once `rs-a-1` is gone (660 s) `b` runs its 640 s again, to 1300 s, when its
/// TaskCompleted, the job Running, completes it (the other pods killed, gone
/// after their 30 s grace: 1330 s). Before, the event was dropped and the job
/// ran its hour from 660 s (4260 s). Without a policy nothing changes.
#[test]
fn a_task_completing_during_a_task_restart_is_heard() {
    let b_meta = "        metadata: {annotations: {lahar.io/duration: 640s}}\n";
    let complete = "      policies: [{event: TaskCompleted, action: CompleteJob}]\n";
    use super::e2e_jobseq::{intervals, iv};
    let nodes = ["{name: n0, cpu: 4, memory: 16Gi}"];
    let steps = ["{at: 10m, deletePod: rs-a-0}"];
    let out = run_timeline(&nodes, &restarting_job_with("", complete, b_meta), &steps);
    assert_eq!(row(&out, "rs"), "0,0,1330,Completed,1");
    assert_eq!(intervals(&out, "rs-b-0"), [iv("0", "640", "completed"), iv("660", "1300", "completed")]);
    assert_eq!(intervals(&out, "rs-a-1"), [iv("0", "630", "restarted"), iv("660", "1300", "killed")]);
    assert_eq!(made_anew_at(&out), ["640"]);
    let out = run_timeline(&nodes, &restarting_job_with("", "", b_meta), &steps);
    assert_eq!(row(&out, "rs"), "0,0,4260,Completed,1");
    assert_eq!(intervals(&out, "rs-b-0"), [iv("0", "640", "completed")]);
    assert_eq!(made_anew_at(&out), Vec::<&str>::new());
}

/// When the job controller made a PodGroup anew (after a whole kill).
fn made_anew_at(out: &Out) -> Vec<&str> {
    out.of("phase")
        .into_iter()
        .filter(|d| d["reason"].starts_with("PodGroup made anew"))
        .map(|d| d["t_s"].as_str())
        .collect()
}

/// `vcctl job suspend` or `resume` of a job restarting a task kills it whole:
/// Volcano's Restarting state runs `KillJob` for any command (state/restarting.go),
/// neither aborting it nor counting a retry. The job of
/// [`a_restarting_job_hears_its_other_pods_events`], its task restart at 630 s,
/// is Restarting to 660 s; the command at 640 s kills `rs-b-0` (Releasing to
/// 670 s) and the new `rs-a-0`, and the PodGroup is made anew then (`killPods`
/// deletes it, the next sync makes it); each pod is made again once its old
/// one is gone, and the three run the hour from 670 s. Before, the command was
/// ignored (a warning) and the job ran from 660 s.
#[test]
fn a_command_to_a_restarting_job_kills_it_whole() {
    let job = restarting_job("", "");
    for command in ["suspendJob", "resumeJob"] {
        let step = format!("{{at: 640s, {command}: rs}}");
        let out = run_timeline(&["{name: n0, cpu: 4, memory: 16Gi}"], &job, &["{at: 10m, deletePod: rs-a-0}", &step]);
        assert_eq!(row(&out, "rs"), "0,0,4270,Completed,1", "{command}");
        let b = super::e2e_jobseq::intervals(&out, "rs-b-0");
        use super::e2e_jobseq::iv;
        assert_eq!(b, [iv("0", "640", "restarted"), iv("670", "4270", "completed")], "{command}");
        assert_eq!(made_anew_at(&out), ["640"], "{command}");
    }
}

/// The admission webhook turns a VolcanoJob's `maxRetry: 0` into 3
/// (`patchDefaultMaxRetry`) and its `minAvailable: 0` into the tasks' sum
/// (`patchDefaultMinAvailable`): 0 is the field left out. With `maxRetry: 0` and
/// `PodEvicted: RestartJob`, a pod deleted at 10 min restarts the job once
/// (retries 1 < 3), and it completes; taken literally, the first restart would
/// fail it. A job of two 8-CPU pods with `minAvailable: 0` on a 12-CPU node is a
/// gang of 2 that never fits: nothing runs (literally, a gang of none would run
/// one pod and complete).
#[test]
fn the_webhook_defaults_a_zero_max_retry_and_min_available() {
    let node = ["{name: n0, cpu: 12, memory: 16Gi}"];
    let restart = "  maxRetry: 0\n  policies: [{event: PodEvicted, action: RestartJob}]\n";
    let out = run_timeline(&node, &one_pod("j", "0s", restart), &["{at: 10m, deletePod: j-w-0}"]);
    let j = out.job("j");
    assert_eq!((j["state"].as_str(), j["retries"].as_str()), ("Completed", "1"));
    let gang = "---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: g\n  annotations: {lahar.io/duration: 1h}\nspec:\n  minAvailable: 0\n  tasks:\n    - name: w\n      replicas: 2\n      template:\n        spec:\n          containers: [{name: c, image: i, resources: {requests: {cpu: \"8\"}}}]\n";
    let out = run_timeline(&node, gang, &["{at: 1h, deletePod: g-w-0}"]);
    assert!(out.pods_of("g").is_empty(), "{:?}", out.pods_of("g"));
    assert_eq!(out.job("g")["end_s"], "");
}

/// `dependsOn` a task whose `minAvailable` is 0 is met at once
/// (`isDependsOnPodsReady`: 0 pods running ≥ 0): the master (8 CPUs) never fits
/// the 4-CPU node, the worker is made at once and runs its 10 minutes, which is
/// the job's `minAvailable` of 1. With the master's `minAvailable` at 1 (its
/// default, the replicas) the worker waits for it for ever.
#[test]
fn depends_on_a_task_of_min_available_zero_is_met_at_once() {
    let job = |min: u32| {
        format!(
            "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: d0\n  annotations: {{lahar.io/duration: 10m}}\nspec:\n  minAvailable: 1\n  tasks:\n    - name: master\n      replicas: 1\n      minAvailable: {min}\n      template:\n        spec:\n          containers: [{{name: c, image: x, resources: {{requests: {{cpu: \"8\"}}}}}}]\n    - name: worker\n      replicas: 1\n      dependsOn: {{name: [master]}}\n      template:\n        spec:\n          containers: [{{name: c, image: x, resources: {{requests: {{cpu: \"1\"}}}}}}]\n"
        )
    };
    let out = run(&["{name: n0, cpu: 4, memory: 16Gi}"], &job(0), "");
    assert_eq!(row(&out, "d0"), "0,0,600,Completed,0");
    let out = run(&["{name: n0, cpu: 4, memory: 16Gi}"], &job(1), "");
    assert!(out.pods_of("d0").is_empty());
    assert_eq!(out.job("d0")["end_s"], "");
}

/// An operator deletes a running job at 10 min: it ends (Terminated) and its pod
/// leaves the node after its grace; `b`, waiting since 10 s, runs from 630 s.
#[test]
fn timeline_deletes_a_job() {
    let objects = one_pod("a", "0s", "") + &one_pod("b", "10s", "");
    let out = run_timeline(&["{name: n0, cpu: 1, memory: 4Gi}"], &objects, &["{at: 10m, deleteJob: a}"]);
    assert_eq!(row(&out, "a"), "0,0,600,Terminated,0");
    assert_eq!(row(&out, "b"), "10,630,4230,Completed,0");
}

/// A queue closed at 0 and opened at 1 h (`vcctl queue operate`): proportion's
/// enqueue vote refuses a closed queue's jobs, so `j` (submitted at 10 s) is
/// admitted and runs at 1 h.
#[test]
fn timeline_closes_and_opens_a_queue() {
    let steps = ["{at: 0s, queue: default, state: Closed}", "{at: 1h, queue: default, state: Open}"];
    let out = run_timeline(&["{name: n0, cpu: 1, memory: 4Gi}"], &one_pod("j", "10s", ""), &steps);
    assert_eq!(row(&out, "j"), "10,3600,7200,Completed,0");
    assert_eq!(phases(&out, "j"), [("3600", "Inqueue"), ("3600", "Running")]);
}

/// A node cordoned at 0 and uncordoned at 1 h takes no pod meanwhile; a cordon
/// given during a drain outlasts the drain's end.
#[test]
fn timeline_cordons_and_uncordons_nodes() {
    let node = ["{name: n0, cpu: 1, memory: 4Gi}"];
    let out = run_timeline(&node, &one_pod("j", "10s", ""), &["{at: 0s, cordon: n0}", "{at: 1h, uncordon: \"n*\"}"]);
    assert_eq!(row(&out, "j"), "10,3600,7200,Completed,0");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("jobs.yaml"), one_pod("j", "10s", "")).expect("write");
    let text = "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  cluster:\n    nodes: [{name: n0, cpu: 1, memory: 4Gi}]\n  workload:\n    - manifests: [jobs.yaml]\n  faults:\n    drains: [{at: 0s, nodes: n0, duration: 10m}]\n  timeline:\n    - {at: 5m, cordon: n0}\n    - {at: 2h, uncordon: n0}\n";
    std::fs::write(dir.path().join("s.yaml"), text).expect("write");
    let out = super::volcano::run_file(&dir.path().join("s.yaml"));
    assert_eq!(row(&out, "j"), "10,7200,10800,Completed,0");
}

/// Taints (`kubectl taint nodes`), by hand on one 1-CPU node. A `NoSchedule`
/// taint from 0 to 1 h keeps `j` (10 s) off the node, as a cordon does. A
/// `NoExecute` taint at 10 min makes the taint manager delete `j`'s running pod
/// (it leaves after its 30 s grace; the job controller hears PodEvicted and
/// makes it again), and the new pod waits for the untaint at 2 h: it runs its
/// hour from 7200 s. A pod that tolerates the taint stays.
#[test]
fn timeline_taints_and_untaints_nodes() {
    let node = ["{name: n0, cpu: 1, memory: 4Gi}"];
    let steps = [
        "{at: 0s, taint: n0, key: maintenance, value: \"yes\", effect: NoSchedule}",
        "{at: 1h, untaint: n0, key: maintenance}",
    ];
    let out = run_timeline(&node, &one_pod("j", "10s", ""), &steps);
    assert_eq!(row(&out, "j"), "10,3600,7200,Completed,0");
    let steps = [
        "{at: 10m, taint: \"n*\", key: maintenance, effect: NoExecute}",
        "{at: 2h, untaint: n0, key: maintenance, effect: NoExecute}",
    ];
    let out = run_timeline(&node, &one_pod("j", "0s", ""), &steps);
    assert_eq!(row(&out, "j"), "0,0,10800,Completed,0");
    let tolerant = one_pod("j", "0s", "").replace(
        "        spec:\n",
        "        spec:\n          tolerations: [{key: maintenance, operator: Exists, effect: NoExecute}]\n",
    );
    let out = run_timeline(&node, &tolerant, &steps);
    assert_eq!(row(&out, "j"), "0,0,3600,Completed,0");
}

/// A queue's capability edited during the run: two 1-CPU jobs on a 2-CPU node;
/// capped at one CPU from 0 s, `b` (10 s) is not admitted while `a` runs
/// (proportion's enqueue vote against the real capability); raised to two CPUs
/// at 30 min, `b` is admitted and runs from 1800 s.
#[test]
fn timeline_edits_a_queue_capability() {
    let objects = one_pod("a", "0s", "") + &one_pod("b", "10s", "");
    let steps = ["{at: 0s, queue: default, capability: {cpu: 1}}", "{at: 30m, queue: default, capability: {cpu: 2}}"];
    let out = run_timeline(&["{name: n0, cpu: 2, memory: 4Gi}"], &objects, &steps);
    assert_eq!(row(&out, "a"), "0,0,3600,Completed,0");
    assert_eq!(row(&out, "b"), "10,1800,5400,Completed,0");
}

/// Bad timeline entries are refused before the run, each at its place; an action
/// that finds no pod when it comes is a counted warning.
#[test]
fn timeline_bad_input_and_missing_targets() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("jobs.yaml"), one_pod("j", "0s", "")).expect("write");
    let scenario = |steps: &str| {
        format!(
            "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  cluster:\n    nodes: [{{name: n0, cpu: 1, memory: 4Gi}}]\n  workload:\n    - manifests: [jobs.yaml]\n  timeline:\n{steps}"
        )
    };
    for (steps, needle) in [
        (
            "    - {at: 1m, cordon: n0, deleteJob: j}\n",
            "spec.timeline[0]: expected exactly one action of deletePod, deleteJob, suspendJob, resumeJob, scaleJob, queue, cordon, uncordon, addNodes, removeNodes, taint, untaint, label, unlabel, ungatePod, ungateJob, conf; got deleteJob, cordon",
        ),
        ("    - {at: 1m, taint: n0, key: k}\n", "spec.timeline[0].effect: `taint` needs the taint's `effect`"),
        ("    - {at: 1m, taint: n0, effect: NoSchedule}\n", "spec.timeline[0].key: `taint` needs the taint's `key`"),
        (
            "    - {at: 1m, taint: n0, key: k, effect: PreferNoSchedule}\n",
            "spec.timeline[0].effect: a PreferNoSchedule taint is a scoring preference",
        ),
        (
            "    - {at: 1m, taint: n0, key: k, effect: Never}\n",
            "expected NoSchedule, NoExecute or PreferNoSchedule, got `Never`",
        ),
        (
            "    - {at: 1m, taint: n0, key: node.kubernetes.io/unschedulable, effect: NoSchedule}\n",
            "use `cordon` and `uncordon`",
        ),
        ("    - {at: 1m, untaint: n0, key: k, value: v}\n", "spec.timeline[0].value: `untaint` removes a taint by key"),
        ("    - {at: 1m, cordon: n0, key: k}\n", "spec.timeline[0].key: `key` names a taint"),
        (
            "    - {at: 1m, cordon: n0, capability: {cpu: 1}}\n",
            "spec.timeline[0].capability: `capability` edits a queue",
        ),
        ("    - {at: 1m, queue: default, capability: {cpu: lots}}\n", "spec.timeline[0].capability.cpu"),
        ("    - {at: 1m, queue: nope, weight: 2}\n", "spec.timeline[0].queue: no queue `nope`"),
        ("    - {at: 1m, cordon: n0, weight: 2}\n", "spec.timeline[0].weight: `weight` edits a queue"),
        ("    - {at: 1m, queue: default}\n", "give what changes"),
        ("    - {at: 1m, uncordon: \"gpu-*\"}\n", "spec.timeline[0].uncordon: `gpu-*` matches no node"),
        ("    - {at: soon, deleteJob: j}\n", "spec.timeline[0].at"),
        ("    - {at: 1m, deleteJob: j, grace: 5s}\n", "grace"),
        ("    - {at: 1m, suspendJob: a/b/c}\n", "spec.timeline[0].suspendJob: expected `name` or `namespace/name`"),
        ("    - {at: 1m, resumeJob: j, suspendJob: j}\n", "got suspendJob, resumeJob"),
        ("    - {at: 1m, scaleJob: j}\n", "spec.timeline[0].scaleJob: give what changes"),
        ("    - {at: 1m, scaleJob: j, replicas: -1}\n", "spec.timeline[0].replicas: must be an integer ≥ 0"),
        ("    - {at: 1m, scaleJob: j, replicas: 4000000}\n", "4000000 pods exceed the limit of 1000000 per job"),
        ("    - {at: 1m, deleteJob: j, replicas: 2}\n", "spec.timeline[0].replicas: `replicas` edits a job's sizes"),
    ] {
        let p = dir.path().join("bad.yaml");
        std::fs::write(&p, scenario(steps)).expect("write");
        let out = crate::lahar().arg("validate").arg(&p).assert().code(2).get_output().stderr.clone();
        let err = String::from_utf8_lossy(&out);
        assert!(err.contains(needle), "{steps}: {err}");
    }
    let p = dir.path().join("missing.yaml");
    std::fs::write(&p, scenario("    - {at: 1m, deletePod: j-w-7}\n    - {at: 2h, deleteJob: j}\n")).expect("write");
    let out = crate::lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(dir.path().join("o")).assert().success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("1 timeline action found nothing to act on"), "{err}");
    assert!(err.contains("no pod default/j-w-7 to delete"), "{err}");
    // j ended at 1 h: the run ends then, and the deletion at 2 h, which would
    // find nothing, is not carried out.
    assert!(
        err.contains("spec.timeline[1]: 1 timeline step not carried out: the run ended at 3600 s (nothing was left to happen to a job), before it (the first, at 7200 s)"),
        "{err}"
    );
}

/// A delayed action that an action of its kind cancels does not act later in the
/// place of the one that follows it. On a 1-CPU node `a` runs 0 → 1 h; `j`
/// (1 CPU, at 0) waits, with a PodPending RestartJob after 30 min and an
/// immediate RestartJob on PodEvicted. An operator deletes its Pending pod at
/// 10 min: RestartJob (retry 1) drops the PodPending action due at 30 min and
/// makes the PodGroup anew; the new pod's own action is due at 40 min. The job
/// stays Restarting, its new group never admitted before 1 h (its status keeps
/// the count of its kill: `restartingUpdateStatus` finds 1 − 1 terminating < 1),
/// so that action, which Volcano runs on the state it finds, kills it whole
/// again without a retry (the Restarting state's `KillJob`), the PodGroup made
/// anew at 40 min. The pod made then runs from 1 h, so the action due at 70 min
/// finds it Running. Had the cancelled action acted at 30 min, the group would
/// be made anew then.
#[test]
fn a_cancelled_delayed_action_does_not_act_for_its_successor() {
    let text = "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  cluster:\n    nodes: [{name: n0, cpu: 1, memory: 4Gi}]\n  workload:\n    - jobs:\n      - {name: a, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 1}}]}\n      - {name: j, duration: 1h, policies: [{event: PodPending, action: RestartJob, timeout: 30m}, {event: PodEvicted, action: RestartJob}], tasks: [{name: w, replicas: 1, resources: {cpu: 1}}]}\n  timeline:\n    - {at: 10m, deletePod: j-w-0}\n";
    let out = super::volcano::run_text(text);
    assert_eq!(row(&out, "j"), "0,3600,7200,Completed,1");
    assert_eq!(made_anew_at(&out), ["600", "2400"]);
}

/// `Suspend running job&Resume aborted job` (test/e2e/vcctl/command.go): a
/// one-pod job runs; `vcctl job suspend` aborts it and its pod goes; `vcctl job
/// resume` runs it again. Restated with the timeline's `suspendJob` at 10 min and
/// `resumeJob` at 20 min, by hand on one 1-CPU node: the pod is killed at 600 s
/// (it leaves after its 30 s grace; no checkpoint, its work is lost); at 1200 s
/// the Aborted job restarts (Volcano's Aborted state: Restarting, retry 1), its
/// pods already gone: a new PodGroup, Pending, admitted and running at 1200 s; it
/// runs its hour to 4800 s.
#[test]
fn suspend_running_job_and_resume_aborted_job() {
    let node = ["{name: n0, cpu: 1, memory: 4Gi}"];
    let steps = ["{at: 10m, suspendJob: default/j}", "{at: 20m, resumeJob: j}"];
    let out = run_timeline(&node, &one_pod("j", "0s", ""), &steps);
    assert_eq!(row(&out, "j"), "0,0,4800,Completed,1");
    assert_eq!(
        phases(&out, "j"),
        [("0", "Inqueue"), ("0", "Running"), ("1200", "Pending"), ("1200", "Inqueue"), ("1200", "Running")]
    );
    let pods: Vec<String> =
        out.pods.iter().map(|p| format!("{},{},{}", p["start_s"], p["end_s"], p["reason_end"])).collect();
    assert_eq!(pods, ["0,600,killed", "1200,4800,completed"]);
    let made = out.of("phase").iter().filter(|d| d["reason"] == "PodGroup made anew after ResumeJob").count();
    assert_eq!(made, 1);
}

/// `Suspend pending job` (test/e2e/vcctl/command.go): a job whose one pod asks
/// for the whole cluster's CPUs (`ClusterSize` × 1 CPU on one pod: no node holds
/// it) waits; suspended, it is Aborted and its pod is gone. The e2e's
/// `WaitJobPending` holds on the job's initial phase, so it passes whatever the
/// scheduler does; restated from the code: the pod is never placed, and with no
/// resume to come the job ends Aborted at the suspension (its jobs.csv row then).
#[test]
fn suspend_pending_job() {
    let nodes = TWO_ONE_CPU_NODES;
    let job = one_pod("test-suspend-pending-job", "0s", "").replace("cpu: \"1\"", "cpu: \"2\"");
    let out = run_timeline(nodes, &job, &["{at: 10m, suspendJob: test-suspend-pending-job}"]);
    assert_eq!(row(&out, "test-suspend-pending-job"), "0,,600,Aborted,0");
    assert!(out.pods.iter().all(|p| p["start_s"].is_empty()), "no pod ever ran");
}

/// A suspension frees the node for the waiting job, and the resumed job's new
/// PodGroup queues behind it. On one 1-CPU node `a` runs from 0, `b` (10 s)
/// waits; `a` is suspended at 10 min: its pod leaves at 630 s and `b` runs its
/// hour 630 → 4230 s; `a`, resumed at 20 min, waits for the node and runs
/// 4230 → 7830 s. A job Aborted by its own `PodEvicted: AbortJob` policy is
/// resumed by a later `resumeJob` alike.
#[test]
fn a_suspended_job_frees_its_node_and_resumes_behind() {
    let node = ["{name: n0, cpu: 1, memory: 4Gi}"];
    let objects = one_pod("a", "0s", "") + &one_pod("b", "10s", "");
    let out = run_timeline(&node, &objects, &["{at: 10m, suspendJob: a}", "{at: 20m, resumeJob: a}"]);
    assert_eq!(row(&out, "b"), "10,630,4230,Completed,0");
    assert_eq!(row(&out, "a"), "0,0,7830,Completed,1");
    let abort = "  policies: [{event: PodEvicted, action: AbortJob}]\n";
    let out =
        run_timeline(&node, &one_pod("j", "0s", abort), &["{at: 10m, deletePod: j-w-0}", "{at: 1h, resumeJob: j}"]);
    assert_eq!(row(&out, "j"), "0,0,7200,Completed,1");
}

/// Resuming counts a retry as Volcano's Aborted state does: with `maxRetry: 2`
/// the second resume fails the job (Restarting with RetryCount ≥ maxRetry). A
/// suspension the job never leaves before the horizon shows it Aborted. A
/// suspend of a suspended job, a resume of a running one and a suspend of a job
/// that ended are counted warnings that change nothing. timeline.csv lists each
/// step the run reached with what came of it (the one after the horizon has no
/// row).
#[test]
fn resumes_count_retries_and_misplaced_commands_warn() {
    let node = ["{name: n0, cpu: 1, memory: 4Gi}"];
    let job = one_pod("j", "0s", "  maxRetry: 2\n");
    let steps =
        ["{at: 1m, suspendJob: j}", "{at: 2m, resumeJob: j}", "{at: 3m, suspendJob: j}", "{at: 4m, resumeJob: j}"];
    let out = run_timeline(&node, &job, &steps);
    assert_eq!(row(&out, "j"), "0,0,240,Failed,2");
    let steps = [
        "{at: 1m, resumeJob: j}",
        "{at: 5m, suspendJob: j}",
        "{at: 2h, resumeJob: j}",
        "{at: 6m, suspendJob: j}",
        "{at: 7m, deletePod: \"nope\"}",
    ];
    let (dir, err) = run_cli_on_one_node(&one_pod("j", "0s", ""), "30m", &steps);
    let o = dir.path().join("o");
    assert_eq!(
        std::fs::read_to_string(o.join("timeline.csv")).expect("timeline.csv"),
        "t_s,step,action,target,outcome,note\n\
         60,spec.timeline[0],resumeJob,j,ignored,\"job default/j is Running, not Aborted: nothing to resume\"\n\
         300,spec.timeline[1],suspendJob,j,done,1 pod deleted\n\
         360,spec.timeline[3],suspendJob,j,ignored,job default/j is already suspended\n\
         420,spec.timeline[4],deletePod,nope,missed,no pod default/nope to delete\n"
    );
    assert!(err.contains("2 timeline actions changed nothing"), "{err}");
    assert!(err.contains("at 60s: job default/j is Running, not Aborted: nothing to resume"), "{err}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(o.join("summary.json")).expect("summary")).expect("json");
    let w = summary["warnings"].as_array().expect("warnings");
    let ignored = w.iter().find(|w| w["kind"] == "timeline-action-ignored").expect("the ignored actions' warning");
    assert_eq!(ignored["count"], 2, "{ignored}");
    let jobs = std::fs::read_to_string(o.join("jobs.csv")).expect("jobs.csv");
    let row = jobs.lines().find(|l| l.starts_with("j,")).expect("j's row");
    assert!(row.contains(",Aborted,"), "{jobs}");
}

/// Runs `objects` on one 1-CPU node under the e2e conf through the binary, for
/// `horizon`, with the timeline's `steps`: the scenario's directory (outputs in
/// `o`) and the run's stderr.
fn run_cli_on_one_node(objects: &str, horizon: &str, steps: &[&str]) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("jobs.yaml"), objects).expect("write");
    std::fs::write(dir.path().join("ci.conf"), e2e_conf()).expect("write");
    let steps: String = steps.iter().map(|s| format!("    - {s}\n")).collect();
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  horizon: {horizon}\n  cluster:\n    nodes: [{{name: n0, cpu: 1, memory: 4Gi}}]\n  scheduler: {{conf: ci.conf}}\n  workload:\n    - manifests: [jobs.yaml]\n  timeline:\n{steps}"
    );
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, text).expect("write");
    let run = crate::lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(dir.path().join("o")).assert().success();
    let err = String::from_utf8_lossy(&run.get_output().stderr).to_string();
    (dir, err)
}

/// `vcctl job suspend` and `resume` reach only VolcanoJobs (their Command names a
/// `batch.volcano.sh` Job; `vcctl` finds no other kind by that name): suspending
/// a Deployment or resuming it changes nothing, two counted warnings naming its
/// kind, and its pod runs its hour from 0 untouched.
#[test]
fn only_a_volcano_job_is_suspended_or_resumed() {
    let deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, annotations: {lahar.io/duration: 1h}}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: d}}\n  template:\n    metadata: {labels: {app: d}}\n    spec: {schedulerName: volcano, containers: [{name: c, image: i, resources: {requests: {cpu: \"1\"}}}]}\n";
    let (dir, err) = run_cli_on_one_node(deploy, "2h", &["{at: 10m, suspendJob: d}", "{at: 20m, resumeJob: d}"]);
    let o = dir.path().join("o");
    assert!(err.contains("2 timeline actions changed nothing"), "{err}");
    let why = "at 600s: job default/d is a Deployment: `vcctl job suspend` acts on VolcanoJobs only";
    assert!(err.contains(why), "{err}");
    let pods = std::fs::read_to_string(o.join("pods.csv")).expect("pods.csv");
    let rows: Vec<&str> = pods.lines().skip(1).collect();
    assert_eq!(rows.len(), 1, "{pods}");
    assert!(rows[0].contains(",0,3600,completed"), "{pods}");
}

/// A resumed job keeps its Succeeded and Failed pods and makes only the missing
/// ones: the suspension's `killJob` retains them (`PodRetainPhaseSoft`,
/// state/running.go's AbortJob), and the Pending state's `syncJob` makes a pod
/// only for a name it does not find. By hand, two 1-CPU nodes, task `a` one pod
/// of 10 min, task `b` one pod of the job's hour, suspended at 20 min and
/// resumed at 30 min. With `minAvailable: 2`, `a` succeeds at 600 s; `b` is
/// killed at 1,200 s and gone at 1,230 s; at 1,800 s the new PodGroup's gang
/// counts the Succeeded `a` as ready (`ReadyTaskNum`), so `b` alone is made and
/// runs its hour again, to 5,400 s: `a` runs once. With `a` failing after
/// 10 min instead (`restartPolicy: Never`, no policy) and `minAvailable: 1`, the
/// Failed `a` stays and counts: `b` completes at 5,400 s and the job is
/// Completed (Succeeded + Failed = replicas, Succeeded ≥ minAvailable), `a`
/// never made again.
#[test]
fn a_resumed_job_keeps_its_ended_pods_and_makes_only_the_missing_ones() {
    let task = |name: &str, ann: &str| {
        format!(
            "    - name: {name}\n      replicas: 1\n      template:\n        metadata: {{annotations: {{{ann}}}}}\n        spec: {{restartPolicy: Never, containers: [{{name: c, resources: {{requests: {{cpu: 1}}}}}}]}}\n"
        )
    };
    let job = |min: u32, a: &str| {
        format!(
            "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: r, annotations: {{lahar.io/duration: 1h}}}}\nspec:\n  minAvailable: {min}\n  tasks:\n{}{}",
            task("a", a),
            task("b", "lahar.io/duration: 1h")
        )
    };
    let nodes = ["{name: n0, cpu: 1, memory: 4Gi}", "{name: n1, cpu: 1, memory: 4Gi}"];
    let steps = ["{at: 20m, suspendJob: r}", "{at: 30m, resumeJob: r}"];
    let b = [super::e2e_jobseq::iv("0", "1200", "killed"), super::e2e_jobseq::iv("1800", "5400", "completed")];
    for (min, a, end) in [(2, "lahar.io/duration: 10m", "completed"), (1, "lahar.io/fail-after: 10m", "exited")] {
        let out = run_timeline(&nodes, &job(min, a), &steps);
        assert_eq!(row(&out, "r"), "0,0,5400,Completed,1", "{a}");
        assert_eq!(super::e2e_jobseq::intervals(&out, "r-a-0"), [super::e2e_jobseq::iv("0", "600", end)], "{a}");
        assert_eq!(super::e2e_jobseq::intervals(&out, "r-b-0"), b, "{a}");
    }
}

/// The e2e jobs of `Dynamic Job scale up and down` (test/e2e/jobp/
/// job_scale_up_down.go): task `default` of `replicas` half-CPU pods, all in
/// the gang, for an hour. The e2e's `UpdateJob` is restated as a dated
/// `scaleJob`.
fn scaled_job(replicas: u32) -> String {
    format!(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: scale-job\n  annotations: {{lahar.io/duration: 1h}}\nspec:\n  minAvailable: {replicas}\n  plugins: {{svc: []}}\n  tasks:\n    - name: default\n      replicas: {replicas}\n      template:\n        spec:\n          containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: 500m}}}}}}]\n"
    )
}

/// Each pod of scale-job as `name start end reason`.
fn scaled_pods(out: &Out) -> Vec<String> {
    out.pods_of("scale-job")
        .iter()
        .map(|p| format!("{} {} {} {}", p["pod"], p["start_s"], p["end_s"], p["reason_end"]))
        .collect()
}

/// `Scale up`: 2 → 4 replicas (`minAvailable` 4) at 10 min on a 2-CPU node. By
/// hand: the PodGroup is Running, so the controller makes replicas 2 and 3 at
/// 600 s (`syncJob`), the session binds them there; the job keeps its work and
/// ends at 3600 s with its four pods.
#[test]
fn scale_up() {
    let node = ["{name: n0, cpu: 2, memory: 4Gi}"];
    let out = run_timeline(&node, &scaled_job(2), &["{at: 10m, scaleJob: scale-job, replicas: 4, minAvailable: 4}"]);
    assert_eq!(row(&out, "scale-job"), "0,0,3600,Completed,0");
    assert_eq!(
        scaled_pods(&out),
        [
            "default/scale-job-default-0 0 3600 completed",
            "default/scale-job-default-1 0 3600 completed",
            "default/scale-job-default-2 600 3600 completed",
            "default/scale-job-default-3 600 3600 completed",
        ]
    );
}

/// `Scale down`: 2 → 1 replica (`minAvailable` 1, the task's 1) at 10 min. By
/// hand: replica 1 is deleted at 600 s (its `deletePod` heard as PodEvicted:
/// without a policy the controller syncs, and makes no replica above the count);
/// replica 0 keeps running and the job ends at 3600 s.
#[test]
fn scale_down() {
    let node = ["{name: n0, cpu: 2, memory: 4Gi}"];
    let step = "{at: 10m, scaleJob: scale-job, replicas: 1, taskMinAvailable: 1, minAvailable: 1}";
    let out = run_timeline(&node, &scaled_job(2), &[step]);
    assert_eq!(row(&out, "scale-job"), "0,0,3600,Completed,0");
    assert_eq!(
        scaled_pods(&out),
        ["default/scale-job-default-0 0 3600 completed", "default/scale-job-default-1 0 600 evicted"]
    );
}

/// `Scale down to zero and scale up`: 2 → 0 at 10 min, 0 → 2 at 20 min. By
/// hand: both pods are deleted at 600 s and the work since the start is lost
/// (no checkpoint); at 1200 s the controller makes both replicas again (the
/// PodGroup, `minMember` 0, stayed admitted), they run at once and the job runs
/// its hour to 4800 s.
#[test]
fn scale_down_to_zero_and_scale_up() {
    let node = ["{name: n0, cpu: 2, memory: 4Gi}"];
    let steps = [
        "{at: 10m, scaleJob: scale-job, replicas: 0, taskMinAvailable: 0, minAvailable: 0}",
        "{at: 20m, scaleJob: scale-job, replicas: 2, minAvailable: 2}",
    ];
    let out = run_timeline(&node, &scaled_job(2), &steps);
    assert_eq!(row(&out, "scale-job"), "0,0,4800,Completed,0");
    assert_eq!(
        scaled_pods(&out),
        [
            "default/scale-job-default-0 0 600 evicted",
            "default/scale-job-default-0 1200 4800 completed",
            "default/scale-job-default-1 0 600 evicted",
            "default/scale-job-default-1 1200 4800 completed",
        ]
    );
}

/// A scale-up while the task restarts: the gang's new `minMember` moves the
/// PodGroup's phase at the next session's close though no pod changed then.
/// `PodEvicted: RestartTask`; an operator deletes replica 0 at 10 min (Releasing
/// until 630 s, its 30 s grace). At 615 s the job goes to 3 replicas
/// (`minAvailable` 3): replica 2 is made and finds no room (replica 0 still
/// holds its CPU), so the close finds the job unready with replica 1 Running —
/// Unknown at 615 s. At 630 s replica 0 is gone and the controller hears
/// PodEvicted: RestartTask kills replica 1 (Releasing until 660 s) and deletes
/// the Pending replica 2, making replicas 0 and 2 again; the close finds none
/// of three scheduled (Pending) and the session that follows admits the group
/// again (Inqueue). At 660 s replica 1 is gone and made again, and allocate
/// binds the three: the job (one retry counted) runs its hour from there, to
/// 4260 s.
#[test]
fn a_scale_during_a_task_restart_moves_the_phase_at_once() {
    let node = ["{name: n0, cpu: 2, memory: 4Gi}"];
    let job = scaled_job(2).replace(
        "  plugins: {svc: []}\n",
        "  plugins: {svc: []}\n  policies: [{event: PodEvicted, action: RestartTask}]\n",
    );
    let steps =
        ["{at: 10m, deletePod: scale-job-default-0}", "{at: 615s, scaleJob: scale-job, replicas: 3, minAvailable: 3}"];
    let out = run_timeline(&node, &job, &steps);
    let phases: Vec<String> = out.of("phase").iter().map(|d| format!("{} {}", d["t_s"], d["phase"])).collect();
    assert_eq!(phases, ["0 Inqueue", "0 Running", "615 Unknown", "630 Pending", "630 Inqueue", "660 Running"]);
    assert_eq!(row(&out, "scale-job"), "0,0,4260,Completed,1");
    assert_eq!(out.bind_order().len(), 5);
}

/// A group the close sends back to Pending is enqueued again by the session that
/// follows at once, as Volcano's periodic loop would within its period, not at
/// the next event. By hand: `j` (one 1-CPU pod) runs on n0 from 0; at 10 min
/// n0 is cordoned and the pod deleted; it leaves after its 30 s grace and the
/// controller makes it again at 630 s; that session cannot place it (n0 is
/// unschedulable) and its close finds none of the group's one pod scheduled:
/// Pending. The session that follows admits the group again (overcommit counts
/// the cordoned node's room, as Volcano's snapshot keeps a cordoned node Ready):
/// Inqueue at 630 s (at the 20-minute uncordon, the next event, before). The pod
/// runs from 1200 s, its hour to 4800 s. With `schedulePeriod: 7s` the session
/// that follows is the next tick's, 637 s.
#[test]
fn a_group_sent_back_to_pending_is_enqueued_at_once() {
    let node = ["{name: n0, cpu: 1, memory: 4Gi}"];
    let steps = ["{at: 10m, cordon: n0}", "{at: 10m, deletePod: j-w-0}", "{at: 20m, uncordon: n0}"];
    let phases = |out: &Out| -> Vec<String> {
        out.of("phase").iter().map(|d| format!("{} {} {}", d["t_s"], d["action"], d["phase"])).collect()
    };
    let out = run_timeline(&node, &one_pod("j", "0s", ""), &steps);
    assert_eq!(
        phases(&out),
        [
            "0 enqueue Inqueue",
            "0 session-close Running",
            "630 session-close Pending",
            "630 enqueue Inqueue",
            "1200 session-close Running"
        ]
    );
    assert_eq!(row(&out, "j"), "0,0,4800,Completed,0");
    let out = run_timeline_with(&node, &one_pod("j", "0s", ""), &steps, "  schedulePeriod: 7s\n");
    let phases = phases(&out);
    assert_eq!(phases[2..4], ["630 session-close Pending", "637 enqueue Inqueue"]);
}

/// A scale-up the cluster cannot hold: the gang (now 4) waits with two pods
/// Running — the job stops progressing (lahar runs a gang only while
/// `minAvailable` pods run) — until a second node arrives from a repair
/// at 30 min... restated with a node freed by another job's end: `a` (1 CPU,
/// 0 → 30 min) shares the 2-CPU node; at 10 min scale-job goes to 4 half-CPU
/// pods, two of which wait for `a`'s CPU; at 1800 s they run and the job, whose
/// progress stopped at 600 s, runs its remaining 50 minutes to 4800 s. Edits
/// Volcano's webhook refuses, and jobs of other kinds, change nothing: counted
/// warnings.
#[test]
fn a_scale_up_waits_for_room_and_bad_edits_are_refused() {
    let node = ["{name: n0, cpu: 2, memory: 4Gi}"];
    let a = one_pod("a", "0s", "").replace("lahar.io/duration: 1h", "lahar.io/duration: 30m");
    let objects = a + "---\n" + &scaled_job(2);
    let out = run_timeline(&node, &objects, &["{at: 10m, scaleJob: scale-job, replicas: 4, minAvailable: 4}"]);
    assert_eq!(row(&out, "a"), "0,0,1800,Completed,0");
    assert_eq!(row(&out, "scale-job"), "0,0,4800,Completed,0");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("jobs.yaml"), scaled_job(2)).expect("write");
    let text = "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  cluster:\n    nodes: [{name: n0, cpu: 2, memory: 4Gi}]\n  workload:\n    - manifests: [jobs.yaml]\n  timeline:\n    - {at: 1m, scaleJob: scale-job, replicas: 1}\n    - {at: 2m, scaleJob: scale-job, minAvailable: 3}\n    - {at: 3m, scaleJob: scale-job, task: nope, replicas: 3}\n";
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, text).expect("write");
    let o = dir.path().join("o");
    let run = crate::lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&o).assert().success();
    let err = String::from_utf8_lossy(&run.get_output().stderr).to_string();
    assert!(err.contains("3 timeline actions changed nothing"), "{err}");
    // The first: the task's minAvailable (its replicas by default, as Volcano's
    // mutating webhook sets it) above its new replicas.
    assert!(
        err.contains("at 60s: job default/scale-job: refused: 'minAvailable' must be <= 'replicas' in task: default"),
        "{err}"
    );
    let jobs = std::fs::read_to_string(o.join("jobs.csv")).expect("jobs.csv");
    assert!(jobs.lines().any(|l| l.starts_with("scale-job,") && l.contains(",Completed,")), "{jobs}");
}
