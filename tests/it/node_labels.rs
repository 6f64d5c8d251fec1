//! Node labels an operator edits on a live cluster (`kubectl label nodes`):
//! the timeline's `label` and `unlabel`. Selectors and affinity are
//! `IgnoredDuringExecution`: pods running stay, the next session's filters
//! and scores see the new labels. Hand-checked through the binary.

use super::*;

/// Runs `objects` (manifests) on `nodes` (scenario node lines) under the e2e
/// conf with `timeline` entries; returns the output folder's files by name and
/// stderr.
fn run(nodes: &[&str], objects: &str, timeline: &str) -> (std::collections::BTreeMap<String, String>, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.yaml"), objects).unwrap();
    std::fs::write(dir.path().join("s.conf"), super::volcano_controller::e2e_conf()).unwrap();
    let nodes: String = nodes.iter().map(|n| format!("      - {n}\n")).collect();
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  horizon: 2h\n  cluster:\n    nodes:\n{nodes}  queues: [{{name: default}}]\n  scheduler: {{conf: s.conf}}\n  workload:\n    - manifests: [m.yaml]\n{timeline}"
    );
    run_in(dir.path(), &text)
}

/// Runs scenario `text` in `dir` (beside its files; the output folder `o`
/// replaced); returns the output folder's files by name and stderr.
fn run_in(dir: &Path, text: &str) -> (std::collections::BTreeMap<String, String>, String) {
    std::fs::write(dir.join("s.yaml"), text).unwrap();
    let out = dir.join("o");
    let o =
        lahar().arg("run").arg("-q").arg(dir.join("s.yaml")).arg("--out").arg(&out).arg("--force").output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let files = ["decisions.csv", "pods.csv", "timeline.csv"]
        .iter()
        .map(|f| (f.to_string(), std::fs::read_to_string(out.join(f)).unwrap_or_default()))
        .collect();
    (files, String::from_utf8_lossy(&o.stderr).into_owned())
}

/// Runs scenario `text` in `dir`, which lahar must refuse before any work:
/// exit 2, no output folder; returns stderr.
fn refused(dir: &Path, text: &str) -> String {
    std::fs::write(dir.join("s.yaml"), text).unwrap();
    let o = lahar().arg("run").arg("-q").arg(dir.join("s.yaml")).arg("--out").arg(dir.join("o")).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(!dir.join("o").exists(), "nothing written: {stderr}");
    stderr
}

/// A VolcanoJob `name` of one 1-CPU pod labelled `app: {app}`, submitted at
/// `at`, with template spec lines `spec` (10 spaces).
fn job(name: &str, app: &str, at: &str, spec: &str) -> String {
    format!(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: {name}\n  annotations: {{lahar.io/duration: 1h, lahar.io/submit-at: {at}}}\nspec:\n  tasks:\n    - name: w\n      replicas: 1\n      template:\n        metadata: {{labels: {{app: {app}}}}}\n        spec:\n{spec}          containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: \"1\"}}}}}}]\n---\n"
    )
}

/// decisions.csv's binds: (t_s, pod, node).
fn binds(decisions: &str) -> Vec<(String, String, String)> {
    super::node_timeline::rows(decisions)
        .into_iter()
        .filter(|r| r[3] == "bind")
        .map(|r| (r[1].clone(), r[5].clone(), r[6].clone()))
        .collect()
}

fn bind(t: &str, pod: &str, node: &str) -> (String, String, String) {
    (t.to_string(), pod.to_string(), node.to_string())
}

const SELECT_TRAIN: &str = "          nodeSelector: {pool: train}\n";

/// By hand, two 4-CPU nodes, neither labelled `pool: train`: `a` (selecting
/// `pool: train`) waits from 0; at 10 s n1 is labelled and `a` binds there;
/// at 20 s the label goes and `a`'s pod stays (it runs its hour); `b`, the
/// same, comes at 30 s and waits to the end. The step that labels n1 again
/// with the same value changes nothing (ignored, a warning); an `unlabel` of a
/// label no node has finds nothing (missed, a warning).
#[test]
fn a_label_lets_a_selector_in_and_its_removal_keeps_running_pods() {
    let nodes = ["{name: n0, cpu: 4, memory: 8Gi}", "{name: n1, cpu: 4, memory: 8Gi}"];
    let objects = format!("{}{}", job("a", "a", "0s", SELECT_TRAIN), job("b", "b", "30s", SELECT_TRAIN));
    let timeline = "  timeline:\n    - {at: 10s, label: n1, key: pool, value: train}\n    - {at: 15s, label: n1, key: pool, value: train}\n    - {at: 20s, unlabel: n1, key: pool}\n    - {at: 25s, unlabel: \"n*\", key: pool}\n";
    let (out, stderr) = run(&nodes, &objects, timeline);
    assert_eq!(binds(&out["decisions.csv"]), [bind("10", "default/a-w-0", "n1")]);
    let pods = super::node_timeline::rows(&out["pods.csv"]);
    let a = pods.iter().find(|r| r[1] == "default/a-w-0").expect("a's pod");
    assert_eq!((a[6].as_str(), a[7].as_str(), a[8].as_str()), ("10", "3610", "completed"), "{a:?}");
    let outcomes: Vec<String> = super::node_timeline::rows(&out["timeline.csv"])
        .iter()
        .map(|r| r.iter().skip(1).cloned().collect::<Vec<_>>().join(","))
        .collect();
    assert_eq!(outcomes.len(), 4, "{outcomes:?}");
    for (row, want) in outcomes.iter().zip(["done", "ignored", "done", "missed"]) {
        assert!(row.contains(want), "{want}: {outcomes:?}");
    }
    assert!(stderr.contains("every node of the pattern has the label pool=train already"), "{stderr}");
    assert!(stderr.contains("no node of the pattern has a label `pool` to remove"), "{stderr}");
}

/// A label that moves the node of a running pod out of its domain moves the
/// pod's anti-affinity with it. Two 4-CPU nodes of zone `a`; `guard` runs on
/// n0 and refuses `app: web` in its zone: `web` (from 0) fits neither node.
/// At 10 s n0 becomes zone `b`: zone `a` (n1) holds no guard now, and `web`
/// binds to n1 at 10 s. Without the step it waits to the end.
#[test]
fn relabelling_a_domain_moves_anti_affinity() {
    let nodes =
        ["{name: n0, cpu: 4, memory: 8Gi, labels: {zone: a}}", "{name: n1, cpu: 4, memory: 8Gi, labels: {zone: a}}"];
    let guard = "apiVersion: v1\nkind: Pod\nmetadata: {name: guard, labels: {app: guard}, annotations: {lahar.io/duration: 10h}}\nspec:\n  nodeName: n0\n  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: web}}, topologyKey: zone}]}}\n  containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]\nstatus: {phase: Running}\n---\n";
    let objects = format!("{guard}{}", job("web", "web", "0s", ""));
    let (out, _) = run(&nodes, &objects, "  timeline:\n    - {at: 10s, label: n0, key: zone, value: b}\n");
    assert_eq!(binds(&out["decisions.csv"]), [bind("10", "default/web-w-0", "n1")]);
    let (control, _) = run(&nodes, &objects, "");
    assert_eq!(binds(&control["decisions.csv"]), []);
}

/// Each bad `label` or `unlabel` step is refused with its field path, exit 2,
/// before any work.
#[test]
fn bad_label_steps_are_refused_with_their_place() {
    let nodes = ["{name: n0, cpu: 4, memory: 8Gi}"];
    let cases = [
        ("{at: 1s, label: n0, value: x}", "spec.timeline[0].key: `label` needs the label's `key`"),
        ("{at: 1s, label: n0, key: pool}", "spec.timeline[0].value: `label` needs the label's `value`"),
        (
            "{at: 1s, unlabel: n0, key: pool, value: x}",
            "spec.timeline[0].value: `unlabel` removes a label by key: no `value`",
        ),
        (
            "{at: 1s, label: n0, key: pool, value: x, effect: NoSchedule}",
            "spec.timeline[0].effect: `effect` names a taint: it goes with `taint` or `untaint`",
        ),
        ("{at: 1s, label: n0, key: \"a b\", value: x}", "spec.timeline[0].key: `a b` is not a qualified name"),
        ("{at: 1s, label: n0, key: pool, value: \"-x\"}", "spec.timeline[0].value: `-x` is not a label value"),
        (
            "{at: 1s, label: n0, key: nvidia.com/gpu.product, value: H100}",
            "spec.timeline[0].key: `nvidia.com/gpu.product` is the node's GPU model",
        ),
        (
            "{at: 1s, unlabel: n0, key: kubernetes.io/hostname}",
            "spec.timeline[0].key: `kubernetes.io/hostname` is the node's name",
        ),
        ("{at: 1s, label: x*, key: pool, value: x}", "spec.timeline[0].label: `x*` matches no node"),
        (
            "{at: 1s, cordon: n0, key: pool}",
            "spec.timeline[0].key: `key` names a taint or a label: it goes with `taint`, `untaint`, `label` or `unlabel`",
        ),
    ];
    for (step, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.yaml"), job("a", "a", "0s", "")).unwrap();
        let text = format!(
            "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  cluster:\n    nodes:\n      - {}\n  workload:\n    - manifests: [m.yaml]\n  timeline:\n    - {step}\n",
            nodes[0]
        );
        let stderr = refused(dir.path(), &text);
        assert!(stderr.contains(want), "{step}: want {want}\n{stderr}");
    }
}

/// nodegroup reads a node's group from its label, and what a queue holds in a
/// group follows a relabelled node. Queue `q` requires group1 or group2,
/// prefers group1, and may hold at most 3 CPUs in group1; n1 and n2 are
/// group1. `a` (2 CPUs) binds at 0 to n2 (group1, preferred; the equal
/// nodes' tie goes to n2). At 10 s n2 becomes group2 and `b` (2 CPUs) comes:
/// group1 holds nothing of `q` now (`a` runs in group2), 0 + 2 ≤ 3, so `b`
/// takes the preferred group: n1. Without the step, group1 would hold
/// 2 + 2 > 3 and `b` would need a group2 node — there is none, so it waits
/// for `a` to end (3,600 s).
#[test]
fn a_relabelled_node_moves_what_a_queue_holds_in_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let queue = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata:\n  name: q\n  annotations:\n    volcano.sh/nodegroup-resource-limits: '{\"group1\":{\"cpu\":\"3\"}}'\nspec:\n  weight: 1\n  affinity:\n    nodeGroupAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution: [group1, group2]\n      preferredDuringSchedulingIgnoredDuringExecution: [group1]\n";
    std::fs::write(dir.path().join("queues.yaml"), queue).unwrap();
    std::fs::write(dir.path().join("s.conf"), "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: nodegroup\n")
        .unwrap();
    let job = |name: &str, at: &str| {
        format!(
            "        - {{name: {name}, queue: q, submitAt: {at}, duration: 1h, tasks: [{{name: w, replicas: 1, resources: {{cpu: 2, memory: 4Gi}}}}]}}\n"
        )
    };
    let text = |timeline: &str| {
        format!(
            "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  horizon: 2h\n  cluster:\n    nodes:\n      - {{name: n1, cpu: 16, memory: 64Gi, labels: {{volcano.sh/nodegroup-name: group1}}}}\n      - {{name: n2, cpu: 16, memory: 64Gi, labels: {{volcano.sh/nodegroup-name: group1}}}}\n  queues: queues.yaml\n  scheduler: {{conf: s.conf}}\n  workload:\n    - jobs:\n{}{}{timeline}",
            job("a", "0s"),
            job("b", "10s")
        )
    };
    let run = |timeline: &str| binds(&run_in(dir.path(), &text(timeline)).0["decisions.csv"]);
    let relabel = "  timeline:\n    - {at: 10s, label: n2, key: volcano.sh/nodegroup-name, value: group2}\n";
    assert_eq!(run(relabel), [bind("0", "default/a-w-0", "n2"), bind("10", "default/b-w-0", "n1")]);
    assert_eq!(run(""), [bind("0", "default/a-w-0", "n2"), bind("3600", "default/b-w-0", "n2")]);
}

/// A label a HyperNode selects its members by (`labelMatch`) is refused: the
/// topology is resolved once, at the start. examples/manifests' HyperNodes
/// take `rack: r3` into leaf-1; another label key is accepted.
#[test]
fn a_label_hypernodes_select_by_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let hn = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests/hypernodes.yaml"))
        .unwrap();
    std::fs::write(dir.path().join("hn.yaml"), hn).unwrap();
    let text = |key: &str| {
        let nodes: String = (0..4)
            .map(|i| format!("      - {{name: node-{i}, cpu: 8, memory: 32Gi, labels: {{rack: r{}}}}}\n", i.max(1)))
            .collect();
        format!(
            "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  cluster:\n    nodes:\n{nodes}    hyperNodes: hn.yaml\n  workload:\n    - jobs: [{{name: j, duration: 1m, tasks: [{{name: w, replicas: 1, resources: {{cpu: 1}}}}]}}]\n  timeline:\n    - {{at: 10s, label: node-0, key: {key}, value: r3}}\n"
        )
    };
    let stderr = refused(dir.path(), &text("rack"));
    let want = "spec.timeline[0].key: `rack` selects HyperNode members (`labelMatch`), which lahar resolves once, at the start";
    assert!(stderr.contains(want), "{stderr}");
    let (files, _) = run_in(dir.path(), &text("row"));
    assert!(files["timeline.csv"].contains("done"), "{}", files["timeline.csv"]);
}

/// A preemptor nominated to a node that an edit then bars from it may preempt
/// again (preempt's memo of barred jobs is dropped by every taint or label
/// edit; this case does not reach the memo: it passes with a memo keyed on
/// "some node is tainted" too). 1-CPU nodes: `l0` and `l1` (low priority) run on n0 and n1; `h` (high,
/// selecting `pool: x`, which only n0 has at first — or, for taints, n1 repels
/// it) comes at 10 s, evicts `l0` and is nominated to n0. At 20 s n0 stops
/// passing `h` and n1 starts: `h` preempts `l1` and binds to n1 once it is gone
/// (its 30 s grace). Taints: n2 is tainted from 0 s on, so the cluster is tainted before and
/// after the edits (a memo keyed on "some node is tainted" keeps its entry).
#[test]
fn an_edit_that_bars_a_nominated_node_lets_its_preemptor_preempt_again() {
    let classes = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 10\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n---\n";
    let running = |name: &str, node: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, annotations: {{lahar.io/duration: 10h}}}}\nspec:\n  nodeName: {node}\n  priorityClassName: low\n  containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]\nstatus: {{phase: Running}}\n---\n"
        )
    };
    let high = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: h\n  annotations: {lahar.io/duration: 1h, lahar.io/submit-at: 10s}\nspec:\n  priorityClassName: high\n  tasks:\n    - name: w\n      replicas: 1\n      template:\n        spec:\n          priorityClassName: high\n          nodeSelector: {pool: x}\n          containers: [{name: c, image: nginx, resources: {requests: {cpu: \"1\"}}}]\n";
    let objects = format!("{classes}{}{}{high}", running("l0", "n0"), running("l1", "n1"));
    let cases = [
        (
            "labels",
            ["{name: n0, cpu: 1, memory: 8Gi, labels: {pool: x}}", "{name: n1, cpu: 1, memory: 8Gi}"],
            "    - {at: 20s, unlabel: n0, key: pool}\n    - {at: 20s, label: n1, key: pool, value: x}\n",
        ),
        (
            "taints",
            [
                "{name: n0, cpu: 1, memory: 8Gi, labels: {pool: x}}",
                "{name: n1, cpu: 1, memory: 8Gi, labels: {pool: x}}",
            ],
            "    - {at: 0s, taint: n1, key: k2, effect: NoSchedule}\n    - {at: 20s, taint: n0, key: k, effect: NoSchedule}\n    - {at: 20s, untaint: n1, key: k2}\n",
        ),
    ];
    for (what, [n0, n1], steps) in cases {
        let nodes = [n0, n1, "{name: n2, cpu: 1, memory: 8Gi}"];
        let n2 = "    - {at: 0s, taint: n2, key: k3, effect: NoSchedule}\n";
        let (out, _) = run(&nodes, &objects, &format!("  timeline:\n{n2}{steps}"));
        let hs: Vec<_> = binds(&out["decisions.csv"]).into_iter().filter(|b| b.1 == "default/h-w-0").collect();
        assert_eq!(hs, [bind("50", "default/h-w-0", "n1")], "{what}: {}", out["decisions.csv"]);
    }
}
