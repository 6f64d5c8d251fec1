//! The warnings channel: input lahar lets through but reports — rows skipped, jobs
//! that can never be placed — printed once at the end of `validate` and `run`,
//! listed in summary.json, and errors under `--strict`.

use super::*;
use assert_cmd::Command;

const NODES: &str = "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi, gpus: 8}\n      - {name: n1, cpu: 16, memory: 64Gi, gpus: 8}";

fn jobs(list: &str) -> String {
    scenario(NODES, &format!("  workload:\n    - jobs:\n{list}"))
}

/// Runs `validate`, `run` and both with `--strict` on `text`: the first two succeed
/// and print every needle as a warning; the strict ones exit 2 and print them as
/// errors. Returns the run's summary.json.
fn warns(text: &str, needles: &[&str]) -> serde_json::Value {
    let (d, p) = write_scenario(text);
    let out_dir = d.path().join("out");
    for sub in ["validate", "run"] {
        let mut c = Command::new(env!("CARGO_BIN_EXE_lahar"));
        c.arg(sub).arg(&p);
        if sub == "run" {
            c.arg("-q").arg("--out").arg(&out_dir);
        }
        let out = c.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(0), "{sub}: stderr:\n{err}");
        for n in needles {
            assert!(err.contains(&format!("warning: {n}")) || err.contains(n), "{sub}: stderr lacks {n:?}:\n{err}");
        }
        assert_eq!(err.matches("warning: ").count(), needles.len().min(err.matches("warning: ").count()));
        let strict = Command::new(env!("CARGO_BIN_EXE_lahar")).arg(sub).arg(&p).arg("--strict").output().unwrap();
        let serr = String::from_utf8_lossy(&strict.stderr).to_string();
        assert_eq!(strict.status.code(), Some(2), "{sub} --strict: stderr:\n{serr}");
        assert!(serr.contains("--strict: warnings are errors") && serr.contains("error: "), "{serr}");
        for n in needles {
            assert!(serr.contains(n), "{sub} --strict: stderr lacks {n:?}:\n{serr}");
        }
        assert!(!serr.contains("panicked"), "{serr}");
    }
    serde_json::from_str(&std::fs::read_to_string(out_dir.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn a_pod_no_node_can_hold_stays_pending_with_a_warning() {
    let text = jobs(
        "      - {name: ok, duration: 1h, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 1}}]}\n      - {name: big, duration: 1h, tasks: [{name: worker, replicas: 2, resources: {nvidia.com/gpu: 16}}]}\n      - {name: sel, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 1}, nodeSelector: {zone: moon}}]}\n",
    );
    let s = warns(
        &text,
        &[
            "scenario.yaml:12:43: spec.workload[0].jobs[1].tasks[0]: job `big` task `worker`: a pod requests 16 GPUs, 0 CPU, 0 bytes of memory, but no node can hold it (largest node: 8 GPUs, 16 CPU, 68719476736 bytes of memory, 110 pods); the job stays pending (2 in all)",
        ],
    );
    let w = &s["warnings"];
    assert_eq!(w.as_array().unwrap().len(), 1, "{w}");
    assert_eq!(w[0]["kind"], "unschedulable-pods");
    assert_eq!(w[0]["count"], 2);
    assert_eq!(w[0]["path"], "spec.workload[0].jobs[1].tasks[0]");
    assert!(w[0]["location"].as_str().unwrap().ends_with("scenario.yaml:12:43"), "{w}");
    // The run still has all three jobs: one completed, two pending at the end.
    assert_eq!(s["metrics"]["jobs"], 3);
    assert_eq!(s["metrics"]["completed"], 1);
    assert_eq!(s["metrics"]["unfinished"], 2);
}

/// A pod asking for an extended resource no node has (a KubeRay TPU sample's
/// `google.com/tpu`): the warning names it, which the GPU/CPU/memory words
/// leave out.
#[test]
fn an_extended_resource_no_node_has_is_named() {
    let text = jobs(
        "      - {name: tpu, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 1, google.com/tpu: 4}}]}\n",
    );
    warns(
        &text,
        &[
            "job `tpu` task `w`: a pod requests 0 GPUs, 1 CPU, 0 bytes of memory, but no node can hold it (largest node: 8 GPUs, 16 CPU, 68719476736 bytes of memory, 110 pods; it asks for 4 google.com/tpu (at most 0 on a node)); the job stays pending",
        ],
    );
}

/// A cluster without nodes is an enqueue-only study (issue 12, item 4): a warning,
/// not an error; jobs are admitted (or not) and never placed, and no
/// unschedulable-pods warning repeats what the empty cluster says.
#[test]
fn an_empty_cluster_is_a_warning() {
    let text = scenario(
        "    nodes: []",
        "  workload:\n    - jobs:\n      - {name: a, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 1}}]}\n",
    );
    let s = warns(
        &text,
        &[
            "scenario.yaml: spec.cluster: the cluster has no nodes (no `nodeGroups`, `nodes` or `nodeList`): no pod can be placed, only enqueue decides",
        ],
    );
    assert_eq!(s["warnings"].as_array().unwrap().len(), 1, "{}", s["warnings"]);
    assert_eq!(s["warnings"][0]["kind"], "empty-cluster");
    assert_eq!((&s["metrics"]["jobs"], &s["metrics"]["unfinished"]), (&1.into(), &1.into()));
}

#[test]
fn a_gang_larger_than_the_cluster_is_a_warning() {
    // Each pod fits a node; 3 pods of 8 GPUs do not fit 16 GPUs in all. The
    // warning points at the job's name (line 11, column 16).
    let text = jobs(
        "      - {name: wide, duration: 1h, minAvailable: 3, tasks: [{name: w, replicas: 3, resources: {nvidia.com/gpu: 8}}]}\n",
    );
    let s = warns(
        &text,
        &[
            "scenario.yaml:11:16: spec.workload[0].jobs[0]: job `wide`: its gang of 3 pods needs at least 24 nvidia.com/gpu, more than the whole cluster has (16 nvidia.com/gpu); it can never start",
        ],
    );
    assert_eq!(s["warnings"][0]["kind"], "gang-exceeds-cluster");
    assert_eq!(s["metrics"]["unfinished"], 1);
}

/// The warning names what runs out: here pod slots (2 nodes of 2), not the CPU
/// or GPUs the cluster has plenty of; and every resource that runs out.
#[test]
fn a_gang_larger_than_the_cluster_names_what_runs_out() {
    let nodes = "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi, gpus: 8, pods: 2}\n      - {name: n1, cpu: 16, memory: 64Gi, gpus: 8, pods: 2}";
    let slots = scenario(
        nodes,
        "  workload:\n    - jobs:\n      - {name: many, duration: 1h, minAvailable: 5, tasks: [{name: w, replicas: 5, resources: {cpu: 1}}]}\n",
    );
    warns(
        &slots,
        &[
            "job `many`: its gang of 5 pods needs at least 5 pod slots, more than the whole cluster has (4 pod slots); it can never start",
        ],
    );
    let both = jobs(
        "      - {name: big, duration: 1h, minAvailable: 3, tasks: [{name: w, replicas: 3, resources: {cpu: 12, nvidia.com/gpu: 8}}]}\n",
    );
    warns(
        &both,
        &[
            "job `big`: its gang of 3 pods needs at least 36 cpu and 24 nvidia.com/gpu, more than the whole cluster has (32 cpu, 16 nvidia.com/gpu); it can never start",
        ],
    );
}

#[test]
fn skipped_trace_rows_are_counted_with_the_first_location() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("t.csv");
    // The lahar canonical CSV: one good job, a malformed row, a truncated last line.
    std::fs::write(&trace, "job,submit_s,duration_s,gpu\na,0,60,1\nb,zero,60,1\nc,5,60").unwrap();
    let text = scenario(NODES, "  workload:\n    - trace: {format: lahar, path: t.csv}\n");
    let p = tmp.path().join("scenario.yaml");
    std::fs::write(&p, &text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_lahar")).arg("validate").arg(&p).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains(
            "t.csv:3:1: spec.workload[0].trace: 2 trace rows skipped (malformed); the first at line 3 (row 2)"
        ),
        "{err}"
    );
    // A trace that yields nothing is an error unless the scenario allows it.
    std::fs::write(&trace, "job,submit_s,duration_s,gpu\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_lahar")).arg("validate").arg(&p).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "spec.workload[0].trace.path: the trace yields no job (0 rows read, 0 skipped); set `allowEmpty: true`"
        ),
        "{err}"
    );
    std::fs::write(&p, text.replace("path: t.csv}", "path: t.csv, allowEmpty: true}")).unwrap();
    Command::new(env!("CARGO_BIN_EXE_lahar")).arg("validate").arg(&p).assert().success();
}
