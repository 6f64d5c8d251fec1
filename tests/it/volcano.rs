//! Volcano's own unit-test situations replayed one session at a time
//! (`tests/volcano/*.yaml`, each citing the Volcano test case it replays), and
//! scenario-level tests of the Volcano pipeline's actions and plugins. Expected
//! decisions are read from the written `decisions.csv`, `pods.csv` and `jobs.csv`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One CSV row by column name.
pub(crate) type Row = BTreeMap<String, String>;

/// The written outputs of one run.
pub(crate) struct Out {
    pub(crate) decisions: Vec<Row>,
    /// (job, phase) of the phase rows written before the first session (replays only).
    pub(crate) pods: Vec<Row>,
    pub(crate) jobs: Vec<Row>,
    pub(crate) timeseries: Vec<Row>,
}

fn read_csv(p: &Path) -> Vec<Row> {
    let mut r = csv::Reader::from_path(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let h = r.headers().expect("header").clone();
    r.records().map(|x| h.iter().zip(x.expect("record").iter()).map(|(k, v)| (k.into(), v.into())).collect()).collect()
}

fn run_scenario(s: lahar::scenario::Scenario) -> Out {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = lahar::RunOptions { out_dir: Some(dir.path().to_path_buf()), ..Default::default() };
    lahar::run(s, &opts).expect("run");
    let f = |n: &str| read_csv(&dir.path().join(n));
    Out { decisions: f("decisions.csv"), pods: f("pods.csv"), jobs: f("jobs.csv"), timeseries: f("timeseries.csv") }
}

/// Runs `tests/volcano/<name>.yaml`. A replay is one session: every PodGroup keeps
/// its `status.phase` until that session closes, as in Volcano, so every row is
/// session 1.
pub(crate) fn replay(name: &str) -> Out {
    let p: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "volcano", &format!("{name}.yaml")].iter().collect();
    let out = run_scenario(lahar::scenario::load_file(&p).unwrap_or_else(|e| panic!("{e}")));
    assert!(out.decisions.iter().all(|d| d["session"] == "1"), "{name}: a replay is one session");
    out
}

/// Runs `tests/volcano/<name>.yaml` with one condition changed (a negative
/// replay's positive twin): each (`from`, `to`) replaces the one place `from`
/// occurs in the scenario or the `objects/` files it reads.
pub(crate) fn replay_with(name: &str, edits: &[(&str, &str)]) -> Out {
    let src: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "volcano"].iter().collect();
    let main = format!("{name}.yaml");
    let text = std::fs::read_to_string(src.join(&main)).expect("replay");
    let mut files = vec![(main, text.clone())];
    let path_char = |c: char| c.is_ascii_alphanumeric() || "._/-".contains(c);
    for w in text.split(|c: char| !path_char(c)) {
        if w.starts_with("objects/") && w.ends_with(".yaml") && !files.iter().any(|f| f.0 == w) {
            files.push((w.to_string(), std::fs::read_to_string(src.join(w)).expect("objects")));
        }
    }
    for (from, to) in edits {
        let hits: usize = files.iter().map(|f| f.1.matches(from).count()).sum();
        assert_eq!(hits, 1, "{name}: `{from}` must occur exactly once");
        let f = files.iter_mut().find(|f| f.1.contains(from)).expect("found");
        f.1 = f.1.replacen(from, to, 1);
    }
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("objects")).expect("objects dir");
    for (p, t) in &files {
        std::fs::write(dir.path().join(p), t).expect("write");
    }
    let out = run_file(&dir.path().join(&files[0].0));
    assert!(out.decisions.iter().all(|d| d["session"] == "1"), "{name}: a replay is one session");
    out
}

pub(crate) fn run_file(path: &Path) -> Out {
    run_scenario(lahar::scenario::load_file(path).unwrap_or_else(|e| panic!("{e}")))
}

pub(crate) fn run_text(text: &str) -> Out {
    run_scenario(lahar::scenario::load_str(text, "test.yaml", Path::new("")).unwrap_or_else(|e| panic!("{e}")))
}

impl Out {
    /// The decisions but phase changes, as [`Placement`]s.
    fn placements(&self) -> Vec<Placement> {
        let row = |d: &Row| (d["t_s"].clone(), d["kind"].clone(), d["pod"].clone(), d["node"].clone());
        self.decisions.iter().filter(|d| d["kind"] != "phase").map(row).collect()
    }
    pub(crate) fn of(&self, kind: &str) -> Vec<&Row> {
        self.decisions.iter().filter(|d| d["kind"] == kind).collect()
    }
    /// pod → node of every bind.
    pub(crate) fn binds(&self) -> BTreeMap<String, String> {
        self.of("bind").iter().map(|d| (d["pod"].clone(), d["node"].clone())).collect()
    }
    /// Pods bound, in decision order.
    pub(crate) fn bind_order(&self) -> Vec<String> {
        self.of("bind").iter().map(|d| d["pod"].clone()).collect()
    }
    /// Evicted pods, in decision order.
    pub(crate) fn evictions(&self) -> Vec<String> {
        self.of("evict").iter().map(|d| d["pod"].clone()).collect()
    }
    /// pod → node of every pipeline.
    pub(crate) fn pipelines(&self) -> BTreeMap<String, String> {
        self.of("pipeline").iter().map(|d| (d["pod"].clone(), d["node"].clone())).collect()
    }
    /// (job, phase) of every PodGroup phase change.
    pub(crate) fn phases(&self) -> Vec<(String, String)> {
        self.of("phase").iter().map(|d| (d["job"].clone(), d["phase"].clone())).collect()
    }
    pub(crate) fn job(&self, name: &str) -> &Row {
        self.jobs.iter().find(|j| j["job"] == name).unwrap_or_else(|| panic!("no job {name}"))
    }
    pub(crate) fn pods_of(&self, job: &str) -> Vec<&Row> {
        self.pods.iter().filter(|p| p["job"] == job).collect()
    }
}

pub(crate) fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

pub(crate) fn list(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

// ---------------------------------------------------------------------------
// Replays: allocate (actions/allocate/allocate_test.go, TestAllocate)

#[test]
fn replay_allocate_node_selector_mismatch() {
    // p1's selector matches no node: a load warning, and p1 stays pending.
    assert_eq!(replay("allocate-node-selector-mismatch").binds(), map(&[("c1/p2", "n1")]));
}

#[test]
fn replay_allocate_continue_until_min_member() {
    let o = replay("allocate-continue-until-min-member");
    assert_eq!(o.binds(), map(&[("c1/p0", "n1"), ("c1/p2", "n2")]));
}

#[test]
fn replay_allocate_master_min_member_break() {
    let o = replay("allocate-master-min-member-break");
    assert!(o.binds().is_empty(), "{:?}", o.binds());
    // Twin: n1 with 2 cpus holds both masters (only n1 is nodeRole=master), and
    // the workers go to n2 (the only nodeRole=worker node).
    let o = replay_with("allocate-master-min-member-break", &[("{name: n1, cpu: 1,", "{name: n1, cpu: 2,")]);
    assert_eq!(o.binds(), map(&[("c1/p0", "n1"), ("c1/p1", "n1"), ("c1/p2", "n2"), ("c1/p3", "n2")]));
}

#[test]
fn replay_allocate_one_job_two_pods() {
    let o = replay("allocate-one-job-two-pods");
    assert_eq!(o.binds(), map(&[("c1/p1", "n1"), ("c1/p2", "n1")]));
}

#[test]
fn replay_allocate_two_jobs_one_node() {
    let o = replay("allocate-two-jobs-one-node");
    assert_eq!(o.binds(), map(&[("c1/pg1-p-1", "n1"), ("c2/pg2-p-1", "n1")]));
}

#[test]
fn replay_allocate_high_priority_queue_not_blocking() {
    // p1 (3 cpus) fits no node: a load warning, and queue c1 does not block c2.
    assert_eq!(replay("allocate-high-priority-queue-not-blocking").binds(), map(&[("c1/p2", "n1")]));
}

// ---------------------------------------------------------------------------
// Replays: preempt (actions/preempt/preempt_test.go, TestPreempt and
// TestTopologyAwarePreempt)

#[test]
fn replay_preempt_enough_idle() {
    let o = replay("preempt-enough-idle");
    assert!(o.evictions().is_empty());
    // What preempt does instead: n1 has 8 idle cpus, so preemptor1 is pipelined
    // there without a victim.
    assert_eq!(o.pipelines(), map(&[("c1/preemptor1", "n1")]));
}

#[test]
fn replay_preempt_job_pipelined() {
    assert!(replay("preempt-job-pipelined").evictions().is_empty());
    job_pipelined_twin("preempt-job-pipelined");
}

/// The positive twin of `do not preempt if job is pipelined` (both replays): pg2
/// is given the high-priority class, so pg1's pods (job priority 0 against
/// 100000) may be victims. With pg2's `minMember` 1, met by its running
/// preemptee3, pg2 does not starve and preempts nothing: being pipelined is what
/// blocks. With `minMember` 2 it starves, and preemptor2 takes preemptee1's cpu
/// on the full n1 (gang lets pg1 lose one of its two pods; preemptee1 and
/// preemptee2 tie in victim order and the first goes).
fn job_pipelined_twin(name: &str) {
    let pg2 = "name: pg2\n  namespace: c1\nspec:\n  queue: q1\n  minMember: 1\n";
    let high = |min: u32| {
        format!(
            "name: pg2\n  namespace: c1\nspec:\n  queue: q1\n  priorityClassName: high-priority\n  minMember: {min}\n"
        )
    };
    let o = replay_with(name, &[(pg2, &high(1))]);
    assert!(o.evictions().is_empty() && o.pipelines().is_empty(), "{name}: {:?}", o.decisions);
    let o = replay_with(name, &[(pg2, &high(2))]);
    assert_eq!(o.evictions(), list(&["c1/preemptee1"]), "{name}");
    assert_eq!(o.pipelines(), map(&[("c1/preemptor2", "n1")]), "{name}");
}

#[test]
fn replay_preempt_one_task_of_different_job() {
    let o = replay("preempt-one-task-of-different-job");
    assert_eq!(o.evictions(), list(&["c1/preemptee1"]));
    assert_eq!(o.pipelines(), map(&[("c1/preemptor1", "n1")]));
}

#[test]
fn replay_preempt_enough_tasks_for_large_task() {
    let o = replay("preempt-enough-tasks-for-large-task");
    assert_eq!(o.evictions(), list(&["c1/preemptee2", "c1/preemptee1"]));
    assert_eq!(o.pipelines(), map(&[("c1/preemptor1", "n1")]));
}

#[test]
fn replay_preempt_same_queue_over_capability() {
    assert_eq!(replay("preempt-same-queue-over-capability").evictions(), list(&["c1/preemptee1"]));
}

#[test]
fn replay_preempt_same_queue_allocatable() {
    let o = replay("preempt-same-queue-allocatable");
    assert!(o.evictions().is_empty());
    // q1's capability (6 cpu) and n1's 12 cpus hold preemptor1 beside the
    // preemptees: it is pipelined onto n1 without a victim.
    assert_eq!(o.pipelines(), map(&[("c1/preemptor1", "n1")]));
}

#[test]
fn replay_preempt_same_queue_task_priority() {
    assert_eq!(replay("preempt-same-queue-task-priority").evictions(), list(&["c1/preemptee2"]));
}

#[test]
fn replay_preempt_besteffort_victim() {
    assert_eq!(replay("preempt-besteffort-victim").evictions(), list(&["c1/preemptee1"]));
}

#[test]
fn replay_preempt_besteffort_preemptor() {
    let o = replay("preempt-besteffort-preemptor");
    assert_eq!(o.evictions(), list(&["c1/preemptee1"]));
    assert_eq!(o.pipelines(), map(&[("c1/preemptor1", "n1")]));
}

#[test]
fn replay_preempt_preemption_policy_never() {
    let o = replay("preempt-preemption-policy-never");
    assert!(o.evictions().is_empty() && o.pipelines().is_empty(), "{:?}", o.decisions);
    // Twin: without the pod's `preemptionPolicy: Never`, preemptor1 takes n1's
    // one pod slot from preemptee1 (the only running pod).
    let o = replay_with("preempt-preemption-policy-never", &[("  preemptionPolicy: Never\n", "")]);
    assert_eq!(o.evictions(), list(&["c1/preemptee1"]));
    assert_eq!(o.pipelines(), map(&[("c1/preemptor1", "n1")]));
}

#[test]
fn replay_preempt_rollback_over_queue_capability() {
    let o = replay("preempt-rollback-over-queue-capability");
    assert!(o.evictions().is_empty() && o.pipelines().is_empty(), "{:?}", o.decisions);
    // Twin: q1's capability at 5 cpu / 5G: gang lets pg1 lose one pod, and with
    // preemptee1 gone q1 holds 1 + 4 = 5 cpus, so the eviction is kept and
    // preemptor1 is pipelined onto n1.
    let cap = [("capability: {cpu: 3, memory: 3G}", "capability: {cpu: 5, memory: 5G}")];
    let o = replay_with("preempt-rollback-over-queue-capability", &cap);
    assert_eq!(o.evictions(), list(&["c1/preemptee1"]));
    assert_eq!(o.pipelines(), map(&[("c1/preemptor1", "n1")]));
}

#[test]
fn replay_preempt_commit_only_successful_node() {
    let o = replay("preempt-commit-only-successful-node");
    assert_eq!(o.evictions(), list(&["c1/preemptee2"]));
    assert_eq!(o.pipelines(), map(&[("c1/preemptor1", "n2")]));
}

#[test]
fn replay_preempt_multi_queue_preemptor_tasks() {
    let o = replay("preempt-multi-queue-preemptor-tasks");
    assert_eq!(o.evictions(), list(&["c1/q2-preemptee1"]));
    assert_eq!(o.pipelines(), map(&[("c1/q2-preemptor1", "n1")]));
}

#[test]
fn replay_preempt_topology_aware_priority_queues() {
    let o = replay("preempt-topology-aware-priority-queues");
    assert_eq!(o.evictions(), list(&["c1/preemptee1"]));
    assert_eq!(o.pipelines(), map(&[("c1/preemptor1", "n1")]));
}

// TestTopologyAwarePreempt's first ten cases: TestPreempt's objects and
// expectations under its own tiers (enableTopologyAwarePreemption: true, which
// lahar accepts but runs as its normal preemption).

#[test]
fn replay_preempt_topology_aware_enough_idle() {
    let o = replay("preempt-topology-aware-enough-idle");
    assert!(o.evictions().is_empty());
    // What preempt does instead: n1 has 8 idle cpus, so preemptor1 is pipelined
    // there without a victim.
    assert_eq!(o.pipelines(), map(&[("c1/preemptor1", "n1")]));
}

#[test]
fn replay_preempt_topology_aware_job_pipelined() {
    assert!(replay("preempt-topology-aware-job-pipelined").evictions().is_empty());
    job_pipelined_twin("preempt-topology-aware-job-pipelined");
}

#[test]
fn replay_preempt_topology_aware_one_task_of_different_job() {
    let o = replay("preempt-topology-aware-one-task-of-different-job");
    assert_eq!(o.evictions(), list(&["c1/preemptee1"]));
}

#[test]
fn replay_preempt_topology_aware_enough_tasks_for_large_task() {
    let o = replay("preempt-topology-aware-enough-tasks-for-large-task");
    let got: BTreeSet<String> = o.evictions().into_iter().collect();
    assert_eq!(got, list(&["c1/preemptee1", "c1/preemptee2"]).into_iter().collect());
}

#[test]
fn replay_preempt_topology_aware_same_queue_over_capability() {
    assert_eq!(replay("preempt-topology-aware-same-queue-over-capability").evictions(), list(&["c1/preemptee1"]));
}

#[test]
fn replay_preempt_topology_aware_same_queue_allocatable() {
    let o = replay("preempt-topology-aware-same-queue-allocatable");
    assert!(o.evictions().is_empty());
    // q1's capability (6 cpu) and n1's 12 cpus hold preemptor1 beside the
    // preemptees: it is pipelined onto n1 without a victim.
    assert_eq!(o.pipelines(), map(&[("c1/preemptor1", "n1")]));
}

#[test]
fn replay_preempt_topology_aware_same_queue_task_priority() {
    assert_eq!(replay("preempt-topology-aware-same-queue-task-priority").evictions(), list(&["c1/preemptee2"]));
}

#[test]
fn replay_preempt_topology_aware_besteffort_victim() {
    assert_eq!(replay("preempt-topology-aware-besteffort-victim").evictions(), list(&["c1/preemptee1"]));
}

#[test]
fn replay_preempt_topology_aware_besteffort_preemptor() {
    assert_eq!(replay("preempt-topology-aware-besteffort-preemptor").evictions(), list(&["c1/preemptee1"]));
}

#[test]
fn replay_preempt_topology_aware_preemption_policy_never() {
    let o = replay("preempt-topology-aware-preemption-policy-never");
    assert!(o.evictions().is_empty() && o.pipelines().is_empty(), "{:?}", o.decisions);
    // Twin: without the pod's `preemptionPolicy: Never`, preemptor1 takes n1's
    // one pod slot from preemptee1 (the only running pod).
    let o = replay_with("preempt-topology-aware-preemption-policy-never", &[("  preemptionPolicy: Never\n", "")]);
    assert_eq!(o.evictions(), list(&["c1/preemptee1"]));
    assert_eq!(o.pipelines(), map(&[("c1/preemptor1", "n1")]));
}

// ---------------------------------------------------------------------------
// Replays: reclaim (actions/reclaim/reclaim_test.go, TestReclaim)

#[test]
fn replay_reclaim_overusing_queue() {
    let o = replay("reclaim-overusing-queue");
    assert_eq!(o.evictions(), list(&["c1/preemptee2"]));
    assert_eq!(o.pipelines(), map(&[("c1/preemptor1", "n1")]));
}

#[test]
fn replay_reclaim_sort_reclaimees_by_job_priority() {
    assert_eq!(replay("reclaim-sort-reclaimees-by-job-priority").evictions(), list(&["c1/preemptee2-1"]));
}

#[test]
fn replay_reclaim_sort_reclaimees_by_queue_priority() {
    assert_eq!(replay("reclaim-sort-reclaimees-by-queue-priority").evictions(), list(&["c1/preemptee1-1"]));
}

#[test]
fn replay_reclaim_preemption_policy_never() {
    let o = replay("reclaim-preemption-policy-never");
    assert!(o.evictions().is_empty() && o.pipelines().is_empty(), "{:?}", o.decisions);
    // Removing `Never` alone changes nothing, in Volcano as in lahar: pg2 with
    // minMember 0 never starves (gang: 0 occupied < 0 is false), so reclaim never
    // takes it up; and q2 deserves 10/15 of n1's 1 cpu / 1Gi, less than preemptor1's
    // 1 cpu / 1G, so proportion's preemptive refuses it. Twin: with pg2's minMember
    // 1 and q2 guaranteed 1 cpu / 1Gi, `Never` alone blocks; without the pod's own
    // `preemptionPolicy` (pg2's class is not the pod's: the pod names none),
    // preemptor1 takes n1 from preemptee1.
    let name = "reclaim-preemption-policy-never";
    let starving = ("  queue: q2\n  minMember: 0\n", "  queue: q2\n  minMember: 1\n");
    let deserves = ("{name: q2, weight: 10}", "{name: q2, weight: 10, guarantee: {cpu: 1, memory: 1Gi}}");
    let o = replay_with(name, &[starving, deserves]);
    assert!(o.evictions().is_empty() && o.pipelines().is_empty(), "{:?}", o.decisions);
    let o = replay_with(name, &[starving, deserves, ("  preemptionPolicy: Never\n", "")]);
    assert_eq!(o.evictions(), list(&["c1/preemptee1"]));
    assert_eq!(o.pipelines(), map(&[("c1/preemptor1", "n1")]));
}

#[test]
fn replay_reclaim_closed_queue() {
    for plugin in ["proportion", "capacity"] {
        let o = replay(&format!("reclaim-closed-queue-{plugin}"));
        assert!(o.evictions().is_empty() && o.pipelines().is_empty(), "{plugin}");
    }
    // Twin (proportion): with q2 open, preemptor1 reclaims from q1 the one
    // preemptable pod, preemptee2, and is pipelined onto n1 in its place.
    let open = [("{name: q2, weight: 1, state: Closed}", "{name: q2, weight: 1}")];
    let o = replay_with("reclaim-closed-queue-proportion", &open);
    assert_eq!(o.evictions(), list(&["c1/preemptee2"]));
    assert_eq!(o.pipelines(), map(&[("c1/preemptor1", "n1")]));
    // Opening q2 alone changes nothing under capacity, in Volcano too: q2 has no
    // `deserved`, so capacity's preemptive refuses it (its 1 cpu would exceed a
    // deserved of 0 on every dimension). Twin (capacity): q2 deserving 1 cpu /
    // 1Gi, closed it reclaims nothing; open, preemptor1 takes preemptee2's cpu.
    let deserving = |state: &str| format!("{{name: q2, weight: 1, {state}deserved: {{cpu: 1, memory: 1Gi}}}}");
    let closed = "{name: q2, weight: 1, state: Closed}";
    let o = replay_with("reclaim-closed-queue-capacity", &[(closed, &deserving("state: Closed, "))]);
    assert!(o.evictions().is_empty() && o.pipelines().is_empty(), "{:?}", o.decisions);
    let o = replay_with("reclaim-closed-queue-capacity", &[(closed, &deserving(""))]);
    assert_eq!(o.evictions(), list(&["c1/preemptee2"]));
    assert_eq!(o.pipelines(), map(&[("c1/preemptor1", "n1")]));
}

#[test]
fn replay_reclaim_node_idle_counts() {
    let o = replay("reclaim-node-idle-counts");
    assert_eq!(o.evictions(), list(&["c1/preemptee1-1"]));
    assert_eq!(o.pipelines(), map(&[("c1/preemptor1", "n1")]));
}

#[test]
fn replay_reclaim_second_task_after_never() {
    let o = replay("reclaim-second-task-after-never");
    assert_eq!(o.evictions(), list(&["c1/victim-pod"]));
    assert_eq!(o.pipelines(), map(&[("c1/preemptor-task2-preemptable", "n1")]));
}

#[test]
fn replay_reclaim_commit_only_successful_node() {
    let o = replay("reclaim-commit-only-successful-node");
    assert!(o.evictions().is_empty(), "{:?}", o.evictions());
    // Not asserted by the test: the preemptor is pipelined onto n1's idle cpus.
    assert_eq!(o.pipelines(), map(&[("c1/preemptor1", "n1")]));
}

// ---------------------------------------------------------------------------
// Replays: priority (plugins/priority/priority_test.go, TestPreempt)

#[test]
fn replay_priority_preempt_enabled() {
    let o = replay("priority-preempt-enabled");
    assert_eq!(o.evictions(), list(&["ns1/preemptee1"]));
    assert_eq!(o.pipelines(), map(&[("ns2/preemptor1", "node1")]));
    assert!(o.binds().is_empty());
}

#[test]
fn replay_priority_preempt_disabled() {
    let o = replay("priority-preempt-disabled");
    assert!(o.evictions().is_empty() && o.binds().is_empty(), "{:?}", o.decisions);
    // Twin: with the priority plugin voting on preemptable, the one preemptable
    // pod (preemptee1, on node1) goes and preemptor1 takes its 3 cpus.
    let o = replay_with("priority-preempt-disabled", &[("enablePreemptable: false", "enablePreemptable: true")]);
    assert_eq!(o.evictions(), list(&["ns1/preemptee1"]));
    assert_eq!(o.pipelines(), map(&[("ns2/preemptor1", "node1")]));
}

// ---------------------------------------------------------------------------
// Replays: enqueue (actions/enqueue/enqueue_test.go, TestEnqueue)

#[test]
fn replay_enqueue_inqueue_podgroup() {
    // No decision: pg1 starts Inqueue and stays there.
    let o = replay("enqueue-inqueue-podgroup");
    assert!(o.decisions.is_empty(), "{:?}", o.decisions);
    // Twin: the same PodGroup Pending is admitted (its 2 cpu fit c1's 4).
    let o = replay_with("enqueue-inqueue-podgroup", &[("phase: Inqueue", "phase: Pending")]);
    assert_eq!(o.phases(), [("c1/pg1".to_string(), "Inqueue".to_string())]);
}

#[test]
fn replay_enqueue_pending_podgroups() {
    let o = replay("enqueue-pending-podgroups");
    let got: BTreeSet<_> = o.phases().into_iter().collect();
    let want: BTreeSet<_> =
        [("c1/pg1", "Inqueue"), ("c1/pg2", "Inqueue")].iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
    assert_eq!(got, want);
}

#[test]
fn replay_enqueue_running_podgroup() {
    let o = replay("enqueue-running-podgroup");
    assert!(o.decisions.is_empty(), "{:?}", o.decisions);
    assert_eq!(o.job("c1/pg1")["state"], "Running");
}

#[test]
fn replay_enqueue_min_resources_over_capability() {
    let o = replay("enqueue-min-resources-over-capability");
    assert!(o.decisions.is_empty(), "{:?}", o.decisions);
    assert_eq!(o.job("c1/pg1")["state"], "Pending");
    // Twin: a capability of 8 cpu / 8G holds pg1's minResources: it is admitted.
    let cap = [("capability: {cpu: 1, memory: 1G}", "capability: {cpu: 8, memory: 8G}")];
    let o = replay_with("enqueue-min-resources-over-capability", &cap);
    assert_eq!(o.phases(), [("c1/pg1".to_string(), "Inqueue".to_string())]);
}

// ---------------------------------------------------------------------------
// Replays: backfill (actions/backfill/backfill_test.go, TestPickUpPendingTasks)

#[test]
fn replay_backfill_pick_up_order() {
    let o = replay("backfill-pick-up-order");
    let want: Vec<String> = ["pg2", "pg1"]
        .iter()
        .flat_map(|j| (1..=4).rev().map(move |k| format!("default/{j}-besteffort-task-{k}")))
        .collect();
    assert_eq!(o.bind_order(), want);
    assert!(o.decisions.iter().all(|d| d["kind"] != "bind" || d["action"] == "backfill"));
}

// ---------------------------------------------------------------------------
// Replays: capacity (plugins/capacity/capacity_test.go,
// Test_capacityPlugin_OnSessionOpenWithoutHierarchy and TestEnqueueAndAllocatable)

#[test]
fn replay_capacity_allocatable_under_capability() {
    assert_eq!(replay("capacity-allocatable-under-capability").binds(), map(&[("ns1/p2", "n1")]));
}

#[test]
fn replay_capacity_over_capability() {
    assert!(replay("capacity-over-capability").binds().is_empty());
    // Twin: q2's capability at 2 cpu / 2Gi holds p3 and p4 (1 cpu, 1Gi each): p4
    // binds (n1 and n2 both have a free cpu and nothing scores them).
    let cap = [("capability: {cpu: 1500m, memory: 1536Mi}", "capability: {cpu: 2, memory: 2Gi}")];
    let b = replay_with("capacity-over-capability", &cap).binds();
    assert_eq!(b.keys().collect::<Vec<_>>(), ["ns1/p4"]);
    assert!(["n1", "n2"].contains(&b["ns1/p4"].as_str()), "{b:?}");
}

#[test]
fn replay_capacity_reclaim_below_deserved() {
    let o = replay("capacity-reclaim-below-deserved");
    assert_eq!(o.evictions(), list(&["ns1/p6"]));
    assert_eq!(o.pipelines(), map(&[("ns1/p7", "n2")]));
}

#[test]
fn replay_capacity_reclaim_scalar_only_request() {
    let o = replay("capacity-reclaim-scalar-only-request");
    assert_eq!(o.evictions(), list(&["ns1/p9"]));
    assert_eq!(o.pipelines(), map(&[("ns1/p12", "n4")]));
}

#[test]
fn replay_capacity_queue_priority_order() {
    let o = replay("capacity-queue-priority-order");
    assert_eq!(o.binds(), map(&[("ns1/p15", "n6")]));
    assert!(o.evictions().is_empty());
}

#[test]
fn replay_capacity_reclaim_one_dimension() {
    let o = replay("capacity-reclaim-one-dimension");
    assert_eq!(o.evictions(), list(&["ns1/p18"]));
    assert_eq!(o.pipelines(), map(&[("ns1/p17", "n1")]));
}

#[test]
fn replay_capacity_no_reclaim_above_deserved() {
    let o = replay("capacity-no-reclaim-above-deserved");
    assert!(o.evictions().is_empty() && o.pipelines().is_empty() && o.binds().is_empty());
    // Twin: q12 deserving 2 cpus holds p19 + p20 (2 cpus) on one dimension, so it
    // may reclaim: p21 (q13 deserves nothing) leaves n1 and p20 is pipelined there.
    let deserved = [("deserved: {cpu: 1, memory: 2Gi}", "deserved: {cpu: 2, memory: 2Gi}")];
    let o = replay_with("capacity-no-reclaim-above-deserved", &deserved);
    assert_eq!(o.evictions(), list(&["ns1/p21"]));
    assert_eq!(o.pipelines(), map(&[("ns1/p20", "n1")]));
    assert!(o.binds().is_empty());
}

#[test]
fn replay_capacity_no_reclaim_unallocated_scalar() {
    let o = replay("capacity-no-reclaim-unallocated-scalar");
    assert!(o.evictions().is_empty() && o.pipelines().is_empty() && o.binds().is_empty(), "{:?}", o.decisions);
    // Twin: queue14 deserving 1 cpu is over its share with p22's 2 cpus: p22 goes,
    // and its 2 cpus with n7's 2 free GPUs hold p25.
    let deserved = [("{name: queue14, weight: 1, deserved: {cpu: 2,", "{name: queue14, weight: 1, deserved: {cpu: 1,")];
    let o = replay_with("capacity-no-reclaim-unallocated-scalar", &deserved);
    assert_eq!(o.evictions(), list(&["ns1/p22"]));
    assert_eq!(o.pipelines(), map(&[("ns1/p25", "n7")]));
}

#[test]
fn replay_capacity_reclaim_reclaimer_dimensions() {
    let o = replay("capacity-reclaim-reclaimer-dimensions");
    assert_eq!(o.evictions(), list(&["ns1/p28"]));
    assert_eq!(o.pipelines(), map(&[("ns1/p30", "n8")]));
}

#[test]
fn replay_capacity_no_reclaim_scalar_only_deserved() {
    let o = replay("capacity-no-reclaim-scalar-only-deserved");
    assert!(o.evictions().is_empty() && o.pipelines().is_empty() && o.binds().is_empty(), "{:?}", o.decisions);
    // Twin: queue19 deserving 2 cpus as well is over its share on cpu with p31's 4:
    // p31 goes and p32 is pipelined onto n8.
    let deserved = [("deserved: {nvidia.com/gpu: 1}", "deserved: {cpu: 2, nvidia.com/gpu: 1}")];
    let o = replay_with("capacity-no-reclaim-scalar-only-deserved", &deserved);
    assert_eq!(o.evictions(), list(&["ns1/p31"]));
    assert_eq!(o.pipelines(), map(&[("ns1/p32", "n8")]));
}

#[test]
fn replay_capacity_no_reclaim_over_capability() {
    let o = replay("capacity-no-reclaim-over-capability");
    assert!(o.evictions().is_empty() && o.pipelines().is_empty() && o.binds().is_empty(), "{:?}", o.decisions);
    // Twin: queue21's capability at 9 cpus holds p33 + p34: allocate binds p34 on
    // n10, the only node with 2 free cpus, and nothing is evicted.
    let cap = [("capability: {cpu: 8, memory: 100Gi}", "capability: {cpu: 9, memory: 100Gi}")];
    let o = replay_with("capacity-no-reclaim-over-capability", &cap);
    assert_eq!(o.binds(), map(&[("ns1/p34", "n10")]));
    assert!(o.evictions().is_empty() && o.pipelines().is_empty(), "{:?}", o.decisions);
}

// capacity_test.go TestEnqueueAndAllocatable

#[test]
fn replay_capacity_enqueue_cpu_only_under_deserved() {
    let o = replay("capacity-enqueue-cpu-only-under-deserved");
    assert_eq!(o.binds(), map(&[("ns1/pod3", "n1")]));
}

#[test]
fn replay_capacity_enqueue_memory_only_under_deserved() {
    let o = replay("capacity-enqueue-memory-only-under-deserved");
    assert_eq!(o.binds(), map(&[("ns1/pod4", "n2")]));
}

#[test]
fn replay_capacity_enqueue_exceeds_capability() {
    let o = replay("capacity-enqueue-exceeds-capability");
    assert!(o.decisions.is_empty(), "{:?}", o.decisions);
    assert_eq!(o.job("ns1/pg5")["state"], "Pending");
    // Twin: q1's capability raised to 4 cpu / 4G has room for pg5's 1 cpu / 1G:
    // it is admitted.
    let o = replay_with(
        "capacity-enqueue-exceeds-capability",
        &[(
            "deserved: {cpu: 2, memory: 2G}, capability: {cpu: 2, memory: 2G}}",
            "deserved: {cpu: 2, memory: 2G}, capability: {cpu: 4, memory: 4G}}",
        )],
    );
    assert_eq!(o.phases(), [("ns1/pg5".to_string(), "Inqueue".to_string())]);
}

#[test]
fn replay_capacity_enqueue_closed_queue() {
    let o = replay("capacity-enqueue-closed-queue");
    assert!(o.decisions.is_empty(), "{:?}", o.decisions);
    assert_eq!(o.job("ns1/pg6")["state"], "Pending");
    // Twin: q3 open admits pg6 and binds pod6 (1 cpu) on one of the two empty nodes.
    let o = replay_with("capacity-enqueue-closed-queue", &[(", state: Closed}", "}")]);
    assert_eq!(o.phases(), [("ns1/pg6".to_string(), "Inqueue".to_string())]);
    let b = o.binds();
    assert_eq!(b.keys().collect::<Vec<_>>(), ["ns1/pod6"]);
    assert!(["n1", "n2"].contains(&b["ns1/pod6"].as_str()), "{b:?}");
}

// ---------------------------------------------------------------------------
// Replays: proportion (plugins/proportion/proportion_test.go, TestEnqueueAndAllocable
// and TestAllocate)

#[test]
fn replay_proportion_enqueue_cpu_only_under_deserved() {
    let o = replay("proportion-enqueue-cpu-only-under-deserved");
    assert_eq!(o.binds(), map(&[("ns1/pod3", "n1")]));
    assert_eq!(o.phases()[0], ("ns1/pg3".to_string(), "Inqueue".to_string()));
}

#[test]
fn replay_proportion_enqueue_memory_only_under_deserved() {
    let o = replay("proportion-enqueue-memory-only-under-deserved");
    assert_eq!(o.binds(), map(&[("ns1/pod4", "n2")]));
}

#[test]
fn replay_proportion_enqueue_exceeds_capability() {
    let o = replay("proportion-enqueue-exceeds-capability");
    assert!(o.decisions.is_empty(), "{:?}", o.decisions);
    assert_eq!(o.job("ns1/pg5")["state"], "Pending");
    // Twin: q1's capability raised to 4 cpu / 4G has room for pg5's 1 cpu / 1G:
    // it is admitted.
    let o = replay_with(
        "proportion-enqueue-exceeds-capability",
        &[(
            "{name: q1, weight: 1, capability: {cpu: 2, memory: 2G}}",
            "{name: q1, weight: 1, capability: {cpu: 4, memory: 4G}}",
        )],
    );
    assert_eq!(o.phases(), [("ns1/pg5".to_string(), "Inqueue".to_string())]);
}

#[test]
fn replay_proportion_enqueue_closed_queue() {
    let o = replay("proportion-enqueue-closed-queue");
    assert!(o.decisions.is_empty(), "{:?}", o.decisions);
    assert_eq!(o.job("ns1/pg6")["state"], "Pending");
    // Twin: q3 open admits pg6 and binds pod6 (1 cpu) on one of the two empty nodes.
    let o = replay_with("proportion-enqueue-closed-queue", &[(", state: Closed}", "}")]);
    assert_eq!(o.phases(), [("ns1/pg6".to_string(), "Inqueue".to_string())]);
    let b = o.binds();
    assert_eq!(b.keys().collect::<Vec<_>>(), ["ns1/pod6"]);
    assert!(["n1", "n2"].contains(&b["ns1/pod6"].as_str()), "{b:?}");
}

#[test]
fn replay_proportion_allocate_queue_priority() {
    let o = replay("proportion-allocate-queue-priority");
    assert_eq!(o.binds(), map(&[("ns1/p3", "n2")]));
    assert!(o.evictions().is_empty());
}

// ---------------------------------------------------------------------------
// Replays: binpack (plugins/binpack/binpack_test.go, TestNode)

#[test]
fn replay_binpack_test_node() {
    for case in [1, 2] {
        let o = replay(&format!("binpack-testnode-case{case}"));
        assert_eq!(o.binds(), map(&[("c1/p1-twin", "n1")]), "case {case}");
    }
}

// ---------------------------------------------------------------------------
// Replays: network-topology-aware (actions/allocate/allocate_test.go,
// TestAllocateWithNetWorkTopologies)

fn leaf(node: &str) -> &str {
    node.split('-').next().expect("leaf prefix")
}

#[test]
fn replay_nt_soft_enough_resources() {
    assert_eq!(replay("nt-soft-enough-resources").binds().len(), 3);
}

#[test]
fn replay_nt_hard_tier1_cannot_fit() {
    assert!(replay("nt-hard-tier1-cannot-fit").binds().is_empty());
    // Twin: allowed up to tier 2, the three 2-cpu pods bind, one per 2-cpu node,
    // so they span both leaves.
    let b = replay_with("nt-hard-tier1-cannot-fit", &[("highestTierAllowed: 1", "highestTierAllowed: 2")]).binds();
    assert_eq!(b.keys().collect::<Vec<_>>(), ["c1/p1", "c1/p2", "c1/p3"]);
    assert_eq!(b.values().collect::<BTreeSet<_>>().len(), 3, "one pod per node: {b:?}");
    assert_eq!(b.values().map(|n| leaf(n)).collect::<BTreeSet<_>>(), ["s0", "s1"].into(), "{b:?}");
}

#[test]
fn replay_nt_hard_tier2_fits() {
    assert_eq!(replay("nt-hard-tier2-fits").binds().len(), 3);
}

#[test]
fn replay_nt_hard_tier1_two_pods() {
    let b = replay("nt-hard-tier1-two-pods").binds();
    assert_eq!(b.len(), 2);
    let leaves: BTreeSet<&str> = b.values().map(|n| leaf(n)).collect();
    assert_eq!(leaves.len(), 1, "one leaf: {b:?}");
}

#[test]
fn replay_nt_soft_affinity_two_hypernodes() {
    assert_eq!(replay("nt-soft-affinity-two-hypernodes").binds(), map(&[("c1/p1", "s1-n2")]));
}

#[test]
fn replay_nt_hard_rescheduled_cannot_cross_tier() {
    assert!(replay("nt-hard-rescheduled-cannot-cross-tier").binds().is_empty());
    // Twin: allowed up to tier 2, p3 (2 cpus) leaves the full leaf s0 for s1.
    let b = replay_with("nt-hard-rescheduled-cannot-cross-tier", &[("highestTierAllowed: 1", "highestTierAllowed: 2")])
        .binds();
    assert_eq!(b.keys().collect::<Vec<_>>(), ["c1/p3"]);
    assert_eq!(leaf(&b["c1/p3"]), "s1", "{b:?}");
}

#[test]
fn replay_nt_soft_rescheduled_can_cross_tier() {
    let b = replay("nt-soft-rescheduled-can-cross-tier").binds();
    assert_eq!(b.len(), 1);
    assert!(b.values().all(|n| leaf(n) == "s1"), "{b:?}");
}

// ---------------------------------------------------------------------------
// Scenario-level tests: several sessions, jobs arriving over time, real-looking
// confs (flags at Volcano's defaults).

const TIER1: &str = "      - plugins:\n        - name: priority\n        - name: gang\n        - name: conformance\n";

/// An inline Volcano conf: `actions`, tier 1 (priority, gang, conformance) and the
/// second tier's plugin lines.
pub(crate) fn conf(actions: &str, tier2: &[&str]) -> String {
    let mut s =
        format!("  scheduler:\n    inline: |\n      actions: \"{actions}\"\n      tiers:\n{TIER1}      - plugins:\n");
    for p in tier2 {
        s += &format!("        - {p}\n");
    }
    s
}

fn spec(nodes: &str, queues: &str, conf: &str, jobs: &str) -> String {
    format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  cluster:\n{nodes}\n  queues:\n{queues}\n{conf}  workload:\n    - jobs:\n{jobs}"
    )
}

fn started_at_zero(o: &Out, job: &str) -> usize {
    o.pods_of(job).iter().filter(|p| p["start_s"] == "0").count()
}

/// proportion, semantics worked example: 10 cpus, three weight-1 queues asking 1, 6 and
/// 6 one-cpu pods get deserved 1 / 4.5 / 4.5, so only 1 + 4 + 4 pods start and one cpu
/// stays idle although pods wait.
#[test]
fn proportion_fractional_deserved_leaves_a_cpu_idle() {
    let jobs = "      - {name: a, queue: qa, minAvailable: 1, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 1}}]}\n      - {name: b, queue: qb, minAvailable: 1, duration: 1h, tasks: [{name: w, replicas: 6, resources: {cpu: 1}}]}\n      - {name: c, queue: qc, minAvailable: 1, duration: 1h, tasks: [{name: w, replicas: 6, resources: {cpu: 1}}]}\n";
    let o = run_text(&spec(
        "    nodes:\n      - {name: n1, cpu: 10, memory: 1Ti}",
        "    - {name: qa}\n    - {name: qb}\n    - {name: qc}",
        &conf("enqueue, allocate", &["name: drf", "name: predicates", "name: proportion", "name: nodeorder"]),
        jobs,
    ));
    assert_eq!((started_at_zero(&o, "a"), started_at_zero(&o, "b"), started_at_zero(&o, "c")), (1, 4, 4));
}

fn gang_preempt(min_low: u32) -> Out {
    let jobs = format!(
        "      - {{name: low, priority: 1, minAvailable: {min_low}, duration: 1h, tasks: [{{name: w, replicas: 4, resources: {{cpu: 1}}}}]}}\n      - {{name: high, submitAt: 10s, priority: 100, duration: 10m, tasks: [{{name: w, replicas: 1, resources: {{cpu: 1}}}}]}}\n"
    );
    run_text(&spec(
        "    nodes:\n      - {name: n1, cpu: 4, memory: 16Gi}",
        "    - {name: default}",
        // No drf or proportion in tier 2: gang alone decides the victims (a victim-less
        // tier does not veto the next, so drf would evict past gang; and proportion's
        // enqueue vote would keep `high` out of the session altogether).
        &conf("allocate, preempt", &["name: predicates", "name: nodeorder"]),
        &jobs,
    ))
}

/// preempt + gang: a running gang at exactly minAvailable gives no victim, so the
/// high-priority job waits for it to finish; with minAvailable below its size, one pod
/// is preempted and the high-priority job starts long before.
#[test]
fn preempt_never_breaks_a_gang_below_min_available() {
    let o = gang_preempt(4);
    assert!(o.evictions().is_empty(), "{:?}", o.evictions());
    assert_eq!(o.job("high")["start_s"], "3600");
    assert_eq!(o.job("low")["preemptions"], "0");

    let o = gang_preempt(2);
    assert_eq!(o.evictions().len(), 1, "{:?}", o.evictions());
    assert!(o.of("evict").iter().all(|d| d["action"] == "preempt" && d["job"] == "low"));
    assert_eq!(o.pods_of("low").iter().filter(|p| p["reason_end"] == "preempted").count(), 1);
    let start: f64 = o.job("high")["start_s"].parse().expect("started");
    assert!((10.0..100.0).contains(&start), "high starts after the victim's grace period: {start}");
}

fn reclaim_run(reclaimable: bool) -> Out {
    let jobs = "      - {name: hog, queue: q1, minAvailable: 1, duration: 1h, tasks: [{name: w, replicas: 4, resources: {cpu: 1}}]}\n      - {name: late, queue: q2, submitAt: 10s, minAvailable: 2, duration: 10m, tasks: [{name: w, replicas: 2, resources: {cpu: 1}}]}\n";
    run_text(&spec(
        "    nodes:\n      - {name: n1, cpu: 4, memory: 16Gi}",
        &format!("    - {{name: q1, reclaimable: {reclaimable}}}\n    - {{name: q2}}"),
        &conf("enqueue, allocate, reclaim", &["name: drf", "name: predicates", "name: proportion", "name: nodeorder"]),
        jobs,
    ))
}

/// reclaim takes back the late queue's deserved half (its gang of 2) only from a
/// reclaimable queue.
#[test]
fn reclaim_only_from_reclaimable_queues() {
    let o = reclaim_run(false);
    assert!(o.evictions().is_empty(), "{:?}", o.evictions());
    assert_eq!(o.job("late")["start_s"], "3600");

    let o = reclaim_run(true);
    assert_eq!(o.evictions().len(), 2, "q2 deserves 2 of the 4 cpus: {:?}", o.evictions());
    assert!(o.of("evict").iter().all(|d| d["action"] == "reclaim" && d["job"] == "hog"));
    assert_eq!(o.pods_of("hog").iter().filter(|p| p["reason_end"] == "reclaimed").count(), 2);
    assert!(o.job("late")["start_s"].parse::<f64>().expect("started") < 100.0);
}

fn binpack_run(tier2: &[&str]) -> String {
    let jobs = "      - {name: old, duration: 1h, running: {w: [n2]}, tasks: [{name: w, replicas: 1, resources: {cpu: 2, memory: 2Gi}}]}\n      - {name: new, submitAt: 10s, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 2, memory: 2Gi}}]}\n";
    let o = run_text(&spec(
        "    nodes:\n      - {name: n1, cpu: 8, memory: 16Gi}\n      - {name: n2, cpu: 8, memory: 16Gi}",
        "    - {name: default}",
        &conf("enqueue, allocate", tier2),
        jobs,
    ));
    o.binds()["default/new-w-0"].clone()
}

/// binpack prefers the fuller node; nodeorder's least-requested alone spreads.
#[test]
fn binpack_prefers_fuller_nodes() {
    assert_eq!(binpack_run(&["name: predicates", "name: nodeorder"]), "n1");
    assert_eq!(
        binpack_run(&["name: predicates", "name: nodeorder", "{name: binpack, arguments: {binpack.weight: 10}}"]),
        "n2"
    );
}

/// network-topology-aware: a hard tier-1 job is confined to one leaf even when the
/// cluster has room across leaves, and a hard job no leaf can hold waits.
#[test]
fn topology_hard_job_confined_to_one_leaf() {
    let run = |mode: &str| {
        let jobs = format!(
            "      - {{name: x, duration: 1h, running: {{w: [n1]}}, tasks: [{{name: w, replicas: 1, resources: {{cpu: 4}}}}]}}\n      - {{name: t, submitAt: 10s, duration: 1h, networkTopology: {{mode: {mode}, highestTierAllowed: 1}}, tasks: [{{name: w, replicas: 2, resources: {{cpu: 4}}}}]}}\n      - {{name: big, submitAt: 20s, duration: 1h, networkTopology: {{mode: hard, highestTierAllowed: 1}}, tasks: [{{name: w, replicas: 3, resources: {{cpu: 3}}}}]}}\n"
        );
        run_text(&spec(
            "    nodes:\n      - {name: n1, cpu: 4, memory: 16Gi}\n      - {name: n2, cpu: 4, memory: 16Gi}\n      - {name: n3, cpu: 4, memory: 16Gi}\n      - {name: n4, cpu: 4, memory: 16Gi}\n    hyperNodes:\n      - {name: s0, tier: 1, members: [n1, n2]}\n      - {name: s1, tier: 1, members: [n3, n4]}\n      - {name: s2, tier: 2, members: [s0, s1]}",
            "    - {name: default}",
            &conf(
                "enqueue, allocate",
                &[
                    "name: drf",
                    "name: predicates",
                    "name: proportion",
                    "name: nodeorder",
                    "name: network-topology-aware",
                ],
            ),
            &jobs,
        ))
    };
    let o = run("hard");
    let nodes: BTreeSet<String> = o.pods_of("t").iter().map(|p| p["node"].clone()).collect();
    assert_eq!(nodes, ["n3", "n4"].iter().map(|s| s.to_string()).collect(), "t stays in leaf s1");
    assert_eq!(o.job("t")["highest_tier"], "1");
    // `big` (3 three-cpu pods, hard tier 1) fits no leaf (n2 is the only free node left) and waits.
    assert_ne!(o.job("big")["start_s"], "20");
}

/// A pod pipelined in a session counts against its queue's quota for the rest of
/// the session, as in Volcano, whose `Statement.Pipeline` fires the same
/// `AllocateFunc` handlers as an allocation (proportion and capacity add the
/// pod to the queue's `allocated`). Queue `a` may hold 16 GPUs; `low` and
/// `other` hold 8 each. At 10 s `high` evicts `other` (30 s grace) and is
/// pipelined onto its node. At 20 s `high` is pipelined again (its nominated
/// node) — 8 held + 8 pipelined — so `late` (8 more) is refused, under either
/// plugin: before, the pipelined pod was not counted and `late` was bound onto
/// the idle node, taking the queue to 24 GPUs once `high` ran. Here `high`
/// binds when `other` is gone (40 s); at 1 h `low` ends and `other`, made again
/// by its controller, comes first; `late` binds when `high` ends (1 h 40 s).
#[test]
fn a_pipelined_pod_counts_against_its_queues_quota() {
    for plugin in ["proportion", "capacity"] {
        let job = |name: &str, prio: u32, at: u32| {
            format!(
                "      - {{name: {name}, queue: a, priority: {prio}, submitAt: {at}s, duration: 1h, tasks: [{{name: w, replicas: 1, resources: {{cpu: 1, nvidia.com/gpu: 8}}}}]}}\n"
            )
        };
        let text = format!(
            "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: pipelined-quota}}\nspec:\n  seed: 1\n  horizon: 2h\n  cluster:\n    nodes:\n      - {{name: n1, cpu: 64, memory: 256Gi, gpus: 8}}\n      - {{name: n2, cpu: 64, memory: 256Gi, gpus: 8}}\n      - {{name: n3, cpu: 64, memory: 256Gi, gpus: 8}}\n  queues:\n    - {{name: a, weight: 1, capability: {{nvidia.com/gpu: 16}}}}\n  scheduler:\n    inline: |\n      actions: \"allocate, preempt\"\n      tiers:\n      - plugins: [{{name: priority}}, {{name: gang, enablePreemptable: false}}, {{name: conformance}}]\n      - plugins: [{{name: drf}}, {{name: predicates}}, {{name: {plugin}}}, {{name: nodeorder}}]\n  workload:\n    - jobs:\n{}{}{}{}",
            job("low", 0, 0),
            job("other", 0, 0),
            job("high", 10, 10),
            job("late", 0, 20)
        );
        let want = [
            ("0", "bind", "default/low-w-0", "n3"),
            ("0", "bind", "default/other-w-0", "n1"),
            ("10", "evict", "default/other-w-0", "n1"),
            ("10", "pipeline", "default/high-w-0", "n1"),
            ("40", "bind", "default/high-w-0", "n1"),
            ("3600", "bind", "default/other-w-0", "n3"),
            ("3640", "bind", "default/late-w-0", "n1"),
        ];
        assert_eq!(run_text(&text).placements(), owned(&want), "{plugin}");
    }
}

/// drf's share of a preemptor counts the pods its job pipelined earlier in the
/// session (Volcano's `Statement.Pipeline` fires drf's `AllocateFunc`, which
/// adds the pod to the job's `attr.allocated`; `preemptableFn` reads it).
/// 16 GPUs on two nodes, held by `low` and `mid` (two 4-GPU pods each,
/// minAvailable 1); `high` (priority 10) asks for two 4-GPU pods. Its first pod
/// may take a `mid` pod: share (0 + 4)/16 = 0.25 against mid's (8 − 4)/16 =
/// 0.25, equal. Its second, with the first pipelined, has share (4 + 4)/16 =
/// 0.5 against low's (8 − 4)/16 = 0.25 and mid's (4 − 4)/16 = 0: no victim,
/// so the gang is not pipelined and the statement is discarded; `high` binds
/// when `low` and `mid` end. Before, the pipelined pod was not counted (share
/// 0.25 again): both pods preempted at 10 s and bound at 40 s.
#[test]
fn drf_counts_a_preemptors_pipelined_pods_in_its_share() {
    let job = |name: &str, prio: u32, at: u32, min: u32| {
        format!(
            "      - {{name: {name}, priority: {prio}, submitAt: {at}s, duration: 1h, minAvailable: {min}, tasks: [{{name: w, replicas: 2, resources: {{cpu: 1, nvidia.com/gpu: 4}}}}]}}\n"
        )
    };
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: drf-pipelined-share}}\nspec:\n  seed: 1\n  horizon: 2h\n  cluster:\n    nodes:\n      - {{name: n1, cpu: 64, memory: 256Gi, gpus: 8}}\n      - {{name: n2, cpu: 64, memory: 256Gi, gpus: 8}}\n  scheduler:\n    inline: |\n      actions: \"allocate, preempt\"\n      tiers:\n      - plugins: [{{name: priority}}, {{name: gang}}, {{name: conformance}}, {{name: drf}}]\n      - plugins: [{{name: predicates}}, {{name: nodeorder}}]\n  workload:\n    - jobs:\n{}{}{}",
        job("low", 0, 0, 1),
        job("mid", 0, 0, 1),
        job("high", 10, 10, 2)
    );
    let want = [
        ("0", "bind", "default/low-w-0", "n2"),
        ("0", "bind", "default/mid-w-0", "n1"),
        ("0", "bind", "default/low-w-1", "n1"),
        ("0", "bind", "default/mid-w-1", "n2"),
        ("3600", "bind", "default/high-w-0", "n1"),
        ("3600", "bind", "default/high-w-1", "n2"),
    ];
    assert_eq!(run_text(&text).placements(), owned(&want));
}

/// A decision row without its phase rows: (t_s, kind, pod, node).
type Placement = (String, String, String, String);

/// Expected [`Placement`]s written as string slices.
fn owned(rows: &[(&str, &str, &str, &str)]) -> Vec<Placement> {
    rows.iter().map(|&(t, k, p, n)| (t.into(), k.into(), p.into(), n.into())).collect()
}
