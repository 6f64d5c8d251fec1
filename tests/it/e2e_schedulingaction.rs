//! Replays of Volcano's e2e suite test/e2e/schedulingaction (allocate.go,
//! enqueue.go, predicates.go, preempt.go, reclaim.go) under their `It(...)`
//! names, over many sessions with the e2e conf.
//!
//! The CI cluster as the scheduler sees it: a control plane of 4 CPUs tainted
//! `node-role.kubernetes.io/control-plane:NoSchedule` (its capacity counts in the
//! totals proportion and overcommit read) and four workers of 3.9 free CPUs. The
//! e2e's placeholders (`NodesNumLimit` N, `NodesResourceLimit` R: one pod pinned
//! to each worker, leaving exactly R free on the first N and nothing on the
//! others) are Running Pods of the starting state. Jobs are built as
//! `util.CreateJob` builds them (one task of nginx pods, 3 s grace, the job's
//! `minAvailable` the tasks' `Min`s summed). Where the e2e's wait holds at once
//! (`WaitJobPending` once the pods exist, `WaitTasksReady(job, 0)`), the test
//! checks what the code does instead and says so.

use super::e2e_jobseq::{intervals, pg_rows};
use super::volcano::{Out, run_file};
use super::volcano_controller::e2e_conf;

const WORKERS: [&str; 4] = ["integration-worker", "integration-worker2", "integration-worker3", "integration-worker4"];

/// Runs `manifests` on the CI cluster with placeholders leaving `free` millicores
/// on the first `n` workers (none: `n` = 0 and `free` = ""), under `conf`, with
/// `timeline` entries, until `horizon`.
fn ci(manifests: &str, placeholders: Option<(usize, u32)>, conf: &str, timeline: &[&str], horizon: &str) -> Out {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut objects = String::new();
    if let Some((n, free)) = placeholders {
        for (i, w) in WORKERS.iter().enumerate() {
            let take = if i < n { 3900 - free } else { 3900 };
            if take > 0 {
                objects += &format!(
                    "apiVersion: v1\nkind: Pod\nmetadata: {{name: {w}-placeholder, labels: {{role: placeholder}}, ownerReferences: [{{apiVersion: v1, kind: Node, name: {w}, uid: u{i}}}]}}\nspec:\n  nodeName: {w}\n  containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: {take}m}}, limits: {{cpu: {take}m}}}}}}]\nstatus: {{phase: Running}}\n---\n"
                );
            }
        }
    }
    objects += manifests;
    std::fs::write(dir.path().join("jobs.yaml"), objects).expect("write");
    std::fs::write(dir.path().join("ci.conf"), conf).expect("write");
    let mut nodes = String::from("      - {name: integration-control-plane, cpu: 4, memory: 16Gi}\n");
    for w in WORKERS {
        nodes += &format!("      - {{name: {w}, cpu: 3900m, memory: 16Gi}}\n");
    }
    let mut steps = String::from(
        "    - {at: 0s, taint: integration-control-plane, key: node-role.kubernetes.io/control-plane, effect: NoSchedule}\n",
    );
    for t in timeline {
        steps += &format!("    - {t}\n");
    }
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: e2e}}\nspec:\n  horizon: {horizon}\n  cluster:\n    nodes:\n{nodes}  queues: [{{name: default}}, {{name: q1}}, {{name: q2}}, {{name: q1-preemption}}, {{name: q2-reference}}, {{name: reclaim-q2}}, {{name: reclaim-q3}}, {{name: reclaim-q4}}]\n  scheduler: {{conf: ci.conf}}\n  workload:\n    - manifests: [jobs.yaml]\n  timeline:\n{steps}"
    );
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, text).expect("write");
    run_file(&p)
}

/// A VolcanoJob as `CreateJob` makes it: one task of `replicas` nginx pods of
/// `cpu` millicores, `min` the job's `minAvailable`, in `queue`, of PriorityClass
/// `class` ("" for none), pods labelled `volcano.sh/preemptable: "true"` when
/// `preemptable`; `spec` extra pod-spec lines (affinity, tolerations).
#[allow(clippy::too_many_arguments)]
fn vcjob(
    name: &str,
    queue: &str,
    class: &str,
    replicas: u32,
    min: u32,
    cpu: u32,
    preemptable: bool,
    spec: &str,
) -> String {
    let class = if class.is_empty() { String::new() } else { format!("  priorityClassName: {class}\n") };
    let labels = if preemptable { "{volcano.sh/preemptable: \"true\"}" } else { "{}" };
    format!(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: {name}, annotations: {{lahar.io/duration: 1h}}}}\nspec:\n  queue: {queue}\n  minAvailable: {min}\n{class}  tasks:\n    - name: {name}-task-0\n      replicas: {replicas}\n      template:\n        metadata: {{labels: {labels}}}\n        spec:\n          terminationGracePeriodSeconds: 3\n{spec}          containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: {cpu}m, memory: {cpu}Mi}}}}}}]\n---\n"
    )
}

const CLASSES: &str = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high-priority}\nvalue: 100\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: middle-priority}\nvalue: 50\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low-priority}\nvalue: 10\n---\n";

/// The e2e conf with `enqueue` taken out of the actions (the tests that rewrite
/// the scheduler's ConfigMap).
fn without_enqueue() -> String {
    let c = e2e_conf();
    assert!(c.contains("\"enqueue, allocate"));
    c.replace("\"enqueue, allocate", "\"allocate")
}

/// Pods of `job` Running when the run stops.
fn running(out: &Out, job: &str) -> usize {
    out.pods_of(job).iter().filter(|p| p["reason_end"] == "running").count()
}

/// Pods of `job` evicted by preempt or reclaim.
fn evicted(out: &Out, job: &str) -> usize {
    out.pods_of(job).iter().filter(|p| p["reason_end"] == "preempted" || p["reason_end"] == "reclaimed").count()
}

/// Submission at `t` seconds: the e2e creates each job once the one before is ready.
fn at(y: String, t: u32) -> String {
    y.replace(
        "annotations: {lahar.io/duration: 1h}",
        &format!("annotations: {{lahar.io/duration: 1h, lahar.io/submit-at: {t}s}}"),
    )
}

// ---------------------------------------------------------------------------
// allocate.go, enqueue.go

#[test]
fn allocate_work_when_resource_is_enough() {
    // `allocate work when resource is enough`: two workers with 2 CPUs free;
    // `low` (500m) then `high` (1 CPU) both run.
    let jobs = vcjob("low", "default", "", 1, 1, 500, false, "")
        + &at(vcjob("high", "default", "", 1, 1, 1000, false, ""), 10);
    let out = ci(&jobs, Some((2, 2000)), &e2e_conf(), &[], "1m");
    assert_eq!((running(&out, "low"), running(&out, "high")), (1, 1));
}

#[test]
fn allocate_work_even_not_config_enqueue_action() {
    // `allocate work even not config enqueue action`: the same without enqueue:
    // allocate admits the Pending groups itself.
    let jobs = vcjob("low", "default", "", 1, 1, 500, false, "")
        + &at(vcjob("high", "default", "", 1, 1, 1000, false, ""), 10);
    let out = ci(&jobs, Some((2, 2000)), &without_enqueue(), &[], "1m");
    assert_eq!((running(&out, "low"), running(&out, "high")), (1, 1));
    assert_eq!(pg_rows(&out, "low")[0].2, "allocate", "admitted by allocate");
}

#[test]
fn allocate_dont_work_when_resource_is_not_enough() {
    // `allocate don't work when resource is NOT enough`: one worker with 2 CPUs
    // free; `middle` (1 CPU) and `low` (500m) run; `high` (3 CPUs) is admitted
    // (overcommit counts the whole cluster) but its pod stays Pending.
    let jobs = vcjob("middle", "default", "", 1, 1, 1000, false, "")
        + &at(vcjob("low", "default", "", 1, 1, 500, false, ""), 10)
        + &at(vcjob("high", "default", "", 1, 1, 3000, false, ""), 20);
    let out = ci(&jobs, Some((1, 2000)), &e2e_conf(), &[], "2m");
    assert_eq!((running(&out, "middle"), running(&out, "low")), (1, 1));
    assert_eq!(out.pods_of("high").len(), 0, "the 3-CPU pod never runs");
    assert!(pg_rows(&out, "high").iter().any(|r| r.1 == "Inqueue"));
}

#[test]
fn allocate_dont_work_when_job_not_satisfy_predicates() {
    // `allocate don't work when job NOT satisfy predicates`: j2's required
    // anti-affinity against j1's label keeps it off the only node with room.
    let label = "        metadata: {labels: {job: for-test-predicate}}\n";
    let anti = "          affinity:\n            podAntiAffinity:\n              requiredDuringSchedulingIgnoredDuringExecution:\n                - labelSelector: {matchExpressions: [{key: job, operator: In, values: [for-test-predicate]}]}\n                  topologyKey: kubernetes.io/hostname\n";
    let j1 = vcjob("j1", "default", "", 1, 1, 500, false, "").replace("        metadata: {labels: {}}\n", label);
    let j2 =
        at(vcjob("j2", "default", "", 1, 1, 500, false, anti).replace("        metadata: {labels: {}}\n", label), 10);
    let out = ci(&(j1 + &j2), Some((1, 2000)), &e2e_conf(), &[], "2m");
    assert_eq!((running(&out, "j1"), out.pods_of("j2").len()), (1, 0));
}

// ---------------------------------------------------------------------------
// predicates.go

#[test]
fn node_affinity() {
    // `NodeAffinity`: three 1-CPU pods required on the first worker (the e2e's
    // `matchFields: metadata.name`, restated as the `kubernetes.io/hostname`
    // label the kubelet gives every node, which the cluster here does not
    // declare): all three run there.
    let aff = "          affinity:\n            nodeAffinity:\n              requiredDuringSchedulingIgnoredDuringExecution:\n                nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [integration-worker]}]}]\n";
    let out = ci(&vcjob("na-job", "default", "", 3, 1, 1000, false, aff), None, &e2e_conf(), &[], "1m");
    let pods = out.pods_of("na-job");
    assert_eq!(pods.len(), 3);
    assert!(pods.iter().all(|p| p["node"] == "integration-worker"), "{pods:?}");
}

const TAINT_ALL: &str =
    "{at: 0s, taint: \"integration-*\", key: test-taint-key, value: test-taint-val, effect: NoSchedule}";
const UNTAINT_AT_30: &str = "{at: 30s, untaint: \"integration-*\", key: test-taint-key}";

#[test]
fn taints() {
    // `Taints`: every node tainted; the pod without a toleration waits; once the
    // taint is gone (restated: at 30 s) it runs.
    let out = ci(
        &vcjob("tt-job", "default", "", 1, 1, 1000, false, ""),
        None,
        &e2e_conf(),
        &[TAINT_ALL, UNTAINT_AT_30],
        "1m",
    );
    assert_eq!(intervals(&out, "tt-job-tt-job-task-0-0")[0].0, "30");
}

#[test]
fn taints_and_tolerations() {
    // `Taints and Tolerations`: the tolerating pod runs at once (on a worker: the
    // control plane's own taint is not tolerated); the other waits for the
    // taint's removal.
    let tol =
        "          tolerations: [{key: test-taint-key, operator: Equal, value: test-taint-val, effect: NoSchedule}]\n";
    let jobs = vcjob("tt-job", "default", "", 1, 1, 1000, false, tol)
        + &vcjob("tt-job-no-toleration", "default", "", 1, 1, 1000, false, "");
    let out = ci(&jobs, None, &e2e_conf(), &[TAINT_ALL, UNTAINT_AT_30], "1m");
    let tolerating = out.pods_of("tt-job");
    assert_eq!(tolerating[0]["start_s"], "0");
    assert_ne!(tolerating[0]["node"], "integration-control-plane");
    assert_eq!(out.pods_of("tt-job-no-toleration")[0]["start_s"], "30");
}

// ---------------------------------------------------------------------------
// preempt.go

#[test]
fn schedule_high_priority_job_without_preemption_when_resource_is_enough() {
    // `schedule high priority job without preemption when resource is enough`
    let jobs = CLASSES.to_string()
        + &vcjob("preemptee-0", "default", "low-priority", 1, 1, 1000, true, "")
        + &at(vcjob("preemptor-0", "default", "high-priority", 1, 1, 1000, true, ""), 10);
    let out = ci(&jobs, None, &e2e_conf(), &[], "1m");
    assert_eq!((running(&out, "preemptee-0"), running(&out, "preemptor-0")), (1, 1));
    assert!(out.of("evict").is_empty());
}

#[test]
fn schedule_high_priority_job_with_preemption_when_idle_resource_is_not_enough_but_preemptee_resource_is_enough() {
    // `schedule high priority job with preemption when idle resource is NOT enough
    // but preemptee resource is enough` (enqueue taken out): 12 low pods fill the
    // workers; the high job (minAvailable 6) evicts at least 6 of them and runs
    // at least 6 pods.
    let jobs = CLASSES.to_string()
        + &vcjob("preemptee-1", "default", "low-priority", 12, 1, 1000, true, "")
        + &at(vcjob("preemptor-1", "default", "high-priority", 12, 6, 1000, true, ""), 10);
    let out = ci(&jobs, None, &without_enqueue(), &[], "2m");
    assert!(running(&out, "preemptor-1") >= 6, "{}", running(&out, "preemptor-1"));
    assert!(evicted(&out, "preemptee-1") >= 6);
}

#[test]
fn preemption_doesnt_work_when_podgroup_is_pending_due_to_insufficient_resource() {
    // `preemption doesn't work when podgroup is pending due to insufficient
    // resource`: the preemptor pod's group asks 30 CPUs, is never admitted, and
    // nothing is evicted (the e2e's wait holds at once; restated from the code).
    let pg = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: pending-pg, annotations: {lahar.io/duration: 1h, lahar.io/submit-at: 10s}}\nspec: {minMember: 1, minResources: {cpu: 30000m}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: preemptor-pod, annotations: {scheduling.k8s.io/group-name: pending-pg}}\nspec:\n  schedulerName: volcano\n  priorityClassName: high-priority\n  containers: [{name: c, image: nginx, resources: {requests: {cpu: 1000m}, limits: {cpu: 1000m}}}]\n---\n";
    let jobs = CLASSES.to_string() + &vcjob("preemptee-2", "default", "low-priority", 12, 1, 1000, false, "") + pg;
    let out = ci(&jobs, None, &e2e_conf(), &[], "2m");
    assert_eq!(running(&out, "preemptee-2"), 12);
    assert!(out.of("evict").is_empty());
    assert!(pg_rows(&out, "pending-pg").is_empty());
}

#[test]
fn preemption_only_works_in_the_same_queue() {
    // `preemption only works in the same queue` (its conf rewrite changes
    // nothing): j3 (high, minAvailable 6, queue q1-preemption) evicts j1's six
    // pods of its own queue, and j2's pods in q2-reference stay (the e2e's check
    // of j1 holds at once; j2 untouched is the code's answer).
    let jobs = CLASSES.to_string()
        + &vcjob("j1-q1", "q1-preemption", "low-priority", 6, 6, 1000, true, "")
        + &at(vcjob("j2-q2", "q2-reference", "low-priority", 6, 6, 1000, true, ""), 10)
        + &at(vcjob("j3-q1", "q1-preemption", "high-priority", 12, 6, 1000, true, ""), 20);
    let out = ci(&jobs, None, &e2e_conf(), &[], "3m");
    assert!(running(&out, "j3-q1") >= 6, "{}", running(&out, "j3-q1"));
    assert_eq!(evicted(&out, "j1-q1"), 6);
    assert_eq!((evicted(&out, "j2-q2"), running(&out, "j2-q2")), (0, 6));
}

#[test]
fn preemption_doesnt_work_when_total_resource_of_idle_resource_and_preemptee_is_not_enough() {
    // `preemption doesn't work when total resource of idle resource and
    // preemptee is NOT enough`: 5 free CPUs and j1's one pod are fewer than j3's
    // 12: j3 never runs, j1 and j2 keep theirs.
    let jobs = CLASSES.to_string()
        + &vcjob("j1-q1", "q1-preemption", "low-priority", 1, 1, 1000, true, "")
        + &at(vcjob("j2-q2", "q2-reference", "low-priority", 6, 6, 1000, true, ""), 10)
        + &at(vcjob("j3-q1", "q1-preemption", "high-priority", 12, 12, 1000, true, ""), 20);
    let out = ci(&jobs, None, &e2e_conf(), &[], "6m");
    assert_eq!(out.pods_of("j3-q1").len(), 0);
    assert_eq!((running(&out, "j1-q1"), running(&out, "j2-q2")), (1, 6));
}

// ---------------------------------------------------------------------------
// reclaim.go: every job one pod of CPU1Mem1 (label volcano.sh/preemptable)
// unless said; `CheckPodGroupStatistics` counts groups by phase per queue.

/// Groups of `jobs` whose last phase row is `phase`.
fn groups_in(out: &Out, jobs: &[&str], phase: &str) -> usize {
    jobs.iter().filter(|j| pg_rows(out, j).last().is_some_and(|r| r.1 == phase)).count()
}

#[test]
fn reclaim_case_1_new_queue_with_job_created_no_reclaim_when_resource_is_enough() {
    // `Reclaim Case 1: New queue with job created no reclaim when resource is enough`
    let jobs = vcjob("reclaim-j1", "default", "", 1, 1, 1000, true, "")
        + &at(vcjob("reclaim-j2", "reclaim-q2", "", 1, 1, 1000, true, ""), 10)
        + &at(vcjob("reclaim-j3", "reclaim-q3", "", 1, 1, 1000, true, ""), 20);
    let out = ci(&jobs, Some((4, 1000)), &e2e_conf(), &[], "1m");
    assert_eq!(groups_in(&out, &["reclaim-j1", "reclaim-j2", "reclaim-j3"], "Running"), 3);
    assert!(out.of("evict").is_empty());
}

#[test]
fn reclaim_case_6_new_queue_with_job_created_no_reclaim_when_overused() {
    // `Reclaim Case 6: New queue with job created no reclaim when overused`: three
    // slots full; j4 in reclaim-q3 is admitted but reclaims nothing (no job has
    // pods above its minimum, no queue above its deserved share): Running 1 in
    // each queue and j4's group Inqueue.
    let jobs = vcjob("reclaim-j1", "default", "", 1, 1, 1000, true, "")
        + &at(vcjob("reclaim-j2", "reclaim-q2", "", 1, 1, 1000, true, ""), 10)
        + &at(vcjob("reclaim-j3", "reclaim-q3", "", 1, 1, 1000, true, ""), 20)
        + &at(vcjob("reclaim-j4", "reclaim-q3", "", 1, 1, 1000, true, ""), 30);
    let out = ci(&jobs, Some((3, 1000)), &e2e_conf(), &[], "1m");
    assert_eq!(groups_in(&out, &["reclaim-j1", "reclaim-j2", "reclaim-j3"], "Running"), 3);
    assert_eq!(pg_rows(&out, "reclaim-j4").last().map(|r| r.1.as_str()), Some("Inqueue"));
    assert!(out.of("evict").is_empty());
}

#[test]
fn reclaim_case_8_new_queue_with_job_created_no_reclaim_when_task_resources_less_than_reclaimable_resource() {
    // `Reclaim Case 8: ... no reclaim when task resources less than reclaimable
    // resource`: a 4-CPU pod no node can ever hold: admitted, nothing reclaimed.
    let jobs = vcjob("reclaim-j1", "default", "", 1, 1, 1000, true, "")
        + &at(vcjob("reclaim-j2", "reclaim-q2", "", 1, 1, 1000, true, ""), 10)
        + &at(vcjob("reclaim-j4", "reclaim-q3", "", 1, 1, 4000, false, ""), 20);
    let out = ci(&jobs, Some((3, 1000)), &e2e_conf(), &[], "1m");
    assert_eq!(groups_in(&out, &["reclaim-j1", "reclaim-j2"], "Running"), 2);
    assert_eq!(pg_rows(&out, "reclaim-j4").last().map(|r| r.1.as_str()), Some("Inqueue"));
    assert!(out.of("evict").is_empty());
}

#[test]
fn reclaim_case_9_new_queue_with_job_created_all_queues_spec_reclaimable_is_false_no_reclaim() {
    // `Reclaim Case 9:  New queue with job created, all queues.spec.reclaimable is
    // false, no reclaim`: the third slot is free, j3 runs, nothing is evicted.
    let jobs = vcjob("reclaim-j1", "default", "", 1, 1, 1000, true, "")
        + &at(vcjob("reclaim-j2", "reclaim-q2", "", 1, 1, 1000, true, ""), 10)
        + &at(vcjob("reclaim-j3", "reclaim-q3", "", 1, 1, 1000, true, ""), 30);
    let steps = ["{at: 20s, queue: default, reclaimable: false}", "{at: 20s, queue: reclaim-q2, reclaimable: false}"];
    let out = ci(&jobs, Some((3, 1000)), &e2e_conf(), &steps, "1m");
    assert_eq!(groups_in(&out, &["reclaim-j1", "reclaim-j2", "reclaim-j3"], "Running"), 3);
    assert!(out.of("evict").is_empty());
}

#[test]
fn reclaim_case_10_multi_reclaimed_queue() {
    // `Reclaim Case 10: Multi reclaimed queue`: j1 (default) and j2 (reclaim-q2),
    // two pods each above a minimum of 1, fill the four slots; j3 (reclaim-q3)
    // and j4 (reclaim-q4), high priority, each reclaim one pod of them (gang
    // offers the pods above a job's minimum), so every job runs at least one.
    let classes = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low-priority}\nvalue: 10\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high-priority}\nvalue: 10000\n---\n";
    let jobs = classes.to_string()
        + &vcjob("reclaim-j1", "default", "low-priority", 2, 1, 1000, true, "")
        + &at(vcjob("reclaim-j2", "reclaim-q2", "low-priority", 2, 1, 1000, true, ""), 10)
        + &at(vcjob("reclaim-j3", "reclaim-q3", "high-priority", 1, 1, 1000, true, ""), 20)
        + &at(vcjob("reclaim-j4", "reclaim-q4", "high-priority", 1, 1, 1000, true, ""), 30);
    let out = ci(&jobs, Some((4, 1000)), &e2e_conf(), &[], "2m");
    assert_eq!((running(&out, "reclaim-j3"), running(&out, "reclaim-j4")), (1, 1));
    assert_eq!(evicted(&out, "reclaim-j1") + evicted(&out, "reclaim-j2"), 2);
    assert!(running(&out, "reclaim-j1") >= 1 && running(&out, "reclaim-j2") >= 1);
}

/// Pod lines that gate a template's pods with `example.com/g1`.
const GATED: &str = "          schedulingGates: [{name: example.com/g1}]\n";

#[test]
fn scheduling_gated_task_will_not_consume_inqueue_resources() {
    // `Scheduling gated task will not consume inqueue resources` (enqueue.go):
    // j-gated's 12 one-CPU pods are gated for good; once its pods exist their
    // requests come off its reservation (DeductSchGatedResources), so job1 and
    // job2 (6 pods each) are admitted and run beside it. Without the deduction
    // 12 + 6 + 6 CPUs exceed what overcommit and proportion allow.
    let jobs = vcjob("j-gated", "default", "", 12, 12, 1000, false, GATED)
        + &vcjob("job1", "default", "", 6, 6, 1000, false, "")
        + &vcjob("job2", "default", "", 6, 6, 1000, false, "");
    let out = ci(&jobs, None, &e2e_conf(), &[], "2m");
    assert_eq!((running(&out, "job1"), running(&out, "job2")), (6, 6));
    assert_eq!(out.pods_of("j-gated").len(), 0);
    assert_eq!(pg_rows(&out, "j-gated").first().map(|r| r.1.as_str()), Some("Inqueue"));
}

#[test]
fn jobs_unschedulable_due_to_scheduling_gates_will_not_preempt_other_jobs_despite_sufficient_preemptor() {
    // `Jobs unschedulable due to scheduling gates will not preempt other jobs
    // despite sufficient preemptor` (preempt.go, enqueue taken out). The e2e's
    // preemptor sets no gates (its TaskSpec has none, so removing them is a
    // no-op); restated as the test's name means it: the preemptor's pods are
    // gated until 30 s, nothing is evicted before, and then it preempts and runs
    // at least its minimum of 6.
    let jobs = CLASSES.to_string()
        + &vcjob("preemptee-1", "default", "low-priority", 12, 1, 1000, true, "")
        + &at(vcjob("preemptor-1", "default", "high-priority", 12, 6, 1000, true, GATED), 10);
    let out = ci(&jobs, None, &without_enqueue(), &["{at: 30s, ungateJob: preemptor-1}"], "2m");
    let evictions = out.of("evict");
    assert!(
        !evictions.is_empty() && evictions.iter().all(|d| d["t_s"].parse::<f64>().unwrap() >= 30.0),
        "{evictions:?}"
    );
    assert!(running(&out, "preemptor-1") >= 6);
    assert!(evicted(&out, "preemptee-1") >= 6);
}
