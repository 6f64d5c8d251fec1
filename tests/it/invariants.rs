//! Properties that must hold for any workload: no node is over-allocated at any
//! instant, gangs start whole, work is conserved, runs are reproducible.

use super::*;
use proptest::prelude::*;
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
struct J {
    submit: u32,
    dur: u32,
    tasks: Vec<(u32, u32, u32)>, // replicas, gpus, cpu
    min_frac: u32,
}

fn jobs() -> impl Strategy<Value = Vec<J>> {
    prop::collection::vec(
        (0u32..200, 1u32..300, prop::collection::vec((1u32..5, 0u32..5, 1u32..9), 1..3), 1u32..=4)
            .prop_map(|(submit, dur, tasks, min_frac)| J { submit, dur, tasks, min_frac }),
        1..25,
    )
}

fn text(nodes: &[(u32, u32)], jobs: &[J], baseline: &str) -> String {
    let mut n = String::from("    nodes:\n");
    for (i, (g, c)) in nodes.iter().enumerate() {
        n += &format!("      - {{name: n{i}, gpus: {g}, cpu: {c}, memory: 256Gi, pods: 6}}\n");
    }
    let mut w = format!("  scheduler: {{baseline: {baseline}}}\n  workload:\n    - jobs:\n");
    for (i, j) in jobs.iter().enumerate() {
        let total: u32 = j.tasks.iter().map(|t| t.0).sum();
        let min = (total * j.min_frac).div_ceil(4).max(1);
        let tasks: Vec<String> = j
            .tasks
            .iter()
            .enumerate()
            .map(|(k, t)| {
                format!("{{name: t{k}, replicas: {}, resources: {{nvidia.com/gpu: {}, cpu: {}}}}}", t.0, t.1, t.2)
            })
            .collect();
        w += &format!(
            "      - {{name: j{i}, submitAt: {}s, duration: {}s, minAvailable: {min}, tasks: [{}]}}\n",
            j.submit,
            j.dur,
            tasks.join(", ")
        );
    }
    scenario(n.trim_end(), &w)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn no_over_allocation_gangs_whole_work_conserved(
        nodes in prop::collection::vec((4u32..9, 8u32..33), 1..6),
        jobs in jobs(),
        strict in any::<bool>(),
    ) {
        let baseline = if strict { "gang-fifo-strict" } else { "gang-fifo" };
        let r = run_str(&text(&nodes, &jobs, baseline));
        let w = &r.output.world;
        // Sweep each node's intervals: ends before starts at the same instant.
        let mut per_node: BTreeMap<u32, Vec<(u64, i32, lahar_core::model::resource::Resources)>> = BTreeMap::new();
        for p in &r.output.pods {
            let req = w.pods[p.pod].req;
            per_node.entry(p.node.0).or_default().push((p.start.micros(), 1, req));
            per_node.entry(p.node.0).or_default().push((p.end.micros(), -1, req));
        }
        for (n, mut ev) in per_node {
            ev.sort_by_key(|e| (e.0, e.1));
            let mut used = lahar_core::model::resource::Resources::ZERO;
            let cap = w.cluster.nodes[n as usize].allocatable;
            for (t, sign, req) in ev {
                if sign > 0 { used += req } else { used -= req }
                prop_assert!(used.fits_in(&cap), "node n{} over-allocated at t={}: {:?} > {:?}", n, t, used, cap);
            }
        }
        for (i, job) in w.jobs.iter().enumerate() {
            let recs: Vec<_> = r.output.pods.iter().filter(|p| p.job.0 as usize == i).collect();
            match job.first_start {
                None => prop_assert!(recs.is_empty(), "job {} never started but has pods", i),
                Some(s) => {
                    let at_start = recs.iter().filter(|p| p.start == s).count() as u32;
                    prop_assert!(at_start >= job.spec.min_available.max(1), "job {} started with {} < minAvailable {}", i, at_start, job.spec.min_available);
                    if let Some(e) = job.end {
                        prop_assert_eq!(e.micros() - s.micros(), job.spec.duration.micros(), "job {} work not conserved", i);
                    }
                }
            }
        }
        prop_assert!(w.check_invariants().is_ok(), "{:?}", w.check_invariants());
        // Same input, same output.
        let again = run_str(&text(&nodes, &jobs, baseline));
        prop_assert_eq!(&r.output.pods, &again.output.pods);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// The GPU time's six shares sum to 1 and none is negative. Under a gang
    /// baseline no GPU is held without progress and every held GPU works (ideal
    /// run times, no loss); under `kube-default`, which places pods one by one, what is held
    /// without progress is exactly what pods held before their gang was whole
    /// (`gang_wait_gpu_hours`, summed from the pods' intervals by another path).
    #[test]
    fn gpu_time_partitions_the_cluster(
        nodes in prop::collection::vec((4u32..9, 8u32..33), 1..6),
        jobs in jobs(),
    ) {
        for baseline in ["gang-fifo", "kube-default"] {
            let s = run_str(&text(&nodes, &jobs, baseline)).summary;
            let g = &s.gpu_time;
            let shares = [g.useful, g.lost, g.slowed, g.stalled, g.releasing, g.idle];
            prop_assert!(shares.iter().all(|&x| x >= 0.0), "{baseline}: {g:?}");
            prop_assert!((shares.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{baseline}: {g:?}");
            let held = |share: f64| share * s.gpus_total * s.sim_time_s / 3600.0;
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
            prop_assert!(close(held(g.useful + g.stalled), held(s.gpu_allocation_rate)), "{baseline}: {g:?} vs {}", s.gpu_allocation_rate);
            if baseline == "gang-fifo" {
                prop_assert_eq!(g.stalled, 0.0);
            } else {
                prop_assert!(close(held(g.stalled), s.gang_wait_gpu_hours), "kube-default: stalled {} GPU·h, gang wait {} GPU·h", held(g.stalled), s.gang_wait_gpu_hours);
            }
        }
    }
}

/// GPU sharing: random fractional and whole-GPU pods under Volcano's default conf
/// and a gang baseline. At every instant no device holds more than one GPU, a
/// whole-GPU pod's devices hold nobody else, and every GPU pod held devices that
/// add up to its request.
fn sharing_text(nodes: &[u32], jobs: &[(u32, u32, u32, u32)], scheduler: &str) -> String {
    const SHARES: [&str; 6] = ["0.25", "0.3", "0.5", "0.6", "1", "2"];
    let mut n = String::from("    nodes:\n");
    for (i, g) in nodes.iter().enumerate() {
        n += &format!("      - {{name: n{i}, gpus: {g}, cpu: 64, memory: 256Gi}}\n");
    }
    let mut w = format!("{scheduler}  workload:\n    - jobs:\n");
    for (i, &(submit, dur, replicas, share)) in jobs.iter().enumerate() {
        w += &format!(
            "      - {{name: j{i}, submitAt: {submit}s, duration: {dur}s, tasks: [{{name: w, replicas: {replicas}, resources: {{cpu: 1, nvidia.com/gpu: {}}}}}]}}\n",
            SHARES[share as usize % SHARES.len()]
        );
    }
    scenario(n.trim_end(), &w)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 30, ..ProptestConfig::default() })]

    #[test]
    fn gpu_devices_are_never_over_shared(
        nodes in prop::collection::vec(2u32..5, 1..4),
        jobs in prop::collection::vec((0u32..100, 1u32..200, 1u32..4, 0u32..6), 1..30),
        volcano in any::<bool>(),
    ) {
        let scheduler = if volcano { "" } else { "  scheduler: {baseline: gang-fifo}\n" };
        let r = run_str(&sharing_text(&nodes, &jobs, scheduler));
        // (node, device) -> events (t, sign, milli, whole)
        type Events = Vec<(u64, i32, i64, bool)>;
        let mut per_dev: BTreeMap<(u32, u32), Events> = BTreeMap::new();
        for p in &r.output.pods {
            let h = p.gpu_devices;
            let whole = h.whole.count_ones() as i64;
            let share = p.gpu_milli % 1000;
            prop_assert_eq!(whole * 1000 + share, p.gpu_milli, "pod {:?} holds {:?} for {} milli", p.pod, h, p.gpu_milli);
            prop_assert_eq!(h.share.is_some(), share > 0);
            let mut add = |d: u32, milli: i64, is_whole: bool| {
                let e = per_dev.entry((p.node.0, d)).or_default();
                e.push((p.start.micros(), 1, milli, is_whole));
                e.push((p.end.micros(), -1, milli, is_whole));
            };
            for d in 0..64 {
                if h.whole & (1 << d) != 0 {
                    add(d, 1000, true);
                }
            }
            if let Some(d) = h.share {
                add(u32::from(d), share, false);
            }
        }
        for ((n, d), mut ev) in per_dev {
            ev.sort_by_key(|e| (e.0, e.1));
            let (mut used, mut holders) = (0i64, 0i32);
            let mut whole_held = 0i32;
            for (t, sign, milli, is_whole) in ev {
                used += sign as i64 * milli;
                holders += sign;
                if is_whole { whole_held += sign; }
                prop_assert!(used <= 1000, "n{} device {} holds {} milli at t={}", n, d, used, t);
                prop_assert!(whole_held == 0 || holders == 1, "n{} device {} shared with a whole-GPU pod at t={}", n, d, t);
            }
        }
        let w = &r.output.world;
        prop_assert!(w.check_invariants().is_ok(), "{:?}", w.check_invariants());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// A run without a horizon ends with the last thing that happened: a pod
    /// leaving its node (a killed one after its grace period), a job arriving,
    /// or an operator's step (timeline.csv's rows) — never at a timer a job
    /// left behind. Elastic and rigid gangs of two priorities (checkpointing
    /// every 10 min) under a Volcano conf with or without preempt, with jobs
    /// and pods deleted and jobs suspended at random instants (before, during
    /// or after their runs).
    #[test]
    fn a_run_without_a_horizon_ends_at_its_last_event(
        jobs in prop::collection::vec((0u32..7200, 60u32..7200, 1u32..4, 1u32..5, any::<bool>(), any::<bool>()), 1..8),
        steps in prop::collection::vec((0u32..14_400, 0usize..8, 0u8..3), 0..4),
        preempt in any::<bool>(),
    ) {
        let actions = if preempt { "enqueue, allocate, preempt, backfill" } else { "enqueue, allocate, backfill" };
        let mut w = format!(
            "  priorityClasses:\n    - {{name: high, value: 1000}}\n    - {{name: low, value: 10}}\n  scheduler:\n    inline: |\n      actions: \"{actions}\"\n      tiers:\n      - plugins: [{{name: priority}}, {{name: gang, enablePreemptable: false}}, {{name: conformance}}]\n      - plugins: [{{name: drf}}, {{name: predicates}}, {{name: proportion}}, {{name: nodeorder}}]\n  workload:\n    - jobs:\n"
        );
        for (i, &(submit, dur, replicas, gpus, elastic, high)) in jobs.iter().enumerate() {
            let shape = if elastic { "minAvailable: 1, scaling: linear".to_string() } else { format!("minAvailable: {replicas}") };
            let class = if high { "high" } else { "low" };
            w += &format!(
                "        - {{name: j{i}, priorityClassName: {class}, submitAt: {submit}s, duration: {dur}s, checkpointInterval: 10m, {shape}, tasks: [{{name: w, replicas: {replicas}, resources: {{nvidia.com/gpu: {gpus}}}}}]}}\n"
            );
        }
        if !steps.is_empty() {
            w += "  timeline:\n";
            for &(at, j, kind) in &steps {
                let j = j % jobs.len();
                let action = ["deleteJob: j", "suspendJob: j", "deletePod: j"][kind as usize];
                let pod = if kind == 2 { "-w-0" } else { "" };
                w += &format!("    - {{at: {at}s, {action}{j}{pod}}}\n");
            }
        }
        let nodes = "    nodes:\n      - {name: n0, gpus: 8, cpu: 64, memory: 256Gi}\n      - {name: n1, gpus: 8, cpu: 64, memory: 256Gi}";
        let text = scenario(nodes, &w);
        let r = run_str(&text);
        let o = &r.output;
        // A pod killed (its job deleted or suspended, itself deleted) leaves its
        // node after its grace period, 30 s: pods.csv's interval ends at the
        // kill, and the GPUs are releasing until then.
        let grace = lahar_core::util::time::SimDuration::from_secs(30);
        let last = o
            .pods
            .iter()
            .map(|p| if p.reason == lahar_core::record::EndReason::Completed { p.end } else { p.end.plus(grace) })
            .chain(o.world.jobs.iter().map(|j| j.spec.submit))
            .chain(o.operations.iter().map(|s| s.t))
            .max()
            .expect("a job");
        prop_assert_eq!(o.stats.end, last, "{}", text);
    }
}
