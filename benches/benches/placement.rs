//! The FGD paper's placement-only evaluation: one full replay of the openb default
//! pod list at 130% demand (10,9xx pods on the trace's 1,213 GPU nodes) per
//! policy, from the loaded scenario (pruning/re-sampling and the replay; the
//! files are read once, outside the measurement). The paper's simulator took 38
//! minutes for one such run on a 2-core machine. `placement-in-time/*`: the openb
//! pods in time through Volcano with binpack or the `fgd` plugin
//! (examples/fragmentation/openb-time-*.yaml, 7,255 pods on 76 nodes, nothing
//! written).

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use lahar::placement::{Order, Setup};
use lahar_policies::placement::Policy;

fn bench(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/fragmentation/openb-fgd.yaml");
    let s = lahar::scenario::load_file(&path).expect("the example scenario loads");
    let p = s.placement.clone().expect("a placement scenario");
    let setup = Setup::new(&s.cluster.nodes, &p.pods).expect("the openb cluster replays");
    let mut g = c.benchmark_group("placement-130pct");
    g.sample_size(10);
    for policy in Policy::ALL {
        g.bench_function(policy.name(), |b| {
            b.iter(|| {
                let arrivals = setup.arrivals(1.3, Order::Shuffled, 42);
                let (rows, _) = setup.replay(policy, 42, &arrivals, |_| {});
                black_box(rows.last().copied())
            })
        });
    }
    g.finish();
    let mut g = c.benchmark_group("placement-in-time");
    g.sample_size(10);
    for name in ["binpack", "fgd"] {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../examples/fragmentation/openb-time-{name}.yaml"));
        let s = lahar::scenario::load_file(&path).expect("the example scenario loads");
        let opts = lahar::RunOptions { no_write: true, ..Default::default() };
        g.bench_function(name, |b| {
            b.iter_batched(
                || s.clone(),
                |s| black_box(lahar::run(s, &opts).expect("run").output.stats.sessions),
                criterion::BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
