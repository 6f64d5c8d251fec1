//! Replays of the remaining cases of Volcano's `TestAllocateWithNetWorkTopologies`
//! (`pkg/scheduler/actions/allocate/allocate_test.go`): network-topology-aware
//! allocation with `highestTierAllowed` and `highestTierName`, minAvailable below
//! the replicas, rescheduled jobs and three-tier HyperNode trees
//! (`tests/volcano/nt2-*.yaml`, each citing its Go case). The first seven cases are
//! in `volcano.rs` (`replay_nt_*`). Each test checks what the Go case checks: the
//! number of binds, or the bind map; a case that binds nothing also runs its
//! positive twin (the same replay with the tier limit raised, `replay_with`).

use super::volcano::{map, replay, replay_with};
use std::collections::BTreeSet;

/// The number of pods `name` binds.
fn binds(name: &str) -> usize {
    replay(name).binds().len()
}

#[test]
fn replay_nt2_soft_min_available_lt_replicas() {
    assert_eq!(binds("nt2-soft-min-available-lt-replicas"), 2);
}

#[test]
fn replay_nt2_soft_rescheduled_min_equals_replicas() {
    assert_eq!(binds("nt2-soft-rescheduled-min-equals-replicas"), 1);
}

#[test]
fn replay_nt2_soft_rescheduled_three_tiers() {
    assert_eq!(binds("nt2-soft-rescheduled-three-tiers"), 1);
}

#[test]
fn replay_nt2_hard_min_available_lt_replicas() {
    assert_eq!(binds("nt2-hard-min-available-lt-replicas"), 2);
}

#[test]
fn replay_nt2_hard_affinity_two_hypernodes() {
    assert_eq!(replay("nt2-hard-affinity-two-hypernodes").binds(), map(&[("c1/p1", "s1-n2")]));
}

#[test]
fn replay_nt2_hard_rescheduled_tier2_fits() {
    assert_eq!(binds("nt2-hard-rescheduled-tier2-fits"), 1);
}

#[test]
fn replay_nt2_hard_rescheduled_tier2_min_equals_replicas() {
    assert_eq!(binds("nt2-hard-rescheduled-tier2-min-equals-replicas"), 1);
}

#[test]
fn replay_nt2_hard_rescheduled_tier2_three_tiers() {
    assert_eq!(binds("nt2-hard-rescheduled-tier2-three-tiers"), 1);
}

#[test]
fn replay_nt2_hard_rescheduled_tier1_three_tiers() {
    assert_eq!(binds("nt2-hard-rescheduled-tier1-three-tiers"), 0);
    // Twin: allowed up to tier 2, p3 leaves the full leaf s3 for s4, the other
    // leaf under the same tier-2 HyperNode s1 (either of its empty nodes).
    let tier2 = [("highestTierAllowed: 1", "highestTierAllowed: 2")];
    let b = replay_with("nt2-hard-rescheduled-tier1-three-tiers", &tier2).binds();
    assert_eq!(b.keys().collect::<Vec<_>>(), ["c1/p3"]);
    assert!(b["c1/p3"].starts_with("s4-"), "{b:?}");
}

#[test]
fn replay_nt2_hard_rescheduled_lca_empty() {
    assert_eq!(binds("nt2-hard-rescheduled-lca-empty"), 1);
}

#[test]
fn replay_nt2_tiername_task_spec_cannot_fit() {
    assert_eq!(binds("nt2-tiername-task-spec-cannot-fit"), 0);
    // Twin: highestTierName job-spec (tier 2) lets the three 2-cpu pods spread
    // over both leaves, one per 2-cpu node.
    let b = replay_with("nt2-tiername-task-spec-cannot-fit", &[(TASK_SPEC, JOB_SPEC)]).binds();
    assert_eq!(b.keys().collect::<Vec<_>>(), ["c1/p1", "c1/p2", "c1/p3"]);
    assert_eq!(b.values().collect::<BTreeSet<_>>().len(), 3, "one pod per node: {b:?}");
    let leaves: BTreeSet<&str> = b.values().map(|n| &n[..2]).collect();
    assert_eq!(leaves, ["s0", "s1"].into(), "{b:?}");
}

const TASK_SPEC: &str = "highestTierName: volcano.sh/task-spec}";
const JOB_SPEC: &str = "highestTierName: volcano.sh/job-spec}";

#[test]
fn replay_nt2_tiername_job_spec_fits() {
    assert_eq!(binds("nt2-tiername-job-spec-fits"), 3);
}

#[test]
fn replay_nt2_tiername_task_spec_two_pods() {
    assert_eq!(binds("nt2-tiername-task-spec-two-pods"), 2);
}

#[test]
fn replay_nt2_tiername_rescheduled_job_spec_fits() {
    assert_eq!(binds("nt2-tiername-rescheduled-job-spec-fits"), 1);
}

#[test]
fn replay_nt2_tiername_rescheduled_job_spec_min_equals_replicas() {
    assert_eq!(binds("nt2-tiername-rescheduled-job-spec-min-equals-replicas"), 1);
}

#[test]
fn replay_nt2_tiername_rescheduled_task_spec_cannot_cross() {
    assert_eq!(binds("nt2-tiername-rescheduled-task-spec-cannot-cross"), 0);
    // Twin: highestTierName job-spec (tier 2) lets p3 leave the full leaf s0 for s1.
    let b = replay_with("nt2-tiername-rescheduled-task-spec-cannot-cross", &[(TASK_SPEC, JOB_SPEC)]).binds();
    assert_eq!(b.keys().collect::<Vec<_>>(), ["c1/p3"]);
    assert!(b["c1/p3"].starts_with("s1-"), "{b:?}");
}
