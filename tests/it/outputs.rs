//! docs/outputs.md lists every column and key a run writes: each CSV header of a
//! run with `--explain`, and every key of summary.json (run, queue and
//! distribution objects).

use super::*;
use std::collections::BTreeSet;

fn documented() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/outputs.md")).expect("docs/outputs.md")
}

/// Every key of a JSON value, recursively (queue names replaced by `<queue>`).
fn keys(v: &serde_json::Value, under_queues: bool, out: &mut BTreeSet<String>) {
    if let Some(m) = v.as_object() {
        for (k, x) in m {
            if !under_queues {
                out.insert(k.clone());
            }
            keys(x, !under_queues && k == "queues", out);
        }
    }
}

#[test]
fn every_output_column_is_documented() {
    let (d, p) = write_scenario(&scenario(crate::reports::TINY, ""));
    let out = d.path().join("out");
    lahar().args(["run", "-q", "--explain", "j1-w-0", "--out"]).arg(&out).arg(&p).assert().success();
    let files = ["jobs.csv", "pods.csv", "timeseries.csv", "queues.csv", "decisions.csv", "explain.csv", "summary.csv"];
    let missing = undocumented(&out, &files);
    assert!(missing.is_empty(), "not in docs/outputs.md: {missing:?}");
    // No column name carries a queue's (or any) name after a `:`.
    for f in files {
        let text = std::fs::read_to_string(out.join(f)).unwrap();
        let header = text.lines().next().unwrap();
        assert!(!header.contains(':'), "{f}: {header}");
    }
}

/// A run with a service and its autoscaler: services.csv, scaling.csv and
/// summary.json's `services` are documented too.
#[test]
fn every_service_output_is_documented() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/serving-scenario.yaml");
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    lahar().args(["run", "-q", "--out"]).arg(&out).arg(&p).assert().success();
    let missing = undocumented(&out, &["services.csv", "scaling.csv"]);
    assert!(missing.is_empty(), "not in docs/outputs.md: {missing:?}");
}

/// Every rename of 0.2 is listed in docs/outputs.md's table, and a run directory
/// written with the old names still reads (`lahar report` on it).
#[test]
fn renamed_columns_are_listed_and_old_runs_still_read() {
    let doc = documented();
    let section = &doc[doc.find("## Renamed columns").expect("a section of renamed columns")..];
    for (file, old, new) in lahar_reports::load::RENAMED {
        let old = old.split(':').next().unwrap();
        let new = new.rsplit(' ').next().unwrap();
        assert!(section.contains(&format!("`{old}")), "{file}: {old} not listed");
        assert!(section.contains(&format!("`{new}`")), "{file}: {new} not listed");
    }
    // A run as lahar 0.1 wrote it: the old headers, queues in timeseries.csv.
    let (d, p) = write_scenario(&scenario(crate::reports::TINY, ""));
    let out = d.path().join("out");
    lahar().args(["run", "-q", "--out"]).arg(&out).arg(&p).assert().success();
    let rename = |f: &str, pairs: &[(&str, &str)]| {
        let text = std::fs::read_to_string(out.join(f)).unwrap();
        let (head, rest) = text.split_once('\n').unwrap();
        let head: Vec<String> = head
            .split(',')
            .map(|c| pairs.iter().find(|p| p.0 == c).map_or(c.to_string(), |p| p.1.to_string()))
            .collect();
        std::fs::write(out.join(f), format!("{}\n{rest}", head.join(","))).unwrap();
    };
    rename("jobs.csv", &[("submit_s", "submit"), ("start_s", "start"), ("end_s", "end")]);
    rename("pods.csv", &[("start_s", "start"), ("end_s", "end")]);
    rename("decisions.csv", &[("t_s", "t")]);
    // timeseries.csv with the queues as columns, and no queues.csv.
    let ts = std::fs::read_to_string(out.join("timeseries.csv")).unwrap();
    let qs = std::fs::read_to_string(out.join("queues.csv")).unwrap();
    let q: Vec<Vec<&str>> = qs.lines().skip(1).map(|l| l.split(',').collect()).collect();
    let mut names: Vec<&str> = Vec::new();
    for r in &q {
        if !names.contains(&r[1]) {
            names.push(r[1]);
        }
    }
    let mut lines = ts.lines();
    let mut old = lines.next().unwrap().replacen("t_s,", "t,", 1);
    for n in &names {
        old.push_str(&format!(",gpus_allocated:{n}"));
    }
    old.push('\n');
    for (i, l) in lines.enumerate() {
        old.push_str(l);
        for k in 0..names.len() {
            old.push_str(&format!(",{}", q[i * names.len() + k][2]));
        }
        old.push('\n');
    }
    std::fs::write(out.join("timeseries.csv"), old).unwrap();
    std::fs::remove_file(out.join("queues.csv")).unwrap();
    // summary.json's queues with `gpu_share`.
    let sp = out.join("summary.json");
    let mut summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&sp).unwrap()).unwrap();
    let mut shares = Vec::new();
    for q in summary["metrics"]["queues"].as_object_mut().unwrap().values_mut() {
        let q = q.as_object_mut().unwrap();
        let v = q.remove("gpu_allocation_rate").unwrap();
        shares.push(lahar_reports::compare::fmt_value(v.as_f64().map(|x| x * 100.0)));
        q.insert("gpu_share".into(), v);
    }
    std::fs::write(&sp, serde_json::to_string_pretty(&summary).unwrap()).unwrap();
    let old_run = lahar_reports::load::load_run(&out).unwrap();
    assert_eq!(old_run.ts.queues.len(), names.len());
    assert!(old_run.jobs.iter().all(|j| j.wait_s.is_some()), "start read under its old name");
    lahar().arg("report").arg(&out).assert().success();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for s in &shares {
        assert!(html.contains(&format!("<td class=\"n\">{s}</td>")), "the queue's GPU allocation {s} shown");
    }
}

/// The columns of `files` in `out` and the keys of its summary.json that
/// docs/outputs.md does not name.
fn undocumented(out: &Path, files: &[&str]) -> Vec<String> {
    let doc = documented();
    let mut missing = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(out.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        for col in text.lines().next().expect("header").split(',') {
            // Per-queue columns are documented as `name:<queue>`.
            let name = match col.split_once(':') {
                Some((stem, _)) => format!("{stem}:<queue>"),
                None => col.to_string(),
            };
            if !doc.contains(&format!("`{name}`")) {
                missing.push(format!("{f}: {col}"));
            }
        }
    }
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let mut all = BTreeSet::new();
    keys(&json, false, &mut all);
    for k in all {
        if !doc.contains(&format!("`{k}`")) {
            missing.push(format!("summary.json: {k}"));
        }
    }
    missing
}

/// A placement run's files and summary.json keys are documented too.
#[test]
fn every_placement_output_is_documented() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/traces/openb");
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: p}}\nspec:\n  placement: {{demand: 0.5}}\n  cluster:\n    nodeList: {{format: openb, path: {}}}\n  scheduler: {{baseline: best-fit}}\n  workload:\n    - trace: {{format: openb, path: {}}}\n",
        dir.join("openb_node_list_gpu_node.csv").display(),
        dir.join("openb_pod_list_multigpu50.csv").display()
    );
    let (d, p) = write_scenario(&text);
    let out = d.path().join("out");
    lahar().args(["run", "-q", "--out"]).arg(&out).arg(&p).assert().success();
    let missing = undocumented(&out, &["fragmentation.csv", "placements.csv"]);
    assert!(missing.is_empty(), "not in docs/outputs.md: {missing:?}");
}

/// The files of `dir`, by name, sorted.
fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// summary.json without its wall time (the one line that differs run to run).
fn summary_without_wall_time(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    text.lines().filter(|l| !l.contains("\"wall_time_s\"")).collect::<Vec<_>>().join("\n")
}

/// `--outputs` writes the files it names and no other row file; what it writes
/// is what a run of every file writes, and so is the summary.
#[test]
fn outputs_writes_the_files_it_names_as_a_full_run_does() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let example = root.join("examples/faults/training.yaml");
    let d = tempfile::tempdir().unwrap();
    let (all, some) = (d.path().join("all"), d.path().join("some"));
    lahar().args(["run", "-q", "--out"]).arg(&all).arg(&example).assert().success();
    lahar()
        .args(["run", "-q", "--outputs", "jobs, events,summary", "--out"])
        .arg(&some)
        .arg(&example)
        .assert()
        .success();
    assert!(files_in(&all).contains(&"decisions.csv".to_string()));
    assert_eq!(
        files_in(&some),
        [
            ".lahar",
            "events.csv",
            "input-scenario.yaml",
            "input-scheduler.conf",
            "jobs.csv",
            "summary.csv",
            "summary.json"
        ],
    );
    for f in ["jobs.csv", "events.csv", "summary.csv"] {
        assert_eq!(std::fs::read(all.join(f)).unwrap(), std::fs::read(some.join(f)).unwrap(), "{f} differs");
    }
    assert_eq!(summary_without_wall_time(&all), summary_without_wall_time(&some));
    // The same directory run again with other files: the left-out ones of the
    // earlier run do not stay beside the new ones.
    lahar().args(["run", "-q", "--outputs", "decisions", "--out"]).arg(&some).arg(&example).assert().success();
    assert_eq!(
        files_in(&some),
        [".lahar", "decisions.csv", "input-scenario.yaml", "input-scheduler.conf", "summary.csv", "summary.json"]
    );
    assert_eq!(std::fs::read(all.join("decisions.csv")).unwrap(), std::fs::read(some.join("decisions.csv")).unwrap());
    // A report needs jobs.csv and timeseries.csv, and says so.
    let out = lahar().arg("report").arg(&some).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("jobs.csv: missing") && err.contains("--outputs left them out"), "{err}");
}

/// A run to memory (what `lahar.run` does from Python) hands back, byte for
/// byte, the files `lahar run` writes — events.csv of a run with faults
/// included — and summary.json's text; it creates no file.
#[test]
fn a_run_to_memory_returns_the_files_a_run_writes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let example = root.join("examples/faults/training.yaml");
    let d = tempfile::tempdir().unwrap();
    let all = d.path().join("all");
    lahar().args(["run", "-q", "--out"]).arg(&all).arg(&example).assert().success();
    let s = lahar::scenario::load_file(&example).unwrap();
    let never = d.path().join("never");
    let opts = lahar::RunOptions { out_dir: Some(never.clone()), in_memory: true, ..Default::default() };
    let r = lahar::run(s, &opts).unwrap();
    assert!(!never.exists(), "a run to memory created its output directory");
    let names: Vec<&str> = r.tables.files.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["jobs.csv", "pods.csv", "timeseries.csv", "queues.csv", "decisions.csv", "events.csv"]);
    for (name, bytes) in &r.tables.files {
        assert_eq!(bytes, &std::fs::read(all.join(name)).unwrap(), "{name} differs");
    }
    let json = r.summary_json.expect("summary.json's text");
    let json: String = json.lines().filter(|l| !l.contains("\"wall_time_s\"")).collect::<Vec<_>>().join("\n");
    assert_eq!(json, summary_without_wall_time(&all));
    // --outputs chooses the tables as it chooses the files.
    let s = lahar::scenario::load_file(&example).unwrap();
    let outputs = lahar_reports::Outputs::parse("pods,events").unwrap();
    let r = lahar::run(s, &lahar::RunOptions { in_memory: true, outputs, ..Default::default() }).unwrap();
    let names: Vec<&str> = r.tables.files.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["pods.csv", "events.csv"]);
    assert_eq!(r.tables.get("pods.csv").unwrap(), std::fs::read(all.join("pods.csv")).unwrap());
    // Explain files and plots need a directory: refused before the run.
    let s = lahar::scenario::load_file(&example).unwrap();
    let opts = lahar::RunOptions { in_memory: true, explain: vec!["x".into()], ..Default::default() };
    let err = lahar::run(s, &opts).err().expect("refused");
    assert!(err.to_string().contains("a run to memory writes no explain.csv"), "{err}");
}

/// Every misuse of `--outputs` is refused before the run, exit 2, naming the flag.
#[test]
fn outputs_misuse_is_refused_up_front() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("o");
    let refused = |args: &[&str], example: &str| {
        let a = lahar().arg("run").args(args).arg("--out").arg(&out).arg(root.join(example)).assert().code(2);
        assert!(!out.exists(), "{args:?}: wrote {}", out.display());
        String::from_utf8_lossy(&a.get_output().stderr).to_string()
    };
    let e = refused(&["--outputs", "jobs,job"], "examples/faults/training.yaml");
    assert!(
        e.contains(
            "<command line>: --outputs: unknown output `job`; expected some of jobs, pods, timeseries, queues, decisions, events, summary"
        ),
        "{e}"
    );
    let e = refused(&["--outputs", ""], "examples/faults/training.yaml");
    assert!(e.contains("--outputs: expected a comma-separated list"), "{e}");
    let e = refused(&["--outputs", "jobs,decisions", "--plots"], "examples/faults/training.yaml");
    assert!(e.contains("--plots draws from jobs.csv and timeseries.csv"), "{e}");
    let e = refused(&["--outputs", "jobs"], "examples/fragmentation/openb-fgd.yaml");
    assert!(e.contains("a placement scenario (spec.placement) writes placements.csv"), "{e}");
    let e = refused(&["--format", "parquet"], "examples/fragmentation/openb-fgd.yaml");
    assert!(
        e.contains("--format: a placement scenario writes placements.csv and fragmentation.csv, as CSV only"),
        "{e}"
    );
    let e = refused(&["--format", "json"], "examples/faults/training.yaml");
    assert!(e.contains("[possible values: csv, parquet]"), "{e}");
}

/// `--format parquet` leaves `<name>.parquet` where the row CSVs were (the
/// summaries stay), and a later CSV run of the same scenario into the folder
/// clears them as lahar's own files. The values are compared with the CSVs' in
/// python/tests/test_frames.py; the encoding in lahar-reports' parquet tests.
#[test]
fn format_parquet_replaces_the_row_files_and_a_later_run_clears_them() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("o");
    lahar().args(["run", "-q", "--format", "parquet", "--outputs", "jobs,pods", "--out"]).arg(&out).assert().success();
    assert_eq!(
        files_in(&out),
        [
            ".lahar",
            "input-scenario.yaml",
            "input-scheduler.conf",
            "jobs.parquet",
            "pods.parquet",
            "summary.csv",
            "summary.json"
        ]
    );
    let magic = std::fs::read(out.join("jobs.parquet")).unwrap();
    assert!(magic.starts_with(b"PAR1") && magic.ends_with(b"PAR1"));
    lahar().args(["run", "-q", "--outputs", "jobs", "--out"]).arg(&out).assert().success();
    assert_eq!(
        files_in(&out),
        [".lahar", "input-scenario.yaml", "input-scheduler.conf", "jobs.csv", "summary.csv", "summary.json"]
    );
}

/// A snapshot run without decisions.csv still shows the operator what its
/// sessions did (the rows are kept in memory, not read back from the file).
#[test]
fn a_snapshot_run_without_decisions_csv_still_prints_its_decisions() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let d = tempfile::tempdir().unwrap();
    let (all, some) = (d.path().join("all"), d.path().join("some"));
    let snap = root.join("examples/snapshot/cluster.yaml");
    let run = |out: &Path, extra: &[&str]| {
        let a = lahar().args(["run", "--snapshot"]).arg(&snap).args(extra).arg("--out").arg(out).assert().success();
        String::from_utf8_lossy(&a.get_output().stdout).replace(&out.display().to_string(), "OUT")
    };
    let full = run(&all, &[]);
    let summary_only = run(&some, &["--outputs", "summary"]);
    assert!(full.contains("session"), "{full}");
    assert_eq!(full, summary_only);
    assert!(!some.join("decisions.csv").exists());
}

/// A job without a run time runs until the horizon, as its warning says (the run
/// used to end at the last event, here its start at 0: no simulated time, no
/// allocation): one CPU of four for the 2 h horizon. summary.json names the
/// warning's file relative to the scenario's folder, however the path was typed
/// and wherever lahar was started: the outputs are the same.
#[test]
fn a_job_without_run_time_runs_to_the_horizon_and_outputs_name_files_portably() {
    let d = tempfile::tempdir().unwrap();
    let text = scenario(
        "    nodes:\n      - {name: n0, cpu: 4, memory: 8Gi}",
        "  horizon: 2h\n  workload:\n    - jobs:\n        - {name: a, tasks: [{name: t, replicas: 1, resources: {cpu: 1}}]}\n",
    );
    std::fs::write(d.path().join("s.yaml"), text).unwrap();
    let summary = |out: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(d.path().join(out).join("summary.json")).unwrap()).unwrap()
    };
    lahar().current_dir(d.path()).args(["run", "-q", "s.yaml", "--out", "o1"]).assert().success();
    lahar().current_dir(d.path()).args(["run", "-q", "./s.yaml", "--out", "o2"]).assert().success();
    let elsewhere = tempfile::tempdir().unwrap();
    lahar()
        .current_dir(elsewhere.path())
        .args(["run", "-q"])
        .arg(d.path().join("s.yaml"))
        .arg("--out")
        .arg(d.path().join("o3"))
        .assert()
        .success();
    let s = summary("o1");
    assert_eq!(s["metrics"]["sim_time_s"], 7200.0, "{s}");
    assert_eq!(s["metrics"]["cpu_allocation_rate"], 0.25, "{s}");
    let warnings = &s["warnings"];
    assert_eq!(warnings[0]["kind"], "jobs-without-run-time", "{s}");
    assert_eq!(warnings[0]["location"], "s.yaml", "{s}");
    for out in ["o2", "o3"] {
        assert_eq!(summary(out)["warnings"], *warnings, "{out}");
    }
}

/// A run ends with the last thing that happened, not at a timer a job left
/// behind when it ended or sped up before it: each case below ran, and every
/// rate was taken, to that timer before (2026-12-07).
/// - An elastic job (`e`, 2 h on two 4-GPU pods, linear) starts at 1 s on one
///   pod, its finish then due at 14,401 s; `g` ends at 1 h, `e` grows (30 s
///   pause) and does its 7,200 − 1,799.5 s left on two: ends at 9,030.5 s.
///   GPUs held: 4 × 3,600 + 4 × 9,029.5 + 4 × 5,430.5 of 8 × 9,030.5.
/// - A VolcanoJob of 1 h in the shape of Volcano's MPI example: its launcher's
///   TaskCompleted → CompleteJob ends it at 3 min, its workers gone at 210 s
///   (its own finish at 3,600 s never comes): 3 × 180 CPU-seconds of 4 × 210.
/// - A batch/v1 Job of 1 h with `activeDeadlineSeconds: 7200` completes at
///   3,600 s; its deadline never comes.
/// - A job deleted at 10 min: its pod is gone at 630 s (30 s grace).
#[test]
fn a_run_ends_with_its_last_event_not_a_timer_a_job_left() {
    let gpus = "    nodes:\n      - {name: n0, gpus: 4, cpu: 32, memory: 64Gi}\n      - {name: n1, gpus: 4, cpu: 32, memory: 64Gi}";
    let cpus = "    nodes:\n      - {name: n0, cpu: 4, memory: 16Gi}";
    let elastic = "  workload:\n    - jobs:\n        - {name: g, duration: 1h, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 4}}]}\n        - {name: e, submitAt: 1s, minAvailable: 1, scaling: linear, duration: 2h, tasks: [{name: w, replicas: 2, resources: {nvidia.com/gpu: 4}}]}\n";
    let manifests = "  workload:\n    - manifests: [jobs.yaml]\n";
    let mpi = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: mpi, annotations: {lahar.io/duration: 1h}}\nspec:\n  minAvailable: 3\n  tasks:\n    - replicas: 1\n      name: launcher\n      policies: [{event: TaskCompleted, action: CompleteJob}]\n      template:\n        metadata: {annotations: {lahar.io/duration: 3m}}\n        spec: {restartPolicy: OnFailure, containers: [{name: m, image: x, resources: {requests: {cpu: 1}}}]}\n    - replicas: 2\n      name: worker\n      template:\n        spec: {containers: [{name: w, image: x, resources: {requests: {cpu: 1}}}]}\n";
    let batch = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: b, annotations: {lahar.io/duration: 1h}}\nspec:\n  activeDeadlineSeconds: 7200\n  template:\n    spec:\n      schedulerName: volcano\n      restartPolicy: Never\n      containers: [{name: c, image: i, resources: {requests: {cpu: \"1\"}}}]\n";
    let deleted = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: d, annotations: {lahar.io/duration: 1h}}\nspec:\n  tasks:\n    - name: w\n      replicas: 1\n      template:\n        spec: {containers: [{name: c, image: i, resources: {requests: {cpu: \"1\"}}}]}\n";
    let delete_step = "  timeline:\n    - {at: 10m, deleteJob: d}\n";
    let cases = [
        (gpus, elastic.to_string(), "", 9030.5, "gpu_allocation_rate", 72_240.0 / 72_244.0),
        (cpus, manifests.to_string(), mpi, 210.0, "cpu_allocation_rate", 540.0 / 840.0),
        (cpus, manifests.to_string(), batch, 3600.0, "cpu_allocation_rate", 0.25),
        (cpus, format!("{manifests}{delete_step}"), deleted, 630.0, "cpu_allocation_rate", 600.0 / 2520.0),
    ];
    for (nodes, rest, objects, end, rate, value) in cases {
        let (d, p) = write_scenario(&scenario(nodes, &rest));
        std::fs::write(d.path().join("jobs.yaml"), objects).unwrap();
        let out = d.path().join("out");
        lahar().arg("run").arg("-q").arg(&p).arg("--out").arg(&out).assert().success();
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        let m = &s["metrics"];
        assert_eq!(m["sim_time_s"], end, "{objects}{rest}");
        let got = m[rate].as_f64().unwrap();
        assert!((got - value).abs() < 1e-12, "{rate} {got} != {value}: {objects}{rest}");
    }
}

/// A timeline step after the last thing that happened to a job is not carried
/// out, and neither is one after the horizon: the run ends there (its rates are
/// not stretched over an operator's late cordon), timeline.csv has no row for
/// the step, and the `timeline-steps-not-reached` warning counts it, naming
/// the first and why the run ended. `j1` (1 GPU) arrives at 3,502 s and is
/// deleted at 3,503 s: its pod leaves at 3,533 s after its 30 s grace; the
/// cordon at 20,000 s comes after that. With a horizon of 3,000 s neither j1
/// nor the two steps come.
#[test]
fn a_step_after_the_run_is_not_carried_out_and_says_so() {
    let nodes = "    nodes:\n      - {name: n0, gpus: 8, cpu: 64, memory: 256Gi}";
    let rest = |horizon: &str| {
        format!(
            "{horizon}  workload:\n    - jobs:\n        - {{name: j0, duration: 60s, tasks: [{{name: w, replicas: 1, resources: {{nvidia.com/gpu: 1}}}}]}}\n        - {{name: j1, submitAt: 3502s, duration: 2h, tasks: [{{name: w, replicas: 1, resources: {{nvidia.com/gpu: 1}}}}]}}\n  timeline:\n    - {{at: 20000s, cordon: n0}}\n    - {{at: 3503s, deleteJob: j1}}\n"
        )
    };
    for (horizon, end, rows, warning) in [
        (
            "",
            3533.0,
            "t_s,step,action,target,outcome,note\n3503,spec.timeline[1],deleteJob,j1,done,1 pod deleted\n",
            "spec.timeline[0]: 1 timeline step not carried out: the run ended at 3533 s (nothing was left to happen to a job), before it (the first, at 20000 s)",
        ),
        (
            "  horizon: 3000s\n",
            3000.0,
            "",
            "spec.timeline[1]: 2 timeline steps not carried out: the run ended at 3000 s (its horizon), before them (the first, at 3503 s)",
        ),
    ] {
        let (d, p) = write_scenario(&scenario(nodes, &rest(horizon)));
        let out = d.path().join("out");
        let run = lahar().arg("run").arg(&p).arg("--out").arg(&out).assert().success();
        let stderr = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
        assert!(stderr.contains(&format!("warning: {warning}")), "{stderr}");
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(s["metrics"]["sim_time_s"], end, "{horizon}");
        let w = s["warnings"].as_array().unwrap().iter().find(|w| w["kind"] == "timeline-steps-not-reached");
        assert_eq!(w.expect("the warning")["count"], if horizon.is_empty() { 1 } else { 2 });
        assert_eq!(std::fs::read_to_string(out.join("timeline.csv")).unwrap_or_default(), rows, "{horizon}");
    }
}

/// timeline.csv's note tells what a step done deleted: the pods a `NoExecute`
/// taint's manager deletes, those deleted with their nodes, a deleted job's
/// pods not ended yet (here `a`'s three, made again Pending after the taint and
/// with nowhere to go). By hand: `a`'s three pods run on n0, `b`'s two on n1.
#[test]
fn timeline_notes_count_the_pods_a_step_deleted() {
    let nodes = "    nodes:\n      - {name: n0, gpus: 8, cpu: 64, memory: 256Gi, labels: {pool: a}}\n      - {name: n1, gpus: 8, cpu: 64, memory: 256Gi, labels: {pool: b}}";
    let job = |name: &str, n: u32| {
        format!(
            "        - {{name: {name}, duration: 1h, tasks: [{{name: w, replicas: {n}, nodeSelector: {{pool: {name}}}, resources: {{nvidia.com/gpu: 1}}}}]}}\n"
        )
    };
    let rest = format!(
        "  horizon: 10m\n  workload:\n    - jobs:\n{}{}  timeline:\n    - {{at: 60s, taint: n0, key: k, effect: NoExecute}}\n    - {{at: 120s, removeNodes: n1}}\n    - {{at: 130s, deleteJob: a}}\n",
        job("a", 3),
        job("b", 2)
    );
    let (d, p) = write_scenario(&scenario(nodes, &rest));
    let out = d.path().join("out");
    lahar().arg("run").arg(&p).arg("--out").arg(&out).assert().success();
    assert_eq!(
        std::fs::read_to_string(out.join("timeline.csv")).unwrap(),
        "t_s,step,action,target,outcome,note\n60,spec.timeline[0],taint,n0,done,3 pods deleted\n120,spec.timeline[1],removeNodes,n1,done,2 pods deleted\n130,spec.timeline[2],deleteJob,a,done,3 pods deleted\n"
    );
}
