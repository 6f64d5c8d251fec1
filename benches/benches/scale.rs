//! Volcano at scale (issue 11): the whole pipeline on a 2,496-GPU cluster (312 nodes
//! × 8 H100 under 39 leaves of 8 and one spine, 2:1) with a production-style conf
//! (enqueue, allocate, backfill, preempt, reclaim; priority, gang, conformance | drf,
//! predicates, proportion, nodeorder, binpack, network-topology-aware) and synthetic
//! jobs at about 90% offered load (the default scenario's GPU-count and run-time mix,
//! 214 jobs/h, queues `research` 2 : `prod` 1). The scenario is generated here, not
//! committed (`lahar_benches::scale`; the `scale-scenario` tool prints it for
//! `lahar run`). `scale/volcano/N` runs N jobs; `scale/volcano-p-prime/N` the same with
//! drf not choosing preempt victims (P′: the standing-backlog case, where the queue of
//! waiting gangs grows through the run); `scale/gang-fifo/N` the same jobs under the
//! `gang-fifo` baseline. Throughput is in jobs.
//!
//! `contention/*` (issue 39) are the hard case of preemption: three priority
//! classes on a busy cluster ([`Scale::contention`]): `p-prime/N` (drf does not
//! choose victims), `p/N` (drf chooses them: preemption churns), `p-prime-ckpt/N`
//! (jobs checkpoint every 30 minutes) and `gang-fifo/N` on the same jobs.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use lahar::scenario::{self, Scenario};
use lahar_benches::scale::{Conf, Scale};
use std::hint::black_box;
use std::path::Path;

fn load(jobs: u32, conf: Conf) -> Scenario {
    load_scale(Scale::bench(jobs, conf))
}

fn load_scale(s: Scale) -> Scenario {
    scenario::load_str(&s.text(), "scale.yaml", Path::new(".")).unwrap_or_else(|e| panic!("{e}"))
}

fn simulate(s: Scenario) -> u64 {
    let opts = lahar::RunOptions { no_write: true, ..Default::default() };
    lahar::run(s, &opts).expect("run").output.stats.sessions
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("scale");
    g.sample_size(10);
    for (name, conf, sizes) in [
        ("volcano", Conf::P, &[1_000u32, 3_000][..]),
        ("volcano-p-prime", Conf::PPrime, &[10_000, 30_000][..]),
        ("gang-fifo", Conf::GangFifo, &[10_000][..]),
    ] {
        for &n in sizes {
            let s = load(n, conf);
            g.throughput(Throughput::Elements(n as u64));
            g.bench_function(format!("{name}/{n}"), |b| {
                b.iter_batched(|| s.clone(), |s| black_box(simulate(s)), BatchSize::LargeInput)
            });
        }
    }
    g.finish();
    let mut g = c.benchmark_group("contention");
    g.sample_size(10);
    for (name, conf, checkpoint, n) in [
        ("p-prime", Conf::PPrime, false, 10_000u32),
        ("p-prime-ckpt", Conf::PPrime, true, 10_000),
        ("p", Conf::P, false, 3_000),
        ("gang-fifo", Conf::GangFifo, false, 10_000),
    ] {
        let s = load_scale(Scale { checkpoint, ..Scale::contention(n, 312, conf) });
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(format!("{name}/{n}"), |b| {
            b.iter_batched(|| s.clone(), |s| black_box(simulate(s)), BatchSize::LargeInput)
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
