//! Jobs made as the run reaches them: a scenario's sources are merged by (submit
//! time, source, position) one job at a time, a trace out of submit order is put
//! in order as it is read, and a trace that changes after it was validated fails
//! the run instead of running other jobs than the ones checked.

use crate::{scenario, write_scenario};
use lahar::RunOptions;

const NODES: &str = "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi, gpus: 8}";

/// A canonical trace out of submit order (a@30 s, b@10, c@20, d@10) before a
/// `jobs:` list (x@10, y@25).
fn mixed() -> (tempfile::TempDir, std::path::PathBuf) {
    let text = scenario(
        NODES,
        "  workload:\n    - trace: {format: lahar, path: t.csv}\n    - jobs:\n      \
         - {name: x, submitAt: 10s, duration: 5s, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 1}}]}\n      \
         - {name: y, submitAt: 25s, duration: 5s, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 1}}]}\n",
    );
    let (dir, p) = write_scenario(&text);
    std::fs::write(dir.path().join("t.csv"), "job,submit_s,duration_s,gpu\na,30,5,1\nb,10,5,1\nc,20,5,1\nd,10,5,1\n")
        .unwrap();
    (dir, p)
}

/// The trace's time origin is its earliest submit (10 s): b and d at 0, c at 10,
/// a at 20; the list's jobs keep their times. Equal times: the earlier source first.
const ORDER: [&str; 6] = ["b", "d", "c", "x", "a", "y"];

#[test]
fn sources_merge_by_submit_time_and_an_unsorted_trace_is_put_in_order() {
    let (_dir, p) = mixed();
    let s = lahar::scenario::load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.workload.count, 6);
    let names: Vec<String> = s.jobs().into_iter().map(|j| j.name).collect();
    assert_eq!(names, ORDER);
    // The run numbers jobs as they arrive, in the same order.
    let r = lahar::run(s, &RunOptions { no_write: true, ..Default::default() }).expect("run");
    let ids: Vec<&str> = r.output.world.jobs.iter().map(|j| j.spec.name.as_str()).collect();
    assert_eq!(ids, ORDER);
    let submits: Vec<u64> = r.output.world.jobs.iter().map(|j| j.spec.submit.micros() / 1_000_000).collect();
    assert_eq!(submits, [0, 0, 10, 10, 20, 25]);
}

#[test]
fn a_trace_that_changes_after_validation_fails_the_run() {
    let (dir, p) = mixed();
    let s = lahar::scenario::load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("t.csv"), "job,submit_s,duration_s,gpu\na,30,5,1\n").unwrap();
    let out = dir.path().join("out");
    match lahar::run(s, &RunOptions { out_dir: Some(out), ..Default::default() }) {
        Err(lahar::RunError::Source(m)) => {
            assert!(m.contains("t.csv: the trace changed after it was validated (it yielded 4 jobs then"), "{m}")
        }
        other => panic!("expected a source error, got {:?}", other.map(|r| r.summary.jobs)),
    }
}

#[test]
fn a_run_cut_short_stops_reading_its_trace() {
    // A horizon before the last arrival: the trace's reader is left behind
    // without an error, and the jobs never submitted are not in the outputs.
    let (dir, p) = mixed();
    let text = std::fs::read_to_string(&p).unwrap().replace("spec:\n", "spec:\n  horizon: 12s\n");
    std::fs::write(&p, text).unwrap();
    let s = lahar::scenario::load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    let out = dir.path().join("out");
    let r = lahar::run(s, &RunOptions { out_dir: Some(out.clone()), ..Default::default() }).expect("run");
    assert_eq!(r.summary.jobs, 4, "b, d, c and x were submitted by 12 s");
    let jobs = std::fs::read_to_string(out.join("jobs.csv")).unwrap();
    assert_eq!(jobs.lines().count(), 5, "{jobs}");
}

#[test]
fn a_written_run_gives_back_the_jobs_it_finished() {
    // Outputs written as the run goes: a job that ended and let go of its nodes
    // is retired with its pods; the in-memory form keeps every job.
    let (dir, p) = mixed();
    let s = lahar::scenario::load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    let out = dir.path().join("out");
    let r = lahar::run(s, &RunOptions { out_dir: Some(out.clone()), ..Default::default() }).expect("run");
    assert_eq!((r.summary.jobs, r.summary.completed), (6, 6));
    assert_eq!((r.output.world.jobs.len(), r.output.world.jobs.live()), (6, 0));
    assert_eq!(r.output.world.pods.live(), 0);
    let jobs = std::fs::read_to_string(out.join("jobs.csv")).unwrap();
    assert_eq!(jobs.lines().count(), 7, "{jobs}");
    // An --explain pod's job stays for the end-of-run lines.
    let s = lahar::scenario::load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    let opts = RunOptions { out_dir: Some(out), explain: vec!["c-worker-0".into()], ..Default::default() };
    let r = lahar::run(s, &opts).expect("run");
    let kept: Vec<&str> = r.output.world.jobs.iter().map(|j| j.spec.name.as_str()).collect();
    assert_eq!(kept, ["c"]);
    let s = lahar::scenario::load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    let r = lahar::run(s, &RunOptions { no_write: true, ..Default::default() }).expect("run");
    assert_eq!(r.output.world.jobs.live(), 6);
}

/// The 1-based line of `text` where the `n`-th (from 1) occurrence of `needle`
/// is, and its 1-based column.
fn line_col(text: &str, needle: &str, n: usize) -> (usize, usize) {
    let at = text.match_indices(needle).nth(n - 1).expect("occurs").0;
    let line = text[..at].matches('\n').count() + 1;
    let col = at - text[..at].rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

/// `lahar validate` of a scenario: its exit code and standard error.
fn validate(p: &std::path::Path) -> (Option<i32>, String) {
    let out = crate::lahar().arg("validate").arg(p).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).to_string())
}

#[test]
fn a_name_used_twice_across_sources_is_found() {
    // Names are kept as hashes while the jobs stream by; a hash seen twice is
    // checked by name, so the error names the job and where both definitions are.
    // The second list is out of submit order: its positions are the file's, not
    // the sorted stream's.
    let job = |n: &str, at: u32| {
        format!(
            "      - {{name: {n}, submitAt: {at}s, duration: 5s, tasks: [{{name: w, replicas: 1, resources: {{cpu: 1}}}}]}}\n"
        )
    };
    let text = scenario(
        NODES,
        &format!("  workload:\n    - jobs:\n{}{}    - jobs:\n{}{}", job("a", 1), job("b", 2), job("c", 9), job("a", 5)),
    );
    let (_dir, p) = write_scenario(&text);
    let (code, err) = validate(&p);
    assert_eq!(code, Some(2), "{err}");
    let f = p.display();
    let (l1, c1) = line_col(&text, "a, submitAt", 1);
    let (l2, c2) = line_col(&text, "a, submitAt", 2);
    assert!(
        err.contains(&format!(
            "{f}:{l2}:{c2}: spec.workload[1].jobs[1]: job `default/a` is defined twice (first at {f}:{l1}:{c1} spec.workload[0].jobs[0]); job names must be unique per namespace"
        )),
        "{err}"
    );
    assert!(!err.contains("`default/c`") && !err.contains("`default/b`"), "{err}");
}

#[test]
fn a_name_used_twice_in_a_trace_or_a_manifest_points_at_its_row_and_document() {
    // The trace is out of submit order (its jobs are re-read in submit order):
    // the repeat is found at its row of the file.
    let text = scenario(
        NODES,
        "  workload:\n    - trace: {format: lahar, path: t.csv}\n    - manifests: [m.yaml]\n    - jobs:\n      \
         - {name: x, submitAt: 50s, duration: 5s, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 1}}]}\n",
    );
    let (dir, p) = write_scenario(&text);
    let t = dir.path().join("t.csv");
    std::fs::write(&t, "job,submit_s,duration_s,gpu\nd,30,5,1\nb,10,5,1\nc,20,5,1\nd,40,5,1\nx,5,5,1\n").unwrap();
    let m = dir.path().join("m.yaml");
    let pod = |n: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {n}\nspec:\n  containers:\n    - name: c\n      image: i\n      resources: {{requests: {{cpu: 1}}}}\n"
        )
    };
    std::fs::write(&m, format!("{}---\n{}", pod("p"), pod("b"))).unwrap();
    let (code, err) = validate(&p);
    assert_eq!(code, Some(2), "{err}");
    let (t, m, f) = (t.display(), m.display(), p.display());
    let (lx, cx) = line_col(&text, "x, submitAt", 1);
    // d at line 2 (row 1) and line 5 (row 4); the Pod `b` (submitted at 0)
    // precedes the trace's b (5 s after the trace's origin); the trace's x (row 5,
    // at its origin) precedes the list's x (50 s).
    for want in [
        format!(
            "{t}:5:1: spec.workload[0].trace (row 4): job `default/d` is defined twice (first at {t}:2:1 spec.workload[0].trace (row 1))"
        ),
        format!(
            "{t}:3:1: spec.workload[0].trace (row 2): job `default/b` is defined twice (first at {m}:11:1 document 2)"
        ),
        format!(
            "{f}:{lx}:{cx}: spec.workload[2].jobs[0]: job `default/x` is defined twice (first at {t}:6:1 spec.workload[0].trace (row 5))"
        ),
    ] {
        assert!(err.contains(&want), "{want}\n{err}");
    }
}
