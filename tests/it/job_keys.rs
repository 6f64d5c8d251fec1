//! The keys Volcano's job controller copies from a VolcanoJob onto its pods
//! (`createJobPod`, job_controller_util.go): the job's `volcano.sh/preemptable`,
//! `volcano.sh/cooldown-time` and `volcano.sh/revocable-zone` annotations (and
//! its `preemptable` and `cooldown-time` labels) replace the template's, so the
//! scheduler reads them on every pod; a pod's `volcano.sh/preemptable` is read
//! as Go's `strconv.ParseBool` reads it. Hand-checked through the binary: a
//! low-priority job fills a 4-CPU node, a high-priority pod arrives at 10 min,
//! and preempt evicts a low pod only when the low pods are preemptable.

use super::*;

const CLASSES: &str = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 10\n---\n";

/// The low job (4 one-CPU pods, any one enough) with more job annotations
/// `job_ann` (flow-mapping entries after a comma), job labels `job_labels` (a
/// flow mapping) and template metadata `pod_meta` (a flow mapping), and the
/// high job.
fn objects(job_ann: &str, job_labels: &str, pod_meta: &str) -> String {
    let job = |name: &str, replicas: u32, class: &str, ann: &str, labels: &str, pod_meta: &str| {
        format!(
            "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: {name}\n  annotations: {{lahar.io/duration: 2h{ann}}}\n  labels: {labels}\nspec:\n  priorityClassName: {class}\n  minAvailable: 1\n  tasks:\n    - name: w\n      replicas: {replicas}\n      template:\n        metadata: {pod_meta}\n        spec:\n          priorityClassName: {class}\n          containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]\n---\n"
        )
    };
    let low = job("low", 4, "low", job_ann, job_labels, pod_meta);
    let high = job("high", 1, "high", ", lahar.io/submit-at: 10m", "{}", "{}");
    format!("{CLASSES}{low}{high}")
}

/// The pods evicted.
fn evicted(objects: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.yaml"), objects).unwrap();
    let conf = "      actions: \"enqueue, allocate, preempt\"\n      tiers:\n      - plugins:\n        - name: priority\n      - plugins:\n        - name: predicates\n";
    let text = scenario(
        "    nodes:\n      - {name: n0, cpu: 4, memory: 16Gi}",
        &format!("  scheduler:\n    inline: |\n{conf}  workload:\n    - manifests: m.yaml\n"),
    );
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let out = dir.path().join("o");
    lahar().arg("run").arg("-q").arg(dir.path().join("s.yaml")).arg("--out").arg(&out).assert().success();
    std::fs::read_to_string(out.join("decisions.csv"))
        .unwrap()
        .lines()
        .filter(|l| l.split(',').nth(3) == Some("evict"))
        .map(|l| l.split(',').nth(5).unwrap().to_string())
        .collect()
}

#[test]
fn the_jobs_preemptable_reaches_its_pods() {
    // Preemptable by default: one low pod makes room.
    assert_eq!(evicted(&objects("", "{}", "{}")), ["default/low-w-3"]);
    // The job says no (annotation or label): its pods are no victims, whatever
    // the template says.
    let annotated = ", volcano.sh/preemptable: \"false\"";
    assert!(evicted(&objects(annotated, "{}", "{annotations: {volcano.sh/preemptable: \"true\"}}")).is_empty());
    let labelled = "{volcano.sh/preemptable: \"false\"}";
    assert!(evicted(&objects("", labelled, "{labels: {volcano.sh/preemptable: \"true\"}}")).is_empty());
    // A pod's own annotation beats the job's label (annotation first).
    assert_eq!(evicted(&objects("", labelled, "{annotations: {volcano.sh/preemptable: \"true\"}}")).len(), 1);
}

#[test]
fn a_pods_preemptable_reads_as_go_reads_it() {
    assert_eq!(evicted(&objects("", "{}", "{annotations: {volcano.sh/preemptable: \"True\"}}")).len(), 1);
    assert_eq!(evicted(&objects("", "{}", "{annotations: {volcano.sh/preemptable: \"1\"}}")).len(), 1);
    assert!(evicted(&objects("", "{}", "{annotations: {volcano.sh/preemptable: \"F\"}}")).is_empty());
    // Not a Go boolean: not preemptable (Volcano logs it and says false).
    assert!(evicted(&objects("", "{}", "{annotations: {volcano.sh/preemptable: \"yes\"}}")).is_empty());
}
