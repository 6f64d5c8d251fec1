//! Hierarchical queues in the Volcano pipeline: `capacity` and `drf` with
//! `enableHierarchy`, the queue tree checks at load, and `task-topology`. Replays of
//! Volcano's unit tests (`tests/volcano/*-hier-*.yaml`) and hand-computed scenarios.

use super::volcano::{Out, list, map, replay, replay_with, run_text};
use std::path::Path;

// ---------------------------------------------------------------------------
// Replays: capacity (plugins/capacity/capacity_test.go,
// Test_capacityPlugin_OnSessionOpenWithHierarchy and AncestorReclaimScenarios)

#[test]
fn replay_capacity_hier_leaf_allocatable() {
    assert_eq!(replay("capacity-hier-leaf-allocatable").binds(), map(&[("ns1/p1", "n1")]));
}

#[test]
fn replay_capacity_hier_gang_under_capability() {
    let o = replay("capacity-hier-gang-under-capability");
    assert_eq!(o.binds(), map(&[("ns1/p3", "n1"), ("ns1/p4", "n1")]));
}

#[test]
fn replay_capacity_hier_reclaim_nearest_queue() {
    let o = replay("capacity-hier-reclaim-nearest-queue");
    assert_eq!(o.evictions(), list(&["ns1/p7"]));
    assert_eq!(o.pipelines(), map(&[("ns1/p8", "n1")]));
}

#[test]
fn replay_capacity_hier_ancestor_real_capability() {
    let o = replay("capacity-hier-ancestor-real-capability");
    assert!(o.binds().is_empty() && o.pipelines().is_empty() && o.evictions().is_empty());
    // Twin: q3's capability at 7 cpu / 7Gi holds p6 + p9 + p10 (2 + 2 + 3 cpus):
    // p10 binds on n1, the only node (4 of its 8 cpus free).
    let cap = [("capability: {cpu: 4, memory: 4Gi, pods: 10}}", "capability: {cpu: 7, memory: 7Gi, pods: 10}}")];
    let o = replay_with("capacity-hier-ancestor-real-capability", &cap);
    assert_eq!(o.binds(), map(&[("ns1/p10", "n1")]));
    assert!(o.pipelines().is_empty() && o.evictions().is_empty());
}

#[test]
fn replay_capacity_hier_inherit_capability() {
    let o = replay("capacity-hier-inherit-capability");
    assert_eq!(o.binds(), map(&[("ns1/p11", "n1")]));
    // pg9 starts Running without a running pod: it keeps that phase through the
    // session, so enqueue passes over it (as Volcano's does). At the close p11 is
    // still Binding in Volcano's cache, so no pod of pg9 is scheduled and
    // `getPodGroupPhase` gives Pending (the group is not Inqueue).
    assert_eq!(o.phases(), vec![("ns1/pg9".to_string(), "Pending".to_string())]);
}

#[test]
fn replay_capacity_hier_enqueue_ancestor_capability() {
    let o = replay("capacity-hier-enqueue-ancestor-capability");
    assert_eq!(o.phases(), vec![("ns1/pg10".to_string(), "Inqueue".to_string())]);
}

#[test]
fn replay_capacity_hier_scalar_deserved() {
    assert_eq!(replay("capacity-hier-scalar-deserved").binds(), map(&[("ns1/p12", "n-gpu")]));
}

#[test]
fn replay_capacity_hier_zero_scalar_deserved() {
    assert_eq!(replay("capacity-hier-zero-scalar-deserved").binds(), map(&[("ns1/p13", "n2")]));
}

#[test]
fn replay_capacity_hier_inherit_scalar() {
    let o = replay("capacity-hier-inherit-scalar");
    assert_eq!(o.binds(), map(&[("ns1/p14", "n2"), ("ns1/p15", "n2")]));
}

#[test]
fn replay_capacity_hier_reclaim_scalar_deserved() {
    let o = replay("capacity-hier-reclaim-scalar-deserved");
    assert_eq!(o.evictions(), list(&["ns1/p17"]));
    assert_eq!(o.pipelines(), map(&[("ns1/p16", "n3")]));
}

// Test_capacityPlugin_AncestorReclaimScenarios

#[test]
fn replay_capacity_hier_level0_leaf_reclaim() {
    let o = replay("capacity-hier-level0-leaf-reclaim");
    assert_eq!(o.evictions(), list(&["ns1/p-victim"]));
    assert_eq!(o.pipelines(), map(&[("ns1/p-reclaimer", "n1")]));
}

// ---------------------------------------------------------------------------
// Hand-computed scenarios: hierarchical capacity

fn capacity_scenario(hierarchy: bool, queues: &str, nodes: &str, jobs: &str) -> String {
    format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  sessions: 1\n  cluster:\n    nodes:\n{nodes}\n  queues:\n{queues}\n  scheduler:\n    inline: |\n      actions: \"enqueue, allocate\"\n      tiers:\n      - plugins:\n        - name: priority\n        - name: gang\n      - plugins:\n        - name: capacity\n          enableHierarchy: {hierarchy}\n        - name: predicates\n  workload:\n    - jobs:\n{jobs}\n"
    )
}

/// Two subtrees: a{a1, a2} with a1 using 3 of a's 4 deserved cpus, b{b1} using 2 of 4.
/// One cpu is left. Leaves compare through their ancestors below the root: a
/// (share 3/4) comes after b (2/4), so b1's job takes the cpu although a2's own share
/// (0) is lower than b1's (2/4) — which is what flat capacity goes by.
#[test]
fn hierarchical_queue_order_compares_subtrees() {
    let queues = "    - {name: a, deserved: {cpu: 4}}\n    - {name: a1, parent: a, deserved: {cpu: 2}}\n    - {name: a2, parent: a, deserved: {cpu: 2}}\n    - {name: b, deserved: {cpu: 4}}\n    - {name: b1, parent: b, deserved: {cpu: 4}}";
    let nodes = "      - {name: n1, cpu: 6, memory: 64Gi}";
    let jobs = "      - {name: ra, queue: a1, duration: 1h, running: {w: [n1]}, tasks: [{name: w, replicas: 1, resources: {cpu: 3}}]}\n      - {name: rb, queue: b1, duration: 1h, running: {w: [n1]}, tasks: [{name: w, replicas: 1, resources: {cpu: 2}}]}\n      - {name: ja, queue: a2, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 1}}]}\n      - {name: jb, queue: b1, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 1}}]}";
    let hier = run_text(&capacity_scenario(true, queues, nodes, jobs));
    assert_eq!(hier.binds(), map(&[("default/jb-w-0", "n1")]));
    // Flat capacity ignores the tree (the parents hold no jobs): a2 goes first.
    let flat = run_text(&capacity_scenario(false, queues, nodes, jobs));
    assert_eq!(flat.binds(), map(&[("default/ja-w-0", "n1")]));
}

/// eng (capability 4 cpus) > dev, prod (capability inherited). dev's gang of 3
/// is admitted first (name order breaks the share tie of two best-effort queues);
/// prod's gang of 3 then fails eng's check at enqueue: 3 + 3 inqueue > 4.
#[test]
fn ancestor_capability_bounds_children_together() {
    let queues =
        "    - {name: eng, capability: {cpu: 4}}\n    - {name: dev, parent: eng}\n    - {name: prod, parent: eng}";
    let nodes = "      - {name: n1, cpu: 8, memory: 64Gi}";
    let jobs = "      - {name: d, queue: dev, duration: 1h, tasks: [{name: w, replicas: 3, resources: {cpu: 1}}]}\n      - {name: p, queue: prod, duration: 1h, tasks: [{name: w, replicas: 3, resources: {cpu: 1}}]}";
    let o = run_text(&capacity_scenario(true, queues, nodes, jobs));
    assert_eq!(o.binds(), map(&[("default/d-w-0", "n1"), ("default/d-w-1", "n1"), ("default/d-w-2", "n1")]));
    assert!(o.phases().iter().all(|(j, _)| j == "d"), "{:?}", o.phases());
    // Without the hierarchy both fit the 8-cpu node.
    assert_eq!(run_text(&capacity_scenario(false, queues, nodes, jobs)).binds().len(), 6);
}

/// A job in a queue with child queues makes Volcano refuse the whole session
/// (`readyToSchedule` false): here `root` is defined, holds a job, and `a` hangs
/// under it implicitly, so nothing is admitted or placed.
#[test]
fn job_in_non_leaf_queue_stops_hierarchical_capacity() {
    let queues = "    - {name: root}\n    - {name: a}";
    let nodes = "      - {name: n1, cpu: 8, memory: 64Gi}";
    let jobs = "      - {name: r, queue: root, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 1}}]}\n      - {name: x, queue: a, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 1}}]}";
    let o = run_text(&capacity_scenario(true, queues, nodes, jobs));
    assert!(o.binds().is_empty() && o.phases().is_empty());
    assert_eq!(run_text(&capacity_scenario(false, queues, nodes, jobs)).binds().len(), 2);
}

// ---------------------------------------------------------------------------
// The queue tree at load

fn load_err(queues: &str, queue_of_job: &str) -> String {
    let text = capacity_scenario(
        true,
        queues,
        "      - {name: n1, cpu: 8, memory: 64Gi}",
        &format!("      - {{name: j, queue: {queue_of_job}, duration: 1h, tasks: [{{name: w, replicas: 1}}]}}"),
    );
    match lahar::scenario::load_str(&text, "s.yaml", Path::new("")) {
        Ok(_) => panic!("loaded"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn queue_tree_errors_are_located() {
    let e = load_err("    - {name: a, parent: nope}", "a");
    assert!(e.contains("s.yaml:10:25") && e.contains("spec.queues[0].parent"), "{e}");
    assert!(e.contains("parent queue `nope` does not exist; defined queues: a (or `root`)"), "{e}");
    let e = load_err("    - {name: a, parent: b}\n    - {name: b, parent: a}", "a");
    assert!(e.contains("spec.queues[0].parent: queue `a` is its own ancestor (cycle in `parent`)"), "{e}");
    assert!(e.contains("spec.queues[1].parent: queue `b` is its own ancestor"), "{e}");
    let e = load_err("    - {name: a, parent: a}", "a");
    assert!(e.contains("queue `a` cannot be its own parent"), "{e}");
    let e = load_err("    - {name: root, parent: a}\n    - {name: a}", "a");
    assert!(e.contains("spec.queues[0].parent: the `root` queue is the top of the queue tree"), "{e}");
    let e = load_err("    - {name: eng}\n    - {name: dev, parent: eng}", "eng");
    assert!(e.contains("spec.workload[0].jobs[0].queue: queue `eng` has child queues; jobs go to leaf queues"), "{e}");
}

// ---------------------------------------------------------------------------
// Replays: hierarchical drf (plugins/drf/hdrf_test.go, TestHDRF)

/// Binds per job (PodGroups of the namespace `default` are named without it).
fn binds_per_job(o: &super::volcano::Out) -> std::collections::BTreeMap<String, usize> {
    let mut m = std::collections::BTreeMap::new();
    for d in o.of("bind") {
        *m.entry(d["job"].clone()).or_insert(0) += 1;
    }
    m
}

fn counts(v: &[(&str, usize)]) -> std::collections::BTreeMap<String, usize> {
    v.iter().map(|(k, n)| (k.to_string(), *n)).collect()
}

#[test]
fn replay_hdrf_rescaling() {
    let o = replay("hdrf-rescaling");
    // pg1: 5 × (1 cpu, 1G); pg21: 5 × (1 cpu, 0G); pg22: 5 × (0 cpu, 1G).
    assert_eq!(binds_per_job(&o), counts(&[("pg1", 5), ("pg21", 5), ("pg22", 5)]));
}

#[test]
fn replay_hdrf_blocking_nodes() {
    let o = replay("hdrf-blocking-nodes");
    assert_eq!(binds_per_job(&o), counts(&[("pg1", 10), ("pg2", 10), ("pg31", 10), ("pg32", 15), ("pg4", 15)]));
}

// ---------------------------------------------------------------------------
// Hand-computed scenarios: hierarchical drf

fn hdrf_scenario(actions: &str, hierarchy: bool, queues: &str, node_cpu: u32, jobs: &str) -> String {
    format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  sessions: 1\n  cluster:\n    nodes:\n      - {{name: n1, cpu: {node_cpu}, memory: 64Gi}}\n  queues:\n{queues}\n  scheduler:\n    inline: |\n      actions: \"{actions}\"\n      tiers:\n      - plugins:\n        - name: priority\n        - name: gang\n          enablePreemptable: false\n          enableReclaimable: false\n        - name: drf\n          enableHierarchy: {hierarchy}\n        - name: predicates\n  workload:\n    - jobs:\n{jobs}\n"
    )
}

/// 14 cpus, 13 running: dev 2 and prod 6 (under eng), alpha 5; every job wants 9.
/// hdrf scales eng's children to the smaller share: 2 + 6 × (2/14)/(6/14) = 4 cpus,
/// 4/14 < alpha's 5/14, and inside eng dev (2/14) is below prod (6/14): dev's next
/// pod takes the last cpu. Without the hierarchy drf does not order queues and the
/// name order puts alpha first.
#[test]
fn hdrf_queue_order_scales_subtrees() {
    let queues =
        "    - {name: eng}\n    - {name: dev, parent: eng}\n    - {name: prod, parent: eng}\n    - {name: alpha}";
    let job = |name: &str, q: &str, running: usize| {
        let nodes = vec!["n1"; running].join(", ");
        format!(
            "      - {{name: {name}, queue: {q}, minAvailable: 1, duration: 1h, running: {{w: [{nodes}]}}, tasks: [{{name: w, replicas: 9, minAvailable: 1, resources: {{cpu: 1}}}}]}}"
        )
    };
    let jobs = [job("d", "dev", 2), job("p", "prod", 6), job("a", "alpha", 5)].join("\n");
    let o = run_text(&hdrf_scenario("enqueue, allocate", true, queues, 14, &jobs));
    assert_eq!(o.binds(), map(&[("default/d-w-2", "n1")]));
    let o = run_text(&hdrf_scenario("enqueue, allocate", false, queues, 14, &jobs));
    assert_eq!(o.binds(), map(&[("default/a-w-5", "n1")]));
}

/// a holds the whole 4-cpu node with 4 pods; b's job waits. Moving one cpu from a
/// to b gives b 1/4 against a's 3/4 (both saturated: cpu is fully allocated), so
/// with equal weights every pod of a is a victim and one is evicted for b. With
/// a's weight 4, a compares at (3/4)/4 < 1/4: no victim, no eviction.
#[test]
fn hdrf_reclaim_compares_weighted_queue_shares() {
    let jobs = "      - {name: ja, queue: a, minAvailable: 1, duration: 1h, running: {w: [n1, n1, n1, n1]}, tasks: [{name: w, replicas: 4, minAvailable: 1, resources: {cpu: 1}}]}\n      - {name: jb, queue: b, minAvailable: 1, duration: 1h, tasks: [{name: w, replicas: 2, minAvailable: 1, resources: {cpu: 1}}]}";
    let equal = "    - {name: a}\n    - {name: b}";
    let o = run_text(&hdrf_scenario("enqueue, allocate, reclaim", true, equal, 4, jobs));
    assert_eq!(o.evictions(), list(&["default/ja-w-3"]));
    assert_eq!(o.pipelines(), map(&[("default/jb-w-0", "n1")]));
    let heavy = "    - {name: a, weight: 4}\n    - {name: b}";
    let o = run_text(&hdrf_scenario("enqueue, allocate, reclaim", true, heavy, 4, jobs));
    assert!(o.evictions().is_empty() && o.pipelines().is_empty());
}

// ---------------------------------------------------------------------------
// task-topology (plugins/task-topology). Volcano's own tests
// (topology_test.go, Test_readTopologyFromPgAnnotations) check the parsing of the
// annotations: lahar's structured `taskTopology` replaces the strings, and the
// invalid cases are load errors here.

fn topology_scenario(nodes: usize, topology: &str, tasks: &str, plugin: bool) -> String {
    let nodes: String = (1..=nodes).map(|i| format!("      - {{name: n{i}, cpu: 4, memory: 16Gi}}\n")).collect();
    let tt = if plugin { "        - name: task-topology\n" } else { "" };
    format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  sessions: 1\n  cluster:\n    nodes:\n{nodes}  scheduler:\n    inline: |\n      actions: \"enqueue, allocate\"\n      tiers:\n      - plugins:\n        - name: priority\n        - name: gang\n      - plugins:\n{tt}        - name: predicates\n  workload:\n    - jobs:\n      - {{name: j, duration: 1h, minAvailable: 1, taskTopology: {topology}, tasks: [{tasks}]}}\n"
    )
}

fn nodes_used(o: &super::volcano::Out) -> std::collections::BTreeSet<String> {
    o.binds().into_values().collect()
}

/// ps and workers are affine: one bucket of 3 pods (3 cpus, which one 4-cpu node
/// holds). The first pod scores 3 × 100 / 3 everywhere; each next pod scores
/// 100 on the node holding its bucket-mates against (left) × 100 / 3 elsewhere.
#[test]
fn task_topology_affinity_colocates_a_bucket() {
    let tasks = "{name: ps, replicas: 1, minAvailable: 1, resources: {cpu: 1}}, {name: worker, replicas: 2, minAvailable: 0, resources: {cpu: 1}}";
    let o = run_text(&topology_scenario(3, "{affinity: [[ps, worker]]}", tasks, true));
    assert_eq!(o.binds().len(), 3);
    assert_eq!(nodes_used(&o).len(), 1, "{:?}", o.binds());
}

/// Self-anti-affine workers each get their own bucket; a worker scores 0 where this
/// session already put a worker and 100 elsewhere, so three workers take three nodes.
#[test]
fn task_topology_anti_affinity_spreads() {
    let tasks = "{name: worker, replicas: 3, minAvailable: 1, resources: {cpu: 1}}";
    let o = run_text(&topology_scenario(3, "{antiAffinity: [[worker]]}", tasks, true));
    assert_eq!(nodes_used(&o).len(), 3, "{:?}", o.binds());
}

/// `taskOrder: [worker, ps]` places the workers before the ps (one bucket: the
/// user order decides inside it); without the plugin the ps, first task, goes first.
#[test]
fn task_topology_task_order() {
    let tasks = "{name: ps, replicas: 1, minAvailable: 1, resources: {cpu: 1}}, {name: worker, replicas: 2, minAvailable: 0, resources: {cpu: 1}}";
    let topo = "{affinity: [[ps, worker]], taskOrder: [worker, ps]}";
    let o = run_text(&topology_scenario(1, topo, tasks, true));
    assert_eq!(o.bind_order(), list(&["default/j-worker-0", "default/j-worker-1", "default/j-ps-0"]));
    let o = run_text(&topology_scenario(1, topo, tasks, false));
    assert_eq!(o.bind_order(), list(&["default/j-ps-0", "default/j-worker-0", "default/j-worker-1"]));
}

#[test]
fn task_topology_errors_are_located() {
    let tasks = "{name: ps, replicas: 1}, {name: worker, replicas: 2}";
    let err =
        |topo: &str| match lahar::scenario::load_str(&topology_scenario(1, topo, tasks, true), "s.yaml", Path::new(""))
        {
            Ok(_) => panic!("loaded"),
            Err(e) => e.to_string(),
        };
    let e = err("{affinity: [[ps, worker]], taskOrder: [ps, worker, chief]}");
    assert!(e.contains("spec.workload[0].jobs[0].taskTopology.taskOrder[2]: task `chief` does not exist in the job; tasks: ps, worker"), "{e}");
    let e = err("{antiAffinity: [[ps, ps]]}");
    assert!(e.contains("taskTopology.antiAffinity[0][1]: task `ps` is listed twice"), "{e}");
    // Empty names are skipped, as Volcano's parser does ("ps,,worker;;").
    let ok = topology_scenario(1, "{affinity: [[ps, '', worker], ['']]}", tasks, true);
    assert!(lahar::scenario::load_str(&ok, "s.yaml", Path::new("")).is_ok());
}

// Test_capacityPlugin_AncestorReclaimScenarios at levels above 0.

#[test]
fn replay_capacity_hier_level1_case6() {
    let o = replay("capacity-hier-level1-case6");
    assert_eq!(o.evictions(), list(&["ns1/p-victim"]));
    assert_eq!(o.pipelines(), map(&[("ns1/p-reclaimer", "n1")]));
}

#[test]
fn replay_capacity_hier_level2_case7() {
    let o = replay("capacity-hier-level2-case7");
    assert!(o.evictions().is_empty(), "{:?}", o.evictions());
    assert!(o.pipelines().is_empty(), "{:?}", o.pipelines());
    // Twin: grand-b deserving 1 cpu / 1Gi is over its share with p-victim's 2 cpu /
    // 2Gi, so the level-2 check passes: p-victim goes and p-reclaimer takes n1.
    let grand = [(
        "{name: grand-b, parent: root, deserved: {cpu: 3, memory: 3Gi}",
        "{name: grand-b, parent: root, deserved: {cpu: 1, memory: 1Gi}",
    )];
    reclaims_n1(&replay_with("capacity-hier-level2-case7", &grand));
}

/// p-reclaimer reclaims n1 from p-victim (the ancestor-reclaim cases' one outcome
/// when reclaim happens: one node, one pod each).
fn reclaims_n1(o: &Out) {
    assert_eq!(o.evictions(), list(&["ns1/p-victim"]));
    assert_eq!(o.pipelines(), map(&[("ns1/p-reclaimer", "n1")]));
}

#[test]
fn replay_capacity_hier_ancestor_level_blocks() {
    for case in [
        "capacity-hier-level1-case8",
        "capacity-hier-level2-case9",
        "capacity-hier-level2-case10",
        "capacity-hier-level2-case11",
    ] {
        let o = replay(case);
        assert!(o.evictions().is_empty(), "{case}: {:?}", o.evictions());
        assert!(o.pipelines().is_empty(), "{case}: {:?}", o.pipelines());
    }
    // Twins. Cases 8-10: the reclaimer's leaf deserving 2 cpu / 2Gi gives a leaf
    // deserved signal for what p-reclaimer asks, so the shared ancestor no longer
    // blocks and p-victim's leaf (no deserved) gives it up.
    let deserving = |leaf: &str, parent: &str| {
        (
            format!("{{name: {leaf}, parent: {parent}}}"),
            format!("{{name: {leaf}, parent: {parent}, deserved: {{cpu: 2, memory: 2Gi}}}}"),
        )
    };
    for (case, leaf, parent) in [
        ("capacity-hier-level1-case8", "queue-a", "parent"),
        ("capacity-hier-level2-case9", "queue-a", "parent-a"),
        ("capacity-hier-level2-case10", "queue-shallow", "grand"),
    ] {
        let (from, to) = deserving(leaf, parent);
        reclaims_n1(&replay_with(case, &[(&from, &to)]));
    }
    // Case 11: deep-grand deserving 1 a100 is over its share with p-victim's 2.
    let grand = [(
        "{name: deep-grand, parent: root, deserved: {nvidia.com/a100: 2}}",
        "{name: deep-grand, parent: root, deserved: {nvidia.com/a100: 1}}",
    )];
    reclaims_n1(&replay_with("capacity-hier-level2-case11", &grand));
}

#[test]
fn replay_capacity_hier_ancestor_level_cross_parent() {
    for (case, evicted, pipelined) in [
        ("capacity-hier-level1-case1", "ns1/p1", "ns1/p2"),
        ("capacity-hier-level1-case2", "ns1/p4", "ns1/p5"),
        ("capacity-hier-level1-case3", "ns1/p3", "ns1/p6"),
    ] {
        let o = replay(case);
        assert_eq!(o.evictions(), list(&[evicted]), "{case}");
        assert_eq!(o.pipelines(), map(&[(pipelined, "n1")]), "{case}");
    }
    let o = replay("capacity-hier-level1-case4");
    assert!(o.evictions().is_empty() && o.pipelines().is_empty(), "{:?} {:?}", o.evictions(), o.pipelines());
}
