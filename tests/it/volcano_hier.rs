//! Hierarchical queues in the Volcano pipeline: `capacity` and `drf` with
//! `enableHierarchy`, the queue tree checks at load, and `task-topology`. Replays of
//! Volcano's unit tests (`tests/volcano/*-hier-*.yaml`) and hand-computed scenarios.

use super::volcano::{list, map, replay, run_text};
use std::path::Path;

// ---------------------------------------------------------------------------
// Replays: capacity (plugins/capacity/capacity_test.go,
// Test_capacityPlugin_OnSessionOpenWithHierarchy)

#[test]
fn replay_capacity_hier_leaf_allocatable() {
    assert_eq!(replay("capacity-hier-leaf-allocatable").binds(), map(&[("ns1/pg1-p-0", "n1")]));
}

#[test]
fn replay_capacity_hier_gang_under_capability() {
    let o = replay("capacity-hier-gang-under-capability");
    assert_eq!(o.binds(), map(&[("ns1/pg3-p-0", "n1"), ("ns1/pg3-p-1", "n1")]));
}

#[test]
fn replay_capacity_hier_reclaim_nearest_queue() {
    let o = replay("capacity-hier-reclaim-nearest-queue");
    assert_eq!(o.evictions(), list(&["ns1/pg5-b-0"]));
    assert_eq!(o.pipelines(), map(&[("ns1/pg6-p-0", "n1")]));
}

#[test]
fn replay_capacity_hier_ancestor_real_capability() {
    let o = replay("capacity-hier-ancestor-real-capability");
    assert!(o.binds().is_empty() && o.pipelines().is_empty() && o.evictions().is_empty());
}

#[test]
fn replay_capacity_hier_inherit_capability() {
    assert_eq!(replay("capacity-hier-inherit-capability").binds(), map(&[("ns1/pg9-p-0", "n1")]));
}

#[test]
fn replay_capacity_hier_enqueue_ancestor_capability() {
    let o = replay("capacity-hier-enqueue-ancestor-capability");
    assert_eq!(o.phases(), vec![("pg10".to_string(), "Inqueue".to_string())]);
}

#[test]
fn replay_capacity_hier_inherit_scalar() {
    let o = replay("capacity-hier-inherit-scalar");
    assert_eq!(o.binds(), map(&[("ns1/pg14-p-0", "n2"), ("ns1/pg15-p-0", "n2")]));
}

#[test]
fn replay_capacity_hier_reclaim_scalar_deserved() {
    let o = replay("capacity-hier-reclaim-scalar-deserved");
    assert_eq!(o.evictions(), list(&["ns1/pg17-p-0"]));
    assert_eq!(o.pipelines(), map(&[("ns1/pg16-p-0", "n3")]));
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
