//! Allocate's lone-node skip (`policies/src/volcano/actions/allocate/lone.rs`):
//! a gang's step that could only be discarded, with one node only having room
//! for its request, is not run; the node search's start is moved past that
//! node, where the step would have left it. The skip is exact: on a cluster of
//! more than 100 nodes, where the search stops after a share of them (120 of
//! 250 here) and its start decides which nodes later pods see, decisions.csv and pods.csv are
//! byte-identical with and without `--exhaustive` (which runs every step). With
//! the skip leaving the start where it was, they differ; the audit (every step
//! the skip would skip run all the same, checked for being discarded, for its
//! start and for drawing nothing) passes, and fails on that wrong skip.

use super::equivalence::{first_difference, outputs_with};
use lahar_core::engine::EngineConfig;

/// A busy cluster of 250 eight-GPU nodes (the search stops after 120
/// feasible nodes) under the production-style conf (drf not choosing
/// victims) without binpack, so that nodeorder spreads pods: many nodes keep
/// a free GPU while few are empty, and a gang of eight-GPU pods often finds
/// room on one node only. Three priority classes, two queues, jobs of 1 to 32
/// GPUs at about 90% offered load, for 36 hours.
fn scenario() -> String {
    let class = |name: &str, n: u32, rate: f64, prio: u32| {
        format!(
            "    - synthetic:\n        jobs: {n}\n        namePrefix: {name}\n        arrival: {{poisson: {{ratePerHour: {rate}}}}}\n        gpus: {{1: 40, 2: 15, 4: 15, 8: 20, 16: 7, 32: 3}}\n        cpuPerGpu: 10\n        memoryPerGpu: 100Gi\n        duration: {{lognormal: {{median: 1h, sigma: 1.2, min: 1m, max: 1d}}}}\n        queues: {{research: 2, prod: 1}}\n        priority: {prio}\n"
        )
    };
    format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: lone}}\nspec:\n  seed: 11\n  horizon: 36h\n  cluster:\n    nodeGroups:\n      - {{name: h100, count: 250, gpus: 8, cpu: 96, memory: 1Ti}}\n    fabric:\n      - {{tier: 1, name: leaf, fanout: 8}}\n      - {{tier: 2, name: spine, fanout: 32}}\n  queues:\n    - {{name: research, weight: 2}}\n    - {{name: prod, weight: 1, reclaimable: false}}\n  scheduler:\n    inline: |\n      actions: \"enqueue, allocate, backfill, preempt, reclaim\"\n      tiers:\n      - plugins: [{{name: priority}}, {{name: gang}}, {{name: conformance}}]\n      - plugins: [{{name: drf, enablePreemptable: false}}, {{name: predicates}}, {{name: proportion}}, {{name: nodeorder}}, {{name: network-topology-aware}}]\n  workload:\n{}{}{}",
        class("batch", 2800, 123.0, 0),
        class("standard", 800, 35.0, 100),
        class("urgent", 400, 18.0, 1000),
    )
}

fn run(exhaustive: bool, tweak: impl Fn(&mut EngineConfig)) -> (String, String) {
    outputs_with(&scenario(), exhaustive, tweak)
}

#[test]
fn lone_node_skips_decide_as_the_exhaustive_walk() {
    let (fast, full) = (run(false, |_| {}), run(true, |_| {}));
    assert!(fast.0.lines().count() > 5000, "a busy run: {} decisions", fast.0.lines().count());
    assert!(fast.0 == full.0, "decisions.csv differs: {}", first_difference(&fast.0, &full.0));
    assert!(fast.1 == full.1, "pods.csv differs: {}", first_difference(&fast.1, &full.1));
}

/// The comparison can fail: a skip that leaves the start where it was makes
/// later searches see other nodes.
#[test]
fn a_wrong_lone_node_start_is_caught() {
    let wrong = run(false, |e| e.planted.wrong_lone_node = true);
    assert!(wrong != run(true, |_| {}), "the wrong start went unnoticed");
}

fn audited(wrong: bool) -> std::thread::Result<(String, String)> {
    std::panic::catch_unwind(|| {
        run(false, |e| {
            e.planted.audit_lone_node = true;
            e.planted.wrong_lone_node = wrong;
        })
    })
}

/// Every step the skip would skip, run all the same, is discarded, leaves the
/// start past the node and draws nothing; and the run then is the run without
/// the audit.
#[test]
fn the_lone_node_audit_passes_and_can_fail() {
    let audit = audited(false).expect("the audit found a step the skip would get wrong");
    assert!(audit == run(false, |_| {}), "the audited run decides otherwise");
    assert!(audited(true).is_err(), "the audit missed the wrong start");
}
