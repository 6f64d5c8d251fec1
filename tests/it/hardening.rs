//! Issue 41 through the binary: hostile and messy input never escapes the output
//! directory, never panics or aborts, never loses data or passes `validate` to fail
//! late. Each test failed on main before its fix.

use super::*;
use std::path::Path;
use std::process::Stdio;

pub(super) const NODES: &str = "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi, gpus: 8}";
pub(super) const JOB: &str = "  workload:\n    - jobs:\n      - {name: j, duration: 1h, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 1}}]}\n";

pub(super) fn ok_scenario() -> String {
    scenario(NODES, JOB)
}

pub(super) fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `lahar args` in `dir`; returns the output.
fn lahar_in(dir: &Path, args: &[&str]) -> std::process::Output {
    lahar().current_dir(dir).args(args).output().expect("lahar runs")
}

/// Runs `lahar validate p`: exit 2 with `needle` in the errors.
fn validate_refuses(p: &Path, needle: &str) {
    let out = lahar().arg("validate").arg(p).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains(needle), "{}", stderr_of(&out));
}

#[test]
fn a_scenario_named_dot_dot_cannot_make_the_output_folder_the_current_one() {
    let (d, p) = write_scenario(&ok_scenario().replace("metadata: {name: t}", "metadata: {name: '..'}"));
    std::fs::write(d.path().join("summary.json"), "mine").unwrap();
    let out = lahar().arg("run").arg(&p).current_dir(d.path().join("..")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("metadata.name: `..` is `.` or `..`"), "{}", stderr_of(&out));
    assert_eq!(std::fs::read_to_string(d.path().join("summary.json")).unwrap(), "mine");
}

#[test]
fn a_run_replaces_only_what_lahar_wrote() {
    let (d, p) = write_scenario(&ok_scenario());
    let own = d.path().join("own");
    std::fs::create_dir(&own).unwrap();
    std::fs::write(own.join("summary.json"), "the user's").unwrap();
    let out = lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&own).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("has summary.json that lahar did not write there"), "{}", stderr_of(&out));
    assert_eq!(std::fs::read_to_string(own.join("summary.json")).unwrap(), "the user's");
    // lahar's own folder is replaced run after run, and a finished run has no INCOMPLETE.
    let runs = d.path().join("runs");
    for _ in 0..2 {
        lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&runs).assert().success();
        assert!(runs.join("summary.json").is_file() && runs.join(".lahar").is_file());
        assert!(!runs.join("INCOMPLETE").exists());
    }
}

/// A run's folder names its scenario in `.lahar`: another scenario's run into it
/// is refused (exit 2, the folder untouched) unless `--force`; the same scenario
/// replaces its own outputs; a marker of an older lahar (no scenario line) is
/// taken over, and a marker with anything else in it is not lahar's.
#[test]
fn another_scenarios_outputs_are_replaced_only_with_force() {
    let (d, a) = write_scenario(&ok_scenario());
    let b = d.path().join("b.yaml");
    std::fs::write(&b, ok_scenario().replace("metadata: {name: t}", "metadata: {name: other}")).unwrap();
    let out_dir = d.path().join("results");
    lahar().args(["run", "-q"]).arg(&a).arg("--out").arg(&out_dir).assert().success();
    assert_eq!(std::fs::read_to_string(out_dir.join(".lahar")).unwrap(), "lahar run outputs\nscenario: t\n");
    let summary = std::fs::read(out_dir.join("summary.json")).unwrap();
    let out = lahar().args(["run", "-q"]).arg(&b).arg("--out").arg(&out_dir).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out)
            .contains("holds the outputs of scenario `t` (its .lahar says so), not of `other`; pass --force"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(std::fs::read(out_dir.join("summary.json")).unwrap(), summary);
    // The same scenario again replaces its own outputs.
    lahar().args(["run", "-q"]).arg(&a).arg("--out").arg(&out_dir).assert().success();
    lahar().args(["run", "-q", "--force"]).arg(&b).arg("--out").arg(&out_dir).assert().success();
    let after = std::fs::read_to_string(out_dir.join("summary.json")).unwrap();
    assert!(after.contains("\"scenario\": \"other\""), "{after}");
    assert_eq!(std::fs::read_to_string(out_dir.join(".lahar")).unwrap(), "lahar run outputs\nscenario: other\n");
    // An older marker names no scenario: any scenario takes the folder over.
    std::fs::write(out_dir.join(".lahar"), "lahar run outputs\n").unwrap();
    lahar().args(["run", "-q"]).arg(&a).arg("--out").arg(&out_dir).assert().success();
    assert_eq!(std::fs::read_to_string(out_dir.join(".lahar")).unwrap(), "lahar run outputs\nscenario: t\n");
    // A marker with more in it is not lahar's: the folder's files are not replaced.
    std::fs::write(out_dir.join(".lahar"), "lahar run outputs\nscenario: t\nrm -rf\n").unwrap();
    let out = lahar().args(["run", "-q", "--force"]).arg(&a).arg("--out").arg(&out_dir).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("that lahar did not write there"), "{}", stderr_of(&out));
}

pub(super) fn tiny_sweep(dir: &Path, axes: &str) -> std::path::PathBuf {
    std::fs::write(dir.join("s.yaml"), ok_scenario()).unwrap();
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Sweep\nmetadata: {{name: w}}\nspec:\n  scenario: s.yaml\n  grid:\n{axes}"
    );
    let p = dir.join("w.yaml");
    std::fs::write(&p, text).unwrap();
    p
}

pub(super) const NODE_AXIS: &str = "    - {name: gpus, path: 'spec.cluster.nodes[0].gpus', values: [8, 4]}\n";

#[test]
fn runs_and_sweeps_do_not_share_a_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let w = tiny_sweep(tmp.path(), NODE_AXIS);
    let (sw, run) = (tmp.path().join("sw"), tmp.path().join("run"));
    lahar().arg("sweep").arg(&w).arg("--out").arg(&sw).arg("-q").assert().success();
    let summary = std::fs::read(sw.join("summary.csv")).unwrap();
    let out = lahar().args(["run", "-q"]).arg(tmp.path().join("s.yaml")).arg("--out").arg(&sw).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("holds a sweep's outputs"), "{}", stderr_of(&out));
    assert_eq!(std::fs::read(sw.join("summary.csv")).unwrap(), summary);
    lahar().args(["run", "-q"]).arg(tmp.path().join("s.yaml")).arg("--out").arg(&run).assert().success();
    let out = lahar().arg("sweep").arg(&w).arg("--out").arg(&run).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("holds a run's outputs"), "{}", stderr_of(&out));
}

#[test]
fn a_forged_cell_id_cannot_lead_a_merge_out_of_its_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let w = tiny_sweep(tmp.path(), NODE_AXIS);
    let shard = tmp.path().join("a/b/shard");
    lahar().arg("sweep").arg(&w).arg("--out").arg(&shard).args(["--shard", "1/1", "-q"]).assert().success();
    let victim = tmp.path().join("a/victim");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("keep"), "x").unwrap();
    let m = std::fs::read_to_string(shard.join("sweep.json")).unwrap();
    assert!(m.contains("\"0000\""), "{m}");
    std::fs::write(shard.join("sweep.json"), m.replace("\"0000\"", "\"../../../victim\"")).unwrap();
    let merged = tmp.path().join("a/b/merged");
    let out = lahar().args(["sweep", "merge"]).arg(&shard).arg("--out").arg(&merged).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr_of(&out);
    assert!(err.contains("cell 0 has id `../../../victim`, expected `0000`"), "{err}");
    assert_eq!(std::fs::read_to_string(victim.join("keep")).unwrap(), "x");
    assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 1);
}

#[test]
fn sweep_axes_are_checked_before_any_cell_runs() {
    let tmp = tempfile::tempdir().unwrap();
    // `n` is text (YAML 1.2), not the boolean `false` of YAML 1.1.
    let w = tiny_sweep(tmp.path(), "    - {name: n, path: 'spec.cluster.nodes[0].gpus', values: [8]}\n");
    let sw = tmp.path().join("sw");
    lahar().arg("sweep").arg(&w).arg("--out").arg(&sw).arg("-q").assert().success();
    let head = std::fs::read_to_string(sw.join("sweep.csv")).unwrap();
    assert!(head.starts_with("cell,n,seed,status,"), "{head}");
    for (axes, needle) in [
        (
            "    - {name: a/b, path: 'spec.cluster.nodes[0].gpus', values: [8]}\n",
            "spec.grid[0].name: axis name `a/b` contains a slash",
        ),
        (
            "    - {name: makespan_s, path: 'spec.cluster.nodes[0].gpus', values: [8]}\n",
            "axis name `makespan_s` is a column lahar writes",
        ),
        (
            "    - {path: spec.seed, values: [1, 2]}\n  seeds: 2\n",
            "axis `seed` sets spec.seed, which `seeds:` sets for every cell",
        ),
        (
            "    - {name: a, path: spec.x, values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}\n    - {name: b, path: spec.y, values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}\n  seeds: 100000\n",
            "10000000 cells (grid × zip × seeds); a sweep has at most 1000000",
        ),
        (
            "    - {name: a, path: spec.x, values: [1]}\n  seeds: 1000000000\n",
            "1000000000 seeds; a sweep has at most 1000000 cells",
        ),
    ] {
        let w = tiny_sweep(tmp.path(), axes);
        let out = lahar().arg("sweep").arg(&w).arg("--out").arg(tmp.path().join("bad")).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{axes}");
        assert!(stderr_of(&out).contains(needle), "{axes}: {}", stderr_of(&out));
        assert!(!tmp.path().join("bad/cells").exists(), "{axes}: no cell ran");
    }
}

/// A scenario whose conf (s.conf beside it) has an extender at `url` with a
/// predicate verb `verb` (both written in YAML double quotes).
fn extender_case(url: &str, verb: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let conf = format!(
        "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n  - name: extender\n    arguments:\n      extender.urlPrefix: \"{url}\"\n      extender.predicateVerb: \"{verb}\"\n"
    );
    let (d, p) = write_scenario(&scenario(NODES, &format!("{JOB}  scheduler: {{conf: s.conf}}\n")));
    std::fs::write(d.path().join("s.conf"), conf).unwrap();
    (d, p)
}

#[test]
fn an_extender_conf_cannot_inject_requests_or_reach_other_machines() {
    for (url, verb, needle) in [
        (
            "http://127.0.0.1:9/x HTTP/1.1\\r\\nHost: evil",
            "filter",
            "the path `/x HTTP/1.1\\r\\nHost: evil` has a space",
        ),
        ("http://127.0.0.1:9", "filter\\r\\nX-Evil: 1", "has a control character"),
    ] {
        let (_d, p) = extender_case(url, verb);
        validate_refuses(&p, needle);
    }
    // A remote address needs the user's opt-in; nothing is sent before it.
    let (d, p) = extender_case("http://10.255.255.1:8713", "filter");
    let out = lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(d.path().join("o")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("is not on this machine") && stderr_of(&out).contains("--allow-remote-extender"));
}

#[test]
fn a_billion_replicas_is_an_error_in_every_kind() {
    let vcjob = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: v, annotations: {lahar.io/duration: 1h}}\nspec:\n  minAvailable: 1\n  tasks:\n    - replicas: 1000000000\n      name: w\n      template: {spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}}\n";
    let deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, annotations: {lahar.io/duration: 1h}}\nspec:\n  replicas: 1000000000\n  template: {spec: {schedulerName: volcano, containers: [{name: c, resources: {requests: {cpu: 1}}}]}}\n";
    let pg = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g, annotations: {lahar.io/replicas: '1000000000', lahar.io/duration: 1h}}\nspec: {minMember: 1, minResources: {cpu: 1}}\n";
    let lws = "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: l}\nspec:\n  replicas: 1000000000\n  leaderWorkerTemplate:\n    size: 4\n    workerTemplate: {spec: {schedulerName: volcano, containers: [{name: c}]}}\n";
    let ms = "apiVersion: workload.serving.volcano.sh/v1alpha1\nkind: ModelServing\nmetadata: {name: s}\nspec:\n  replicas: 1000000\n  template:\n    roles: [{name: r, replicas: 1000000, workerReplicas: 0, entryTemplate: {spec: {containers: [{name: c}]}}}]\n";
    let hj = "apiVersion: training.volcano.sh/v1alpha1\nkind: HyperJob\nmetadata: {name: h}\nspec:\n  replicatedJobs:\n  - {name: a, replicas: 1000000, templateSpec: {tasks: [{name: w, replicas: 1, template: {spec: {containers: [{name: c}]}}}]}}\n";
    for (m, needle) in [
        (vcjob, "spec.tasks[0].replicas: must be an integer from 0 to 1000000"),
        (deploy, "spec.replicas: must be an integer from 0 to 1000000"),
        (pg, "lahar.io/replicas: must be an integer from 1 to 1000000"),
        (lws, "spec.replicas: must be an integer from 0 to 1000000"),
        (ms, "1000000 serving groups × 1000000 pods = 1000000000000 pods"),
        (hj, "1000000 VolcanoJobs; a HyperJob makes at most 100000"),
    ] {
        let (d, p) = write_scenario(&scenario(NODES, "  workload:\n    - manifests: m.yaml\n"));
        std::fs::write(d.path().join("m.yaml"), m).unwrap();
        validate_refuses(&p, needle);
    }
}

#[test]
fn a_stderr_that_cannot_be_written_keeps_the_exit_code() {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lahar"))
        .args(["validate", "/nonexistent/s.yaml"])
        .stderr(Stdio::from(full))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_piped_trace_is_refused_by_name_not_read_as_empty() {
    let tmp = tempfile::tempdir().unwrap();
    let out_csv = tmp.path().join("out.csv");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_lahar"))
        .args(["trace", "convert", "/dev/stdin", "--format", "swf", "--out"])
        .arg(&out_csv)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let _ = child.stdin.take().unwrap().write_all(b"1 0 0 100 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1\n");
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("not a regular file"), "{}", stderr_of(&out));
}

#[test]
fn trace_convert_keeps_an_earlier_output_when_the_input_is_bad() {
    let tmp = tempfile::tempdir().unwrap();
    let out_csv = tmp.path().join("out.csv");
    std::fs::write(&out_csv, "earlier").unwrap();
    let out = lahar_in(tmp.path(), &["trace", "convert", "missing.swf", "--format", "swf", "--out", "out.csv"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&out_csv).unwrap(), "earlier");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1, "no temporary file is left");
}

#[test]
fn a_node_listed_twice_in_a_snapshot_is_an_error() {
    let node = |n: &str| {
        format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: {n}}}\nstatus:\n  allocatable: {{cpu: '8', memory: 32Gi, pods: '110'}}\n"
        )
    };
    let (d, _) = write_scenario("");
    let snap = d.path().join("snap.yaml");
    std::fs::write(&snap, format!("{}---\n{}---\n{}", node("a"), node("b"), node("a"))).unwrap();
    let out = lahar().args(["validate", "--snapshot"]).arg(&snap).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("snap.yaml:15:"), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("document 3: metadata.name: node `a` is listed twice (first at"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn the_built_in_priority_classes_of_a_real_cluster_are_accepted() {
    let pc = |n: &str, v: u64| {
        format!(
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {n}}}\nvalue: {v}\npreemptionPolicy: PreemptLowerPriority\n"
        )
    };
    let (d, _) = write_scenario("");
    let snap = d.path().join("snap.yaml");
    let node = "apiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus:\n  allocatable: {cpu: '8', memory: 32Gi, pods: '110'}\n";
    std::fs::write(
        &snap,
        format!(
            "{node}---\n{}---\n{}",
            pc("system-cluster-critical", 2000000000),
            pc("system-node-critical", 2000001000)
        ),
    )
    .unwrap();
    let out = lahar().args(["validate", "--snapshot"]).arg(&snap).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    // Another value is still a redefinition.
    std::fs::write(&snap, format!("{node}---\n{}", pc("system-node-critical", 5))).unwrap();
    let out = lahar().args(["validate", "--snapshot"]).arg(&snap).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_conf_path_is_recorded_the_same_in_every_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let mut recorded = Vec::new();
    for name in ["one", "two/deeper"] {
        let d = tmp.path().join(name);
        std::fs::create_dir_all(d.join("confs")).unwrap();
        std::fs::write(d.join("s.yaml"), ok_scenario()).unwrap();
        std::fs::write(d.join("confs/v.conf"), "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n")
            .unwrap();
        let out = lahar_in(&d, &["run", "-q", "s.yaml", "--conf", "confs/v.conf", "--out", "o"]);
        assert!(out.status.success(), "{}", stderr_of(&out));
        recorded.push(std::fs::read_to_string(d.join("o/input-scenario.yaml")).unwrap());
    }
    assert_eq!(recorded[0], recorded[1]);
    assert!(recorded[0].contains("confs/v.conf") && !recorded[0].contains(&*tmp.path().to_string_lossy()));
}

#[test]
fn a_timeseries_as_long_as_a_job_is_refused_up_front() {
    let text = scenario(
        NODES,
        "  output: {sampleInterval: 1s}\n  workload:\n    - jobs:\n      - {name: j, duration: 1000d, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 1}}]}\n",
    );
    let (_d, p) = write_scenario(&text);
    validate_refuses(&p, "the timeseries would have at least 86400000 rows up to 86400000 s");
}

#[test]
fn text_that_is_not_utf8_is_located() {
    let (d, p) = write_scenario("");
    let mut bytes = ok_scenario().into_bytes();
    let at = bytes.windows(9).position(|w| w == b"{name: n0").unwrap();
    bytes[at + 1] = 0xE9;
    std::fs::write(&p, &bytes).unwrap();
    validate_refuses(&p, "invalid UTF-8 at line 7, column 10 (byte 0xE9)");
    std::fs::write(&p, [0xFF, 0xFE, b'a', 0]).unwrap();
    let out = lahar().arg("validate").arg(&p).output().unwrap();
    assert!(stderr_of(&out).contains("is UTF-16 text"), "{}", stderr_of(&out));
    drop(d);
}

#[test]
fn csv_errors_count_physical_lines_in_crlf_files_too() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, end) in [("lf.csv", "\n"), ("crlf.csv", "\r\n")] {
        let text = ["time,target,duration,kind", "1m,n0,1m,node", "2m,n0,xx,node", ""].join(end);
        std::fs::write(tmp.path().join(name), text).unwrap();
        let s = scenario(NODES, &format!("  faults: {{trace: {name}}}\n{JOB}"));
        std::fs::write(tmp.path().join("s.yaml"), s).unwrap();
        let out = lahar_in(tmp.path(), &["validate", "s.yaml"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr_of(&out).contains(&format!("{name}:3:1: duration: `xx`")), "{}", stderr_of(&out));
    }
}

#[test]
fn a_bad_number_is_blamed_on_its_own_flag() {
    let out = lahar().args(["nccl", "--oversubscription", "NaN"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("--oversubscription: expected a finite number of at least 1"),
        "{}",
        stderr_of(&out)
    );
    let out = lahar().args(["nccl", "--nic-gbps", "0"]).output().unwrap();
    assert!(stderr_of(&out).contains("--nic-gbps: expected a finite number above 0, got 0"), "{}", stderr_of(&out));
}

#[test]
fn a_baseline_with_a_byte_order_mark_is_read_as_a_scenario_with_one_is() {
    let (d, p) = write_scenario(&format!("\u{feff}{}", ok_scenario()));
    let run = d.path().join("run");
    lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&run).assert().success();
    let base = d.path().join("base.json");
    lahar().arg("check").arg(&run).arg("--write-baseline").arg(&base).assert().success();
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(std::fs::read(&base).unwrap());
    std::fs::write(&base, bytes).unwrap();
    lahar().arg("check").arg(&run).arg("--baseline").arg(&base).assert().success();
}

#[test]
fn limits_are_stated_when_a_value_passes_them() {
    let text = scenario(NODES, &format!("  queues:\n    - {{name: default, weight: 4294967296}}\n{JOB}"));
    let (_d, p) = write_scenario(&text);
    validate_refuses(&p, "weight: must be an integer from 1 to 4294967295, got 4294967296");
}

#[test]
fn names_a_spreadsheet_would_run_are_refused_where_they_are_read() {
    // A compact job: an error at its field.
    let text = scenario(
        NODES,
        "  workload:\n    - jobs:\n      - {name: '=HYPERLINK(\"http://x\")', duration: 1h, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 1}}]}\n",
    );
    let (_d, p) = write_scenario(&text);
    validate_refuses(&p, "scenario.yaml:10:16: spec.workload[0].jobs[0].name: `=HYPERLINK");
    // A Kubernetes object: DNS-1123, as the API server requires.
    let vcjob = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: Web_1, annotations: {lahar.io/duration: 1h}}\nspec:\n  minAvailable: 1\n  tasks:\n    - replicas: 1\n      name: w\n      template: {spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}}\n";
    let (d, p) = write_scenario(&scenario(NODES, "  workload:\n    - manifests: m.yaml\n"));
    std::fs::write(d.path().join("m.yaml"), vcjob).unwrap();
    validate_refuses(&p, "m.yaml:3:18: document 1: metadata.name: `Web_1` is not a DNS-1123 subdomain");
    // A trace row: skipped and counted, as every bad row is (an error under --strict).
    let head = "job,namespace,kind,queue,user,submit_s,duration_s,min_available,priority,priority_class,max_retry,checkpoint_s,task,replicas,task_min_available,task_priority,preemptable,cpu,memory,gpu,gpu_model\n";
    let rows = "ok-1,default,x,default,,0,60,1,0,,3,,worker,1,1,1,true,1,1Gi,1,\n\"+cmd|' /C calc'!A0\",default,x,default,,0,60,1,0,,3,,worker,1,1,1,true,1,1Gi,1,\n";
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("t.csv"), format!("{head}{rows}")).unwrap();
    let out = lahar_in(tmp.path(), &["trace", "inspect", "t.csv", "--format", "lahar", "--strict"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("line 3, row 2: malformed: job name `+cmd|' /C calc'!A0` starts with `+`"),
        "{}",
        stderr_of(&out)
    );
    let out = lahar_in(tmp.path(), &["trace", "inspect", "t.csv", "--format", "lahar"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("malformed"), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn retired_volcano_arguments_are_warnings_that_say_what_volcano_does() {
    let conf = "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n- plugins:\n  - name: predicates\n    arguments:\n      predicate.GPUSharingEnable: true\n      predicate.resources.nvidia.com/gpu.cpu: 8\n";
    let (d, p) = write_scenario(&scenario(NODES, &format!("{JOB}  scheduler: {{conf: s.conf}}\n")));
    std::fs::write(d.path().join("s.conf"), conf).unwrap();
    let out = lahar().arg("validate").arg(&p).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(err.contains("s.conf:8:35: tiers[1].plugins[0].arguments.predicate.GPUSharingEnable: retired argument: GPU sharing moved to the deviceshare plugin"), "{err}");
    assert!(err.contains("predicate.resources.nvidia.com/gpu.cpu: retired argument"), "{err}");
    let out = lahar().arg("validate").arg(&p).arg("--strict").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // An argument Volcano never had stays an error.
    std::fs::write(d.path().join("s.conf"), conf.replace("GPUSharingEnable", "GPUSharingEnabled")).unwrap();
    validate_refuses(&p, "plugin `predicates` has no argument `predicate.GPUSharingEnabled`");
}

#[test]
fn a_fault_far_in_the_future_cannot_make_validate_pass_and_the_run_write_for_ever() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("f.csv"), "time,target,duration,kind\n700000d,n0,1m,node\n").unwrap();
    std::fs::write(tmp.path().join("s.yaml"), scenario(NODES, &format!("  faults: {{trace: f.csv}}\n{JOB}"))).unwrap();
    let out = lahar_in(tmp.path(), &["validate", "s.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("spec.output.sampleInterval: the timeseries would have at least"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn nccl_keeps_an_earlier_output_when_the_input_is_bad() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("rows.csv"), "id,collective\n1,all_reduce\n").unwrap();
    std::fs::write(tmp.path().join("out.csv"), "earlier").unwrap();
    let out = lahar_in(tmp.path(), &["nccl", "--rows", "rows.csv", "--out", "out.csv"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert_eq!(std::fs::read_to_string(tmp.path().join("out.csv")).unwrap(), "earlier");
}

#[test]
fn a_seed_up_to_2_64_minus_1_is_read_as_an_integer_everywhere() {
    let (d, p) = write_scenario(&ok_scenario().replace("spec:\n", "spec:\n  seed: 18446744073709551615\n"));
    let out = lahar()
        .args(["run", "-q"])
        .arg(&p)
        .args(["--set", "spec.seed=18446744073709551615", "--out"])
        .arg(d.path().join("o"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let recorded = std::fs::read_to_string(d.path().join("o/input-scenario.yaml")).unwrap();
    assert!(recorded.contains("18446744073709551615"), "{recorded}");
    std::fs::write(d.path().join("w.yaml"), "apiVersion: lahar.io/v1alpha1\nkind: Sweep\nmetadata: {name: w}\nspec:\n  scenario: scenario.yaml\n  seeds: [18446744073709551615]\n").unwrap();
    let out = lahar()
        .arg("sweep")
        .arg(d.path().join("w.yaml"))
        .arg("--out")
        .arg(d.path().join("sw"))
        .arg("-q")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let csv = std::fs::read_to_string(d.path().join("sw/sweep.csv")).unwrap();
    assert!(csv.contains("\n0000-seed18446744073709551615,18446744073709551615,ok,"), "{csv}");
}
