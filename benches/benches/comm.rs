//! Cost of the collective model: one all-reduce estimate computed from scratch,
//! and one served from the memo cache (what the engine pays per placement change
//! once a placement has been seen).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lahar_core::comm::{
    AlgoChoice, Collective, CommCache, CommKey, CommModel, GpuGen, IntraLink, NetFabric, Placement,
};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let model = CommModel::default();
    let p =
        Placement::uniform(GpuGen::Hopper, IntraLink::NvswitchNvlink4, 8, 16, 400.0, NetFabric::Ib).crossing(2, 2.0);
    let key = CommKey { collective: Collective::AllReduce, bytes: 1 << 28, placement: p, choice: AlgoChoice::Auto };
    let mut g = c.benchmark_group("comm");
    g.throughput(Throughput::Elements(1));
    g.bench_function("allreduce-uncached", |b| {
        b.iter(|| black_box(model.estimate(Collective::AllReduce, black_box(1 << 28), &p, AlgoChoice::Auto)))
    });
    let mut cache = CommCache::new(4096);
    cache.estimate(&model, key).expect("estimate");
    g.bench_function("allreduce-cached", |b| b.iter(|| black_box(cache.estimate(&model, black_box(key)))));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
