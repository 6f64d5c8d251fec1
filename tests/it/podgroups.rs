//! PodGroups and Pods as Volcano's scheduler reads them (issue 12): task roles from
//! `volcano.sh/task-spec` (the role `""` included), PodGroups without Pods, the
//! starting phase from `status.phase`, `minResources` with the quota keys Volcano's
//! job controller writes, `preemptionPolicy: Never`, and objects without any lahar
//! annotation. Each case runs through the binary and reads decisions.csv.

use super::*;

/// A Pod of PodGroup `group` (namespace c1) requesting `cpu` cores and 1 GB;
/// `extra` is more YAML under `metadata` (e.g. annotations) and `spec` lines.
fn pod(name: &str, group: &str, cpu: u32, meta: &str, spec: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: c1\n  annotations:\n    scheduling.k8s.io/group-name: {group}\n{meta}spec:\n{spec}  containers: [{{name: c, resources: {{requests: {{cpu: {cpu}, memory: 1G}}}}}}]\n---\n"
    )
}

/// A PodGroup in namespace c1: `spec` and `rest` (metadata annotations, status) as YAML.
fn group(name: &str, spec: &str, rest: &str) -> String {
    format!(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata:\n  name: {name}\n  namespace: c1\n{rest}spec: {spec}\n---\n"
    )
}

/// The outputs of one run.
struct Run {
    decisions: String,
    jobs: String,
    stderr: String,
}

impl Run {
    /// `(kind, pod or job)` of each decision row, in order.
    fn rows(&self) -> Vec<(String, String)> {
        self.decisions
            .lines()
            .skip(1)
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                let who = if f[3] == "phase" { format!("{}={}", f[4], f[7]) } else { f[5].to_string() };
                (f[3].to_string(), who)
            })
            .collect()
    }
    fn of(&self, kind: &str) -> Vec<String> {
        self.rows().into_iter().filter(|r| r.0 == kind).map(|r| r.1).collect()
    }
}

/// Runs `objects` (manifests) on `nodes` with `queues` under a conf of `actions` and
/// `tiers` (per tier, plugin names or flow mappings with switches), one session.
fn run(nodes: &str, queues: &str, actions: &str, tiers: &[&[&str]], objects: &str) -> Run {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.yaml"), objects).unwrap();
    let mut conf = format!("      actions: \"{actions}\"\n      tiers:\n");
    for t in tiers {
        conf += "      - plugins:\n";
        for p in *t {
            // A name, or a flow mapping with the plugin's switches.
            match p.starts_with('{') {
                true => conf += &format!("        - {p}\n"),
                false => conf += &format!("        - name: {p}\n"),
            }
        }
    }
    let text = scenario(
        &format!("    nodes:\n{nodes}"),
        &format!("  queues:\n{queues}  scheduler:\n    inline: |\n{conf}  workload:\n    - manifests: m.yaml\n"),
    );
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let out = dir.path().join("o");
    let o = lahar()
        .arg("run")
        .arg(dir.path().join("s.yaml"))
        .arg("--out")
        .arg(&out)
        .args(["--sessions", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
    Run { decisions: read("decisions.csv"), jobs: read("jobs.csv"), stderr }
}

const ONE_QUEUE: &str = "    - {name: default}\n";

/// Pods without `volcano.sh/task-spec` have the role `""`: `minTaskMember: {"": 3}`
/// counts them all, whatever their shapes (two tasks here, 1 and 2 CPUs). On a
/// 4-CPU node (1 + 2 + 2 = 5 CPUs) the role's three pods cannot all be placed, so
/// gang discards the allocation; on a 5-CPU node all three bind.
#[test]
fn min_task_member_counts_the_role_without_a_name() {
    let objects = group("pg1", "{minMember: 3, minTaskMember: {\"\": 3}}", "")
        + &pod("p1", "pg1", 1, "", "")
        + &pod("p2", "pg1", 2, "", "")
        + &pod("p3", "pg1", 2, "", "");
    let tiers: &[&[&str]] = &[&["gang"], &["predicates"]];
    let small = run("      - {name: n1, cpu: 4, memory: 8Gi}\n", ONE_QUEUE, "enqueue, allocate", tiers, &objects);
    assert!(small.of("bind").is_empty(), "{}", small.decisions);
    let big = run("      - {name: n1, cpu: 5, memory: 8Gi}\n", ONE_QUEUE, "enqueue, allocate", tiers, &objects);
    assert_eq!(big.of("bind"), ["c1/p1", "c1/p2", "c1/p3"], "{}", big.decisions);
}

/// A role named by the annotation counts only its own pods: `{worker: 2}` with one
/// worker pod (the other pod has the role `""`) is an invalid gang; with two
/// worker pods it binds.
#[test]
fn min_task_member_counts_roles_by_task_spec() {
    let worker = "    volcano.sh/task-spec: worker\n";
    let pg = group("pg1", "{minMember: 2, minTaskMember: {worker: 2}}", "");
    let node = "      - {name: n1, cpu: 8, memory: 8Gi}\n";
    let one = pg.clone() + &pod("w0", "pg1", 1, worker, "") + &pod("other", "pg1", 1, "", "");
    let r = run(node, ONE_QUEUE, "enqueue, allocate", &[&["gang"]], &one);
    assert!(r.of("bind").is_empty(), "{}", r.decisions);
    let two = pg + &pod("w0", "pg1", 1, worker, "") + &pod("w1", "pg1", 1, worker, "");
    let r = run(node, ONE_QUEUE, "enqueue, allocate", &[&["gang"]], &two);
    assert_eq!(r.of("bind"), ["c1/w0", "c1/w1"], "{}", r.decisions);
}

/// A PodGroup without Pods is what the scheduler sees of a VolcanoJob before its
/// controller creates pods: enqueue moves it to Inqueue when its minResources fit
/// the queue's capability (pg-small: 2 CPUs of 4), and leaves it Pending when they do
/// not (pg-big: 6 CPUs). The quota keys Volcano's job controller writes beside the
/// resources (`count/pods`, `requests.cpu`, `requests.memory`) are not resources.
#[test]
fn podgroups_without_pods_take_part_in_enqueue() {
    let min = |cpu: u32| {
        format!(
            "{{minMember: 2, minResources: {{count/pods: '2', cpu: '{cpu}', memory: 2Gi, pods: '2', requests.cpu: '{cpu}', requests.memory: 2Gi}}}}"
        )
    };
    let objects = group("pg-small", &min(2), "") + &group("pg-big", &min(6), "");
    let queues = "    - {name: default, capability: {cpu: 4, memory: 16Gi}}\n";
    let r = run(
        "      - {name: n1, cpu: 16, memory: 64Gi}\n",
        queues,
        "enqueue, allocate",
        &[&["gang"], &["proportion"]],
        &objects,
    );
    assert_eq!(r.of("phase"), ["c1/pg-small=Inqueue"], "{}", r.decisions);
    assert!(r.of("bind").is_empty());
    assert!(r.stderr.contains("2 jobs have no run time"), "{}", r.stderr);
}

/// `lahar.io/replicas` says how many pods the group's controller will create; each
/// requests minResources / minMember (3 pods of 1 CPU here), named `<group>-pod-<i>`.
#[test]
fn podgroups_without_pods_can_say_how_many_pods_come() {
    let rest = "  annotations: {lahar.io/replicas: '3'}\n";
    let objects = group("pg", "{minMember: 2, minResources: {cpu: '2', memory: 2Gi}}", rest);
    let r = run("      - {name: n1, cpu: 16, memory: 64Gi}\n", ONE_QUEUE, "enqueue, allocate", &[&["gang"]], &objects);
    assert_eq!(r.of("bind"), ["c1/pg-pod-0", "c1/pg-pod-1", "c1/pg-pod-2"], "{}", r.decisions);
    // On a PodGroup whose Pods are given, the annotation would be ignored: an error.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.yaml"), objects + &pod("p0", "pg", 1, "", "")).unwrap();
    let text =
        scenario("    nodes:\n      - {name: n1, cpu: 16, memory: 64Gi}", "  workload:\n    - manifests: m.yaml\n");
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().code(2).stderr(predicates::str::contains(
        "metadata.annotations.lahar.io/replicas: the PodGroup has 1 Pods in the manifests",
    ));
}

/// `status.phase` is the group's starting phase: an Inqueue group is admitted
/// already, so allocate places it although enqueue would refuse it now (its
/// minResources, 100 CPUs, exceed the queue's capability); the same group without
/// a status starts Pending and enqueue keeps it there.
#[test]
fn status_phase_is_the_starting_phase() {
    let pods = pod("p1", "pg1", 1, "", "") + &pod("p2", "pg1", 1, "", "");
    let spec = "{minMember: 2, minResources: {cpu: '100'}}";
    let queues = "    - {name: default, capability: {cpu: 8, memory: 64Gi}}\n";
    let node = "      - {name: n1, cpu: 4, memory: 8Gi}\n";
    let tiers: &[&[&str]] = &[&["gang"], &["proportion"]];
    let inqueue = group("pg1", spec, "status: {phase: Inqueue}\n") + &pods;
    let r = run(node, queues, "enqueue, allocate", tiers, &inqueue);
    assert_eq!(r.of("bind"), ["c1/p1", "c1/p2"], "{}", r.decisions);
    let pending = group("pg1", spec, "") + &pods;
    let r = run(node, queues, "enqueue, allocate", tiers, &pending);
    assert!(r.of("bind").is_empty() && r.of("phase").is_empty(), "{}", r.decisions);
}

/// `preemptionPolicy: Never` (Volcano's reclaim_test "Reclaim succeeds for second
/// task when first task has PreemptionPolicy=Never", with its names): reclaim passes
/// over the preemptor whose pod says Never and reclaims for the second one, which
/// evicts the one preemptable victim. When both preemptors say Never (the second
/// through its PriorityClass, as Kubernetes' admission sets it) nothing is evicted.
#[test]
fn preemption_policy_never_is_passed_over_by_reclaim() {
    let queues = "    - {name: q1, weight: 1}\n    - {name: q2, weight: 1}\n";
    let node = "      - {name: n1, cpu: 2, memory: 2G, pods: 10}\n";
    // The test's tier: no plugin votes on JobPipelined, so a job's statement commits
    // with fewer pods than minMember.
    let tiers: &[&[&str]] = &[&[
        "conformance",
        "{name: gang, enableJobPipelined: false}",
        "{name: proportion, enableJobPipelined: false}",
        "{name: priority, enableJobPipelined: false}",
    ]];
    let classes = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low-priority}\nvalue: 100\n---\n\
        apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high-priority-no-preempt}\nvalue: 1000\npreemptionPolicy: Never\n---\n";
    let preemptable = |b: bool| format!("    volcano.sh/preemptable: '{b}'\n");
    let objects = |second: &str| {
        classes.to_string()
            + &group(
                "pg-victim",
                "{minMember: 1, queue: q1, priorityClassName: low-priority}",
                "status: {phase: Running}\n",
            )
            + &pod("victim-pod-no", "pg-victim", 1, &preemptable(false), "  nodeName: n1\n")
            + &pod("victim-pod", "pg-victim", 1, &preemptable(true), "  nodeName: n1\n")
            + &group(
                "pg-preemptor",
                "{minMember: 2, queue: q2, priorityClassName: high-priority-no-preempt}",
                "status: {phase: Inqueue}\n",
            )
            + &pod("preemptor-task1-non-preemptable", "pg-preemptor", 1, "", "  preemptionPolicy: Never\n")
            + &pod("preemptor-task2-preemptable", "pg-preemptor", 1, "", second)
    };
    let r = run(node, queues, "reclaim", tiers, &objects(""));
    assert_eq!(r.of("evict"), ["c1/victim-pod"], "{}", r.decisions);
    let r = run(node, queues, "reclaim", tiers, &objects("  priorityClassName: high-priority-no-preempt\n"));
    assert!(r.of("evict").is_empty(), "{}", r.decisions);
}

/// Objects with no lahar annotation at all run a scheduling study under
/// `--sessions 1`: the jobs have no run time, one warning counts them, and the
/// bindings are made (and shown under the objects' own names).
#[test]
fn objects_without_lahar_annotations_under_one_session() {
    let objects = group("pg1", "{minMember: 1}", "") + &pod("alone", "pg1", 1, "", "");
    let r = run("      - {name: n1, cpu: 4, memory: 8Gi}\n", ONE_QUEUE, "enqueue, allocate", &[&["gang"]], &objects);
    assert_eq!(r.of("bind"), ["c1/alone"], "{}", r.decisions);
    assert!(r.stderr.contains("warning: ") && r.stderr.contains("1 job has no run time"), "{}", r.stderr);
    assert!(r.jobs.lines().nth(1).unwrap().starts_with("c1/pg1,default,"), "{}", r.jobs);
}

/// A Pod without a PodGroup goes to the queue of its
/// `scheduling.volcano.sh/queue-name` annotation, as Volcano's PodGroup controller
/// sets its shadow PodGroup's queue (it used to land in `default`); an unknown
/// queue there is refused at the annotation.
#[test]
fn bare_pods_take_their_queue_annotation() {
    let bare = |queue: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: alone\n  namespace: c1\n  annotations: {{scheduling.volcano.sh/queue-name: {queue}}}\nspec:\n  containers: [{{name: c, resources: {{requests: {{cpu: 1}}}}}}]\n"
        )
    };
    let queues = "    - {name: default}\n    - {name: team}\n";
    let r = run("      - {name: n1, cpu: 4, memory: 8Gi}\n", queues, "enqueue, allocate", &[&["gang"]], &bare("team"));
    assert_eq!(r.of("bind"), ["c1/alone"], "{}", r.decisions);
    assert!(r.jobs.lines().nth(1).unwrap().starts_with("c1/alone,team,"), "{}", r.jobs);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.yaml"), bare("nope")).unwrap();
    let text = scenario(
        "    nodes:\n      - {name: n1, cpu: 4, memory: 8Gi}",
        "  queues:\n    - {name: default}\n  workload:\n    - manifests: m.yaml\n",
    );
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let out = lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("m.yaml:6:51:")
            && err.contains("metadata.annotations.scheduling.volcano.sh/queue-name: queue `nope` does not exist"),
        "{err}"
    );
}

/// Pods of one role that differ only in their tolerations are two tasks, each
/// with its own: on two 1-CPU nodes, n0 tainted `NoSchedule` at 0 s, the gang's
/// pod `a` (no toleration) goes to n1 and `b` (tolerating) to n0. When the
/// pods were grouped without comparing tolerations, `b` took `a`'s (none), found
/// no node, and the gang bound nothing.
#[test]
fn pods_that_differ_in_tolerations_keep_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let tolerate = "  tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]\n";
    let objects = group("pg1", "{minMember: 2}", "") + &pod("a", "pg1", 1, "", "") + &pod("b", "pg1", 1, "", tolerate);
    std::fs::write(dir.path().join("m.yaml"), objects).unwrap();
    let text = scenario(
        "    nodes:\n      - {name: n0, cpu: 1, memory: 8Gi}\n      - {name: n1, cpu: 1, memory: 8Gi}",
        "  queues:\n    - {name: default}\n  workload:\n    - manifests: m.yaml\n  timeline:\n    - {at: 0s, taint: n0, key: gpu, effect: NoSchedule}\n",
    );
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let out = dir.path().join("o");
    lahar().args(["run", "-q"]).arg(dir.path().join("s.yaml")).arg("--out").arg(&out).assert().success();
    let decisions = std::fs::read_to_string(out.join("decisions.csv")).unwrap();
    let binds: Vec<(String, String)> = decisions
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect::<Vec<_>>())
        .filter(|f| f[3] == "bind")
        .map(|f| (f[5].clone(), f[6].clone()))
        .collect();
    let want = [("c1/a", "n1"), ("c1/b", "n0")].map(|(p, n)| (p.to_string(), n.to_string()));
    assert_eq!(binds, want, "{decisions}");
}
