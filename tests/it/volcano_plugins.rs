//! Replays of the Volcano unit tests of the plugins added for published confs
//! (issue 13): each test names the Go test and case it replays. Node scores are
//! read from `--explain` rows (the plugin's weighted score per candidate node), so
//! the numbers compared are Volcano's own expectations.

use super::volcano::{Row, run_text};
use std::collections::BTreeMap;
use std::path::Path;

/// A one-session scenario: `nodes` (flow mappings), one queue `c1`, the conf's
/// tiers, and `jobs` (compact job flow mappings, queue c1).
pub(crate) fn scenario(nodes: &[&str], conf: &str, jobs: &[String]) -> String {
    let mut s = String::from(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  sessions: 1\n  cluster:\n    nodes:\n",
    );
    for n in nodes {
        s += &format!("      - {n}\n");
    }
    s += "  queues:\n    - {name: c1}\n  scheduler:\n    inline: |\n";
    for l in conf.lines() {
        s += &format!("      {l}\n");
    }
    s += "  workload:\n    - jobs:\n";
    for j in jobs {
        s += &format!("      - {j}\n");
    }
    s
}

/// The rows of a written CSV file.
pub(crate) fn read_rows(path: &Path) -> Vec<Row> {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let h = r.headers().expect("header").clone();
    r.records().map(|x| h.iter().zip(x.expect("record").iter()).map(|(k, v)| (k.into(), v.into())).collect()).collect()
}

/// explain.csv rows of `pod` in a run of `text`.
pub(crate) fn explain_rows(text: &str, pod: &str) -> Vec<Row> {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = lahar::scenario::load_str(text, "test.yaml", Path::new("")).unwrap_or_else(|e| panic!("{e}"));
    let opts = lahar::RunOptions {
        out_dir: Some(dir.path().to_path_buf()),
        explain: vec![pod.to_string()],
        ..Default::default()
    };
    lahar::run(s, &opts).expect("run");
    read_rows(&dir.path().join("explain.csv"))
}

/// node → the plugin's score for `pod` in the first session that scored it.
fn scores(text: &str, pod: &str, plugin: &str) -> BTreeMap<String, f64> {
    let rows = explain_rows(text, pod);
    rows.iter()
        .filter(|r| r["plugin"] == plugin && r["session"] == "1" && !r["score"].is_empty())
        .map(|r| (r["node"].clone(), r["score"].parse::<f64>().expect("score")))
        .collect()
}

/// Asserts `got` has exactly the nodes of `want` with the same scores (to 1e-6).
fn assert_scores(case: &str, got: &BTreeMap<String, f64>, want: &[(&str, f64)]) {
    let keys: Vec<&str> = got.keys().map(String::as_str).collect();
    let want_keys: Vec<&str> = want.iter().map(|w| w.0).collect();
    assert_eq!(keys, want_keys, "{case}: scored nodes");
    for (n, s) in want {
        assert!((got[*n] - s).abs() < 1e-6, "{case}: {n} scored {} not {s}", got[*n]);
    }
}

/// Expected scores: (node, score).
type Scores<'a> = &'a [(&'a str, f64)];

/// A one-pod job `name` requesting `res` (compact resources).
fn pod_job(name: &str, res: &str) -> String {
    format!("{{name: {name}, queue: c1, duration: 1h, tasks: [{{name: w, replicas: 1, resources: {{{res}}}}}]}}")
}

fn rsf_conf(args: &str) -> String {
    format!("actions: \"allocate\"\ntiers:\n- plugins:\n  - name: resource-strategy-fit\n    arguments: {args}\n")
}

// ---------------------------------------------------------------------------
// resource-strategy-fit (plugins/resource-strategy-fit)

/// `TestResourceStrategyFitPlugin`, first case "single job": nodes of 4 cpus and
/// 4Gi with 10 or 5 GPUs (n1, n2) or 10 or 5 example.com/foo (n3, n4); GPUs
/// MostAllocated, foo LeastAllocated, weight 1 each, plugin weight 10. Each pod is
/// scored alone (the test scores every pod on the empty nodes); a node the pod does
/// not fit gets no score row (Volcano's test scores it 0: the resource is 0 there).
/// p3 (10Gi) fits no node, which lahar refuses at load: its scores are checked by
/// the plugin's own `score` test.
#[test]
fn replay_rsf_plugin_single_job_case1() {
    let nodes = [
        "{name: n1, cpu: 4, memory: 4Gi, pods: 10, gpus: 10}",
        "{name: n2, cpu: 4, memory: 4Gi, pods: 10, gpus: 5}",
        "{name: n3, cpu: 4, memory: 4Gi, pods: 10, extendedResources: {example.com/foo: 10}}",
        "{name: n4, cpu: 4, memory: 4Gi, pods: 10, extendedResources: {example.com/foo: 5}}",
    ];
    let conf = rsf_conf(
        "{resourceStrategyFitWeight: 10, resources: {nvidia.com/gpu: {type: MostAllocated, weight: 1}, example.com/foo: {type: LeastAllocated, weight: 1}}}",
    );
    let cases: [(&str, &str, Scores); 3] = [
        ("p1", "cpu: 1, memory: 1Gi, example.com/foo: 2", &[("n3", 800.0), ("n4", 600.0)]),
        ("p2", "cpu: 1, memory: 1Gi, example.com/foo: 3", &[("n3", 700.0), ("n4", 400.0)]),
        ("p4", "cpu: 1, memory: 1Gi, nvidia.com/gpu: 3", &[("n1", 300.0), ("n2", 600.0)]),
    ];
    for (p, res, want) in cases {
        let text = scenario(&nodes, &conf, &[pod_job(p, res)]);
        assert_scores(p, &scores(&text, &format!("{p}-w-0"), "resource-strategy-fit"), want);
    }
}

/// `TestResourceStrategyFitPlugin`, second case "single job": p5 (4 GPUs, 4 foo) on
/// n5 (10 GPUs, 5 foo) scores (0.4 + 2·0.2)/3·1000 = 266.67, on n6 (foo 10) 400
/// (its GPUs count with weight 1 and score 0: the node has none).
#[test]
fn replay_rsf_plugin_single_job_case2() {
    let nodes = [
        "{name: n5, cpu: 4, memory: 4Gi, pods: 10, gpus: 10, extendedResources: {example.com/foo: 5}}",
        "{name: n6, cpu: 4, memory: 4Gi, pods: 10, extendedResources: {example.com/foo: 10}}",
    ];
    let conf = rsf_conf(
        "{resourceStrategyFitWeight: 10, resources: {nvidia.com/gpu: {type: MostAllocated, weight: 1}, example.com/foo: {type: LeastAllocated, weight: 2}}}",
    );
    // p5 asks for GPUs, which n6 lacks: in lahar it is not a candidate there. The
    // test's n6 score (399.99999999) is checked by the plugin's unit test below.
    let text = scenario(&nodes, &conf, &[pod_job("p5", "cpu: 1, memory: 1Gi, nvidia.com/gpu: 4, example.com/foo: 4")]);
    assert_scores("p5", &scores(&text, "p5-w-0", "resource-strategy-fit"), &[("n5", 266.66666666)]);
}

const SRA_NODES: [&str; 4] = [
    "{name: n1, cpu: 32, memory: 64Gi, pods: 10}",
    "{name: n2, cpu: 8, memory: 16Gi, pods: 10, extendedResources: {nvidia.com/t4: 16}}",
    "{name: n3, cpu: 8, memory: 16Gi, pods: 10, extendedResources: {nvidia.com/a10: 16}}",
    "{name: n4, cpu: 8, memory: 16Gi, pods: 10, extendedResources: {nvidia.com/t4: 8, nvidia.com/a10: 16}}",
];
const SRA_PODS: [(&str, &str); 4] = [
    ("p1", "cpu: 1, memory: 1Gi"),
    ("p2", "cpu: 1.5, nvidia.com/t4: 2"),
    ("p3", "cpu: 2, memory: 4Gi, nvidia.com/a10: 2"),
    ("p4", "cpu: 3, memory: 4Gi, nvidia.com/t4: 1, nvidia.com/a10: 3"),
];

/// Runs sra's `TestNode` pods one by one under `args`, keeping only the nodes each
/// pod fits (Volcano's expected score on the others is 0 or for a node lahar would
/// never score).
fn sra_case(case: &str, args: &str, want: [&[(&str, f64)]; 4]) {
    let conf = rsf_conf(args);
    for ((p, res), want) in SRA_PODS.iter().zip(want) {
        let text = scenario(&SRA_NODES, &conf, &[pod_job(p, res)]);
        assert_scores(&format!("{case} {p}"), &scores(&text, &format!("{p}-w-0"), "resource-strategy-fit"), want);
    }
}

/// sra_test.go `TestNode`, "case1: single job score result in multi-GPU resource".
#[test]
fn replay_rsf_sra_case1_multi_gpu_resource() {
    sra_case(
        "case1",
        "{resourceStrategyFitWeight: 0, sra: {enable: true, resources: \"nvidia.com/t4, nvidia.com/a10\", weight: 5, resourceWeight: {nvidia.com/t4: 2, nvidia.com/a10: 3}}}",
        [
            &[("n1", 500.0), ("n2", 300.0), ("n3", 200.0), ("n4", 0.0)],
            &[("n2", 300.0), ("n4", 0.0)],
            &[("n3", 200.0), ("n4", 0.0)],
            &[("n4", 0.0)],
        ],
    );
}

/// sra_test.go `TestNode`, "case2: single job score result in single GPU resource".
#[test]
fn replay_rsf_sra_case2_single_gpu_resource() {
    sra_case(
        "case2",
        "{resourceStrategyFitWeight: 0, sra: {enable: true, resources: nvidia.com/t4, weight: 5, resourceWeight: {nvidia.com/t4: 2}}}",
        [
            &[("n1", 500.0), ("n2", 0.0), ("n3", 500.0), ("n4", 0.0)],
            &[("n2", 0.0), ("n4", 0.0)],
            &[("n3", 500.0), ("n4", 0.0)],
            &[("n4", 0.0)],
        ],
    );
}

/// sra_test.go `TestNode`, "case3: single job score result with sra policy and
/// resourceStrategyFit" (sra weight 0: the strategy score alone).
#[test]
fn replay_rsf_sra_case3_strategy_only() {
    sra_case(
        "case3",
        "{resourceStrategyFitWeight: 8, resources: {nvidia.com/t4: {type: MostAllocated, weight: 3}, cpu: {type: LeastAllocated, weight: 1}}, sra: {enable: true, resources: nvidia.com/t4, weight: 0, resourceWeight: {nvidia.com/t4: 2}}}",
        [
            &[("n1", 775.0), ("n2", 700.0), ("n3", 700.0), ("n4", 700.0)],
            &[("n2", 237.5), ("n4", 312.5)],
            &[("n3", 600.0), ("n4", 600.0)],
            &[("n4", 200.0)],
        ],
    );
}

/// sra_test.go `TestNode`, "case4: single job score result with sra policy and
/// resourceStrategyFit" (both scores summed).
#[test]
fn replay_rsf_sra_case4_strategy_and_sra() {
    sra_case(
        "case4",
        "{resourceStrategyFitWeight: 8, resources: {nvidia.com/t4: {type: MostAllocated, weight: 3}, cpu: {type: LeastAllocated, weight: 1}}, sra: {enable: true, resources: nvidia.com/t4, weight: 5, resourceWeight: {nvidia.com/t4: 2}}}",
        [
            &[("n1", 1275.0), ("n2", 700.0), ("n3", 1200.0), ("n4", 700.0)],
            &[("n2", 237.5), ("n4", 312.5)],
            &[("n3", 1100.0), ("n4", 600.0)],
            &[("n4", 200.0)],
        ],
    );
}

/// resource_strategy_fit_test.go `TestAllocate`: with gang, drf, proportion,
/// predicates and nodeorder, "GPU MostAllocated" binds the 2-GPU pod beside its
/// running sibling (n2), "cpu LeastAllocated" binds the CPU pod on the empty CPU
/// node (n4).
#[test]
fn replay_rsf_allocate() {
    let nodes = [
        "{name: n1, cpu: 5, memory: 10Gi, pods: 10, gpus: 10, labels: {nodeResourceType: gpu}}",
        "{name: n2, cpu: 5, memory: 10Gi, pods: 10, gpus: 10, labels: {nodeResourceType: gpu}}",
        "{name: n3, cpu: 5, memory: 10Gi, pods: 10, labels: {nodeResourceType: cpu}}",
        "{name: n4, cpu: 5, memory: 10Gi, pods: 10, labels: {nodeResourceType: cpu}}",
    ];
    let conf = "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: resource-strategy-fit\n    arguments: {resourceStrategyFitWeight: 10, resources: {nvidia.com/gpu: {type: MostAllocated, weight: 2}, cpu: {type: LeastAllocated, weight: 1}}}\n  - name: gang\n  - name: drf\n  - name: proportion\n  - name: predicates\n  - name: nodeorder\n";
    for (case, kind, running, res, want) in [
        ("GPU MostAllocated", "gpu", "n2", "cpu: 1, memory: 1G, nvidia.com/gpu: 2", "n2"),
        ("cpu LeastAllocated", "cpu", "n3", "cpu: 1, memory: 1G", "n4"),
    ] {
        let job = format!(
            "{{name: pg1, queue: c1, minAvailable: 1, duration: 1h, running: {{w: [{running}]}}, tasks: [{{name: w, replicas: 2, nodeSelector: {{nodeResourceType: {kind}}}, resources: {{{res}}}}}]}}"
        );
        let o = run_text(&scenario(&nodes, conf, &[job]));
        let binds: Vec<String> = o.of("bind").iter().map(|d| format!("{} {}", d["pod"], d["node"])).collect();
        assert_eq!(binds, [format!("default/pg1-w-1 {want}")], "{case}");
    }
}

/// The proportional predicate over sessions: a node of 8 GPUs, 40 cpus and 400Gi
/// keeps 4 cpus and 8 GB per idle GPU for GPU pods. `train` (8 GPUs) starts at 0
/// and ends at 100 s; `etl` (30 cpus, at 10 s) starts at once, as no GPU is idle;
/// `small` (8 cpus, at 200 s) would leave 40 − 30 − 8 = 2 < 8 · 4 cpus beside the 8
/// idle GPUs, so it waits for `etl` to end at 1010 s: 40 − 8 = 32 ≥ 32.
#[test]
fn proportional_keeps_cpus_for_idle_gpus() {
    let text = scenario(
        &["{name: n1, cpu: 40, memory: 400Gi, gpus: 8}"],
        "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: predicates\n  - name: resource-strategy-fit\n    arguments: {proportional: {enable: true, resources: nvidia.com/gpu, resourceProportion: {nvidia.com/gpu.cpu: 4, nvidia.com/gpu.memory: 8}}}\n",
        &[
            "{name: train, queue: c1, duration: 100s, tasks: [{name: w, replicas: 1, resources: {cpu: 8, nvidia.com/gpu: 8}}]}".into(),
            "{name: etl, queue: c1, submitAt: 10s, duration: 1000s, tasks: [{name: w, replicas: 1, resources: {cpu: 30}}]}".into(),
            "{name: small, queue: c1, submitAt: 200s, duration: 100s, tasks: [{name: w, replicas: 1, resources: {cpu: 8}}]}".into(),
        ],
    )
    .replace("  sessions: 1\n", "");
    let o = run_text(&text);
    assert_eq!(o.job("train")["start_s"], "0");
    assert_eq!(o.job("etl")["start_s"], "10", "all 8 GPUs are busy: nothing to keep");
    // At 200 s the GPUs are idle: small (8 cpus) would leave 40 − 30 − 8 = 2 < 32
    // cpus; it starts when etl ends at 1010 s: 40 − 8 = 32 ≥ 32.
    assert_eq!(o.job("small")["start_s"], "1010");
}

/// Writes `scenario.yaml` and `pods.yaml` (the manifests source) into a temp dir.
pub(crate) fn with_manifests(nodes: &[&str], conf: &str, manifests: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let text =
        scenario(nodes, conf, &[]).replace("  workload:\n    - jobs:\n", "  workload:\n    - manifests: pods.yaml\n");
    std::fs::write(dir.path().join("scenario.yaml"), text).expect("write");
    std::fs::write(dir.path().join("pods.yaml"), manifests).expect("write");
    dir
}

fn annotated_pod(annotations: &str) -> String {
    named_pod("p", annotations)
}

fn named_pod(name: &str, annotations: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: c1\n  annotations: {{lahar.io/duration: 1h, scheduling.volcano.sh/queue-name: c1{annotations}}}\nspec:\n  schedulerName: volcano\n  containers: [{{name: c, resources: {{requests: {{cpu: \"2\", memory: 1Gi}}}}}}]\n"
    )
}

/// (pod, node) → the plugin's score, from a run of `manifests` explaining `pods`,
/// and pod → node of every bind.
type ScoresAndBinds = (BTreeMap<(String, String), f64>, BTreeMap<String, String>);

fn manifest_run(nodes: &[&str], conf: &str, manifests: &str, pods: &[&str], plugin: &str) -> ScoresAndBinds {
    let dir = with_manifests(nodes, conf, manifests);
    let s = lahar::scenario::load_file(&dir.path().join("scenario.yaml")).unwrap_or_else(|e| panic!("{e}"));
    let out = tempfile::tempdir().expect("tempdir");
    let opts = lahar::RunOptions {
        out_dir: Some(out.path().to_path_buf()),
        explain: pods.iter().map(|p| p.to_string()).collect(),
        ..Default::default()
    };
    lahar::run(s, &opts).expect("run");
    let read = |f: &str| read_rows(&out.path().join(f));
    let explained = if pods.is_empty() { Vec::new() } else { read("explain.csv") };
    let scores = explained
        .iter()
        .filter(|r| r["plugin"] == plugin)
        .map(|r| ((r["pod"].clone(), r["node"].clone()), r["score"].parse::<f64>().expect("score")))
        .collect();
    let binds = read("decisions.csv")
        .iter()
        .filter(|d| d["kind"] == "bind")
        .map(|d| (d["pod"].clone(), d["node"].clone()))
        .collect();
    (scores, binds)
}

/// A pod's `volcano.sh/resource-strategy-scoring-type` and `-weight` annotations
/// replace the conf's strategies for that pod (TestScore's pod-level cases): cpu 2
/// and 1Gi on n1 (4 cpus) and n2 (8 cpus), 8Gi each. The conf's default (cpu and
/// memory LeastAllocated, weight 1): n1 (0.5 + 0.875)/2 · 1000 = 687.5, n2 812.5.
/// The pod's own MostAllocated on cpu alone: n1 500, n2 250.
#[test]
fn rsf_pod_level_annotations() {
    let nodes = ["{name: n1, cpu: 4, memory: 8Gi}", "{name: n2, cpu: 8, memory: 8Gi}"];
    let conf = rsf_conf("{}");
    let own = ", volcano.sh/resource-strategy-scoring-type: MostAllocated, volcano.sh/resource-strategy-weight: '{\"cpu\": 1}'";
    let one = |ann: &str| {
        let (s, _) = manifest_run(&nodes, &conf, &annotated_pod(ann), &["c1/p"], "resource-strategy-fit");
        s.into_iter().map(|((_, n), v)| (n, v)).collect::<BTreeMap<String, f64>>()
    };
    assert_scores("conf", &one(""), &[("n1", 687.5), ("n2", 812.5)]);
    assert_scores("annotations", &one(own), &[("n1", 500.0), ("n2", 250.0)]);
    // n3 (16 cpus) joins: `a-plain` takes it (875 over 812.5 and 687.5) and its
    // scores on n1 and n2 stay valid for its request; `b-own` must score them with
    // its own strategy (n1 500, n2 250, n3 now 250) and go to n1 — with
    // `a-plain`'s scores it would take n2 (812.5).
    let three =
        ["{name: n1, cpu: 4, memory: 8Gi}", "{name: n2, cpu: 8, memory: 8Gi}", "{name: n3, cpu: 16, memory: 8Gi}"];
    let both = format!("{}---\n{}", named_pod("a-plain", ""), named_pod("b-own", own));
    let (_, binds) = manifest_run(&three, &conf, &both, &[], "resource-strategy-fit");
    assert_eq!(binds["c1/a-plain"], "n3", "{binds:?}");
    assert_eq!(binds["c1/b-own"], "n1", "{binds:?}");
}

/// Bad pod-level annotations and bad nested conf arguments are refused up front,
/// exit 2, each with its place.
#[test]
fn rsf_bad_input_through_the_binary() {
    let nodes = ["{name: n1, cpu: 4, memory: 8Gi}"];
    let cases = [
        (
            rsf_conf("{}"),
            annotated_pod(
                ", volcano.sh/resource-strategy-scoring-type: Spread, volcano.sh/resource-strategy-weight: '{\"cpu\": 1}'",
            ),
            "metadata.annotations.volcano.sh/resource-strategy-scoring-type: expected MostAllocated or LeastAllocated, got `Spread`",
        ),
        (
            rsf_conf("{}"),
            annotated_pod(
                ", volcano.sh/resource-strategy-scoring-type: MostAllocated, volcano.sh/resource-strategy-weight: 'cpu=1'",
            ),
            "metadata.annotations.volcano.sh/resource-strategy-weight: expected a JSON object",
        ),
        (
            rsf_conf("{}"),
            annotated_pod(", volcano.sh/resource-strategy-scoring-type: MostAllocated"),
            "needs the volcano.sh/resource-strategy-weight annotation",
        ),
        (
            rsf_conf("{resources: {\"*\": {type: MostAllocated}}}"),
            annotated_pod(""),
            "tiers[0].plugins[0].arguments.resources.*: only a resource name or a prefix with one trailing `*`",
        ),
    ];
    for (conf, pod, want) in cases {
        let dir = with_manifests(&nodes, &conf, &pod);
        let out = super::lahar().arg("validate").arg(dir.path().join("scenario.yaml")).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(want), "missing {want:?} in:\n{err}");
    }
}

// ---------------------------------------------------------------------------
// nodegroup (plugins/nodegroup)

/// For one pod: node → the nodegroup score, and node → the reason the first
/// failing predicate gave ("" when the node passed).
struct Seen {
    scores: BTreeMap<String, f64>,
    refused: BTreeMap<String, String>,
}

fn seen(rows: &[Row], pod: &str) -> Seen {
    let mine = rows.iter().filter(|r| r["session"] == "1" && r["pod"].ends_with(pod) && !r["node"].is_empty());
    let (mut scores, mut refused) = (BTreeMap::new(), BTreeMap::new());
    for r in mine {
        match (r["plugin"].as_str(), r["passed"].as_str()) {
            ("nodegroup", "") => {
                scores.insert(r["node"].clone(), r["score"].parse::<f64>().expect("score"));
            }
            (_, "false") if r["plugin"] != "prioritize" => {
                refused.insert(r["node"].clone(), r["reason"].clone());
            }
            ("predicates", "true") => {
                refused.insert(r["node"].clone(), String::new());
            }
            _ => {}
        }
    }
    Seen { scores, refused }
}

/// `nodegroup_test.go`'s nodes: n1 (2 cpus, 4Gi, group1), n2–n4 (4 cpus, 16Gi,
/// group2–group4), n5 (4 cpus, 16Gi, no label).
const NG_NODES: [&str; 5] = [
    "{name: n1, cpu: 2, memory: 4Gi, pods: 110, labels: {volcano.sh/nodegroup-name: group1}}",
    "{name: n2, cpu: 4, memory: 16Gi, pods: 110, labels: {volcano.sh/nodegroup-name: group2}}",
    "{name: n3, cpu: 4, memory: 16Gi, pods: 110, labels: {volcano.sh/nodegroup-name: group3}}",
    "{name: n4, cpu: 4, memory: 16Gi, pods: 110, labels: {volcano.sh/nodegroup-name: group4}}",
    "{name: n5, cpu: 4, memory: 16Gi, pods: 110}",
];

/// The queues' `affinity` in TestNodeGroup: `root`, `q1` (as root), `q2`, `q3`.
fn ng_affinity(q: &str) -> &'static str {
    match q {
        "root" | "q1" => {
            "{nodeGroupAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [group1, group3], preferredDuringSchedulingIgnoredDuringExecution: [group3]}, nodeGroupAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [group2, group4], preferredDuringSchedulingIgnoredDuringExecution: [group4]}}"
        }
        "q2" => {
            "{nodeGroupAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [group1], preferredDuringSchedulingIgnoredDuringExecution: [group3]}, nodeGroupAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [group2], preferredDuringSchedulingIgnoredDuringExecution: [group4]}}"
        }
        "q3" => "{nodeGroupAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [group1, group3]}}",
        _ => unreachable!(),
    }
}

/// Runs one TestNodeGroup case: `queues` as (name, parent, affinity), the pod's
/// queue, the plugin's arguments and `enableHierarchy`.
fn ng_case(queues: &[(&str, Option<&str>, bool)], queue: &str, args: &str, hierarchy: bool) -> Seen {
    let mut text = scenario(
        &NG_NODES,
        &format!(
            "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: nodegroup\n    enableHierarchy: {hierarchy}\n    arguments: {args}\n"
        ),
        &[format!(
            "{{name: pg, queue: {queue}, duration: 1h, tasks: [{{name: w, replicas: 1, resources: {{cpu: 2, memory: 4Gi}}}}]}}"
        )],
    );
    let mut qs = String::new();
    for (name, parent, affinity) in queues {
        qs += &format!("    - {{name: {name}");
        if let Some(p) = parent {
            qs += &format!(", parent: {p}");
        }
        if *affinity {
            qs += &format!(", affinity: {}", ng_affinity(name));
        }
        qs += "}\n";
    }
    text = text.replace("  queues:\n    - {name: c1}\n", &format!("  queues:\n{qs}"));
    seen(&explain_rows(&text, "pg-w-0"), "pg-w-0")
}

fn ng_expect(case: &str, s: &Seen, scores: [f64; 5], passes: [bool; 5]) {
    let nodes = ["n1", "n2", "n3", "n4", "n5"];
    for (i, n) in nodes.iter().enumerate() {
        let reason = s.refused.get(*n).unwrap_or_else(|| panic!("{case}: no predicate row for {n}: {:?}", s.refused));
        assert_eq!(reason.is_empty(), passes[i], "{case}: {n} refused with {reason:?}");
        // lahar scores only the nodes that pass (Volcano's test scores all of them).
        if passes[i] {
            assert_eq!(s.scores.get(*n), Some(&scores[i]), "{case}: {n} score");
        }
    }
}

/// TestNodeGroup "case 0 case: soft constraints is subset of hard constraints".
#[test]
fn replay_nodegroup_case0_soft_subset_of_hard() {
    let s = ng_case(&[("q1", None, true)], "q1", "{}", false);
    ng_expect("case 0", &s, [100.0, 0.0, 150.0, -1.0, 0.0], [true, false, true, true, false]);
    assert_eq!(s.refused["n2"], "node does not satisfy the node group affinity");
    assert_eq!(s.refused["n5"], "node group label not found");
}

/// TestNodeGroup "case 1 case: soft constraints is not subset of hard constraints".
#[test]
fn replay_nodegroup_case1_soft_not_subset_of_hard() {
    let s = ng_case(&[("q2", None, true)], "q2", "{}", false);
    ng_expect("case 1", &s, [100.0, 0.0, 50.0, -1.0, 0.0], [true, false, true, true, false]);
}

/// TestNodeGroup "case 2 case: affinity is not set for the queue, pods still cannot
/// be scheduled to nodes with the nodegroup label when strict=false".
#[test]
fn replay_nodegroup_case2_no_affinity_not_strict() {
    let s = ng_case(&[("root-no-affinity", None, false)], "root-no-affinity", "{strict: false}", false);
    ng_expect("case 2", &s, [0.0; 5], [false, false, false, false, true]);
    assert_eq!(s.refused["n1"], "node group affinity not specified");
}

/// TestNodeGroup "case 3 case: affinity inherits from parent queue".
#[test]
fn replay_nodegroup_case3_inherits_from_parent() {
    let queues = [("root", None, true), ("q1", Some("root"), true), ("q1-child", Some("q1"), false)];
    let s = ng_case(&queues, "q1-child", "{}", true);
    ng_expect("case 3", &s, [100.0, 0.0, 150.0, -1.0, 0.0], [true, false, true, true, false]);
}

/// TestNodeGroup "case 4 case: affinity inherits from ancestor queue if parent
/// queue has no affinity".
#[test]
fn replay_nodegroup_case4_inherits_from_ancestor() {
    let queues = [
        ("root", None, true),
        ("q-no-affinity", Some("root"), false),
        ("q-no-affinity-child", Some("q-no-affinity"), false),
    ];
    let s = ng_case(&queues, "q-no-affinity-child", "{}", true);
    ng_expect("case 4", &s, [100.0, 0.0, 150.0, -1.0, 0.0], [true, false, true, true, false]);
    // Without enableHierarchy the same queues give the child no affinity.
    let s = ng_case(&queues, "q-no-affinity-child", "{}", false);
    ng_expect("case 4, no hierarchy", &s, [0.0; 5], [false; 5]);
}

/// TestNodeGroup "case 5 case: queue without affinity" (the test's job names a
/// queue the session lacks, which lahar refuses at load; a queue without affinity
/// and no hierarchy is the same to the plugin).
#[test]
fn replay_nodegroup_case5_queue_without_affinity() {
    let s = ng_case(&[("q-no-affinity", None, false)], "q-no-affinity", "{}", false);
    ng_expect("case 5", &s, [0.0; 5], [false; 5]);
    assert_eq!(s.refused["n5"], "node group label not found");
}

/// TestNodeGroup "case 6 case: preferred nodegroup priority ordering".
#[test]
fn replay_nodegroup_case6_preferred_order() {
    let s = ng_case(&[("q3", None, true)], "q3", "{enablePreferredOrder: true}", false);
    ng_expect("case 6", &s, [50.0, 0.0, 25.0, 0.0, 0.0], [true, false, true, false, false]);
}

/// Queue manifests for the limit tests: `q` requires group1 and group2, prefers
/// group1, with the limits annotation `limits` (JSON) when given.
fn limited_queue(q: &str, limits: Option<&str>) -> String {
    let ann = limits
        .map(|l| format!("  annotations:\n    volcano.sh/nodegroup-resource-limits: '{l}'\n"))
        .unwrap_or_default();
    format!(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata:\n  name: {q}\n{ann}spec:\n  weight: 1\n  affinity:\n    nodeGroupAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution: [group1, group2]\n      preferredDuringSchedulingIgnoredDuringExecution: [group1]\n"
    )
}

/// One limit case: queue manifests, jobs (compact), the explained pod.
fn limit_case(nodes: &[&str], queues: &str, jobs: &[String], pod: &str) -> Seen {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("queues.yaml"), queues).expect("write");
    let conf = "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: nodegroup\n";
    let text = scenario(nodes, conf, jobs).replace("  queues:\n    - {name: c1}\n", "  queues: queues.yaml\n");
    std::fs::write(dir.path().join("s.yaml"), &text).expect("write");
    let s = lahar::scenario::load_file(&dir.path().join("s.yaml")).unwrap_or_else(|e| panic!("{e}"));
    let out = tempfile::tempdir().expect("tempdir");
    let opts =
        lahar::RunOptions { out_dir: Some(out.path().to_path_buf()), explain: vec![pod.into()], ..Default::default() };
    lahar::run(s, &opts).expect("run");
    seen(&read_rows(&out.path().join("explain.csv")), pod)
}

const LIMIT_NODES: [&str; 2] = [
    "{name: n1, cpu: 16, memory: 64Gi, pods: 32, labels: {volcano.sh/nodegroup-name: group1}}",
    "{name: n2, cpu: 16, memory: 64Gi, pods: 32, labels: {volcano.sh/nodegroup-name: group2}}",
];

fn limit_job(name: &str, queue: &str, extra: &str) -> String {
    format!(
        "{{name: {name}, queue: {queue}, duration: 1h{extra}, tasks: [{{name: w, replicas: 1, resources: {{cpu: 2, memory: 4Gi}}}}]}}"
    )
}

/// `TestNodeGroupResourceLimits`, every case: the pending pod (2 cpus, 4Gi) on n1
/// (group1) and n2 (group2).
#[test]
fn replay_nodegroup_resource_limits() {
    let cases: [(&str, Option<&str>, bool, [bool; 2]); 5] = [
        ("no annotation keeps existing behavior", None, false, [true, true]),
        (
            "under nodegroup limit permits preferred nodegroup",
            Some(r#"{"group1":{"cpu":"3","memory":"8Gi"}}"#),
            false,
            [true, true],
        ),
        ("omitted resource dimension is unlimited", Some(r#"{"group1":{"cpu":"3"}}"#), false, [true, true]),
        ("specified resource dimension is enforced", Some(r#"{"group1":{"cpu":"1"}}"#), false, [false, true]),
        (
            "over nodegroup limit rejects preferred nodegroup and permits fallback",
            Some(r#"{"group1":{"cpu":"3","memory":"8Gi"}}"#),
            true,
            [false, true],
        ),
    ];
    for (name, limits, used, passes) in cases {
        let mut jobs = vec![limit_job("pending", "q", "")];
        if used {
            jobs.insert(0, limit_job("used", "q", ", running: {w: [n1]}"));
        }
        let s = limit_case(&LIMIT_NODES, &limited_queue("q", limits), &jobs, "pending-w-0");
        for (n, pass) in ["n1", "n2"].iter().zip(passes) {
            assert_eq!(s.refused[*n].is_empty(), pass, "{name}: {n} {:?}", s.refused[*n]);
            if !pass {
                assert_eq!(s.refused[*n], "node group resource limit exceeded", "{name}");
            }
        }
    }
}

/// `TestNodeGroupResourceLimits` "invalid annotation rejects queue tasks": Volcano
/// refuses every pod of the queue; lahar refuses the queue file, at the annotation.
#[test]
fn replay_nodegroup_invalid_limits_annotation() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("queues.yaml"), limited_queue("q", Some(r#"{"group1":{"cpu":"#))).expect("write");
    let text = scenario(
        &LIMIT_NODES,
        "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: nodegroup\n",
        &[limit_job("p", "q", "")],
    )
    .replace("  queues:\n    - {name: c1}\n", "  queues: queues.yaml\n");
    std::fs::write(dir.path().join("s.yaml"), &text).expect("write");
    let out = super::lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("queues.yaml:6:43:")
            && err.contains("metadata.annotations.volcano.sh/nodegroup-resource-limits: expected JSON"),
        "{err}"
    );
}

/// `TestNodeGroupResourceLimitAllocationEvent` "allocation event updates nodegroup
/// usage": two pending pods of the limited queue (3 cpus in group1) on n1 alone;
/// the first is placed, and the second is then refused (2 + 2 > 3).
#[test]
fn replay_nodegroup_allocation_event_updates_usage() {
    let nodes = [LIMIT_NODES[0]];
    let q = limited_queue("q-event-limit", Some(r#"{"group1":{"cpu":"3","memory":"8Gi"}}"#))
        .replace("[group1, group2]", "[group1]")
        .replace("      preferredDuringSchedulingIgnoredDuringExecution: [group1]\n", "");
    let jobs = [limit_job("pending-1", "q-event-limit", ""), limit_job("pending-2", "q-event-limit", "")];
    let first = limit_case(&nodes, &q, &jobs, "pending-1-w-0");
    assert_eq!(first.refused["n1"], "", "the first pod fits the limit");
    let second = limit_case(&nodes, &q, &jobs, "pending-2-w-0");
    assert_eq!(second.refused["n1"], "node group resource limit exceeded");
}

// ---------------------------------------------------------------------------
// usage (plugins/usage): the load is what the nodes' pods request (lahar's metric
// source), so the tests' injected loads are made by running pods.

/// A running one-pod job on `node` holding `res`.
fn holder(name: &str, node: &str, res: &str) -> String {
    format!(
        "{{name: {name}, queue: c1, duration: 1h, running: {{w: [{node}]}}, tasks: [{{name: w, replicas: 1, resources: {{{res}}}}}]}}"
    )
}

fn usage_conf(args: &str) -> String {
    format!("actions: \"allocate\"\ntiers:\n- plugins:\n  - name: usage\n    arguments: {args}\n")
}

/// `TestUsage_predicateFn`, the cases with fresh metrics, on nodes of 4 cpus and
/// 8Gi: n1 81% cpu (3240m) and 60% memory, n2 60% cpu and 81% memory, n3 80% cpu
/// (exactly: not above the threshold) and 79% memory (one byte under, as 79% of
/// 8Gi is not whole). The probe pod asks for 100m and 10Mi (the test's pods ask
/// for 1 cpu, which would not fit n1's idle room; the predicate ignores the pod).
/// The stale-metrics cases (n4, n5) have no counterpart: lahar's load is always
/// current.
#[test]
fn replay_usage_predicate() {
    let args = "{usage.weight: 5, cpu.weight: 1, memory.weight: 1, thresholds: {cpu: 80, mem: 80}}";
    let cases = [
        ("n1", "cpu: 3240m, memory: 5153960755", "the CPU load of the node exceeds the upper limit."),
        ("n2", "cpu: 2400m, memory: 6958427800", "the memory load of the node exceeds the upper limit."),
        ("n3", "cpu: 3200m, memory: 6786367815", ""),
    ];
    for (node, load, want) in cases {
        let text = scenario(
            &[&format!("{{name: {node}, cpu: 4, memory: 8Gi, pods: 10}}")],
            &usage_conf(args),
            &[holder("load", node, load), pod_job("p1", "cpu: 100m, memory: 10Mi")],
        );
        let s = seen(&explain_rows(&text, "p1-w-0"), "p1-w-0");
        assert_eq!(s.refused[node], want, "{node}");
    }
}

/// `TestUsage_nodeOrderFn`, its two cases on the nodes with fresh metrics: n1 30%
/// cpu, 50% memory; n2 60%, 50%; n3 60%, 80% (80% of 8Gi rounded down to a byte: a byte more would exceed the
/// threshold, which the test does not check here).
#[test]
fn replay_usage_node_order() {
    let nodes = [
        "{name: n1, cpu: 4, memory: 8Gi, pods: 10}",
        "{name: n2, cpu: 4, memory: 8Gi, pods: 10}",
        "{name: n3, cpu: 4, memory: 8Gi, pods: 10}",
    ];
    let jobs = [
        holder("l1", "n1", "cpu: 1200m, memory: 4Gi"),
        holder("l2", "n2", "cpu: 2400m, memory: 4Gi"),
        holder("l3", "n3", "cpu: 2400m, memory: 6871947673"),
        pod_job("p1", "cpu: 100m, memory: 10Mi"),
    ];
    let cases = [
        (
            "Node scoring in the default weight configuration scenario.",
            "{usage.weight: 5, cpu.weight: 1, memory.weight: 1, thresholds: {cpu: 80, mem: 80}}",
            [300.0, 225.0, 150.0],
        ),
        (
            "Node scoring gives priority to memory resources",
            "{usage.weight: 5, cpu.weight: 2, memory.weight: 8, thresholds: {cpu: 80, mem: 80}}",
            [270.0, 240.0, 120.0],
        ),
    ];
    for (name, args, want) in cases {
        let text = scenario(&nodes, &usage_conf(args), &jobs);
        let got = scores(&text, "p1-w-0", "usage");
        assert_scores(name, &got, &[("n1", want[0]), ("n2", want[1]), ("n3", want[2])]);
    }
}

/// Pods placed in a session enter the shadow estimate. On two nodes of 10 cpus and
/// 10Gi, n2 holds 0.5 cpu and 0.5Gi (5%): job c's first pod (1 cpu, 1Gi) scores n1
/// 500 against n2 475 and goes to n1; n1's shadow is then 0.7 · its request (risk
/// factor 1 below 60% load), 7% of each, so the second pod scores n1
/// 0.93 · 500 = 465 against 475 and goes to n2 (without the shadow it would score
/// 500 and join the first).
#[test]
fn usage_shadow_estimate_spreads_a_session_placements() {
    let nodes = ["{name: n1, cpu: 10, memory: 10Gi}", "{name: n2, cpu: 10, memory: 10Gi}"];
    let jobs = [
        holder("base", "n2", "cpu: 500m, memory: 512Mi"),
        "{name: c, queue: c1, duration: 100s, tasks: [{name: w, replicas: 2, resources: {cpu: 1, memory: 1Gi}}]}"
            .to_string(),
    ];
    let conf = "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: gang\n- plugins:\n  - name: usage\n";
    let o = run_text(&scenario(&nodes, conf, &jobs));
    let binds: BTreeMap<String, String> = o.binds();
    assert_eq!(binds["default/c-w-0"], "n1", "{binds:?}");
    assert_eq!(binds["default/c-w-1"], "n2", "{binds:?}");
}

/// The predicate over sessions: n1 holds `hog` (6 of 10 cpus, 60% > the 50%
/// threshold) until 300 s, n2 holds `memhog` (7 of 10Gi). `x` (1 cpu, 1Gi, at
/// 10 s) would score n1 higher (cpu 0.6, mem 0 → 350 against n2's 325) but n1 is
/// refused: it starts on n2. `y` (at 400 s, after hog ended) scores n1 500 against
/// n2 (cpu 10%, memory 80%, at the threshold and so admitted) 275: it starts on n1.
#[test]
fn usage_predicate_over_sessions() {
    let nodes = ["{name: n1, cpu: 10, memory: 10Gi}", "{name: n2, cpu: 10, memory: 10Gi}"];
    let jobs = [
        "{name: hog, queue: c1, duration: 300s, running: {w: [n1]}, tasks: [{name: w, replicas: 1, resources: {cpu: 6}}]}".to_string(),
        "{name: memhog, queue: c1, duration: 1h, running: {w: [n2]}, tasks: [{name: w, replicas: 1, resources: {memory: 7Gi}}]}".to_string(),
        "{name: x, queue: c1, submitAt: 10s, duration: 1000s, tasks: [{name: w, replicas: 1, resources: {cpu: 1, memory: 1Gi}}]}".to_string(),
        "{name: y, queue: c1, submitAt: 400s, duration: 100s, tasks: [{name: w, replicas: 1, resources: {cpu: 1, memory: 1Gi}}]}".to_string(),
    ];
    let conf = "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n- plugins:\n  - name: usage\n    arguments: {thresholds: {cpu: 50, mem: 80}}\n";
    let text = scenario(&nodes, conf, &jobs).replace("  sessions: 1\n", "");
    let o = run_text(&text);
    let at = |j: &str| (o.pods_of(j)[0]["node"].clone(), o.job(j)["start_s"].clone());
    assert_eq!(at("x"), ("n2".to_string(), "10".to_string()));
    assert_eq!(at("y"), ("n1".to_string(), "400".to_string()));
}

// ---------------------------------------------------------------------------
// Published confs (examples/volcano/published/, each file naming its source)

pub(crate) fn published(name: &str) -> lahar_policies::volcano::conf::SchedulerConf {
    let p: std::path::PathBuf = [env!("CARGO_MANIFEST_DIR"), "examples", "volcano", "published", name].iter().collect();
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    lahar_policies::volcano::conf::parse_file(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

pub(crate) fn plugin<'a>(
    c: &'a lahar_policies::volcano::conf::SchedulerConf,
    name: &str,
) -> &'a lahar_policies::volcano::plugin::PluginConf {
    c.tiers.iter().flatten().find(|p| p.name == name).unwrap_or_else(|| panic!("no {name}"))
}

/// Every published conf of the new plugins loads, and each reads as written.
#[test]
fn published_confs_load_as_written() {
    use lahar_policies::volcano::plugins::resource_strategy_fit::{RsfConf, Strategy};
    let most = |w| Strategy { most: true, weight: w };
    let least = |w| Strategy { most: false, weight: w };
    let rsf = |f: &str| RsfConf::from_args(&plugin(&published(f), "resource-strategy-fit").args);
    let c = rsf("rsf-user-guide.yaml");
    assert_eq!(c.weight, 10);
    assert_eq!(
        c.resources,
        [("cpu".into(), least(1)), ("memory".into(), least(1)), ("nvidia.com/gpu".into(), most(2))]
    );
    assert_eq!(published("rsf-user-guide.yaml").tiers.len(), 2);
    let c = rsf("rsf-design.conf");
    assert_eq!((c.weight, c.resources), (10, vec![("cpu".into(), least(1)), ("nvidia.com/gpu".into(), most(2))]));
    let c = rsf("rsf-sra-design.conf");
    assert_eq!(c.sra, Some((2, vec![("nvidia.com/t4".into(), 1), ("nvidia.com/a10".into(), 1)])));
    let c = rsf("rsf-proportional-design.conf");
    assert_eq!(
        c.proportional,
        Some(vec![("nvidia.com/gpu".into(), 8.0, 8.0), ("nvidia.com/v100-sxm2-16gb".into(), 16.0, 16.0)])
    );
    let ng = |f: &str| plugin(&published(f), "nodegroup").clone();
    assert!(!ng("nodegroup-strict.conf").args.bool("strict", true));
    assert!(ng("nodegroup-preferred-order.conf").args.bool("enablePreferredOrder", false));
    assert!(ng("nodegroup-hierarchy.conf").flag("enableHierarchy"));
    for f in ["usage-design.conf", "usage-plugin-header.conf"] {
        let c = published(f);
        let u = plugin(&c, "usage");
        assert!(!u.flag("enablePredicate"), "{f}");
        assert_eq!(
            (u.args.int("usage.weight", 0), u.args.int("cpu.weight", 0), u.args.int("memory.weight", 0)),
            (5, 1, 1)
        );
    }
    let c = published("capacity-guide-ancestor-conf.yaml");
    let cap = plugin(&c, "capacity");
    assert!(cap.flag("enableHierarchy"));
    assert_eq!(cap.args.int("ancestorReclaimLevel", 0), 1);
    assert!(!plugin(&published("capacity-guide-conf.yaml"), "gang").flag("enablePreemptable"));
    assert!(
        plugin(&published("deviceshare-gpu-number.yaml"), "deviceshare")
            .args
            .bool("deviceshare.GPUNumberEnable", false)
    );
    let vc = published("deviceshare-vnpu-hami.yaml");
    let v = plugin(&vc, "deviceshare");
    assert_eq!(
        (
            v.args.bool("deviceshare.AscendHAMiVNPUEnable", false),
            v.args.str("deviceshare.SchedulePolicy"),
            v.args.str("deviceshare.KnownGeometriesCMNamespace"),
            v.args.str("deviceshare.KnownGeometriesCMName"),
        ),
        (true, Some("binpack"), Some("kube-system"), Some("hami-scheduler-device"))
    );
    use lahar_policies::volcano::conf::ActionKind::{Allocate, Backfill, GangPreempt, GangReclaim};
    assert_eq!(published("gangevict-e2e.conf").actions, [Allocate, Backfill, GangReclaim, GangPreempt]);
    use lahar_policies::volcano::conf::ActionKind::{Preempt, Reclaim, Shuffle};
    let c = published("pdb-design.conf");
    assert_eq!(
        (c.actions.as_slice(), plugin(&c, "pdb").name.as_str()),
        ([Reclaim, Preempt, Shuffle].as_slice(), "pdb")
    );
    let c = published("rescheduling-design.conf");
    let r = lahar_policies::volcano::plugins::rescheduling::Rescheduling::new(&plugin(&c, "rescheduling").args);
    assert_eq!(r.settings(), (300_000_000, [20.0, 20.0], [50.0, 50.0]));
    let c = published("tdm-plugin-header.conf");
    let t = plugin(&c, "tdm");
    assert_eq!(
        (t.args.str("tdm.revocable-zone.rz1"), t.args.str("tdm.revocable-zone.rz2")),
        (Some("10:00-21:00"), Some("12:00-14:00"))
    );
    let c = published("extender-user-guide.yaml");
    let x = plugin(&c, "extender");
    assert_eq!(
        (
            x.args.str("extender.urlPrefix"),
            x.args.str("extender.httpTimeout"),
            x.args.bool("extender.ignorable", false)
        ),
        (Some("http://127.0.0.1:8713"), Some("100ms"), true)
    );
    let e = lahar_policies::volcano::plugins::extender::Extender::new(&x.args);
    assert_eq!(e.endpoint().1, std::time::Duration::from_millis(100));
    let u = plugin(&published("usage-design.conf"), "usage").clone();
    let t = lahar_policies::volcano::plugins::usage::Usage::new(&u.args);
    assert_eq!(t.thresholds(), (80.0, 70.0));
}

/// docs/design/proportional.md's worked example: on nodeC0-0 (74 cpus, 128G, 8
/// GPUs) with GPU:CPU:memory 1:8:8, `single-1000-0` (8 cpus, 8G) is placed and
/// `single-1000-1` is not: 66 − 8 = 58 cpus would stay beside 8 idle GPUs, which
/// need 64.
#[test]
fn proportional_design_example() {
    let p: std::path::PathBuf =
        [env!("CARGO_MANIFEST_DIR"), "examples", "volcano", "published", "rsf-proportional-design.conf"]
            .iter()
            .collect();
    let text = scenario(
        &["{name: nodeC0-0, cpu: 74, memory: 128G, gpus: 8}"],
        "",
        &[
            "{name: single-1000-0, queue: c1, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 8, memory: 8G}}]}".into(),
            "{name: single-1000-1, queue: c1, submitAt: 1s, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 8, memory: 8G}}]}".into(),
        ],
    )
    .replace("  scheduler:\n    inline: |\n", &format!("  scheduler:\n    conf: {}\n", p.display()))
    .replace("  sessions: 1\n", "  sessions: 3\n");
    let o = run_text(&text);
    assert_eq!(o.job("single-1000-0")["start_s"], "0");
    assert_eq!(o.job("single-1000-1")["start_s"], "", "{:?}", o.job("single-1000-1"));
}

/// examples/volcano/nodegroup-limits.yaml behaves as its comments say: 12 pods
/// start in groupname1 (its 100-cpu limit), 6 in groupname2 (50 cpus), and 2 wait
/// an hour.
#[test]
fn nodegroup_limits_example_runs_as_documented() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/volcano/nodegroup-limits.yaml");
    super::lahar().args(["run", "-q", "--out"]).arg(dir.path()).arg(&p).assert().success();
    let mut starts: BTreeMap<(String, String), u32> = BTreeMap::new();
    for r in read_rows(&dir.path().join("pods.csv")) {
        let group = r["node"].split('-').next().expect("node").to_string();
        *starts.entry((group, r["start_s"].clone())).or_default() += 1;
    }
    let want: BTreeMap<(String, String), u32> =
        [(("fixed", "0"), 12), (("fixed", "3600"), 2), (("serverless", "0"), 6)]
            .iter()
            .map(|((g, t), n)| ((g.to_string(), t.to_string()), *n))
            .collect();
    assert_eq!(starts, want);
}

/// Pods of `job` running at `t` (seconds), from pods.csv rows.
fn running_at(rows: &[Row], job: &str, t: u64) -> usize {
    rows.iter()
        .filter(|r| r["job"] == job)
        .filter(|r| {
            let s: u64 = r["start_s"].parse().expect("start");
            let e: u64 = r["end_s"].parse().unwrap_or(u64::MAX);
            s <= t && t < e
        })
        .count()
}

/// examples/volcano/capacity-guide.yaml, Volcano's capacity user guide with its
/// published objects: at 20 minutes demo-1 runs 7 pods and demo-2 1 (reclaim stops
/// once demo-2's PodGroup of minMember 1 is not starving, as Volcano's source
/// does); with `scheduling.volcano.sh/group-min-member: "6"` on demo-2, the
/// guide's 2 and 6.
#[test]
fn capacity_guide_example_runs_as_documented() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/volcano");
    let run = |dir: &Path| {
        let out = tempfile::tempdir().expect("tempdir");
        super::lahar()
            .args(["run", "-q", "--out"])
            .arg(out.path())
            .arg(dir.join("capacity-guide.yaml"))
            .assert()
            .success();
        read_rows(&out.path().join("pods.csv"))
    };
    let rows = run(&examples);
    assert_eq!((running_at(&rows, "demo-1", 1200), running_at(&rows, "demo-2", 1200)), (7, 1));
    let copy = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(copy.path().join("published")).expect("mkdir");
    std::fs::copy(examples.join("capacity-guide.yaml"), copy.path().join("capacity-guide.yaml")).expect("copy");
    for f in ["capacity-guide-conf.yaml", "capacity-guide-queues.yaml", "capacity-guide-deployments.yaml"] {
        let text = std::fs::read_to_string(examples.join("published").join(f)).expect("read");
        let text = text.replace(
            "    lahar.io/submit-at: 14m\n",
            "    lahar.io/submit-at: 14m\n    scheduling.volcano.sh/group-min-member: \"6\"\n",
        );
        std::fs::write(copy.path().join("published").join(f), text).expect("write");
    }
    let rows = run(copy.path());
    assert_eq!((running_at(&rows, "demo-1", 1200), running_at(&rows, "demo-2", 1200)), (2, 6));
}

// ---------------------------------------------------------------------------
// cdp (plugins/cdp)

/// A one-pod VolcanoJob of 1 cpu with a PriorityClass; `extra` goes under the pod
/// template's metadata, `ann` into the job's annotations.
fn vcjob(name: &str, class: &str, ann: &str, extra: &str) -> String {
    format!(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: {name}\n  annotations: {{{ann}}}\nspec:\n  queue: c1\n  priorityClassName: {class}\n  tasks:\n    - replicas: 1\n      name: w\n      template:\n        metadata: {{{extra}}}\n        spec:\n          containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]\n---\n"
    )
}

const CLASSES: &str = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 1\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 100\n---\n";

/// `Test_CooldownTimePlugin_podPreemptStableTime` and `TestPreemptableFn` over
/// sessions: `lo` (priority 1, cooldown 600s) runs from 0 on the only cpu; `hi`
/// (priority 100) comes at 100 s. With cdp beside priority (and no other plugin
/// choosing victims) `lo` is protected until 600 s: it is preempted then (the
/// plugin asks for a session at the end of the cooldown), released after the
/// 30 s grace period, and `hi` runs from 630 s. Without a cooldown — or with
/// `lo` started 800 s before `hi`, past its cooldown (TestPreemptableFn's task3)
/// — it is preempted at once.
#[test]
fn cdp_cooldown_protects_victims_until_it_ends() {
    let conf = "actions: \"enqueue, allocate, preempt\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n    enablePreemptable: false\n  - name: cdp\n- plugins:\n  - name: predicates\n";
    let run = |cooldown: &str, hi_at: &str| {
        let objects = format!(
            "{CLASSES}{}{}",
            vcjob("lo", "low", "lahar.io/duration: 2000s", cooldown),
            vcjob("hi", "high", &format!("lahar.io/duration: 100s, lahar.io/submit-at: {hi_at}"), "")
        );
        let dir = with_manifests(&["{name: n1, cpu: 1, memory: 8Gi}"], conf, &objects);
        let text =
            std::fs::read_to_string(dir.path().join("scenario.yaml")).expect("read").replace("  sessions: 1\n", "");
        std::fs::write(dir.path().join("scenario.yaml"), text).expect("write");
        let out = tempfile::tempdir().expect("tempdir");
        super::lahar()
            .args(["run", "-q", "--out"])
            .arg(out.path())
            .arg(dir.path().join("scenario.yaml"))
            .assert()
            .success();
        let jobs = read_rows(&out.path().join("jobs.csv"));
        let decisions = read_rows(&out.path().join("decisions.csv"));
        let evict: Vec<String> =
            decisions.iter().filter(|d| d["kind"] == "evict").map(|d| format!("{} {}", d["t_s"], d["pod"])).collect();
        let start = jobs.iter().find(|j| j["job"] == "hi").expect("hi")["start_s"].clone();
        (evict, start)
    };
    assert_eq!(
        run("annotations: {volcano.sh/cooldown-time: 600s}", "100s"),
        (vec!["600 default/lo-w-0".to_string()], "630".to_string())
    );
    // The label is read too (before the annotation).
    assert_eq!(
        run("labels: {volcano.sh/cooldown-time: 10m}", "100s"),
        (vec!["600 default/lo-w-0".to_string()], "630".to_string())
    );
    assert_eq!(run("", "100s"), (vec!["100 default/lo-w-0".to_string()], "130".to_string()));
    assert_eq!(
        run("annotations: {volcano.sh/cooldown-time: 600s}", "800s"),
        (vec!["800 default/lo-w-0".to_string()], "830".to_string())
    );
}

/// `Test_CooldownTimePlugin_podPreemptStableTime` "not-enabled" (`600abcde`):
/// Volcano reads it as no cooldown; lahar refuses it at its place, exit 2.
#[test]
fn cdp_bad_cooldown_is_refused() {
    let objects = format!(
        "{CLASSES}{}",
        vcjob("lo", "low", "lahar.io/duration: 1h", "annotations: {volcano.sh/cooldown-time: 600abcde}")
    );
    let dir = with_manifests(&["{name: n1, cpu: 1, memory: 8Gi}"], &rsf_conf("{}"), &objects);
    let out = super::lahar().arg("validate").arg(dir.path().join("scenario.yaml")).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("spec.tasks[0].template.metadata.annotations.volcano.sh/cooldown-time: expected a Go duration such as 600s or 10m, got `600abcde`"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------
// deviceshare, GPU-number mode

/// deviceshare's GPU-number predicate reads the GPUs of the node's Allocated and
/// Running pods. On n1 (2 `volcano.sh/gpu-number`), `lo` (priority 1, 2 GPUs) runs;
/// `hi` (priority 100, 2 GPUs, at 10 s) preempts it — the predicate lets preempt
/// through, as Volcano's `Unschedulable` code does. `lo` releases for 30 s; a
/// releasing pod holds no device in Volcano's view, so in the session after the
/// eviction deviceshare lets `hi` onto n1 and allocate pipelines it on the
/// future-idle room; `hi` binds at 40 s, after the release.
#[test]
fn deviceshare_gpu_number_counts_whole_gpus_on_their_current_state() {
    evicted_devices_are_free_at_once(
        "volcano.sh/gpu-number: 2",
        "volcano.sh/gpu-number: 2",
        "deviceshare.GPUNumberEnable",
    );
}

/// `lo` (priority 1) runs on n1 with `node` extended resources, asking `req`;
/// `hi` (priority 100, the same request, at 10 s) preempts it under deviceshare
/// with `mode` on. In the session after the eviction (still at 10 s, session 4)
/// deviceshare lets `hi` onto n1 — a releasing pod holds no device in Volcano's
/// view — and allocate pipelines it; `hi` starts at 40 s, when `lo`'s 30 s grace
/// ends. Returns the scenario text.
fn evicted_devices_are_free_at_once(node: &str, req: &str, mode: &str) -> String {
    let nodes = [format!("{{name: n1, cpu: 8, memory: 32Gi, extendedResources: {{{node}}}}}")];
    let nodes: Vec<&str> = nodes.iter().map(String::as_str).collect();
    let job = |name: &str, extra: &str| {
        format!("{{name: {name}, queue: c1, {extra}, tasks: [{{name: w, replicas: 1, resources: {{cpu: 1, {req}}}}}]}}")
    };
    let conf = format!(
        "actions: \"enqueue, allocate, preempt\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n    enablePreemptable: false\n- plugins:\n  - name: predicates\n  - name: deviceshare\n    arguments: {{{mode}: true}}\n"
    );
    let text = scenario(
        &nodes,
        &conf,
        &[job("lo", "duration: 1000s, priority: 1"), job("hi", "submitAt: 10s, duration: 100s, priority: 100")],
    )
    .replace("  sessions: 1\n", "");
    let o = run_text(&text);
    assert_eq!(o.evictions(), ["default/lo-w-0"]);
    assert_eq!(o.job("hi")["start_s"], "40");
    let rows = explain_rows(&text, "hi-w-0");
    let pipelined = |r: &&Row| r["plugin"] == "result" && r["t_s"] == "10" && r["reason"].starts_with("pipelined:");
    assert!(rows.iter().any(|r| pipelined(&r) && r["node"] == "n1" && r["session"] == "4"), "{rows:?}");
    assert!(!rows.iter().any(|r| r["plugin"] == "deviceshare" && r["passed"] == "false"), "{rows:?}");
    text
}

// ---------------------------------------------------------------------------
// deviceshare, GPU sharing by memory

/// An evicted pod's card memory is free at once, as in Volcano (its node info adds
/// no device for a Releasing pod). On n1 (one 8000 MiB card), `lo` (6000 MiB,
/// priority 1) runs; `hi` (6000 MiB, priority 100, at 10 s) preempts it, and in the
/// session after the eviction deviceshare finds the card's 8000 MiB idle and
/// allocate pipelines `hi` onto the releasing room; `hi` binds at 40 s, when `lo`'s
/// 30 s grace ends. The card `hi` then holds is card 0.
#[test]
fn deviceshare_gpu_memory_of_an_evicted_pod_is_free_at_once() {
    let text = evicted_devices_are_free_at_once(
        "volcano.sh/gpu-memory: 8000, volcano.sh/gpu-number: 1",
        "volcano.sh/gpu-memory: 6000",
        "deviceshare.GPUSharingEnable",
    );
    let r = super::run_str(&text.replace("spec:\n", "spec:\n  horizon: 60s\n"));
    let w = &r.output.world;
    let hi = w.pods.iter().find(|p| w.jobs[p.job].spec.name == "hi" && p.node.is_some()).map(|p| p.memory_card);
    assert_eq!(hi, Some(Some(0)));
}

/// On n1 (`volcano.sh/gpu-memory: 16000` over `volcano.sh/gpu-number: 2`: two
/// 8000 MiB cards), `a` and `b` (5000 MiB each, at 0 s) take card 0 and card 1;
/// `c` (5000 MiB, at 10 s) finds 3000 MiB idle on each card — 6000 in all, so
/// the node's resources fit it — and deviceshare refuses the node in Volcano's
/// words until `a` ends at 100 s and card 0 is free again: `c` starts at 100 s,
/// on card 0.
#[test]
fn deviceshare_gpu_memory_fits_one_card() {
    let nodes = [
        "{name: n1, cpu: 8, memory: 32Gi, extendedResources: {volcano.sh/gpu-memory: 16000, volcano.sh/gpu-number: 2}}",
    ];
    let job = |name: &str, extra: &str| {
        format!(
            "{{name: {name}, queue: c1, {extra}, tasks: [{{name: w, replicas: 1, resources: {{cpu: 1, volcano.sh/gpu-memory: 5000}}}}]}}"
        )
    };
    let conf = "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n  - name: predicates\n  - name: deviceshare\n    arguments: {deviceshare.GPUSharingEnable: true}\n";
    let text = scenario(
        &nodes,
        conf,
        &[job("a", "duration: 100s"), job("b", "duration: 1000s"), job("c", "submitAt: 10s, duration: 100s")],
    )
    .replace("  sessions: 1\n", "");
    let o = run_text(&text);
    assert_eq!((o.job("a")["start_s"].as_str(), o.job("c")["start_s"].as_str()), ("0", "100"));
    let rows = explain_rows(&text, "c-w-0");
    assert!(
        rows.iter().any(|r| r["plugin"] == "deviceshare" && r["reason"] == "GpuShare no enough gpu memory on node n1"),
        "{rows:?}"
    );
    // The cards the pods hold at the end: b on 1, c on 0.
    let r = super::run_str(&text.replace("spec:\n", "spec:\n  horizon: 150s\n"));
    let w = &r.output.world;
    let card =
        |job: &str| w.pods.iter().find(|p| w.jobs[p.job].spec.name == job && p.node.is_some()).map(|p| p.memory_card);
    assert_eq!((card("b"), card("c")), (Some(Some(1)), Some(Some(0))));
}

/// Volcano's user guide (how_to_use_gpu_sharing.md): its conf, and its two pods of
/// 1024 MiB on a node of `volcano.sh/gpu-memory: 89424` over 8 cards (11178 MiB
/// each) share card 0.
#[test]
fn deviceshare_gpu_sharing_user_guide() {
    let conf = published("deviceshare-gpu-sharing.yaml");
    assert!(plugin(&conf, "deviceshare").args.bool("deviceshare.GPUSharingEnable", false));
    let pod = |name: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, annotations: {{lahar.io/duration: 1h}}}}\nspec:\n  schedulerName: volcano\n  containers:\n    - name: cuda-container\n      image: nvidia/cuda:9.0-devel\n      command: [\"sleep\"]\n      args: [\"100000\"]\n      resources:\n        limits:\n          volcano.sh/gpu-memory: 1024 # requesting 1024MB GPU memory\n---\n"
        )
    };
    let dir = with_manifests(
        &[
            "{name: volcano-control-plane, cpu: 4, memory: 8174332Ki, extendedResources: {volcano.sh/gpu-memory: 89424, volcano.sh/gpu-number: 8}}",
        ],
        "actions: allocate",
        &format!("{}{}", pod("gpu-pod1"), pod("gpu-pod2")),
    );
    // The scheduler: the guide's ConfigMap, as a file.
    let guide = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/volcano/published/deviceshare-gpu-sharing.yaml");
    std::fs::copy(guide, dir.path().join("cm.yaml")).unwrap();
    let p = dir.path().join("scenario.yaml");
    let text = std::fs::read_to_string(&p).unwrap();
    let a = text.find("  scheduler:").unwrap();
    let b = text.find("  workload:").unwrap();
    let text = format!("{}  horizon: 60s\n  scheduler: {{conf: cm.yaml}}\n{}", &text[..a], &text[b..])
        .replace("  sessions: 1\n", "")
        .replace("  queues:\n    - {name: c1}\n", "");
    std::fs::write(&p, text).unwrap();
    let s = lahar::scenario::load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    let r = lahar::run(s, &lahar::RunOptions { no_write: true, ..Default::default() }).expect("run");
    let w = &r.output.world;
    let cards: Vec<Option<u8>> = w.pods.iter().filter(|p| p.node.is_some()).map(|p| p.memory_card).collect();
    assert_eq!(cards, [Some(0), Some(0)]);
    assert_eq!(w.nodes[0].gpu_memory.per_card, 11178);
}
