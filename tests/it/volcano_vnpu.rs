//! deviceshare's Ascend vNPU sharing in HAMi mode (`deviceshare.AscendHAMiVNPUEnable`)
//! over whole runs: the user guide's conf and pods on the example snapshot, chips
//! that fill up across sessions, binpack's node score, preempt that evicts for a
//! chip shortage but not for a refused ask, snapshot pods holding the chips their
//! annotation names, and bad inputs and warnings through the binary. Volcano's
//! own unit tests are replayed next to the fit, in `sim-core/src/devices/vnpu/`.

use super::volcano::{Out, run_file};
use super::volcano_vgpu::{refused, snapshot_dir};
use std::path::Path;

/// The device ConfigMap Project-HAMi publishes (the example's copy).
fn config_map() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests/vnpu/cluster/ascend-device-configmap.yaml");
    std::fs::read_to_string(p).expect("the example ConfigMap")
}

/// A node with `chips` Ascend 310P chips as the device plugin registers them
/// (7 vNPUs, 21527 MiB and 8 AI cores each; 100 cores in hami-core mode).
fn node310(name: &str, chips: usize, hami_core: bool) -> String {
    let list: Vec<String> = (0..chips)
        .map(|i| {
            format!(
                "{{\"id\":\"{name}-{i}\",\"index\":{i},\"count\":7,\"devmem\":21527,\"devcore\":{},\"type\":\"Ascend310P\",\"health\":true}}",
                if hami_core { 100 } else { 8 }
            )
        })
        .collect();
    format!(
        "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n  annotations:\n    hami.io/node-register-Ascend310P: '[{}]'\n    hami-vnpu-core: \"{hami_core}\"\nstatus:\n  allocatable: {{cpu: \"64\", memory: 256Gi, huawei.com/Ascend310P: \"{}\"}}\n",
        list.join(","),
        chips * 7
    )
}

/// A pod with `limits`, annotations `ann` (besides its run time) and spec lines `spec`.
fn pod(name: &str, limits: &str, ann: &str, spec: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  annotations: {{lahar.io/duration: 1h{ann}}}\nspec:\n  schedulerName: volcano\n{spec}  containers: [{{name: c, resources: {{limits: {{{limits}}}}}}}]\n"
    )
}

/// A conf of `actions` with deviceshare in vNPU mode, `args` added.
fn conf(actions: &str, args: &str) -> String {
    format!(
        "actions: \"{actions}\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n    enablePreemptable: false\n  - name: conformance\n- plugins:\n  - name: predicates\n  - name: deviceshare\n    arguments: {{deviceshare.AscendHAMiVNPUEnable: true, deviceshare.KnownGeometriesCMName: hami-scheduler-device{args}}}\n"
    )
}

/// Per node, per chip type, per chip: (pods, MiB, cores) in use at the end of
/// the scenario in `dir` run for `sessions` sessions.
type Chips = Vec<Vec<Vec<(u32, i64, i64)>>>;

fn chips_after(dir: &Path, sessions: u64) -> Chips {
    let s = lahar::scenario::load_file(&dir.join("scenario.yaml")).unwrap_or_else(|e| panic!("{e}"));
    let opts = lahar::RunOptions { no_write: true, sessions: Some(sessions), ..Default::default() };
    let r = lahar::run(s, &opts).unwrap();
    r.output
        .world
        .nodes
        .iter()
        .map(|n| n.vnpu.iter().map(|t| t.uses.iter().map(|u| (u.used, u.memory, u.cores)).collect()).collect())
        .collect()
}

fn run(dir: &tempfile::TempDir) -> Out {
    run_file(&dir.path().join("scenario.yaml"))
}

/// The example: the guide's template pod asks 4096 MiB of a 310P and holds
/// vir02's 6144; the hami-core pod (4096 MiB, 90 cores, unrounded) can only go
/// to ascend-310p-1, the node in hami-core mode, and joins the template pod
/// there on chip 0 (the guide's conf scores nothing, so chips are taken in
/// registration order). On the 910B3 node (rings 0-3 and 4-7): `infer-small`
/// (1024 MiB → 16384) and `infer-mid` (20480 → 32768) take chip 0 (both rings
/// have all chips free; equal rings go by id); `train-2chip` takes two whole
/// chips from ring 1, which has four fitting chips to ring 0's three.
#[test]
fn user_guide_pods_on_the_example_snapshot() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("examples/manifests/vnpu-scenario.yaml");
    let o = run_file(&path);
    let node = |p: &str| o.pods.iter().find(|r| r["pod"] == p).map(|r| r["node"].clone()).unwrap();
    assert_eq!(node("hami-core/ascend-pod"), "ascend-310p-1");
    assert_eq!(node("default/train-2chip"), "ascend-910b3-0");
    let s = lahar::scenario::load_file(&path).unwrap_or_else(|e| panic!("{e}"));
    let r = lahar::run(s, &lahar::RunOptions { no_write: true, sessions: Some(1), ..Default::default() }).unwrap();
    let w = &r.output.world;
    let uses = |n: usize| -> Vec<(u32, i64, i64)> {
        w.nodes[n].vnpu[0].uses.iter().map(|u| (u.used, u.memory, u.cores)).collect()
    };
    let names: Vec<&str> = w.cluster.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["ascend-310p-0", "ascend-310p-1", "ascend-910b3-0"]);
    assert_eq!(node("default/ascend-pod"), "ascend-310p-1");
    assert_eq!(uses(0), [(0, 0, 0), (0, 0, 0)]);
    assert_eq!(uses(1), [(2, 6144 + 4096, 90), (0, 0, 0)]);
    let mut want = vec![(0u32, 0i64, 0i64); 8];
    want[0] = (2, 16384 + 32768, 0);
    want[4] = (1, 65536, 0);
    want[5] = (1, 65536, 0);
    assert_eq!(uses(2), want);
}

/// One 310P node of two chips (21527 MiB each). At 0 s: a and b ask 12288 MiB
/// (vir04) and take chip 0 and chip 1; c (12288) fits neither chip (9239 idle
/// on each) though the node has 14 − 2 vNPUs free; d asks 5000 MiB (vir02,
/// 6144) and joins a on chip 0. When a ends at 3600 s, chip 0 holds d's 6144
/// and c starts there.
#[test]
fn chips_fill_up_across_sessions() {
    let limits = |mib: i64| format!("huawei.com/Ascend310P: 1, huawei.com/Ascend310P-memory: {mib}");
    let pods = [
        pod("a", &limits(12288), "", ""),
        pod("b", &limits(12288), ", lahar.io/duration: 2h", "").replace("lahar.io/duration: 1h, ", ""),
        pod("c", &limits(12288), "", ""),
        pod("d", &limits(5000), ", lahar.io/duration: 2h", "").replace("lahar.io/duration: 1h, ", ""),
    ]
    .concat();
    let dir = snapshot_dir(&(config_map() + &node310("n0", 2, false)), &pods, &conf("enqueue, allocate", ""));
    let o = run(&dir);
    let start = |j: &str| o.job(j)["start_s"].clone();
    assert_eq!([start("a"), start("b"), start("c"), start("d")], ["0", "0", "3600", "0"]);
    assert_eq!(chips_after(dir.path(), 1), [[[(2, 12288 + 6144, 0), (1, 12288, 0)]]]);
}

/// Two nodes of one 310P chip each. With `deviceshare.ScheduleWeight: 10` and
/// binpack, a node scores 10 × ⌊100 × MiB in use ÷ 21527 + 0.5⌋ on the chip
/// the pod would take: p2 (6144 MiB, at 10 s) joins p1 on its node and chip
/// (⌊28.5 + 0.5⌋ × 10 = 290 against 0). With spread, an unshared chip scores
/// 100 and a shared one 0: p2 takes the other node's chip.
#[test]
fn binpack_score_stacks_pods_spread_scatters_them() {
    let limits = "huawei.com/Ascend310P: 1, huawei.com/Ascend310P-memory: 6144";
    let pods = (pod("p1", limits, "", "") + &pod("p2", limits, ", lahar.io/submit-at: 10s", "")).replace("1h", "10h");
    let nodes = config_map() + &node310("n0", 1, false) + &node310("n1", 1, false);
    let binpack = snapshot_dir(
        &nodes,
        &pods,
        &conf("enqueue, allocate", ", deviceshare.SchedulePolicy: binpack, deviceshare.ScheduleWeight: 10"),
    );
    let o = run(&binpack);
    let b = o.binds();
    assert_eq!(b["default/p1"], b["default/p2"]);
    // The scores, through the binary's explain.csv.
    let out = binpack.path().join("out");
    super::lahar()
        .args(["run", "--explain", "default/p2", "--out"])
        .arg(&out)
        .arg(binpack.path().join("scenario.yaml"))
        .assert()
        .success();
    let explain = std::fs::read_to_string(out.join("explain.csv")).unwrap();
    let other = if b["default/p1"] == "n0" { "n1" } else { "n0" };
    assert!(explain.contains(&format!("default/p2,{},deviceshare,,,290\n", b["default/p1"])), "{explain}");
    assert!(explain.contains(&format!("default/p2,{other},deviceshare,,,0\n")), "{explain}");
    let held: usize =
        chips_after(binpack.path(), 3).iter().flatten().flatten().filter(|c| c.0 == 2 && c.1 == 12288).count();
    assert_eq!(held, 1, "both pods on one chip: {:?}", chips_after(binpack.path(), 3));
    let spread = snapshot_dir(
        &nodes,
        &pods,
        &conf("enqueue, allocate", ", deviceshare.SchedulePolicy: spread, deviceshare.ScheduleWeight: 10"),
    );
    let b = run(&spread).binds();
    assert_ne!(b["default/p1"], b["default/p2"]);
}

/// One 310P node of two chips; `low` (priority 0) holds chip 0 whole. At 10 s
/// `high` (priority 100) asks two whole chips: only chip 1 fits, a shortage
/// eviction can resolve (Volcano's `Unschedulable`), so preempt evicts `low`
/// and `high` starts. `partial` (priority 100) asks two chips with 4096 MiB
/// each, which Volcano refuses outright (`Error`: a multi-chip ask takes
/// whole chips): preempt leaves the node out and evicts nothing.
#[test]
fn preempt_evicts_for_a_chip_shortage_not_for_a_refused_ask() {
    let classes = "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 0\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 100\n";
    let low =
        pod("low", "huawei.com/Ascend310P: 1, huawei.com/Ascend310P-memory: 21527", "", "  priorityClassName: low\n")
            .replace("1h", "10h");
    let nodes = config_map() + &node310("n0", 2, false);
    let actions = "enqueue, allocate, preempt";
    let high = pod("high", "huawei.com/Ascend310P: 2", ", lahar.io/submit-at: 10s", "  priorityClassName: high\n");
    let o = run(&snapshot_dir(&nodes, &format!("{classes}{low}{high}"), &conf(actions, "")));
    assert_eq!(o.evictions(), ["default/low"]);
    assert_ne!(o.job("high")["start_s"], "");
    let partial = pod(
        "partial",
        "huawei.com/Ascend310P: 2, huawei.com/Ascend310P-memory: 4096",
        ", lahar.io/submit-at: 10s",
        "  priorityClassName: high\n",
    );
    let o = run(&snapshot_dir(&nodes, &format!("{classes}{low}{partial}"), &conf(actions, "")));
    assert!(o.evictions().is_empty(), "{:?}", o.evictions());
    assert_eq!(o.job("partial")["start_s"], "");
}

/// Running pods of a snapshot hold the chips their
/// `hami.io/Ascend310P-devices-allocated` annotation names, as Volcano's cache
/// counts them: `run-a` holds chip 1's 12288 MiB; `run-two` has two
/// containers, and Volcano reads its annotation `…:;n0-1,…:;` splitting on `:`
/// alone, so the second container's chip (id `;n0-1`) is never counted: chip 0
/// holds 3072. `run-none` has no annotation and holds nothing. The pending
/// `new` (12288) then takes chip 0, the first with room.
#[test]
fn snapshot_pods_hold_the_chips_their_annotation_names() {
    let limits = |mib: i64| format!("huawei.com/Ascend310P: 1, huawei.com/Ascend310P-memory: {mib}");
    let running = "  nodeName: n0\n";
    let run_pod = |name: &str, mib: i64, ann: &str| {
        pod(name, &limits(mib), ann, running).replace("\nspec:", "\nstatus: {phase: Running}\nspec:")
    };
    let two = run_pod("run-two", 3072, ", hami.io/Ascend310P-devices-allocated: \"n0-0,Ascend310P,3072,0:;n0-1,Ascend310P,3072,0:;\"")
        .replace("containers: [{name: c,", "containers: [{name: d, resources: {limits: {huawei.com/Ascend310P: 1, huawei.com/Ascend310P-memory: 3072}}}, {name: c,");
    let snapshot = config_map()
        + &node310("n0", 2, false)
        + &run_pod("run-a", 12288, ", hami.io/Ascend310P-devices-allocated: \"n0-1,Ascend310P,12288,0:;\"")
        + &two
        + &run_pod("run-none", 6144, "")
        + &pod("new", &limits(12288), "", "");
    let dir = snapshot_dir(&snapshot, "", &conf("allocate", ""));
    std::fs::write(dir.path().join("pods.yaml"), "").unwrap();
    let text = std::fs::read_to_string(dir.path().join("scenario.yaml")).unwrap();
    std::fs::write(dir.path().join("scenario.yaml"), text.replace("  workload:\n    - manifests: pods.yaml\n", ""))
        .unwrap();
    assert_eq!(chips_after(dir.path(), 1), [[[(2, 3072 + 12288, 0), (1, 12288, 0)]]]);
    // An annotation naming a chip the node does not register is an error at its place.
    std::fs::write(dir.path().join("cluster.yaml"), snapshot.replace("n0-1,Ascend310P,12288", "n9-1,Ascend310P,12288"))
        .unwrap();
    refused(
        &dir,
        "metadata.annotations.hami.io/Ascend310P-devices-allocated: chip `n9-1` is not one the node registers",
    );
}

/// What lahar refuses, each with its place: a core ask outside hami-core mode,
/// another `huawei.com/vnpu-mode`, a count of 0, a request unlike its limit, and
/// node registrations lahar cannot read; and MindCluster mode in the conf.
#[test]
fn vnpu_bad_input_through_the_binary() {
    let nodes = config_map() + &node310("n0", 2, false);
    let c = conf("allocate", "");
    let bad = |pods: &str, want: &str| refused(&snapshot_dir(&nodes, pods, &c), want);
    bad(
        &pod("p", "huawei.com/Ascend310P: 1, huawei.com/Ascend310P-core: 2", "", ""),
        "spec.containers[0].resources.limits.huawei.com/Ascend310P-core: AI cores are set only in hami-core mode: annotate the pod `huawei.com/vnpu-mode: hami-core`",
    );
    bad(
        &pod("p", "huawei.com/Ascend310P: 1", ", huawei.com/vnpu-mode: template", ""),
        "metadata.annotations.huawei.com/vnpu-mode: expected `hami-core` (leave the annotation out for template mode), got `template`",
    );
    bad(
        &pod("p", "huawei.com/Ascend310P: 0, huawei.com/Ascend310P-memory: 1024", "", ""),
        "spec.containers[0].resources.limits.huawei.com/Ascend310P: expected at least 1 chip",
    );
    bad(
        &pod("p", "huawei.com/Ascend310P: 1.5", "", ""),
        "spec.containers[0].resources.limits.huawei.com/Ascend310P: expected a whole number, got `1.5`",
    );
    bad(
        &pod("p", "cpu: 1, huawei.com/Ascend310P-core: 20", ", huawei.com/vnpu-mode: hami-core", ""),
        "spec.containers[0].resources.limits.huawei.com/Ascend310P-core: Volcano reads a chip ask from the limits of `huawei.com/Ascend310P` or `huawei.com/Ascend310P-memory`; without either this asks for nothing",
    );
    let p = pod("p", "huawei.com/Ascend310P: 1", "", "");
    let node_bad = |from: &str, to: &str, want: &str| {
        refused(&snapshot_dir(&nodes.replace(from, to), &p, &c), want);
    };
    node_bad(
        "\"health\":true}]",
        "\"health\":true,\"vram\":1}]",
        "metadata.annotations.hami.io/node-register-Ascend310P: entry 1: unknown field `vram`",
    );
    node_bad("'[{", "'{", "metadata.annotations.hami.io/node-register-Ascend310P: not a JSON list of chips");
    node_bad(
        "\"id\":\"n0-1\"",
        "\"id\":\"n0-0\"",
        "entry 1: chip `n0-0` is listed twice (Volcano would keep the last silently)",
    );
    let mc = c.replace("deviceshare.AscendHAMiVNPUEnable", "deviceshare.AscendMindClusterVNPUEnable");
    refused(&snapshot_dir(&nodes, &p, &mc), "Ascend vNPU sharing in MindCluster mode");
}

/// Warnings say what the chips change: none without vNPU in the conf; a
/// registration of a type the ConfigMap lacks, or without the count resource in
/// `status.allocatable`, is not seen.
#[test]
fn vnpu_warnings_say_what_the_chips_change() {
    let kinds = |dir: &tempfile::TempDir| -> Vec<String> {
        let out = super::lahar().arg("validate").arg(dir.path().join("scenario.yaml")).assert().success();
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        err.lines().filter(|l| l.starts_with("warning")).map(|l| l.to_string()).collect()
    };
    let p = pod("p", "huawei.com/Ascend310P: 1", "", "");
    let nodes = config_map() + &node310("n0", 2, false);
    let plain = "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: predicates\n";
    let w = kinds(&snapshot_dir(&nodes, &p, plain));
    assert!(
        w.iter().any(|l| l.contains("1 node(s) have Ascend chips (the first: n0), but no deviceshare plugin with `deviceshare.AscendHAMiVNPUEnable: true`")),
        "{w:?}"
    );
    let unseen = nodes.replace("node-register-Ascend310P", "node-register-Ascend999");
    let w = kinds(&snapshot_dir(&unseen, &p, &conf("allocate", "")));
    assert!(
        w.iter().any(|l| l.contains("node `n0` registers Ascend999 chips, a type the device ConfigMap does not list")),
        "{w:?}"
    );
    let no_alloc = nodes.replace(", huawei.com/Ascend310P: \"14\"", "");
    let w = kinds(&snapshot_dir(&no_alloc, &p, &conf("allocate", "")));
    assert!(
        w.iter()
            .any(|l| l.contains("node `n0` registers Ascend310P chips but does not advertise `huawei.com/Ascend310P`")),
        "{w:?}"
    );
}

/// The compact forms: a node group of 910B3 nodes with `vnpu` chips (the
/// device plugin's numbers for the published ConfigMap, which a snapshot of
/// that ConfigMap alone provides) and compact jobs asking for chips. On n-0
/// (8 chips of 65536 MiB, rings 0-3 and 4-7), where a node selector sends
/// them, `pair` goes first (jobs created together go by namespace/name, as
/// Volcano's UIDs stand in): 2 chips without memory take whole chips 0 and 1
/// (both rings have four fitting chips; the lower ring first). `small` (3
/// pods, 1024 MiB → 16384) then takes chip 4 three times: ring 1 has four
/// fitting chips to ring 0's two. `core` asks 8192 MiB and 30 AI cores in
/// hami-core mode and fits only the hami-core node h-0, on its chip 0.
#[test]
fn compact_nodes_and_jobs_ask_for_chips() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cm.yaml"), config_map()).unwrap();
    let dir = &dir;
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  snapshot: cm.yaml\n  cluster:\n    nodeGroups:\n      - {{name: n, count: 1, cpu: 64, memory: 256Gi, labels: {{pool: a}}, vnpu: {{type: Ascend910B3, chips: 8, count: 4, memory: 65536, cores: 20}}}}\n      - {{name: h, count: 1, cpu: 64, memory: 256Gi, vnpu: {{type: Ascend910B3, chips: 8, count: 4, memory: 65536, cores: 20, hamiCore: true}}}}\n  queues: [{{name: default}}]\n  scheduler:\n    inline: |\n{}  workload:\n    - jobs:\n        - {{name: small, duration: 1h, tasks: [{{name: w, replicas: 3, nodeSelector: {{pool: a}}, resources: {{cpu: 1, huawei.com/Ascend910B3: 1, huawei.com/Ascend910B3-memory: 1024}}}}]}}\n        - {{name: pair, duration: 1h, tasks: [{{name: w, replicas: 1, nodeSelector: {{pool: a}}, resources: {{cpu: 1, huawei.com/Ascend910B3: 2}}}}]}}\n        - {{name: core, duration: 1h, tasks: [{{name: w, replicas: 1, vnpuMode: hami-core, resources: {{cpu: 1, huawei.com/Ascend910B3: 1, huawei.com/Ascend910B3-memory: 8192, huawei.com/Ascend910B3-core: 30}}}}]}}\n",
        conf("allocate", "").lines().map(|l| format!("      {l}\n")).collect::<String>()
    );
    std::fs::write(dir.path().join("scenario.yaml"), &text).unwrap();
    let o = run(dir);
    let nodes = |j: &str| o.pods_of(j).iter().map(|p| p["node"].clone()).collect::<Vec<_>>();
    assert_eq!(nodes("core"), ["h-0"]);
    assert_eq!((nodes("small"), nodes("pair")), (vec!["n-0".to_string(); 3], vec!["n-0".to_string()]));
    let chips = chips_after(dir.path(), 1);
    let mut n0 = vec![(0u32, 0i64, 0i64); 8];
    n0[0] = (1, 65536, 0);
    n0[1] = (1, 65536, 0);
    n0[4] = (3, 3 * 16384, 0);
    let mut h0 = vec![(0u32, 0i64, 0i64); 8];
    h0[0] = (1, 8192, 30);
    assert_eq!(chips, [vec![n0], vec![h0]]);
    // Bad compact input, each at its field.
    let refused_text = |t: String, want: &str| {
        std::fs::write(dir.path().join("scenario.yaml"), t).unwrap();
        refused(dir, want);
    };
    refused_text(text.replacen("chips: 8,", "chips: 0,", 1), "spec.cluster.nodeGroups[0].vnpu.chips");
    refused_text(
        text.replace("vnpuMode: hami-core, ", ""),
        "spec.workload[0].jobs[2].tasks[0].resources.huawei.com/Ascend910B3-core: AI cores are set only in hami-core mode: give the task `vnpuMode: hami-core`",
    );
    refused_text(
        text.replace("vnpuMode: hami-core", "vnpuMode: template"),
        "spec.workload[0].jobs[2].tasks[0].vnpuMode: expected `hami-core` (leave it out for template mode), got `template`",
    );
    // Without vNPU in the conf the chips change nothing, with a warning.
    let plain = text.replace(
        "deviceshare.AscendHAMiVNPUEnable: true, deviceshare.KnownGeometriesCMName: hami-scheduler-device",
        "deviceshare.GPUNumberEnable: true",
    );
    std::fs::write(dir.path().join("scenario.yaml"), plain).unwrap();
    let out = super::lahar().arg("validate").arg(dir.path().join("scenario.yaml")).assert().success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("2 node(s) have Ascend chips (the first: n-0), but no deviceshare plugin with `deviceshare.AscendHAMiVNPUEnable: true`"),
        "{err}"
    );
}
