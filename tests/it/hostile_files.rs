//! Hostile files and counts found by an outside audit on 2026-12-06 (twenty-third
//! sitting), through the binary: links that would take lahar's writes and
//! removals out of its directory, a comparison written over the user's files,
//! a named pipe that hung `validate`, and counts whose sum (or whose span) made
//! lahar abort. Each test failed on main before its fix.

use super::*;
use std::path::Path;
use std::time::{Duration, Instant};

const NODES: &str = "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi, gpus: 8}";
const JOB: &str = "  workload:\n    - jobs:\n      - {name: j, duration: 1h, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 1}}]}\n";

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A directory holding one file the user owns, `jobs.svg`.
fn victim(dir: &Path) -> std::path::PathBuf {
    let v = dir.join("victim");
    std::fs::create_dir(&v).unwrap();
    std::fs::write(v.join("jobs.svg"), "the user's").unwrap();
    v
}

fn assert_untouched(v: &Path) {
    assert_eq!(std::fs::read_to_string(v.join("jobs.svg")).unwrap(), "the user's");
    assert_eq!(std::fs::read_dir(v).unwrap().count(), 1, "files were written into {}", v.display());
}

#[cfg(unix)]
#[test]
fn a_linked_plots_folder_is_refused_not_followed() {
    let (d, p) = write_scenario(&scenario(NODES, JOB));
    let out_dir = d.path().join("out");
    lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&out_dir).assert().success();
    let v = victim(d.path());
    std::os::unix::fs::symlink(&v, out_dir.join("plots")).unwrap();
    // A run again (it clears its earlier plots), with and without --plots.
    for plots in [false, true] {
        let mut cmd = lahar();
        cmd.args(["run", "-q"]).arg(&p).arg("--out").arg(&out_dir);
        if plots {
            cmd.arg("--plots");
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
        assert!(stderr_of(&out).contains("its `plots` is a symbolic link"), "{}", stderr_of(&out));
        assert_untouched(&v);
    }
    // `lahar report` writes each run's plots into its directory.
    let out = lahar().arg("report").arg(&out_dir).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("its `plots` is a symbolic link"), "{}", stderr_of(&out));
    assert_untouched(&v);
    // A sweep resumed into its folder.
    std::fs::write(d.path().join("s.yaml"), scenario(NODES, JOB)).unwrap();
    let w = d.path().join("w.yaml");
    std::fs::write(&w, "apiVersion: lahar.io/v1alpha1\nkind: Sweep\nmetadata: {name: w}\nspec:\n  scenario: s.yaml\n  grid:\n    - {name: gpus, path: 'spec.cluster.nodes[0].gpus', values: [8, 4]}\n").unwrap();
    let sw = d.path().join("sw");
    lahar().arg("sweep").arg(&w).arg("--out").arg(&sw).arg("-q").assert().success();
    std::fs::remove_dir_all(sw.join("plots")).unwrap();
    std::os::unix::fs::symlink(&v, sw.join("plots")).unwrap();
    let out = lahar().arg("sweep").arg(&w).arg("--out").arg(&sw).args(["-q", "--resume"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert_untouched(&v);
}

#[test]
fn compare_writes_only_into_its_own_folder() {
    let (d, p) = write_scenario(&scenario(NODES, JOB));
    let run = d.path().join("run");
    lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&run).assert().success();
    let mine = d.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("compare.csv"), "the user's").unwrap();
    let out = lahar().arg("compare").arg(&run).arg(&run).arg("--out").arg(&mine).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("has compare.csv that lahar did not write there"), "{}", stderr_of(&out));
    assert_eq!(std::fs::read_to_string(mine.join("compare.csv")).unwrap(), "the user's");
    // Its own folder, again and again; not a run's.
    let cmp = d.path().join("cmp");
    for _ in 0..2 {
        lahar().arg("compare").arg(&run).arg(&run).arg("--out").arg(&cmp).assert().success();
        assert!(cmp.join("compare.csv").is_file() && cmp.join(".lahar").is_file());
    }
    let out = lahar().arg("compare").arg(&run).arg(&run).arg("--out").arg(&run).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("holds a run's outputs"), "{}", stderr_of(&out));
}

/// Runs `lahar args` in `dir`, killed after 20 s (a hang fails the test, not CI).
fn within_20s(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_lahar"))
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("lahar {args:?} still runs after 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (out.status.code(), stderr_of(&out))
}

#[cfg(unix)]
#[test]
fn a_named_pipe_as_a_trace_is_refused_without_waiting_for_a_writer() {
    let d = tempfile::tempdir().unwrap();
    let made = std::process::Command::new("mkfifo").arg(d.path().join("ff")).status().unwrap();
    assert!(made.success());
    let s = scenario(
        "    nodeGroups:\n      - {name: n, count: 2, cpu: 16, memory: 64Gi}",
        "  workload:\n    - trace: {format: swf, path: ff}\n",
    );
    std::fs::write(d.path().join("s.yaml"), s).unwrap();
    let (code, err) = within_20s(d.path(), &["validate", "s.yaml"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("s.yaml:9:") && err.contains("trace.path: ff: is not a regular file"), "{err}");
    let (code, err) = within_20s(d.path(), &["trace", "inspect", "ff", "--format", "swf"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not a regular file"), "{err}");
}

#[test]
fn a_job_has_at_most_a_million_pods_over_all_its_tasks() {
    // Five tasks of a million pods each: every count passes on its own.
    let tasks: Vec<String> =
        (0..5).map(|i| format!("{{name: t{i}, replicas: 1000000, resources: {{cpu: 1m}}}}")).collect();
    let jobs = format!("  workload:\n    - jobs:\n      - {{name: j, duration: 1h, tasks: [{}]}}\n", tasks.join(", "));
    let (_d, p) = write_scenario(&scenario(NODES, &jobs));
    let out = lahar().arg("validate").arg(&p).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out)
            .contains("spec.workload[0].jobs[0].tasks: 5000000 pods over its tasks; a job has at most 1000000"),
        "{}",
        stderr_of(&out)
    );
    // A VolcanoJob of forty such tasks aborted (4 GB asked) before the check.
    let task = |i: usize| {
        format!(
            "    - {{name: t{i}, replicas: 1000000, template: {{spec: {{containers: [{{name: c, image: i}}]}}}}}}\n"
        )
    };
    let manifest = format!(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: big}}\nspec:\n  tasks:\n{}",
        (0..40).map(task).collect::<String>()
    );
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("big.yaml"), manifest).unwrap();
    std::fs::write(d.path().join("s.yaml"), scenario(NODES, "  workload:\n    - manifests: [big.yaml]\n")).unwrap();
    let (code, err) = within_20s(d.path(), &["validate", "s.yaml"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("big.yaml:1:1: document 1: spec: Job `big` has 40000000 pods over its tasks"), "{err}");
}

#[test]
fn a_snapshot_node_has_at_most_64_gpus() {
    let node = "apiVersion: v1\nkind: Node\nmetadata: {name: g0}\nstatus:\n  allocatable: {cpu: \"96\", memory: 1Ti, nvidia.com/gpu: \"1e15\"}\n";
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("c.yaml"), node).unwrap();
    let (code, err) = within_20s(d.path(), &["run", "-q", "--snapshot", "c.yaml", "--out", "o"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("c.yaml:5:") && err.contains("at most 64 GPUs per node, got 1000000000000000"), "{err}");
    assert!(!d.path().join("o").exists());
}

#[test]
fn a_request_trace_that_spans_millennia_is_inspected_without_a_bin_per_minute() {
    let d = tempfile::tempdir().unwrap();
    let rows = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n9999-11-16 18:15:50.8170000,396,109\n";
    std::fs::write(d.path().join("az.csv"), rows).unwrap();
    let out =
        lahar().current_dir(d.path()).args(["trace", "inspect", "az.csv", "--format", "azure-llm"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("requests        2"), "{text}");
}

/// `report` and `compare` read numbers back from a run directory: an infinite
/// one made a plot's axis loop for ever, a huge count made a plot ask for 100 GB
/// or a pod lane per GPU; each is now an error naming the file and line.
#[test]
fn numbers_read_back_from_a_run_are_bounded() {
    let (d, p) = write_scenario(&scenario(NODES, JOB));
    let run = d.path().join("run");
    lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&run).assert().success();
    // (file, column, value, what the error says)
    let cases = [
        ("jobs.csv", "jct_s", "inf", "jobs.csv: line 2: `inf` is out of range; expected a number from 0 to 1e15"),
        ("jobs.csv", "wait_s", "-5", "jobs.csv: line 2: `-5` is out of range"),
        ("jobs.csv", "nodes_spanned", "1e12", "jobs.csv: line 2: `1e12` is not a whole number from 0 to 1000000"),
        ("timeseries.csv", "jobs_pending", "NaN", "timeseries.csv: line 2: `NaN` is out of range"),
        ("pods.csv", "gpus", "1e12", "pods.csv: line 2: start, end or gpus out of range for this run"),
    ];
    for (file, column, value, says) in cases {
        let bad = d.path().join(format!("bad-{column}"));
        std::fs::create_dir(&bad).unwrap();
        for f in std::fs::read_dir(&run).unwrap() {
            let f = f.unwrap().path();
            if f.is_file() {
                std::fs::copy(&f, bad.join(f.file_name().unwrap())).unwrap();
            }
        }
        let text = std::fs::read_to_string(bad.join(file)).unwrap();
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        let k = lines[0].split(',').position(|c| c == column).unwrap();
        let mut cells: Vec<&str> = lines[1].split(',').collect();
        cells[k] = value;
        lines[1] = cells.join(",");
        std::fs::write(bad.join(file), lines.join("\n") + "\n").unwrap();
        for args in [
            vec!["report", bad.to_str().unwrap()],
            vec!["compare", run.to_str().unwrap(), bad.to_str().unwrap(), "--out", "cmp"],
        ] {
            let (code, err) = within_20s(d.path(), &args);
            assert_eq!(code, Some(2), "{args:?}: {err}");
            assert!(err.contains(says), "{args:?}: {err}");
        }
    }
}
