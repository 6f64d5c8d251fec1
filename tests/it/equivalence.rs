//! The fast Volcano sessions make the decisions of the exhaustive walk
//! (`lahar run --exhaustive`): over random scenarios — several confs with preempt
//! and reclaim or gangpreempt and gangreclaim, gangs of several sizes and roles, BestEffort pods, two priorities,
//! three queues, some jobs with a hard network topology, some in partitions, and
//! vGPU jobs under deviceshare — decisions.csv and pods.csv are byte-identical in
//! both modes. The `a_*_is_caught` tests break one skip on purpose and check that
//! this comparison notices.
//! Runs stop at an 8 h horizon: some of these workloads preempt each other forever
//! (a victim's replacement takes the space its preemptor waits for), as Volcano's
//! semantics allow.

use super::*;
use lahar_core::engine::EngineConfig;
use proptest::prelude::*;
use proptest::strategy::ValueTree;

/// Confs under test: the issue's production-style conf (preempt by drf in tier 2,
/// reclaim by proportion), Volcano's default conf with preempt and reclaim added,
/// one where gang does not protect victims and capacity replaces proportion, and
/// Volcano's gang-eviction e2e conf (gangreclaim and gangpreempt).
const CONFS: [&str; 4] = [
    r#"actions: "enqueue, allocate, backfill, preempt, reclaim"
      tiers:
      - plugins: [{name: priority}, {name: gang}, {name: conformance}]
      - plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}, {name: binpack}, {name: network-topology-aware}]"#,
    r#"actions: "enqueue, allocate, backfill, reclaim, preempt"
      tiers:
      - plugins: [{name: priority}, {name: gang, enablePreemptable: false}, {name: conformance}]
      - plugins: [{name: overcommit}, {name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}, {name: binpack}]"#,
    r#"actions: "enqueue, allocate, preempt, reclaim, backfill"
      tiers:
      - plugins: [{name: priority}, {name: gang, enablePreemptable: false, enableReclaimable: false}, {name: conformance}]
      - plugins: [{name: drf, enablePreemptable: false}, {name: predicates}, {name: capacity}, {name: nodeorder}]"#,
    r#"actions: "enqueue, allocate, backfill, gangreclaim, gangpreempt"
      tiers:
      - plugins: [{name: priority}, {name: gang, enablePreemptable: false}, {name: conformance}, {name: capacity}]
      - plugins: [{name: overcommit}, {name: drf, enablePreemptable: false}, {name: predicates}, {name: nodeorder}, {name: binpack}, {name: network-topology-aware}]"#,
];

#[derive(Debug, Clone)]
struct J {
    submit: u32,
    dur: u32,
    queue: usize,
    high: bool,
    workers: u32,
    gpus: u32,
    master: bool,
    /// A hard network topology up to this tier (0: none).
    hard_tier: u32,
}

fn jobs() -> impl Strategy<Value = Vec<J>> {
    let job = (
        0u32..3000,
        60u32..4000,
        0usize..3,
        any::<bool>(),
        1u32..5,
        prop::sample::select(vec![1u32, 2, 4, 8]),
        any::<bool>(),
        prop::sample::select(vec![0u32, 0, 0, 1, 2]),
    )
        .prop_map(|(submit, dur, queue, high, workers, gpus, master, hard_tier)| J {
            submit,
            dur,
            queue,
            high,
            workers,
            gpus,
            master,
            hard_tier,
        });
    prop::collection::vec(job, 10..45)
}

/// The scenario of `jobs`; with `partitions`, a third of the jobs (by their
/// submit time and duration, so that the random draws stay those of the fixed
/// scenarios below) put their workers in partitions of 1 or 2 (one partition
/// required, each within tier 1), where that divides them.
fn text(nodes: u32, conf: &str, jobs: &[J], partitions: bool) -> String {
    // gangreclaim's conf has capacity in its first tier: queues deserve shares,
    // so that some reclaim (capacity reclaims for a queue below its share).
    let deserved = |gpus: u32| {
        if conf.contains("gangreclaim") { format!(", deserved: {{nvidia.com/gpu: {gpus}}}") } else { String::new() }
    };
    let (da, db, dc) = (deserved(16), deserved(8), deserved(8));
    let mut w = format!(
        "  seed: 3\n  horizon: 8h\n  cluster:\n    nodeGroups:\n      - {{name: n, count: {nodes}, gpus: 8, cpu: 64, memory: 512Gi}}\n    fabric:\n      - {{tier: 1, name: leaf, fanout: 2}}\n      - {{tier: 2, name: spine, fanout: 8}}\n  queues:\n    - {{name: a, weight: 2{da}}}\n    - {{name: b, weight: 1{db}}}\n    - {{name: c, weight: 1, capability: {{nvidia.com/gpu: 16}}{dc}}}\n  scheduler:\n    inline: |\n      {conf}\n  workload:\n    - jobs:\n"
    );
    for (i, j) in jobs.iter().enumerate() {
        let p = if partitions && (j.submit + j.dur) % 3 == 0 { 2 - j.workers % 2 } else { 0 };
        let part = match p {
            p if p > 0 && j.workers % p == 0 => format!(
                ", partitionPolicy: {{totalPartitions: {}, partitionSize: {p}, minPartitions: 1, networkTopology: {{mode: hard, highestTierAllowed: 1}}}}",
                j.workers / p
            ),
            _ => String::new(),
        };
        let mut tasks = vec![format!(
            "{{name: worker, replicas: {}, resources: {{nvidia.com/gpu: {}, cpu: {}}}{part}}}",
            j.workers,
            j.gpus,
            j.gpus * 4
        )];
        if j.master {
            tasks.insert(0, "{name: master, replicas: 1, resources: {}}".to_string());
        }
        let topo = match j.hard_tier {
            0 => String::new(),
            t => format!(", networkTopology: {{mode: hard, highestTierAllowed: {t}}}"),
        };
        w += &format!(
            "        - {{name: j{i}, queue: {}, priority: {}, submitAt: {}s, duration: {}s{topo}, tasks: [{}]}}\n",
            ["a", "b", "c"][j.queue],
            if j.high { 10 } else { 0 },
            j.submit,
            j.dur,
            tasks.join(", ")
        );
    }
    format!("apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: eq}}\nspec:\n{w}")
}

/// decisions.csv and pods.csv of a run.
fn outputs(text: &str, exhaustive: bool, wrong_skip: bool) -> (String, String) {
    outputs_with(text, exhaustive, |e| e.planted.wrong_skip = wrong_skip)
}

/// decisions.csv and pods.csv of a run whose engine settings `tweak` changes.
pub(super) fn outputs_with(text: &str, exhaustive: bool, tweak: impl Fn(&mut EngineConfig)) -> (String, String) {
    outputs_at(text, Path::new(""), exhaustive, tweak)
}

/// [`outputs_with`] for a scenario whose relative paths are read under `base`.
pub(super) fn outputs_at(
    text: &str,
    base: &Path,
    exhaustive: bool,
    tweak: impl Fn(&mut EngineConfig),
) -> (String, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = lahar::scenario::load_str(text, "eq.yaml", base).unwrap_or_else(|e| panic!("{e}"));
    tweak(&mut s.engine);
    let opts = lahar::RunOptions { out_dir: Some(dir.path().to_path_buf()), exhaustive, ..Default::default() };
    lahar::run(s, &opts).expect("run");
    let read = |f: &str| std::fs::read_to_string(dir.path().join(f)).expect("output");
    (read("decisions.csv"), read("pods.csv"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn fast_sessions_decide_as_the_exhaustive_walk(nodes in 3u32..8, conf in 0usize..4, jobs in jobs()) {
        let t = text(nodes, CONFS[conf], &jobs, true);
        let fast = outputs(&t, false, false);
        let full = outputs(&t, true, false);
        prop_assert!(fast.0 == full.0, "decisions.csv differs:\n{}", first_difference(&fast.0, &full.0));
        prop_assert!(fast.1 == full.1, "pods.csv differs:\n{}", first_difference(&fast.1, &full.1));
    }
}

pub(super) fn first_difference(a: &str, b: &str) -> String {
    let at = a.lines().zip(b.lines()).position(|(x, y)| x != y).unwrap_or(a.lines().count().min(b.lines().count()));
    format!("line {}: fast {:?}, exhaustive {:?}", at + 1, a.lines().nth(at), b.lines().nth(at))
}

/// How many of 24 fixed random scenarios under `conf` differ from the exhaustive
/// walk when the engine settings are broken by `wrong`.
fn caught(conf: &str, wrong: impl Fn(&mut EngineConfig) + Copy) -> usize {
    fixed_scenarios(conf, false).iter().filter(|t| outputs_with(t, false, wrong) != outputs(t, true, false)).count()
}

/// The 24 fixed random scenarios under `conf` (`partitions`: see [`text`]).
fn fixed_scenarios(conf: &str, partitions: bool) -> Vec<String> {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = (3u32..8, jobs());
    (0..24)
        .map(|_| {
            let (nodes, jobs) = strategy.new_tree(&mut runner).expect("value").current();
            text(nodes, conf, &jobs, partitions)
        })
        .collect()
}

/// The comparison above can fail: with one skip deliberately wrong (the preempt
/// failure memo keyed by queue and priorities only, so a pod that fails blocks
/// other pod sizes), fixed scenarios that preempt differ from the exhaustive walk.
#[test]
fn a_wrong_skip_is_caught() {
    assert!(caught(CONFS[0], |e| e.planted.wrong_skip = true) > 0, "no scenario showed the wrong skip");
}

/// The same for allocate's step that finds no room (a job whose pods no
/// node's future-idle room holds is not listed and walked): asked with twice
/// each task's request, it ends steps that would have placed pods, and fixed
/// scenarios differ.
#[test]
fn a_wrong_room_skip_is_caught() {
    assert!(caught(CONFS[0], |e| e.planted.wrong_room_skip = true) > 0, "no scenario showed the wrong room skip");
}

/// The same for allocate's dropping of a queue's list once every job left in
/// it can only fail for lack of room (`allocate/line.rs`): dropped with one
/// job left that could still place pods, fixed scenarios differ.
#[test]
fn a_wrong_idle_line_is_caught() {
    assert!(caught(CONFS[0], |e| e.planted.wrong_idle_line = true) > 0, "no scenario showed the wrong idle line");
}

/// The same for the node-score cache: with cached scores that never expire (a
/// node's `used` changes are ignored), fixed scenarios place pods differently
/// from the exhaustive walk, which scores every node afresh.
#[test]
fn a_stale_score_is_caught() {
    assert!(caught(CONFS[1], |e| e.planted.stale_scores = true) > 0, "no scenario showed the stale scores");
}

/// The same for the proportion plugin's water-filling, kept from the last
/// session while its inputs are the same: kept whenever the queues' specs and
/// the cluster's total are (the queues' requests and activity forgotten), the
/// deserved shares go stale and fixed scenarios reclaim, order queues or admit
/// jobs differently from the exhaustive walk, which computes them every
/// session.
#[test]
fn a_stale_proportion_is_caught() {
    assert!(caught(CONFS[0], |e| e.planted.stale_proportion = true) > 0, "no scenario showed the stale proportion");
}

/// The same for the out-of-reach rule's free-slot count: when the fast count
/// misses the last node that fits (the exhaustive walk counts every node), jobs
/// are set aside that the exhaustive walk steps, and fixed scenarios differ.
#[test]
fn a_wrong_slot_count_is_caught() {
    assert!(caught(CONFS[1], |e| e.planted.wrong_slots = true) > 0, "no scenario showed the wrong slot count");
}

/// The same for the out-of-reach rule's fast path (a job's facts read from one
/// record): when it counts one pod short, gangs that exactly fit are set aside
/// and wait, and fixed scenarios differ.
#[test]
fn a_wrong_reach_fact_is_caught() {
    assert!(caught(CONFS[1], |e| e.planted.wrong_reach = true) > 0, "no scenario showed the wrong fact");
}

/// The same for the out-of-reach rule's memo of the last job's facts (preempt
/// and reclaim): keyed without the queue and priority, a job takes the outcome
/// of a neighbour whose queue has victims or none, and fixed scenarios differ.
/// Over every conf: few fixed scenarios reach a state where the memo's key
/// matters, and which do moves with the controller's rules (with a bound pod
/// counted scheduled one close later, 0, 1, 2 and 0 of the 24 under the four
/// confs).
#[test]
fn a_wrong_reach_memo_is_caught() {
    let caught: Vec<usize> = CONFS.iter().map(|c| caught(c, |e| e.planted.wrong_memo = true)).collect();
    assert!(caught.iter().sum::<usize>() > 0, "no scenario showed the wrong memo");
}

/// How many of 24 fixed random scenarios under `conf`, run with the engine
/// settings `tweak` sets, panic (the audits of a rule panic when it is wrong).
fn panicking(conf: &str, tweak: impl Fn(&mut EngineConfig) + Copy) -> usize {
    let run = |t: &String| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| outputs_with(t, false, tweak)));
    fixed_scenarios(conf, true).iter().filter(|t| run(t).is_err()).count()
}

/// Allocate's rule on the queue's quota (a step whose gang the quota leaves
/// short is not run, in both modes; docs/volcano.md § Deviations from Volcano)
/// skips only steps that could not succeed: with the audit on, every step the
/// rule would skip is run all the same, and the run panics if one ends ready or
/// pipelined. Under each conf, over the fixed scenarios (queues with weights and
/// a capability, gangs of up to four workers and a master), none does — nor
/// does the World's check of its sums after every instant (the queues'
/// allocated and pipelined resources among them) fail.
#[test]
fn allocate_skips_only_steps_the_quota_leaves_short() {
    let audit = |e: &mut EngineConfig| {
        e.planted.audit_quota_short = true;
        e.check_invariants = true;
    };
    for conf in CONFS {
        assert_eq!(panicking(conf, audit), 0, "{conf}");
    }
}

/// The audit can fail: with the rule counting one pod more than minAvailable
/// (so it would skip steps whose gang exactly fits the quota), fixed scenarios
/// panic.
#[test]
fn a_wrong_quota_count_is_caught() {
    let wrong = |e: &mut EngineConfig| {
        e.planted.audit_quota_short = true;
        e.planted.wrong_quota_count = true;
    };
    let caught: usize = CONFS.iter().map(|c| panicking(c, wrong)).sum();
    assert!(caught > 0, "no scenario showed the wrong quota count");
}

/// `lahar run --exhaustive` through the binary: the example with Volcano's
/// production-style conf (drf, proportion, binpack, network-topology-aware, reclaim)
/// writes the same decisions.csv, pods.csv and jobs.csv in both modes.
#[test]
fn exhaustive_flag_writes_the_same_outputs() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/volcano/h100-training.yaml");
    let dir = tempfile::tempdir().expect("tempdir");
    let (fast, full) = (dir.path().join("fast"), dir.path().join("full"));
    lahar().args(["run", "-q"]).arg(&example).arg("--out").arg(&fast).assert().success();
    lahar().args(["run", "-q", "--exhaustive"]).arg(&example).arg("--out").arg(&full).assert().success();
    for f in ["decisions.csv", "pods.csv", "jobs.csv"] {
        let (a, b) = (std::fs::read(fast.join(f)).expect("fast"), std::fs::read(full.join(f)).expect("full"));
        assert!(a.len() > 100 && a == b, "{f} differs between the modes");
    }
}

/// A vGPU job of the equivalence property: (submit s, duration s, high priority,
/// pods, cards per pod, MiB per card, cores per card).
type VgpuJob = (u32, u32, bool, u32, u32, i64, i64);

fn vgpu_jobs() -> impl Strategy<Value = Vec<VgpuJob>> {
    let job = (
        0u32..2000,
        60u32..3000,
        any::<bool>(),
        1u32..4,
        1u32..3,
        prop::sample::select(vec![2000i64, 4000, 6000, 8000, 16000]),
        prop::sample::select(vec![0i64, 25, 50]),
    );
    prop::collection::vec(job, 4..16)
}

/// Nodes of four 16000 MiB vGPU cards (4 sharers each) and jobs asking for
/// cards, under deviceshare's vGPU mode with binpack's weighted score (whose
/// scores of one-container asks are reused while a node is unchanged) and
/// preempt, which asks deviceshare again after each eviction.
fn vgpu_text(nodes: u32, jobs: &[VgpuJob]) -> String {
    let mut w = format!(
        "  seed: 5\n  horizon: 8h\n  cluster:\n    nodeGroups:\n      - {{name: n, count: {nodes}, cpu: 64, memory: 512Gi, vgpu: {{cards: 4, memory: 16000, split: 4}}}}\n  queues:\n    - {{name: a, weight: 1}}\n  scheduler:\n    inline: |\n      actions: \"enqueue, allocate, backfill, preempt\"\n      tiers:\n      - plugins: [{{name: priority}}, {{name: gang, enablePreemptable: false}}, {{name: conformance}}]\n      - plugins: [{{name: predicates}}, {{name: deviceshare, arguments: {{deviceshare.VGPUEnable: true, deviceshare.SchedulePolicy: binpack, deviceshare.ScheduleWeight: 10}}}}]\n  workload:\n    - jobs:\n"
    );
    for (i, &(submit, dur, high, pods, cards, mib, cores)) in jobs.iter().enumerate() {
        w += &format!(
            "        - {{name: v{i}, queue: a, priority: {}, submitAt: {submit}s, duration: {dur}s, tasks: [{{name: w, replicas: {pods}, resources: {{cpu: 2, volcano.sh/vgpu-number: {cards}, volcano.sh/vgpu-memory: {mib}, volcano.sh/vgpu-cores: {cores}}}}}]}}\n",
            if high { 10 } else { 0 },
        );
    }
    format!("apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: eq-vgpu}}\nspec:\n{w}")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn vgpu_sessions_decide_as_the_exhaustive_walk(nodes in 1u32..4, jobs in vgpu_jobs()) {
        let t = vgpu_text(nodes, &jobs);
        let fast = outputs(&t, false, false);
        let full = outputs(&t, true, false);
        prop_assert!(fast.0 == full.0, "decisions.csv differs:\n{}", first_difference(&fast.0, &full.0));
        prop_assert!(fast.1 == full.1, "pods.csv differs:\n{}", first_difference(&fast.1, &full.1));
    }
}

/// The vGPU comparison can fail: with every cached score reused however stale
/// (the engine's `planted.stale_scores`), fixed vGPU scenarios differ from the
/// exhaustive walk, so the reuse of deviceshare's scores is under test.
#[test]
fn a_stale_vgpu_score_is_caught() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = (1u32..4, vgpu_jobs());
    let differ = (0..12)
        .filter(|_| {
            let (nodes, jobs) = strategy.new_tree(&mut runner).expect("value").current();
            let t = vgpu_text(nodes, &jobs);
            outputs_with(&t, false, |e| e.planted.stale_scores = true) != outputs(&t, true, false)
        })
        .count();
    assert!(differ > 0, "no scenario noticed stale vGPU scores");
}

/// A job of the NUMA equivalence property: (submit s, duration s, high
/// priority, pods, CPUs per pod, topology policy: 0 none given, 1 the node's).
type NumaJob = (u32, u32, bool, u32, u32, u8);

fn numa_jobs() -> impl Strategy<Value = Vec<NumaJob>> {
    let job = (0u32..2000, 60u32..3000, any::<bool>(), 1u32..4, 1u32..20, 0u8..2);
    prop::collection::vec(job, 4..16)
}

/// Nodes of 32 CPUs on two NUMA nodes under `policy`, Guaranteed pods of a few
/// CPUs each (some naming the node's policy), numa-aware's predicate and batch
/// score beside binpack, and preempt: the CPUs a pod holds change without the
/// node's `used` changing (an eviction frees them for the session).
fn numa_text(nodes: u32, policy: &str, jobs: &[NumaJob]) -> String {
    let mut w = format!(
        "  seed: 5\n  horizon: 8h\n  cluster:\n    nodeGroups:\n      - {{name: n, count: {nodes}, cpu: 32, memory: 512Gi, numa: {{numaNodes: 2, topologyPolicy: {policy}, reserved: 1}}}}\n  queues:\n    - {{name: a, weight: 1}}\n  scheduler:\n    inline: |\n      actions: \"enqueue, allocate, backfill, preempt\"\n      tiers:\n      - plugins: [{{name: priority}}, {{name: gang, enablePreemptable: false}}, {{name: conformance}}]\n      - plugins: [{{name: predicates}}, {{name: binpack}}, {{name: numa-aware, arguments: {{weight: 10}}}}]\n  workload:\n    - jobs:\n"
    );
    for (i, &(submit, dur, high, pods, cpus, named)) in jobs.iter().enumerate() {
        let p = if named == 1 { format!(", topologyPolicy: {policy}") } else { String::new() };
        w += &format!(
            "        - {{name: c{i}, queue: a, priority: {}, submitAt: {submit}s, duration: {dur}s, tasks: [{{name: w, replicas: {pods}{p}, resources: {{cpu: {cpus}, memory: 1Gi}}}}]}}\n",
            if high { 10 } else { 0 },
        );
    }
    format!("apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: eq-numa}}\nspec:\n{w}")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn numa_sessions_decide_as_the_exhaustive_walk(
        nodes in 1u32..4,
        policy in prop::sample::select(vec!["best-effort", "restricted", "single-numa-node"]),
        jobs in numa_jobs(),
    ) {
        let t = numa_text(nodes, policy, &jobs);
        let fast = outputs(&t, false, false);
        let full = outputs(&t, true, false);
        prop_assert!(fast.0 == full.0, "decisions.csv differs:\n{}", first_difference(&fast.0, &full.0));
        prop_assert!(fast.1 == full.1, "pods.csv differs:\n{}", first_difference(&fast.1, &full.1));
    }
}

/// The NUMA comparison can fail: with numa-aware's verdicts reused whatever the
/// node's epoch (the engine's `planted.stale_scores`), fixed NUMA scenarios
/// differ from the exhaustive walk, so keeping verdicts per epoch is under test.
#[test]
fn a_stale_numa_verdict_is_caught() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = (1u32..4, prop::sample::select(vec!["best-effort", "restricted", "single-numa-node"]), numa_jobs());
    let differ = (0..12)
        .filter(|_| {
            let (nodes, policy, jobs) = strategy.new_tree(&mut runner).expect("value").current();
            let t = numa_text(nodes, policy, &jobs);
            outputs_with(&t, false, |e| e.planted.stale_scores = true) != outputs(&t, true, false)
        })
        .count();
    assert!(differ > 0, "no scenario noticed stale NUMA verdicts");
}

/// A MIG scenario of the equivalence property: `nodes` nodes of two
/// A100-SXM4-40GB cards in MIG mode (a snapshot, with the device plugin's
/// published ConfigMap), vGPU jobs from `vgpu_jobs` (one card per pod; the
/// instance taken depends on the card's group and instances in use), binpack
/// with weight and preempt. Returns decisions.csv and pods.csv.
fn mig_outputs(nodes: u32, jobs: &[VgpuJob], exhaustive: bool) -> (String, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let cm = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests/mig/snapshot-device-config.yaml"),
    )
    .expect("the example ConfigMap");
    let mut snap = cm + "\n";
    for n in 0..nodes {
        snap += &format!(
            "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: m{n}\n  annotations: {{volcano.sh/node-vgpu-register: \"GPU-{n}a,10,40960,NVIDIA-A100-SXM4-40GB,true,mig:GPU-{n}b,10,40960,NVIDIA-A100-SXM4-40GB,true,mig:\"}}\nstatus:\n  allocatable: {{cpu: \"64\", memory: 512Gi, volcano.sh/vgpu-number: \"20\", volcano.sh/vgpu-memory: \"81920\", volcano.sh/vgpu-cores: \"200\"}}\n"
        );
    }
    std::fs::write(dir.path().join("cluster.yaml"), snap).expect("write");
    let mut w = String::from(
        "  seed: 5\n  horizon: 8h\n  snapshot: cluster.yaml\n  queues:\n    - {name: a, weight: 1}\n  scheduler:\n    inline: |\n      actions: \"enqueue, allocate, backfill, preempt\"\n      tiers:\n      - plugins: [{name: priority}, {name: gang, enablePreemptable: false}, {name: conformance}]\n      - plugins: [{name: predicates}, {name: deviceshare, arguments: {deviceshare.VGPUEnable: true, deviceshare.SchedulePolicy: binpack, deviceshare.ScheduleWeight: 10}}]\n  workload:\n    - jobs:\n",
    );
    for (i, &(submit, dur, high, pods, _cards, mib, cores)) in jobs.iter().enumerate() {
        w += &format!(
            "        - {{name: v{i}, queue: a, priority: {}, submitAt: {submit}s, duration: {dur}s, tasks: [{{name: w, replicas: {pods}, resources: {{cpu: 2, volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: {mib}, volcano.sh/vgpu-cores: {cores}}}}}]}}\n",
            if high { 10 } else { 0 },
        );
    }
    let text = format!("apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: eq-mig}}\nspec:\n{w}");
    let s = lahar::scenario::load_str(&text, "eq.yaml", dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let out = dir.path().join("out");
    let opts = lahar::RunOptions { out_dir: Some(out.clone()), exhaustive, ..Default::default() };
    lahar::run(s, &opts).expect("run");
    let read = |f: &str| std::fs::read_to_string(out.join(f)).expect("output");
    (read("decisions.csv"), read("pods.csv"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn mig_sessions_decide_as_the_exhaustive_walk(nodes in 1u32..3, jobs in vgpu_jobs()) {
        let fast = mig_outputs(nodes, &jobs, false);
        let full = mig_outputs(nodes, &jobs, true);
        prop_assert!(fast.0.contains(",bind,"), "no pod placed: the scenario tests nothing");
        prop_assert!(fast.0 == full.0, "decisions.csv differs:\n{}", first_difference(&fast.0, &full.0));
        prop_assert!(fast.1 == full.1, "pods.csv differs:\n{}", first_difference(&fast.1, &full.1));
    }
}

/// Failures that come often: hosts, GPUs (2 at a time), leaf switches, and a
/// drain of `n-1` with a deadline, over the same random scenarios.
const FAULTS: &str = "  faults:
    random:
      - {name: hosts, between: {distribution: exponential, mean: 3h}, repair: {distribution: fixed, value: 20m}}
      - {name: gpus, scope: gpu, gpus: 2, between: {distribution: weibull, shape: 0.8, scale: 2h}, repair: {distribution: lognormal, median: 30m, sigma: 0.5}}
      - {name: leaves, scope: switch, tier: 1, between: {distribution: exponential, mean: 8h}, repair: {distribution: fixed, value: 10m}}
    drains:
      - {at: 1h, nodes: n-1, deadline: 10m, duration: 1h}
";

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Capacity that fails and comes back (allocatable, devices, taints
    /// changing under the caches) is decided the same by the fast sessions as
    /// by the exhaustive walk.
    #[test]
    fn fault_sessions_decide_as_the_exhaustive_walk(nodes in 3u32..8, conf in 0usize..4, jobs in jobs()) {
        let t = text(nodes, CONFS[conf], &jobs, true).replace("  workload:\n", &format!("{FAULTS}  workload:\n"));
        prop_assert!(t.contains("faults:"));
        let fast = outputs(&t, false, false);
        let full = outputs(&t, true, false);
        prop_assert!(fast.0 == full.0, "decisions.csv differs:\n{}", first_difference(&fast.0, &full.0));
        prop_assert!(fast.1 == full.1, "pods.csv differs:\n{}", first_difference(&fast.1, &full.1));
        // A draw whose faults hit no running pod tests nothing new: it is
        // rejected, not failed (about one in two thousand; proptest fails the
        // test if rejections pile up).
        prop_assume!(fast.1.contains(",failed\n") || jobs.len() < 3);
    }
}

/// A job of the vNPU equivalence property: (submit s, duration s, high
/// priority, 910B3 rather than 310P, chips, MiB per chip (0: none given),
/// hami-core mode).
type VnpuJob = (u32, u32, bool, bool, u32, i64, bool);

fn vnpu_jobs() -> impl Strategy<Value = Vec<VnpuJob>> {
    let job = (
        0u32..2000,
        60u32..3000,
        any::<bool>(),
        any::<bool>(),
        1u32..3,
        prop::sample::select(vec![0i64, 1024, 3072, 6144, 12288, 20480, 32768]),
        prop::bool::weighted(0.2),
    );
    prop::collection::vec(job, 4..16)
}

/// Nodes of two Ascend 310P chips (the first in hami-core mode) and a 910B3
/// node of eight chips on two rings (a snapshot, with Project-HAMi's published
/// ConfigMap), pods asking for chips, binpack's weighted score and preempt.
/// Returns decisions.csv and pods.csv.
fn vnpu_outputs(nodes: u32, jobs: &[VnpuJob], exhaustive: bool, stale: bool) -> (String, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = vnpu_scenario(dir.path(), nodes, jobs);
    s.engine.planted.stale_scores = stale;
    let out = dir.path().join("out");
    let opts = lahar::RunOptions { out_dir: Some(out.clone()), exhaustive, ..Default::default() };
    lahar::run(s, &opts).expect("run");
    let read = |f: &str| std::fs::read_to_string(out.join(f)).expect("output");
    (read("decisions.csv"), read("pods.csv"))
}

/// The scenario of [`vnpu_outputs`], its files written in `dir`.
fn vnpu_scenario(dir: &Path, nodes: u32, jobs: &[VnpuJob]) -> lahar::scenario::Scenario {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut snap = std::fs::read_to_string(root.join("examples/manifests/vnpu/cluster/ascend-device-configmap.yaml"))
        .expect("the example ConfigMap");
    let chip = |id: String, i: u32, count: u32, mem: u32, core: u32, ty: &str, ring: Option<u32>| {
        let ring = ring.map_or(String::new(), |r| format!(",\"custominfo\":{{\"NetworkID\":{r}}}"));
        format!(
            "{{\"id\":\"{id}\",\"index\":{i},\"count\":{count},\"devmem\":{mem},\"devcore\":{core},\"type\":\"{ty}\"{ring}}}"
        )
    };
    for n in 0..nodes {
        let core = n == 0;
        let chips: Vec<String> = (0..2)
            .map(|i| chip(format!("p{n}-{i}"), i, 7, 21527, if core { 100 } else { 8 }, "Ascend310P", None))
            .collect();
        snap += &format!(
            "\n---\napiVersion: v1\nkind: Node\nmetadata:\n  name: p{n}\n  annotations:\n    hami.io/node-register-Ascend310P: '[{}]'\n    hami-vnpu-core: \"{core}\"\nstatus:\n  allocatable: {{cpu: \"64\", memory: 256Gi, huawei.com/Ascend310P: \"14\"}}\n",
            chips.join(",")
        );
    }
    let chips: Vec<String> =
        (0..8).map(|i| chip(format!("b-{i}"), i, 4, 65536, 20, "Ascend910B3", Some(i / 4))).collect();
    snap += &format!(
        "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: b0\n  annotations:\n    hami.io/node-register-Ascend910B3: '[{}]'\nstatus:\n  allocatable: {{cpu: \"64\", memory: 256Gi, huawei.com/Ascend910B3: \"32\"}}\n",
        chips.join(",")
    );
    std::fs::write(dir.join("cluster.yaml"), snap).expect("write");
    let mut pods = String::from(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 100\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 0\n",
    );
    // One pod that always fits, so that every case places something.
    let first = (0, 600, false, false, 1, 3072, false);
    for (i, &(submit, dur, high, b910, chips, mib, core)) in [first].iter().chain(jobs).enumerate() {
        let ty = if b910 { "Ascend910B3" } else { "Ascend310P" };
        let mut limits = format!("huawei.com/{ty}: {chips}");
        if mib > 0 {
            limits += &format!(", huawei.com/{ty}-memory: {mib}");
        }
        if core {
            limits += &format!(", huawei.com/{ty}-core: 30");
        }
        pods += &format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: v{i}\n  annotations: {{lahar.io/submit-at: {submit}s, lahar.io/duration: {dur}s{}}}\nspec:\n  schedulerName: volcano\n  priorityClassName: {}\n  containers: [{{name: c, resources: {{limits: {{cpu: 2, {limits}}}}}}}]\n",
            if core { ", huawei.com/vnpu-mode: hami-core" } else { "" },
            if high { "high" } else { "low" },
        );
    }
    std::fs::write(dir.join("pods.yaml"), pods).expect("write");
    let text = "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: eq-vnpu}\nspec:\n  seed: 5\n  horizon: 8h\n  snapshot: cluster.yaml\n  queues:\n    - {name: default, weight: 1}\n  scheduler:\n    inline: |\n      actions: \"enqueue, allocate, backfill, preempt\"\n      tiers:\n      - plugins: [{name: priority}, {name: gang, enablePreemptable: false}, {name: conformance}]\n      - plugins: [{name: predicates}, {name: deviceshare, arguments: {deviceshare.AscendHAMiVNPUEnable: true, deviceshare.KnownGeometriesCMName: hami-scheduler-device, deviceshare.SchedulePolicy: binpack, deviceshare.ScheduleWeight: 10}}]\n  workload:\n    - manifests: pods.yaml\n";
    lahar::scenario::load_str(text, "eq.yaml", dir).unwrap_or_else(|e| panic!("{e}"))
}

/// The vNPU comparison can fail: with every remembered verdict reused however
/// stale, fixed vNPU scenarios differ from the exhaustive walk, so deviceshare's
/// memo of verdicts is under test.
#[test]
fn a_stale_vnpu_verdict_is_caught() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = (1u32..3, vnpu_jobs());
    let differ = (0..12)
        .filter(|_| {
            let (nodes, jobs) = strategy.new_tree(&mut runner).expect("value").current();
            vnpu_outputs(nodes, &jobs, false, true) != vnpu_outputs(nodes, &jobs, true, false)
        })
        .count();
    assert!(differ > 0, "no scenario noticed stale vNPU verdicts");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Ascend vNPU chips (a ledger beside the resource sums, read by the
    /// predicate and the score) are decided the same by the fast sessions as by
    /// the exhaustive walk.
    #[test]
    fn vnpu_sessions_decide_as_the_exhaustive_walk(nodes in 1u32..3, jobs in vnpu_jobs()) {
        let fast = vnpu_outputs(nodes, &jobs, false, false);
        let full = vnpu_outputs(nodes, &jobs, true, false);
        prop_assert!(fast.0.contains(",bind,"), "no pod placed: the scenario tests nothing");
        prop_assert!(fast.0 == full.0, "decisions.csv differs:\n{}", first_difference(&fast.0, &full.0));
        prop_assert!(fast.1 == full.1, "pods.csv differs:\n{}", first_difference(&fast.1, &full.1));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// The chip ledger agrees with the pods when a run stops (at a random
    /// time, most pods still running or waiting): each chip's use
    /// is the sum of what its holders hold, within the chip's vNPUs, memory and
    /// cores; every holder is a pod running (or releasing) on that node, and
    /// every running pod that asks for chips of its node's type holds some.
    #[test]
    fn vnpu_ledger_agrees_with_the_pods(nodes in 1u32..3, jobs in vnpu_jobs(), stop in 1u32..4000) {
        use lahar_core::model::job::PodStatus;
        let dir = tempfile::tempdir().expect("tempdir");
        let mut s = vnpu_scenario(dir.path(), nodes, &jobs);
        s.engine.horizon = Some(lahar_core::util::time::SimTime(u64::from(stop) * 1_000_000));
        let r = lahar::run(s, &lahar::RunOptions { no_write: true, ..Default::default() }).expect("run");
        let w = &r.output.world;
        let mut holders = std::collections::BTreeSet::new();
        for (n, (node, ns)) in w.cluster.nodes.iter().zip(&w.nodes).enumerate() {
            for (nc, u) in node.vnpu.iter().zip(&ns.vnpu) {
                let mut sum = vec![(0u32, 0i64, 0i64); nc.chips.len()];
                for h in &u.holders {
                    let pod = &w.pods[h.pod];
                    let want = if h.releasing { PodStatus::Releasing } else { PodStatus::Running };
                    prop_assert_eq!((pod.status, pod.node.map(|x| x.0 as usize)), (want, Some(n)));
                    holders.insert(h.pod);
                    for &(c, m, k) in h.takes.iter().filter(|_| !h.releasing) {
                        let e = &mut sum[c as usize];
                        *e = (e.0 + 1, e.1 + m, e.2 + k);
                    }
                }
                for (c, (chip, use_)) in nc.chips.iter().zip(&u.uses).enumerate() {
                    prop_assert_eq!((use_.used, use_.memory, use_.cores), sum[c]);
                    prop_assert!(use_.used <= chip.count && use_.memory <= chip.devmem && use_.cores <= 100.max(chip.devcore));
                }
            }
        }
        for (id, pod) in w.pods.iter().enumerate() {
            let Some(n) = pod.node.filter(|_| pod.status == PodStatus::Running) else { continue };
            let spec = &w.jobs[pod.job].spec;
            let Some(ask) = spec.tasks[pod.task as usize].hints.as_ref().and_then(|h| h.vnpu.as_deref()) else { continue };
            let asks_here = w.cluster.nodes[n].vnpu.iter().any(|nc| ask.of(&nc.ty.common_word).is_some());
            prop_assert!(!asks_here || holders.contains(&lahar_core::model::job::PodId(id as u32)), "pod {} holds no chip", id);
        }
    }
}

/// A VolcanoJob of the controller property: (submit s, duration s, queue, high
/// priority, pods, GPUs per pod, policy: 0 none, 1 RestartJob on PodEvicted, 2
/// RestartJob on Unknown, 3 RestartTask on PodEvicted, 4 RestartJob on PodPending
/// after 20 min, 5 RestartJob on PodFailed, 6 AbortJob on exit code 3, 7
/// CompleteJob on TaskCompleted).
type VcJob = (u32, u32, usize, bool, u32, u32, u8);

fn vc_jobs() -> impl Strategy<Value = Vec<VcJob>> {
    let job =
        (0u32..3000, 60u32..4000, 0usize..2, any::<bool>(), 1u32..5, prop::sample::select(vec![1u32, 2, 4, 8]), 0u8..8);
    prop::collection::vec(job, 6..30)
}

/// VolcanoJob manifests (pods made once their PodGroup is admitted, RestartJob
/// making it anew, every fifth job's containers failing, every tenth's
/// restarting in place, every sixth's exiting 0 when the kubelet stops them) and batch/v1 Jobs (every ninth) under `conf`, with operators editing queues (weight, state,
/// reclaimable, capability), cordoning a node, tainting one `NoExecute`,
/// adding a node declared absent and removing nodes, labelling nodes and
/// removing a label (every seventh job selects the label),
/// deleting a job and a pod, suspending, resuming and scaling jobs, removing
/// scheduling gates (every fourth job's pods are gated, some by Volcano's own
/// gate too) (`spec.timeline`), in a folder of their own.
fn vc_dir(nodes: u32, conf: &str, jobs: &[VcJob]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut m = String::from(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 10\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 0\n",
    );
    for (i, &(submit, dur, queue, high, pods, gpus, policy)) in jobs.iter().enumerate() {
        let policy = [
            "",
            "  policies: [{event: PodEvicted, action: RestartJob}]\n",
            "  policies: [{event: Unknown, action: RestartJob}]\n",
            "  policies: [{event: PodEvicted, action: RestartTask}]\n",
            "  policies: [{event: PodPending, action: RestartJob, timeout: 20m}]\n",
            "  policies: [{event: PodFailed, action: RestartJob}]\n",
            "  policies: [{exitCode: 3, action: AbortJob}]\n",
            "  policies: [{event: TaskCompleted, action: CompleteJob}]\n",
        ][policy as usize];
        // Every sixth job's containers exit 0 when the kubelet stops them: a
        // deleted pod's terminal phase is Succeeded (the rest: 143, Failed).
        let stop = if i % 6 == 1 { "lahar.io/stop-exit-code: \"0\"" } else { "" };
        // Every fifth job's containers fail (exit code 3 or 1) before its work is done.
        let fails = if i % 5 == 2 {
            let stop = if stop.is_empty() { String::new() } else { format!(", {stop}") };
            format!(
                "        metadata: {{annotations: {{lahar.io/fail-after: {}s, lahar.io/exit-code: \"{}\"{stop}}}}}\n",
                dur / 3 + 30,
                1 + 2 * (i % 2)
            )
        } else if !stop.is_empty() {
            format!("        metadata: {{annotations: {{{stop}}}}}\n")
        } else {
            String::new()
        };
        // Every tenth job's containers restart in place, which a task-level
        // `TaskFailed: RestartJob` ends after two restarts.
        let in_place = i % 10 == 7;
        let restart = match (fails.is_empty() || i % 5 != 2, in_place) {
            (true, _) => "",
            (false, true) => "          restartPolicy: OnFailure\n",
            (false, false) => "          restartPolicy: Never\n",
        };
        let task_extra = if in_place {
            "      maxRetry: 2\n      policies: [{event: TaskFailed, action: RestartJob}]\n"
        } else {
            ""
        };
        // Every seventh job selects nodes labelled `pool: p`, which the
        // timeline's `label` and `unlabel` steps give and take away.
        let select = if i % 7 == 4 { "          nodeSelector: {pool: p}\n" } else { "" };
        let gates = match i % 8 {
            3 | 7 => "          schedulingGates: [{name: example.com/a}]\n",
            5 => {
                "          schedulingGates: [{name: example.com/a}, {name: scheduling.volcano.sh/queue-allocation-gate}]\n"
            }
            _ => "",
        };
        // Every ninth job is a batch/v1 Job (Kubernetes' Job controller: waves
        // of `parallelism` pods, one more completion than that), every other
        // one of them with containers restarting in place against its
        // `backoffLimit`.
        if i % 9 == 8 {
            let crash = if i % 2 == 0 { format!(", lahar.io/fail-after: {}s", dur / 2 + 30) } else { String::new() };
            m += &format!(
                "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: v{i}\n  annotations: {{lahar.io/duration: {dur}s, lahar.io/submit-at: {submit}s}}\nspec:\n  parallelism: {pods}\n  completions: {}\n  backoffLimit: 3\n  template:\n    metadata:\n      annotations: {{scheduling.volcano.sh/queue-name: {}{crash}}}\n    spec:\n      schedulerName: volcano\n      restartPolicy: OnFailure\n      priorityClassName: {}\n      containers: [{{name: c, image: i, resources: {{limits: {{nvidia.com/gpu: {gpus}, cpu: {}}}}}}}]\n",
                pods + 1,
                ["a", "b"][queue],
                if high { "high" } else { "low" },
                gpus * 4
            );
            continue;
        }
        m += &format!(
            "---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: v{i}\n  annotations: {{lahar.io/duration: {dur}s, lahar.io/submit-at: {submit}s}}\nspec:\n  queue: {}\n  priorityClassName: {}\n  maxRetry: 5\n{policy}  tasks:\n    - name: w\n      replicas: {pods}\n{task_extra}      template:\n{fails}        spec:\n{restart}{gates}{select}          containers: [{{name: c, image: i, resources: {{limits: {{nvidia.com/gpu: {gpus}, cpu: {}}}}}}}]\n",
            ["a", "b"][queue],
            if high { "high" } else { "low" },
            gpus * 4
        );
    }
    std::fs::write(dir.path().join("jobs.yaml"), m).expect("write");
    let s = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: eq-vc}}\nspec:\n  seed: 3\n  horizon: 8h\n  cluster:\n    nodeGroups:\n      - {{name: n, count: {nodes}, gpus: 8, cpu: 64, memory: 512Gi}}\n      - {{name: x, count: 1, gpus: 8, cpu: 64, memory: 512Gi, absent: true}}\n  queues:\n    - {{name: a, weight: 2}}\n    - {{name: b, weight: 1}}\n  scheduler:\n    inline: |\n      {conf}\n  workload:\n    - manifests: jobs.yaml\n  timeline:\n    - {{at: 75m, addNodes: x-0}}\n    - {{at: 190m, removeNodes: n-1}}\n    - {{at: 260m, addNodes: n-1}}\n    - {{at: 330m, removeNodes: x-0}}\n    - {{at: 30m, queue: b, weight: 3}}\n    - {{at: 1h, cordon: n-0}}\n    - {{at: 90m, queue: a, state: Closed}}\n    - {{at: 2h, queue: a, state: Open, reclaimable: false}}\n    - {{at: 3h, uncordon: n-0}}\n    - {{at: 150m, taint: n-1, key: k, effect: NoExecute}}\n    - {{at: 170m, queue: b, capability: {{nvidia.com/gpu: 8}}}}\n    - {{at: 200m, untaint: n-1, key: k}}\n    - {{at: 20m, label: n-1, key: pool, value: p}}\n    - {{at: 140m, label: \"n-*\", key: pool, value: p}}\n    - {{at: 230m, unlabel: n-1, key: pool}}\n    - {{at: 4h, deleteJob: v3}}\n    - {{at: 5h, deletePod: v5-w-0}}\n    - {{at: 40m, suspendJob: v1}}\n    - {{at: 100m, resumeJob: v1}}\n    - {{at: 130m, suspendJob: v2}}\n    - {{at: 6h, resumeJob: v2}}\n    - {{at: 7h, suspendJob: v4}}\n    - {{at: 50m, scaleJob: v0, replicas: 6, minAvailable: 6}}\n    - {{at: 80m, scaleJob: v2, replicas: 1, taskMinAvailable: 1, minAvailable: 1}}\n    - {{at: 110m, scaleJob: v6, replicas: 0, taskMinAvailable: 0, minAvailable: 0}}\n    - {{at: 140m, scaleJob: v6, replicas: 3}}\n    - {{at: 45m, ungateJob: v3}}\n    - {{at: 95m, ungatePod: v7-w-0}}\n    - {{at: 2h, ungateJob: v5, gates: [example.com/a]}}\n    - {{at: 150m, ungateJob: v13, gates: [example.com/a]}}\n    - {{at: 5h, ungateJob: v11}}\n"
    );
    std::fs::write(dir.path().join("s.yaml"), s).expect("write");
    dir
}

/// decisions.csv and pods.csv of the scenario in `dir`, whose end state must
/// pass the World's invariant check.
fn vc_outputs(dir: &Path, exhaustive: bool) -> (String, String) {
    vc_outputs_with(dir, exhaustive, |_| {})
}

/// [`vc_outputs`] with the engine settings `tweak` changes.
fn vc_outputs_with(dir: &Path, exhaustive: bool, tweak: impl Fn(&mut EngineConfig)) -> (String, String) {
    let out = dir.join(if exhaustive { "full" } else { "fast" });
    let mut s = lahar::scenario::load_file(&dir.join("s.yaml")).unwrap_or_else(|e| panic!("{e}"));
    tweak(&mut s.engine);
    let broken = s.engine.planted.wrong_gates;
    let opts = lahar::RunOptions { out_dir: Some(out.clone()), exhaustive, ..Default::default() };
    let r = lahar::run(s, &opts).expect("run");
    if let (false, Err(e)) = (broken, r.output.world.check_invariants()) {
        panic!("invariants broken: {e}");
    }
    let read = |f: &str| std::fs::read_to_string(out.join(f)).expect("output");
    (read("decisions.csv"), read("pods.csv"))
}

/// A conf without enqueue: allocate admits every Pending PodGroup itself.
const NO_ENQUEUE: &str = r#"actions: "allocate, backfill, preempt, reclaim"
      tiers:
      - plugins: [{name: priority}, {name: gang}, {name: conformance}]
      - plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}, {name: binpack}]"#;

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// The job controller over sessions (issue 40): VolcanoJobs whose pods the
    /// controller makes once their groups are admitted (the exhaustive mode asks
    /// every active job at each close, the fast one the jobs the session touched),
    /// restarts that delete and remake PodGroups, re-derived phases.
    #[test]
    fn controller_sessions_decide_as_the_exhaustive_walk(nodes in 2u32..6, conf in 0usize..3, jobs in vc_jobs()) {
        let conf = [CONFS[0], CONFS[1], NO_ENQUEUE][conf];
        let dir = vc_dir(nodes, conf, &jobs);
        let fast = vc_outputs(dir.path(), false);
        let full = vc_outputs(dir.path(), true);
        prop_assert!(fast.0 == full.0, "decisions.csv differs:\n{}", first_difference(&fast.0, &full.0));
        prop_assert!(fast.1 == full.1, "pods.csv differs:\n{}", first_difference(&fast.1, &full.1));
    }
}

/// The controller property can fail on scheduling gates: when the World's
/// queue sums ignore gates coming off (the reservation a gated job's pods give
/// back is never taken again, so enqueue admits too much), fixed scenarios
/// decide otherwise than the exhaustive walk, which sums every job afresh.
#[test]
fn a_stale_gate_deduction_is_caught() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = (2u32..6, vc_jobs());
    let differ = (0..16)
        .filter(|_| {
            let (nodes, jobs) = strategy.new_tree(&mut runner).expect("value").current();
            let dir = vc_dir(nodes, CONFS[0], &jobs);
            let wrong = vc_outputs_with(dir.path(), false, |e| e.planted.wrong_gates = true);
            wrong != vc_outputs(dir.path(), true)
        })
        .count();
    assert!(differ > 0, "no scenario showed the stale gate deduction");
}
