//! Hostile files and counts found by an outside audit on 2026-12-06 (twenty-third
//! sitting), through the binary: links that would take lahar's writes and
//! removals out of its directory, a comparison written over the user's files,
//! a named pipe that hung `validate`, and counts whose sum (or whose span) made
//! lahar abort. Each test failed on main before its fix.

use super::hardening::{JOB, NODE_AXIS, NODES, ok_scenario, stderr_of, tiny_sweep};
use super::*;
use std::path::Path;
use std::time::{Duration, Instant};

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
    let (d, p) = write_scenario(&ok_scenario());
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
    let w = tiny_sweep(d.path(), NODE_AXIS);
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
    let (d, run) = ok_run();
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

/// A folder with a named pipe `ff` and the scenario `s.yaml` of two nodes and
/// `workload` (lines under `spec`).
#[cfg(unix)]
fn with_fifo(workload: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let made = std::process::Command::new("mkfifo").arg(d.path().join("ff")).status().unwrap();
    assert!(made.success());
    let s = scenario("    nodeGroups:\n      - {name: n, count: 2, cpu: 16, memory: 64Gi}", workload);
    std::fs::write(d.path().join("s.yaml"), s).unwrap();
    d
}

#[cfg(unix)]
#[test]
fn a_named_pipe_as_a_trace_is_refused_without_waiting_for_a_writer() {
    let d = with_fifo("  workload:\n    - trace: {format: swf, path: ff}\n");
    let (code, err) = within_20s(d.path(), &["validate", "s.yaml"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("s.yaml:9:") && err.contains("trace.path: ff: is not a regular file"), "{err}");
    let (code, err) = within_20s(d.path(), &["trace", "inspect", "ff", "--format", "swf"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not a regular file"), "{err}");
}

/// A snapshot or manifest path that names a pipe or a folder says so (it said
/// "no such file"), without waiting for a writer; a snapshot path's problem has
/// no line and column (they were those of the scenario lahar wraps it in).
#[cfg(unix)]
#[test]
fn a_pipe_or_a_folder_as_a_manifest_is_named_as_such() {
    let d = with_fifo("  workload:\n    - manifests: dir\n");
    std::fs::create_dir(d.path().join("dir")).unwrap();
    let (code, err) = within_20s(d.path(), &["validate", "--snapshot", "ff"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("error: ff: cannot read `ff`: not a regular file (a pipe, /dev/stdin or a device)"), "{err}");
    let (code, err) = within_20s(d.path(), &["validate", "--snapshot", "missing.yaml"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("error: missing.yaml: cannot read `missing.yaml`: no such file"), "{err}");
    let (code, err) = within_20s(d.path(), &["validate", "s.yaml"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("spec.workload[0].manifests")
            && err.contains("a folder, not a file (name its files: `dir/*.yaml`)"),
        "{err}"
    );
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
    let (d, run) = ok_run();
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

/// Names outputs print were checked for jobs, nodes and queues only: a compact
/// job's namespace and task names, the scenario's name (summary.csv's first
/// cell), a GPU model, a sweep's value names and a trace's namespace, kind and
/// task reached the CSVs as formulas or with control characters; and a `/` in a
/// job name or namespace made `default/team/x`... print as another job's
/// `team/x`.
#[test]
fn every_name_an_output_prints_is_checked_where_it_is_read() {
    let job = |ns: &str, name: &str, task: &str| {
        format!(
            "  workload:\n    - jobs:\n      - {{name: {name}, namespace: {ns}, duration: 1h, tasks: [{{name: {task}, replicas: 1, resources: {{cpu: 1}}}}]}}\n"
        )
    };
    let cases = [
        (
            scenario(NODES, &job("'=HYPERLINK(1)'", "j", "w")),
            "spec.workload[0].jobs[0].namespace: `=HYPERLINK(1)` starts with `=`",
        ),
        (
            scenario(NODES, &job("team", "j", "'-cmd'")),
            "spec.workload[0].jobs[0].tasks[0].name: `-cmd` starts with `-`",
        ),
        (
            scenario(NODES, &job("team", "j", "\"a\\rb\"")),
            "spec.workload[0].jobs[0].tasks[0].name: `a\\rb` contains a control character",
        ),
        (scenario(NODES, &job("default", "team/x", "w")), "spec.workload[0].jobs[0].name: `team/x` contains `/`"),
        (scenario(NODES, &job("a/b", "x", "w")), "spec.workload[0].jobs[0].namespace: `a/b` contains `/`"),
        (
            scenario(NODES, JOB).replace("metadata: {name: t}", "metadata: {name: '@sum'}"),
            "metadata.name: `@sum` starts with `@`",
        ),
        (
            scenario(
                "    nodeGroups:\n      - {name: g, count: 1, cpu: 16, memory: 64Gi, gpus: 8, gpuModel: \"=x\"}",
                JOB,
            ),
            "spec.cluster.nodeGroups[0].gpuModel: `=x` starts with `=`",
        ),
    ];
    for (text, says) in cases {
        let (_d, p) = write_scenario(&text);
        let out = lahar().arg("validate").arg(&p).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{text}\n{}", stderr_of(&out));
        assert!(stderr_of(&out).contains(says), "{says}\n{}", stderr_of(&out));
    }
    // A sweep's value names are cells of sweep.csv and summary.csv.
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("s.yaml"), ok_scenario()).unwrap();
    std::fs::write(
        d.path().join("w.yaml"),
        "apiVersion: lahar.io/v1alpha1\nkind: Sweep\nmetadata: {name: w}\nspec:\n  scenario: s.yaml\n  grid:\n    - {name: policy, path: spec.scheduler, values: [{name: '=HYPERLINK(1)', value: {baseline: fifo}}]}\n",
    )
    .unwrap();
    let out = lahar().current_dir(d.path()).args(["sweep", "w.yaml", "--out", "o", "-q"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("axis `policy` value: `=HYPERLINK(1)` starts with `=`"), "{}", stderr_of(&out));
    assert!(!d.path().join("o").exists());
    // A canonical trace's namespace, kind and task: the row is malformed (skipped, or an error under --strict).
    let head = "job,namespace,kind,queue,user,submit_s,duration_s,min_available,priority,priority_class,max_retry,checkpoint_s,task,replicas,task_min_available,task_priority,preemptable,cpu,memory,gpu,gpu_model\n";
    for (row, says) in [
        ("a,team/x,x,default,,0,60,1,0,,3,,worker,1,1,1,true,1,1Gi,1,", "namespace `team/x` contains `/`"),
        ("a,default,=k,default,,0,60,1,0,,3,,worker,1,1,1,true,1,1Gi,1,", "kind `=k` starts with `=`"),
        ("a,default,x,default,,0,60,1,0,,3,,@w,1,1,1,true,1,1Gi,1,", "task name `@w` starts with `@`"),
    ] {
        std::fs::write(d.path().join("t.csv"), format!("{head}{row}\n")).unwrap();
        let out = lahar()
            .current_dir(d.path())
            .args(["trace", "inspect", "t.csv", "--format", "lahar", "--strict"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
        assert!(stderr_of(&out).contains(says), "{says}\n{}", stderr_of(&out));
    }
}

/// An edit of sweep.json.
type Edit = dyn Fn(&mut serde_json::Value);

/// `sweep merge` read a shard's sweep.json and trusted its groups (a group
/// number no point has made an extra row in summary.csv) and its axes' numbers
/// (±1e308 made the merged plot's axis loop for ever).
#[test]
fn a_merge_checks_the_groups_and_numbers_of_sweep_json() {
    let d = tempfile::tempdir().unwrap();
    let w = tiny_sweep(d.path(), NODE_AXIS);
    let shard = d.path().join("shard");
    lahar().arg("sweep").arg(&w).arg("--out").arg(&shard).args(["--shard", "1/1", "-q"]).assert().success();
    let json = std::fs::read_to_string(shard.join("sweep.json")).unwrap();
    let m: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(m["axes"][0]["x"], serde_json::json!([8.0, 4.0]), "{json}");
    assert_eq!(m["cells"][1]["group"], 1, "{json}");
    let forge = |edit: &Edit| {
        let mut m = m.clone();
        edit(&mut m);
        std::fs::write(shard.join("sweep.json"), serde_json::to_string_pretty(&m).unwrap()).unwrap();
    };
    let cases: [(&Edit, &str); 3] = [
        (&|m| m["cells"][1]["group"] = 99.into(), "cell `0001` has group 99, not its point's"),
        (&|m| m["cells"][1]["group"] = 0.into(), "cell `0001` has group 0, not its point's"),
        (
            &|m| m["axes"][0]["x"] = serde_json::json!([-1e308, 1e308]),
            "axis `gpus` has a number that is not finite or beyond ±1e15",
        ),
    ];
    for (k, (edit, says)) in cases.into_iter().enumerate() {
        forge(edit);
        let merged = format!("merged{k}");
        let (code, err) = within_20s(d.path(), &["sweep", "merge", "shard", "--out", &merged]);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains(says), "{says}\n{err}");
    }
}

/// A template's `overhead` was accepted and ignored: Volcano adds it to the pod's
/// request (`amendResourceAccordingToPodFeatures`, api/pod_info.go), so 8 CPUs
/// and an overhead of 10 need 18, more than the 16-CPU node has; 8 + 4 fit.
/// `resourceClaims` (dynamic resources) change where a pod may run and are
/// refused at their place.
#[test]
fn pod_overhead_counts_and_resource_claims_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let job = |extra: &str| {
        format!(
            "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: o, annotations: {{lahar.io/duration: 1h}}}}\nspec:\n  tasks:\n    - name: w\n      replicas: 1\n      template:\n        spec:\n          {extra}\n          containers: [{{name: c, image: i, resources: {{requests: {{cpu: \"8\"}}}}}}]\n"
        )
    };
    std::fs::write(
        d.path().join("s.yaml"),
        scenario("    nodes: [{name: n0, cpu: 16, memory: 64Gi}]", "  workload:\n    - manifests: [job.yaml]\n"),
    )
    .unwrap();
    std::fs::write(d.path().join("job.yaml"), job("overhead: {cpu: \"10\"}")).unwrap();
    let out = lahar().current_dir(d.path()).args(["run", "-q", "s.yaml", "--out", "a"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("a pod requests 0 GPUs, 18 CPU"), "{}", stderr_of(&out));
    std::fs::write(d.path().join("job.yaml"), job("overhead: {cpu: \"4\"}")).unwrap();
    lahar().current_dir(d.path()).args(["run", "-q", "s.yaml", "--out", "b"]).assert().success();
    let pods = std::fs::read_to_string(d.path().join("b/pods.csv")).unwrap();
    assert!(pods.contains("o,default/o-w-0,w,0,n0,0,0,3600,completed"), "{pods}");
    std::fs::write(d.path().join("job.yaml"), job("resourceClaims: [{name: gpu, resourceClaimName: x}]")).unwrap();
    let out = lahar().current_dir(d.path()).args(["validate", "s.yaml"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains(
            "job.yaml:10:27: document 1: spec.tasks[0].template.spec.resourceClaims: dynamic resource claims"
        ),
        "{}",
        stderr_of(&out)
    );
}

/// `lahar check` gated on a summary.json whose numbers no run writes (1e9 jobs
/// completed of 3, a negative count, a negative JCT) and said "check passed".
#[test]
fn check_refuses_a_summary_no_run_wrote() {
    let (d, run) = ok_run();
    let base = d.path().join("b.json");
    lahar().arg("check").arg(&run).arg("--write-baseline").arg(&base).assert().success();
    let good = std::fs::read_to_string(run.join("summary.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&good).unwrap();
    for (pointer, value, says) in [
        (
            "/metrics/completed",
            serde_json::json!(1e9),
            "metrics/completed: expected a whole number up to `jobs` (1), found 1000000000.0",
        ),
        (
            "/metrics/unfinished",
            serde_json::json!(-7),
            "metrics/unfinished: expected a number from 0 to 1e15 or null, found -7",
        ),
        (
            "/metrics/jct_s/mean",
            serde_json::json!(-5),
            "metrics/jct_s/mean: expected a number from 0 to 1e15 or null, found -5",
        ),
    ] {
        let mut forged = v.clone();
        *forged.pointer_mut(pointer).unwrap() = value;
        std::fs::write(run.join("summary.json"), serde_json::to_string(&forged).unwrap()).unwrap();
        let out = lahar().arg("check").arg(&run).arg("--baseline").arg(&base).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{pointer}: {}", stderr_of(&out));
        assert!(stderr_of(&out).contains(says), "{says}\n{}", stderr_of(&out));
    }
}

/// `lahar report` and `lahar compare` read a headline metric of summary.json
/// that was not a number (a string, an object, a negative time) as absent and
/// drew their tables without it; they now refuse it as `lahar check` does.
#[test]
fn report_and_compare_refuse_a_summary_no_run_wrote() {
    let (d, run) = ok_run();
    let good = std::fs::read_to_string(run.join("summary.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&good).unwrap();
    let bad = d.path().join("bad");
    std::fs::create_dir(&bad).unwrap();
    for f in ["jobs.csv", "timeseries.csv"] {
        std::fs::copy(run.join(f), bad.join(f)).unwrap();
    }
    for (pointer, value, says) in [
        (
            "/metrics/fragmentation",
            serde_json::json!("x"),
            "metrics/fragmentation: expected a number from 0 to 1e15 or null, found \"x\"",
        ),
        (
            "/metrics/jain_fairness",
            serde_json::json!({}),
            "metrics/jain_fairness: expected a number from 0 to 1e15 or null, found {}",
        ),
        (
            "/metrics/jct_s/mean",
            serde_json::json!(-5),
            "metrics/jct_s/mean: expected a number from 0 to 1e15 or null, found -5",
        ),
    ] {
        let mut forged = v.clone();
        *forged.pointer_mut(pointer).unwrap() = value;
        std::fs::write(bad.join("summary.json"), serde_json::to_string(&forged).unwrap()).unwrap();
        report_and_compare_refuse(d.path(), &run, &bad, &["summary.json", says]);
    }
}

/// A jobs.csv with a job's row twice (a run writes one per job) was read as two
/// jobs by `report` and `compare`; now an error naming both lines.
#[test]
fn a_job_row_read_back_twice_is_refused() {
    let (d, run) = ok_run();
    let bad = d.path().join("bad");
    std::fs::create_dir(&bad).unwrap();
    for f in ["summary.json", "timeseries.csv"] {
        std::fs::copy(run.join(f), bad.join(f)).unwrap();
    }
    let jobs = std::fs::read_to_string(run.join("jobs.csv")).unwrap();
    let second = jobs.lines().nth(1).unwrap();
    let name = second.split(',').next().unwrap();
    std::fs::write(bad.join("jobs.csv"), format!("{jobs}{second}\n")).unwrap();
    let last = jobs.lines().count() + 1;
    let says = format!("jobs.csv: line {last}: job `{name}` has a row already (line 2)");
    report_and_compare_refuse(d.path(), &run, &bad, &[&says]);
}

/// A jobs.csv that is not the run's (a row left out, a job's state changed) was
/// read as it was, beside a summary.json that counts otherwise: one report mixed
/// two runs' numbers. Now an error naming the count each file gives.
#[test]
fn a_jobs_csv_that_disagrees_with_its_summary_is_refused() {
    let (d, run) = ok_run();
    let jobs = std::fs::read_to_string(run.join("jobs.csv")).unwrap();
    let rows = jobs.lines().count() - 1;
    let completed = jobs.lines().filter(|l| l.split(',').nth(7) == Some("Completed")).count();
    assert!(rows >= 1 && completed >= 1, "{jobs}");
    let dropped: String = jobs.lines().take(rows).map(|l| format!("{l}\n")).collect();
    let first_done = jobs.lines().position(|l| l.split(',').nth(7) == Some("Completed")).unwrap();
    let failed: String = jobs
        .lines()
        .enumerate()
        .map(|(i, l)| if i == first_done { l.replacen(",Completed,", ",Failed,", 1) } else { l.to_string() })
        .map(|l| format!("{l}\n"))
        .collect();
    let cases = [
        (dropped, format!("jobs.csv: {} rows, but summary.json counts {rows} (`metrics.jobs`)", rows - 1)),
        (
            failed,
            format!(
                "jobs.csv: {} rows of Completed jobs, but summary.json counts {completed} (`metrics.completed`)",
                completed - 1
            ),
        ),
    ];
    for (i, (text, says)) in cases.into_iter().enumerate() {
        let bad = d.path().join(format!("bad{i}"));
        std::fs::create_dir(&bad).unwrap();
        for f in ["summary.json", "timeseries.csv"] {
            std::fs::copy(run.join(f), bad.join(f)).unwrap();
        }
        std::fs::write(bad.join("jobs.csv"), text).unwrap();
        report_and_compare_refuse(d.path(), &run, &bad, &[&says, "the two files are not of the same run"]);
    }
}

/// A run of [`ok_scenario`] in a new temp dir: the dir, and the run's (`run`).
fn ok_run() -> (tempfile::TempDir, PathBuf) {
    let (d, p) = write_scenario(&ok_scenario());
    let run = d.path().join("run");
    lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&run).assert().success();
    (d, run)
}

/// `lahar report` of run directory `bad` and `lahar compare` of `good` with it,
/// run in `cwd`, each exit 2 with every one of `says` in its stderr.
fn report_and_compare_refuse(cwd: &Path, good: &Path, bad: &Path, says: &[&str]) {
    for args in [
        vec!["report", bad.to_str().unwrap(), "--out", "r.html"],
        vec!["compare", good.to_str().unwrap(), bad.to_str().unwrap()],
    ] {
        let (code, err) = within_20s(cwd, &args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(says.iter().all(|s| err.contains(s)), "{args:?}: {says:?}\n{err}");
    }
}

/// `sweep --resume` kept every cell with a summary.json, whatever it said: a
/// cell whose summary names another seed or scenario is run again, counted in a
/// warning.
#[test]
fn a_resumed_sweep_runs_again_a_cell_whose_summary_is_not_its_own() {
    let d = tempfile::tempdir().unwrap();
    tiny_sweep(d.path(), NODE_AXIS);
    lahar().current_dir(d.path()).args(["sweep", "w.yaml", "--out", "o", "-q"]).assert().success();
    let cell = d.path().join("o/cells/0001/summary.json");
    let good = std::fs::read_to_string(&cell).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["seed"] = 999.into();
    v["metrics"]["completed"] = (-5).into();
    std::fs::write(&cell, serde_json::to_string(&v).unwrap()).unwrap();
    let out = lahar().current_dir(d.path()).args(["sweep", "w.yaml", "--out", "o", "--resume"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out)
            .contains("warning: 1 finished cells (the first `0001`) hold a summary.json of another scenario or seed"),
        "{}",
        stderr_of(&out)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("resumed: 1 cells kept, 1 run"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // Run again: the summary is the cell's own (the scenario's seed, its one job).
    let again: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&cell).unwrap()).unwrap();
    let was: serde_json::Value = serde_json::from_str(&good).unwrap();
    assert_eq!(again["seed"], was["seed"]);
    assert_eq!(again["metrics"]["completed"], 1);
}

/// An unknown field inside a `--set` value or a sweep axis value was blamed on
/// the scenario file, with no place: it is the override's, located where the
/// override is written.
#[test]
fn an_unknown_field_in_an_override_is_blamed_on_the_override() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("s.yaml"), ok_scenario()).unwrap();
    let set = "spec.timeline=[{at: 1h, cordon: n0, bogus: 1}]";
    let out = lahar().current_dir(d.path()).args(["validate", "s.yaml", "--set", set]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(err.starts_with("error: <command line>: unknown field `bogus`"), "{err}");
    assert!(err.contains(&format!("(set by --set {set})")), "{err}");
    std::fs::write(
        d.path().join("w.yaml"),
        "apiVersion: lahar.io/v1alpha1\nkind: Sweep\nmetadata: {name: w}\nspec:\n  scenario: s.yaml\n  grid:\n    - name: t\n      path: spec.timeline\n      values:\n        - {name: a, value: [{at: 1h, cordon: n0, bogus: 1}]}\n",
    )
    .unwrap();
    let out = lahar().current_dir(d.path()).args(["sweep", "w.yaml", "--out", "o", "-q"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(
        err.contains("w.yaml:10:11: unknown field `bogus`") && err.contains("(set by axis `t` value `a`)"),
        "{err}"
    );
}
