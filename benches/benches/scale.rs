//! Volcano at scale (issue 11): the whole pipeline on a 2,496-GPU cluster (312 nodes
//! × 8 H100 under 39 leaves of 8 and one spine, 2:1) with a production-style conf
//! (enqueue, allocate, backfill, preempt, reclaim; priority, gang, conformance | drf,
//! predicates, proportion, nodeorder, binpack, network-topology-aware) and synthetic
//! jobs at about 90% offered load (the default scenario's GPU-count and run-time mix,
//! 214 jobs/h, queues `research` 2 : `prod` 1). The scenario is generated here, not
//! committed. `scale/volcano/N` runs N jobs; `scale/gang-fifo/N` the same jobs under
//! the `gang-fifo` baseline. Throughput is in jobs.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use lahar::scenario::{self, Scenario};
use std::hint::black_box;
use std::path::Path;

/// The production-style conf of the issue.
pub const FULL_CONF: &str = r#"actions: "enqueue, allocate, backfill, preempt, reclaim"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}, {name: binpack}, {name: network-topology-aware}]"#;

/// The scenario with `jobs` jobs; `scheduler` is a `spec.scheduler` value.
pub fn text(jobs: u32, scheduler: &str) -> String {
    format!(
        "apiVersion: lahar.io/v1alpha1
kind: Scenario
metadata: {{name: scale-{jobs}}}
spec:
  seed: 42
  cluster:
    nodeGroups:
      - {{name: h100, count: 312, gpuModel: H100-SXM-80G, gpus: 8, cpu: 96, memory: 1Ti,
         intraNode: nvswitch, nics: {{count: 8, gbps: 400}}}}
    fabric:
      - {{tier: 1, name: leaf, fanout: 8, oversubscription: 1.0}}
      - {{tier: 2, name: spine, fanout: 39, oversubscription: 2.0}}
  queues:
    - {{name: research, weight: 2}}
    - {{name: prod, weight: 1}}
  scheduler: {scheduler}
  workload:
    - synthetic:
        jobs: {jobs}
        namePrefix: job
        arrival: {{poisson: {{ratePerHour: 214}}}}
        gpus: {{1: 45, 2: 10, 4: 10, 8: 20, 16: 8, 32: 5, 64: 2}}
        cpuPerGpu: 10
        memoryPerGpu: 100Gi
        duration: {{lognormal: {{median: 45m, sigma: 1.2, min: 1m, max: 7d}}}}
        queues: {{research: 2, prod: 1}}
  output: {{sampleInterval: 5m}}
"
    )
}

fn load(jobs: u32, scheduler: &str) -> Scenario {
    scenario::load_str(&text(jobs, scheduler), "scale.yaml", Path::new(".")).unwrap_or_else(|e| panic!("{e}"))
}

fn simulate(s: Scenario) -> u64 {
    let opts = lahar::RunOptions { no_write: true, ..Default::default() };
    lahar::run(s, &opts).expect("run").output.stats.sessions
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("scale");
    g.sample_size(10);
    let volcano: String =
        "\n    inline: |\n".to_string() + &FULL_CONF.lines().map(|l| format!("      {l}\n")).collect::<String>();
    for (name, scheduler, sizes) in
        [("volcano", volcano.as_str(), &[1_000u32, 3_000][..]), ("gang-fifo", "{baseline: gang-fifo}", &[10_000][..])]
    {
        for &n in sizes {
            let s = load(n, scheduler);
            g.throughput(Throughput::Elements(n as u64));
            g.bench_function(format!("{name}/{n}"), |b| {
                b.iter_batched(|| s.clone(), |s| black_box(simulate(s)), BatchSize::LargeInput)
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
