//! Nodes of unequal `speed`: a job runs at its slowest GPU node's speed over the
//! cluster's fastest (jobs without a training model), hand-checked through the
//! binary's outputs; bad speeds are refused at their place.

use crate::volcano::run_text;

/// A fast node (speed 2), a slow one (speed 1) and a CPU node (default 1), all
/// with 2 GPUs but the CPU node, under gang-fifo's first fit.
fn scenario(jobs: &str) -> String {
    format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: speed}}\nspec:\n  cluster:\n    nodes:\n      - {{name: fast, cpu: 32, memory: 64Gi, gpus: 2, gpuModel: H100-SXM-80G, speed: 2}}\n      - {{name: slow, cpu: 32, memory: 64Gi, gpus: 2, gpuModel: A100-SXM4-80GB, speed: 1}}\n      - {{name: cpu, cpu: 32, memory: 64Gi}}\n  scheduler: {{baseline: gang-fifo}}\n  workload:\n    - jobs:\n{jobs}"
    )
}

/// `a` (2 GPUs) fills `fast` and runs its 100 s of work in 100 s; `b` (2 GPUs,
/// at 1 s) lands on `slow`, half as fast: 200 s, ending at 201. `c` (4 GPUs, at
/// 300 s, both nodes free again) spans both and runs at the slower one's speed:
/// 200 s. `d` (CPU only, at 600 s) is compared with CPU nodes alone: no GPU node
/// slows it, 100 s.
#[test]
fn a_job_runs_at_its_slowest_node() {
    let jobs = [
        "      - {name: a, duration: 100s, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 2}}]}\n",
        "      - {name: b, submitAt: 1s, duration: 100s, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 2}}]}\n",
        "      - {name: c, submitAt: 300s, duration: 100s, tasks: [{name: w, replicas: 2, resources: {nvidia.com/gpu: 2}}]}\n",
        "      - {name: d, submitAt: 600s, duration: 100s, tasks: [{name: w, replicas: 1, resources: {cpu: 1}}]}\n",
    ]
    .concat();
    let o = run_text(&scenario(&jobs));
    let span = |j: &str| (o.job(j)["start_s"].clone(), o.job(j)["end_s"].clone(), o.job(j)["slowdown"].clone());
    assert_eq!(span("a"), ("0".into(), "100".into(), "1".into()));
    assert_eq!(span("b"), ("1".into(), "201".into(), "2".into()));
    assert_eq!(span("c"), ("300".into(), "500".into(), "2".into()));
    assert_eq!(span("d"), ("600".into(), "700".into(), "1".into()));
    assert_eq!(o.pods_of("a")[0]["node"], "fast");
    assert_eq!(o.pods_of("b")[0]["node"], "slow");
}

/// Equal speeds slow nothing: the same jobs on a cluster whose nodes all say
/// `speed: 3` run as if none did.
#[test]
fn equal_speeds_change_nothing() {
    let jobs = "      - {name: a, duration: 100s, tasks: [{name: w, replicas: 2, resources: {nvidia.com/gpu: 2}}]}\n";
    let o = run_text(&scenario(jobs).replace("speed: 2}", "speed: 3}").replace("speed: 1}", "speed: 3}"));
    assert_eq!(o.job("a")["end_s"], "100");
}

#[test]
fn bad_speeds_are_refused_where_they_are() {
    for (bad, want) in [("0", "got 0"), ("-1", "got -1"), ("1001", "got 1001")] {
        let (_d, p) = crate::write_scenario(
            &scenario("      - {name: a, duration: 1s, tasks: [{name: w, replicas: 1}]}\n")
                .replace("speed: 2}", &format!("speed: {bad}}}")),
        );
        let o = crate::lahar().arg("validate").arg(&p).output().unwrap();
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("spec.cluster.nodes[0].speed: expected a number above 0 and at most 1000")
                && err.contains(want),
            "{err}"
        );
    }
}
