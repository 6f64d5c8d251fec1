//! deviceshare's vGPU mode (`deviceshare.VGPUEnable`, HAMi-core) over whole runs:
//! card fragmentation across sessions, binpack's node score, preempt evicting
//! until the cards fit, the user guide's pod on a snapshot node, the spread
//! annotation, and bad inputs through the binary. Volcano's own vGPU unit tests
//! are replayed next to the fit, in `sim-core/src/devices/vgpu/`.

use super::volcano::run_text;
use super::volcano_plugins::{explain_rows, plugin, published, scenario};
use std::path::Path;

/// A conf of `actions` with predicates and deviceshare in vGPU mode, `args` added.
fn conf(actions: &str, args: &str) -> String {
    format!(
        "actions: \"{actions}\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n    enablePreemptable: false\n- plugins:\n  - name: predicates\n  - name: deviceshare\n    arguments: {{deviceshare.VGPUEnable: true{args}}}\n"
    )
}

/// A compact job of one pod asking one card with `mib` MiB.
fn job(name: &str, mib: i64, extra: &str) -> String {
    format!(
        "{{name: {name}, queue: c1, {extra}, tasks: [{{name: w, replicas: 1, resources: {{cpu: 1, volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: {mib}}}}}]}}"
    )
}

/// (node, card) → MiB held, from a run's final world.
fn cards_held(text: &str, horizon: &str) -> Vec<(usize, usize, i64, usize)> {
    let r = super::run_str(&text.replace("spec:\n", &format!("spec:\n  horizon: {horizon}\n")));
    let w = &r.output.world;
    let mut out = Vec::new();
    for (n, ns) in w.nodes.iter().enumerate() {
        for (c, u) in ns.vgpu.iter().enumerate() {
            if u.num > 0 {
                out.push((n, c, u.memory, u.holders.len()));
            }
        }
    }
    out
}

/// n1 has two 16000 MiB cards (4 sharers each); `a` and `b` (10000 MiB, at 0 s)
/// take card 0 and card 1 (binpack: the busier card first, and card 0 cannot
/// hold `b`). `c` (8000 MiB, at 10 s) fits the node's resources (32000 − 20000 =
/// 12000 MiB of `volcano.sh/vgpu-memory`) but no card (6000 MiB idle on each):
/// deviceshare refuses n1 with Volcano's reason until `a` ends at 100 s; `c`
/// then starts on card 0.
#[test]
fn vgpu_fits_cards_not_the_node_total() {
    let text = scenario(
        &["{name: n1, cpu: 8, memory: 32Gi, vgpu: {cards: 2, memory: 16000, split: 4}}"],
        &conf("enqueue, allocate", ", deviceshare.SchedulePolicy: binpack"),
        &[
            job("a", 10000, "duration: 100s"),
            job("b", 10000, "duration: 1000s"),
            job("c", 8000, "submitAt: 10s, duration: 100s"),
        ],
    )
    .replace("  sessions: 1\n", "");
    let o = run_text(&text);
    let start = |j: &str| o.job(j)["start_s"].clone();
    assert_eq!((start("a"), start("b"), start("c")), ("0".into(), "0".into(), "100".into()));
    let rows = explain_rows(&text, "c-w-0");
    assert!(
        rows.iter().any(|r| r["plugin"] == "deviceshare" && r["reason"] == "hami-vgpuDeviceSharing error"),
        "{rows:?}"
    );
    // At 50 s: a on card 0, b on card 1. At 150 s: c on card 0 (8000), b on card 1.
    assert_eq!(cards_held(&text, "50s"), [(0, 0, 10000, 1), (0, 1, 10000, 1)]);
    assert_eq!(cards_held(&text, "150s"), [(0, 0, 8000, 1), (0, 1, 10000, 1)]);
}

/// With `deviceshare.ScheduleWeight: 10` under binpack, a node scores ⌊s + 0.5⌋ ×
/// 10, s = 100 × the card's memory in use after placing ÷ its memory. n1 and n2
/// have one 16000 MiB card each; `a` (4000 MiB) lands on one of them; for `b`
/// (4000 MiB, at 10 s) that node scores ⌊50.5⌋ × 10 = 500 and the empty one
/// ⌊25.5⌋ × 10 = 250, so `b` joins `a` on its card.
#[test]
fn vgpu_binpack_score_stacks_pods() {
    let text = scenario(
        &[
            "{name: n1, cpu: 8, memory: 32Gi, vgpu: {cards: 1, memory: 16000}}",
            "{name: n2, cpu: 8, memory: 32Gi, vgpu: {cards: 1, memory: 16000}}",
        ],
        &conf("enqueue, allocate", ", deviceshare.SchedulePolicy: binpack, deviceshare.ScheduleWeight: 10"),
        &[job("a", 4000, "duration: 1000s"), job("b", 4000, "submitAt: 10s, duration: 1000s")],
    )
    .replace("  sessions: 1\n", "");
    let o = run_text(&text);
    let binds = o.binds();
    let (na, nb) = (&binds["default/a-w-0"], &binds["default/b-w-0"]);
    assert_eq!(na, nb, "{binds:?}");
    let other = if na == "n1" { "n2" } else { "n1" };
    let rows = explain_rows(&text, "b-w-0");
    let score = |n: &str| {
        rows.iter()
            .find(|r| r["plugin"] == "deviceshare" && r["node"] == n && !r["score"].is_empty())
            .map(|r| r["score"].parse::<f64>().unwrap())
    };
    assert_eq!((score(na), score(other)), (Some(500.0), Some(250.0)), "{rows:?}");
}

/// Volcano's preempt asks every predicate again after each eviction
/// (`preemptorFitsOnNode`, whose comment names fragmented vGPU): n1 has two 16000
/// MiB cards; `lo1` and `lo2` (10000 MiB each, priority 1) hold one each; `hi`
/// (12000 MiB, priority 100, at 10 s) fits the node's resources without any
/// eviction (12000 MiB idle in all) but no card. deviceshare's refusal is
/// resolvable, so n1 stays a candidate; one eviction frees a whole card (an
/// evicted pod's vGPU is free at once, as Volcano's `RemoveTask` frees it), and
/// that is enough: exactly one victim. In the next session allocate places `hi`
/// on the freed card — the node's idle resources already hold it — so it starts
/// at 10 s, while its victim is still terminating.
#[test]
fn vgpu_preempt_evicts_until_the_cards_fit() {
    let text = scenario(
        &["{name: n1, cpu: 8, memory: 32Gi, vgpu: {cards: 2, memory: 16000}}"],
        &conf("enqueue, allocate, preempt", ""),
        &[
            job("lo1", 10000, "duration: 1000s, priority: 1"),
            job("lo2", 10000, "duration: 1000s, priority: 1"),
            job("hi", 12000, "submitAt: 10s, duration: 100s, priority: 100"),
        ],
    )
    .replace("  sessions: 1\n", "");
    let o = run_text(&text);
    assert_eq!(o.evictions().len(), 1, "{:?}", o.evictions());
    assert_eq!(o.job("hi")["start_s"], "10");
}

fn example(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Volcano's vGPU user guide: its conf loads as written, and its HAMi-core pod
/// (one card, 3000 MiB, 50 cores) runs on the example snapshot's node, on the
/// card its UUID allowlist names, which holds its memory and cores.
#[test]
fn user_guide_hami_core_pod() {
    let c = published("deviceshare-vgpu.yaml");
    let d = plugin(&c, "deviceshare");
    assert!(d.args.bool("deviceshare.VGPUEnable", false));
    assert_eq!(d.args.str("deviceshare.SchedulePolicy"), Some("binpack"));
    let s =
        lahar::scenario::load_file(&example("examples/manifests/vgpu-scenario.yaml")).unwrap_or_else(|e| panic!("{e}"));
    let n = &s.cluster.nodes[0];
    assert_eq!(n.vgpu.len(), 2);
    assert_eq!(
        (n.vgpu[1].uuid.as_str(), n.vgpu[1].number, n.vgpu[1].memory, n.vgpu[1].kind.as_str()),
        ("GPU-03f69c50-207a-2038-9b45-23cac89cb67d", 10, 32768, "NVIDIA-Tesla V100S-PCIE-32GB")
    );
    let hami = s.jobs().into_iter().find(|j| j.name == "hami-pod").expect("hami-pod");
    let ask = hami.tasks[0].hints.as_ref().and_then(|h| h.vgpu.as_deref()).expect("a vGPU ask");
    assert_eq!(ask.containers, [lahar_core::devices::vgpu::ContainerAsk::of(Some(1), Some(3000), Some(50)).unwrap()]);
    assert_eq!(ask.mode.as_deref(), Some("hami-core"));
    // After two sessions every pod runs. In the first, the two Pods (whose pods
    // exist) are placed: hami-pod takes card 0 of gpu-v100-1 (binpack: both idle,
    // the lower index first), uuid-pod the card it names, card 1 of gpu-v100-0;
    // enqueue admits spread-train, whose controller makes its pods after the
    // session. In the second its workers go one per node, each to the busier card,
    // beside the Pods (other PodGroups, so spread allows it).
    let r = lahar::run(s, &lahar::RunOptions { no_write: true, sessions: Some(2), ..Default::default() }).unwrap();
    let w = &r.output.world;
    let held: Vec<(usize, usize, i64, i64, Vec<String>)> = w
        .nodes
        .iter()
        .enumerate()
        .flat_map(|(n, ns)| ns.vgpu.iter().enumerate().map(move |(c, u)| (n, c, u)))
        .filter(|(_, _, u)| u.num > 0)
        .map(|(n, c, u)| {
            let pods = u.holders.iter().map(|h| w.jobs[h.group].spec.name.clone()).collect();
            (n, c, u.memory, u.cores, pods)
        })
        .collect();
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        held,
        [
            (0, 1, 19000, 50, names(&["uuid-pod", "spread-train"])),
            (1, 0, 19000, 100, names(&["hami-pod", "spread-train"])),
        ]
    );
}

/// `volcano.sh/vgpu-podgroup-policy: spread`: on one node of two cards, the two
/// workers of a gang take different cards; without the annotation binpack stacks
/// them on card 0.
#[test]
fn spread_annotation_keeps_a_gang_off_shared_cards() {
    let job = |annotation: &str| {
        format!(
            "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: t, namespace: c1, annotations: {{lahar.io/duration: 1h}}}}\nspec:\n  schedulerName: volcano\n  queue: c1\n  minAvailable: 2\n  tasks:\n  - name: w\n    replicas: 2\n    template:\n      metadata: {{annotations: {{{annotation}}}}}\n      spec:\n        containers: [{{name: c, resources: {{limits: {{volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 4000}}}}}}]\n"
        )
    };
    let run = |annotation: &str| {
        let dir = super::volcano_plugins::with_manifests(
            &["{name: n1, cpu: 8, memory: 32Gi, vgpu: {cards: 2, memory: 16000}}"],
            &conf("enqueue, allocate", ", deviceshare.SchedulePolicy: binpack"),
            &job(annotation),
        );
        let s = lahar::scenario::load_file(&dir.path().join("scenario.yaml")).unwrap_or_else(|e| panic!("{e}"));
        let r = lahar::run(s, &lahar::RunOptions { no_write: true, sessions: Some(2), ..Default::default() }).unwrap();
        r.output.world.nodes[0].vgpu.iter().map(|u| u.num).collect::<Vec<_>>()
    };
    assert_eq!(run("volcano.sh/vgpu-podgroup-policy: spread"), [1, 1]);
    assert_eq!(run(""), [2, 0]);
}

/// Bad vGPU inputs, each refused by `lahar validate` with exit 2 and its place.
#[test]
fn vgpu_bad_input_through_the_binary() {
    let node = |annotation: &str, alloc: &str| {
        format!(
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: v0\n  annotations: {{volcano.sh/node-vgpu-register: \"{annotation}\"}}\nstatus:\n  allocatable: {{cpu: \"8\", memory: 32Gi, {alloc}}}\n"
        )
    };
    let full = "volcano.sh/vgpu-number: \"10\", volcano.sh/vgpu-memory: \"16000\", volcano.sh/vgpu-cores: \"100\"";
    let good = "GPU-0,10,16000,NVIDIA-A10,true,hami-core:";
    let pod = |annotations: &str, limits: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, annotations: {{lahar.io/duration: 1h{annotations}}}}}\nspec:\n  schedulerName: volcano\n  containers: [{{name: c, resources: {{limits: {{{limits}}}}}}}]\n"
        )
    };
    let one = "volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 1000";
    let cases: Vec<(String, String, &str)> = vec![
        (
            node("GPU-0,10,16000,NVIDIA-A10,true:", full),
            pod("", one),
            "metadata.annotations.volcano.sh/node-vgpu-register: record 1 (`GPU-0,10,16000,NVIDIA-A10,true`): expected 6 fields",
        ),
        (
            node(good, "volcano.sh/vgpu-number: \"10\", volcano.sh/vgpu-memory: \"16000\""),
            pod("", one),
            "must advertise volcano.sh/vgpu-cores in `status.allocatable`",
        ),
        (
            node(good, full),
            pod(", volcano.sh/vgpu-mode: mps", one),
            "metadata.annotations.volcano.sh/vgpu-mode: expected `hami-core` or `mig`, got `mps`",
        ),
        (
            node(good, full),
            pod(", volcano.sh/vgpu-podgroup-policy: Spread", one),
            "metadata.annotations.volcano.sh/vgpu-podgroup-policy: expected `spread`",
        ),
        (
            node(good, full),
            pod("", "volcano.sh/vgpu-number: 1.5"),
            "spec.containers[0].resources.limits.volcano.sh/vgpu-number: expected a whole number, got `1.5`",
        ),
        (
            node(good, full),
            pod(
                "",
                "volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 2000}, requests: {volcano.sh/vgpu-memory: 1000",
            ),
            "spec.containers[0].resources.requests.volcano.sh/vgpu-memory: must equal its limit (2000)",
        ),
        (
            node(&"GPU-0,10,16000,NVIDIA-A10,true,hami-core:".repeat(65), full),
            pod("", one),
            "at most 64 cards per node, got 65",
        ),
    ];
    for (nodes, pods, want) in cases {
        refused(&snapshot_dir(&nodes, &pods, &conf("allocate", "")), want);
    }
    // A compact node's cards and a conf mixing modes.
    let text = scenario(
        &["{name: n1, cpu: 8, memory: 32Gi, vgpu: {cards: 0, memory: 16000}}"],
        &conf("allocate", ", deviceshare.GPUSharingEnable: true"),
        &[job("a", 1000, "duration: 1h")],
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let out = super::lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    for want in [
        "spec.cluster.nodes[0].vgpu.cards: must be an integer ≥ 1, got 0",
        "deviceshare.VGPUEnable: vGPU cannot be used together with GPUSharingEnable",
    ] {
        assert!(err.contains(want), "missing {want:?} in:\n{err}");
    }
}

/// Cards without vGPU sharing in the conf change nothing, and a run that models
/// them says its GPU metrics leave them out: one warning each, counting nodes.
#[test]
fn vgpu_warnings_say_what_the_cards_change() {
    let nodes = [
        "{name: n1, cpu: 8, memory: 32Gi, vgpu: {cards: 2, memory: 16000}}",
        "{name: n2, cpu: 8, memory: 32Gi, vgpu: {cards: 2, memory: 16000}}",
    ];
    let jobs = [job("a", 1000, "duration: 1h")];
    let warnings = |conf: &str| {
        let s = lahar::scenario::load_str(&scenario(&nodes, conf, &jobs), "t.yaml", Path::new(""))
            .unwrap_or_else(|e| panic!("{e}"));
        s.warnings.iter().map(|w| (w.kind, w.count)).collect::<Vec<_>>()
    };
    let plain = "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n";
    assert_eq!(warnings(plain), [("vgpu-cards-unused", 2)]);
    assert_eq!(warnings(&conf("allocate", "")), [("vgpu-not-in-gpu-metrics", 2)]);
}

/// A running pod of a snapshot holds the cards its `volcano.sh/vgpu-ids-new`
/// annotation names, as Volcano's cache counts it, and none without one. On v0
/// (two 16000 MiB cards, binpack): `run-b` holds 10000 MiB and 30 cores of card
/// GPU-B by its annotation (the fit would have taken card 0); `run-none` asks for
/// 4000 MiB but has no annotation, so it holds nothing; the pending `new` (10000
/// MiB) then finds card 1 with 6000 idle and takes card 0.
#[test]
fn snapshot_pods_hold_the_cards_their_annotation_names() {
    let node = "apiVersion: v1\nkind: Node\nmetadata:\n  name: v0\n  annotations: {volcano.sh/node-vgpu-register: \"GPU-A,10,16000,NVIDIA-A10,true,hami-core:GPU-B,10,16000,NVIDIA-A10,true,hami-core:\"}\nstatus:\n  allocatable: {cpu: \"8\", memory: 32Gi, volcano.sh/vgpu-number: \"20\", volcano.sh/vgpu-memory: \"32000\", volcano.sh/vgpu-cores: \"200\"}\n";
    let pod = |name: &str, mib: i64, annotations: &str, status: &str| {
        format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, annotations: {{lahar.io/duration: 1h{annotations}}}}}\nspec:\n  schedulerName: volcano\n{status}  containers: [{{name: c, resources: {{limits: {{volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: {mib}, volcano.sh/vgpu-cores: 30}}}}}}]\n"
        )
    };
    let running = "  nodeName: v0\n";
    let snapshot = format!(
        "{node}{}{}{}",
        pod("run-b", 10000, ", volcano.sh/vgpu-ids-new: \"GPU-B,NVIDIA,10000,30:\"", running)
            .replace("\nspec:", "\nstatus: {phase: Running}\nspec:"),
        pod("run-none", 4000, "", running).replace("\nspec:", "\nstatus: {phase: Running}\nspec:"),
        pod("new", 10000, "", ""),
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cluster.yaml"), &snapshot).unwrap();
    let scenario = |conf_args: &str| {
        format!(
            "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  snapshot: cluster.yaml\n  scheduler:\n    inline: |\n{}",
            conf("allocate", conf_args).lines().map(|l| format!("      {l}\n")).collect::<String>()
        )
    };
    std::fs::write(dir.path().join("s.yaml"), scenario(", deviceshare.SchedulePolicy: binpack")).unwrap();
    let s = lahar::scenario::load_file(&dir.path().join("s.yaml")).unwrap_or_else(|e| panic!("{e}"));
    let r = lahar::run(s, &lahar::RunOptions { no_write: true, sessions: Some(1), ..Default::default() }).unwrap();
    let w = &r.output.world;
    let held: Vec<(i64, i64, Vec<String>)> = w.nodes[0]
        .vgpu
        .iter()
        .map(|u| (u.memory, u.cores, u.holders.iter().map(|h| w.jobs[h.group].spec.name.clone()).collect()))
        .collect();
    assert_eq!(held, [(10000, 30, vec!["new".to_string()]), (10000, 30, vec!["run-b".to_string()])]);
    // An annotation naming a card the node does not have is an error at its place.
    std::fs::write(dir.path().join("cluster.yaml"), snapshot.replace("GPU-B,NVIDIA", "GPU-C,NVIDIA")).unwrap();
    let out = super::lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains(
            "metadata.annotations.volcano.sh/vgpu-ids-new: entry `GPU-C,NVIDIA,10000,30`: the node has no card GPU-C"
        ),
        "{err}"
    );
}

/// `deviceshare.GPUExclusiveRules` (the user guide's form, on the label Volcano's
/// job controller gives a task's pods): on n1 (two 16000 MiB cards, binpack),
/// the training pods t1 and t2 (4000 MiB each, task `train`) take card 0 and
/// card 1 — binpack would stack them, the rule keeps card 0 for t1 — and t3
/// finds both cards reserved and waits; `serve` (task `serve`, no rule) joins t1
/// on card 0, the busier one. When t1 ends at 100 s, t3 takes card 0.
#[test]
fn exclusive_rules_keep_matching_pods_apart() {
    let job = |name: &str, task: &str, extra: &str| {
        format!(
            "{{name: {name}, queue: c1, {extra}, tasks: [{{name: {task}, replicas: 1, resources: {{cpu: 1, volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 4000}}}}]}}"
        )
    };
    let text = scenario(
        &["{name: n1, cpu: 8, memory: 32Gi, vgpu: {cards: 2, memory: 16000}}"],
        &conf(
            "enqueue, allocate",
            ", deviceshare.SchedulePolicy: binpack, deviceshare.GPUExclusiveRules: [{volcano.sh/task-spec: train}]",
        ),
        &[
            job("t1", "train", "duration: 100s"),
            job("t2", "train", "duration: 1000s"),
            job("t3", "train", "duration: 100s"),
            job("serve", "serve", "duration: 1000s"),
        ],
    )
    .replace("  sessions: 1\n", "");
    let o = run_text(&text);
    let start = |j: &str| o.job(j)["start_s"].clone();
    assert_eq!([start("t1"), start("t2"), start("t3"), start("serve")], ["0", "0", "100", "0"]);
    assert_eq!(cards_held(&text, "50s"), [(0, 0, 8000, 2), (0, 1, 4000, 1)]);
    assert_eq!(cards_held(&text, "150s"), [(0, 0, 8000, 2), (0, 1, 4000, 1)]);
    let rows = explain_rows(&text, "t3-train-0");
    assert!(rows.iter().any(|r| r["plugin"] == "deviceshare" && r["t_s"] == "0"), "{rows:?}");
}

/// Volcano's dynamic MIG with the vGPU user guide's conf and MIG pod, and the
/// device plugin's published ConfigMap in the snapshot: two A100-SXM4-40GB cards
/// in MIG mode. `mig-pod` (3000 MiB) takes card 0's smallest instance that holds
/// it, a 1g.5gb of group1 (5120 MiB charged, as the guide's note says); at 10 s
/// `mig-8g-a` (8000 MiB) finds no instance that large in card 0's group1 and
/// takes card 1's 2g.10gb of group2 (the first group with one); at 70 s
/// `mig-8g-b` goes to the busier card 1 (binpack) and takes its next 2g.10gb.
#[test]
fn user_guide_mig_pod() {
    let s =
        lahar::scenario::load_file(&example("examples/manifests/mig-scenario.yaml")).unwrap_or_else(|e| panic!("{e}"));
    let n = &s.cluster.nodes[0];
    assert!(n.vgpu.iter().all(|c| c.mig && c.groups.len() == 4 && c.percent));
    assert!(lahar_core::devices::vgpu::node_mig(&n.vgpu));
    let mig = s.jobs().into_iter().find(|j| j.name == "mig-pod").expect("mig-pod");
    let ask = mig.tasks[0].hints.as_ref().and_then(|h| h.vgpu.as_deref()).expect("a vGPU ask");
    assert_eq!(ask.mode.as_deref(), Some("mig"));
    let mut s = s;
    s.engine.horizon = Some(lahar_core::util::time::SimTime(100_000_000));
    let r = lahar::run(s, &lahar::RunOptions { no_write: true, ..Default::default() }).unwrap();
    let w = &r.output.world;
    let cards = &w.cluster.nodes[0].vgpu;
    let held: Vec<(String, i64, Vec<String>)> = w.nodes[0]
        .vgpu
        .iter()
        .zip(cards)
        .flat_map(|(u, c)| {
            u.holders.iter().map(move |h| {
                let ids =
                    h.slots.iter().map(|&s| lahar_core::devices::vgpu::encode_id(&c.uuid, &c.groups, s)).collect();
                (w.jobs[h.group].spec.name.clone(), h.memory, ids)
            })
        })
        .collect();
    let row = |j: &str, m: i64, id: &str| (j.to_string(), m, vec![id.to_string()]);
    assert_eq!(
        held,
        [
            row("mig-pod", 5120, "GPU-6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b[group1-0]"),
            row("mig-8g-a", 10240, "GPU-7b2e1d3f-4c5e-4f60-9bac-1d2e3f4a5b6c[group2-0]"),
            row("mig-8g-b", 10240, "GPU-7b2e1d3f-4c5e-4f60-9bac-1d2e3f4a5b6c[group2-1]"),
        ]
    );
}

/// MIG records without the device ConfigMap run in HAMi-core mode (Volcano's
/// defaults have no geometries), with a warning; a bad ConfigMap is refused
/// with the field inside `device-config.yaml`.
#[test]
fn mig_needs_its_device_config() {
    let node = "apiVersion: v1\nkind: Node\nmetadata:\n  name: m0\n  annotations: {volcano.sh/node-vgpu-register: \"GPU-0,10,40960,NVIDIA-A100-SXM4-40GB,true,mig:\"}\nstatus:\n  allocatable: {cpu: \"8\", memory: 32Gi, volcano.sh/vgpu-number: \"10\", volcano.sh/vgpu-memory: \"40960\", volcano.sh/vgpu-cores: \"100\"}\n";
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {lahar.io/duration: 1h}}\nspec:\n  schedulerName: volcano\n  containers: [{name: c, resources: {limits: {volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 1000}}}]\n";
    let cm = |body: &str| {
        format!(
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: volcano-vgpu-device-config, namespace: kube-system}}\ndata:\n  device-config.yaml: |\n{}",
            body.lines().map(|l| format!("    {l}\n")).collect::<String>()
        )
    };
    let write = |snapshot: &str| snapshot_dir(snapshot, pod, &conf("allocate", ""));
    let dir = write(node);
    let s = lahar::scenario::load_file(&dir.path().join("scenario.yaml")).unwrap_or_else(|e| panic!("{e}"));
    assert!(!lahar_core::devices::vgpu::node_mig(&s.cluster.nodes[0].vgpu));
    let w: Vec<_> = s.warnings.iter().map(|w| w.kind).collect();
    assert!(w.contains(&"vgpu-mig-fallback"), "{w:?}");
    for (body, want) in [
        (
            "nvidia:\n  resourceCountName: example.com/vgpu\n",
            "data.device-config.yaml: nvidia.resourceCountName: lahar reads the vGPU resources under Volcano's default names",
        ),
        (
            "nvidia:\n  gpuMemoryFactr: 2\n",
            "data.device-config.yaml: nvidia.gpuMemoryFactr: unknown field of the nvidia section",
        ),
        (
            "nvidia:\n  knownMigGeometries:\n  - models: [A100]\n    allowedGeometries:\n    - group: g-1\n      geometries: [{name: 1g.5gb, memory: 5120, count: 7}]\n",
            "allowedGeometries[0].group: expected a group name without `-`",
        ),
        (
            "nvidia:\n  knownMigGeometries:\n  - models: [A100]\n    allowedGeometries:\n    - group: g1\n      geometries: [{name: 1g.5gb, memory: lots, count: 7}]\n",
            "geometries[0]: expected {name, memory: MiB > 0, count > 0}",
        ),
    ] {
        refused(&write(&format!("{node}{}", cm(body))), want);
    }
    // A device ConfigMap no conf reads is counted among the skipped objects.
    let plain = "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n";
    let dir = snapshot_dir(&format!("{node}{}", cm("nvidia:\n  gpuMemoryFactor: 1\n")), pod, plain);
    let s = lahar::scenario::load_file(&dir.path().join("scenario.yaml")).unwrap_or_else(|e| panic!("{e}"));
    let skipped = s.warnings.iter().find(|w| w.kind == "snapshot-objects-skipped").expect("a skipped warning");
    assert!(
        skipped.message.contains("1 device ConfigMap(s)")
            && skipped
                .message
                .contains("kube-system/volcano-vgpu-device-config: the conf models no vGPU or vNPU sharing"),
        "{}",
        skipped.message
    );
}

/// A temp dir with `cluster.yaml` (a snapshot), `pods.yaml` (a manifests
/// source) and `scenario.yaml` running them under the inline `conf`.
pub(crate) fn snapshot_dir(snapshot: &str, pods: &str, conf: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cluster.yaml"), snapshot).unwrap();
    std::fs::write(dir.path().join("pods.yaml"), pods).unwrap();
    std::fs::write(
        dir.path().join("scenario.yaml"),
        format!(
            "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  snapshot: cluster.yaml\n  queues: [{{name: default}}]\n  scheduler:\n    inline: |\n{}  workload:\n    - manifests: pods.yaml\n",
            conf.lines().map(|l| format!("      {l}\n")).collect::<String>()
        ),
    )
    .unwrap();
    dir
}

/// `lahar validate` of a snapshot scenario fails with exit 2 and says `want`.
pub(crate) fn refused(dir: &tempfile::TempDir, want: &str) {
    let out = super::lahar().arg("validate").arg(dir.path().join("scenario.yaml")).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains(want), "missing {want:?} in:\n{err}");
}
