//! Inter-pod affinity and anti-affinity (issue 40): Kubernetes' InterPodAffinity
//! filter as Volcano's predicates plugin runs it, and its score as nodeorder
//! weighs it (`podaffinity.weight`, 2). Volcano's e2e tests `Pod Affinity` and
//! `Pod Anti-Affinity` (test/e2e/schedulingaction/predicates.go) under the e2e
//! conf, then hand-checked cases through the binary: an existing pod's
//! anti-affinity refuses its domain, a required affinity waits for a matching
//! pod, preempt evicts the pod an anti-affinity term refuses (a resolvable
//! refusal), and a preferred term outweighs the resource scores.

use super::volcano::Out;
use super::*;

/// Runs `objects` (manifests) on `nodes` (scenario node lines) under the
/// scheduler conf `conf`, with `extra` arguments; returns the outputs and
/// decisions.csv as written.
fn run(nodes: &[&str], objects: &str, conf: &str, extra: &[&str]) -> (Out, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.yaml"), objects).unwrap();
    std::fs::write(dir.path().join("s.conf"), conf).unwrap();
    let nodes: String = nodes.iter().map(|n| format!("      - {n}\n")).collect();
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  cluster:\n    nodes:\n{nodes}  queues: [{{name: default}}]\n  scheduler: {{conf: s.conf}}\n  workload:\n    - manifests: [m.yaml]\n"
    );
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let out = dir.path().join("o");
    let o = lahar()
        .arg("run")
        .arg("-q")
        .arg(dir.path().join("s.yaml"))
        .arg("--out")
        .arg(&out)
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let read = |f: &str| -> Vec<super::volcano::Row> {
        let mut r = csv::Reader::from_path(out.join(f)).unwrap();
        let h = r.headers().unwrap().clone();
        r.records()
            .map(|x| h.iter().zip(x.unwrap().iter()).map(|(a, b)| (a.to_string(), b.to_string())).collect())
            .collect()
    };
    let decisions = std::fs::read_to_string(out.join("decisions.csv")).unwrap();
    (
        Out {
            decisions: read("decisions.csv"),
            pods: read("pods.csv"),
            jobs: read("jobs.csv"),
            timeseries: Vec::new(),
        },
        decisions,
    )
}

/// A VolcanoJob `name` (`replicas` pods, all needed) of `cpu` CPUs each, whose
/// pod template has `labels` (a YAML flow mapping) and `spec` more lines (10
/// spaces of indentation), submitted at `at`, with `more` job spec lines (2
/// spaces).
fn job(name: &str, replicas: u32, cpu: &str, labels: &str, spec: &str, at: &str, more: &str) -> String {
    format!(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: {name}\n  annotations: {{lahar.io/duration: 1h, lahar.io/submit-at: {at}}}\nspec:\n{more}  minAvailable: {replicas}\n  tasks:\n    - name: w\n      replicas: {replicas}\n      template:\n        metadata: {{labels: {labels}}}\n        spec:\n{spec}          containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}]\n---\n"
    )
}

/// A Running bare Pod `name` on `node` with `labels` and `spec` more lines (2
/// spaces).
fn running(name: &str, node: &str, labels: &str, spec: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, labels: {labels}, annotations: {{lahar.io/duration: 10h}}}}\nspec:\n  nodeName: {node}\n{spec}  containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]\nstatus: {{phase: Running}}\n---\n"
    )
}

fn e2e() -> String {
    super::volcano_controller::e2e_conf()
}

/// A required (anti-)affinity term block for a template (10 spaces).
fn required(kind: &str, selector: &str, key: &str) -> String {
    format!(
        "          affinity: {{{kind}: {{requiredDuringSchedulingIgnoredDuringExecution: [{{labelSelector: {selector}, topologyKey: {key}}}]}}}}\n"
    )
}

const THREE: [&str; 3] = [
    "{name: n0, cpu: 4, memory: 8Gi, labels: {zone: a}}",
    "{name: n1, cpu: 4, memory: 8Gi, labels: {zone: a}}",
    "{name: n2, cpu: 4, memory: 8Gi, labels: {zone: b}}",
];

/// `Pod Affinity`: half as many half-CPU pods as the largest node holds, each
/// requiring a pod labelled `foo: bar` on its node and labelled so itself, all
/// needed (`minAvailable`). The first pod matches its own term (no pod does
/// yet, so any node passes); every later one of the same session must join it,
/// as the session's allocations count: all four bind to one node.
#[test]
fn pod_affinity() {
    let aff = required("podAffinity", "{matchLabels: {foo: bar}}", "kubernetes.io/hostname");
    let (out, _) = run(&THREE, &job("pa-job", 4, "500m", "{foo: bar}", &aff, "0s", ""), &e2e(), &[]);
    let binds = out.binds();
    assert_eq!(binds.len(), 4, "{binds:?}");
    let nodes: std::collections::BTreeSet<&String> = binds.values().collect();
    assert_eq!(nodes.len(), 1, "all on one node: {binds:?}");
}

/// `Pod Anti-Affinity`: two one-CPU pods labelled `foo: bar`, each refusing a
/// node with such a pod: they bind to two nodes. Without the term binpack packs
/// them onto one (the control shows the test can fail).
#[test]
fn pod_anti_affinity() {
    let anti = required("podAntiAffinity", "{matchLabels: {foo: bar}}", "kubernetes.io/hostname");
    let (out, _) = run(&THREE, &job("pa-job", 2, "1", "{foo: bar}", &anti, "0s", ""), &e2e(), &[]);
    let binds = out.binds();
    assert_eq!(binds.len(), 2, "{binds:?}");
    assert_ne!(binds["default/pa-job-w-0"], binds["default/pa-job-w-1"], "{binds:?}");
    let (control, _) = run(&THREE, &job("pa-job", 2, "1", "{foo: bar}", "", "0s", ""), &e2e(), &[]);
    let c = control.binds();
    assert_eq!(c["default/pa-job-w-0"], c["default/pa-job-w-1"], "binpack packs them without the term: {c:?}");
}

/// A running pod whose required anti-affinity (by zone) matches the incoming
/// pod refuses every node of its zone (the existing pods' anti-affinity check):
/// `web` binds to n2, the only node of zone b; without the guard's term the
/// scores put it in zone a.
#[test]
fn existing_pods_anti_affinity_refuses_their_domain() {
    let guard_anti = "  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: web}}, topologyKey: zone}]}}\n";
    let web = job("web", 1, "1", "{app: web}", "", "60s", "");
    let (out, _) = run(&THREE, &format!("{}{web}", running("guard", "n0", "{app: guard}", guard_anti)), &e2e(), &[]);
    assert_eq!(out.binds()["default/web-w-0"], "n2", "{:?}", out.binds());
    let (control, _) = run(&THREE, &format!("{}{web}", running("guard", "n0", "{app: guard}", "")), &e2e(), &[]);
    assert_ne!(control.binds()["default/web-w-0"], "n2", "{:?}", control.binds());
}

/// A required affinity no pod matches, by a pod that does not match its own
/// term, passes no node: the pod waits (and preempt evicts nothing for it: the
/// refusal is unresolvable). Once a matching pod runs, it binds beside it.
#[test]
fn required_affinity_waits_for_a_matching_pod() {
    let aff = required("podAffinity", "{matchLabels: {app: db}}", "kubernetes.io/hostname");
    let web = job("web", 1, "1", "{app: web}", &aff, "60s", "");
    let filler = job("filler", 1, "1", "{app: filler}", "", "0s", "");
    let (out, _) = run(&THREE, &format!("{filler}{web}"), &e2e(), &[]);
    assert!(!out.binds().contains_key("default/web-w-0"), "{:?}", out.binds());
    assert!(out.evictions().is_empty(), "{:?}", out.evictions());
    let db = running("db", "n1", "{app: db}", "");
    let (out, _) = run(&THREE, &format!("{db}{filler}{web}"), &e2e(), &[]);
    assert_eq!(out.binds()["default/web-w-0"], "n1", "{:?}", out.binds());
}

const CLASSES: &str = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 10\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n---\n";

/// An anti-affinity refusal is `Unschedulable`: preempt keeps the node and
/// evicts the lower-priority pod the term matches, though the node's free CPU
/// alone would take the pod. One 4-CPU node; `low` (3 CPUs, `app: x`) runs from
/// t = 0; `high` (1 CPU, refusing `app: x` on its node) comes at 60 s: it
/// evicts `low`'s pod and binds once it is gone (the 30 s grace). Without the
/// term it binds at once, evicting nothing.
#[test]
fn anti_affinity_is_resolved_by_preemption() {
    let node = ["{name: n0, cpu: 4, memory: 8Gi}"];
    let low = job("low", 1, "3", "{app: x}", "          priorityClassName: low\n", "0s", "  priorityClassName: low\n");
    let anti = required("podAntiAffinity", "{matchLabels: {app: x}}", "kubernetes.io/hostname");
    let spec = format!("          priorityClassName: high\n{anti}");
    let high = job("high", 1, "1", "{app: y}", &spec, "60s", "  priorityClassName: high\n");
    let (out, _) = run(&node, &format!("{CLASSES}{low}{high}"), &e2e(), &[]);
    assert_eq!(out.evictions(), ["default/low-w-0"], "{:?}", out.decisions);
    let evict = out.of("evict")[0];
    assert_eq!(evict["reason"], "preempted for high-w-0");
    let bind = out.of("bind").into_iter().find(|d| d["pod"] == "default/high-w-0").expect("high binds");
    let t = |d: &super::volcano::Row| d["t_s"].parse::<f64>().unwrap();
    assert_eq!((t(evict), t(bind)), (60.0, 90.0), "evicted at its arrival, bound after the grace");
    let plain =
        job("high", 1, "1", "{app: y}", "          priorityClassName: high\n", "60s", "  priorityClassName: high\n");
    let (control, _) = run(&node, &format!("{CLASSES}{low}{plain}"), &e2e(), &[]);
    assert!(control.evictions().is_empty(), "{:?}", control.evictions());
}

/// A small conf where only nodeorder scores.
const SCORED: &str = "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n  - name: predicates\n  - name: nodeorder\n";

/// A preferred affinity outweighs the resource scores: n0 runs a web pod (1 of
/// 8 CPUs), n1 is empty. Least-requested and balanced prefer n1 (87 + 94
/// against 75 + 87); the term's weight makes n0's raw affinity score 100 and
/// n1's 0, normalized to 100 and 0, times `podaffinity.weight` 2: n0 wins by
/// 200. With the weight 0, n1. An existing pod's preferred term toward the
/// incoming pod counts the same (symmetry).
#[test]
fn preferred_affinity_outweighs_resource_scores() {
    let nodes = ["{name: n0, cpu: 8, memory: 32Gi}", "{name: n1, cpu: 8, memory: 32Gi}"];
    let pref = "          affinity: {podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 100, podAffinityTerm: {labelSelector: {matchLabels: {app: web}}, topologyKey: kubernetes.io/hostname}}]}}\n";
    let web = running("web", "n0", "{app: web}", "");
    let cache = job("cache", 1, "1", "{app: cache}", pref, "60s", "");
    let (out, _) = run(&nodes, &format!("{web}{cache}"), SCORED, &[]);
    assert_eq!(out.binds()["default/cache-w-0"], "n0");
    let off = SCORED.replace("  - name: nodeorder\n", "  - name: nodeorder\n    arguments: {podaffinity.weight: 0}\n");
    let (out, _) = run(&nodes, &format!("{web}{cache}"), &off, &[]);
    assert_eq!(out.binds()["default/cache-w-0"], "n1");
    let plain = job("cache", 1, "1", "{app: cache}", "", "60s", "");
    let (out, _) = run(&nodes, &format!("{web}{plain}"), SCORED, &[]);
    assert_eq!(out.binds()["default/cache-w-0"], "n1", "no term: the resource scores decide");
    let web_pref = "  affinity: {podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 10, podAffinityTerm: {labelSelector: {matchLabels: {app: cache}}, topologyKey: kubernetes.io/hostname}}]}}\n";
    let (out, _) = run(&nodes, &format!("{}{plain}", running("web", "n0", "{app: web}", web_pref)), SCORED, &[]);
    assert_eq!(out.binds()["default/cache-w-0"], "n0", "the running pod's preferred term draws it");
}

/// The fast paths (predicates passing everywhere, carried and memoized victim
/// searches, cached node scores) leave the decisions of a contended run with
/// every kind of term as `--exhaustive` makes them, byte for byte; a shortcut
/// that forgets existing pods' anti-affinity (the engine's
/// `planted.wrong_affinity`) is caught.
#[test]
fn affinity_runs_decide_as_the_exhaustive_walk() {
    let mut objects = String::from(CLASSES);
    let anti =
        required("podAntiAffinity", "{matchExpressions: [{key: tier, operator: In, values: [front, back]}]}", "zone");
    let aff = required("podAffinity", "{matchLabels: {tier: back}}", "kubernetes.io/hostname");
    let pref = "          affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 50, podAffinityTerm: {labelSelector: {matchLabels: {tier: back}}, topologyKey: zone}}]}}\n";
    for i in 0..16 {
        let (labels, spec, class) = match i % 4 {
            0 => ("{tier: front}", anti.clone(), "low"),
            1 => ("{tier: back}", pref.to_string(), "low"),
            2 => ("{tier: mid}", aff.clone(), "high"),
            _ => ("{tier: back}", String::new(), "high"),
        };
        let spec = format!("          priorityClassName: {class}\n{spec}");
        let more = format!("  priorityClassName: {class}\n");
        // The plain high-priority jobs ask for one pod: drf lets a preemptor take
        // a pod of a job whose share stays at least its own, and a gang's share
        // grows with each pod it pipelines (so wider gangs find no victim here).
        let replicas = if i % 4 == 3 { 1 } else { 1 + i % 3 };
        objects.push_str(&job(&format!("j{i}"), replicas, "1", labels, &spec, &format!("{}s", i * 40), &more));
    }
    let nodes: String = (0..6)
        .map(|i| format!("      - {{name: n{i}, cpu: 3, memory: 8Gi, labels: {{zone: z{}}}}}\n", i / 2))
        .collect();
    let conf = e2e().replace("  - name: drf\n    enablePreemptable: false\n", "  - name: drf\n");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.yaml"), &objects).unwrap();
    std::fs::write(dir.path().join("s.conf"), conf).unwrap();
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  cluster:\n    nodes:\n{nodes}  queues: [{{name: default}}]\n  scheduler: {{conf: s.conf}}\n  workload:\n    - manifests: [m.yaml]\n"
    );
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let decide = |exhaustive: bool, wrong: bool| {
        let mut s = lahar::scenario::load_file(&dir.path().join("s.yaml")).unwrap_or_else(|e| panic!("{e}"));
        s.engine.planted.wrong_affinity = wrong;
        let out = tempfile::tempdir().unwrap();
        let opts = lahar::RunOptions { out_dir: Some(out.path().to_path_buf()), exhaustive, ..Default::default() };
        lahar::run(s, &opts).expect("run");
        std::fs::read_to_string(out.path().join("decisions.csv")).unwrap()
    };
    let full = decide(true, false);
    assert_eq!(decide(false, false), full);
    assert!(full.matches(",bind,").count() >= 12, "{full}");
    assert!(full.contains(",evict,"), "preempt is busy: {full}");
    assert_ne!(decide(false, true), full, "the wrong shortcut is caught");
}

/// Terms the API server refuses, and a namespaceSelector by labels (lahar has
/// no Namespace objects), are errors at their place through the binary (exit
/// 2); a SparkApplication's terms are refused (its operator's pod labels are
/// not modelled).
#[test]
fn bad_terms_are_refused_at_their_place() {
    let term = |t: &str| job("j", 1, "1", "{a: b}", &format!("          affinity: {{podAffinity: {t}}}\n"), "0s", "");
    let cases: Vec<(String, &str)> = vec![
        (
            term("{preferredDuringSchedulingIgnoredDuringExecution: [{weight: 101, podAffinityTerm: {labelSelector: {}, topologyKey: zone}}]}"),
            "podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: a weight must be from 1 to 100",
        ),
        (
            term("{preferredDuringSchedulingIgnoredDuringExecution: [{weight: 0, podAffinityTerm: {labelSelector: {}, topologyKey: zone}}]}"),
            "podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
        ),
        (
            term("{requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: zone, matchLabelKeys: [rev]}]}"),
            "requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector: matchLabelKeys and mismatchLabelKeys need a `labelSelector`",
        ),
        (
            term("{requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {}, topologyKey: zone, matchLabelKeys: [rev], mismatchLabelKeys: [rev]}]}"),
            "`rev` is in both matchLabelKeys and mismatchLabelKeys",
        ),
        (
            term("{requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchExpressions: [{key: a, operator: Near}]}, topologyKey: zone}]}"),
            "labelSelector.matchExpressions[0].operator: expected In, NotIn, Exists or DoesNotExist, got `Near`",
        ),
        (
            term("{requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {}, topologyKey: zone, weight: 3}]}"),
            "requiredDuringSchedulingIgnoredDuringExecution[0].weight: unknown field",
        ),
        (
            "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: s}\nspec:\n  type: Scala\n  mode: cluster\n  sparkVersion: 3.5.0\n  mainApplicationFile: local:///x.jar\n  driver: {cores: 1, memory: 1g, affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {}, topologyKey: zone}]}}}\n  executor: {cores: 1, memory: 1g, instances: 1}\n".to_string(),
            "spec.driver.affinity.podAntiAffinity: inter-pod anti-affinity changes where the pod may run",
        ),
    ];
    for (text, needle) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.yaml"), &text).unwrap();
        let s = "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  cluster:\n    nodes:\n      - {name: n0, cpu: 4, memory: 8Gi}\n  queues: [{name: default}]\n  workload:\n    - manifests: [m.yaml]\n";
        std::fs::write(dir.path().join("s.yaml"), s).unwrap();
        let o = lahar().arg("validate").arg(dir.path().join("s.yaml")).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{needle}: {err}");
        assert!(err.contains(needle), "error lacks {needle:?}:\n{err}");
    }
}
