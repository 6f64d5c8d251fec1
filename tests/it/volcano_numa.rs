//! numa-aware over whole runs: the user guide's practice on a snapshot with
//! Numatopology objects, a pod waiting for one NUMA node across sessions, the
//! unresolvable refusals preempt respects, the warnings, and bad inputs through
//! the binary. Volcano's own numa-aware unit tests are replayed next to the
//! picker, in `sim-core/src/devices/numa/`.

use super::volcano::run_text;
use super::volcano_plugins::{explain_rows, plugin, published, scenario};
use lahar_core::devices::numa::{NumaContainer, TopologyPolicy};
use std::path::Path;

/// A conf of `actions` with predicates and numa-aware (weight 10).
fn conf(actions: &str) -> String {
    format!(
        "actions: \"{actions}\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n    enablePreemptable: false\n- plugins:\n  - name: predicates\n  - name: numa-aware\n    arguments: {{weight: 10}}\n"
    )
}

/// A compact job of one pod with `cpus` CPUs and 1 GiB (a Guaranteed pod).
fn job(name: &str, cpus: u32, extra: &str) -> String {
    format!(
        "{{name: {name}, queue: c1, {extra}, tasks: [{{name: w, replicas: 1, resources: {{cpu: {cpus}, memory: 1Gi}}}}]}}"
    )
}

/// (node, job, task, CPUs) of every CPU holder in a run's final world.
fn cpus_held(r: &lahar::RunReport) -> Vec<(String, String, String, String)> {
    let w = &r.output.world;
    let mut out = Vec::new();
    for (n, ns) in w.nodes.iter().enumerate() {
        for h in &ns.numa.holders {
            let p = &w.pods[h.pod];
            let spec = &w.jobs[p.job].spec;
            out.push((
                w.cluster.nodes[n].name.clone(),
                spec.name.clone(),
                spec.tasks[p.task as usize].name.to_string(),
                h.cpus.to_string(),
            ));
        }
    }
    out.sort();
    out
}

fn run_until(text: &str, horizon: &str) -> lahar::RunReport {
    super::run_str(&text.replace("spec:\n", &format!("spec:\n  horizon: {horizon}\n")))
}

fn example(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Volcano's NUMA-aware user guide: its conf, its Job and TFJob load as
/// written, and its "Practice" runs as the guide says, on a snapshot whose
/// Numatopology objects hold the running pods' CPUs (`podAllocations`).
///
/// node-1: CPUs 0–7,16–23 on NUMA node 0, 8–15,24–31 on NUMA node 1; node-2:
/// 0–11,24–35 and 12–23,36–47. `resReserved.cpu: 1` keeps CPU 0 of each.
/// - `vj-test` (16 CPUs, best-effort) at 0 s: node-2's NUMA node 0 has 19 free
///   CPUs, node-1's none more than 12, so node-2 scores (100 − 100 × 1 ÷ 2) ×
///   10 = 500 and node-1 0; its CPUs are the whole cores 1–8 of node-2's socket
///   0 (CPUs 1–8 and their siblings 25–32).
/// - At 60 s the TFJob: `ps` (15) takes NUMA node 1 of node-2 (score 500
///   against 0), threads first core by core, as Volcano's free-CPU order puts
///   every core of socket 1 under socket 0 there (the first CPU of core id c is
///   CPU c): 12–19,36–42. `worker` (15) no longer fits node-2's CPU resources
///   and goes to node-1 across its two NUMA nodes (11 and 12 free), where
///   Volcano's whole-core step takes every CPU with core ids 1, 2, 3 and 6 —
///   16 CPUs for 15.
#[test]
fn user_guide_practice() {
    let c = published("numa-aware-user-guide.yaml");
    assert_eq!(plugin(&c, "numa-aware").args.int("weight", 1), 10);
    let s =
        lahar::scenario::load_file(&example("examples/manifests/numa-scenario.yaml")).unwrap_or_else(|e| panic!("{e}"));
    let n1 = s.cluster.nodes.iter().find(|n| n.name == "node-1").and_then(|n| n.numa.clone()).expect("node-1 topology");
    assert!(n1.cpu_static && n1.has_cpu);
    assert_eq!(n1.topology, Some(TopologyPolicy::BestEffort));
    assert_eq!(n1.topo.numa_nodes, [0, 1]);
    assert_eq!(n1.allocatable.to_string(), "0-3,6-11,14-19,22-27,30-31");
    assert_eq!(n1.reserved.to_string(), "0");
    assert_eq!(n1.allocation_of("", "default", "cache-0").map(|c| c.to_string()).as_deref(), Some("12-13,28-29"));
    let jobs = s.jobs();
    let ask = |job: &str, task: usize| {
        let j = jobs.iter().find(|j| j.name == job).unwrap_or_else(|| panic!("no {job}"));
        j.tasks[task].hints.as_ref().and_then(|h| h.numa.as_deref()).cloned().expect("a NUMA ask")
    };
    let vj = ask("vj-test", 0);
    assert!(vj.guaranteed, "limits only: requests default to them");
    assert_eq!(vj.policy, Some(TopologyPolicy::BestEffort), "the task's topologyPolicy");
    assert_eq!(vj.containers, [NumaContainer { name: "running".into(), cpus: Some(16) }]);
    let ps = ask("tfjob-test", 0);
    assert_eq!((ps.guaranteed, ps.policy), (true, Some(TopologyPolicy::BestEffort)), "the pod annotation");
    assert_eq!(ps.containers, [NumaContainer { name: "tensorflow".into(), cpus: Some(15) }]);
    let db = ask("db-0", 0);
    assert_eq!((db.guaranteed, db.policy), (true, None), "status.qosClass");

    let r = lahar::run(s, &lahar::RunOptions { no_write: true, sessions: Some(5), ..Default::default() }).unwrap();
    let held = cpus_held(&r);
    let row = |n: &str, j: &str, t: &str, c: &str| (n.to_string(), j.to_string(), t.to_string(), c.to_string());
    assert_eq!(
        held,
        [
            row("node-1", "cache-0", "cache", "12-13,28-29"),
            row("node-1", "db-0", "db", "4-5,20-21"),
            row("node-1", "tfjob-test", "worker", "1-3,6,9-11,14,17-19,22,25-27,30"),
            row("node-2", "tfjob-test", "ps", "12-19,36-42"),
            row("node-2", "vj-test", "test", "1-8,25-32"),
            row("node-2", "web-0", "web", "10-11,34-35"),
            row("node-2", "web-1", "web", "22-23,46-47"),
        ]
    );
    // db-0 and cache-0 end at 1200 s: their podAllocations CPUs are free again
    // (the TFJob and vj-test ended at 660 s and 600 s).
    let mut s = lahar::scenario::load_file(&example("examples/manifests/numa-scenario.yaml")).unwrap();
    s.engine.horizon = Some(lahar_core::util::time::SimTime(1_300_000_000));
    let r = lahar::run(s, &lahar::RunOptions { no_write: true, ..Default::default() }).unwrap();
    let w = &r.output.world;
    let free: Vec<String> = w.nodes.iter().map(|n| n.numa.free.to_string()).collect();
    assert_eq!(free, ["0-31", "0-9,12-21,24-33,36-45"]);
    // The scores and the CPUs behind them, as --explain shows them.
    let dir = tempfile::tempdir().unwrap();
    let s = lahar::scenario::load_file(&example("examples/manifests/numa-scenario.yaml")).unwrap();
    let opts = lahar::RunOptions {
        out_dir: Some(dir.path().to_path_buf()),
        explain: vec!["default/vj-test-test-0".into(), "default/tfjob-test-ps-0".into()],
        ..Default::default()
    };
    lahar::run(s, &opts).unwrap();
    let rows = super::volcano_plugins::read_rows(&dir.path().join("explain.csv"));
    let numa: Vec<(String, String, String, String)> = rows
        .iter()
        .filter(|r| r["plugin"] == "numa-aware" && opts.explain.contains(&r["pod"]))
        .map(|r| (r["pod"].clone(), r["node"].clone(), r["score"].clone(), r["reason"].clone()))
        .collect();
    let e = |p: &str, n: &str, s: &str, why: &str| (p.to_string(), n.to_string(), s.to_string(), why.to_string());
    assert_eq!(
        numa,
        [
            e("default/vj-test-test-0", "node-1", "0", "CPUs 1-2,8-11,14-15,17-18,24-27,30-31 on NUMA node(s) 0,1"),
            e("default/vj-test-test-0", "node-2", "500", "CPUs 1-8,25-32 on NUMA node(s) 0"),
            e("default/tfjob-test-ps-0", "node-1", "0", "CPUs 1-3,6,9-11,14,17-19,22,25-27,30 on NUMA node(s) 0,1"),
            e("default/tfjob-test-ps-0", "node-2", "500", "CPUs 12-19,36-42 on NUMA node(s) 1"),
        ]
    );
}

/// single-numa-node over sessions. n1 has 16 CPUs: NUMA node 0 is CPUs 0–3 and
/// their siblings 8–11, NUMA node 1 4–7 and 12–15. `a` (6 CPUs, 0 s–100 s)
/// takes cores 0–2 of NUMA node 0 (0–2, 8–10); `b` (6, at 1 s) NUMA node 1,
/// thread by thread over cores 0–2 there (4–6, 12–14). `c` (4, at 10 s) fits
/// the node's 4 idle CPUs, but 2 on each NUMA node: no single-node hint, and
/// numa-aware refuses the node until `a` ends; at 100 s `c` takes cores 0 and 1
/// of NUMA node 0 (0, 1, 8, 9). Without numa-aware, `c` starts at 10 s.
#[test]
fn single_numa_node_waits_for_one_numa_node() {
    let nodes = ["{name: n1, cpu: 16, memory: 64Gi, numa: {numaNodes: 2, topologyPolicy: single-numa-node}}"];
    let jobs = [
        job("a", 6, "duration: 100s"),
        job("b", 6, "submitAt: 1s, duration: 1000s"),
        job("c", 4, "submitAt: 10s, duration: 100s"),
    ];
    let text = scenario(&nodes, &conf("enqueue, allocate"), &jobs).replace("  sessions: 1\n", "");
    let o = run_text(&text);
    let start = |j: &str| o.job(j)["start_s"].clone();
    assert_eq!((start("a"), start("b"), start("c")), ("0".into(), "1".into(), "100".into()));
    let rows = explain_rows(&text, "c-w-0");
    assert!(
        rows.iter().any(|r| r["plugin"] == "numa-aware" && r["reason"] == "container w cannot be assigned by numa"),
        "{rows:?}"
    );
    let row = |j: &str, c: &str| ("n1".to_string(), j.to_string(), "w".to_string(), c.to_string());
    assert_eq!(cpus_held(&run_until(&text, "50s")), [row("a", "0-2,8-10"), row("b", "4-6,12-14")]);
    assert_eq!(cpus_held(&run_until(&text, "150s")), [row("b", "4-6,12-14"), row("c", "0-1,8-9")]);
    let plain = text
        .replace("- name: numa-aware\n", "- name: conformance\n")
        .replace("arguments: {weight: 10}\n", "enablePredicate: true\n");
    assert_eq!(run_text(&plain).job("c")["start_s"], "10");
}

/// numa-aware's refusals are unresolvable (Volcano's `Error` and
/// `UnschedulableAndUnresolvable`): `lo1` and `lo2` (8 CPUs each, priority 1)
/// fill n1's two NUMA nodes; `hi` (4 CPUs, priority 100, at 10 s) finds no CPU,
/// so single-numa-node refuses n1 and preempt evicts nothing: `hi` waits for
/// `lo1` to end at 1000 s. Under best-effort the topology manager admits a pod
/// it cannot align, so n1 stays a candidate and preempt evicts for `hi` the
/// victim it evicts without numa-aware; `hi` then takes 4 of its CPUs.
#[test]
fn unresolvable_refusals_keep_preempt_off_the_node() {
    let nodes = |policy: &str| {
        vec![format!("{{name: n1, cpu: 16, memory: 64Gi, numa: {{numaNodes: 2, topologyPolicy: {policy}}}}}")]
    };
    let jobs = [
        job("lo1", 8, "duration: 1000s, priority: 1"),
        job("lo2", 8, "submitAt: 1s, duration: 2000s, priority: 1"),
        job("hi", 4, "submitAt: 10s, duration: 100s, priority: 100"),
    ];
    let run = |policy: &str, with_numa: bool| {
        let n = nodes(policy);
        let n: Vec<&str> = n.iter().map(String::as_str).collect();
        let mut text = scenario(&n, &conf("enqueue, allocate, preempt"), &jobs).replace("  sessions: 1\n", "");
        if !with_numa {
            text = text
                .replace("- name: numa-aware\n", "- name: conformance\n")
                .replace("arguments: {weight: 10}\n", "enablePredicate: true\n");
        }
        (run_text(&text), text)
    };
    let (single, _) = run("single-numa-node", true);
    assert_eq!(single.evictions(), Vec::<String>::new());
    assert_eq!(single.job("hi")["start_s"], "1000");
    let (plain, _) = run("single-numa-node", false);
    // hi evicts lo2 at 10 s; lo2's pod, made again once gone (40 s), leaves its
    // job starving, and preempt evicts lo1 for it: priority finds no victim of
    // equal priority, so Volcano's `Preemptable` falls through to the next
    // tier, where conformance offers lo1.
    assert_eq!(plain.evictions(), ["default/lo2-w-0", "default/lo1-w-0"]);
    let (best, text) = run("best-effort", true);
    // The same victim for hi; without conformance no tier offers lo1 to lo2.
    assert_eq!(best.evictions(), plain.evictions()[..1]);
    assert_eq!(best.job("hi")["start_s"], plain.job("hi")["start_s"]);
    // hi holds 4 CPUs of its victim's NUMA node once it runs.
    let t: u64 = best.job("hi")["start_s"].parse().unwrap();
    let held = cpus_held(&run_until(&text, &format!("{}s", t + 1)));
    let victim = &best.evictions()[0];
    let victim_cpus = if victim.starts_with("lo1") { "0-3,8-11" } else { "4-7,12-15" };
    let hi = held.iter().find(|h| h.1 == "hi").expect("hi holds CPUs");
    let v = lahar_core::devices::numa::CpuSet::parse(victim_cpus).unwrap();
    let h = lahar_core::devices::numa::CpuSet::parse(&hi.3).unwrap();
    assert_eq!((h.len(), h.minus(&v).len()), (4, 0), "{held:?}");
}

/// Topologies without numa-aware in the conf, and numa-aware without
/// topologies: one warning each.
#[test]
fn numa_warnings_say_what_the_topology_changes() {
    let with = ["{name: n1, cpu: 16, memory: 64Gi, numa: {numaNodes: 2, topologyPolicy: best-effort}}"];
    let without = ["{name: n1, cpu: 16, memory: 64Gi}"];
    let jobs = [job("a", 2, "duration: 1h")];
    let warnings = |nodes: &[&str], conf: &str| {
        let s = lahar::scenario::load_str(&scenario(nodes, conf, &jobs), "t.yaml", Path::new(""))
            .unwrap_or_else(|e| panic!("{e}"));
        s.warnings.iter().map(|w| (w.kind, w.count)).collect::<Vec<_>>()
    };
    let plain = "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n";
    assert_eq!(warnings(&with, plain), [("numa-topology-unused", 1)]);
    assert_eq!(warnings(&without, &conf("allocate")), [("numa-aware-without-topology", 1)]);
    assert_eq!(warnings(&with, &conf("allocate")), []);
    // A policy on pods that are not Guaranteed (no memory request) changes nothing.
    let burstable = ["{name: b, queue: c1, duration: 1h, tasks: [{name: w, replicas: 2, topologyPolicy: best-effort, resources: {cpu: 2}}]}".to_string()];
    let s = lahar::scenario::load_str(&scenario(&with, &conf("allocate"), &burstable), "t.yaml", Path::new(""))
        .unwrap_or_else(|e| panic!("{e}"));
    let w: Vec<_> = s.warnings.iter().map(|w| (w.kind, w.count)).collect();
    assert_eq!(w, [("numa-policy-not-guaranteed", 1)]);
    assert!(s.warnings[0].message.contains("the first `default/b`"), "{}", s.warnings[0].message);
}

/// Bad NUMA inputs, each refused by `lahar validate` with exit 2 and its place.
#[test]
fn numa_bad_input_through_the_binary() {
    let topo = |spec: &str| {
        format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: n0}}\nstatus:\n  allocatable: {{cpu: \"4\", memory: 16Gi}}\n---\napiVersion: nodeinfo.volcano.sh/v1alpha1\nkind: Numatopology\nmetadata: {{name: n0}}\nspec:\n{spec}"
        )
    };
    let detail = "  cpuDetail: {\"0\": {numa: 0, socket: 0, core: 0}, \"1\": {numa: 0, socket: 0, core: 1}, \"2\": {numa: 1, socket: 1, core: 0}, \"3\": {numa: 1, socket: 1, core: 1}}\n";
    let good = format!(
        "  policies: {{CPUManagerPolicy: static, TopologyManagerPolicy: restricted}}\n  numares: {{cpu: {{allocatable: 0-3, capacity: 4}}}}\n{detail}"
    );
    let pod = |annotations: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, annotations: {{lahar.io/duration: 1h{annotations}}}}}\nspec:\n  schedulerName: volcano\n  containers: [{{name: c, resources: {{limits: {{cpu: 1, memory: 1Gi}}}}}}]\n"
        )
    };
    let vcjob = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j, annotations: {lahar.io/duration: 1h}}\nspec:\n  schedulerName: volcano\n  tasks:\n  - name: t\n    replicas: 1\n    topologyPolicy: single-numa\n    template:\n      spec:\n        containers: [{name: c, resources: {limits: {cpu: 1, memory: 1Gi}}}]\n";
    let cases: Vec<(String, String, &str)> = vec![
        (
            topo(&good.replace("restricted", "strict")),
            pod(""),
            "spec.policies.TopologyManagerPolicy: expected none, best-effort, restricted or single-numa-node",
        ),
        (
            topo(&good.replace("static", "dynamic")),
            pod(""),
            "spec.policies.CPUManagerPolicy: expected `static` or `none`",
        ),
        (topo(&good.replace("0-3", "0-5")), pod(""), "spec.numares.cpu.allocatable: CPUs 4-5 are not in `cpuDetail`"),
        (topo(&good.replace("0-3", "0-x")), pod(""), "spec.numares.cpu.allocatable: expected a CPU list"),
        (topo(&format!("{good}  numaNodes: 2\n")), pod(""), "spec.numaNodes: unknown field of a Numatopology"),
        (
            topo(&good.replace("numa: 1, socket: 1, core: 1", "numa: 1, socket: 1, core: 1, die: 0")),
            pod(""),
            "spec.cpuDetail.3.die: unknown field; expected numa, socket or core",
        ),
        (
            topo(&good),
            pod(", volcano.sh/numa-topology-policy: single"),
            "metadata.annotations.volcano.sh/numa-topology-policy: expected none, best-effort, restricted or single-numa-node",
        ),
        (topo(&good), vcjob.to_string(), "spec.tasks[0].topologyPolicy: expected none, best-effort"),
        (topo("  policies: {CPUManagerPolicy: static}\n"), pod(""), "spec.cpuDetail: a Numatopology needs its CPUs"),
    ];
    for (nodes, pods, want) in cases {
        super::volcano_vgpu::refused(&super::volcano_vgpu::snapshot_dir(&nodes, &pods, &conf("allocate")), want);
    }
    // Compact nodes and tasks.
    let text = scenario(
        &[
            "{name: n1, cpu: 10, memory: 64Gi, numa: {numaNodes: 2, topologyPolicy: best-effort}}",
            "{name: n2, cpu: 16, memory: 64Gi, numa: {numaNodes: 3, sockets: 2, topologyPolicy: best-effort}}",
            "{name: n3, cpu: 16, memory: 64Gi, numa: {numaNodes: 2, topologyPolicy: single}}",
        ],
        &conf("allocate"),
        &["{name: a, queue: c1, duration: 1h, tasks: [{name: w, replicas: 1, topologyPolicy: strict, resources: {cpu: 1, memory: 1Gi}}]}".to_string()],
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let out = super::lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    for want in [
        "spec.cluster.nodes[0].numa: the node's cpu (10) must be a whole number of CPUs that splits into 2 socket(s) × 2 thread(s) per core × 1 NUMA node(s) per socket",
        "spec.cluster.nodes[1].numa.numaNodes: 3 NUMA nodes do not split evenly over 2 sockets",
        "spec.cluster.nodes[2].numa.topologyPolicy: expected none, best-effort, restricted or single-numa-node",
        "spec.workload[0].jobs[0].tasks[0].topologyPolicy: expected none, best-effort",
    ] {
        assert!(err.contains(want), "missing {want:?} in:\n{err}");
    }
}
