//! The command-line contract: outputs, byte-identical reruns, exit codes.

use super::*;
use crate::lahar;
use predicates::prelude::*;

#[test]
fn default_run_writes_four_outputs_and_reruns_identically() {
    let dir = tempfile::tempdir().unwrap();
    let out1 = dir.path().join("a");
    let out2 = dir.path().join("b");
    lahar()
        .args(["run", "--out"])
        .arg(&out1)
        .assert()
        .success()
        .stdout(predicate::str::contains("JCT mean"))
        .stdout(predicate::str::contains("GPU allocation rate"));
    lahar().args(["run", "--quiet", "--out"]).arg(&out2).assert().success().stdout("");
    for f in ["jobs.csv", "pods.csv", "timeseries.csv", "decisions.csv"] {
        let a = std::fs::read(out1.join(f)).unwrap();
        let b = std::fs::read(out2.join(f)).unwrap();
        assert!(a.len() > 100, "{f} is empty");
        assert!(a == b, "{f} differs between two runs of the same scenario");
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out1.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["seed"], 42);
    assert_eq!(summary["metrics"]["jobs"], 3000);
    assert!(summary["run"]["wall_time_s"].is_number());
    assert!(summary.get("wall_time_s").is_none());
    let jobs = std::fs::read_to_string(out1.join("jobs.csv")).unwrap();
    assert_eq!(
        jobs.lines().next().unwrap(),
        "job,queue,priority,gpus,submit_s,start_s,end_s,state,jct_s,wait_s,ideal_s,slowdown,preemptions,nodes_spanned,highest_tier,retries,lost_gpu_s,kind,deadline_s"
    );
    assert_eq!(jobs.lines().count(), 3001);
    let pods = std::fs::read_to_string(out1.join("pods.csv")).unwrap();
    assert_eq!(pods.lines().next().unwrap(), "job,pod,task,index,node,gpus,start_s,end_s,reason_end");
}

#[test]
fn no_subcommand_prints_help_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    lahar().current_dir(dir.path()).assert().code(2).stderr(predicate::str::contains("Usage: lahar <COMMAND>"));
    assert!(!dir.path().join("out").exists(), "bare lahar wrote outputs");
    // `lahar run` without a scenario still runs the embedded default.
    lahar().current_dir(dir.path()).args(["run", "-q"]).assert().success();
    assert!(dir.path().join("out/default/summary.json").exists());
}

/// `lahar init` prints scenarios that validate as they are; `lahar list` names
/// what exists.
#[test]
fn init_and_list_are_starting_points() {
    let dir = tempfile::tempdir().unwrap();
    for example in [None, Some("with-nta"), Some("baseline-sjf")] {
        let mut cmd = lahar();
        cmd.arg("init");
        if let Some(e) = example {
            cmd.args(["--example", e]);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{example:?}");
        let f = dir.path().join("start.yaml");
        std::fs::write(&f, &out.stdout).unwrap();
        lahar().arg("validate").arg(&f).assert().success();
    }
    lahar()
        .args(["init", "--example", "nope"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown example `nope`; expected one of: large-h100"));
    lahar().args(["list", "plugins"]).assert().success().stdout(predicate::str::contains("network-topology-aware\n"));
    lahar()
        .args(["list", "schedulers"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("volcano\t")
                .and(predicate::str::contains(
                    "tiresias\tbaseline: discretized 2D-LAS with priority queues and a starvation guard (spec.scheduler: {baseline: tiresias}; also reads thresholds, promoteKnob, suspend)\n",
                ))
                .and(predicate::str::contains("sjf\tbaseline: shortest job first"))
                .and(predicate::str::contains("also reads runTime)\n"))
                .and(predicate::str::contains("fifo\tbaseline: strict head-of-line FIFO (spec.scheduler: {baseline: fifo})\n")),
        );
    lahar().args(["list", "models"]).assert().success().stdout(predicate::str::contains("llama-70b\n"));
    lahar().args(["list", "gpus"]).assert().success().stdout(predicate::str::contains("H100\tHopper\n"));
    lahar().args(["list", "queues"]).assert().code(2);
}

#[test]
fn validate_accepts_a_good_scenario() {
    let (_d, p) = write_scenario(&scenario(
        "    nodes:\n      - {name: n0, cpu: 8, memory: 16Gi, gpus: 2}",
        "  workload:\n    - jobs:\n      - {name: j, duration: 10s, tasks: [{name: w, replicas: 2, resources: {nvidia.com/gpu: 1}}]}\n",
    ));
    lahar()
        .arg("validate")
        .arg(&p)
        .assert()
        .success()
        .stdout(predicate::str::contains("ok (1 nodes, 1 queues, 1 jobs)"));
}

#[test]
fn output_dir_resolves_against_the_scenario_folder() {
    let (d, p) = write_scenario(&scenario(
        "    nodes:\n      - {name: n0, cpu: 8, memory: 16Gi}",
        "  workload:\n    - jobs:\n      - {name: j, duration: 10s, tasks: [{name: w, replicas: 1, resources: {cpu: 1}}]}\n  output: {dir: results}\n",
    ));
    lahar().args(["run", "-q"]).arg(&p).assert().success();
    let jobs = std::fs::read_to_string(d.path().join("results/jobs.csv")).unwrap();
    assert!(jobs.contains("j,default,0,0,0,0,10,Completed,10,0,10,1,0,1,0,0,0,VolcanoJob"), "{jobs}");
}

#[test]
fn usage_errors_exit_2() {
    lahar().arg("frobnicate").assert().code(2);
    lahar().args(["run", "--sessions", "0"]).assert().code(2);
    lahar().args(["validate"]).assert().code(2);
}

#[test]
fn sessions_flag_stops_early() {
    let dir = tempfile::tempdir().unwrap();
    lahar().args(["run", "-q", "--sessions", "5", "--out"]).arg(dir.path()).assert().success();
    let s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["metrics"]["sessions"], 5);
}

/// The scenario files under `root` (Kubernetes manifests, read by a scenario rather
/// than run, are left out), sorted.
fn example_scenarios(root: &Path) -> Vec<std::path::PathBuf> {
    let mut scenarios = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "yaml")
                && std::fs::read_to_string(&p).unwrap().contains("kind: Scenario")
            {
                scenarios.push(p);
            }
        }
    }
    scenarios.sort();
    scenarios
}

/// Every scenario in examples/ validates (examples double as smoke tests).
#[test]
fn examples_validate() {
    let scenarios = example_scenarios(&Path::new(env!("CARGO_MANIFEST_DIR")).join("examples"));
    for p in &scenarios {
        lahar().arg("validate").arg(p).assert().success();
    }
    // includes the trace replays (swf, openb), which import the real samples
    assert!(scenarios.len() >= 12, "examples/ has {} scenarios", scenarios.len());
}

/// The gang example behaves as its comments say.
#[test]
fn gang_example_runs_as_documented() {
    let dir = tempfile::tempdir().unwrap();
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/gang-dependson.yaml");
    lahar().args(["run", "-q", "--out"]).arg(dir.path()).arg(&p).assert().success();
    let jobs = std::fs::read_to_string(dir.path().join("jobs.csv")).unwrap();
    let state = |name: &str| {
        jobs.lines().find(|l| l.starts_with(&format!("{name},"))).unwrap().split(',').nth(7).unwrap().to_string()
    };
    assert_eq!(state("gang-too-big"), "Pending");
    assert_eq!(state("gang-elastic"), "Completed");
    assert_eq!(state("mpi"), "Completed");
}

/// A reused output directory loses lahar's own files of the earlier run (the
/// earlier explain.csv and plots would otherwise sit beside the new CSVs); the
/// user's other files stay.
#[test]
fn a_reused_output_directory_has_no_stale_outputs() {
    let (d, p) = write_scenario(&scenario(crate::reports::TINY, ""));
    let out = d.path().join("out");
    lahar().args(["run", "-q", "--plots", "--explain", "j1-w-0", "--out"]).arg(&out).arg(&p).assert().success();
    assert!(out.join("explain.csv").is_file() && out.join("plots/gpu_utilization.svg").is_file());
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    std::fs::write(out.join("plots/sketch.svg"), "mine").unwrap();
    lahar().args(["run", "-q", "--out"]).arg(&out).arg(&p).assert().success();
    assert!(!out.join("explain.csv").exists(), "explain.csv of the earlier run is still there");
    assert!(!out.join("plots/gpu_utilization.svg").exists() && !out.join("plots/gpu_utilization.png").exists());
    assert!(out.join("notes.txt").is_file() && out.join("plots/sketch.svg").is_file(), "a user file was removed");
    assert!(out.join("decisions.csv").is_file() && out.join("summary.json").is_file());
}

/// An output directory that cannot be written fails before the simulation, with
/// the directory named, exit code 1 and no panic.
#[test]
fn an_unwritable_output_directory_fails_up_front() {
    let (_d, p) = write_scenario(&scenario(crate::reports::TINY, ""));
    lahar()
        .args(["run", "--out", "/proc/lahar-cannot-write-here"])
        .arg(&p)
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains("cannot write outputs to /proc/lahar-cannot-write-here"))
        .stderr(predicate::str::contains("panicked").not());
}

/// A reader that goes away (`lahar run | true`, `| head`) ends lahar quietly: exit
/// code 0, no panic. The pipe's read end is closed before lahar writes.
#[test]
fn a_closed_stdout_ends_quietly() {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec!["run".to_string(), "--out".into(), dir.path().join("o").display().to_string()],
        vec!["nccl".into(), "--collective".into(), "allreduce".into()],
        // `lahar trace inspect FILE | head` (issue 12, item 10).
        vec![
            "trace".into(),
            "inspect".into(),
            "--format".into(),
            "lahar".into(),
            concat!(env!("CARGO_MANIFEST_DIR"), "/examples/traces/canonical/openb-500.csv").into(),
        ],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_lahar"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?} panicked:\n{err}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
    }
}

/// `lahar completions SHELL` prints a script that knows every command and flag.
#[test]
fn completions_for_each_shell() {
    for (shell, marker) in [("bash", "_lahar()"), ("zsh", "#compdef lahar"), ("fish", "complete -c lahar")] {
        let out = lahar().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(marker), "{shell}: {}", &text[..text.len().min(200)]);
        for word in ["sweep", "merge", "check", "strict", "tolerance", "exhaustive"] {
            assert!(text.contains(word), "{shell} completion lacks {word}");
        }
    }
    lahar().args(["completions", "ksh"]).assert().code(2);
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// Every example scenario, and the example sweep, runs from a copy of examples/
/// outside the repository: a clone of lahar alone runs every example.
#[test]
fn every_example_runs_from_a_copy_outside_the_repository() {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("examples");
    copy_tree(&Path::new(env!("CARGO_MANIFEST_DIR")).join("examples"), &copy);
    let scenarios = example_scenarios(&copy);
    assert!(scenarios.len() >= 19, "{} example scenarios", scenarios.len());
    for (i, p) in scenarios.iter().enumerate() {
        let out = tmp.path().join(format!("out{i}"));
        let o = lahar().arg("run").arg(p).arg("--out").arg(&out).arg("-q").output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{}: {err}", p.display());
        assert!(!err.contains("panicked"), "{}: {err}", p.display());
        // A placement scenario writes its own files in place of jobs.csv.
        let main_file = if out.join("fragmentation.csv").is_file() { "placements.csv" } else { "jobs.csv" };
        assert!(out.join(main_file).is_file() && out.join("summary.json").is_file(), "{}", p.display());
    }
    let sweep = copy.join("sweeps/nodes-by-policy.yaml");
    lahar().arg("sweep").arg(&sweep).arg("--out").arg(tmp.path().join("sweep")).arg("-q").assert().success();
}

/// Every command `lahar --help` shows as an example is one the parser takes:
/// each is run with `--help` appended, which clap answers only once every
/// argument before it is known (an unknown flag is an error first).
#[test]
fn the_help_examples_parse() {
    let out = lahar().arg("--help").assert().success().get_output().stdout.clone();
    let help = String::from_utf8_lossy(&out).to_string();
    let examples = help.split_once("Examples:\n").expect("an Examples section").1;
    let mut seen = 0;
    for line in examples.lines().take_while(|l| !l.trim().is_empty()) {
        // The command ends where its comment begins (two spaces or more) or at a redirect.
        let cmd = line.trim_start().split("  ").next().unwrap_or_default();
        let cmd = cmd.split(" > ").next().unwrap_or_default();
        let mut words: Vec<String> = Vec::new();
        let mut quoted = false;
        let mut word = String::new();
        for c in cmd.chars() {
            match c {
                '\'' => quoted = !quoted,
                ' ' if !quoted => words.push(std::mem::take(&mut word)),
                c => word.push(c),
            }
        }
        words.push(word);
        assert_eq!(words[0], "lahar", "{line}");
        let o = lahar().args(&words[1..]).arg("--help").output().unwrap();
        assert!(o.status.success(), "`{cmd}` does not parse: {}", String::from_utf8_lossy(&o.stderr));
        seen += 1;
    }
    assert!(seen >= 6, "{examples}");
}

/// No example names its own output folder: each writes `out/<its name>` under
/// the directory it is run from (a copied example then never writes above it,
/// as `dir: ../../out/...` relative to the example's folder did).
#[test]
fn examples_leave_the_output_folder_to_the_user() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).expect("examples/") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "yaml") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples"), &mut files);
    assert!(files.len() > 50, "{}", files.len());
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read");
        if !text.contains("kind: Scenario") {
            continue;
        }
        let named = text.lines().any(|l| l.trim_start().starts_with("output:") && l.contains("dir:"));
        assert!(!named, "{} sets spec.output.dir", f.display());
    }
}
