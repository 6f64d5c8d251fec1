//! Placement-dependent run time through scenarios: model profiles (iterations,
//! tensor/pipeline parallelism), comm constant overrides and max-min link sharing.

use super::*;
use lahar_core::comm::runtime::{CommRuntime, JobProfile, lookup};
use lahar_core::comm::{AlgoChoice, Collective, CommConstants, CommModel, GpuGen, IntraLink, NetFabric, Placement};

/// Four H100 nodes (8 GPUs, 8x400G NICs); leaves of two nodes whose uplinks are
/// `oversub`:1 oversubscribed.
fn cluster(oversub: f64) -> String {
    format!(
        "    nodeGroups:\n      - {{name: n, count: 4, gpuModel: H100-SXM-80G, gpus: 8, cpu: 96, memory: 1Ti, intraNode: nvswitch, nics: {{count: 8, gbps: 400}}}}\n    fabric:\n      - {{tier: 1, name: leaf, fanout: 2, oversubscription: {oversub}}}"
    )
}

/// A job of `pods` 8-GPU... or smaller pods already running on `nodes`.
fn job(name: &str, model: &str, duration: &str, gpus_per_pod: u32, nodes: &[&str]) -> String {
    format!(
        "      - {{name: {name}, model: {model}, {duration}tasks: [{{name: w, replicas: {}, resources: {{cpu: 1, nvidia.com/gpu: {gpus_per_pod}}}}}], running: {{w: [{}]}}}}\n",
        nodes.len(),
        nodes.join(", ")
    )
}

fn end_s(r: &lahar::RunReport, job: &str) -> f64 {
    end_us(r, job) as f64 / 1e6
}

fn end_us(r: &lahar::RunReport, job: &str) -> u64 {
    let row = r.rows().into_iter().find(|x| x.job == job).unwrap_or_else(|| panic!("no job {job}"));
    row.end.unwrap_or_else(|| panic!("{job} did not end"))
}

/// One hour of ideal work, µs (a `duration: 1h` job's work).
const HOUR_US: u64 = 3_600_000_000;
/// LLaMA-7B: compute of one step on an A100 (µs), bf16 gradients (bytes).
const LLAMA7B_STEP_US: f64 = 4_860_000.0;
const LLAMA7B_GRAD: u64 = 13_400_000_000;
/// LLaMA-13B: the same.
const LLAMA13B_STEP_US: f64 = 7_970_000.0;
const LLAMA13B_GRAD: u64 = 26_000_000_000;
/// H100 against A100 tokens/s/GPU (llm-foundry) on LLaMA-7B and -13B.
const H100_7B: f64 = 8611.0 / 3684.0;
const H100_13B: f64 = 4717.0 / 2060.0;
/// The share of the data-parallel all-reduce not hidden behind compute (overlap 0.5).
const EXPOSED: f64 = 0.5;

/// `per_node` GPUs on each of `nodes` of [`cluster`]'s H100 nodes under one leaf
/// (8 x 400G NICs over 8 GPUs: 400 Gbit/s per GPU).
fn h100(per_node: u32, nodes: u32) -> Placement {
    if nodes == 1 {
        Placement::single_node(GpuGen::Hopper, IntraLink::NvswitchNvlink4, per_node)
    } else {
        Placement::uniform(GpuGen::Hopper, IntraLink::NvswitchNvlink4, per_node, nodes, 400.0, NetFabric::Ib)
    }
}

/// Time (µs) of one `coll` of `bytes` on `p` under `m`.
fn coll_us(m: &CommModel, coll: Collective, bytes: u64, p: &Placement) -> f64 {
    m.estimate(coll, bytes, p, AlgoChoice::Auto).unwrap().time_us
}

/// The runtime's speed for an `ideal` against an `actual` iteration time: ppm of
/// full speed, rounded down, at most full.
fn speed_ppm(ideal: f64, actual: f64) -> u64 {
    ((ideal / actual) * 1e6).min(1e6) as u64
}

/// The engine's wall time (µs) of `work_us` of ideal work at `ppm`, rounded up.
fn wall_us(work_us: u64, ppm: u64) -> u64 {
    (u128::from(work_us) * 1_000_000).div_ceil(u128::from(ppm)) as u64
}

fn run(oversub: f64, comm: &str, jobs: &str) -> lahar::RunReport {
    run_str(&scenario(&cluster(oversub), &format!("{comm}  workload:\n    - jobs:\n{jobs}")))
}

/// `iterations` prices the work on the fastest node kind: 100 iterations of
/// LLaMA-7B data-parallel on one H100 node = 100 x (4.86 s / (8611 / 3684) + 0.5 x
/// one 13.4 GB all-reduce over 8 NVSwitch GPUs), H100's published bf16 throughput
/// on a 7B model being 8611 tokens/s/GPU against A100's 3684 (llm-foundry).
#[test]
fn iterations_price_the_run_from_the_model() {
    let r = run(1.0, "", &job("a", "{name: llama-7b, iterations: 100}", "", 8, &["n-0"]));
    let m = CommModel::default();
    let one = Placement::single_node(GpuGen::Hopper, IntraLink::NvswitchNvlink4, 8);
    let ar = m.estimate(Collective::AllReduce, 13_400_000_000, &one, AlgoChoice::Auto).unwrap().time_us;
    let want_us = (100.0 * (4_860_000.0 / (8611.0 / 3684.0) + 0.5 * ar)).ceil();
    assert_eq!(r.rows()[0].end, Some(want_us as u64));
    // Spread over two nodes under one leaf it runs slower than that: the same
    // work at ideal / actual speed, the actual all-reduce over 2 nodes x 4 GPUs.
    let spread = run(1.0, "", &job("a", "{name: llama-7b, iterations: 100}", "", 4, &["n-0", "n-1"]));
    let ideal = LLAMA7B_STEP_US / H100_7B + EXPOSED * ar;
    let actual = LLAMA7B_STEP_US / H100_7B + EXPOSED * coll_us(&m, Collective::AllReduce, LLAMA7B_GRAD, &h100(4, 2));
    assert_eq!(spread.rows()[0].end, Some(wall_us(want_us as u64, speed_ppm(ideal, actual))));
    assert!(spread.rows()[0].end.unwrap() > want_us as u64);
}

/// A PCIe server whose GPUs sit on two CPU sockets (`intraNode: pcie-sys`) prices
/// its rings on NCCL's SYS path: the same 100 iterations as above, with the
/// all-reduce over `pcie-sys` instead of NVSwitch, and slower than on plain PCIe.
#[test]
fn cross_socket_pcie_servers_take_the_sys_path() {
    let node = |intra: &str| {
        format!(
            "    nodes:\n      - {{name: n-0, gpuModel: H100-PCIE-80GB, gpus: 8, cpu: 96, memory: 1Ti, intraNode: {intra}}}"
        )
    };
    let jobs = format!("  workload:\n    - jobs:\n{}", job("a", "{name: llama-7b, iterations: 100}", "", 8, &["n-0"]));
    let sys = run_str(&scenario(&node("pcie-sys"), &jobs));
    let m = CommModel::default();
    let one = Placement::single_node(GpuGen::Hopper, IntraLink::PcieSys, 8);
    let ar = m.estimate(Collective::AllReduce, 13_400_000_000, &one, AlgoChoice::Auto).unwrap().time_us;
    assert_eq!(sys.rows()[0].end, Some((100.0 * (4_860_000.0 / 2.5 + 0.5 * ar)).ceil() as u64));
    let pcie = run_str(&scenario(&node("pcie"), &jobs));
    // `pcie` on a Hopper node is PCIe Gen5; H100 PCIe has no published LLaMA
    // throughput, so it computes at Hopper's 2.5; one node is its own ideal.
    let one = Placement::single_node(GpuGen::Hopper, IntraLink::PcieGen5, 8);
    let ar5 = m.estimate(Collective::AllReduce, 13_400_000_000, &one, AlgoChoice::Auto).unwrap().time_us;
    assert_eq!(pcie.rows()[0].end, Some((100.0 * (4_860_000.0 / 2.5 + 0.5 * ar5)).ceil() as u64));
    assert!(sys.rows()[0].end > pcie.rows()[0].end, "the socket link is slower than one PCIe switch");
}

/// Tensor parallelism: tp 8 groups inside nodes run at ideal speed; the same job
/// with its 16 GPUs as 4 per node puts every tensor group across two nodes.
#[test]
fn tensor_groups_split_across_nodes_slow_the_job() {
    let model = "{name: llama-13b, tensorParallel: 8}";
    let packed = run(1.0, "", &job("a", model, "duration: 1h, ", 8, &["n-0", "n-1"]));
    assert_eq!(end_s(&packed, "a"), 3600.0);
    let split = run(1.0, "", &job("a", model, "duration: 1h, ", 4, &["n-0", "n-1", "n-2", "n-3"]));
    let pure_dp = run(1.0, "", &job("a", "llama-13b", "duration: 1h, ", 4, &["n-0", "n-1", "n-2", "n-3"]));
    let m = CommModel::default();
    let ar = |bytes: u64, p: &Placement| coll_us(&m, Collective::AllReduce, bytes, p);
    let compute = LLAMA13B_STEP_US / H100_13B;
    // tp 8: 4 x 40 layers x 8 x 16384/4096 = 5120 all-reduces of one 4096-token
    // micro-batch's activations (4096 x 5120 x 2 B); each rank all-reduces its
    // eighth of the gradients with its data-parallel peer (rank t and t + 8).
    let (calls, act, grad) = (5120.0, 4096 * 5120 * 2, LLAMA13B_GRAD / 8);
    // Ideal (2 nodes x 8 under one leaf): tensor groups inside a node, data groups
    // of one GPU on each node.
    let ideal = compute + EXPOSED * ar(grad, &h100(1, 2)) + calls * ar(act, &h100(8, 1));
    // Split: each tensor group is 4 + 4 GPUs on two nodes of one leaf; ranks t and
    // t + 8 sit on n-0/n-1 and n-2/n-3, crossing the leaves (tier 2, 1:1 here).
    let split_it = compute + EXPOSED * ar(grad, &h100(1, 2).crossing(2, 1.0)) + calls * ar(act, &h100(4, 2));
    assert_eq!(end_us(&split, "a"), wall_us(HOUR_US, speed_ppm(ideal, split_it)));
    // Pure data parallel: one all-reduce of all gradients over 4 nodes x 4 GPUs
    // crossing the leaves, against 2 nodes x 8 under one leaf.
    let dp_ideal = compute + EXPOSED * ar(LLAMA13B_GRAD, &h100(8, 2));
    let dp_it = compute + EXPOSED * ar(LLAMA13B_GRAD, &h100(4, 4).crossing(2, 1.0));
    assert_eq!(end_us(&pure_dp, "a"), wall_us(HOUR_US, speed_ppm(dp_ideal, dp_it)));
    assert!(end_s(&split, "a") > 3600.0);
    // Data parallel on 4 nodes suffers too, but tensor parallelism across NICs more.
    assert!(end_s(&split, "a") > end_s(&pure_dp, "a"), "{} vs {}", end_s(&split, "a"), end_s(&pure_dp, "a"));
}

/// The speed the runtime gives a lone job matches the model's own arithmetic.
#[test]
fn pipeline_stages_across_nodes_cost_transfers() {
    let model = "{name: llama-7b, pipelineParallel: 2}";
    let r = run(1.0, "", &job("a", model, "duration: 1h, ", 8, &["n-0", "n-1"]));
    let dp = run(1.0, "", &job("a", "llama-7b", "duration: 1h, ", 8, &["n-0", "n-1"]));
    // Two nodes packed under one leaf are the ideal placement for both.
    assert_eq!((end_s(&r, "a"), end_s(&dp, "a")), (3600.0, 3600.0));
    // On an oversubscribed leaf boundary both slow down.
    let crossing = run(4.0, "", &job("a", model, "duration: 1h, ", 8, &["n-0", "n-2"]));
    // pp 2: stage 0 is n-0's 8 GPUs, stage 1 n-2's; each stage's 8 ranks form a
    // data group inside its node and all-reduce half the gradients; m = 2 x 16384/4096 = 8
    // micro-batches: a bubble of 1/8 of the compute and 2 x (8 + 1) = 18 transfers
    // of 4096 x 4096 x 2 B between ranks i and i + 8, one GPU on each node; ideally
    // under one leaf, here across the 4:1 leaf uplinks (tier 2).
    let m = CommModel::default();
    let compute = LLAMA7B_STEP_US / H100_7B;
    let dp = EXPOSED * coll_us(&m, Collective::AllReduce, LLAMA7B_GRAD / 2, &h100(8, 1));
    let act = 4096 * 4096 * 2;
    let ideal = compute + dp + compute / 8.0 + 18.0 * coll_us(&m, Collective::Broadcast, act, &h100(1, 2));
    let across =
        compute + dp + compute / 8.0 + 18.0 * coll_us(&m, Collective::Broadcast, act, &h100(1, 2).crossing(2, 4.0));
    assert_eq!(end_us(&crossing, "a"), wall_us(HOUR_US, speed_ppm(ideal, across)));
    assert!(end_s(&crossing, "a") > 3600.0);
    let p = JobProfile { pipeline_parallel: 2, ..JobProfile::from_catalog(lookup("llama-7b").unwrap()) };
    assert!(p.check(16).is_ok());
}

/// Overriding a constant changes the price: NICs at half efficiency slow a job
/// that crosses nodes, and leave a one-node job alone.
#[test]
fn comm_constant_overrides_change_run_time() {
    let slow = "  comm:\n    constants: {net: {ib: {efficiency: 0.3}}}\n";
    let base = run(4.0, "", &job("a", "llama-7b", "duration: 1h, ", 8, &["n-0", "n-2"]));
    let over = run(4.0, slow, &job("a", "llama-7b", "duration: 1h, ", 8, &["n-0", "n-2"]));
    // 16 GPUs over n-0 and n-2 cross the 4:1 leaf uplinks (tier 2); the ideal is
    // 2 x 8 under one leaf. The override prices both with IB at 0.3 of line rate.
    let price = |m: &CommModel| {
        let it =
            |p: &Placement| LLAMA7B_STEP_US / H100_7B + EXPOSED * coll_us(m, Collective::AllReduce, LLAMA7B_GRAD, p);
        wall_us(HOUR_US, speed_ppm(it(&h100(8, 2)), it(&h100(8, 2).crossing(2, 4.0))))
    };
    let mut c = CommConstants::default();
    c.net.ib.efficiency = 0.3;
    assert_eq!(end_us(&base, "a"), price(&CommModel::default()));
    assert_eq!(end_us(&over, "a"), price(&CommModel::new(c).unwrap()));
    assert!(end_s(&over, "a") > end_s(&base, "a"), "{} vs {}", end_s(&over, "a"), end_s(&base, "a"));
    let one = run(4.0, slow, &job("a", "llama-7b", "duration: 1h, ", 8, &["n-0"]));
    assert_eq!(end_s(&one, "a"), 3600.0);
}

/// Max-min sharing of a 4:1 leaf uplink (capacity 2 x 3,200 Gbit/s / 4 = 1,600):
/// a lone job crossing leaves with one node per leaf (demand 3,200) gets half its
/// demand, i.e. an effective 2:1 instead of the static worst case 4:1; a second
/// such job halves that again, back to 4:1, and its end speeds the first one up.
#[test]
fn link_sharing_makes_speed_depend_on_neighbours() {
    let sharing = "  comm: {linkSharing: maxmin}\n";
    let a = job("a", "llama-7b", "duration: 1h, ", 8, &["n-0", "n-2"]);
    let b_long = job("b", "llama-7b", "duration: 1h, ", 8, &["n-1", "n-3"]);
    let b_short = job("b", "llama-7b", "duration: 20m, ", 8, &["n-1", "n-3"]);
    let fixed = end_s(&run(4.0, "", &a), "a");
    let alone = end_s(&run(4.0, sharing, &a), "a");
    let both = run(4.0, sharing, &format!("{a}{b_long}"));
    let short = run(4.0, sharing, &format!("{a}{b_short}"));
    // Each speed is ideal (2 x 8 under one leaf) over actual (2 x 8 across the
    // leaves at an oversubscription of 4:1 static or shared by two jobs, 2:1 alone).
    let m = CommModel::default();
    let it = |p: &Placement| LLAMA7B_STEP_US / H100_7B + EXPOSED * coll_us(&m, Collective::AllReduce, LLAMA7B_GRAD, p);
    let ppm = |oversub: f64| speed_ppm(it(&h100(8, 2)), it(&h100(8, 2).crossing(2, oversub)));
    let (ppm_shared, ppm_alone) = (ppm(4.0), ppm(2.0));
    assert_eq!(fixed, wall_us(HOUR_US, ppm_shared) as f64 / 1e6);
    assert_eq!(alone, wall_us(HOUR_US, ppm_alone) as f64 / 1e6);
    assert!(fixed > 3600.0);
    assert!(alone < fixed && alone > 3600.0, "alone {alone} fixed {fixed}");
    assert_eq!(end_s(&both, "a"), fixed, "two jobs on the uplink see the static 4:1");
    assert_eq!(end_s(&both, "b"), fixed);
    let a_short = end_s(&short, "a");
    // b does 20 minutes of work at the shared speed; a has done what that time
    // credits (rounded down) and does the rest at its lone speed (rounded up).
    let b_end = wall_us(HOUR_US / 3, ppm_shared);
    assert_eq!(end_us(&short, "b"), b_end);
    let a_done = (u128::from(b_end) * u128::from(ppm_shared) / 1_000_000) as u64;
    assert_eq!(end_us(&short, "a"), b_end + wall_us(HOUR_US - a_done, ppm_alone));
    assert!(a_short < fixed && a_short > alone, "{a_short} between {alone} and {fixed}");
    // Work is conserved across the speed change: a ran at the shared speed until b
    // ended, then at the lone speed (each speed read off the single-speed runs).
    let b_end = end_s(&short, "b");
    let (s_shared, s_alone) = (3600.0 / fixed, 3600.0 / alone);
    let want = b_end + (3600.0 - b_end * s_shared) / s_alone;
    assert!((a_short - want).abs() < 1e-3, "{a_short} vs {want}");
    // Sharing off by default: b's presence changes nothing.
    let off = run(4.0, "", &format!("{a}{b_short}"));
    assert_eq!(end_s(&off, "a"), fixed);
    let _ = CommRuntime::shared_links;
}

/// Bad `spec.comm` and `model` input is a located error.
#[test]
fn bad_comm_settings_are_located() {
    let err = |comm: &str, jobs: &str| {
        let text = scenario(&cluster(1.0), &format!("{comm}  workload:\n    - jobs:\n{jobs}"));
        lahar::scenario::load_str(&text, "t.yaml", Path::new("")).unwrap_err().to_string()
    };
    let j = job("a", "llama-7b", "duration: 1h, ", 8, &["n-0"]);
    let e = err("  comm:\n    constants: {net: {ib: {efficency: 0.3}}}\n", &j);
    assert!(e.contains("spec.comm.constants.net.ib.efficency") && e.contains("unknown constant"), "{e}");
    let e = err("  comm:\n    constants: {launch_us: fast}\n", &j);
    assert!(e.contains("spec.comm.constants.launch_us") && e.contains("expected a number"), "{e}");
    let e = err("  comm:\n    constants: {ll_efficiency: 1.5}\n", &j);
    assert!(e.contains("ll_efficiency") && e.contains("out of range"), "{e}");
    let e = err("  comm:\n    constants: missing.yaml\n", &j);
    assert!(e.contains("spec.comm.constants") && e.contains("missing.yaml"), "{e}");
    let e = err("  comm: {linkSharing: fair}\n", &j);
    assert!(e.contains("spec.comm.linkSharing") && e.contains("maxmin"), "{e}");
    let e = err("", &job("a", "{name: llama-7b, tensorParallel: 3}", "duration: 1h, ", 8, &["n-0"]));
    assert!(e.contains("spec.workload[0].jobs[0].model") && e.contains("multiple"), "{e}");
    let e = err("", &job("a", "{name: llama-7b, iterations: 10}", "duration: 1h, ", 8, &["n-0"]));
    assert!(e.contains("either `duration` or `model.iterations`"), "{e}");
    let e = err("", &job("a", "{name: resnet-50, pipelineParallel: 2}", "duration: 1h, ", 8, &["n-0"]));
    assert!(e.contains("transformer"), "{e}");
    let e = err("", &job("a", "{gradBytes: 1G}", "duration: 1h, ", 8, &["n-0"]));
    assert!(e.contains("`gradBytes` and `stepTime`"), "{e}");
    let e = err("", &job("a", "{name: llama-7b, overlap: 2}", "duration: 1h, ", 8, &["n-0"]));
    assert!(e.contains("model.overlap"), "{e}");
    let e = err("", &job("a", "{name: llama-7b, tensorparallel: 2}", "duration: 1h, ", 8, &["n-0"]));
    assert!(e.contains("tensorparallel"), "{e}");
    // Without `duration` or `iterations` the job has no run time: a warning, not an error.
    let text = scenario(&cluster(1.0), &format!("  workload:\n    - jobs:\n{}", job("a", "llama-7b", "", 8, &["n-0"])));
    let s = lahar::scenario::load_str(&text, "t.yaml", Path::new("")).unwrap();
    assert!(s.jobs()[0].duration.is_unbounded() && s.warnings[0].kind == "jobs-without-run-time");
}

/// A custom model (no catalog entry) runs from its own numbers.
#[test]
fn custom_model_profile() {
    let model = "{name: my-net, gradBytes: 4G, stepTime: 500ms, overlap: 0.2, iterations: 10}";
    let r = run(1.0, "", &job("a", model, "", 8, &["n-0"]));
    let m = CommModel::default();
    let one = Placement::single_node(GpuGen::Hopper, IntraLink::NvswitchNvlink4, 8);
    let ar = m.estimate(Collective::AllReduce, 4_000_000_000, &one, AlgoChoice::Auto).unwrap().time_us;
    assert_eq!(r.rows()[0].end, Some((10.0 * (500_000.0 / 2.5 + 0.8 * ar)).ceil() as u64));
}

/// `lahar nccl --constants FILE` prices with the overrides; a bad file is exit 2.
#[test]
fn nccl_table_takes_constant_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("c.yaml");
    std::fs::write(&good, "net:\n  ib: {efficiency: 0.48}\n").unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "net:\n  ib: {speed: 2}\n").unwrap();
    let table = |extra: &[&str]| {
        let mut c = assert_cmd::Command::cargo_bin("lahar").unwrap();
        c.args(["nccl", "--nodes", "2", "--min-bytes", "1G", "--max-bytes", "1G"]).args(extra);
        c.output().unwrap()
    };
    let base = table(&[]);
    let over = table(&["--constants", good.to_str().unwrap()]);
    assert!(base.status.success() && over.status.success());
    assert_ne!(base.stdout, over.stdout, "the override changed nothing");
    let out = table(&["--constants", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.yaml") && err.contains("constants.net.ib.speed"), "{err}");
}

/// A `duration` job's ideal is the cluster's fastest node kind: LLaMA-7B for one
/// hour on an A100 node of a cluster that also has H100 nodes computes at
/// 3684 / 8611 of the ideal's speed (their published tokens/s/GPU), so it takes
/// `1 h × actual / ideal` (the ratio of the two nodes' iteration times, each
/// 4.86 s / compute speed + half of its all-reduce).
#[test]
fn a_duration_job_on_slower_gpus_runs_longer() {
    let nodes = "    nodes:\n      - {name: h, gpuModel: H100-SXM-80G, gpus: 8, cpu: 96, memory: 1Ti, intraNode: nvswitch}\n      - {name: a, gpuModel: A100-SXM4-80GB, gpus: 8, cpu: 96, memory: 1Ti, intraNode: nvswitch}";
    let jobs = |node: &str| format!("  workload:\n    - jobs:\n{}", job("j", "llama-7b", "duration: 1h, ", 8, &[node]));
    let m = CommModel::default();
    let ar = |g, l| {
        m.estimate(Collective::AllReduce, 13_400_000_000, &Placement::single_node(g, l, 8), AlgoChoice::Auto)
            .unwrap()
            .time_us
    };
    let ideal = 4_860_000.0 / (8611.0 / 3684.0) + 0.5 * ar(GpuGen::Hopper, IntraLink::NvswitchNvlink4);
    let actual = 4_860_000.0 / 1.0 + 0.5 * ar(GpuGen::Ampere, IntraLink::NvswitchNvlink3);
    let speed = ((ideal / actual) * 1e6) as u64;
    let want = (3_600_000_000u128 * 1_000_000).div_ceil(u128::from(speed)) as u64;
    assert_eq!(end_s(&run_str(&scenario(nodes, &jobs("a"))), "j"), want as f64 / 1e6);
    // On the H100 node it runs its duration.
    assert_eq!(end_s(&run_str(&scenario(nodes, &jobs("h"))), "j"), 3600.0);
}

/// A job spanning two GPU models computes at the slower one's published speed:
/// BERT-Large over an A100-80GB and an A100-40GB node (133.6 against 152
/// sequences/s) ends later than the same placement over two A100-80GB nodes (the
/// ideal: it runs its hour), whose fabric, reference node and ideal are the same.
#[test]
fn a_job_spanning_two_gpu_models_runs_at_the_slower() {
    let nodes = |second: &str| {
        format!(
            "    nodes:\n      - {{name: n-0, gpuModel: A100-SXM4-80GB, gpus: 8, cpu: 96, memory: 1Ti, intraNode: nvswitch}}\n      - {{name: n-1, gpuModel: {second}, gpus: 8, cpu: 96, memory: 1Ti, intraNode: nvswitch}}"
        )
    };
    let jobs = format!("  workload:\n    - jobs:\n{}", job("j", "bert-large", "duration: 1h, ", 8, &["n-0", "n-1"]));
    let same = end_s(&run_str(&scenario(&nodes("A100-SXM4-80GB"), &jobs)), "j");
    let mixed = end_s(&run_str(&scenario(&nodes("A100-SXM4-40GB"), &jobs)), "j");
    assert_eq!(same, 3600.0, "16 GPUs on two 8-GPU nodes is the ideal placement");
    // Both runs: 2 x 8 A100s (NVSwitch, NVLink 3) with the default NICs (1 x
    // 100G over 8 GPUs: 12.5 Gbit/s per GPU) under the flat cluster's one switch;
    // the ideal computes at the 80GB's speed (1), the mixed job at the 40GB's.
    let m = CommModel::default();
    let p = Placement::uniform(GpuGen::Ampere, IntraLink::NvswitchNvlink3, 8, 2, 12.5, NetFabric::Ib);
    let dp = 0.5 * coll_us(&m, Collective::AllReduce, 680_000_000, &p);
    let (ideal, actual) = (441_000.0 + dp, 441_000.0 / (133.6 / 152.0) + dp);
    assert_eq!(mixed, wall_us(HOUR_US, speed_ppm(ideal, actual)) as f64 / 1e6);
    assert!(mixed > same, "{mixed} vs {same}");
    // Compute is 441 ms per step at 1.0 and 441 / (133.6 / 152) ms on the 40GB
    // GPUs; the extra time per step is exactly that difference, so the run's
    // stretch is bounded by it: (mixed − same) / same < 152 / 133.6 − 1.
    assert!((mixed - same) / same < 152.0 / 133.6 - 1.0);
}

/// A `gpuModel` the collective model does not know is named, never silently
/// priced as something else (issue 42, discovery): through `lahar validate`. A
/// known prefix followed by no size, form factor or variant (`H100X`) says what
/// it is read as; an unknown name on a cluster whose jobs have a communication
/// profile says those jobs run at their ideal speed there; a near miss says what
/// was meant; real product names (`NVIDIA-H100-80GB-HBM3`, `L40S`, `A10G`,
/// OpenB's `V100M16`) and an unknown name used only as a label pass quietly.
/// (A cluster whose every GPU node is unknown cannot price such a job at all:
/// that stays an error, so each scenario has one known H100 node beside.)
#[test]
fn a_gpu_model_lahar_does_not_know_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stderr = |model: &str, priced: bool| {
        let job = if priced {
            "{name: a, model: {name: llama-7b, iterations: 10}, tasks: [{name: w, replicas: 1, resources: {cpu: 1, nvidia.com/gpu: 8}}]}"
        } else {
            "{name: a, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 1, nvidia.com/gpu: 8}}]}"
        };
        let text = format!(
            "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  cluster:\n    nodeGroups:\n      - {{name: n, count: 2, gpuModel: \"{model}\", gpus: 8, cpu: 96, memory: 1Ti, intraNode: nvswitch, nics: {{count: 8, gbps: 400}}}}\n      - {{name: k, count: 1, gpuModel: H100-SXM-80G, gpus: 8, cpu: 96, memory: 1Ti, intraNode: nvswitch, nics: {{count: 8, gbps: 400}}}}\n  workload:\n    - jobs: [{job}]\n"
        );
        let p = dir.path().join("s.yaml");
        std::fs::write(&p, text).expect("write");
        let out = crate::lahar().arg("validate").arg(&p).assert().success();
        String::from_utf8_lossy(&out.get_output().stderr).to_string()
    };
    let e = stderr("H100X", false);
    assert!(
        e.contains("gpuModel `H100X` (2 nodes, the first `n-0`) is no GPU model lahar knows: it is read as `H100` (hopper) by its prefix, and `X` after it is no size, form factor or variant"),
        "{e}"
    );
    let e = stderr("Foo", true);
    assert!(e.contains("gpuModel `Foo` (2 nodes, the first `n-0`) matches no GPU the collective model knows: jobs with a communication profile placed there run at their ideal speed, with no collective cost; known model prefixes: A10, A100,"), "{e}");
    let e = stderr("H10", false);
    assert!(
        e.contains(
            "(did you mean `A10` or `H100` or `H20`?): no job here has a communication profile, so it is only a label"
        ),
        "{e}"
    );
    for quiet in ["NVIDIA-H100-80GB-HBM3", "L40S", "A10G", "V100M16", "B200"] {
        let e = stderr(quiet, true);
        assert!(!e.contains("gpuModel"), "{quiet}: {e}");
    }
    let e = stderr("Foo", false);
    assert!(!e.contains("gpuModel"), "{e}");
}
