//! Cost of one Volcano scheduling session (the default volcano-scheduler.conf:
//! enqueue, allocate, backfill with priority, gang, conformance, overcommit, drf,
//! predicates, proportion, nodeorder, binpack).
//!
//! Two states per cluster size (1,000 and 10,000 nodes of 8 GPUs on a two-tier
//! fabric, three queues):
//! - `empty`: 1,000 jobs arrive at once on an empty cluster; the session places
//!   what fits.
//! - `busy`: the cluster is first filled by one session (every node full except
//!   a 4-GPU hole on every tenth node), then 1,000 jobs arrive; the timed session
//!   fills the holes with what fits and leaves the rest pending — the steady state
//!   of a saturated cluster, where every session re-visits the backlog.
//!
//! Only the session is timed: building the world, the arrivals and the fill
//! session are the untimed setup of each sample. `session-gpus/busy/*` repeats the
//! busy case on 125, 1,250 and 12,500 nodes (1k, 10k and 100k GPUs).
//! `session-plugins/busy/1000-nodes/*` repeats the 1,000-node busy case with the
//! default conf and with a third tier of the plugins added for published confs
//! (resource-strategy-fit with sra and proportional, nodegroup not strict, usage,
//! cdp), so their per-node cost shows. `session-evict/busy/1000-nodes/*` repeats
//! the busy case with every other pending job outranking the fill (priority 10
//! over 0), under Volcano's gang-eviction e2e tiers with preempt and reclaim or
//! with gangpreempt and gangreclaim. `session-topology/empty/1000-nodes/*` places
//! the 1,000 jobs on the empty 1,000-node cluster under the default conf with
//! network-topology-aware added: `plain` jobs, `hard` (every job within one leaf,
//! `highestTierAllowed: 1`), `partitioned` (the jobs of 2 or 4 nodes within two
//! leaves, in partitions of one or two nodes each within one leaf, one partition
//! required; the others within one leaf). `session-vgpu/empty/1000-nodes/*`
//! places 1,000 jobs (2,500 pods) asking vGPU cards on 1,000 empty nodes of 8
//! cards: `resources-only` without `deviceshare.VGPUEnable` (the cards are plain
//! extended resources), `vgpu` with it (binpack, weight 10).
//! `session-vnpu/empty/1000-nodes/*` places 1,000 jobs (2,500 pods) asking
//! Ascend chips on 1,000 empty nodes of 8 Ascend 910B3 chips (Project-HAMi's
//! published device ConfigMap): `resources-only` without
//! `deviceshare.AscendHAMiVNPUEnable`, `vnpu` with it (binpack, weight 10).
//! `session-contention/busy/*` is the busy state under the production-style conf
//! of issue 11 with drf not choosing victims (preempt and reclaim), every other
//! pending job outranking the fill, at 1k, 10k and 100k GPUs and 100, 1,000 and
//! 10,000 pending jobs.
//! `session-numa/empty/1000-nodes/*` places 1,000 jobs (2,500 Guaranteed pods of
//! 4–12 CPUs, best-effort) on 1,000 empty nodes of 64 CPUs on two NUMA nodes:
//! `resources-only` without `numa-aware` in the conf, `numa` with it (weight 10).

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use lahar::scenario::{self, Scenario};
use lahar_core::engine::Engine;
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;

/// GPUs per pending job, cycled (mean 7.3 GPUs; 16 and 32 span nodes).
const SIZES: [u32; 10] = [1, 1, 1, 2, 4, 4, 8, 8, 16, 32];

fn job(out: &mut String, name: &str, submit_s: u32, queue: &str, gpus: u32, priority: i32) {
    topo_job(out, name, submit_s, queue, gpus, priority, Topo::Plain);
}

/// The network topology of a `session-topology` job.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Topo {
    Plain,
    Hard,
    Partitioned,
}

fn topo_job(out: &mut String, name: &str, submit_s: u32, queue: &str, gpus: u32, priority: i32, topo: Topo) {
    let (replicas, per_pod) = if gpus > 8 { (gpus / 8, 8) } else { (1, gpus) };
    let (nt, part) = match topo {
        Topo::Plain => (String::new(), String::new()),
        Topo::Partitioned if replicas > 1 => (
            ", networkTopology: {mode: hard, highestTierAllowed: 2}".to_string(),
            format!(
                ", partitionPolicy: {{totalPartitions: 2, partitionSize: {}, minPartitions: 1, networkTopology: {{mode: hard, highestTierAllowed: 1}}}}",
                replicas / 2
            ),
        ),
        _ => (", networkTopology: {mode: hard, highestTierAllowed: 1}".to_string(), String::new()),
    };
    let _ = writeln!(
        out,
        "        - {{name: {name}, submitAt: {submit_s}s, queue: {queue}, priority: {priority}, duration: 30d{nt}, \
         tasks: [{{name: worker, replicas: {replicas}, resources: {{cpu: {cpu}, memory: {mem}Gi, nvidia.com/gpu: {per_pod}}}{part}}}]}}",
        cpu = per_pod * 8,
        mem = per_pod * 64,
    );
}

/// The third tier added to Volcano's default conf: the plugins added for
/// published confs.
const PLUGINS_TIER: &str = "- plugins:
  - name: resource-strategy-fit
    arguments:
      resources: {nvidia.com/gpu: {type: MostAllocated, weight: 2}, cpu: {type: LeastAllocated, weight: 1}}
      sra: {enable: true, resources: nvidia.com/gpu, weight: 1}
      proportional: {enable: true, resources: nvidia.com/gpu, resourceProportion: {nvidia.com/gpu.cpu: 8, nvidia.com/gpu.memory: 64}}
  - name: nodegroup
    arguments: {strict: false}
  - name: usage
  - name: cdp
";

/// The scenario text: `nodes` nodes, optionally filled at t=0, then 1,000 jobs at t=1s.
fn scenario(nodes: u32, busy: bool) -> Scenario {
    scenario_with(nodes, busy, None)
}

/// [`scenario`] with an inline conf instead of Volcano's default.
fn scenario_with(nodes: u32, busy: bool, conf: Option<&str>) -> Scenario {
    scenario_full(nodes, busy, conf, false)
}

/// [`scenario_with`]; with `outrank`, every other pending job has priority 10 over
/// the fill's 0 (so it may preempt it).
fn scenario_full(nodes: u32, busy: bool, conf: Option<&str>, outrank: bool) -> Scenario {
    scenario_topo(nodes, busy, conf, outrank, Topo::Plain, 1000)
}

/// [`scenario_full`] with the pending jobs' network topology and `pending` jobs
/// arriving at t=1s.
fn scenario_topo(nodes: u32, busy: bool, conf: Option<&str>, outrank: bool, topo: Topo, pending: u32) -> Scenario {
    let mut s = String::new();
    let _ = write!(
        s,
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: bench-session}}\nspec:\n  seed: 1\n  cluster:\n    nodeGroups:\n      - {{name: n, count: {nodes}, gpuModel: H100-SXM-80G, gpus: 8, cpu: 96, memory: 1Ti, intraNode: nvswitch, nics: {{count: 8, gbps: 400}}}}\n    fabric:\n      - {{tier: 1, name: leaf, fanout: 32, oversubscription: 1.0}}\n      - {{tier: 2, name: spine, fanout: 64, oversubscription: 2.0}}\n  queues:\n    - {{name: a, weight: 1}}\n    - {{name: b, weight: 2}}\n    - {{name: c, weight: 1}}\n  workload:\n    - jobs:\n"
    );
    if busy {
        for n in 0..nodes {
            let gpus = if n % 10 == 0 { 4 } else { 8 };
            job(&mut s, &format!("fill-{n}"), 0, ["a", "b", "c"][n as usize % 3], gpus, 0);
        }
    }
    for i in 0..pending {
        let priority = if outrank && i % 2 == 0 { 10 } else { 0 };
        let (q, gpus) = (["a", "b", "c"][i as usize % 3], SIZES[i as usize % SIZES.len()]);
        topo_job(&mut s, &format!("p-{i}"), 1, q, gpus, priority, topo);
    }
    if let Some(conf) = conf {
        s += "  scheduler:\n    inline: |\n";
        for l in conf.lines() {
            let _ = writeln!(s, "      {l}");
        }
    }
    scenario::load_str(&s, "bench-session.yaml", Path::new(".")).unwrap_or_else(|e| panic!("{e}"))
}

/// An engine whose next step is the session at the pending jobs' arrival.
fn prepared(s: &Scenario, busy: bool) -> Engine {
    let mut e = lahar::build_engine(s.clone());
    if busy {
        assert!(e.prepare_instant(), "fill jobs arrive at t=0");
        e.run_session();
    }
    assert!(e.prepare_instant(), "pending jobs arrive at t=1s");
    e
}

/// Times one session on a freshly prepared engine per iteration.
fn time_session(b: &mut criterion::Bencher<'_>, s: &Scenario, busy: bool) {
    b.iter_batched(
        || prepared(s, busy),
        |mut e| {
            e.run_session();
            black_box(e)
        },
        BatchSize::PerIteration,
    )
}

fn bound(e: &Engine) -> usize {
    e.world().pods.iter().filter(|p| p.node.is_some()).count()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("session");
    g.sample_size(10);
    for nodes in [1_000u32, 10_000] {
        for busy in [false, true] {
            let s = scenario(nodes, busy);
            // Say what the timed session does: pods bound out of the pending ones.
            let mut e = prepared(&s, busy);
            let before = bound(&e);
            e.run_session();
            eprintln!("{nodes} nodes, busy={busy}: the session binds {} pods", bound(&e) - before);
            let label = format!("{}/{nodes}-nodes/1000-pending", if busy { "busy" } else { "empty" });
            g.bench_function(label, |b| time_session(b, &s, busy));
        }
    }
    g.finish();

    // The busy steady state at 1k, 10k and 100k GPUs, so the growth of one session
    // with the cluster is visible.
    let mut g = c.benchmark_group("session-gpus");
    g.sample_size(10);
    for nodes in [125u32, 1_250, 12_500] {
        let s = scenario(nodes, true);
        g.bench_function(format!("busy/{}-gpus/1000-pending", nodes * 8), |b| time_session(b, &s, true));
    }
    g.finish();

    // Contention (issue 39): the busy state under the production-style
    // conf (drf not choosing victims), every other pending job outranking the
    // fill, at 1k, 10k and 100k GPUs and 100, 1,000 and 10,000 pending jobs, so the
    // growth of one session with the cluster and with the backlog is visible.
    let mut g = c.benchmark_group("session-contention");
    g.sample_size(10);
    let conf = lahar_benches::scale::FULL_CONF.replace("{name: drf}", "{name: drf, enablePreemptable: false}");
    for nodes in [125u32, 1_250, 12_500] {
        for pending in [100u32, 1_000, 10_000] {
            let s = scenario_topo(nodes, true, Some(&conf), true, Topo::Plain, pending);
            g.bench_function(format!("busy/{}-gpus/{pending}-pending", nodes * 8), |b| time_session(b, &s, true));
        }
    }
    g.finish();

    let mut g = c.benchmark_group("session-plugins");
    g.sample_size(10);
    let with_plugins = format!("{}{PLUGINS_TIER}", lahar_policies::volcano::conf::DEFAULT_CONF);
    for (name, conf) in [("default", None), ("new-plugins", Some(with_plugins.as_str()))] {
        let s = scenario_with(1_000, true, conf);
        let mut e = prepared(&s, true);
        let before = bound(&e);
        e.run_session();
        eprintln!("session-plugins {name}: the session binds {} pods", bound(&e) - before);
        g.bench_function(format!("busy/1000-nodes/{name}"), |b| time_session(b, &s, true));
    }
    g.finish();

    let mut g = c.benchmark_group("session-evict");
    g.sample_size(10);
    for (name, actions) in [
        ("preempt-reclaim", "enqueue, allocate, backfill, reclaim, preempt"),
        ("gangreclaim-gangpreempt", "enqueue, allocate, backfill, gangreclaim, gangpreempt"),
    ] {
        let conf = EVICT_CONF.replace("ACTIONS", actions);
        let s = scenario_full(1_000, true, Some(&conf), true);
        let mut e = prepared(&s, true);
        let before = e.world().pods.iter().filter(|p| p.status == lahar_core::model::job::PodStatus::Releasing).count();
        e.run_session();
        let evicted =
            e.world().pods.iter().filter(|p| p.status == lahar_core::model::job::PodStatus::Releasing).count() - before;
        eprintln!("session-evict {name}: the session evicts {evicted} pods");
        g.bench_function(format!("busy/1000-nodes/{name}"), |b| time_session(b, &s, true));
    }
    g.finish();

    let mut g = c.benchmark_group("session-topology");
    g.sample_size(10);
    let conf = format!("{}  - name: network-topology-aware\n", lahar_policies::volcano::conf::DEFAULT_CONF);
    for (name, topo) in [("plain", Topo::Plain), ("hard", Topo::Hard), ("partitioned", Topo::Partitioned)] {
        let s = scenario_topo(1_000, false, Some(&conf), false, topo, 1000);
        let mut e = prepared(&s, false);
        e.run_session();
        eprintln!("session-topology {name}: the session binds {} pods", bound(&e));
        g.bench_function(format!("empty/1000-nodes/{name}"), |b| time_session(b, &s, false));
    }
    g.finish();

    let mut g = c.benchmark_group("session-vgpu");
    g.sample_size(10);
    let cases = [
        ("resources-only", ""),
        ("vgpu", "deviceshare.VGPUEnable: true, deviceshare.SchedulePolicy: binpack, deviceshare.ScheduleWeight: 10"),
    ];
    for (name, args) in cases {
        let s = scenario_vgpu(1_000, args);
        let mut e = prepared(&s, false);
        e.run_session();
        eprintln!("session-vgpu {name}: the session binds {} pods", bound(&e));
        g.bench_function(format!("empty/1000-nodes/{name}"), |b| time_session(b, &s, false));
    }
    g.finish();

    let mut g = c.benchmark_group("session-vnpu");
    g.sample_size(10);
    let vnpu = "deviceshare.AscendHAMiVNPUEnable: true, deviceshare.KnownGeometriesCMName: hami-scheduler-device, deviceshare.SchedulePolicy: binpack, deviceshare.ScheduleWeight: 10";
    for (name, args) in [("resources-only", "deviceshare.SchedulePolicy: binpack"), ("vnpu", vnpu)] {
        let s = scenario_vnpu(1_000, args);
        let mut e = prepared(&s, false);
        e.run_session();
        eprintln!("session-vnpu {name}: the session binds {} pods", bound(&e));
        g.bench_function(format!("empty/1000-nodes/{name}"), |b| time_session(b, &s, false));
    }
    g.finish();

    let mut g = c.benchmark_group("session-numa");
    g.sample_size(10);
    for (name, plugin) in [("resources-only", ""), ("numa", "  - name: numa-aware\n    arguments: {weight: 10}\n")] {
        let s = scenario_numa(1_000, plugin);
        let mut e = prepared(&s, false);
        e.run_session();
        eprintln!("session-numa {name}: the session binds {} pods", bound(&e));
        g.bench_function(format!("empty/1000-nodes/{name}"), |b| time_session(b, &s, false));
    }
    g.finish();
}

/// `session-numa`: `nodes` nodes of 64 CPUs (two sockets, one NUMA node each,
/// two threads per core, best-effort) and 1,000 jobs of 1–4 Guaranteed pods of
/// 4, 8 or 12 CPUs, half of them naming best-effort; `plugin` adds to the
/// default tiers.
fn scenario_numa(nodes: u32, plugin: &str) -> Scenario {
    let mut s = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: bench-numa}}\nspec:\n  seed: 1\n  cluster:\n    nodeGroups:\n      - {{name: n, count: {nodes}, cpu: 64, memory: 1Ti, numa: {{numaNodes: 2, topologyPolicy: best-effort, reserved: 1}}}}\n  queues:\n    - {{name: a, weight: 1}}\n    - {{name: b, weight: 2}}\n  workload:\n    - jobs:\n"
    );
    for i in 0..1000u32 {
        let policy = if i % 2 == 0 { ", topologyPolicy: best-effort" } else { "" };
        let _ = writeln!(
            s,
            "        - {{name: c-{i}, submitAt: 1s, queue: {q}, duration: 30d, tasks: [{{name: worker, replicas: {replicas}{policy}, resources: {{cpu: {cpu}, memory: 32Gi}}}}]}}",
            q = ["a", "b"][i as usize % 2],
            replicas = 1 + i % 4,
            cpu = 4 * (1 + i % 3),
        );
    }
    s += "  scheduler:\n    inline: |\n";
    let conf = format!("{}{plugin}", lahar_policies::volcano::conf::DEFAULT_CONF);
    for l in conf.lines() {
        let _ = writeln!(s, "      {l}");
    }
    scenario::load_str(&s, "bench-numa.yaml", Path::new(".")).unwrap_or_else(|e| panic!("{e}"))
}

/// `session-vgpu`: `nodes` nodes of 8 vGPU cards (80 GiB, 4 sharers each) and
/// 1,000 jobs of 1–4 pods, each pod asking one card (2 for every fourth job)
/// with 20 GiB and 25 cores on each; `conf` adds deviceshare to the default tiers.
fn scenario_vgpu(nodes: u32, deviceshare: &str) -> Scenario {
    let mut s = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: bench-vgpu}}\nspec:\n  seed: 1\n  cluster:\n    nodeGroups:\n      - {{name: n, count: {nodes}, cpu: 96, memory: 1Ti, vgpu: {{cards: 8, memory: 81920, split: 4}}}}\n  queues:\n    - {{name: a, weight: 1}}\n    - {{name: b, weight: 2}}\n  workload:\n    - jobs:\n"
    );
    for i in 0..1000u32 {
        let (replicas, cards) = (1 + i % 4, if i % 4 == 3 { 2 } else { 1 });
        let _ = writeln!(
            s,
            "        - {{name: v-{i}, submitAt: 1s, queue: {q}, duration: 30d, tasks: [{{name: worker, replicas: {replicas}, resources: {{cpu: 4, memory: 32Gi, volcano.sh/vgpu-number: {cards}, volcano.sh/vgpu-memory: {mem}, volcano.sh/vgpu-cores: {cores}}}}}]}}",
            q = ["a", "b"][i as usize % 2],
            mem = 20480 * cards,
            cores = 25 * cards,
        );
    }
    s += "  scheduler:\n    inline: |\n";
    let conf = format!(
        "{}  - name: deviceshare\n    arguments: {{{deviceshare}}}\n",
        lahar_policies::volcano::conf::DEFAULT_CONF
    );
    for l in conf.lines() {
        let _ = writeln!(s, "      {l}");
    }
    scenario::load_str(&s, "bench-vgpu.yaml", Path::new(".")).unwrap_or_else(|e| panic!("{e}"))
}

/// `session-vnpu`: `nodes` nodes of 8 Ascend 910B3 chips (65536 MiB, 4 vNPUs
/// each, two HCCS rings) with the device ConfigMap Project-HAMi publishes, and
/// 1,000 jobs of 1–4 pods, each pod asking one chip with 16384 MiB (a
/// `vir05_1c_16g` template), or two whole chips for every fourth job; the nodes
/// also advertise the memory resource, so that without vNPU sharing it is a
/// plain extended resource; `deviceshare` adds to the default tiers.
fn scenario_vnpu(nodes: u32, deviceshare: &str) -> Scenario {
    let mut s = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: bench-vnpu}}\nspec:\n  seed: 1\n  snapshot: examples/manifests/vnpu/cluster/ascend-device-configmap.yaml\n  cluster:\n    nodeGroups:\n      - {{name: n, count: {nodes}, cpu: 96, memory: 1Ti, extendedResources: {{huawei.com/Ascend910B3-memory: 524288}}, vnpu: {{type: Ascend910B3, chips: 8, count: 4, memory: 65536, cores: 20}}}}\n  queues:\n    - {{name: a, weight: 1}}\n    - {{name: b, weight: 2}}\n  workload:\n    - jobs:\n"
    );
    for i in 0..1000u32 {
        let replicas = 1 + i % 4;
        let ask = if i % 4 == 3 {
            "huawei.com/Ascend910B3: 2, huawei.com/Ascend910B3-memory: 65536".to_string()
        } else {
            "huawei.com/Ascend910B3: 1, huawei.com/Ascend910B3-memory: 16384".to_string()
        };
        let _ = writeln!(
            s,
            "        - {{name: a-{i}, submitAt: 1s, queue: {q}, duration: 30d, tasks: [{{name: worker, replicas: {replicas}, resources: {{cpu: 4, memory: 32Gi, {ask}}}}}]}}",
            q = ["a", "b"][i as usize % 2],
        );
    }
    s += "  scheduler:\n    inline: |\n";
    let conf = format!(
        "{}  - name: deviceshare\n    arguments: {{{deviceshare}}}\n",
        lahar_policies::volcano::conf::DEFAULT_CONF
    );
    for l in conf.lines() {
        let _ = writeln!(s, "      {l}");
    }
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    scenario::load_str(&s, "bench-vnpu.yaml", &base).unwrap_or_else(|e| panic!("{e}"))
}

/// The conf of `session-evict`: Volcano's gang-eviction e2e tiers (capacity
/// choosing reclaim victims) with legacy or gang-aware eviction actions.
const EVICT_CONF: &str = "actions: \"ACTIONS\"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
  - name: capacity
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: nodeorder
  - name: binpack
";

criterion_group!(benches, bench);
criterion_main!(benches);
