//! The `tdm` plugin: Volcano's tdm_test.go replayed (Test_TDM's predicates and
//! scores from `--explain` rows, Test_TDM_victimsFn through shuffle), and revocable
//! zones opening and closing over sessions of a day, computed by hand. The
//! cluster's clock is `spec.startTime`; Volcano's tests read the real clock and
//! assume it is not between 00:00 and 00:01, so the replays run at 12:00.

use super::volcano::{Out, Row};
use std::collections::BTreeSet;
use std::path::Path;

fn write(dir: &Path, nodes: &str, conf: &str, extra: &str, objects: &str) {
    let mut s = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: tdm}}\nspec:\n  startTime: 2026-01-05T12:00:00\n{extra}  cluster:\n    nodes:\n{nodes}  queues: [{{name: c1}}, {{name: c2}}]\n  scheduler:\n    inline: |\n"
    );
    for l in conf.lines() {
        s += &format!("      {l}\n");
    }
    s += "  workload:\n    - manifests: objects.yaml\n";
    std::fs::write(dir.join("scenario.yaml"), s).expect("write");
    std::fs::write(dir.join("objects.yaml"), objects).expect("write");
}

fn read(p: &Path) -> Vec<Row> {
    let mut r = csv::Reader::from_path(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let h = r.headers().expect("header").clone();
    r.records().map(|x| h.iter().zip(x.expect("record").iter()).map(|(k, v)| (k.into(), v.into())).collect()).collect()
}

/// A pending pod of group pg1 (namespace c1) with `ann` annotations.
fn pending(name: &str, ann: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: c1\n  annotations: {{scheduling.k8s.io/group-name: pg1{ann}}}\nspec:\n  containers: [{{name: c, resources: {{requests: {{cpu: \"1\", memory: 1Gi}}}}}}]\n---\n"
    )
}

const PG1: &str = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: pg1, namespace: c1, annotations: {lahar.io/duration: 1h}}\nspec: {queue: c1, minMember: 0}\n---\n";

/// Test_TDM: nodes n1, n2 in zone rz1 ("0:00-0:00": always open), n3, n4 in
/// none, n5 in rz2 ("0:00-0:01": closed at 12:00); one session of allocate with
/// tdm alone, `pod` watched. Returns the nodes that pass the predicates and the
/// tdm score on each.
fn tdm_case(pod: &str, ann: &str) -> (BTreeSet<String>, Vec<(String, String)>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let label =
        |z: &str| if z.is_empty() { String::new() } else { format!(", labels: {{volcano.sh/revocable-zone: {z}}}") };
    let nodes: String = [("n1", "rz1"), ("n2", "rz1"), ("n3", ""), ("n4", ""), ("n5", "rz2")]
        .iter()
        .map(|(n, z)| format!("      - {{name: {n}, cpu: 16, memory: 64Gi{}}}\n", label(z)))
        .collect();
    let conf = "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: tdm\n    arguments:\n      tdm.revocable-zone.rz1: 0:00-0:00\n      tdm.revocable-zone.rz2: 0:00-0:01\n";
    write(dir.path(), &nodes, conf, "  sessions: 1\n", &format!("{PG1}{}", pending(pod, ann)));
    let s = lahar::scenario::load_file(&dir.path().join("scenario.yaml")).unwrap_or_else(|e| panic!("{e}"));
    let out = tempfile::tempdir().expect("tempdir");
    let opts = lahar::RunOptions {
        out_dir: Some(out.path().to_path_buf()),
        explain: vec![format!("c1/{pod}")],
        ..Default::default()
    };
    lahar::run(s, &opts).expect("run");
    let rows = read(&out.path().join("explain.csv"));
    let all: BTreeSet<String> = ["n1", "n2", "n3", "n4", "n5"].iter().map(|s| s.to_string()).collect();
    let failed: BTreeSet<String> =
        rows.iter().filter(|r| r["passed"] == "false" && !r["node"].is_empty()).map(|r| r["node"].clone()).collect();
    let passed = all.difference(&failed).cloned().collect();
    let scores = rows
        .iter()
        .filter(|r| r["plugin"] == "tdm" && !r["score"].is_empty())
        .map(|r| (r["node"].clone(), r["score"].clone()))
        .collect();
    (passed, scores)
}

fn set(nodes: &[&str]) -> BTreeSet<String> {
    nodes.iter().map(|s| s.to_string()).collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

/// Test_TDM "preemptable task rz available": p1 (`volcano.sh/revocable-zone: "*"`)
/// passes n1–n4 (n5's zone is closed), scores 100 on the open revocable nodes.
#[test]
fn tdm_preemptable_task_rz_available() {
    let (passed, scores) = tdm_case("p1", ", volcano.sh/revocable-zone: \"*\"");
    assert_eq!(passed, set(&["n1", "n2", "n3", "n4"]));
    assert_eq!(scores, pairs(&[("n1", "100"), ("n2", "100"), ("n3", "0"), ("n4", "0")]));
}

/// Test_TDM "not preemptable task": p2 has no revocable zone: n3 and n4 only.
#[test]
fn tdm_not_preemptable_task() {
    let (passed, scores) = tdm_case("p2", "");
    assert_eq!(passed, set(&["n3", "n4"]));
    assert_eq!(scores, pairs(&[("n3", "0"), ("n4", "0")]));
}

/// Test_TDM "preemptable task and multiple rz": p3 as p1.
#[test]
fn tdm_preemptable_task_and_multiple_rz() {
    let (passed, scores) = tdm_case("p3", ", volcano.sh/revocable-zone: \"*\"");
    assert_eq!(passed, set(&["n1", "n2", "n3", "n4"]));
    assert_eq!(scores, pairs(&[("n1", "100"), ("n2", "100"), ("n3", "0"), ("n4", "0")]));
}

/// Test_TDM_victimsFn's objects: PodGroups pg1 (c1) and pg2 (c2) with `ann1`,
/// `ann2` (`None`: the group is left out), five Running pods each (p1–p5 on n1,
/// p6–p10 on n2; p4 and p5 not preemptable), both nodes in zone rz1, closed at
/// 12:00; one session of shuffle with tdm. Returns the number of pods evicted.
fn victims(ann1: Option<&str>, ann2: Option<&str>, window: &str, period: &str) -> usize {
    let dir = tempfile::tempdir().expect("tempdir");
    let nodes = "      - {name: n1, cpu: 16, memory: 64Gi, labels: {volcano.sh/revocable-zone: rz1}}\n      - {name: n2, cpu: 16, memory: 64Gi, labels: {volcano.sh/revocable-zone: rz1}}\n";
    let conf = format!(
        "actions: \"shuffle\"\ntiers:\n- plugins:\n  - name: tdm\n    arguments:\n      tdm.revocable-zone.rz1: {window}\n      tdm.evict.period: {period}\n"
    );
    let mut objects = String::new();
    for (g, ann, ns, node, pods) in [("pg1", ann1, "c1", "n1", 1..=5), ("pg2", ann2, "c2", "n2", 6..=10)] {
        let Some(ann) = ann else { continue };
        objects += &format!(
            "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {{name: {g}, namespace: {ns}, annotations: {{lahar.io/duration: 1h, {ann}}}}}\nspec: {{queue: {ns}, minMember: 0}}\nstatus: {{phase: Running}}\n---\n"
        );
        for i in pods {
            let pre = if i == 4 || i == 5 { "false" } else { "true" };
            objects += &format!(
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p{i}\n  namespace: {ns}\n  annotations: {{scheduling.k8s.io/group-name: {g}, volcano.sh/preemptable: \"{pre}\"}}\nspec:\n  nodeName: {node}\n  containers: [{{name: c, resources: {{requests: {{cpu: \"1\", memory: 1Gi}}}}}}]\nstatus: {{phase: Running}}\n---\n"
            );
        }
    }
    write(dir.path(), nodes, &conf, "  sessions: 1\n", &objects);
    let o: Out = super::volcano::run_file(&dir.path().join("scenario.yaml"));
    o.evictions().len()
}

/// pg1's and pg2's annotations, the window, the evict period, the victims.
type Case = (Option<String>, Option<String>, &'static str, &'static str, usize);

/// Test_TDM_victimsFn, cases 0–8 (case 1: the zone is open all day, no victim): the victims on closed revocable nodes, each
/// job's at most its budget (`volcano.sh/jdb-max-unavailable` or
/// `-min-available`, percentages of its 5 pods rounded up) and only its 3
/// preemptable Running pods.
#[test]
fn tdm_victims_fn() {
    let max = |v: &str| format!("volcano.sh/jdb-max-unavailable: \"{v}\"");
    let min = |v: &str| format!("volcano.sh/jdb-min-available: \"{v}\"");
    let cases: [Case; 9] = [
        (Some(max("30%")), None, "0:00-0:01", "100ms", 2),
        // The zone open all day: no victim.
        (Some(max("30%")), None, "0:00-0:00", "100ms", 0),
        (Some(max("99%")), None, "0:00-0:01", "1s", 3),
        (None, Some(max("50%")), "0:00-0:01", "1s", 3),
        (Some(max("90%")), Some(max("50%")), "0:00-0:01", "1s", 6),
        (None, Some(max("3")), "0:00-0:01", "1s", 3),
        (None, Some(min("3")), "0:00-0:01", "1s", 2),
        (None, Some(min("30%")), "0:00-0:01", "1s", 3),
        (Some(max("3")), Some(min("2")), "0:00-0:01", "1s", 6),
    ];
    for (i, (a, b, window, period, want)) in cases.iter().enumerate() {
        assert_eq!(victims(a.as_deref(), b.as_deref(), window, period), *want, "case {i}");
    }
}

/// A day with a revocable node, computed by hand. n1 (2 cpus) is a regular node,
/// r1 (4 cpus) is in zone rz1, open 10:00–12:00; the clock starts at 08:00. A
/// VolcanoJob of four preemptable 1-cpu pods (minAvailable 1) arrives at 08:00:
/// two run on n1, two wait (r1 is closed). At 10:00 (7200 s) the zone opens —
/// lahar asks for a session then — and the two waiting pods go to r1. The zone
/// closes after 12:00:00; at 12:00:01 (14401 s) shuffle takes one pod off r1 (a
/// job without a disruption budget loses one pod per call), and the next one when
/// the evict period (1m) has passed, at 14461 s.
#[test]
fn revocable_node_over_a_day() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nodes = "      - {name: n1, cpu: 2, memory: 8Gi}\n      - {name: r1, cpu: 4, memory: 8Gi, labels: {volcano.sh/revocable-zone: rz1}}\n";
    let conf = "actions: \"allocate, shuffle\"\ntiers:\n- plugins:\n  - name: tdm\n    arguments:\n      tdm.revocable-zone.rz1: 10:00-12:00\n      tdm.evict.period: 1m\n";
    let job = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: batch, namespace: c1, annotations: {lahar.io/duration: 8h}}\nspec:\n  queue: c1\n  minAvailable: 1\n  tasks:\n    - replicas: 4\n      name: w\n      template:\n        metadata: {annotations: {volcano.sh/preemptable: \"true\"}}\n        spec:\n          containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]\n";
    write(dir.path(), nodes, conf, "  horizon: 5h\n", job);
    let text = std::fs::read_to_string(dir.path().join("scenario.yaml")).expect("read").replace("12:00:00", "08:00:00");
    std::fs::write(dir.path().join("scenario.yaml"), text).expect("write");
    let o = super::volcano::run_file(&dir.path().join("scenario.yaml"));
    let f = |k: &str| -> Vec<String> {
        o.of(k).iter().map(|d| format!("{} {} {}", d["t_s"], d["pod"], d["node"])).collect()
    };
    assert_eq!(f("bind"), ["0 c1/batch-w-0 n1", "0 c1/batch-w-1 n1", "7200 c1/batch-w-2 r1", "7200 c1/batch-w-3 r1"]);
    assert_eq!(f("evict"), ["14401 c1/batch-w-2 r1", "14461 c1/batch-w-3 r1"]);
}

/// A zone window Volcano would find never open, a zone value on a pod other than
/// `*`, a bad disruption budget and a bad `spec.startTime` are refused at their
/// places, exit 2.
#[test]
fn tdm_bad_input_through_the_binary() {
    let err = super::conf_errors(
        "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: tdm\n    arguments: {tdm.revocable-zone.rz1: \"1:0-2:00\"}\n",
    );
    assert!(err.contains("arguments.tdm.revocable-zone.rz1: expected a daily window such as 10:00-21:00"), "{err}");
    let dir = tempfile::tempdir().expect("tempdir");
    let nodes = "      - {name: n1, cpu: 2, memory: 8Gi}\n";
    let conf = "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: tdm\n";
    let objects = format!(
        "{}{}",
        PG1.replace("lahar.io/duration: 1h", "lahar.io/duration: 1h, volcano.sh/jdb-max-unavailable: \"some\""),
        pending("p", ", volcano.sh/revocable-zone: rz1")
    );
    write(dir.path(), nodes, conf, "", &objects);
    let text = std::fs::read_to_string(dir.path().join("scenario.yaml"))
        .expect("read")
        .replace("2026-01-05T12:00:00", "2026-01-05 12:00");
    std::fs::write(dir.path().join("scenario.yaml"), text).expect("write");
    let out = super::lahar().arg("validate").arg(dir.path().join("scenario.yaml")).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    for want in [
        "spec.startTime: expected a date and time such as 2026-01-05T08:00:00, got `2026-01-05 12:00`",
        "metadata.annotations.volcano.sh/jdb-max-unavailable: expected a count or a percentage such as `30%`, got `some`",
        "metadata.annotations.volcano.sh/revocable-zone: expected `*` (Volcano reads no other zone value), got `rz1`",
    ] {
        assert!(err.contains(want), "{want} not in {err}");
    }
}

/// examples/volcano/revocable-nodes.yaml behaves as its comments say.
#[test]
fn revocable_nodes_example() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/volcano/revocable-nodes.yaml");
    let o = super::volcano::run_file(&p);
    let binds: Vec<String> = o.of("bind").iter().map(|d| format!("{} {} {}", d["t_s"], d["job"], d["node"])).collect();
    assert_eq!(
        binds,
        [
            "0 training regular-1",
            "0 training regular-0",
            "14400 batch-0 lent-0",
            "14400 batch-1 lent-1",
            "28800 batch-2 lent-1",
            "28800 batch-3 lent-0",
            "43200 batch-2 regular-0",
            "43200 batch-3 regular-1"
        ]
    );
    let evicted: Vec<String> = o.of("evict").iter().map(|d| format!("{} {}", d["t_s"], d["job"])).collect();
    assert_eq!(evicted, ["36001 batch-2", "36001 batch-3"]);
}

/// tdm's `preemptable` through preempt: a preemptor that is not preemptable
/// (and has no revocable zone) takes preemptable pods on regular nodes, at most
/// one per victim job and call (no disruption budget); each of prod's two pods
/// makes its own call, so both of batch's pods go. A preemptable preemptor takes
/// nothing.
#[test]
fn tdm_preemptable_through_preempt() {
    let run = |prod_ann: &str| {
        let dir = tempfile::tempdir().expect("tempdir");
        let nodes = "      - {name: n1, cpu: 2, memory: 8Gi}\n";
        let conf = "actions: \"enqueue, allocate, preempt\"\ntiers:\n- plugins:\n  - name: priority\n  - name: tdm\n";
        let job = |name: &str, class: &str, at: u32, ann: &str| {
            format!(
                "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: {name}, namespace: c1, annotations: {{lahar.io/duration: 1h, lahar.io/submit-at: {at}s}}}}\nspec:\n  queue: c1\n  minAvailable: 1\n  priorityClassName: {class}\n  tasks:\n    - replicas: 2\n      name: w\n      template:\n        metadata: {{annotations: {{{ann}}}}}\n        spec:\n          containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]\n---\n"
            )
        };
        let classes = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 1\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 100\n---\n";
        let objects = format!(
            "{classes}{}{}",
            job("batch", "low", 0, "volcano.sh/preemptable: \"true\""),
            job("prod", "high", 60, prod_ann)
        );
        write(dir.path(), nodes, conf, "  horizon: 2h\n", &objects);
        let o = super::volcano::run_file(&dir.path().join("scenario.yaml"));
        o.of("evict").iter().map(|d| format!("{} {}", d["t_s"], d["pod"])).collect::<Vec<_>>()
    };
    assert_eq!(run("volcano.sh/preemptable: \"false\""), ["60 c1/batch-w-0", "60 c1/batch-w-1"]);
    assert!(run("volcano.sh/preemptable: \"true\"").is_empty());
}
