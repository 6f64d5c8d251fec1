//! `lahar sweep` throughput (issue 15): a 64-cell sweep — examples/synthetic-mix.yaml
//! (400 jobs, Volcano's default conf) over 4 cluster sizes × 2 policies × 8 seeds —
//! run with `--jobs 1` and `--jobs 2`, every cell writing its full run outputs into
//! a fresh directory. Throughput is in cells; the target is at least 1.8× for
//! `--jobs 2` on a 2-core machine.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use std::path::Path;

const SWEEP: &str = "apiVersion: lahar.io/v1alpha1
kind: Sweep
metadata: {name: bench}
spec:
  scenario: SCENARIO
  seeds: 8
  grid:
    - {name: nodes, path: 'spec.cluster.nodeGroups[0].count', values: [3, 4, 5, 6]}
    - name: policy
      path: spec.scheduler
      values:
        - {name: volcano, value: null}
        - {name: sjf, value: {baseline: sjf}}
";

fn bench(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("bench-sweep.yaml");
    let scenario = root.join("examples/synthetic-mix.yaml").canonicalize().expect("example scenario");
    std::fs::write(&file, SWEEP.replace("SCENARIO", &scenario.display().to_string())).expect("write sweep");
    let sweep = lahar::sweep::load(&file).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sweep.cells().len(), 64);
    let mut g = c.benchmark_group("sweep");
    g.sample_size(10);
    g.throughput(Throughput::Elements(64));
    for jobs in [1usize, 2] {
        g.bench_function(format!("64-cells/jobs-{jobs}"), |b| {
            b.iter_batched(
                || tempfile::tempdir().expect("tempdir"),
                |out| {
                    let opts = lahar::sweep::ExecOptions {
                        out: out.path().to_path_buf(),
                        jobs: Some(jobs),
                        resume: false,
                        shard: None,
                        progress: false,
                        plot_style: Default::default(),
                        outputs: Default::default(),
                        stop: None,
                    };
                    let (o, w) = lahar::sweep::run(&sweep, &opts).expect("sweep");
                    assert!(o.failed.is_empty() && w.is_some_and(|w| w.ok == 64));
                    out
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
