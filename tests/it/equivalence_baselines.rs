//! The research baselines' shortcuts make the decisions of their exhaustive
//! rules (`lahar run --exhaustive`): gangs skipped on the cluster's idle totals
//! or on a miss of their pod shape (`fifo`, `sjf`, `easy-backfill`), the
//! head's shadow time found by counting each node's room (`easy-backfill`),
//! the reservation made only when a later gang could fit at all, and
//! preemption trials cut on every dimension and on per-node room counts
//! (`tiresias`). Random scenarios mix
//! GPU and CPU-only jobs, gangs of one pod shape and of two (a remainder pod,
//! as SWF jobs have), gangs that need only part of their pods, node selectors,
//! nodes tainted over time with jobs that tolerate the taints, and run times that make reservations, backfills and demotions happen;
//! decisions.csv and pods.csv are byte-identical in both modes.
//! `a_wrong_baseline_skip_is_caught` shows the comparison failing when a skip
//! asks one pod too many.

use super::equivalence::{first_difference, outputs_at, outputs_with};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use std::path::Path;

const POLICIES: [&str; 6] =
    ["fifo", "sjf", "easy-backfill", "tiresias", "sjf, runTime: estimate", "easy-backfill, runTime: estimate"];

#[derive(Debug, Clone)]
struct J {
    submit: u32,
    dur: u32,
    workers: u32,
    gpus: u32,
    cpu: u32,
    /// A second task: one pod of half the request (a remainder pod).
    rest: bool,
    /// The gang needs only this many of its workers (0: all).
    min: u32,
    /// Only on nodes labelled `zone: a`.
    zone: bool,
    /// The user's estimate, seconds (above or below the run time).
    est: u32,
}

fn jobs() -> impl Strategy<Value = Vec<J>> {
    let job = (
        0u32..4000,
        30u32..5000,
        1u32..7,
        prop::sample::select(vec![0u32, 1, 2, 4, 8]),
        prop::sample::select(vec![1u32, 2, 4, 8]),
        any::<bool>(),
        0u32..4,
        prop::sample::select(vec![false, false, false, true]),
        30u32..9000,
    )
        .prop_map(|(submit, dur, workers, gpus, cpu, rest, min, zone, est)| J {
            submit,
            dur,
            workers,
            gpus,
            cpu,
            rest,
            min: min.min(workers),
            zone,
            est,
        });
    prop::collection::vec(job, 8..40)
}

fn text(nodes: u32, policy: &str, jobs: &[J]) -> String {
    let mut w = format!(
        "  seed: 5\n  horizon: 12h\n  cluster:\n    nodeGroups:\n      - {{name: a, count: {}, gpus: 8, cpu: 16, memory: 256Gi, labels: {{zone: a}}}}\n      - {{name: b, count: {}, gpus: 8, cpu: 16, memory: 256Gi}}\n  scheduler: {{baseline: {policy}}}\n  workload:\n    - jobs:\n",
        nodes.div_ceil(2),
        nodes / 2
    );
    for (i, j) in jobs.iter().enumerate() {
        let zone = if j.zone { ", nodeSelector: {zone: a}" } else { "" };
        let mut tasks = vec![format!(
            "{{name: worker, replicas: {}, resources: {{nvidia.com/gpu: {}, cpu: {}}}{zone}}}",
            j.workers, j.gpus, j.cpu
        )];
        if j.rest {
            tasks.push(format!(
                "{{name: rest, replicas: 1, resources: {{nvidia.com/gpu: {}, cpu: {}}}{zone}}}",
                j.gpus / 2,
                j.cpu.div_ceil(2)
            ));
        }
        let min = if j.min > 0 { format!(", minAvailable: {}", j.min) } else { String::new() };
        w += &format!(
            "        - {{name: j{i}, submitAt: {}s, duration: {}s, estimate: {}s, checkpointInterval: 600s{min}, tasks: [{}]}}\n",
            j.submit,
            j.dur,
            j.est,
            tasks.join(", ")
        );
    }
    format!("apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: eqb}}\nspec:\n{w}")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn baselines_decide_as_their_exhaustive_rules(nodes in 2u32..6, policy in 0usize..POLICIES.len(), jobs in jobs()) {
        let t = text(nodes, POLICIES[policy], &jobs);
        let fast = outputs_with(&t, false, |_| {});
        let full = outputs_with(&t, true, |_| {});
        prop_assert!(fast.0 == full.0, "decisions.csv differs:\n{}", first_difference(&fast.0, &full.0));
        prop_assert!(fast.1 == full.1, "pods.csv differs:\n{}", first_difference(&fast.1, &full.1));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    /// The same with every third job's pods holding host port 7000 (one per
    /// node): the baselines' skips by pod shape must not stand for them.
    #[test]
    fn baselines_with_host_ports_decide_as_their_exhaustive_rules(nodes in 2u32..6, policy in 0usize..POLICIES.len(), jobs in jobs()) {
        let t: String = text(nodes, POLICIES[policy], &jobs)
            .lines()
            .enumerate()
            .map(|(i, l)| {
                let tagged = l.trim_start().starts_with("- {name: j") && i % 3 == 0;
                (if tagged { l.replace("resources: {", "hostPorts: [7000], resources: {") } else { l.to_string() }) + "\n"
            })
            .collect();
        prop_assert!(t.contains("hostPorts"));
        let fast = outputs_with(&t, false, |_| {});
        let full = outputs_with(&t, true, |_| {});
        prop_assert!(fast.0 == full.0, "decisions.csv differs:\n{}", first_difference(&fast.0, &full.0));
        prop_assert!(fast.1 == full.1, "pods.csv differs:\n{}", first_difference(&fast.1, &full.1));
    }
}

/// A job of [`crowded`]: (submit, duration, workers, GPUs per pod, min), 2 CPUs
/// per pod, no second task, no node selector, estimated exactly.
fn crowded_job((submit, dur, workers, gpus, min): (u32, u32, u32, u32, u32)) -> J {
    J { submit, dur, workers, gpus, cpu: 2, rest: false, min, zone: false, est: dur }
}

/// Many single-task gangs of few shapes on a small cluster, for `tiresias`'s
/// walk by class (`walk.rs`): its memo of failed gangs fires often, and jobs of
/// one request needing different pod counts (partial `minAvailable`) sit in
/// neighbouring classes.
fn crowded() -> impl Strategy<Value = Vec<J>> {
    let job = (0u32..3000, 30u32..4000, 1u32..5, prop::sample::select(vec![1u32, 2, 4, 8]), 0u32..3)
        .prop_map(|(submit, dur, workers, gpus, min)| crowded_job((submit, dur, workers, gpus, min.min(workers))));
    prop::collection::vec(job, 20..60)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn tiresias_walk_decides_as_its_exhaustive_walk(nodes in 2u32..5, jobs in crowded()) {
        let t = text(nodes, "tiresias", &jobs);
        let fast = outputs_with(&t, false, |_| {});
        let full = outputs_with(&t, true, |_| {});
        prop_assert!(fast.0 == full.0, "decisions.csv differs:\n{}", first_difference(&fast.0, &full.0));
        prop_assert!(fast.1 == full.1, "pods.csv differs:\n{}", first_difference(&fast.1, &full.1));
    }
}

/// `policy` on a crowded scenario whose nodes are tainted and untainted over
/// time (`a-0` from the start to 3 h, every `b` node from 1 h), every third
/// job a Volcano Job whose pods tolerate both taints: written, with its
/// manifests, under `dir`. The baselines' memos of failed gangs stay on while
/// the cluster has taints, for the jobs without tolerations only.
fn tainted(dir: &Path, nodes: u32, policy: &str, jobs: &[J]) -> String {
    let plain: Vec<J> = jobs.iter().enumerate().filter(|(i, _)| i % 3 != 1).map(|(_, j)| j.clone()).collect();
    let mut m = String::new();
    for (i, j) in jobs.iter().enumerate().filter(|(i, _)| i % 3 == 1) {
        let min = if j.min > 0 { j.min } else { j.workers };
        m += &format!(
            "---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: t{i}\n  annotations: {{lahar.io/submit-at: {}s, lahar.io/duration: {}s, lahar.io/checkpoint-interval: 600s}}\nspec:\n  minAvailable: {min}\n  schedulerName: volcano\n  tasks:\n    - name: worker\n      replicas: {}\n      template:\n        spec:\n          tolerations: [{{key: x, operator: Exists, effect: NoSchedule}}, {{key: y, operator: Exists, effect: NoSchedule}}]\n          containers: [{{name: c, image: i, resources: {{requests: {{nvidia.com/gpu: {}, cpu: {}}}, limits: {{nvidia.com/gpu: {}}}}}}}]\n",
            j.submit, j.dur, j.workers, j.gpus, j.cpu, j.gpus
        );
    }
    std::fs::write(dir.join("tol.yaml"), m).expect("manifests");
    let timeline = "  timeline:\n    - {at: 0s, taint: a-0, key: x, effect: NoSchedule}\n    - {at: 1h, taint: \"b-*\", key: y, effect: NoSchedule}\n    - {at: 3h, untaint: a-0, key: x}\n";
    text(nodes, policy, &plain).replace("  workload:\n", &format!("{timeline}  workload:\n    - manifests: tol.yaml\n"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn baselines_with_taints_decide_as_their_exhaustive_rules(nodes in 2u32..5, policy in 0usize..POLICIES.len(), jobs in crowded()) {
        let dir = tempfile::tempdir().expect("tempdir");
        let t = tainted(dir.path(), nodes, POLICIES[policy], &jobs);
        let fast = outputs_at(&t, dir.path(), false, |_| {});
        let full = outputs_at(&t, dir.path(), true, |_| {});
        prop_assert!(fast.0 == full.0, "decisions.csv differs:\n{}", first_difference(&fast.0, &full.0));
        prop_assert!(fast.1 == full.1, "pods.csv differs:\n{}", first_difference(&fast.1, &full.1));
    }
}

/// The comparison can fail for the memos under taints too: taking the
/// tolerating jobs for the others, a tolerating gang is passed over after a
/// gang of its shape that the taints kept out failed, and fixed tainted
/// scenarios differ, under `tiresias` (its classes) and `sjf` (its misses).
#[test]
fn a_memo_blind_to_tolerations_is_caught() {
    for policy in ["tiresias", "sjf"] {
        let caught = caught_in(
            (2u32..5, crowded()),
            |dir, nodes, jobs| tainted(dir, nodes, policy, jobs),
            |e| e.planted.wrong_class_tolerations = true,
        );
        assert!(caught > 0, "no scenario showed {policy}'s memo blind to tolerations");
    }
}

/// How many of 16 fixed random scenarios under `policy` differ from the
/// exhaustive rule when the shortcuts ask one pod more than a gang needs.
fn caught(policy: &str) -> usize {
    caught_with(policy, |e| e.planted.wrong_skip = true)
}

/// How many of 16 fixed random scenarios under `policy` differ from the
/// exhaustive rule with the engine's test setting `break_it` on.
fn caught_with(policy: &str, break_it: fn(&mut lahar_core::engine::EngineConfig)) -> usize {
    caught_among((2u32..6, jobs()), policy, break_it)
}

/// [`caught_with`] over 16 fixed scenarios drawn from `strategy` (node count, jobs).
fn caught_among(
    strategy: impl Strategy<Value = (u32, Vec<J>)>,
    policy: &str,
    break_it: fn(&mut lahar_core::engine::EngineConfig),
) -> usize {
    caught_in(strategy, |_, nodes, jobs| text(nodes, policy, jobs), break_it)
}

/// [`caught_among`] over the scenarios `scenario` writes (under a fresh
/// directory, which its relative paths are read under) for each draw.
fn caught_in(
    strategy: impl Strategy<Value = (u32, Vec<J>)>,
    scenario: impl Fn(&Path, u32, &[J]) -> String,
    break_it: fn(&mut lahar_core::engine::EngineConfig),
) -> usize {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    (0..16)
        .filter(|_| {
            let (nodes, jobs) = strategy.new_tree(&mut runner).expect("value").current();
            let dir = tempfile::tempdir().expect("tempdir");
            let t = scenario(dir.path(), nodes, &jobs);
            outputs_at(&t, dir.path(), false, break_it) != outputs_at(&t, dir.path(), true, |_| {})
        })
        .count()
}

/// The comparison can fail for tiresias's book too: with the instants at which
/// jobs cross a threshold or become due for promotion never coming (each job's
/// queue kept until the job itself changes), demotions and promotions come
/// late, and fixed scenarios differ from the walk of every job each session.
#[test]
fn a_tiresias_book_without_its_instants_is_caught() {
    assert!(caught_with("tiresias", |e| e.planted.stale_scores = true) > 0, "no scenario showed the stale queues");
}

/// The comparison can fail for tiresias's walk by class too: passing over, after
/// a failed gang, the jobs of its request that need one pod fewer (which the
/// memo of failed gangs does not skip), it leaves gangs waiting that the walk
/// of every job starts, and fixed crowded scenarios differ.
#[test]
fn a_wrong_tiresias_walk_is_caught() {
    let caught = caught_among((2u32..5, crowded()), "tiresias", |e| e.planted.wrong_walk = true);
    assert!(caught > 0, "no scenario showed the wrong walk");
}

/// A crowded scenario (`crowded`, four nodes: the shrunk case a random run of
/// `tiresias_walk_decides_as_its_exhaustive_walk` found) where a claim binds at
/// a session's start and leaves its gang (`j24`: four 1-GPU pods, two needed)
/// whole with a replacement pod pending, while a gang of its request needing
/// two pods fails later in the same walk: (submit, duration, workers, GPUs, min).
#[rustfmt::skip]
const CLAIM_BOUND_AT_OPEN: [(u32, u32, u32, u32, u32); 35] = [
    (2745, 2789, 2, 2, 0), (2163, 524, 2, 4, 0), (1563, 874, 3, 8, 2), (1140, 3189, 3, 4, 0), (1453, 1923, 3, 1, 2),
    (682, 1382, 4, 8, 0), (33, 3690, 2, 1, 1), (1816, 3812, 2, 2, 0), (2497, 756, 4, 1, 1), (183, 3905, 1, 4, 1),
    (1511, 839, 3, 1, 2), (2704, 3651, 2, 8, 0), (2978, 1103, 4, 4, 1), (1971, 3960, 4, 2, 2), (2770, 1026, 4, 4, 0),
    (366, 3985, 2, 4, 1), (839, 1751, 4, 1, 2), (2460, 3123, 2, 8, 2), (1120, 2842, 3, 8, 1), (227, 3538, 2, 2, 2),
    (2883, 2726, 1, 1, 1), (289, 415, 1, 2, 1), (23, 298, 2, 4, 2), (2386, 40, 1, 4, 1), (1602, 3742, 4, 1, 2),
    (1149, 2336, 2, 1, 2), (2988, 896, 3, 1, 1), (2126, 1368, 1, 1, 1), (2019, 1379, 4, 2, 1), (1971, 3706, 3, 1, 2),
    (2573, 674, 3, 4, 2), (233, 2632, 4, 1, 0), (2929, 575, 3, 1, 2), (653, 515, 3, 2, 2), (1342, 2560, 3, 4, 2),
];

/// A job whose claim bound before the walk is filed again with its pods as
/// they are then: whole, without a class, so the memo of a failed gang of its
/// request does not pass it over and its replacement pod binds in that session
/// (at 4045 s), as in the walk of every job. Left under its old class (the
/// planted `stale_claim_class`), it waits a session and the outputs differ.
#[test]
fn a_claim_bound_at_open_refiles_its_job() {
    let jobs: Vec<J> = CLAIM_BOUND_AT_OPEN.iter().map(|&j| crowded_job(j)).collect();
    let t = text(4, "tiresias", &jobs);
    let full = outputs_with(&t, true, |_| {});
    let fast = outputs_with(&t, false, |_| {});
    assert!(fast == full, "decisions.csv differs:\n{}", first_difference(&fast.0, &full.0));
    assert!(
        full.0.contains(",4045,allocate,bind,j24,default/j24-worker-0,"),
        "the case no longer binds j24's pod at 4045 s"
    );
    let stale = outputs_with(&t, false, |e| e.planted.stale_claim_class = true);
    assert!(stale != full, "the stale class went unnoticed");
}

/// The comparison can fail for tiresias's preemption trial too, whose moves are
/// not filed (the trial is always discarded): with those moves leaving the nodes
/// out (the victims' pods free nothing there), preemptions the exhaustive rules
/// make are not found, and fixed scenarios differ.
#[test]
fn a_wrong_unfiled_tiresias_trial_is_caught() {
    assert!(caught_with("tiresias", |e| e.planted.wrong_unfiled = true) > 0, "no scenario showed the wrong trial");
}

/// The comparison can fail for tiresias's check before a claim binds (its
/// pods' requests, summed per node, against the nodes' idle resources): asking
/// for the room twice, claims bind late, and fixed scenarios differ.
#[test]
fn a_wrong_tiresias_bind_check_is_caught() {
    assert!(
        caught_with("tiresias", |e| e.planted.wrong_bind_check = true) > 0,
        "no scenario showed the wrong bind check"
    );
}

/// The comparison can fail for tiresias's per-node room too (what the
/// preemption check counts, kept between sessions): missing the nodes whose
/// pods moved since it was built, it rules out preemptions that the exhaustive
/// rules make, and fixed scenarios differ.
#[test]
fn a_stale_tiresias_room_is_caught() {
    assert!(caught_with("tiresias", |e| e.planted.stale_room = true) > 0, "no scenario showed the stale room");
}

/// The comparison can fail: with the idle-total check and the shadow count
/// asking one pod too many, gangs that exactly fit are skipped and heads get
/// later reservations, and fixed scenarios differ from the exhaustive rules.
#[test]
fn a_wrong_baseline_skip_is_caught() {
    assert!(caught("sjf") > 0, "no sjf scenario showed the wrong skip");
    assert!(caught("easy-backfill") > 0, "no easy-backfill scenario showed the wrong skip");
    assert!(caught("tiresias") > 0, "no tiresias scenario showed the wrong skip");
}
