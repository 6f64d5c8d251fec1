//! Fractional GPU requests share devices (the openb model): a share below one GPU
//! lives on one device, whole GPUs need free devices, so a node can have room in
//! total and still no device for a pod.

use crate::volcano::run_text;

fn scenario(jobs: &str) -> String {
    format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: share}}\nspec:\n  cluster:\n    nodes:\n      - {{name: n1, cpu: 32, memory: 64Gi, gpus: 4, gpuModel: A100-SXM-80G}}\n  scheduler:\n    inline: |\n      actions: \"allocate, backfill\"\n      tiers:\n      - plugins:\n        - name: priority\n        - name: gang\n      - plugins:\n        - name: predicates\n        - name: nodeorder\n        - name: binpack\n  workload:\n    - jobs:\n{jobs}"
    )
}

fn job(name: &str, at: u32, replicas: u32, gpu: &str, dur: &str) -> String {
    format!(
        "      - {{name: {name}, submitAt: {at}s, duration: {dur}, tasks: [{{name: w, replicas: {replicas}, resources: {{cpu: 1, nvidia.com/gpu: {gpu}}}}}]}}\n"
    )
}

/// Three 0.6 pods at 0, a 2-GPU pod at 10, a 0.4 at 20 and a 1-GPU pod at 30.
fn fragmenting_jobs() -> String {
    [
        job("frac", 0, 3, "0.6", "1h"),
        job("pair", 10, 1, "2", "10m"),
        job("small", 20, 1, "0.4", "1h"),
        job("single", 30, 1, "1", "10m"),
    ]
    .concat()
}

/// 3 × 0.6 GPU take devices 0-2 (0.4 left on each: 2.2 GPUs idle in total). A
/// 2-GPU pod fits the total but finds one free device, so it waits for `frac` to
/// end at 3600 s — even after `single` (1 GPU on device 3) leaves at 630 s, since
/// `small` (0.4) went best-fit onto device 0 rather than the free device 3.
#[test]
fn whole_gpus_wait_for_free_devices_on_a_fragmented_node() {
    let jobs = fragmenting_jobs();
    let o = run_text(&scenario(&jobs));
    let start = |j: &str| o.job(j)["start_s"].clone();
    assert_eq!(start("frac"), "0");
    assert_eq!(start("small"), "20");
    assert_eq!(start("single"), "30");
    assert_eq!(start("pair"), "3600", "2.2 GPUs idle, but only one whole device until frac ends");
}

/// The FGD paper's fragmentation over time, on the devices as the world holds
/// them. The target is all 6 pods by shape (weight 6): 0.6 GPU ×3, 0.4, 1 GPU, 2
/// GPUs. At 0 the three 0.6 pods leave [0.4, 0.4, 0.4, 1] free: for a 0.6 pod the
/// three 0.4s are fragments (3 × 1200), for a 0.4 pod none, for a 1-GPU pod the
/// 0.4s (1200), and the 2-GPU pod fits nowhere (all 2200): 7000 / 6 = 1.167 GPUs
/// of 2.2 idle. At 20 `small` fills device 0, [0, 0.4, 0.4, 1]: 3 × 800 + 800 +
/// 1800 = 5000. At 30 `single` takes device 3, [0, 0.4, 0.4, 0]: only the 0.4 pod
/// fits, 3 × 800 + 800 + 800 = 4000.
#[test]
fn fragmentation_over_time_counts_device_shares() {
    let jobs = fragmenting_jobs();
    let o = run_text(&format!("{}  output: {{sampleInterval: 10s}}\n", scenario(&jobs)));
    let at = |i: usize| (o.timeseries[i]["fragmentation"].as_str(), o.timeseries[i]["gpus_fragmented"].as_str());
    assert_eq!(at(0), ("0.530303", "1.167"), "7000 / (6 × 2200)");
    assert_eq!(at(1), ("0.530303", "1.167"), "nothing changed at 10");
    assert_eq!(at(2), ("0.462963", "0.833"), "5000 / (6 × 1800)");
    assert_eq!(at(3), ("0.833333", "0.667"), "4000 / (6 × 800)");
}

/// Best fit packs shares: two 0.3 pods share device 0 (spreading them would leave
/// two whole devices), so a 3-GPU pod arriving next finds devices 1-3 free.
#[test]
fn shares_pack_best_fit_leaving_whole_devices() {
    let o = run_text(&scenario(&[job("tiny", 0, 2, "0.3", "1h"), job("trio", 10, 1, "3", "10m")].concat()));
    assert_eq!(o.job("tiny")["start_s"], "0");
    assert_eq!(o.job("trio")["start_s"], "10", "best fit left three whole devices");
}

/// A share lives on one device: 4 × 0.7 leave 0.3 on each device (1.2 GPUs idle in
/// total), so a 0.5 pod waits until the 0.7s end at 3600 s.
#[test]
fn a_share_needs_room_on_one_device() {
    let o = run_text(&scenario(&[job("wide", 0, 4, "0.7", "1h"), job("half", 10, 1, "0.5", "10m")].concat()));
    assert_eq!(o.job("wide")["start_s"], "0");
    assert_eq!(o.job("half")["start_s"], "3600");
}

/// A non-whole count above one is whole devices plus a share of another: 3 × 0.6
/// leave 0.4 on devices 0-2 and device 3 free (2.2 GPUs idle). 1.5 GPUs need device
/// 3 and 0.5 on another device, which none has, so `odd` waits for the 0.6s to end
/// at 3600 s; 1.3 GPUs (device 3 + 0.3 on device 0) start at once.
#[test]
fn a_non_whole_count_above_one_is_whole_devices_plus_a_share() {
    let jobs =
        [job("sixty", 0, 3, "0.6", "1h"), job("odd", 10, 1, "1.5", "10m"), job("odd2", 20, 1, "1.3", "10m")].concat();
    let o = run_text(&scenario(&jobs));
    assert_eq!(o.job("sixty")["start_s"], "0");
    assert_eq!(o.job("odd2")["start_s"], "20");
    assert_eq!(o.job("odd")["start_s"], "3600", "2.2 GPUs idle, but no device with 0.5 beside a whole one");
}

/// `--explain` names fragmented devices as the reason a pod waits on a node whose
/// GPU total fits.
#[test]
fn explain_names_fragmented_devices() {
    let jobs = [job("frac", 0, 3, "0.6", "1h"), job("pair", 10, 1, "2", "10m")].concat();
    let csv = crate::explain::explain(&scenario(&jobs), &["pair-w-0"]);
    assert!(
        csv.lines()
            .any(|l| l
                .contains(",10,default/pair-w-0,n1,gpu-devices,false,GPU devices fragmented: enough GPUs in total")),
        "{csv}"
    );
}

fn two_nodes(plugins: &str, jobs: &str) -> String {
    format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: fgd}}\nspec:\n  cluster:\n    nodes:\n      - {{name: n1, cpu: 32, memory: 64Gi, gpus: 2, gpuModel: T4}}\n      - {{name: n2, cpu: 32, memory: 64Gi, gpus: 2, gpuModel: T4}}\n  scheduler:\n    inline: |\n      actions: \"allocate, backfill\"\n      tiers:\n      - plugins:\n        - name: priority\n        - name: gang\n      - plugins:\n        - name: predicates\n{plugins}  workload:\n    - jobs:\n{jobs}"
    )
}

/// Volcano with the `fgd` plugin. The target is two 0.5-GPU pods and one 2-GPU
/// pod (weight 3). After `half` takes 0.5 of a node, `x` (0.5) on that node
/// leaves it [0, 1] free: its fragmentation falls from 1500 (the 2-GPU pod fits
/// neither way) to 1000, score ⌊100 σ(500/3000)⌋ = 54; on the empty node it rises
/// from 0 to 1500, score ⌊100 σ(−0.5)⌋ = 37. So `x` joins `half` and the 2-GPU
/// pod starts at once on the other node. `nodeorder`'s least-requested spreads
/// `x` instead, and the 2-GPU pod waits for the halves to end.
#[test]
fn the_fgd_plugin_keeps_a_node_whole() {
    let jobs = [job("half", 0, 1, "0.5", "1h"), job("x", 10, 1, "0.5", "1h"), job("whole", 20, 1, "2", "10m")].concat();
    let fgd = run_text(&two_nodes("        - name: fgd\n", &jobs));
    let node = |o: &crate::volcano::Out, j: &str| o.pods.iter().find(|p| p["job"] == j).map(|p| p["node"].clone());
    assert_eq!(node(&fgd, "x"), node(&fgd, "half"), "x joins half");
    assert_eq!(fgd.job("whole")["start_s"], "20");
    let spread = run_text(&two_nodes("        - name: nodeorder\n", &jobs));
    assert_ne!(node(&spread, "x"), node(&spread, "half"), "least-requested spreads");
    assert_eq!(spread.job("whole")["start_s"], "3600");
    // The policy argument picks another rule (gpu-packing also fills the used
    // node first).
    let packing = run_text(&two_nodes(
        "        - name: fgd\n          arguments: {fgd.policy: gpu-packing, fgd.weight: 2}\n",
        &jobs,
    ));
    assert_eq!(packing.job("whole")["start_s"], "20");
}

/// An unknown `fgd.policy` stops the run before it starts: exit 2, the conf's
/// line and the argument's path.
#[test]
fn an_unknown_fgd_policy_is_refused_with_its_place() {
    let (_d, p) = crate::write_scenario(&two_nodes(
        "        - name: fgd\n          arguments: {fgd.policy: tetris}\n",
        &job("a", 0, 1, "1", "1m"),
    ));
    let o = crate::lahar().arg("validate").arg(&p).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("tiers[1].plugins[1].arguments.fgd.policy: unknown policy `tetris`"), "{err}");
}
