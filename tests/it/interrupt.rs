//! SIGINT (Ctrl-C) and SIGTERM (a batch system's time limit) end a run or a sweep
//! cleanly (issue 42), through the binary: every file parses whole, summary.json
//! says where the run stopped, the exit code is the shell's for the signal
//! (130, 143); `lahar check` refuses the partial run; a sweep keeps its finished
//! cells, leaves no temporary directory and writes no tables until `--resume`.

use super::*;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A run of minutes (400,000 jobs, overloaded): the tests stop it at its first rows.
const LONG: &str = "apiVersion: lahar.io/v1alpha1
kind: Scenario
metadata: {name: long}
spec:
  cluster:
    nodeGroups:
      - {name: h100, count: 64, gpuModel: H100-SXM-80G, gpus: 8, cpu: 96, memory: 1Ti}
  workload:
    - synthetic:
        jobs: 400000
        arrival: {poisson: {ratePerHour: 300}}
        gpus: {1: 40, 2: 20, 4: 20, 8: 20}
        duration: {lognormal: {median: 1h, sigma: 1.0, min: 1m, max: 2d}}
";

fn spawn(args: &[&std::ffi::OsStr]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_lahar"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("lahar")
}

/// Waits up to a minute for `ready` while `child` runs.
fn wait_until(child: &mut Child, what: &str, ready: impl Fn() -> bool) {
    let start = Instant::now();
    while !ready() {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().expect("stderr"), &mut err).unwrap();
            panic!("lahar ended ({status}) before {what}: {err}");
        }
        assert!(start.elapsed() < Duration::from_secs(60), "waited a minute for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `sig` (`-INT`, `-TERM`) and returns the exit code and stderr.
fn stop(mut child: Child, sig: &str) -> (Option<i32>, String) {
    let ok = Command::new("kill").args([sig, &child.id().to_string()]).status().expect("kill");
    assert!(ok.success());
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().expect("stderr"), &mut err).unwrap();
            return (status.code(), err);
        }
        assert!(start.elapsed() < Duration::from_secs(60), "not stopped a minute after {sig}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every row of a CSV file parses with the header's width.
fn whole_rows(path: &Path) -> usize {
    let mut rd = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let width = rd.headers().expect("header").len();
    let mut n = 0;
    for r in rd.records() {
        let r = r.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(r.len(), width, "{}: a cut row", path.display());
        n += 1;
    }
    n
}

#[test]
fn an_interrupted_run_ends_with_whole_files_and_says_so() {
    let (d, p) = write_scenario(LONG);
    for (sig, name, code) in [("-INT", "SIGINT", 130), ("-TERM", "SIGTERM", 143)] {
        let out = d.path().join(name);
        let mut child = spawn(&["run".as_ref(), "-q".as_ref(), "--out".as_ref(), out.as_os_str(), p.as_os_str()]);
        // Started: rows are streaming out.
        wait_until(&mut child, "decisions", || {
            std::fs::metadata(out.join("decisions.csv")).is_ok_and(|m| m.len() > 100_000)
        });
        let (got, err) = stop(child, sig);
        assert_eq!(got, Some(code), "{err}");
        assert!(err.contains(&format!("interrupted ({name}) at simulated time")), "{err}");
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).expect("summary.json")).unwrap();
        let i = &s["interrupted"];
        assert_eq!(i["signal"], name);
        let at = i["at_s"].as_f64().expect("at_s");
        assert!(at > 0.0 && at == s["metrics"]["sim_time_s"].as_f64().unwrap(), "{i}");
        let jobs = i["jobs"].as_u64().expect("jobs");
        assert!(jobs > 0 && jobs < 400_000, "{i}");
        assert_eq!(s["metrics"]["jobs"].as_u64(), Some(jobs));
        // Every job submitted by then has its row; every file parses whole.
        assert_eq!(whole_rows(&out.join("jobs.csv")) as u64, jobs);
        for f in ["pods.csv", "decisions.csv", "timeseries.csv", "summary.csv"] {
            whole_rows(&out.join(f));
        }
        // A partial run is no baseline; report reads it.
        lahar()
            .args(["check", "--write-baseline"])
            .arg(d.path().join("b.json"))
            .arg(&out)
            .assert()
            .code(2)
            .stderr(predicates::str::contains("the run was interrupted at"));
        lahar().arg("report").arg(&out).assert().success();
        let html = std::fs::read_to_string(out.join("report.html")).unwrap();
        assert!(html.contains(&format!("by {name} at")), "report.html names the interrupt");
    }
}

#[test]
fn an_interrupted_sweep_keeps_finished_cells_and_leaves_no_debris() {
    let (d, _) = write_scenario(LONG);
    let sweep = d.path().join("sweep.yaml");
    std::fs::write(
        &sweep,
        "apiVersion: lahar.io/v1alpha1\nkind: Sweep\nmetadata: {name: s}\nspec:\n  scenario: scenario.yaml\n  seeds: 1\n  grid:\n    - name: jobs\n      path: spec.workload[0].synthetic.jobs\n      values: [50, 400000]\n",
    )
    .unwrap();
    let out = d.path().join("out");
    let mut child = spawn(&[
        "sweep".as_ref(),
        sweep.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--jobs".as_ref(),
        "2".as_ref(),
    ]);
    let cells = out.join("cells");
    let names = || -> Vec<String> {
        std::fs::read_dir(&cells)
            .map(|rd| rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default()
    };
    // The small cell is done and the big one is under way in its temporary directory.
    wait_until(&mut child, "a finished cell beside a running one", || {
        let n = names();
        n.iter().any(|c| !c.starts_with(".tmp-") && cells.join(c).join("summary.json").is_file())
            && n.iter().any(|c| c.starts_with(".tmp-"))
    });
    let (code, err) = stop(child, "-INT");
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("interrupted (SIGINT): 1 cells finished and kept, 1 not run"), "{err}");
    let left = names();
    assert_eq!(left.len(), 1, "only the finished cell is left: {left:?}");
    assert!(cells.join(&left[0]).join("summary.json").is_file());
    assert!(!out.join("sweep.csv").exists(), "no tables over part of the sweep");
}

/// Off a terminal (a batch system's log, CI), a run without `-q` writes a progress
/// line every `LAHAR_PROGRESS_SECONDS` with jobs done, simulated time and the time
/// left; `-q` writes none.
#[test]
fn progress_lines_go_to_a_log() {
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/large-h100.yaml");
    let d = tempfile::tempdir().unwrap();
    let run = |quiet: bool| {
        let mut c = lahar();
        c.env("LAHAR_PROGRESS_SECONDS", "0.001").arg("run").arg(&ex).arg("--out").arg(d.path().join("o"));
        if quiet {
            c.arg("-q");
        }
        let o = c.assert().success().get_output().clone();
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let err = run(false);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("lahar: ")).collect();
    assert!(!lines.is_empty(), "{err}");
    for l in &lines {
        assert!(l.contains("/12000 jobs done (") && l.contains(", simulated ") && l.contains(" elapsed, "), "{l}");
    }
    assert!(!run(true).contains("lahar: "), "-q is quiet");
}
