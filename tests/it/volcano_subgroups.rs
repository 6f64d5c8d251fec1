//! Replays of Volcano's sub-group scheduling (a PodGroup's `spec.subGroupPolicy`):
//! volcano-sh/volcano `pkg/scheduler/actions/allocate/allocate_test.go` (at the
//! mirrored head, ed72c7c), the 37 cases of `TestAllocateWithPartitionPolicyNetworkTopology`
//! (`tests/volcano/subgroup-*.yaml`, each citing its case; one session of allocate
//! with the test's gang, predicates and network-topology-aware flags), and the
//! scenario of `BenchmarkHyperNodeGradientFnPerformance`, built here.
//!
//! Each test checks what the Go case checks; a case that binds nothing also runs
//! its positive twin (the same replay with the one blocking condition changed,
//! `replay_with`) and checks who binds where. All cases but one set
//! `MinimalBindCheck`, so Volcano checks only the number of binds, exactly (it waits
//! for that many, then for none more); some of those cases also list an
//! `ExpectBindMap` that this leaves unchecked, noted at the test. The one case
//! without it compares the whole bind map. `ExpectBindNumsInHyperNode` is not used
//! by this Go test (and `CheckAll` never reads it). The benchmark checks nothing.

use super::volcano::{map, replay, replay_with, run_file};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The tier-1 HyperNode (leaf) of a node `s<k>-n<i>`.
fn leaf(node: &str) -> &str {
    node.split('-').next().expect("leaf")
}

/// The binds of `name` (a positive twin) with its one sub-group policy's
/// `highestTierAllowed` raised from `from` to `from + 1`.
fn binds_with_sub_tier(name: &str, from: u32) -> BTreeMap<String, String> {
    let policy = |t: u32| {
        format!("matchLabelKeys: [volcano.sh/task-spec]\n    networkTopology: {{mode: hard, highestTierAllowed: {t}}}")
    };
    replay_with(name, &[(&policy(from), &policy(from + 1))]).binds()
}

/// Volcano's case "podgroup hard network topology constrain and subGroup soft network topology constrain, can allocate job when resources are enough".
#[test]
fn replay_subgroup_hard_soft_enough_resources() {
    let b = replay("subgroup-hard-soft-enough-resources").binds();
    assert_eq!(b.len(), 3, "{b:?}");
}

/// Volcano's case "podgroup hard network topology constrain and subGroup soft network topology constrain, can allocate job when minavailable < replicas".
#[test]
fn replay_subgroup_hard_soft_min_lt_replicas() {
    let b = replay("subgroup-hard-soft-min-lt-replicas").binds();
    assert_eq!(b.len(), 2, "{b:?}");
}

/// Volcano's case "podgroup hard network topology constrain and subGroup soft network topology constrain, two available hyperNodes, can allocate job to nodes with affinity".
#[test]
fn replay_subgroup_hard_soft_affinity_two_hypernodes() {
    assert_eq!(replay("subgroup-hard-soft-affinity-two-hypernodes").binds(), map(&[("c1/p1", "s1-n2")]));
}

/// Volcano's case "podgroup hard network topology constrain and subGroup soft network topology constrain and tasks in job rescheduled, can allocate job when resources are enough".
#[test]
fn replay_subgroup_hard_soft_rescheduled_enough() {
    let b = replay("subgroup-hard-soft-rescheduled-enough").binds();
    assert_eq!(b.len(), 1, "{b:?}");
}

/// Volcano's case "podgroup hard network topology constrain and subGroup soft network topology constrain and tasks in job rescheduled, can allocate job when resources are enough and minavailable = replicas".
#[test]
fn replay_subgroup_hard_soft_rescheduled_min_eq_replicas() {
    let b = replay("subgroup-hard-soft-rescheduled-min-eq-replicas").binds();
    assert_eq!(b.len(), 1, "{b:?}");
}

/// Volcano's case "podgroup hard network topology constrain and subGroup soft network topology constrain and tasks in job rescheduled, can allocate job when cross highestTierAllowed tier and hyperNodesInfo has three tier".
#[test]
fn replay_subgroup_hard_soft_rescheduled_three_tier() {
    let b = replay("subgroup-hard-soft-rescheduled-three-tier").binds();
    assert_eq!(b.len(), 1, "{b:?}");
}

/// Volcano's case "podgroup soft network topology constrain and subGroup hard network topology constrain, can allocate job when resources are enough".
/// The case also lists `ExpectBindMap` `c1/p1` → `s1-n3`, unchecked under `MinimalBindCheck`.
#[test]
fn replay_subgroup_soft_hard_enough_resources() {
    let b = replay("subgroup-soft-hard-enough-resources").binds();
    assert_eq!(b.len(), 3, "{b:?}");
}

/// Volcano's case "podgroup soft network topology constrain and subGroup hard network topology constrain, can allocate job when minavailable < replicas".
#[test]
fn replay_subgroup_soft_hard_min_lt_replicas() {
    let b = replay("subgroup-soft-hard-min-lt-replicas").binds();
    assert_eq!(b.len(), 2, "{b:?}");
}

/// Volcano's case "podgroup soft network topology constrain and subGroup hard network topology constrain, can not allocate job when cross highestTierAllowed tier".
#[test]
fn replay_subgroup_soft_hard_cannot_cross_tier() {
    let b = replay("subgroup-soft-hard-cannot-cross-tier").binds();
    assert_eq!(b.len(), 0, "{b:?}");
    // Twin: the sub-jobs may span tier 2, so the 4 pods (2 cpus each) fill the 4
    // nodes of 2 cpus, one each; the 3 workers cannot all share a leaf.
    let b = binds_with_sub_tier("subgroup-soft-hard-cannot-cross-tier", 1);
    assert_eq!(b.keys().collect::<Vec<_>>(), ["c1/p1", "c1/p2", "c1/p3", "c1/p4"]);
    let nodes: BTreeSet<&str> = b.values().map(|n| n.as_str()).collect();
    assert_eq!(nodes, ["s0-n1", "s0-n2", "s1-n3", "s1-n4"].into(), "{b:?}");
}

/// Volcano's case "podgroup soft network topology constrain and subGroup hard network topology constrain and tasks in job rescheduled, can allocate job when resources are enough".
/// The case also lists `ExpectBindMap` `c1/p3` → `s1-n4`, unchecked under `MinimalBindCheck`.
#[test]
fn replay_subgroup_soft_hard_rescheduled_enough() {
    let b = replay("subgroup-soft-hard-rescheduled-enough").binds();
    assert_eq!(b.len(), 1, "{b:?}");
}

/// Volcano's case "podgroup soft network topology constrain and subGroup hard network topology constrain and tasks in job rescheduled, can not allocate job when cross highestTierAllowed tier and hyperNodesInfo has three tier".
#[test]
fn replay_subgroup_soft_hard_rescheduled_three_tier_cannot_cross() {
    let b = replay("subgroup-soft-hard-rescheduled-three-tier-cannot-cross").binds();
    assert_eq!(b.len(), 0, "{b:?}");
    // Twin: allowed up to tier 3, p5 leaves the full tier-2 HyperNode s1 for s2
    // (any of its four empty nodes).
    let b = binds_with_sub_tier("subgroup-soft-hard-rescheduled-three-tier-cannot-cross", 2);
    assert_eq!(b.keys().collect::<Vec<_>>(), ["c1/p5"]);
    assert!(["s5", "s6"].contains(&leaf(&b["c1/p5"])), "{b:?}");
}

/// Volcano's case "podgroup hard network topology constrain and subGroup hard network topology constrain, can allocate job when highestTierAllowed not reached".
#[test]
fn replay_subgroup_hard_hard_tier_not_reached() {
    let b = replay("subgroup-hard-hard-tier-not-reached").binds();
    assert_eq!(b.len(), 3, "{b:?}");
}

/// Volcano's case "podgroup hard network topology constrain and subGroup hard network topology constrain, can allocate job according to the network topology constrain of subGroup policy".
/// The case also lists `ExpectBindMap` `c1/p1` → `s1-n3`, unchecked under `MinimalBindCheck`.
#[test]
fn replay_subgroup_hard_hard_by_subgroup_policy() {
    let b = replay("subgroup-hard-hard-by-subgroup-policy").binds();
    assert_eq!(b.len(), 3, "{b:?}");
}

/// Volcano's case "podgroup hard network topology constrain and subGroup hard network topology constrain, can allocate job when multi hyperNodes are available".
#[test]
fn replay_subgroup_hard_hard_multi_hypernodes() {
    let b = replay("subgroup-hard-hard-multi-hypernodes").binds();
    assert_eq!(b.len(), 2, "{b:?}");
}

/// Volcano's case "podgroup hard network topology constrain and subGroup hard network topology constrain, can allocate job when minavailable < replicas".
#[test]
fn replay_subgroup_hard_hard_min_lt_replicas() {
    let b = replay("subgroup-hard-hard-min-lt-replicas").binds();
    assert_eq!(b.len(), 2, "{b:?}");
}

/// Volcano's case "podgroup hard network topology constrain and subGroup hard network topology constrain and tasks in job rescheduled, two available hyperNodes, can allocate job to nodes with affinity".
/// The case also lists `ExpectBindMap` `c1/p3` → `s1-n4`, unchecked under `MinimalBindCheck`.
#[test]
fn replay_subgroup_hard_hard_rescheduled_affinity() {
    let b = replay("subgroup-hard-hard-rescheduled-affinity").binds();
    assert_eq!(b.len(), 1, "{b:?}");
}

/// Volcano's case "podgroup hard network topology constrain and subGroup hard network topology constrain and tasks in job rescheduled, can allocate job when highestTierAllowed not reached and minavailable = replicas".
#[test]
fn replay_subgroup_hard_hard_rescheduled_min_eq_replicas() {
    let b = replay("subgroup-hard-hard-rescheduled-min-eq-replicas").binds();
    assert_eq!(b.len(), 1, "{b:?}");
}

/// Volcano's case "podgroup hard network topology constrain and subGroup hard network topology constrain and tasks in job rescheduled, can allocate job when highestTierAllowed not reached and hyperNodesInfo has three tier".
#[test]
fn replay_subgroup_hard_hard_rescheduled_three_tier() {
    let b = replay("subgroup-hard-hard-rescheduled-three-tier").binds();
    assert_eq!(b.len(), 1, "{b:?}");
}

/// Volcano's case "podgroup hard network topology constrain and subGroup hard network topology constrain and tasks in job rescheduled, can not allocate job when cross highestTierAllowed tier".
#[test]
fn replay_subgroup_hard_hard_rescheduled_cannot_cross_tier() {
    let b = replay("subgroup-hard-hard-rescheduled-cannot-cross-tier").binds();
    assert_eq!(b.len(), 0, "{b:?}");
    // Twin: allowed up to tier 2, p3 leaves the full leaf s0 for s1 (either node).
    let b = binds_with_sub_tier("subgroup-hard-hard-rescheduled-cannot-cross-tier", 1);
    assert_eq!(b.keys().collect::<Vec<_>>(), ["c1/p3"]);
    assert_eq!(leaf(&b["c1/p3"]), "s1", "{b:?}");
}

/// Volcano's case "podgroup hard network topology constrain and subGroup hard network topology constrain and tasks in job rescheduled, can not allocate job when cross highestTierAllowed tier and hyperNodesInfo has three tier".
#[test]
fn replay_subgroup_hard_hard_rescheduled_three_tier_cannot_cross() {
    let b = replay("subgroup-hard-hard-rescheduled-three-tier-cannot-cross").binds();
    assert_eq!(b.len(), 0, "{b:?}");
    // Twin: allowed up to tier 3 (the job's own limit), p5 leaves the full tier-2
    // HyperNode s1 for s2 (any of its four empty nodes).
    let b = binds_with_sub_tier("subgroup-hard-hard-rescheduled-three-tier-cannot-cross", 2);
    assert_eq!(b.keys().collect::<Vec<_>>(), ["c1/p5"]);
    assert!(["s5", "s6"].contains(&leaf(&b["c1/p5"])), "{b:?}");
}

/// Volcano's case "podgroup hard network topology constrain and subGroup hard network topology constrain and tasks in job rescheduled, can allocate job when LCAHyperNode is empty".
#[test]
fn replay_subgroup_hard_hard_rescheduled_lca_empty() {
    let b = replay("subgroup-hard-hard-rescheduled-lca-empty").binds();
    assert_eq!(b.len(), 1, "{b:?}");
}

/// Volcano's case "podgroup hard network topology constrain and subGroup hard network topology constrain, can allocate job according to the network topology constrain of subGroup policy with minSubGroups".
/// The case also lists `ExpectBindMap` `c1/p1` → `s2-n5`, unchecked under `MinimalBindCheck`.
#[test]
fn replay_subgroup_min_subgroups() {
    let b = replay("subgroup-min-subgroups").binds();
    assert_eq!(b.len(), 5, "{b:?}");
}

/// Volcano's case "podgroup hard network topology constrain and subGroup hard network topology constrain, can allocate job according to the network topology constrain of subGroup policy with minSubGroups and minavailable = replicas".
/// The case also lists `ExpectBindMap` `c1/p1` → `s1-n3`, unchecked under `MinimalBindCheck`.
#[test]
fn replay_subgroup_min_subgroups_min_eq_replicas() {
    let b = replay("subgroup-min-subgroups-min-eq-replicas").binds();
    assert_eq!(b.len(), 3, "{b:?}");
}

/// Volcano's case "podgroup hard network topology constrain and subGroup hard network topology constrain, can allocate job according to the network topology constrain of subGroup policy with minSubGroups and hypernode resources meet minSubGroups".
#[test]
fn replay_subgroup_min_subgroups_resources_meet() {
    let b = replay("subgroup-min-subgroups-resources-meet").binds();
    assert_eq!(b.len(), 4, "{b:?}");
}

/// Volcano's case "podgroup hard network topology constrain and subGroup hard network topology constrain, can not allocate job when minMember is not satisfied".
#[test]
fn replay_subgroup_min_member_not_satisfied() {
    let b = replay("subgroup-min-member-not-satisfied").binds();
    assert_eq!(b.len(), 0, "{b:?}");
    // Twin: minMember 3 (the 5 pods, 2 cpus each, need 10 of the 8 cpus).
    master_and_one_pair(&replay_with("subgroup-min-member-not-satisfied", &[("minMember: 5", "minMember: 3")]).binds());
}

/// The positive twins of the two cases with task2's worker pairs: master p1 and
/// the first pair (p2, p3) bind. A pair (subGroupSize 2, tier 1) takes both
/// nodes of one leaf, so p1 is in the other, which then has one node left: the
/// second pair (p4, p5) waits.
fn master_and_one_pair(b: &BTreeMap<String, String>) {
    assert_eq!(b.keys().collect::<Vec<_>>(), ["c1/p1", "c1/p2", "c1/p3"]);
    assert_eq!(leaf(&b["c1/p2"]), leaf(&b["c1/p3"]), "{b:?}");
    assert_ne!(b["c1/p2"], b["c1/p3"], "{b:?}");
    assert_ne!(leaf(&b["c1/p1"]), leaf(&b["c1/p2"]), "{b:?}");
}

/// Volcano's case "podgroup hard network topology constrain and subGroup hard network topology constrain, can not allocate job when minSubGroups is not satisfied".
#[test]
fn replay_subgroup_min_subgroups_not_satisfied() {
    let b = replay("subgroup-min-subgroups-not-satisfied").binds();
    assert_eq!(b.len(), 0, "{b:?}");
    // Twin: task2's minSubGroups 1 (both pairs and p1 need 10 cpus of the 8).
    master_and_one_pair(
        &replay_with("subgroup-min-subgroups-not-satisfied", &[("minSubGroups: 2", "minSubGroups: 1")]).binds(),
    );
}

/// Volcano's case "podgroup hard network topology constrain and subGroup hard network topology constrain with minSubGroups and tasks in job rescheduled, two available hyperNodes, can allocate job to nodes with affinity".
/// The case also lists `ExpectBindMap` `c1/p3` → `s1-n4`, unchecked under `MinimalBindCheck`.
#[test]
fn replay_subgroup_min_subgroups_rescheduled_affinity() {
    let b = replay("subgroup-min-subgroups-rescheduled-affinity").binds();
    assert_eq!(b.len(), 1, "{b:?}");
}

/// Volcano's case "podgroup hard network topology constrain and subGroup hard network topology constrain with minSubGroups and tasks in job rescheduled, can not allocate job when hypernode resources are insufficient.".
#[test]
fn replay_subgroup_min_subgroups_rescheduled_insufficient() {
    let b = replay("subgroup-min-subgroups-rescheduled-insufficient").binds();
    assert_eq!(b.len(), 0, "{b:?}");
    // Twin: allowed up to tier 2, p4 leaves the full leaf s1 (p2, p3) for s0-n2,
    // the only free node.
    let b = binds_with_sub_tier("subgroup-min-subgroups-rescheduled-insufficient", 1);
    assert_eq!(b, map(&[("c1/p4", "s0-n2")]));
}

/// Volcano's case "podgroup hard network topology constrain and subGroup hard network topology constrain with minSubGroups and tasks in job rescheduled, can allocate job when highestTierAllowed not reached and minAvailable = replicas".
#[test]
fn replay_subgroup_min_subgroups_rescheduled_min_eq_replicas() {
    let b = replay("subgroup-min-subgroups-rescheduled-min-eq-replicas").binds();
    assert_eq!(b.len(), 2, "{b:?}");
}

/// Volcano's case "podgroup hard network topology constrain and subGroup hard network topology constrain with minSubGroups and tasks in job rescheduled, can allocate job when subGroup is rescheduled".
#[test]
fn replay_subgroup_min_subgroups_subgroup_rescheduled() {
    let b = replay("subgroup-min-subgroups-subgroup-rescheduled").binds();
    assert_eq!(b.len(), 2, "{b:?}");
}

/// Volcano's case "rescheduling scenario: SubJob with multiple pending tasks, GetMinResources returns sum of all pending tasks resources".
#[test]
fn replay_subgroup_resched_multiple_pending() {
    let b = replay("subgroup-resched-multiple-pending").binds();
    assert_eq!(b.len(), 2, "{b:?}");
}

/// Volcano's case "rescheduling scenario: SubJob with single pending task".
#[test]
fn replay_subgroup_resched_single_pending() {
    let b = replay("subgroup-resched-single-pending").binds();
    assert_eq!(b.len(), 1, "{b:?}");
}

/// Volcano's case "rescheduling scenario: multiple SubJobs with different pending task counts".
#[test]
fn replay_subgroup_resched_multiple_subjobs() {
    let b = replay("subgroup-resched-multiple-subjobs").binds();
    assert_eq!(b.len(), 3, "{b:?}");
}

/// Volcano's case "rescheduling scenario: pending tasks with different resource requirements".
#[test]
fn replay_subgroup_resched_different_requests() {
    let b = replay("subgroup-resched-different-requests").binds();
    assert_eq!(b.len(), 2, "{b:?}");
}

/// Volcano's case "rescheduling scenario: insufficient resources for pending tasks allocation".
#[test]
fn replay_subgroup_resched_insufficient() {
    let b = replay("subgroup-resched-insufficient").binds();
    assert_eq!(b.len(), 0, "{b:?}");
    // Twin: minMember 2, met by p1 and one more: p2 (first in task order) takes
    // s0-n2, the only node with 4 free cpus; p3 waits.
    let b = replay_with("subgroup-resched-insufficient", &[("minMember: 3", "minMember: 2")]).binds();
    assert_eq!(b, map(&[("c1/p2", "s0-n2")]));
}

/// Volcano's case "rescheduling scenario: SubJob rescheduling within tier-2 HyperNode constraint".
#[test]
fn replay_subgroup_resched_within_tier2() {
    let b = replay("subgroup-resched-within-tier2").binds();
    assert_eq!(b.len(), 2, "{b:?}");
}

/// Volcano's case "no network topology at job or subgroup level but has SubJobPolicy, can allocate job successfully".
#[test]
fn replay_subgroup_no_network_topology() {
    let b = replay("subgroup-no-network-topology").binds();
    assert_eq!(b.len(), 2, "{b:?}");
}

// ---------------------------------------------------------------------------
// BenchmarkHyperNodeGradientFnPerformance (same file): its scenario, generated.

/// Volcano's plugin flags, in the order the replays write them.
const FLAGS: [&str; 25] = [
    "enableJobOrder",
    "enableTaskOrder",
    "enableQueueOrder",
    "enabledClusterOrder",
    "enableJobReady",
    "enableJobPipelined",
    "enableJobEnqueued",
    "enableJobStarving",
    "enablePreemptable",
    "enableReclaimable",
    "enablePreemptive",
    "enablePredicate",
    "enableNodeOrder",
    "enableBestNode",
    "enableTargetJob",
    "enableReservedNodes",
    "enabledVictim",
    "enabledOverused",
    "enabledAllocatable",
    "enabledHyperNodeOrder",
    "enabledHyperNodeGradient",
    "enabledSubJobReady",
    "enabledSubJobPipelined",
    "enabledSubJobOrder",
    "enableHierarchy",
];

/// One plugin of an inline conf with every flag written out: those in `on` true,
/// the rest false (a flag the Go tier does not set is false).
fn plugin(name: &str, on: &[&str]) -> String {
    let mut s = format!("        - name: {name}\n");
    for f in FLAGS {
        s += &format!("          {f}: {}\n", on.contains(&f));
    }
    s
}

/// The benchmark's cluster, conf and objects, written to `dir` as `scenario.yaml`
/// and `objects.yaml` (the scenario's path is returned): nodes n-0 … n-999 (4 cpu,
/// 8Gi, 10 pods), HyperNodes hn-tier1-0 … hn-tier1-99 (tier 1, ten nodes each, in
/// order) under hn-tier2-0 (tier 2), queue q1 (weight 1); the tier gang, drf,
/// proportion, predicates, nodeorder, network-topology-aware with the flags the
/// benchmark sets; PodGroup pg1 (BuildPodGroupWithSubGroupPolicy: minMember 1000,
/// Inqueue, hard, highestTierAllowed 2, an empty allocated-HyperNode annotation,
/// `minResources` cpu 4000 / memory 8000Gi as the benchmark sets them; policy task1:
/// matchLabelKeys [volcano.sh/task-spec], subGroupSize 10, minSubGroups 100, hard,
/// highestTierAllowed 1) and pods p0 … p999 (4 cpu, 8Gi, `volcano.sh/task-spec:
/// subgroup-<i / 10>`), pending.
fn performance_scenario(dir: &Path) -> PathBuf {
    let mut s = String::from(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: subgroup-performance}\nspec:\n  sessions: 1\n  cluster:\n    nodes:\n",
    );
    for i in 0..1000 {
        s += &format!("      - {{name: n-{i}, cpu: 4, memory: 8Gi, pods: 10}}\n");
    }
    s += "    hyperNodes:\n";
    for i in 0..100 {
        let members: Vec<String> = (0..10).map(|j| format!("n-{}", i * 10 + j)).collect();
        s += &format!("      - {{name: hn-tier1-{i}, tier: 1, members: [{}]}}\n", members.join(", "));
    }
    let tier1: Vec<String> = (0..100).map(|i| format!("hn-tier1-{i}")).collect();
    s += &format!("      - {{name: hn-tier2-0, tier: 2, members: [{}]}}\n", tier1.join(", "));
    s += "  queues:\n    - {name: q1, weight: 1}\n  scheduler:\n    inline: |\n      actions: \"allocate\"\n      tiers:\n      - plugins:\n";
    s += &plugin(
        "gang",
        &[
            "enableJobOrder",
            "enableJobReady",
            "enableJobPipelined",
            "enableJobStarving",
            "enabledSubJobReady",
            "enabledSubJobOrder",
        ],
    );
    s += &plugin("drf", &["enablePreemptable", "enableJobOrder"]);
    s += &plugin("proportion", &["enableQueueOrder", "enableReclaimable", "enabledAllocatable"]);
    s += &plugin("predicates", &["enablePredicate"]);
    s += &plugin("nodeorder", &["enableNodeOrder"]);
    s += &plugin("network-topology-aware", &["enableNodeOrder", "enabledHyperNodeOrder", "enabledHyperNodeGradient"]);
    s += "  workload:\n    - manifests: objects.yaml\n";
    let mut o = String::from(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata:\n  name: pg1\n  namespace: c1\n  annotations:\n    volcano.sh/job-allocated-hypernode: \"\"\nspec:\n  queue: q1\n  minMember: 1000\n  minResources:\n    cpu: \"4000\"\n    memory: 8000Gi\n  networkTopology: {mode: hard, highestTierAllowed: 2}\n  subGroupPolicy:\n  - name: task1\n    subGroupSize: 10\n    minSubGroups: 100\n    matchLabelKeys: [volcano.sh/task-spec]\n    networkTopology: {mode: hard, highestTierAllowed: 1}\nstatus:\n  phase: Inqueue\n",
    );
    for i in 0..1000 {
        o += &format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p{i}\n  namespace: c1\n  annotations:\n    scheduling.k8s.io/group-name: pg1\n  labels:\n    volcano.sh/task-spec: subgroup-{}\nspec:\n  containers:\n  - name: c\n    resources:\n      requests:\n        cpu: \"4\"\n        memory: 8Gi\nstatus:\n  phase: Pending\n",
            i / 10
        );
    }
    let p = dir.join("scenario.yaml");
    std::fs::write(&p, s).expect("write scenario");
    std::fs::write(dir.join("objects.yaml"), o).expect("write objects");
    p
}

/// Volcano's case "performance test: 1000 pods with 100 SubGroups on 1000 nodes"
/// (BenchmarkHyperNodeGradientFnPerformance, not a case of the test above). The
/// benchmark only times one session of allocate and checks no result, so this
/// checks only that the scenario loads and runs as one session. (Every pod fills
/// a node, and each sub-group of ten fits one tier-1 HyperNode exactly; Volcano
/// does not assert that all 1000 bind, and neither does this.)
#[test]
fn replay_subgroup_performance_1000_pods_100_subgroups() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = run_file(&performance_scenario(dir.path()));
    assert!(o.decisions.iter().all(|d| d["session"] == "1"), "a replay is one session");
}
