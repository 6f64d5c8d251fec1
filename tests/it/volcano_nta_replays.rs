//! Replays of the remaining cases of Volcano's `TestAllocateWithNetWorkTopologies`
//! (`pkg/scheduler/actions/allocate/allocate_test.go`): network-topology-aware
//! allocation with `highestTierAllowed` and `highestTierName`, minAvailable below
//! the replicas, rescheduled jobs and three-tier HyperNode trees
//! (`tests/volcano/nt2-*.yaml`, each citing its Go case). The first seven cases are
//! in `volcano.rs` (`replay_nt_*`). Each test checks what the Go case checks: the
//! number of binds, or the bind map.

use super::volcano::{map, replay};

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
}

#[test]
fn replay_nt2_hard_rescheduled_lca_empty() {
    assert_eq!(binds("nt2-hard-rescheduled-lca-empty"), 1);
}

#[test]
fn replay_nt2_tiername_task_spec_cannot_fit() {
    assert_eq!(binds("nt2-tiername-task-spec-cannot-fit"), 0);
}

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
}
