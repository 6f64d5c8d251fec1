//! Sub-groups (issue 13, item 5): a VolcanoJob task's `partitionPolicy`, a
//! PodGroup's `subGroupPolicy` and a compact task's `partitionPolicy` become
//! sub-jobs, each a gang of its own with its own network topology; and
//! `highestTierName` names a tier by the HyperNodes' `tierName`.

use super::*;
use lahar::scenario::load_file;
use lahar_core::model::job::NetworkTopology;
use lahar_core::model::subgroup::{SubGroupPolicy, SubJobSpec, TaskSubJobs};

/// pod → (node, start) of a run's pods.csv in `dir`.
fn pods(dir: &Path) -> std::collections::BTreeMap<String, (String, String)> {
    let mut r = csv::Reader::from_path(dir.join("pods.csv")).expect("pods.csv");
    let h = r.headers().expect("header").clone();
    let col = |n: &str| h.iter().position(|x| x == n).expect("column");
    let (p, n, s) = (col("pod"), col("node"), col("start_s"));
    r.records().map(|x| x.expect("row")).map(|x| (x[p].to_string(), (x[n].to_string(), x[s].to_string()))).collect()
}

fn run_to(scenario: &Path, dir: &Path) {
    lahar().arg("run").arg(scenario).arg("--out").arg(dir).assert().success();
}

/// The user guide's section 3.3.2 job (examples/manifests/partition/), field by
/// field, and its run: partition 0 (t0-0..3) in hypernode0, partition 1
/// (t0-4..7) in hypernode1, all at once, as the guide shows.
///
/// By hand: the job may span tier 2, so its gradient starts at tier 1, where
/// hypernode0 and hypernode1 each hold its minimum (4 whole nodes). In
/// hypernode0 the first sub-job (partition 0: no policy asks for a minimum of
/// partitions, so the lower match index leads) fills it and makes the job
/// ready; hypernode1 does the same with the same score, and the first wins. The
/// next step finds hypernode0 full for partition 1 and places it in hypernode1.
#[test]
fn user_guide_partition_example() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests/partition-scenario.yaml");
    let s = load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    let j = &s.jobs()[0];
    // minAvailable 4 as written; the task's minimum defaults to its replicas (the
    // webhook: no minPartitions).
    assert_eq!(
        (j.name.as_str(), &*j.kind, j.min_available, j.tasks[0].min_available),
        ("network-topology-job", "VolcanoJob", 4, 8)
    );
    assert_eq!(j.network_topology, Some(NetworkTopology { hard: true, highest_tier_allowed: Some(2) }));
    let g = j.sub_groups.as_deref().expect("sub-groups");
    let hard1 = Some(NetworkTopology { hard: true, highest_tier_allowed: Some(1) });
    assert_eq!(
        g.policies,
        [SubGroupPolicy { name: "t0".into(), size: Some(4), min_groups: 0, network_topology: hard1 }]
    );
    assert_eq!(
        g.sub_jobs,
        [
            SubJobSpec { policy: Some(0), match_index: 0, key: "/t0-0".into() },
            SubJobSpec { policy: Some(0), match_index: 1, key: "/t0-1".into() }
        ]
    );
    assert_eq!(g.tasks, [TaskSubJobs::Partitions { first: 0, size: 4 }]);
    let dir = tempfile::tempdir().unwrap();
    run_to(&p, dir.path());
    let pods = pods(dir.path());
    for i in 0..8 {
        let (node, start) = &pods[&format!("default/network-topology-job-t0-{i}")];
        let n: u32 = node.trim_start_matches("node").parse().unwrap();
        assert_eq!((n / 4, start.as_str()), (i / 4, "0"), "t0-{i} on {node}");
    }
}

/// The guide's section 3.3.1 job (hard tier 1, 8 pods of whole nodes, minimum 4)
/// on the same network. The guide shows 4 pods running in one tier-1
/// HyperNode; Volcano's source since commit 1dd8895 (January 2026) asks a
/// sub-job's HyperNode to hold all its pending pods (`SubJobInfo.GetMinResources`),
/// and a job without sub-groups is one such sub-job: no tier-1 HyperNode holds 8
/// whole nodes, so the job waits. lahar follows the source (docs/volcano.md).
#[test]
fn user_guide_elastic_hard_job_waits_as_the_source_decides() {
    assert!(elastic_hard_job(8).values().all(|(node, _)| node.is_empty()));
    // Twin: with 4 replicas the sub-job's pending pods fit one tier-1 HyperNode
    // (4 whole nodes): all 4 start at 0, one per node of node0-3 or of node4-7.
    let pods = elastic_hard_job(4);
    let nodes: Vec<u32> = pods.values().map(|(node, _)| node.trim_start_matches("node").parse().unwrap()).collect();
    assert_eq!(nodes.len(), 4, "{pods:?}");
    assert_eq!(nodes.iter().collect::<std::collections::BTreeSet<_>>().len(), 4, "{pods:?}");
    assert!(nodes.iter().all(|n| n / 4 == nodes[0] / 4), "one HyperNode: {pods:?}");
    assert!(pods.values().all(|(_, start)| start == "0"), "{pods:?}");
}

/// pods.csv of the guide's section 3.3.1 job with `replicas` pods, over 2 hours.
fn elastic_hard_job(replicas: u32) -> std::collections::BTreeMap<String, (String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests");
    let dir = tempfile::tempdir().unwrap();
    let job = std::fs::read_to_string(root.join("partition/network-topology-job.yaml"))
        .unwrap()
        .replace("highestTierAllowed: 2", "highestTierAllowed: 1")
        .replace(
            "      partitionPolicy:\n        totalPartitions: 2\n        partitionSize: 4\n        networkTopology:\n          mode: hard\n          highestTierAllowed: 1\n",
            "",
        )
        .replace("replicas: 8", &format!("replicas: {replicas}"));
    assert!(!job.contains("partitionPolicy") && job.contains(&format!("replicas: {replicas}")));
    std::fs::write(dir.path().join("job.yaml"), job).unwrap();
    let text = std::fs::read_to_string(root.join("partition-scenario.yaml"))
        .unwrap()
        .replace("partition/hypernodes.yaml", &root.join("partition/hypernodes.yaml").display().to_string())
        .replace("../volcano/published", &root.join("../volcano/published").display().to_string())
        .replace("partition/network-topology-job.yaml", "job.yaml")
        .replace("spec:\n  seed: 1", "spec:\n  seed: 1\n  horizon: 2h");
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    run_to(&dir.path().join("s.yaml"), &dir.path().join("out"));
    pods(&dir.path().join("out"))
}

const NODES: &str = "    nodes:\n      - {name: n0, cpu: 1, memory: 1Gi}\n      - {name: n1, cpu: 1, memory: 1Gi}\n      - {name: n2, cpu: 1, memory: 1Gi}\n      - {name: n3, cpu: 1, memory: 1Gi}\n    hyperNodes:\n      - {name: s0, tier: 1, tierName: rack, members: [n0, n1]}\n      - {name: s1, tier: 1, tierName: rack, members: [n2, n3]}\n      - {name: s2, tier: 2, tierName: zone, members: [s0, s1]}";

fn conf() -> String {
    "  scheduler:\n    inline: |\n      actions: \"enqueue, allocate, backfill\"\n      tiers:\n      - plugins:\n        - name: priority\n        - name: gang\n      - plugins:\n        - name: predicates\n        - name: network-topology-aware\n".into()
}

/// A compact job in two partitions over sessions, by hand. n2 and n3 (leaf s1)
/// are held until 100 s by a running job. At 10 s the job (4 pods of 1 cpu, two
/// partitions of two, `minPartitions: 1`, each partition within tier 1) has
/// its required partition 0 placed in s0 — s1 has no room for a partition — and
/// is ready with one partition: it starts at 10 s. Partition 1 waits for s1 and
/// starts at 100 s, when the blocker's pods end. The job's run time counts from
/// 10 s: its pods end at 3610 s.
#[test]
fn a_partitioned_compact_job_grows_by_partition() {
    let rest = format!(
        "{}  workload:\n    - jobs:\n      - {{name: blocker, duration: 100s, tasks: [{{name: b, replicas: 2, resources: {{cpu: 1, memory: 1Gi}}}}], running: {{b: [n2, n3]}}}}\n      - {{name: llm, submitAt: 10s, minAvailable: 2, duration: 1h, tasks: [{{name: w, replicas: 4, resources: {{cpu: 1, memory: 1Gi}}, partitionPolicy: {{totalPartitions: 2, partitionSize: 2, minPartitions: 1, networkTopology: {{mode: hard, highestTierAllowed: 1}}}}}}]}}\n",
        conf()
    );
    let (dir, p) = write_scenario(&scenario(NODES, &rest));
    run_to(&p, &dir.path().join("out"));
    let pods = pods(&dir.path().join("out"));
    let at = |i: u32| pods[&format!("default/llm-w-{i}")].clone();
    for i in [0, 1] {
        assert_eq!(at(i).1, "10", "w-{i}");
        assert!(["n0", "n1"].contains(&at(i).0.as_str()), "w-{i} in s0: {:?}", at(i));
    }
    for i in [2, 3] {
        assert_eq!(at(i).1, "100", "w-{i}");
        assert!(["n2", "n3"].contains(&at(i).0.as_str()), "w-{i} in s1: {:?}", at(i));
    }
    let jobs = std::fs::read_to_string(dir.path().join("out/jobs.csv")).unwrap();
    assert!(jobs.lines().any(|l| l.starts_with("llm,") && l.contains(",3610,")), "{jobs}");
}

/// `highestTierName` names a tier by `tierName`: `rack` is tier 1, so a 3-pod
/// job of 1-cpu pods fits no rack and waits, where `zone` (tier 2) runs it.
#[test]
fn highest_tier_name_is_the_named_tier() {
    let run = |name: &str| {
        let rest = format!("{}  horizon: 1h\n  workload:\n    - manifests: job.yaml\n", conf());
        let (dir, p) = write_scenario(&scenario(NODES, &rest));
        let job = format!(
            "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: j, annotations: {{lahar.io/duration: 10m}}}}\nspec:\n  networkTopology: {{mode: hard, highestTierName: {name}}}\n  tasks:\n    - {{name: t, replicas: 3, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]}}}}}}\n"
        );
        std::fs::write(dir.path().join("job.yaml"), job).unwrap();
        let s = load_file(&p).unwrap_or_else(|e| panic!("{e}"));
        let tier = s.jobs()[0].network_topology.as_ref().and_then(|t| t.highest_tier_allowed);
        run_to(&p, &dir.path().join("out"));
        let started = pods(&dir.path().join("out")).values().filter(|(n, _)| !n.is_empty()).count();
        (tier, started)
    };
    assert_eq!(run("rack"), (Some(1), 0));
    assert_eq!(run("zone"), (Some(2), 3));
}

/// Bad sub-group and tier-name inputs, through the binary: exit 2, located, as
/// Volcano's webhook (or lahar, where Volcano would log and go on) refuses them.
#[test]
fn bad_sub_groups_are_located_errors() {
    let vcjob = |task_extra: &str, spec_extra: &str| {
        format!(
            "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: j, annotations: {{lahar.io/duration: 10m}}}}\nspec:\n{spec_extra}  tasks:\n    - name: t\n      replicas: 4\n{task_extra}      template: {{spec: {{containers: [{{name: c}}]}}}}\n"
        )
    };
    let pg = |policy: &str| {
        format!(
            "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {{name: g, annotations: {{lahar.io/duration: 1m}}}}\nspec:\n  minMember: 1\n  subGroupPolicy:\n{policy}"
        )
    };
    let cases: Vec<(String, &str)> = vec![
        (
            vcjob("      partitionPolicy: {totalPartitions: 3, partitionSize: 2}\n", ""),
            "m.yaml:8:42: document 1: spec.tasks[0].partitionPolicy: replicas (4) must equal totalPartitions × partitionSize (3 × 2 = 6)",
        ),
        (
            vcjob("      partitionPolicy: {totalPartitions: 0, partitionSize: 2}\n", ""),
            "spec.tasks[0].partitionPolicy.totalPartitions: must be greater than 0, got 0",
        ),
        (
            vcjob("      partitionPolicy: {partitionSize: 2}\n", ""),
            "spec.tasks[0].partitionPolicy.totalPartitions: required: an integer greater than 0",
        ),
        (
            vcjob(
                "      minAvailable: 4\n      partitionPolicy: {totalPartitions: 2, partitionSize: 2, minPartitions: 1}\n",
                "",
            ),
            "spec.tasks[0].partitionPolicy: the task's minAvailable (4) must equal minPartitions × partitionSize (1 × 2 = 2)",
        ),
        (
            vcjob("      partitionPolicy: {totalPartitions: 2, partitionSize: 2, minPartitions: 3}\n", ""),
            "spec.tasks[0].partitionPolicy.minPartitions: must not exceed totalPartitions (2), got 3",
        ),
        (
            vcjob("", "  networkTopology: {mode: hard, highestTierName: spine}\n"),
            "spec.networkTopology.highestTierName: no HyperNode tier is named `spine`; the cluster's tiers: rack (tier 1), zone (tier 2)",
        ),
        (
            vcjob("", "  networkTopology: {mode: hard, highestTierAllowed: 1, highestTierName: rack}\n"),
            "spec.networkTopology.highestTierName: must not specify `highestTierAllowed` and `highestTierName` simultaneously",
        ),
        (
            vcjob(
                "      partitionPolicy: {totalPartitions: 2, partitionSize: 2, networkTopology: {mode: strict}}\n",
                "",
            ),
            "spec.tasks[0].partitionPolicy.networkTopology.mode: expected `hard` or `soft`, got `strict`",
        ),
        (
            pg("    - {name: a, subGroupSize: 0}\n"),
            "spec.subGroupPolicy[0].subGroupSize: must be an integer ≥ 1, got 0",
        ),
        (
            pg("    - {name: a, matchLabelKeys: [x]}\n    - {name: a, matchLabelKeys: [y]}\n"),
            "spec.subGroupPolicy[1].name: policy `a` is defined twice",
        ),
        (
            pg("    - {name: a, matchLabelKey: [x]}\n"),
            "spec.subGroupPolicy[0].matchLabelKey: unknown field `matchLabelKey`",
        ),
    ];
    for (manifest, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.yaml"), manifest).unwrap();
        let text = scenario(NODES, "  workload:\n    - manifests: m.yaml\n");
        std::fs::write(dir.path().join("s.yaml"), text).unwrap();
        let out = lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(want), "want {want:?} in:\n{err}");
    }
    // A compact task, the same checks.
    let rest = "  workload:\n    - jobs:\n      - {name: c, duration: 1m, tasks: [{name: w, replicas: 4, resources: {cpu: 1}, partitionPolicy: {totalPartitions: 3, partitionSize: 2}}]}\n";
    let (_d, p) = write_scenario(&scenario(NODES, rest));
    let out = lahar().arg("validate").arg(&p).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("spec.workload[0].jobs[0].tasks[0].partitionPolicy: replicas (4) must equal totalPartitions × partitionSize (3 × 2 = 6)"),
        "{err}"
    );
}
