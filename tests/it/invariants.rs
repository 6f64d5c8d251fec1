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
        let mut per_node: BTreeMap<u32, Vec<(u64, i32, lahar_core::resource::Resources)>> = BTreeMap::new();
        for p in &r.output.pods {
            let req = w.pods[p.pod.0 as usize].req;
            per_node.entry(p.node.0).or_default().push((p.start.micros(), 1, req));
            per_node.entry(p.node.0).or_default().push((p.end.micros(), -1, req));
        }
        for (n, mut ev) in per_node {
            ev.sort_by_key(|e| (e.0, e.1));
            let mut used = lahar_core::resource::Resources::ZERO;
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
