//! Whole-pipeline benchmarks: load a scenario, simulate it, compute metrics.
//! `pipeline/default` is the embedded default scenario (64 nodes, 3,000 jobs);
//! `pipeline/large` is examples/large-h100.yaml (1,024 nodes, 12,000 jobs);
//! `pipeline/default-faults` the default scenario with hosts failing every 20
//! days and GPUs every 10 days on each node (about 10 failures a day), and
//! every multi-pod job killed by one restarting from scratch.
//! Throughput is reported in events/s; jobs/s follows from the job counts.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use lahar::scenario::{self, Scenario};
use std::hint::black_box;
use std::path::Path;

fn simulate(s: Scenario) -> u64 {
    let opts = lahar::RunOptions { no_write: true, ..Default::default() };
    let r = lahar::run(s, &opts).expect("run");
    r.output.stats.events
}

fn large() -> Scenario {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/large-h100.yaml");
    scenario::load_file(&p).unwrap_or_else(|e| panic!("{e}"))
}

/// `s` with random host and GPU failures on every node.
fn with_faults(mut s: Scenario) -> Scenario {
    use lahar_core::faults::{Dist, FaultPlan, FaultRule, RuleScope};
    use lahar_core::util::time::SimDuration;
    let units: Vec<u32> = (0..s.cluster.len() as u32).collect();
    let day = SimDuration::from_secs(86_400);
    let rule = |name: &str, scope, days: u64| FaultRule {
        name: name.into(),
        scope,
        units: units.clone(),
        between: Dist::Exponential { mean: SimDuration(day.micros() * days) },
        repair: Dist::LogNormal { median: SimDuration::from_secs(4 * 3600), sigma: 1.0 },
    };
    s.faults = Some(FaultPlan {
        rules: vec![rule("hosts", RuleScope::Node, 20), rule("gpus", RuleScope::Gpus(1), 10)],
        outages: Vec::new(),
    });
    s
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("pipeline");
    let default = scenario::load_default();
    let events = simulate(default.clone());
    g.throughput(Throughput::Elements(events));
    g.bench_function("default", |b| {
        b.iter_batched(|| default.clone(), |s| black_box(simulate(s)), BatchSize::LargeInput)
    });
    let faulty = with_faults(default.clone());
    let events = simulate(faulty.clone());
    g.throughput(Throughput::Elements(events));
    g.bench_function("default-faults", |b| {
        b.iter_batched(|| faulty.clone(), |s| black_box(simulate(s)), BatchSize::LargeInput)
    });
    let large = large();
    let events = simulate(large.clone());
    g.throughput(Throughput::Elements(events));
    g.sample_size(10);
    g.bench_function("large", |b| b.iter_batched(|| large.clone(), |s| black_box(simulate(s)), BatchSize::LargeInput));
    g.finish();

    let mut g = c.benchmark_group("load");
    g.bench_function("default-scenario", |b| b.iter(|| black_box(scenario::load_default())));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
