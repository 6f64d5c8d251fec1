//! Scheduling behaviour on small hand-checked scenarios.

use super::*;

fn pods_of<'a>(r: &'a lahar::RunReport, job: &str) -> Vec<&'a lahar_core::engine::PodRecord> {
    r.output.pods.iter().filter(|p| r.output.world.jobs[p.job].spec.name == job).collect()
}

fn row(r: &lahar::RunReport, job: &str) -> lahar_reports::JobRow {
    r.rows().into_iter().find(|x| x.job == job).unwrap_or_else(|| panic!("no job {job}"))
}

const FOUR_NODES: &str = "    nodeGroups:\n      - {name: n, count: 4, cpu: 16, memory: 64Gi}";

/// Volcano quick-start: a gang of 20 four-CPU pods on a cluster that holds 16 of them
/// never starts; with minAvailable 4 it runs with the 16 that fit.
#[test]
fn gang_is_all_or_nothing() {
    let gang = |min: u32| {
        scenario(
            FOUR_NODES,
            &format!(
                "  workload:\n    - jobs:\n      - {{name: job, minAvailable: {min}, duration: 10m, tasks: [{{name: nginx, replicas: 20, resources: {{cpu: 4, memory: 1Gi}}}}]}}\n"
            ),
        )
    };
    let r = run_str(&gang(20));
    assert_eq!(row(&r, "job").state, "Pending");
    assert_eq!(row(&r, "job").start, None);
    assert!(r.output.pods.is_empty(), "a partial gang was placed");
    assert!(r.output.world.nodes.iter().all(|n| n.used.is_zero()));

    let r = run_str(&gang(4));
    let j = row(&r, "job");
    assert_eq!((j.state, j.start, j.end), ("Completed", Some(0), Some(600_000_000)));
    let pods = pods_of(&r, "job");
    assert_eq!(pods.len(), 16);
    assert!(pods.iter().all(|p| p.start.micros() == 0 && p.end.micros() == 600_000_000));
    // first fit: nodes filled in order, four pods each
    for (k, n) in ["n-0", "n-1", "n-2", "n-3"].iter().enumerate() {
        let on = pods.iter().filter(|p| r.output.world.cluster.node(p.node).name == *n).count();
        assert_eq!(on, 4, "node {k}");
    }
}

/// A later gang that cannot fit waits for resources and starts the moment they free.
#[test]
fn gang_waits_then_starts_whole() {
    let r = run_str(&scenario(
        FOUR_NODES,
        "  workload:\n    - jobs:\n      - {name: a, duration: 100s, tasks: [{name: w, replicas: 12, resources: {cpu: 4}}]}\n      - {name: b, submitAt: 10s, duration: 50s, tasks: [{name: w, replicas: 8, resources: {cpu: 4}}]}\n      - {name: c, submitAt: 20s, duration: 5s, tasks: [{name: w, replicas: 4, resources: {cpu: 4}}]}\n",
    ));
    // a: 12 of 16 slots. b needs 8: waits until a ends at 100. c (4 pods) fits at 20.
    assert_eq!(row(&r, "a").end, Some(100_000_000));
    assert_eq!((row(&r, "b").start, row(&r, "b").end), (Some(100_000_000), Some(150_000_000)));
    assert_eq!((row(&r, "c").start, row(&r, "c").wait), (Some(20_000_000), Some(0)));
    assert_eq!(row(&r, "b").wait, Some(90_000_000));
    assert!(pods_of(&r, "b").iter().all(|p| p.start.micros() == 100_000_000));
}

/// Strict FIFO blocks everything behind a head job that cannot start.
#[test]
fn strict_fifo_blocks_behind_the_head() {
    let text = |b: &str| {
        scenario(
            FOUR_NODES,
            &format!(
                "  scheduler: {{baseline: {b}}}\n  workload:\n    - jobs:\n      - {{name: a, duration: 100s, tasks: [{{name: w, replicas: 12, resources: {{cpu: 4}}}}]}}\n      - {{name: b, submitAt: 10s, duration: 50s, tasks: [{{name: w, replicas: 8, resources: {{cpu: 4}}}}]}}\n      - {{name: c, submitAt: 20s, duration: 5s, tasks: [{{name: w, replicas: 4, resources: {{cpu: 4}}}}]}}\n"
            ),
        )
    };
    let r = run_str(&text("gang-fifo-strict"));
    assert_eq!(row(&r, "c").start, Some(100_000_000), "c must wait behind b");
    let r = run_str(&text("gang-fifo"));
    assert_eq!(row(&r, "c").start, Some(20_000_000));
}

fn session_of_bind(r: &lahar::RunReport, pod: &str) -> u64 {
    r.output
        .decisions
        .iter()
        .find(|d| {
            d.kind == lahar_core::session::DecisionKind::Bind
                && d.pod.map(|p| {
                    let pod_rec = &r.output.world.pods[p];
                    r.output.world.jobs[pod_rec.job].spec.pod_name(pod_rec.task as usize, pod_rec.index)
                }) == Some(pod.to_string())
        })
        .unwrap_or_else(|| panic!("no bind of {pod}"))
        .session
}

/// dependsOn: task-b's pods exist only once task-a is running, so b starts after a
/// even when b alone would fit earlier.
#[test]
fn depends_on_waits_for_the_named_task() {
    let r = run_str(&scenario(
        "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi}",
        "  workload:\n    - jobs:\n      - {name: blocker, duration: 100s, tasks: [{name: w, replicas: 1, resources: {cpu: 12}}]}\n      - {name: job, submitAt: 10s, minAvailable: 1, duration: 60s, tasks: [{name: task-a, replicas: 1, resources: {cpu: 8}}, {name: task-b, replicas: 1, resources: {cpu: 2}, dependsOn: {name: [task-a]}}]}\n",
    ));
    let pods = pods_of(&r, "job");
    let start = |t: &str| {
        pods.iter()
            .find(|p| r.output.world.jobs[p.job].spec.tasks[p.task as usize].name == t.into())
            .unwrap()
            .start
            .micros()
    };
    assert_eq!(start("task-a"), 100_000_000);
    assert_eq!(start("task-b"), 100_000_000);
    assert!(
        session_of_bind(&r, "job-task-b-0") > session_of_bind(&r, "job-task-a-0"),
        "task-b bound in the same session as task-a"
    );
    assert_eq!(row(&r, "job").end, Some(160_000_000));
}

/// `iteration: any` starts the dependent task when one of its prerequisites is ready;
/// the default (`all`) waits for every one.
#[test]
fn depends_on_any_and_all() {
    let text = |iter: &str| {
        scenario(
            "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi}",
            &format!(
                "  workload:\n    - jobs:\n      - {{name: blocker, duration: 100s, tasks: [{{name: w, replicas: 1, resources: {{cpu: 10}}}}]}}\n      - {{name: job, minAvailable: 1, duration: 300s, tasks: [{{name: a, replicas: 1, resources: {{cpu: 2}}}}, {{name: b, replicas: 1, resources: {{cpu: 8}}}}, {{name: c, replicas: 1, resources: {{cpu: 1}}, dependsOn: {{name: [a, b], iteration: {iter}}}}}]}}\n"
            ),
        )
    };
    let start_c = |r: &lahar::RunReport| {
        pods_of(r, "job")
            .iter()
            .find(|p| r.output.world.jobs[p.job].spec.tasks[p.task as usize].name == "c".into())
            .unwrap()
            .start
            .micros()
    };
    assert_eq!(start_c(&run_str(&text("any"))), 0);
    assert_eq!(start_c(&run_str(&text("all"))), 100_000_000);
}

/// Node selectors confine pods to matching nodes (e.g. a GPU model).
#[test]
fn node_selector_picks_the_gpu_model() {
    let r = run_str(&scenario(
        "    nodes:\n      - {name: a100, cpu: 64, memory: 512Gi, gpus: 8, gpuModel: A100}\n      - {name: h100, cpu: 64, memory: 512Gi, gpus: 8, gpuModel: H100}",
        "  workload:\n    - jobs:\n      - {name: j, duration: 1h, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 4}, nodeSelector: {nvidia.com/gpu.product: H100}}]}\n",
    ));
    assert_eq!(r.output.world.cluster.node(pods_of(&r, "j")[0].node).name, "h100");
}

/// jobs.csv reports span and tier of the placement on a two-tier fabric.
#[test]
fn placement_spread_is_reported() {
    let r = run_str(&scenario(
        "    nodeGroups:\n      - {name: n, count: 8, cpu: 64, memory: 512Gi, gpus: 8}\n    fabric:\n      - {tier: 1, name: leaf, fanout: 2}\n      - {tier: 2, name: spine, fanout: 2, oversubscription: 2.0}",
        "  workload:\n    - jobs:\n      - {name: one, duration: 1h, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 8}}]}\n      - {name: pair, duration: 1h, tasks: [{name: w, replicas: 2, resources: {nvidia.com/gpu: 8}}]}\n      - {name: wide, duration: 1h, tasks: [{name: w, replicas: 4, resources: {nvidia.com/gpu: 8}}]}\n",
    ));
    // Leaves {n-0,n-1} {n-2,n-3} {n-4,n-5} {n-6,n-7}; spines {n-0..n-3} {n-4..n-7}.
    // one → n-0 (tier 0); pair → n-1, n-2 (two leaves, one spine: tier 2);
    // wide → n-3..n-6 (both spines: the cluster top, tier 3).
    assert_eq!((row(&r, "one").nodes_spanned, row(&r, "one").highest_tier), (1, 0));
    assert_eq!((row(&r, "pair").nodes_spanned, row(&r, "pair").highest_tier), (2, 2));
    assert_eq!((row(&r, "wide").nodes_spanned, row(&r, "wide").highest_tier), (4, 3));
}

/// examples/topology: hard network-topology-aware placement lowers mean JCT
/// measurably when placement prices communication (docs/topology.md).
#[test]
fn topology_aware_lowers_mean_jct() {
    let run = |f: &str| {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/topology").join(f);
        let s = lahar::scenario::load_file(&p).unwrap_or_else(|e| panic!("{e}"));
        lahar::run(s, &lahar::RunOptions { no_write: true, ..Default::default() }).unwrap()
    };
    let (without, with) = (run("without-nta.yaml"), run("with-nta.yaml"));
    let mean = |r: &lahar::RunReport| r.summary.jct_s.as_ref().expect("jobs finished").mean;
    let (a, b) = (mean(&without), mean(&with));
    assert!(b < 0.75 * a, "mean JCT with topology-aware placement {b} s vs without {a} s");
    assert!(with.rows().iter().all(|r| r.highest_tier <= 2), "a constrained job crossed the top tier");
    assert!(with.summary.gpu_effective_utilization > without.summary.gpu_effective_utilization);
}
