//! `lahar sweep`, `lahar sweep merge` and `lahar run --seed/--set` through the
//! binary: determinism across --jobs, shards, resume after SIGKILL; located errors.

use crate::lahar;
use predicates::prelude::*;
use std::path::{Path, PathBuf};

/// The environment variables that select a shard: removed so the machine running
/// the tests (perhaps itself a Slurm or Kubernetes job) does not shard these runs.
const SHARD_VARS: &[&str] = &[
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_COUNT",
    "JOB_COMPLETION_INDEX",
    "LAHAR_SHARDS",
    "VC_TASK_INDEX",
];

fn sweep_cmd() -> assert_cmd::Command {
    let mut c = lahar();
    c.arg("sweep");
    for v in SHARD_VARS {
        c.env_remove(v);
    }
    c
}

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sweeps/nodes-by-policy.yaml")
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The files that must be byte-identical between two runs of the same sweep.
fn tables(dir: &Path) -> (String, String, String) {
    (read(&dir.join("sweep.json")), read(&dir.join("sweep.csv")), read(&dir.join("summary.csv")))
}

#[test]
fn example_sweep_runs_and_jobs_do_not_change_the_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let (one, two) = (tmp.path().join("one"), tmp.path().join("two"));
    sweep_cmd().arg(example()).arg("--out").arg(&one).args(["--jobs", "1"]).assert().success();
    // The second also writes only each cell's summary: the tables are the same.
    let args = ["--jobs", "2", "-q", "--outputs", "summary"];
    sweep_cmd().arg(example()).arg("--out").arg(&two).args(args).assert().success().stdout("");
    assert_eq!(tables(&one), tables(&two));
    let small = two.join("cells/0004-seed8");
    assert!(
        small.join("summary.json").is_file() && !small.join("jobs.csv").exists() && !small.join("pods.csv").exists()
    );
    let csv = read(&one.join("sweep.csv"));
    let mut lines = csv.lines();
    let head = lines.next().unwrap();
    assert!(head.starts_with("cell,nodes,policy,seed,status,error,completed,unfinished,jct_s.mean,"), "{head}");
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 27);
    // Cell order: nodes slowest, then policy, then the seeds 7, 8, 9 of the scenario.
    assert!(rows[0].starts_with("0000-seed7,3,volcano,7,ok,,"), "{}", rows[0]);
    assert!(rows[4].starts_with("0004-seed8,3,sjf,8,ok,,"), "{}", rows[4]);
    assert!(rows[26].starts_with("0026-seed9,6,gang-fifo,9,ok,,"), "{}", rows[26]);
    let summary = read(&one.join("summary.csv"));
    assert_eq!(summary.lines().count(), 1 + 9);
    assert!(summary.lines().nth(1).unwrap().starts_with("3,volcano,3,3,"));
    // Each cell is a complete run directory, and its numbers are sweep.csv's.
    let cell = one.join("cells/0004-seed8");
    for f in ["jobs.csv", "pods.csv", "decisions.csv", "summary.json", "timeseries.csv"] {
        assert!(cell.join(f).is_file(), "{f}");
    }
    let s: serde_json::Value = serde_json::from_str(&read(&cell.join("summary.json"))).unwrap();
    assert_eq!(s["seed"], 8);
    assert_eq!(s["scheduler"], "sjf");
    let jct = s["metrics"]["jct_s"]["mean"].as_f64().unwrap();
    assert_eq!(rows[4].split(',').nth(8).unwrap().parse::<f64>().unwrap(), jct);
    assert!(one.join("plots/jct_s.mean-vs-nodes.svg").is_file());
    assert!(one.join("plots/jct_s.mean-vs-nodes.png").is_file());
    // Volcano's 3-node cells leave jobs unfinished (a mean of 10.3): the JCT plots
    // mark that point hollow and say why; plots of other metrics do not.
    let first = read(&one.join("summary.csv")).lines().nth(1).unwrap().to_string();
    assert!(first.starts_with("3,volcano,3,3,") && first.contains(",10.333333333333334,"), "{first}");
    let jct = read(&one.join("plots/jct_s.mean-vs-nodes.svg"));
    assert!(jct.contains("hollow: cells with unfinished jobs (not in the mean)"));
    assert!(!read(&one.join("plots/gpu_allocation_rate-vs-nodes.svg")).contains("hollow"));
    // docs/sweeps.md's figure is this plot.
    crate::published::same_figure(&one.join("plots/jct_s.mean-vs-nodes.png"), "docs/img/sweep-jct-vs-nodes.png");
    // Jobs completed: the 95% band of volcano at 3 nodes (389.7 ± 22.3) stops at
    // the 400 jobs a cell has, so no tick goes above 400; node counts are ticked
    // at whole numbers and no label carries a `.0`.
    let svg = read(&one.join("plots/completed-vs-nodes.svg"));
    let labels: Vec<&str> = svg
        .split("<text")
        .skip(1)
        .filter_map(|t| t.split('>').nth(1))
        .map(|t| t.split('<').next().unwrap_or("").trim())
        .collect();
    let numbers: Vec<f64> = labels.iter().filter_map(|l| l.parse::<f64>().ok()).collect();
    assert!(numbers.iter().all(|&v| v <= 400.0), "{labels:?}");
    assert!(numbers.contains(&400.0) && numbers.contains(&5.0), "{labels:?}");
    assert!(labels.iter().all(|l| !l.ends_with(".0") && *l != "3.5"), "{labels:?}");
    // sjf and gang-fifo both complete all 400 jobs: their lines coincide, so the
    // second and third lines are dashed (many short strokes), each leaving the
    // lines under it visible.
    let strokes = |color: &str| svg.matches(&format!("stroke=\"{color}\" stroke-width=\"2\"")).count();
    assert!(
        strokes("#FF7F0E") > 10 && strokes("#2CA02C") > 10,
        "dashed: {} {}",
        strokes("#FF7F0E"),
        strokes("#2CA02C")
    );
    // The sweep's report.
    lahar().arg("report").arg(&one).assert().success();
    let html = read(&one.join("report.html"));
    assert!(html.contains("Sweep nodes-by-policy") && html.contains("<svg"), "report");
}

#[test]
fn three_shards_in_separate_processes_merge_into_the_unsharded_sweep() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    sweep_cmd().arg(example()).arg("--out").arg(&whole).arg("-q").assert().success();
    let mut shards = Vec::new();
    for k in 0..3 {
        let d = tmp.path().join(format!("shard{k}"));
        // `--shard` counts from 1.
        let out = sweep_cmd().arg(example()).arg("--out").arg(&d).arg(format!("--shard={}/3", k + 1)).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(stdout.contains(&format!("shard {}/3: 9 cells", k + 1)), "{stdout}");
        // A shard runs cells i with i mod 3 = k, and writes no tables.
        let mut cells: Vec<String> = std::fs::read_dir(d.join("cells"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        cells.sort();
        assert_eq!(cells.len(), 9);
        assert!(cells.iter().all(|c| c[..4].parse::<usize>().unwrap() % 3 == k), "{cells:?}");
        assert!(!d.join("sweep.csv").exists());
        shards.push(d);
    }
    let merged = tmp.path().join("merged");
    lahar().args(["sweep", "merge"]).args(&shards).arg("--out").arg(&merged).assert().success();
    assert_eq!(tables(&merged), tables(&whole));
    // Merging into one of the shard directories works too, here with the plots
    // for a paper: the same tables, each plot at the paper's size, no title.
    lahar()
        .args(["sweep", "merge", "--plot-style", "paper"])
        .args(&shards)
        .arg("--out")
        .arg(&shards[0])
        .assert()
        .success();
    assert_eq!(tables(&shards[0]), tables(&whole));
    let plots: Vec<PathBuf> = std::fs::read_dir(shards[0].join("plots"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "png"))
        .collect();
    assert!(!plots.is_empty());
    for p in &plots {
        let png = std::fs::read(p).unwrap();
        let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        assert_eq!((be(&png[16..20]), be(&png[20..24])), (1050, 700), "{}", p.display());
        let svg = read(&p.with_extension("svg"));
        assert!(!svg.contains(" by nodes\n") && svg.contains("<text"), "{}: no title", p.display());
        let screen = read(&whole.join("plots").join(p.with_extension("svg").file_name().unwrap()));
        assert!(screen.contains(" by nodes\n"), "{}: the screen style's has its title", p.display());
    }
    // A merge of too few shards says which cells are missing and fails.
    let partial = tmp.path().join("partial");
    lahar()
        .args(["sweep", "merge"])
        .arg(&shards[1])
        .arg("--out")
        .arg(&partial)
        .assert()
        .code(1)
        .stderr(predicates::str::contains("18 cells have no outputs (first: 0000-seed7)"));
    assert!(read(&partial.join("sweep.csv")).contains("0000-seed7,3,volcano,7,missing,,"));
}

#[test]
fn the_shard_comes_from_each_array_job_environment() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&str, &[(&str, &str)]); 3] = [
        ("slurm", &[("SLURM_ARRAY_TASK_ID", "2"), ("SLURM_ARRAY_TASK_MIN", "1"), ("SLURM_ARRAY_TASK_COUNT", "4")]),
        ("k8s", &[("JOB_COMPLETION_INDEX", "1"), ("LAHAR_SHARDS", "4")]),
        ("volcano", &[("VC_TASK_INDEX", "1"), ("VC_SWEEP_NUM", "4")]),
    ];
    for (name, env) in cases {
        let d = tmp.path().join(name);
        let mut c = sweep_cmd();
        c.arg(example()).arg("--out").arg(&d);
        for (k, v) in env {
            c.env(k, v);
        }
        // Each environment counts from its own base; lahar prints the shard from 1.
        c.assert().success().stdout(predicates::str::contains("shard 2/4: 7 cells (7 run, 0 kept, 0 failed)"));
        let mut cells: Vec<String> = std::fs::read_dir(d.join("cells"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy()[..4].to_string())
            .collect();
        cells.sort();
        assert_eq!(cells, ["0001", "0005", "0009", "0013", "0017", "0021", "0025"], "{name}");
    }
    // An index without a count is a usage error naming the fix.
    sweep_cmd()
        .arg(example())
        .arg("--out")
        .arg(tmp.path().join("x"))
        .env("JOB_COMPLETION_INDEX", "0")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--shards N or set LAHAR_SHARDS"));
}

/// A sweep of 24 cells of about 0.1 s each, for the kill test.
fn slow_sweep(dir: &Path) -> PathBuf {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/synthetic-mix.yaml");
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Sweep\nmetadata: {{name: slow}}\nspec:\n  scenario: {}\n  seeds: 8\n  grid:\n    - {{name: jobs, path: 'spec.workload[0].synthetic.jobs', values: [2500, 3000, 3500]}}\n",
        base.display()
    );
    let p = dir.join("slow.yaml");
    std::fs::write(&p, text).unwrap();
    p
}

fn finished_cells(out: &Path) -> Vec<(String, String)> {
    let Ok(rd) = std::fs::read_dir(out.join("cells")) else { return Vec::new() };
    let mut v: Vec<(String, String)> = rd
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().to_string_lossy().into_owned();
            let s = std::fs::read_to_string(e.path().join("summary.json")).ok()?;
            (!name.starts_with('.')).then_some((name, s))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_sweep_killed_midway_resumes_without_redoing_finished_cells() {
    let tmp = tempfile::tempdir().unwrap();
    let sweep = slow_sweep(tmp.path());
    let out = tmp.path().join("out");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_lahar"))
        .arg("sweep")
        .arg(&sweep)
        .arg("--out")
        .arg(&out)
        .args(["--jobs", "1", "-q"])
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("VC_TASK_INDEX")
        .spawn()
        .unwrap();
    // Wait for a few finished cells, then SIGKILL (std's kill is SIGKILL on Unix).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while finished_cells(&out).len() < 3 {
        assert!(std::time::Instant::now() < deadline, "no cell finished");
        assert!(child.try_wait().unwrap().is_none(), "the sweep ended before it could be killed");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = finished_cells(&out);
    assert!(before.len() < 24, "killed midway");
    let out2 = sweep_cmd().arg(&sweep).arg("--out").arg(&out).args(["--resume", "--jobs", "2"]).output().unwrap();
    assert!(out2.status.success(), "{}", String::from_utf8_lossy(&out2.stderr));
    let stdout = String::from_utf8(out2.stdout).unwrap();
    assert!(stdout.contains(&format!("resumed: {} cells kept, {} run", before.len(), 24 - before.len())), "{stdout}");
    // Cells finished before the kill were kept as they were (summary.json holds the
    // run's wall time: a rerun would have rewritten it).
    let after = finished_cells(&out);
    assert_eq!(after.len(), 24);
    for (id, s) in &before {
        assert_eq!(after.iter().find(|(i, _)| i == id).map(|x| &x.1), Some(s), "{id} was recomputed");
    }
    // No temporary directory is left, and the tables are those of an uninterrupted run.
    assert!(
        std::fs::read_dir(out.join("cells")).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with('.'))
    );
    let fresh = tmp.path().join("fresh");
    sweep_cmd().arg(&sweep).arg("--out").arg(&fresh).arg("-q").assert().success();
    assert_eq!(tables(&out), tables(&fresh));
}

#[test]
fn bad_axes_are_located_errors_before_any_cell_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/synthetic-mix.yaml");
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Sweep\nmetadata: {{name: bad}}\nspec:\n  scenario: {}\n  grid:\n    - name: nodes\n      path: spec.cluster.nodeGroups[0].count\n      values: [2, four]\n    - name: typo\n      path: spec.cluster.nodeGroup[0].count\n      values: [1]\n    - name: far\n      path: spec.queues[7].weight\n      values: [1]\n",
        base.display()
    );
    let p = tmp.path().join("bad.yaml");
    std::fs::write(&p, text).unwrap();
    let out = tmp.path().join("out");
    let f = p.display().to_string();
    sweep_cmd()
        .arg(&p)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!(
            "{f}:9:19: spec.cluster.nodeGroups[0].count: expected an integer, got `four` (set by axis `nodes` value `four`)"
        )))
        .stderr(predicates::str::contains(format!(
            "{f}:12:16: spec.cluster.nodeGroup[0].count: `spec.cluster` has no list `nodeGroup`; did you mean `nodeGroups`?"
        )))
        .stderr(predicates::str::contains(format!("{f}:15:16: spec.queues[7].weight: `spec.queues` has 2 items, no index 7")));
    assert!(!out.exists(), "nothing ran");
}

#[test]
fn outputs_misuse_is_refused_before_any_cell_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let a = sweep_cmd().arg(example()).arg("--out").arg(&out).args(["--outputs", "jobs,plots"]).assert().code(2);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(err.contains("--outputs: unknown output `plots`; expected some of jobs, pods"), "{err}");
    assert!(!out.exists());
    // A sweep of placement replays: --outputs does not choose their files.
    let grid = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sweeps/fgd-grid.yaml");
    let a = sweep_cmd().arg(grid).arg("--out").arg(&out).args(["--outputs", "jobs"]).assert().code(2);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(err.contains("--outputs: a placement scenario (spec.placement) writes placements.csv"), "{err}");
    assert!(!out.exists());
}

#[test]
fn a_directory_never_mixes_two_sweeps() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    sweep_cmd().arg(example()).arg("--out").arg(&out).arg("-q").assert().success();
    let other = slow_sweep(tmp.path());
    sweep_cmd()
        .arg(&other)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("holds sweep `nodes-by-policy` made from another sweep file"));
}

#[test]
fn run_seed_and_set_override_the_scenario() {
    let tmp = tempfile::tempdir().unwrap();
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/synthetic-mix.yaml");
    let out = tmp.path().join("o");
    lahar()
        .arg("run")
        .arg(&base)
        .arg("--out")
        .arg(&out)
        .args(["-q", "--seed", "11", "--set", "spec.scheduler={baseline: sjf}"])
        .args(["--set", "spec.cluster.nodeGroups[0].count=2"])
        .assert()
        .success();
    let s: serde_json::Value = serde_json::from_str(&read(&out.join("summary.json"))).unwrap();
    assert_eq!(s["seed"], 11);
    assert_eq!(s["scheduler"], "sjf");
    assert_eq!(s["metrics"]["gpus_total"], 16.0);
    lahar()
        .arg("run")
        .arg(&base)
        .args(["-q", "--set", "spec.cluster.nodeGroups[0].count=two"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "<command line>: spec.cluster.nodeGroups[0].count: expected an integer, got `two` (set by --set spec.cluster.nodeGroups[0].count=two)",
        ));
    lahar()
        .arg("validate")
        .arg(&base)
        .args(["--set", "spec.queuez=1", "--set", "nothing"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--set: `nothing`: expected PATH=VALUE"));
    lahar().arg("validate").arg(&base).args(["--set", "spec.queuez=1"]).assert().code(2).stderr(
        predicates::str::contains("unknown field `queuez`")
            .and(predicates::str::contains("(set by --set spec.queuez=1)")),
    );
    // An error the override did not cause keeps its place in the file.
    let bad = tmp.path().join("bad.yaml");
    let text = lahar::scenario::DEFAULT_SCENARIO.replace("  seed: 42\n", "  seed: 42\n  horizon: 0\n");
    std::fs::write(&bad, text).unwrap();
    lahar()
        .arg("validate")
        .arg(&bad)
        .args(["--seed", "3"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!("{}:12:12: spec.horizon: must be longer than 0", bad.display())));
}

#[test]
fn lahar_simulates_its_own_sweep_job() {
    // deploy/volcano-job.yaml, as Volcano runs it, read by lahar's manifest importer:
    // 4 shard pods of 2 CPUs on two 4-CPU nodes all start at once and run 20 minutes.
    let job = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/volcano-job.yaml");
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: self}}\nspec:\n  cluster:\n    nodeGroups:\n      - {{name: cpu, count: 2, gpus: 0, cpu: 4, memory: 16Gi}}\n  workload:\n    - manifests: {}\n",
        job.display()
    );
    let r = crate::run_str(&text);
    let rows = r.rows();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].job, "lahar-sweep");
    assert_eq!(rows[0].end, Some(1_200_000_000));
    let tmp = tempfile::tempdir().unwrap();
    let (_d, p) = crate::write_scenario(&text);
    lahar().arg("run").arg(&p).arg("--out").arg(tmp.path()).arg("-q").assert().success();
    let pods = read(&tmp.path().join("pods.csv"));
    let mut lines: Vec<&str> = pods.lines().skip(1).collect();
    lines.sort();
    assert_eq!(
        lines,
        [
            "lahar-sweep,default/lahar-sweep-sweep-0,sweep,0,cpu-1,0,0,1200,completed",
            "lahar-sweep,default/lahar-sweep-sweep-1,sweep,1,cpu-0,0,0,1200,completed",
            "lahar-sweep,default/lahar-sweep-sweep-2,sweep,2,cpu-1,0,0,1200,completed",
            "lahar-sweep,default/lahar-sweep-sweep-3,sweep,3,cpu-0,0,0,1200,completed",
        ]
    );
}

#[test]
fn a_failing_cell_is_recorded_and_the_others_run() {
    // Each value is valid alone; `sjf` with a conf is not (a scheduler is a baseline
    // or a conf): that one cell fails at load, the sweep goes on and exits 1.
    let tmp = tempfile::tempdir().unwrap();
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/synthetic-mix.yaml");
    let conf = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/volcano/volcano-scheduler.conf");
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Sweep\nmetadata: {{name: clash}}\nspec:\n  scenario: {}\n  grid:\n    - name: policy\n      path: spec.scheduler\n      values: [{{name: default, value: null}}, {{name: sjf, value: {{baseline: sjf}}}}]\n    - name: conf\n      path: spec.scheduler.conf\n      values: [{}]\n",
        base.display(),
        conf.display()
    );
    let p = tmp.path().join("clash.yaml");
    std::fs::write(&p, text).unwrap();
    let out = tmp.path().join("out");
    sweep_cmd()
        .arg(&p)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicates::str::contains("error: cell 0001 failed:"))
        .stdout(predicates::str::contains("2 cells, 1 ok, 1 failed, 0 missing"));
    let csv = read(&out.join("sweep.csv"));
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert!(rows[0].starts_with("0000,default,"), "{}", rows[0]);
    assert!(rows[0].contains(",ok,,"), "{}", rows[0]);
    assert!(rows[1].starts_with("0001,sjf,"), "{}", rows[1]);
    assert!(rows[1].contains(",failed,"), "{}", rows[1]);
    let error = read(&out.join("cells/0001/error.txt"));
    assert!(error.contains("spec.scheduler"), "{error}");
    assert!(!out.join("cells/0001/summary.json").exists());
    // --resume runs the failed cell again (and only it).
    sweep_cmd()
        .arg(&p)
        .arg("--out")
        .arg(&out)
        .arg("--resume")
        .assert()
        .code(1)
        .stdout(predicates::str::contains("resumed: 1 cells kept, 1 run"));
}

/// The faults example's sweep: its tables end with the fault metrics and it
/// plots goodput; the example sweep without faults keeps its columns.
#[test]
fn a_sweep_with_faults_shows_their_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sweeps/faults-elastic.yaml");
    let out = dir.path().join("fe");
    sweep_cmd().arg(&ex).arg("--out").arg(&out).assert().success();
    let head = read(&out.join("sweep.csv")).lines().next().unwrap().to_string();
    assert!(head.ends_with(",slo_misses,faults.goodput,faults.gpu_hours_lost_to_failures"), "{head}");
    assert!(out.join("plots/faults.goodput-vs-min_fraction.png").exists());
    let plain = dir.path().join("plain");
    sweep_cmd().arg(example()).arg("--out").arg(&plain).assert().success();
    let head = read(&plain.join("sweep.csv")).lines().next().unwrap().to_string();
    assert!(head.ends_with(",slo_misses"), "{head}");
    assert!(
        !plain.join("plots").read_dir().unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("faults."))
    );
}
