//! Volcano's HyperJob (issue 45, item 1): one VolcanoJob per replica of each
//! replicated job, as volcano-global's HyperJob controller splits it, all on
//! the one simulated cluster. The design's two published examples
//! (examples/manifests/hyperjob/) are counted here from the files by hand.

use super::*;
use lahar_core::model::job::JobSpec;

fn load(file: &str, text: &str) -> Result<(Vec<JobSpec>, lahar::scenario::Scenario), String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(file), text).unwrap();
    let sc = scenario(
        "    nodes:\n      - {name: n0, cpu: 1000, memory: 8Ti, gpus: 16}\n",
        &format!("  workload:\n    - manifests: {file}\n"),
    );
    let s = lahar::scenario::load_str(&sc, "s.yaml", dir.path()).map_err(|e| e.to_string())?;
    Ok((s.jobs(), s))
}

fn example(file: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests/hyperjob").join(file))
        .unwrap()
}

#[test]
fn the_published_hyperjobs_split_into_volcano_jobs() {
    // Use case 1: replicatedJob `trainer`, 2 replicas of a 128-pod, 1-GPU task.
    let (jobs, _) = load("llm-training.yaml", &example("llm-training.yaml")).unwrap();
    let got: Vec<(&str, &str, u32, u32, i64)> = jobs
        .iter()
        .map(|j| (j.name.as_str(), &*j.kind, j.min_available, j.tasks[0].replicas, j.tasks[0].requests.gpu_milli()))
        .collect();
    assert_eq!(
        got,
        [
            ("llm-training-trainer-0", "VolcanoJob", 128, 128, 1000),
            ("llm-training-trainer-1", "VolcanoJob", 128, 128, 1000)
        ]
    );
    // The pods are the VolcanoJob's (the HyperJob's labels are on the
    // VolcanoJob, which its controller does not copy to pods).
    let labels = jobs[1].pod_labels(0, "default");
    assert!(labels.iter().any(|(a, b)| a == "volcano.sh/job-name" && b == "llm-training-trainer-1"), "{labels:?}");
    assert_eq!(jobs[0].pod_name(0, 127), "llm-training-trainer-0-worker-127");
    // Use case 2: two replicated jobs of one 64-pod job each, on nodes by
    // hardware type, asking for `ascend910c`.
    let (jobs, s) = load("ascend.yaml", &example("ascend-heterogeneous-training.yaml")).unwrap();
    let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["ascend-heterogeneous-training-trainer-910b-0", "ascend-heterogeneous-training-trainer-910c-0"]);
    let npu = s.cluster.resource_names.dim("ascend910c").expect("registered");
    for (j, hw) in jobs.iter().zip(["Ascend910B", "Ascend910C"]) {
        assert_eq!((j.min_available, j.tasks[0].replicas, j.tasks[0].requests.get(npu)), (64, 64, 1000));
        assert_eq!(j.tasks[0].node_label_in, [("hardware-type".to_string(), vec![hw.to_string()])]);
    }
}

const HJ: &str = "apiVersion: training.volcano.sh/v1alpha1
kind: HyperJob
metadata: {name: h, annotations: {lahar.io/duration: 30m}}
spec:
  minAvailable: 1
  replicatedJobs:
  - name: a
    replicas: 3
    clusterNames: [c1, c2]
    templateSpec:
      minAvailable: 2
      tasks:
      - {name: w, replicas: 2, template: {spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: 4}}}]}}}
";

#[test]
fn each_child_is_a_volcano_job_that_runs_alone() {
    let (jobs, _) = load("h.yaml", HJ).unwrap();
    assert_eq!(jobs.len(), 3);
    assert!(
        jobs.iter().all(|j| j.min_available == 2 && j.duration == lahar_core::util::time::SimDuration::from_secs(1800))
    );
    // 16 GPUs: two 8-GPU children at once, the third after them.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("h.yaml"), HJ).unwrap();
    let sc = scenario(
        "    nodes:\n      - {name: n0, cpu: 100, memory: 1Ti, gpus: 16}\n",
        "  workload:\n    - manifests: h.yaml\n",
    );
    std::fs::write(dir.path().join("s.yaml"), sc).unwrap();
    let out = dir.path().join("out");
    lahar().args(["run", "-q"]).arg(dir.path().join("s.yaml")).arg("--out").arg(&out).assert().success();
    let rows = job_rows(&std::fs::read_to_string(out.join("jobs.csv")).unwrap());
    assert_eq!(rows, ["h-a-0,0,0,1800,Completed", "h-a-1,0,0,1800,Completed", "h-a-2,0,1800,3600,Completed"]);
}

#[test]
fn bad_hyperjobs_are_refused_where_they_are_wrong() {
    let cases = [
        (HJ.replace("replicas: 3", "replicas: 3\n    replicaz: 1"), "spec.replicatedJobs[0].replicaz: unknown field"),
        (
            HJ.replace("  - name: a\n", "  - replicas: 1\n    templateSpec: {tasks: []}\n  - name: a\n"),
            "spec.replicatedJobs[0].name: required",
        ),
        (
            HJ.replace("{name: w, replicas: 2,", "{name: w, replicas: -2,"),
            "spec.replicatedJobs[0].templateSpec.tasks[0].replicas",
        ),
        (HJ.replace("replicas: 3", "replicas: 200000"), "200000 VolcanoJobs; a HyperJob makes at most 100000"),
        (
            format!(
                "{HJ}  - name: a\n    templateSpec: {{tasks: [{{name: w, replicas: 1, template: {{spec: {{containers: [{{name: c}}]}}}}}}]}}\n"
            ),
            "`a` is named twice",
        ),
    ];
    for (text, want) in cases {
        let e = load("h.yaml", &text).unwrap_err();
        assert!(e.contains(want), "want {want:?} in\n{e}");
    }
}
